// A/B of appendEvent between builds of this package, in one process, rounds
// alternating: for judging a change that moves an append by less than the
// noise between separate bench runs.
//
//   cp quiver-live-native.linux-x64-gnu.node /tmp/before.node   # then change, rebuild
//   node bench/ab.mjs /tmp/before.node ./quiver-live-native.linux-x64-gnu.node
//   node bench/ab.mjs --day /tmp/before.node ./quiver-live-native.linux-x64-gnu.node
//
// Without --day: small events appended to one session. With --day: the bench's
// server's day (workloads/day.mjs: 50 sessions round-robin, each append read
// back by a second store, a listing every 10 appends), µs per append, a
// fresh project per round.
//
// Each path is a .node file, over which the package's API is made (lib/api.cjs's
// `create`), or a module that exports createLiveSessionStore; copies under
// different paths load as separate instances. Prints the median, minimum and
// maximum µs per append of each, and each one's difference from the first,
// paired round by round.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { dayPlan } from './workloads/day.mjs';

const require = createRequire(import.meta.url);
const { create } = require('../lib/api.cjs');
const DAY = process.argv.includes('--day');
const files = process.argv.slice(2).filter((a) => a !== '--day');
if (files.length === 0) {
  console.error('usage: node bench/ab.mjs [--day] A.node [B.node ...]  (env: N ops per round, default 1500; R rounds, default 9)');
  process.exit(2);
}
const N = Number(process.env.N || 1500);
const R = Number(process.env.R || 9);

/** Small events as the live server journals them: a browser checkpoint, an agent phase (the names it records), a mount ack. */
const PHASES = ['picked_up', 'scaffolding', 'source_ready', 'generation_ready', 'first_reviewable', 'second_reviewable', 'all_variants_ready'];
function smallEvent(id, i) {
  switch (i % 3) {
    case 0: return {
      token: TOKEN, type: 'checkpoint', id, revision: 1_000_000 + i, revisionDomain: 'browser', owner: 'browser-3fa94c21', reason: 'param_changed',
      pageUrl: '/pricing', phase: 'cycling', expectedVariants: 3, arrivedVariants: 3, visibleVariant: 1 + (i % 3), paramValues: { weight: 500 + (i % 5) * 100 },
    };
    case 1: return { type: 'agent_phase', id, phase: PHASES[i % PHASES.length], at: 1748772000000 + i * 250 };
    default: return { token: TOKEN, type: 'variant_mounted', id, variant: 1 + (i % 3), url: `/src/components/Hero.jsx?t=${1748772000000 + i}` };
  }
}
const TOKEN = '6f1c2b9e-4d7a-4e8b-9a35-2c1d0e7f8a94';
const ID = '5e1d07a3'; // 8 hex characters, as the browser makes session ids

function project() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-ab-'));
  fs.mkdirSync(path.join(dir, '.git'));
  return dir;
}

const contenders = files.map((file) => {
  const loaded = require(path.resolve(file));
  const mod = typeof loaded.createLiveSessionStore === 'function' ? loaded : create(loaded);
  return { file, mod, i: 0, times: [] };
});

/** One round of appends to one session, in the contender's own project (made on its first round). */
function appendRound(c) {
  if (!c.store) {
    c.dir = project();
    c.store = c.mod.createLiveSessionStore({ cwd: c.dir });
    c.store.appendEvent({
      type: 'generate', id: ID, pageUrl: '/pricing', count: 3, action: 'bolder',
      element: {
        tagName: 'section', id: null, classes: ['hero', 'hero--dark'], textContent: 'Simple pricing for teams',
        outerHTML: '<section class="hero hero--dark"><h1 class="hero__title">Simple pricing for teams</h1></section>',
      },
      token: TOKEN,
    });
  }
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < N; k++) c.store.appendEvent(smallEvent(ID, ++c.i));
  return Number(process.hrtime.bigint() - t0) / 1000 / N;
}

const day = DAY ? dayPlan(50, N) : null;

/** One server's day in a fresh project: µs per append, reads and listings included. */
function dayRound(c) {
  const dir = project();
  try {
    const writer = c.mod.createLiveSessionStore({ cwd: dir });
    const reader = c.mod.createLiveSessionStore({ cwd: dir });
    for (const e of day.leadIn) writer.appendEvent(e);
    reader.listActiveSessions();
    const t0 = process.hrtime.bigint();
    for (let op = 0; op < day.stream.length; op++) {
      const e = day.stream[op];
      writer.appendEvent(e);
      reader.getSnapshot(e.id);
      if (op % 10 === 9) reader.listActiveSessions();
    }
    return Number(process.hrtime.bigint() - t0) / 1000 / day.stream.length;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

for (let r = 0; r < R; r++) {
  for (const c of contenders) c.times.push(DAY ? dayRound(c) : appendRound(c));
}
const what = DAY ? "server's day" : 'append';
for (const c of contenders) {
  const t = [...c.times].sort((a, b) => a - b);
  console.log(`${c.file}: ${what} median ${t[t.length >> 1].toFixed(2)} µs, min ${t[0].toFixed(2)} µs, max ${t[t.length - 1].toFixed(2)} µs per append (${R} rounds of ${N})`);
  if (c.dir) fs.rmSync(c.dir, { recursive: true, force: true });
}
// Rounds alternate, so a round of one and the next of another ran under much
// the same load: the median of those paired differences is steadier than the
// difference of the two medians.
for (const c of contenders.slice(1)) {
  const d = c.times.map((t, i) => t - contenders[0].times[i]).sort((a, b) => a - b);
  const q = (f) => d[Math.floor(f * (d.length - 1))].toFixed(2);
  console.log(`${c.file} − ${contenders[0].file}, paired by round: median ${q(0.5)} µs, quartiles ${q(0.25)} to ${q(0.75)} µs per append`);
}
