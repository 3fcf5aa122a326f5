#!/usr/bin/python3
"""convert_compare.py ONNX_OPT WORK_DIR [DATA_DIR] [--targets 13,17] [--nodes 100000] [--big N] [--no-corpus]

Side by side: `onnx-opt -convert-opset --target-opset=T` against python onnx's
`onnx.version_converter.convert_version` (Debian python3-onnx, 1.12: it knows
opsets up to 17), on the models of ONNX's backend test corpus (DATA_DIR, default
Debian's libonnx-testdata), for each target T: up for the models at or below T,
down for those above. For each tool and target it counts

  converted  the tool produced a model that imports T and onnxruntime gives
             the original's outputs on the model's test_data_set_0;
  refused    the tool stopped with an error (no model written);
  wrong      the tool produced a model, but it does not import T, or
             onnxruntime rejects it, or an output differs (atol 1e-5, rtol 1e-4);
  n/a        onnxruntime cannot run the original (the oracle has nothing to say).

Then whole-process time (wall clock, best of 3) of each tool converting one
generated model of --nodes nodes (a chain at opset 11 of Unsqueeze/Add/
Squeeze/ReduceSum/Relu, every step of which changes form by 13) to 17.
Needs node and onnxruntime-node ($ORT_NODE_MODULES).
"""
import os
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, version_converter

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(SRC), "shared")


def opset_of(m):
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def python_convert(src, dst, target):
    code = ("import onnx,sys\nfrom onnx import version_converter\n"
            "m=onnx.load(sys.argv[1])\nc=version_converter.convert_version(m,int(sys.argv[3]))\n"
            "onnx.save(c,sys.argv[2])\n")
    r = subprocess.run(["/usr/bin/python3", "-c", code, src, dst, str(target)],
                       capture_output=True, text=True, timeout=300)
    return r.returncode == 0


PY_WORKER = """
import onnx, sys
from onnx import version_converter
for line in sys.stdin:
    src, dst, t = line.split()
    print("BEGIN", flush=True)
    try:
        onnx.save(version_converter.convert_version(onnx.load(src), int(t)), dst)
        print("OK", flush=True)
    except Exception:
        print("ERR", flush=True)
"""


