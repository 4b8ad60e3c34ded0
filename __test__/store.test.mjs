// The store's contract as callers see it: surface, files on disk, errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { native, tempProject, treeBytes } from './helpers.mjs';

const { createLiveSessionStore, GENERATION_FENCED_PHASES } = native;

test('exports: a Set of the fenced phases the schema lists, and the four functions', () => {
  assert.ok(GENERATION_FENCED_PHASES instanceof Set);
  // The schema is the one list (schema.test.mjs holds it to the old module's).
  const { generationFencedPhases } = createRequire(import.meta.url)('../binding.js').schema();
  assert.ok(generationFencedPhases.length > 0);
  assert.deepEqual([...GENERATION_FENCED_PHASES], generationFencedPhases);
  for (const name of ['createLiveSessionStore', 'withSourceLockSync', 'sourceLockPath']) assert.equal(typeof native[name], 'function');
});

test('named ESM imports work', async () => {
  const mod = await import('../index.mjs');
  assert.equal(typeof mod.createLiveSessionStore, 'function');
  assert.ok(mod.GENERATION_FENCED_PHASES.has('completed'));
});

test('store object: dirs, key order, methods that survive destructuring', () => {
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir, sessionId: 'abc' });
  assert.deepEqual(Object.keys(store), ['rootDir', 'legacyRootDir', 'appendEvent', 'has', 'getSnapshot', 'flush', 'listActiveSessions']);
  assert.equal(store.rootDir, path.join(dir, '.impeccable', 'live', 'sessions'));
  assert.equal(store.legacyRootDir, path.join(dir, '.impeccable-live', 'sessions'));
  assert.ok(fs.statSync(store.rootDir).isDirectory());
  const { appendEvent, getSnapshot, listActiveSessions, flush, has } = store;
  const s = appendEvent({ type: 'generate', count: 2 });
  assert.equal(s.phase, 'generate_requested');
  assert.equal(getSnapshot(), s, 'unchanged session returns the same object');
  assert.equal(listActiveSessions()[0], s);
  assert.equal(flush().phase, 'generate_requested');
  assert.equal(has('abc'), true);
});

test('journal line and snapshot file bytes are JSON.stringify output', () => {
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir });
  const event = { type: 'checkpoint', id: 's1', revision: 2, big: 1e21, tiny: 5e-324, neg: -0, nan: NaN, u: undefined, lone: 'a\ud800b', keys: { 10: 1, b: 2, 2: 3 } };
  const snap = store.appendEvent(event);
  const lines = fs.readFileSync(path.join(store.rootDir, 's1.jsonl'), 'utf8').split('\n');
  assert.equal(lines.length, 2);
  const entry = JSON.parse(lines[0]);
  assert.equal(lines[0], JSON.stringify({ seq: 1, id: 's1', type: 'checkpoint', ts: entry.ts, event: { ...event, id: 's1' } }));
  assert.match(entry.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const file = fs.readFileSync(path.join(store.rootDir, 's1.snapshot.json'), 'utf8');
  const size = fs.statSync(path.join(store.rootDir, 's1.jsonl')).size;
  assert.equal(file, JSON.stringify({ ...snap, __journalBytes: size, __nextSeq: 2 }, null, 2) + '\n');
  assert.ok(Object.is(snap.pendingEvent, null));
  assert.deepEqual(Object.keys(snap.paramValues), []);
});

test('in memory: undefined keys and NaN stay; on disk they do not', () => {
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir, sessionId: 's' });
  store.appendEvent({ type: 'checkpoint', revision: 5 });
  const s = store.appendEvent({ type: 'checkpoint' });
  const last = s.diagnostics.at(-1);
  assert.deepEqual(Object.keys(last), ['error', 'revision', 'revisionDomain']);
  assert.equal(last.revision, undefined);
  const a = store.appendEvent({ type: 'accept', variantId: 'abc' });
  assert.ok(Number.isNaN(a.visibleVariant));
  const reread = createLiveSessionStore({ cwd: dir }).getSnapshot('s', { includeCompleted: true });
  assert.equal(reread.visibleVariant, null);
  assert.deepEqual(Object.keys(reread.diagnostics.at(-1)), ['error', 'revisionDomain']);
});

