// Fault suite 7: failing disks.
//
// (a) A read-only file system (a tmpfs remounted read-only) under the project:
//     appendEvent throws a Node-style EROFS error naming the journal, the
//     journal keeps every line, and no snapshot shows the failed event.
// (b) Permission denied: the sessions are written by root and appended to by
//     an unprivileged process (root ignores mode bits, so a worker runs as
//     nobody): EACCES naming the path, nothing changes on disk.
// (c) A full disk (a 64 KiB tmpfs): appends until ENOSPC; the error names the
//     path, every journal line stays whole JSON, and the store's snapshot
//     always agrees with the lines actually present. After space is freed the
//     store appends again.
// Mounting needs root and a container that allows it; when it is not possible
// the test is skipped with the reason (a skip, not a pass).

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  loadNative, makeProject, removeDir, journalPath, snapshotPath, sessionsDir, readJournal,
  startWorker, resultLine, expectClean, mountTmpfs, remount, unmount, figure,
} from './helpers.mjs';

const { createLiveSessionStore } = loadNative();
const ID = 'disk';
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** A tmpfs mounted at <tmp>/mnt, with a `.git` so it is its own project root. */
function tmpfsProject(t, size) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-faults-mnt-'));
  const mnt = path.join(base, 'mnt');
  fs.mkdirSync(mnt);
  const why = mountTmpfs(mnt, size);
  if (why) {
    removeDir(base);
    const message = `disk-fault test skipped: cannot mount a tmpfs (${why})`;
    console.log(`[faults] ${message}`);
    t.skip(message);
    return null;
  }
  fs.mkdirSync(path.join(mnt, '.git'));
  return {
    dir: mnt,
    cleanup() {
      unmount(mnt);
      removeDir(base);
    },
  };
}

/** Appends to `file` until the disk is full (the write fails with ENOSPC). */
function fillDisk(file) {
  const fd = fs.openSync(file, 'a');
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(512));
  } catch (error) {
    assert.equal(error.code, 'ENOSPC');
  } finally {
    fs.closeSync(fd);
  }
}

function mountedVariantsInJournal(project) {
  return readJournal(journalPath(project, ID)).entries
    .filter((e) => e.type === 'variant_mounted')
    .map((e) => e.event.variant)
    .sort((a, b) => a - b);
}

function assertNodeError(error, code, wantPath) {
  assert.ok(error instanceof Error, 'an Error');
  assert.equal(error.code, code, `code of ${error.message}`);
  assert.equal(typeof error.errno, 'number');
  assert.ok(error.errno < 0);
  assert.equal(typeof error.syscall, 'string');
  assert.equal(error.path, wantPath);
  assert.ok(error.message.startsWith(`${code}: `), error.message);
  assert.ok(error.message.endsWith(`, ${error.syscall} '${wantPath}'`), error.message);
}

/**
 * Remounts, retrying while the mount is busy, for up to 5 s (well past the
 * time a store holds files). Returns null on success, or why it cannot be
 * done here; a mount still busy after 5 s fails the test.
 */
