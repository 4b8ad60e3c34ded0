// Apply a generated op sequence to a store implementation and record a
// transcript: per op, the canonical return value (or thrown error), whether a
// returned snapshot is the same object as the one last returned for that
// session, and the exact bytes of every file in the temporary project.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { decodeValue, decodeBytes, encodeValue, fileContent } from './encode.mjs';
import { LAYOUTS } from './gen.mjs';

export const CLOCK_START = Date.UTC(2030, 0, 1);
export const CLOCK_STEP = 1000;

// ---------------------------------------------------------------------------
// Fake clock. Both implementations read time through the global `Date`
// (`new Date()` / `Date.now()`), so replacing the global makes every
// timestamp they produce deterministic.
// ---------------------------------------------------------------------------

let installedClock = null;

export function installClock(start = CLOCK_START) {
  if (installedClock) throw new Error('fake clock already installed');
  const RealDate = globalThis.Date;
  const clock = { now: start, RealDate };
  class FakeDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(clock.now);
      else super(...args);
    }
    static now() {
      return clock.now;
    }
  }
  globalThis.Date = FakeDate;
  clock.restore = () => {
    if (globalThis.Date === FakeDate) globalThis.Date = RealDate;
    installedClock = null;
  };
  installedClock = clock;
  return clock;
}

/** Run fn with the fake clock installed; always restores the real Date. */
export function withClock(start, fn) {
  const clock = installClock(start);
  try {
    return fn(clock);
  } finally {
    clock.restore();
  }
}

// ---------------------------------------------------------------------------
// Project directories
// ---------------------------------------------------------------------------

export function makeProject(workDir, layoutName = 'plain') {
  const layout = LAYOUTS[layoutName];
  if (!layout) throw new Error(`unknown layout ${layoutName}`);
  const base = workDir || os.tmpdir();
  fs.mkdirSync(base, { recursive: true });
  const dir = fs.mkdtempSync(path.join(base, 'qdiff-'));
  fs.mkdirSync(path.join(dir, '.git'));
  for (const [rel, text] of layout.files) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  fs.mkdirSync(path.join(dir, layout.cwd), { recursive: true });
  return {
    dir,
    layout,
    cwd: path.join(dir, layout.cwd),
    root: path.join(dir, layout.root),
    sessionsDir: path.join(dir, layout.root, '.impeccable', 'live', 'sessions'),
    legacyDir: path.join(dir, layout.root, '.impeccable-live', 'sessions'),
  };
}

export function removeProject(project) {
  fs.rmSync(project.dir, { recursive: true, force: true });
}

/**
 * Every file and directory of the project except `.git`, as
 * `{ 'rel/path': text | { b64 } , 'rel/dir/': { dir: true } }`, sorted.
 */
/**
 * Files larger than this are recorded by size and sha256, not by content: a
 * transcript holds every file after every operation, and a sequence whose
 * snapshot carries a big string (a mount failure's 8 MiB error, kept for five
 * failures) would otherwise not fit a test's heap.
 */
const DIGEST_OVER = 4 * 1024 * 1024;

function recordedContent(buf) {
  if (buf.length <= DIGEST_OVER) return fileContent(buf);
  return { bytes: buf.length, sha256: createHash('sha256').update(buf).digest('hex') };
}

export function listProjectFiles(dir) {
  const out = {};
  const walk = (rel) => {
    const abs = path.join(dir, rel);
    const names = fs.readdirSync(abs).sort();
    for (const name of names) {
      const r = rel ? rel + '/' + name : name;
      if (r === '.git') continue;
      const st = fs.lstatSync(path.join(dir, r));
      if (st.isDirectory()) {
        out[r + '/'] = { dir: true };
        walk(r);
      } else {
        out[r] = recordedContent(fs.readFileSync(path.join(dir, r)));
      }
    }
  };
  walk('');
  return out;
}

// ---------------------------------------------------------------------------
// Running a sequence
// ---------------------------------------------------------------------------

