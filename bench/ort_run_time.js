// ort_run_time.js RUNS MODEL [NAME=FILE.npy]...
// onnxruntime's side of eval_speed.py: one session on the CPU, one thread
// (intra- and inter-op), graph optimizations disabled, so that it runs the
// graph as written, as the reference evaluator does. Inputs from .npy files
// (float32/64, float16, int8-64, uint8-64, bool; C order). One untimed run,
// then RUNS timed ones. Prints one JSON line: median and best run seconds
// and, in KiB, as onnxir-eval-bench measures its side (Note [Comparable
// memory], bench/EvalBench.cpp): base_kib, the process's RSS with
// onnxruntime loaded and the inputs read, before the session exists;
// loaded_kib, its RSS once the session is made; peak_kib, the process's
// peak RSS at the end; base_peak_kib, that peak at the baseline (node's
// start-up: a peak_kib equal to it means the session and runs never rose
// above it). RSS and peak are /proc/self/status's VmRSS and VmHWM: the
// peak of this program's own memory. getrusage's maxRSS (what
// process.resourceUsage() reports) would also count the parent's pages
// before exec: under eval_speed.py, Python's with numpy and torch loaded.
'use strict';
const fs = require('fs');
const ort = require(require('path').resolve(process.env.ORT_NODE_MODULES, 'onnxruntime-node'));
ort.env.logLevel = 'fatal';

const DTYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<f2': ['float16', Uint16Array],
  '|i1': ['int8', Int8Array], '<i2': ['int16', Int16Array], '<i4': ['int32', Int32Array],
  '<i8': ['int64', BigInt64Array], '|u1': ['uint8', Uint8Array], '<u2': ['uint16', Uint16Array],
  '<u4': ['uint32', Uint32Array], '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

function readNpy(path) {
  const b = fs.readFileSync(path);
  if (b.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = b.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${path}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim())
    .filter((s) => s.length).map(Number);
  const [type, Arr] = DTYPES[descr] || [];
  if (!type) throw new Error(`${path}: element type ${descr} not supported here`);
  const data = b.subarray(start + hlen);
  const copy = new Uint8Array(data.length);
  copy.set(data);
  let values = new Arr(copy.buffer, 0, data.length / Arr.BYTES_PER_ELEMENT);
  if (type === 'bool') values = Uint8Array.from(values);
  return new ort.Tensor(type, type === 'bool' ? Array.from(values, (v) => v !== 0) : values, shape);
}

async function main() {
  const [runs, model, ...args] = process.argv.slice(2);
  if (!model) throw new Error('usage: ort_run_time.js RUNS MODEL [NAME=FILE.npy]...');
  const feeds = {};
  for (const a of args) {
    const eq = a.indexOf('=');
    feeds[a.slice(0, eq)] = readNpy(a.slice(eq + 1));
  }
  const status = (key) => Number(new RegExp(`${key}:\\s*(\\d+) kB`)
    .exec(fs.readFileSync('/proc/self/status', 'latin1'))[1]);
  const kib = () => status('VmRSS');
  const base = kib();
  const basePeak = status('VmHWM');
  const s = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'disabled',
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
  });
  const loaded = kib();
  await s.run(feeds);
  const times = [];
  for (let r = 0; r < Number(runs); r++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ seconds: times[times.length >> 1], best: times[0],
    base_kib: base, loaded_kib: loaded, peak_kib: status('VmHWM'),
    base_peak_kib: basePeak }));
}
main().catch((e) => { console.error(e.message); process.exitCode = 1; });
