"""-O2 with --input-shape on every shared model must reach its fixed point.

Usage: o2_fixed_point.py ONNX_OPT SHARED_MODELS_DIR
Each main-graph input (initializers excluded) gets its declared shape with
every symbolic or unknown dim set to 1, so infer-shapes re-applies the same
shape in every round; before the fix that counted as a change and -O2 always
stopped at its round cap with a note. Prints one line per model.
"""
import glob
import subprocess
import sys

import onnx

opt, shared = sys.argv[1], sys.argv[2]
models = sorted(glob.glob(shared + "/real/*.onnx") + glob.glob(shared + "/light/*.onnx"))
if not models:
    sys.exit("no shared models under " + shared)
failed = 0
for f in models:
    m = onnx.load(f, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    shapes = []
    for i in m.graph.input:
        if i.name in inits or not i.type.HasField("tensor_type"):
            continue
        dims = [str(d.dim_value) if d.HasField("dim_value") else "1"
                for d in i.type.tensor_type.shape.dim]
        shapes.append(i.name + ":" + ",".join(dims))
    r = subprocess.run([opt, "-O2", "--input-shape=" + ";".join(shapes), f, "-o", "/dev/null"],
                       capture_output=True, text=True)
    ok = r.returncode == 0 and "fixed point" not in r.stderr
    failed += not ok
    print(("ok " if ok else "FAIL ") + f.split("/")[-1] + " " + r.stderr.strip().replace("\n", " | "))
sys.exit(1 if failed else 0)