function placeholder(project) {
  const real = (() => { try { return fs.realpathSync(project.dir); } catch { return project.dir; } })();
  return (s) => {
    if (typeof s !== 'string') return s;
    let out = s.split(project.dir).join('<ROOT>');
    if (real !== project.dir) out = out.split(real).join('<ROOT>');
    // The fixtures were recorded on posix: on win32 the paths below <ROOT> are compared with '/'.
    if (path.sep === '\\') out = out.replace(/<ROOT>[^'"\s]*/g, (p) => p.replaceAll('\\', '/'));
    return out;
  };
}

function encodeThrown(err, fix) {
  if (err instanceof Error || (err && typeof err === 'object' && 'message' in err)) {
    const out = {
      threw: err?.constructor?.name ?? typeof err,
      message: fix(String(err.message)),
    };
    if (err.code !== undefined) out.code = encodeValue(err.code);
    return out;
  }
  return { threw: typeof err, value: encodeValue(err) };
}

const EDIT_FNS = {
  phase: (o) => { o.phase = 'tampered_phase'; },
  dropMeta: (o) => { delete o.__journalBytes; },
  wrongId: (o) => { o.id = String(o.id) + 'x'; },
  nextSeqFloat: (o) => { o.__nextSeq = Number(o.__nextSeq) + 0.5; },
  extraKeys: (o) => { o.extraField = { a: 1, u: null }; o.message = 'from the file'; },
  weirdTypes: (o) => {
    o.paramValues = 'ab';
    o.mountedVariants = '31';
    o.diagnostics = null;
    o.generationTimings = [1, 2];
    o.detectorWaivers = 5;
  },
  integerKeys: (o) => { o['10'] = 'ten'; o['2'] = 'two'; },
  dropKeys: (o) => { delete o.pageUrl; delete o.diagnostics; delete o.mountFailures; },
  journalBytesOff: (o) => { o.__journalBytes = Number(o.__journalBytes) + 1; },
  setField: (o, op) => { o[op.field] = op.value; },
  deleteField: (o, op) => { delete o[op.field]; },
  // A value nested deeper than V8's JSON.stringify can go (JSON.parse takes
  // any depth): written as text, see editSnapshotFile.
  setFieldDeep: (o, op) => { o[op.field] = DEEP_MARK; },
};

const DEEP_MARK = '\u0000deep\u0000';

function editSnapshotFile(file, edit, op) {
  if (!fs.existsSync(file)) return false;
  const text = fs.readFileSync(file, 'utf8');
  if (edit === 'garbage') fs.writeFileSync(file, '{"id": broken');
  else if (edit === 'empty') fs.writeFileSync(file, '');
  else if (edit === 'truncate') fs.writeFileSync(file, text.slice(0, Math.floor(text.length / 2)));
  else {
    let obj;
    try {
      obj = JSON.parse(text);
    } catch {
      return 'unparsable';
    }
    if (!obj || typeof obj !== 'object') return 'not-object';
    EDIT_FNS[edit](obj, op);
    let out = JSON.stringify(obj, null, 2) + '\n';
    if (edit === 'setFieldDeep') out = out.replace(JSON.stringify(DEEP_MARK), '['.repeat(op.depth) + ']'.repeat(op.depth));
    fs.writeFileSync(file, out);
  }
  return true;
}

function callMethod(store, name, args, detached) {
  if (detached) {
    const fn = store[name];
    return fn(...args);
  }
  return store[name](...args);
}

/**
 * runSequence(create, seqOrOps, workDir, options) -> transcript
 *
 * `create` is a createLiveSessionStore. `seqOrOps` is a generated sequence
 * (`{ layout, ops }`) or just its ops. options:
 *   factories: [createA, createB] — mixed run: the k-th main store instance is
 *     made by factories[k % 2], the secondary ("other process") store by
 *     factories[1]
 *   keep: true — keep the project directory (returned as transcript.project)
 *   onOp(index, op) — called before each op
 *   identity: true — a returned object that is one the caller passed in (its
 *     own event's member, kept by reference) is recorded as a reference to
 *     where it was passed, so a copy in its place is a difference. Off by
 *     default: identity of the caller's objects is not part of the contract,
 *     their class and content are.
 */
export function runSequence(create, seqOrOps, workDir, options = {}) {
  const seq = Array.isArray(seqOrOps) ? { layout: 'plain', ops: seqOrOps } : seqOrOps;
  const project = makeProject(workDir, seq.layout || 'plain');
  const fix = placeholder(project);
  const factories = options.factories || [create, create];
  const entries = [];
  let store = null;
  let storeCount = 0;
  let other = null;
  let lastSeen = new Map();
  const passed = options.identity ? new WeakMap() : null;
  // What a re-entrant getter appends to (see encode.mjs): the main store,
  // each call logged in its op's entry. Under `options.serialize`, for ops a
  // store of `serialize.factory` runs, a getter call whose event landed before
  // the op's own line in the candidate's run appends nothing: the harness
  // appended those events before the op (see reentryPlan).
  let inner = null;
  let early = null;
  let storeFactory = null;
  const serializedOp = (op, index) => options.serialize?.plan.has(index) &&
    (op.op === 'otherAppend' ? factories[1] : storeFactory) === options.serialize.factory;
  const reentry = {
    appendEvent(event) {
      const call = inner.push(encodeValue(event)) - 1;
      if (!early?.has(call)) return store.appendEvent(event);
      // Appended before the op: its call fails as that append did.
      if (early.get(call)) throw early.get(call);
    },
  };
  const ctx = { store: () => store && reentry };
  // Where getters may append, each op notes the journals' sizes to read the lines it added.
  const watchJournals = hasReentrantGetter(seq);
  const args = (op, index) => op.args.map((a, i) => {
    const value = decodeValue(a, ctx);
    if (passed) notePassed(value, `op${index}.args[${i}]`, passed);
    return value;
  });
  const encodeResult = (v) => encodeValue(v, { refs: passed, recipes: !!passed, digestDeep: true });

  const identOf = (value) => {
    if (!value || typeof value !== 'object') return undefined;
    const key = typeof value.id === 'string' ? value.id : '\u0000noid';
    const same = lastSeen.get(key) === value;
    lastSeen.set(key, value);
    return same ? 'same' : 'new';
  };

  const clock = installClock(CLOCK_START);
  let completed = false;
  try {
    seq.ops.forEach((op, index) => {
      clock.now = CLOCK_START + index * CLOCK_STEP;
      options.onOp?.(index, op);
      const entry = { op: op.op };
      inner = [];
      const planned = serializedOp(op, index) ? options.serialize.plan.get(index) : null;
      early = planned ? appendEarly(store, planned) : null;
      const journals = watchJournals ? journalSizes(project) : null;
      try {
        const r = applyOp(op, index);
        if (r !== NO_RESULT) {
          entry.result = encodeResult(r.value);
          if (r.ident !== undefined) entry.ident = r.ident;
        }
      } catch (err) {
        Object.assign(entry, encodeThrown(err, fix));
      }
      if (inner.length) entry.inner = inner;
      if (inner.length && journals) entry.landed = landedLines(journals);
      entry.files = listProjectFiles(project.dir);
      entries.push(entry);
    });
    completed = true;
  } finally {
    clock.restore();
    if (!completed) removeProject(project);
  }

  function applyOp(op, index) {
    switch (op.op) {
      case 'create':
      case 'restart': {
        const factory = factories[storeCount % 2];
        storeCount++;
        store = null;
        lastSeen = new Map();
        const opts = { cwd: project.cwd, ...decodeValue(op.options || {}) };
        store = factory(opts);
        storeFactory = factory;
        return {
          value: {
            rootDir: fix(store.rootDir),
            legacyRootDir: fix(store.legacyRootDir),
            methods: ['appendEvent', 'has', 'getSnapshot', 'flush', 'listActiveSessions'].map((m) => typeof store[m]),
          },
        };
      }
      case 'append': {
        const v = callMethod(store, 'appendEvent', args(op, index), op.detached);
        return { value: v, ident: identOf(v) };
      }
      case 'otherAppend': {
        if (!other) other = factories[1]({ cwd: project.cwd });
        const v = other.appendEvent(...args(op, index));
        return { value: v };
      }
      case 'getSnapshot':
      case 'flush': {
        const v = callMethod(store, op.op, args(op, index), op.detached);
        return { value: v, ident: identOf(v) };
      }
      case 'has':
        return { value: callMethod(store, 'has', args(op, index), op.detached) };
      case 'list': {
        const v = store.listActiveSessions();
        const ident = Array.isArray(v) ? v.map(identOf) : undefined;
        return { value: v, ident };
      }
      case 'deleteSnapshot': {
        const file = path.join(project.sessionsDir, op.id + '.snapshot.json');
        const existed = fs.existsSync(file);
        if (existed) fs.unlinkSync(file);
        return { value: existed };
      }
      case 'editSnapshot':
        return { value: editSnapshotFile(path.join(project.sessionsDir, op.id + '.snapshot.json'), op.edit, op) };
      case 'writeJournal': {
        const dir = op.dir === 'legacy' ? project.legacyDir : project.sessionsDir;
        fs.mkdirSync(dir, { recursive: true });
        fs.appendFileSync(path.join(dir, op.id + '.jsonl'), decodeBytes(op.bytes));
        return NO_RESULT;
      }
      case 'writeFile': {
        const file = path.join(project.root, op.path);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, decodeBytes(op.bytes));
        return NO_RESULT;
      }
      default:
        throw new Error(`unknown op ${op.op}`);
    }
  }

  const transcript = { entries };
  if (options.keep) transcript.project = project;
  else removeProject(project);
  return transcript;
}

const NO_RESULT = Symbol('no result');

/**
 * The serialized run's stand-in for the getter calls whose events landed
 * before the op's own line: each appended as a plain call. Returns the calls
 * by index, each with what its append threw (undefined: nothing).
 */
function appendEarly(store, { calls, early }) {
  const outcome = new Map();
  for (const call of early) {
    try {
      store.appendEvent(decodeValue(calls[call]));
      outcome.set(call, undefined);
    } catch (err) {
      outcome.set(call, err);
    }
  }
  return outcome;
}

/** Size of every journal in the project's sessions directories, by path. */
function journalSizes(project) {
  const sizes = new Map();
  for (const dir of [project.sessionsDir, project.legacyDir]) {
    let names = [];
    try {
      names = fs.readdirSync(dir);
    } catch { /* none yet */ }
    for (const name of names) {
      if (name.endsWith('.jsonl')) sizes.set(path.join(dir, name), fs.statSync(path.join(dir, name)).size);
    }
  }
  return { project, sizes };
}

/**
 * Lines appended to the primary journals since `journalSizes`: `{ file, at,
 * event }`, event as JSON text, in file order. A journal a first append
 * copied from the legacy directory starts after the copied bytes.
 */
function landedLines({ project, sizes }) {
  const out = [];
  for (const [file, size] of journalSizes(project).sizes) {
    if (path.dirname(file) !== project.sessionsDir) continue;
    const from = sizes.get(file) ?? sizes.get(path.join(project.legacyDir, path.basename(file))) ?? 0;
    if (size <= from) continue;
    const fd = fs.openSync(file, 'r');
    const tail = Buffer.alloc(size - from);
    try {
      fs.readSync(fd, tail, 0, tail.length, from);
    } finally {
      fs.closeSync(fd);
    }
    tail.toString('utf8').split('\n').forEach((text, at) => {
      if (!text) return;
      let event;
      try {
        event = JSON.stringify(JSON.parse(text).event);
      } catch { /* not a line of ours */ }
      out.push({ file: path.basename(file), at, event });
    });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Re-entrant appends: a getter of an event that appends to the store while
// the store handles that event. The old module has read the session's state
// before it renders the entry and runs its reducer, so an append made there
// takes the same seq as the getter's and returns a snapshot without the
// getter's event. The package serializes appends: such an event lands first,
// and the append applies on top of it. The comparison for such a sequence is
// with the old module run as if it did the same: the events whose lines
// landed before the op's own line in the candidate's run are appended by the
// harness before the op, and those getter calls append nothing. Later calls
// (while the snapshot file is written) append as they do in both modules.
// That the getters are called as often, in the same order, with the same
// events, in both runs is checked separately (`reentryMismatch`).
// ---------------------------------------------------------------------------

/** Whether a sequence holds a getter that appends (encode.mjs's `getter` recipe with `append`). */
export function hasReentrantGetter(seq) {
  let found = false;
  JSON.stringify(seq.ops, (key, v) => {
    if (v && typeof v === 'object' && v.$ === 'getter' && v.append !== undefined) found = true;
    return found ? undefined : v;
  });
  return found;
}

/** The first op whose getters appended different events, or a different number, in the two transcripts. */
export function reentryMismatch(expected, actual) {
  const e = entriesOf(expected);
  const a = entriesOf(actual);
  for (let i = 0; i < Math.max(e.length, a.length); i++) {
    const x = JSON.stringify(e[i]?.inner ?? []);
    const y = JSON.stringify(a[i]?.inner ?? []);
    if (x !== y) return { index: i, op: (e[i] || a[i]).op, field: 'inner', detail: `getters appended ${x} in the old module, ${y} in the candidate` };
  }
  return null;
}

/**
 * Per op whose getters appended, `{ calls, early }`: the events appended, in
 * call order, and the set of calls whose journal lines the candidate wrote
 * before the op's own line (`entry.landed`, recorded by runSequence).
 */
export function reentryPlan(transcript) {
  const plan = new Map();
  entriesOf(transcript).forEach((entry, i) => {
    if (!entry.inner) return;
    const landed = entry.landed ?? [];
    const taken = new Set();
    const where = entry.inner.map((e) => {
      const text = JSON.stringify(decodeValue(e));
      const line = landed.find((l) => !taken.has(l) && l.event === text);
      if (line) taken.add(line);
      return line;
    });
    const own = landed.find((l) => !taken.has(l));
    const early = new Set();
    where.forEach((line, call) => {
      if (line && !(own && line.file === own.file && line.at > own.at)) early.add(call);
    });
    plan.set(i, { calls: entry.inner, early });
  });
  return plan;
}

// ---------------------------------------------------------------------------
// Cross-reading: one implementation writes, the other reads.
// ---------------------------------------------------------------------------

/** Every session id worth reading back in a project, sorted. */
function idsToRead(project, seq) {
  const ids = new Set();
  for (const dir of [project.sessionsDir, project.legacyDir]) {
    if (!fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir)) {
      if (name.endsWith('.jsonl')) {
        const id = name.slice(0, -'.jsonl'.length);
        if (/^[A-Za-z0-9_-]{1,128}$/.test(id)) ids.add(id);
      }
    }
  }
  for (const op of seq.ops) if (typeof op.id === 'string' && /^[A-Za-z0-9_-]{1,128}$/.test(op.id)) ids.add(op.id);
  return [...ids].sort();
}

/** Read everything a fresh store can tell about a project, as a transcript. */
export function readBack(create, project, ids, clockStart) {
  const fix = placeholder(project);
  const out = [];
  const record = (label, fn) => {
    const entry = { op: label };
    try {
      entry.result = encodeValue(fn(), { digestDeep: true });
    } catch (err) {
      Object.assign(entry, encodeThrown(err, fix));
    }
    out.push(entry);
  };
  withClock(clockStart, () => {
    let store;
    record('create', () => {
      store = create({ cwd: project.cwd });
      return { rootDir: fix(store.rootDir), legacyRootDir: fix(store.legacyRootDir) };
    });
    if (!store) return;
    for (const id of ids) {
      record(`has(${id})`, () => store.has(id));
      record(`getSnapshot(${id},{includeCompleted:true})`, () => store.getSnapshot(id, { includeCompleted: true }));
      record(`getSnapshot(${id})`, () => store.getSnapshot(id));
    }
    record('listActiveSessions()', () => store.listActiveSessions());
    out.push({ op: 'files after reads', files: listProjectFiles(project.dir) });
    for (const id of ids) record(`flush(${id})`, () => store.flush(id));
    out.push({ op: 'files after flush', files: listProjectFiles(project.dir) });
    // Cold replay: no snapshot file, a fresh store, every journal replayed.
    for (const dir of [project.sessionsDir, project.legacyDir]) {
      if (!fs.existsSync(dir)) continue;
      for (const name of fs.readdirSync(dir)) if (name.endsWith('.snapshot.json')) fs.rmSync(path.join(dir, name));
    }
    let cold;
    record('create (cold)', () => {
      cold = create({ cwd: project.cwd });
      return { rootDir: fix(cold.rootDir) };
    });
    if (!cold) return;
    for (const id of ids) record(`cold getSnapshot(${id})`, () => cold.getSnapshot(id, { includeCompleted: true }));
    out.push({ op: 'files after cold replay', files: listProjectFiles(project.dir) });
  });
  return out;
}

/**
 * crossRead(createA, createB, seqOrOps, workDir) -> { writer, readA, readB, mismatch }
 *
 * Runs the ops with A, then opens the same project with a fresh B store and a
 * fresh A store and compares what they read (B first, so a write by B during
 * reads would show in A's view as well as in the file listing).
 */
export function crossRead(createA, createB, seqOrOps, workDir) {
  const seq = Array.isArray(seqOrOps) ? { layout: 'plain', ops: seqOrOps } : seqOrOps;
  const writer = runSequence(createA, seq, workDir, { keep: true });
  const project = writer.project;
  try {
    const ids = idsToRead(project, seq);
    const clockStart = CLOCK_START + seq.ops.length * CLOCK_STEP;
    // Each reader gets its own copy: reads flush and replay cold.
    const readOnCopy = (create) => {
      const copy = { ...project, dir: fs.mkdtempSync(project.dir + '-read-') };
      fs.cpSync(project.dir, copy.dir, { recursive: true });
      for (const key of ['cwd', 'root', 'sessionsDir', 'legacyDir']) copy[key] = copy.dir + project[key].slice(project.dir.length);
      try {
        return readBack(create, copy, ids, clockStart);
      } finally {
        removeProject(copy);
      }
    };
    const readB = readOnCopy(createB);
    const readA = readOnCopy(createA);
    const mismatch = compareTranscripts(readA, readB);
    return { writer, readA, readB, mismatch };
  } finally {
    removeProject(project);
    delete writer.project;
  }
}

// ---------------------------------------------------------------------------
// Comparison and readable diffs
// ---------------------------------------------------------------------------

function entriesOf(t) {
  return Array.isArray(t) ? t : t.entries;
}

/**
 * First difference between two transcripts, or null.
 * Returns { index, op, field, expected, actual, detail }.
 */
export function compareTranscripts(expected, actual) {
  const e = entriesOf(expected);
  const a = entriesOf(actual);
  const n = Math.max(e.length, a.length);
  for (let i = 0; i < n; i++) {
    const x = e[i];
    const y = a[i];
    if (!x || !y) return { index: i, op: (x || y).op, field: 'length', detail: `transcript lengths differ: expected ${e.length}, actual ${a.length}` };
    for (const field of ['op', 'threw', 'message', 'code', 'value', 'result', 'ident']) {
      const xs = JSON.stringify(x[field]);
      const ys = JSON.stringify(y[field]);
      if (xs !== ys) {
        return { index: i, op: x.op, field, detail: describeValueDiff(x[field], y[field], field) };
      }
    }
    const fd = diffFiles(x.files, y.files);
    if (fd) return { index: i, op: x.op, field: 'files', detail: fd };
  }
  return null;
}

/** All per-op differences (for reports): up to `limit`. */
export function allDifferences(expected, actual, limit = 20) {
  const out = [];
  const e = entriesOf(expected);
  const a = entriesOf(actual);
  let prevFiles = null;
  for (let i = 0; i < Math.max(e.length, a.length) && out.length < limit; i++) {
    const d = compareTranscripts([e[i] || { op: 'missing' }], [a[i] || { op: 'missing' }]);
    if (d) {
      d.index = i;
      // Report a file difference only when it is new at this op.
      if (d.field === 'files' && prevFiles === d.detail) continue;
      prevFiles = d.field === 'files' ? d.detail : prevFiles;
      out.push(d);
    }
  }
  return out;
}

function isTag(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, '$');
}

/** JavaScript-ish text for an encoded value (tags shown as what they stand for). */
export function showEncoded(v) {
  if (v === undefined) return '<absent>';
  if (isTag(v)) {
    switch (v.$) {
      case 'u': return 'undefined';
      case 'NaN': return 'NaN';
      case '-0': return '-0';
      case 'Inf': return 'Infinity';
      case '-Inf': return '-Infinity';
      case 'big': return `${v.v}n`;
      case 'sym': return `Symbol(${v.d ?? ''})`;
      case 'fn': return `[Function ${v.name || '(anonymous)'}]`;
      case 'cyc': return `[Circular ${v.up} up]`;
      case 'hole': return '<hole>';
      case 'nullproto': return `[Object: null prototype] ${showEncoded(v.v)}`;
      case 'proto': return `${showEncoded(v.v)} with prototype ${showEncoded(v.of)}`;
      case 'arr': return `${showEncoded(v.items)} with props ${showEncoded(v.props || {})}`;
      case 'inst': return `${v.cls}${'state' in v ? `(${showEncoded(v.state)})` : ''} ${showEncoded(v.v)}`;
      case 'accessor': return '[Getter]';
      case 'symkeys': return `${showEncoded(v.of)} with ${v.syms.map(([d, x]) => `[Symbol(${d ?? ''})]: ${showEncoded(x)}`).join(', ')}`;
      case 'ref': return `<the caller's ${v.to}>`;
      case 'error': return `${v.cls}: ${v.message}`;
      // A value built from a recipe (encode.mjs): the caller's own object.
      default: return `<the caller's ${v.$} ${JSON.stringify(v).slice(0, 120)}>`;
    }
  }
  if (Array.isArray(v)) return `[${v.map(showEncoded).join(', ')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).map((k) => `${JSON.stringify(k.startsWith('$') ? k.slice(1) : k)}: ${showEncoded(v[k])}`).join(', ')}}`;
  }
  return JSON.stringify(v);
}

