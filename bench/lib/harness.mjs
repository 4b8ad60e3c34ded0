// What every workload shares: the two implementations, temp projects,
// timing with rounds alternating, the floors measured outside JS, the results
// table, the run's configuration (from the command line), child processes.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { writeJournal, sessionsDir, journalOf, snapshotOf } from './events.mjs';

const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The runner, which a child process runs with `--child`. */
const RUNNER = path.join(BENCH_DIR, 'bench.mjs');
export const PACKAGE_DIR = path.resolve(BENCH_DIR, '..');
const PACKAGE_ENTRY = path.join(PACKAGE_DIR, 'index.js');

// ---------------------------------------------------------------------------
// Loading the implementations

export function loadNative() {
  const require = createRequire(path.join(PACKAGE_DIR, 'package.json'));
  return require(PACKAGE_ENTRY);
}

/** The reference's live dir (where session-store.mjs and source-lock.mjs are). */
export function referenceLiveDir(dir = process.env.QUIVER_REFERENCE_DIR) {
  if (!dir) return null;
  for (const candidate of [path.join(dir, 'skill', 'scripts', 'live'), path.join(dir, 'scripts', 'live'), path.join(dir, 'live'), dir]) {
    if (fs.existsSync(path.join(candidate, 'session-store.mjs')) && fs.existsSync(path.join(candidate, 'source-lock.mjs'))) {
      return candidate;
    }
  }
  throw new Error(`QUIVER_REFERENCE_DIR=${dir}: no skill/scripts/live/{session-store,source-lock}.mjs found`);
}

export async function loadOld(liveDir) {
  const store = await import(pathToFileURL(path.join(liveDir, 'session-store.mjs')).href);
  const lock = await import(pathToFileURL(path.join(liveDir, 'source-lock.mjs')).href);
  return {
    createLiveSessionStore: store.createLiveSessionStore,
    withSourceLockSync: lock.withSourceLockSync,
    sourceLockPath: lock.sourceLockPath,
  };
}

export async function loadImpl(kind, liveDir) {
  return kind === 'native' ? loadNative() : loadOld(liveDir);
}

// ---------------------------------------------------------------------------
// Temp projects

let TMP_ROOT = null;
export function tmpRoot() {
  if (!TMP_ROOT) TMP_ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-bench-'));
  return TMP_ROOT;
}
export function cleanup() {
  if (TMP_ROOT) {
    try { fs.rmSync(TMP_ROOT, { recursive: true, force: true }); } catch { /* best effort */ }
    TMP_ROOT = null;
  }
}

/** A fresh project dir: holds `.git`, so it is its own project root. */
export function project(label) {
  const dir = fs.mkdtempSync(path.join(tmpRoot(), `${label}-`));
  fs.mkdirSync(path.join(dir, '.git'));
  return dir;
}
export const removeDir = (dir) => fs.rmSync(dir, { recursive: true, force: true });

// ---------------------------------------------------------------------------
// Timing

export const now = () => process.hrtime.bigint();
export const usSince = (t0) => Number(now() - t0) / 1000;

/** µs per call of `fn(i)` over `n` calls. */
export function perOp(n, fn) {
  const t0 = now();
  for (let i = 0; i < n; i++) fn(i);
  return usSince(t0) / n;
}

