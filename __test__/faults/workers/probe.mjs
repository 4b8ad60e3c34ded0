// Fault-suite child: runs one scenario against one implementation, in this
// process's main thread or in a worker thread, and prints what happened as
// {"result": ...}. Scenarios that can take the process down run here, so the
// parent asserts on the exit code and the output.
//
//   node probe.mjs '<json config>'
//
// config: { scenario, impl: 'native' | 'ref', refPath, cwd, thread: 'main' |
//           'worker', stackSizeMb, nearStackLimit, ...scenario options }
//   nearStackLimit: the scenario runs with the JavaScript stack all but
//   exhausted (from the catch of a RangeError at the deepest recursion that
//   still leaves room for the call), as in a deeply recursive caller.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, isMainThread, workerData, parentPort } from 'node:worker_threads';

const here = path.dirname(fileURLToPath(import.meta.url));
const config = isMainThread ? JSON.parse(process.argv[2]) : workerData;

async function load() {
  if (config.impl === 'ref') return import(pathToFileURL(config.refPath).href);
  return createRequire(import.meta.url)(path.resolve(here, '..', '..', '..', 'index.js'));
}

function outcome(fn) {
  try {
    const value = fn();
    return { ok: true, value };
  } catch (err) {
    return { ok: false, name: err?.name, message: String(err?.message).slice(0, 200) };
  }
}

