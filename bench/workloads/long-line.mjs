import fs from 'node:fs';
import path from 'node:path';
import { BASE_TS, hexId, journalLine, journalOf, snapshotOf } from '../lib/events.mjs';
import { project, removeDir, median, NOTES, MISSES, row, fmt, loadavg, runChild } from '../lib/harness.mjs';

/** A 200 MiB line: --quick leaves it out unless --big. */
export const heavy = true;

/**
 * A journal of one 200 MiB line (a generate event carrying a long note),
 * read by a fresh store in a child process; the two modules alternate, and
 * the snapshot file each read writes is removed before the next.
 */
export async function run(impls, liveDir) {
  const id = hexId(9);
  const dir = project('long-line');
  const file = journalOf(dir, id);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const unit = 'Lorem ipsum dolor sit amet, "consectetur" adipiscing elit — sed do eiusmod tempor incididunt. ';
  const note = unit.repeat(Math.ceil(200 * 2 ** 20 / Buffer.byteLength(unit)));
  fs.writeFileSync(file, journalLine(1, { type: 'generate', id, count: 3, note }, BASE_TS));
  const bytes = fs.statSync(file).size;
  const ms = { native: [], js: [] };
  const kinds = impls.js ? ['native', 'js'] : ['native'];
  for (let round = 0; round < 3; round++) {
    for (const impl of kinds) {
      fs.rmSync(snapshotOf(dir, id), { force: true });
      const res = runChild(['big', JSON.stringify({ impl, liveDir, dir, id })]);
      if (res.error || res.nextSeq !== 2) MISSES.push(`long line (${impl}): ${res.error ?? `__nextSeq ${res.nextSeq}`}`);
      else ms[impl].push(res.ms);
    }
  }
  const range = (xs) => (xs.length ? `${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))}` : '—');
  const old = ms.js.length ? median(ms.js) : null;
  const native = ms.native.length ? median(ms.native) : null;
  // A guard, not a speed budget: on this input both modules spend most of
  // their time in V8's parse of the line, and a drop-in replacement must not
  // make its caller wait noticeably longer than the module it replaces.
  row(`cold getSnapshot of a journal holding one ${(bytes / 2 ** 20).toFixed(0)} MiB line, fresh store in a child (ms, not µs)`, {
    old, native, unit: 'ms', check: { text: '≤ 1.25x old', met: old == null || native == null ? null : native <= 1.25 * old },
  });
  NOTES.push(`long line: ${kinds.length * 3} child processes, modules alternating; native ${range(ms.native)} ms, old ${range(ms.js)} ms; load average ${loadavg()}.`);
  removeDir(dir);
}
