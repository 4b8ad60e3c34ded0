// Fault suite: a peer stopped (SIGSTOP, Ctrl-Z, a frozen cgroup) while it
// holds the journal's lock or the snapshot file's write lease (issue 16,
// class 6). Every wait must be bounded; see RELIABILITY.md for the choice:
// an append waits at most 2 s for the journal lock, then goes ahead without
// it (as the old module's appends always do) and does not wait again while
// the holder stays stuck; no native open waits on a lease.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { loadNative, makeProject, removeDir, journalPath, snapshotPath, startWorker, resultLine, sleep, figure } from './helpers.mjs';

const linuxOnly = process.platform !== 'linux' && 'flock(1) and F_SETLEASE are Linux tools';

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

const LEASE_HOLDER = `
import fcntl, os, signal, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, 1024, fcntl.F_WRLCK)  # F_SETLEASE, as a native writer takes it
open(sys.argv[2], 'w').close()
time.sleep(120)
`;

test('a stopped process holding a lease on the snapshot file never makes a native open wait', { skip: linuxOnly }, async () => {
  const project = makeProject('stuck-lease');
  try {
    const { createLiveSessionStore } = loadNative();
    createLiveSessionStore({ cwd: project, sessionId: 's' }).appendEvent({ type: 'variant_mounted', variant: 1 });
    const snapshot = snapshotPath(project, 's');
    const ready = path.join(project, 'lease-ready');
    // The write lease a native writer holds for the microseconds of an
    // in-place rewrite, held by a process stopped right then.
    const holder = await stoppedHolder('python3', ['-c', LEASE_HOLDER, snapshot, ready], () => fs.existsSync(ready));
    let got;
    try {
      got = await probe({ scenario: 'stuckLeaseHolder', impl: 'native', cwd: project });
    } finally {
      holder.release();
    }
    assert.deepEqual(got.read, { ok: true, value: [1] });
    assert.deepEqual(got.append, { ok: true, value: [1, 9] });
    assert.ok(got.readMs < 2_000, `the read waited ${got.readMs} ms`);
    assert.ok(got.appendMs < 2_000, `the append waited ${got.appendMs} ms`);
    assert.deepEqual(createLiveSessionStore({ cwd: project, sessionId: 's' }).getSnapshot().mountedVariants, [1, 9]);
    figure(`stopped lease holder on the snapshot file: read ${got.readMs} ms, append ${got.appendMs} ms (the kernel would hold an open ${fs.readFileSync('/proc/sys/fs/lease-break-time', 'utf8').trim()} s)`);
  } finally {
    removeDir(project);
  }
});
