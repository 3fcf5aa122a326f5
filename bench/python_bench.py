#!/usr/bin/env python3
"""Python bindings vs python3-onnx and onnx-opt, side by side (bench/README.md,
sections "Python bindings" and "Python within 1.05x of onnx-opt").

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
           vs onnx-opt -O2 IN -o OUT, alternating (python, onnx-opt, python,
           ...): wall time and CPU time (user+sys of the child), interpreter
           start included; the load average before and after

--o2-only skips load and walk (python3-onnx's load takes minutes at 10^6).
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


def timed(cmd, env=None):
    """(wall, user+sys) seconds of one run of `cmd`."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed (exit {p.returncode})")
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


def loadavg():
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100000, 1000000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--onnx-opt", required=True)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "onnxir-python-bench"))
    ap.add_argument("--o2-only", action="store_true", help="only load + O2 + save")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    rows = []
    for n in args.sizes:
        path = os.path.join(args.workdir, f"chain_{n}.onnx")
        if not os.path.exists(path):
            make_model(n, path)
        out_py = os.path.join(args.workdir, f"chain_{n}.py.onnx")
        out_cli = os.path.join(args.workdir, f"chain_{n}.cli.onnx")
        load_before = loadavg()
        if args.o2_only:
            t_onnx_load = t_ir_load = t_onnx_walk = t_ir_walk = None
        else:
            t_onnx_load, t_ir_load, t_onnx_walk, t_ir_walk = load_and_walk(path, args.runs)
        code = ("import onnxir, sys; m = onnxir.load(sys.argv[1]); "
                "onnxir.run_passes(m, 'O2'); onnxir.save(m, sys.argv[2])")
        env = dict(os.environ)
        py, cli = [], []
        for _ in range(args.runs):  # alternating, so both meet the same load
            py.append(timed([sys.executable, "-c", code, path, out_py], env))
            cli.append(timed([args.onnx_opt, "-O2", path, "-o", out_cli]))
        med = lambda xs, i: statistics.median(x[i] for x in xs)
        same = open(out_py, "rb").read() == open(out_cli, "rb").read()
        rows.append((n, t_onnx_load, t_ir_load, t_onnx_walk, t_ir_walk, med(py, 0), med(cli, 0),
                     med(py, 1), med(cli, 1), same, load_before + " .. " + loadavg()))
        print(f"{n}: done", file=sys.stderr)
    if not args.o2_only:
        print("| nodes | onnx.load | onnxir.load | walk (onnx) | walk (onnxir) |")
        print("|---:|---:|---:|---:|---:|")
        for n, a, b, c, d, *_ in rows:
            print(f"| {n:,} | {a:.3f} s | {b:.3f} s | {c:.3f} s | {d:.3f} s |")
        print()
    print("| nodes | python wall | onnx-opt wall | ratio | python CPU | onnx-opt CPU | ratio "
          "| same output | load average (1/5/15 min, before .. after) |")
    print("|---:|---:|---:|---:|---:|---:|---:|:---:|---|")
    for n, _a, _b, _c, _d, pw, cw, pc, cc, same, load in rows:
        print(f"| {n:,} | {pw:.3f} s | {cw:.3f} s | {pw / cw:.3f}x | {pc:.3f} s | {cc:.3f} s "
              f"| {pc / cc:.3f}x | {'yes' if same else 'NO'} | {load} |")


def load_and_walk(path, runs):
    import onnx
    import onnxir
    t_onnx_load = median_time(lambda: onnx.load(path), runs)
    t_ir_load = median_time(lambda: onnxir.load(path), runs)
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
    return t_onnx_load, t_ir_load, median_time(walk_onnx, runs), median_time(walk_ir, runs)


if __name__ == "__main__":
    main()
