#!/usr/bin/env python3
"""Reference checks of our text syntax against onnx.parser (Debian's python3-onnx).

  reference.py make TEXT OUT.onnx      onnx.parser.parse_model(TEXT) -> OUT.onnx
  reference.py compare A.onnx B.onnx   the two ModelProtos are equal (field for field)
  reference.py check-text TEXT REF.onnx
                                       onnx.parser accepts TEXT (our printer's
                                       standard output) and reads REF's model

Exit status 0 on success; differences are printed.
"""
import sys

import onnx
import onnx.parser


def load_text(path):
    with open(path, encoding="utf-8") as f:
        src = f.read()
    # onnx.parser sees lit's RUN/CHECK lines as comments, like we do.
    return onnx.parser.parse_model(src)


def load_binary(path):
    m = onnx.ModelProto()
    with open(path, "rb") as f:
        m.ParseFromString(f.read())
    return m


def normalize(m):
    """onnx.parser writes `domain: ""` out on every node and opset import, and
    `name: ""` on attribute tensors; our parser leaves those empty strings
    absent. Both mean the same, so the comparison clears the explicit empty
    ones on both sides. Nothing else is normalized."""
    def graph(g):
        for n in g.node:
            if n.HasField("domain") and n.domain == "":
                n.ClearField("domain")
            for a in n.attribute:
                if a.HasField("t") and a.t.HasField("name") and a.t.name == "":
                    a.t.ClearField("name")
                if a.HasField("g"):
                    graph(a.g)
                for sg in a.graphs:
                    graph(sg)
    graph(m.graph)
    for o in m.opset_import:
        if o.HasField("domain") and o.domain == "":
            o.ClearField("domain")
    for f in m.functions:
        for n in f.node:
            if n.HasField("domain") and n.domain == "":
                n.ClearField("domain")
        for o in f.opset_import:
            if o.HasField("domain") and o.domain == "":
                o.ClearField("domain")
    return m


def same(a, b, what):
    a, b = normalize(a), normalize(b)
    if a == b:
        return 0
    sys.stderr.write("models differ (%s)\n--- expected\n%s\n--- got\n%s\n" % (what, a, b))
    return 1


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    cmd, x, y = argv[1:]
    if cmd == "make":
        m = load_text(x)
        with open(y, "wb") as f:
            f.write(m.SerializeToString())
        return 0
    if cmd == "compare":
        return same(load_binary(x), load_binary(y), "%s vs %s" % (x, y))
    if cmd == "check-text":
        return same(load_binary(y), load_text(x), "onnx.parser reading %s" % x)
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
