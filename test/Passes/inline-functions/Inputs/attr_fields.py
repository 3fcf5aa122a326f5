#!/usr/bin/python3
"""Reads a model with python onnx and prints, for every node of every graph
(subgraphs and functions included), each scalar attribute with the value
field it holds: `Flatten axis: i = 0`, or `Flatten axis: no value field`
when the f / i / s field is absent (Note [Scalar attribute presence]).
Then runs onnx.checker.check_model and onnx's strict shape inference (which
reads an absent field as the operator's default: a Flatten whose axis = 0
lost its field infers [2, 12] where [1, 24] is declared), printing `checker:
ok` and `inference: ok` or the first line of their error.

usage: attr_fields.py MODEL
"""
import sys

import onnx

FIELDS = {onnx.AttributeProto.FLOAT: "f", onnx.AttributeProto.INT: "i",
          onnx.AttributeProto.STRING: "s"}


def walk(nodes, where):
    for n in nodes:
        for a in n.attribute:
            if a.ref_attr_name:
                print("%s%s %s: @%s" % (where, n.op_type, a.name, a.ref_attr_name))
            elif a.type in FIELDS:
                f = FIELDS[a.type]
                if a.HasField(f):
                    print("%s%s %s: %s = %r" % (where, n.op_type, a.name, f, getattr(a, f)))
                else:
                    print("%s%s %s: no value field" % (where, n.op_type, a.name))
            if a.HasField("g"):
                walk(a.g.node, where + n.op_type + "/" + a.name + ": ")
            for g in a.graphs:
                walk(g.node, where + n.op_type + "/" + a.name + ": ")


def main():
    m = onnx.load(sys.argv[1])
    walk(m.graph.node, "")
    for f in m.functions:
        walk(f.node, "function %s: " % f.name)
    try:
        onnx.checker.check_model(m)
        print("checker: ok")
    except onnx.checker.ValidationError as e:
        print("checker: " + str(e).splitlines()[0])
    try:
        onnx.shape_inference.infer_shapes(m, strict_mode=True)
        print("inference: ok")
    except Exception as e:  # onnx's InferenceError is not exported by name
        print("inference: " + str(e).splitlines()[0])


if __name__ == "__main__":
    main()
