import fs from 'node:fs';
import path from 'node:path';
import { hexId, longEvent, writeJournal, journalOf } from '../lib/events.mjs';
import { project, removeDir, median, collectGarbage, NOTES, MISSES, row, CFG, runChild } from '../lib/harness.mjs';

/** Memory held by one store with 1,000 sessions, one child process per implementation and round. */
export async function run(impls, liveDir) {
  const count = CFG.memorySessions;
  const dir = project('memory');
  for (let s = 0; s < count; s++) {
    const id = hexId(10_000 + s);
    writeJournal(journalOf(dir, id), id, 12, longEvent);
  }
  const kinds = Object.keys(impls);
  const samples = Object.fromEntries(kinds.map((k) => [k, { rss: [], heap: [] }]));
  for (let r = 0; r < CFG.memoryRounds; r++) {
    for (const k of kinds) {
      // Each child works on its own copy, so neither sees files the other wrote.
      const copy = project(`memory-${k}`);
      fs.cpSync(path.join(dir, '.impeccable'), path.join(copy, '.impeccable'), { recursive: true });
      const res = runChild(['memory', JSON.stringify({ impl: k, liveDir, dir: copy, count })]);
      if (res.error || res.listed !== count) {
        MISSES.push(`memory: ${k} child failed: ${res.error || `listed ${res.listed}`}`);
      } else {
        samples[k].rss.push(res.rssDelta / 2 ** 20);
        samples[k].heap.push(res.heapDelta / 2 ** 20);
      }
      removeDir(copy);
    }
  }
  const med = (k, f) => (samples[k]?.[f].length ? median(samples[k][f]) : null);
  row(`memory: one store holding ${count.toLocaleString('en-US')} sessions, ΔRSS (MB, not µs)`, { old: med('js', 'rss'), native: med('native', 'rss') });
  row(`memory: one store holding ${count.toLocaleString('en-US')} sessions, ΔheapUsed (MB, not µs)`, { old: med('js', 'heap'), native: med('native', 'heap') });
  NOTES.push('memory: delta from after module load to after listActiveSessions + getSnapshot of every session, store kept, results dropped, after gc.');
}

/** In the child process: the memory one store takes to hold every session in `opts.dir`. */
export async function child(opts, mod) {
  const settle = () => { for (let i = 0; i < 4; i++) collectGarbage(); };
  settle();
  const before = process.memoryUsage();
  const store = mod.createLiveSessionStore({ cwd: opts.dir });
  let listed = store.listActiveSessions();
  const n = listed.length;
  for (const s of listed) store.getSnapshot(s.id);
  listed = null;
  settle();
  const after = process.memoryUsage();
  globalThis.__keep = store;
  console.log(JSON.stringify({ listed: n, rssDelta: after.rss - before.rss, heapDelta: after.heapUsed - before.heapUsed }));
}