test('bad input gets the old errors and touches no file', () => {
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir });
  store.appendEvent({ type: 'generate', id: 'keep' });
  const before = treeBytes(dir);
  // A cyclic event is in the child-process test below.
  const cases = [
    [null, Error, 'event object required'],
    ['str', Error, 'event object required'],
    [() => {}, Error, 'event object required'],
    [{ type: 'x' }, Error, 'event id required'],
    [{ type: 'x', id: 5 }, Error, 'event id required'],
    [{ id: 'keep' }, Error, 'event type required'],
    [{ id: 'keep', type: 7 }, Error, 'event type required'],
    [{ id: '../x', type: 'x' }, Error, 'invalid session id: ../x'],
    [{ id: 'a/b', type: 'x' }, Error, 'invalid session id: a/b'],
    [{ id: 'x'.repeat(129), type: 'x' }, Error, 'invalid session id: ' + 'x'.repeat(129)],
    [{ id: 'a\u0000b', type: 'x' }, Error, 'invalid session id: a\u0000b'],
    [{ id: 'keep', type: 'x', n: 1n }, TypeError, 'Do not know how to serialize a BigInt'],
  ];
  for (const [event, cls, message] of cases) {
    assert.throws(() => store.appendEvent(event), (err) => {
      assert.equal(err.constructor, cls);
      if (message instanceof RegExp) assert.match(err.message, message);
      else assert.equal(err.message, message);
      assert.equal(err.code, undefined);
      return true;
    });
  }
  assert.throws(() => store.getSnapshot(), { message: 'session id required' });
  assert.throws(() => store.getSnapshot(5), { message: 'invalid session id: 5' });
  assert.throws(() => store.has('../x'), { message: 'invalid session id: ../x' });
  assert.equal(store.has(5), false);
  assert.equal(store.has(''), false);
  assert.deepEqual(treeBytes(dir), before);
});

test('deep (2,000 levels) and large (8 MB) events round-trip', (t) => {
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir, sessionId: 'big' });
  let deep = {};
  for (let i = 0; i < 2000; i++) deep = { d: deep };
  try {
    JSON.stringify({ event: { deep } });
  } catch (e) {
    // Node under wine stops near 1,740 levels; the old module's append, a
    // JSON.stringify of the entry, would throw the same.
    assert.throws(() => store.appendEvent({ type: 'generate', deep }), { name: e.name, message: e.message });
    t.diagnostic(`V8's JSON.stringify cannot go 2,000 levels deep here (${e.message}); the append throws as V8 does`);
    return;
  }
  const s = store.appendEvent({ type: 'generate', deep, blob: 'x'.repeat(8 << 20) });
  assert.equal(s.pendingEvent.blob.length, 8 << 20);
  const fresh = createLiveSessionStore({ cwd: dir });
  fs.rmSync(path.join(store.rootDir, 'big.snapshot.json'));
  const r = fresh.getSnapshot('big');
  let depth = 0;
  for (let o = r.pendingEvent.deep; o.d; o = o.d) depth++;
  assert.equal(depth, 2000);
  assert.equal(r.pendingEvent.blob.length, 8 << 20);
});

