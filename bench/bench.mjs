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
// scaling, the long line against the old module).
//
// Workloads (names for --only): append, phases, snapshot, replay,
// replay-scale, replay-stale, foreign, list, lock, traffic, day, big,
// long-line, memory, durable, load.
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

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const THIS_FILE = fileURLToPath(import.meta.url);
const PACKAGE_DIR = path.resolve(HERE, '..');
const PACKAGE_ENTRY = path.join(PACKAGE_DIR, 'index.js');
const TRAFFIC_DIR = path.join(HERE, 'traffic');

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
// Events, as the live server journals them

/** The names live-server.mjs records for `agent_phase`, in lifecycle order. */
const AGENT_PHASES = ['picked_up', 'scaffolding', 'source_ready', 'scaffold_fallback', 'generation_ready',
  'first_reviewable', 'second_reviewable', 'all_variants_ready'];
/** The synthetic names an earlier bench used (they hid a cost of the real ones). */
const SYNTHETIC_PHASES = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'];

const BASE_TS = Date.parse('2025-06-01T10:00:00.000Z');
const TOKEN = '6f1c2b9e-4d7a-4e8b-9a35-2c1d0e7f8a94';
const OWNER = 'browser-3fa94c21';
const PAGE = '/pricing';
const SOURCE = 'src/components/Hero.jsx';

/** Session id `n` (n < 2^32): 8 hex characters, as the browser's id8() makes them; distinct for distinct n. */
const hexId = (n) => (Math.imul(n + 1, 0x9e3779b1) >>> 0).toString(16).padStart(8, '0');

/** The element context the browser sends with `generate` (live-browser.js extractContext). */
const ELEMENT = {
  tagName: 'section', id: null, classes: ['hero', 'hero--dark'],
  textContent: 'Simple pricing for teamsStart free, upgrade when your team grows.Start free trial',
  outerHTML: '<section class="hero hero--dark"><h1 class="hero__title">Simple pricing for teams</h1><p class="hero__lede">Start free, upgrade when your team grows.</p><a class="button button--primary" href="/signup">Start free trial</a></section>',
  computedStyles: {
    'font-family': 'Inter, system-ui, sans-serif', 'font-size': '16px', 'font-weight': '400', 'line-height': '1.5',
    color: 'rgb(241, 245, 249)', background: 'rgb(15, 23, 42) none repeat scroll 0% 0% / auto padding-box border-box',
    'background-color': 'rgb(15, 23, 42)', padding: '96px 48px', margin: '0px', display: 'flex', position: 'relative',
    gap: '24px', 'border-radius': '0px', 'box-shadow': 'none',
  },
  cssCustomProperties: { '--brand': '#4f46e5', '--brand-ink': '#eef2ff', '--radius': '12px', '--space-4': '16px' },
  parentContext: '<main class="page page--pricing">', boundingRect: { width: 1280, height: 420 },
};

/** An element with neither id nor classes: the preflight cannot locate it (`insufficient_locator`). */
const HEADING = {
  ...ELEMENT, tagName: 'h2', classes: [], textContent: 'Choose your plan', outerHTML: '<h2>Choose your plan</h2>',
  parentContext: '<div class="plans">', boundingRect: { width: 1120, height: 48 },
};

/** What the generation preflight (live-wrap.mjs) hands back, which the server adds to the generate event. */
function scaffold(id, count) {
  const examples = Array.from({ length: count }, (_, i) => `@scope ([data-impeccable-variant="${i + 1}"]) { :scope > .variant-class { ... } }`);
  return {
    file: SOURCE, sourceWritten: false,
    wrapperBlock: `    <div data-impeccable-variants="${id}" data-impeccable-variant-count="${count}" style={{ display: "contents" }}>\n` +
      `      {/* impeccable-variants-start ${id} */}\n      {/* Original */}\n      <div data-impeccable-variant="original">\n` +
      '        <section className="hero hero--dark">\n          <h1 className="hero__title">Simple pricing for teams</h1>\n' +
      '          <p className="hero__lede">Start free, upgrade when your team grows.</p>\n' +
      '          <a className="button button--primary" href="/signup">Start free trial</a>\n        </section>\n      </div>\n' +
      `      {/* Variants: insert below this line */}\n      {/* impeccable-variants-end ${id} */}\n    </div>`,
    replaceStartLine: 3, replaceEndLine: 7, startLine: 3, endLine: 15, insertLine: 13,
    commentSyntax: { open: '{/*', close: '*/}' }, styleMode: 'scoped', styleTag: '<style data-impeccable-css="SESSION_ID">',
    cssSelectorPrefixExamples: [],
    cssAuthoring: {
      mode: 'scoped', styleTag: '<style data-impeccable-css="SESSION_ID">', strategy: 'scope-rule',
      rulePattern: examples[0].replace('"1"', '"N"'), selectorExamples: examples,
      requirements: ['Use @scope blocks keyed to each [data-impeccable-variant="N"] wrapper.', 'Use the styleTag exactly.'],
      forbidden: ['Do not use global [data-impeccable-variant="N"] selector prefixes for this styleMode.'],
    },
    originalLineCount: 5,
  };
}

/**
 * One generation round of session `id`, as the server journals it: the
 * browser's generate and its first checkpoint; the agent's poll (picked_up,
 * scaffolding, the generate again with the scaffold, source_ready, the
 * generate again with generationReadyAt, generation_ready); per arriving
 * variant a browser checkpoint, the *_reviewable phase the server derives from
 * it, and a mount ack; the agent's done; then `tune` param changes. With
 * `fallback` (every other round by default) the element is one the preflight
 * cannot locate: scaffoldError and scaffold_fallback instead of the scaffold
 * and source_ready, as in every generation of the reference's suites. Round `g`
 * continues the browser's revisions of round g - 1, so nothing is stale and no
 * diagnostics accumulate: a session repeating rounds keeps a bounded snapshot.
 */
function generation(id, g = 0, { count = 3, tune = 6, fallback = g % 2 === 1 } = {}) {
  const t0 = BASE_TS + g * 60_000;
  let rev = g * (1 + count + tune);
  let k = 0;
  const at = () => t0 + 250 * k++;
  const checkpoint = (reason, phase, arrived, visible, paramValues) => ({
    token: TOKEN, type: 'checkpoint', id, revision: ++rev, revisionDomain: 'browser', owner: OWNER, reason, pageUrl: PAGE,
    phase, expectedVariants: count, arrivedVariants: arrived, visibleVariant: visible,
    ...(arrived ? { sourceFile: SOURCE, previewMode: 'source' } : {}), paramValues,
  });
  const phase = (name, extra) => ({ type: 'agent_phase', id, phase: name, at: at(), ...extra });
  const generate = { token: TOKEN, type: 'generate', id, action: 'bolder', count, pageUrl: PAGE, element: fallback ? HEADING : ELEMENT };
  const scaffolded = fallback
    ? { ...generate, scaffoldAttempted: true, scaffoldDurationMs: null, scaffoldError: 'insufficient_locator' }
    : { ...generate, scaffoldAttempted: true, scaffoldDurationMs: 431.7, scaffold: scaffold(id, count) };
  const out = [
    generate,
    checkpoint('generate_started', 'generating', 0, 0, {}),
    phase('picked_up'),
    phase('scaffolding'),
    scaffolded,
    phase(fallback ? 'scaffold_fallback' : 'source_ready', { durationMs: fallback ? null : 431.7, previewMode: 'source' }),
    { ...scaffolded, generationReadyAt: t0 + 900 },
    phase('generation_ready'),
  ];
  for (let n = 1; n <= count; n++) {
    const reason = n < count ? 'variants_progress' : 'variants_ready';
    out.push(checkpoint(reason, 'generating', n, 1, {}));
    const progress = { arrivedVariants: n, expectedVariants: count, checkpointReason: reason };
    if (n === 1) out.push(phase('first_reviewable', progress));
    else if (n === 2 && count >= 3) out.push(phase('second_reviewable', progress));
    if (n === count && n > 1) out.push(phase('all_variants_ready', progress));
    out.push({ token: TOKEN, type: 'variant_mounted', id, variant: n, url: `/${SOURCE}?t=${at()}` });
  }
  out.push({ type: 'agent_done', id, file: SOURCE, sourceEventType: 'generate', carbonize: false });
  const params = { weight: 600, accent: 'indigo', density: 'comfortable' };
  for (let i = 0; i < tune; i++) {
    params.weight = 400 + ((g + i) % 5) * 100;
    if (i % 3 === 2) params.density = params.density === 'compact' ? 'comfortable' : 'compact';
    out.push(checkpoint('param_changed', 'cycling', count, 1 + (i % count), { ...params }));
  }
  return out;
}
const GENERATION_LENGTH = generation('00000000').length;

