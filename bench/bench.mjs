#!/usr/bin/env node
// Benchmarks quiver-live-native against the old JS modules of quiver-cli.
//
//   npm run bench                       build, then the full run (~1 min on 2 cores, incl. a 600 MiB file)
//   node bench/bench.mjs --quick        smoke run: fewer ops, smaller sizes, no 600 MB file
//   node bench/bench.mjs --only append,lock [--big] [--rounds 7]
//
// With QUIVER_REFERENCE_DIR pointing at a checkout of pbakaus/impeccable, the
// old modules (skill/scripts/live/session-store.mjs and source-lock.mjs) are
// imported from there and every workload runs on both, in the same process,
// rounds alternating native, old, native, old, ... The table shows the median
// µs per operation of each. Nothing of the reference is copied here.
//
// Workload names for --only: append, snapshot, replay, replay-scale,
// replay-stale, foreign, list, lock, big, memory, durable.
//
// Every workload works in its own fresh temp project (a dir holding `.git`, so
// the project root is that dir) under os.tmpdir(), removed at exit. Nothing is
// written into the repository.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const THIS_FILE = fileURLToPath(import.meta.url);
const PACKAGE_DIR = path.resolve(HERE, '..');
const PACKAGE_ENTRY = path.join(PACKAGE_DIR, 'index.js');

// ---------------------------------------------------------------------------
// Loading the implementations

function loadNative() {
  const require = createRequire(path.join(PACKAGE_DIR, 'package.json'));
  return require(PACKAGE_ENTRY);
}

/** The reference's live dir (where session-store.mjs and source-lock.mjs are). */
function referenceLiveDir(dir = process.env.QUIVER_REFERENCE_DIR) {
  if (!dir) return null;
  for (const candidate of [path.join(dir, 'skill', 'scripts', 'live'), path.join(dir, 'scripts', 'live'), path.join(dir, 'live'), dir]) {
    if (fs.existsSync(path.join(candidate, 'session-store.mjs')) && fs.existsSync(path.join(candidate, 'source-lock.mjs'))) {
      return candidate;
    }
  }
  throw new Error(`QUIVER_REFERENCE_DIR=${dir}: no skill/scripts/live/{session-store,source-lock}.mjs found`);
}

async function loadOld(liveDir) {
  const store = await import(pathToFileURL(path.join(liveDir, 'session-store.mjs')).href);
  const lock = await import(pathToFileURL(path.join(liveDir, 'source-lock.mjs')).href);
  return {
    createLiveSessionStore: store.createLiveSessionStore,
    withSourceLockSync: lock.withSourceLockSync,
    sourceLockPath: lock.sourceLockPath,
  };
}

async function loadImpl(kind, liveDir) {
  return kind === 'native' ? loadNative() : loadOld(liveDir);
}

// ---------------------------------------------------------------------------
// Events and journals

const BASE_TS = Date.parse('2025-06-01T10:00:00.000Z');
const PAGE_URL = 'http://localhost:5173/pricing';
const SOURCE_FILE = 'src/pages/pricing.astro';
const PREVIEW_FILE = '.impeccable/live/preview/pricing.html';

/**
 * Event `i` of a realistic, endlessly repeating live cycle: generate, plan,
 * agent phases, variants ready, three mount acks, a browser and a publication
 * checkpoint, a steer and its answer. No diagnostics accumulate, so the
 * snapshot stays the same size however long the journal gets.
 */
function cycleEvent(id, i, extra) {
  const p = i % CYCLE;
  const c = Math.floor(i / CYCLE);
  const at = BASE_TS + i * 1000;
  let e;
  switch (p) {
    case 0: e = {
      type: 'generate', id, pageUrl: PAGE_URL, count: 3, action: 'bolder',
      prompt: 'Make the pricing hero feel more confident',
      element: { selector: 'main > section.hero', tag: 'section', classes: ['hero', 'hero--dark'], text: 'Simple pricing for teams' },
      screenshotPath: `/tmp/impeccable/shot-${c % 4}.png`, token: `tok-${c}`,
    }; break;
    case 1: e = { type: 'variant_plan', id, plan: { count: 3, variants: [{ n: 1, label: 'Heavier type' }, { n: 2, label: 'Contrast band' }, { n: 3, label: 'Split layout' }] } }; break;
    case 2: e = { type: 'agent_phase', id, phase: 'picked_up', at, durationMs: 180 }; break;
    case 3: e = { type: 'agent_phase', id, phase: 'generation_ready', at, durationMs: 4200 }; break;
    case 4: e = { type: 'variants_ready', id, arrivedVariants: 3, sourceFile: SOURCE_FILE, previewFile: PREVIEW_FILE, previewMode: 'inline', at }; break;
    case 5: case 6: case 7: e = { type: 'variant_mounted', id, variant: p - 4, url: `/@impeccable/variant-${p - 4}.js` }; break;
    case 8: e = {
      type: 'checkpoint', id, revision: c + 1, phase: 'variants_ready', owner: 'tab-7f3a', visibleVariant: 2, arrivedVariants: 3,
      paramValues: { weight: 700, accent: '#ff3355', density: 'comfortable' },
    }; break;
    case 9: e = { type: 'checkpoint', id, reason: 'variants_progress', revision: c + 1, arrivedVariants: 3 }; break;
    case 10: e = { type: 'steer', id, pageUrl: PAGE_URL, prompt: 'A little less contrast on the band', variant: 2 }; break;
    default: e = { type: 'steer_done', id, message: 'Softened the contrast band', sourceFile: SOURCE_FILE, previewFile: PREVIEW_FILE, previewMode: 'inline' }; break;
  }
  return extra ? { ...e, ...extra } : e;
}
const CYCLE = 12;
/** The phase after the journal's last event has cycle position `p`. */
const PHASE_AFTER = ['generate_requested', 'generate_requested', 'generate_requested', 'generate_requested',
  'variants_ready', 'variants_ready', 'variants_ready', 'variants_ready', 'variants_ready', 'variants_ready',
  'steer_requested', 'steer_done'];

/** Half the events are stale browser checkpoints: each one adds a diagnostic. */
function staleEvent(id, i) {
  return i % 2 === 0
    ? { type: 'checkpoint', id, revision: i / 2 + 1, phase: 'variants_ready', owner: 'tab-a', visibleVariant: 1 }
    : { type: 'checkpoint', id, revision: 0, phase: 'generating', owner: 'tab-b' };
}

