"""Small helpers shared by the OutputSafety scripts: models with external
data written directly (python3-onnx for the messages), and a checker that a
model file reads the bytes it should."""
import os

import onnx
from onnx import TensorProto, helper


def ext_model(path, data_name, ntensors, nbytes, fill, sparse=False):
    """Writes `path` whose initializers w0..w{n-1} (float, nbytes each) live
    in `data_name` beside it at 4096-aligned offsets; tensor i is filled with
    the byte (fill + i) % 256, or is a hole of a sparse file."""
    d = os.path.dirname(path) or "."
    n = nbytes // 4
    inits, nodes, outs = [], [], []
    off = 0
    with open(os.path.join(d, data_name), "wb") as f:
        for i in range(ntensors):
            t = TensorProto()
            t.name = "w%d" % i
            t.data_type = TensorProto.FLOAT
            t.dims.append(n)
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", data_name), ("offset", str(off)),
                         ("length", str(nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
            if sparse:
                f.truncate(off + nbytes)
            else:
                f.seek(off)
                f.write(bytes([(fill + i) % 256]) * nbytes)
            off += (nbytes + 4095) // 4096 * 4096
            inits.append(t)
            nodes.append(helper.make_node("Add", ["x", t.name], ["y%d" % i]))
            outs.append(helper.make_tensor_value_info("y%d" % i, TensorProto.FLOAT, [n]))
    g = helper.make_graph(nodes, "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                          outs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def tensor_bytes(model_path, t, files):
    """The bytes of tensor `t` of the model at model_path (inline or
    external; `files` caches open data files, as a reader does)."""
    if t.data_location != TensorProto.EXTERNAL:
        return t.raw_data
    ext = {e.key: e.value for e in t.external_data}
    f = files[ext["location"]]
    f.seek(int(ext.get("offset", "0")))
    return f.read(int(ext["length"]))


def read_fills(model_path):
    """For each initializer, the single byte value it is filled with, or
    raises if the model does not load, is dangling or holds mixed bytes.
    Like a real reader, it opens each data file once, right after reading
    the model."""
    m = onnx.load(model_path, load_external_data=False)
    d = os.path.dirname(model_path) or "."
    files = {}
    for t in m.graph.initializer:
        for e in t.external_data:
            if e.key == "location" and e.value not in files:
                files[e.value] = open(os.path.join(d, e.value), "rb")
    fills = []
    for t in m.graph.initializer:
        b = tensor_bytes(model_path, t, files)
        n = 1
        for dim in t.dims:
            n *= dim
        if len(b) != 4 * n:
            raise ValueError("%s: %s has %d bytes, not %d" % (model_path, t.name, len(b), 4 * n))
        if b.count(b[:1]) != len(b):
            raise ValueError("%s: %s holds mixed bytes" % (model_path, t.name))
        fills.append(b[0])
    for f in files.values():
        f.close()
    return fills
