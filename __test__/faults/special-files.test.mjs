// Fault suite: things other than regular files at the names the store and
// the lock open (issue 36). A FIFO, a socket, a link to /dev/zero or
// /dev/urandom, a directory, a dangling link and a link to a file outside
// the project, each planted at a journal name, a legacy journal name, a
// snapshot file name and a lock name. Every call returns at once: the ones
// that meet such a name throw an Error naming it, shaped as Node's fs
// errors; a listing and a snapshot file (only a cache) carry on; nothing is
// written through a link. See the table in docs/RELIABILITY.md. The calls
// run in a child process with a timeout, so a hang fails the test instead
// of the suite.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadNative, makeProject, removeDir, journalPath, snapshotPath, startWorker, resultLine, figure } from './helpers.mjs';

const skip = process.platform === 'win32' && 'FIFOs, sockets and /dev are unix things';
const WORKER_TIMEOUT_MS = 60_000;

function legacyJournalPath(project, id) {
  return path.join(project, '.impeccable-live', 'sessions', `${id}.jsonl`);
}

/** Listens on a unix socket at `at` until `close()`: open() of it is ENXIO. */
async function socketAt(at) {
  const server = net.createServer();
  await new Promise((resolve, reject) => server.once('error', reject).listen(at, resolve));
  return () => new Promise((resolve) => server.close(resolve));
}

// Per class: how to plant it (returns a cleanup or nothing), and the code the
// call that meets it throws at a journal name read (`read`, links followed as
// the old module follows them: null = read as the file it names), at a
// journal name appended to (`append`), at a lock name (`lock`); `device`
// marks the classes whose legacy journal is not adopted by this test (a copy
// of /dev/zero would have no end on a package without the check).
const CLASSES = {
  FIFO: {
    plant: (at) => assert.equal(spawnSync('mkfifo', [at]).status, 0, 'mkfifo'),
    read: 'EFTYPE', append: 'EFTYPE', lock: 'EFTYPE',
  },
  socket: { plant: socketAt, read: 'ENXIO', append: 'ENXIO', lock: 'ENXIO' },
  'link to /dev/zero': { plant: (at) => fs.symlinkSync('/dev/zero', at), read: 'EFTYPE', append: 'ELOOP', lock: 'ELOOP', device: true },
  'link to /dev/urandom': { plant: (at) => fs.symlinkSync('/dev/urandom', at), read: 'EFTYPE', append: 'ELOOP', lock: 'ELOOP', device: true },
  directory: { plant: (at) => fs.mkdirSync(at), read: 'EISDIR', append: 'EISDIR', lock: 'EISDIR' },
  'dangling link': {
    plant: (at, outside) => fs.symlinkSync(path.join(outside, `${path.basename(at)}.missing`), at),
    read: null, append: 'ELOOP', lock: 'ELOOP',
  },
  'link to a file outside the project': {
    plant: (at, outside, text) => {
      const target = path.join(outside, `${path.basename(at)}.target`);
      fs.writeFileSync(target, text);
      fs.symlinkSync(target, at);
    },
    read: null, append: 'ELOOP', lock: 'ELOOP',
  },
};

const LINE = `${JSON.stringify({ seq: 1, id: 'x', type: 'generate', ts: '2030-01-01T00:00:00.000Z', event: { type: 'generate', id: 'x', count: 3 } })}\n`;

function assertFsError(r, code, wantPath) {
  assert.equal(r.ok, false, `${r.op} ${r.id ?? r.file}: expected ${code}, got ${JSON.stringify(r.value)}`);
  assert.equal(r.name, 'Error');
  assert.equal(r.code, code, r.message);
  assert.equal(typeof r.errno, 'number');
  assert.ok(r.errno < 0, `errno ${r.errno}`);
  assert.equal(typeof r.syscall, 'string');
  assert.equal(r.path, wantPath);
  assert.ok(r.message.includes(`'${wantPath}'`), r.message);
}

/** Everything under `dir`, by path: kind and content, to show nothing changed. */
function contents(dir) {
  const out = {};
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = fs.lstatSync(p);
    out[name] = st.isFile() ? fs.readFileSync(p, 'utf8') : st.isSymbolicLink() ? `-> ${fs.readlinkSync(p)}` : 'other';
  }
  return out;
}

function kindOf(p) {
  const st = fs.lstatSync(p);
  return st.isSymbolicLink() ? 'link' : st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'special';
}

