#!/usr/bin/env python3
"""legacy_models.py OUT_DIR: models below opset 7 (which onnxruntime does not
run), each with a test_data_set_0 whose outputs numpy computes from the legacy
operator definitions (ONNX Changelog), an oracle independent of onnx-opt's
version adapters. convert_opset.sh converts each model up to 7 and 21 and runs
it on these outputs. Layout: OUT_DIR/<name>/model.onnx, test_data_set_0/."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def f32(*shape):
    return rng.uniform(-2, 2, size=shape).astype(np.float32)


def save(out, name, opset, nodes, inputs, outputs, inits=()):
    """inputs/outputs: lists of (name, array); inits: (name, array) kept as
    initializers (not graph inputs: IR version 4)."""
    def vi(n, a):
        dt = helper.np_dtype_to_tensor_dtype(a.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype") \
            else {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32,
                  np.dtype(np.bool_): TensorProto.BOOL}[a.dtype]
        return helper.make_tensor_value_info(n, dt, a.shape)
    g = helper.make_graph(nodes, name,
                          [vi(n, a) for n, a in inputs],
                          [vi(n, a) for n, a in outputs],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 4
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as fh:
        fh.write(m.SerializeToString())
    for kind, vals in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(vals):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{i}.pb"), "wb") as fh:
                fh.write(numpy_helper.from_array(a, n).SerializeToString())


def broadcast(out):
    # Note [Legacy broadcast]: B is a suffix of A's shape, or placed by axis.
    x, s, c, y = f32(2, 3, 4), f32(4), f32(3), f32(2, 3, 4)
    f = rng.uniform(1, 3, size=(2, 3)).astype(np.float32)
    pa, pb = rng.integers(0, 2, (2, 3, 4)).astype(bool), rng.integers(0, 2, (3,)).astype(bool)
    a = x + s
    m = x * c.reshape(3, 1)
    d = x / f.reshape(2, 3, 1)
    e = x - y
    gt = x > c.reshape(3, 1)
    o = np.logical_xor(pa, pb.reshape(3, 1))
    w = np.abs(x) ** np.float32(2)
    ga, gb, gc = f32(2, 3), f32(3, 4), f32(4)
    gm = 0.5 * ga @ gb + gc
    nodes = [
        helper.make_node("Add", ["x", "s"], ["a"], broadcast=1),
        helper.make_node("Mul", ["x", "c"], ["m"], broadcast=1, axis=1),
        helper.make_node("Div", ["x", "f"], ["d"], broadcast=1, axis=0),
        helper.make_node("Sub", ["x", "y"], ["e"]),
        helper.make_node("Greater", ["x", "c"], ["gt"], broadcast=1, axis=1),
        helper.make_node("Xor", ["pa", "pb"], ["o"], broadcast=1, axis=1),
        helper.make_node("Abs", ["x"], ["ax"]),
        helper.make_node("Pow", ["ax", "two"], ["w"], broadcast=1),
        helper.make_node("Gemm", ["ga", "gb", "gc"], ["gm"], broadcast=1, alpha=0.5),
    ]
    save(out, "legacy_broadcast", 6, nodes,
         [("x", x), ("s", s), ("c", c), ("f", f), ("y", y), ("pa", pa), ("pb", pb),
          ("ga", ga), ("gb", gb), ("gc", gc)],
         [("a", a), ("m", m), ("d", d), ("e", e), ("gt", gt), ("o", o), ("w", w), ("gm", gm)],
         [("two", np.array([2], np.float32))])


def tensor(out):
    x = f32(2, 3)
    r = x.reshape(3, 2)
    c = x.astype(np.int32)
    k = np.concatenate([x, x], axis=1)  # Concat-1: axis defaults to 1
    p = np.pad(x, ((1, 0), (0, 2)), constant_values=0.5)  # paddings: begins, then ends
    s1, s2 = x[:, :1], x[:, 1:]
    t = np.tile(x, (1, 2))
    nodes = [
        helper.make_node("Reshape", ["x"], ["r"], shape=[3, -1], consumed_inputs=[0]),
        helper.make_node("Cast", ["x"], ["c"], to="INT32"),
        helper.make_node("Concat", ["x", "x"], ["k"]),
        helper.make_node("Pad", ["x"], ["p"], paddings=[1, 0, 0, 2], value=0.5),
        helper.make_node("Split", ["x", "sp"], ["s1", "s2"], axis=1),
        helper.make_node("Tile", ["x", "tl", "ax"], ["t"]),
    ]
    save(out, "legacy_tensor", 1, nodes, [("x", x)],
         [("r", r), ("c", c), ("k", k), ("p", p), ("s1", s1), ("s2", s2), ("t", t)],
         [("sp", np.array([1, 2], np.float32)), ("tl", np.array(2, np.float32)),
          ("ax", np.array(1, np.float32))])


def nn(out):
    x = f32(1, 3, 2, 2)
    sc, b, mu = f32(3), f32(3), f32(3)
    var = rng.uniform(0.5, 2, 3).astype(np.float32)
    ch = lambda v: v.reshape(1, 3, 1, 1)
    bn = ch(sc) * (x - ch(mu)) / np.sqrt(ch(var) + np.float32(1e-3)) + ch(b)
    mean = x.mean(axis=(2, 3), keepdims=True)
    inorm = ch(sc) * (x - mean) / np.sqrt(x.var(axis=(2, 3), keepdims=True) + np.float32(1e-5)) + ch(b)
    lr = np.where(x > 0, x, np.float32(0.1) * x)
    mx = np.maximum(np.maximum(x, lr), bn)
    # GlobalLpPool-1, p=3.0
    gl = (np.abs(x) ** 3).sum(axis=(2, 3), keepdims=True) ** (1 / 3)
    dr = x  # Dropout in test mode
    nodes = [
        helper.make_node("BatchNormalization", ["x", "sc", "b", "mu", "var"], ["bn"],
                         is_test=1, epsilon=1e-3, consumed_inputs=[0, 0, 0, 1, 1]),
        helper.make_node("InstanceNormalization", ["x", "sc", "b"], ["in"], consumed_inputs=[0]),
        helper.make_node("LeakyRelu", ["x"], ["lr"], alpha=0.1, consumed_inputs=[0]),
        helper.make_node("Max", ["x", "lr", "bn"], ["mx"], consumed_inputs=[0]),
        helper.make_node("GlobalLpPool", ["x"], ["gl"], p=3.0),
        helper.make_node("Dropout", ["x"], ["dr"], is_test=1, consumed_inputs=[0]),
    ]
    save(out, "legacy_nn", 1, nodes,
         [("x", x), ("sc", sc), ("b", b), ("mu", mu), ("var", var)],
         [("bn", bn), ("in", inorm), ("lr", lr), ("mx", mx), ("gl", gl), ("dr", dr)])


if __name__ == "__main__":
    broadcast(sys.argv[1])
    tensor(sys.argv[1])
    nn(sys.argv[1])
