#!/usr/bin/python3
"""eval_speed.py BUILD_DIR WORK_DIR [--runs N] [--only TEXT]... [--skip TEXT]... [--no-torch]
                [--before BENCH]

The reference evaluator against onnxruntime (issue 40 item 2): for each model,
the median run time of `onnxir-eval-bench` (bench/EvalBench.cpp: the model
loaded, then evaluate() timed; single-threaded) and of onnxruntime
(bench/ort_run_time.js: CPU, one intra- and one inter-op thread, graph
optimizations disabled, so both run the graph as written), on the same inputs
(.npy files written here, seeded), and the memory each side takes for the
model: its process's whole peak RSS minus that process's RSS with the
runtime loaded and the inputs read but no model (Note [Comparable memory],
bench/EvalBench.cpp), so the weights as each runtime holds them, its plan or
session and the runs' intermediates, measured the same way on both sides.
Ours is also split into the loaded model (RSS after load - baseline) and the
run (peak - RSS after load). Ratios are ours / theirs: below 1 is faster or
smaller.

Models: ../shared/models/light (nine CNNs), ../shared/models/real (the inputs
test/Ort/real_model_args.txt gives), and, unless --no-torch, PyTorch exports
made here (seeded, opset 17): a 4-layer transformer encoder (d_model 256,
4 heads, sequence 128) and a ResNet-style CNN (224x224). A model our
evaluator cannot run prints its reason instead of numbers.
--before BENCH also times another onnxir-eval-bench (an older build) on the
same inputs right before ours, for a before/after column measured in the
same minutes. Needs node and $ORT_NODE_MODULES (onnxruntime-node). Prints
markdown.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(ROOT, "..", "shared")

NP = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
      7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


def real_args():
    """Model stem -> ort_compare-style arguments (--shape/--value/--range)."""
    out = {}
    with open(os.path.join(ROOT, "test", "Ort", "real_model_args.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                stem, *rest = shlex.split(line)
                out[stem] = rest
    return out


def make_inputs(path, args, work, rng):
    """Writes one .npy per graph input without an initializer; returns NAME=FILE args."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    shapes, values, ranges = {}, {}, {}
    i = 0
    while i < len(args):
        flag = args[i]
        if flag in ("--shape", "--value", "--range") and i + 1 < len(args):
            name, v = args[i + 1].split("=", 1)
            if flag == "--shape":
                shapes[name] = [int(d) for d in v.split(",")]
            elif flag == "--value":
                values[name] = float(v)
            else:
                lo, hi = v.split(":")
                ranges[name] = (float(lo), float(hi))
            i += 2
        else:
            i += 1
    feeds = []
    stem = os.path.splitext(os.path.basename(path))[0]
    for inp in m.graph.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        dt = NP[tt.elem_type]
        dims = shapes.get(inp.name) or [d.dim_value if d.dim_value > 0 else 1
                                        for d in tt.shape.dim]
        if inp.name in values:
            a = np.full(dims, values[inp.name], dtype=dt)
        elif np.issubdtype(dt, np.floating):
            lo, hi = ranges.get(inp.name, (-1.0, 1.0))
            a = rng.uniform(lo, hi, size=dims).astype(dt)
        elif dt == np.bool_:
            a = rng.integers(0, 2, size=dims).astype(dt)
        else:
            a = rng.integers(0, 10, size=dims).astype(dt)
        f = os.path.join(work, f"{stem}.{len(feeds)}.npy")
        np.save(f, a)
        feeds.append(f"{inp.name}={f}")
    return feeds


