// Caller values a walk over them could follow forever or copy without bound
// (walk-cases.mjs: cycles, shared objects, sparse arrays of huge length, long
// arrays, deep nesting). Each case appends its event in a child process with
// a time limit, which must exit cleanly and report what the old module does:
// the same return value or the same error (class and message), after the same
// journal line, leaving the same files. The expectations were recorded from
// the old module (../fixtures/walk.json, by ../fixtures/gen-walk.mjs); with
// QUIVER_REFERENCE_DIR set each case also runs on the old module itself.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { referenceModulePath } from '../support/impls.mjs';
import { CASES } from './walk-cases.mjs';
import { runWalkCase as runCase } from './helpers.mjs';

const RECORDED = JSON.parse(fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'walk.json'), 'utf8')).cases;
const refPath = referenceModulePath();

test('every case has an outcome recorded from the old module', () => {
  assert.deepEqual(Object.keys(RECORDED).sort(), Object.keys(CASES).sort(), 'run fixtures/gen-walk.mjs after changing walk-cases.mjs');
});

for (const name of Object.keys(CASES)) {
  test(`caller value: ${name}`, async (t) => {
    const got = await runCase(name, 'native');
    assert.deepEqual(got, RECORDED[name], 'differs from the outcome recorded from the old module');
    if (refPath) assert.deepEqual(got, await runCase(name, 'ref', refPath), 'differs from the old module');
    else t.diagnostic('QUIVER_REFERENCE_DIR not set: compared with the recorded outcome only');
  });
}
