// Fault suite: odd loading, odd inputs, many stores (issue 16, classes 2, 4,
// 9 and 13). Each case runs in a child process; with QUIVER_REFERENCE_DIR
// the old module runs the same case and the outcomes must be equal.

import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { referenceModulePath } from '../support/impls.mjs';
import { makeProject, removeDir, startWorker, resultLine, figure, shellNode, WORKERS } from './helpers.mjs';

async function probe(config) {
  const cwd = makeProject('inputs');
  try {
    const res = await startWorker('probe.mjs', { ...config, cwd }, { timeoutMs: 120_000 }).done;
    assert.equal(res.signal, null, `${JSON.stringify(config)} died by ${res.signal}\n${res.stderr.slice(0, 2000)}`);
    assert.equal(res.code, 0, `${JSON.stringify(config)} exited ${res.code}\n${res.stderr.slice(0, 2000)}`);
    return resultLine(res.lines);
  } finally {
    removeDir(cwd);
  }
}

async function withReference(config, check) {
  const got = await probe({ ...config, impl: 'native' });
  check(got);
  const refPath = referenceModulePath();
  if (refPath) assert.deepEqual(got, await probe({ ...config, impl: 'ref', refPath }), `${config.scenario}: differs from the old module`);
  return got;
}

test('the addon loaded twice in one thread (require.cache reload, two process.dlopen), main thread and worker', async () => {
  for (const thread of ['main', 'worker']) {
    const got = await probe({ scenario: 'loadTwice', impl: 'native', thread });
    assert.deepEqual(got, { distinct: true, phases: ['generate_requested', 'locked', 'generate_requested', 'locked', true, true], final: 'generate_requested' }, thread);
  }
});

test('an event holding new Array(2 ** 32 - 1) throws the old module\'s RangeError and appends nothing', async () => {
  await withReference({ scenario: 'hugeArray' }, (got) => {
    assert.deepEqual(got.append, { ok: false, name: 'RangeError', message: 'Invalid string length' });
    assert.equal(got.journalUnchanged, true);
  });
});

test('1,500 short-lived stores under ulimit -n 1024: all work, no descriptor outlives a call', { skip: process.platform !== 'linux' && 'reads /proc/self/fd' }, () => {
  const cwd = makeProject('fds');
  try {
    const stores = 1_500;
    const config = JSON.stringify({ scenario: 'manyStores', impl: 'native', cwd, stores });
    const r = spawnSync('sh', ['-c', `ulimit -n 1024 && exec ${shellNode([path.join(WORKERS, 'probe.mjs'), config])}`], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    const got = resultLine(r.stdout.split('\n'));
    assert.equal(got.failures, 0, got.firstFailure);
    assert.equal(got.held, 0, 'descriptors on the project\'s files outlived a call');
    assert.equal(got.most, got.baseline, `descriptors open between calls: ${got.baseline} before, up to ${got.most}`);
    assert.equal(got.end, got.baseline);
    figure(`${stores} stores under ulimit -n 1024: 0 failures, none of the project's files open between calls, open descriptors ${got.baseline} before and after every call`);
  } finally {
    removeDir(cwd);
  }
});

test('withSourceLockSync coerces waitMs and retryMs only where the old module does', async () => {
  const got = await withReference({ scenario: 'lockCoercion', refPath: referenceModulePath() }, (rows) => {
    // The old module's own rules, for a run without the reference checkout.
    assert.deepEqual(rows['bigint waitMs free'], { ok: true, value: 'ran' });
    assert.equal(rows['symbol waitMs free'].name, 'TypeError', 'waitMs is coerced before the first try');
    assert.deepEqual(rows['symbol retryMs free'], { ok: true, value: 'ran' }, 'retryMs only when the lock is busy');
    assert.equal(rows['symbol retryMs busy'].name, 'TypeError');
    assert.equal(rows['valueOf waitMs free'].valueOfCalls, 1);
    assert.equal(rows['valueOf retryMs free'].valueOfCalls, 0);
    assert.ok(rows['valueOf retryMs busy'].valueOfCalls >= 1);
  });
  figure(`withSourceLockSync coercion: ${Object.keys(got).length} cases (BigInt, Symbol, valueOf, throwing valueOf, strings, NaN, negative, null; free and busy)`);
});
