#!/usr/bin/env node
'use strict';
/*
 * ort_shapes.js MODEL [ort_compare.js input options: --shape, --value, --range, --dim, --seed ...]
 *
 * Runs MODEL once on onnxruntime-node (CPU) with the inputs the numeric oracle
 * (SHARED_TOOLS/ort_compare.js, used as a module) would give it, and prints
 * the real shape of every graph output as one JSON object
 * {"name": [d0, d1, ...], ...} on stdout. Nothing is written to disk: the
 * outputs are fetched a chunk at a time, the chunk sized so that about
 * CHUNK_BYTES of tensors are alive at once, and only their dims are kept.
 * ort_dims.py exposes every value of a model as an output and checks our
 * inferred dims against these.
 *
 * Exit 2 on a usage error or when the model does not run.
 */
const path = require('path');

const CHUNK_BYTES = 256 * 1024 * 1024;

async function main(argv) {
  const cmp = require(path.join(process.env.SHARED_TOOLS, 'ort_compare.js'));
  const opts = cmp.parseArgs(argv);
  if (opts.files.length !== 1) throw new Error('one model, please');
  const ort = cmp.req('onnxruntime-node');
  const session = await cmp.createSession(ort, opts.files[0], { opt: 'disabled' });
  const feeds = {};
  for (const meta of cmp.metaList(session, 'in')) {
    feeds[meta.name] = cmp.randomTensor(meta, opts.seed, opts, ort);
  }
  const shapes = {};
  const names = session.outputNames;
  let chunk = 16;
  for (let at = 0; at < names.length;) {
    const fetch = names.slice(at, at + chunk);
    const outs = await session.run(feeds, fetch);
    let bytes = 0;
    for (const name of fetch) {
      const t = outs[name];
      shapes[name] = Array.from(t.dims, Number);
      bytes += t.data && t.data.byteLength !== undefined ? t.data.byteLength : t.size * 8;
      if (typeof t.dispose === 'function') t.dispose();
    }
    at += fetch.length;
    const perValue = Math.max(1, bytes / fetch.length);
    chunk = Math.max(1, Math.min(1024, Math.floor(CHUNK_BYTES / perValue)));
  }
  process.stdout.write(JSON.stringify(shapes) + '\n');
  return 0;
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e) => {
  console.error(`ort_shapes: ${e && e.message ? e.message : e}`);
  process.exitCode = 2;
});