// Walking a cyclic or very deep event recurses in native code. On Node 24+
// an engine call that finds the stack past V8's limit aborts the process
// ("Check failed: isolate_->IsOnCentralStack()"), so these run in a child:
// a crash fails this test instead of ending the whole file. The old module
// throws V8's TypeError for the cycle, writing nothing, and keeps 4,000
// levels on every Node line from 20 to 26 on x64. Where V8's own
// JSON.stringify cannot go that deep (arm64's frames are larger: about 3,650
// levels), the old module throws its RangeError, and so must this package.
test('cyclic and 4,000-level events: the old TypeError, nothing written, the deep one kept (child process)', () => {
  const dir = tempProject();
  const script = `
    const { createLiveSessionStore } = require(process.argv[1]);
    const store = createLiveSessionStore({ cwd: process.argv[2] });
    store.appendEvent({ type: 'generate', id: 'keep' });
    const files = () => require('node:fs').readdirSync(store.rootDir).sort().map((f) => f + ':' + require('node:fs').statSync(store.rootDir + '/' + f).size);
    const out = { before: files() };
    const cyclic = { type: 'x', id: 'keep' };
    cyclic.self = cyclic;
    try { store.appendEvent(cyclic); out.cyclic = 'no error'; } catch (e) { out.cyclic = e.constructor.name + ': ' + e.message.split('\\n')[0]; }
    out.after = files();
    let deep = {};
    for (let i = 0; i < 4000; i++) deep = { d: deep };
    try { JSON.stringify({ seq: 2, id: 'deep', type: 'generate', ts: new Date().toISOString(), event: { type: 'generate', id: 'deep', deep } }); out.v8 = 'kept'; }
    catch (e) { out.v8 = e.constructor.name + ': ' + e.message; }
    try {
      let n = 0;
      for (let o = store.appendEvent({ type: 'generate', id: 'deep', deep }).pendingEvent.deep; o.d; o = o.d) n++;
      out.deep = n;
    } catch (e) { out.deep = e.constructor.name + ': ' + e.message; }
    process.stdout.write(JSON.stringify(out));
  `;
  const indexPath = fileURLToPath(new URL('../index.js', import.meta.url));
  const r = spawnSync(process.execPath, ['-e', script, indexPath, dir], { encoding: 'utf8' });
  const why = `${process.version}: child ended by ${r.signal ?? `exit ${r.status}`}\n${r.stderr.split('\n').slice(0, 8).join('\n')}`;
  assert.ok(r.signal === null && r.status === 0, why);
  const out = JSON.parse(r.stdout);
  assert.equal(out.cyclic, 'TypeError: Converting circular structure to JSON');
  assert.deepEqual(out.after, out.before);
  if (out.v8 === 'kept') assert.equal(out.deep, 4000);
  else assert.equal(out.deep, out.v8, `V8 itself cannot stringify 4,000 levels here (${process.arch})`);
});

test('legacy journals are read, then copied forward on first append', () => {
  const dir = tempProject();
  const legacy = path.join(dir, '.impeccable-live', 'sessions');
  fs.mkdirSync(legacy, { recursive: true });
  fs.writeFileSync(path.join(legacy, 'old.jsonl'), JSON.stringify({ seq: 1, id: 'old', type: 'generate', ts: '2030-01-01T00:00:00.000Z', event: { type: 'generate', id: 'old', count: 2 } }) + '\n');
  const store = createLiveSessionStore({ cwd: dir });
  assert.equal(store.has('old'), true);
  assert.equal(store.getSnapshot('old').expectedVariants, 2);
  assert.equal(store.listActiveSessions().length, 1);
  const s = store.appendEvent({ type: 'agent_done', id: 'old' });
  assert.equal(s.phase, 'variants_ready');
  const lines = fs.readFileSync(path.join(store.rootDir, 'old.jsonl'), 'utf8').trim().split('\n');
  assert.deepEqual(lines.map((l) => JSON.parse(l).seq), [1, 2]);
});

