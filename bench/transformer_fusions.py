#!/usr/bin/python3
"""transformer_fusions.py ONNX_OPT WORK_DIR [--runs N] [--batch B] [--seq S]

The table of bench/README.md "2026-11-27: transformer fusions (issue 28)":
the models of the torch-fusions test (test/Transformers/torch_fusions.py:
encoder, causal decoder, ViT, nn.MultiheadAttention, RMSNorm decoder, GQA
decoder, HF-style rotary attention; tiny and seeded), exported by
python3-torch at opset 14 and 17, and for each
  - the node count of the export, after onnxruntime's basic and extended
    levels (SessionOptions.graphOptimizationLevel + optimizedModelFilePath,
    the saved model counted), and after `onnx-opt --target-opset=23 -O2`
    (24 for the static cache, whose TensorScatter starts there);
  - the fused ops of ORT extended (its contrib ops) and of ours;
  - onnxruntime's run time of each result: median of N runs, all four
    models of a row in one process and run round-robin (CPU, one thread;
    the export at ORT's default level `all`, each result with optimizations
    disabled so that each column times its own graph), input [B, S, 16]
    (ViT: [B, 3, 16, 16]; the Whisper-like encoder: log-mel frames
    [B, 8, S]; position ids 0..S-1 and an all-true padding mask where a
    model takes them; the KV-cache step: one new token [B, 1, 16]
    against caches of S past tokens, the cost of one decode step; the
    static cache: one token written after 7 into its 8 positions).
The models of issue 41's census (SWEEP_MODELS below: T5 with relative
position bias and its two FFNs, CLIP text, DistilBERT, BERT with a padding
mask and its float16 twin, nn.TransformerDecoder with cross-attention over
`memory` [B, S, 16]) are rows too; the float16 twin is counted, not timed.
Their parts that the suite has already (CLIP's attention; multi-query
attention with rotary, the suite's mqa-kv-split-rotary) are imported from
torch_fusions, not written twice. --only NAME... runs those rows alone.
Needs torch, node and $ORT_NODE_MODULES (onnxruntime-node). Prints markdown.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Transformers"))
import torch_fusions as tf  # noqa: E402  (the models and their export)
import onnx  # noqa: E402
import math  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch_fusions import D, H, F, Census, LayerNorm  # noqa: E402


# --- Issue 41's census: the styles not in the torch-fusions suite --------
# (2026-11-30; bench/README "issue 41's census of Hugging Face styles").
# Each written as its library writes it, tiny and seeded like the suite's;
# the rows are added to tf.MODELS, so tf.export exports them.


class T5LayerNorm(nn.Module):
    """T5's norm: no mean, no bias; the variance read in float32, the weight
    multiplied last (weight * x)."""
    structures = {"RMSNormalization": 1}

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(d) + 0.5)
        self.eps = eps

    def forward(self, x):
        var = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


class T5Block(Census):
    """A T5 encoder layer: T5LayerNorm, attention on unscaled scores plus a
    relative position bias (bucketed |i - j|, an Embedding of buckets per
    head), softmax in float32, a gated-GELU FFN (tanh GELU of wi_0 times
    wi_1), a final T5LayerNorm."""
    BUCKETS, MAXD = 8, 16

    def __init__(self):
        super().__init__()
        self.hd = D // H
        self.n1, self.n2, self.norm = T5LayerNorm(D), T5LayerNorm(D), T5LayerNorm(D)
        self.q, self.k, self.v, self.o = (nn.Linear(D, D, bias=False) for _ in range(4))
        self.rel = nn.Embedding(self.BUCKETS, H)
        self.wi0, self.wi1 = nn.Linear(D, F, bias=False), nn.Linear(D, F, bias=False)
        self.wo = nn.Linear(F, D, bias=False)
        self.structures = {"Attention": 1, "Attention 3-D": 1, "Gelu": 1}

    def bucket(self, rel):
        # bidirectional: half the buckets per sign, exact below max_exact,
        # logarithmic above (T5's _relative_position_bucket)
        n = self.BUCKETS // 2
        out = (rel > 0).long() * n
        rel = rel.abs()
        exact = n // 2
        large = exact + (torch.log(rel.float() / exact) / math.log(self.MAXD / exact)
                         * (n - exact)).long()
        large = torch.min(large, torch.full_like(large, n - 1))
        return out + torch.where(rel < exact, rel, large)

    def attn(self, h):
        b, s, _ = h.shape
        q, k, v = (p(h).view(b, -1, H, self.hd).transpose(1, 2) for p in (self.q, self.k, self.v))
        scores = torch.matmul(q, k.transpose(3, 2))
        ctx = torch.arange(s, dtype=torch.long)[:, None]
        mem = torch.arange(s, dtype=torch.long)[None, :]
        bias = self.rel(self.bucket(mem - ctx)).permute([2, 0, 1]).unsqueeze(0)
        scores = scores + bias
        w = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
        return self.o(torch.matmul(w, v).transpose(1, 2).contiguous().view(b, -1, D))

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        h = self.n2(x)
        g = nn.functional.gelu(self.wi0(h), approximate="tanh") * self.wi1(h)
        return self.norm(x + self.wo(g))


class T5ReluBlock(T5Block):
    """T5 v1.0's FFN: ReLU, no gate (attention and norms as T5Block)."""

    def __init__(self):
        super().__init__()
        self.structures = {"Attention": 1, "Attention 3-D": 1}

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return self.norm(x + self.wo(torch.relu(self.wi0(self.n2(x)))))