function short(v, max = 300) {
  let s = showEncoded(v);
  if (s.length > max) s = s.slice(0, max) + `… (${s.length} chars)`;
  return s;
}

function unescapeKey(k) {
  return k.startsWith('$') ? k.slice(1) : k;
}

function keyLabel(k) {
  const key = k.startsWith('$') ? k.slice(1) : k;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** Path to the first difference inside two encoded trees. */
export function firstPathDiff(x, y, p = '') {
  if (JSON.stringify(x) === JSON.stringify(y)) return null;
  if (isTag(x) || isTag(y)) {
    if (isTag(x) && isTag(y) && x.$ === y.$ && ['proto', 'nullproto', 'arr'].includes(x.$)) {
      for (const k of ['v', 'items', 'props', 'of']) {
        const d = firstPathDiff(x[k], y[k], k === 'of' ? `${p}.[[Prototype]]` : k === 'props' ? `${p}<props>` : p);
        if (d) return d;
      }
    }
    const note = isTag(x) && isTag(y) ? undefined
      : isTag(x) && x.$ === 'proto' ? 'prototype differs' : isTag(y) && y.$ === 'proto' ? 'prototype differs' : undefined;
    return { path: p || '.', expected: x, actual: y, note };
  }
  if (x && y && typeof x === 'object' && typeof y === 'object' && Array.isArray(x) === Array.isArray(y)) {
    if (Array.isArray(x)) {
      for (let i = 0; i < Math.max(x.length, y.length); i++) {
        if (i >= x.length || i >= y.length) return { path: `${p}[${i}]`, expected: x[i], actual: y[i], note: `array length ${x.length} vs ${y.length}` };
        const d = firstPathDiff(x[i], y[i], `${p}[${i}]`);
        if (d) return d;
      }
      return null;
    }
    const kx = Object.keys(x);
    const ky = Object.keys(y);
    if (kx.join('\u0000') !== ky.join('\u0000')) {
      const missing = kx.filter((k) => !ky.includes(k));
      const extra = ky.filter((k) => !kx.includes(k));
      if (missing.length || extra.length) {
        const k = missing[0] ?? extra[0];
        return {
          path: `${p}${keyLabel(k)}`,
          expected: x[k],
          actual: y[k],
          note: `keys missing in actual: ${JSON.stringify(missing.map(unescapeKey))}, `
            + `extra in actual: ${JSON.stringify(extra.map(unescapeKey))}`,
        };
      }
      return { path: p || '.', expected: kx.map((k) => (k.startsWith('$') ? k.slice(1) : k)), actual: ky.map((k) => (k.startsWith('$') ? k.slice(1) : k)), note: 'same keys, different order' };
    }
    for (const k of kx) {
      const d = firstPathDiff(x[k], y[k], `${p}${keyLabel(k)}`);
      if (d) return d;
    }
    return null;
  }
  return { path: p || '.', expected: x, actual: y };
}

function describeValueDiff(x, y, field) {
  const d = firstPathDiff(x, y);
  if (!d) return `${field} differs`;
  let s = `${field}${d.path === '.' ? '' : d.path}: expected ${short(d.expected)}, actual ${short(d.actual)}`;
  if (d.note) s += ` (${d.note})`;
  return s;
}

export function diffFiles(fx = {}, fy = {}) {
  const names = [...new Set([...Object.keys(fx), ...Object.keys(fy)])].sort();
  for (const name of names) {
    const x = fx[name];
    const y = fy[name];
    if (x === undefined) return `file ${name}: only in actual: ${short(y, 200)}`;
    if (y === undefined) return `file ${name}: missing in actual (expected ${short(x, 200)})`;
    if (x === y) continue;
    if (typeof x === 'object' && typeof y === 'object' && JSON.stringify(x) === JSON.stringify(y)) continue;
    if (typeof x === 'string' && typeof y === 'string') {
      const lx = x.split('\n');
      const ly = y.split('\n');
      let i = 0;
      while (i < lx.length && i < ly.length && lx[i] === ly[i]) i++;
      return `file ${name} line ${i + 1}: expected ${short(lx[i] ?? '<end of file>', 400)}, actual ${short(ly[i] ?? '<end of file>', 400)}`
        + (x.length !== y.length ? ` (sizes ${Buffer.byteLength(x)} vs ${Buffer.byteLength(y)} bytes)` : '');
    }
    return `file ${name}: contents differ: expected ${short(x, 200)}, actual ${short(y, 200)}`;
  }
  return null;
}

/** A multi-line, human-readable report of a mismatch. */
export function formatMismatch({ label, seed, tier, mismatch, ops }) {
  const lines = [];
  lines.push(`${label}: MISMATCH tier=${tier} seed=${seed} at op #${mismatch.index} (${mismatch.op}), field ${mismatch.field}`);
  if (ops && ops[mismatch.index]) lines.push(`  op: ${short(ops[mismatch.index], 600)}`);
  lines.push(`  ${mismatch.detail}`);
  return lines.join('\n');
}
