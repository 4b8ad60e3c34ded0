#!/usr/bin/env node
// Benchmarks quiver-live-native against the old JS modules of quiver-cli.
//
//   npm run bench                       build, then the full run (a few minutes on 2 cores, incl. a 600 MiB file)
//   node bench/bench.mjs --quick        smoke run: fewer ops, smaller sizes, no 600 MiB file or 200 MiB line
//   node bench/bench.mjs --only append,day [--big] [--rounds 7]
//
// With QUIVER_REFERENCE_DIR pointing at a checkout of pbakaus/impeccable, the
// old modules (skill/scripts/live/session-store.mjs and source-lock.mjs) are
// imported from there and every workload runs on both, in the same process,
// rounds alternating native, old, native, old, ... The table shows the median
// µs per operation of each, their ratio (old / native, information only),
// the floor (the least work any implementation must do for the row, measured
// in the same run), how far native is above that floor, and the row's
// absolute check where it has one (peak memory, load time, flat replay
// scaling, the long line against the old module, nothing lost or torn under
// contention).
//
// Workloads: one module each, bench/workloads/<name>.mjs, run in the order
// of WORKLOADS below (the names --only takes). A workload module exports
// `run(impls, liveDir)`, which adds its rows and notes (lib/harness.mjs's
// `row`, `NOTES`, `MISSES`); `heavy` when --quick leaves it out unless --big;
// and `child(opts, mod)` when it runs child processes of this script
// (lib/harness.mjs's `runChild([name, json])`). Adding a workload is adding
// its module and its name here. What the workloads share is in bench/lib/:
// events.mjs (the live server's events, journals) and harness.mjs (timing,
// floors, results, temp projects, configuration).
//
// The events are the live server's own: the agent_phase names live-server.mjs
// records, ids of 8 hex characters, generate events carrying the element
// context and the scaffold, browser checkpoints, mount acks, accept/complete,
// discard, steer. The `traffic` workload replays the journals recorded from the
// reference's server in bench/traffic/ (see its README).
//
// Every workload works in its own fresh temp project (a dir holding `.git`, so
// the project root is that dir) under os.tmpdir(), removed at exit. Nothing is
// written into the repository.

import { loadImpl, loadNative, loadOld, referenceLiveDir, cleanup, now, usSince, log, machine, loadavg, printTable, NOTES, MISSES, QUICK, CFG } from './lib/harness.mjs';

const WORKLOADS = [
  'append',
  'phases',
  'snapshot',
  'replay',
  'replay-scale',
  'replay-stale',
  'foreign',
  'list',
  'lock',
  'traffic',
  'day',
  'big',
  'long-line',
  'memory',
  'memory-touch',
  'open',
  'durable',
  'load',
  'contention',
  'full-disk',
];

const workload = (name) => import(new URL(`./workloads/${name}.mjs`, import.meta.url).href);

const argv = process.argv.slice(2);
const onlyArg = argv.indexOf('--only');
const ONLY = onlyArg >= 0 ? new Set(String(argv[onlyArg + 1] || '').split(',').map((s) => s.trim()).filter(Boolean)) : null;
const BIG = argv.includes('--big');

function enabled(name, mod) {
  if (ONLY) return ONLY.has(name);
  if (mod.heavy) return !QUICK || BIG;
  return true;
}

/** `--child NAME JSON`: a child process of workload NAME (its `child`), on the implementation JSON names. */
async function child(name, spec) {
  const opts = JSON.parse(spec);
  const mod = await loadImpl(opts.impl, opts.liveDir);
  await (await workload(name)).child(opts, mod);
}

async function main() {
  if (argv[0] === '--child') {
    await child(argv[1], argv[2]);
    return;
  }
  if (ONLY) {
    const unknown = [...ONLY].filter((w) => !WORKLOADS.includes(w));
    if (unknown.length || ONLY.size === 0) {
      console.error(`--only: unknown or missing workload name(s) ${unknown.join(', ')}; known: ${WORKLOADS.join(', ')}`);
      process.exitCode = 2;
      return;
    }
  }
  const liveDir = referenceLiveDir();
  const impls = { native: loadNative() };
  if (liveDir) impls.js = await loadOld(liveDir);

  const header = [`# quiver-live-native bench${QUICK ? ' (--quick: fewer ops, smaller sizes)' : ''}`, '', `machine: ${machine()}`];
  header.push(`load average at start: ${loadavg()}`);
  header.push(liveDir ? `old module: ${liveDir}` : 'old module: skipped (QUIVER_REFERENCE_DIR not set)');
  header.push(`rounds: ${CFG.rounds} counted (+1 warm-up; ${CFG.replayRounds} for the 20k cold replay), alternating native/old[/floor]; medians shown`);
  console.log(header.join('\n'));

  const started = now();
  for (const name of WORKLOADS) {
    const mod = await workload(name);
    if (!enabled(name, mod)) continue;
    const t0 = now();
    log(`${name} ...`);
    await mod.run(impls, liveDir);
    log(`${name} done in ${(usSince(t0) / 1e6).toFixed(1)} s`);
  }
  console.log('');
  console.log(printTable());
  console.log('');
  for (const n of NOTES) console.log(`- ${n}`);
  console.log('');
  console.log(MISSES.length ? `missed: ${MISSES.join(' | ')}` : 'missed: none');
  console.log(`load average at end: ${loadavg()}`);
  console.log(`total: ${(usSince(started) / 1e6).toFixed(1)} s`);
}

process.on('SIGINT', () => { cleanup(); process.exit(130); });
try {
  await main();
} finally {
  cleanup();
}
