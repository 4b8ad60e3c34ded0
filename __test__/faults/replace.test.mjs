// Fault suite: how a snapshot file is replaced. The old module writes it in
// place, so wherever it can write the file, and whatever mode and owner the
// user gave it, the file stays writable and keeps them. The package stages
// the new text beside it and renames it over: that must work everywhere the
// old module's write works, and keep what the old file had.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  loadNative, makeProject, removeDir, journalPath, snapshotPath, startWorker, resultLine, expectClean, figure,
} from './helpers.mjs';
import { loadReference } from '../support/impls.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { createLiveSessionStore } = loadNative();
const ID = 'repl';
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** The snapshot file, when readers trust it: it names the journal's size. */
function trusted(project, id = ID) {
  const file = JSON.parse(fs.readFileSync(snapshotPath(project, id), 'utf8'));
  return file.__journalBytes === fs.statSync(journalPath(project, id)).size ? file : null;
}

test('a refused name exchange (a seccomp profile, a file system without it) falls back to rename', async (t) => {
  const seccomp = path.join(here, 'workers', 'seccomp-exec.py');
  const probe = spawnSync('python3', [seccomp, 'renameat2', 'EPERM', '--', 'true']);
  if (process.platform !== 'linux' || process.arch !== 'x64' || probe.status !== 0) {
    t.skip(`needs Linux x64 with python3 and seccomp (${probe.error?.message || String(probe.stderr).trim() || process.arch})`);
    return;
  }
  const refusals = ['EPERM', 'EOPNOTSUPP', 'EINVAL', 'ENOSYS'];
  for (const errno of refusals) {
    const project = makeProject(`exchange-${errno}`);
    try {
      createLiveSessionStore({ cwd: project }).appendEvent({ id: ID, type: 'generate', count: 2 });
      const events = [{ id: ID, type: 'variant_mounted', variant: 1 }, { id: ID, type: 'variant_mounted', variant: 2 }];
      const w = startWorker('appender.mjs', { impl: 'native', cwd: project, id: ID, mode: 'once', events }, { prefix: ['python3', seccomp, 'renameat2', errno, '--'] });
      const res = await w.done;
      expectClean(res, `appender with renameat2 refused (${errno})`);
      const { outcomes } = resultLine(res.lines);
      assert.deepEqual(outcomes, [{ ok: true }, { ok: true }], errno);
      assert.deepEqual(trusted(project)?.mountedVariants, [1, 2], `${errno}: the snapshot file was replaced`);
    } finally {
      removeDir(project);
    }
  }
  figure(`renameat2 refused with ${refusals.join(', ')}: every append returned and replaced the snapshot file by rename`);
});

test('the deepest path the old module writes at takes the package\'s appends and snapshot files', async () => {
  const PATH_MAX = 4096;
  const base = makeProject('deep');
  const tail = `${path.sep}.impeccable${path.sep}live${path.sep}sessions${path.sep}${ID}.snapshot.json`;
  // The snapshot file's path, the longest the old module writes, is one
  // byte short of PATH_MAX (its NUL is the last).
  let root = base;
  while (root.length + tail.length < PATH_MAX - 1) {
    const room = PATH_MAX - 1 - tail.length - root.length - 1;
    root = path.join(root, 'd'.repeat(Math.min(200, Math.max(1, room))));
  }
  try {
    assert.equal((root + tail).length, PATH_MAX - 1);
    fs.mkdirSync(path.join(root, '.git'), { recursive: true });
    const store = createLiveSessionStore({ cwd: root });
    store.appendEvent({ id: ID, type: 'generate', count: 2 });
    store.appendEvent({ id: ID, type: 'variant_mounted', variant: 1 });
    assert.deepEqual(trusted(root)?.mountedVariants, [1], 'the snapshot file is written and trusted');
    const reference = await loadReference();
    if (reference) {
      reference({ cwd: root }).appendEvent({ id: ID, type: 'variant_mounted', variant: 2 });
      assert.deepEqual(trusted(root)?.mountedVariants, [1, 2], 'the old module writes at the same path');
      assert.deepEqual(createLiveSessionStore({ cwd: root }).getSnapshot(ID).mountedVariants, [1, 2]);
    }
    figure(`a snapshot file path of ${(root + tail).length} bytes (PATH_MAX ${PATH_MAX}): appends return, the snapshot file is trusted${reference ? ', as the old module writes it' : ''}`);
  } finally {
    removeDir(base);
  }
});

test('a replaced snapshot file keeps the mode the user gave it, and its owner', async () => {
  const project = makeProject('mode');
  try {
    const store = createLiveSessionStore({ cwd: project });
    store.appendEvent({ id: ID, type: 'generate', count: 2 });
    for (const mode of [0o600, 0o640, 0o400]) {
      fs.chmodSync(snapshotPath(project, ID), mode);
      store.appendEvent({ id: ID, type: 'variant_mounted', variant: mode });
      assert.equal(fs.statSync(snapshotPath(project, ID)).mode & 0o777, mode, `mode ${mode.toString(8)} kept`);
      assert.ok(trusted(project), 'and the file was replaced');
    }
    if (isRoot) {
      fs.chownSync(snapshotPath(project, ID), 65534, 65534);
      store.appendEvent({ id: ID, type: 'variant_mounted', variant: 1 });
      const st = fs.statSync(snapshotPath(project, ID));
      assert.deepEqual([st.uid, st.gid], [65534, 65534], 'owner and group kept');
      assert.ok(trusted(project));
    }
    figure(`restricted snapshot files (600, 640, 400${isRoot ? ', owned by another user' : ''}): each replacement kept the mode${isRoot ? ' and the owner' : ''}`);
  } finally {
    removeDir(project);
  }
});
