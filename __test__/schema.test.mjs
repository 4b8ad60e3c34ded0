// The snapshot schema (crates/core/src/session/schema.rs) against its
// copies that cannot be generated from it: the TypeScript snapshot type, and
// the old module itself.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { PACKAGE_DIR } from './support/impls.mjs';
import { interfaceMembers as dtsMembers } from './support/dts.mjs';
import { nativeVocabulary, referenceVocabulary } from './support/vocabulary.mjs';

const native = nativeVocabulary();

/** `name: type` (and `name?: type`) lines of an interface in index.d.ts, in order. */
function interfaceMembers(name) {
  const members = dtsMembers(path.join(PACKAGE_DIR, 'index.d.ts'), name);
  assert.ok(members, `index.d.ts has no interface ${name}`);
  return members;
}

test('schema: index.d.ts types every snapshot field in the schema order, with the schema type', () => {
  const schema = createRequire(path.join(PACKAGE_DIR, 'package.json'))('./binding.js').schema();
  const want = schema.fields.map((f) => `${f.name}${f.added ? '?' : ''}: ${f.tsType}`);
  assert.deepEqual(interfaceMembers('LiveSessionSnapshot'), want);
});

test('schema: the old module has the same base fields, rebuilds, event types, phases and history', async (t) => {
  const reference = await referenceVocabulary();
  if (!reference) {
    t.skip('reference comparison skipped: QUIVER_REFERENCE_DIR not set');
    return;
  }
  assert.deepEqual(native.fields, reference.fields, 'base snapshot fields, in order');
  assert.deepEqual(native.rebuilds, reference.rebuilds, 'how applyEvent rebuilds each field before an event');
  assert.deepEqual([...native.addedFields].sort(), [...reference.addedFields].sort(), 'fields events add');
  assert.deepEqual([...native.eventTypes].sort(), [...reference.eventTypes].sort(), 'event types with a case of their own');
  assert.deepEqual(native.completedPhases, reference.completedPhases);
  assert.deepEqual(native.fencedPhases, reference.fencedPhases);
  assert.equal(native.mountFailureHistory, reference.mountFailureHistory);
});
