"""Near-miss variants of every fusion and simplification pattern family.

Each family is a builder taking a dict of knobs, the knobs of a positive
case (`base`, which must fuse), and a list of variants, each overriding the
base's knobs in ONE condition: a constant's rank or shape, a wrong value, an
element type, reduction axes, keepdims, where epsilon sits, one extra use of
an intermediate, an operand that is another tensor, the operand order of a
commutative op, a mask of another rank, ... A variant may be fused (then it
must keep the outputs) or left alone; nearmiss.py checks which on
onnxruntime. Everything is deterministic: constant data comes from numpy's
generator seeded per model name.
"""
import zlib

import numpy as np
from onnx import TensorProto, helper, numpy_helper

DTYPES = {
    'float': (TensorProto.FLOAT, np.float32), 'double': (TensorProto.DOUBLE, np.float64),
    'float16': (TensorProto.FLOAT16, np.float16), 'int64': (TensorProto.INT64, np.int64),
    'int32': (TensorProto.INT32, np.int32), 'bool': (TensorProto.BOOL, np.bool_),
}
BIG = 9223372036854775807
NEG_INF = float('-inf')


class Builder:
    """A graph under construction: inputs, constants (initializers), nodes
    with fresh value names, outputs (element type only: the shape is what the
    original computes, so a rank change is not hidden by a declared type)."""

    def __init__(self, name, opset, dt='float'):
        self.opset, self.dt, self.name = opset, dt, name
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = 0
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))

    def fresh(self, stem):
        self.count += 1
        return f'{stem}{self.count}'

    def input(self, name, shape, dt=None):
        """A graph input; `shape` None is an unknown rank, a str a symbolic dim."""
        self.inputs.append(helper.make_tensor_value_info(name, DTYPES[dt or self.dt][0], shape))
        return name

    def const(self, value, shape=(), dt=None, stem='c'):
        """A constant of `shape`: `value` repeated, or a list of that many values."""
        npdt = DTYPES[dt or self.dt][1]
        arr = np.array(value, dtype=np.float64 if npdt not in (np.int64, np.int32, np.bool_) else npdt)
        arr = np.broadcast_to(arr, shape) if arr.size == 1 else arr.reshape(shape)
        name = self.fresh(stem)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr.astype(npdt)), name))
        return name

    def rand(self, shape, dt=None, lo=-1.0, hi=1.0, stem='w'):
        return self.const(self.rng.uniform(lo, hi, size=shape).tolist(), shape, dt, stem)

    def ints(self, values, stem='i'):
        return self.const(list(values), (len(values),), 'int64', stem)

    def op(self, op_type, *inputs, n_out=1, **attrs):
        outs = [self.fresh(op_type.lower()[:4]) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, **attrs))
        return outs[0] if n_out == 1 else outs

    def reduce_mean(self, x, axes, keepdims=1):
        if self.opset >= 18:
            return self.op('ReduceMean', x, self.ints(axes), keepdims=keepdims)
        return self.op('ReduceMean', x, axes=axes, keepdims=keepdims)

    def unsqueeze(self, x, axes):
        return self.op('Unsqueeze', x, self.ints(axes))

    def output(self, value, name, dt=None):
        """Makes `value` the graph output `name` (renaming its producer's result)."""
        for n in self.nodes:
            for i, o in enumerate(n.output):
                if o == value:
                    n.output[i] = name
            for i, o in enumerate(n.input):
                if o == value:
                    n.input[i] = name
        self.outputs.append(helper.make_tensor_value_info(name, DTYPES[dt or self.dt][0], None))
        return name

    def extra(self, value, dt=None):
        """One extra use of an intermediate: a second graph output Neg(value)."""
        neg = self.op('Neg', value)
        self.output(neg, 'extra', dt)

    def model(self):
        graph = helper.make_graph(self.nodes, self.name.replace('-', '_'), self.inputs, self.outputs, self.inits)
        ir = 8 if self.opset <= 17 else 9 if self.opset <= 20 else 10
        return helper.make_model(graph, opset_imports=[helper.make_opsetid('', self.opset)], ir_version=ir,
                                 producer_name='nearmiss')


def cshape(p, key):
    return tuple(p.get(key + '_shape', ()))


# ---------------------------------------------------------------- LayerNorm / RMSNorm
def norm_denominator(b, p, v):
    """Sqrt(v + eps) with its variants, as the chains of both norms write it."""
    e = b.const(p['eps'], cshape(p, 'eps'), p.get('eps_dt'))
    if p['eps_at'] == 'before':
        return b.op('Sqrt', b.op('Add', v, e) if p['eps_order'] == 've' else b.op('Add', e, v))
    return b.op('Add', b.op('Sqrt', v), e)


def norm_divide(b, p, num, sd):
    if p['div'] == 'div':
        return b.op('Div', num, sd) if p['div_order'] == 'nd' else b.op('Div', sd, num)
    if p['div'] == 'recip':
        return b.op('Mul', b.op('Reciprocal', sd), num)
    r = b.op('Div', b.const(p['one'], cshape(p, 'one'), p.get('one_dt')), sd)
    return b.op('Mul', num, r)


def norm_affine(b, p, n, shape):
    if p.get('scale') is not None:
        s = (b.input('s', list(p['scale'])) if p.get('scale_input')
             else b.rand(tuple(p['scale']), lo=0.5, hi=2.0, stem='scale'))
        n = b.op('Mul', n, s) if p.get('scale_order', 'ns') == 'ns' else b.op('Mul', s, n)
    if p.get('bias') is not None:
        n = b.op('Add', b.rand(tuple(p['bias']), stem='bias'), n)
    return n


def layernorm(name, p):
    b = Builder(name, p.get('opset', 17), p['dt'])
    x = b.input('x', p['x'])
    src = b.input('w', p['x']) if p['mean_src'] == 'w' else x
    m = b.reduce_mean(src, p['axes1'], p['keep1'])
    d = b.op('Sub', x, m) if p['sub'] == 'xm' else b.op('Sub', m, x)
    base = x if p['pow_base'] == 'x' else d
    if p['var'] == 'pow':
        pw = b.op('Pow', base, b.const(p['two'], cshape(p, 'two'), p.get('two_dt')))
    elif p['var'] == 'muldd':
        pw = b.op('Mul', base, base)
    else:
        pw = b.op('Mul', d, x)
    v = b.reduce_mean(pw, p['axes2'], p['keep2'])
    sd = norm_denominator(b, p, v)
    n = norm_divide(b, p, x if p['num'] == 'x' else d, sd)
    y = norm_affine(b, p, n, p['x'])
    b.output(y, 'y')
    if p.get('extra'):
        b.extra({'m': m, 'd': d, 'pw': pw, 'v': v, 'sd': sd, 'n': n}[p['extra']])
    return b


LN_BASE = dict(dt='float', x=[2, 3, 4], mean_src='x', axes1=[-1], keep1=1, sub='xm', var='pow', pow_base='d',
               two=2.0, axes2=[-1], keep2=1, eps=1e-5, eps_at='before', eps_order='ve', div='div', div_order='nd',
               num='d', one=1.0, scale=[4], bias=[4])

NORM_CONST_VARIANTS = [
    # The known bug (issue 37): a one-element exponent or numerator of rank
    # greater than x's is fused and x's leading dims are lost.
    ('two-rank4', dict(two_shape=[1, 1, 1, 1])),
    ('two-rank1', dict(two_shape=[1])),
    ('two-rank3', dict(two_shape=[1, 1, 1])),
    ('two-2.0001', dict(two=2.0001)),
    ('two-3', dict(two=3.0)),
    ('two-int64', dict(two=2, two_dt='int64')),
    ('two-int32', dict(two=2, two_dt='int32')),
    ('two-float16', dict(two_dt='float16')),
    ('two-double', dict(two_dt='double')),
    ('eps-rank4', dict(eps_shape=[1, 1, 1, 1])),
    ('eps-vector', dict(eps=[1e-5, 1e-3, 1e-1, 1.0], eps_shape=[4])),
    ('eps-rows', dict(eps=[1e-5, 0.5, 2.0], eps_shape=[3, 1])),
    ('eps-negative', dict(eps=-1e-5)),
    ('eps-big', dict(eps=0.5)),
    ('eps-after-sqrt', dict(eps_at='after')),
    ('eps-first', dict(eps_order='ev')),
    ('one-div', dict(div='one')),
    ('one-div-rank4', dict(div='one', one_shape=[1, 1, 1, 1])),
    ('one-div-rank3', dict(div='one', one_shape=[1, 1, 1])),
    ('one-div-2', dict(div='one', one=2.0)),
    ('one-div-vector', dict(div='one', one=[1.0, 1.0, 2.0, 1.0], one_shape=[4])),
    ('reciprocal', dict(div='recip')),
    ('div-swapped', dict(div_order='dn')),
    ('axes-middle', dict(axes1=[1], axes2=[1])),
    ('keepdims0-var', dict(keep2=0, x=[4, 4, 4])),
    ('extra-pow', dict(extra='pw')),
    ('extra-var', dict(extra='v')),
    ('extra-sqrt', dict(extra='sd')),
    ('extra-normed', dict(extra='n')),
    ('scale-rank4', dict(scale=[1, 1, 1, 4])),
    ('scale-rows', dict(scale=[3, 4])),
    ('scale-column', dict(scale=[3, 1])),
    ('scale-first', dict(scale_order='sn')),
    ('scale-input', dict(scale_input=True)),
    ('double', dict(dt='double')),
    ('float16', dict(dt='float16')),
    ('two-axes', dict(axes1=[-2, -1], axes2=[-2, -1])),
    # x's dims symbolic or its rank unknown (`feed`: the shape it is given).
    ('symbolic', dict(x=['B', 'N', 4], dims={'B': 2, 'N': 3})),
    ('symbolic-two-rank4', dict(x=[2, 'N', 4], two_shape=[1, 1, 1, 1], dims={'N': 3})),
    ('symbolic-one-div-rank4', dict(x=[2, 'N', 4], div='one', one_shape=[1, 1, 1, 1], dims={'N': 3})),
    ('unknown-rank', dict(x=None, feed={'x': [2, 3, 4]})),
    ('unknown-rank-two-rank1', dict(x=None, two_shape=[1], feed={'x': [2, 3, 4]})),
    ('unknown-rank-two-rank4', dict(x=None, two_shape=[1, 1, 1, 1], feed={'x': [2, 3, 4]})),
    ('unknown-rank-eps-rank4', dict(x=None, eps_shape=[1, 1, 1, 1], feed={'x': [2, 3, 4]})),
    ('unknown-last-dim', dict(x=[2, 3, 'D'], dims={'D': 4})),
]

LN_VARIANTS = NORM_CONST_VARIANTS + [
    ('axes-mismatch', dict(axes2=[1])),
    ('axes-mismatch-mean', dict(axes1=[1])),
    ('all-axes', dict(axes1=[0, 1, 2], axes2=[0, 1, 2])),
    ('keepdims0-mean', dict(keep1=0, x=[4, 4, 4])),
    ('extra-mean', dict(extra='m')),
    ('extra-centred', dict(extra='d')),
    ('mean-of-other', dict(mean_src='w')),
    ('sub-swapped', dict(sub='mx')),
    ('mul-dd', dict(var='muldd')),
    ('mul-dx', dict(var='muldx')),
    ('pow-of-x', dict(pow_base='x')),
    ('div-of-x', dict(num='x')),
    ('bias-rank4', dict(bias=[1, 1, 1, 4])),
    ('bias-rows', dict(bias=[3, 4])),
    ('opset18-axes-operand', dict(opset=18)),
]