def python_convert_all(jobs):
    """jobs: [(src, dst, target)]; one python process for all (restarted after
    a crash, which counts as a refusal); returns the set of dst written."""
    done, i = set(), 0
    while i < len(jobs):
        p = subprocess.Popen(["/usr/bin/python3", "-c", PY_WORKER], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        p.stdin.write("".join(f"{a} {b} {t}\n" for a, b, t in jobs[i:]))
        p.stdin.close()
        for line in p.stdout:
            line = line.strip()
            if line == "BEGIN":
                continue
            if line == "OK":
                done.add(jobs[i][1])
            i += 1
        if p.wait() != 0:
            i += 1  # the model it crashed on
    return done


def ours_convert(opt, src, dst, target):
    r = subprocess.run([opt, "-convert-opset", f"--target-opset={target}", src, "-o", dst],
                       capture_output=True, text=True, timeout=300)
    return r.returncode == 0


def ort_check(pairs, work, label):
    """pairs: (orig, converted, datadir); returns (set of failed converted paths, n/a paths)."""
    lst = os.path.join(work, f"{label}.list")
    with open(lst, "w") as f:
        f.write("".join(f"{a} {b} {d}\n" for a, b, d in pairs))
    env = dict(os.environ, SHARED_TOOLS=os.path.join(SHARED, "tools"), LABEL=label)
    r = subprocess.run(["node", os.path.join(SRC, "test", "Ort", "backend_o2.js"), lst],
                       capture_output=True, text=True, env=env)
    failed = set()
    for line in r.stdout.splitlines():
        if line.startswith("FAIL: "):
            failed.add(line[6:].split(":")[0])
    return failed


def ort_can_run(pairs, work):
    """The originals onnxruntime runs: compare each with itself."""
    lst = os.path.join(work, "self.list")
    with open(lst, "w") as f:
        f.write("".join(f"{a} {a} {d}\n" for a, _, d in pairs))
    env = dict(os.environ, SHARED_TOOLS=os.path.join(SHARED, "tools"), LABEL="self")
    runnable = set()
    # backend_o2.js counts an original it cannot run as skipped, silently: find
    # them one by one would be slow, so ask it per model in one process.
    script = (
        "const path=require('path');const cmp=require(path.join(process.env.SHARED_TOOLS,'ort_compare.js'));"
        "const fs=require('fs');(async()=>{const ort=cmp.req('onnxruntime-node');ort.env.logLevel='fatal';"
        "for(const l of fs.readFileSync(process.argv[1],'utf8').split('\\n').filter(x=>x)){const [a,,d]=l.split(' ');"
        "try{const s=await cmp.createSession(ort,a,{opt:'disabled',threads:1});await s.run(cmp.feedsFromDir(ort,s,d));"
        "console.log('OK '+a);}catch(e){}}})();")
    r = subprocess.run(["node", "-e", script, lst], capture_output=True, text=True, env=env)
    for line in r.stdout.splitlines():
        if line.startswith("OK "):
            runnable.add(line[3:])
    return runnable


def chain_model(n):
    nodes, x = [], "x"
    inits = [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])]
    i = 0
    while len(nodes) < n:
        k = len(nodes)
        nodes.append(helper.make_node("Unsqueeze", [x], [f"u{i}"], axes=[0]))
        nodes.append(helper.make_node("Add", [f"u{i}", "one"], [f"a{i}"]))
        nodes.append(helper.make_node("ReduceSum", [f"a{i}"], [f"r{i}"], axes=[0], keepdims=1))
        nodes.append(helper.make_node("Squeeze", [f"r{i}"], [f"s{i}"], axes=[0]))
        nodes.append(helper.make_node("Relu", [f"s{i}"], [f"y{i}"]))
        x = f"y{i}"
        i += 1
        assert len(nodes) > k
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)], ir_version=7)


class TooSlow(float):
    """A run stopped at the timeout (its value)."""


def best_of(fn, k=3):
    best = None
    for _ in range(k):
        t = time.perf_counter()
        try:
            ok = fn()
        except subprocess.TimeoutExpired as e:
            return TooSlow(e.timeout)
        dt = time.perf_counter() - t
        if not ok:
            return None
        best = dt if best is None else min(best, dt)
    return best