/** A small event as the live server appends them during a session. */
function smallEvent(id, i) {
  switch (i % 3) {
    case 0: return { type: 'checkpoint', id, revision: 1_000_000 + i, phase: 'variants_ready', owner: 'tab-7f3a', visibleVariant: 1 + (i % 3) };
    case 1: return { type: 'agent_phase', id, phase: 'first_reviewable', durationMs: 12 };
    default: return { type: 'variant_mounted', id, variant: 1 + (i % 3) };
  }
}

function journalLine(seq, event, at = BASE_TS + (seq - 1) * 1000) {
  return JSON.stringify({ seq, id: event.id, type: event.type, ts: new Date(at).toISOString(), event }) + '\n';
}

/** Writes `n` events from `gen(id, i)` straight into a journal, as appendEvent would have. */
function writeJournal(file, id, n, gen) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  try {
    let chunk = '';
    for (let i = 0; i < n; i++) {
      chunk += journalLine(i + 1, gen(id, i));
      if (chunk.length > 1 << 22) { fs.writeSync(fd, chunk); chunk = ''; }
    }
    if (chunk) fs.writeSync(fd, chunk);
  } finally {
    fs.closeSync(fd);
  }
}

const sessionsDir = (root) => path.join(root, '.impeccable', 'live', 'sessions');
const journalOf = (root, id) => path.join(sessionsDir(root), `${id}.jsonl`);
const snapshotOf = (root, id) => path.join(sessionsDir(root), `${id}.snapshot.json`);

// ---------------------------------------------------------------------------
// Temp projects

let TMP_ROOT = null;
function tmpRoot() {
  if (!TMP_ROOT) TMP_ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-bench-'));
  return TMP_ROOT;
}
function cleanup() {
  if (TMP_ROOT) {
    try { fs.rmSync(TMP_ROOT, { recursive: true, force: true }); } catch { /* best effort */ }
    TMP_ROOT = null;
  }
}

/** A fresh project dir: holds `.git`, so it is its own project root. */
function project(label) {
  const dir = fs.mkdtempSync(path.join(tmpRoot(), `${label}-`));
  fs.mkdirSync(path.join(dir, '.git'));
  return dir;
}

// ---------------------------------------------------------------------------
// Timing

const now = () => process.hrtime.bigint();
const usSince = (t0) => Number(now() - t0) / 1000;

/** µs per call of `fn(i)` over `n` calls. */
function perOp(n, fn) {
  const t0 = now();
  for (let i = 0; i < n; i++) fn(i);
  return usSince(t0) / n;
}

/** µs per call of `fn(i)` over `n` calls, with untimed `before(i)` between. */
function perOpWith(n, before, fn) {
  let total = 0n;
  for (let i = 0; i < n; i++) {
    before(i);
    const t0 = now();
    fn(i);
    total += now() - t0;
  }
  return Number(total) / 1000 / n;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Runs each contender's round function in turn, `warmup + rounds` times
 * (native, old, floor, native, old, floor, ...), and returns the median of
 * the counted rounds per contender.
 */
/**
 * Writes back every dirty page (and lets the file system commit) before a
 * contender's round, untimed: otherwise one contender's deferred disk work
 * (journal commits, and on this `discard` mount the trimming of the blocks
 * the old module's renames free) lands in the next contender's round.
 */
function settleDisk() {
  if (CFG.settle) spawnSync('sync');
}

function alternate(contenders, rounds = CFG.rounds, warmup = 1, budgetSec = Infinity) {
  const samples = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  const t0 = now();
  let counted = 0;
  for (let r = 0; r < warmup + rounds; r++) {
    for (const [k, run] of Object.entries(contenders)) {
      if (!run) continue;
      settleDisk();
      const v = run(r);
      if (r >= warmup) samples[k].push(v);
      if (process.env.QLN_BENCH_TRACE) log(`round ${r} ${k}: ${v}`);
    }
    if (r >= warmup) counted++;
    // Only a pathologically slow build gets here: keep the whole run bounded.
    if (usSince(t0) / 1e6 > budgetSec && r + 1 < warmup + rounds) {
      log(`time budget of ${budgetSec} s spent after ${counted} counted round(s)`);
      if (counted === 0) continue;
      break;
    }
  }
  const out = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, v.length ? median(v) : null]));
  Object.defineProperty(out, 'rounds', { value: counted, enumerable: false });
  return out;
}

/** " (3 rounds: time budget)" when a workload had to stop early. */
const roundsNote = (res) => (res.rounds < CFG.rounds ? ` (${res.rounds} round${res.rounds === 1 ? '' : 's'}: time budget)` : '');

// ---------------------------------------------------------------------------
// Results

const ROWS = [];
const NOTES = [];
const MISSES = [];

/**
 * One table row. `target`: { speedup: x } (old/native ≥ x), { belowMb: x },
 * { notAbove: 'old' } (native ≤ old), { flat: x } (largest/smallest ≤ x,
 * checked by the caller), or null.
 */
function row(name, { old = null, native = null, target = null, floor = null, floorValue = undefined, met = undefined, targetText = undefined, speedup = undefined }) {
  if (speedup === undefined) speedup = old != null && native != null && native > 0 ? old / native : null;
  // The time the target asks for, against the floor measured in the same run:
  // a target below the floor cannot be met by any implementation on this disk.
  if (floorValue === undefined) floorValue = typeof floor === 'number' ? floor : null;
  const needs = target?.speedup && old != null ? old / target.speedup : null;
  const belowFloor = needs != null && floorValue != null && needs < floorValue;
  let tText = targetText ?? '';
  if (met === undefined) {
    met = null;
    if (target?.speedup) {
      tText ||= `≥${target.speedup}x`;
      met = speedup == null ? null : speedup >= target.speedup;
    } else if (target?.belowMb) {
      tText ||= `< ${target.belowMb} MB`;
      met = native == null ? null : native < target.belowMb;
    } else if (target?.notAbove) {
      tText ||= '≤ old';
      met = old == null || native == null ? null : native <= old;
    }
  }
  ROWS.push({ name, old, native, speedup, target: tText, floor, floorValue, met, belowFloor, needs });
  if (met === false) MISSES.push(name);
}

function fmt(x, unit = '') {
  if (x == null || Number.isNaN(x)) return '—';
  if (typeof x === 'string') return x;
  const a = Math.abs(x);
  const s = a >= 1000 ? Math.round(x).toLocaleString('en-US') : a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
  return s + unit;
}

function truncate(x) {
  const a = Math.abs(x);
  const scale = a >= 100 ? 1 : a >= 10 ? 10 : 100;
  return Math.trunc(x * scale) / scale;
}

