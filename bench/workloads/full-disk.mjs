import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { hexId, journalOf, snapshotOf } from '../lib/events.mjs';
import { removeDir, NOTES, MISSES, row, QUICK } from '../lib/harness.mjs';

// tmpfs allocates whole pages: a write needs a new one only past the end of
// the file's last page, which is what lets a round fill the disk and still
// leave the journal room for its line.
const PAGE = 4096;
// Room for both implementations' sessions over every round (each round adds
// about a page to each journal) with the filler taking the rest.
const TMPFS_SIZE = '1m';
const ROUNDS = QUICK ? 5 : 20;
// Longer than the room a small snapshot file leaves in its page, shorter
// than the room a journal page holds after its first 200 bytes.
const FIELD_CHARS = 2600;
const LABEL = 'full disk at the snapshot rewrite';

/**
 * What a full disk does to an append, the old module beside native, in
 * counts: each round brings a session to where its journal's last page has
 * room for the next line but the snapshot file's rewrite needs a page more,
 * fills the disk, and appends an event with a long field. An append that
 * throws after its line is journaled invites a retry that records the event
 * twice; a snapshot file rewritten in place is left cut short. Needs Linux
 * and root (it mounts a tmpfs); elsewhere it says why and adds no rows.
 */
export async function run(impls) {
  const disk = mountScratchDisk();
  if (disk.skipped) {
    NOTES.push(`full-disk: skipped, cannot mount a tmpfs (${disk.skipped}).`);
    return;
  }
  const kinds = Object.keys(impls);
  const tally = {};
  try {
    const sessions = {};
    for (const impl of kinds) {
      const dir = path.join(disk.dir, impl);
      fs.mkdirSync(path.join(dir, '.git'), { recursive: true });
      sessions[impl] = { dir, id: hexId(40), store: impls[impl].createLiveSessionStore({ cwd: dir }) };
      tally[impl] = { threwJournaled: 0, threwBefore: 0, partial: 0, missing: 0, lost: 0, readerThrew: 0, setupMissed: 0, codes: new Set() };
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const impl of kinds) fullDiskRound(impls[impl], sessions[impl], path.join(disk.dir, 'filler'), round, tally[impl]);
    }
  } finally {
    disk.remove();
  }
  const rounds = `rounds of ${ROUNDS}, not µs`;
  const count = (key) => ({
    old: tally.js ? String(tally.js[key]) : null,
    native: String(tally.native[key]),
    ratio: null,
    check: { text: 'native 0', met: tally.native[key] === 0 },
  });
  row(`${LABEL}: appends that threw after their line was journaled, so a retry records the event twice (${rounds})`, count('threwJournaled'));
  row(`${LABEL}: snapshot files left partial or empty, not parseable JSON (${rounds})`, count('partial'));
  row(`${LABEL}: events a replay by a fresh store does not show (events of ${ROUNDS}, not µs)`, count('lost'));
  const said = (k) => {
    const t = tally[k];
    const codes = t.codes.size ? ` (${[...t.codes].join(', ')})` : '';
    return `${k === 'js' ? 'old' : k}: ${t.threwJournaled + t.threwBefore} appends threw${codes}, ` +
      `${t.threwBefore} of them before journaling, ${t.missing} snapshot files missing, ${t.readerThrew} fresh-store reads threw`;
  };
  NOTES.push(`full-disk: a ${TMPFS_SIZE} tmpfs, one session per implementation, ${ROUNDS} rounds alternating, each appending a ` +
    `${FIELD_CHARS}-character field to a full disk; ${kinds.map(said).join('; ')}.`);
  for (const k of kinds) {
    if (tally[k].setupMissed) {
      MISSES.push(`full-disk (${k === 'js' ? 'old' : k}): ${tally[k].setupMissed} of ${ROUNDS} rounds did not leave the journal line room in its page with the snapshot rewrite needing a page more`);
    }
  }
}

/**
 * One round on one session: set up, fill the disk, append, look at what the
 * append left, free the disk, and put a whole snapshot file back.
 */
