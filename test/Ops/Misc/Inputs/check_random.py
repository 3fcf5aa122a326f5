"""Compares three runs of random-run.onnxtxt (seeds 7, 7, 8) and checks each
output's range; prints the names for which each property holds."""
import os
import sys

import numpy as np

a, b, c = (sys.argv[1], sys.argv[2], sys.argv[3])
names = sorted(f[:-4] for f in os.listdir(a) if f.endswith(".npy"))
load = lambda d, n: np.load(os.path.join(d, n + ".npy"))
same = [n for n in names if np.array_equal(load(a, n), load(b, n))]
other = [n for n in names if not np.array_equal(load(a, n), load(c, n))]
p = np.array([[0.1, 0.5, 0.9], [0.0, 1.0, 0.3]])


def in_range(n, v):
    if n == "u":
        return v.dtype == np.float32 and (v >= -1).all() and (v < 1).all()
    if n == "ul":
        return (v >= 2).all() and (v < 3).all()
    if n == "n":
        return v.dtype == np.float64 and np.isfinite(v).all()
    if n == "nl":
        return np.isfinite(v).all() and abs(v.mean() - 5) < 2
    if n in ("b", "bi"):
        return (set(np.unique(v.astype(np.float64)).tolist()) <= {0.0, 1.0}
                and v[1, 0] == 0 and v[1, 1] == 1)
    if n == "m":
        return ((v >= 0).all() and (v < 3).all() and not (v[1] == 1).any()
                and len(set(v[0].tolist())) > 1)
    return False


ok = [n for n in names if all(in_range(n, load(d, n)) for d in (a, b, c))]
print("same seed same outputs:", " ".join(same))
print("another seed, other outputs:", " ".join(other))
print("in range:", " ".join(ok))
