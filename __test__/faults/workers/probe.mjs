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
  parentPort.postMessage(await run());
}
