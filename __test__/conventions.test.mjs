// Calling conventions against the old module: misused arguments (null
// options, ids and events of every wrong type, lock arguments) must throw
// the same error, or return the same kind of value, as the old modules do.
// Needs QUIVER_REFERENCE_DIR; says so when skipped.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { loadPackage, referenceModulePath, PACKAGE_DIR } from './support/impls.mjs';
import { createRequire } from 'node:module';

const refStore = referenceModulePath();
const skip = refStore ? false : 'reference comparison skipped: QUIVER_REFERENCE_DIR not set';

/**
 * Runs `calls` for each implementation in the same fresh project (a
 * directory holding `.git`), emptied in between, as the working directory:
 * lock names hash the path.
 */
function inOneProject(t, impls, calls) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-conventions-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const cwd = process.cwd();
  return impls.map((impl) => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.join(dir, '.git'), { recursive: true });
    // Calls without a usable cwd option work in process.cwd(): the project too.
    process.chdir(dir);
    try {
      return calls(impl, dir);
    } finally {
      process.chdir(cwd);
    }
  });
}

/** What a call did, with the project's path made neutral. */
function outcome(dir, fn) {
  const neutral = (s) => String(s).split(fs.realpathSync(dir)).join('<ROOT>').split(dir).join('<ROOT>');
  try {
    const value = fn();
    if (value === null || typeof value !== 'object') return { returned: typeof value === 'string' ? neutral(value) : value };
    return { returned: Array.isArray(value) ? 'array' : 'object', keys: Object.keys(value).length };
  } catch (err) {
    return { threw: err?.constructor?.name, message: neutral(err?.message), code: err?.code };
  }
}

const STORE_OPTIONS = [undefined, null, {}, [], 'text', 5, true, { cwd: 5 }, { cwd: null }, { cwd: '' }, { sessionId: null }, { sessionId: 5 }, { sessionId: '' }];
const IDS = [undefined, null, '', 5, 0, {}, [], 'ok', '../x', 'a/b', 'x'.repeat(300), 'é', true, Symbol('s')];
const EVENTS = [undefined, null, 5, 'text', [], [1], { type: 5 }, { type: null }, {}, { type: 'generate', id: 5 }, { type: 'generate', id: '' }, { type: 'generate', id: '../up' }, Object.create(null)];

function storeCalls(create, dir) {
  const out = [];
  for (const options of STORE_OPTIONS) {
    const opts = options && typeof options === 'object' && !Array.isArray(options) && !('cwd' in options) ? { ...options, cwd: dir } : options;
    out.push(['createLiveSessionStore', options, outcome(dir, () => create(opts))]);
  }
  const store = create({ cwd: dir, sessionId: 'main' });
  store.appendEvent({ type: 'generate' });
  for (const id of IDS) {
    for (const method of ['getSnapshot', 'flush', 'has']) out.push([method, id, outcome(dir, () => store[method](id))]);
  }
  for (const event of EVENTS) out.push(['appendEvent', event, outcome(dir, () => store.appendEvent(event))]);
  out.push(['listActiveSessions', null, outcome(dir, () => store.listActiveSessions())]);
  return out;
}

function lockCalls(mod, dir) {
  const out = [];
  const files = [undefined, null, '', 5, {}, 'src/a.js', '/abs/b.js'];
  for (const file of files) {
    out.push(['sourceLockPath', file, outcome(dir, () => mod.sourceLockPath(file, dir))]);
    out.push(['withSourceLockSync', file, outcome(dir, () => mod.withSourceLockSync(file, 'owner', () => 'ran', { cwd: dir }))]);
  }
  for (const fn of [undefined, null, 5, 'text']) out.push(['withSourceLockSync fn', fn, outcome(dir, () => mod.withSourceLockSync('src/a.js', 'o', fn, { cwd: dir }))]);
  for (const options of [undefined, null, 5, { cwd: 5 }, { waitMs: -1, cwd: dir }, { waitMs: 'x', cwd: dir }, { retryMs: 0n, cwd: dir }]) {
    out.push(['withSourceLockSync options', options, outcome(dir, () => mod.withSourceLockSync('src/c.js', 'o', () => 'ran', options))]);
  }
  return out;
}

test('the store throws and returns as the old module does for misused arguments', { skip }, async (t) => {
  const old = (await import(pathToFileURL(refStore).href)).createLiveSessionStore;
  const native = loadPackage();
  const [want, got] = inOneProject(t, [old, native], storeCalls);
  assert.equal(got.length, want.length);
  for (let i = 0; i < want.length; i++) assert.deepStrictEqual(got[i], want[i], `call ${i}: ${want[i][0]}(${inspect(want[i][1])})`);
});

test('the lock throws and returns as the old module does for misused arguments', { skip }, async (t) => {
  const old = await import(pathToFileURL(path.join(path.dirname(refStore), 'source-lock.mjs')).href);
  const native = createRequire(path.join(PACKAGE_DIR, 'package.json'))(path.join(PACKAGE_DIR, 'index.js'));
  const [want, got] = inOneProject(t, [old, native], lockCalls);
  for (let i = 0; i < want.length; i++) assert.deepStrictEqual(got[i], want[i], `call ${i}: ${want[i][0]}(${inspect(want[i][1])})`);
});
