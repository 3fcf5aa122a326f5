"""onnxir: ONNX models as a mutable SSA graph IR, its passes and lossless I/O.

    import onnxir
    m = onnxir.load("model.onnx")
    for n in m.graph.nodes: ...
    onnxir.run_passes(m, "O2")
    onnxir.save(m, "out.onnx")

The object model (Model, Graph, Node, Value, Tensor) and the tools live in
the compiled core, onnxir._onnxir; this file adds the conversions from and to
onnx.ModelProto (when the `onnx` package is installed).
"""
import os as _os
from collections import namedtuple as _namedtuple

from ._onnxir import (  # noqa: F401
    Error, VerificationWarning, Model, Graph, Node, Value, Tensor, NodeList, UseList,
    loads, save, dumps, verify, diagnostics, schema_warnings, run_passes,
    infer_shapes, list_passes, list_options, EvalError, EvalValueError, NotSupportedError,
    add_outputs, prune_outputs, rename_io, retype_io,
)
from . import _onnxir
from . import _views

_views._install()

__all__ = [
    "Error", "VerificationWarning", "Model", "Graph", "Node", "Value", "Tensor", "NodeList",
    "UseList", "load", "loads", "save", "dumps", "verify", "diagnostics", "schema_warnings",
    "run_passes", "infer_shapes", "list_passes", "list_options", "from_onnx", "to_onnx",
    "run", "compare", "OutputDiff", "EvalError", "EvalValueError", "NotSupportedError",
    "inspect", "view", "diff",
    "extract", "add_outputs", "prune_outputs", "rename_io", "retype_io", "compose", "merge_decoders",
    "register_ops",
]