function printTable() {
  const lines = [];
  lines.push('| workload | old (µs) | native (µs) | speedup | target | floor (µs) | met? |');
  lines.push('|---|---:|---:|---:|---|---:|---|');
  for (const r of ROWS) {
    // Truncated, not rounded, so a 1.996x never prints as "2.00x" next to a miss.
    const sp = r.speedup == null ? '—' : typeof r.speedup === 'string' ? r.speedup : `${fmt(truncate(r.speedup))}x`;
    const met = r.met == null ? '—' : r.met ? 'yes' : r.belowFloor ? `**no**: target = ${fmt(r.needs)} µs, below the floor`
      : r.needs != null && r.floorValue != null ? `**no**: target = ${fmt(r.needs)} µs, floor = ${fmt(r.floorValue)} µs` : '**no**';
    lines.push(`| ${r.name} | ${fmt(r.old)} | ${fmt(r.native)} | ${sp} | ${r.target || '—'} | ${fmt(r.floor)} | ${met} |`);
  }
  return lines.join('\n');
}

function machine() {
  let cpu = 'unknown';
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) cpu = m[1].trim();
  } catch { /* not linux */ }
  const nproc = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return `nproc ${nproc}, CPU ${cpu}, node ${process.version}, ${os.platform()} ${os.release()}, ${new Date().toISOString()}`;
}

function log(msg) {
  process.stderr.write(`[bench] ${msg}\n`);
}

// ---------------------------------------------------------------------------
// Configuration

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const onlyArg = argv.indexOf('--only');
const ONLY = onlyArg >= 0 ? new Set(String(argv[onlyArg + 1] || '').split(',').map((s) => s.trim()).filter(Boolean)) : null;
const roundsArg = argv.indexOf('--rounds');
const BIG = argv.includes('--big');

const CFG = QUICK ? {
  rounds: 5, replayRounds: 5, appendOps: 40, snapshotOps: 2000, replayEvents: 5_000, scale: [1_000, 5_000, 20_000],
  staleEvents: 2_000, staleScale: [1_000, 2_000, 5_000], foreignEvents: 10_000, foreignOpsA: 20, foreignOpsB: { native: 20, js: 1 },
  listSessions: 100, listWarmOps: 5, listFreshOps: 2, lockOps: 100, durableOps: 10, memorySessions: 300, memoryRounds: 5,
} : {
  rounds: 7, replayRounds: 15, appendOps: 1500, snapshotOps: 20_000, replayEvents: 20_000, scale: [1_000, 10_000, 100_000],
  staleEvents: 5_000, staleScale: [1_000, 5_000, 20_000], foreignEvents: 10_000, foreignOpsA: 200, foreignOpsB: { native: 200, js: 3 },
  listSessions: 500, listWarmOps: 20, listFreshOps: 5, lockOps: 300, durableOps: 40, memorySessions: 1_000, memoryRounds: 5,
};
CFG.settle = !argv.includes('--no-settle');
if (roundsArg >= 0) CFG.rounds = Math.max(5, Number(argv[roundsArg + 1]) || CFG.rounds);
// A cold replay round takes milliseconds, and on this two-core machine a
// round now and then has a core to itself and now and then shares one
// (the native replay reads ahead on a second thread): 15 rounds give its
// median room to land in the common case for both modules.
CFG.replayRounds = Math.max(CFG.rounds, CFG.replayRounds);

const WORKLOADS = ['append', 'snapshot', 'replay', 'replay-scale', 'replay-stale', 'foreign', 'list', 'lock', 'big', 'memory', 'durable'];
function enabled(name) {
  if (ONLY) return ONLY.has(name);
  if (name === 'big') return !QUICK || BIG;
  return true;
}

// ---------------------------------------------------------------------------
// Workloads