def torch_models(work):
    """Exports the two PyTorch models; returns their paths."""
    import torch
    from torch import nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)

        def forward(self, x):
            return self.enc(x)

    def block(cin, cout, stride):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(), nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                             nn.BatchNorm2d(cout))

    class Res(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = block(cin, cout, stride)
            self.skip = (nn.Identity() if cin == cout and stride == 1 else
                         nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                       nn.BatchNorm2d(cout)))

        def forward(self, x):
            return torch.relu(self.body(x) + self.skip(x))

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 32, 7, 2, 3, bias=False), nn.BatchNorm2d(32),
                                      nn.ReLU(), nn.MaxPool2d(3, 2, 1))
            self.layers = nn.Sequential(Res(32, 32, 1), Res(32, 64, 2), Res(64, 128, 2),
                                        Res(128, 256, 2))
            self.head = nn.Linear(256, 1000)

        def forward(self, x):
            x = self.layers(self.stem(x))
            return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    out = []
    for name, cls, shape in (("torch_encoder", Encoder, (1, 128, 256)),
                             ("torch_resnet", CNN, (1, 3, 224, 224))):
        torch.manual_seed(0)
        model = cls().eval()
        path = os.path.join(work, name + ".onnx")
        # With gradients on: torch 1.13's eval-mode fast path of the encoder
        # layer (aten::_transformer_encoder_layer_fwd) has no ONNX export.
        with torch.enable_grad():
            torch.onnx.export(model, (torch.randn(*shape),), path, opset_version=17,
                              input_names=["x"], output_names=["y"])
        out.append(path)
    return out


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["failed"])[-1][:110]
    return json.loads(p.stdout.strip().splitlines()[-1]), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("work")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", action="append", default=[],
                    help="only the models whose name contains TEXT (repeatable: any of them)")
    ap.add_argument("--before", default="",
                    help="an older onnxir-eval-bench to time beside ours")
    ap.add_argument("--skip", action="append", default=[],
                    help="leave out the models whose name contains TEXT (repeatable)")
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    bench = os.path.join(a.build, "bench", "onnxir-eval-bench")
    rng = np.random.default_rng(0)
    args = real_args()
    models = [(os.path.join(SHARED, "models", "light", f), [])
              for f in sorted(os.listdir(os.path.join(SHARED, "models", "light")))
              if f.endswith(".onnx")]
    models += [(os.path.join(SHARED, "models", "real", s + ".onnx"), v) for s, v in args.items()]
    if not a.no_torch:
        models += [(p, []) for p in torch_models(a.work)]
    print(f"Reference evaluator vs onnxruntime (CPU, 1 thread, optimizations disabled), "
          f"median of {a.runs} runs; memory = the process's peak RSS minus its RSS with the "
          f"runtime loaded and the inputs read, before the model (ours: model loaded + run); "
          f"load average at the start {os.getloadavg()[0]:.1f}.\n")
    extra = " before | after / before |" if a.before else ""
    print("| model | ours | onnxruntime | time ratio | our memory (model + run) | ORT memory "
          "| memory ratio |" + extra)
    print("|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if a.before else ""))
    for path, margs in models:
        stem = os.path.splitext(os.path.basename(path))[0]
        if a.only and not any(x in stem for x in a.only) or any(x in stem for x in a.skip):
            continue
        feeds = make_inputs(path, [x for x in margs if x not in ("once",)], a.work, rng)
        before = None
        if a.before:
            before, _ = run_json([a.before, "--runs", str(a.runs), path] + feeds)
        ours, why = run_json([bench, "--runs", str(a.runs), path] + feeds)
        theirs, why2 = run_json(["node", os.path.join(HERE, "ort_run_time.js"), str(a.runs), path]
                                + feeds)
        if not ours or not theirs:
            print(f"| {stem} | {why or ''} | {why2 or ''} | - | - | - | - |"
                  + (" - | - |" if a.before else ""))
            continue
        mb = 1 / 1024
        mo = max(ours["peak_kib"] - ours["base_kib"], 0) * mb
        held = max(ours["loaded_kib"] - ours["base_kib"], 0) * mb
        run = max(ours["peak_kib"] - ours["loaded_kib"], 0) * mb
        mt = max(theirs["peak_kib"] - theirs["base_kib"], 0) * mb
        # A peak that is node's start-up one bounds onnxruntime's from above.
        upto = "<= " if theirs["peak_kib"] <= theirs["base_peak_kib"] else ""
        print(f"| {stem} | {ours['seconds'] * 1e3:.1f} ms | {theirs['seconds'] * 1e3:.1f} ms | "
              f"{ours['seconds'] / theirs['seconds']:.2f}x | {mo:.1f} MB ({held:.1f} + {run:.1f}) | "
              f"{upto}{mt:.1f} MB | {(mo / mt) if mt > 0 else float('inf'):.2f}x |"
              + (f" {before['seconds'] * 1e3:.1f} ms | {ours['seconds'] / before['seconds']:.2f}x |"
                 if before else (" - | - |" if a.before else "")))
        sys.stdout.flush()
    print(f"\nLoad average at the end {os.getloadavg()[0]:.1f}.")


if __name__ == "__main__":
    sys.exit(main())