/** µs per call of `fn(i)` over `n` calls, with untimed `before(i)` between. */
export async function perOpWith(n, before, fn) {
  let total = 0n;
  for (let i = 0; i < n; i++) {
    await before(i);
    const t0 = now();
    fn(i);
    total += now() - t0;
  }
  return Number(total) / 1000 / n;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Writes back every dirty page (and lets the file system commit) before a
 * contender's round, untimed: otherwise one contender's deferred disk work
 * (journal commits, and on a `discard` mount the trimming of the blocks the
 * old module's renames free) lands in the next contender's round.
 */
function settleDisk() {
  if (CFG.settle) spawnSync('sync');
}

// Every process of the bench, its children too, collects garbage on demand.
v8.setFlagsFromString('--expose-gc');
export const collectGarbage = vm.runInNewContext('gc');

/**
 * Collects the garbage the last round left and lets the event loop turn,
 * untimed, as a server's process does between requests: the native stores
 * a round dropped are freed only then (Node runs Node-API finalizers from
 * the event loop), and neither contender pays for the other's garbage.
 */
async function settleHeap() {
  collectGarbage();
  await nextTurn();
}

export function nextTurn() {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Runs each contender's round function in turn, `warmup + rounds` times
 * (native, old, floor, native, old, floor, ...), and returns the median of
 * the counted rounds per contender (null for a contender given as null).
 */
export async function alternate(contenders, rounds = CFG.rounds, warmup = 1) {
  const samples = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let r = 0; r < warmup + rounds; r++) {
    for (const [k, run] of Object.entries(contenders)) {
      if (!run) continue;
      settleDisk();
      await settleHeap();
      const v = await run(r);
      if (r >= warmup) samples[k].push(v);
      if (process.env.QLN_BENCH_TRACE) log(`round ${r} ${k}: ${v}`);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, v.length ? median(v) : null]));
}

// ---------------------------------------------------------------------------
// Floors JS cannot measure

/**
 * The one place floors measured outside JS come from: the core crate's
 * `floor` example (crates/core/examples/floor.rs), built and run with
 * `cargo run --release -p quiver-live-core --example floor` (the first use
 * builds it).
 *
 * - `probeFloor('append', { line, snapshot })`: the disk work of one append of
 *   `line` with this package's guarantees (journal opened, locked, its path
 *   stat'ed, written, fstat'ed, closed; snapshot file staged, written and
 *   put in place of the old one), `guarded`; the same without them (journal
 *   appended to, snapshot file overwritten in place), `inPlace`; and
 *   rendering those bytes from the model, `render`. µs per append.
 * - `probeFloor('replay', { journal })`: per event of that journal, validating
 *   each line (`validate`, the least a replay must do), this package's parser
 *   (`ours`), its whole replay (`replay`) and the reducer alone (`reduce`).
 *   µs per event.
 * - `probeFloor('read', { sessions })`: per session of that sessions directory,
 *   a `stat` of its journal and a read of its snapshot file (`read`). µs per
 *   session.
 *
 * Returns null (with a note) when the probe gave no figures.
 */
export function probeFloor(kind, input) {
  let arg, keys;
  const scratch = fs.mkdtempSync(path.join(tmpRoot(), `probe-${kind}-`));
  if (kind === 'append') {
    fs.writeFileSync(path.join(scratch, 'line.txt'), input.line);
    fs.writeFileSync(path.join(scratch, 'snapshot.json'), input.snapshot);
    arg = scratch;
    keys = { guarded: 'guarded_us', inPlace: 'in_place_us', render: 'render_us' };
  } else if (kind === 'replay') {
    arg = input.journal;
    keys = {
      validate: 'validate_us_per_event', ours: 'ours_parse_us_per_event', replay: 'replay_us_per_event',
      reduce: 'reduce_us_per_event',
    };
  } else if (kind === 'read') {
    arg = input.sessions;
    keys = { read: 'stat_read_us_per_session' };
  } else {
    throw new Error(`probeFloor: unknown kind ${kind}`);
  }
  log(`floor ${kind}: cargo run --release -p quiver-live-core --example floor (builds it on first use) ...`);
  // Built first, and the disk settled before the run: the build's own
  // writes, written back during the probe, would inflate the disk floors.
  const example = ['--quiet', '--release', '-p', 'quiver-live-core', '--example', 'floor'];
  spawnSync('cargo', ['build', ...example], { cwd: PACKAGE_DIR, stdio: 'ignore' });
  settleDisk();
  const r = spawnSync('cargo', ['run', ...example, '--', kind, arg], {
    cwd: PACKAGE_DIR, encoding: 'utf8', maxBuffer: 1 << 24,
  });
  removeDir(scratch);
  const line = (r.stdout || '').split('\n').find((l) => l.startsWith(`${kind}-floor `));
  const values = {};
  for (const [k, key] of Object.entries(keys)) {
    const m = line && new RegExp(`\\b${key}=([\\d.]+)`).exec(line);
    if (!m) {
      NOTES.push(`floor ${kind} not measured: the floor example gave no figures (${r.error?.message ?? `exit ${r.status}: ${r.stderr}`}).`);
      return null;
    }
    values[k] = Number(m[1]);
  }
  return values;
}

/** The package's last journal line and its snapshot file in `dir`, as probeFloor('append') takes them. */
export function lastAppendOf(dir, id) {
  const lines = fs.readFileSync(journalOf(dir, id), 'utf8').trimEnd().split('\n');
  return { line: lines[lines.length - 1] + '\n', snapshot: fs.readFileSync(snapshotOf(dir, id)) };
}

// ---------------------------------------------------------------------------
// Results

const ROWS = [];
export const NOTES = [];
export const MISSES = [];

/**
 * One table row. `floor` is a number, or text naming its parts with
 * `floorValue` their sum: the least work any implementation must do for the
 * row, measured in the same run, in the row's unit (`unit`, µs unless the row
 * says otherwise). `check`: { text, met }, an absolute requirement of the row
 * (one that does not move with the machine's speed); a failed one is listed
 * under "missed". `ratio` (old / native) is information, no requirement.
 */
export function row(name, { old = null, native = null, floor = null, floorValue, ratio, check = null, unit = 'µs' }) {
  if (ratio === undefined) ratio = old != null && native != null && native > 0 ? old / native : null;
  if (floorValue === undefined) floorValue = typeof floor === 'number' ? floor : null;
  ROWS.push({ name, old, native, ratio, floor, floorValue, check, unit });
  if (check?.met === false) MISSES.push(name);
}

export function fmt(x) {
  if (x == null || Number.isNaN(x)) return '—';
  if (typeof x === 'string') return x;
  const a = Math.abs(x);
  return a >= 1000 ? Math.round(x).toLocaleString('en-US') : a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
}

/** How far native is above its floor: `+24.0 µs (1.46x)` (native − floor, native / floor). */
function aboveFloor({ native, floorValue, unit }) {
  if (native == null || floorValue == null || !(floorValue > 0)) return '—';
  const d = native - floorValue;
  return `${d < 0 ? '−' : '+'}${fmt(Math.abs(d))} ${unit} (${fmt(native / floorValue)}x)`;
}

export function printTable() {
  const lines = [];
  lines.push('| workload | old (µs) | native (µs) | old / native | floor (µs) | native above floor | check |');
  lines.push('|---|---:|---:|---:|---:|---:|---|');
  for (const r of ROWS) {
    const ratio = r.ratio == null ? '—' : typeof r.ratio === 'string' ? r.ratio : `${fmt(r.ratio)}x`;
    const check = r.check ? `${r.check.text}: ${r.check.met == null ? '—' : r.check.met ? 'yes' : '**no**'}` : '—';
    lines.push(`| ${r.name} | ${fmt(r.old)} | ${fmt(r.native)} | ${ratio} | ${fmt(r.floor)} | ${aboveFloor(r)} | ${check} |`);
  }
  return lines.join('\n');
}

export function machine() {
  let cpu = 'unknown';
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) cpu = m[1].trim();
  } catch { /* not linux */ }
  const nproc = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return `nproc ${nproc}, CPU ${cpu}, node ${process.version}, ${os.platform()} ${os.release()}, ${new Date().toISOString()}`;
}

