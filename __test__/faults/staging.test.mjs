// Fault suite: staging files (issue 16, classes 7 and 10). A snapshot file
// is replaced by writing a staged file beside it and renaming it over. A
// symlink planted where a writer will write must never be written through,
// and the staged files of writers killed mid-replace must not pile up.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  loadNative, makeProject, removeDir, sessionsDir, snapshotPath, journalPath, startWorker, expectClean, figure,
} from './helpers.mjs';

const ID = 'staged';
const isStaged = (name) => /^\.[0-9a-f]{16}\..+\.\d+\.tmp$/.test(name);

/** Every file under `dir` with its bytes, to tell whether anything changed. */
function tree(dir) {
  const out = {};
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath ?? entry.path, entry.name);
    if (entry.isFile()) out[path.relative(dir, full)] = fs.readFileSync(full, 'utf8');
  }
  return out;
}

test('symlinks planted at every name a writer could predict are never written through', { skip: process.platform === 'win32' && 'symlinks need privileges' }, async () => {
  const project = makeProject('staging');
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-faults-outside-'));
  const victim = path.join(outside, 'victim.txt');
  fs.writeFileSync(victim, 'precious\n');
  const before = tree(outside);
  let planted = 0;
  let rounds = 0;
  try {
    const dir = sessionsDir(project);
    fs.mkdirSync(dir, { recursive: true });
    for (const durable of [false, true]) {
      for (const atTarget of [false, true]) {
        const goFile = path.join(project, `go-${rounds}`);
        const writer = startWorker('appender.mjs', {
          impl: 'native', cwd: project, id: ID, mode: 'batch', writer: rounds, count: 50, goFile, durable,
        }, { timeoutMs: 60_000 });
        const pid = writer.child.pid;
        // The names a staged snapshot file had, or could have, for this
        // writer: the old `<target>.<pid>.tmp` and its variations.
        const names = [`${ID}.snapshot.json.${pid}.tmp`, `.${ID}.snapshot.json.${pid}.tmp`, `${ID}.snapshot.json.tmp`, `${ID}.snapshot.json.${pid}`, `${ID}.jsonl.${pid}.tmp`];
        if (atTarget) {
          fs.rmSync(snapshotPath(project, ID), { force: true });
          names.push(`${ID}.snapshot.json`);
        }
        for (const name of names) {
          fs.rmSync(path.join(dir, name), { force: true });
          fs.symlinkSync(victim, path.join(dir, name));
          planted++;
        }
        fs.writeFileSync(goFile, '');
        const res = await writer.done;
        expectClean(res, 'writer');
        const { createLiveSessionStore } = loadNative();
        createLiveSessionStore({ cwd: project }).flush(ID);
        for (const name of names.filter((n) => n !== `${ID}.snapshot.json`)) {
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
    assert.ok(fs.statSync(journalPath(project, ID)).size > 0);
    figure(`planted symlinks: ${planted} links over ${rounds} writers (durable and not, one at the snapshot file itself), 0 written through`);
  } finally {
    removeDir(project);
    removeDir(outside);
  }
});

/** A pid that no longer runs. */
function deadPid() {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

test('staged files of SIGKILLed durable writers are removed when a store opens; a live pid\'s stay', async () => {
  const rounds = 12;
  const project = makeProject('stale');
  const dir = sessionsDir(project);
  let leftByKills = 0;
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
      leftByKills += fs.readdirSync(dir).filter(isStaged).length;
      // Whatever the kill left, a dead pid's staged file is certain here.
      fs.writeFileSync(path.join(dir, `.${'d'.repeat(16)}.${ID}.snapshot.json.${deadPid()}.tmp`), '{"partial":');
      const live = `.${'a'.repeat(16)}.${ID}.snapshot.json.${process.pid}.tmp`;
      fs.writeFileSync(path.join(dir, live), 'a live writer\'s');
      const store = createLiveSessionStore({ cwd: project });
      assert.deepEqual(fs.readdirSync(dir).filter(isStaged), [live], `round ${round}: only the live pid's staged file is left`);
      fs.rmSync(path.join(dir, live));
      assert.ok(store.getSnapshot(ID));
    }
    figure(`SIGKILLed durable writers: ${rounds} rounds, ${leftByKills} staged files left by the kills (+${rounds} planted for dead pids), all removed on the next open; live pid's kept`);
  } finally {
    removeDir(project);
  }
});
