import fs from 'node:fs';
import { hexId } from '../lib/events.mjs';
import { project, removeDir, median, collectGarbage, NOTES, MISSES, row, CFG, runChild } from '../lib/harness.mjs';

/**
 * Memory held by one process that touches 20,000 sessions, one append and
 * one read each (a long-running server over weeks, or a tool walking every
 * session): one child process per implementation and round, each in a
 * fresh project.
 */
export async function run(impls, liveDir) {
  const count = CFG.touchSessions;
  const kinds = Object.keys(impls);
  const samples = Object.fromEntries(kinds.map((k) => [k, { rss: [], anon: [], heap: [] }]));
  for (let r = 0; r < CFG.touchRounds; r++) {
    for (const k of kinds) {
      const dir = project(`memory-touch-${k}`);
      const res = runChild(['memory-touch', JSON.stringify({ impl: k, liveDir, dir, count })]);
      if (res.error || res.touched !== count) {
        MISSES.push(`memory-touch: ${k} child failed: ${res.error || `touched ${res.touched}`}`);
      } else {
        samples[k].rss.push(res.rss / 2 ** 20);
        if (res.anon !== null) samples[k].anon.push(res.anon / 2 ** 20);
        samples[k].heap.push(res.heap / 2 ** 20);
      }
      removeDir(dir);
    }
  }
  const med = (k, f) => (samples[k]?.[f].length ? median(samples[k][f]) : null);
  const range = (k, f) => (samples[k]?.[f].length ? `${Math.min(...samples[k][f]).toFixed(1)}–${Math.max(...samples[k][f]).toFixed(1)}` : '—');
  const check = samples.js?.rss.length ? { text: '≤ old', met: med('native', 'rss') <= med('js', 'rss') } : null;
  row(`memory: one process touching ${count.toLocaleString('en-US')} sessions (an append and a read each), RSS (MB, not µs)`, { old: med('js', 'rss'), native: med('native', 'rss'), check });
  if (samples.native.anon.length) {
    row(`memory: one process touching ${count.toLocaleString('en-US')} sessions, private memory (RssAnon: RSS less mapped files such as code) (MB, not µs)`, { old: med('js', 'anon'), native: med('native', 'anon') });
  }
  row(`memory: one process touching ${count.toLocaleString('en-US')} sessions, heapUsed (MB, not µs)`, { old: med('js', 'heap'), native: med('native', 'heap') });
  NOTES.push(`memory-touch: RSS and heapUsed of the whole process after gc, the store kept; ${CFG.touchRounds} rounds, ranges: native RSS ${range('native', 'rss')} MB` +
    (samples.js ? `, old ${range('js', 'rss')} MB` : '') + '.');
}

/** In the child process: touch `opts.count` sessions, then measure. */
export async function child(opts, mod) {
  const store = mod.createLiveSessionStore({ cwd: opts.dir });
  for (let s = 0; s < opts.count; s++) {
    const id = hexId(200_000 + s);
    store.appendEvent({ id, type: 'generate', count: 3, pageUrl: '/pricing', action: 'bolder' });
    store.getSnapshot(id);
  }
  for (let i = 0; i < 4; i++) collectGarbage();
  const usage = process.memoryUsage();
  globalThis.__keep = store;
  console.log(JSON.stringify({ touched: opts.count, rss: usage.rss, anon: rssAnon(), heap: usage.heapUsed }));
}

/** The process's anonymous resident memory in bytes (Linux's RssAnon), or null where there is none. */
function rssAnon() {
  try {
    const kb = /^RssAnon:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return kb ? Number(kb[1]) * 1024 : null;
  } catch {
    return null;
  }
}
