// ort_basic_optimize.js IN.onnx OUT.onnx
// Lets onnxruntime (CPU) optimize IN at its basic level (constant folding,
// redundant node elimination, and the fusions that keep standard ONNX ops)
// and save the optimized model to OUT (SessionOptions.optimizedModelFilePath).
'use strict';
const ort = require(require('path').resolve(process.env.ORT_NODE_MODULES, 'onnxruntime-node'));
ort.env.logLevel = 'fatal';
const [inp, out] = process.argv.slice(2);
ort.InferenceSession.create(inp, {
  graphOptimizationLevel: 'basic', optimizedModelFilePath: out, executionProviders: ['cpu'],
}).then(() => {}, (e) => { console.error(`${inp}: ${e.message}`); process.exitCode = 1; });
