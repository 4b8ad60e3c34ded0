// Hostile values where the core could once panic or part from V8: a
// mountedVariants array no comparison orders, numbers halfway between two
// shortest forms.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { native, tempProject } from './helpers.mjs';

const { createLiveSessionStore } = native;

/** A session whose snapshot file says `fields`, read by a fresh store. */
function sessionWith(fields) {
  const dir = tempProject();
  const writer = createLiveSessionStore({ cwd: dir });
  writer.appendEvent({ type: 'generate', id: 's', count: 3 });
  const file = path.join(writer.rootDir, 's.snapshot.json');
  const { __journalBytes, __nextSeq, ...snapshot } = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.writeFileSync(file, JSON.stringify({ ...snapshot, ...fields, __journalBytes, __nextSeq }));
  return createLiveSessionStore({ cwd: dir });
}

function randomSource(seed) {
  return () => {
    seed ^= seed << 13; seed >>>= 0;
    seed ^= seed >>> 17;
    seed ^= seed << 5; seed >>>= 0;
    return seed / 2 ** 32;
  };
}

test('variant_mounted sorts a mountedVariants no comparison orders as V8 does, without a panic', () => {
  const random = randomSource(0x5eed);
  const odd = ['x', '', 'NaN', 'Infinity', ' 7 ', '0x1f', null, true, false, [], [3], {}, 1e308, -1e308, 0.5];
  let unordered = 0;
  for (let round = 0; round < 60; round++) {
    const n = [3, 5, 7, 9, 12, 21, 32, 70, 150][round % 9];
    const oddShare = [0.05, 0.3, 0.7][round % 3];
    const variants = Array.from({ length: n }, () => (random() < oddShare ? odd[Math.floor(random() * odd.length)] : Math.floor(random() * 60)));
    const store = sessionWith({ mountedVariants: variants });
    const got = store.appendEvent({ type: 'variant_mounted', id: 's', variant: 100 }).mountedVariants;
    // The old module's expression, in this process's V8.
    const expected = [...variants, 100].sort((a, b) => a - b);
    assert.deepEqual(got, expected, JSON.stringify(variants));
    assert.deepEqual(store.getSnapshot('s').mountedVariants, expected);
    const total = [...variants, 100].map((v, i) => [Number(v), i]).sort((a, b) => (a[0] - b[0]) || (Number.isNaN(a[0]) - Number.isNaN(b[0])) || a[1] - b[1]);
    unordered += Number(JSON.stringify(total.map(([, i]) => [...variants, 100][i])) !== JSON.stringify(expected));
  }
  assert.ok(unordered > 10, `most rounds need V8's own order: ${unordered} of 60`);
});

test('variant_mounted throws as V8 does on an element no number can be made of', () => {
  const store = sessionWith({ mountedVariants: [1, { toString: 1 }] });
  assert.throws(() => store.appendEvent({ type: 'variant_mounted', id: 's', variant: 2 }), { name: 'TypeError', message: 'Cannot convert object to primitive value' });
});

test('a number halfway between two shortest forms is written with the even digit, as V8 writes it', () => {
  const halfway = [562949953824580.25, 1125899906842624.75, 1939917796286158.25];
  const store = sessionWith({ mountedVariants: halfway });
  store.appendEvent({ type: 'variant_mounted', id: 's', variant: 3 });
  const text = fs.readFileSync(path.join(store.rootDir, 's.snapshot.json'), 'utf8');
  for (const n of halfway) assert.ok(text.includes(String(n)), `${String(n)} in ${text.slice(0, 400)}`);
  assert.deepEqual(halfway.map(String), ['562949953824580.2', '1125899906842624.8', '1939917796286158.2']);
});

// The hook exists only in the test build (the test-hooks feature, which
// `npm test` builds with); a release binary has none.
const binding = createRequire(import.meta.url)('../binding.js');
const noHook = typeof binding.storePanicForTest !== 'function' &&
  'this binary is a release build, without the test-hooks feature that storePanicForTest needs (npm run build:test, which npm test runs, has it)';

