// Fault suite: a peer stopped (SIGSTOP, Ctrl-Z, a frozen cgroup) while it
// holds the journal's lock or while it rewrites the snapshot file (issue 16,
// class 6; issue 36). Every wait must be bounded; see RELIABILITY.md for the
// choice: an append waits at most 2 s for the journal lock, then goes ahead
// without it (as the old module's appends always do) and does not wait again
// while the holder stays stuck; no reader of either module ever waits on a
// snapshot file's writer.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { loadNative, makeProject, removeDir, journalPath, snapshotPath, startWorker, resultLine, sleep, figure, WORKERS } from './helpers.mjs';
import { referenceModulePath } from '../support/impls.mjs';

const linuxOnly = process.platform !== 'linux' && 'flock(1) is a Linux tool';

async function probe(config) {
  const res = await startWorker('probe.mjs', config, { timeoutMs: 120_000 }).done;
  assert.equal(res.code, 0, `${JSON.stringify(config)}: exit ${res.code} ${res.signal}\n${res.stderr}`);
  return resultLine(res.lines);
}

/** Starts `cmd`, waits until `ready()` holds, then stops it (SIGSTOP). */
async function stoppedHolder(cmd, args, ready) {
  const child = spawn(cmd, args, { stdio: 'ignore' });
  const deadline = Date.now() + 10_000;
  while (!ready()) {
    assert.ok(Date.now() < deadline, `${cmd} never got ready`);
    await sleep(10);
  }
  process.kill(child.pid, 'SIGSTOP');
  return {
    release() {
      process.kill(child.pid, 'SIGKILL');
      process.kill(child.pid, 'SIGCONT');
    },
  };
}

function lockHeld(file) {
  return spawnSync('flock', ['-n', file, 'true']).status !== 0;
}

test('a stopped process holding the journal lock costs one bounded wait, and every append lands', { skip: linuxOnly }, async () => {
  const project = makeProject('stuck-lock');
  try {
    const { createLiveSessionStore } = loadNative();
    createLiveSessionStore({ cwd: project, sessionId: 's' }).appendEvent({ type: 'generate', count: 3 });
    const journal = journalPath(project, 's');
    const holder = await stoppedHolder('flock', [journal, 'sleep', '120'], () => lockHeld(journal));
    let got;
    try {
      got = await probe({ scenario: 'stuckLockHolder', impl: 'native', cwd: project, appends: 5 });
    } finally {
      holder.release();
    }
    for (const o of got.outcomes) assert.equal(o.ok, true, JSON.stringify(o));
    assert.deepEqual(got.seqs, [1, 2, 3, 4, 5, 6], 'every append landed once, in order');
    const [first, ...rest] = got.timings;
    assert.ok(first.appendMs >= 1_900 && first.appendMs < 4_000, `first append waited ${first.appendMs} ms`);
    for (const t of rest) assert.ok(t.appendMs < 500, `a later append waited ${t.appendMs} ms`);
    for (const t of got.timings) assert.ok(t.freshReadMs < 1_000, `a fresh reader waited ${t.freshReadMs} ms`);
    figure(`stopped journal lock holder: first append ${first.appendMs} ms, then ${rest.map((t) => t.appendMs).join('/')} ms; fresh reads ${got.timings.map((t) => t.freshReadMs).join('/')} ms; 5/5 appends landed`);
  } finally {
    removeDir(project);
  }
});

/** A child that prints JSON lines and answers one per line it is sent. */
function answering(script, config) {
  const child = spawn(process.execPath, [path.join(WORKERS, script), JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let buffered = '';
  let stderr = '';
  const waiting = [];
  const lines = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      lines.push(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
    while (waiting.length && lines.length) waiting.shift()(lines.shift());
  });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const next = (timeoutMs) => new Promise((resolve, reject) => {
    if (lines.length) return resolve(lines.shift());
    const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms ${stderr.slice(-300)}`)), timeoutMs);
    waiting.push((line) => { clearTimeout(timer); resolve(line); });
  });
  return { child, next, ask: (timeoutMs) => { child.stdin.write('go\n'); return next(timeoutMs); } };
}

// A writer of this package stopped at a random moment of a loop of appends
// (each rewriting a 1 MB snapshot file), several times: a reader in another
// process never waits on it. The old module's readers read the snapshot file
// with a plain readFileSync, so that read, this package's and (with
// QUIVER_REFERENCE_DIR) the old module's getSnapshot each answer within 2 s,
// and the file read is always whole. A writer that rewrote the file in place
// under a lock or lease readers wait on would hold them until it resumed.
test('a writer stopped at random moments of its appends never makes a reader of either module wait', { skip: process.platform === 'win32' && 'SIGSTOP is a unix signal' }, async () => {
  const STOPS = 12;
  const project = makeProject('stopped-writer');
  const refPath = referenceModulePath();
  const writer = startWorker('appender.mjs', {
    impl: 'native', cwd: project, id: 's', mode: 'forever', ackFile: path.join(project, 'acks'), startMarker: 1, round: 0,
  }, { timeoutMs: 10 * 60_000 });
  let reader = null;
  try {
    const { createLiveSessionStore } = loadNative();
    createLiveSessionStore({ cwd: project }).appendEvent({ id: 's', type: 'generate', count: 3, pageUrl: `http://app.test/${'p'.repeat(1 << 20)}` });
    reader = answering('snapshot-reader.mjs', { cwd: project, id: 's', snapshot: snapshotPath(project, 's'), refPath });
    assert.equal(await reader.next(30_000), 'ready');
    const deadline = Date.now() + 30_000;
    while (!(fs.existsSync(path.join(project, 'acks')) && fs.statSync(path.join(project, 'acks')).size > 0)) {
      assert.ok(Date.now() < deadline, `the writer never appended: ${writer.lines.join(' ')}`);
      await sleep(10);
    }
    const worst = { plain: 0, package: 0, old: 0 };
    for (let stop = 0; stop < STOPS; stop++) {
      await sleep(5 + Math.floor(Math.random() * 60));
      process.kill(writer.child.pid, 'SIGSTOP');
      let read;
      try {
        // Bounded well past the 2 s asked of a reader; a reader held by the
        // kernel (45 s for a lease) fails here.
        read = JSON.parse(await reader.ask(10_000)).read;
      } finally {
        process.kill(writer.child.pid, 'SIGCONT');
      }
      for (const kind of ['plain', 'package', 'old']) {
        const r = read[kind];
        if (!r) continue;
        assert.equal(r.error, null, `stop ${stop}: the ${kind} read failed: ${r.error}`);
        assert.ok(r.ms < 2_000, `stop ${stop}: the ${kind} read took ${r.ms} ms`);
        worst[kind] = Math.max(worst[kind], r.ms);
      }
      assert.ok(read.plain.value > 1 << 20, 'the whole snapshot file');
    }
    const acks = fs.readFileSync(path.join(project, 'acks'), 'utf8').split('\n').filter(Boolean).length;
    figure(`stopped writer, ${STOPS} stops during ${acks} appends of a 1 MB snapshot file: slowest read ${worst.plain.toFixed(1)} ms plain, `
      + `${worst.package.toFixed(1)} ms package, ${refPath ? `${worst.old.toFixed(1)} ms old module` : 'old module not run (QUIVER_REFERENCE_DIR unset)'}`);
  } finally {
    writer.child.kill('SIGKILL');
    try { process.kill(writer.child.pid, 'SIGCONT'); } catch { /* gone */ }
    reader?.child.kill('SIGKILL');
    await writer.done;
    removeDir(project);
  }
});
