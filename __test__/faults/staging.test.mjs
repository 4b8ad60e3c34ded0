// Fault suite: staged snapshot files. A snapshot file is replaced by writing
// a staged file beside it and renaming it over. A symlink planted where a
// writer writes must never be written through; the staged files of writers
// killed mid-replace must not pile up; and a writer's staged file is never
// taken from it, whatever process, PID namespace or machine it runs in.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import {
  PACKAGE_DIR, loadNative, makeProject, removeDir, sessionsDir, snapshotPath, journalPath, readJournal, seqStats,
  startWorker, resultLine, expectClean, figure, sleep,
} from './helpers.mjs';

const ID = 'staged';
const binding = () => createRequire(import.meta.url)(path.join(PACKAGE_DIR, 'binding.js'));

/** The project's layout, as the core names its files. */
function layoutOf(project) {
  const l = binding().layout(project);
  return { ...l, stagedName: new RegExp(l.stagedNamePattern) };
}

/** Every file under `dir` with its bytes, to tell whether anything changed. */
function tree(dir) {
  const out = {};
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath ?? entry.path, entry.name);
    if (entry.isFile()) out[path.relative(dir, full)] = fs.readFileSync(full, 'utf8');
  }
  return out;
}

/** `n` staged-file names for session `id`, as the layout's pattern allows. */
function stagedNames(id, n) {
  return Array.from({ length: n }, (_, i) => `.${id}.${(0xa0000000000 + i * 7919).toString(16).padStart(12, '0')}`);
}

function backdate(file, ms) {
  const then = new Date(Date.now() - ms);
  fs.utimesSync(file, then, then);
}

test('a writer stages at names the layout describes, never through a planted symlink', { skip: process.platform === 'win32' && 'symlinks need privileges' }, async () => {
  const project = makeProject('staging');
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-faults-outside-'));
  const victim = path.join(outside, 'victim.txt');
  fs.writeFileSync(victim, 'precious\n');
  const before = tree(outside);
  const layout = layoutOf(project);
  const snapshotName = path.basename(snapshotPath(project, ID));
  const seen = new Set();
  let planted = 0;
  let rounds = 0;
  try {
    const dir = sessionsDir(project);
    fs.mkdirSync(dir, { recursive: true });
    assert.equal(dir, layout.sessionsDir);
    const watcher = fs.watch(dir, (_, name) => { if (name) seen.add(name); });
    for (const durable of [false, true]) {
      for (const atTarget of [false, true]) {
        const goFile = path.join(project, `go-${rounds}`);
        const writer = startWorker('appender.mjs', {
          impl: 'native', cwd: project, id: ID, mode: 'batch', writer: rounds, count: 50, goFile, durable,
        }, { timeoutMs: 60_000 });
        const names = stagedNames(ID, 20);
        if (atTarget) {
          fs.rmSync(snapshotPath(project, ID), { force: true });
          names.push(snapshotName);
        }
        for (const name of names) {
          fs.rmSync(path.join(dir, name), { force: true });
          fs.symlinkSync(victim, path.join(dir, name));
          planted++;
        }
        fs.writeFileSync(goFile, '');
        const res = await writer.done;
        expectClean(res, 'writer');
        assert.equal(resultLine(res.lines).errors, 0, resultLine(res.lines).firstError);
        loadNative().createLiveSessionStore({ cwd: project }).flush(ID);
        for (const name of names.filter((n) => n !== snapshotName)) {
          assert.ok(fs.lstatSync(path.join(dir, name)).isSymbolicLink(), `${name} is still the planted link`);
        }
        if (atTarget) {
          assert.ok(fs.lstatSync(snapshotPath(project, ID)).isFile(), 'the link at the snapshot file was replaced, not written through');
          JSON.parse(fs.readFileSync(snapshotPath(project, ID), 'utf8'));
        }
        assert.deepEqual(tree(outside), before, `durable=${durable}: something was written outside the project`);
        rounds++;
      }
    }
    await sleep(50);
    watcher.close();
    // The names writers used: each one the layout's pattern, as long as
    // the snapshot file's name, so it fits wherever that one fits.
    const used = [...seen].filter((n) => !n.endsWith(layout.journalSuffix) && n !== snapshotName && !fs.existsSync(path.join(dir, n)));
    assert.ok(used.length >= rounds, `writers staged ${used.length} files`);
    for (const name of used) {
      assert.match(name, layout.stagedName);
      assert.equal(name.length, snapshotName.length, name);
      assert.equal(layout.stagedName.exec(name)[1], ID);
    }
    figure(`planted symlinks: ${planted} links over ${rounds} writers (durable and not, one at the snapshot file itself), 0 written through; ${used.length} staged names seen, all the layout's`);
  } finally {
    removeDir(project);
    removeDir(outside);
  }
});

