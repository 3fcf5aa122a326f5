#!/usr/bin/python3
"""Checks inferred dims of every value against onnxruntime.

usage: ort_dims.py ONNX_OPT SHARED_DIR WORK_DIR

For every model of SHARED_DIR/models/{real,light}: run `onnx-opt -infer-shapes`,
expose every value of the main graph as a graph output, run it once with
onnxruntime (through ort_shapes.js beside this script, which keeps the outputs
in memory and prints their shapes) with fixed input shapes, and check every inferred dim against the real shape: an
integer must be equal, a symbol or expression is evaluated with the values the
input shapes give to the input symbols and must be equal where it can be
evaluated (fresh `unk__` symbols cannot). Also checks that after inference
every tensor value of the main graph has an element type and a rank, except
those listed per model below with the reason.

Exit 77 (skipped) without node or onnxruntime-node in $ORT_NODE_MODULES (ctest
fixture `ort`); under CI=true that fails instead (Note [Missing data under
CI], test/Unit/TestEnv.h). Fewer than MIN_MODELS models, or no dim checked,
fails: a walk that finds nothing checks nothing. Work files of a model are
removed when it passes.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import onnx
from onnx import numpy_helper  # noqa: F401  (checks that onnx is complete)

# Input shapes for the run (same choices as test/Ort/run_ort.sh).
ARGS = {
    "ppocr_v4_det": ["--shape", "x=1,3,320,320"],
    "ppocr_v4_rec": ["--shape", "x=1,3,48,320"],
    "silero_vad_v5": ["--shape", "input=1,512", "--shape", "state=2,1,128", "--value", "sr=16000"],
    "oww_melspectrogram": ["--shape", "input=1,1280"],
    "oww_embedding": ["--shape", "input_1=1,76,32,1"],
    "oww_hey_jarvis_v0.1": ["--range", "x.1=-0.1:0.1"],
}
# Values whose rank is honestly unknowable before running the model.
RANK_EXCUSES = {
    # If branches of different rank chosen by a runtime dim (a squeeze of a
    # dim that may be 1), and everything computed from them.
    "silero_vad_v5": "If branches of different rank selected by runtime dims",
}

# The shared models are 7 real and 9 light ones; a walk finding fewer has lost
# its data (issue 48 item 4).
MIN_MODELS = 14

def evaluate(expr, env):
    """Evaluates our dim expression text (DimExpr.h) given symbol values."""
    toks = re.findall(r"\d+|[A-Za-z_][A-Za-z0-9_]*|\{(?:\\.|[^}])*\}|[-+*(),]", expr)
    if "".join(toks) != expr.replace(" ", ""):
        return None
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else None

    def take():
        pos[0] += 1
        return toks[pos[0] - 1]

    def parse_expr():
        neg = False
        if peek() == "-":
            take()
            neg = True
        v = parse_term()
        if neg:
            v = -v
        while peek() in ("+", "-"):
            op = take()
            t = parse_term()
            v = v + t if op == "+" else v - t
        return v

    def parse_term():
        v = parse_factor()
        while peek() == "*":
            take()
            v *= parse_factor()
        return v

    def parse_factor():
        t = take()
        if t.isdigit():
            return int(t)
        if t == "(":
            v = parse_expr()
            take()
            return v
        if t in ("floordiv", "ceildiv", "mod", "min", "max") and peek() == "(":
            take()
            args = [parse_expr()]
            while peek() == ",":
                take()
                args.append(parse_expr())
            take()
            if t == "floordiv":
                return args[0] // args[1]
            if t == "ceildiv":
                return -((-args[0]) // args[1])
            if t == "mod":
                return args[0] % args[1]
            return min(args) if t == "min" else max(args)
        name = t[1:-1].replace("\\}", "}").replace("\\\\", "\\") if t.startswith("{") else t
        if name not in env:
            raise KeyError(name)
        return env[name]

    try:
        return parse_expr()
    except (KeyError, IndexError, ZeroDivisionError, AttributeError):
        return None


def dims_of(vi):
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    out = []
    for d in tt.shape.dim:
        w = d.WhichOneof("value")
        out.append(d.dim_value if w == "dim_value" else d.dim_param if w == "dim_param" else None)
    return out


def main():
    opt, shared, work = sys.argv[1:4]
    mods = os.environ.get("ORT_NODE_MODULES", "")
    if not shutil.which("node") or not os.path.isdir(os.path.join(mods, "onnxruntime-node")):
        if os.environ.get("CI") == "true":
            print("ort-dims: node or onnxruntime-node ($ORT_NODE_MODULES) not available: "
                  "FAILED (CI=true: the test must run)")
            return 1
        print("ort-dims: node or onnxruntime-node ($ORT_NODE_MODULES) not available: skipped")
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, SHARED_TOOLS=os.path.join(shared, "tools"))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    models = []
    for sub in ("real", "light"):
        d = os.path.join(shared, "models", sub)
        if os.path.isdir(d):
            models += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".onnx"))
    failures = []
    if len(models) < MIN_MODELS:
        failures.append("only %d models in %s/models/{real,light} (at least %d expected)"
                        % (len(models), shared, MIN_MODELS))
    total_checked = 0
    for path in models:
        base = os.path.basename(path)[:-5]
        inferred = os.path.join(work, base + ".inferred.onnx")
        r = subprocess.run([opt, path, "-infer-shapes", "-o", inferred], capture_output=True, text=True)
        if r.returncode != 0 or "warning" in r.stderr:
            failures.append("%s: onnx-opt -infer-shapes: %s" % (base, r.stderr.strip()[:500]))
            continue
        m = onnx.load(inferred)
        g = m.graph
        vi = {v.name: v for v in list(g.value_info) + list(g.output)}
        untyped = []
        exposed_names = [o.name for o in g.output]
        for n in g.node:
            for o in n.output:
                if not o:
                    continue
                v = vi.get(o)
                if v is None or v.type.WhichOneof("value") != "tensor_type":
                    if v is None:
                        untyped.append(o)
                    continue
                if not v.type.tensor_type.elem_type or dims_of(v) is None:
                    untyped.append(o)
                if o not in exposed_names:
                    exposed_names.append(o)
                    g.output.append(v)
        if untyped and base not in RANK_EXCUSES:
            failures.append("%s: %d values without element type or rank, e.g. %s" %
                            (base, len(untyped), untyped[:5]))
        exposed = os.path.join(work, base + ".exposed.onnx")
        onnx.save(m, exposed)
        args = ARGS.get(base, [])
        cmd = ["node", os.path.join(here, "ort_shapes.js"), exposed] + args
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            # A loaded machine can make the runtime fail without a word (it
            # was seen once for the big isnet); one retry tells that apart.
            r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            failures.append("%s: onnxruntime run failed (exit %d): %s" %
                            (base, r.returncode, (r.stdout + r.stderr).strip()[-500:]))
            continue
        real_shapes = json.loads(r.stdout)
        failed_before = len(failures)
        # Symbol values from the input shapes used.
        given = {}
        for i in range(0, len(args) - 1):
            if args[i] == "--shape":
                name, dims = args[i + 1].split("=")
                given[name] = [int(x) for x in dims.split(",")]
        env_syms = {}
        for inp in g.input:
            d = dims_of(inp)
            if d is None:
                continue
            shape = given.get(inp.name, [x if isinstance(x, int) else 1 for x in d])
            for a, b in zip(d, shape):
                if isinstance(a, str) and evaluate(a, {}) is None and re.fullmatch(r"[A-Za-z_]\w*", a):
                    env_syms[a] = b
        checked = 0
        for name, real in sorted(real_shapes.items()):
            v = vi.get(name)
            if v is None:
                continue
            d = dims_of(v)
            if d is None:
                continue
            if len(d) != len(real):
                failures.append("%s: value %s: inferred rank %d, real shape %s" % (base, name, len(d), real))
                continue
            for a, b in zip(d, real):
                want = a if isinstance(a, int) else evaluate(a, env_syms) if isinstance(a, str) else None
                if want is None:
                    continue
                checked += 1
                if want != b:
                    failures.append("%s: value %s: inferred %s, real shape %s" % (base, name, d, real))
                    break
        total_checked += checked
        if len(failures) == failed_before:
            # Keep the work files of a failing model only: a real model
            # exposed whole is large.
            os.remove(inferred)
            os.remove(exposed)
        print("%-28s %6d dims checked, %d values without rank/type%s" %
              (base, checked, len(untyped),
               " (%s)" % RANK_EXCUSES[base] if base in RANK_EXCUSES and untyped else ""))
    if not total_checked:
        failures.append("no dim was checked")
    print("ort-dims: %d dims checked, %d failures" % (total_checked, len(failures)))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
