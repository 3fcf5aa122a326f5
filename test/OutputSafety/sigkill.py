#!/usr/bin/python3
"""sigkill.py WORKDIR: writes a ~400 MB model, starts `onnx-opt -o target`
over an existing target, SIGKILLs it while it runs, and checks that the target
still has its old content."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from onnxtest import field, vfield  # noqa: E402

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
big = os.path.join(work, "big.onnx")
target = os.path.join(work, "target.onnx")

# A model with four 100 MB raw initializers, encoded directly (fast).
n = 25 * 1024 * 1024  # floats per tensor: 100 MB
blob = bytes(4 * n)
with open(big, "wb") as f:
    f.write(vfield(1, 8))
    f.write(field(8, vfield(2, 17)))
    graph = bytearray()
    for i in range(4):
        t = vfield(1, n) + vfield(2, 1) + field(8, b"w%d" % i) + field(9, blob)
        graph += field(5, t)
        graph += field(1, field(1, b"x") + field(1, b"w%d" % i) + field(2, b"y%d" % i) +
                       field(4, b"Add"))
        graph += field(12, field(1, b"y%d" % i))
    graph += field(11, field(1, b"x"))
    graph += field(2, b"big")
    f.write(field(7, bytes(graph)))

old = b"the previous target\n"
with open(target, "wb") as f:
    f.write(old)

p = subprocess.Popen(["onnx-opt", big, "-o", target])
time.sleep(0.8)
p.send_signal(signal.SIGKILL)
# Killed only if it was still running when the signal came (else it exited
# normally, which polling before the kill cannot rule out).
killed = p.wait() == -signal.SIGKILL
content = open(target, "rb").read()
for name in os.listdir(work):
    if ".tmp." in name:
        os.remove(os.path.join(work, name))  # SIGKILL cannot clean up; we do
# A kill after the rename (during cleanup, before exit) leaves the complete
# new model: compare with an uninterrupted run's output.
ref = os.path.join(work, "reference.onnx")
subprocess.run(["onnx-opt", big, "-o", ref], check=True)
complete = open(ref, "rb").read()
os.remove(ref)
os.remove(big)
if content != old and content == complete:
    killed = False  # the old-or-new rule holds: this is the whole new model
if content != old:
    if killed:
        print("FAIL: target changed after SIGKILL (%d bytes)" % len(content))
        sys.exit(1)
    # onnx-opt finished before the kill: then the target is the new model.
    print("note: onnx-opt finished before the kill; target replaced atomically")
print("sigkill: target intact" if content == old else "sigkill: completed run")