for (const [label, cls] of Object.entries(CLASSES)) {
  test(`${label} at a journal, legacy journal, snapshot file or lock name: no hang, no abort, nothing written through it`, { skip }, async () => {
    const project = makeProject('special');
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-faults-outside-'));
    const cleanups = [];
    try {
      const { createLiveSessionStore, sourceLockPath } = loadNative();
      const store = createLiveSessionStore({ cwd: project });
      store.appendEvent({ id: 'good', type: 'generate', count: 1 });
      store.appendEvent({ id: 'snap', type: 'generate', count: 2 });
      fs.mkdirSync(path.dirname(legacyJournalPath(project, 'x')), { recursive: true });
      fs.writeFileSync(journalPath(project, 'twin'), LINE.replaceAll('"x"', '"twin"'));
      const lockPath = sourceLockPath('a.css', project);
      fs.mkdirSync(path.dirname(lockPath), { recursive: true });
      fs.rmSync(snapshotPath(project, 'snap'));
      const names = {
        journal: journalPath(project, 'bad'),
        legacy: legacyJournalPath(project, 'leg'),
        snapshot: snapshotPath(project, 'snap'),
        lock: lockPath,
      };
      for (const [what, at] of Object.entries(names)) {
        const text = { journal: LINE.replaceAll('"x"', '"bad"'), legacy: LINE.replaceAll('"x"', '"leg"'), snapshot: '{"id":"snap","__journalBytes":0}\n', lock: '{"pid":1}\n' }[what];
        const cleanup = await cls.plant(at, outside, text);
        if (cleanup) cleanups.push(cleanup);
      }
      // A device node itself (not a link) at a journal name, where the
      // system lets us make one: opened without following, then refused.
      const node = cls.device && spawnSync('mknod', [journalPath(project, 'node'), 'c', '1', label.includes('zero') ? '5' : '9']).status === 0;
      // The walk up to the project root reads marker files: a FIFO there
      // must not block every call either.
      if (label === 'FIFO') for (const marker of ['pnpm-workspace.yaml', 'lerna.json']) cls.plant(path.join(project, marker));
      const outsideBefore = contents(outside);

      const calls = [
        { op: 'read', id: 'bad' },
        { op: 'append', id: 'bad' },
        { op: 'read', id: 'leg' },
        ...(cls.device ? [] : [{ op: 'append', id: 'leg' }]),
        { op: 'list' },
        { op: 'read', id: 'snap' },
        { op: 'append', id: 'snap' },
        { op: 'read', id: 'snap' },
        { op: 'lock', file: 'a.css' },
        { op: 'read', id: 'twin' },
        { op: 'read', id: 'none' },
        { op: 'read', id: 'good' },
        ...(node ? [{ op: 'read', id: 'node' }, { op: 'append', id: 'node' }] : []),
      ];
      const res = await startWorker('special.mjs', { cwd: project, calls }, { timeoutMs: WORKER_TIMEOUT_MS }).done;
      const partial = res.lines.filter((l) => l.startsWith('{"partial"')).map((l) => JSON.parse(l).partial);
      assert.ok(!res.timedOut, `a call hung (killed after ${WORKER_TIMEOUT_MS} ms); finished before it: ${JSON.stringify(partial.map((r) => [r.op, r.id ?? r.file, r.ok ? r.value : r.code]))}`);
      assert.equal(res.code, 0, `the process ended with ${res.code ?? res.signal}: ${res.stderr.slice(-500)}`);
      const got = resultLine(res.lines);
      const [readBad, appendBad, readLeg, ...rest] = got;
      const appendLeg = cls.device ? null : rest.shift();
      const [list, readSnap, appendSnap, readSnapAgain, lock, readTwin, readNone, readGood, ...onNode] = rest;
      // Opening a device node may be refused outright (a file system mounted nodev).
      for (const r of onNode) assertFsError(r, r.code === 'EACCES' ? 'EACCES' : 'EFTYPE', journalPath(project, 'node'));

      // The journal name: a read meets what the name leads to, an append
      // never goes through a link.
      if (cls.read) assertFsError(readBad, cls.read, names.journal);
      else assert.equal(readBad.ok, true, JSON.stringify(readBad));
      assertFsError(appendBad, cls.append, names.journal);
      if (label === 'link to a file outside the project') assert.deepEqual(readBad.value, readTwin.value, 'read as the file it names');
      if (label === 'dangling link') assert.deepEqual(readBad.value, readNone.value, 'read as no journal');

      // The legacy journal: read as a journal is; adopted by the first
      // append only when it is a regular file (through a link, as the old
      // module copies it), else that append fails naming it.
      if (cls.read) assertFsError(readLeg, cls.read, names.legacy);
      else assert.equal(readLeg.ok, true, JSON.stringify(readLeg));
      if (appendLeg && cls.read) assertFsError(appendLeg, cls.read, names.legacy);
      else if (appendLeg) assert.equal(appendLeg.ok, true, JSON.stringify(appendLeg));

      // The listing goes on past them: a name that is no regular file is
      // left out, a link is read as what it names.
      assert.equal(list.ok, true, `the listing failed: ${list.message}`);
      const listed = ['good', 'snap', 'twin'];
      if (!cls.read) listed.unshift('bad', 'leg');
      assert.deepEqual(list.value, listed.sort());

      // The snapshot file is a cache: whatever is at its name is ignored,
      // and replaced by the next write unless it is a directory.
      assert.deepEqual([readSnap.ok, appendSnap.ok, readSnapAgain.ok], [true, true, true], JSON.stringify([readSnap, appendSnap, readSnapAgain]));
      assert.equal(readSnap.value, readGood.value, 'the journal answers');
      assert.equal(kindOf(names.snapshot), label === 'directory' ? 'dir' : 'file');

      // The lock: refused at once, naming its path.
      assertFsError(lock, cls.lock, names.lock);

      // Nothing outside the project was created or changed, and the odd
      // names are still what they were.
      assert.deepEqual(contents(outside), outsideBefore);
      assert.equal(kindOf(names.journal), kindOf(names.lock));
      figure(`${label}: ${got.map((r) => `${r.op} ${r.id ?? r.file ?? ''} ${r.ok ? 'ok' : r.code} ${r.ms} ms`).join('; ')}`);
    } finally {
      for (const cleanup of cleanups) await cleanup();
      removeDir(project);
      removeDir(outside);
    }
  });
}