def rmsnorm(name, p):
    b = Builder(name, p.get('opset', 23), p['dt'])
    x = b.input('x', p['x'])
    base = b.input('w', p['x']) if p['pow_base'] == 'w' else x
    if p['var'] == 'pow':
        pw = b.op('Pow', base, b.const(p['two'], cshape(p, 'two'), p.get('two_dt')))
    else:
        pw = b.op('Mul', base, base)
    v = b.reduce_mean(pw, p['axes2'], p['keep2'])
    sd = norm_denominator(b, p, v)
    num = b.input('u', p['x']) if p['num'] == 'u' else x
    n = norm_divide(b, p, num, sd)
    y = norm_affine(b, p, n, p['x'])
    b.output(y, 'y')
    if p.get('extra'):
        b.extra({'pw': pw, 'v': v, 'sd': sd, 'n': n}[p['extra']])
    return b


RMS_BASE = dict(dt='float', x=[2, 3, 4], pow_base='x', var='pow', two=2.0, axes2=[-1], keep2=1, eps=1e-6,
                eps_at='before', eps_order='ve', div='div', div_order='nd', num='x', one=1.0, scale=[4])

RMS_VARIANTS = NORM_CONST_VARIANTS + [
    ('pow-of-other', dict(pow_base='w')),
    ('div-of-other', dict(num='u')),
    ('mul-xx', dict(var='mulxx')),
    ('all-axes', dict(axes2=[0, 1, 2])),
    ('opset17', dict(opset=17)),
]


# ---------------------------------------------------------------- GELU
def gelu_erf(name, p):
    b = Builder(name, p.get('opset', 20), p['dt'])
    x = b.input('x', p['x'])
    other = b.input('w', p['x']) if 'w' in (p['erf_src'], p['mul_src']) else None
    c = b.const(p['c'], cshape(p, 'c'))
    ex = other if p['erf_src'] == 'w' else x
    q = b.op('Div', ex, c) if p['cform'] == 'div' else b.op('Mul', c, ex)
    f = b.op('Erf', q)
    one = b.const(p['one'], cshape(p, 'one'))
    a = b.op(p['add'], f, one) if p['one_order'] == 'fo' else b.op(p['add'], one, f)
    mx = other if p['mul_src'] == 'w' else x
    half = b.const(p['half'], cshape(p, 'half'))
    if p['half_at'] == 'last':
        m = b.op('Mul', mx, a)
        y = b.op('Mul', m, half)
    elif p['half_at'] == 'first':
        m = b.op('Mul', half, mx)
        y = b.op('Mul', a, m)
    elif p['half_at'] == 'factor':
        m = b.op('Mul', a, half)
        y = b.op('Mul', mx, m)
    else:
        m = y = b.op('Mul', mx, a)
    b.output(y, 'y')
    if p.get('extra'):
        b.extra({'q': q, 'f': f, 'a': a, 'm': m}[p['extra']])
    return b


GELU_BASE = dict(dt='float', x=[3, 4], cform='div', c=1.4142135, erf_src='x', mul_src='x', one=1.0,
                 one_order='fo', add='Add', half=0.5, half_at='last')

GELU_VARIANTS = [
    # The known bug (issue 37): a [1,1,1,1] one of 1 + Erf fuses to a [3,4] Gelu.
    ('one-rank4', dict(one_shape=[1, 1, 1, 1])),
    ('one-rank3', dict(one_shape=[1, 1, 1])),
    ('one-rank1', dict(one_shape=[1])),
    ('half-rank4', dict(half_shape=[1, 1, 1, 1])),
    ('c-rank4', dict(c_shape=[1, 1, 1, 1])),
    ('c-same-shape', dict(c_shape=[3, 4])),
    ('c-column', dict(c=[1.4142135, 1.5, 1.0], c_shape=[3, 1])),
    ('c-1.5', dict(c=1.5)),
    ('c-1.41', dict(c=1.41)),
    ('c-1.4142', dict(c=1.4142)),
    ('c-negative', dict(c=-1.4142135)),
    ('one-2', dict(one=2.0)),
    ('one-vector', dict(one=[1.0, 1.0, 1.0, 2.0], one_shape=[4])),
    ('half-0.6', dict(half=0.6)),
    ('half-vector', dict(half=[0.5, 0.5, 0.5, 0.25], half_shape=[4])),
    ('no-half', dict(half_at='none')),
    ('sub-not-add', dict(add='Sub')),
    ('one-first', dict(one_order='of')),
    ('erf-of-other', dict(erf_src='w')),
    ('mul-by-other', dict(mul_src='w')),
    ('extra-q', dict(extra='q')),
    ('extra-erf', dict(extra='f')),
    ('extra-add', dict(extra='a')),
    ('extra-mul', dict(extra='m')),
    ('mul-form', dict(cform='mul', c=0.70710678)),
    ('mul-form-rank4', dict(cform='mul', c=0.70710678, c_shape=[1, 1, 1, 1])),
    ('half-first', dict(half_at='first')),
    ('half-factor', dict(half_at='factor')),
    ('half-factor-rank4', dict(half_at='factor', half_shape=[1, 1, 1, 1])),
    ('x-rank1', dict(x=[4], one_shape=[1, 1])),
    ('symbolic-one-rank4', dict(x=['N', 4], one_shape=[1, 1, 1, 1], dims={'N': 3})),
    ('unknown-rank', dict(x=None, feed={'x': [3, 4]})),
    ('unknown-rank-one-rank1', dict(x=None, one_shape=[1], feed={'x': []})),
    ('unknown-rank-half-rank2', dict(x=None, half_shape=[1, 1], feed={'x': [4]})),
    ('scalar-x-one-rank1', dict(x=[], one_shape=[1])),
    ('float16', dict(dt='float16')),
    ('opset17', dict(opset=17)),
]


def gelu_tanh(name, p):
    b = Builder(name, p.get('opset', 20), p['dt'])
    x = b.input('x', p['x'])
    w = b.input('w', p['x']) if p['cube_src'] == 'w' or p['sum_src'] == 'w' else None
    cx = w if p['cube_src'] == 'w' else x
    if p['cube'] == 'mul':
        sq = b.op('Mul', x, cx)
        cube = b.op('Mul', x, sq)
    else:
        sq = cube = b.op('Pow', cx, b.const(p['three'], cshape(p, 'three'), p.get('three_dt')))
    kc = b.op('Mul', b.const(p['k'], cshape(p, 'k')), cube)
    s = b.op('Add', w if p['sum_src'] == 'w' else x, kc)
    t = b.op('Mul', b.const(p['c'], cshape(p, 'c')), s)
    th = b.op('Tanh', t)
    a = b.op('Add', b.const(p['one'], cshape(p, 'one')), th)
    m = b.op('Mul', x, a)
    y = b.op('Mul', b.const(p['half'], cshape(p, 'half')), m)
    b.output(y, 'y')
    if p.get('extra'):
        b.extra({'sq': sq, 'cube': cube, 's': s, 'th': th, 'a': a}[p['extra']])
    return b


TANH_BASE = dict(dt='float', x=[3, 4], cube='mul', cube_src='x', sum_src='x', three=3.0, k=0.044715,
                 c=0.7978846, one=1.0, half=0.5)

TANH_VARIANTS = [
    ('one-rank4', dict(one_shape=[1, 1, 1, 1])),
    ('half-rank4', dict(half_shape=[1, 1, 1, 1])),
    ('k-rank4', dict(k_shape=[1, 1, 1, 1])),
    ('c-rank4', dict(c_shape=[1, 1, 1, 1])),
    ('one-rank3', dict(one_shape=[1, 1, 1])),
    ('pow', dict(cube='pow')),
    ('pow-rank4', dict(cube='pow', three_shape=[1, 1, 1, 1])),
    ('pow-int64', dict(cube='pow', three=3, three_dt='int64')),
    ('pow-2.9999', dict(cube='pow', three=2.9999)),
    ('pow-3.0001', dict(cube='pow', three=3.0001)),
    ('pow-2', dict(cube='pow', three=2.0)),
    ('k-0.05', dict(k=0.05)),
    ('k-column', dict(k=[0.044715, 0.05, 0.044715], k_shape=[3, 1])),
    ('c-0.8', dict(c=0.8)),
    ('c-vector', dict(c=[0.7978846, 0.7978846, 0.7978846, 0.9], c_shape=[4])),
    ('one-2', dict(one=2.0)),
    ('half-0.6', dict(half=0.6)),
    ('cube-of-other', dict(cube_src='w')),
    ('sum-of-other', dict(sum_src='w')),
    ('extra-square', dict(extra='sq')),
    ('extra-cube', dict(extra='cube')),
    ('extra-sum', dict(extra='s')),
    ('extra-tanh', dict(extra='th')),
    ('extra-add', dict(extra='a')),
    ('double', dict(dt='double')),
    ('float16', dict(dt='float16')),
    ('opset17', dict(opset=17)),
    ('symbolic-one-rank4', dict(x=['N', 4], one_shape=[1, 1, 1, 1], dims={'N': 3})),
    ('unknown-rank', dict(x=None, feed={'x': [3, 4]})),
    ('unknown-rank-k-rank1', dict(x=None, k_shape=[1], feed={'x': []})),
    ('unknown-rank-pow-rank2', dict(x=None, cube='pow', three_shape=[1, 1], feed={'x': [4]})),
]


# ---------------------------------------------------------------- swish
def swish(name, p):
    """x * Sigmoid(x) or x * Sigmoid(alpha * x) (Note [Swish forms])."""
    b = Builder(name, p.get('opset', 24), p['dt'])
    x = b.input('x', p['x'])
    w = b.input('w', p['x']) if 'w' in (p['sig_src'], p['mul_src']) else None
    sx = w if p['sig_src'] == 'w' else x
    xa = None
    if p['form'] == 'scaled':
        al = b.input('al', cshape(p, 'alpha')) if p.get('alpha_input') else \
            b.const(p['alpha'], cshape(p, 'alpha'))
        xa = b.op('Mul', al, sx) if p['alpha_first'] else b.op('Mul', sx, al)
        sx = xa
    s = b.op(p['act'], sx)
    mx = w if p['mul_src'] == 'w' else x
    y = b.op('Mul', s, mx) if p['sig_first'] else b.op('Mul', mx, s)
    b.output(y, 'y')
    if p.get('extra'):
        b.extra({'s': s, 'xa': xa}[p['extra']])
    return b


SWISH_BASE = dict(dt='float', x=[3, 4], form='scaled', alpha=1.702, alpha_first=False, sig_src='x', mul_src='x',
                  sig_first=False, act='Sigmoid')

SWISH_VARIANTS = [
    ('alpha-rank4', dict(alpha_shape=[1, 1, 1, 1])),
    ('alpha-rank3', dict(alpha_shape=[1, 1, 1])),
    ('alpha-rank1', dict(alpha_shape=[1])),
    ('alpha-same-shape', dict(alpha_shape=[3, 4])),
    ('alpha-column', dict(alpha=[1.702, 1.0, 2.0], alpha_shape=[3, 1])),
    ('alpha-input', dict(alpha_input=True)),
    ('alpha-first', dict(alpha_first=True)),
    ('alpha-1', dict(alpha=1.0)),
    ('alpha-negative', dict(alpha=-1.5)),
    ('alpha-zero', dict(alpha=0.0)),
    ('silu', dict(form='silu')),
    ('silu-sigmoid-first', dict(form='silu', sig_first=True)),
    ('sigmoid-of-other', dict(form='silu', sig_src='w')),
    ('scaled-other', dict(sig_src='w')),
    ('mul-by-other', dict(mul_src='w')),
    ('silu-mul-by-other', dict(form='silu', mul_src='w')),
    ('tanh-not-sigmoid', dict(act='Tanh')),
    ('extra-sigmoid', dict(extra='s')),
    ('extra-scale', dict(extra='xa')),
    ('silu-extra-sigmoid', dict(form='silu', extra='s')),
    ('float16', dict(dt='float16')),
    ('float16-silu', dict(dt='float16', form='silu')),
    ('double', dict(dt='double')),
    ('opset23', dict(opset=23)),
    ('symbolic', dict(x=['N', 4], dims={'N': 3})),
    ('symbolic-alpha-rank4', dict(x=['N', 4], alpha_shape=[1, 1, 1, 1], dims={'N': 3})),
    ('unknown-rank', dict(x=None, feed={'x': [3, 4]})),
    ('unknown-rank-alpha-rank1', dict(x=None, alpha_shape=[1], feed={'x': []})),
    ('scalar-x-alpha-rank1', dict(x=[], alpha_shape=[1])),
]