/** A whole session as the server's day sees them; `kind` picks how it ends. */
function sessionEvents(id, kind) {
  if (kind === 'steer') {
    const message = 'Less padding above the title, please';
    const cp = (revision, reason, extra) => ({
      token: TOKEN, type: 'checkpoint', id, revision, revisionDomain: 'browser', owner: OWNER, phase: 'steer', reason, pageUrl: PAGE, ...extra,
    });
    return [
      { token: TOKEN, type: 'steer', id, message, pageUrl: `http://localhost:5173${PAGE}` },
      cp(1, 'steer_input_focused', { focused: true }),
      cp(2, 'steer_submitted', { message }),
      { type: 'steer_done', id, message: 'Tightened the hero spacing', sourceEventType: 'steer', carbonize: false },
      cp(3, 'steer_done', { message: 'Tightened the hero spacing', file: '' }),
    ];
  }
  if (kind === 'discard') {
    return [...generation(id, 0, { count: 4, tune: 3, fallback: true }),
      { token: TOKEN, type: 'discard', id },
      { type: 'discarded', id, file: SOURCE, sourceEventType: 'discard', carbonize: false }];
  }
  const round = generation(id, 0);
  return [...round,
    { token: TOKEN, type: 'accept', id, variantId: '2', pageUrl: PAGE, clientSentAt: BASE_TS + 20_000, paramValues: round[round.length - 1].paramValues },
    { type: 'complete', id, file: SOURCE, sourceEventType: 'accept', carbonize: false }];
}
const SESSION_KINDS = ['accept', 'steer', 'accept', 'discard'];

/** Event `i` of one long session that keeps regenerating (generation rounds back to back). */
function longEvent(id, i) {
  const g = Math.floor(i / GENERATION_LENGTH);
  const key = `${id}/${g}`;
  if (longEvent.key !== key) { longEvent.key = key; longEvent.round = generation(id, g); }
  return longEvent.round[i % GENERATION_LENGTH];
}

/** The phase a replay of `n` longEvent events ends in. */
function phaseAfterLong(id, n) {
  let phase = 'new';
  for (const e of generation(id, Math.floor((n - 1) / GENERATION_LENGTH)).slice(0, ((n - 1) % GENERATION_LENGTH) + 1)) {
    if (e.type === 'generate') phase = 'generate_requested';
    else if (e.type === 'checkpoint') phase = e.phase;
    else if (e.type === 'agent_done') phase = 'variants_ready';
  }
  return phase;
}

/** agent_phase events only, cycling through `names`. */
const phaseEvent = (names) => (id, i) => ({ type: 'agent_phase', id, phase: names[i % names.length], at: BASE_TS + i * 250, durationMs: 40 + (i % 7) });

/** A checkpoint nobody else sends (a raw line appended by a foreign writer). */
const foreignCheckpoint = (id, i) => ({
  token: TOKEN, type: 'checkpoint', id, revision: 1_000_000 + i, revisionDomain: 'browser', owner: OWNER, reason: 'param_changed',
  pageUrl: PAGE, phase: 'cycling', expectedVariants: 3, arrivedVariants: 3, visibleVariant: 1 + (i % 3),
  sourceFile: SOURCE, previewMode: 'source', paramValues: { weight: 500 + (i % 5) * 100, accent: 'indigo', density: 'comfortable' },
});

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