test('a panic inside an operation throws an Error; the process lives on, the store still works, its files stay as they were', { skip: noHook }, async () => {
  const { treeBytes } = await import('./helpers.mjs');
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir });
  store.appendEvent({ type: 'generate', id: 's', count: 3 });
  // No value here needs V8's operations (the wrapper's HOST_OPS): none are given.
  const [handle] = binding.storeOpen(dir, false, {});
  const version = binding.storeRead(handle, 's');
  assert.ok(version > 0);
  assert.equal(binding.storeRead(handle, 's'), version, 'an unchanged session keeps its version');
  const before = treeBytes(dir);
  for (let i = 0; i < 3; i++) {
    assert.throws(() => binding.storePanicForTest(handle, 's'), (e) => e instanceof Error && /store_panic_for_test asked for/.test(e.message));
  }
  assert.deepEqual(treeBytes(dir), before);
  // The same handle: not left borrowed, its cache dropped and derived
  // again from the journal (a new version).
  const rederived = binding.storeRead(handle, 's');
  assert.ok(rederived > 0 && rederived !== version, `${rederived} after ${version}`);
  assert.equal(JSON.parse(binding.storeSnapshot(handle, 's', -1)).expectedVariants, 3);
  const entry = JSON.stringify({ seq: 0, id: 's', type: 'variant_mounted', ts: new Date().toISOString(), event: { type: 'variant_mounted', id: 's', variant: 2 } });
  binding.storeAppendJson(handle, 's', entry, -1);
  assert.deepEqual(JSON.parse(binding.storeSnapshot(handle, 's', -1)).mountedVariants, [2]);
  assert.deepEqual(store.getSnapshot('s').mountedVariants, [2]);
  assert.equal(fs.readFileSync(path.join(store.rootDir, 's.jsonl'), 'utf8').trim().split('\n').length, 2);
});

test('a value nested a million deep in a snapshot file or a journal line takes nothing down', () => {
  const deep = '['.repeat(1e6) + ']'.repeat(1e6);
  /** How deep the arrays nest at `value` (a walk, not a recursion). */
  const depth = (value) => {
    let n = 0;
    for (let a = value; Array.isArray(a); a = a[0]) n++;
    return n;
  };
  // The old module's outcomes, on every Node line: reads return the value;
  // an append writes its journal line, then V8's JSON.stringify of the
  // snapshot overflows the stack.
  const overflow = { name: 'RangeError', message: 'Maximum call stack size exceeded' };
  // In the snapshot file: a key beyond the base fields.
  const fromFile = sessionWith({ mountedVariants: [] });
  const file = path.join(fromFile.rootDir, 's.snapshot.json');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"mountedVariants":[]', `"mountedVariants":[],"deep":${deep}`));
  const reader = createLiveSessionStore({ cwd: path.resolve(fromFile.rootDir, '..', '..', '..') });
  assert.equal(reader.rootDir, fromFile.rootDir);
  assert.equal(depth(reader.getSnapshot('s').deep), 1e6);
  assert.throws(() => reader.appendEvent({ type: 'variant_mounted', id: 's', variant: 2 }), overflow);
  assert.equal(fs.readFileSync(path.join(reader.rootDir, 's.jsonl'), 'utf8').trim().split('\n').length, 2);
  // In a journal line another process appended.
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir });
  store.appendEvent({ type: 'generate', id: 'j', count: 3 });
  fs.appendFileSync(path.join(store.rootDir, 'j.jsonl'), `{"seq":2,"id":"j","type":"generate","ts":"2026-01-01T00:00:00.000Z","event":{"type":"generate","id":"j","count":3,"deep":${deep}}}\n`);
  assert.equal(depth(createLiveSessionStore({ cwd: dir }).getSnapshot('j').pendingEvent.deep), 1e6);
  assert.throws(() => store.appendEvent({ type: 'variant_mounted', id: 'j', variant: 2 }), overflow);
  assert.equal(fs.readFileSync(path.join(store.rootDir, 'j.jsonl'), 'utf8').trim().split('\n').length, 3);
  // Still working: a new session in the same store.
  assert.equal(store.appendEvent({ type: 'generate', id: 'k', count: 1 }).expectedVariants, 1);
});
