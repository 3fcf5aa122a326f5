#!/usr/bin/python3
"""torch_precision.py ONNX_OPT WORK_DIR

Smaller models on PyTorch transformer exports (issue 43): two small seeded
models made here (python3-torch's exporter),
  - encoder: 2 pre-LN layers (LayerNorm, 4-head attention, GELU MLP), and
  - decoder: token embedding, one causal block whose additive mask is
    finfo(float32).min above the diagonal (torch.full(...).triu(1)) plus
    Hugging Face's padding term (1 - attention_mask) * finfo.min, then an
    LM head; the first sequence pads its first token, so its first row is
    masked everywhere: float32 gives a finite row, float16 without the
    mask clamp (Note [Constants outside the target's range]) gives -inf
    everywhere and NaN,
exported at opset 17 (torch 1.13 exports up to 17) and converted to 21 by
`convert-opset{target=21}`, then each of
  fp16, bf16                 --precision=fp16 / bf16 (I/O stays float32)
  dq8, dq4                   quantize-weights{bits=8|4} (at opset 21:
                             blocked DequantizeLinear needs it)
  nbits8, nbits4             quantize-weights{format=matmulnbits bits=8|4}
                             (at opset 17)
  dq4+O2, nbits4+O2          -O2 of the int4 models: every DequantizeLinear /
                             MatMulNBits kept, outputs within 1e-5 of the
                             int4 model's
must pass python onnx's checker (onnx 1.12: models up to opset 17 and IR 8;
full_check) and run on onnxruntime (one node process for all: ort_pairs.js),
its outputs within TOL of the float32 model's on the same inputs (the
error at padded tokens, which a masked model leaves undefined, not
counted), no NaN or infinity where float32 has none (counted everywhere:
the clamp's check). bf16 is checked by the checker only when
onnxruntime's CPU provider refuses it (the reason is printed). Prints per
model and variant the file size ratio and the relative error max|a - b| /
max|a| (bench/README.md, "Precision conversion"). Exit 77 (skipped)
without torch or onnxruntime-node, unless CI=true.
"""
import json
import os
import shutil
import subprocess
import sys
import time

CI = os.environ.get("CI") == "true"


def skip(why):
    if CI:
        print(f"ort-torch-precision: {why}: FAILED (CI=true: the test must run)")
        sys.exit(1)
    print(f"ort-torch-precision: {why}: skipped")
    sys.exit(77)


try:
    import torch
    import torch.nn as nn
except ImportError:
    skip("python3-torch is not installed")
import numpy as np
import onnx
from onnx import numpy_helper

D, H, F, V, T = 64, 4, 128, 64, 8  # width, heads, MLP width, vocabulary, tokens
MIN = torch.finfo(torch.float32).min
# Relative error bounds (max |a - b| / max |a|) per variant.
TOL = {"fp16": 0.01, "bf16": 0.05, "dq8": 0.05, "nbits8": 0.05, "dq4": 0.3, "nbits4": 0.3,
       "dq4+O2": 1e-5, "nbits4+O2": 1e-5}  # -O2 of the quantized model, against it


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))

    def forward(self, x, mask=None):
        b, t, _ = x.shape
        split = lambda y: y.view(b, t, H, D // H).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        s = q @ k.transpose(-1, -2) / (D // H) ** 0.5
        if mask is not None:
            s = s + mask
        return self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, D))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2, self.attn = nn.LayerNorm(D), nn.LayerNorm(D), Attention()
        self.mlp = nn.Sequential(nn.Linear(D, F), nn.GELU(), nn.Linear(F, D))

    def forward(self, x, mask=None):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.mlp(self.ln2(x))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks, self.ln = nn.ModuleList([Block(), Block()]), nn.LayerNorm(D)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.ln(x)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb, self.block = nn.Embedding(V, D), Block()
        self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, V)

    def forward(self, ids, attention_mask):
        t = ids.shape[1]
        causal = torch.full((t, t), MIN).triu(1)
        pad = (1.0 - attention_mask[:, None, None, :].float()) * MIN
        return self.head(self.ln(self.block(self.emb(ids), causal + pad)))


def models():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, T, D, generator=g)
    ids = torch.randint(0, V, (2, T), generator=g)
    mask = torch.ones(2, T, dtype=torch.int64)
    mask[0, 0] = 0  # a padded first token: row 0 of sequence 0 masked everywhere
    mask[1, -2:] = 0
    return {
        "encoder": (Encoder, (x,), ["x"], {"x": {0: "batch", 1: "seq"}}, []),
        "decoder": (Decoder, (ids, mask), ["input_ids", "attention_mask"],
                    {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}},
                    (mask == 0).nonzero().tolist()),
    }


