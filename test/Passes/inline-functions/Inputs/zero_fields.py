#!/usr/bin/python3
"""zero_fields.py make OUT: writes a model whose attributes hold 0, 0.0 and
"" with their field written (`axis: i = 0`) and the same values with the
field omitted, as proto3 writers do (type INT and no `i`).
zero_fields.py same A B: prints `same` when A and B are equal field for
field (protobuf equality: presence included), else `differ` and both.
"""
import sys

import onnx
from onnx import helper, TensorProto


def attr(name, kind, field=None, value=None):
    a = onnx.AttributeProto()
    a.name = name
    a.type = kind
    if field is not None:
        setattr(a, field, value)
    return a


def make(out):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    ys = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abcd"]
    a = helper.make_node("Flatten", ["x"], ["a"])
    a.attribute.append(attr("axis", onnx.AttributeProto.INT, "i", 0))
    b = helper.make_node("Flatten", ["x"], ["b"])
    b.attribute.append(attr("axis", onnx.AttributeProto.INT))
    c = helper.make_node("LeakyRelu", ["x"], ["c"])
    c.attribute.append(attr("alpha", onnx.AttributeProto.FLOAT, "f", 0.0))
    d = helper.make_node("LeakyRelu", ["x"], ["d"])
    d.attribute.append(attr("alpha", onnx.AttributeProto.FLOAT))
    s = helper.make_node("Custom", ["x"], ["e"], domain="test")
    s.attribute.append(attr("s0", onnx.AttributeProto.STRING, "s", b""))
    s.attribute.append(attr("s1", onnx.AttributeProto.STRING))
    g = helper.make_graph([a, b, c, d, s], "g", [x], ys)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("test", 1)])
    m.ir_version = 8
    onnx.save(m, out)


def same(p, q):
    a, b = onnx.load(p), onnx.load(q)
    if a == b:
        print("same")
    else:
        print("differ")
        print(a)
        print(b)


if __name__ == "__main__":
    {"make": make, "same": same}[sys.argv[1]](*sys.argv[2:])