def load(source, format="auto", allow_external_links=False, base_dir=None, verify="default"):
    """Loads a model from a file (a path: str, or an os.PathLike returning
    str or bytes), from the model itself as bytes (bytes, bytearray or
    memoryview; external data is then read relative to `base_dir`, a path or
    None), or from an onnx.ModelProto (through its serialized bytes). Bytes
    are the model, never its file name: pass a name held as bytes as
    os.fsdecode(name) or a pathlib.Path (save takes bytes paths as they are).

    The model is checked as onnx-opt checks it on load: `verify` 'default'
    (structure and severe schema problems raise onnxir.Error, type
    constraints are onnxir.VerificationWarning), 'structure', 'schema', or
    'none' (nothing: a model to repair)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        try:
            return _onnxir.loads(data, format=format, base_dir=base_dir,
                                 allow_external_links=allow_external_links, verify=verify)
        except Error as e:
            if _names_a_file(data):
                raise Error("%s\n  (bytes are read as the model itself; to load the file "
                            "%r, pass it as os.fsdecode(path) or a pathlib.Path)"
                            % (e, _os.fsdecode(data))) from None
            raise
    if hasattr(source, "SerializeToString"):
        return from_onnx(source, base_dir=base_dir, verify=verify)
    if isinstance(source, (str, _os.PathLike)):
        return _onnxir.load(source, format=format,
                            allow_external_links=allow_external_links, verify=verify)
    raise TypeError("onnxir.load: expected a path, bytes or an onnx.ModelProto, not "
                    + type(source).__name__)


def _names_a_file(data):
    """Whether bytes that failed to parse as a model are the name of a file
    (the likely mistake: a path as bytes); only for the error message."""
    if not data or len(data) > 4096 or b"\0" in data:
        return False
    try:
        return _os.path.isfile(data)
    except (OSError, ValueError):
        return False


def from_onnx(proto, base_dir=None, verify="default"):
    """An onnxir.Model from an onnx.ModelProto (serialized, then lifted);
    external data is read relative to `base_dir` (a path, or None); checked
    as load checks (`verify`)."""
    return _onnxir.loads(proto.SerializeToString(), format="binary", base_dir=base_dir,
                         name="<ModelProto>", verify=verify)


def to_onnx(model):
    """The model as an onnx.ModelProto (needs the `onnx` package)."""
    import onnx
    proto = onnx.ModelProto()
    proto.ParseFromString(_onnxir.dumps(model))
    return proto


def _model_arg(m, what):
    if isinstance(m, Model):
        return m
    if isinstance(m, (str, _os.PathLike)) or hasattr(m, "SerializeToString"):
        return load(m)
    raise TypeError("%s must be an onnxir.Model, a path or an onnx.ModelProto, not %s"
                    % (what, type(m).__name__))


def run(model, inputs=None, *, random=False, seed=0, bind_dims=None, max_bytes=None):
    """Runs `model` (an onnxir.Model, a path, or an onnx.ModelProto) on the
    reference evaluator, as onnxir-run does, and returns its outputs
    {name: numpy.ndarray} in the graph's output order.

    `inputs` {input name: array} (anything np.asarray takes, or an
    onnxir.Tensor); an input with a default (an initializer) may be left out.
    A missing input is an error unless `random=True`: then it gets random
    values as onnxir-run --random-inputs makes them (the same generator,
    seeded by `seed`: floats in [-1, 1), integers in [0, 9]; a symbolic dim
    from `bind_dims` {symbol: size}, else 1, with a UserWarning). `seed` also
    seeds the random ops that set none. `max_bytes`: no tensor of the run may
    be larger (None: no limit).

    An input declared a sequence is a list of arrays, one declared optional
    None (empty) or its element; a sequence output is a list of arrays, an
    empty optional output None.

    Outputs are copies (writable) in NumPy's dtype; bfloat16, float8 and
    float4 outputs are widened exactly to float32, int4/int2 to int8 and
    uint4/uint2 to uint8 (NumPy has none of those), strings are object
    arrays of bytes.

    Errors (all onnxir.EvalError, an onnxir.Error): onnxir.NotSupportedError
    (a NotImplementedError) for an op or type the evaluator cannot run, naming
    the node; onnxir.EvalValueError (a ValueError) for an input of the wrong
    element type or shape (naming the input), a missing or unknown input, or
    a result over max_bytes. The GIL is released while the model runs."""
    return _onnxir._run(_model_arg(model, "run: model"), inputs, random=random, seed=seed,
                        bind_dims=bind_dims, max_bytes=max_bytes)


# A collections.namedtuple given typing.NamedTuple's annotations: importing
# typing would add about 20 ms to `import onnxir`, 2% of load + -O2 + save of
# a 10^5-node model (bench/README.md, "Python within 1.05x of onnx-opt").
OutputDiff = _namedtuple("OutputDiff", ["name", "max_abs", "max_rel", "ok", "note"],
                         defaults=[""])
OutputDiff.__doc__ = """One output of onnxir.compare: the largest absolute and relative
    difference over the input sets, whether every element was within
    tolerance, and why not ("over tolerance", "missing in b", "float[2] vs
    float[3]", ...; "" when ok, "nondeterministic, not compared" for an
    output of a random op)."""
OutputDiff.__annotations__ = {"name": str, "max_abs": float, "max_rel": float, "ok": bool,
                              "note": str}


def compare(a, b, inputs=None, n=3, rtol=1e-4, atol=1e-7, seed=0, *, bind_dims=None,
            max_bytes=None):
    """Runs models `a` and `b` (onnxir.Model, path or onnx.ModelProto) on the
    same inputs and returns one OutputDiff per output: `inputs` as onnxir.run
    takes them, the missing ones random (n sets from one generator seeded by
    `seed`; with every input given, one run). The rule is onnxir-run
    --compare's (Note [Comparing outputs], Eval/Compare.h): each element of
    `a` within atol + rtol * |b| of `b`'s, NaN only with NaN; an output only
    one model has, or of another type or shape, is not ok. Errors as
    onnxir.run's, prefixed with "a: " or "b: "."""
    rows = _onnxir._compare(_model_arg(a, "compare: a"), _model_arg(b, "compare: b"), inputs,
                            n=n, rtol=rtol, atol=atol, seed=seed, bind_dims=bind_dims,
                            max_bytes=max_bytes)
    return [OutputDiff(*r) for r in rows]


def extract(model, inputs, outputs, *, inplace=False):
    """The part of `model` (an onnxir.Model, a path or an onnx.ModelProto)
    that computes the values `outputs` from the values `inputs` (lists of
    names of the main graph), as onnx-opt --extract-inputs/--extract-outputs
    (Note [Extraction]): the inputs are the only graph inputs (none given: the
    graph inputs the outputs need), typed as inferred; an output that needs
    another graph input is an onnxir.Error naming it; the functions and
    subgraphs the kept nodes use come along. Returns a new Model (a copy is
    cut) unless `inplace`, which cuts `model` itself (an onnxir.Model; no copy
    of its weights: for models larger than memory)."""
    m = _model_arg(model, "extract: model")
    if not inplace and m is model:
        m = m.copy()
    _onnxir._extract(m, list(inputs), list(outputs))
    return m


def inspect(model, *, pipeline=None):
    """A summary of `model` (an onnxir.Model, a path or an onnx.ModelProto)
    as a dict, the JSON of onnx-opt --emit=json (keys:
    docs/inspect.schema.json): inputs and outputs with their types (symbolic
    dims as strings), the op histogram per domain, node and initializer
    counts, bytes per element type, opsets, functions, external data files,
    and the fusion census. `pipeline` ('O2', 'fuse'): run first on the model
    itself, as onnx-opt -O2 --emit=json; the census counts the fused ops its
    fusions made (empty without one)."""
    import json
    m = _model_arg(model, "inspect: model")
    return json.loads(_onnxir._inspect_json(m, pipeline or ""))