def check_onnx(path):
    """python onnx's checker where onnx 1.12 knows the opsets; '' when fine."""
    m = onnx.load(path)
    if m.ir_version > 8 or any(o.version > 17 for o in m.opset_import if o.domain in ("", "ai.onnx")):
        return "not checked (onnx 1.12 knows opset 17, IR 8)"
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # onnx raises several kinds
        return "FAIL " + str(e).splitlines()[0]
    return ""


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    opt, work = sys.argv[1:]
    mods = os.environ.get("ORT_NODE_MODULES", "")
    if not os.path.isdir(os.path.join(mods, "onnxruntime-node")):
        skip("onnxruntime-node ($ORT_NODE_MODULES) not available")
    if not shutil.which("node"):
        skip("node not available")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    failures, jobs, rows = [], [], {}

    def run(args):
        r = subprocess.run([opt] + args, capture_output=True, text=True)
        return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]

    for name, (cls, inputs, names, dyn, padded) in models().items():
        torch.manual_seed(0)
        model = cls().eval()
        base = os.path.join(work, name)
        a17 = f"{base}-17.onnx"
        torch.onnx.export(model, inputs, a17, opset_version=17, input_names=names,
                          output_names=["y"], dynamic_axes={**dyn, "y": {0: "batch"}})
        idir = f"{base}-inputs"
        os.makedirs(idir, exist_ok=True)
        for i, (n, v) in enumerate(zip(names, inputs)):
            t = numpy_helper.from_array(v.numpy(), n)
            with open(os.path.join(idir, f"input_{i}.pb"), "wb") as f:
                f.write(t.SerializeToString())
        a21 = f"{base}-21.onnx"
        ok, err = run([a17, "--pass-pipeline=convert-opset{target=21}", "-o", a21])
        if not ok:
            failures.append(f"{name}: convert-opset 21: {err}")
            continue
        for opset, a in ((17, a17), (21, a21)):
            variants = {"fp16": ["--precision=fp16"], "bf16": ["--precision=bf16"]}
            # Each quantized form once (the opset changes neither): MatMulNBits
            # at 17, where the DQ form is refused, DQ at 21.
            if opset >= 21:
                variants["dq8"] = ["--pass-pipeline=quantize-weights{bits=8}"]
                variants["dq4"] = ["--pass-pipeline=quantize-weights{bits=4}"]
            else:
                variants["nbits8"] = ["--pass-pipeline=quantize-weights{format=matmulnbits bits=8}"]
                variants["nbits4"] = ["--pass-pipeline=quantize-weights{format=matmulnbits bits=4}"]
            for v, flags in variants.items():
                tag = f"{name}-{opset}"
                b = f"{base}-{opset}.{v}.onnx"
                ok, err = run([a] + flags + ["-o", b])
                if not ok:
                    failures.append(f"{tag} {v}: onnx-opt: {err}")
                    continue
                chk = check_onnx(b)
                if chk.startswith("FAIL"):
                    failures.append(f"{tag} {v}: onnx checker: {chk}")
                rows[(tag, v)] = {"ratio": os.path.getsize(b) / os.path.getsize(a), "checker": chk}
                jobs.append({"ref": a, "model": b, "inputs": idir, "skip": padded, "key": [tag, v]})
                if v not in ("dq4", "nbits4"):
                    continue
                # -O2 keeps every DequantizeLinear / MatMulNBits (no fold,
                # no fusion across them) and the quantized model's outputs.
                b2 = f"{base}-{opset}.{v}.O2.onnx"
                ok, err = run([b, "-O2", "-o", b2])
                if not ok:
                    failures.append(f"{tag} {v} -O2: onnx-opt: {err}")
                    continue
                count = lambda f: sum(n.op_type in ("DequantizeLinear", "MatMulNBits")
                                      for n in onnx.load(f).graph.node)
                if count(b2) != count(b) or count(b) == 0:
                    failures.append(f"{tag} {v} -O2: {count(b)} quantized nodes became {count(b2)}")
                rows[(tag, v + "+O2")] = {"ratio": os.path.getsize(b2) / os.path.getsize(a),
                                          "checker": f"{count(b2)} DQ/MatMulNBits kept"}
                jobs.append({"ref": b, "model": b2, "inputs": idir, "skip": padded,
                             "key": [tag, v + "+O2"]})
    with open(os.path.join(work, "jobs.json"), "w") as f:
        json.dump(jobs, f)
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run(["node", os.path.join(here, "ort_pairs.js"), os.path.join(work, "jobs.json")],
                       capture_output=True, text=True)
    results = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    if r.returncode != 0 or len(results) != len(jobs):
        failures.append(f"ort_pairs.js: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    print(f"{'model':<12} {'variant':<9} {'size':>6} {'rel err':>9}  notes")
    for job, res in zip(jobs, results):
        tag, v = job["key"]
        row = rows[(tag, v)]
        notes = row["checker"]
        if not res["ok"]:
            if v == "bf16" and ("implementation" in res["error"] or "NOT_IMPLEMENTED" in res["error"]):
                notes = (notes + "; " if notes else "") + "onnxruntime CPU refuses: " + res["error"][:90]
                print(f"{tag:<12} {v:<9} {row['ratio']:6.3f} {'-':>9}  {notes}")
                continue
            failures.append(f"{tag} {v}: onnxruntime: {res['error']}")
            print(f"{tag:<12} {v:<9} {row['ratio']:6.3f} {'FAIL':>9}  {res['error'][:100]}")
            continue
        rel = res["maxAbs"] / max(res["maxRef"], 1e-30)
        if res["nan"]:
            failures.append(f"{tag} {v}: NaN or infinity where float32 is finite")
        elif rel > TOL[v]:
            failures.append(f"{tag} {v}: relative error {rel:.3g} above {TOL[v]}")
        print(f"{tag:<12} {v:<9} {row['ratio']:6.3f} {rel:9.2e}  {notes}{' NaN' if res['nan'] else ''}")
    for f in failures:
        print("FAIL:", f)
    print(f"ort-torch-precision: {len(jobs)} conversions, {len(failures)} failures "
          f"({time.time() - t0:.1f} s)")
    return 1 if failures or not jobs else 0


if __name__ == "__main__":
    sys.exit(main())