def hardswish(name, p):
    """x * HardSigmoid(x; alpha, beta) (Note [HardSwish form])."""
    b = Builder(name, p.get('opset', 14), p['dt'])
    x = b.input('x', p['x'])
    w = b.input('w', p['x']) if 'w' in (p['hs_src'], p['mul_src']) else None
    attrs = {k: p[k] for k in ('alpha', 'beta') if p[k] is not None and p['act'] == 'HardSigmoid'}
    hs = b.op(p['act'], w if p['hs_src'] == 'w' else x, **attrs)
    mx = w if p['mul_src'] == 'w' else x
    y = b.op('Mul', hs, mx) if p['hs_first'] else b.op('Mul', mx, hs)
    b.output(y, 'y')
    if p.get('extra'):
        b.extra(hs)
    return b


HS_BASE = dict(dt='float', x=[3, 4], alpha=0.16666667, beta=0.5, hs_src='x', mul_src='x', hs_first=False,
               act='HardSigmoid')

HS_VARIANTS = [
    ('alpha-default', dict(alpha=None)),
    ('beta-default', dict(beta=None)),
    ('both-default', dict(alpha=None, beta=None)),
    ('alpha-0.2', dict(alpha=0.2)),
    ('alpha-0.1666', dict(alpha=0.1666)),
    ('alpha-0.16667', dict(alpha=0.16667)),
    ('alpha-negative', dict(alpha=-0.16666667)),
    ('beta-0.4', dict(beta=0.4)),
    ('beta-0.5001', dict(beta=0.5001)),
    ('beta-0.50004', dict(beta=0.50004)),
    ('hs-first', dict(hs_first=True)),
    ('hs-of-other', dict(hs_src='w')),
    ('mul-by-other', dict(mul_src='w')),
    ('sigmoid-not-hard', dict(act='Sigmoid')),
    ('extra-hs', dict(extra=True)),
    ('float16', dict(dt='float16')),
    ('float16-alpha-0.1666', dict(dt='float16', alpha=0.1666)),
    ('float16-alpha-0.166', dict(dt='float16', alpha=0.166)),
    ('opset13', dict(opset=13)),
    ('opset22', dict(opset=22)),
    ('symbolic', dict(x=['N', 4], dims={'N': 3})),
    ('unknown-rank', dict(x=None, feed={'x': [3, 4]})),
    ('scalar-x', dict(x=[])),
]


# ---------------------------------------------------------------- attention
def attention(name, p):
    b = Builder(name, 23, p['dt'])
    B, H, T, S, D = 2, 2, 5, p.get('kv_len', 5), 4
    Td, Sd = ('T', 'S') if p.get('sym') else (T, S)   # declared (symbolic) sequence dims
    q = b.input('q', [B, H, Td, D])
    k = b.input('k', [B, H, Sd, D])
    v = k if p['v_src'] == 'k' else b.input('v', [B, H, Sd, D])
    if p['k_given_t']:
        kt = b.input('kt', [B, H, D, Sd])
    else:
        kt = b.op('Transpose', k, perm=p['kperm'])
    if p['scale'] == 'split':
        c = b.const(p['cval'], cshape(p, 'c'))
        q = b.op('Mul', q, c)
        kt = b.op('Mul', kt, b.const(p['cval'], ()))
    s = b.op('MatMul', q, kt)
    mask = None
    if p['mask'] == 'input':
        mask = b.input('mask', p['mask_shape'])
    elif p['mask'] in ('causal', 'upper'):
        tri = np.tril(np.ones((T, S))) if p['mask'] == 'causal' else np.triu(np.ones((T, S)))
        mask = b.const(np.where(tri > 0, 0.0, p.get('fill', NEG_INF)).tolist(), (T, S))
    if p['mask_at'] == 'before' and mask is not None:
        s = b.op('Add', s, mask)

    def scale(s):
        if p['scale'] == 'div':
            return b.op('Div', s, b.const(p['cval'], cshape(p, 'c')))
        if p['scale'] == 'mul':
            return b.op('Mul', b.const(p['cval'], cshape(p, 'c')), s)
        return s
    d = scale(s)
    if p['mask_at'] == 'after' and mask is not None:
        d = b.op('Add', d, mask) if p['mask_order'] == 'sm' else b.op('Add', mask, d)
    if p['mask'] == 'where':
        # Flipped, the fill goes where the lower triangle is true: strictly
        # below the diagonal, so that no row is fully masked (NaN in the
        # graph, 0 in Attention: Note [Attention numerical contract]).
        tri = np.tril(np.ones((T, S)), -1 if p.get('where_flipped') else 0)
        keep = b.const(tri.astype(bool).tolist(), (T, S), 'bool')
        fill = b.const(p.get('fill', NEG_INF), ())
        d = b.op('Where', keep, d, fill) if not p.get('where_flipped') else b.op('Where', keep, fill, d)
    pr = b.op('Softmax', d, axis=p['axis'])
    y = b.op('MatMul', pr, v)
    b.output(y, 'y')
    if p.get('extra'):
        b.extra({'s': s, 'd': d, 'p': pr}[p['extra']])
    return b


ATT_BASE = dict(dt='float', kperm=[0, 1, 3, 2], k_given_t=False, v_src='v', scale='div', cval=2.0, mask='input',
                mask_shape=[2, 1, 5, 5], mask_at='after', mask_order='sm', axis=-1)

ATT_VARIANTS = [
    ('scale-rank5', dict(c_shape=[1, 1, 1, 1, 1])),
    ('scale-rank4', dict(c_shape=[1, 1, 1, 1])),
    ('scale-keys', dict(cval=[1.0, 2.0, 3.0, 4.0, 5.0], c_shape=[5])),
    ('scale-heads', dict(cval=[2.0, 4.0], c_shape=[1, 2, 1, 1])),
    ('scale-negative', dict(cval=-2.0)),
    ('scale-mul', dict(scale='mul', cval=0.5)),
    ('scale-mul-rank5', dict(scale='mul', cval=0.5, c_shape=[1, 1, 1, 1, 1])),
    ('scale-none', dict(scale='none')),
    ('scale-split', dict(scale='split', cval=0.7)),
    ('scale-split-rank5', dict(scale='split', cval=0.7, c_shape=[1, 1, 1, 1, 1])),
    ('mask-rank5', dict(mask_shape=[1, 2, 1, 5, 5])),
    ('mask-keys-1d', dict(mask_shape=[5])),
    ('mask-2d', dict(mask_shape=[5, 5])),
    ('mask-key-padding', dict(mask_shape=[2, 1, 1, 5])),
    ('mask-per-query', dict(mask_shape=[5, 1])),
    ('mask-heads', dict(mask_shape=[1, 2, 5, 5])),
    ('mask-before-scale', dict(mask_at='before')),
    ('mask-first', dict(mask_order='ms')),
    ('no-mask', dict(mask='none')),
    ('softmax-axis-2', dict(axis=2)),
    ('softmax-axis-3', dict(axis=3)),
    ('k-perm-batch-heads', dict(kperm=[1, 0, 3, 2])),
    ('k-given-transposed', dict(k_given_t=True)),
    ('v-is-k', dict(v_src='k')),
    ('kv-longer', dict(kv_len=6, mask_shape=[2, 1, 5, 6])),
    ('extra-scores', dict(extra='s')),
    ('extra-scaled', dict(extra='d')),
    ('extra-probs', dict(extra='p')),
    ('causal', dict(mask='causal')),
    ('upper-triangular', dict(mask='upper')),
    ('causal-finite', dict(mask='causal', fill=-1e4)),
    ('causal-not-square', dict(mask='causal', kv_len=6)),
    ('where-bool', dict(mask='where')),
    ('where-flipped', dict(mask='where', where_flipped=True)),
    ('double', dict(dt='double')),
    ('float16', dict(dt='float16')),
    ('symbolic', dict(sym=True, mask_shape=[2, 1, 'T', 'S'], dims={'T': 5, 'S': 5})),
    ('symbolic-scale-rank5', dict(sym=True, mask_shape=[2, 1, 'T', 'S'], c_shape=[1, 1, 1, 1, 1],
                                  dims={'T': 5, 'S': 5})),
    ('symbolic-mask-rank5', dict(sym=True, mask_shape=[1, 1, 1, 'T', 'S'], dims={'T': 5, 'S': 5})),
    ('mask-unknown-rank', dict(mask_shape=None, feed={'mask': [2, 1, 5, 5]})),
    ('mask-unknown-rank-fed-rank5', dict(mask_shape=None, feed={'mask': [1, 2, 1, 5, 5]})),
]


# ---------------------------------------------------------------- attention heads
def attention_heads(name, p):
    """The head split (Reshape [B,T,E] -> [B,T,H,D], Transpose) of Q, K and V
    from one x and the merge of the result (Transpose, Reshape -> [B,T,E])."""
    b = Builder(name, 23, p['dt'])
    x = b.input('x', p['x'])
    kv = b.input('kv', p['kv']) if p.get('kv') else x
    split = b.ints(p['split'])
    rq = b.op('Reshape', x, split)
    tq = b.op('Transpose', rq, perm=p['qperm'])
    rk = b.op('Reshape', kv, b.ints(p.get('ksplit', p['split'])))
    tk = b.op('Transpose', rk, perm=p['kperm'])
    if p.get('kt_extra'):
        tk = b.op('Transpose', tk, perm=[0, 1, 3, 2])
    rv = b.op('Reshape', kv, b.ints(p.get('ksplit', p['split'])))
    tv = b.op('Transpose', rv, perm=p['vperm'])
    s = b.op('MatMul', tq, tk)
    d = b.op('Div', s, b.const(p['c'], cshape(p, 'c'))) if p['c'] is not None else s
    if p.get('mask'):
        d = b.op('Add', d, b.input('mask', p['mask']))
    pr = b.op('Softmax', d, axis=-1)
    o = b.op('MatMul', pr, tv)
    to = b.op('Transpose', o, perm=p['operm']) if p['operm'] else o
    y = b.op('Reshape', to, b.ints(p['merge']))
    b.output(y, 'y')
    if p.get('extra'):
        b.extra({'rq': rq, 'tq': tq, 'tk': tk, 's': s, 'p': pr, 'o': o, 'to': to}[p['extra']])
    return b


HEADS_BASE = dict(dt='float', x=[2, 4, 8], split=[0, 0, 2, 4], qperm=[0, 2, 1, 3], kperm=[0, 2, 3, 1],
                  vperm=[0, 2, 1, 3], c=2.0, operm=[0, 2, 1, 3], merge=[0, 0, 8])

