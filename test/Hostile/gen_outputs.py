#!/usr/bin/python3
"""gen_outputs.py N OUT.onnxtxt: a graph with N outputs, each an Identity of
the one input (issue 31, item 4: many graph outputs). Written as text so that
100,000 outputs take no time to make; onnx-opt turns it into a binary model."""
import sys

n, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    f.write('<\n  ir_version: 8,\n  opset_import: ["" : 17]\n>\n')
    f.write("g (float[1] x) => (%s)\n{\n" % ", ".join("float[1] o%d" % i for i in range(n)))
    f.writelines("  o%d = Identity (x)\n" % i for i in range(n))
    f.write("}\n")
