#!/usr/bin/python3
"""Generates a decoder-shaped model with GBs of external weights (issue 44 target 5).

    /usr/bin/python3 bench/big_decoder.py --dir /tmp/bigdec --gb 5

writes DIR/decoder.onnx (a few KB) and DIR/decoder.bin (the weights, a sparse
file: the small tensors and each big one's first 4 KiB, random so that no two
weights are equal, are written; the rest are holes that read as zeros). The graph is what a Llama-style export looks like to a folder:
token embedding (Gather) with dynamic [batch, seq] ids, per layer a
LayerNormalization, Q/K/V/O projections, 4-head attention with a causal
additive mask, and a gated MLP; a tied LM head reads the embedding through a
Transpose. Some weights sit behind the ops -O2 would fold if it could, so
that a run shows what folding reads and allocates:

  * Wk is stored transposed and read through Transpose (a 64 MB result);
  * Wv is float16 behind a Cast to float (64 MB);
  * the MLP's up projection is int8 behind DequantizeLinear (180 MB);
  * the LM head is Transpose(embedding) (512 MB at the default vocabulary).

Each is far above fold-constants' default size limit (1 MiB), so -O2 must
decline them without reading them; a run with --fold-size-limit raised shows
what a fold of them would cost. Layers are added until the weights reach
--gb GB.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--gb", type=float, default=5.0)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ff", type=int, default=11008)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--opset", type=int, default=17)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    d, ff, heads = a.hidden, a.ff, a.heads
    dh = d // heads
    binName = "decoder.bin"
    binPath = os.path.join(a.dir, binName)

    inits, nodes = [], []
    small = []  # (offset, bytes) actually written; the rest stays holes
    offset = [0]
    rng = np.random.default_rng(44)

    def ext(name, dtype, dims, data=None):
        t = TensorProto()
        t.name = name
        t.data_type = dtype
        t.dims.extend(dims)
        size = int(np.prod(dims)) * {TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2,
                                      TensorProto.INT8: 1}[dtype]
        off = (offset[0] + 4095) // 4096 * 4096
        offset[0] = off + size
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", binName), ("offset", str(off)), ("length", str(size))):
            e = t.external_data.add()
            e.key, e.value = k, v
        if data is None:
            # A distinct first page, so that no two weights are equal (a
            # deduplication would otherwise merge the holes into one).
            data = rng.integers(0, 256, min(size, 4096), dtype=np.uint8)
        small.append((off, data.tobytes()))
        inits.append(t)
        return name

    def const(name, arr):
        inits.append(helper.make_tensor(name, helper.np_dtype_to_tensor_dtype(arr.dtype)
                                        if hasattr(helper, "np_dtype_to_tensor_dtype")
                                        else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype],
                                        arr.shape, arr.flatten().tolist()))
        return name

    def node(op, ins, outs, **attrs):
        nodes.append(helper.make_node(op, ins, outs, **attrs))
        return outs[0]

    ones = np.ones(d, np.float32)
    zeros = np.zeros(d, np.float32)
    emb = ext("embed", TensorProto.FLOAT, [a.vocab, d])
    const("split_heads", np.array([0, 0, heads, dh], np.int64))
    const("merge_heads", np.array([0, 0, d], np.int64))
    const("scale", np.array(1.0 / np.sqrt(dh), np.float32))
    const("dq_scale", np.array(0.01, np.float32))
    const("dq_zero", np.array(0, np.int8))
    const("neg_big", np.array(-1e9, np.float32))
    const("zero_f", np.array(0.0, np.float32))
    const("one_i", np.array(1, np.int64))
    const("zero_i", np.array(0, np.int64))
    # Causal mask from the sequence length: Trilu of ones [seq, seq], Where.
    x = node("Gather", [emb, "ids"], ["x0"])
    node("Shape", ["ids"], ["ids_shape"])
    node("Gather", ["ids_shape", "one_i"], ["seq"], axis=0)
    node("Unsqueeze", ["seq", "axis1_0"], ["seq1"])
    const("axis1_0", np.array([0], np.int64))
    node("Concat", ["seq1", "seq1"], ["ss"], axis=0)
    node("ConstantOfShape", ["ss"], ["ones_ss"],
         value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))
    node("Trilu", ["ones_ss"], ["tril"], upper=0)
    node("Cast", ["tril"], ["tril_b"], to=TensorProto.BOOL)
    node("Where", ["tril_b", "zero_f", "neg_big"], ["mask"])

    def layernorm(i, tag, src):
        g = ext(f"l{i}.{tag}.g", TensorProto.FLOAT, [d], ones)
        b = ext(f"l{i}.{tag}.b", TensorProto.FLOAT, [d], zeros)
        return node("LayerNormalization", [src, g, b], [f"l{i}.{tag}"], axis=-1, epsilon=1e-5)

    total = lambda: offset[0]
    i = 0
    while total() < a.gb * (1 << 30) - 8 * d * 4 or i == 0:
        p = f"l{i}."
        h = layernorm(i, "ln1", x)
        q = node("MatMul", [h, ext(p + "wq", TensorProto.FLOAT, [d, d])], [p + "q"])
        wkT = ext(p + "wk_t", TensorProto.FLOAT, [d, d])
        k = node("MatMul", [h, node("Transpose", [wkT], [p + "wk"], perm=[1, 0])], [p + "k"])
        wv16 = ext(p + "wv_h", TensorProto.FLOAT16, [d, d])
        v = node("MatMul", [h, node("Cast", [wv16], [p + "wv"], to=TensorProto.FLOAT)], [p + "v"])
        def heads_of(t, perm):
            r = node("Reshape", [t, "split_heads"], [t + ".r"])
            return node("Transpose", [r], [t + ".t"], perm=perm)
        qh = heads_of(q, [0, 2, 1, 3])
        kh = heads_of(k, [0, 2, 3, 1])
        vh = heads_of(v, [0, 2, 1, 3])
        s = node("MatMul", [qh, kh], [p + "s"])
        s = node("Mul", [s, "scale"], [p + "ss"])
        s = node("Add", [s, "mask"], [p + "sm"])
        pr = node("Softmax", [s], [p + "p"], axis=-1)
        o = node("MatMul", [pr, vh], [p + "o"])
        o = node("Transpose", [o], [p + "ot"], perm=[0, 2, 1, 3])
        o = node("Reshape", [o, "merge_heads"], [p + "om"])
        o = node("MatMul", [o, ext(p + "wo", TensorProto.FLOAT, [d, d])], [p + "attn"])
        x = node("Add", [x, o], [p + "x1"])
        h = layernorm(i, "ln2", x)
        gate = node("MatMul", [h, ext(p + "wg", TensorProto.FLOAT, [d, ff])], [p + "gate"])
        wu8 = ext(p + "wu_q", TensorProto.INT8, [d, ff])
        wu = node("DequantizeLinear", [wu8, "dq_scale", "dq_zero"], [p + "wu"])
        up = node("MatMul", [h, wu], [p + "up"])
        sg = node("Sigmoid", [gate], [p + "sg"])
        act = node("Mul", [node("Mul", [gate, sg], [p + "silu"]), up], [p + "act"])
        dn = node("MatMul", [act, ext(p + "wd", TensorProto.FLOAT, [ff, d])], [p + "down"])
        x = node("Add", [x, dn], [p + "x2"])
        i += 1
    h = layernorm(i, "lnf", x)
    head = node("Transpose", [emb], ["embed_t"], perm=[1, 0])
    node("MatMul", [h, head], ["logits"])

    g = helper.make_graph(
        nodes, "decoder",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", a.vocab])],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", a.opset)],
                          producer_name="big_decoder.py")
    onnx.save(m, os.path.join(a.dir, "decoder.onnx"))
    with open(binPath, "wb") as f:
        f.truncate(offset[0])
        for off, data in small:
            f.seek(off)
            f.write(data)
    print(f"{a.dir}/decoder.onnx: {i} layers, {len(nodes)} nodes, "
          f"{offset[0] / (1 << 30):.2f} GiB of external weights")


if __name__ == "__main__":
    main()
