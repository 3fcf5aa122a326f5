#!/usr/bin/env node
'use strict';
/*
 * ort_pairs.js JOBS.json: runs many model pairs on onnxruntime-node in one
 * process (one start-up instead of one per pair; torch_precision.py). JOBS
 * is a list of {ref, model, inputs, skip}: both models run on the
 * TensorProto files inputs/input_<i>.pb (ort_compare.js's feedsFromDir).
 * Prints one JSON line per job: {model, ok, error, maxAbs, maxRef, nan}: the
 * largest |model - ref| over every output, leaving out the elements at the
 * [batch, token] positions listed in skip (padded tokens) of outputs of rank
 * 2 or more, the largest |ref|, and whether the model gave a NaN or infinity
 * where ref did not (over every element). ok is false when a model does
 * not load or run (error says why). Graph optimizations: onnxruntime's
 * default (all).
 */
const fs = require('fs');
const path = require('path');

const shared = process.env.SHARED_TOOLS || path.join(__dirname, '../../../shared/tools');
const cmp = require(path.join(shared, 'ort_compare.js'));

function floats(t) {
  if (t.type === 'float16' && t.data instanceof Uint16Array) {
    // As ort_compare.js reads them.
    const out = new Float32Array(t.data.length);
    for (let i = 0; i < t.data.length; i++) {
      const h = t.data[i]; const s = h & 0x8000 ? -1 : 1; const e = (h >> 10) & 0x1f; const f = h & 0x3ff;
      out[i] = e === 0 ? s * f * 2 ** -24 : e === 31 ? (f ? NaN : s * Infinity) : s * (1 + f / 1024) * 2 ** (e - 15);
    }
    return out;
  }
  return t.data;
}

async function main() {
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const ort = cmp.req('onnxruntime-node');
  const sessions = new Map();
  const session = async (file) => {
    if (!sessions.has(file)) sessions.set(file, await cmp.createSession(ort, file, { opt: 'all' }));
    return sessions.get(file);
  };
  const refOut = new Map();
  for (const job of jobs) {
    const r = { model: job.model, ok: false, error: '', maxAbs: 0, maxRef: 0, nan: false };
    try {
      const key = `${job.ref}\n${job.inputs}`;
      if (!refOut.has(key)) {
        const s = await session(job.ref);
        refOut.set(key, await s.run(cmp.feedsFromDir(ort, s, job.inputs)));
      }
      const a = refOut.get(key);
      const s = await session(job.model);
      const b = await s.run(cmp.feedsFromDir(ort, s, job.inputs));
      for (const name of Object.keys(a)) {
        if (!(name in b)) throw new Error(`output ${name} missing`);
        const x = floats(a[name]); const y = floats(b[name]);
        if (x.length !== y.length) throw new Error(`output ${name}: ${x.length} vs ${y.length} elements`);
        const dims = a[name].dims.map(Number);
        const inner = dims.length >= 2 ? x.length / (dims[0] * dims[1]) : x.length;
        const skipped = new Set((job.skip || []).map(([bb, t]) => bb * (dims[1] || 1) + t));
        for (let i = 0; i < x.length; i++) {
          const p = Number(x[i]); const q = Number(y[i]);
          if (Number.isFinite(p) && !Number.isFinite(q)) r.nan = true;
          if (dims.length >= 2 && skipped.has(Math.floor(i / inner))) continue;
          if (Number.isFinite(p)) r.maxRef = Math.max(r.maxRef, Math.abs(p));
          if (Number.isFinite(p) && Number.isFinite(q)) r.maxAbs = Math.max(r.maxAbs, Math.abs(p - q));
        }
      }
      r.ok = true;
    } catch (e) {
      r.error = String(e && e.message || e).split('\n')[0];
    }
    console.log(JSON.stringify(r));
  }
}

main().catch((e) => { console.error(e && e.stack || e); process.exitCode = 2; });
