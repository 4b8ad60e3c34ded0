// Fault suite 5 and 6: the source lock under pid reuse, contention, a
// holder killed inside its critical section and a worker terminated there.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { referenceModulePath } from '../support/impls.mjs';
import {
  loadNative, makeProject, removeDir, startWorker, resultLine, expectClean, sleep, figure,
} from './helpers.mjs';

const { withSourceLockSync, sourceLockPath } = loadNative();
const FILE = 'src/app.css';
const linux = process.platform === 'linux';

/** Field 22 of /proc/<pid>/stat: the start time in clock ticks after boot. */
function startTimeOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[22 - 3]);
}

function bootId() {
  return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
}

function writeLock(project, record) {
  const lockPath = sourceLockPath(FILE, project);
  fs.mkdirSync(path.dirname(lockPath), { recursive: true });
  fs.writeFileSync(lockPath, `${JSON.stringify(record)}\n`);
  return lockPath;
}

/** Runs withSourceLockSync with waitMs 0; returns what happened and how long it took. */
function tryLock(project, { waitMs = 0 } = {}) {
  const started = process.hrtime.bigint();
  let inside = null;
  try {
    withSourceLockSync(FILE, 'me', () => {
      inside = JSON.parse(fs.readFileSync(sourceLockPath(FILE, project), 'utf8'));
    }, { cwd: project, waitMs });
    return { acquired: true, inside, ms: Number(process.hrtime.bigint() - started) / 1e6 };
  } catch (error) {
    return { acquired: false, error, ms: Number(process.hrtime.bigint() - started) / 1e6 };
  }
}

async function sleeper() {
  const child = spawn('sleep', ['120'], { stdio: 'ignore' });
  await new Promise((resolve, reject) => { child.once('spawn', resolve); child.once('error', reject); });
  return child;
}

async function deadPid() {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid;
  await new Promise((resolve) => child.once('exit', resolve));
  return pid;
}

test('pid reuse: a lock naming a live pid with another start time is stale; the old format keeps the old rule', {
  skip: linux ? false : 'needs /proc (Linux)',
}, async () => {
  const project = makeProject('pidreuse');
  const live = await sleeper();
  try {
    const abs = path.resolve(project, FILE);
    const realStart = startTimeOf(live.pid);
    const base = { owner: 'ghost', token: 'ghost-token', pid: live.pid, at: Date.now(), file: abs };

    // Same boot, live pid, but the pid now belongs to a process that started
    // at another time: the owner is gone, the pid was reused.
    const lockPath = writeLock(project, { ...base, startTime: realStart + 4242, bootId: bootId() });
    const reused = tryLock(project);
    assert.ok(reused.acquired, `reused pid: ${reused.error && reused.error.message}`);
    assert.equal(reused.inside.pid, process.pid, 'the lock was re-created by us');
    assert.equal(reused.inside.owner, 'me');
    assert.ok(!fs.existsSync(lockPath), 'released after fn');

    // Control: the same lock with the pid's true start time is a live owner.
    writeLock(project, { ...base, startTime: realStart, bootId: bootId() });
    const held = tryLock(project);
    assert.ok(!held.acquired);
    assert.equal(held.error.code, 'SOURCE_LOCKED');
    assert.equal(held.error.message, 'source_locked');
    assert.equal(held.error.lockPath, lockPath);

    // A lock written by the old JS module (no startTime/bootId) naming a live
    // pid: held, as the old module would judge it.
    writeLock(project, base);
    const legacy = tryLock(project);
    assert.ok(!legacy.acquired);
    assert.equal(legacy.error.code, 'SOURCE_LOCKED');
    assert.equal(legacy.error.lockPath, lockPath);
    assert.ok(fs.existsSync(lockPath), 'a live owner\'s lock is left alone');

    // A lock naming a dead pid, in either format: taken at once.
    const dead = await deadPid();
    writeLock(project, { ...base, pid: dead });
    const deadLegacy = tryLock(project);
    assert.ok(deadLegacy.acquired, `dead pid (old format): ${deadLegacy.error && deadLegacy.error.message}`);
    writeLock(project, { ...base, pid: dead, startTime: realStart, bootId: bootId() });
    const deadNew = tryLock(project);
    assert.ok(deadNew.acquired, `dead pid: ${deadNew.error && deadNew.error.message}`);

    figure(`native: lock naming live pid ${live.pid} with a wrong start time acquired in ${reused.ms.toFixed(2)} ms; `
      + `with its true start time / old format: SOURCE_LOCKED; dead pid ${dead}: acquired in ${deadLegacy.ms.toFixed(2)} ms`);
  } finally {
    live.kill('SIGKILL');
    removeDir(project);
  }
});

