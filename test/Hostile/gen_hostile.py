#!/usr/bin/python3
"""Writes one hostile input for onnx-opt: gen_hostile.py CASE OUT [ARGS].

Each case is a model (or file) a tool reading models from the internet must
reject with a located error, never a crash. Uses Debian's python3-onnx.
"""
import os
import random
import sys

import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from onnxtest import field, model, save, varint, vfield, vi  # noqa: E402,F401


def raw_tensor(name, dims, raw, dtype=TensorProto.FLOAT):
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def external_tensor(name, location, offset=None, length=None, dims=(2,),
                    dtype=TensorProto.FLOAT):
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return t


def ext_model(out, tensor):
    save(model([helper.make_node("Add", ["x", tensor.name], ["y"])], [vi("x")], [vi("y")],
               [tensor]), out)


def relu(i, o, name=""):
    return helper.make_node("Relu", [i], [o], name=name)


def main():
    case, out = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(out))
    if case == "truncated":
        data = open(sys.argv[3], "rb").read()
        open(out, "wb").write(data[: len(data) // 2])
    elif case == "random":
        rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
        open(out, "wb").write(bytes(rng.getrandbits(8) for _ in range(4096)))
    elif case == "textfile":
        open(out, "w").write("this is not a model\njust some text\n")
    elif case == "empty":
        open(out, "wb").close()
    elif case == "cycle":
        save(model([relu("b", "a", "first"), relu("a", "b", "second"), relu("a", "y")],
                   [vi("x")], [vi("y")]), out)
    elif case == "undefined":
        save(model([relu("nope", "y", "user")], [vi("x")], [vi("y")]), out)
    elif case == "duplicate":
        save(model([relu("x", "y", "one"), relu("x", "y", "two")], [vi("x")], [vi("y")]), out)
    elif case == "redefine-input":
        save(model([relu("x", "x", "redef"), relu("x", "y")], [vi("x")], [vi("y")]), out)
    elif case == "undefined-output":
        save(model([relu("x", "y")], [vi("x")], [vi("y"), vi("missing")]), out)
    elif case == "shadowing":
        then_g = helper.make_graph([relu("x", "y", "inner")], "then", [], [vi("y")])
        else_g = helper.make_graph([relu("x", "z")], "else", [], [vi("z")])
        cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
        save(model([relu("x", "y"), helper.make_node("If", ["c"], ["out"], name="branch",
                                                     then_branch=then_g, else_branch=else_g)],
                   [vi("x"), cond], [vi("out"), vi("y")]), out)
    elif case == "negative-dims":
        save(model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")],
                   [raw_tensor("w", [-1], b"")]), out)
    elif case == "overflow-dims":
        save(model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")],
                   [raw_tensor("w", [2**62, 4], b"\0" * 8)]), out)
    elif case == "raw-size":
        save(model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")],
                   [raw_tensor("w", [2], b"\0" * 12)]), out)
    elif case == "typed-size":
        t = TensorProto()
        t.name, t.data_type = "w", TensorProto.FLOAT
        t.dims.append(3)
        t.float_data.extend([1.0, 2.0])
        save(model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [t]), out)
    elif case == "unknown-dtype":
        save(model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")],
                   [raw_tensor("w", [2], b"\0" * 8, dtype=99)]), out)
    elif case == "attr-type":
        n = helper.make_node("Softmax", ["x"], ["y"], name="soft")
        a = n.attribute.add()
        a.name = "axis"
        a.type = onnx.AttributeProto.INT
        a.f = 1.5
        save(model([n], [vi("x")], [vi("y")]), out)
    elif case == "recursive":
        f = helper.make_function("local", "f", ["a"], ["b"],
                                 [helper.make_node("g", ["a"], ["b"], domain="local")],
                                 [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
        g = helper.make_function("local", "g", ["a"], ["b"],
                                 [helper.make_node("f", ["a"], ["b"], domain="local")],
                                 [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
        save(model([helper.make_node("f", ["x"], ["y"], domain="local", name="call")],
                   [vi("x")], [vi("y")], functions=[f, g]), out)
    elif case == "deep":
        depth = int(sys.argv[3])
        # Encoded by hand: nesting this deep overflows Python's protobuf.
        s = lambda x: x.encode()
        def outvi(name):
            return field(12, field(1, s(name)))
        def leaf(name):
            return field(1, field(1, s("c")) + field(2, s(name)) + field(4, s("Identity")))
        g = leaf("t0") + field(2, s("g0")) + outvi("t0")
        for i in range(1, depth + 1):
            e = leaf("e%d" % i) + field(2, s("e%d" % i)) + outvi("e%d" % i)
            attr_t = field(1, s("then_branch")) + vfield(20, 5) + field(6, g)
            attr_e = field(1, s("else_branch")) + vfield(20, 5) + field(6, e)
            node = field(1, s("c")) + field(2, s("o%d" % i)) + field(4, s("If")) + \
                field(5, attr_t) + field(5, attr_e)
            g = field(1, node) + field(2, s("g%d" % i)) + outvi("o%d" % i)
        cond_vi = field(11, field(1, s("c")) + field(2, field(1, vfield(1, 9))))
        main_g = g + cond_vi
        m = vfield(1, 8) + field(8, field(1, b"") + vfield(2, 17)) + \
            field(7, main_g)
        open(out, "wb").write(m)
    elif case.startswith("ext-"):
        data = os.path.join(here, "weights.bin")
        open(data, "wb").write(b"\0" * 8)
        kind = case[4:]
        if kind == "ok":
            t = external_tensor("w", "weights.bin", 0, 8)
        elif kind == "absolute":
            t = external_tensor("w", os.path.abspath(data), 0, 8)
        elif kind == "dotdot":
            t = external_tensor("w", "../weights.bin", 0, 8)
        elif kind == "symlink":
            outside = os.path.join(os.path.dirname(here), "outside.bin")
            open(outside, "wb").write(b"\0" * 8)
            link = os.path.join(here, "link.bin")
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(outside, link)
            t = external_tensor("w", "link.bin", 0, 8)
        elif kind == "missing":
            t = external_tensor("w", "no-such-file.bin", 0, 8)
        elif kind == "offset":
            t = external_tensor("w", "weights.bin", 4096, 8)
        elif kind == "length":
            t = external_tensor("w", "weights.bin", 4, 8)
        elif kind == "negative":
            t = external_tensor("w", "weights.bin", -8, 8)
        elif kind == "nonnumeric":
            t = external_tensor("w", "weights.bin", "eight", 8)
        elif kind.startswith("dims-"):
            # dims-TYPE-N-OFFSET-LENGTH ("-" for no offset/length): a TYPE[N]
            # tensor over the 8-byte file (issue 31, item 10).
            _, ty, n, off, ln = kind.split("-")
            dt = {"float": TensorProto.FLOAT, "int4": 22,  # INT4 (newer than python3-onnx 1.12)
                  "uint8": TensorProto.UINT8}[ty]
            t = external_tensor("w", "weights.bin", None if off == "" else int(off),
                                None if ln == "" else int(ln), dims=(int(n),), dtype=dt)
            save(model([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", (int(n),))],
                       [t]), out)
            return
        else:
            raise SystemExit("unknown case " + case)
        ext_model(out, t)
    else:
        raise SystemExit("unknown case " + case)


if __name__ == "__main__":
    main()