/** 1 and 9: appendEvent of small events to one session, snapshot file kept current. */
function wAppend(impls) {
  const id = 'bench-append';
  const stores = {};
  for (const [k, mod] of Object.entries(impls)) {
    const dir = project(`append-${k}`);
    const store = mod.createLiveSessionStore({ cwd: dir });
    store.appendEvent(cycleEvent(id, 0));
    stores[k] = { dir, store, i: 0 };
  }
  // The floor writes exactly what the package writes: its last journal line,
  // and a snapshot file of the same size, staged then renamed.
  const nd = stores.native.dir;
  stores.native.store.appendEvent(smallEvent(id, 0));
  const lines = fs.readFileSync(journalOf(nd, id), 'utf8').trimEnd().split('\n');
  const line = lines[lines.length - 1] + '\n';
  const snapText = fs.readFileSync(snapshotOf(nd, id), 'utf8');
  // The object appendEvent returns, as compact JSON (the file adds indentation and bookkeeping).
  const objectText = JSON.stringify(stores.native.store.getSnapshot(id));
  const fdir = project('append-floor');
  const fJournal = path.join(fdir, 'floor.jsonl');
  const fSnap = path.join(fdir, 'floor.snapshot.json');
  const fTmp = fSnap + '.tmp';

  const n = CFG.appendOps;
  const appendInPlace = () => {
    fs.appendFileSync(fJournal, line);
    const fd = fs.openSync(fSnap, 'r+');
    fs.writeSync(fd, snapText, 0);
    fs.closeSync(fd);
  };
  const run = (k) => () => {
    const s = stores[k];
    return perOp(n, () => s.store.appendEvent(smallEvent(id, ++s.i)));
  };
  const res = alternate({
    native: run('native'),
    js: stores.js ? run('js') : null,
    floor: () => perOp(n, () => {
      fs.appendFileSync(fJournal, line);
      fs.writeFileSync(fTmp, snapText);
      fs.renameSync(fTmp, fSnap);
    }),
    // Not the floor column; printed as notes so one can see where the floor's time goes.
    appendOnly: () => perOp(n, () => fs.appendFileSync(fJournal, line)),
    renameOnly: () => perOp(n, () => {
      fs.writeFileSync(fTmp, snapText);
      fs.renameSync(fTmp, fSnap);
    }),
    inPlace: () => perOp(n, appendInPlace),
    // The same, plus building the snapshot object appendEvent returns (V8's
    // own JSON.parse of the snapshot text, the fastest way JS has).
    inPlaceObject: () => perOp(n, () => {
      appendInPlace();
      return JSON.parse(snapText);
    }),
    // The object alone: pure CPU, so steadier than the difference of two
    // disk-bound rows.
    objectOnly: () => perOp(n, () => JSON.parse(objectText)),
  });
  // The same disk work from Rust, with and without what makes it safe here
  // (journal lock, cache-key stats, write lease): JS has neither flock nor leases.
  fs.writeFileSync(path.join(fdir, 'line.txt'), line);
  fs.writeFileSync(path.join(fdir, 'snapshot.json'), snapText);
  const rust = cargoProbe('append_floor', { QLN_APPEND_FLOOR: fdir }, ['in_place_us', 'guarded_us', 'render_us']);
  const objectCost = res.objectOnly ?? null;
  if (stores.js) {
    const a = stores.native.store.getSnapshot(id);
    const b = stores.js.store.getSnapshot(id);
    const same = a.phase === b.phase && a.browserCheckpointRevision === b.browserCheckpointRevision && a.diagnostics.length === b.diagnostics.length;
    if (!same) NOTES.push('append: native and old snapshots DIFFER after the same events');
  }
  row('appendEvent, small events, one session', {
    old: res.js, native: res.native, target: { speedup: 10 },
    floor: `${fmt(res.floor)} (in place: ${fmt(res.inPlace)}; + object: ${fmt(res.inPlaceObject)}` +
      (rust ? `; guarded, Rust: ${fmt(rust.guarded_us)} + render ${fmt(rust.render_us)} + object ${fmt(objectCost)}` : '') + ')',
    floorValue: rust && objectCost != null ? rust.guarded_us + rust.render_us + objectCost : res.inPlaceObject,
  });
  NOTES.push(`append floor = appendFileSync of the package's own ${line.length}-byte line + writeFileSync of a ${snapText.length}-byte temp snapshot + renameSync ` +
    `(of which: append alone ${fmt(res.appendOnly)} µs, temp write + rename alone ${fmt(res.renameOnly)} µs; ` +
    `append + rewriting the snapshot in place (open r+, write, close; not atomic) ${fmt(res.inPlace)} µs; ` +
    `that + JSON.parse of the snapshot text, the object appendEvent returns, ${fmt(res.inPlaceObject)} µs).`);
  if (rust) {
    NOTES.push(`append floor from Rust (cargo test append_floor, same line and snapshot, medians of 7 x 1,500): journal append + in-place ` +
      `rewrite ${fmt(rust.in_place_us)} µs; with this package's guarantees, both files held open as between two appends (journal: flock, statx of its path, ` +
      `write, fstat; snapshot: F_SETSIG + F_SETLEASE, fstat, pwrite, lease released; flock released) ${fmt(rust.guarded_us)} µs; rendering those bytes from the model (the event's JSON, the line, ` +
      `the pretty snapshot) ${fmt(rust.render_us)} µs. The floor column adds V8's JSON.parse of the returned snapshot's compact JSON (${fmt(res.objectOnly)} µs), the cheapest ` +
      `generic way JS has to build that object.`);
  }
}

/** 2: getSnapshot when nothing changed. */
function wSnapshot(impls) {
  const id = 'bench-read';
  const stores = {};
  for (const [k, mod] of Object.entries(impls)) {
    const dir = project(`snapshot-${k}`);
    const store = mod.createLiveSessionStore({ cwd: dir });
    for (let i = 0; i < 30; i++) store.appendEvent(cycleEvent(id, i));
    store.getSnapshot(id);
    stores[k] = { dir, store };
  }
  const jp = journalOf(stores.native.dir, id);
  const n = CFG.snapshotOps;
  const run = (k) => () => {
    const { store } = stores[k];
    return perOp(n, () => store.getSnapshot(id));
  };
  const res = alternate({
    native: run('native'),
    js: stores.js ? run('js') : null,
    floor: () => perOp(n, () => fs.statSync(jp)),
  });
  row('getSnapshot, nothing changed', { old: res.js, native: res.native, target: { speedup: 2 }, floor: res.floor });
  NOTES.push('getSnapshot floor = one fs.statSync of the journal from JS (the check both implementations must make).');
}

/** Sets up one project per implementation holding the same journal. */
function journalProjects(impls, label, id, n, gen) {
  const dirs = {};
  let first = null;
  for (const k of Object.keys(impls)) {
    const dir = project(`${label}-${k}`);
    if (first) {
      fs.mkdirSync(sessionsDir(dir), { recursive: true });
      fs.copyFileSync(journalOf(first, id), journalOf(dir, id));
    } else {
      writeJournal(journalOf(dir, id), id, n, gen);
      first = dir;
    }
    dirs[k] = dir;
  }
  return dirs;
}

/** µs per event of a cold replay: no snapshot file, a new store, the first getSnapshot. */
function coldReplay(mod, dir, id, n, out) {
  fs.rmSync(snapshotOf(dir, id), { force: true });
  const store = mod.createLiveSessionStore({ cwd: dir });
  const t0 = now();
  const snap = store.getSnapshot(id);
  const us = usSince(t0);
  if (out) out.snapshot = snap;
  return us / n;
}

function checkSame(label, a, b) {
  if (!a || !b) return;
  const same = isDeepStrictEqual(a, b) && JSON.stringify(a) === JSON.stringify(b);
  NOTES.push(`${label}: native snapshot ${same ? 'equals' : 'DIFFERS FROM'} the old module's (deep, key order).`);
  if (!same) MISSES.push(`${label}: snapshots differ`);
}

/**
 * Cold replays of the same `n`-event journal by each implementation, rounds
 * alternating (`alternateArgs` go to `alternate`); `out.<impl>.snapshot` is
 * the last snapshot each one returned.
 */
function alternateColdReplays(impls, label, id, n, gen, ...alternateArgs) {
  const dirs = journalProjects(impls, label, id, n, gen);
  const out = { native: {}, js: {} };
  const res = alternate({
    native: () => coldReplay(impls.native, dirs.native, id, n, out.native),
    js: impls.js ? () => coldReplay(impls.js, dirs.js, id, n, out.js) : null,
  }, ...alternateArgs);
  return { dirs, out, res };
}