HEADS_VARIANTS = [
    ('four-heads', dict(split=[0, 0, 4, 2])),
    ('split-minus-one', dict(split=[0, 0, 2, -1])),
    ('split-literal', dict(split=[2, 4, 2, 4])),
    ('split-heads-minus-one', dict(split=[0, 0, -1, 4])),
    ('k-transposed-twice', dict(kperm=[0, 2, 1, 3], kt_extra=True)),
    ('merge-perm-last-two', dict(operm=[0, 1, 3, 2], merge=[2, 4, 8])),
    ('merge-perm-other', dict(operm=[0, 2, 3, 1])),
    ('merge-minus-one', dict(merge=[0, 0, -1])),
    ('merge-literal', dict(merge=[2, 4, 8])),
    ('merge-heads-first', dict(merge=[0, 8, -1])),
    ('merge-rank4', dict(merge=[1, 2, 4, 8])),
    ('merge-flat', dict(merge=[8, 8])),
    ('cross-attention', dict(kv=[2, 6, 8])),
    ('kv-one-head', dict(kv=[2, 6, 4], ksplit=[0, 0, 1, 4])),
    ('scale-rank4', dict(c_shape=[1, 1, 1, 1])),
    ('scale-heads', dict(c=[2.0, 3.0], c_shape=[1, 2, 1, 1])),
    ('scale-keys', dict(c=[1.0, 2.0, 3.0, 4.0], c_shape=[4])),
    ('no-scale', dict(c=None)),
    ('mask', dict(mask=[2, 1, 4, 4])),
    ('mask-2d', dict(mask=[4, 4])),
    ('mask-key-padding', dict(mask=[2, 1, 1, 4])),
    ('mask-per-head', dict(mask=[1, 2, 4, 4])),
    ('extra-split', dict(extra='rq')),
    ('extra-q-heads', dict(extra='tq')),
    ('extra-k-heads', dict(extra='tk')),
    ('extra-probs', dict(extra='p')),
    ('extra-heads-out', dict(extra='o')),
    ('extra-merge-transpose', dict(extra='to')),
    ('symbolic', dict(x=['B', 'T', 8], dims={'B': 2, 'T': 4})),
    ('symbolic-mask', dict(x=['B', 'T', 8], mask=['B', 1, 'T', 'T'], dims={'B': 2, 'T': 4})),
    ('float16', dict(dt='float16')),
    ('double', dict(dt='double')),
]


# ---------------------------------------------------------------- rotary
def rotary(name, p):
    b = Builder(name, 23, p['dt'])
    B, H, T, D = 2, 2, 3, 4
    x = b.input('x', [B, H, T, D])
    pos = b.input('pos', [B, T], 'int64')
    cos = np.array([[1, 0.5, 1, 0.5], [0.25, 0.75, 0.25, 0.75], [-1, 2, -1, 2]])
    sin = np.array([[0, 0.125, 0, 0.125], [0.5, -0.5, 0.5, -0.5], [3, 1, 3, 1]])
    if p.get('cos_unequal'):
        cos[1, 3] = 0.5
    if p.get('sin_unequal'):
        sin[2, 0] = 2.0
    if p.get('cache_input'):
        cosc = b.input('cosc', [3, 4])
    else:
        cosc = b.const(cos.tolist(), (3, 4))
    sinc = cosc if p.get('sin_is_cos') else b.const(sin.tolist(), (3, 4))
    c = b.unsqueeze(b.op('Gather', cosc, pos, axis=0), p['unsq'])
    s = b.unsqueeze(b.op('Gather', sinc, pos, axis=0), p['unsq'])
    xr = b.input('w', [B, H, T, D]) if p.get('rot_src') == 'w' else x
    split = p['split']
    lo = b.op('Slice', xr, b.ints([0]), b.ints([split]), b.ints([-1]), *([b.ints([p['step']])] if p['step'] != 1 else []))
    hi = b.op('Slice', xr, b.ints([p['hi_start']]), b.ints([BIG]), b.ints([-1]),
              *([b.ints([p['step']])] if p['step'] != 1 else []))
    if p['neg'] == 'hi':
        rh = b.op('Concat', b.op('Neg', hi), lo, axis=-1)
    elif p['neg'] == 'lo':
        rh = b.op('Concat', hi, b.op('Neg', lo), axis=-1)
    elif p['neg'] == 'order':
        rh = b.op('Concat', lo, b.op('Neg', hi), axis=-1)
    else:
        rh = b.op('Concat', hi, lo, axis=-1)
    if p.get('swap_cs'):
        c, s = s, c
    a = b.op('Mul', x, c) if p['mul_order'] == 'xc' else b.op('Mul', c, x)
    bb = b.op('Mul', rh, s)
    y = b.op(p['combine'], a, bb)
    b.output(y, 'y')
    if p.get('extra'):
        b.extra({'rh': rh, 'a': a, 'b': bb, 'c': c}[p['extra']])
    return b


ROT_BASE = dict(dt='float', unsq=[1], split=2, hi_start=2, step=1, neg='hi', mul_order='xc', combine='Add')

ROT_VARIANTS = [
    ('cos-halves-differ', dict(cos_unequal=True)),
    ('sin-halves-differ', dict(sin_unequal=True)),
    ('cos-rank5', dict(unsq=[0, 2])),
    ('cos-batch-as-heads', dict(unsq=[0])),
    ('neg-lo', dict(neg='lo')),
    ('concat-order', dict(neg='order')),
    ('no-neg', dict(neg='none')),
    ('split-at-1', dict(split=1, hi_start=1)),
    ('split-at-3', dict(split=3, hi_start=3)),
    ('hi-start-negative', dict(hi_start=-2)),
    ('interleaved-slices', dict(split=4, hi_start=1, step=2)),
    ('swap-cos-sin', dict(swap_cs=True)),
    ('sub-not-add', dict(combine='Sub')),
    ('cos-first', dict(mul_order='cx')),
    ('extra-rotated', dict(extra='rh')),
    ('extra-x-cos', dict(extra='a')),
    ('extra-rot-sin', dict(extra='b')),
    ('extra-cos', dict(extra='c')),
    ('sin-is-cos', dict(sin_is_cos=True)),
    ('rotate-other', dict(rot_src='w')),
    ('cache-input', dict(cache_input=True)),
    ('double', dict(dt='double')),
    ('float16', dict(dt='float16')),
]


def rotary_computed(name, p):
    """cos and sin computed in the graph (Note [Rotary caches computed in the
    graph]): cos = Concat(Cos(a), Cos(a)), sin = Sin(Concat(a, a)), a an input
    of angles [.., T, D/2]."""
    b = Builder(name, 23, p['dt'])
    x = b.input('x', p['x'])
    a = b.input('a', p['a'])
    a2 = b.input('a2', p['a']) if p.get('other') else a
    ca = b.op('Cos', a)
    c = b.op('Concat', ca, b.op('Cos', a2) if p.get('other') == 'cos' else ca, axis=-1)
    s = b.op('Sin', b.op('Concat', a, a2 if p.get('other') == 'sin' else a, axis=-1))
    if p.get('scale') is not None:
        k = b.const(p['scale'], cshape(p, 'scale'))
        c, s = b.op('Mul', c, k), b.op('Mul', k, s)
    if p.get('swap_cs'):
        c, s = s, c
    split = p['split']
    lo = b.op('Slice', x, b.ints([0]), b.ints([split]), b.ints([-1]))
    hi = b.op('Slice', x, b.ints([split]), b.ints([BIG]), b.ints([-1]))
    if p['neg'] == 'hi':
        rh = b.op('Concat', b.op('Neg', hi), lo, axis=-1)
    elif p['neg'] == 'lo':
        rh = b.op('Concat', hi, b.op('Neg', lo), axis=-1)
    else:
        rh = b.op('Concat', hi, lo, axis=-1)
    m1 = b.op('Mul', x, c)
    m2 = b.op('Mul', rh, s)
    y = b.op('Add', m1, m2)
    b.output(y, 'y')
    if p.get('extra'):
        b.extra({'c': c, 'rh': rh, 'm1': m1}[p['extra']])
    return b


ROTC_BASE = dict(dt='float', x=[2, 2, 3, 4], a=[3, 2], split=2, neg='hi')

ROTC_VARIANTS = [
    ('angles-rank5', dict(a=[1, 1, 1, 3, 2])),
    ('angles-per-head', dict(a=[2, 2, 3, 2])),
    ('angles-per-batch', dict(a=[2, 1, 3, 2])),
    ('angles-rank3', dict(a=[1, 3, 2])),
    ('angles-one-position', dict(a=[1, 2])),
    ('cos-halves-of-two-tensors', dict(other='cos')),
    ('sin-halves-of-two-tensors', dict(other='sin')),
    ('scale', dict(scale=0.5)),
    ('scale-unequal-halves', dict(scale=[1.0, 0.5, 1.0, 1.0], scale_shape=[4])),
    ('scale-equal-halves', dict(scale=[1.0, 0.5, 1.0, 0.5], scale_shape=[4])),
    ('scale-rank5', dict(scale=0.5, scale_shape=[1, 1, 1, 1, 1])),
    ('scale-per-head', dict(scale=[1.0, 2.0], scale_shape=[2, 1, 1])),
    ('swap-cos-sin', dict(swap_cs=True)),
    ('neg-lo', dict(neg='lo')),
    ('no-neg', dict(neg='none')),
    ('split-at-1', dict(split=1)),
    ('split-at-3', dict(split=3)),
    ('extra-cos', dict(extra='c')),
    ('extra-rotated', dict(extra='rh')),
    ('extra-x-cos', dict(extra='m1')),
    ('symbolic', dict(x=['B', 2, 'T', 4], a=['T', 2], dims={'B': 2, 'T': 3})),
    ('x-3d', dict(x=[2, 3, 4])),
    ('float16', dict(dt='float16')),
]


# ---------------------------------------------------------------- grouped KV heads
def gqa(name, p):
    b = Builder(name, 23, p['dt'])
    B, Hq, Hk, T, D = 2, p['hq'], 2, 5, 4
    n = Hq // Hk
    q = b.input('q', [B, Hq, T, D])
    k = b.input('k', [B, Hk, T, D])
    v = b.input('v', [B, Hk, T, D])

    def repeat(x, how):
        if how == 'interleave':      # repeat_kv: head h of the result reads h // n
            u = b.unsqueeze(x, [2])
            e = b.op('Expand', u, b.ints(p.get('exp', [B, Hk, n, T, D])))
        elif how == 'tile':          # head h reads h % Hk
            u = b.unsqueeze(x, [1])
            e = b.op('Expand', u, b.ints([B, n, Hk, T, D]))
        elif how == 'tile-op':
            return b.op('Tile', x, b.ints([1, n, 1, 1]))
        else:
            return x
        if p.get('extra_rep') and x == k:
            b.extra(e)
        return b.op('Reshape', e, b.ints(p['to']))
    rk, rv = repeat(k, p['krep']), repeat(v, p['vrep'])
    kt = b.op('Transpose', rk, perm=[0, 1, 3, 2])
    s = b.op('MatMul', q, kt)
    if p.get('cval') is not None:
        s = b.op('Div', s, b.const(p['cval'], cshape(p, 'c')))
    if p.get('mask_shape'):
        s = b.op('Add', s, b.input('mask', p['mask_shape']))
    pr = b.op('Softmax', s, axis=-1)
    y = b.op('MatMul', pr, rv)
    b.output(y, 'y')
    return b


GQA_BASE = dict(dt='float', hq=4, krep='interleave', vrep='interleave', to=[0, 4, -1, 4], cval=2.0)

GQA_VARIANTS = [
    ('tile-order', dict(krep='tile', vrep='tile')),
    ('k-tile-v-interleave', dict(krep='tile')),
    ('v-tile-k-interleave', dict(vrep='tile')),
    ('tile-op', dict(krep='tile-op', vrep='tile-op')),
    ('expand-rank6', dict(exp=[1, 2, 2, 2, 5, 4], to=[0, 4, -1, 4])),
    ('reshape-literal', dict(to=[2, 4, 5, 4])),
    ('extra-repeat', dict(extra_rep=True)),
    ('q-8-heads', dict(hq=8, to=[0, 8, -1, 4])),
    ('scale-rank5', dict(c_shape=[1, 1, 1, 1, 1])),
    ('scale-heads', dict(cval=[1.0, 2.0, 3.0, 4.0], c_shape=[1, 4, 1, 1])),
    ('scale-none', dict(cval=None)),
    ('mask-2d', dict(mask_shape=[5, 5])),
    ('mask-rank5', dict(mask_shape=[1, 1, 4, 5, 5])),
    ('mask-heads', dict(mask_shape=[1, 4, 5, 5])),
    ('mask-key-padding', dict(mask_shape=[2, 1, 1, 5])),
    ('mask-1d', dict(mask_shape=[5])),
    ('k-tile-op-v-interleave', dict(krep='tile-op')),
    ('six-q-heads', dict(hq=6, to=[0, 6, -1, 4])),
    ('float16', dict(dt='float16')),
    ('double', dict(dt='double')),
]


