// Values only V8 can interpret, passed in events: objects that convert
// themselves (`valueOf`, `toString`, `toJSON`), Symbols, class instances,
// getters, re-entrant appends. The old module coerces them with V8's own
// operators after the line is journaled and holds them by reference in the
// snapshot it returns; the package must do the same. Each case asserts what
// the old module's code self-evidently does (`Number(x)` calls `x.valueOf`,
// `{ ...event }` keeps keys whose value is undefined, `JSON.stringify` calls
// `toJSON`); with QUIVER_REFERENCE_DIR set each also runs on the old module
// and the two outcomes must be equal.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { native, tempProject } from './helpers.mjs';
import { loadReference } from './support/impls.mjs';
import { encodeValue } from './support/encode.mjs';

const reference = await loadReference();

/**
 * Runs `scenario(createLiveSessionStore, cwd)` on the package, and on the old
 * module when there is one; returns the package's outcome after checking the
 * old module's is the same (compared in the harness's canonical encoding).
 */
function both(scenario) {
  const got = scenario(native.createLiveSessionStore, tempProject());
  if (reference) assert.deepEqual(encodeValue(got), encodeValue(scenario(reference, tempProject())), 'the old module differs');
  return got;
}

function attempt(fn) {
  try {
    return { value: fn() };
  } catch (err) {
    return { threw: err };
  }
}