test('lock stress: 4 processes x 150 critical sections, read-modify-write counter ends at exactly 600', async () => {
  const project = makeProject('lockstress');
  try {
    const counterFile = path.join(project, 'counter');
    const insideFile = path.join(project, 'inside');
    const goFile = path.join(project, 'go');
    fs.writeFileSync(counterFile, '0');
    let ready = 0;
    let release;
    const allReady = new Promise((resolve) => { release = resolve; });
    const workers = [0, 1, 2, 3].map((writer) => startWorker('locker.mjs', {
      mode: 'stress', cwd: project, file: FILE, writer, sections: 150, waitMs: 20_000, counterFile, insideFile, goFile,
    }, { onLine: (line) => { if (line === 'ready' && ++ready === 4) release(); } }));
    await Promise.race([allReady, Promise.all(workers.map((w) => w.done))]);
    const started = Date.now();
    fs.writeFileSync(goFile, '');
    const results = await Promise.all(workers.map((w) => w.done));
    const elapsed = Date.now() - started;
    results.forEach((r, i) => expectClean(r, `locker ${i}`));
    const reports = results.map((r) => resultLine(r.lines));
    const counter = Number(fs.readFileSync(counterFile, 'utf8'));
    const refused = reports.reduce((n, r) => n + r.refusedCount, 0);
    const overlaps = reports.reduce((n, r) => n + r.overlaps, 0);
    figure(`native: lock stress 4 x 150 sections in ${elapsed} ms: counter ${counter}, ${refused} refused, ${overlaps} overlapping holders`);
    assert.equal(refused, 0, reports.flatMap((r) => r.refused).join('\n'));
    assert.equal(overlaps, 0);
    assert.equal(counter, 600);
    assert.ok(!fs.existsSync(sourceLockPath(FILE, project)), 'no lock left behind');
  } finally {
    removeDir(project);
  }
});

test('a holder SIGKILLed inside its section: the next acquire does not wait for a timeout', async () => {
  const project = makeProject('lockkill');
  const started = [];
  try {
    // 1. Holder killed; then this process acquires (waitMs 20 s available, must not be needed).
    const holder = startWorker('locker.mjs', { mode: 'hold', cwd: project, file: FILE }, {
      onLine: (line, child) => { if (line === 'in') child.kill('SIGKILL'); },
    });
    started.push(holder);
    const res = await holder.done; // exited and reaped
    assert.equal(res.signal, 'SIGKILL', res.stderr);
    const lockPath = sourceLockPath(FILE, project);
    assert.ok(fs.existsSync(lockPath), 'the killed holder left its lock');
    const next = tryLock(project, { waitMs: 20_000 });
    assert.ok(next.acquired, next.error && next.error.message);
    assert.ok(next.ms < 1000, `took ${next.ms} ms`);

    // 2. A contender in another process already waiting when the holder dies.
    let killedAt = 0;
    let contenderWaiting;
    const waiting = new Promise((resolve) => { contenderWaiting = resolve; });
    const holder2 = startWorker('locker.mjs', { mode: 'hold', cwd: project, file: FILE }, {
      onLine: (line) => {
        if (line !== 'in') return;
        const contender = startWorker('locker.mjs', { mode: 'contend', cwd: project, file: FILE, waitMs: 20_000 }, {
          onLine: (l) => { if (l === 'waiting') contenderWaiting(contender); },
        });
        started.push(contender);
      },
    });
    started.push(holder2);
    const contender = await waiting;
    await sleep(200); // let it poll a while against the live holder
    assert.equal(contender.child.exitCode, null, 'contender must still be waiting while the holder lives');
    killedAt = Date.now();
    holder2.child.kill('SIGKILL');
    await holder2.done;
    const cres = await contender.done;
    expectClean(cres, 'contender');
    const handover = resultLine(cres.lines).acquiredAt - killedAt;
    figure(`native: after a holder SIGKILL, next acquire took ${next.ms.toFixed(2)} ms; `
      + `a contender already waiting got the lock ${handover} ms after the kill (waitMs was 20000)`);
    assert.ok(handover < 2000, `handover took ${handover} ms`);
  } finally {
    for (const w of started) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    removeDir(project);
  }
});

test('a worker terminated inside withSourceLockSync: its locks are released as it ends, another holder\'s are left', async () => {
  const run = async (impl, refPath) => {
    const cwd = makeProject('lockterm');
    try {
      const res = await startWorker('terminated-holder.mjs', { impl, refPath, cwd }).done;
      expectClean(res, `terminated-holder (${impl})`);
      return resultLine(res.lines);
    } finally {
      removeDir(cwd);
    }
  };
  assert.deepEqual(await run('native'), {
    terminatedInside: { said: 'inside', held: true, lockLeft: false, then: 'ran' },
    terminatedInsideTwo: { lockLeft: [false, false], then: ['ran', 'ran'] },
    exitedInside: { lockLeft: false, then: 'ran' },
    replacedByAnother: { kept: true },
    releasedBefore: { said: 'left', kept: true },
  });
  // The old module leaves the lock of a terminated worker for as long as
  // its process lives (README, "Where it differs").
  const refPath = referenceModulePath();
  if (refPath) {
    const old = await run('ref', refPath);
    assert.deepEqual(old.terminatedInside, { said: 'inside', held: true, lockLeft: true, then: 'SOURCE_LOCKED' });
  }
});
