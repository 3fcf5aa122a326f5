// ort_optimize_run.js optimize LEVEL IN.onnx OUT.onnx
//   Opens IN on onnxruntime (CPU) at graphOptimizationLevel LEVEL
//   (basic|extended|...) and saves the optimized model to OUT
//   (SessionOptions.optimizedModelFilePath).
// ort_optimize_run.js time SHAPE RUNS LEVEL:MODEL.onnx...
//   Opens every MODEL at its LEVEL (one intra-op thread), then, after 3
//   warm-up runs each, runs them round-robin RUNS times on one random float
//   input `x` of SHAPE (comma-separated dims; and int64 position_ids
//   [B, S] when a model has them): the models share the
//   machine's ups and downs. Prints a JSON list of each model's median ms.
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
  const dims = shape.split(',').map(Number);
  const n = dims.reduce((a, b) => a * b, 1);
  let seed = 1;
  const data = Float32Array.from({ length: n },
    () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1);
  const feeds = { x: new ort.Tensor('float32', data, dims) };
  // A model with position ids (the torch suite's hf-rotary-attention) gets
  // 0..S-1 for each of the B rows of x [B, S, ...].
  if (sessions.some((s) => s.inputNames.includes('position_ids'))) {
    const [b, t] = dims;
    feeds.position_ids = new ort.Tensor('int64',
      BigInt64Array.from({ length: b * t }, (_, i) => BigInt(i % t)), [b, t]);
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
