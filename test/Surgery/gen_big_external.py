#!/usr/bin/env python3
"""gen_big_external.py DIR: writes DIR/big.onnx, a model of 3 GiB of external
data in DIR/big.bin, a sparse file (no disk is used for its zeros): twelve
256 MiB float initializers w0..w11 on a chain x -> h0 .. h11 = y, and a small
branch z -> r = Relu(z) -> q = Mul(r, ws) -> o = Neg(q) whose ws is 4 MiB of
external data at the end of the file. Extracting r -> q keeps ws only."""
import os
import sys

from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
BIG = 64 * 1024 * 1024        # floats per big tensor (256 MiB)
SMALL = 1024 * 1024           # floats of ws (4 MiB)


def external(name, n, offset):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.append(n)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "big.bin"), ("offset", offset), ("length", 4 * n)):
        e = t.external_data.add()
        e.key, e.value = k, str(v)
    return t


inits, nodes, prev = [], [], "x"
for i in range(12):
    inits.append(external("w%d" % i, BIG, i * 4 * BIG))
    h = "y" if i == 11 else "h%d" % i
    nodes.append(helper.make_node("Add", [prev, "w%d" % i], [h]))
    prev = h
inits.append(external("ws", SMALL, 12 * 4 * BIG))
nodes += [helper.make_node("Relu", ["z"], ["r"]),
          helper.make_node("Mul", ["r", "ws"], ["q"]),
          helper.make_node("Neg", ["q"], ["o"])]
graph = helper.make_graph(
    nodes, "big",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BIG]),
     helper.make_tensor_value_info("z", TensorProto.FLOAT, [SMALL])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [BIG]),
     helper.make_tensor_value_info("o", TensorProto.FLOAT, [SMALL])],
    inits)
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
with open(os.path.join(out, "big.onnx"), "wb") as f:
    f.write(m.SerializeToString())
with open(os.path.join(out, "big.bin"), "wb") as f:
    f.truncate(12 * 4 * BIG + 4 * SMALL)
