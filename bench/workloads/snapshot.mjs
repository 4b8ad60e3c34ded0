import fs from 'node:fs';
import { hexId, longEvent, journalOf } from '../lib/events.mjs';
import { project, perOp, alternate, NOTES, row, CFG } from '../lib/harness.mjs';

/** getSnapshot when nothing changed. */
export async function run(impls) {
  const id = hexId(3);
  const stores = {};
  for (const [k, mod] of Object.entries(impls)) {
    const dir = project(`snapshot-${k}`);
    const store = mod.createLiveSessionStore({ cwd: dir });
    for (let i = 0; i < 30; i++) store.appendEvent(longEvent(id, i));
    store.getSnapshot(id);
    stores[k] = { dir, store };
  }
  const jp = journalOf(stores.native.dir, id);
  const n = CFG.snapshotOps;
  const run = (k) => () => {
    const { store } = stores[k];
    return perOp(n, () => store.getSnapshot(id));
  };
  const res = await alternate({
    native: run('native'),
    js: stores.js ? run('js') : null,
    floor: () => perOp(n, () => fs.statSync(jp)),
  });
  row('getSnapshot, nothing changed', { old: res.js, native: res.native, floor: res.floor });
  NOTES.push('getSnapshot floor = one fs.statSync of the journal from JS (the check both implementations must make).');
}
