import fs from 'node:fs';
import path from 'node:path';
import { hexId, journalOf, snapshotOf } from '../lib/events.mjs';
import { project, removeDir, NOTES, MISSES, row, fmt, CFG, startChild } from '../lib/harness.mjs';

/**
 * What processes sharing one session do to each other, the old module beside
 * native, in counts rather than times: `writers` processes appending
 * `appends` events each at once (lines sharing a sequence number, events a
 * replay does not show), and a process reading the snapshot file raw for
 * `readMs` while another appends (reads that find it partial). Each row's
 * check wants native at 0, which the fault suite also asserts on every run
 * (__test__/faults/appends.test.mjs, torn-read.test.mjs); the old module's
 * counts vary from run to run and with the number of cores.
 */
export async function run(impls, liveDir) {
  const { writers, appends, readMs } = CFG.contention;
  const kinds = Object.keys(impls);
  const written = {};
  const read = {};
  for (const impl of kinds) written[impl] = await concurrentAppends(impls[impl], impl, liveDir);
  for (const impl of kinds) read[impl] = await rawReads(impls[impl], impl, liveDir);
  const zero = (n) => ({ text: 'native 0', met: n === 0 });
  const label = `${writers} processes × ${appends} appends to one session`;
  row(`${label}: lines sharing another's sequence number (lines, not µs)`, {
    old: written.js?.duplicates, native: written.native.duplicates, check: zero(written.native.duplicates),
  });
  row(`${label}: events a replay does not show (events, not µs)`, {
    old: written.js?.lost, native: written.native.lost, check: zero(written.native.lost),
  });
  row(`the snapshot file read raw for ${readMs / 1000} s while another process appends: partial reads (% of reads, not µs)`, {
    old: read.js?.partialPercent, native: read.native.partialPercent, check: zero(read.native.partial),
  });
  const said = (k) => `${k === 'js' ? 'old' : k}: appends ${fmt(written[k].ms)} ms, ${written[k].lines} lines, ${written[k].unparsable} unparsable; ` +
    `${read[k].reads} raw reads (${read[k].partial} partial, ${read[k].missing} missing) during ${read[k].appends} appends`;
  NOTES.push(`contention: one round, each implementation in its own processes and project; ${kinds.map(said).join('; ')}.`);
}

/** `writers` child processes append to one session at once; what the journal and a replay then hold. */
async function concurrentAppends(mod, impl, liveDir) {
  const { writers, appends } = CFG.contention;
  const dir = project(`contention-appends-${impl}`);
  const id = hexId(12);
  mod.createLiveSessionStore({ cwd: dir }).appendEvent({ type: 'generate', id, count: 4 });
  const goFile = path.join(dir, 'go');
  let ready = 0;
  let allReady;
  const readiness = new Promise((resolve) => { allReady = resolve; });
  const children = Array.from({ length: writers }, (_, writer) => startChild(['contention', JSON.stringify({
    impl, liveDir, mode: 'append', dir, id, writer, count: appends, goFile,
  })], (line) => { if (line === 'ready' && ++ready === writers) allReady(); }));
  await Promise.race([readiness, Promise.all(children.map((c) => c.done))]);
  const t0 = Date.now();
  fs.writeFileSync(goFile, '');
  const results = await Promise.all(children.map((c) => c.done));
  const ms = Date.now() - t0;
  for (const r of results) if (r.status !== 0) MISSES.push(`contention (${impl}): a writer exited ${r.status}: ${r.stderr.slice(-300)}`);
  const seqs = new Map();
  let lines = 0;
  let unparsable = 0;
  for (const line of fs.readFileSync(journalOf(dir, id), 'utf8').split('\n')) {
    if (!line) continue;
    lines++;
    try {
      const { seq } = JSON.parse(line);
      seqs.set(seq, (seqs.get(seq) ?? 0) + 1);
    } catch {
      unparsable++;
    }
  }
  const duplicates = [...seqs.values()].reduce((n, count) => n + count - 1, 0);
  fs.rmSync(snapshotOf(dir, id), { force: true });
  const replayed = mod.createLiveSessionStore({ cwd: dir }).getSnapshot(id, { includeCompleted: true });
  const lost = writers * appends - replayed.mountedVariants.length;
  removeDir(dir);
  return { ms, lines, unparsable, duplicates, lost };
}

/** Reads of the snapshot file, raw (readFileSync, JSON.parse), for `readMs` while a child process appends. */
async function rawReads(mod, impl, liveDir) {
  const { readMs } = CFG.contention;
  const dir = project(`contention-reads-${impl}`);
  const id = hexId(13);
  mod.createLiveSessionStore({ cwd: dir }).appendEvent({ type: 'generate', id, count: 2 });
  const goFile = path.join(dir, 'go');
  let ready;
  const readiness = new Promise((resolve) => { ready = resolve; });
  const writer = startChild(['contention', JSON.stringify({ impl, liveDir, mode: 'timed', dir, id, ms: readMs + 400, goFile })],
    (line) => { if (line === 'ready') ready(); });
  await Promise.race([readiness, writer.done]);
  fs.writeFileSync(goFile, '');
  const file = snapshotOf(dir, id);
  let reads = 0;
  let partial = 0;
  let missing = 0;
  for (const end = Date.now() + readMs; Date.now() < end;) {
    reads++;
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
      missing++;
      continue;
    }
    try {
      JSON.parse(text);
    } catch {
      partial++;
    }
  }
  const r = await writer.done;
  if (r.status !== 0) MISSES.push(`contention (${impl}): the writer exited ${r.status}: ${r.stderr.slice(-300)}`);
  removeDir(dir);
  const appends = JSON.parse(r.lines.at(-1) ?? '{}').appends ?? 0;
  return { reads, partial, missing, appends, partialPercent: (100 * partial) / reads };
}

/**
 * In a child process: once `opts.goFile` exists, `append` appends
 * `opts.count` variant_mounted events (each its own variant), `timed`
 * appends checkpoints for `opts.ms`; then prints how many.
 */
export async function child(opts, mod) {
  const store = mod.createLiveSessionStore({ cwd: opts.dir });
  console.log('ready');
  const wait = new Int32Array(new SharedArrayBuffer(4));
  while (!fs.existsSync(opts.goFile)) Atomics.wait(wait, 0, 0, 1);
  let n = 0;
  if (opts.mode === 'append') {
    for (; n < opts.count; n++) store.appendEvent({ type: 'variant_mounted', id: opts.id, variant: 1000 * (opts.writer + 1) + n + 1 });
  } else {
    for (const end = Date.now() + opts.ms; Date.now() < end; n++) {
      store.appendEvent({ type: 'checkpoint', id: opts.id, revision: n + 1, phase: 'variants_ready', owner: 'bench' });
    }
  }
  console.log(JSON.stringify({ appends: n }));
}
