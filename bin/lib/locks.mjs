// Source locks as the store judges them: the verdict is the binding's
// (lock::judge in the core), so the CLI never keeps a lock the store would
// sweep, nor sweeps one it would keep. The record is read here only to show it.

import fs from 'node:fs';
import path from 'node:path';
import { unknownVerdict } from './errors.mjs';
import { span } from './output.mjs';
import { binding, listDir } from './project.mjs';

/** A lock record is one short line; more than this is not one. */
const RECORD_READ_LIMIT = 64 * 1024;

/**
 * How each of the binding's lock verdicts (`LockVerdict`) is shown: its
 * state, and why it is held or stale (`pid` is the record's); null for a
 * lock that is gone. The age limit of unreadable locks is the binding's.
 */
export function lockWords(b) {
  const V = b.LockVerdict;
  const limit = span(b.LOCK_UNREADABLE_STALE_MS);
  return new Map([
    [V.Absent, null],
    [V.OwnerAlive, { state: 'alive', reason: () => null }],
    [V.UnreadableFresh, { state: 'unreadable', reason: () => `unreadable, younger than ${limit} (may be mid-write)` }],
    [V.UnreadableOld, { state: 'unreadable', reason: () => `unreadable and older than ${limit}` }],
    [V.OwnerGone, { state: 'dead', reason: (pid) => `pid ${pid} is not running` }],
    [V.NoNumericPid, { state: 'no pid', reason: () => 'no numeric pid' }],
    [V.EarlierBoot, { state: 'earlier boot', reason: () => 'written during an earlier boot' }],
    [V.PidReused, { state: 'pid reused', reason: (pid) => `pid ${pid} now belongs to another process (started after the lock was written)` }],
  ]);
}

/** The record as JSON.parse reads it, or null. */
function readRecord(file) {
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
    const buf = Buffer.alloc(RECORD_READ_LIMIT);
    const record = JSON.parse(buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0)).toString('utf8'));
    return record && typeof record === 'object' ? record : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** One lock: the binding's verdict and the record's fields; null when it is gone. */
function inspectLock(file, now, words) {
  const { verdict, stale } = binding().judgeLock(file);
  if (!words.has(verdict)) throw unknownVerdict('lock', verdict, file);
  const shown = words.get(verdict);
  if (!shown) return null;
  const stat = fs.lstatSync(file, { throwIfNoEntry: false });
  const held = readRecord(file) ?? {};
  const pid = typeof held.pid === 'number' ? held.pid : null;
  const at = typeof held.at === 'number' ? held.at : null;
  return {
    file,
    name: path.basename(file),
    owner: held.owner ?? null,
    pid,
    token: typeof held.token === 'string' ? held.token : null,
    source: typeof held.file === 'string' ? held.file : null,
    at,
    verdict,
    state: shown.state,
    stale,
    reason: shown.reason(pid),
    ageMs: at !== null ? now - at : stat ? now - stat.mtimeMs : null,
  };
}

export function inspectLocks(dirs, now = Date.now()) {
  const words = lockWords(binding());
  return listDir(dirs.locksDir)
    .filter((name) => name.endsWith(dirs.layout.lockSuffix))
    .map((name) => inspectLock(path.join(dirs.locksDir, name), now, words))
    .filter(Boolean);
}

/**
 * Removes a lock listed as stale if the store, judging it again now, still
 * does (and it is still the file judged): `removed`, `already gone`, or
 * `kept` when it is no longer stale (replaced, or its owner is back).
 */
export function removeStaleLock(lock) {
  if (binding().clearStaleLock(lock.file)) return 'removed';
  return fs.existsSync(lock.file) ? 'kept' : 'already gone';
}
