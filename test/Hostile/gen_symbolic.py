#!/usr/bin/python3
"""Writes one symbolic-shape amplification input: gen_symbolic.py CASE OUT N.

Small text models that made shape inference or the dim expression parser
take time or memory far beyond their size (issue 31, items 1-3):
  max-param N     an input dim `max(A0,...,A{N-1})`
  min-param N     an input dim `min(A0,...,A{N-1})`
  sum-param N     an input dim `A0+...+A{N-1}`
  concat-data N   v0 = Shape(float[1]); v{i+1} = Concat(v{i}, v{i}), N nodes
  concat-data-fn N  the same chain inside a model-local function
  concat-syms N   Concat of N inputs float[N0] ... float[N{N-1}] as a chain
  max-shape N     m = Shape(x0); m = Max(m, Shape(x_i)) for N inputs
Plain text, no dependencies.
"""
import sys

HDR = '<ir_version: 8, opset_import: ["" : 17%s]>\n'


def syms(n):
    # Sorted by text, as the canonical form lists min/max arguments.
    return sorted("A%d" % i for i in range(n))


def param(case, n):
    if case == "max-param":
        return "max(%s)" % ",".join(syms(n))
    if case == "min-param":
        return "min(%s)" % ",".join(syms(n))
    return "+".join(syms(n))


def main():
    case, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    lines = []
    if case in ("max-param", "min-param", "sum-param"):
        lines.append(HDR % "")
        lines.append('g (float["%s"] x) => (float[] y)\n{\n  y = Relu(x)\n}\n' % param(case, n))
    elif case == "concat-data":
        lines.append(HDR % "")
        lines.append("g (float[1] x) => (int64[] y)\n{\n  v0 = Shape(x)\n")
        for i in range(n):
            lines.append("  v%d = Concat<axis = 0>(v%d, v%d)\n" % (i + 1, i, i))
        lines.append("  y = Identity(v%d)\n}\n" % n)
    elif case == "concat-data-fn":
        lines.append(HDR % ', "local" : 1')
        lines.append("g (float[1] x) => (int64[] y)\n{\n  y = local.f(x)\n}\n")
        lines.append('<domain: "local", opset_import: ["" : 17]>\nf (x) => (y)\n{\n  v0 = Shape(x)\n')
        for i in range(n):
            lines.append("  v%d = Concat<axis = 0>(v%d, v%d)\n" % (i + 1, i, i))
        lines.append("  y = Identity(v%d)\n}\n" % n)
    elif case == "concat-syms":
        lines.append(HDR % "")
        ins = ", ".join("float[N%d] x%d" % (i, i) for i in range(n))
        lines.append("g (%s) => (float[] y)\n{\n  c0 = Identity(x0)\n" % ins)
        for i in range(1, n):
            lines.append("  c%d = Concat<axis = 0>(c%d, x%d)\n" % (i, i - 1, i))
        lines.append("  y = Identity(c%d)\n}\n" % (n - 1))
    elif case == "max-shape":
        lines.append(HDR % "")
        ins = ", ".join("float[N%d] x%d" % (i, i) for i in range(n))
        lines.append("g (%s) => (float[] y)\n{\n  m0 = Shape(x0)\n" % ins)
        for i in range(1, n):
            lines.append("  s%d = Shape(x%d)\n  m%d = Max(m%d, s%d)\n" % (i, i, i, i - 1, i))
        lines.append("  y = ConstantOfShape(m%d)\n}\n" % (n - 1))
    else:
        sys.exit("unknown case " + case)
    with open(out, "w") as f:
        f.write("".join(lines))


if __name__ == "__main__":
    main()
