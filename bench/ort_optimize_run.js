// ort_optimize_run.js optimize LEVEL IN.onnx OUT.onnx
//   Opens IN on onnxruntime (CPU) at graphOptimizationLevel LEVEL
//   (basic|extended|...) and saves the optimized model to OUT
//   (SessionOptions.optimizedModelFilePath).
// ort_optimize_run.js time FEEDS RUNS LEVEL:MODEL.onnx...
//   Opens every MODEL at its LEVEL (one intra-op thread), then, after 3
//   warm-up runs each, runs them round-robin RUNS times on the same inputs:
//   the models share the machine's ups and downs. FEEDS is either the dims
//   of the one float input `x` (comma-separated; int64 position_ids [B, S]
//   0..S-1 added when a model has them), or a JSON list of
//   [name, type, dims, fill]: type float32|int64|bool, fill "random"
//   (floats in [-1, 1)), "positions" (0..last dim - 1 in each row) or
//   "true". Prints a JSON list of each model's median ms.
'use strict';
const ort = require(require('path').resolve(process.env.ORT_NODE_MODULES, 'onnxruntime-node'));
ort.env.logLevel = 'fatal';
const [mode, ...args] = process.argv.slice(2);
(async () => {
  if (mode === 'optimize') {
    const [level, inp, out] = args;
    await ort.InferenceSession.create(inp, {
      graphOptimizationLevel: level, optimizedModelFilePath: out, executionProviders: ['cpu'],
    });
    return;
  }
  const [shape, runs, ...models] = args;
  const sessions = [];
  for (const m of models) {
    const i = m.indexOf(':');
    sessions.push(await ort.InferenceSession.create(m.slice(i + 1), {
      graphOptimizationLevel: m.slice(0, i), executionProviders: ['cpu'], intraOpNumThreads: 1,
    }));
  }
  let seed = 1;
  const random = (n) => Float32Array.from({ length: n },
    () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1);
  const feeds = {};
  if (shape.startsWith('[')) {
    for (const [name, type, dims, fill] of JSON.parse(shape)) {
      const n = dims.reduce((a, b) => a * b, 1), last = dims[dims.length - 1];
      if (type === 'float32') feeds[name] = new ort.Tensor('float32', random(n), dims);
      else if (type === 'int64')
        feeds[name] = new ort.Tensor('int64', BigInt64Array.from({ length: n },
          (_, i) => BigInt(fill === 'positions' ? i % last : 0)), dims);
      else feeds[name] = new ort.Tensor('bool', Uint8Array.from({ length: n }, () => 1), dims);
    }
  } else {
    const dims = shape.split(',').map(Number);
    feeds.x = new ort.Tensor('float32', random(dims.reduce((a, b) => a * b, 1)), dims);
    // A model with position ids (the torch suite's hf-rotary-attention) gets
    // 0..S-1 for each of the B rows of x [B, S, ...].
    if (sessions.some((s) => s.inputNames.includes('position_ids'))) {
      const [b, t] = dims;
      feeds.position_ids = new ort.Tensor('int64',
        BigInt64Array.from({ length: b * t }, (_, i) => BigInt(i % t)), [b, t]);
    }
  }
  for (const s of sessions) for (let i = 0; i < 3; ++i) await s.run(feeds);
  const times = sessions.map(() => []);
  for (let r = 0; r < Number(runs); ++r)
    for (let k = 0; k < sessions.length; ++k) {
      const t0 = process.hrtime.bigint();
      await sessions[k].run(feeds);
      times[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  console.log(JSON.stringify(times.map((t) => {
    t.sort((a, b) => a - b);
    return t[Math.floor(t.length / 2)];
  })));
})().catch((e) => { console.error(e.message); process.exitCode = 1; });
