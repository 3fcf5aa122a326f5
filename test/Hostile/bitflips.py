#!/usr/bin/python3
"""bitflips.py MODEL WORKDIR N: flips random bits in MODEL N times (seeded)
and runs `onnx-opt -O1` on each; fails on any exit status other than 0 or 1."""
import os
import random
import subprocess
import sys

model, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(work, exist_ok=True)
data = bytearray(open(model, "rb").read())
rng = random.Random(1234)
bad = 0
for i in range(n):
    d = bytearray(data)
    for _ in range(rng.choice([1, 2, 8])):
        # Most of a model is weights; aim half the flips at the first 4 KiB,
        # where the graph structure is.
        pos = rng.randrange(min(len(d), 4096)) if rng.random() < 0.5 else rng.randrange(len(d))
        d[pos] ^= 1 << rng.randrange(8)
    path = os.path.join(work, "flip%d.onnx" % i)
    open(path, "wb").write(d)
    r = subprocess.run(["onnx-opt", "-O1", path, "-o", path + ".out"], capture_output=True)
    if r.returncode not in (0, 1):
        bad += 1
        print("flip %d: exit status %d\n%s" % (i, r.returncode, r.stderr.decode()[-2000:]))
    elif r.returncode == 1 and b"onnx-opt: error: " not in r.stderr:
        bad += 1
        print("flip %d: exit 1 without a located message" % i)
print("bitflips: %d runs, %d bad" % (n, bad))
sys.exit(1 if bad else 0)
