#!/usr/bin/env python3
"""Python bindings vs python3-onnx and onnx-opt, side by side (bench/README.md,
section "Python bindings").

    PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py \
        --onnx-opt build/tools/onnx-opt/onnx-opt [--sizes 100000 1000000] [--runs 3]

For each size it writes (once, cached in --workdir) a chain model made with
onnx.helper: blocks of Add(x, w_k) -> Relu -> Identity -> Mul(x, c_k), with
small initializers repeated under several names (so -O2 has identities to
remove and duplicates to merge). Then, median of --runs:

  load     onnx.load(path)           vs onnxir.load(path)
  walk     every node and operand:   for n in proto.graph.node: for i in n.input
                                     vs for n in g.nodes: for v in n.inputs
  O2       a fresh process each: python3 -c 'load, run_passes("O2"), save'
           vs onnx-opt -O2 IN -o OUT (wall time, interpreter start included)
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def make_model(n_nodes, path):
    import numpy as np
    import onnx
    from onnx import helper, TensorProto, numpy_helper
    blocks = n_nodes // 4
    nodes, inits = [], []
    for k in range(16):
        inits.append(numpy_helper.from_array(np.full([8], k, np.float32), f"w{k}"))
        inits.append(numpy_helper.from_array(np.full([8], 1.0, np.float32), f"c{k}"))
    prev = "x"
    for b in range(blocks):
        k = b % 16
        nodes.append(helper.make_node("Add", [prev, f"w{k}"], [f"a{b}"], name=f"add{b}"))
        nodes.append(helper.make_node("Relu", [f"a{b}"], [f"r{b}"], name=f"relu{b}"))
        nodes.append(helper.make_node("Identity", [f"r{b}"], [f"i{b}"], name=f"id{b}"))
        nodes.append(helper.make_node("Mul", [f"i{b}", f"c{k}"], [f"m{b}"], name=f"mul{b}"))
        prev = f"m{b}"
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["N", 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def median_time(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def wall(cmd, env=None):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100000, 1000000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--onnx-opt", required=True)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "onnxir-python-bench"))
    args = ap.parse_args()
    import onnx
    import onnxir
    os.makedirs(args.workdir, exist_ok=True)
    rows = []
    for n in args.sizes:
        path = os.path.join(args.workdir, f"chain_{n}.onnx")
        if not os.path.exists(path):
            make_model(n, path)
        out_py = os.path.join(args.workdir, f"chain_{n}.py.onnx")
        out_cli = os.path.join(args.workdir, f"chain_{n}.cli.onnx")
        t_onnx_load = median_time(lambda: onnx.load(path), args.runs)
        t_ir_load = median_time(lambda: onnxir.load(path), args.runs)
        proto = onnx.load(path)
        m = onnxir.load(path)
        g = m.graph

        def walk_onnx():
            k = 0
            for node in proto.graph.node:
                for i in node.input:
                    k += 1
            return k

        def walk_ir():
            k = 0
            for node in g.nodes:
                for v in node.inputs:
                    k += 1
            return k

        assert walk_onnx() == walk_ir()
        t_onnx_walk = median_time(walk_onnx, args.runs)
        t_ir_walk = median_time(walk_ir, args.runs)
        del proto, m, g
        code = ("import onnxir, sys; m = onnxir.load(sys.argv[1]); "
                "onnxir.run_passes(m, 'O2'); onnxir.save(m, sys.argv[2])")
        env = dict(os.environ)
        t_py = statistics.median(wall([sys.executable, "-c", code, path, out_py], env)
                                 for _ in range(args.runs))
        t_cli = statistics.median(wall([args.onnx_opt, "-O2", path, "-o", out_cli])
                                  for _ in range(args.runs))
        same = open(out_py, "rb").read() == open(out_cli, "rb").read()
        rows.append((n, t_onnx_load, t_ir_load, t_onnx_walk, t_ir_walk, t_py, t_cli, same))
        print(f"{n}: done", file=sys.stderr)
    print("| nodes | onnx.load | onnxir.load | walk (onnx) | walk (onnxir) "
          "| load+O2+save python | onnx-opt -O2 | python/onnx-opt | same output |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
    for n, a, b, c, d, e, f, same in rows:
        print(f"| {n:,} | {a:.3f} s | {b:.3f} s | {c:.3f} s | {d:.3f} s | {e:.3f} s | {f:.3f} s "
              f"| {e / f:.2f}x | {'yes' if same else 'no'} |")


if __name__ == "__main__":
    main()