/** 3: cold replay of a 20,000-event journal. */
function wReplay(impls) {
  const id = 'bench-replay';
  const n = CFG.replayEvents;
  const { dirs, out, res } = alternateColdReplays(impls, 'replay', id, n, cycleEvent, CFG.replayRounds);
  const floor = replayFloor(journalOf(dirs.native, id));
  row(`cold replay, ${n.toLocaleString('en-US')} events (µs/event)`, {
    old: res.js, native: res.native, target: { speedup: 8 },
    // The floor is validation alone: every line must at least be checked
    // (a bad one becomes a diagnostic). The replay validates each line and
    // builds only the values the reducer reads; the notes say how much of
    // what remains is the reducer itself.
    floor: floor ? `${fmt(floor.validate)} (a value tree per line, serde_json: ${fmt(floor.serde)})` : null, floorValue: floor?.validate ?? null,
  });
  if (floor) {
    NOTES.push(`cold replay floor, same journal, in Rust (cargo test replay_floor, medians of 7): parsing each line into a value tree with serde_json ` +
      `${fmt(floor.serde)} µs/event; validating it only (serde IgnoredAny, nothing built) ${fmt(floor.validate)}; this package's parser ` +
      `${fmt(floor.ours)}; its whole replay ${fmt(floor.replay)} (no Node-API, no snapshot file), of which the reducer alone, ` +
      `applying lines parsed beforehand, is ${fmt(floor.reduce)}.`);
  }
  const expect = PHASE_AFTER[(n - 1) % CYCLE];
  if (out.native.snapshot?.phase !== expect) MISSES.push(`cold replay: native phase ${out.native.snapshot?.phase}, expected ${expect}`);
  checkSame(`cold replay ${n}`, out.native.snapshot, out.js.snapshot);
  NOTES.push(`cold replay ${n}: whole replay ${fmt(res.native * n / 1000)} ms native` + (res.js ? `, ${fmt(res.js * n / 1000)} ms old` : '') + '.');
}

/**
 * Runs one of the crate's ignored probe tests (`cargo test --release --lib
 * <name> -- --ignored`) and returns the numbers of its one output line, or
 * null (with a note) when it gave none. Floors that need what JS cannot do
 * (flock, leases) or that are about Rust itself are measured this way, in the
 * same run as the rest.
 */
function cargoProbe(name, env, keys) {
  log(`${name}: cargo test --release --lib ${name} (builds the test binary on first use) ...`);
  const r = spawnSync('cargo', ['test', '--release', '-p', 'quiver-live-core', '--lib', name, '--', '--ignored', '--nocapture', '--test-threads=1'], {
    cwd: PACKAGE_DIR, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 1 << 24,
  });
  // libtest prints "test <path> ... " on the same line before the probe's own output.
  const marker = `${name.replace('_', '-')} `;
  const found = (r.stdout || '').split('\n').find((l) => l.includes(marker));
  const line = found && found.slice(found.indexOf(marker));
  const values = {};
  for (const k of keys) {
    const m = line && new RegExp(`\\b${k}=([\\d.]+)`).exec(line);
    if (!m) {
      NOTES.push(`${name} not measured: cargo test ${name} gave no figures (${r.error?.message ?? `exit ${r.status}`}).`);
      return null;
    }
    values[k] = Number(m[1]);
  }
  return values;
}

/**
 * The parse floor of a replay, measured by the crate's ignored `replay_floor`
 * test on the very journal the workload replayed: validating each line (the
 * least any replay must do), and for comparison parsing each line into a value
 * tree with serde_json and with this package's parser, the whole replay, and
 * the reducer alone over lines parsed beforehand.
 */
function replayFloor(journal) {
  const v = cargoProbe('replay_floor', { QLN_FLOOR_JOURNAL: journal },
    ['parse_serde_value_us_per_event', 'validate_us_per_event', 'ours_parse_us_per_event', 'replay_us_per_event', 'reduce_us_per_event']);
  return v && {
    serde: v.parse_serde_value_us_per_event, validate: v.validate_us_per_event, ours: v.ours_parse_us_per_event,
    replay: v.replay_us_per_event, reduce: v.reduce_us_per_event,
  };
}

/**
 * Native µs/event of cold replays at growing journal lengths, one row per
 * length; the last row checks growth (largest against cheapest ≤ 1.5), not
 * scatter: fixed costs make small journals dearer per event, which is fine.
 */