class CLIPTextLayer(Census):
    """CLIP's text encoder layer: the suite's CLIP attention (tf.CLIPTextAttention:
    Q scaled before the product, heads folded into the batch, bmm, the
    causal mask empty(B, S, S).fill_(finfo.min).triu_(1) added on a 4-D view
    of the scores), quick_gelu x * sigmoid(1.702 x), pre-norm, a final
    LayerNorm."""

    def __init__(self):
        super().__init__()
        self.n1, self.n2, self.final = LayerNorm(D), LayerNorm(D), LayerNorm(D)
        self.attn = tf.CLIPTextAttention()  # (its structures: Attention, 3-D)
        self.fc1, self.fc2 = nn.Linear(D, F), nn.Linear(F, D)

    def forward(self, x):
        x = x + self.attn.attend(self.n1(x), tf.CLIPTextAttention.causal_buffer(x))
        h = self.fc1(self.n2(x))
        h = h * torch.sigmoid(1.702 * h)
        return self.final(x + self.fc2(h))


class DistilBertLayer(Census):
    """DistilBERT's layer: q / sqrt(hd) before the product, the padding
    mask as (mask == 0).view(b, 1, 1, k).expand_as(scores), masked_fill of
    finfo.min as a tensor, erf GELU, post-norm LayerNorms."""

    def __init__(self):
        super().__init__()
        self.hd = D // H
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
        self.n1, self.n2 = LayerNorm(D), LayerNorm(D)
        self.lin1, self.lin2 = nn.Linear(D, F), nn.Linear(F, D)
        self.structures = {"Attention": 1, "Attention 3-D": 1, "Gelu": 1}

    def forward(self, x, attention_mask):
        b, s, _ = x.shape
        shape = lambda t: t.view(b, -1, H, self.hd).transpose(1, 2)  # noqa: E731
        q = shape(self.q(x)) / math.sqrt(self.hd)
        k, v = shape(self.k(x)), shape(self.v(x))
        scores = torch.matmul(q, k.transpose(2, 3))
        mask = (attention_mask == 0).view(b, 1, 1, s).expand_as(scores)
        scores = scores.masked_fill(mask, torch.tensor(torch.finfo(scores.dtype).min))
        y = torch.matmul(nn.functional.softmax(scores, dim=-1), v)
        y = self.o(y.transpose(1, 2).contiguous().view(b, -1, D))
        x = self.n1(y + x)
        return self.n2(x + self.lin2(nn.functional.gelu(self.lin1(x))))


