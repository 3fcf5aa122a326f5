// ort_load_time.js RUNS LEVEL CLOCK FILE...
// Best (minimum) time in ms of onnxruntime (CPU) creating an inference
// session for each FILE, over RUNS runs each, at graph optimization LEVEL
// (disabled|basic|extended|all). CLOCK is `wall`, or `cpu` for the process's
// user + system time (all of onnxruntime's threads). One line per file:
// "FILE BEST_MS". Runs alternate between the files, so that a busy machine
// disturbs them alike.
'use strict';
const ort = require(require('path').resolve(process.env.ORT_NODE_MODULES, 'onnxruntime-node'));
ort.env.logLevel = 'fatal';

function clock(kind) {
  if (kind === 'cpu') {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e3;
  }
  return Number(process.hrtime.bigint()) / 1e6;
}

async function main() {
  const [runs, level, kind, ...files] = process.argv.slice(2);
  if (!files.length || (kind !== 'cpu' && kind !== 'wall')) {
    throw new Error('usage: ort_load_time.js RUNS LEVEL wall|cpu FILE...');
  }
  const times = files.map(() => []);
  for (let r = 0; r < Number(runs); r++) {
    for (let i = 0; i < files.length; i++) {
      const t0 = clock(kind);
      const s = await ort.InferenceSession.create(files[i], {
        graphOptimizationLevel: level, executionProviders: ['cpu'],
      });
      times[i].push(clock(kind) - t0);
      await s.release();
    }
  }
  files.forEach((f, i) => {
    const v = times[i].sort((a, b) => a - b);
    console.log(`${f} ${v[0].toFixed(2)}`);
  });
}
main().catch((e) => { console.error(e.message); process.exitCode = 1; });