async function remountOnceIdle(dir, mode) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const why = remount(dir, mode);
    if (!why || !/busy/i.test(why)) return why;
    assert.ok(Date.now() < deadline, `still busy after 5 s: an idle store holds a file open for writing (${why})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('read-only file system: EROFS naming the journal, nothing lost, failed event not shown', async (t) => {
  const mount = tmpfsProject(t, '1m');
  if (!mount) return;
  const project = mount.dir;
  try {
    const store = createLiveSessionStore({ cwd: project });
    store.appendEvent({ id: ID, type: 'generate', count: 3 });
    store.appendEvent({ id: ID, type: 'variant_mounted', variant: 1 });
    store.appendEvent({ id: ID, type: 'variant_mounted', variant: 2 });
    const before = readJournal(journalPath(project, ID));
    const snapBefore = store.getSnapshot(ID);

    // The kernel will not make a file system read-only under a file open
    // for writing: no call may leave one open.
    const why = await remountOnceIdle(project, 'ro');
    if (why) {
      console.log(`[faults] read-only test skipped: ${why}`);
      t.skip(why);
      return;
    }
    let thrown;
    try {
      store.appendEvent({ id: ID, type: 'variant_mounted', variant: 3 });
    } catch (error) {
      thrown = error;
    }
    assert.ok(thrown, 'appendEvent on a read-only file system must throw');
    assertNodeError(thrown, 'EROFS', journalPath(project, ID));
    assert.ok(thrown.message.includes('read-only file system'), thrown.message);

    // A brand-new session fails the same way.
    assert.throws(() => store.appendEvent({ id: 'fresh', type: 'generate' }), (e) => e.code === 'EROFS' && e.path === journalPath(project, 'fresh'));

    const after = readJournal(journalPath(project, ID));
    assert.equal(after.text, before.text, 'the journal is untouched');
    assert.deepEqual(after.bad, []);
    assert.deepEqual(store.getSnapshot(ID), snapBefore);
    assert.deepEqual(createLiveSessionStore({ cwd: project }).getSnapshot(ID), snapBefore);
    assert.ok(!store.getSnapshot(ID).mountedVariants.includes(3));

    assert.equal(remount(project, 'rw'), null);
    const back = store.appendEvent({ id: ID, type: 'variant_mounted', variant: 3 });
    assert.deepEqual(back.mountedVariants, [1, 2, 3]);
    assert.equal(readJournal(journalPath(project, ID)).lineCount, 4);
    figure(`native: read-only fs: appendEvent threw "${thrown.message}" (errno ${thrown.errno}); journal unchanged; `
      + 'failed event absent from snapshots; appends resume after remount rw');
  } finally {
    mount.cleanup();
  }
});

test('permission denied: EACCES naming the path, nothing changes on disk', async (t) => {
  if (process.platform === 'win32') {
    t.skip('mode bits: Windows has only a read-only attribute, which directories ignore and Node reports as EPERM');
    return;
  }
  const project = makeProject('eacces');
  try {
    const store = createLiveSessionStore({ cwd: project });
    store.appendEvent({ id: ID, type: 'generate', count: 2 });
    store.appendEvent({ id: ID, type: 'variant_mounted', variant: 1 });
    const before = readJournal(journalPath(project, ID));
    const snapBefore = store.getSnapshot(ID);
    const events = [
      { id: ID, type: 'variant_mounted', variant: 2 },
      { id: 'other', type: 'generate' },
    ];

    let outcome;
    if (isRoot) {
      // Root ignores mode bits: append from a process running as nobody.
      fs.chmodSync(project, 0o755);
      const w = startWorker('appender.mjs', { impl: 'native', cwd: project, id: ID, mode: 'once', events, runAs: 65534 });
      const res = await w.done;
      expectClean(res, 'worker running as nobody');
      outcome = resultLine(res.lines);
      if (outcome.createError) assert.fail(`createLiveSessionStore as nobody: ${outcome.createError.message}`);
    } else {
      fs.chmodSync(journalPath(project, ID), 0o444);
      fs.chmodSync(sessionsDir(project), 0o555);
      const s = createLiveSessionStore({ cwd: project });
      outcome = { outcomes: [], snapshot: null };
      for (const e of events) {
        try { s.appendEvent(e); outcome.outcomes.push({ ok: true }); } catch (error) {
          outcome.outcomes.push({ ok: false, error: { name: error.name, message: error.message, code: error.code, errno: error.errno, syscall: error.syscall, path: error.path } });
        }
      }
      outcome.snapshot = s.getSnapshot(ID);
    }
    const [existing, fresh] = outcome.outcomes;
    assert.ok(!existing.ok && !fresh.ok, 'both appends must fail');
    for (const [o, p] of [[existing, journalPath(project, ID)], [fresh, journalPath(project, 'other')]]) {
      assert.equal(o.error.code, 'EACCES');
      assert.equal(o.error.errno, -13);
      assert.equal(o.error.path, p);
      assert.equal(o.error.message, `EACCES: permission denied, ${o.error.syscall} '${p}'`);
    }
    assert.deepEqual(outcome.snapshot, JSON.parse(JSON.stringify(snapBefore)), 'the failing process still reads the old state');
    assert.equal(readJournal(journalPath(project, ID)).text, before.text);
    assert.ok(!fs.existsSync(journalPath(project, 'other')));
    assert.deepEqual(createLiveSessionStore({ cwd: project }).getSnapshot(ID), snapBefore);
    figure(`native: permission denied (${isRoot ? 'worker as uid 65534' : 'chmod'}): appendEvent threw "${existing.error.message}"; journal unchanged`);
  } finally {
    try { fs.chmodSync(sessionsDir(project), 0o755); } catch { /* gone */ }
    removeDir(project);
  }
});

test('permission denied for the snapshot only: the append returns, its line is journaled, and every reader agrees', async (t) => {
  const project = makeProject('eacces-snap');
  try {
    const store = createLiveSessionStore({ cwd: project });
    store.appendEvent({ id: ID, type: 'generate', count: 2 });
    fs.chmodSync(journalPath(project, ID), 0o666); // the journal is writable, the directory is not
    const events = [{ id: ID, type: 'variant_mounted', variant: 5 }];
    let outcomes;
    let snapshot;
    if (isRoot) {
      fs.chmodSync(project, 0o755);
      const w = startWorker('appender.mjs', { impl: 'native', cwd: project, id: ID, mode: 'once', events, runAs: 65534 });
      const res = await w.done;
      expectClean(res, 'worker running as nobody');
      ({ outcomes, snapshot } = resultLine(res.lines));
    } else {
      fs.chmodSync(sessionsDir(project), 0o555);
      const s = createLiveSessionStore({ cwd: project });
      try {
        s.appendEvent(events[0]);
        outcomes = [{ ok: true }];
      } catch (error) {
        outcomes = [{ ok: false, error: { message: error.message, code: error.code, path: error.path } }];
      }
      snapshot = s.getSnapshot(ID);
    }
    const lines = readJournal(journalPath(project, ID));
    assert.deepEqual(lines.bad, []);
    // The snapshot file cannot be replaced; the line can be written, so the
    // append returns, and the snapshot file stays as it was, untrusted.
    assert.deepEqual(outcomes, [{ ok: true }]);
    assert.ok(mountedVariantsInJournal(project).includes(5), 'the event is in the journal');
    assert.ok(snapshot.mountedVariants.includes(5));
    assert.ok(createLiveSessionStore({ cwd: project }).getSnapshot(ID).mountedVariants.includes(5));
    assert.ok(store.getSnapshot(ID).mountedVariants.includes(5));
  } finally {
    try { fs.chmodSync(sessionsDir(project), 0o755); } catch { /* gone */ }
    removeDir(project);
  }
});

test('full disk (64 KiB tmpfs): ENOSPC naming the path, no fragment, snapshot = lines present', async (t) => {
  const mount = tmpfsProject(t, '64k');
  if (!mount) return;
  const project = mount.dir;
  try {
    // Room to give back later.
    const filler = path.join(project, 'filler');
    fs.writeFileSync(filler, Buffer.alloc(16 * 1024));
    const store = createLiveSessionStore({ cwd: project });
    store.appendEvent({ id: ID, type: 'generate', count: 3 });
    const pad = 'z'.repeat(3000);
    const failures = [];
    let successes = 0;
    let landedDespiteError = 0;
    for (let v = 1; v <= 400 && failures.length < 8; v++) {
      try {
        store.appendEvent({ id: ID, type: 'variant_mounted', variant: v, pad });
        successes++;
      } catch (error) {
        failures.push({ v, code: error.code, path: error.path, message: error.message, syscall: error.syscall });
        assert.equal(error.code, 'ENOSPC', error.message);
        assert.ok(error.path && error.path.startsWith(sessionsDir(project)), `error names a session file: ${error.message}`);
        assert.ok(error.message.startsWith('ENOSPC: no space left on device, '), error.message);
        assert.ok(error.message.includes(error.path), error.message);
        if (mountedVariantsInJournal(project).includes(v)) landedDespiteError++;
      }
      // After every attempt: no fragment, and the store claims exactly what landed.
      const lines = readJournal(journalPath(project, ID));
      assert.deepEqual(lines.bad, [], `after variant ${v}: fragment in the journal`);
      assert.ok(lines.endsWithNewline, `after variant ${v}: torn tail`);
      assert.deepEqual(store.getSnapshot(ID).mountedVariants, mountedVariantsInJournal(project), `after variant ${v}: cache disagrees with the journal`);
    }
    assert.ok(failures.length > 0, `the 64 KiB disk never filled (${successes} appends)`);
    const journalFailures = failures.filter((f) => f.path === journalPath(project, ID)).length;

    // A fresh store, without the snapshot file, agrees too.
    const present = mountedVariantsInJournal(project);
    assert.deepEqual(createLiveSessionStore({ cwd: project }).getSnapshot(ID).mountedVariants, present);

    // Give space back: appending works again and the record stays consistent.
    fs.rmSync(filler);
    const after = store.appendEvent({ id: ID, type: 'variant_mounted', variant: 1000 });
    assert.deepEqual(after.mountedVariants, [...present, 1000]);
    const replayed = createLiveSessionStore({ cwd: project }).flush(ID); // a replay that ignores the snapshot file
    assert.deepEqual(replayed, after);

    // Fill the disk to the last page: a small line still fits in the
    // journal's last page, while each snapshot write needs a new file (it is
    // staged and renamed over) for the first three appends; then the
    // snapshot file is removed and its page taken back, so the next ones get
    // no room either.
    const filler2 = path.join(project, 'filler2');
    const fillUp = () => fillDisk(filler2);
    fillUp();
    const snapFailures = [];
    for (let v = 2000; v < 2006; v++) {
      if (v === 2003) {
        fs.rmSync(snapshotPath(project, ID), { force: true });
        fillUp(); // take back the page the snapshot file gave up
      }
      try {
        store.appendEvent({ id: ID, type: 'variant_mounted', variant: v });
      } catch (error) {
        assert.equal(error.code, 'ENOSPC', error.message);
        assert.ok(error.path && error.path.startsWith(sessionsDir(project)), error.message);
        snapFailures.push({ v, path: error.path, landed: mountedVariantsInJournal(project).includes(v) });
      }
      const lines = readJournal(journalPath(project, ID));
      assert.deepEqual(lines.bad, [], `after variant ${v}: fragment in the journal`);
      assert.deepEqual(store.getSnapshot(ID).mountedVariants, mountedVariantsInJournal(project), `after variant ${v}: cache disagrees with the journal`);
      assert.deepEqual(createLiveSessionStore({ cwd: project }).getSnapshot(ID).mountedVariants, mountedVariantsInJournal(project),
        `after variant ${v}: a fresh store disagrees with the journal`);
    }
    fs.rmSync(filler2);
    const end = store.appendEvent({ id: ID, type: 'variant_mounted', variant: 3000 });
    assert.deepEqual(end.mountedVariants, mountedVariantsInJournal(project));
    const snapshotWriteFailures = snapFailures.filter((f) => f.path !== journalPath(project, ID));
    const inPlaceFailures = snapFailures.filter((f) => f.v < 2003).length;

    const leftovers = fs.readdirSync(sessionsDir(project)).filter((n) => n.endsWith('.tmp'));
    assert.deepEqual(leftovers, [], 'no staging file left behind');
    figure(`native: full disk: ${successes} appends fit, then ${failures.length} ENOSPC failures `
      + `(${journalFailures} on the journal write, ${failures.length - journalFailures} on the snapshot write; `
      + `${landedDespiteError} of the failed appends are in the journal anyway); e.g. "${failures[0].message}"; `
      + `disk filled to the last page: ${inPlaceFailures}/3 appends failed with the snapshot file present, `
      + `${snapFailures.length - inPlaceFailures}/3 after it was removed; ${snapshotWriteFailures.length} failures on the snapshot write `
      + `with the event journaled (${snapFailures.filter((f) => f.landed).length} landed despite the error)`
      + (snapshotWriteFailures[0] ? `, e.g. path ${path.basename(snapshotWriteFailures[0].path)}` : '')
      + '; 0 fragments; snapshot always = journal; appends resume after space is freed');
  } finally {
    mount.cleanup();
  }
});

// (d) The disk fills while the snapshot file is rewritten: the new text
// needs a block more than the old, so the write gets part of the way and
// fails. Readers must never be left a partial file (issue 16,
// class 14): either the old text, the new, or no file (they then replay the
// journal, as both modules do when there is none).
test('full disk during the snapshot rewrite: the append returns, the old snapshot file stays, never a partial one', async (t) => {
  const mount = tmpfsProject(t, '256k');
  if (!mount) return;
  const project = mount.dir;
  try {
    const store = createLiveSessionStore({ cwd: project });
    const page = 4096;
    let rounds = 0;
    let kept = 0;
    for (let round = 0; round < 4; round++) {
      const filler = path.join(project, `filler${round}`);
      // A small snapshot file, and room in the journal's last page for the
      // next line: the journal append then needs no new block, the snapshot
      // file's rewrite does.
      fs.rmSync(snapshotPath(project, ID), { force: true });
      store.appendEvent({ id: ID, type: 'steer', pageUrl: 'http://app.test/' });
      while (fs.statSync(journalPath(project, ID)).size % page > 200) {
        store.appendEvent({ id: ID, type: 'variant_mounted', variant: 1 });
      }
      const snapshotBefore = fs.readFileSync(snapshotPath(project, ID), 'utf8');
      assert.ok(snapshotBefore.length < page - 2500, `snapshot file of ${snapshotBefore.length} bytes`);
      const journalBefore = fs.statSync(journalPath(project, ID)).size;
      fillDisk(filler);
      const url = `http://app.test/${'x'.repeat(2600)}`;
      const returned = store.appendEvent({ id: ID, type: 'steer', pageUrl: url });
      rounds++;
      assert.equal(returned.pageUrl, url);
      assert.ok(fs.statSync(journalPath(project, ID)).size > journalBefore, 'the line is journaled');
      const text = fs.readFileSync(snapshotPath(project, ID), 'utf8');
      if (text === snapshotBefore) kept++;
      else assert.equal(JSON.parse(text).pageUrl, url, 'a replaced snapshot file is whole');
      assert.deepEqual(fs.readdirSync(sessionsDir(project)).filter((n) => n.startsWith('.')), [], 'no staged file left');
      // Readers of either kind agree with the journal.
      assert.equal(createLiveSessionStore({ cwd: project }).getSnapshot(ID).pageUrl, url);
      fs.rmSync(filler);
    }
    assert.ok(kept > 0, 'the rewrite never ran out of space');
    figure(`full disk during the snapshot rewrite: ${rounds} rounds, ${kept} snapshot files left as they were (ENOSPC), 0 appends failed, 0 partial files`);
  } finally {
    mount.cleanup();
  }
});
