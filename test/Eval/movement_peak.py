"""Peak resident memory of onnxir-run on data movement over big weights.

    movement_peak.py DIR LIMIT_MIB

Writes DIR/m.onnx and DIR/m.bin (a sparse file of external weights: a
32 MiB int8 table, each row's first bytes random, and an 8 MiB float
matrix), runs `onnxir-run` on a graph that gathers two rows of the table,
transposes the matrix and slices and concatenates the results, checks each
output against numpy, and prints the child's peak resident set against
LIMIT_MIB. Note [Data movement in bytes]: the kernels copy stored bytes, so
the run touches the two rows and the matrix; decoding the table into int64
elements took 256 MiB.
"""
import os
import resource
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

d, limit = sys.argv[1], float(sys.argv[2])
os.makedirs(os.path.join(d, "out"), exist_ok=True)
V, H = 8192, 4096  # the int8 table: 32 MiB
R, C = 1024, 2048  # the float matrix: 8 MiB
rng = np.random.default_rng(11)
table_rows = {3: rng.integers(-128, 128, H, dtype=np.int8),
              8000: rng.integers(-128, 128, H, dtype=np.int8)}
mat = rng.standard_normal((R, C)).astype(np.float32)
inits, offset = [], 0


def ext(name, dtype, dims, size):
    global offset
    t = TensorProto(name=name, data_type=dtype, dims=dims, data_location=TensorProto.EXTERNAL)
    for k, v in (("location", "m.bin"), ("offset", str(offset)), ("length", str(size))):
        e = t.external_data.add()
        e.key, e.value = k, v
    start = offset
    offset += size
    inits.append(t)
    return start


table_at = ext("table", TensorProto.INT8, [V, H], V * H)
mat_at = ext("mat", TensorProto.FLOAT, [R, C], R * C * 4)
ids = np.array([[3, 8000]], dtype=np.int64)
nodes = [
    helper.make_node("Gather", ["table", "ids"], ["rows"]),                   # [1, 2, H] int8
    helper.make_node("Transpose", ["mat"], ["matT"], perm=[1, 0]),            # [C, R]
    helper.make_node("Slice", ["matT", "s0", "s1", "s2", "s3"], ["corner"]),  # rows 0, 2, 4 of matT
    helper.make_node("Concat", ["corner", "corner"], ["both"], axis=0),
]
small = [helper.make_tensor("ids", TensorProto.INT64, [1, 2], ids.ravel().tolist()),
         helper.make_tensor("s0", TensorProto.INT64, [1], [0]),
         helper.make_tensor("s1", TensorProto.INT64, [1], [5]),
         helper.make_tensor("s2", TensorProto.INT64, [1], [0]),
         helper.make_tensor("s3", TensorProto.INT64, [1], [2])]
g = helper.make_graph(nodes, "g", [],
                      [helper.make_tensor_value_info("rows", TensorProto.INT8, [1, 2, H]),
                       helper.make_tensor_value_info("both", TensorProto.FLOAT, [6, R])],
                      inits + small)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(d, "m.onnx"))
with open(os.path.join(d, "m.bin"), "wb") as f:
    f.truncate(offset)
    for row, vals in table_rows.items():
        f.seek(table_at + row * H)
        f.write(vals.tobytes())
    f.seek(mat_at)
    f.write(mat.tobytes())

out = os.path.join(d, "out")
r = subprocess.run(["onnxir-run", os.path.join(d, "m.onnx"), "-o", out],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
sys.stdout.write(r.stderr)
if r.returncode != 0:
    sys.exit("onnxir-run failed: %d" % r.returncode)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
want_rows = np.stack([table_rows[3], table_rows[8000]])[None]
corner = mat.T[0:5:2]
ok = np.array_equal(np.load(os.path.join(out, "rows.npy")), want_rows) and \
    np.array_equal(np.load(os.path.join(out, "both.npy")), np.concatenate([corner, corner]))
print("outputs equal numpy's" if ok else "outputs differ from numpy's")
print("peak resident %s %g MiB" % ("within" if peak <= limit else "over", limit),
      "(%.1f MiB)" % peak, file=sys.stderr)
print("peak resident %s %g MiB" % ("within" if peak <= limit else "over", limit))
