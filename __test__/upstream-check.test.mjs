// scripts/upstream-check.mjs: what of an upstream checkout this package
// implements, and whether it changed. With QUIVER_REFERENCE_DIR a clone
// holding a83d767, the recorded fingerprints are checked against that commit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { blobId, checkUpstream, declarations, imports, reach, tracedCode, IMPLEMENTED, MODULES } from '../scripts/upstream-check.mjs';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'scripts', 'test-reference.mjs');

/** A small upstream: the two modules, the helpers they import, and files they do not reach. */
function tree(overrides = {}) {
  const files = {
    'skill/scripts/live/session-store.mjs': `import fs from 'node:fs';
import { getLiveSessionsDir, safeSessionId } from '../lib/impeccable-paths.mjs';
import { COMPLETED_SESSION_PHASES } from './vocabulary.mjs';
export function createLiveSessionStore() { return [getLiveSessionsDir(), safeSessionId('a'), COMPLETED_SESSION_PHASES]; }
`,
    'skill/scripts/live/source-lock.mjs': `import { getLiveDir } from '../lib/impeccable-paths.mjs';
export function sourceLockPath() { return getLiveDir(); }
`,
    'skill/scripts/lib/impeccable-paths.mjs': `import path from 'node:path';
import { resolveProjectRoot } from '../context.mjs';
const LIVE_DIR = 'live';
// the live dir
export function getLiveDir(cwd) {
  return path.join(resolveProjectRoot(cwd), LIVE_DIR);
}
export function getLiveSessionsDir(cwd) { return path.join(getLiveDir(cwd), 'sessions'); }
export function safeSessionId(id) { return id; }
export function unrelatedHelper() { return 'not reached'; }
`,
    'skill/scripts/live/vocabulary.mjs': `export const COMPLETED_SESSION_PHASES = ['completed', ...MORE];
const MORE = ['discarded'];
export const EVENT_TYPES = ['generate'];
`,
    'skill/scripts/context.mjs': `import fs from 'node:fs';
/**
 * Where the project is.
 */
export function resolveProjectRoot(cwd) { return walk(cwd); }
function walk(dir) { return dir; }
export function buildUpdateDirective() { return 'ask the user'; }
`,
  };
  Object.assign(files, overrides);
  return (rel) => files[rel] ?? null;
}

test('declarations, imports and reach', () => {
  const read = tree();
  const d = declarations(read('skill/scripts/lib/impeccable-paths.mjs'));
  assert.deepEqual([...d.keys()], ['LIVE_DIR', 'getLiveDir', 'getLiveSessionsDir', 'safeSessionId', 'unrelatedHelper']);
  assert.equal(d.get('getLiveDir'), "export function getLiveDir(cwd) {\n  return path.join(resolveProjectRoot(cwd), LIVE_DIR);\n}");
  assert.deepEqual([...imports(read('skill/scripts/live/session-store.mjs'))], [
    ['getLiveSessionsDir', { from: '../lib/impeccable-paths.mjs', name: 'getLiveSessionsDir' }],
    ['safeSessionId', { from: '../lib/impeccable-paths.mjs', name: 'safeSessionId' }],
    ['COMPLETED_SESSION_PHASES', { from: './vocabulary.mjs', name: 'COMPLETED_SESSION_PHASES' }],
  ]);
  const r = reach(read('skill/scripts/lib/impeccable-paths.mjs'), ['getLiveSessionsDir']);
  assert.deepEqual(r.reached, ['LIVE_DIR', 'getLiveDir', 'getLiveSessionsDir']);
  assert.deepEqual(r.uses, [{ from: '../context.mjs', name: 'resolveProjectRoot' }]);
  // A spread counts as a use.
  assert.deepEqual(reach(read('skill/scripts/live/vocabulary.mjs'), ['COMPLETED_SESSION_PHASES']).reached, ['COMPLETED_SESSION_PHASES', 'MORE']);
});

