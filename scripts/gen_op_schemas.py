#!/usr/bin/env python3
"""Writes lib/Ops/OpSchemaTables.inc from the ONNX operator schema list.

The list is ../shared/spec/onnx-op-schemas.json beside the repository (one
object per domain, operator and since_version; see spec/README.md). The output
is plain data for lib/Ops/OpSchema.cpp: one pool of string bytes with an offset
table, and flat arrays of records that refer to strings and to each other by
index, so it compiles in a moment and costs no static constructors.

Usage, from anywhere:  python3 scripts/gen_op_schemas.py [--check] [SCHEMAS.json]
--check writes nothing and exits 1 if the checked-in file is not what the list gives.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGS = [a for a in sys.argv[1:] if a != "--check"]
CHECK = "--check" in sys.argv[1:]
SPEC = ARGS[0] if ARGS else os.path.join(ROOT, "..", "shared", "spec", "onnx-op-schemas.json")
OUT = os.path.join(ROOT, "lib", "Ops", "OpSchemaTables.inc")

ATTR_KINDS = {
    "FLOAT": 1, "INT": 2, "STRING": 3, "TENSOR": 4, "GRAPH": 5, "FLOATS": 6, "INTS": 7,
    "STRINGS": 8, "TENSORS": 9, "GRAPHS": 10, "SPARSE_TENSOR": 11, "SPARSE_TENSORS": 12,
    "TYPE_PROTO": 13, "TYPE_PROTOS": 14,
}
OPTIONS = {"single": 0, "optional": 1, "variadic": 2}
DETERMINISM = {"deterministic": 0, "nondeterministic": 1, "unknown": 2}
# Default kinds (RawAttr::dflt): none, int, float, string, ints, floats, strings, tensor.
D_NONE, D_INT, D_FLOAT, D_STRING, D_INTS, D_FLOATS, D_STRINGS, D_TENSOR = range(8)


class Tables:
    def __init__(self):
        self.strings = []
        self.string_ids = {}
        self.lists = []       # string-id lists (allowed types, default strings)
        self.list_ids = {}    # tuple -> start index (shared when equal)
        self.ints = []
        self.floats = []

    def s(self, text):
        if text not in self.string_ids:
            self.string_ids[text] = len(self.strings)
            self.strings.append(text)
        return self.string_ids[text]

    def slist(self, texts):
        key = tuple(self.s(t) for t in texts)
        if key not in self.list_ids:
            self.list_ids[key] = len(self.lists)
            self.lists.extend(key)
        return self.list_ids[key], len(key)


def c_string(text):
    out = []
    for b in text.encode("utf-8"):
        c = chr(b)
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
        elif c == "\n":
            out.append("\\n")
        elif 32 <= b < 127 and c != "?":  # '?' would risk trigraphs
            out.append(c)
        else:
            out.append("\\%03o" % b)
    return '"' + "".join(out) + '"'


def c_double(v):
    r = repr(float(v))
    if r in ("inf", "-inf", "nan"):
        sys.exit(f"unsupported float default {v}")
    return r


def default_of(t, a):
    if "default" not in a:
        return D_NONE, 0, 0
    v = a["default"]
    ty = a["type"]
    if ty == "INT":
        t.ints.append(int(v))
        return D_INT, len(t.ints) - 1, 1
    if ty == "FLOAT":
        t.floats.append(float(v))
        return D_FLOAT, len(t.floats) - 1, 1
    if ty == "STRING":
        return D_STRING, t.s(v), 1
    if ty == "INTS":
        start = len(t.ints)
        t.ints.extend(int(x) for x in v)
        return D_INTS, start, len(v)
    if ty == "FLOATS":
        start = len(t.floats)
        t.floats.extend(float(x) for x in v)
        return D_FLOATS, start, len(v)
    if ty == "STRINGS":
        start, n = t.slist(v)
        return D_STRINGS, start, n
    if ty in ("TENSOR", "SPARSE_TENSOR"):
        return D_TENSOR, 0, 0
    sys.exit(f"unsupported default of type {ty}: {a}")


def generate(schemas):
    t = Tables()
    params, attrs, constraints, bodies, rows = [], [], [], [], []
    for sc in schemas:
        row = {}
        row["domain"] = t.s(sc["domain"])
        row["name"] = t.s(sc["name"])
        row["since"] = sc["since_version"]
        flags = []
        if sc["deprecated"]: flags.append("kDeprecated")
        if sc["experimental"]: flags.append("kExperimental")
        if sc["has_function"]: flags.append("kHasFunction")
        if sc["context_dependent_function"]: flags.append("kContextDependent")
        row["flags"] = "|".join(flags) or "0"
        row["det"] = DETERMINISM[sc["determinism"]]
        row["arity"] = [sc["min_input"], sc["max_input"], sc["min_output"], sc["max_output"]]
        for key in ("inputs", "outputs"):
            start = len(params)
            for p in sc[key]:
                params.append((t.s(p["name"]), t.s(p["type"]), OPTIONS[p["option"]],
                               1 if p.get("homogeneous", True) else 0, p.get("min_arity", 1)))
            row[key] = (start, len(sc[key]))
        start = len(attrs)
        for a in sc["attributes"]:
            dk, di, dn = default_of(t, a)
            attrs.append((t.s(a["name"]), ATTR_KINDS[a["type"]], 1 if a["required"] else 0,
                          dk, di, dn))
        row["attrs"] = (start, len(sc["attributes"]))
        start = len(constraints)
        for tc in sc["type_constraints"]:
            ls, ln = t.slist(tc["allowed"])
            constraints.append((t.s(tc["param"]), ls, ln))
        row["tcs"] = (start, len(sc["type_constraints"]))
        start = len(bodies)
        fb = sc.get("function_bodies", {})
        for k in sorted(fb, key=int):
            bodies.append((int(k), t.s(fb[k])))
        row["bodies"] = (start, len(fb))
        rows.append(row)
    if len(t.strings) >= 65536 or len(t.lists) >= 65536:
        sys.exit("too many strings for 16-bit indices")

    out = []
    w = out.append
    w("// Generated by scripts/gen_op_schemas.py from spec/onnx-op-schemas.json;")
    w("// edit the script, not this file. Included by lib/Ops/OpSchema.cpp only.")
    w(f"// {len(rows)} schemas, {len(t.strings)} strings.")
    w("")
    w("// Every string; string #i is kStrPool[kStrOffsets[i], kStrOffsets[i + 1]).")
    w("static const char kStrPool[] =")
    offsets = [0]
    pos = 0
    for text in t.strings:
        pieces = text.split("\n")
        for i, piece in enumerate(pieces):
            w("    " + c_string(piece + ("\n" if i + 1 < len(pieces) else "")))
        pos += len(text.encode("utf-8"))
        offsets.append(pos)
    w("    ;")
    w("static const uint32_t kStrOffsets[] = {")
    for i in range(0, len(offsets), 12):
        w("    " + ", ".join(str(o) for o in offsets[i:i + 12]) + ",")
    w("};")
    w("")
    w("// String-id lists: allowed types of constraints, STRINGS defaults.")
    w("static const uint16_t kStrLists[] = {")
    for i in range(0, len(t.lists), 16):
        w("    " + ", ".join(str(x) for x in t.lists[i:i + 16]) + ",")
    w("};")
    w("static const int64_t kDefaultInts[] = {")
    for i in range(0, len(t.ints), 12):
        w("    " + ", ".join(str(x) + ("LL" if abs(x) > 2**31 else "") for x in t.ints[i:i + 12]) + ",")
    w("};")
    w("static const double kDefaultFloats[] = {")
    for i in range(0, len(t.floats), 8):
        w("    " + ", ".join(c_double(x) for x in t.floats[i:i + 8]) + ",")
    w("};")
    w("")
    w("// {name, type, option, homogeneous, min_arity}")
    w("static const RawParam kParams[] = {")
    for p in params:
        w("    {%d, %d, %d, %d, %d}," % p)
    w("};")
    w("// {name, kind, required, default kind, default index, default count}")
    w("static const RawAttr kAttrs[] = {")
    for a in attrs:
        w("    {%d, %d, %d, %d, %d, %d}," % a)
    w("};")
    w("// {param, allowed list start, allowed count}")
    w("static const RawConstraint kConstraints[] = {")
    for c in constraints:
        w("    {%d, %d, %d}," % c)
    w("};")
    w("// {opset, text}")
    w("static const RawBody kBodies[] = {")
    for b in bodies:
        w("    {%d, %d}," % b)
    if not bodies:
        w("    {0, 0},")
    w("};")
    w("// {domain, name, since, flags, determinism, min/max inputs, min/max outputs,")
    w("//  inputs, outputs, attributes, constraints, bodies (start, count each)}")
    w("static const RawSchema kSchemas[] = {")
    for r in rows:
        fields = [r["domain"], r["name"], r["since"], r["flags"], r["det"], *r["arity"],
                  *r["inputs"], *r["outputs"], *r["attrs"], *r["tcs"], *r["bodies"]]
        w("    {" + ", ".join(str(f) for f in fields) + "},")
    w("};")
    return "\n".join(out) + "\n"


def main():
    with open(SPEC) as f:
        schemas = json.load(f)
    schemas.sort(key=lambda s: (s["domain"], s["name"], s["since_version"]))
    text = generate(schemas)
    if CHECK:
        try:
            with open(OUT) as f:
                old = f.read()
        except OSError:
            old = None
        if old != text:
            sys.exit(f"{OUT} differs from what {SPEC} gives: run scripts/gen_op_schemas.py")
        return
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