class BertLayer(Census):
    """BERT's layer: scores / sqrt(hd) plus the extended mask
    (1 - mask[:, None, None, :]) * finfo(dtype).min, erf GELU, post-norm.
    The float16 twin (BertLayerFp16) is the same module after .half()."""

    def __init__(self):
        super().__init__()
        self.hd = D // H
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
        self.n1, self.n2 = LayerNorm(D), LayerNorm(D)
        self.lin1, self.lin2 = nn.Linear(D, F), nn.Linear(F, D)
        self.structures = {"Attention": 1, "Attention 3-D": 1, "Gelu": 1}

    fp16_export = False  # (BertLayerFp16: float16, see tf.halve)

    def forward(self, x, attention_mask):
        b, s, _ = x.shape
        shape = lambda t: t.view(b, -1, H, self.hd).permute(0, 2, 1, 3)  # noqa: E731
        q, k, v = shape(self.q(x)), shape(self.k(x)), shape(self.v(x))
        fmin = torch.finfo(torch.float16 if self.fp16_export else x.dtype).min
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * fmin
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd) + ext
        y = torch.matmul(nn.functional.softmax(scores, dim=-1), v)
        y = self.o(y.permute(0, 2, 1, 3).contiguous().view(b, s, D))
        x = self.n1(y + x)
        return self.n2(x + self.lin2(nn.functional.gelu(self.lin1(x))))


class BertLayerFp16(BertLayer):
    """BERT's layer after model.half() (tf.halve: traced in double, made
    float16; the mask fill float16's finfo.min)."""
    fp16_export, atol = True, 1e-2


class TorchDecoder(Census):
    """nn.TransformerDecoder (one batch_first layer, post-norm, ReLU) with
    a causal tgt_mask (generate_square_subsequent_mask's -inf triangle)
    and cross-attention over a memory input [batch, mem, D]."""

    def __init__(self):
        super().__init__()
        self.dec = nn.TransformerDecoder(
            nn.TransformerDecoderLayer(D, H, F, dropout=0.0, batch_first=True), 1)
        self.structures = {"Attention": 2, "Attention 3-D": 2, "LayerNormalization": 3}

    def forward(self, x, memory):
        s = x.shape[1]
        mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
        return self.dec(x, memory, tgt_mask=mask)


_PAD = lambda: torch.tensor([[1, 1, 1, 0, 0], [1] * 5]).bool()  # noqa: E731
SWEEP_MODELS = {
    "t5-gated-gelu": (T5Block, lambda: torch.randn(2, 5, D), {0: "batch", 1: "seq"}),
    "t5-relu": (T5ReluBlock, lambda: torch.randn(2, 5, D), {0: "batch", 1: "seq"}),
    "clip-text": (CLIPTextLayer, lambda: torch.randn(2, 5, D), {0: "batch", 1: "seq"}),
    "distilbert": (DistilBertLayer, lambda: (torch.randn(2, 5, D), _PAD()), {0: "batch", 1: "seq"}),
    "bert-padding": (BertLayer, lambda: (torch.randn(2, 5, D), _PAD()), {0: "batch", 1: "seq"}),
    "bert-padding-fp16": (BertLayerFp16, lambda: (torch.randn(2, 5, D), _PAD()), {0: "batch", 1: "seq"}),
    "torch-decoder-cross": (TorchDecoder, lambda: (torch.randn(2, 5, D), torch.randn(2, 7, D)),
                            {0: "batch", 1: "seq"},
                            (["x", "memory"], ["y"], {"memory": {0: "batch", 1: "mem"}})),
    # (multi-query attention with rotary: the suite's mqa-kv-split-rotary,
    # tf.MQAKVSplitRotary, is that model; its rows were "mqa-rotary" before)
}
tf.MODELS.update(SWEEP_MODELS)

FUSED = {"LayerNormalization", "RMSNormalization", "Gelu", "Attention", "RotaryEmbedding",
         "Swish", "SwiGLU", "HardSwish",
         # onnxruntime's contrib ops (com.microsoft)
         "SkipLayerNormalization", "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization",
         "FastGelu", "BiasGelu", "MultiHeadAttention", "RotaryEmbedding", "BiasSoftmax"}


def nodes(path):
    ops = {}
    for n in onnx.load(path).graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    return sum(ops.values()), ops


def fused(ops):
    return ", ".join(f"{k} {v}" for k, v in sorted(ops.items()) if k in FUSED) or "-"


