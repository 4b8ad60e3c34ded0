// Fault suite: opening a store where its sessions directory cannot be made.
// The old module calls `fs.mkdirSync(rootDir, { recursive: true })`, so a
// caller sees Node's own error: its code, `syscall: 'mkdir'`, and the whole
// sessions path, whichever component was in the way. Each case is set up
// twice, alike; Node's call runs on one copy and the package on the other.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { PACKAGE_ENTRY, makeProject, removeDir, figure, mountTmpfs, remount, unmount } from './helpers.mjs';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const SESSIONS = path.join('.impeccable', 'live', 'sessions');

/**
 * In a child (switched to `uid` when given, once the package is loaded): Node's `mkdirSync` of the sessions dir
 * under `nodeCwd`, and the package's `createLiveSessionStore` at `ourCwd`;
 * each error's code, errno, syscall and message, with the copy's own
 * directory replaced by `<p>` in paths.
 */
function both(nodeCopy, nodeCwd, ourCopy, ourCwd, uid) {
  const script = `
    const fs = require('node:fs');
    const [entry, nodeCopy, nodeCwd, ourCopy, ourCwd, sessions, uid] = process.argv.slice(1);
    // The package loads first, as root: a checkout in a private directory
    // (under /root, say) is not readable by the user the calls then run as.
    const { createLiveSessionStore } = require(entry);
    if (uid) { process.setgid(Number(uid)); process.setuid(Number(uid)); }
    const shape = (copy, f) => {
      try { f(); return null; } catch (e) {
        const rel = (s) => String(s).split(copy).join('<p>');
        return { code: e.code, errno: e.errno, syscall: e.syscall, path: rel(e.path), message: rel(e.message) };
      }
    };
    const node = shape(nodeCopy, () => fs.mkdirSync(require('node:path').join(nodeCwd, sessions), { recursive: true }));
    const ours = shape(ourCopy, () => createLiveSessionStore({ cwd: ourCwd }));
    process.stdout.write(JSON.stringify({ node, ours }));`;
  const r = spawnSync(process.execPath, ['-e', script, PACKAGE_ENTRY, nodeCopy, nodeCwd, ourCopy, ourCwd, SESSIONS, uid ?? ''], {
    encoding: 'utf8', timeout: 30_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** Each case: how to spoil a project, and the cwd to open it at. */
const CASES = {
  'cwd under a regular file': (p) => { fs.writeFileSync(path.join(p, 'file'), ''); return path.join(p, 'file', 'sub'); },
  '.impeccable is a file': (p) => { fs.writeFileSync(path.join(p, '.impeccable'), ''); return p; },
  '.impeccable/live is a file': (p) => { fs.mkdirSync(path.join(p, '.impeccable')); fs.writeFileSync(path.join(p, '.impeccable', 'live'), ''); return p; },
  'sessions is a file': (p) => { fs.mkdirSync(path.join(p, '.impeccable', 'live'), { recursive: true }); fs.writeFileSync(path.join(p, SESSIONS), ''); return p; },
  'a name too long': (p) => path.join(p, 'x'.repeat(300)),
  '.impeccable is a symlink loop': (p) => { fs.symlinkSync('.impeccable', path.join(p, '.impeccable')); return p; },
  '.impeccable is a dangling symlink': (p) => { fs.symlinkSync('nowhere', path.join(p, '.impeccable')); return p; },
};

function compare(label, spoil, { uid, prepare } = {}) {
  const a = makeProject('mkdir-node');
  const b = makeProject('mkdir-ours');
  try {
    const [cwdA, cwdB] = [spoil(a), spoil(b)];
    prepare?.(a, b);
    const { node, ours } = both(a, cwdA, b, cwdB, uid);
    assert.ok(node, `${label}: Node's mkdirSync succeeded; the case does not stand`);
    assert.deepEqual(ours, node, label);
    return node.code;
  } finally {
    removeDir(a);
    removeDir(b);
  }
}

test('a file, a link or a long name in the way: the error Node\'s mkdirSync(dir, { recursive: true }) throws', () => {
  const codes = Object.entries(CASES).map(([label, spoil]) => `${label}: ${compare(label, spoil)}`);
  figure(`mkdir errors as Node's: ${codes.join('; ')}`);
});

test('no permission to make the sessions directory: EACCES as Node throws it', (t) => {
  if (!isRoot) {
    t.skip('needs root to run a case as another user (root may write anywhere)');
    return;
  }
  const code = compare('EACCES', (p) => p, { uid: 65534, prepare: (...copies) => copies.forEach((c) => fs.chmodSync(c, 0o555)) });
  assert.equal(code, 'EACCES');
});

test('a read-only file system: the error Node\'s mkdirSync throws', (t) => {
  const a = makeProject('rofs-node');
  const b = makeProject('rofs-ours');
  const mounted = [];
  try {
    for (const dir of [a, b]) {
      const why = mountTmpfs(dir, '1m');
      if (why) {
        t.skip(why);
        return;
      }
      mounted.push(dir);
      fs.mkdirSync(path.join(dir, '.git'));
      const again = remount(dir, 'ro');
      if (again) {
        t.skip(again);
        return;
      }
    }
    const { node, ours } = both(a, a, b, b);
    assert.ok(node);
    assert.deepEqual(ours, node);
    figure(`read-only file system: ${node.code}, as Node's mkdirSync`);
  } finally {
    for (const dir of mounted) unmount(dir);
    removeDir(a);
    removeDir(b);
  }
});
