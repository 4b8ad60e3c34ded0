import fs from 'node:fs';
import path from 'node:path';
import { hexId, generation } from '../lib/events.mjs';
import { project, perOp, perOpWith, nextTurn, alternate, probeFloor, NOTES, MISSES, row, fmt, CFG } from '../lib/harness.mjs';

/** listActiveSessions over 500 sessions (each at variants-arriving), warm and from a fresh store. µs per session. */
export async function run(impls) {
  const count = CFG.listSessions;
  const ctx = {};
  for (const [k, mod] of Object.entries(impls)) {
    const dir = project(`list-${k}`);
    const store = mod.createLiveSessionStore({ cwd: dir });
    for (let s = 0; s < count; s++) {
      const id = hexId(1000 + s);
      for (const e of generation(id).slice(0, 12)) store.appendEvent(e);
    }
    const warm = mod.createLiveSessionStore({ cwd: dir });
    const listed = warm.listActiveSessions();
    if (listed.length !== count) MISSES.push(`list: ${k} listed ${listed.length} of ${count}`);
    ctx[k] = { dir, warm, mod };
  }
  const warm = await alternate({
    native: () => perOp(CFG.listWarmOps, () => ctx.native.warm.listActiveSessions()) / count,
    js: ctx.js ? () => perOp(CFG.listWarmOps, () => ctx.js.warm.listActiveSessions()) / count : null,
  });
  const freshRun = (k) => async () => {
    const { mod, dir } = ctx[k];
    let store;
    const release = async () => {
      store = null;
      await nextTurn();
      store = mod.createLiveSessionStore({ cwd: dir });
    };
    return await perOpWith(CFG.listFreshOps, release, () => store.listActiveSessions()) / count;
  };
  // The floor of a fresh listing: what any store must do per session before
  // it hands out the snapshot, i.e. stat the journal and read the snapshot
  // file (from Rust, in the native project, so file sizes are the package's
  // own), and make its JS objects, which V8's JSON.parse of the file's text
  // does fastest.
  const rootDir = ctx.native.warm.rootDir;
  const texts = fs.readdirSync(rootDir).filter((n) => n.endsWith('.snapshot.json')).map((n) => fs.readFileSync(path.join(rootDir, n), 'utf8'));
  const parse = () => perOp(1, () => texts.forEach((text) => JSON.parse(text))) / texts.length;
  const fresh = await alternate({ native: freshRun('native'), js: ctx.js ? freshRun('js') : null, parse });
  const probe = probeFloor('read', { sessions: rootDir });
  const floorValue = probe ? probe.read + fresh.parse : null;
  row(`listActiveSessions, ${count} sessions, warm (µs/session)`, { old: warm.js, native: warm.native });
  row(`listActiveSessions, ${count} sessions, fresh store (µs/session)`, {
    old: fresh.js, native: fresh.native,
    floor: probe ? `${fmt(floorValue)} (stat & read ${fmt(probe.read)} + JSON.parse ${fmt(fresh.parse)})` : `JSON.parse ${fmt(fresh.parse)}`,
    floorValue,
  });
  NOTES.push('listActiveSessions fresh = a new store each call, its construction and a turn of the event loop between calls untimed; floor = a stat of each journal and a read of its ' +
    'snapshot file from Rust (probeFloor read) + V8\'s JSON.parse of that text, per session (the old module pays the parse too, from its own reads).');
}
