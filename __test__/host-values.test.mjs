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