function journalLines(store, id) {
  return fs.readFileSync(path.join(store.rootDir, id + '.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
}

function snapshotFile(store, id) {
  return JSON.parse(fs.readFileSync(path.join(store.rootDir, id + '.snapshot.json'), 'utf8'));
}

/**
 * Runs `setup` in a child process with `--expose-gc` (`store`: a package
 * store of session `s` in a fresh project), collects garbage three times,
 * and returns what `report(store.getSnapshot('s'))` gives, as JSON.
 */
function afterCollection(setup, report) {
  const script = `
    const { createLiveSessionStore } = require(process.argv[1]);
    const store = createLiveSessionStore({ cwd: process.argv[2], sessionId: 's' });
    ${setup}
    (async () => {
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        globalThis.gc();
      }
      process.stdout.write(JSON.stringify((${report})(store.getSnapshot('s'))));
    })();
  `;
  const indexPath = fileURLToPath(new URL('../index.js', import.meta.url));
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script, indexPath, tempProject()], { encoding: 'utf8' });
  assert.ok(r.signal === null && r.status === 0, `child ended by ${r.signal ?? `exit ${r.status}`}\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('Number() of a variant calls its valueOf, as V8 does', () => {
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    const calls = [];
    const variant = { valueOf() { calls.push('valueOf'); return 2; } };
    const snap = store.appendEvent({ type: 'variant_mounted', variant });
    const fresh = create({ cwd }).getSnapshot('s').mountedVariants;
    fs.rmSync(path.join(store.rootDir, 's.snapshot.json'));
    return { mounted: snap.mountedVariants, calls, fresh, replayed: create({ cwd }).getSnapshot('s').diagnostics };
  });
  assert.deepEqual(got.mounted, [2]);
  assert.deepEqual(got.calls, ['valueOf']);
  // A fresh store trusts the snapshot file; the journal line holds `{}`
  // (JSON has no functions), so a replay finds a malformed ack.
  assert.deepEqual(got.fresh, [2]);
  assert.deepEqual(got.replayed, [{ error: 'malformed_mount_ack', type: 'variant_mounted', variant: {} }]);
});

test('a throwing valueOf throws after the line is journaled, and the next read replays it', () => {
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    store.appendEvent({ type: 'generate', count: 3 });
    const boom = new Error('boom');
    let calls = 0;
    const r = attempt(() => store.appendEvent({ type: 'variant_mounted', variant: { valueOf() { calls++; throw boom; } } }));
    return {
      same: r.threw === boom,
      calls,
      lines: journalLines(store, 's').length,
      next: store.getSnapshot('s').diagnostics,
      after: store.appendEvent({ type: 'variant_mounted', variant: 1 }).mountedVariants,
    };
  });
  assert.equal(got.same, true, 'the very object valueOf threw comes out');
  assert.equal(got.calls, 1);
  assert.equal(got.lines, 2);
  assert.deepEqual(got.next, [{ error: 'malformed_mount_ack', type: 'variant_mounted', variant: {} }]);
  assert.deepEqual(got.after, [1]);
});

test('Number() of a Symbol variant throws its TypeError after the line is journaled', () => {
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    const r = attempt(() => store.appendEvent({ type: 'variant_mount_failed', variant: Symbol('v') }));
    return { error: r.threw && [r.threw.constructor.name, r.threw.message], lines: journalLines(store, 's').length, next: store.getSnapshot('s').diagnostics };
  });
  assert.deepEqual(got.error, ['TypeError', 'Cannot convert a Symbol value to a number']);
  assert.equal(got.lines, 1);
  assert.deepEqual(got.next, [{ error: 'malformed_mount_ack', type: 'variant_mount_failed', variant: null }]);
});

test('a checkpoint revision compares with >= through valueOf; accept takes Number() of a held visibleVariant', () => {
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    const calls = [];
    const revision = { valueOf() { calls.push('revision'); return 5; } };
    const visible = { valueOf() { calls.push('visible'); return 3; } };
    const first = store.appendEvent({ type: 'checkpoint', revision, visibleVariant: visible });
    const stale = store.appendEvent({ type: 'checkpoint', revision: 4 });
    const accepted = store.appendEvent({ type: 'accept' });
    return {
      held: first.browserCheckpointRevision === revision && first.visibleVariant === visible,
      stale: stale.diagnostics.map((d) => d.error),
      visible: accepted.visibleVariant,
      calls,
    };
  });
  assert.equal(got.held, true, 'the snapshot holds the caller objects');
  assert.deepEqual(got.stale, ['stale_checkpoint_ignored']);
  assert.equal(got.visible, 3);
  assert.deepEqual(got.calls, ['revision', 'revision', 'visible']);
});

test('a Date in an event: the snapshot holds the Date, its file and every fresh read its JSON', () => {
  for (const extra of [{}, { u: undefined }, { n: NaN }, { f() {} }]) {
    const got = both((create, cwd) => {
      const store = create({ cwd, sessionId: 's' });
      const at = new Date(0);
      const buf = Buffer.from('a');
      const snap = store.appendEvent({ type: 'generate', at, buf, bytes: new Uint8Array([7]), ...extra });
      return {
        held: snap.pendingEvent.at === at && snap.pendingEvent.buf === buf,
        file: snapshotFile(store, 's').pendingEvent,
        fresh: create({ cwd }).getSnapshot('s').pendingEvent,
      };
    });
    const json = { type: 'generate', at: '1970-01-01T00:00:00.000Z', buf: { type: 'Buffer', data: [97] }, bytes: { 0: 7 }, ...('n' in extra ? { n: null } : {}), id: 's' };
    const what = Object.keys(extra).join() || 'alone';
    assert.equal(got.held, true, what);
    assert.deepEqual(got.file, json, what);
    assert.deepEqual(got.fresh, json, what);
  }
});

test('an append from a getter inside another event keeps the outer event whole', () => {
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    const snap = store.appendEvent({
      type: 'generate',
      u: undefined,
      nested: { get inner() { store.appendEvent({ type: 'steer' }); return 1; } },
    });
    return { keys: Object.keys(snap.pendingEvent), u: 'u' in snap.pendingEvent };
  });
  assert.equal(got.u, true);
});

test('a snapshot file too deep to stringify fails one append, and the next replays the journal', () => {
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    store.appendEvent({ type: 'generate' });
    const file = path.join(store.rootDir, 's.snapshot.json');
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    fs.writeFileSync(file, JSON.stringify(saved).replace(/\}$/, `,"deep":${deep}}`));
    const reader = create({ cwd, sessionId: 's' });
    const first = attempt(() => reader.appendEvent({ type: 'steer' }));
    const second = attempt(() => reader.appendEvent({ type: 'steer_done' }));
    return {
      first: first.threw && [first.threw.constructor.name, first.threw.message],
      second: second.threw ? String(second.threw) : [second.value.phase, 'deep' in second.value],
      lines: journalLines(reader, 's').length,
      file: 'deep' in snapshotFile(reader, 's'),
    };
  });
  assert.deepEqual(got.first, ['RangeError', 'Maximum call stack size exceeded']);
  assert.deepEqual(got.second, ['steer_done', false]);
  assert.equal(got.lines, 3);
  assert.equal(got.file, false);
});

test('a getter that appends while the snapshot file is rendered finds the journal, not the state being written', () => {
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    let calls = 0;
    const shot = { get k() { if (++calls < 50) store.appendEvent({ type: 'agent_phase', phase: 'p' + calls }); return 1; } };
    const r = attempt(() => store.appendEvent({ type: 'generate', screenshotPath: shot }));
    return { threw: r.threw && String(r.threw), calls, phases: journalLines(store, 's').map((e) => e.event.phase ?? e.type) };
  });
  assert.equal(got.threw, undefined);
  // Once for the journal line, twice for the snapshot file (the pending
  // event and the screenshot artifact hold it); each render's append
  // derives from the journal instead of rendering the held value again.
  assert.equal(got.calls, 3);
  assert.deepEqual(got.phases, ['p1', 'generate', 'p2', 'p3']);
});

test('the snapshot file written last is the one rendered last, and the next read replays the journal', () => {
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    let calls = 0;
    const shot = { get k() { if (++calls === 2) store.appendEvent({ type: 'agent_phase', phase: 'late' }); return 1; } };
    store.appendEvent({ type: 'generate', screenshotPath: shot });
    const journalBytes = fs.statSync(path.join(store.rootDir, 's.jsonl')).size;
    const file = snapshotFile(store, 's');
    const next = store.appendEvent({ type: 'agent_phase', phase: 'next' });
    return {
      fileClaims: [file.__journalBytes < journalBytes, file.__nextSeq, file.generationPhase],
      seqs: journalLines(store, 's').map((e) => e.seq),
      next: [next.generationPhase, Object.keys(next.generationTimings)],
    };
  });
  // The file is the outer append's, rendered before the getter's line: it
  // claims the journal's earlier size, so no reader trusts it.
  assert.deepEqual(got.fileClaims, [true, 2, null]);
  assert.deepEqual(got.seqs, [1, 2, 3]);
  assert.deepEqual(got.next, ['next', ['late', 'next']]);
});

test('an append from a getter run while its event is journaled lands first, with its own seq', () => {
  const run = (create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    store.appendEvent({ type: 'generate' });
    let calls = 0;
    // Only the first call appends: the snapshot holds `owner`, so its file's rendering calls again.
    const owner = { get k() { if (!calls++) store.appendEvent({ type: 'agent_phase', phase: 'inner' }); return 1; } };
    const snap = store.appendEvent({ type: 'checkpoint', owner, revision: 1 });
    return {
      lines: journalLines(store, 's').map((e) => [e.seq, e.type]),
      generationPhase: snap.generationPhase,
      fresh: create({ cwd, sessionId: 's' }).getSnapshot().generationPhase,
    };
  };
  const got = run(native.createLiveSessionStore, tempProject());
  assert.deepEqual(got.lines, [[1, 'generate'], [2, 'agent_phase'], [3, 'checkpoint']]);
  assert.equal(got.generationPhase, 'inner');
  assert.equal(got.fresh, 'inner');
  if (reference) {
    // The old module read the session before rendering the line: the outer
    // append takes the getter's seq and returns a state without its event.
    const old = run(reference, tempProject());
    assert.deepEqual(old.lines, [[1, 'generate'], [2, 'agent_phase'], [2, 'checkpoint']]);
    assert.equal(old.generationPhase, null);
  }
});

test('a Symbol agent phase keys a timing that only the appending store holds, and JSON drops', (t) => {
  if (!reference) t.diagnostic('QUIVER_REFERENCE_DIR unset: the old module is not run, only the expected values are checked');
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    const phase = Symbol('sym');
    // Own members only, symbol keys by whether they are `phase`.
    const view = (timings) => ({
      keys: Object.keys(timings),
      strings: Object.fromEntries(Object.entries(timings)),
      symbols: Object.getOwnPropertySymbols(timings).map((k) => [k === phase, timings[k]]),
    });
    store.appendEvent({ type: 'agent_phase', phase: 'plan', at: 1 });
    const keyed = store.appendEvent({ type: 'agent_phase', phase, at: 2, durationMs: 3 });
    const file = snapshotFile(store, 's');
    const other = store.appendEvent({ type: 'checkpoint', revision: 1 });
    store.appendEvent({ type: 'agent_phase', phase: 'render', at: 4 });
    const last = store.appendEvent({ type: 'agent_phase', phase: 'plan', at: 5 });
    const flushed = store.flush('s');
    const fresh = create({ cwd }).getSnapshot('s');
    fs.rmSync(path.join(store.rootDir, 's.snapshot.json'));
    const replayed = create({ cwd }).flush('s');
    return {
      keyed: [keyed.generationPhase === phase, view(keyed.generationTimings)],
      file: ['generationPhase' in file, file.generationTimings],
      other: [other.generationPhase === phase, view(other.generationTimings)],
      copied: [other.generationTimings !== keyed.generationTimings, other.generationTimings[phase] === keyed.generationTimings[phase]],
      last: view(last.generationTimings),
      lastFile: snapshotFile(store, 's').generationTimings,
      flushed: view(flushed.generationTimings),
      fresh: view(fresh.generationTimings),
      replayed: [replayed.generationPhase, view(replayed.generationTimings)],
    };
  });
  const plan1 = { at: 1, durationMs: null };
  const sym = { at: 2, durationMs: 3 };
  assert.deepEqual(got.keyed, [true, { keys: ['plan'], strings: { plan: plan1 }, symbols: [[true, sym]] }]);
  // The snapshot file is JSON: no Symbol value, no Symbol key.
  assert.deepEqual(got.file, [false, { plan: plan1 }]);
  // The next event's spread copies the symbol member into a new object.
  assert.deepEqual(got.other, [true, { keys: ['plan'], strings: { plan: plan1 }, symbols: [[true, sym]] }]);
  assert.deepEqual(got.copied, [true, true]);
  // String phases after it: `plan` keeps its place, `render` comes after.
  const strings = { plan: { at: 5, durationMs: null }, render: { at: 4, durationMs: null } };
  assert.deepEqual(got.last, { keys: ['plan', 'render'], strings, symbols: [[true, sym]] });
  assert.deepEqual(got.lastFile, strings);
  // flush() of the store that holds it keeps it; a fresh store reads files.
  assert.deepEqual(got.flushed, { keys: ['plan', 'render'], strings, symbols: [[true, sym]] });
  assert.deepEqual(got.fresh, { keys: ['plan', 'render'], strings, symbols: [] });
  assert.deepEqual(got.replayed, ['plan', { keys: ['plan', 'render'], strings, symbols: [] }]);
});

// A session whose timings V8 holds gets a new copy per event; the copies no
// snapshot names are released, and their handles reused for other held
// values without disturbing the one the snapshot names.
test('copies V8 holds are released once no snapshot names them (child process, --expose-gc)', () => {
  const out = afterCollection(`
    const phase = Symbol('p');
    const early = new WeakRef(store.appendEvent({ type: 'agent_phase', phase, at: 1 }).generationTimings);
    let last;
    for (let i = 0; i < 300; i++) last = store.appendEvent({ type: 'checkpoint', revision: i, owner: () => i });
  `, `(again) => ({
    released: early.deref() === undefined,
    same: again.generationTimings === last.generationTimings,
    owner: again.activeOwner(),
    timing: again.generationTimings[phase],
    next: store.appendEvent({ type: 'agent_phase', phase: 'q', at: 2 }).generationTimings[phase],
  })`);
  assert.deepEqual(out, { released: true, same: true, owner: 299, timing: { at: 1, durationMs: null }, next: { at: 1, durationMs: null } });
});

test('paramValues with a Symbol key: the spread copies the member, JSON drops it', () => {
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    const k = Symbol('k');
    const params = { x: 1, [k]: 2 };
    const view = (o) => [Object.keys(o), o.x, Object.getOwnPropertySymbols(o).map((s) => [s === k, o[s]])];
    const first = store.appendEvent({ type: 'checkpoint', revision: 1, paramValues: params });
    const next = store.appendEvent({ type: 'steer' });
    return {
      first: [first.paramValues !== params, view(first.paramValues)],
      next: [next.paramValues !== first.paramValues, view(next.paramValues)],
      file: snapshotFile(store, 's').paramValues,
      fresh: view(create({ cwd }).getSnapshot('s').paramValues),
    };
  });
  assert.deepEqual(got.first, [true, [['x'], 1, [[true, 2]]]]);
  assert.deepEqual(got.next, [true, [['x'], 1, [[true, 2]]]]);
  assert.deepEqual(got.file, { x: 1 });
  assert.deepEqual(got.fresh, [['x'], 1, []]);
});

test("an event's own Symbol-keyed members reach pendingEvent, its token does not; JSON drops them", (t) => {
  if (!reference) t.diagnostic('QUIVER_REFERENCE_DIR unset: the old module is not run, only the expected values are checked');
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    const k = Symbol('k');
    const hidden = Symbol('hidden');
    const value = { nested: 1 };
    // Own members only, symbol keys by whether they are `k`.
    const view = (o) => o && [Object.keys(o), Object.getOwnPropertySymbols(o).map((s) => [s === k, o[s] === value ? 'value' : o[s]])];
    const event = { type: 'generate', count: 2, token: 't', [k]: value };
    Object.defineProperty(event, hidden, { value: 1, enumerable: false });
    const generated = store.appendEvent(event);
    const file = snapshotFile(store, 's').pendingEvent;
    const later = store.appendEvent({ type: 'agent_phase', phase: 'plan' });
    const flushed = store.flush('s');
    const fresh = create({ cwd }).getSnapshot('s').pendingEvent;
    const steered = store.appendEvent({ type: 'steer', id: 's', [k]: 'steer', token: 'u', pageUrl: 'p' });
    fs.rmSync(path.join(store.rootDir, 's.snapshot.json'));
    const replayed = create({ cwd }).getSnapshot('s').pendingEvent;
    return {
      generated: view(generated.pendingEvent),
      file,
      later: [later.pendingEvent === generated.pendingEvent, view(later.pendingEvent)],
      flushed: view(flushed.pendingEvent),
      fresh: view(fresh),
      steered: view(steered.pendingEvent),
      replayed: view(replayed),
      lines: journalLines(store, 's').map((e) => Object.keys(e.event)),
    };
  });
  const keys = ['type', 'count', 'id'];
  assert.deepEqual(got.generated, [keys, [[true, 'value']]]);
  assert.deepEqual(got.file, { type: 'generate', count: 2, id: 's' });
  // Later events carry the same object along.
  assert.deepEqual(got.later, [true, [keys, [[true, 'value']]]]);
  assert.deepEqual(got.flushed, [keys, [[true, 'value']]]);
  assert.deepEqual(got.fresh, [keys, []]);
  assert.deepEqual(got.steered, [['type', 'id', 'pageUrl'], [[true, 'steer']]]);
  assert.deepEqual(got.replayed, [['type', 'id', 'pageUrl'], []]);
  assert.deepEqual(got.lines, [['type', 'count', 'token', 'id'], ['type', 'phase', 'id'], ['type', 'id', 'token', 'pageUrl']]);
});

// An event with symbol keys is held whole while it is applied, and its
// pending event for as long as a snapshot names it: both are released after.
test('events held for their symbol-keyed members are released once applied (child process, --expose-gc)', () => {
  const out = afterCollection(`
    const k = Symbol('k');
    const pending = new WeakRef(store.appendEvent({ type: 'generate', [k]: {} }).pendingEvent[k]);
    const applied = new WeakRef(store.appendEvent({ type: 'checkpoint', revision: 0, [k]: {} }));
    let last;
    for (let i = 1; i < 300; i++) last = store.appendEvent({ type: i % 2 ? 'steer' : 'checkpoint', revision: i, [k]: { i } });
  `, `(again) => ({
    released: [pending.deref() === undefined, applied.deref() === undefined],
    same: again.pendingEvent === last.pendingEvent,
    member: again.pendingEvent[k],
  })`);
  assert.deepEqual(out, { released: [true, true], same: true, member: { i: 299 } });
});

test('a RangeError thrown by a getter while the entry renders is the append\'s: the getter runs once', () => {
  const got = both((create, cwd) => {
    const store = create({ cwd, sessionId: 's' });
    store.appendEvent({ type: 'generate' });
    const file = path.join(store.rootDir, 's.snapshot.json');
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/\}\s*$/, `,"deep":${deep}}`));
    const reader = create({ cwd, sessionId: 's' });
    let calls = 0;
    // The getter's append reads the file, journals its line, and cannot write the snapshot file.
    const message = { get k() { calls++; reader.appendEvent({ type: 'steer' }); return 1; } };
    const r = attempt(() => reader.appendEvent({ type: 'agent_error', message }));
    return { threw: r.threw && r.threw.constructor.name, calls, types: journalLines(reader, 's').map((e) => e.type) };
  });
  assert.deepEqual(got, { threw: 'RangeError', calls: 1, types: ['generate', 'steer'] });
});