test('another store instance sees appends from this one, and replays corrupt lines with diagnostics', () => {
  const dir = tempProject();
  const a = createLiveSessionStore({ cwd: dir, sessionId: 'x' });
  const b = createLiveSessionStore({ cwd: dir, sessionId: 'x' });
  a.appendEvent({ type: 'generate' });
  assert.equal(b.getSnapshot().phase, 'generate_requested');
  const journal = path.join(a.rootDir, 'x.jsonl');
  fs.appendFileSync(journal, '{"seq": 2, "broken\n5\n\n');
  a.appendEvent({ type: 'agent_done' });
  fs.rmSync(path.join(a.rootDir, 'x.snapshot.json'));
  const fresh = createLiveSessionStore({ cwd: dir }).getSnapshot('x');
  assert.equal(fresh.phase, 'variants_ready');
  const parse = fresh.diagnostics.filter((d) => d.error === 'journal_parse_failed');
  assert.deepEqual(parse.map((d) => d.line), [2, 3]);
  let expected;
  try { JSON.parse('{"seq": 2, "broken'); } catch (err) { expected = err.message; }
  assert.equal(parse[0].message, expected);
  assert.equal(parse[1].message, 'entry is not object');
});

test('listActiveSessions: sorted, completed and discarded left out', () => {
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir });
  for (const id of ['b', 'a', 'c', 'd']) store.appendEvent({ type: 'generate', id });
  store.appendEvent({ type: 'complete', id: 'c' });
  store.appendEvent({ type: 'discarded', id: 'd' });
  assert.deepEqual(store.listActiveSessions().map((s) => s.id), ['a', 'b']);
  assert.equal(store.getSnapshot('c'), null);
  assert.equal(store.getSnapshot('c', { includeCompleted: true }).phase, 'completed');
});

test('past the sessions a store keeps derived, reads and listings still hand out the same objects', () => {
  // 600 sessions: more than the store keeps derived (MAX_DERIVED), so the
  // early ones are dropped and then read as unchanged from what was kept.
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir });
  const ids = Array.from({ length: 600 }, (_, i) => `s${String(i).padStart(4, '0')}`);
  const handed = new Map(ids.map((id) => [id, store.appendEvent({ type: 'generate', id, count: 3 })]));
  handed.set(ids[1], store.appendEvent({ type: 'complete', id: ids[1] }));
  for (const id of ids.slice(2)) assert.equal(store.getSnapshot(id), handed.get(id));
  assert.equal(store.getSnapshot(ids[0]), handed.get(ids[0]), 'a dropped, unchanged session: the same object');
  assert.equal(store.getSnapshot(ids[1]), null, 'a dropped completed session stays completed');
  const listed = store.listActiveSessions();
  assert.deepEqual(listed.map((s) => s.id), ids.filter((id) => id !== ids[1]));
  assert.ok(listed.every((s) => s === handed.get(s.id)), 'every listed session is the object handed out');
  createLiveSessionStore({ cwd: dir }).appendEvent({ type: 'agent_phase', id: ids[0], phase: 'picked_up' });
  const after = store.getSnapshot(ids[0]);
  assert.notEqual(after, handed.get(ids[0]), 'another writer appended: a new object');
  assert.deepEqual(after, createLiveSessionStore({ cwd: dir }).getSnapshot(ids[0]), 'what a fresh store reads');
});

test('a listed session keeps the state its snapshot file gave, after the file is removed or edited', () => {
  // As the old module's cache does: a store that read a session from its
  // file appends to what it read, not to what the file says later.
  const dir = tempProject();
  const writer = createLiveSessionStore({ cwd: dir });
  for (const id of ['a', 'b']) writer.appendEvent({ type: 'generate', id, count: 3 });
  const file = (id) => path.join(writer.rootDir, `${id}.snapshot.json`);
  // The note goes before the bookkeeping keys, where a writer puts an extra key.
  const note = (id, text) => {
    const { __journalBytes, __nextSeq, ...snapshot } = JSON.parse(fs.readFileSync(file(id), 'utf8'));
    const edited = { ...snapshot, note: text, __journalBytes, __nextSeq };
    fs.writeFileSync(file(id), JSON.stringify(edited, null, 2) + '\n');
  };
  note('a', 'from the file');
  note('b', 'from the file');
  const lister = createLiveSessionStore({ cwd: dir });
  assert.deepEqual(lister.listActiveSessions().map((s) => s.note), ['from the file', 'from the file']);
  fs.rmSync(file('a'));
  note('b', 'edited later');
  for (const id of ['a', 'b']) {
    assert.equal(lister.appendEvent({ type: 'agent_phase', id, phase: 'picked_up' }).note, 'from the file');
    assert.equal(JSON.parse(fs.readFileSync(file(id), 'utf8')).note, 'from the file');
  }
});

