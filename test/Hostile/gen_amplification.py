#!/usr/bin/python3
"""Writes one amplification/limit input for onnx-opt: gen_amplification.py CASE OUT [N].

Small inputs that would make a naive tool allocate or compute without bound
(issue 15): nested function calls and Loops, huge Split counts, deep types and
annotations, recursive functions. Uses Debian's python3-onnx.
"""
import os
import sys

import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from onnxtest import field, model, save, varint, vfield, vi  # noqa: E402,F401


def laughs(levels):
    """F_k calls F_{k-1} twice; F_0 is one Neg: 2^levels nodes when inlined."""
    fns = [helper.make_function("local", "F0", ["u"], ["v"],
                                [helper.make_node("Neg", ["u"], ["v"])],
                                [helper.make_opsetid("", 17)])]
    for k in range(1, levels + 1):
        body = [helper.make_node("F%d" % (k - 1), ["u"], ["w"], domain="local"),
                helper.make_node("F%d" % (k - 1), ["w"], ["v"], domain="local")]
        fns.append(helper.make_function("local", "F%d" % k, ["u"], ["v"], body,
                                        [helper.make_opsetid("", 17),
                                         helper.make_opsetid("local", 1)]))
    call = helper.make_node("F%d" % levels, ["x"], ["y"], domain="local")
    return model([call], [vi("x")], [vi("y")], functions=fns)


def nested_loops(levels):
    """Loop bodies nested `levels` deep around one Neg of the carried value."""
    def body(k):
        t = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
        ins = [helper.make_tensor_value_info("i%d" % k, TensorProto.INT64, []),
               helper.make_tensor_value_info("c%d" % k, TensorProto.BOOL, []), t("a%d" % k)]
        outs = [helper.make_tensor_value_info("co%d" % k, TensorProto.BOOL, []), t("ao%d" % k)]
        nodes = [helper.make_node("Identity", ["c%d" % k], ["co%d" % k])]
        if k == 0:
            nodes.append(helper.make_node("Neg", ["a0"], ["ao0"]))
        else:
            nodes.append(helper.make_node("Loop", ["trip", "c%d" % k, "a%d" % k], ["ao%d" % k],
                                          body=body(k - 1)))
        return helper.make_graph(nodes, "b%d" % k, ins, outs)
    loop = helper.make_node("Loop", ["trip", "c", "x"], ["y"], body=body(levels))
    return model([loop], [helper.make_tensor_value_info("trip", TensorProto.INT64, []),
                          helper.make_tensor_value_info("c", TensorProto.BOOL, []), vi("x", (2, 3))],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])


def main():
    case, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    if case == "laughs":
        save(laughs(n), out)
    elif case == "nested-loops":
        save(nested_loops(n), out)
    elif case == "split":
        # One result, num_outputs = 2^31-1, a constant input: folding once
        # allocated 2^31 split sizes (16 GB) before checking the count.
        opset = n or 18
        attrs = {"num_outputs": 2147483647} if opset >= 18 else {}
        node = helper.make_node("Split", ["c"], ["y"], axis=0, **attrs)
        if opset < 18:
            node.attribute.append(helper.make_attribute("num_outputs", 2147483647))
        c = helper.make_tensor("c", TensorProto.FLOAT, [0], [])
        save(model([node], [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                   [c], opset=opset), out)
    elif case == "deep-type":
        # A graph input whose type is seq(seq(...float...)) n levels deep.
        t = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
        for _ in range(n):
            t = helper.make_sequence_type_proto(t)
        x = helper.make_value_info("x", t)
        save(model([helper.make_node("Identity", ["x"], ["y"])], [x],
                   [helper.make_value_info("y", t)]), out)
    elif case == "recursive-self":
        f = helper.make_function("local", "f", ["u"], ["v"],
                                 [helper.make_node("Relu", ["u"], ["w"]),
                                  helper.make_node("f", ["w"], ["v"], domain="local",
                                                   name="again")],
                                 [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
        save(model([helper.make_node("f", ["x"], ["y"], domain="local")], [vi("x")], [vi("y")],
                   functions=[f]), out)
    elif case == "deep-annotation":
        # A text model whose first line is a `#@` annotation nesting records n deep.
        with open(out, "w") as f:
            f.write("#@model doc: " + "{a: " * n + "1" + "}" * n + "\n")
            f.write('<ir_version: 8, opset_import: ["" : 17]>\n'
                    "m (float[2] x) => (float[2] y)\n{\n  y = Relu(x)\n}\n")
    elif case == "long-line":
        # A 200 KB tensor literal line with an error at its end.
        with open(out, "w") as f:
            f.write('<ir_version: 8, opset_import: ["" : 17]>\n'
                    "m (float[2] x) => (float[2] y)\n  <float[%d] w = {" % (n + 1))
            f.write("1.0, " * n + "oops}>\n{\n  y = Relu(x)\n}\n")
    else:
        raise SystemExit("unknown case " + case)


if __name__ == "__main__":
    main()
