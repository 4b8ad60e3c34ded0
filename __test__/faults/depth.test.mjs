// Fault suite: deeply nested values (issue 16, classes 1 and 11). A native
// stack overflow takes the whole process down, where the old module throws
// V8's RangeError or just works. Every case runs in a child process; the
// test asserts on its exit and its output. With QUIVER_REFERENCE_DIR set the
// old module runs each case too and the outcomes must be equal.

import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { referenceModulePath } from '../support/impls.mjs';
import { makeProject, removeDir, startWorker, resultLine, figure, shellNode, WORKERS } from './helpers.mjs';

const STACK_OVERFLOW = 'Maximum call stack size exceeded';

async function probe(config) {
  const cwd = makeProject('depth');
  try {
    const res = await startWorker('probe.mjs', { ...config, cwd }, { timeoutMs: 60_000 }).done;
    assert.equal(res.signal, null, `${JSON.stringify(config)} died by ${res.signal}\n${res.stderr}`);
    assert.equal(res.code, 0, `${JSON.stringify(config)} exited ${res.code}\n${res.stderr}`);
    const result = resultLine(res.lines);
    assert.ok(result, `${JSON.stringify(config)} printed no result\n${res.lines.join('\n')}\n${res.stderr}`);
    return result;
  } finally {
    removeDir(cwd);
  }
}

/** What the old module does with the same case, or null without a reference. */
async function reference(config) {
  const refPath = referenceModulePath();
  return refPath ? probe({ ...config, impl: 'ref', refPath }) : null;
}

/**
 * Throws unless `o` succeeded or threw one of V8's own RangeErrors: its stack
 * overflow, or (where a thread's stack lets `JSON.stringify` go deep enough)
 * the indented text passing V8's longest string.
 */
function okOrStackOverflow(o, what) {
  if (o.ok) return;
  assert.equal(o.name, 'RangeError', what);
  assert.ok([STACK_OVERFLOW, 'Invalid string length'].includes(o.message), `${what}: ${o.message}`);
}

const DEPTHS = [3_000, 6_000, 20_000];
const THREADS = ['main', 'worker'];

test('deep events are appended, refused or fail to persist exactly where the old module does', async () => {
  let rounds = 0;
  for (const thread of THREADS) {
    for (const depth of DEPTHS) {
      for (const exotic of [false, true]) {
        const config = { scenario: 'appendDeep', impl: 'native', thread, depth, exotic };
        const got = await probe(config);
        const what = JSON.stringify(config);
        okOrStackOverflow(got.append, what);
        // Refused before the line is written, or written with its snapshot.
        if (got.append.ok) assert.ok(got.lines === 1 && got.snapshotFileHasEvent, what);
        const want = await reference(config);
        if (want) assert.deepEqual(got, want, `${what}: differs from the old module`);
        rounds++;
      }
    }
  }
  figure(`deep appends: ${rounds} cases (depths ${DEPTHS.join(', ')}; main thread and worker), no crash`);
});

test('a deep journal line is applied, and flushing it throws where the old module throws', async () => {
  let rounds = 0;
  for (const thread of THREADS) {
    for (const depth of DEPTHS) {
      const config = { scenario: 'lineDeep', impl: 'native', thread, depth };
      const got = await probe(config);
      const what = JSON.stringify(config);
      assert.deepEqual(got.read, { ok: true, value: { phase: 'generate_requested', diagnostics: [], x: 'object' } }, what);
      okOrStackOverflow(got.flush, what);
      assert.equal(got.snapshotFileWritten, got.flush.ok, `${what}: a file is written exactly when the flush succeeds`);
      const want = await reference(config);
      if (want) assert.deepEqual(got, want, `${what}: differs from the old module`);
      rounds++;
    }
  }
  figure(`deep journal lines: ${rounds} cases, applied, flush matches V8's own limit`);
});

test('arrays nested past V8\'s stack where the reducer converts them throw V8\'s RangeError, as the old module does', async () => {
  // 2,000 levels convert on every thread; 20,000 overflow V8's join on
  // every thread (about 3,100 to 4,600 levels on a main thread, 12,400 to
  // 18,400 in a worker).
  for (const thread of THREADS) {
    for (const depth of [2_000, 20_000]) {
      const config = { scenario: 'convertDeep', impl: 'native', thread, depth };
      const got = await probe(config);
      const what = JSON.stringify(config);
      if (depth === 2_000) {
        assert.deepEqual(got.checkpoint, { ok: true, value: 'idle' }, what);
        assert.deepEqual(got.ack.value.mounted, [1], what);
      } else {
        assert.deepEqual(got.checkpoint, { ok: false, name: 'RangeError', message: STACK_OVERFLOW }, what);
        assert.deepEqual(got.ack.value, { mounted: [], diagnostics: [{ error: 'journal_parse_failed', line: 1, message: STACK_OVERFLOW }] }, what);
      }
      const want = await reference(config);
      if (want) assert.deepEqual(got, want, `${what}: differs from the old module`);
    }
  }
});

test('no depth of data takes the process down: small stacks, the caller at its stack limit', async () => {
  const deep = 200_000;
  const cases = [
    { scenario: 'lineDeep', thread: 'worker', stackSizeMb: 1, depth: deep },
    { scenario: 'lineDeep', thread: 'worker', depth: deep, nearStackLimit: true },
    { scenario: 'lineDeep', thread: 'main', depth: deep, nearStackLimit: true },
    { scenario: 'appendDeep', thread: 'worker', depth: 3_000, nearStackLimit: true },
    { scenario: 'appendDeep', thread: 'main', depth: 3_000, nearStackLimit: true },
    { scenario: 'variantDeep', thread: 'worker', stackSizeMb: 1, depth: deep },
    { scenario: 'variantDeep', thread: 'main', depth: deep, nearStackLimit: true },
  ];
  for (const c of cases) {
    const got = await probe({ impl: 'native', ...c });
    const what = JSON.stringify(c);
    const op = got.read ?? got.append;
    okOrStackOverflow(op, what);
    if (c.scenario === 'lineDeep' && op.ok) assert.deepEqual(op.value.diagnostics, [], what);
  }
  figure(`small stacks and a caller at its stack limit: ${cases.length} cases (200,000 levels), no crash`);
});

test('a main thread with a 2 MB native stack reads a line nested 200,000 deep', { skip: process.platform === 'win32' && 'no ulimit' }, () => {
  const cwd = makeProject('depth-ulimit');
  try {
    const config = JSON.stringify({ scenario: 'lineDeep', impl: 'native', thread: 'main', depth: 200_000, cwd });
    const r = spawnSync('sh', ['-c', `ulimit -s 2048 && exec ${shellNode([path.join(WORKERS, 'probe.mjs'), config])}`], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.signal, null, r.stderr);
    assert.equal(r.status, 0, r.stderr);
    const result = resultLine(r.stdout.split('\n'));
    assert.deepEqual(result.read.value.diagnostics, []);
    okOrStackOverflow(result.flush, 'flush');
  } finally {
    removeDir(cwd);
  }
});