test('options: null throws like destructuring, durable appends land', () => {
  assert.throws(() => createLiveSessionStore(null), TypeError);
  assert.throws(() => createLiveSessionStore({ cwd: 5 }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir, sessionId: 'd', durable: true });
  store.appendEvent({ type: 'generate' });
  assert.equal(fs.readFileSync(path.join(store.rootDir, 'd.jsonl'), 'utf8').split('\n').length, 2);
});

test('project root: monorepo package and trailing slash / .. in cwd', () => {
  const dir = tempProject();
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ workspaces: ['packages/*'] }));
  fs.mkdirSync(path.join(dir, 'packages', 'web', 'src'), { recursive: true });
  const store = createLiveSessionStore({ cwd: path.join(dir, 'packages', 'web', 'src') + '/' });
  assert.equal(store.rootDir, path.join(dir, 'packages', 'web', '.impeccable', 'live', 'sessions'));
  const viaDots = createLiveSessionStore({ cwd: path.join(dir, 'packages', 'web', 'src') + '/../../..' });
  assert.equal(viaDots.rootDir, path.join(dir, '.impeccable', 'live', 'sessions'));
});

test('deliberate divergence: a bad append leaves a legacy-only journal where it is', () => {
  // The old module copies the legacy journal forward before JSON.stringify
  // throws on a BigInt; this package validates first and touches no file.
  const dir = tempProject();
  const legacy = path.join(dir, '.impeccable-live', 'sessions');
  fs.mkdirSync(legacy, { recursive: true });
  fs.writeFileSync(path.join(legacy, 'old.jsonl'), JSON.stringify({ seq: 1, id: 'old', type: 'generate', ts: '2030-01-01T00:00:00.000Z', event: { type: 'generate', id: 'old' } }) + '\n');
  const store = createLiveSessionStore({ cwd: dir });
  const before = treeBytes(dir);
  assert.throws(() => store.appendEvent({ type: 'generate', id: 'old', n: 1n }), TypeError);
  assert.deepEqual(treeBytes(dir), before);
  assert.equal(fs.existsSync(path.join(store.rootDir, 'old.jsonl')), false);
});

test('a legacy journal adopted after reads returns the new snapshot, not a cached one', () => {
  // Regression (found by the fuzzer): adopting a legacy journal rebuilds the
  // session, and its first derivation must never look like one handed out before.
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir });
  store.getSnapshot('abc', { includeCompleted: true });
  fs.mkdirSync(path.join(dir, '.impeccable-live', 'sessions'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.impeccable-live', 'sessions', 'abc.jsonl'), '\n\n');
  assert.equal(store.listActiveSessions().length, 1);
  const s = store.appendEvent({ type: 'variant_mount_failed', id: 'abc', variant: 3, error: 'x' });
  assert.equal(s.mountFailures.length, 1);
  assert.equal(s.pendingEvent.type, 'variant_mount_failed');
});

