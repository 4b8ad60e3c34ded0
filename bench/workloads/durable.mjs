import { hexId, longEvent } from '../lib/events.mjs';
import { project, perOp, alternate, row, fmt, CFG } from '../lib/harness.mjs';

/** durable: true (fsync per append) against the default, native only. */
export async function run(impls) {
  const id = hexId(9);
  const ctx = {};
  for (const durable of [false, true]) {
    const dir = project(`durable-${durable}`);
    const store = impls.native.createLiveSessionStore({ cwd: dir, durable });
    store.appendEvent(longEvent(id, 0));
    ctx[durable] = { dir, store, i: 0 };
  }
  const n = CFG.durableOps;
  const run = (d) => () => perOp(n, () => ctx[d].store.appendEvent(longEvent(id, ++ctx[d].i)));
  const res = await alternate({ default: run(false), durable: run(true) });
  row('appendEvent, native default (same run as durable)', { native: res.default });
  row('appendEvent, native `durable: true`', { native: res.durable, ratio: `${fmt(res.durable / res.default)}x cost` });
}
