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
