import { hexId, longEvent, phaseAfterLong, journalOf } from '../lib/events.mjs';
import { probeFloor, NOTES, MISSES, row, fmt, CFG, alternateColdReplays } from '../lib/harness.mjs';

/** Cold replay of a 20,000-event journal of generation rounds. */
export async function run(impls) {
  const id = hexId(4);
  const n = CFG.replayEvents;
  const { dirs, out, res } = await alternateColdReplays(impls, 'replay', id, { n, gen: longEvent }, CFG.replayRounds);
  const floor = probeFloor('replay', { journal: journalOf(dirs.native, id) });
  row(`cold replay, ${n.toLocaleString('en-US')} events (µs/event)`, {
    old: res.js && res.js / n, native: res.native / n,
    // Validation alone: every line must at least be checked (a bad one becomes a diagnostic).
    floor: floor ? fmt(floor.validate) : null, floorValue: floor?.validate ?? null,
  });
  if (floor) {
    NOTES.push(`cold replay floor (probeFloor replay, same journal): validating each line ${fmt(floor.validate)} µs/event; ` +
      `this package's parser ${fmt(floor.ours)}; its whole replay ${fmt(floor.replay)} (no Node-API), of which the reducer ` +
      `alone ${fmt(floor.reduce)}.`);
  }
  const expect = phaseAfterLong(id, n);
  if (out.native.snapshot?.phase !== expect) MISSES.push(`cold replay: native phase ${out.native.snapshot?.phase}, expected ${expect}`);
  NOTES.push(`cold replay ${n}: whole replay ${fmt(res.native / 1000)} ms native` + (res.js ? `, ${fmt(res.js / 1000)} ms old` : '') + '.');
}
