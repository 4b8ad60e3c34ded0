// A/B of appendEvent between builds of this package, in one process, rounds
// alternating: for judging a change that moves an append by less than the
// noise between separate bench runs.
//
//   cp quiver-live-native.linux-x64-gnu.node /tmp/before.node   # then change, rebuild
//   node bench/ab.mjs /tmp/before.node ./quiver-live-native.linux-x64-gnu.node
//
// Each path is a .node file (or anything require() loads that exports
// createLiveSessionStore); copies under different paths load as separate
// instances. Prints the median and minimum µs per append of each.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node bench/ab.mjs A.node [B.node ...]  (env: N ops per round, default 1500; R rounds, default 9)');
  process.exit(2);
}
const N = Number(process.env.N || 1500);
const R = Number(process.env.R || 9);

/** The bench's small events: a checkpoint, an agent phase, a mount ack. */
function smallEvent(id, i) {
  switch (i % 3) {
    case 0: return { type: 'checkpoint', id, revision: 1_000_000 + i, phase: 'variants_ready', owner: 'tab-7f3a', visibleVariant: 1 + (i % 3) };
    case 1: return { type: 'agent_phase', id, phase: 'first_reviewable', durationMs: 12 };
    default: return { type: 'variant_mounted', id, variant: 1 + (i % 3) };
  }
}

const contenders = files.map((file) => {
  const mod = require(path.resolve(file));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-ab-'));
  fs.mkdirSync(path.join(dir, '.git'));
  const store = mod.createLiveSessionStore({ cwd: dir });
  store.appendEvent({
    type: 'generate', id: 'ab', pageUrl: 'http://localhost:3000/pricing', count: 3, action: 'bolder',
    prompt: 'Make the pricing hero feel more confident',
    element: { selector: 'main > section.hero', tag: 'section', classes: ['hero', 'hero--dark'], text: 'Simple pricing for teams' },
    screenshotPath: '/tmp/impeccable/shot-0.png', token: 'tok-0',
  });
  return { file, dir, store, i: 0, times: [] };
});

for (let r = 0; r < R; r++) {
  for (const c of contenders) {
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < N; k++) c.store.appendEvent(smallEvent('ab', ++c.i));
    c.times.push(Number(process.hrtime.bigint() - t0) / 1000 / N);
  }
}
for (const c of contenders) {
  const t = [...c.times].sort((a, b) => a - b);
  console.log(`${c.file}: median ${t[t.length >> 1].toFixed(2)} µs, min ${t[0].toFixed(2)} µs per append (${R} rounds of ${N})`);
  fs.rmSync(c.dir, { recursive: true, force: true });
}