export const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(', ');

export function log(msg) {
  process.stderr.write(`[bench] ${msg}\n`);
}

// ---------------------------------------------------------------------------
// Configuration

// The run's sizes, from the command line (bench.mjs reads the rest of it).
const argv = process.argv.slice(2);
export const QUICK = argv.includes('--quick');
const roundsArg = argv.indexOf('--rounds');

export const CFG = QUICK ? {
  rounds: 5, replayRounds: 5, appendOps: 120, phaseOps: 1000, snapshotOps: 2000, replayEvents: 5_000, scale: [1_000, 5_000, 20_000],
  staleEvents: 2_000, foreignEvents: 10_000, foreignOps: { native: 20, js: 1 }, listSessions: 100, listWarmOps: 5, listFreshOps: 2,
  lockOps: 100, trafficAppends: 150, trafficReplays: 20, daySessions: 50, dayOps: 300, durableOps: 10, memorySessions: 300, memoryRounds: 3, touchSessions: 2_000, touchRounds: 2, openSessions: 2_000, openOps: 50,
  contention: { writers: 4, appends: 100, readMs: 1000 },
} : {
  rounds: 7, replayRounds: 15, appendOps: 1500, phaseOps: 1000, snapshotOps: 20_000, replayEvents: 20_000, scale: [1_000, 10_000, 100_000],
  staleEvents: 5_000, foreignEvents: 10_000, foreignOps: { native: 200, js: 3 }, listSessions: 500, listWarmOps: 20, listFreshOps: 5,
  lockOps: 300, trafficAppends: 600, trafficReplays: 100, daySessions: 50, dayOps: 1500, durableOps: 40, memorySessions: 1_000, memoryRounds: 5, touchSessions: 20_000, touchRounds: 3, openSessions: 20_000, openOps: 200,
  contention: { writers: 4, appends: 300, readMs: 3000 },
};
CFG.settle = !argv.includes('--no-settle');
if (roundsArg >= 0) CFG.rounds = Math.max(5, Number(argv[roundsArg + 1]) || CFG.rounds);
// A cold replay round takes milliseconds, and on this two-core machine a
// round now and then has a core to itself and now and then shares one with
// another process: 15 rounds give its median room to land in the common
// case for both modules.
CFG.replayRounds = Math.max(CFG.rounds, CFG.replayRounds);

