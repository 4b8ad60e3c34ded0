// Fault suite: the fault matrix. Every file-system call an operation makes
// is failed in turn, with each errno of ERRNOS and with the process killed
// right before it, as SQLite tests its I/O layer; after each run the checks
// of matrix-scenarios.mjs (`verify`) must all hold. It needs the `faults`
// build (`npm run build:faults`, which `npm test` runs first), whose fault
// seam a release binary does not have.
//
// A failing case is minimal as found: one operation, one call, one errno.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_DIR, loadNative, startWorker, expectClean, figure } from './helpers.mjs';
import { SCENARIOS, ERRNOS, freshProject, verify } from './matrix-scenarios.mjs';
import { loadReference } from '../support/impls.mjs';
import { createRequire } from 'node:module';

const { platformKey } = createRequire(import.meta.url)('../../platform.js');

const FAULTS_BINARY = path.join(PACKAGE_DIR, 'target', 'faults', `quiver-live-native.${platformKey()}.node`);
const env = { ...process.env, QUIVER_LIVE_NATIVE_BINARY: FAULTS_BINARY };

async function worker(config, options = {}) {
  const w = startWorker('matrix.mjs', config, { env, timeoutMs: 300_000, ...options });
  return w.done;
}

const matrix = { points: 0, runs: 0, failures: [] };

test('the faults build is there', { skip: process.platform !== 'linux' && 'the fault seam is exercised on Linux' }, () => {
  assert.ok(fs.existsSync(FAULTS_BINARY), `${FAULTS_BINARY} is missing: run \`npm run build:faults\` (npm test does)`);
});

for (const scenario of Object.keys(SCENARIOS)) {
  test(`fault matrix: ${scenario}`, { skip: (process.platform !== 'linux' || !fs.existsSync(FAULTS_BINARY)) && 'needs the faults build on Linux' }, async () => {
    const counted = await worker({ scenario, mode: 'count' });
    expectClean(counted, 'count');
    const { calls, result } = JSON.parse(counted.lines.find((l) => l.startsWith('{"calls"')) ?? 'null') ?? {};
    assert.ok(calls, `the count run printed nothing: ${counted.stderr}`);
    assert.ok(result.ok, `${scenario} fails with no fault: ${JSON.stringify(result.error)}`);
    assert.ok(calls.length > 0, `${scenario} made no file-system call`);

    const cases = calls.flatMap((_, i) => ERRNOS.map((errno) => [i + 1, errno]));
    const res = await worker({ scenario, mode: 'errno', cases });
    expectClean(res, 'errno cases');
    const found = res.lines.filter((l) => l.startsWith('{"case"')).map((l) => JSON.parse(l).case);
    assert.equal(found.length, cases.length, 'every case ran');
    for (const c of found) {
      for (const f of c.failures) matrix.failures.push(`${scenario}: call ${c.at} (${c.call}) ${c.errno}: ${f}`);
    }

    const pkg = loadNative();
    const reference = await loadReference();
    for (let at = 1; at <= calls.length; at++) {
      const project = freshProject();
      try {
        const crashed = await worker({ scenario, mode: 'crash', at, project });
        if (crashed.signal !== 'SIGKILL') {
          matrix.failures.push(`${scenario}: call ${at} (${calls[at - 1]}) crash: the run was not stopped (${crashed.code} ${crashed.stderr})`);
          continue;
        }
        const { before } = JSON.parse(crashed.lines.find((l) => l.startsWith('{"before"')));
        for (const f of await verify({ pkg, reference, project, scenario, before, result: null })) {
          matrix.failures.push(`${scenario}: call ${at} (${calls[at - 1]}) crash: ${f}`);
        }
      } finally {
        fs.rmSync(project, { recursive: true, force: true });
      }
    }
    matrix.points += calls.length;
    matrix.runs += cases.length + calls.length;
    figure(`fault matrix: ${scenario}: ${calls.length} calls (${calls.join(' ')}) × ${ERRNOS.length} errnos + crash = ${cases.length + calls.length} runs`);
    assert.deepEqual(matrix.failures.filter((f) => f.startsWith(`${scenario}:`)), []);
  });
}

test('fault matrix: totals', { skip: process.platform !== 'linux' && 'the fault seam is exercised on Linux' }, () => {
  figure(`fault matrix: ${Object.keys(SCENARIOS).length} operations × ${matrix.points} call points × (${ERRNOS.join(', ')}, crash): ${matrix.runs} runs, ${matrix.failures.length} failed${process.env.QUIVER_REFERENCE_DIR ? ', the old module reading every result' : ''}`);
  assert.deepEqual(matrix.failures, []);
});
