// The source lock's contract: path, exclusivity, release, errors, staleness.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { native, tempProject } from './helpers.mjs';

const { withSourceLockSync, sourceLockPath } = native;

test('sourceLockPath: <root>/.impeccable/live/locks/<24 hex of sha256(abs file)>.lock', () => {
  const dir = tempProject();
  const digest = createHash('sha256').update(path.join(dir, 'src/App.jsx')).digest('hex').slice(0, 24);
  assert.equal(sourceLockPath('src/App.jsx', dir), path.join(dir, '.impeccable', 'live', 'locks', digest + '.lock'));
  assert.equal(sourceLockPath(path.join(dir, 'src/App.jsx'), dir), sourceLockPath('src/App.jsx', dir));
});

test('fn runs under the lock, its value comes back, the lock is gone after', () => {
  const dir = tempProject();
  const lockPath = sourceLockPath('a.css', dir);
  const value = withSourceLockSync('a.css', { who: 'test' }, () => {
    const held = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
    assert.deepEqual(Object.keys(held).slice(0, 5), ['owner', 'token', 'pid', 'at', 'file']);
    assert.deepEqual(held.owner, { who: 'test' });
    assert.equal(held.pid, process.pid);
    assert.equal(held.file, path.join(dir, 'a.css'));
    return { ok: 1 };
  }, { cwd: dir });
  assert.deepEqual(value, { ok: 1 });
  assert.equal(fs.existsSync(lockPath), false);
});

test('anything fn throws comes out unchanged and the lock is released', () => {
  const dir = tempProject();
  for (const thrown of [new RangeError('x'), 'a string', 42, null, undefined, { custom: true }]) {
    let caught = Symbol('none');
    try {
      withSourceLockSync('f', 'me', () => { throw thrown; }, { cwd: dir });
    } catch (err) {
      caught = err;
    }
    assert.equal(caught, thrown);
    assert.equal(fs.existsSync(sourceLockPath('f', dir)), false);
  }
});

test('a nested acquire of the same file is refused with SOURCE_LOCKED', () => {
  const dir = tempProject();
  withSourceLockSync('f', 'outer', () => {
    assert.throws(() => withSourceLockSync('f', 'inner', () => 1, { cwd: dir }), (err) => {
      assert.equal(err.message, 'source_locked');
      assert.equal(err.code, 'SOURCE_LOCKED');
      assert.equal(err.lockPath, sourceLockPath('f', dir));
      return true;
    });
    assert.equal(withSourceLockSync('g', 'other file', () => 2, { cwd: dir }), 2);
  }, { cwd: dir });
});

test('a lock held by a dead pid is taken at once; a live one is waited for', () => {
  const dir = tempProject();
  const lockPath = sourceLockPath('f', dir);
  fs.mkdirSync(path.dirname(lockPath), { recursive: true });
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  fs.writeFileSync(lockPath, JSON.stringify({ owner: 'ghost', token: 't', pid: Number(dead.stdout), at: Date.now(), file: 'f' }) + '\n');
  assert.equal(withSourceLockSync('f', 'me', () => 'took it', { cwd: dir }), 'took it');

  fs.writeFileSync(lockPath, JSON.stringify({ owner: 'alive', token: 't', pid: process.pid, at: Date.now(), file: 'f' }) + '\n');
  const started = Date.now();
  assert.throws(() => withSourceLockSync('f', 'me', () => 1, { cwd: dir, waitMs: 60, retryMs: 10 }), { code: 'SOURCE_LOCKED' });
  assert.ok(Date.now() - started >= 55, 'waited for waitMs');
  assert.equal(fs.existsSync(lockPath), true, 'a live holder keeps its lock');
  fs.rmSync(lockPath);
});

test('release leaves a lock that another acquisition replaced', () => {
  const dir = tempProject();
  const lockPath = sourceLockPath('f', dir);
  withSourceLockSync('f', 'me', () => {
    fs.writeFileSync(lockPath, JSON.stringify({ owner: 'other', token: 'not-ours', pid: process.pid, at: Date.now(), file: 'f' }) + '\n');
  }, { cwd: dir });
  assert.equal(JSON.parse(fs.readFileSync(lockPath, 'utf8')).token, 'not-ours');
});

test('non-string file or cwd throws like path.resolve', () => {
  assert.throws(() => withSourceLockSync(5, 'me', () => 1), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => sourceLockPath('f', 7), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
});

// path.resolve asks for process.cwd() only when it needs it, so an absolute
// cwd option keeps working after the process's own cwd was deleted.
test('an absolute cwd works even when the process cwd is gone', {
  skip: process.platform === 'win32' && 'Windows does not remove a directory that is a process\'s cwd (EBUSY)',
}, () => {
  const dir = tempProject();
  const gone = fs.mkdtempSync(path.join(path.dirname(dir), 'qln-gone-'));
  const script = `
    const n = require(${JSON.stringify(path.resolve('index.js'))});
    process.chdir(${JSON.stringify(gone)});
    require('node:fs').rmdirSync(${JSON.stringify(gone)});
    const out = {
      path: n.sourceLockPath('a.css', ${JSON.stringify(dir)}),
      value: n.withSourceLockSync('a.css', 'me', () => 7, { cwd: ${JSON.stringify(dir)} }),
      phase: n.createLiveSessionStore({ cwd: ${JSON.stringify(dir)} }).appendEvent({ type: 'generate', id: 's1' }).phase,
    };
    let relative, resolved;
    try { n.sourceLockPath('a.css', 'rel'); relative = 'no error'; } catch (e) { relative = e.message; }
    try { require('node:path').resolve('rel'); resolved = 'no error'; } catch (e) { resolved = e.message; }
    process.stdout.write(JSON.stringify({ ...out, relative, resolved }));
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.path, sourceLockPath('a.css', dir));
  assert.equal(out.value, 7);
  assert.equal(out.phase, 'generate_requested');
  assert.notEqual(out.resolved, 'no error');
  assert.equal(out.relative, out.resolved, 'a relative cwd needs the process cwd: the error is the one path.resolve throws');
});

test("the record's file is JSON.stringify of the resolved path, a lone surrogate escaped", () => {
  const dir = tempProject();
  const file = path.join(dir, 'x\ud800y.css');
  withSourceLockSync(file, null, () => {
    const text = fs.readFileSync(sourceLockPath(file, dir), 'utf8');
    assert.ok(text.includes(',"file":' + JSON.stringify(file)), text);
    assert.equal(JSON.parse(text).file, file);
  }, { cwd: dir });
});