def main(argv):
    opt, work = argv[0], argv[1]
    data = "/usr/share/libonnx-testdata/data"
    targets, nodes, big_n, corpus = [13, 17], 100000, 0, True
    rest = argv[2:]
    while rest:
        a = rest.pop(0)
        if a == "--targets":
            targets = [int(x) for x in rest.pop(0).split(",")]
        elif a == "--nodes":
            nodes = int(rest.pop(0))
        elif a == "--no-corpus":
            corpus = False
        elif a == "--big":
            big_n = int(rest.pop(0))
        else:
            data = a
    os.makedirs(work, exist_ok=True)
    models = []
    for suite in sorted(os.listdir(data)):
        for t in sorted(os.listdir(os.path.join(data, suite))):
            m = os.path.join(data, suite, t, "model.onnx")
            d = os.path.join(data, suite, t, "test_data_set_0")
            if os.path.isfile(m) and os.path.isdir(d):
                v = opset_of(onnx.load(m))
                if v is not None:  # a model of other domains only: nothing to convert
                    models.append((m, d, f"{suite}_{t}", v))
    if not corpus:
        models = []
    runnable = ort_can_run([(m, m, d) for m, d, _, _ in models], work)
    print(f"# {len(models)} backend models with test data; onnxruntime runs {len(runnable)} of them")
    print()
    print("| target | direction | models | tool | converted | refused | wrong | n/a (ORT cannot run the original) |")
    print("|---|---|---|---|---|---|---|---|")
    for target in targets:
        for up in (True, False):
            todo = [x for x in models if (x[3] <= target if up else x[3] > target)]
            if not todo:
                continue
            for tool in ("onnx-opt", "python onnx 1.12"):
                tdir = os.path.join(work, f"{'py' if tool.startswith('py') else 'ours'}-{target}-{up}")
                os.makedirs(tdir, exist_ok=True)
                made, refused = [], 0
                outs = [os.path.join(tdir, name + ".onnx") for _, _, name, _ in todo]
                if tool.startswith("py"):
                    written = python_convert_all([(m, o, target) for (m, *_), o in zip(todo, outs)])
                else:
                    written = {o for (m, *_), o in zip(todo, outs) if ours_convert(opt, m, o, target)}
                for (m, d, _, _), out in zip(todo, outs):
                    if out in written and os.path.exists(out):
                        made.append((m, out, d))
                    else:
                        refused += 1
                wrong_opset = set()
                for m, out, d in made:
                    try:
                        if opset_of(onnx.load(out)) != target:
                            wrong_opset.add(out)
                    except Exception:
                        wrong_opset.add(out)
                checked = [p for p in made if p[0] in runnable and p[1] not in wrong_opset]
                failed = ort_check(checked, work, os.path.basename(tdir))
                na = sum(1 for p in made if p[0] not in runnable and p[1] not in wrong_opset)
                wrong = len(wrong_opset) + len(failed)
                conv = len(checked) - len(failed)
                print(f"| {target} | {'up' if up else 'down'} | {len(todo)} | {tool} | {conv} | "
                      f"{refused} | {wrong} | {na} |", flush=True)
    # Whole-process time at `nodes` nodes.
    big = os.path.join(work, f"chain{nodes}.onnx")
    onnx.save(chain_model(nodes), big)
    fmt = lambda t: ("failed" if t is None else f"> {t:.0f} s (stopped)" if isinstance(t, TooSlow)
                     else f"{t:.2f} s")
    t_ours = best_of(lambda: ours_convert(opt, big, big + ".ours17.onnx", 17))
    t_py = best_of(lambda: python_convert(big, big + ".py17.onnx", 17))
    t_copy = best_of(lambda: subprocess.run([opt, big, "-o", big + ".copy.onnx"]).returncode == 0)
    t_o1 = best_of(lambda: subprocess.run([opt, "-O1", big, "-o", big + ".o1.onnx"]).returncode == 0)
    print()
    print(f"# whole-process wall time, best of 3, one {nodes}-node opset-11 chain converted to 17:")
    print(f"#   onnx-opt -convert-opset: {fmt(t_ours)}; python onnx 1.12 version_converter: {fmt(t_py)}"
          f"; onnx-opt load+save alone: {fmt(t_copy)}; onnx-opt -O1: {fmt(t_o1)}")
    if big_n:
        # Issue 27: converting costs no more than a second -O1-style pass.
        huge = os.path.join(work, f"chain{big_n}.onnx")
        onnx.save(chain_model(big_n), huge)
        run = lambda *f: (lambda: subprocess.run([opt, *f, huge, "-o", huge + ".out.onnx"]).returncode == 0)
        t0 = best_of(run())
        tc = best_of(run("-convert-opset", "--target-opset=17"))
        to = best_of(run("-O1"))
        print(f"# {big_n}-node chain, onnx-opt wall time best of 3: load+save {fmt(t0)}, "
              f"-convert-opset to 17 {fmt(tc)}, -O1 {fmt(to)}")
        if None not in (t0, tc, to) and not any(isinstance(x, TooSlow) for x in (t0, tc, to)):
            print(f"#   conversion alone {tc - t0:.2f} s vs the -O1 pipeline alone {to - t0:.2f} s: "
                  f"ratio {(tc - t0) / (to - t0):.2f} (target <= 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
