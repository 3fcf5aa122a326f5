#!/usr/bin/python3
"""nearmiss.py ONNX_OPT WORK_DIR [--only FAMILY,...] [-v]

The near-miss test of every fusion and simplification pattern family
(issue 37): families.py writes, per family, a positive base model and at
least MIN_VARIANTS variants that each differ from a positive case in one
condition; onnx-opt rewrites each under three pipelines; onnxruntime runs each
original and its rewrites (nearmiss_ort.js, one node process) and compares
output names, element types, shapes and values. Every variant must be either
fused (a pattern of its family applied, `-stats`) with the same outputs, or
left alone with the same outputs; every base must fuse under every pipeline,
so that the test cannot pass by nothing fusing. Prints a table per family and
one line per WRONG (variant, pipeline, what differs).

Needs node and onnxruntime-node in $ORT_NODE_MODULES (the ctest fixture
`ort`) and ort_compare.js in $SHARED_TOOLS: without them exit 77 (skipped),
except under CI=true, where a missing onnxruntime is a failure.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import families  # noqa: E402

MIN_VARIANTS = 20
# The converting pipelines target opset 23, or the family's own
# (families.TARGET_OPSET: Swish needs 24).
PIPELINES = {
    'O2': ['-O2', '--target-opset=23'],
    'fuse': ['-convert-opset', '--target-opset=23', '-infer-shapes', '-fuse', '-simplify'],
    # At the model's own opset: a fusion into an op the opset lacks (Gelu
    # below 20, RMSNormalization below 23) would be an invalid model.
    'O2-own-opset': ['-O2'],
}
# Comparison tolerance: ort_compare.js's default, wider for float16 (a fused
# op computes in float and rounds once; the chain rounds at every node).
TOLERANCE = {'float16': (2e-2, 2e-2)}
DEFAULT_TOLERANCE = (1e-6, 1e-4)
STAT_LINE = re.compile(r'^\s+([a-z0-9-]+): ([a-z0-9-]+) = (\d+)$')

# The oracle's own check: rewrites as the fusions made them before issue 37's
# fixes (the fused op on x: a [1,1,1,1] exponent, numerator or 1 of 1 + Erf
# had broadcast the chain's result to rank 4), and one with a wrong epsilon
# (same shape, other values). nearmiss_ort.js must report each as differing
# from its original: a shape change is a failure, not a match.
PLANTED = {
    'layernorm/two-rank4': ('LayerNormalization', ['x', 'scale', 'bias'], dict(axis=-1, epsilon=1e-5)),
    'layernorm/one-div-rank4': ('LayerNormalization', ['x', 'scale', 'bias'], dict(axis=-1, epsilon=1e-5)),
    'layernorm/eps-big': ('LayerNormalization', ['x', 'scale', 'bias'], dict(axis=-1, epsilon=1e-5)),
    'rmsnorm/two-rank4': ('RMSNormalization', ['x', 'scale'], dict(axis=-1, epsilon=1e-6)),
    'gelu-erf/one-rank4': ('Gelu', ['x'], {}),
}


def plant(model, op, operands, attrs):
    """`model` with its nodes replaced by one `op` at opset 23; operands are
    input names or initializer name prefixes."""
    from onnx import helper
    g = model.graph
    names = [i.name for i in g.input] + [t.name for t in g.initializer]
    ins = [next(n for n in names if n == o or n.startswith(o) and n[len(o):].isdigit()) for o in operands]
    node = helper.make_node(op, ins, ['y'], **attrs)
    graph = helper.make_graph([node], g.name, list(g.input), [o for o in g.output if o.name == 'y'],
                              list(g.initializer))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', 23)], ir_version=10)


def require_ort():
    missing = None
    if not shutil.which('node'):
        missing = 'node not available'
    elif not os.path.isdir(os.path.join(os.environ.get('ORT_NODE_MODULES', ''), 'onnxruntime-node')):
        missing = f'no onnxruntime-node in $ORT_NODE_MODULES ({os.environ.get("ORT_NODE_MODULES", "unset")})'
    elif not os.path.isfile(os.path.join(os.environ.get('SHARED_TOOLS', ''), 'ort_compare.js')):
        missing = f'no ort_compare.js in $SHARED_TOOLS ({os.environ.get("SHARED_TOOLS", "unset")})'
    if missing:
        if os.environ.get('CI') == 'true':
            print(f'ort-nearmiss: {missing}: FAILED (CI=true: onnxruntime is required)')
            sys.exit(1)
        print(f'ort-nearmiss: {missing}: skipped')
        sys.exit(77)


def run_opt(opt, src, dst, pipeline, target):
    """onnx-opt under one pipeline, its --target-opset `target` (the
    family's, families.TARGET_OPSET): (error or None, {pattern: count})."""
    # A replacement of another type is a pattern bug: fatal, as in the test
    # suite (Note [Replacement type check]), so that the rewrite the check
    # refused still shows here as onnx-opt failing.
    flags = [f'--target-opset={target}' if f.startswith('--target-opset=') else f for f in PIPELINES[pipeline]]
    r = subprocess.run([opt, src] + flags + ['-stats', '-o', dst],
                       capture_output=True, text=True, env=dict(os.environ, ONNXIR_PATTERN_BUGS='error'))
    if r.returncode != 0:
        return (r.stderr.strip().splitlines() or ['exit %d' % r.returncode])[-1], {}
    stats = {}
    for line in r.stderr.splitlines():
        m = STAT_LINE.match(line)
        if m:
            stats[m.group(2)] = stats.get(m.group(2), 0) + int(m.group(3))
    return None, stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('opt')
    ap.add_argument('work')
    ap.add_argument('--only', default='')
    ap.add_argument('-v', action='store_true', help='print every variant')
    args = ap.parse_args()
    require_ort()
    start = time.time()
    only = set(filter(None, args.only.split(',')))
    shutil.rmtree(args.work, ignore_errors=True)
    models = []
    planted = {}
    for fam, name, knobs, model in families.generate():
        if only and fam not in only:
            continue
        os.makedirs(os.path.join(args.work, fam), exist_ok=True)
        path = os.path.join(args.work, fam, name + '.onnx')
        with open(path, 'wb') as f:
            f.write(model.SerializeToString())
        if f'{fam}/{name}' in PLANTED:
            planted[f'{fam}/{name}'] = path[:-5] + '.planted.onnx'
            with open(planted[f'{fam}/{name}'], 'wb') as f:
                f.write(plant(model, *PLANTED[f'{fam}/{name}']).SerializeToString())
        dt = model.graph.input[0].type.tensor_type.elem_type
        models.append((fam, name, path, dt, knobs))

    tasks = [(fam, name, path, pl) for fam, name, path, _, _ in models for pl in PIPELINES]
    opt_res = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futs = {pool.submit(run_opt, args.opt, path, path[:-5] + f'.{pl}.onnx', pl,
                            families.TARGET_OPSET.get(fam, 23)): (fam, name, pl)
                for fam, name, path, pl in tasks}
        for fut in concurrent.futures.as_completed(futs):
            opt_res[futs[fut]] = fut.result()

    jobs = []
    f16 = families.DTYPES['float16'][0]
    for fam, name, path, dt, knobs in models:
        atol, rtol = TOLERANCE['float16'] if dt == f16 else DEFAULT_TOLERANCE
        outs = {pl: path[:-5] + f'.{pl}.onnx' for pl in PIPELINES if opt_res[(fam, name, pl)][0] is None}
        if f'{fam}/{name}' in planted:
            outs['planted'] = planted[f'{fam}/{name}']
        jobs.append(dict(id=f'{fam}/{name}', orig=path, outs=outs, atol=atol, rtol=rtol, values={'cond': 1},
                         ranges=families.INPUT_RANGES.get(fam, {}), dims=knobs.get('dims', {}),
                         shapes=knobs.get('feed', {})))
    jobs_file = os.path.join(args.work, 'jobs.json')
    res_file = os.path.join(args.work, 'results.json')
    with open(jobs_file, 'w') as f:
        json.dump(jobs, f, indent=1)
    r = subprocess.run(['node', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'nearmiss_ort.js'),
                        jobs_file, res_file])
    if r.returncode != 0:
        print(f'ort-nearmiss: nearmiss_ort.js failed (exit {r.returncode})')
        return 1
    with open(res_file) as f:
        results = json.load(f)

    table = collections.OrderedDict()
    problems = []
    for fam, name, path, _, _ in models:
        row = table.setdefault(fam, collections.Counter())
        res = results[f'{fam}/{name}']
        if res['a'] != 'ok':
            problems.append(f'BAD {fam}/{name}: {res["a"]} (the generator wrote a model onnxruntime cannot run)')
            row['bad'] += 1
            continue
        if 'planted' in res['b']:
            if res['b']['planted'] == 'ok':
                problems.append(f'ORACLE BLIND {fam}/{name}: the planted wrong rewrite matched its original')
            elif args.v:
                print(f'  {fam}/{name}: planted wrong rewrite reported: {res["b"]["planted"]}')
        patterns = families.FAMILIES[fam][3]
        wrong, fused = [], []
        for pl in PIPELINES:
            err, stats = opt_res[(fam, name, pl)]
            applied = sorted(p for p in patterns if stats.get(p))
            if err is not None:
                wrong.append(f'{pl}: onnx-opt failed: {err}')
            elif res['b'][pl] != 'ok':
                wrong.append(f'{pl} ({"fused " + ",".join(applied) if applied else "not fused"}): {res["b"][pl]}')
            if applied:
                fused.append(pl)
        if name == 'base':
            if len(fused) != len(PIPELINES):
                problems.append(f'BASE NOT FUSED {fam}/base under {sorted(set(PIPELINES) - set(fused))}')
        else:
            row['variants'] += 1
        if wrong:
            row['wrong'] += 1
            problems.extend(f'WRONG {fam}/{name} {w}' for w in wrong)
        elif name != 'base':
            row['fused' if fused else 'alone'] += 1
        if args.v:
            print(f'  {fam}/{name}: {"WRONG" if wrong else "same"}, fused under [{",".join(fused)}]')

    print(f'{"family":22} {"variants":>8} {"fused+same":>11} {"alone+same":>11} {"WRONG":>6}')
    for fam, row in table.items():
        print(f'{fam:22} {row["variants"]:8} {row["fused"]:11} {row["alone"]:11} {row["wrong"]:6}'
              + (f'  ({row["bad"]} bad)' if row['bad'] else ''))
        if row['variants'] < MIN_VARIANTS:
            problems.append(f'TOO FEW {fam}: {row["variants"]} variants, at least {MIN_VARIANTS} wanted')
    for p in problems:
        print(p)
    n = sum(row['variants'] for row in table.values())
    print(f'ort-nearmiss: {len(table)} families, {n} variants, {len(problems)} problems '
          f'({time.time() - start:.1f} s)')
    return 1 if problems or not table else 0


if __name__ == '__main__':
    sys.exit(main())
