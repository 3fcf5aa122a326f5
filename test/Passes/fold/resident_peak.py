"""Peak resident memory of onnx-opt on a model with 72 MiB of external weights.

    resident_peak.py DIR LIMIT_MIB onnx-opt-args...

Writes DIR/m.onnx and DIR/m.bin (a sparse file: each weight's first page is
random, so no two differ only in holes, and `e` repeats `d`'s page so that
dedup-initializers merges them), runs onnx-opt on it with the arguments
(the output DIR/out/o.onnx with its weights in o.bin), prints onnx-opt's
stderr, checks that the output's weights are the input's, byte for byte,
and prints the child's peak resident set against LIMIT_MIB (Note [Resident
pages of mapped bytes], Note [Size limit before the kernel]).
"""
import os
import resource
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

d, limit, args = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
os.makedirs(os.path.join(d, "out"), exist_ok=True)
R, C = 2048, 2048  # 16 MiB of float32
rng = np.random.default_rng(7)
inits, pages, offset = [], [], 0


def ext(name, dtype, dims, page):
    global offset
    t = TensorProto(name=name, data_type=dtype, dims=dims,
                    data_location=TensorProto.EXTERNAL)
    size = int(np.prod(dims)) * (2 if dtype == TensorProto.FLOAT16 else 4)
    for k, v in (("location", "m.bin"), ("offset", str(offset)), ("length", str(size))):
        e = t.external_data.add()
        e.key, e.value = k, v
    pages.append((offset, page))
    offset += size
    inits.append(t)


page = lambda: rng.integers(0, 64, 4096, dtype=np.uint8).tobytes()
ext("a", TensorProto.FLOAT, [C, R], page())         # behind Transpose: 32 MiB result
ext("b", TensorProto.FLOAT16, [R, C], page())       # behind Cast: 32 MiB result
ext("c", TensorProto.FLOAT, [C, R], page())
same = page()
ext("dd", TensorProto.FLOAT, [R, C], same)
ext("e", TensorProto.FLOAT, [R, C], same)           # equal to dd: merged
nodes = [
    helper.make_node("Transpose", ["a"], ["at"], perm=[1, 0]),
    helper.make_node("MatMul", ["x", "at"], ["y1"]),          # [1, C]
    helper.make_node("Cast", ["b"], ["bf"], to=TensorProto.FLOAT),
    helper.make_node("MatMul", ["x", "bf"], ["y2"]),          # [1, C]
    helper.make_node("Add", ["y1", "y2"], ["y3"]),
    helper.make_node("MatMul", ["y3", "c"], ["y4"]),          # [1, R]
    helper.make_node("MatMul", ["y4", "dd"], ["y5"]),
    helper.make_node("MatMul", ["y4", "e"], ["y6"]),
    helper.make_node("Add", ["y5", "y6"], ["y"]),
]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", R])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", C])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(d, "m.onnx"))
with open(os.path.join(d, "m.bin"), "wb") as f:
    f.truncate(offset)
    for off, p in pages:
        f.seek(off)
        f.write(p)

r = subprocess.run(["onnx-opt"] + args + [os.path.join(d, "m.onnx"), "-o",
                                          os.path.join(d, "out", "o.onnx"), "--external-data=o.bin"],
                   stderr=subprocess.PIPE, text=True)
sys.stdout.write(r.stderr)
if r.returncode != 0:
    sys.exit("onnx-opt failed: %d" % r.returncode)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
src = {t.name: numpy_helper.to_array(t, d).tobytes() for t in inits}
out = onnx.load(os.path.join(d, "out", "o.onnx"))
for t in out.graph.initializer:
    if t.name in src and numpy_helper.to_array(t, os.path.join(d, "out")).tobytes() != src[t.name]:
        sys.exit("weight %s changed" % t.name)
print("weights kept: %s" % " ".join(sorted(t.name for t in out.graph.initializer)))
print("peak resident %s %d MiB (%.0f MiB)" % ("within" if peak <= limit else "OVER", limit, peak))
if peak > limit:
    sys.exit("peak resident %.0f MiB > %d MiB" % (peak, limit))
