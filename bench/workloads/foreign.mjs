import fs from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { hexId, longEvent, foreignCheckpoint, journalLine, journalOf, snapshotOf } from '../lib/events.mjs';
import { perOpWith, alternate, MISSES, row, CFG, journalProjects } from '../lib/harness.mjs';

/**
 * A reader holding a 10,000-event session catches up after a foreign writer
 * appended one raw line without touching the snapshot file (the old module
 * replays the whole journal).
 */
export async function run(impls) {
  const id = hexId(7);
  const n = CFG.foreignEvents;
  const dirs = journalProjects(impls, 'foreign', id, { n, gen: longEvent });
  const ctx = {};
  for (const [k, mod] of Object.entries(impls)) {
    const reader = mod.createLiveSessionStore({ cwd: dirs[k] });
    reader.getSnapshot(id);
    ctx[k] = { reader, i: 0, seq: n + 1, dir: dirs[k] };
  }
  const run = (k) => () => {
    const c = ctx[k];
    const jp = journalOf(c.dir, id);
    return perOpWith(CFG.foreignOps[k], () => {
      fs.appendFileSync(jp, journalLine(c.seq, foreignCheckpoint(id, ++c.i), Date.now()));
      c.seq++;
    }, () => c.reader.getSnapshot(id));
  };
  const res = await alternate({ native: run('native'), js: impls.js ? run('js') : null });
  // The reader must see what a fresh store replaying the journal sees.
  for (const [k, mod] of Object.entries(impls)) {
    fs.rmSync(snapshotOf(ctx[k].dir, id), { force: true });
    const want = mod.createLiveSessionStore({ cwd: ctx[k].dir }).getSnapshot(id);
    const got = ctx[k].reader.getSnapshot(id);
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(want)), JSON.parse(JSON.stringify(got)))) {
      MISSES.push(`foreign: ${k} reader disagrees with a fresh replay`);
    }
  }
  row(`catch-up read after a raw 1-line foreign append (snapshot file stale), ${n.toLocaleString('en-US')}-event journal`, {
    old: res.js, native: res.native,
  });
}
