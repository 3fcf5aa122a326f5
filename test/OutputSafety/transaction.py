#!/usr/bin/python3
"""transaction.py WORKDIR ITERATIONS: the save transaction for a model with
external data (Note [Save transaction] in lib/Serialize/ModelFile.cpp).

1. kill -9 at random points: onnx-opt rewrites out.onnx + w.bin from input A
   or input B (different bytes) and is SIGKILLed after a random delay; after
   every kill out.onnx must load and read exactly A's bytes or B's, never a
   mix or a dangling reference.
2. Eight concurrent writers (four from A, four from B) of the same output,
   with a reader polling it meanwhile: the reader never sees wrong bytes,
   and the pair left behind matches.
"""
import os
import random
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import ext_model, read_fills  # noqa: E402

work = sys.argv[1]
iterations = int(sys.argv[2])
os.makedirs(work, exist_ok=True)
a, b = os.path.join(work, "a.onnx"), os.path.join(work, "b.onnx")
ext_model(a, "a.bin", 6, 2 << 20, 0x10)
ext_model(b, "b.bin", 6, 2 << 20, 0x80)
A, B = read_fills(a), read_fills(b)
out = os.path.join(work, "out.onnx")


def save(src):
    return ["onnx-opt", src, "-o", out, "--external-data=w.bin",
            "--external-data-threshold=1KiB"]


def check(what):
    try:
        got = read_fills(out)
    except Exception as e:  # noqa: BLE001
        print("FAIL (%s): %s" % (what, e))
        sys.exit(1)
    if got not in (A, B):
        print("FAIL (%s): out.onnx reads %s" % (what, got))
        sys.exit(1)
    return got


t0 = time.time()
subprocess.check_call(save(a))
duration = time.time() - t0
check("first save")
rng = random.Random(int(os.environ.get("SEED", "14")))
killed = completed = 0
for i in range(iterations):
    src = b if i % 2 == 0 else a
    p = subprocess.Popen(save(src), stderr=subprocess.DEVNULL)
    time.sleep(rng.uniform(0, duration * 1.2))
    p.send_signal(signal.SIGKILL)
    rc = p.wait()
    got = check("kill at iteration %d" % i)
    if rc == -signal.SIGKILL:
        killed += 1
    else:
        completed += 1
        if rc != 0 or got != read_fills(src):
            print("FAIL: a completed save (rc %d) left the old model" % rc)
            sys.exit(1)
print("kill -9: out.onnx always consistent")
print("(%d saves killed, %d completed)" % (killed, completed))
for n in os.listdir(work):
    if ".tmp." in n:
        os.remove(os.path.join(work, n))  # SIGKILL cannot clean up; we do
if killed == 0:
    print("FAIL: no save was ever killed mid-way; the test did not test anything")
    sys.exit(1)

# Concurrent writers, with a reader.
stop = threading.Event()
bad = []


def reader():
    while not stop.is_set():
        try:
            got = read_fills(out)
        except FileNotFoundError:
            continue  # the old data went away after we read the old model
        except Exception as e:  # noqa: BLE001
            if "No such file" in str(e):
                continue
            bad.append(str(e))
            return
        if got not in (A, B):
            bad.append("read %s" % got)
            return


for round_ in range(4):
    th = threading.Thread(target=reader)
    th.start()
    procs = [subprocess.Popen(save(a if k % 2 else b)) for k in range(8)]
    rcs = [p.wait() for p in procs]
    stop.set()
    th.join()
    stop.clear()
    if any(rcs):
        print("FAIL: concurrent writers exited with %s" % rcs)
        sys.exit(1)
    if bad:
        print("FAIL: a reader saw %s" % bad[0])
        sys.exit(1)
    check("after 8 concurrent writers, round %d" % round_)
left = [n for n in os.listdir(work) if ".tmp." in n]
if left:
    print("FAIL: temporaries left after normal exits: %s" % left)
    sys.exit(1)
print("concurrent writers: consistent")
