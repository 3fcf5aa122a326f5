// ort_optimize_run.js LEVEL IN.onnx OUT.onnx|- SHAPE RUNS
// Opens IN on onnxruntime (CPU, one intra-op thread) at graphOptimizationLevel
// LEVEL (disabled|basic|extended|all), saving the optimized model to OUT
// (SessionOptions.optimizedModelFilePath) unless OUT is '-'; then runs it
// RUNS times (after 3 warm-up runs) on one random float input `x` of SHAPE
// (comma-separated dims) and prints {"median_ms": ...} (the median of the
// runs, same process).
'use strict';
const ort = require(require('path').resolve(process.env.ORT_NODE_MODULES, 'onnxruntime-node'));
ort.env.logLevel = 'fatal';
const [level, inp, out, shape, runs] = process.argv.slice(2);
(async () => {
  const opts = { graphOptimizationLevel: level, executionProviders: ['cpu'], intraOpNumThreads: 1 };
  if (out !== '-') opts.optimizedModelFilePath = out;
  const s = await ort.InferenceSession.create(inp, opts);
  const dims = shape.split(',').map(Number);
  const n = dims.reduce((a, b) => a * b, 1);
  let seed = 1;
  const data = Float32Array.from({ length: n }, () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1);
  const feeds = { x: new ort.Tensor('float32', data, dims) };
  for (let i = 0; i < 3; ++i) await s.run(feeds);
  const times = [];
  for (let i = 0; i < Number(runs); ++i) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ median_ms: times[Math.floor(times.length / 2)] }));
})().catch((e) => { console.error(`${inp}: ${e.message}`); process.exitCode = 1; });