def node(*args):
    r = subprocess.run(["node", os.path.join(HERE, "ort_optimize_run.js"), *map(str, args)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"onnxruntime failed: {r.stderr.strip()}")
    return r.stdout.strip()


def model_feeds(name, b, s):
    """The inputs a model of the suite is timed on ([name, type, dims, fill],
    ort_optimize_run.js): x [B, S, D] (ViT: an image [B, 3, 16, 16]); position
    ids 0..S-1; a key-padding mask of all true; for the KV-cache steps one
    new token against caches of S past tokens (a decode step), and for the
    static cache one token written after 7 into its 8 positions."""
    if name == "vit":
        return [["x", "float32", [b, 3, 16, 16], "random"]]
    if name == "whisper-encoder":  # log-mel frames [B, MELS, S]
        return [["x", "float32", [b, tf.WhisperEncoder.MELS, s], "random"]]
    if name == "torch-decoder-cross":  # memory: as many frames as tokens
        return [["x", "float32", [b, s, tf.D], "random"], ["memory", "float32", [b, s, tf.D], "random"]]
    cls = tf.MODELS[name][0]
    params = list(__import__("inspect").signature(cls.forward).parameters)[1:]
    if "k_cache" in params:  # a static cache of 8 positions: one token after 7
        hd, m = tf.D // tf.H, 8
        return [["x", "float32", [b, 1, tf.D], "random"],
                ["past_ids", "int64", [b, m - 1], "positions"],
                ["k_cache", "float32", [b, tf.H, m, hd], "random"],
                ["v_cache", "float32", [b, tf.H, m, hd], "random"]]
    if "past_key" in params:
        hd = tf.D // tf.H
        return [["x", "float32", [b, 1, tf.D], "random"],
                ["past_key", "float32", [b, tf.H, s, hd], "random"],
                ["past_value", "float32", [b, tf.H, s, hd], "random"]]
    feeds = [["x", "float32", [b, s, tf.D], "random"]]
    if "position_ids" in params:
        feeds.append(["position_ids", "int64", [b, s], "positions"])
    if "attention_mask" in params:
        feeds.append(["attention_mask", "bool", [b, s], "true"])
    return feeds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("onnx_opt")
    ap.add_argument("work")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--only", nargs="+", metavar="MODEL", help="these models only (names of tf.MODELS)")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rows = []
    for name in a.only or tf.MODELS:
        for opset in tf.OPSETS:
            tag = f"{name}-opset{opset}"
            src = os.path.join(a.work, tag + ".onnx")
            tf.export(name, opset, src)
            feeds = model_feeds(name, a.batch, a.seq)
            res = {}
            for level in ("basic", "extended"):
                res[level] = os.path.join(a.work, f"{tag}.ort-{level}.onnx")
                node("optimize", level, src, res[level])
            ours = os.path.join(a.work, tag + ".O2.onnx")
            target = f"--target-opset={getattr(tf.MODELS[name][0], 'target_opset', 23)}"
            r = subprocess.run([a.onnx_opt, target, "-O2", src, "-o", ours],
                               capture_output=True, text=True)
            res["ours"] = ours if r.returncode == 0 else None
            err = r.stderr.strip().splitlines()[-1] if r.returncode else ""
            # Timed together, round-robin: the export at ORT's default level,
            # each result with optimizations disabled (its own graph).
            timed = [("export", "all", src)] + [(k, "disabled", res[k]) for k in
                                                  ("basic", "extended", "ours") if res[k]]
            if getattr(tf.MODELS[name][0], "fp16_export", False):
                t = {}  # (float16 inputs: ort_optimize_run.js feeds float32 only; not timed)
            else:
                ms = json.loads(node("time", json.dumps(feeds), a.runs,
                                     *[f"{lvl}:{p}" for _, lvl, p in timed]))
                t = {k: v for (k, _, _), v in zip(timed, ms)}
            row = {"model": tag, "export": nodes(src)[0], "t_export": t.get("export")}
            for k in ("basic", "extended", "ours"):
                if res[k] is None:
                    row[k], row["f_" + k], row["t_" + k] = "refused", err, None
                    continue
                n, ops = nodes(res[k])
                row[k], row["f_" + k], row["t_" + k] = n, fused(ops), t.get(k)
            rows.append(row)
            print(f"{tag}: done", file=sys.stderr)
    fmt = lambda t: "-" if t is None else f"{t:.3f}"  # noqa: E731
    print("| model | nodes: export | ORT basic | ORT extended | ours | fused: ORT extended | fused: ours "
          "| ms: export (ORT all) | ORT basic | ORT extended | ours |")
    print("|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['export']} | {r['basic']} | {r['extended']} | {r['ours']} "
              f"| {r['f_extended']} | {r['f_ours']} | {fmt(r['t_export'])} | {fmt(r['t_basic'])} "
              f"| {fmt(r['t_extended'])} | {fmt(r['t_ours'])} |")


if __name__ == "__main__":
    main()