/** The recorded journals of bench/traffic/: name, session id, lines, events. */
function loadTraffic() {
  if (!fs.existsSync(TRAFFIC_DIR)) return [];
  return fs.readdirSync(TRAFFIC_DIR).filter((n) => n.endsWith('.jsonl')).sort().map((n) => {
    const text = fs.readFileSync(path.join(TRAFFIC_DIR, n), 'utf8');
    const entries = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    return { name: n.slice(0, -'.jsonl'.length), id: entries[0].id, text, events: entries.map((e) => e.event) };
  });
}

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
const removeDir = (dir) => fs.rmSync(dir, { recursive: true, force: true });

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
async function perOpWith(n, before, fn) {
  let total = 0n;
  for (let i = 0; i < n; i++) {
    await before(i);
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
const collectGarbage = vm.runInNewContext('gc');

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

function nextTurn() {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Runs each contender's round function in turn, `warmup + rounds` times
 * (native, old, floor, native, old, floor, ...), and returns the median of
 * the counted rounds per contender (null for a contender given as null).
 */
async function alternate(contenders, rounds = CFG.rounds, warmup = 1) {
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
function probeFloor(kind, input) {
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
function lastAppendOf(dir, id) {
  const lines = fs.readFileSync(journalOf(dir, id), 'utf8').trimEnd().split('\n');
  return { line: lines[lines.length - 1] + '\n', snapshot: fs.readFileSync(snapshotOf(dir, id)) };
}

// ---------------------------------------------------------------------------
// Results

const ROWS = [];
const NOTES = [];
const MISSES = [];

/**
 * One table row. `floor` is a number, or text naming its parts with
 * `floorValue` their sum: the least work any implementation must do for the
 * row, measured in the same run, in the row's unit (`unit`, µs unless the row
 * says otherwise). `check`: { text, met }, an absolute requirement of the row
 * (one that does not move with the machine's speed); a failed one is listed
 * under "missed". `ratio` (old / native) is information, no requirement.
 */
function row(name, { old = null, native = null, floor = null, floorValue, ratio, check = null, unit = 'µs' }) {
  if (ratio === undefined) ratio = old != null && native != null && native > 0 ? old / native : null;
  if (floorValue === undefined) floorValue = typeof floor === 'number' ? floor : null;
  ROWS.push({ name, old, native, ratio, floor, floorValue, check, unit });
  if (check?.met === false) MISSES.push(name);
}

function fmt(x) {
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

function printTable() {
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

function machine() {
  let cpu = 'unknown';
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) cpu = m[1].trim();
  } catch { /* not linux */ }
  const nproc = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return `nproc ${nproc}, CPU ${cpu}, node ${process.version}, ${os.platform()} ${os.release()}, ${new Date().toISOString()}`;
}

const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(', ');

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
  rounds: 5, replayRounds: 5, appendOps: 120, phaseOps: 1000, snapshotOps: 2000, replayEvents: 5_000, scale: [1_000, 5_000, 20_000],
  staleEvents: 2_000, foreignEvents: 10_000, foreignOps: { native: 20, js: 1 }, listSessions: 100, listWarmOps: 5, listFreshOps: 2,
  lockOps: 100, trafficAppends: 150, trafficReplays: 20, daySessions: 50, dayOps: 300, durableOps: 10, memorySessions: 300, memoryRounds: 3,
} : {
  rounds: 7, replayRounds: 15, appendOps: 1500, phaseOps: 1000, snapshotOps: 20_000, replayEvents: 20_000, scale: [1_000, 10_000, 100_000],
  staleEvents: 5_000, foreignEvents: 10_000, foreignOps: { native: 200, js: 3 }, listSessions: 500, listWarmOps: 20, listFreshOps: 5,
  lockOps: 300, trafficAppends: 600, trafficReplays: 100, daySessions: 50, dayOps: 1500, durableOps: 40, memorySessions: 1_000, memoryRounds: 5,
};
CFG.settle = !argv.includes('--no-settle');
if (roundsArg >= 0) CFG.rounds = Math.max(5, Number(argv[roundsArg + 1]) || CFG.rounds);
// A cold replay round takes milliseconds, and on this two-core machine a
// round now and then has a core to itself and now and then shares one with
// another process: 15 rounds give its median room to land in the common
// case for both modules.
CFG.replayRounds = Math.max(CFG.rounds, CFG.replayRounds);

const WORKLOADS = ['append', 'phases', 'snapshot', 'replay', 'replay-scale', 'replay-stale', 'foreign', 'list', 'lock',
  'traffic', 'day', 'big', 'long-line', 'memory', 'durable', 'load'];
function enabled(name) {
  if (ONLY) return ONLY.has(name);
  if (name === 'big' || name === 'long-line') return !QUICK || BIG;
  return true;
}

// ---------------------------------------------------------------------------
// Workloads

/** appendEvent to one session that keeps regenerating: the server's generation rounds back to back. */
async function wAppend(impls) {
  const id = hexId(1);
  const stores = {};
  for (const [k, mod] of Object.entries(impls)) {
    const dir = project(`append-${k}`);
    const store = mod.createLiveSessionStore({ cwd: dir });
    for (let i = 0; i < GENERATION_LENGTH; i++) store.appendEvent(longEvent(id, i));
    stores[k] = { dir, store, i: GENERATION_LENGTH - 1 };
  }
  const n = CFG.appendOps;
  const run = (k) => () => {
    const s = stores[k];
    const events = Array.from({ length: n }, () => longEvent(id, ++s.i)); // built untimed
    return perOp(n, (j) => s.store.appendEvent(events[j]));
  };
  // The object appendEvent returns, built the cheapest generic way JS has
  // (V8's JSON.parse of its compact JSON): part of the floor.
  const objectText = JSON.stringify(stores.native.store.getSnapshot(id));
  const res = await alternate({
    native: run('native'),
    js: stores.js ? run('js') : null,
    object: () => perOp(n, () => JSON.parse(objectText)),
  });
  if (stores.js) {
    const a = stores.native.store.getSnapshot(id);
    const b = stores.js.store.getSnapshot(id);
    if (a.phase !== b.phase || a.browserCheckpointRevision !== b.browserCheckpointRevision || a.diagnostics.length !== b.diagnostics.length) {
      MISSES.push('append: native and old snapshots differ after the same events');
    }
  }
  const last = lastAppendOf(stores.native.dir, id);
  const probe = probeFloor('append', last);
  row(`appendEvent, one session, the server's generation rounds (${GENERATION_LENGTH} events each, agent_phase names as recorded)`, {
    old: res.js, native: res.native,
    floor: probe ? `${fmt(probe.guarded + probe.render + res.object)} (disk ${fmt(probe.guarded)} + render ${fmt(probe.render)} + object ${fmt(res.object)})` : null,
    floorValue: probe ? probe.guarded + probe.render + res.object : null,
  });
  NOTES.push(`appendEvent: the events of generation(), rounds alternating between an element found in source and one not: generate ×3 ` +
    `(about 1.2 KB with the element context, 3.2 KB with the scaffold), 10 checkpoints, 7 agent_phase, ` +
    `3 mount acks, agent_done. Floor (probeFloor append, on the package's last line, ${last.line.length} B, and snapshot file, ${last.snapshot.length} B): ` +
    `disk work with this package's guarantees ${probe ? fmt(probe.guarded) : '—'} µs (without them: ${probe ? fmt(probe.inPlace) : '—'}), ` +
    `rendering the line and snapshot ${probe ? fmt(probe.render) : '—'}, V8's JSON.parse of the returned snapshot ${fmt(res.object)}.`);
}

/** 1,000 agent_phase appends to one fresh session: the names the server records against p0..p7. */
async function wPhases(impls) {
  const n = CFG.phaseOps;
  const id = hexId(2);
  const run = (mod, names) => () => {
    const dir = project('phases');
    const store = mod.createLiveSessionStore({ cwd: dir });
    const gen = phaseEvent(names);
    const us = perOp(n, (i) => store.appendEvent(gen(id, i)));
    removeDir(dir);
    return us;
  };
  const res = await alternate({
    native: run(impls.native, AGENT_PHASES),
    js: impls.js ? run(impls.js, AGENT_PHASES) : null,
    nativeP: run(impls.native, SYNTHETIC_PHASES),
    jsP: impls.js ? run(impls.js, SYNTHETIC_PHASES) : null,
  });
  row(`appendEvent ×${n.toLocaleString('en-US')} to one new session, agent_phase only: server's names (${AGENT_PHASES.slice(0, 2).join(', ')}, …)`, { old: res.js, native: res.native });
  row(`appendEvent ×${n.toLocaleString('en-US')} to one new session, agent_phase only: p0..p7`, { old: res.jsP, native: res.nativeP });
}

/** getSnapshot when nothing changed. */
async function wSnapshot(impls) {
  const id = hexId(3);
  const stores = {};
  for (const [k, mod] of Object.entries(impls)) {
    const dir = project(`snapshot-${k}`);
    const store = mod.createLiveSessionStore({ cwd: dir });
    for (let i = 0; i < 30; i++) store.appendEvent(longEvent(id, i));
    store.getSnapshot(id);
    stores[k] = { dir, store };
  }
  const jp = journalOf(stores.native.dir, id);
  const n = CFG.snapshotOps;
  const run = (k) => () => {
    const { store } = stores[k];
    return perOp(n, () => store.getSnapshot(id));
  };
  const res = await alternate({
    native: run('native'),
    js: stores.js ? run('js') : null,
    floor: () => perOp(n, () => fs.statSync(jp)),
  });
  row('getSnapshot, nothing changed', { old: res.js, native: res.native, floor: res.floor });
  NOTES.push('getSnapshot floor = one fs.statSync of the journal from JS (the check both implementations must make).');
}

/** Sets up one project per implementation holding the same journal (`text`, or `n` events of `gen`). */
function journalProjects(impls, label, id, { n, gen, text }) {
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
function coldReplay(mod, dir, id, out) {
  fs.rmSync(snapshotOf(dir, id), { force: true });
  const store = mod.createLiveSessionStore({ cwd: dir });
  const t0 = now();
  const snap = store.getSnapshot(id, { includeCompleted: true });
  const us = usSince(t0);
  if (out) out.snapshot = snap;
  return us;
}

function checkSame(label, a, b) {
  if (!a || !b) return;
  const same = isDeepStrictEqual(a, b) && JSON.stringify(a) === JSON.stringify(b);
  if (!same) {
    NOTES.push(`${label}: native snapshot DIFFERS FROM the old module's.`);
    MISSES.push(`${label}: snapshots differ`);
  }
}

/** Cold replays of one journal by each implementation, rounds alternating; µs per replay. */
async function alternateColdReplays(impls, label, id, journal, rounds = CFG.rounds) {
  const dirs = journalProjects(impls, label, id, journal);
  const out = { native: {}, js: {} };
  const res = await alternate({
    native: () => coldReplay(impls.native, dirs.native, id, out.native),
    js: impls.js ? () => coldReplay(impls.js, dirs.js, id, out.js) : null,
  }, rounds);
  checkSame(`${label} replay`, out.native.snapshot, out.js.snapshot);
  return { dirs, out, res };
}

/** Cold replay of a 20,000-event journal of generation rounds. */
async function wReplay(impls) {
  const id = hexId(4);
  const n = CFG.replayEvents;
  const { dirs, out, res } = await alternateColdReplays(impls, 'replay', id, { n, gen: longEvent }, CFG.replayRounds);
  const floor = probeFloor('replay', { journal: journalOf(dirs.native, id) });
  row(`cold replay, ${n.toLocaleString('en-US')} events (µs/event)`, {
    old: res.js && res.js / n, native: res.native / n,
    // Validation alone: every line must at least be checked (a bad one becomes a diagnostic).
    floor: floor ? fmt(floor.validate) : null, floorValue: floor?.validate ?? null,
  });
  if (floor) {
    NOTES.push(`cold replay floor (probeFloor replay, same journal): validating each line ${fmt(floor.validate)} µs/event; ` +
      `this package's parser ${fmt(floor.ours)}; its whole replay ${fmt(floor.replay)} (no Node-API), of which the reducer ` +
      `alone ${fmt(floor.reduce)}.`);
  }
  const expect = phaseAfterLong(id, n);
  if (out.native.snapshot?.phase !== expect) MISSES.push(`cold replay: native phase ${out.native.snapshot?.phase}, expected ${expect}`);
  NOTES.push(`cold replay ${n}: whole replay ${fmt(res.native / 1000)} ms native` + (res.js ? `, ${fmt(res.js / 1000)} ms old` : '') + '.');
}

/** Native µs/event of cold replays at growing journal lengths: flat (largest against cheapest ≤ 1.5). */
async function wReplayScale(impls) {
  const id = hexId(5);
  const sizes = CFG.scale;
  const per = {};
  for (const n of sizes) {
    const dir = project(`scale-${n}`);
    writeJournal(journalOf(dir, id), id, n, longEvent);
    per[n] = (await alternate({ native: () => coldReplay(impls.native, dir, id) / n })).native;
    removeDir(dir);
  }
  const largest = sizes[sizes.length - 1];
  const spread = per[largest] / Math.min(...Object.values(per));
  for (const n of sizes) {
    const last = n === largest;
    row(`cold replay, native only, ${n.toLocaleString('en-US')} events (µs/event)`, {
      native: per[n],
      check: last ? { text: `flat (largest/cheapest ≤ 1.5; is ${fmt(spread)})`, met: spread <= 1.5 } : null,
    });
  }
}

/** Half the events are stale checkpoints, so diagnostics grow with the journal (the old module's copy per event makes it quadratic). */
async function wReplayStale(impls) {
  const id = hexId(6);
  const n = CFG.staleEvents;
  const stale = (sid, i) => (i % 2 === 0
    ? { token: TOKEN, type: 'checkpoint', id: sid, revision: i / 2 + 1, revisionDomain: 'browser', owner: OWNER, reason: 'param_changed', phase: 'cycling', visibleVariant: 1 }
    : { token: TOKEN, type: 'checkpoint', id: sid, revision: 0, revisionDomain: 'browser', owner: 'browser-77c0e1d2', reason: 'browser_resumed', phase: 'generating' });
  const { res } = await alternateColdReplays(impls, 'stale', id, { n, gen: stale });
  row(`replay, ${n.toLocaleString('en-US')} events, half stale checkpoints (µs/event)`, { old: res.js && res.js / n, native: res.native / n });
}

/**
 * A reader holding a 10,000-event session catches up after a foreign writer
 * appended one raw line without touching the snapshot file (the old module
 * replays the whole journal).
 */
async function wForeign(impls) {
  const id = hexId(7);
  const n = CFG.foreignEvents;
  const dirs = journalProjects(impls, 'foreign', id, { n, gen: longEvent });
  const ctx = {};
  for (const [k, mod] of Object.entries(impls)) {
    const reader = mod.createLiveSessionStore({ cwd: dirs[k] });
    reader.getSnapshot(id);
    ctx[k] = { reader, i: 0, seq: n + 1, dir: dirs[k] };
  }
  const run = (k) => () => {
    const c = ctx[k];
    const jp = journalOf(c.dir, id);
    return perOpWith(CFG.foreignOps[k], () => {
      fs.appendFileSync(jp, journalLine(c.seq, foreignCheckpoint(id, ++c.i), Date.now()));
      c.seq++;
    }, () => c.reader.getSnapshot(id));
  };
  const res = await alternate({ native: run('native'), js: impls.js ? run('js') : null });
  // The reader must see what a fresh store replaying the journal sees.
  for (const [k, mod] of Object.entries(impls)) {
    fs.rmSync(snapshotOf(ctx[k].dir, id), { force: true });
    const want = mod.createLiveSessionStore({ cwd: ctx[k].dir }).getSnapshot(id);
    const got = ctx[k].reader.getSnapshot(id);
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(want)), JSON.parse(JSON.stringify(got)))) {
      MISSES.push(`foreign: ${k} reader disagrees with a fresh replay`);
    }
  }
  row(`catch-up read after a raw 1-line foreign append (snapshot file stale), ${n.toLocaleString('en-US')}-event journal`, {
    old: res.js, native: res.native,
  });
}

/** listActiveSessions over 500 sessions (each at variants-arriving), warm and from a fresh store. µs per session. */
async function wList(impls) {
  const count = CFG.listSessions;
  const ctx = {};
  for (const [k, mod] of Object.entries(impls)) {
    const dir = project(`list-${k}`);
    const store = mod.createLiveSessionStore({ cwd: dir });
    for (let s = 0; s < count; s++) {
      const id = hexId(1000 + s);
      for (const e of generation(id).slice(0, 12)) store.appendEvent(e);
    }
    const warm = mod.createLiveSessionStore({ cwd: dir });
    const listed = warm.listActiveSessions();
    if (listed.length !== count) MISSES.push(`list: ${k} listed ${listed.length} of ${count}`);
    ctx[k] = { dir, warm, mod };
  }
  const warm = await alternate({
    native: () => perOp(CFG.listWarmOps, () => ctx.native.warm.listActiveSessions()) / count,
    js: ctx.js ? () => perOp(CFG.listWarmOps, () => ctx.js.warm.listActiveSessions()) / count : null,
  });
  const freshRun = (k) => async () => {
    const { mod, dir } = ctx[k];
    let store;
    const release = async () => {
      store = null;
      await nextTurn();
      store = mod.createLiveSessionStore({ cwd: dir });
    };
    return await perOpWith(CFG.listFreshOps, release, () => store.listActiveSessions()) / count;
  };
  // The floor of a fresh listing: what any store must do per session before
  // it hands out the snapshot, i.e. stat the journal and read the snapshot
  // file (from Rust, in the native project, so file sizes are the package's
  // own), and make its JS objects, which V8's JSON.parse of the file's text
  // does fastest.
  const rootDir = ctx.native.warm.rootDir;
  const texts = fs.readdirSync(rootDir).filter((n) => n.endsWith('.snapshot.json')).map((n) => fs.readFileSync(path.join(rootDir, n), 'utf8'));
  const parse = () => perOp(1, () => texts.forEach((text) => JSON.parse(text))) / texts.length;
  const fresh = await alternate({ native: freshRun('native'), js: ctx.js ? freshRun('js') : null, parse });
  const probe = probeFloor('read', { sessions: rootDir });
  const floorValue = probe ? probe.read + fresh.parse : null;
  row(`listActiveSessions, ${count} sessions, warm (µs/session)`, { old: warm.js, native: warm.native });
  row(`listActiveSessions, ${count} sessions, fresh store (µs/session)`, {
    old: fresh.js, native: fresh.native,
    floor: probe ? `${fmt(floorValue)} (stat & read ${fmt(probe.read)} + JSON.parse ${fmt(fresh.parse)})` : `JSON.parse ${fmt(fresh.parse)}`,
    floorValue,
  });
  NOTES.push('listActiveSessions fresh = a new store each call, its construction and a turn of the event loop between calls untimed; floor = a stat of each journal and a read of its ' +
    'snapshot file from Rust (probeFloor read) + V8\'s JSON.parse of that text, per session (the old module pays the parse too, from its own reads).');
}

/** withSourceLockSync round trip, sourceLockPath alone, and the raw lock floor. */
async function wLock(impls) {
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
  const res = await alternate({
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
  const pathRes = await alternate({ native: p('native'), js: ctx.js ? p('js') : null });
  row('withSourceLockSync round trip (fn returns a value)', { old: res.js, native: res.native, floor: res.floor });
  row('sourceLockPath alone', { old: pathRes.js, native: pathRes.native });
  NOTES.push(`lock floor = openSync(wx) + writeSync of a ${payload.length}-byte owner record + closeSync + unlinkSync.`);
}

/**
 * The journals recorded from the reference's server (bench/traffic/): their
 * events re-appended through appendEvent into a fresh store (fresh project
 * each time, set up untimed; timestamps differ, the work is the same), and the
 * journal itself replayed cold.
 */
async function wTraffic(impls) {
  const traffic = loadTraffic();
  if (!traffic.length) {
    NOTES.push(`traffic: no journals in ${TRAFFIC_DIR}`);
    return;
  }
  for (const t of traffic) {
    const reps = Math.max(1, Math.round(CFG.trafficAppends / t.events.length));
    const last = {};
    const appendRound = (k) => () => {
      let total = 0;
      for (let r = 0; r < reps; r++) {
        const dir = project(`traffic-${k}`);
        const store = impls[k].createLiveSessionStore({ cwd: dir });
        const t0 = now();
        for (const e of t.events) store.appendEvent(e);
        total += usSince(t0);
        last[k] = store.getSnapshot(t.id, { includeCompleted: true });
        removeDir(dir);
      }
      return total / (reps * t.events.length);
    };
    const app = await alternate({ native: appendRound('native'), js: impls.js ? appendRound('js') : null });
    if (last.js && (last.native.phase !== last.js.phase || last.native.diagnostics.length !== last.js.diagnostics.length)) {
      MISSES.push(`traffic ${t.name}: native and old snapshots differ after the same appends`);
    }
    const dirs = journalProjects(impls, `traffic-replay-${t.name}`, t.id, { text: t.text });
    const out = { native: {}, js: {} };
    const replayRound = (k) => () => {
      let total = 0;
      for (let r = 0; r < CFG.trafficReplays; r++) total += coldReplay(impls[k], dirs[k], t.id, out[k]);
      return total / CFG.trafficReplays;
    };
    const rep = await alternate({ native: replayRound('native'), js: impls.js ? replayRound('js') : null });
    checkSame(`traffic ${t.name} replay`, out.native.snapshot, out.js.snapshot);
    for (const dir of Object.values(dirs)) removeDir(dir);
    const label = `traffic ${t.name} (${t.events.length} events, ${(t.text.length / 1024).toFixed(1)} KiB)`;
    row(`${label}: appendEvent (µs/event)`, { old: app.js, native: app.native });
    row(`${label}: cold replay (µs/replay)`, { old: rep.js, native: rep.native });
  }
  NOTES.push(`traffic: ${traffic.length} journals from bench/traffic/; appendEvent re-appends each journal's events into a fresh project and store (untimed setup), ` +
    `repeated to about ${CFG.trafficAppends} appends per round; cold replay = a new store's first getSnapshot over the journal, snapshot file removed, ` +
    `${CFG.trafficReplays} per round.`);
}

/**
 * A server's day: 50 sessions live at once, events round-robin across them,
 * each session a realistic cycle (generate … accept/complete, a steer, or a
 * discard; a finished session's slot starts a new one with a new id). After
 * every append a second store on the same project (another instance, as
 * live-status or a second server would be) reads that session, and every 10
 * appends it lists the active sessions. µs per append, reads included.
 */
async function wDay(impls) {
  const slots = CFG.daySessions;
  const ops = CFG.dayOps;
  /**
   * The day's events, the same every round: each slot's lead-in (appended
   * untimed, so the day runs in a steady mix), then the timed stream, and
   * which of its events is a new session's first.
   */
  function plan() {
    let next = 0;
    const state = Array.from({ length: slots }, (_, s) => ({ i: 0, events: null, s }));
    const start = (st) => {
      const id = hexId(100_000 + next);
      st.events = sessionEvents(id, SESSION_KINDS[next % SESSION_KINDS.length]);
      st.i = 0;
      next++;
    };
    const nextEvent = (st) => {
      if (!st.events || st.i >= st.events.length) start(st);
      return st.events[st.i++];
    };
    const leadIn = [];
    for (const st of state) {
      start(st);
      const skip = (st.s * 7) % st.events.length;
      for (let i = 0; i < skip; i++) leadIn.push(nextEvent(st));
    }
    const stream = [];
    const firsts = [];
    for (let op = 0; op < ops; op++) {
      const st = state[op % slots];
      stream.push(nextEvent(st));
      firsts.push(st.i === 1);
    }
    return { leadIn, stream, firsts };
  }
  const day = plan();
  const newSessions = day.firsts.filter(Boolean).length;
  /** A fresh project with every slot part-way through its first session. */
  function setup(mod) {
    const dir = project('day');
    const writer = mod.createLiveSessionStore({ cwd: dir });
    const reader = mod.createLiveSessionStore({ cwd: dir });
    for (const e of day.leadIn) writer.appendEvent(e);
    reader.listActiveSessions();
    return { dir, writer, reader, stream: day.stream };
  }
  const last = {};
  // Where each round's time went, per append, part by part (see `spent`): medians over rounds.
  const parts = {};
  const run = (k) => () => {
    const d = setup(impls[k]);
    const spent = { 'first appends': 0, 'other appends': 0, read: 0, listing: 0 };
    const t0 = now();
    let t = t0;
    const lap = (part) => {
      const at = now();
      spent[part] += Number(at - t);
      t = at;
    };
    for (let op = 0; op < ops; op++) {
      const e = d.stream[op];
      d.writer.appendEvent(e);
      lap(day.firsts[op] ? 'first appends' : 'other appends');
      d.reader.getSnapshot(e.id);
      lap('read');
      if (op % 10 === 9) {
        d.reader.listActiveSessions();
        lap('listing');
      }
    }
    const us = usSince(t0) / ops;
    for (const [part, ns] of Object.entries(spent)) ((parts[k] ??= {})[part] ??= []).push(ns / 1000 / ops);
    last[k] = d.reader.listActiveSessions().map((s) => `${s.id}:${s.phase}`).join(' ');
    removeDir(d.dir);
    return us;
  };
  // The floor's reader half: a stat of the journal and a read of the snapshot
  // file from Rust (probeFloor read), per session of the day's sessions
  // directory once its stream is appended (untimed, natively). Its last
  // append is the sample the append floor and the new sessions' files take.
  const sample = (() => {
    const d = setup(impls.native);
    for (const e of d.stream) d.writer.appendEvent(e);
    const id = d.stream[d.stream.length - 1].id;
    const read = probeFloor('read', { sessions: sessionsDir(d.dir) });
    const last = lastAppendOf(d.dir, id);
    removeDir(d.dir);
    return { ...last, read: read?.read };
  })();
  // The floor's new-session half: a first append creates two files, the
  // journal and the snapshot file (staged and renamed, so no reader sees it
  // half written). They are made in a day's sessions directory, among the
  // lead-in's files, since a file's creation costs more in a fuller
  // directory; amortized over the day's appends.
  const floorCreate = () => {
    const d = setup(impls.native);
    const { line, snapshot } = sample;
    let total = 0n;
    for (let n = 0; n < newSessions; n++) {
      const id = hexId(900_000 + n);
      const staged = path.join(sessionsDir(d.dir), `.${id}.snapshot.json.${process.pid}.tmp`);
      const t0 = now();
      for (const [file, bytes] of [[journalOf(d.dir, id), line], [staged, snapshot]]) {
        const fd = fs.openSync(file, 'wx');
        fs.writeSync(fd, bytes);
        fs.closeSync(fd);
      }
      fs.renameSync(staged, snapshotOf(d.dir, id));
      total += now() - t0;
    }
    removeDir(d.dir);
    return Number(total) / 1000 / ops;
  };
  const res = await alternate({ native: run('native'), js: impls.js ? run('js') : null, create: floorCreate });
  if (last.js != null && last.native !== last.js) MISSES.push("server's day: the reader's last listing differs between native and old");
  const probe = probeFloor('append', sample);
  const floorValue = probe && sample.read != null ? probe.guarded + sample.read + res.create : null;
  row(`a server's day: ${slots} sessions round-robin, each append read back by a second store, a listing every 10 appends (µs/append)`, {
    old: res.js, native: res.native,
    floor: floorValue != null
      ? `${fmt(floorValue)} (append disk ${fmt(probe.guarded)} + stat & read ${fmt(sample.read)} + new sessions' files ${fmt(res.create)})`
      : `new sessions' files ${fmt(res.create)}`,
    floorValue,
  });
  const split = (k) => (parts[k] ? Object.entries(parts[k]).map(([part, us]) => `${part} ${fmt(median(us))}`).join(' + ') : null);
  NOTES.push(`server's day, µs per append by part (${newSessions} of the ${ops} appends start a session): native ${split('native')}` +
    (parts.js ? `; old ${split('js')}` : '') + '.');
  NOTES.push(`server's day: ${ops} appends per round over ${slots} sessions (kinds in turn: ${SESSION_KINDS.join(', ')}), one fresh project per round, ` +
    `every slot pre-advanced untimed to a different point of its first session; the reader's getSnapshot returns null once a session completes. ` +
    `Floor = probeFloor append (a ${sample.line.length}-byte line, ${sample.snapshot.length}-byte snapshot file) + probeFloor read (a stat of a journal ` +
    `and a read of its snapshot file, from Rust, per session of the day's sessions directory) for each append's read-back + creating each new session's two files (its journal; its snapshot file, staged and renamed) ` +
    `from JavaScript in a sessions directory holding the lead-in's, over all appends; not counted: rendering, building the objects, the listings.`);
}

/** Peak RSS of a child process running `args`, with its JSON result. */
function runChild(args) {
  const nodeArgs = [THIS_FILE, '--child', ...args];
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

/** A 600 MiB journal, replayed in a child process; peak RSS. */
async function wBig(impls, liveDir) {
  const id = hexId(8);
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
    const line = journalLine(n + 1, { ...longEvent(id, n), note: pad }, at);
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
  const expectPhase = phaseAfterLong(id, n);
  const problems = [];
  if (res.error) problems.push(res.error);
  if (res.phase !== expectPhase) problems.push(`phase ${res.phase}, expected ${expectPhase}`);
  if (res.updatedAt !== lastTs) problems.push(`updatedAt ${res.updatedAt}, expected ${lastTs}`);
  if (res.nextSeq !== n + 1) problems.push(`__nextSeq ${res.nextSeq}, expected ${n + 1}`);
  if (res.diagnostics !== 0) problems.push(`${res.diagnostics} diagnostics, expected 0`);
  const verified = problems.length === 0;
  if (!verified) MISSES.push(`600 MiB replay: ${problems.join('; ')}`);
  const peakMb = res.peakRssKb / 1024;
  row(`${(bytes / 2 ** 20).toFixed(0)} MiB journal (${n.toLocaleString('en-US')} events) replay, peak RSS of the child (MB, not µs)`, {
    native: peakMb, check: { text: '< 64 MB', met: verified && peakMb < 64 }, ratio: 'old fails',
  });
  NOTES.push(`600 MiB replay (native): ${fmt(res.ms)} ms (${fmt(res.ms * 1000 / n)} µs/event), peak RSS ${fmt(peakMb)} MB by ${res.peakFrom} ` +
    `(node + module before the replay: ${fmt(res.baseRssKb / 1024)} MB RSS); replayed snapshot ${verified ? `verified (phase ${res.phase}, __nextSeq ${res.nextSeq}, updatedAt = last ts, no diagnostics)` : `WRONG: ${problems.join('; ')}`}.`);
  if (impls.js) {
    fs.rmSync(snapshotOf(dir, id), { force: true }); // written by the native child's flush
    const old = runChild(['big', JSON.stringify({ impl: 'js', liveDir, dir, id })]);
    NOTES.push(`600 MiB replay (old module): ${old.error ? `throws "${old.error}"` : `phase ${old.phase} in ${fmt(old.ms)} ms`} (peak RSS ${fmt(old.peakRssKb / 1024)} MB).`);
  }
  removeDir(dir);
}

/**
 * A journal of one 200 MiB line (a generate event carrying a long note),
 * read by a fresh store in a child process; the two modules alternate, and
 * the snapshot file each read writes is removed before the next.
 */
async function wLongLine(impls, liveDir) {
  const id = hexId(9);
  const dir = project('long-line');
  const file = journalOf(dir, id);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const unit = 'Lorem ipsum dolor sit amet, "consectetur" adipiscing elit — sed do eiusmod tempor incididunt. ';
  const note = unit.repeat(Math.ceil(200 * 2 ** 20 / Buffer.byteLength(unit)));
  fs.writeFileSync(file, journalLine(1, { type: 'generate', id, count: 3, note }, BASE_TS));
  const bytes = fs.statSync(file).size;
  const ms = { native: [], js: [] };
  const kinds = impls.js ? ['native', 'js'] : ['native'];
  for (let round = 0; round < 3; round++) {
    for (const impl of kinds) {
      fs.rmSync(snapshotOf(dir, id), { force: true });
      const res = runChild(['big', JSON.stringify({ impl, liveDir, dir, id })]);
      if (res.error || res.nextSeq !== 2) MISSES.push(`long line (${impl}): ${res.error ?? `__nextSeq ${res.nextSeq}`}`);
      else ms[impl].push(res.ms);
    }
  }
  const range = (xs) => (xs.length ? `${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))}` : '—');
  const old = ms.js.length ? median(ms.js) : null;
  const native = ms.native.length ? median(ms.native) : null;
  // A guard, not a speed budget: on this input both modules spend most of
  // their time in V8's parse of the line, and a drop-in replacement must not
  // make its caller wait noticeably longer than the module it replaces.
  row(`cold getSnapshot of a journal holding one ${(bytes / 2 ** 20).toFixed(0)} MiB line, fresh store in a child (ms, not µs)`, {
    old, native, unit: 'ms', check: { text: '≤ 1.25x old', met: old == null || native == null ? null : native <= 1.25 * old },
  });
  NOTES.push(`long line: ${kinds.length * 3} child processes, modules alternating; native ${range(ms.native)} ms, old ${range(ms.js)} ms; load average ${loadavg()}.`);
  removeDir(dir);
}

/** Memory held by one store with 1,000 sessions, one child process per implementation and round. */
async function wMemory(impls, liveDir) {
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

/** durable: true (fsync per append) against the default, native only. */
async function wDurable(impls) {
  const id = hexId(9);
  const ctx = {};
  for (const durable of [false, true]) {
    const dir = project(`durable-${durable}`);
    const store = impls.native.createLiveSessionStore({ cwd: dir, durable });
    store.appendEvent(longEvent(id, 0));
    ctx[durable] = { dir, store, i: 0 };
  }
  const n = CFG.durableOps;
  const run = (d) => () => perOp(n, () => ctx[d].store.appendEvent(longEvent(id, ++ctx[d].i)));
  const res = await alternate({ default: run(false), durable: run(true) });
  row('appendEvent, native default (same run as durable)', { native: res.default });
  row('appendEvent, native `durable: true`', { native: res.durable, ratio: `${fmt(res.durable / res.default)}x cost` });
}

/**
 * The package laid out in `modules` as npm installs it: its published
 * files, no binary beside them, and this platform's package (the local
 * build as its binary) next to it.
 */
function installPackage(modules) {
  const require = createRequire(import.meta.url);
  const meta = require(path.join(PACKAGE_DIR, 'package.json'));
  const key = require(path.join(PACKAGE_DIR, 'platform.js')).platformKey();
  const pkg = path.join(modules, meta.name);
  for (const entry of [...meta.files, 'package.json']) {
    fs.cpSync(path.join(PACKAGE_DIR, entry), path.join(pkg, entry), { recursive: true });
  }
  const platformPkg = path.join(modules, `${meta.name}-${key}`);
  const binary = `${meta.name}.${key}.node`;
  fs.mkdirSync(platformPkg);
  fs.copyFileSync(path.join(PACKAGE_DIR, 'npm', key, 'package.json'), path.join(platformPkg, 'package.json'));
  fs.copyFileSync(path.join(PACKAGE_DIR, binary), path.join(platformPkg, binary));
}

/**
 * Load cost: quiver-cli's helpers (live-status, live-poll, ...) are short
 * processes, started again and again. Each contender is a whole `node`
 * process, rounds alternating over all contenders, timed three ways: from the
 * outside (spawnSync wall time, what a caller waits), and by the process
 * itself at its end: process.cpuUsage() (user + system: its own work, which a
 * busy machine disturbs less) and performance.now() (from its start, without
 * the exec, linking and exit around it). The figure is the median over rounds of each
 * run minus the bare `node` run of the same round (an empty script), in ms.
 * Contenders: the old module (from QUIVER_REFERENCE_DIR), this package as npm
 * installs it (installPackage) through its ESM entry (`import 'quiver-live-native'`, via `exports`) and its CJS
 * entry (`require`), a vendored bundle's index.mjs, and (with the reference)
 * the skill's session-store.mjs shim choosing that bundle. Two kinds of
 * process: the import alone, and a helper (create a store, read one session,
 * exit). The project holds one session of a generation round.
 */
async function wLoad(impls, liveDir) {
  const root = fs.mkdtempSync(path.join(tmpRoot(), 'load-'));
  const dir = project('load-project');
  const id = hexId(11);
  const store = impls.native.createLiveSessionStore({ cwd: dir });
  for (const event of generation(id)) store.appendEvent(event);
  const phase = store.getSnapshot(id, { includeCompleted: true }).phase;

  // The package as npm installs it, the bundle as a skill vendors it.
  const consumer = path.join(root, 'consumer');
  installPackage(path.join(consumer, 'node_modules'));
  const { vendor } = createRequire(import.meta.url)(path.join(PACKAGE_DIR, 'vendor', 'index.js'));
  let shimLive = null;
  if (liveDir) {
    shimLive = path.join(root, 'scripts', 'live');
    fs.cpSync(path.dirname(liveDir), path.join(root, 'scripts'), { recursive: true });
    vendor(path.join(shimLive, 'quiver-live-native'), { platforms: 'current', shims: shimLive });
  } else {
    vendor(path.join(root, 'bundle'), { platforms: 'current' });
  }
  const bundle = shimLive ? path.join(shimLive, 'quiver-live-native') : path.join(root, 'bundle');

  // The floor: an ES module that only loads the same binary, imported like
  // the bundle's index.mjs. What Node's module loader and the dynamic linker
  // cost any package shipping this addon.
  const floorModule = path.join(consumer, 'floor-module.mjs');
  const binary = path.join(bundle, fs.readdirSync(bundle).find((f) => f.endsWith('.node')));
  fs.writeFileSync(floorModule, `const addon = { exports: {} };\nprocess.dlopen(addon, ${JSON.stringify(binary)});\nexport const createLiveSessionStore = addon.exports.Store;\n`);

  const specifiers = {
    floor: pathToFileURL(floorModule).href,
    old: liveDir ? pathToFileURL(path.join(liveDir, 'session-store.mjs')).href : null,
    esm: 'quiver-live-native',
    cjs: 'quiver-live-native',
    vendored: pathToFileURL(path.join(bundle, 'index.mjs')).href,
    shim: shimLive ? pathToFileURL(path.join(shimLive, 'session-store.mjs')).href : null,
  };
  const entries = {};
  // The same import, timed inside the process: without the process's start
  // and exit, which vary by several ms from run to run on a shared machine.
  const timedEntries = {};
  for (const [k, spec] of Object.entries(specifiers)) {
    if (!spec) continue;
    const quoted = JSON.stringify(spec);
    entries[k] = k === 'cjs' ? `const { createLiveSessionStore } = require(${quoted});` : `import { createLiveSessionStore } from ${quoted};`;
    timedEntries[k] = `const t0 = performance.now();\nconst { createLiveSessionStore } = ${k === 'cjs' ? 'require' : 'await import'}(${quoted});\n` +
      'const importMs = performance.now() - t0;';
  }
  const report = (phaseExpr) => `\nconst at = performance.now();\nconst used = process.cpuUsage();\nprocess.stdout.write(JSON.stringify({ at, cpuMs: (used.user + used.system) / 1000, importMs: typeof importMs === 'number' ? importMs : null, phase: ${phaseExpr} }));\n`;
  const helperBody = `\nconst snapshot = createLiveSessionStore({ cwd: ${JSON.stringify(dir)} }).getSnapshot(${JSON.stringify(id)}, { includeCompleted: true });\n` +
    'if (!snapshot) process.exit(3);' + report('snapshot.phase');
  // Two baselines: an empty ES module, and an empty CommonJS script (a
  // CommonJS main skips the ES module loader's start, about 3 ms).
  const scripts = { bare: path.join(consumer, 'bare.mjs'), 'bare-cjs': path.join(consumer, 'bare.cjs') };
  fs.writeFileSync(scripts.bare, report('null'));
  fs.writeFileSync(scripts['bare-cjs'], report('null'));
  for (const [k, text] of Object.entries(entries)) {
    const ext = k === 'cjs' ? 'cjs' : 'mjs';
    scripts[`${k}-import`] = path.join(consumer, `${k}-import.${ext}`);
    scripts[`${k}-timed`] = path.join(consumer, `${k}-timed.${ext}`);
    fs.writeFileSync(scripts[`${k}-import`], text + report('null'));
    if (k !== 'floor') {
      scripts[`${k}-helper`] = path.join(consumer, `${k}-helper.${ext}`);
      fs.writeFileSync(scripts[`${k}-helper`], text + helperBody);
    }
    fs.writeFileSync(scripts[`${k}-timed`], timedEntries[k] + report('null'));
  }
  const env = { ...process.env, NODE_OPTIONS: '', QUIVER_LIVE_NATIVE: '', QUIVER_LIVE_NATIVE_TRACE: '' };
  // Node 20 reads this file of certificates as it starts, before any script
  // (tens of ms for a system bundle): the same in every process, but its
  // variance would swamp the few ms being measured.
  delete env.NODE_EXTRA_CA_CERTS;
  const runOnce = (file) => {
    const t0 = now();
    const r = spawnSync(process.execPath, [file], { cwd: consumer, env, encoding: 'utf8', timeout: 30_000 });
    const ms = usSince(t0) / 1000;
    let got = null;
    try { got = JSON.parse(r.stdout); } catch { /* reported below */ }
    if (r.status !== 0 || !got || got.phase !== (file.includes('-helper.') ? phase : null)) {
      throw new Error(`load: ${path.basename(file)} exited ${r.status} (${r.signal ?? 'no signal'}): ${r.stdout} ${r.stderr}`.trim());
    }
    return { wall: ms, cpu: got.cpuMs, at: got.at, importMs: got.importMs };
  };
  // The first run of the bundle checks its binary's sha256 and remembers it;
  // the warm-up round takes that (and fills the page cache).
  // Each process takes about 80 ms and varies by several, hence many rounds.
  const rounds = QUICK ? 10 : 60;
  const samples = Object.fromEntries(Object.keys(scripts).map((k) => [k, []]));
  for (let r = 0; r < rounds + 1; r++) {
    for (const [k, file] of Object.entries(scripts)) {
      const run = runOnce(file);
      if (r > 0) samples[k].push(run);
    }
  }
  const baseline = (k) => samples[k.startsWith('cjs-') ? 'bare-cjs' : 'bare'];
  const added = (k, f = 'wall') => (samples[k]?.length ? median(samples[k].map((run, i) => run[f] - baseline(k)[i][f])) : null);
  const whole = (k, f = 'wall') => (samples[k]?.length ? median(samples[k].map((run) => run[f])) : null);
  const names = { esm: 'installed package, ESM entry (`import`)', cjs: 'installed package, CJS entry (`require`)', vendored: "vendored bundle's index.mjs", shim: 'skill shim choosing the vendored bundle' };
  for (const k of ['esm', 'cjs', 'vendored', 'shim']) {
    if (!scripts[`${k}-import`]) continue;
    const ms = added(`${k}-import`);
    row(`load: import alone, ${names[k]}, over bare node (ms of wall time, not µs)`, { old: added('old-import'), native: ms, check: { text: '≤ 5 ms', met: ms <= 5 }, floor: k === 'cjs' ? null : added('floor-import'), unit: 'ms' });
    row(`load: import alone, ${names[k]}, over bare node (ms of the process's CPU, not µs)`, { old: added('old-import', 'cpu'), native: added(`${k}-import`, 'cpu') });
    row(`load: import alone, ${names[k]}, over bare node (ms from the process's start to the end of the import, not µs)`, { old: added('old-import', 'at'), native: added(`${k}-import`, 'at') });
    row(`load: import alone, ${names[k]}, timed inside the process around the import (ms, not µs)`, { old: whole('old-timed', 'importMs'), native: whole(`${k}-timed`, 'importMs'), floor: k === 'cjs' ? null : whole('floor-timed', 'importMs'), unit: 'ms' });
  }
  for (const k of ['esm', 'cjs', 'vendored', 'shim']) {
    if (!scripts[`${k}-helper`]) continue;
    row(`load: helper process (create a store, read one session, exit), ${names[k]}, whole process (ms, not µs)`, { old: whole('old-helper'), native: whole(`${k}-helper`) });
  }
  NOTES.push(`load: ${rounds} rounds (+1 warm-up) of every process in turn; bare node ${fmt(whole('bare'))} ms wall, ${fmt(whole('bare', 'cpu'))} ms CPU (an empty .mjs), ` +
    `${fmt(whole('bare-cjs'))} ms wall (an empty .cjs), medians, load average ${loadavg()}; ` +
    `"over bare node" = median over rounds of (run - the same round's bare run of the same module kind); helper processes: whole wall time of spawnSync; ` +
    `the installed package: its published files in node_modules with this platform's package beside it, as npm lays them out; ` +
    `floor: an ES module whose only statement is process.dlopen of the same binary, imported by its file URL (as the vendored index.mjs is: the package's ESM entry pays Node's resolution of a package name besides); NODE_EXTRA_CA_CERTS unset in every process. ` +
    (liveDir ? 'old = the reference\'s session-store.mjs.' : 'old module skipped (QUIVER_REFERENCE_DIR not set), and with it the shim rows.'));
  removeDir(root);
  removeDir(dir);
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
  header.push(`load average at start: ${loadavg()}`);
  header.push(liveDir ? `old module: ${liveDir}` : 'old module: skipped (QUIVER_REFERENCE_DIR not set)');
  header.push(`rounds: ${CFG.rounds} counted (+1 warm-up; ${CFG.replayRounds} for the 20k cold replay), alternating native/old[/floor]; medians shown`);
  console.log(header.join('\n'));

  const started = now();
  const table = {
    append: () => wAppend(impls),
    phases: () => wPhases(impls),
    snapshot: () => wSnapshot(impls),
    replay: () => wReplay(impls),
    'replay-scale': () => wReplayScale(impls),
    'replay-stale': () => wReplayStale(impls),
    foreign: () => wForeign(impls),
    list: () => wList(impls),
    lock: () => wLock(impls),
    traffic: () => wTraffic(impls),
    day: () => wDay(impls),
    big: () => wBig(impls, liveDir),
    'long-line': () => wLongLine(impls, liveDir),
    memory: () => wMemory(impls, liveDir),
    durable: () => wDurable(impls),
    load: () => wLoad(impls, liveDir),
  };
  for (const name of WORKLOADS) {
    if (!enabled(name)) continue;
    const t0 = now();
    log(`${name} ...`);
    await table[name]();
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