// ---------------------------------------------------------------------------
// Journals replayed cold by each implementation

/** Sets up one project per implementation holding the same journal (`text`, or `n` events of `gen`). */
export function journalProjects(impls, label, id, { n, gen, text }) {
  const dirs = {};
  for (const k of Object.keys(impls)) {
    const dir = project(`${label}-${k}`);
    if (text != null) {
      fs.mkdirSync(sessionsDir(dir), { recursive: true });
      fs.writeFileSync(journalOf(dir, id), text);
    } else if (Object.keys(dirs).length) {
      fs.mkdirSync(sessionsDir(dir), { recursive: true });
      fs.copyFileSync(journalOf(Object.values(dirs)[0], id), journalOf(dir, id));
    } else {
      writeJournal(journalOf(dir, id), id, n, gen);
    }
    dirs[k] = dir;
  }
  return dirs;
}

/** µs of a cold replay: no snapshot file, a new store, the first getSnapshot. */
export function coldReplay(mod, dir, id, out) {
  fs.rmSync(snapshotOf(dir, id), { force: true });
  const store = mod.createLiveSessionStore({ cwd: dir });
  const t0 = now();
  const snap = store.getSnapshot(id, { includeCompleted: true });
  const us = usSince(t0);
  if (out) out.snapshot = snap;
  return us;
}

export function checkSame(label, a, b) {
  if (!a || !b) return;
  const same = isDeepStrictEqual(a, b) && JSON.stringify(a) === JSON.stringify(b);
  if (!same) {
    NOTES.push(`${label}: native snapshot DIFFERS FROM the old module's.`);
    MISSES.push(`${label}: snapshots differ`);
  }
}

/** Cold replays of one journal by each implementation, rounds alternating; µs per replay. */
export async function alternateColdReplays(impls, label, id, journal, rounds = CFG.rounds) {
  const dirs = journalProjects(impls, label, id, journal);
  const out = { native: {}, js: {} };
  const res = await alternate({
    native: () => coldReplay(impls.native, dirs.native, id, out.native),
    js: impls.js ? () => coldReplay(impls.js, dirs.js, id, out.js) : null,
  }, rounds);
  checkSame(`${label} replay`, out.native.snapshot, out.js.snapshot);
  return { dirs, out, res };
}

// ---------------------------------------------------------------------------
// Child processes

/**
 * Starts a child process of the runner (`--child ...args`) and returns at
 * once: `onLine` sees each line of its stdout as it comes; `done` resolves
 * with its exit status, its stdout lines and its stderr once it has exited.
 */
export function startChild(args, onLine = () => {}) {
  const proc = spawn(process.execPath, [RUNNER, '--child', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = [];
  let partial = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (chunk) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop();
    for (const line of parts) {
      lines.push(line);
      onLine(line);
    }
  });
  proc.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk; });
  const done = new Promise((resolve) => proc.on('close', (status, signal) => resolve({ status, signal, lines, stderr })));
  return { done };
}

/** Peak RSS of a child process running `args`, with its JSON result. */
export function runChild(args) {
  const nodeArgs = [RUNNER, '--child', ...args];
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