function growthRows(impls, { id, sizes, gen, dirLabel, rowLabel, shape }) {
  const per = {};
  const notes = {};
  for (const n of sizes) {
    const dir = project(`${dirLabel}-${n}`);
    writeJournal(journalOf(dir, id), id, n, gen);
    const r = alternate({ native: () => coldReplay(impls.native, dir, id, n) }, CFG.rounds, 1, 20);
    per[n] = r.native;
    notes[n] = roundsNote(r);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const largest = sizes[sizes.length - 1];
  const spread = per[largest] / Math.min(...Object.values(per));
  for (const n of sizes) {
    const last = n === largest;
    row(`${rowLabel(n.toLocaleString('en-US'))}${notes[n]}`, {
      native: per[n],
      targetText: last ? `${shape} (largest/cheapest ≤ 1.5; is ${fmt(spread)})` : shape,
      met: last ? spread <= 1.5 : null,
    });
  }
}

/** 3b: native µs/event at growing journal lengths (flatness). */
function wReplayScale(impls) {
  growthRows(impls, {
    id: 'bench-scale', sizes: CFG.scale, gen: cycleEvent, dirLabel: 'scale', shape: 'flat',
    rowLabel: (n) => `cold replay, native only, ${n} events (µs/event)`,
  });
}

/** 3c: half the events are stale checkpoints, so diagnostics grow with the journal. */
function wReplayStale(impls) {
  const id = 'bench-stale';
  const n = CFG.staleEvents;
  const { out, res } = alternateColdReplays(impls, 'stale', id, n, staleEvent, CFG.rounds, 1, 20);
  row(`replay, ${n.toLocaleString('en-US')} events, half stale checkpoints (µs/event)${roundsNote(res)}`, { old: res.js, native: res.native, targetText: 'linear' });
  checkSame(`stale replay ${n}`, out.native.snapshot, out.js.snapshot);
  growthRows(impls, {
    id, sizes: CFG.staleScale, gen: staleEvent, dirLabel: 'stale-scale', shape: 'linear',
    rowLabel: (m) => `replay, native only, ${m} events, half stale (µs/event)`,
  });
}

/**
 * 4: a reader holding a 10,000-event session, after another writer appended
 * one event. (a) the writer is a second store instance of the same
 * implementation, which also rewrites the snapshot file, as another process
 * running the store would; (b) a raw line appended without touching the
 * snapshot file.
 */
function wForeign(impls) {
  const id = 'bench-foreign';
  const n = CFG.foreignEvents;
  for (const variant of ['a', 'b']) {
    const dirs = journalProjects(impls, `foreign-${variant}`, id, n, cycleEvent);
    const ctx = {};
    for (const [k, mod] of Object.entries(impls)) {
      const reader = mod.createLiveSessionStore({ cwd: dirs[k] });
      const writer = mod.createLiveSessionStore({ cwd: dirs[k] });
      reader.getSnapshot(id);
      writer.appendEvent(smallEvent(id, 0)); // the snapshot file now exists and is current
      reader.getSnapshot(id);
      ctx[k] = { reader, writer, i: 0, seq: n + 2, dir: dirs[k] };
    }
    const run = (k) => () => {
      const c = ctx[k];
      if (variant === 'a') {
        return perOpWith(CFG.foreignOpsA, () => c.writer.appendEvent(smallEvent(id, ++c.i)), () => c.reader.getSnapshot(id));
      }
      const jp = journalOf(c.dir, id);
      return perOpWith(CFG.foreignOpsB[k], () => {
        fs.appendFileSync(jp, journalLine(c.seq, smallEvent(id, ++c.i), Date.now()));
        c.seq++;
      }, () => c.reader.getSnapshot(id));
    };
    // The floor of variant a: what any reader must do once another process
    // rewrote the snapshot file, i.e. stat the journal and read that file
    // (the package's own files, so sizes match), after the same untimed append.
    const nat = ctx.native;
    const floorA = () => perOpWith(CFG.foreignOpsA, () => nat.writer.appendEvent(smallEvent(id, ++nat.i)), () => {
      fs.statSync(journalOf(nat.dir, id));
      fs.readFileSync(snapshotOf(nat.dir, id));
    });
    const res = alternate({ native: run('native'), js: impls.js ? run('js') : null, floor: variant === 'a' ? floorA : null });
    // The reader must see what a fresh store replaying the journal sees.
    for (const [k, mod] of Object.entries(impls)) {
      const fresh = mod.createLiveSessionStore({ cwd: ctx[k].dir });
      fs.rmSync(snapshotOf(ctx[k].dir, id), { force: true });
      const want = fresh.getSnapshot(id);
      const got = ctx[k].reader.getSnapshot(id);
      if (!isDeepStrictEqual(JSON.parse(JSON.stringify(want)), JSON.parse(JSON.stringify(got)))) {
        MISSES.push(`foreign ${variant}: ${k} reader disagrees with a fresh replay`);
      }
    }
    const label = variant === 'a'
      ? `read after another store appended 1 event (it rewrote the snapshot file), ${n.toLocaleString('en-US')}-event journal`
      : `read after a raw 1-line append (snapshot file stale), ${n.toLocaleString('en-US')}-event journal`;
    row(label, { old: res.js, native: res.native, target: { speedup: 50 }, floor: res.floor });
  }
  NOTES.push('read after another store appended: floor = statSync of the journal + readFileSync of the snapshot file the writer just rewrote.');
}

/** 5: listActiveSessions over 500 sessions, warm and from a fresh store. µs per session. */
function wList(impls) {
  const count = CFG.listSessions;
  const ctx = {};
  for (const [k, mod] of Object.entries(impls)) {
    const dir = project(`list-${k}`);
    const store = mod.createLiveSessionStore({ cwd: dir });
    for (let s = 0; s < count; s++) {
      const id = `s${String(s).padStart(4, '0')}`;
      for (let i = 0; i < 5; i++) store.appendEvent(cycleEvent(id, i));
    }
    const warm = mod.createLiveSessionStore({ cwd: dir });
    const listed = warm.listActiveSessions();
    if (listed.length !== count) MISSES.push(`list: ${k} listed ${listed.length} of ${count}`);
    ctx[k] = { dir, warm, mod };
  }
  const warm = alternate({
    native: () => perOp(CFG.listWarmOps, () => ctx.native.warm.listActiveSessions()) / count,
    js: ctx.js ? () => perOp(CFG.listWarmOps, () => ctx.js.warm.listActiveSessions()) / count : null,
  });
  const freshRun = (k) => () => {
    const { mod, dir } = ctx[k];
    let store;
    return perOpWith(CFG.listFreshOps, () => { store = mod.createLiveSessionStore({ cwd: dir }); }, () => store.listActiveSessions()) / count;
  };
  // The floor of a fresh listing: what any store must do per session before
  // it knows the snapshot, i.e. stat the journal and read the snapshot file
  // (in the native project, so file sizes are the package's own).
  const rootDir = ctx.native.warm.rootDir;
  const names = fs.readdirSync(rootDir).filter((n) => n.endsWith('.jsonl'));
  const freshFloor = () => perOp(1, () => {
    for (const n of names) {
      fs.statSync(path.join(rootDir, n));
      fs.readFileSync(path.join(rootDir, n.slice(0, -'.jsonl'.length) + '.snapshot.json'));
    }
  }) / names.length;
  const fresh = alternate({ native: freshRun('native'), js: ctx.js ? freshRun('js') : null, floor: freshFloor });
  row(`listActiveSessions, ${count} sessions, warm (µs/session)`, { old: warm.js, native: warm.native, target: { speedup: 2 } });
  row(`listActiveSessions, ${count} sessions, fresh store (µs/session)`, { old: fresh.js, native: fresh.native, target: { speedup: 4 }, floor: fresh.floor });
  NOTES.push(`listActiveSessions: per call ${fmt(warm.native * count)} µs warm / ${fmt(fresh.native * count)} µs fresh native` +
    (warm.js ? `, ${fmt(warm.js * count)} / ${fmt(fresh.js * count)} µs old` : '') + '; fresh = a new store each call, its construction untimed; ' +
    'fresh floor = statSync of each journal + readFileSync of its snapshot file, per session.');
}

/** 6 and 9: withSourceLockSync round trip, sourceLockPath alone, and the raw lock floor. */
function wLock(impls) {
  const file = 'src/pages/pricing.astro';
  const ctx = {};
  for (const [k, mod] of Object.entries(impls)) {
    const dir = project(`lock-${k}`);
    if (mod.withSourceLockSync(file, 'bench', () => 42, { cwd: dir }) !== 42) MISSES.push(`lock: ${k} fn value lost`);
    ctx[k] = { dir, mod };
  }
  const fdir = project('lock-floor');
  const lockPath = path.join(fdir, 'floor.lock');
  const payload = JSON.stringify({ owner: 'bench', token: '9b2f0c1e-7a55-4c1b-9d6e-1f2e3d4c5b6a', pid: process.pid, at: Date.now(), file: path.join(fdir, file) }) + '\n';
  const n = CFG.lockOps;
  const fn = () => 42;
  const trip = (k) => () => perOp(n, () => ctx[k].mod.withSourceLockSync(file, 'bench', fn, { cwd: ctx[k].dir }));
  const res = alternate({
    native: trip('native'),
    js: ctx.js ? trip('js') : null,
    floor: () => perOp(n, () => {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, payload);
      fs.closeSync(fd);
      fs.unlinkSync(lockPath);
    }),
  });
  const p = (k) => () => perOp(n, () => ctx[k].mod.sourceLockPath(file, ctx[k].dir));
  const pathRes = alternate({ native: p('native'), js: ctx.js ? p('js') : null });
  row('withSourceLockSync round trip (fn returns a value)', { old: res.js, native: res.native, target: { speedup: 10 }, floor: res.floor });
  row('sourceLockPath alone', { old: pathRes.js, native: pathRes.native });
  NOTES.push(`lock floor = openSync(wx) + writeSync of a ${payload.length}-byte owner record + closeSync + unlinkSync.`);
}

