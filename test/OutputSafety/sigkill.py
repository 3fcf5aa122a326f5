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
    # x typed float (a main-graph input needs a type to load).
    graph += field(11, field(1, b"x") + field(2, field(1, vfield(1, 1))))
    graph += field(2, b"big")
    f.write(field(7, bytes(graph)))

old = b"the previous target\n"
# The kill comes once the save's temporary file exists (the save is under
# way); a run that ends before that is tried again with a fresh target. A
# run that never gets killed mid-save has tested nothing and fails (issue 48
# item 4: this test used to pass with a note when onnx-opt won the race).
ref = os.path.join(work, "reference.onnx")
subprocess.run(["onnx-opt", big, "-o", ref], check=True)
complete = open(ref, "rb").read()
os.remove(ref)
killed_mid_save = False
for attempt in range(5):
    with open(target, "wb") as f:
        f.write(old)
    p = subprocess.Popen(["onnx-opt", big, "-o", target])
    saving = False
    deadline = time.time() + 120
    while p.poll() is None and time.time() < deadline:
        if any(".tmp." in n for n in os.listdir(work)):
            saving = True
            break
        time.sleep(0.002)
    if saving:
        p.send_signal(signal.SIGKILL)
    killed = p.wait() == -signal.SIGKILL
    content = open(target, "rb").read()
    for name in os.listdir(work):
        if ".tmp." in name:
            os.remove(os.path.join(work, name))  # SIGKILL cannot clean up; we do
    # A kill after the rename (during cleanup, before exit) leaves the complete
    # new model: the old-or-new rule holds.
    if content != old and content != complete:
        print("FAIL: target is neither the old nor the new model after %s (%d bytes)"
              % ("SIGKILL" if killed else "the run", len(content)))
        sys.exit(1)
    if killed and content == old:
        killed_mid_save = True
        break
os.remove(big)
if not killed_mid_save:
    print("FAIL: no run was killed while saving in 5 tries; the test did not test anything")
    sys.exit(1)
print("sigkill: target intact (attempt %d)" % (attempt + 1))