function fullDiskRound(mod, { dir, id, store }, filler, round, t) {
  const journal = journalOf(dir, id);
  const snapshot = snapshotOf(dir, id);
  store.appendEvent({ id, type: 'steer', pageUrl: 'http://app.test/' });
  // A journal ending at 0 mod PAGE has no room in a page; past 200 bytes a
  // page may not hold the long line.
  for (let size = fs.statSync(journal).size; size % PAGE === 0 || size % PAGE > 200; size = fs.statSync(journal).size) {
    store.appendEvent({ id, type: 'variant_mounted', variant: round + 1 });
  }
  const journalBefore = fs.statSync(journal).size;
  const snapshotBefore = fs.statSync(snapshot).size;
  const url = `http://app.test/${'x'.repeat(FIELD_CHARS)}`;
  fillDisk(filler);
  try {
    let threw = false;
    try {
      store.appendEvent({ id, type: 'steer', pageUrl: url });
    } catch (error) {
      threw = true;
      t.codes.add(error.code ?? error.message);
    }
    const journaled = lastLineCarries(journal, journalBefore, url);
    if (threw) t[journaled ? 'threwJournaled' : 'threwBefore']++;
    if (!fs.existsSync(snapshot)) t.missing++;
    else if (!parses(fs.readFileSync(snapshot, 'utf8'))) t.partial++;
    // Read while the disk is still full, as another process would. An
    // append that threw before journaling told its caller; it is not lost.
    if (journaled || !threw) {
      try {
        if (mod.createLiveSessionStore({ cwd: dir }).getSnapshot(id, { includeCompleted: true })?.pageUrl !== url) t.lost++;
      } catch {
        t.readerThrew++;
        t.lost++;
      }
    }
    const lineBytes = fs.statSync(journal).size - journalBefore;
    fs.rmSync(filler, { force: true });
    // flush writes the snapshot file the failed rewrite would have written.
    mod.createLiveSessionStore({ cwd: dir }).flush(id);
    const lineFit = lineBytes > 0 && (journalBefore % PAGE) + lineBytes <= PAGE;
    const rewriteGrew = Math.ceil(fs.statSync(snapshot).size / PAGE) > Math.ceil(snapshotBefore / PAGE);
    if (!lineFit || !rewriteGrew) t.setupMissed++;
  } finally {
    fs.rmSync(filler, { force: true });
  }
}

/** True when the journal grew past `before` by one line whose event carries `url`. */
function lastLineCarries(journal, before, url) {
  const text = fs.readFileSync(journal, 'utf8');
  if (Buffer.byteLength(text) <= before) return false;
  const lines = text.trimEnd().split('\n');
  try {
    return JSON.parse(lines[lines.length - 1]).event?.pageUrl === url;
  } catch {
    return false;
  }
}

function parses(text) {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Appends to `file` until the file system has no page left to give. */
function fillDisk(file) {
  const fd = fs.openSync(file, 'a');
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(512));
  } catch (error) {
    if (error.code !== 'ENOSPC') throw error;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A tmpfs of TMPFS_SIZE at a fresh temp dir outside the harness's temp root
 * (whose removal at exit would stop at a mount point), unmounted and removed
 * by `remove`, or at exit when a SIGINT ends the run first; or `skipped`, why not.
 */
function mountScratchDisk() {
  if (process.platform !== 'linux') return { skipped: `not Linux (${process.platform})` };
  if (process.getuid() !== 0) return { skipped: 'not running as root' };
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-bench-full-disk-'));
  const dir = path.join(base, 'mnt');
  fs.mkdirSync(dir);
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE},mode=0755`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) {
    removeDir(base);
    return { skipped: `mount -t tmpfs failed: ${`${r.stdout ?? ''}${r.stderr ?? ''}${r.error?.message ?? ''}`.trim()}` };
  }
  const remove = () => {
    process.off('exit', remove);
    if (spawnSync('umount', [dir]).status !== 0) spawnSync('umount', ['-l', dir]);
    removeDir(base);
  };
  process.on('exit', remove);
  return { dir, remove };
}