/** 10: durable: true (fsync per append) against the default, native only. */
function wDurable(impls) {
  const id = 'bench-durable';
  const ctx = {};
  for (const durable of [false, true]) {
    const dir = project(`durable-${durable}`);
    const store = impls.native.createLiveSessionStore({ cwd: dir, durable });
    store.appendEvent(cycleEvent(id, 0));
    ctx[durable] = { dir, store, i: 0 };
  }
  const line = fs.readFileSync(journalOf(ctx[false].dir, id), 'utf8');
  const snapText = fs.readFileSync(snapshotOf(ctx[false].dir, id), 'utf8');
  const fdir = project('durable-floor');
  const fJournal = path.join(fdir, 'floor.jsonl');
  const fSnap = path.join(fdir, 'floor.snapshot.json');
  const n = CFG.durableOps;
  const run = (d) => () => perOp(n, () => ctx[d].store.appendEvent(smallEvent(id, ++ctx[d].i)));
  const res = alternate({
    default: run(false),
    durable: run(true),
    floor: () => perOp(n, () => {
      const fd = fs.openSync(fJournal, 'a');
      fs.writeSync(fd, line);
      fs.fdatasyncSync(fd);
      fs.closeSync(fd);
      fs.writeFileSync(fSnap + '.tmp', snapText);
      fs.renameSync(fSnap + '.tmp', fSnap);
    }),
    inPlace: () => perOp(n, () => {
      const fd = fs.openSync(fJournal, 'a');
      fs.writeSync(fd, line);
      fs.fdatasyncSync(fd);
      fs.closeSync(fd);
      const sfd = fs.openSync(fSnap, 'r+');
      fs.writeSync(sfd, snapText, 0);
      fs.closeSync(sfd);
    }),
  });
  row('appendEvent, native default (same run as durable)', { native: res.default });
  row('appendEvent, native `durable: true`', {
    native: res.durable,
    speedup: `${fmt(res.durable / res.default)}x cost`,
    targetText: 'vs default',
    floor: `${fmt(res.floor)} (in place: ${fmt(res.inPlace)})`,
  });
  NOTES.push(`durable floor = append one line + fdatasync + temp snapshot write + rename (in place: the snapshot rewritten via open r+/write/close instead); durable adds ${fmt(res.durable - res.default)} µs per append.`);
}

/** Peak RSS of a child process running `args`, with its JSON result. */
function runChild(args, { gc = false } = {}) {
  const nodeArgs = [...(gc ? ['--expose-gc'] : []), THIS_FILE, '--child', ...args];
  const hasTime = fs.existsSync('/usr/bin/time');
  const r = hasTime
    ? spawnSync('/usr/bin/time', ['-v', process.execPath, ...nodeArgs], { encoding: 'utf8', maxBuffer: 1 << 26 })
    : spawnSync(process.execPath, nodeArgs, { encoding: 'utf8', maxBuffer: 1 << 26 });
  const lastLine = r.stdout.trim().split('\n').pop() || '{}';
  let result;
  try { result = JSON.parse(lastLine); } catch { result = { error: `child output unparsable: ${r.stdout.slice(-500)} ${r.stderr.slice(-500)}` }; }
  const m = /Maximum resident set size \(kbytes\):\s*(\d+)/.exec(r.stderr || '');
  result.peakRssKb = m ? Number(m[1]) : result.maxRssKb;
  result.peakFrom = m ? '/usr/bin/time -v' : 'process.resourceUsage().maxRSS';
  result.status = r.status;
  return result;
}