def view(model, format="dot", *, collapse=0):
    """The graph of `model` as text, as onnx-opt --emit=FORMAT: 'dot'
    (Graphviz), 'mermaid' (a flowchart) or 'svg' (the DOT drawn by Graphviz's
    `dot`, which must be on PATH). Subgraphs are clusters, edges carry the
    type of their value; `collapse`=N draws the nodes whose names share their
    first N parts (split on '/' and '.') as one box."""
    m = _model_arg(model, "view: model")
    return _onnxir._view(m, format, collapse)


def diff(a, b, *, text=False):
    """Compares two models (onnxir.Model, paths or onnx.ModelProto) by
    structure, not names, as onnxir-diff: a dict (the JSON of onnxir-diff
    --json, keys: docs/diff.schema.json) whose "equal" is True when they are
    equal up to names and node order, and whose "differences" list the nodes
    added, removed or changed (attributes with old and new values, inputs),
    initializers (type, shape, max abs value difference), graph inputs and
    outputs, opsets and functions. `text=True`: onnxir-diff's text report."""
    import json
    ma, mb = _model_arg(a, "diff: a"), _model_arg(b, "diff: b")
    equal, report = _onnxir._diff(ma, mb, not text)
    return report if text else json.loads(report)


def compose(a, b, connect, prefix_a="", prefix_b="", *, drop_unconnected=False):
    """A new Model in which the outputs of model `a` feed inputs of model `b`
    (each an onnxir.Model, a path or an onnx.ModelProto; neither is changed),
    as onnxir-compose does (Note [Composing models]): `connect` lists
    (a_output, b_input) pairs or "a_output:b_input" strings, named as the
    models name them; `prefix_a`/`prefix_b` are put before every name of
    that model (a name both define is an onnxir.Error otherwise); the
    default-domain opsets meet at the higher version through the converter;
    equal weights are stored once. a's unconnected outputs stay outputs
    unless `drop_unconnected`. Types that do not fit are an onnxir.Error
    naming both ends."""
    pairs = []
    for c in connect:
        if isinstance(c, str):
            out, sep, inp = c.rpartition(":")
            if not sep or not out or not inp:
                raise Error("compose: a connection is (a_output, b_input) or "
                            "'a_output:b_input', not %r" % c)
            pairs.append((out, inp))
        else:
            out, inp = c
            pairs.append((out, inp))
    ma = _model_arg(a, "compose: a").copy()
    mb = _model_arg(b, "compose: b").copy()
    _onnxir._compose(ma, mb, pairs, prefix_a, prefix_b, drop_unconnected)
    return ma


def merge_decoders(decoder, decoder_with_past, *, condition="use_cache_branch"):
    """A new Model that runs `decoder_with_past` when its bool[1] input
    `condition` is true and `decoder` when it is false, as onnxir-compose
    --merge-decoders does (Note [Merging decoders]): the inputs are the
    with-past model's and the condition, the outputs the models' (the same
    names in both), weights both hold stored once. Each argument is an
    onnxir.Model, a path or an onnx.ModelProto; neither is changed."""
    ma = _model_arg(decoder, "merge_decoders: decoder").copy()
    mb = _model_arg(decoder_with_past, "merge_decoders: decoder_with_past").copy()
    return _onnxir._merge_decoders(ma, mb, condition)


def register_ops(source):
    """Registers the custom-domain operators of an op library (JSON,
    docs/op-library.md), as onnx-opt --op-library=FILE does: `source` is a
    path (str or os.PathLike), the JSON text itself (a str starting with
    '{'), or the library as a dict. Schemas, shape rules and function bodies
    then hold for every model: verify, infer_shapes, run and run_passes
    ('expand-functions') use them. Returns 'domain.Op-vN' of each op.

    Registration is process-wide and permanent (the op registry is one per
    process, Note [Op libraries are process-wide]): registering an op again
    replaces it, nothing can be unregistered, and it must not happen while
    another thread runs a pass. A bad library is an onnxir.Error naming the
    file, the op and the field, and registers nothing."""
    import json
    if isinstance(source, dict):
        return _onnxir._register_ops(json.dumps(source), "<register_ops dict>")
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return _onnxir._register_ops(source, "<register_ops text>")
    if not isinstance(source, (str, bytes, _os.PathLike)):
        raise TypeError("register_ops: source must be a path, JSON text or a dict, not %s"
                        % type(source).__name__)
    path = _os.fsdecode(_os.fspath(source))
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise Error("register_ops: cannot read op library %s: %s" % (path, e.strerror)) from None
    return _onnxir._register_ops(text, path)
