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

FUSED = {"LayerNormalization", "RMSNormalization", "Gelu", "Attention", "RotaryEmbedding",
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
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rows = []
    for name in tf.MODELS:
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
            ms = json.loads(node("time", json.dumps(feeds), a.runs,
                                 *[f"{lvl}:{p}" for _, lvl, p in timed]))
            t = {k: v for (k, _, _), v in zip(timed, ms)}
            row = {"model": tag, "export": nodes(src)[0], "t_export": t["export"]}
            for k in ("basic", "extended", "ours"):
                if res[k] is None:
                    row[k], row["f_" + k], row["t_" + k] = "refused", err, None
                    continue
                n, ops = nodes(res[k])
                row[k], row["f_" + k], row["t_" + k] = n, fused(ops), t[k]
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