function nestedObject(depth) {
  let v = {};
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

function nestedText(depth, inner = '{}') {
  return '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
}

const sessions = (cwd) => path.join(cwd, '.impeccable', 'live', 'sessions');

function writeJournal(cwd, id, lines) {
  fs.mkdirSync(sessions(cwd), { recursive: true });
  fs.writeFileSync(path.join(sessions(cwd), `${id}.jsonl`), lines.map((l) => `${l}\n`).join(''));
}

function snapshotFile(cwd, id) {
  try {
    return fs.readFileSync(path.join(sessions(cwd), `${id}.snapshot.json`), 'utf8');
  } catch {
    return null;
  }
}

/** Runs `fn` with the JavaScript stack nearly used up. */
function nearStackLimit(fn) {
  let result;
  let depth = 0;
  const recurse = () => {
    depth++;
    try {
      recurse();
    } catch {
      // Only the deepest frame runs fn: every frame above it returns.
      if (result === undefined) result = outcome(fn);
    }
  };
  recurse();
  return { ...result, stackFrames: depth };
}

const SCENARIOS = {
  /** appendEvent of an event nesting `depth` objects (`exotic` adds an undefined member). */
  appendDeep({ createLiveSessionStore }, { cwd, depth, exotic }) {
    const store = createLiveSessionStore({ cwd, sessionId: 'deep' });
    const event = { type: 'generate', x: nestedObject(depth) };
    if (exotic) event.u = undefined;
    const run = () => outcome(() => store.appendEvent(event).phase);
    const append = config.nearStackLimit ? nearStackLimit(() => store.appendEvent(event).phase) : run();
    const journal = fs.existsSync(path.join(sessions(cwd), 'deep.jsonl')) ? fs.readFileSync(path.join(sessions(cwd), 'deep.jsonl'), 'utf8') : '';
    const file = snapshotFile(cwd, 'deep');
    return { append, lines: journal.split('\n').filter(Boolean).length, snapshotFileHasEvent: !!file && file.includes('"x"') };
  },

  /** A journal line whose event nests `depth` objects: read it, then flush. */
  lineDeep({ createLiveSessionStore }, { cwd, depth }) {
    writeJournal(cwd, 'deep', [
      `{"seq":1,"id":"deep","type":"generate","ts":"2030-01-01T00:00:00.000Z","event":{"id":"deep","type":"generate","x":${nestedText(depth)}}}`,
    ]);
    const store = createLiveSessionStore({ cwd, sessionId: 'deep' });
    const op = () => {
      const snap = store.getSnapshot();
      return { phase: snap.phase, diagnostics: snap.diagnostics, x: typeof snap.pendingEvent?.x };
    };
    const read = config.nearStackLimit ? nearStackLimit(op) : outcome(op);
    const flush = outcome(() => store.flush().phase);
    return { read, flush, snapshotFileWritten: snapshotFile(cwd, 'deep') !== null };
  },

  /** A journal line whose mount ack's `variant` is an array nesting `depth` arrays. */
  variantDeep({ createLiveSessionStore }, { cwd, depth }) {
    writeJournal(cwd, 'deep', [
      `{"seq":1,"id":"deep","type":"variant_mounted","ts":"2030-01-01T00:00:00.000Z","event":{"id":"deep","type":"variant_mounted","variant":${'['.repeat(depth)}1${']'.repeat(depth)}}}`,
    ]);
    const store = createLiveSessionStore({ cwd, sessionId: 'deep' });
    return { read: outcome(() => store.getSnapshot().mountedVariants.length) };
  },

  /**
   * Arrays nested `depth` deep where the reducer converts them: a trusted
   * snapshot file whose `browserCheckpointRevision` is one, then a
   * checkpoint (`>=`); and a journal line whose mount ack's `variant` is one
   * (`Number()`), read by a fresh store.
   */
  convertDeep({ createLiveSessionStore }, { cwd, depth }) {
    const store = createLiveSessionStore({ cwd, sessionId: 'deep' });
    store.appendEvent({ type: 'generate' });
    const file = path.join(sessions(cwd), 'deep.snapshot.json');
    const mark = '"\\u0000deep"';
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    saved.browserCheckpointRevision = '\u0000deep';
    fs.writeFileSync(file, JSON.stringify(saved, null, 2).replace(mark, '['.repeat(depth) + ']'.repeat(depth)));
    const checkpoint = outcome(() => createLiveSessionStore({ cwd, sessionId: 'deep' }).appendEvent({ type: 'checkpoint', revision: 3, phase: 'idle' }).phase);
    writeJournal(cwd, 'ack', [
      `{"seq":1,"id":"ack","type":"variant_mounted","ts":"2030-01-01T00:00:00.000Z","event":{"id":"ack","type":"variant_mounted","variant":${'['.repeat(depth)}1${']'.repeat(depth)}}}`,
    ]);
    const ack = outcome(() => {
      const snap = createLiveSessionStore({ cwd, sessionId: 'ack' }).getSnapshot();
      return { mounted: snap.mountedVariants, diagnostics: snap.diagnostics };
    });
    return { checkpoint, after: store.getSnapshot().phase, ack };
  },

  /**
   * A journal whose lines have no `ts` (so replaying it asks `Date.now()`)
   * read while `Date.now` appends to the same session through a second
   * store: JavaScript that takes the journal's lock while the read runs.
   */
  fakeDateAppends({ createLiveSessionStore }, { cwd }) {
    writeJournal(cwd, 's', [1, 2, 3].map((seq) => `{"seq":${seq},"id":"s","type":"agent_phase","event":{"id":"s","type":"agent_phase","phase":"p${seq}"}}`));
    const reader = createLiveSessionStore({ cwd, sessionId: 's' });
    const writer = createLiveSessionStore({ cwd, sessionId: 's' });
    const RealDate = Date;
    let inner = null;
    // The first look at the clock (`new Date()` in the old module,
    // `Date.now()` here) appends; the append's own `new Date()` must not.
    const tick = () => {
      if (inner) return;
      inner = 'pending';
      inner = outcome(() => writer.appendEvent({ type: 'agent_phase', phase: 'from_the_clock' }).generationPhase);
    };
    globalThis.Date = class FakeDate extends RealDate {
      constructor(...args) {
        if (args.length === 0) tick();
        super(...args);
      }
      static now() {
        tick();
        return RealDate.now();
      }
    };
    const started = RealDate.now();
    const read = outcome(() => reader.getSnapshot().generationPhase);
    const ms = RealDate.now() - started;
    globalThis.Date = RealDate;
    const after = reader.getSnapshot().generationPhase;
    return { read, inner, after, ms };
  },

  /** Getters and toJSON in an event that call the very store appending it. */
  reentrantCallbacks({ createLiveSessionStore }, { cwd }) {
    const store = createLiveSessionStore({ cwd, sessionId: 's' });
    store.appendEvent({ type: 'generate', count: 2 });
    const calls = [];
    const results = [];
    results.push(outcome(() => store.appendEvent({
      type: 'agent_phase',
      get phase() { calls.push(store.getSnapshot().phase); return 'from_a_getter'; },
    }).generationPhase));
    results.push(outcome(() => store.appendEvent({
      type: 'checkpoint', revision: 1, phase: 'generating',
      nested: { toJSON() { calls.push(store.appendEvent({ type: 'agent_phase', phase: 'from_toJSON' }).generationPhase); return 1; } },
    }).phase));
    results.push(outcome(() => store.appendEvent({
      type: 'variant_mounted', variant: 1, missing: undefined,
      nested: { get deep() { calls.push(store.listActiveSessions().length); return 2; } },
    }).mountedVariants));
    const lines = fs.readFileSync(path.join(sessions(cwd), 's.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).event);
    return { results, calls, events: lines, final: store.getSnapshot() };
  },

  /** getSnapshot of a journal of `lines` distinct unparsable lines; peak memory. */
  badLineStorm({ createLiveSessionStore }, { cwd, lines }) {
    const bad = [];
    for (let i = 0; i < lines; i++) bad.push(`{"seq":${i + 1},"id":"s","oops ${i}`);
    writeJournal(cwd, 's', bad);
    bad.length = 0;
    const store = createLiveSessionStore({ cwd, sessionId: 's' });
    const diagnostics = store.getSnapshot().diagnostics;
    return { diagnostics: diagnostics.length, last: diagnostics[diagnostics.length - 1], maxRssKb: process.resourceUsage().maxRSS };
  },

  /**
   * A worker terminated at a random moment of `flush()` on a journal whose
   * replay needs V8 for every line (`ts` not in canonical form, unparsable
   * lines), `rounds` times. Reports how the snapshot file ended: absent or
   * exactly the file a complete flush writes.
   */
  async terminatedFlush({ createLiveSessionStore }, { cwd, rounds, lines }) {
    const journal = [];
    for (let i = 0; i < lines; i++) {
      const ts = `2030-01-01T${String(Math.floor(i / 3600) % 24).padStart(2, '0')}:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`;
      journal.push(i % 10 === 9 ? `{"seq":${i + 1},"oops":${i}` : `{"seq":${i + 1},"id":"s","type":"agent_phase","ts":"${ts}","event":{"id":"s","type":"agent_phase","phase":"p${i}"}}`);
    }
    writeJournal(cwd, 's', journal);
    const file = path.join(sessions(cwd), 's.snapshot.json');
    const started = Date.now();
    createLiveSessionStore({ cwd, sessionId: 's' }).flush();
    const flushMs = Date.now() - started;
    const expected = fs.readFileSync(file, 'utf8');
    const ended = { absent: 0, complete: 0, wrong: 0 };
    for (let r = 0; r < rounds; r++) {
      fs.rmSync(file, { force: true });
      const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { ...config, scenario: 'flushOnce', thread: 'worker' } });
      // Spread over the flush and a little past it (a worker starts slower
      // than a flush in a warm thread), so some rounds complete.
      const delayMs = Math.round((r / rounds) * 2 * flushMs);
      await new Promise((resolve) => {
        worker.once('message', () => setTimeout(() => worker.terminate(), delayMs));
        worker.once('exit', resolve);
      });
      const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
      if (text === null) ended.absent++;
      else if (text === expected) ended.complete++;
      else ended.wrong++;
    }
    return { ...ended, flushMs };
  },

  /** In a worker: says it is starting, then flushes. */
  flushOnce({ createLiveSessionStore }, { cwd }) {
    const store = createLiveSessionStore({ cwd, sessionId: 's' });
    parentPort.postMessage('go');
    store.flush();
    parentPort.postMessage('done');
    return null;
  },

  /**
   * `appends` appends of events carrying a fresh function (held by
   * reference while a snapshot shows it), the heap measured after a GC at
   * a tenth of them and at the end. Run with --expose-gc.
   */
  keptRelease({ createLiveSessionStore }, { cwd, appends }) {
    const store = createLiveSessionStore({ cwd, sessionId: 's' });
    const heap = () => {
      globalThis.gc();
      return process.memoryUsage().heapUsed;
    };
    let early = 0;
    for (let i = 0; i < appends; i++) {
      const payload = new Array(1_000).fill(i);
      const snap = store.appendEvent({ type: i % 2 ? 'generate' : 'agent_phase', phase: `p${i % 50}`, onDone: () => payload });
      if (i % 2 && snap.pendingEvent.onDone() !== payload) throw new Error(`append ${i}: the snapshot lost its function`);
      if (i === Math.floor(appends / 10)) early = heap();
    }
    const last = store.getSnapshot();
    return { growthMb: (heap() - early) / 2 ** 20, lastHasFunction: typeof last.pendingEvent.onDone === 'function' };
  },

  /**
   * `appends` appends and as many reads of a session whose journal lock a
   * stopped process holds; how long each took and what landed.
   */
  stuckLockHolder({ createLiveSessionStore }, { cwd, appends }) {
    const store = createLiveSessionStore({ cwd, sessionId: 's' });
    const timings = [];
    const outcomes = [];
    for (let i = 0; i < appends; i++) {
      let t = Date.now();
      outcomes.push(outcome(() => store.appendEvent({ type: 'variant_mounted', variant: i + 1 }).mountedVariants.length));
      const appendMs = Date.now() - t;
      t = Date.now();
      createLiveSessionStore({ cwd, sessionId: 's' }).getSnapshot();
      timings.push({ appendMs, freshReadMs: Date.now() - t });
    }
    const seqs = fs.readFileSync(path.join(sessions(cwd), 's.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).seq);
    return { outcomes, timings, seqs };
  },

  /** appendEvent of an event holding `new Array(2 ** 32 - 1)`. */
  hugeArray({ createLiveSessionStore }, { cwd }) {
    const store = createLiveSessionStore({ cwd, sessionId: 's' });
    store.appendEvent({ type: 'generate', count: 1 });
    const journal = path.join(sessions(cwd), 's.jsonl');
    const before = fs.readFileSync(journal, 'utf8');
    const append = outcome(() => store.appendEvent({ type: 'steer', big: new Array(2 ** 32 - 1) }).phase);
    return { append, journalUnchanged: fs.readFileSync(journal, 'utf8') === before, after: store.getSnapshot().phase };
  },

  /**
   * The package loaded twice in one thread (a require.cache reload, two
   * process.dlopen of the addon), both copies used side by side.
   */
  loadTwice(_mod, { cwd }) {
    const require = createRequire(import.meta.url);
    const entry = path.resolve(here, '..', '..', '..', 'index.js');
    const first = require(entry);
    for (const key of Object.keys(require.cache)) delete require.cache[key];
    const second = require(entry);
    // The binary binding.js loads: the one QUIVER_LIVE_NATIVE_BINARY names
    // (a cross build under emulation), else this platform's build.
    const { platformKey } = require(path.join(path.dirname(entry), 'platform.js'));
    const addon = process.env.QUIVER_LIVE_NATIVE_BINARY
      ? path.resolve(process.env.QUIVER_LIVE_NATIVE_BINARY)
      : path.join(path.dirname(entry), `quiver-live-native.${platformKey()}.node`);
    const raw = [1, 2].map(() => {
      const m = { exports: {} };
      process.dlopen(m, addon);
      return m.exports;
    });
    const phases = [];
    for (const mod of [first, second]) {
      const store = mod.createLiveSessionStore({ cwd, sessionId: 's' });
      phases.push(store.appendEvent({ type: 'generate', count: 1, f: () => 1 }).phase);
      phases.push(mod.withSourceLockSync('a.css', 'o', () => 'locked', { cwd }));
    }
    for (const exports of raw) phases.push(Object.keys(exports).length > 0);
    return { distinct: first !== second, phases, final: second.createLiveSessionStore({ cwd }).getSnapshot('s').phase };
  },

  /**
   * `stores` short-lived stores, each appending, reading, flushing and
   * listing; after each, the descriptors open on the project's files and the
   * process's count. The count is the least of three readings: another of
   * Node's threads may hold a file open for an instant (glibc reads
   * /proc/sys/vm/overcommit_memory once, from the first thread that returns
   * memory to the system), which is not a descriptor kept.
   */
  manyStores({ createLiveSessionStore }, { cwd, stores }) {
    const root = fs.realpathSync(cwd);
    const open = () => fs.readdirSync('/proc/self/fd');
    const count = () => Math.min(open().length, open().length, open().length);
    const onProject = () => open().filter((fd) => {
      try { return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(root); } catch { return false; }
    }).length;
    const baseline = count();
    let most = baseline;
    let held = 0;
    let failures = 0;
    let firstFailure = null;
    for (let i = 0; i < stores; i++) {
      try {
        const store = createLiveSessionStore({ cwd, sessionId: `s${i % 50}` });
        store.appendEvent({ type: 'variant_mounted', variant: i + 1 });
        store.getSnapshot();
        store.flush();
        store.listActiveSessions();
      } catch (err) {
        failures++;
        firstFailure ??= String(err?.message);
      }
      held = Math.max(held, onProject());
      most = Math.max(most, count());
    }
    return { stores, failures, firstFailure, baseline, most, held, end: count() };
  },

  /**
   * withSourceLockSync with odd `waitMs` and `retryMs` (BigInt, Symbol,
   * objects with valueOf, strings, NaN), on a free lock and on one this
   * process holds (so the wait runs out): the outcome and how often each
   * valueOf ran. `mod` is the old module's source-lock.mjs for 'ref'.
   */
  async lockCoercion(mod, { cwd, impl, refPath }) {
    const lock = impl === 'ref' ? await import(pathToFileURL(path.join(path.dirname(refPath), 'source-lock.mjs')).href) : mod;
    const counted = (value) => {
      const o = { calls: 0, valueOf() { o.calls++; return value; } };
      return o;
    };
    const kinds = {
      bigint: () => 3n,
      symbol: () => Symbol('ms'),
      valueOf: () => counted(15),
      valueOfThrows: () => ({ valueOf() { throw new Error('valueOf threw'); } }),
      numericString: () => '12',
      nan: () => NaN,
      negative: () => -40,
      nullish: () => null,
    };
    const rows = {};
    for (const [name, make] of Object.entries(kinds)) {
      for (const which of ['waitMs', 'retryMs']) {
        for (const busy of [false, true]) {
          const opt = make();
          const opts = { cwd, [which]: opt };
          if (which === 'retryMs') opts.waitMs = 20;
          const run = () => lock.withSourceLockSync('a.css', 'me', () => 'ran', opts);
          const result = outcome(() => (busy ? lock.withSourceLockSync('a.css', 'holder', run, { cwd }) : run()));
          // Busy, retryMs is coerced once per retry, and how many retries fit
          // in waitMs depends on the clock in both modules: compare whether
          // it was coerced, not how often.
          const calls = which === 'retryMs' && busy && opt?.calls !== undefined ? Math.min(opt.calls, 1) : opt?.calls;
          rows[`${name} ${which} ${busy ? 'busy' : 'free'}`] = { ...result, code: undefined, valueOfCalls: calls };
        }
      }
    }
    return rows;
  },
};

async function run() {
  const mod = await load();
  return SCENARIOS[config.scenario](mod, config);
}

if (isMainThread && config.thread === 'worker') {
  const resourceLimits = config.stackSizeMb ? { stackSizeMb: config.stackSizeMb } : undefined;
  const worker = new Worker(fileURLToPath(import.meta.url), { workerData: config, resourceLimits });
  worker.on('message', (result) => fs.writeSync(1, `${JSON.stringify({ result })}\n`));
  worker.on('error', (err) => {
    fs.writeSync(1, `${JSON.stringify({ workerError: String(err?.stack || err) })}\n`);
    process.exitCode = 3;
  });
} else if (isMainThread) {
  fs.writeSync(1, `${JSON.stringify({ result: await run() })}\n`);
} else {
  const result = await run();
  if (result !== null) parentPort.postMessage(result);
}