test('a refused event still derives (and caches) the session state first, as the old module does', () => {
  // Regression (found by the fuzzer): the old module reads the state, then
  // JSON.stringify throws. Here the state came from the snapshot file (where
  // -0 was written as 0), and must stay the cached one after that file goes.
  const dir = tempProject();
  const first = createLiveSessionStore({ cwd: dir });
  fs.writeFileSync(path.join(first.rootDir, 'x.jsonl'),
    '{"seq":1,"ts":"2030-01-01T00:00:05.060Z","event":{"type":"agent_phase","phase":"picked_up","durationMs":-0}}\n');
  first.appendEvent({ type: 'discard', id: 'x' });
  const second = createLiveSessionStore({ cwd: dir });
  assert.throws(() => second.appendEvent({ type: 'generate', id: 'x', n: 1n }), TypeError);
  fs.rmSync(path.join(first.rootDir, 'x.snapshot.json'));
  const s = second.getSnapshot('x', { includeCompleted: true });
  assert.ok(Object.is(s.generationTimings.picked_up.durationMs, 0));
  assert.ok(Object.is(createLiveSessionStore({ cwd: dir }).getSnapshot('x').generationTimings.picked_up.durationMs, -0));
});

// A returned snapshot is the caller's: the same object comes back until the
// session changes, and mutating it never reaches the store's state or its
// files. As in the old module, the next snapshot is built on the object
// handed out before, so fields an event leaves alone carry what the caller
// did to them there.
test('a caller mutating a returned snapshot changes neither the store nor its files', () => {
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir });
  const first = store.appendEvent({ type: 'generate', id: 'm1', count: 2 });
  first.pageUrl = 'MUTATED';
  first.diagnostics.push('junk');
  assert.equal(store.getSnapshot('m1'), first, 'unchanged session: the same object');
  const next = store.appendEvent({ type: 'agent_error', id: 'm1', message: 'boom' });
  assert.notEqual(next, first);
  assert.equal(next.pageUrl, 'MUTATED', 'a field the event left alone comes from the object handed out');
  assert.deepEqual(next.diagnostics, [{ error: 'agent_error', message: 'boom' }], 'a field the event changed is the store\'s');
  const file = fs.readFileSync(path.join(store.rootDir, 'm1.snapshot.json'), 'utf8');
  assert.equal(file.includes('MUTATED') || file.includes('junk'), false);
  const fresh = createLiveSessionStore({ cwd: dir }).getSnapshot('m1');
  assert.equal(fresh.pageUrl, null);
  assert.deepEqual(fresh.diagnostics, next.diagnostics);
});

// Entries are stamped with \`new Date().toISOString()\`, as in the old module
// (each expectation below is what the old module does): a fake clock that
// replaces \`Date\` applies, one that replaces only \`Date.now\` does not, and a
// clock whose date is invalid fails the append with V8's RangeError.
test('timestamps come from the Date a fake clock installs, exactly as the old module writes them', () => {
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir });
  const journal = path.join(store.rootDir, 'clk.jsonl');
  const RealDate = globalThis.Date;
  const realNow = Date.now;
  const fakeDate = (ms) => class extends RealDate {
    constructor(...args) { super(...(args.length ? args : [ms])); }
  };
  const stamp = (event) => store.appendEvent({ id: 'clk', ...event }).updatedAt;
  const lastTs = () => JSON.parse(fs.readFileSync(journal, 'utf8').trimEnd().split('\n').pop()).ts;
  try {
    const before = realNow();
    Date.now = () => 1893456000000;
    const spied = stamp({ type: 'generate' });
    Date.now = realNow;
    assert.ok(RealDate.parse(spied) >= before && RealDate.parse(spied) <= realNow(), `Date.now alone is not the clock: ${spied}`);
    for (const [ms, want] of [[1893456001000, '2030-01-01T00:00:01.000Z'], [-1, '1969-12-31T23:59:59.999Z'],
      [8.64e15, '+275760-09-13T00:00:00.000Z'], [-62167219200001, '-000001-12-31T23:59:59.999Z']]) {
      globalThis.Date = fakeDate(ms);
      assert.equal(stamp({ type: 'agent_phase', phase: 'picked_up' }), want);
      globalThis.Date = RealDate;
      assert.equal(lastTs(), want);
    }
    const text = fs.readFileSync(journal, 'utf8');
    globalThis.Date = fakeDate(NaN);
    assert.throws(() => stamp({ type: 'agent_done' }), (e) => e instanceof RangeError && e.message === 'Invalid time value');
    globalThis.Date = RealDate;
    assert.equal(fs.readFileSync(journal, 'utf8'), text, 'nothing appended');
  } finally {
    globalThis.Date = RealDate;
    Date.now = realNow;
  }
  assert.equal(store.appendEvent({ id: 'clk', type: 'agent_done' }).phase, 'variants_ready');
});

