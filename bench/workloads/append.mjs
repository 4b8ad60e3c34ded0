import { hexId, GENERATION_LENGTH, longEvent } from '../lib/events.mjs';
import { project, perOp, alternate, probeFloor, lastAppendOf, NOTES, MISSES, row, fmt, CFG } from '../lib/harness.mjs';

/** appendEvent to one session that keeps regenerating: the server's generation rounds back to back. */
export async function run(impls) {
  const id = hexId(1);
  const stores = {};
  for (const [k, mod] of Object.entries(impls)) {
    const dir = project(`append-${k}`);
    const store = mod.createLiveSessionStore({ cwd: dir });
    for (let i = 0; i < GENERATION_LENGTH; i++) store.appendEvent(longEvent(id, i));
    stores[k] = { dir, store, i: GENERATION_LENGTH - 1 };
  }
  const n = CFG.appendOps;
  const run = (k) => () => {
    const s = stores[k];
    const events = Array.from({ length: n }, () => longEvent(id, ++s.i)); // built untimed
    return perOp(n, (j) => s.store.appendEvent(events[j]));
  };
  // The object appendEvent returns, built the cheapest generic way JS has
  // (V8's JSON.parse of its compact JSON): part of the floor.
  const objectText = JSON.stringify(stores.native.store.getSnapshot(id));
  const res = await alternate({
    native: run('native'),
    js: stores.js ? run('js') : null,
    object: () => perOp(n, () => JSON.parse(objectText)),
  });
  if (stores.js) {
    const a = stores.native.store.getSnapshot(id);
    const b = stores.js.store.getSnapshot(id);
    if (a.phase !== b.phase || a.browserCheckpointRevision !== b.browserCheckpointRevision || a.diagnostics.length !== b.diagnostics.length) {
      MISSES.push('append: native and old snapshots differ after the same events');
    }
  }
  const last = lastAppendOf(stores.native.dir, id);
  const probe = probeFloor('append', last);
  row(`appendEvent, one session, the server's generation rounds (${GENERATION_LENGTH} events each, agent_phase names as recorded)`, {
    old: res.js, native: res.native,
    floor: probe ? `${fmt(probe.guarded + probe.render + res.object)} (disk ${fmt(probe.guarded)} + render ${fmt(probe.render)} + object ${fmt(res.object)})` : null,
    floorValue: probe ? probe.guarded + probe.render + res.object : null,
  });
  NOTES.push(`appendEvent: the events of generation(), rounds alternating between an element found in source and one not: generate ×3 ` +
    `(about 1.2 KB with the element context, 3.2 KB with the scaffold), 10 checkpoints, 7 agent_phase, ` +
    `3 mount acks, agent_done. Floor (probeFloor append, on the package's last line, ${last.line.length} B, and snapshot file, ${last.snapshot.length} B): ` +
    `disk work with this package's guarantees ${probe ? fmt(probe.guarded) : '—'} µs (without them: ${probe ? fmt(probe.inPlace) : '—'}), ` +
    `rendering the line and snapshot ${probe ? fmt(probe.render) : '—'}, V8's JSON.parse of the returned snapshot ${fmt(res.object)}.`);
}