test('tracedCode follows the imports; only a change in reached code changes a fingerprint', () => {
  const base = tracedCode(tree());
  assert.deepEqual(base.map((f) => f.file), [...MODULES, 'skill/scripts/lib/impeccable-paths.mjs', 'skill/scripts/live/vocabulary.mjs', 'skill/scripts/context.mjs']);
  assert.deepEqual(base.find((f) => f.file === 'skill/scripts/context.mjs').reached, ['resolveProjectRoot', 'walk']);
  const expected = base;
  const same = (overrides) => checkUpstream(tree(overrides), expected);
  assert.equal(same({}).same, true);
  // Elsewhere in an imported file, or comments: unchanged.
  assert.equal(same({ 'skill/scripts/context.mjs': tree()('skill/scripts/context.mjs').replace("'ask the user'", "'mention it once'") }).same, true);
  assert.equal(same({ 'skill/scripts/lib/impeccable-paths.mjs': tree()('skill/scripts/lib/impeccable-paths.mjs').replace('// the live dir', '// where live state goes') }).same, true);
  assert.equal(same({ 'skill/scripts/live/vocabulary.mjs': tree()('skill/scripts/live/vocabulary.mjs').replace("['generate']", "['generate', 'steer']") }).same, true);
  // In reached code, or anywhere in the two modules: changed, and named.
  const walked = same({ 'skill/scripts/context.mjs': tree()('skill/scripts/context.mjs').replace('return dir;', 'return dir + "/";') });
  assert.deepEqual(walked.files.filter((f) => !f.same).map((f) => f.file), ['skill/scripts/context.mjs']);
  const phases = same({ 'skill/scripts/live/vocabulary.mjs': tree()('skill/scripts/live/vocabulary.mjs').replace("['discarded']", "['discarded', 'abandoned']") });
  assert.deepEqual(phases.files.filter((f) => !f.same).map((f) => f.file), ['skill/scripts/live/vocabulary.mjs']);
  const store = same({ 'skill/scripts/live/session-store.mjs': tree()('skill/scripts/live/session-store.mjs') + '// a comment\n' });
  assert.deepEqual(store.files.filter((f) => !f.same).map((f) => f.file), ['skill/scripts/live/session-store.mjs']);
  const gone = same({ 'skill/scripts/live/source-lock.mjs': undefined });
  assert.deepEqual(gone.files.filter((f) => !f.present).map((f) => f.file), ['skill/scripts/live/source-lock.mjs']);
});

test('blobId is git hash-object', () => {
  assert.equal(blobId('hello\n'), 'ce013625030ba8dba906f756967f9e9ca394464a');
});

const reference = process.env.QUIVER_REFERENCE_DIR;
const hasCommit = reference && spawnSync('git', ['-C', reference, 'cat-file', '-e', `${IMPLEMENTED.commit}^{commit}`]).status === 0;
test('the recorded fingerprints are those of a83d767', { skip: !hasCommit && `QUIVER_REFERENCE_DIR ${reference ? 'lacks' : 'not set: no'} ${IMPLEMENTED.commit.slice(0, 7)} to check against` }, () => {
  const read = (rel) => {
    const r = spawnSync('git', ['-C', reference, 'show', `${IMPLEMENTED.commit}:${rel}`], { encoding: 'utf8', maxBuffer: 1 << 26 });
    return r.status === 0 ? r.stdout : null;
  };
  const traced = Object.fromEntries(tracedCode(read).map((f) => [f.file, f.fingerprint]));
  assert.deepEqual(traced, IMPLEMENTED.fingerprints);
  assert.equal(checkUpstream(read).same, true);
});

test('test-reference without QUIVER_REFERENCE_DIR says it skipped', () => {
  const env = { ...process.env };
  delete env.QUIVER_REFERENCE_DIR;
  const r = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8', env, timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^reference suites skipped: QUIVER_REFERENCE_DIR not set/);
});