test('snapshot objects hold own data properties, whatever the keys, however often a shape repeats', () => {
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir, sessionId: 'k' });
  // Keys the conversion to JS must keep exactly, and must not treat
  // specially (`__proto__` is a plain own key in a spread copy).
  const odd = ['__proto__', '0', '10', 'a"b', 'back\\slash', 'line\u2028sep', 'é', '😀', 'constructor', '', ' '];
  const trapped = [];
  Object.defineProperty(Object.prototype, 'trap', { set(v) { trapped.push(v); }, configurable: true });
  try {
    // Each shape comes back several times: each time as fresh objects.
    for (let i = 0; i < 8; i++) {
      const event = JSON.parse(JSON.stringify({ type: 'steer', n: i, trap: i, nested: { trap: i + 100, deeper: { k: [i] } } }));
      for (const k of odd) Object.defineProperty(event, k, { value: `${k}:${i}`, enumerable: true, writable: true, configurable: true });
      const snap = store.appendEvent(event);
      const pending = snap.pendingEvent;
      const expected = { ...event, id: 'k' };
      assert.deepStrictEqual(Object.keys(pending), Object.keys(expected), `round ${i}: key order`);
      for (const k of Object.keys(expected)) {
        const d = Object.getOwnPropertyDescriptor(pending, k);
        assert.ok(d && d.writable && d.enumerable && d.configurable && !d.get, `round ${i}: ${JSON.stringify(k)} is an own data property`);
      }
      assert.equal(Object.getPrototypeOf(pending), Object.prototype);
      assert.equal(pending.__proto__ === Object.prototype, false, '__proto__ stayed a key');
      assert.deepStrictEqual(pending.nested, { trap: i + 100, deeper: { k: [i] } });
      assert.equal(Object.getPrototypeOf(snap), Object.prototype);
    }
    assert.deepStrictEqual(trapped, [], 'no inherited setter ran');
  } finally {
    delete Object.prototype.trap;
  }
  // Many one-off shapes still come back right.
  for (let i = 0; i < 5000; i++) {
    const snap = store.appendEvent({ type: 'steer', [`key${i}`]: i, [`other${i % 7}`]: true });
    assert.deepStrictEqual(snap.pendingEvent, { type: 'steer', [`key${i}`]: i, [`other${i % 7}`]: true, id: 'k' });
  }
});

