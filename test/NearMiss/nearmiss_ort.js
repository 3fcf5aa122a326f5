// nearmiss_ort.js JOBS.json RESULTS.json
// The numeric half of the near-miss test (nearmiss.py): JOBS.json lists, per
// variant, the original model, the models onnx-opt made of it under each
// pipeline, and how to draw its random inputs ({dims, ranges, values} as
// ort_compare.js takes them; atol/rtol). Each original runs on onnxruntime
// (CPU, graph optimizations disabled, so that onnxruntime's own fusions do
// not stand in for ours) on two random input sets; each optimized model must
// give the same output names, and per output the same element type, shape
// and values (ort_compare.js's compareTensors). One node process for every
// model. Writes RESULTS.json: per job {a: 'ok' | why the original failed,
// b: {pipeline: 'ok' | what differs}}.
'use strict';
const fs = require('fs');
const path = require('path');
const cmp = require(path.join(process.env.SHARED_TOOLS, 'ort_compare.js'));

async function main() {
  const ort = cmp.req('onnxruntime-node');
  ort.env.logLevel = 'fatal';
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const sessOpts = { opt: 'disabled', threads: 1 };
  const results = {};
  for (const job of jobs) {
    const res = { a: 'ok', b: {} };
    results[job.id] = res;
    const opts = {
      dims: job.dims || {}, defaultDim: 1, shapes: job.shapes || {}, ranges: job.ranges || {}, values: job.values || {},
    };
    const tol = { atol: job.atol, rtol: job.rtol };
    let sA;
    const runsA = [];
    try {
      sA = await cmp.createSession(ort, job.orig, sessOpts);
      for (const seed of [0, 1]) {
        const feeds = Object.fromEntries(cmp.metaList(sA, 'in').map((m) => [m.name, cmp.randomTensor(m, seed, opts, ort)]));
        runsA.push([feeds, await sA.run(feeds)]);
      }
    } catch (e) {
      res.a = `original fails on onnxruntime: ${String(e.message).split('\n')[0]}`;
      continue;
    }
    for (const [pipeline, file] of Object.entries(job.outs)) {
      let verdict = 'ok';
      try {
        const sB = await cmp.createSession(ort, file, sessOpts);
        const na = [...sA.outputNames].sort().join(','); const nb = [...sB.outputNames].sort().join(',');
        if (na !== nb) throw new Error(`outputs [${na}] became [${nb}]`);
        for (const [feeds, outA] of runsA) {
          const outB = await sB.run(Object.fromEntries(sB.inputNames.map((n) => [n, feeds[n]])));
          for (const n of sA.outputNames) {
            const r = cmp.compareTensors(outA[n], outB[n], tol);
            if (!r.ok) throw new Error(`${n}: ${cmp.fmtErr(r)} (${outA[n].type}[${outA[n].dims}] vs ${outB[n].type}[${outB[n].dims}])`);
          }
        }
      } catch (e) {
        verdict = String(e.message).split('\n')[0];
      }
      res.b[pipeline] = verdict;
    }
  }
  fs.writeFileSync(process.argv[3], JSON.stringify(results, null, 1));
}

main().then(() => {}, (e) => { console.error(e && e.stack || e); process.exitCode = 2; });
