#!/usr/bin/python3
"""backend_convert.py ONNX_OPT SHARED_DIR WORK_DIR DATA_DIR... [--up T...] [--down T...] [--shared]

convert-opset keeps meaning on ONNX's backend test corpus (issue 27's "done when"):

- every model (DATA_DIR/*/*/model.onnx with a test_data_set_0) whose default-domain
  opset is at most an --up target is converted up to it: a refusal is a failure
  but for the few of KNOWN_UP_REFUSALS (below), which must refuse for their reason;
- every model above a --down target is converted down to it: a located refusal
  ("convert-opset: graph ...") is allowed and counted, a crash is not;
- each converted model must import the default domain at exactly the target
  (onnx-opt has already checked every node against the target's schemas: the
  pass manager verifies the schema after each pass);
- backend_o2.js then runs original and converted model on onnxruntime (CPU,
  graph optimizations off) on test_data_set_0 and compares every output
  (atol 1e-5, rtol 1e-4); a model onnxruntime cannot run in its original
  form is "skipped" (the oracle has nothing to say), never counted as passed,
  and so is a converted model onnxruntime has no kernel for ("no kernel").

With --shared, the models of SHARED_DIR/models/real and /light are converted
too and compared on random inputs by ort_compare.js (the arguments of each real
model are those of test/Ort/real_model_args.txt; a model it marks `once` is
converted only to the first --up target, to keep the run short).

Prints one line of counts per target; exit 1 on any failure, 77 when node or
onnxruntime-node ($ORT_NODE_MODULES) are missing.
"""
import concurrent.futures as cf
import os
import shutil
import subprocess
import sys

try:
    import onnx
except ImportError:
    if os.environ.get("CI") == "true":
        print("backend-convert: python3-onnx not available: FAILED (CI=true: the test must run)")
        sys.exit(1)
    print("backend-convert: python3-onnx not available: skipped")
    sys.exit(77)


# Up-conversions refused on purpose, each with the words its refusal must
# hold (say why in README, convert-opset): none at present.
KNOWN_UP_REFUSALS = {}


