// ort_load_time.js RUNS LEVEL FILE...
// Best (minimum) wall time in ms of onnxruntime (CPU) creating an inference
// session for each FILE, over RUNS runs each, at graph optimization LEVEL
// (disabled|basic|extended|all). One line per file: "FILE BEST_MS".
// Runs alternate between the files, so that a busy machine slows all alike.
'use strict';
const ort = require(require('path').join(process.env.ORT_NODE_MODULES, 'onnxruntime-node'));
ort.env.logLevel = 'fatal';

async function main() {
  const [runs, level, ...files] = process.argv.slice(2);
  const times = files.map(() => []);
  for (let r = 0; r < Number(runs); r++) {
    for (let i = 0; i < files.length; i++) {
      const t0 = process.hrtime.bigint();
      const s = await ort.InferenceSession.create(files[i], {
        graphOptimizationLevel: level, executionProviders: ['cpu'],
      });
      times[i].push(Number(process.hrtime.bigint() - t0) / 1e6);
      await s.release();
    }
  }
  files.forEach((f, i) => {
    const v = times[i].sort((a, b) => a - b);
    console.log(`${f} ${v[0].toFixed(2)}`);
  });
}
main().catch((e) => { console.error(e.message); process.exitCode = 1; });