test('staged files are judged by their lock and their age, never by a pid: a sweep removes only abandoned ones', async (t) => {
  if (spawnSync('flock', ['--version']).error) {
    t.skip('flock(1) not found: cannot hold a staged file from another process');
    return;
  }
  const rounds = 8;
  const project = makeProject('stale');
  const dir = sessionsDir(project);
  const staged = (names) => names.filter((n) => layoutOf(project).stagedName.test(n));
  let leftByKills = 0;
  const holder = { child: null };
  try {
    const { createLiveSessionStore } = loadNative();
    createLiveSessionStore({ cwd: project }).appendEvent({ id: ID, type: 'generate', count: 3 });
    const ackFile = path.join(project, 'acks');
    for (let round = 0; round < rounds; round++) {
      const delay = 10 + Math.random() * 60;
      const worker = startWorker('appender.mjs', {
        impl: 'native', cwd: project, id: ID, mode: 'forever', round, durable: true,
        startMarker: (round + 1) * 100_000 + 1, padEvery: 4, padBytes: 65_536, ackFile,
      }, { onLine: (line, child) => { if (line === 'ready') setTimeout(() => child.kill('SIGKILL'), delay); } });
      const res = await worker.done;
      assert.equal(res.signal, 'SIGKILL', res.stderr);
    }
    leftByKills = staged(fs.readdirSync(dir)).length;
    for (const name of staged(fs.readdirSync(dir))) backdate(path.join(dir, name), 120_000);
    const [abandoned, fresh, held] = stagedNames(ID, 3);
    for (const name of [abandoned, fresh, held]) fs.writeFileSync(path.join(dir, name), '{"partial":');
    backdate(path.join(dir, abandoned), 120_000);
    backdate(path.join(dir, held), 3_600_000);
    // Another process holds `held` as a writer does, however old it is.
    holder.child = spawn('flock', ['--exclusive', path.join(dir, held), 'sleep', '60'], { stdio: 'ignore' });
    for (let i = 0; i < 200 && binding().stagedFileVerdict(path.join(dir, held)) !== 'in_use'; i++) await sleep(10);
    assert.equal(binding().stagedFileVerdict(path.join(dir, held)), 'in_use');
    assert.equal(binding().stagedFileVerdict(path.join(dir, fresh)), 'fresh');
    assert.equal(binding().stagedFileVerdict(path.join(dir, abandoned)), 'abandoned');

    // Opening a store and reading touch none of them.
    const before = staged(fs.readdirSync(dir)).sort();
    const store = createLiveSessionStore({ cwd: project });
    assert.ok(store.getSnapshot(ID));
    assert.deepEqual(staged(fs.readdirSync(dir)).sort(), before, 'opening a store or reading sweeps nothing');
    // A flush sweeps: the held and the fresh file stay.
    store.flush(ID);
    assert.deepEqual(staged(fs.readdirSync(dir)).sort(), [fresh, held].sort());
    figure(`SIGKILLed durable writers: ${rounds} rounds, ${leftByKills} staged files left by the kills, all removed by the next sweep once abandoned; a held one (an hour old) and a fresh one kept`);
  } finally {
    holder.child?.kill('SIGKILL');
    removeDir(project);
  }
});

/** A pid between 20 and 400 that no process on the host has now. */
function deadPidOnHost() {
  for (let pid = 20; pid < 400; pid++) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if (error.code === 'ESRCH') return pid;
    }
  }
  throw new Error('no free pid below 400');
}

test('a writer in another PID namespace keeps its staged files while host stores open, read and flush', async (t) => {
  const probe = spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true']);
  if (process.platform !== 'linux' || probe.status !== 0) {
    t.skip(`unshare -p is not available here (${probe.error?.message || String(probe.stderr).trim()})`);
    return;
  }
  const project = makeProject('pidns');
  const count = 600;
  try {
    const { createLiveSessionStore } = loadNative();
    createLiveSessionStore({ cwd: project }).appendEvent({ id: ID, type: 'generate', count: 3 });
    const goFile = path.join(project, 'go');
    // Pids in a new namespace are handed out from 1: after `pid - 2`
    // short-lived processes, the writer gets `pid`, one no process has on
    // the host, so a rule judging staged files by `kill(pid, 0)` takes its
    // files for a dead writer's.
    const pid = deadPidOnHost();
    const spend = `i=2; while [ $i -lt ${pid} ]; do /bin/true; i=$((i+1)); done; "$@"`;
    const prefix = ['unshare', '-p', '-f', '--mount-proc', 'sh', '-c', spend, 'sh'];
    const writer = startWorker('appender.mjs', { impl: 'native', cwd: project, id: ID, mode: 'batch', writer: 0, count, goFile }, { prefix, timeoutMs: 120_000 });
    let exited = false;
    writer.done.then(() => { exited = true; });
    fs.writeFileSync(goFile, '');
    let hostCalls = 0;
    while (!exited) {
      const store = createLiveSessionStore({ cwd: project });
      store.getSnapshot(ID);
      store.flush(ID);
      hostCalls++;
      await sleep(1);
    }
    const res = await writer.done;
    expectClean(res, 'writer in its PID namespace');
    const result = resultLine(res.lines);
    assert.equal(result.errors, 0, `${result.errors} appends in the namespace failed: ${result.firstError}`);
    const { entries } = readJournal(journalPath(project, ID));
    assert.equal(entries.length, count + 1);
    assert.equal(seqStats(entries).extra, 0);
    figure(`writer in its own PID namespace (pid ${pid} there, none on the host): ${count} appends, 0 failed, while host stores opened, read and flushed ${hostCalls} times`);
  } finally {
    removeDir(project);
  }
});
