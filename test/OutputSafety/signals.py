#!/usr/bin/python3
"""signals.py WORKDIR: SIGINT, SIGTERM, SIGHUP and SIGXFSZ during a save end
the process (by that signal) but leave no temporary file behind
(Note [Signals] in lib/Serialize/FileIO.h)."""
import os
import resource
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import ext_model  # noqa: E402

work = sys.argv[1]
os.makedirs(os.path.join(work, "in"), exist_ok=True)
out_dir = os.path.join(work, "out")
os.makedirs(out_dir, exist_ok=True)
src = os.path.join(work, "in", "e.onnx")
# 4 x 48 MiB of holes: cheap to make, but copying them takes a while.
ext_model(src, "e.bin", 4, 48 << 20, 0, sparse=True)
out = os.path.join(out_dir, "e.onnx")


def temps():
    return [n for n in os.listdir(out_dir) if ".tmp." in n]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    for attempt in range(5):
        # lit runs tests with SIGINT ignored, and an ignored signal stays
        # ignored in children: restore the default first.
        p = subprocess.Popen(["onnx-opt", src, "-o", out], stderr=subprocess.PIPE,
                             preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
        seen = False
        deadline = time.time() + 30
        while p.poll() is None and time.time() < deadline:
            if temps():
                seen = True
                break
        if not seen:
            p.wait()
            for n in os.listdir(out_dir):
                os.remove(os.path.join(out_dir, n))
            continue  # finished before we saw it writing: try again
        p.send_signal(sig)
        rc = p.wait()
        if rc == 0:
            for n in os.listdir(out_dir):
                os.remove(os.path.join(out_dir, n))
            continue
        if rc != -sig:
            fail("%s: exit status %d, stderr %r" % (sig.name, rc, p.stderr.read()))
        if temps():
            fail("%s left %s" % (sig.name, temps()))
        if os.path.exists(out):
            fail("%s: an output was committed" % sig.name)
        print("%s: no temporary left" % sig.name)
        break
    else:
        fail("%s: never caught a save in progress" % sig.name)

# SIGXFSZ: the file size limit is hit while writing the data.
def limit():
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))


p = subprocess.Popen(["onnx-opt", src, "-o", out], preexec_fn=limit, stderr=subprocess.PIPE)
rc = p.wait()
if rc != -signal.SIGXFSZ:
    fail("SIGXFSZ: exit status %d, stderr %r" % (rc, p.stderr.read()))
if temps() or os.path.exists(out):
    fail("SIGXFSZ left %s" % os.listdir(out_dir))
print("SIGXFSZ: no temporary left")