// A whole snapshot reaches V8 in one conversion. Whatever the nesting, each
// object must come out as its own fresh object with own data properties.
test('nested objects in one conversion: odd keys, empty and deep levels, too many values, nothing shared', () => {
  const dir = tempProject();
  const store = createLiveSessionStore({ cwd: dir, sessionId: 'n' });
  const deep = (levels, leaf) => { let v = leaf; for (let d = 0; d < levels; d++) v = { ['d' + d]: v, at: d }; return v; };
  const wide = (n, i) => Object.fromEntries(Array.from({ length: n }, (_, k) => [`w${k}`, { v: k + i }]));
  const events = (i) => [
    { type: 'steer', a: { b: { c: { 'a"b': i, '': null, é: 'x', '10': [i, { z: i }] } }, empty: {}, arr: [{ q: i }, {}] } },
    { type: 'steer', a: { b: JSON.parse(`{"__proto__": ${i}, "k": {"m": ${i}}}`) } },
    { type: 'steer', many: wide(150, i) },
    { type: 'steer', deep: deep(80, i) },
  ];
  const trapped = [];
  Object.defineProperty(Object.prototype, 'trap', { set(v) { trapped.push(v); }, configurable: true });
  try {
    let previous = null;
    for (let i = 0; i < 6; i++) {
      for (const event of events(i)) {
        Object.defineProperty(event, 'trap', { value: i, enumerable: true, writable: true, configurable: true });
        const pending = store.appendEvent(event).pendingEvent;
        assert.deepStrictEqual(pending, { ...event, id: 'n' }, `round ${i}: ${Object.keys(event)}`);
        const walk = (v, where) => {
          if (v === null || typeof v !== 'object') return;
          if (!Array.isArray(v)) {
            assert.equal(Object.getPrototypeOf(v), Object.prototype, where);
            for (const k of Object.keys(v)) {
              const d = Object.getOwnPropertyDescriptor(v, k);
              assert.ok(d.writable && d.enumerable && d.configurable && !d.get, `${where}.${k}`);
            }
          }
          for (const k of Object.keys(v)) walk(v[k], `${where}.${k}`);
        };
        walk(pending, 'pendingEvent');
        if (event.a?.b?.k) assert.equal(Object.getPrototypeOf(pending.a.b), Object.prototype, '__proto__ stayed a key');
        if (event.a?.b?.c) {
          if (previous) assert.notEqual(pending.a.b, previous.a.b, 'each snapshot has its own nested objects');
          previous = pending;
        }
      }
    }
    assert.deepStrictEqual(trapped, [], 'no inherited setter ran');
  } finally {
    delete Object.prototype.trap;
  }
});

test('hundreds of distinct shapes, each seen several times, come back right', () => {
  const store = createLiveSessionStore({ cwd: tempProject(), sessionId: 'c' });
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 700; i++) {
      for (let seen = 0; seen < 3; seen++) {
        const event = { type: 'steer', [`k${i}`]: { seen, deeper: { [`j${i % 13}`]: [i] } } };
        assert.deepStrictEqual(store.appendEvent(event).pendingEvent, { ...event, id: 'c' });
      }
    }
  }
});

test('worker threads: each has its own engine state, and ending one leaves the others working', async () => {
  const { Worker } = await import('node:worker_threads');
  const dir = tempProject();
  const indexPath = fileURLToPath(new URL('../index.js', import.meta.url));
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    const { createLiveSessionStore } = require(workerData.indexPath);
    const store = createLiveSessionStore({ cwd: workerData.dir, sessionId: workerData.id });
    let snap;
    for (let i = 0; i < 40; i++) snap = store.appendEvent({ type: 'steer', prompt: 'p' + i, element: { tag: 'div', n: i } });
    parentPort.postMessage(snap.pendingEvent);
  `;
  const run = (id) => new Promise((resolve, reject) => {
    const w = new Worker(source, { eval: true, workerData: { indexPath, dir, id } });
    w.once('message', resolve);
    w.once('error', reject);
  });
  for (let round = 0; round < 2; round++) {
    const got = await Promise.all(['w1', 'w2', 'w3'].map((id) => run(`${id}-${round}`)));
    got.forEach((pending, k) => assert.deepStrictEqual(pending, { type: 'steer', prompt: 'p39', element: { tag: 'div', n: 39 }, id: `w${k + 1}-${round}` }));
    // The main thread's store keeps working between and after the workers.
    const store = createLiveSessionStore({ cwd: dir, sessionId: `main-${round}` });
    for (let i = 0; i < 5; i++) store.appendEvent({ type: 'steer', prompt: 'm' + i, element: { tag: 'a', n: i } });
    assert.deepStrictEqual(store.getSnapshot().pendingEvent, { type: 'steer', prompt: 'm4', element: { tag: 'a', n: 4 }, id: `main-${round}` });
    assert.equal(createLiveSessionStore({ cwd: dir }).getSnapshot(`w2-${round}`).pendingEvent.prompt, 'p39');
  }
});
