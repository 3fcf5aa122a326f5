#!/usr/bin/python3
"""oom.py WORKDIR: allocation failure (RLIMIT_AS set in the child) ends in
`onnx-opt: error: out of memory while ...` and exit 1, never an abort, and
leaves no temporary file, at whatever stage it happens (load or save)."""
import os
import resource
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from onnxtest import field, vfield  # noqa: E402


work = sys.argv[1]
os.makedirs(work, exist_ok=True)
out_dir = os.path.join(work, "out")
os.makedirs(out_dir, exist_ok=True)
# A string tensor of 1.5M empty strings (3 MB, ~50x that once lifted) and a
# float tensor that --external-data moves (so a temporary exists while the
# strings are lowered).
n = 1_500_000
strings = vfield(1, n) + vfield(2, 8) + field(8, b"s") + b"\x32\x00" * n
floats = vfield(1, 1024) + vfield(2, 1) + field(8, b"f") + field(9, bytes(4096))
graph = (field(5, floats) + field(5, strings) + field(2, b"g") + field(12, field(1, b"s")) +
         field(12, field(1, b"f")))
model = os.path.join(work, "strings.onnx")
with open(model, "wb") as f:
    f.write(vfield(1, 8) + field(8, vfield(2, 17)) + field(7, graph))
cmd = ["onnx-opt", model, "-o", os.path.join(out_dir, "out.onnx"), "--external-data=d.bin",
       "--external-data-threshold=1K"]

subprocess.check_call(cmd)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
stages = set()
# From 150 MB up: the peak is the load's (a save no longer lifts the output it
# replaces, which made the saves of this loop the first to run out).
for k in range(0, 9):
    limit = (150 << 20) + peak * k // 6

    def pre(limit=limit):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    r = subprocess.run(cmd, preexec_fn=pre, capture_output=True)
    err = r.stderr.decode(errors="replace")
    left = [x for x in os.listdir(out_dir) if ".tmp." in x]
    if left:
        print("FAIL: limit %d MB left %s" % (limit >> 20, left))
        sys.exit(1)
    if r.returncode == 0:
        continue
    if r.returncode != 1 or "onnx-opt: error: out of memory while" not in err:
        print("FAIL: limit %d MB: exit status %d, %r" % (limit >> 20, r.returncode, err))
        sys.exit(1)
    stages.add(err.split("out of memory while ")[1].strip())
if not stages:
    print("FAIL: no limit ran out of memory")
    sys.exit(1)
print("out of memory reported, nothing left behind")
print("stages: " + ", ".join(sorted(stages)))