def default_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def header_opset(path):
    # The opset import is in the first bytes of most models, but not always
    # (the field order is free): load the whole model; the corpus is small.
    return default_opset(onnx.load(path, load_external_data=False))


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    opt, shared, work = argv[0], argv[1], argv[2]
    data_dirs, ups, downs = [], [], []
    with_shared = "--shared" in argv[3:]
    argv = [a for a in argv if a != "--shared"]
    mode = None
    for a in argv[3:]:
        if a in ("--up", "--down"):
            mode = a
        elif mode == "--up":
            ups.append(int(a))
        elif mode == "--down":
            downs.append(int(a))
        else:
            data_dirs.append(a)
    if shutil.which("node") is None or not os.path.isdir(
            os.path.join(os.environ.get("ORT_NODE_MODULES", "/nonexistent"), "onnxruntime-node")):
        if os.environ.get("CI") == "true":
            print("backend-convert: node or onnxruntime-node ($ORT_NODE_MODULES) not available: "
                  "FAILED (CI=true: the test must run)")
            return 1
        print("backend-convert: node or onnxruntime-node ($ORT_NODE_MODULES) not available: skipped")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    models = []
    for d in data_dirs:
        for suite in sorted(os.listdir(d)):
            sd = os.path.join(d, suite)
            if not os.path.isdir(sd):
                continue
            for t in sorted(os.listdir(sd)):
                m = os.path.join(sd, t, "model.onnx")
                ds = os.path.join(sd, t, "test_data_set_0")
                if os.path.isfile(m) and os.path.isdir(ds):
                    v = header_opset(m)
                    if v is not None:
                        models.append((m, ds, f"{suite}_{t}", v))

    here = os.path.dirname(os.path.abspath(__file__))
    shared_models = []  # (path, ort_compare args, once)
    if with_shared:
        args = {}
        with open(os.path.join(here, "real_model_args.txt")) as f:
            for line in f:
                line = line.split("#", 1)[0].split()
                if line:
                    args[line[0]] = line[1:]
        for sub in ("real", "light"):
            d = os.path.join(shared, "models", sub)
            for n in sorted(os.listdir(d)):
                if n.endswith(".onnx"):
                    a = list(args.get(n[:-5], ["--sets", "1"] if sub == "light" else []))
                    once = "once" in a
                    a = [x for x in a if x != "once"]
                    shared_models.append((os.path.join(d, n), a, once, header_opset(os.path.join(d, n))))
    # A folder walk checks a minimum count: a missing or emptied corpus is a
    # failure, not a run that converts nothing (1,072 backend models, 16
    # shared ones today).
    if len(models) < 1000 or (with_shared and len(shared_models) < 16):
        print(f"backend-convert: {len(models)} backend models (< 1000) or {len(shared_models)} "
              f"shared models (< 16) found under {data_dirs} and {shared}/models: FAILED")
        return 1

    failures = 0
    summary = []
    for target, up in [(t, True) for t in ups] + [(t, False) for t in downs]:
        todo = [x for x in models if (x[3] <= target if up else x[3] > target)]
        tdir = os.path.join(work, f"{'up' if up else 'down'}{target}")
        os.makedirs(tdir)

        def convert(x):
            m, ds, name, _ = x
            out = os.path.join(tdir, name + ".onnx")
            r = subprocess.run([opt, "-convert-opset", f"--target-opset={target}", m, "-o", out],
                               capture_output=True, text=True)
            return x, out, r

        refused, failed, listed = [], [], []
        with cf.ThreadPoolExecutor(max_workers=2) as ex:
            for (m, ds, name, v), out, r in ex.map(convert, todo):
                if r.returncode != 0:
                    located = "convert-opset: graph" in r.stderr
                    known = KNOWN_UP_REFUSALS.get(name)
                    if located and (not up or (known and known in r.stderr)):
                        refused.append(name)
                    else:
                        failed.append(name)
                        print(f"FAIL: {name} (opset {v}) -> {target}: {r.stderr.strip()[:600]}")
                    continue
                got = header_opset(out)
                if got != target:
                    failed.append(name)
                    print(f"FAIL: {name} -> {target}: the result imports opset {got}")
                    continue
                listed.append(f"{m} {out} {ds}")
        lst = os.path.join(tdir, "list.txt")
        with open(lst, "w") as f:
            f.write("\n".join(listed) + "\n")
        env = dict(os.environ, SHARED_TOOLS=os.path.join(os.path.abspath(shared), "tools"),
                   LABEL=f"{'up' if up else 'down'} to {target}", KERNEL_GAPS_OK="1")
        r = subprocess.run(["node", os.path.join(here, "backend_o2.js"), lst],
                           capture_output=True, text=True, env=env)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        node_ok = r.returncode == 0
        if not node_ok:
            failures += 1
        failures += len(failed)
        line = (f"backend-convert {'up' if up else 'down'} to {target}: {len(todo)} models, "
                f"{len(listed)} converted, {len(refused)} refused (located), {len(failed)} failed")
        if shared_models:
            sp = sf = sr = 0
            for m, a, once, v in shared_models:
                if (v > target if up else v <= target) or (once and target != (ups or downs)[0]):
                    continue
                name = os.path.basename(m)[:-5]
                out = os.path.join(tdir, name + ".onnx")
                cr = subprocess.run([opt, "-convert-opset", f"--target-opset={target}", m, "-o", out],
                                    capture_output=True, text=True)
                if cr.returncode != 0:
                    if "convert-opset: graph" in cr.stderr and not up:
                        sr += 1
                        refused.append(name)
                    else:
                        sf += 1
                        print(f"FAIL: {name} (opset {v}) -> {target}: {cr.stderr.strip()[:600]}")
                    continue
                c = subprocess.run(["node", os.path.join(shared, "tools", "ort_compare.js"), m, out] + a,
                                   capture_output=True, text=True)
                if c.returncode == 0 and header_opset(out) == target:
                    sp += 1
                    os.remove(out)
                else:
                    sf += 1
                    print(f"FAIL: {name} -> {target}: {(c.stdout + c.stderr).strip()[-600:]}")
            failures += sf
            failed += ["shared"] * sf
            line += f"; shared models: {sp} same outputs, {sr} refused, {sf} failed"
        print(line)
        if refused:
            print("  refused: " + " ".join(refused))
        summary.append(line)
        if node_ok and not failed:
            shutil.rmtree(tdir, ignore_errors=True)
    print("\n".join(summary))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
