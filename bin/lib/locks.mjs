// Source locks as the store judges them: the verdict is the binding's
// (lock::judge in the core), so the CLI never keeps a lock the store would
// sweep, nor sweeps one it would keep. The record is read here only to show it.

import fs from 'node:fs';
import path from 'node:path';
import { binding, listDir } from './project.mjs';

/** A lock record is one short line; more than this is not one. */
const RECORD_READ_LIMIT = 64 * 1024;

/** What each verdict is shown as, and why it is stale (`pid` is the record's). */
const VERDICTS = {
  owner_alive: { state: 'alive', reason: () => null },
  unreadable_fresh: { state: 'unreadable', reason: () => 'unreadable, younger than 60 s (may be mid-write)' },
  unreadable_old: { state: 'unreadable', reason: () => 'unreadable and older than 60 s' },
  owner_gone: { state: 'dead', reason: (pid) => `pid ${pid} is not running` },
  no_numeric_pid: { state: 'no pid', reason: () => 'no numeric pid' },
  earlier_boot: { state: 'earlier boot', reason: () => 'written during an earlier boot' },
  pid_reused: { state: 'pid reused', reason: (pid) => `pid ${pid} now belongs to another process (started after the lock was written)` },
};

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
function inspectLock(file, now) {
  const { verdict, stale } = binding().judgeLock(file);
  const shown = VERDICTS[verdict];
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
  return listDir(dirs.locksDir)
    .filter((name) => name.endsWith('.lock'))
    .map((name) => inspectLock(path.join(dirs.locksDir, name), now))
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
