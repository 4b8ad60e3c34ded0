// Fault-suite worker: appends events to one session from its own process.
//
//   node appender.mjs '<json config>'
//
// config: { impl: 'native' | 'ref', refPath, cwd, id, durable, mode, runAs, ... }
//   mode 'batch':   after `goFile` exists, appends `count` variant_mounted
//                   events tagged { w: writer, i }; every 10th is malformed
//                   (variant 0), each carrying `padBytes` of padding if set.
//                   Prints {"result": {...}} with its last snapshot.
//   mode 'forever': appends until killed; after each appendEvent returns it
//                   writes the event's marker to `ackFile` (the acknowledgement).
//   mode 'timed':   after `goFile` exists, appends checkpoint events with
//                   increasing revisions for `ms` milliseconds (at most
//                   `maxAppends` of them when set).
//   mode 'once':    appends each of `events`, recording each outcome (the
//                   error's message, code, errno, syscall, path), then getSnapshot.
//   mode 'flusher': after `goFile` exists, calls flush(id) until `stopFile` exists,
//                   counting results with a journal_parse_failed diagnostic.
//   mode 'reader':  after `goFile` exists, calls getSnapshot(id) until
//                   `stopFile` exists, counting journal_parse_failed diagnostics.
// Every line on stdout is written synchronously (fs.writeSync), so what the
// parent reads is exactly what happened before a kill.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const config = JSON.parse(process.argv[2]);

function say(line) {
  fs.writeSync(1, `${line}\n`);
}

function waitForFile(file) {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  while (!fs.existsSync(file)) Atomics.wait(cell, 0, 0, 1);
}

async function loadFactory() {
  if (config.impl === 'ref') {
    const mod = await import(pathToFileURL(config.refPath).href);
    return mod.createLiveSessionStore;
  }
  const require = createRequire(import.meta.url);
  return require(path.resolve(here, '..', '..', '..', 'index.js')).createLiveSessionStore;
}

const createLiveSessionStore = await loadFactory();
// Loaded first, then run as `config.runAs`: the checkout (and the Node
// binary) may sit in a directory that user cannot read.
if (config.runAs !== undefined) {
  process.setgid(config.runAs);
  process.setuid(config.runAs);
}
let store;
try {
  store = createLiveSessionStore({ cwd: config.cwd, durable: !!config.durable });
} catch (error) {
  say(JSON.stringify({ result: { createError: { message: error.message, code: error.code, path: error.path } } }));
  process.exit(0);
}
const id = config.id;

if (config.mode === 'batch') {
  say('ready');
  waitForFile(config.goFile);
  let last = null;
  let errors = 0;
  let firstError = null;
  const pad = config.padBytes ? 'b'.repeat(config.padBytes) : null;
  for (let i = 0; i < config.count; i++) {
    const malformed = i % 10 === 9;
    const event = {
      id,
      type: 'variant_mounted',
      variant: malformed ? 0 : 1000 * (config.writer + 1) + i + 1,
      w: config.writer,
      i,
    };
    if (pad) event.pad = pad;
    try {
      last = store.appendEvent(event);
    } catch (error) {
      errors++;
      firstError ??= String(error && error.stack || error);
    }
  }
  say(JSON.stringify({ result: { writer: config.writer, errors, firstError, last } }));
} else if (config.mode === 'forever') {
  const ack = fs.openSync(config.ackFile, 'a');
  const pad = 'x'.repeat(config.padBytes || 0);
  say('ready');
  for (let i = 0; ; i++) {
    const variant = config.startMarker + i;
    const event = { id, type: 'variant_mounted', variant, round: config.round };
    if (config.padEvery && i % config.padEvery === config.padEvery - 1) event.pad = pad;
    store.appendEvent(event);
    fs.writeSync(ack, `${variant}\n`);
  }
} else if (config.mode === 'timed') {
  const pad = 'p'.repeat(config.padBytes || 0);
  say('ready');
  waitForFile(config.goFile);
  const end = Date.now() + config.ms;
  // Bounded by count too: on a quiet machine a time-bound loop of large
  // lines would outgrow what the checker can read back into one string.
  const maxAppends = config.maxAppends ?? Infinity;
  let n = 0;
  while (Date.now() < end && n < maxAppends) {
    n++;
    const event = { id, type: 'checkpoint', revision: n, phase: 'variants_ready', owner: 'faults' };
    if (pad) event.pad = pad;
    store.appendEvent(event);
  }
  say(JSON.stringify({ result: { appends: n } }));
} else if (config.mode === 'once') {
  const outcomes = [];
  const describe = (error) => ({
    name: error && error.name, message: error && error.message, code: error && error.code,
    errno: error && error.errno, syscall: error && error.syscall, path: error && error.path,
  });
  for (const event of config.events) {
    try {
      store.appendEvent(event);
      outcomes.push({ ok: true });
    } catch (error) {
      outcomes.push({ ok: false, error: describe(error) });
    }
  }
  let snapshot = null;
  let readError = null;
  try { snapshot = store.getSnapshot(id, { includeCompleted: true }); } catch (error) { readError = describe(error); }
  say(JSON.stringify({ result: { outcomes, snapshot, readError } }));
} else if (config.mode === 'flusher') {
  say('ready');
  waitForFile(config.goFile);
  let n = 0;
  let spurious = 0;
  while (!fs.existsSync(config.stopFile)) {
    const snap = store.flush(id);
    if (snap.diagnostics.some((d) => d.error === 'journal_parse_failed')) spurious++;
    n++;
  }
  say(JSON.stringify({ result: { flushes: n, spurious } }));
} else if (config.mode === 'reader') {
  say('ready');
  waitForFile(config.goFile);
  let reads = 0;
  let spurious = 0;
  let example = null;
  while (!fs.existsSync(config.stopFile)) {
    const snap = store.getSnapshot(id, { includeCompleted: true });
    reads++;
    const bad = snap.diagnostics.filter((d) => d.error === 'journal_parse_failed');
    if (bad.length) {
      spurious++;
      example ??= bad;
    }
  }
  say(JSON.stringify({ result: { reads, spurious, example } }));
} else {
  throw new Error(`unknown mode ${config.mode}`);
}
