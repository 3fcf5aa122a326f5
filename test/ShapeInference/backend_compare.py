#!/usr/bin/python3
"""Ground truth from ONNX's backend node tests, with python3-onnx side by side.

For every node test model: strip value_info and the graph outputs' types,
infer with onnxir (one onnxir-infer-corpus process for the whole corpus) and
with onnx.shape_inference.infer_shapes(m, data_prop=True) (in this process),
and compare both with the declared output types: element type always, the
shape exactly where the declared shape is static (otherwise its rank).

Prints the rate per op and totals. Fails on any contradiction of ours
(a different element type, rank or integer dim than declared), and on any
model that onnx infers exactly and we do not, unless it is listed in the
known-gaps file (one test name per line; '#' comments). Gaps that are closed
are reported so the list can shrink.

usage: backend_compare.py DRIVER NODE_TEST_DIR GAPS_FILE [--write-gaps]
"""
import glob
import json
import os
import subprocess
import sys

import onnx
from onnx import shape_inference


def type_of(tp):
    """A TypeProto as the driver's JSON form."""
    if tp is None:
        return None
    which = tp.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        tt = getattr(tp, which)
        elem = tt.elem_type or None
        if not tt.HasField("shape"):
            return {"kind": "tensor", "elem": elem, "shape": None}
        dims = []
        for d in tt.shape.dim:
            w = d.WhichOneof("value")
            dims.append(d.dim_value if w == "dim_value" else d.dim_param if w == "dim_param" else None)
        return {"kind": "tensor", "elem": elem, "shape": dims}
    if which == "sequence_type":
        return {"kind": "seq", "inner": type_of(tp.sequence_type.elem_type)}
    if which == "optional_type":
        return {"kind": "optional", "inner": type_of(tp.optional_type.elem_type)}
    if which == "map_type":
        return {"kind": "map"}
    return None


def compare(declared, inferred):
    """-> (exact, contradiction)"""
    if declared is None:
        return (False, False)
    if inferred is None:
        return (False, False)
    if declared["kind"] != inferred["kind"]:
        return (False, True)
    if declared["kind"] in ("seq", "optional"):
        if declared.get("inner") is None:
            return (True, False)
        return compare(declared["inner"], inferred.get("inner"))
    if declared["kind"] != "tensor":
        return (True, False)
    de, ie = declared["elem"], inferred["elem"]
    if de and ie and de != ie:
        return (False, True)
    ds, is_ = declared["shape"], inferred["shape"]
    if ds is not None and is_ is not None:
        if len(ds) != len(is_):
            return (False, True)
        for a, b in zip(ds, is_):
            if isinstance(a, int) and isinstance(b, int) and a != b:
                return (False, True)
    if not (de and ie == de):
        return (False, False)
    if ds is None:
        return (True, False)
    if is_ is None:
        return (False, False)
    static = all(isinstance(a, int) for a in ds)
    if static:
        return (ds == is_, False)
    return (True, False)


def strip(m):
    def strip_graph(g):
        del g.value_info[:]
        for o in g.output:
            o.ClearField("type")
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    strip_graph(a.g)
                for sg in a.graphs:
                    strip_graph(sg)
    strip_graph(m.graph)


def onnx_infer(m):
    declared = [type_of(o.type) if o.HasField("type") else None for o in m.graph.output]
    s = onnx.ModelProto()
    s.CopyFrom(m)
    strip(s)
    try:
        r = shape_inference.infer_shapes(s, data_prop=True)
    except Exception:
        return declared, [None] * len(declared)
    by_name = {}
    for vi in list(r.graph.value_info) + list(r.graph.output):
        if vi.HasField("type"):
            by_name[vi.name] = type_of(vi.type)
    return declared, [by_name.get(o.name) for o in m.graph.output]


# The corpus has 932 node tests (python3-onnx 1.12's); a walk finding far
# fewer has lost its data and would compare nothing (issue 48 item 4).
MIN_MODELS = 900


def main():
    driver, node_dir, gaps_file = sys.argv[1:4]
    write_gaps = "--write-gaps" in sys.argv
    models = sorted(glob.glob(os.path.join(node_dir, "*", "model.onnx")))
    if len(models) < MIN_MODELS:
        print("only %d node test models under %s (at least %d expected)" %
              (len(models), node_dir, MIN_MODELS))
        return 1
    out = subprocess.run([driver, "--strip"] + models, capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr)
        return 1
    ours = {}
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        ours[rec["model"]] = rec
    missing = [p for p in models if p not in ours]
    if missing:
        print("the driver reported nothing for %d models, e.g. %s" % (len(missing), missing[0]))
        return 1
    gaps = set()
    if os.path.exists(gaps_file):
        for line in open(gaps_file):
            line = line.split("#")[0].strip()
            if line:
                gaps.add(line)

    per_op = {}
    total = {"models": 0, "ours": 0, "onnx": 0, "both_outputs": 0}
    failures, new_gaps, closed = [], [], []
    for path in models:
        name = os.path.basename(os.path.dirname(path))
        m = onnx.load(path)
        op = m.graph.node[-1].op_type if m.graph.node else "?"
        declared, theirs = onnx_infer(m)
        rec = ours.get(path, {})
        mine = rec.get("outputs") or [None] * len(declared)
        if "error" in rec:
            failures.append("%s: onnxir error: %s" % (name, rec["error"]))
        our_exact = their_exact = True
        for i, d in enumerate(declared):
            e1, c1 = compare(d, mine[i] if i < len(mine) else None)
            e2, _ = compare(d, theirs[i])
            if c1:
                failures.append("%s: output #%d: declared %s, onnxir inferred %s" %
                                (name, i, json.dumps(d), json.dumps(mine[i])))
            our_exact &= e1
            their_exact &= e2
        for w in rec.get("warnings", []):
            failures.append("%s: %s" % (name, w))
        st = per_op.setdefault(op, [0, 0, 0])
        st[0] += 1
        st[1] += our_exact
        st[2] += their_exact
        total["models"] += 1
        total["ours"] += our_exact
        total["onnx"] += their_exact
        if their_exact and not our_exact:
            new_gaps.append(name)
            if name not in gaps and not write_gaps:
                failures.append("%s: onnx infers it exactly, onnxir does not" % name)
        elif name in gaps:
            closed.append(name)

    print("%-28s %6s %8s %8s" % ("op", "models", "onnxir", "onnx"))
    for op in sorted(per_op):
        n, a, b = per_op[op]
        print("%-28s %6d %7.0f%% %7.0f%%" % (op, n, 100.0 * a / n, 100.0 * b / n))
    print("TOTAL: %d models; onnxir exact on %d, onnx exact on %d" %
          (total["models"], total["ours"], total["onnx"]))
    if write_gaps:
        with open(gaps_file, "w") as f:
            f.write("# Backend node tests that onnx infers exactly and onnxir does not yet\n")
            f.write("# (written by backend_compare.py --write-gaps; the test fails on any other).\n")
            for g in sorted(new_gaps):
                f.write(g + "\n")
    if closed:
        print("closed gaps (remove from %s): %s" % (os.path.basename(gaps_file), " ".join(closed)))
    if failures:
        print("FAILURES (%d):" % len(failures))
        for f in failures:
            print("  " + f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