# ---------------------------------------------------------------- Conv + BN / Add / Mul
def conv_bn(name, p):
    b = Builder(name, 17, p['dt'])
    g = p.get('group', 1)
    cin, cout = (2, 2) if g > 1 else (2, 3)
    spatial = p.get('spatial', [5, 5])
    x = b.input('x', [1, cin] + spatial)
    ks = [3] * len(spatial)
    w = b.input('W', [cout, cin // g] + ks) if p.get('w_input') else b.rand((cout, cin // g, *ks), stem='W')
    ins = [x, w] + ([] if p.get('no_bias') else [b.rand((cout,), stem='b')])
    attrs = {k: p[k] for k in ('strides', 'pads', 'dilations') if k in p}
    if g > 1:
        attrs['group'] = g
    if p.get('transpose'):
        wt = b.rand((cin, cout, *ks), stem='Wt')
        c = b.op('ConvTranspose', x, wt, *ins[2:], **attrs)
    else:
        c = b.op('Conv', *ins, **attrs)
    src = b.op('Relu', c) if p.get('relu_between') else c
    params = []
    for nm, lo, hi in (('scale', p.get('scale_lo', 0.5), 2.0), ('B', -1.0, 1.0), ('mean', -1.0, 1.0),
                       ('var', p.get('var_lo', 0.25), 2.0)):
        if p.get(nm + '_input'):
            params.append(b.input(nm, [cout]))
        else:
            params.append(b.rand(tuple(p.get(nm + '_shape', [cout])), lo=lo, hi=hi, stem=nm))
    battrs = dict(epsilon=p['eps'], **({'momentum': p['momentum']} if 'momentum' in p else {}))
    if p.get('training'):
        battrs['training_mode'] = 1
        y = b.op('BatchNormalization', src, *params, n_out=3, **battrs)[0]
    else:
        y = b.op('BatchNormalization', src, *params, **battrs)
    b.output(y, 'y')
    if p.get('extra'):
        b.extra(c)
    return b


BN_BASE = dict(dt='float', eps=1e-5)

BN_VARIANTS = [
    ('eps-0', dict(eps=0.0)),
    ('eps-big', dict(eps=0.5)),
    ('training-mode', dict(training=True)),
    ('scale-negative', dict(scale_lo=-2.0)),
    ('var-tiny', dict(var_lo=1e-6)),
    ('no-conv-bias', dict(no_bias=True)),
    ('grouped', dict(group=2)),
    ('strided-padded', dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    ('dilated', dict(dilations=[2, 2])),
    ('conv-1d', dict(spatial=[7])),
    ('conv-3d', dict(spatial=[4, 4, 4])),
    ('conv-transpose', dict(transpose=True)),
    ('extra-conv', dict(extra=True)),
    ('relu-between', dict(relu_between=True)),
    ('scale-input', dict(scale_input=True)),
    ('mean-input', dict(mean_input=True)),
    ('var-input', dict(var_input=True)),
    ('weights-input', dict(w_input=True)),
    ('float16', dict(dt='float16')),
    ('spatial-3x3', dict(spatial=[3, 3])),
    ('eps-1e-3', dict(eps=1e-3)),
    ('momentum', dict(momentum=0.5)),
]


def conv_add_mul(name, p):
    b = Builder(name, 17, p['dt'])
    x = b.input('x', p.get('x', [1, 2, 5, 5]))
    c = b.op('Conv', x, b.rand((3, 2, 3, 3), stem='W'), *([] if p.get('no_bias') else [b.rand((3,), stem='b')]))
    if p.get('k_input'):
        k = b.input('k', p['k_shape'])
    else:
        k = b.rand(tuple(p['k_shape']), lo=p.get('k_lo', 0.5), hi=2.0, stem='k')
    y = b.op(p['op'], c, k) if p['order'] == 'ck' else b.op(p['op'], k, c)
    b.output(y, 'y')
    if p.get('extra'):
        b.extra(c)
    return b


CAM_BASE = dict(dt='float', op='Add', k_shape=[3, 1, 1], order='ck')

CAM_VARIANTS = [(f'{op.lower()}-{tag}', dict(op=op, k_shape=shape)) for op in ('Add', 'Mul') for tag, shape in (
    ('rank5', [1, 1, 1, 1, 1]), ('rank4-channels', [1, 3, 1, 1]), ('channels-first-axis', [3, 1, 1, 1]),
    ('last-axis', [3]), ('scalar', []), ('one', [1]), ('per-element', [1, 3, 3, 3]), ('rows', [1, 1, 3, 1]),
    ('rank5-channels', [1, 1, 3, 1, 1]))] + [
    ('mul-channels', dict(op='Mul')),
    ('mul-negative', dict(op='Mul', k_lo=-2.0)),
    ('add-first', dict(order='kc')),
    ('mul-first', dict(op='Mul', order='kc')),
    ('add-input', dict(k_input=True)),
    ('add-input-no-bias', dict(k_input=True, no_bias=True)),
    ('add-input-scalar-no-bias', dict(k_input=True, no_bias=True, k_shape=[])),
    ('add-input-rank4-no-bias', dict(k_input=True, no_bias=True, k_shape=[1, 3, 1, 1])),
    ('add-input-spatial-no-bias', dict(k_input=True, no_bias=True, k_shape=[1, 1, 3, 3])),
    ('mul-input-no-bias', dict(op='Mul', k_input=True, no_bias=True)),
    ('extra-conv', dict(extra=True)),
    ('no-conv-bias', dict(no_bias=True)),
    ('sub-not-add', dict(op='Sub')),
    ('div-not-mul', dict(op='Div')),
    ('symbolic-batch-rank5', dict(x=['N', 2, 5, 5], k_shape=[1, 1, 1, 1, 1], dims={'N': 2})),
    ('unknown-rank-x', dict(x=None, feed={'x': [1, 2, 5, 5]})),
    ('float16', dict(dt='float16')),
]


# ---------------------------------------------------------------- MatMul + Add, Transpose + Gemm
def matmul_add(name, p):
    b = Builder(name, 17, p['dt'])
    x = b.input('x', p['x'], p.get('x_dt'))
    w = b.input('W', [4, 5], p.get('x_dt')) if p.get('w_input') else b.rand((4, 5), p.get('x_dt'), stem='W')
    m = b.op('MatMul', x, w)
    c = b.input('c', p['c']) if p.get('c_input') else b.rand(tuple(p['c']), p.get('x_dt'), stem='bias')
    y = b.op('Add', m, c) if p['order'] == 'mc' else b.op('Add', c, m)
    b.output(y, 'y', p.get('x_dt'))
    if p.get('extra'):
        b.extra(m, p.get('x_dt'))
    return b


MMA_BASE = dict(dt='float', x=[3, 4], c=[5], order='mc')

MMA_VARIANTS = [(f'bias-{tag}', dict(c=shape)) for tag, shape in (
    ('row', [1, 5]), ('full', [3, 5]), ('column', [3, 1]), ('one-one', [1, 1]), ('scalar', []), ('one', [1]),
    ('rank3', [1, 1, 5]), ('rank3-one', [1, 1, 1]), ('rank4-one', [1, 1, 1, 1]), ('batch', [2, 3, 5]),
    ('rank3-full', [1, 3, 5]))] + [
    ('x-3d', dict(x=[2, 3, 4])),
    ('x-row', dict(x=[1, 4])),
    ('weights-input', dict(w_input=True)),
    ('bias-input', dict(c_input=True)),
    ('bias-input-full', dict(c_input=True, c=[3, 5])),
    ('bias-input-rank3', dict(c_input=True, c=[1, 1, 5])),
    ('extra-matmul', dict(extra=True)),
    ('bias-first', dict(order='cm')),
    ('double', dict(dt='double', x_dt='double')),
    ('float16', dict(dt='float16', x_dt='float16')),
    ('int32', dict(x_dt='int32')),
    ('symbolic-rows', dict(x=['M', 4], dims={'M': 3})),
    ('symbolic-bias-rank3', dict(x=['M', 4], c=[1, 1, 5], dims={'M': 3})),
    ('unknown-rank', dict(x=None, feed={'x': [3, 4]})),
    ('unknown-rank-fed-3d', dict(x=None, feed={'x': [2, 3, 4]})),
]


def transpose_gemm(name, p):
    b = Builder(name, 17, p['dt'])
    a = b.input('a', p['a'])
    ta = b.op('Transpose', a, **({'perm': p['perm']} if p.get('perm') else {}))
    w = b.input('bw', p['b']) if p.get('b_input') else b.rand(tuple(p['b']), stem='B')
    if p.get('trans_b_too'):
        w = b.op('Transpose', w)
    ins = [ta, w] if p['slot'] == 'A' else [w, ta]
    if p.get('c') is not None:
        ins.append(b.rand(tuple(p['c']), stem='C'))
    attrs = {k: p[k] for k in ('transA', 'transB', 'alpha', 'beta') if k in p}
    if p.get('matmul'):
        y = b.op('MatMul', *ins)
    else:
        y = b.op('Gemm', *ins, **attrs)
    b.output(y, 'y')
    if p.get('extra'):
        b.extra(ta)
    return b


TG_BASE = dict(dt='float', a=[4, 3], b=[4, 5], slot='A')

TG_VARIANTS = [
    ('perm-explicit', dict(perm=[1, 0])),
    ('transA-set', dict(transA=1, a=[3, 4], b=[4, 5])),
    ('transB-slot', dict(slot='B', a=[5, 4], b=[3, 4])),
    ('transB-set', dict(slot='B', transB=1, a=[4, 5], b=[3, 4])),
    ('both', dict(trans_b_too=True, b=[5, 4])),
    ('bias-row', dict(c=[5])),
    ('bias-full', dict(c=[3, 5])),
    ('bias-column', dict(c=[3, 1])),
    ('alpha-beta', dict(c=[5], alpha=2.0, beta=0.5)),
    ('extra-transpose', dict(extra=True)),
    ('b-input', dict(b_input=True)),
    ('square', dict(a=[4, 4], b=[4, 5])),
    ('square-transA', dict(a=[4, 4], b=[4, 5], transA=1)),
    ('matmul', dict(matmul=True)),
    ('matmul-extra', dict(matmul=True, extra=True)),
    ('double', dict(dt='double')),
    ('float16', dict(dt='float16')),
    ('transB-alpha', dict(slot='B', a=[5, 4], b=[3, 4], alpha=-1.0)),
    ('bias-scalar', dict(c=[])),
    ('bias-one', dict(c=[1, 1])),
    ('transA-transB', dict(transA=1, transB=1, trans_b_too=True, a=[3, 4], b=[4, 5], slot='A')),
]


# ---------------------------------------------------------------- simplify
def units(name, p):
    b = Builder(name, 17, p['dt'])
    x = b.input('x', p['x'])
    x1 = b.op('Relu', x) if p['dt'] not in ('int32', 'int64') else b.op('Abs', x)
    if p.get('k_input'):
        k = b.input('k', p['k_shape'])
    else:
        k = b.const(p['k'], tuple(p['k_shape']))
    y = b.op(p['op'], x1, k) if p['order'] == 'xk' else b.op(p['op'], k, x1)
    b.output(y, 'y')
    if p.get('extra'):
        b.extra(x1)
    return b


UNIT_BASE = dict(dt='float', x=[2, 3, 4], op='Mul', k=1.0, k_shape=[1, 1], order='xk')

UNIT_VARIANTS = [(f'{op.lower()}-{tag}', dict(op=op, k=k, k_shape=shape)) for op, k in (
    ('Mul', 1.0), ('Div', 1.0), ('Sub', 0.0)) for tag, shape in (
    ('rank4', [1, 1, 1, 1]), ('scalar', []), ('rank3', [1, 1, 1]), ('last', [4]), ('column', [3, 1]),
    ('same', [2, 3, 4]), ('batch', [2, 1, 1, 1]))] + [
    ('mul-1.0001', dict(k=1.0001)),
    ('mul-minus-1', dict(k=-1.0)),
    ('mul-first', dict(order='kx')),
    ('div-first', dict(op='Div', order='kx')),
    ('sub-first', dict(op='Sub', k=0.0, order='kx')),
    ('sub-minus-zero', dict(op='Sub', k=-0.0)),
    ('add-zero', dict(op='Add', k=0.0)),
    ('add-minus-zero', dict(op='Add', k=-0.0)),
    ('add-zero-int32', dict(op='Add', k=0, dt='int32')),
    ('add-minus-zero-broadcast', dict(op='Add', k=-0.0, k_shape=[2, 1, 1, 1])),
    ('mul-input', dict(k_input=True)),
    ('mul-int32', dict(dt='int32')),
    ('div-int64', dict(dt='int64', op='Div')),
    ('double', dict(dt='double')),
    ('float16', dict(dt='float16')),
    ('x-rank1', dict(x=[4])),
    ('extra', dict(extra=True)),
    ('symbolic-rank4', dict(x=['N', 3, 4], k_shape=[1, 1, 1, 1], dims={'N': 2})),
    ('symbolic', dict(x=['N', 3, 4], dims={'N': 2})),
    ('unknown-rank', dict(x=None, feed={'x': [4]})),
    ('unknown-rank-scalar', dict(x=None, k_shape=[1], feed={'x': []})),
    ('div-unknown-rank', dict(op='Div', x=None, feed={'x': [2, 3, 4]})),
    ('sub-unknown-rank', dict(op='Sub', k=0.0, x=None, k_shape=[1, 1, 1], feed={'x': [3, 4]})),
    ('mul-one-ones', dict(k=[1.0, 1.0, 1.0, 1.0], k_shape=[4])),
    ('mul-ones-but-one', dict(k=[1.0, 1.0, 1.0, 0.5], k_shape=[4])),
]


def noops(name, p):
    b = Builder(name, 17, p['dt'])
    x = b.input('x', p.get('x', [2, 3, 4]))
    h = b.op('Relu', x)
    for step in p['steps']:
        kind, arg = step[0], step[1:]
        if kind == 'reshape':
            h = b.op('Reshape', h, b.ints(arg[0]))
        elif kind == 'expand':
            h = b.op('Expand', h, b.ints(arg[0]))
        elif kind == 'tile':
            h = b.op('Tile', h, b.ints(arg[0]))
        elif kind == 'pad':
            h = b.op('Pad', h, b.ints(arg[0]), **(arg[1] if len(arg) > 1 else {}))
        elif kind == 'cast':
            h = b.op('Cast', h, to=DTYPES[arg[0]][0])
        elif kind == 'transpose':
            h = b.op('Transpose', h, **({'perm': arg[0]} if arg[0] else {}))
        elif kind == 'concat':
            h = b.op('Concat', *([h] * arg[0]), axis=arg[1])
        elif kind == 'split':
            outs = b.op('Split', h, *([b.ints(arg[1])] if arg[1] else []), axis=arg[0], n_out=arg[2])
            h = outs if arg[2] == 1 else outs[0]
        elif kind == 'slice':
            h = b.op('Slice', h, *[b.ints(a) for a in arg])
        elif kind in ('squeeze', 'unsqueeze'):
            h = b.op(kind.capitalize(), h, b.ints(arg[0]))
    b.output(h, 'y', p.get('out_dt'))
    return b


NOOP_BASE = dict(dt='float', steps=[
    ('reshape', [0, 0, -1]), ('expand', [1]), ('tile', [1, 1, 1]), ('pad', [0] * 6), ('cast', 'float'),
    ('transpose', [0, 1, 2]), ('concat', 1, 0), ('split', 1, None, 1), ('slice', [0], [BIG], [2])])

NOOP_VARIANTS = [(tag, dict(steps=[step], **extra)) for tag, step, extra in (
    ('reshape-same', ('reshape', [2, 3, 4]), {}),
    ('reshape-merge', ('reshape', [2, 12]), {}),
    ('reshape-rank4', ('reshape', [1, 2, 3, 4]), {}),
    ('reshape-swap', ('reshape', [3, 2, 4]), {}),
    ('expand-rank4', ('expand', [1, 1, 1, 1]), {}),
    ('expand-same', ('expand', [2, 3, 4]), {}),
    ('expand-ones-middle', ('expand', [2, 1, 4]), {}),
    ('expand-grows', ('expand', [2, 2, 3, 4]), {}),
    ('expand-rank5-ones', ('expand', [1, 1, 1, 1, 1]), {}),
    ('tile-twice', ('tile', [1, 1, 2]), {}),
    ('pad-one', ('pad', [0, 0, 0, 0, 0, 1]), {}),
    ('pad-reflect-zero', ('pad', [0] * 6, {'mode': 'reflect'}), {}),
    ('pad-negative', ('pad', [0, 0, 0, 0, 0, -1]), {}),
    ('slice-short', ('slice', [0], [3], [2]), {}),
    ('slice-exact', ('slice', [0], [4], [2]), {}),
    ('slice-reverse', ('slice', [-1], [-BIG], [2], [-1]), {}),
    ('slice-from-minus-big', ('slice', [-BIG], [BIG], [1]), {}),
    ('slice-step2', ('slice', [0], [BIG], [2], [2]), {}),
    ('concat-twice', ('concat', 2, 2), {}),
    ('split-two', ('split', 2, [2, 2], 2), {}),
    ('split-one-sized', ('split', 1, [3], 1), {}),
    ('transpose-swap', ('transpose', [0, 2, 1]), {}),
    ('transpose-default', ('transpose', None), {}),
    ('cast-double', ('cast', 'double'), {'out_dt': 'double'}),
    ('cast-same', ('cast', 'float'), {}),
)] + [
    ('cast-int-chain', dict(steps=[('cast', 'int32'), ('cast', 'float')])),
    ('cast-half-chain', dict(steps=[('cast', 'float16'), ('cast', 'float')])),
    ('cast-double-chain', dict(steps=[('cast', 'double'), ('cast', 'float')])),
    ('reshape-chain-back', dict(steps=[('reshape', [6, 4]), ('reshape', [2, 3, 4])])),
    ('reshape-chain-other', dict(steps=[('reshape', [6, 4]), ('reshape', [3, 2, 4])])),
    ('transpose-chain-back', dict(steps=[('transpose', [1, 0, 2]), ('transpose', [1, 0, 2])])),
    ('transpose-chain-other', dict(steps=[('transpose', [1, 2, 0]), ('transpose', [1, 2, 0])])),
    ('cast-bool-chain', dict(steps=[('cast', 'bool'), ('cast', 'float')])),
    ('cast-int64-int32-chain', dict(steps=[('cast', 'int64'), ('cast', 'int32'), ('cast', 'float')])),
    ('unsqueeze-squeeze', dict(steps=[('unsqueeze', [0]), ('squeeze', [0])])),
    ('unsqueeze-squeeze-other', dict(steps=[('unsqueeze', [0]), ('squeeze', [2])], x=[2, 1, 4])),
    ('unsqueeze-squeeze-two', dict(steps=[('unsqueeze', [0, 2]), ('squeeze', [2, 0])])),
    ('squeeze-unsqueeze', dict(steps=[('squeeze', [1]), ('unsqueeze', [1])], x=[2, 1, 4])),
    ('squeeze-unsqueeze-other', dict(steps=[('squeeze', [1]), ('unsqueeze', [0])], x=[2, 1, 4])),
    ('unknown-rank-expand', dict(steps=[('expand', [1])], x=None, feed={'x': []})),
    ('unknown-rank-expand-ones', dict(steps=[('expand', [1, 1])], x=None, feed={'x': [3]})),
    ('unknown-rank-reshape', dict(steps=[('reshape', [0, 0, -1])], x=None, feed={'x': [2, 3, 4]})),
    ('unknown-rank-tile', dict(steps=[('tile', [1, 1])], x=None, feed={'x': [2, 3]})),
    ('unknown-rank-slice', dict(steps=[('slice', [0], [BIG], [0])], x=None, feed={'x': [2, 3]})),
    ('symbolic-expand', dict(steps=[('expand', [1, 3, 4])], x=['N', 3, 4], dims={'N': 2})),
    ('symbolic-expand-grows', dict(steps=[('expand', [2, 1, 1])], x=['N', 3, 4], dims={'N': 1})),
    ('symbolic-reshape', dict(steps=[('reshape', [2, 3, 4])], x=['N', 3, 4], dims={'N': 2})),
    ('symbolic-slice', dict(steps=[('slice', [0], [2], [0])], x=['N', 3, 4], dims={'N': 3})),
]


def transpose_cancel(name, p):
    b = Builder(name, 17, p['dt'])
    x = b.input('x', [2, 3, 8])
    t = b.op('Transpose', x, perm=p['perm'])
    h = t
    for step in p['steps']:
        kind = step[0]
        if kind == 'matmul':
            h = b.op('MatMul', h, b.rand(tuple(step[1]), stem='w'))
        elif kind == 'add':
            h = b.op('Add', b.rand(tuple(step[1]), stem='bias'), h)
        elif kind == 'mul':
            h = b.op('Mul', h, b.const(0.5, tuple(step[1])))
        elif kind == 'softmax':
            h = b.op('Softmax', h, axis=step[1])
        elif kind == 'relu':
            h = b.op('Relu', h)
        elif kind == 'slice':
            h = b.op('Slice', h, b.ints([0]), b.ints([step[2]]), b.ints([step[1]]))
        elif kind == 'reducesum':
            h = b.op('ReduceSum', h, b.ints([step[1]]), keepdims=1)
        elif kind == 'ln':
            h = b.op('LayerNormalization', h, b.rand(tuple(step[2]), stem='scale'), axis=step[1])
        elif kind == 'output':
            b.output(h, 'mid')
            h = 'mid'
    if p.get('extra'):
        b.extra(t)
    y = b.op('Transpose', h, perm=p['inv'])
    b.output(y, 'y')
    return b


TC_BASE = dict(dt='float', perm=[1, 0, 2], inv=[1, 0, 2], steps=[('matmul', [8, 8]), ('add', [8]), ('relu',)])

TC_VARIANTS = [
    ('not-inverse', dict(perm=[1, 0, 2], inv=[0, 1, 2])),
    ('perm-moves-last', dict(perm=[2, 1, 0], inv=[2, 1, 0], steps=[('relu',), ('mul', [])])),
    ('rotation', dict(perm=[1, 2, 0], inv=[2, 0, 1], steps=[('relu',), ('mul', [])])),
    ('bias-rank2', dict(steps=[('matmul', [8, 8]), ('add', [2, 8])])),
    ('bias-rank3', dict(steps=[('matmul', [8, 8]), ('add', [1, 1, 8])])),
    ('bias-scalar', dict(steps=[('add', [])])),
    ('mul-column', dict(steps=[('mul', [2, 1])])),
    ('softmax-axis0', dict(steps=[('softmax', 0)])),
    ('softmax-last', dict(steps=[('softmax', -1)])),
    ('softmax-axis1', dict(steps=[('softmax', 1)])),
    ('matmul-3d', dict(steps=[('matmul', [3, 8, 8])])),
    ('slice-last', dict(steps=[('slice', -1, 4)])),
    ('slice-axis0', dict(steps=[('slice', 0, 1)])),
    ('reducesum-last', dict(steps=[('reducesum', -1)])),
    ('layernorm-last', dict(steps=[('ln', -1, [8])])),
    ('layernorm-axis1', dict(steps=[('ln', 1, [2, 8])])),
    ('extra-transposed', dict(extra=True)),
    ('middle-output', dict(steps=[('relu',), ('output',)])),
    ('double', dict(dt='double')),
    ('float16', dict(dt='float16')),
    ('nothing-between', dict(steps=[])),
]


def reshape_gemm(name, p):
    b = Builder(name, 17, p['dt'])
    x = b.input('x', p['x'])
    r = b.op('Reshape', x, b.ints(p['flat']))
    k = p['k']
    wshape = (4, k) if p.get('transB') else (k, 4)
    w = b.input('w', list(wshape)) if p.get('w_input') else b.rand(wshape, stem='w')
    ins = [r, w] + ([b.rand(tuple(p['c']), stem='c')] if p.get('c') is not None else [])
    attrs = {a: p[a] for a in ('transB', 'alpha', 'beta') if a in p}
    g = b.op('Gemm', *ins, **attrs)
    y = b.op('Reshape', g, b.ints(p['restore']))
    b.output(y, 'y')
    if p.get('extra') == 'gemm':
        b.extra(g)
    elif p.get('extra') == 'flat':
        b.extra(r)
    return b


RGM_BASE = dict(dt='float', x=[2, 3, 8], flat=[-1, 8], k=8, c=[4], restore=[2, 3, 4])

RGM_VARIANTS = [
    ('restore-swapped', dict(restore=[3, 2, 4])),
    ('restore-flat', dict(restore=[6, 4])),
    ('restore-rank4', dict(restore=[1, 2, 3, 4])),
    ('restore-split-last', dict(restore=[2, 3, 2, 2])),
    ('restore-minus-one', dict(restore=[2, 3, -1])),
    ('restore-zero-copy', dict(restore=[3, 0, 2])),
    ('flat-mixes', dict(x=[2, 4, 6], flat=[-1, 8])),
    ('flat-literal', dict(flat=[6, 8])),
    ('transB', dict(transB=1)),
    ('weights-input', dict(w_input=True)),
    ('weights-input-transB', dict(w_input=True, transB=1)),
    ('alpha', dict(alpha=2.0)),
    ('beta', dict(beta=0.5)),
    ('bias-row', dict(c=[1, 4])),
    ('bias-rows', dict(c=[6, 4])),
    ('bias-column', dict(c=[6, 1])),
    ('bias-scalar', dict(c=[])),
    ('no-bias', dict(c=None)),
    ('extra-gemm', dict(extra='gemm')),
    ('extra-flat', dict(extra='flat')),
    ('double', dict(dt='double')),
    ('float16', dict(dt='float16')),
    ('x-rank4', dict(x=[2, 1, 3, 8], restore=[2, 1, 3, 4])),
]


def shape_dims(name, p):
    """A dim of Shape(t), t a Transpose/Reshape/Slice/Split of x, read by a
    Gather (simplify's shape-dim-source reads it from x): the int64 dims are
    outputs, compared exactly; x's dims are symbolic and distinct (B=2, T=3,
    E=4), so reading the wrong one shows."""
    b = Builder(name, 17, 'float')
    x = b.input('x', p['x'])
    kind, arg = p['t'][0], p['t'][1:]
    if kind == 'transpose':
        t = b.op('Transpose', x, perm=arg[0])
    elif kind == 'reshape':
        t = b.op('Reshape', x, b.ints(arg[0]))
    elif kind == 'slice':
        t = b.op('Slice', x, *[b.ints(v) for v in arg])
    else:
        t = b.op('Split', x, b.ints(arg[1]), axis=arg[0], n_out=len(arg[1]))[0]
    attrs = {k: p[k] for k in ('start', 'end') if k in p}
    sh = b.op('Shape', t, **attrs)
    idx = b.const(p['idx'], (), 'int64') if p.get('scalar_idx') else b.ints(p['idx'])
    g = b.op('Gather', sh, idx, axis=0)
    b.output(g, 'y', 'int64')
    if p.get('use_t'):
        b.output(b.op('Relu', t), 'r')
    return b


SDS_BASE = dict(x=['B', 'T', 'E'], t=('transpose', [1, 0, 2]), idx=[0], dims={'B': 2, 'T': 3, 'E': 4})

SDS_VARIANTS = [
    ('transpose-idx1', dict(idx=[1])),
    ('transpose-idx-last', dict(idx=[-1])),
    ('transpose-two-idx', dict(idx=[1, 0])),
    ('transpose-rotation', dict(t=('transpose', [2, 0, 1]), idx=[0])),
    ('transpose-rotation-neg', dict(t=('transpose', [2, 0, 1]), idx=[-2])),
    ('scalar-idx', dict(scalar_idx=True, idx=1)),
    ('shape-start', dict(start=1, idx=[0])),
    ('shape-start-end', dict(start=1, end=2, idx=[0])),
    ('shape-end-neg', dict(end=-1, idx=[1])),
    ('shape-start-neg', dict(start=-2, idx=[1])),
    ('t-used-too', dict(use_t=True)),
    ('reshape-copied', dict(t=('reshape', [0, 0, 2, -1]), idx=[1])),
    ('reshape-literal', dict(t=('reshape', [0, 0, 2, -1]), idx=[2])),
    ('reshape-computed', dict(t=('reshape', [0, 0, 2, -1]), idx=[3])),
    ('reshape-merged', dict(t=('reshape', [0, -1]), idx=[1])),
    ('reshape-swapped', dict(t=('reshape', [0, -1, 0]), idx=[1])),
    ('slice-whole', dict(t=('slice', [0], [BIG], [1]), idx=[1])),
    ('slice-cut', dict(t=('slice', [0], [2], [1]), idx=[1])),
    ('slice-start-1', dict(t=('slice', [1], [BIG], [1]), idx=[1])),
    ('slice-step-2', dict(t=('slice', [0], [BIG], [1], [2]), idx=[1])),
    ('slice-other-axis', dict(t=('slice', [0], [2], [2]), idx=[1])),
    ('slice-cut-axis-read', dict(t=('slice', [0], [2], [2]), idx=[2])),
    ('split-kept-axis', dict(t=('split', 2, [2, 2]), idx=[1])),
    ('split-axis', dict(t=('split', 2, [1, 3]), idx=[2])),
    ('split-batch-read', dict(t=('split', 1, [1, 2]), idx=[0])),
    ('split-split-axis', dict(t=('split', 1, [1, 2]), idx=[1])),
]


# name: (builder, base knobs, variants, the -stats patterns that mean "fused",
#        comparison tolerance per element type, input ranges)
# ---------------------------------------------------------------- Pad into Conv / AveragePool / MaxPool

def pad_into(name, p):
    """A Pad of x [1, 2, 6(, 6)] feeding a Conv, AveragePool or MaxPool
    (Note [Pad into pooling and Conv] in lib/Passes/Fusions.cpp)."""
    b = Builder(name, p.get('opset', 17), p['dt'])
    k = p.get('spatial', 2)
    x = b.input('x', [1, 2] + [6] * k)
    pads = p.get('pads', [0, 0] + [1] * k + [0, 0] + [1] * k)
    if b.opset < 11:
        attrs = dict(pads=pads, mode=p.get('mode', 'constant'))
        if p.get('value') is not None:
            attrs['value'] = p['value']
        h = b.op('Pad', x, **attrs)
    else:
        ins = [x, b.ints(pads)]
        if p.get('value_input'):
            ins.append(b.input('v', []))
        elif p.get('value') is not None:
            ins.append(b.const(p['value'], ()))
        h = b.op('Pad', *ins, mode=p.get('mode', 'constant'))
    op = p['op']
    attrs = dict(p.get('attrs', {}))
    if op == 'Conv':
        y = b.op('Conv', h, b.rand(tuple([3, 2] + [3] * k), stem='W'), **attrs)
    else:
        attrs.setdefault('kernel_shape', [3] * k)
        y = b.op(op, h, n_out=2 if p.get('indices') else 1, **attrs)
    if p.get('indices'):
        b.output(y[0], 'y')
        b.output(y[1], 'i', 'int64')
    else:
        b.output(y, 'y')
    if p.get('extra'):
        b.extra(h)
    return b


PAD_BASE = dict(dt='float', op='Conv')

PAD_VARIANTS = [
    ('conv-value-zero', dict(value=0.0)),
    ('conv-minus-zero', dict(value=-0.0)),
    ('conv-value-one', dict(value=1.0)),
    ('conv-own-pads', dict(attrs=dict(pads=[1, 0, 0, 2]))),
    ('conv-1d', dict(spatial=1)),
    ('conv-3d', dict(spatial=3)),
    ('conv-reflect', dict(mode='reflect')),
    ('conv-edge', dict(mode='edge')),
    ('conv-batch-pad', dict(pads=[1, 0, 1, 1, 0, 0, 1, 1])),
    ('conv-negative', dict(pads=[0, 0, -1, 1, 0, 0, 1, -1])),
    ('conv-asymmetric', dict(pads=[0, 0, 0, 2, 0, 0, 1, 0])),
    ('conv-auto-pad', dict(attrs=dict(auto_pad='SAME_UPPER'))),
    ('conv-dilated', dict(attrs=dict(dilations=[2, 2]))),
    ('conv-strided', dict(attrs=dict(strides=[2, 2]))),
    ('conv-extra', dict(extra=True)),
    ('conv-value-input', dict(value_input=True)),
    ('conv-opset10', dict(opset=10)),
    ('conv-opset10-value-one', dict(opset=10, value=1.0)),
    ('avg-include', dict(op='AveragePool', attrs=dict(count_include_pad=1))),
    ('avg-exclude', dict(op='AveragePool')),
    ('avg-include-own-pads', dict(op='AveragePool', attrs=dict(count_include_pad=1, pads=[1, 0, 0, 1]))),
    ('avg-include-ceil', dict(op='AveragePool', attrs=dict(count_include_pad=1, ceil_mode=1, strides=[2, 2]))),
    ('avg-kernel-reached', dict(op='AveragePool', pads=[0, 0, 3, 1, 0, 0, 1, 1], attrs=dict(count_include_pad=1))),
    ('avg-opset10', dict(op='AveragePool', opset=10, attrs=dict(count_include_pad=1))),
    ('max-ninf', dict(op='MaxPool', value=NEG_INF)),
    ('max-zero', dict(op='MaxPool', value=0.0)),
    ('max-default', dict(op='MaxPool')),
    ('max-1d', dict(op='MaxPool', value=NEG_INF, spatial=1)),
    ('max-indices', dict(op='MaxPool', value=NEG_INF, indices=True)),
    ('max-dilated', dict(op='MaxPool', value=NEG_INF, attrs=dict(dilations=[2, 2]))),
    ('max-ceil', dict(op='MaxPool', value=NEG_INF, attrs=dict(ceil_mode=1, strides=[2, 2]))),
    ('max-kernel-reached', dict(op='MaxPool', value=NEG_INF, pads=[0, 0, 2, 2, 0, 0, 2, 2],
                                attrs=dict(kernel_shape=[2, 2]))),
    ('max-strided', dict(op='MaxPool', value=NEG_INF, attrs=dict(strides=[2, 2], pads=[0, 1, 1, 0]))),
    ('max-opset10', dict(op='MaxPool', opset=10, value=NEG_INF)),
]


# ---------------------------------------------------------------- chains of simplify (SimplifyChains.cpp)

def chains(name, p):
    """x -> Relu -> steps: Squeeze/Unsqueeze (axes as operand from 13,
    attribute before), Slice, Flatten, an elementwise op, ReduceSum with
    keepdims 0, two Concats inside a Concat, Where(Not(c), h, -h)."""
    b = Builder(name, p.get('opset', 17), p['dt'])
    x = b.input('x', p.get('x', [2, 1, 3, 1]))
    h = b.op('Relu', x)
    for step in p['steps']:
        kind, arg = step[0], step[1:]
        if kind in ('Squeeze', 'Unsqueeze'):
            h = b.op(kind, h, b.ints(arg[0])) if b.opset >= 13 else b.op(kind, h, axes=arg[0])
        elif kind == 'Slice':
            h = b.op('Slice', h, b.ints(arg[0]), b.ints(arg[1]), b.ints(arg[2]), *([b.ints(arg[3])] if arg[3] else []))
        elif kind == 'Flatten':
            h = b.op('Flatten', h, axis=arg[0])
        elif kind == 'ReduceSum':
            h = b.op('ReduceSum', h, b.ints(arg[0]), keepdims=0) if b.opset >= 13 else \
                b.op('ReduceSum', h, axes=arg[0], keepdims=0)
        elif kind == 'Concat':
            h = b.op('Concat', b.op('Concat', h, h, axis=arg[0]), b.op('Concat', h, h, axis=arg[0]), axis=arg[1])
        elif kind == 'WhereNot':
            c = b.op('Not', b.op('Greater', h, b.const(0.5, ())))
            h = b.op('Where', c, h, b.op('Neg', h))
        else:
            h = b.op(kind, h)
        if p.get('extra') == len(b.nodes):
            b.extra(h)
    b.output(h, 'y')
    return b


CH_BASE = dict(dt='float', steps=[('Squeeze', [1]), ('Squeeze', [2])])

CH_VARIANTS = [
    ('squeeze-negative', dict(steps=[('Squeeze', [-3]), ('Squeeze', [-1])])),
    ('squeeze-opset11', dict(opset=11, steps=[('Squeeze', [-1]), ('Squeeze', [1])])),
    ('squeeze-extra', dict(extra=2)),
    ('squeeze-unknown-rank', dict(x=None, feed={'x': [2, 1, 3, 1]}, steps=[('Squeeze', [-1]), ('Squeeze', [1])])),
    ('unsqueeze-two', dict(steps=[('Unsqueeze', [0]), ('Unsqueeze', [-1])])),
    ('unsqueeze-same-place', dict(steps=[('Unsqueeze', [1]), ('Unsqueeze', [1])])),
    ('unsqueeze-opset11', dict(opset=11, steps=[('Unsqueeze', [0, 5]), ('Unsqueeze', [-2])])),
    ('unsqueeze-squeeze', dict(steps=[('Unsqueeze', [2]), ('Squeeze', [-3])])),
    ('unsqueeze-squeeze-other', dict(steps=[('Unsqueeze', [0]), ('Squeeze', [2])])),
    ('squeeze-unsqueeze', dict(steps=[('Squeeze', [1]), ('Unsqueeze', [-3])])),
    ('squeeze-unsqueeze-other', dict(steps=[('Squeeze', [1]), ('Unsqueeze', [0])])),
    ('slice-disjoint', dict(x=[4, 5, 6], steps=[('Slice', [0], [2], [0], None), ('Slice', [1], [9], [2], [2])])),
    ('slice-negative-axes', dict(x=[4, 5, 6], steps=[('Slice', [1], [3], [-3], None), ('Slice', [-2], [5], [-1], None)])),
    ('slice-same-axis', dict(x=[4, 5, 6], steps=[('Slice', [0], [3], [1], None), ('Slice', [1], [2], [1], None)])),
    ('slice-clamped', dict(x=[4, 5, 6], steps=[('Slice', [0], [BIG], [0], None), ('Slice', [-9], [1], [1], None)])),
    ('slice-same-axis-negative', dict(x=[4, 5, 6], steps=[('Slice', [-4], [BIG], [2], None), ('Slice', [-3], [-1], [-1], None)])),
    ('slice-same-axis-clamped', dict(x=[4, 5, 6], steps=[('Slice', [-9], [9], [1], None), ('Slice', [3], [1], [1], None)])),
    ('slice-same-axis-step2', dict(x=[4, 5, 6], steps=[('Slice', [0], [5], [1], [2]), ('Slice', [1], [3], [1], None)])),
    ('slice-same-axis-symbolic', dict(x=[4, 'N', 6], dims={'N': 5}, steps=[('Slice', [0], [3], [1], None), ('Slice', [1], [2], [1], None)])),
    ('flatten-axis1', dict(x=[2, 3], steps=[('Flatten', 1)])),
    ('flatten-axis0-one', dict(x=[1, 3], steps=[('Flatten', 0)])),
    ('flatten-axis0', dict(x=[2, 3], steps=[('Flatten', 0)])),
    ('flatten-rank3', dict(x=[2, 3, 4], steps=[('Flatten', 1)])),
    ('relu-relu', dict(steps=[('Relu',)])),
    ('floor-floor', dict(steps=[('Floor',), ('Floor',)])),
    ('ceil-ceil', dict(steps=[('Ceil',), ('Ceil',)])),
    ('round-round', dict(steps=[('Round',), ('Round',)])),
    ('sign-sign', dict(steps=[('Sign',), ('Sign',)])),
    ('abs-abs', dict(steps=[('Neg',), ('Abs',), ('Abs',)])),
    ('neg-neg', dict(steps=[('Neg',), ('Neg',)])),
    ('reduce-unsqueeze', dict(steps=[('ReduceSum', [1]), ('Unsqueeze', [1])])),
    ('reduce-unsqueeze-negative', dict(steps=[('ReduceSum', [1, 3]), ('Unsqueeze', [-1, -3])])),
    ('reduce-unsqueeze-other', dict(steps=[('ReduceSum', [1]), ('Unsqueeze', [0])])),
    ('reduce-unsqueeze-opset11', dict(opset=11, steps=[('ReduceSum', [2]), ('Unsqueeze', [2])])),
    ('concat-nested', dict(steps=[('Concat', 2, 2)])),
    ('concat-nested-negative', dict(steps=[('Concat', -1, 3)])),
    ('concat-other-axis', dict(steps=[('Concat', 0, 2)])),
    ('where-not', dict(steps=[('WhereNot',)])),
]


FAMILIES = {
    'layernorm': (layernorm, LN_BASE, LN_VARIANTS, {'fuse-layernorm'}),
    'rmsnorm': (rmsnorm, RMS_BASE, RMS_VARIANTS, {'fuse-rmsnorm'}),
    'gelu-erf': (gelu_erf, GELU_BASE, GELU_VARIANTS, {'fuse-gelu'}),
    'gelu-tanh': (gelu_tanh, TANH_BASE, TANH_VARIANTS, {'fuse-gelu'}),
    'swish': (swish, SWISH_BASE, SWISH_VARIANTS, {'fuse-swish'}),
    'hardswish': (hardswish, HS_BASE, HS_VARIANTS, {'fuse-hardswish'}),
    'attention': (attention, ATT_BASE, ATT_VARIANTS, {'fuse-attention'}),
    'attention-heads': (attention_heads, HEADS_BASE, HEADS_VARIANTS, {'fuse-attention', 'fuse-attention-heads'}),
    'rotary': (rotary, ROT_BASE, ROT_VARIANTS, {'fuse-rotary-embedding'}),
    'rotary-computed': (rotary_computed, ROTC_BASE, ROTC_VARIANTS, {'fuse-rotary-embedding'}),
    'gqa': (gqa, GQA_BASE, GQA_VARIANTS, {'fuse-attention-gqa'}),
    'conv-bn': (conv_bn, BN_BASE, BN_VARIANTS, {'fuse-conv-bn'}),
    'conv-add-mul': (conv_add_mul, CAM_BASE, CAM_VARIANTS, {'fuse-conv-add', 'fuse-conv-mul', 'fuse-conv-add-bias'}),
    'matmul-add-gemm': (matmul_add, MMA_BASE, MMA_VARIANTS, {'fuse-matmul-add-gemm'}),
    'transpose-gemm': (transpose_gemm, TG_BASE, TG_VARIANTS, {'fuse-transpose-gemm'}),
    'simplify-units': (units, UNIT_BASE, UNIT_VARIANTS, {'mul-one', 'div-one', 'sub-zero', 'add-zero'}),
    'simplify-noops': (noops, NOOP_BASE, NOOP_VARIANTS, {
        'reshape-noop', 'expand-noop', 'tile-noop', 'pad-noop', 'cast-noop', 'transpose-noop', 'concat-one',
        'split-one', 'slice-noop', 'reshape-chain', 'transpose-chain', 'cast-chain', 'squeeze-unsqueeze',
        'unsqueeze-squeeze'}),
    'shape-dim-source': (shape_dims, SDS_BASE, SDS_VARIANTS, {'shape-dim-source'}),
    'transpose-cancel': (transpose_cancel, TC_BASE, TC_VARIANTS, {'transpose-cancel'}),
    'reshape-gemm-matmul': (reshape_gemm, RGM_BASE, RGM_VARIANTS, {'reshape-gemm-matmul'}),
    'pad-into': (pad_into, PAD_BASE, PAD_VARIANTS, {'fuse-pad-conv', 'fuse-pad-averagepool', 'fuse-pad-maxpool'}),
    'simplify-chains': (chains, CH_BASE, CH_VARIANTS, {
        'squeeze-chain', 'unsqueeze-chain', 'squeeze-unsqueeze', 'unsqueeze-squeeze', 'slice-chain', 'flatten-noop',
        'idempotent-relu', 'idempotent-floor', 'idempotent-ceil', 'idempotent-round', 'idempotent-sign',
        'idempotent-abs', 'reduce-unsqueeze', 'concat-nested', 'where-not'}),
}


def in_branch(model):
    """`model` with its nodes moved into both branches of an If on a new bool
    input `cond` (fed true); the constants stay outside, captured by the
    branches. Each branch has its own names (suffix _t, _e)."""
    g = model.graph
    outer = {i.name for i in g.input} | {t.name for t in g.initializer}

    def branch(sfx):
        nodes = []
        for n in g.node:
            m = helper.make_node(n.op_type, [i if i in outer or not i else i + sfx for i in n.input],
                                 [o + sfx for o in n.output])
            m.attribute.extend(n.attribute)
            nodes.append(m)
        outs = [helper.make_tensor_value_info(o.name + sfx, o.type.tensor_type.elem_type, None) for o in g.output]
        return helper.make_graph(nodes, 'then' if sfx == '_t' else 'else', [], outs)
    node = helper.make_node('If', ['cond'], [o.name for o in g.output],
                            then_branch=branch('_t'), else_branch=branch('_e'))
    cond = helper.make_tensor_value_info('cond', TensorProto.BOOL, [])
    graph = helper.make_graph([node], g.name, list(g.input) + [cond], list(g.output), list(g.initializer))
    return helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version,
                             producer_name='nearmiss')


# How many of each family's first variants (the rank ones, mostly) are also
# generated inside an If (`in-branch-NAME`), with the base (`in-branch`).
IN_BRANCH = 3


def generate():
    """Yields (family, variant name, knobs, onnx ModelProto); 'base' first in each family."""
    for fam, (build, base, variants, _) in FAMILIES.items():
        names = [n for n, _ in variants]
        assert len(set(names)) == len(names), f'{fam}: duplicate variant names'
        for vname, over in [('base', {})] + variants:
            knobs = dict(base, **over)
            yield fam, vname, knobs, build(f'{fam}-{vname}', knobs).model()
        for vname, over in [('', {})] + variants[:IN_BRANCH]:
            knobs = dict(base, **over)
            model = build(f'{fam}-{vname}', knobs).model()
            yield fam, 'in-branch' + ('-' + vname if vname else ''), knobs, in_branch(model)

# The opset nearmiss.py's converting pipelines target (23 unless named):
# Swish is new in 24.
TARGET_OPSET = {'swish': 24}

# Input value ranges (ort_compare.js's --range) where [-1, 1) floats and
# [0, 3] integers would not do: rotary positions index the 3-row caches.
INPUT_RANGES = {'rotary': {'pos': [0, 2]}}
