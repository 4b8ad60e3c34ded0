import { hexId, longEvent, writeJournal, journalOf } from '../lib/events.mjs';
import { project, removeDir, alternate, row, fmt, CFG, coldReplay } from '../lib/harness.mjs';

/** Native µs/event of cold replays at growing journal lengths: flat (largest against cheapest ≤ 1.5). */
export async function run(impls) {
  const id = hexId(5);
  const sizes = CFG.scale;
  const per = {};
  for (const n of sizes) {
    const dir = project(`scale-${n}`);
    writeJournal(journalOf(dir, id), id, n, longEvent);
    per[n] = (await alternate({ native: () => coldReplay(impls.native, dir, id) / n })).native;
    removeDir(dir);
  }
  const largest = sizes[sizes.length - 1];
  const spread = per[largest] / Math.min(...Object.values(per));
  for (const n of sizes) {
    const last = n === largest;
    row(`cold replay, native only, ${n.toLocaleString('en-US')} events (µs/event)`, {
      native: per[n],
      check: last ? { text: `flat (largest/cheapest ≤ 1.5; is ${fmt(spread)})`, met: spread <= 1.5 } : null,
    });
  }
}
