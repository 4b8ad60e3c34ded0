import { hexId, sessionsDir } from '../lib/events.mjs';
import { project, removeDir, perOp, alternate, probeFloor, NOTES, row, fmt, CFG } from '../lib/harness.mjs';

/**
 * A helper process's first call: open a store on a project whose sessions
 * directory holds 20,000 sessions (40,000 files: a journal and a snapshot
 * file each) and read one session. Every helper (live-complete, live-status,
 * live-resume) does this once; nothing on that path may grow with the
 * directory.
 */
export async function run(impls) {
  const sessions = CFG.openSessions;
  const dir = project('open');
  // The sessions, written by the native store (its snapshot files are the
  // old module's bytes): one event each.
  const writer = impls.native.createLiveSessionStore({ cwd: dir });
  for (let s = 0; s < sessions; s++) writer.appendEvent({ id: hexId(50_000 + s), type: 'generate', count: 3, pageUrl: '/pricing', action: 'bolder' });
  const id = hexId(50_000 + Math.floor(sessions / 2));
  const n = CFG.openOps;
  const res = await alternate(Object.fromEntries(Object.entries(impls).map(([k, mod]) => [k, () => perOp(n, () => mod.createLiveSessionStore({ cwd: dir }).getSnapshot(id))])));
  const probe = probeFloor('read', { sessions: sessionsDir(dir) });
  row(`open a store and getSnapshot one session, ${sessions.toLocaleString('en-US')} sessions (${(2 * sessions).toLocaleString('en-US')} files) in the directory`, {
    old: res.js, native: res.native,
    floor: probe ? `${fmt(probe.read)} (stat & read, from Rust)` : null,
    floorValue: probe?.read ?? null,
    check: res.js != null ? { text: '≤ 1.2x old', met: res.native <= 1.2 * res.js } : null,
  });
  NOTES.push(`open: ${n} (createLiveSessionStore + getSnapshot) per round in one process, the project root resolved each time (a .git stops the walk); ` +
    'floor = probeFloor read, a stat of a journal and a read of its snapshot file, per session of the directory.');
  removeDir(dir);
}