/** 7: a 600 MB journal, replayed in a child process; peak RSS. */
function wBig(impls, liveDir) {
  const id = 'bench-big';
  const dir = project('big');
  const file = journalOf(dir, id);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const target = 600 * 1024 * 1024;
  const pad = ('Lorem ipsum dolor sit amet, "consectetur" adipiscing elit — sed do eiusmod tempor incididunt. ').repeat(21).slice(0, 2000);
  const t0 = now();
  const fd = fs.openSync(file, 'w');
  let bytes = 0;
  let n = 0;
  let chunk = '';
  let lastTs = '';
  while (bytes < target) {
    const at = BASE_TS + n * 1000;
    const line = journalLine(n + 1, cycleEvent(id, n, { note: pad }), at);
    chunk += line;
    bytes += Buffer.byteLength(line);
    n++;
    lastTs = new Date(at).toISOString();
    if (chunk.length > 1 << 23) { fs.writeSync(fd, chunk); chunk = ''; }
  }
  if (chunk) fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  log(`big: wrote ${n.toLocaleString('en-US')} lines, ${(bytes / 2 ** 20).toFixed(0)} MiB in ${(usSince(t0) / 1e6).toFixed(1)} s`);

  const res = runChild(['big', JSON.stringify({ impl: 'native', dir, id })]);
  const expectPhase = PHASE_AFTER[(n - 1) % CYCLE];
  const problems = [];
  if (res.error) problems.push(res.error);
  if (res.phase !== expectPhase) problems.push(`phase ${res.phase}, expected ${expectPhase}`);
  if (res.updatedAt !== lastTs) problems.push(`updatedAt ${res.updatedAt}, expected ${lastTs}`);
  if (res.nextSeq !== n + 1) problems.push(`__nextSeq ${res.nextSeq}, expected ${n + 1}`);
  if (res.diagnostics !== 0) problems.push(`${res.diagnostics} diagnostics, expected 0`);
  const verified = problems.length === 0;
  if (!verified) MISSES.push(`600 MB replay: ${problems.join('; ')}`);
  const peakMb = res.peakRssKb / 1024;
  row(`${(bytes / 2 ** 20).toFixed(0)} MiB journal (${n.toLocaleString('en-US')} events) replay, peak RSS of the child (MB, not µs)`, {
    native: peakMb,
    targetText: '< 256 MB',
    met: verified && peakMb < 256,
    speedup: 'old fails',
  });
  NOTES.push(`600 MB replay (native): ${fmt(res.ms)} ms (${fmt(res.ms * 1000 / n)} µs/event), peak RSS ${fmt(peakMb)} MB by ${res.peakFrom} ` +
    `(node + module before the replay: ${fmt(res.baseRssKb / 1024)} MB RSS); replayed snapshot ${verified ? `verified (phase ${res.phase}, __nextSeq ${res.nextSeq}, updatedAt = last ts, no diagnostics)` : `WRONG: ${problems.join('; ')}`}.`);
  if (impls.js) {
    fs.rmSync(snapshotOf(dir, id), { force: true }); // written by the native child's flush
    const old = runChild(['big', JSON.stringify({ impl: 'js', liveDir, dir, id })]);
    NOTES.push(`600 MB replay (old module): ${old.error ? `throws "${old.error}"` : `phase ${old.phase} in ${fmt(old.ms)} ms`} (peak RSS ${fmt(old.peakRssKb / 1024)} MB).`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/** 8: memory held by one store with 1,000 sessions, one child process per implementation and round. */
function wMemory(impls, liveDir) {
  const count = CFG.memorySessions;
  const dir = project('memory');
  for (let s = 0; s < count; s++) {
    const id = `m${String(s).padStart(4, '0')}`;
    writeJournal(journalOf(dir, id), id, 6, cycleEvent);
  }
  const kinds = Object.keys(impls);
  const samples = Object.fromEntries(kinds.map((k) => [k, { rss: [], heap: [] }]));
  for (let r = 0; r < CFG.memoryRounds; r++) {
    for (const k of kinds) {
      // Each child works on its own copy, so neither sees files the other wrote.
      const copy = project(`memory-${k}`);
      fs.cpSync(path.join(dir, '.impeccable'), path.join(copy, '.impeccable'), { recursive: true });
      const res = runChild(['memory', JSON.stringify({ impl: k, liveDir, dir: copy, count })], { gc: true });
      if (res.error || res.listed !== count) {
        MISSES.push(`memory: ${k} child failed: ${res.error || `listed ${res.listed}`}`);
      } else {
        samples[k].rss.push(res.rssDelta / 2 ** 20);
        samples[k].heap.push(res.heapDelta / 2 ** 20);
      }
      fs.rmSync(copy, { recursive: true, force: true });
    }
  }
  const med = (k, f) => (samples[k]?.[f].length ? median(samples[k][f]) : null);
  row(`memory: one store holding ${count.toLocaleString('en-US')} sessions, ΔRSS (MB, not µs)`, {
    old: med('js', 'rss'), native: med('native', 'rss'), target: { notAbove: 'old' },
  });
  row(`memory: one store holding ${count.toLocaleString('en-US')} sessions, ΔheapUsed (MB, not µs)`, {
    old: med('js', 'heap'), native: med('native', 'heap'), target: { notAbove: 'old' },
  });
  NOTES.push('memory: delta from after module load to after listActiveSessions + getSnapshot of every session, store kept, results dropped, after gc; ' +
    'the speedup column is old/native. Samples (ΔRSS MB): ' +
    kinds.map((k) => `${k} [${samples[k].rss.map((x) => x.toFixed(1)).join(', ')}]`).join('; ') + '.');
}

// ---------------------------------------------------------------------------
// Child processes

async function child(kind, spec) {
  const opts = JSON.parse(spec);
  const mod = await loadImpl(opts.impl, opts.liveDir);
  if (kind === 'big') {
    const baseRssKb = Math.round(process.memoryUsage().rss / 1024);
    const store = mod.createLiveSessionStore({ cwd: opts.dir });
    const t0 = now();
    let snap;
    try {
      snap = store.getSnapshot(opts.id);
    } catch (err) {
      console.log(JSON.stringify({ error: `${err.name}: ${err.message}`, maxRssKb: process.resourceUsage().maxRSS }));
      return;
    }
    const ms = usSince(t0) / 1000;
    const maxRssKb = process.resourceUsage().maxRSS;
    // flush writes the snapshot file from the replay just made; its __nextSeq
    // says how many entries the replay counted.
    store.flush(opts.id);
    const file = JSON.parse(fs.readFileSync(snapshotOf(opts.dir, opts.id), 'utf8'));
    console.log(JSON.stringify({
      ms, baseRssKb, maxRssKb, phase: snap?.phase, updatedAt: snap?.updatedAt, nextSeq: file.__nextSeq,
      diagnostics: snap?.diagnostics?.length,
    }));
    return;
  }
  if (kind === 'memory') {
    const gc = globalThis.gc;
    const settle = () => { for (let i = 0; i < 4; i++) gc(); };
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
    return;
  }
  throw new Error(`unknown child ${kind}`);
}

// ---------------------------------------------------------------------------
// Main

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
  header.push(liveDir ? `old module: ${liveDir}` : 'old module: skipped (QUIVER_REFERENCE_DIR not set)');
  header.push(`rounds: ${CFG.rounds} counted (+1 warm-up; ${CFG.replayRounds} for the cold replay), alternating native/old[/floor]; medians shown`);
  console.log(header.join('\n'));

  const started = now();
  const table = {
    append: () => wAppend(impls),
    snapshot: () => wSnapshot(impls),
    replay: () => wReplay(impls),
    'replay-scale': () => wReplayScale(impls),
    'replay-stale': () => wReplayStale(impls),
    foreign: () => wForeign(impls),
    list: () => wList(impls),
    lock: () => wLock(impls),
    big: () => wBig(impls, liveDir),
    memory: () => wMemory(impls, liveDir),
    durable: () => wDurable(impls),
  };
  for (const name of WORKLOADS) {
    if (!enabled(name)) continue;
    const t0 = now();
    log(`${name} ...`);
    table[name]();
    log(`${name} done in ${(usSince(t0) / 1e6).toFixed(1)} s`);
  }
  console.log('');
  console.log(printTable());
  console.log('');
  for (const n of NOTES) console.log(`- ${n}`);
  console.log('');
  console.log(MISSES.length ? `missed: ${MISSES.join(' | ')}` : 'missed: none');
  console.log(`total: ${(usSince(started) / 1e6).toFixed(1)} s`);
}

process.on('SIGINT', () => { cleanup(); process.exit(130); });
try {
  await main();
} finally {
  cleanup();
}
