// backend_o2.js LIST
// LIST has one line per model: "ORIGINAL.onnx OPTIMIZED.onnx DATA_DIR". Runs
// both with onnxruntime (CPU, graph optimizations disabled, so that ORT's
// own rewrites do not hide ours) on DATA_DIR's input_*.pb and compares every
// output (atol 1e-5, rtol 1e-4: -O2's fusions reassociate float sums). One
// process for the whole corpus. Models onnxruntime cannot load or run in
// their original form are counted as skipped, not failed: the oracle has
// nothing to say about them. Exit 1 if any optimized model fails to load or
// differs.
'use strict';
const fs = require('fs');
const path = require('path');
const cmp = require(path.join(process.env.SHARED_TOOLS, 'ort_compare.js'));

async function main() {
  const ort = cmp.req('onnxruntime-node');
  ort.env.logLevel = 'fatal'; // the corpus has many models ORT warns about
  const lines = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.trim());
  const opts = { opt: 'disabled', threads: 1 };
  const tol = { atol: 1e-5, rtol: 1e-4 };
  let pass = 0; let skip = 0; let fail = 0; let noKernel = 0;
  // KERNEL_GAPS_OK=1 (convert-opset's corpus run): a converted model that
  // onnxruntime rejects for want of a kernel of an op version it does not
  // implement (RoiAlign-22 in 1.30) is counted apart, not failed: the model
  // is schema-valid at the target (onnx-opt checked), the oracle is silent.
  const kernelGapsOk = process.env.KERNEL_GAPS_OK === '1';
  for (const line of lines) {
    const [a, b, dir] = line.split(' ');
    let sA; let outA; let feeds;
    try {
      sA = await cmp.createSession(ort, a, opts);
      feeds = cmp.feedsFromDir(ort, sA, dir);
      outA = await sA.run(feeds);
    } catch (e) { skip++; continue; }
    try {
      const sB = await cmp.createSession(ort, b, opts);
      const feedsB = Object.fromEntries(sB.inputNames.map((n, i) => [n, feeds[n] || feeds[sA.inputNames[i]]]));
      const outB = await sB.run(feedsB);
      const pairs = cmp.pairOutputs(outA, sA.outputNames, outB, sB.outputNames, false);
      if (!pairs) throw new Error('outputs differ in number');
      for (const [na, nb] of pairs) {
        const r = cmp.compareTensors(outA[na], outB[nb], tol);
        if (!r.ok) throw new Error(`output ${na}: ${cmp.fmtErr(r)}`);
      }
      pass++;
    } catch (e) {
      if (kernelGapsOk && /Could not find an implementation for/.test(e.message)) {
        noKernel++;
        console.log(`NO KERNEL: ${b}: ${e.message.split('\n')[0]}`);
        continue;
      }
      fail++;
      console.log(`FAIL: ${b}: ${e.message}`);
    }
  }
  console.log(`${process.env.LABEL || 'backend-o2'}: ${pass} passed, ${skip} skipped (onnxruntime cannot run the original), ${fail} failed` +
              (kernelGapsOk ? `, ${noKernel} without an onnxruntime kernel at the target` : ''));
  return fail ? 1 : 0;
}
main().then((c) => { process.exitCode = c; }, (e) => { console.error(e); process.exitCode = 2; });
