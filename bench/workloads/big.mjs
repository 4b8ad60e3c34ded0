import fs from 'node:fs';
import path from 'node:path';
import { BASE_TS, hexId, longEvent, phaseAfterLong, journalLine, journalOf, snapshotOf } from '../lib/events.mjs';
import { project, removeDir, now, usSince, NOTES, MISSES, row, fmt, log, runChild } from '../lib/harness.mjs';

/** A 600 MiB journal: --quick leaves it out unless --big. */
export const heavy = true;

/** A 600 MiB journal, replayed in a child process; peak RSS. */
export async function run(impls, liveDir) {
  const id = hexId(8);
  const dir = project('big');
  const file = journalOf(dir, id);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const target = 600 * 1024 * 1024;
  const pad = ('Lorem ipsum dolor sit amet, "consectetur" adipiscing elit — sed do eiusmod tempor incididunt. ').repeat(21).slice(0, 2000);
  const t0 = now();
  const fd = fs.openSync(file, 'w');
  let bytes = 0;
  let n = 0;
  let chunk = '';
  let lastTs = '';
  while (bytes < target) {
    const at = BASE_TS + n * 1000;
    const line = journalLine(n + 1, { ...longEvent(id, n), note: pad }, at);
    chunk += line;
    bytes += Buffer.byteLength(line);
    n++;
    lastTs = new Date(at).toISOString();
    if (chunk.length > 1 << 23) { fs.writeSync(fd, chunk); chunk = ''; }
  }
  if (chunk) fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  log(`big: wrote ${n.toLocaleString('en-US')} lines, ${(bytes / 2 ** 20).toFixed(0)} MiB in ${(usSince(t0) / 1e6).toFixed(1)} s`);

  const res = runChild(['big', JSON.stringify({ impl: 'native', dir, id })]);
  const expectPhase = phaseAfterLong(id, n);
  const problems = [];
  if (res.error) problems.push(res.error);
  if (res.phase !== expectPhase) problems.push(`phase ${res.phase}, expected ${expectPhase}`);
  if (res.updatedAt !== lastTs) problems.push(`updatedAt ${res.updatedAt}, expected ${lastTs}`);
  if (res.nextSeq !== n + 1) problems.push(`__nextSeq ${res.nextSeq}, expected ${n + 1}`);
  if (res.diagnostics !== 0) problems.push(`${res.diagnostics} diagnostics, expected 0`);
  const verified = problems.length === 0;
  if (!verified) MISSES.push(`600 MiB replay: ${problems.join('; ')}`);
  const peakMb = res.peakRssKb / 1024;
  row(`${(bytes / 2 ** 20).toFixed(0)} MiB journal (${n.toLocaleString('en-US')} events) replay, peak RSS of the child (MB, not µs)`, {
    native: peakMb, check: { text: '< 64 MB', met: verified && peakMb < 64 }, ratio: 'old fails',
  });
  NOTES.push(`600 MiB replay (native): ${fmt(res.ms)} ms (${fmt(res.ms * 1000 / n)} µs/event), peak RSS ${fmt(peakMb)} MB by ${res.peakFrom} ` +
    `(node + module before the replay: ${fmt(res.baseRssKb / 1024)} MB RSS); replayed snapshot ${verified ? `verified (phase ${res.phase}, __nextSeq ${res.nextSeq}, updatedAt = last ts, no diagnostics)` : `WRONG: ${problems.join('; ')}`}.`);
  if (impls.js) {
    fs.rmSync(snapshotOf(dir, id), { force: true }); // written by the native child's flush
    const old = runChild(['big', JSON.stringify({ impl: 'js', liveDir, dir, id })]);
    NOTES.push(`600 MiB replay (old module): ${old.error ? `throws "${old.error}"` : `phase ${old.phase} in ${fmt(old.ms)} ms`} (peak RSS ${fmt(old.peakRssKb / 1024)} MB).`);
  }
  removeDir(dir);
}

/** In the child process: a fresh store's first getSnapshot of `opts.id` in `opts.dir`, timed, with the RSS it took. */
export async function child(opts, mod) {
  const baseRssKb = Math.round(process.memoryUsage().rss / 1024);
  const store = mod.createLiveSessionStore({ cwd: opts.dir });
  const t0 = now();
  let snap;
  try {
    snap = store.getSnapshot(opts.id);
  } catch (err) {
    console.log(JSON.stringify({ error: `${err.name}: ${err.message}`, maxRssKb: process.resourceUsage().maxRSS }));
    return;
  }
  const ms = usSince(t0) / 1000;
  const maxRssKb = process.resourceUsage().maxRSS;
  // flush writes the snapshot file from the replay just made; its __nextSeq
  // says how many entries the replay counted.
  store.flush(opts.id);
  const file = JSON.parse(fs.readFileSync(snapshotOf(opts.dir, opts.id), 'utf8'));
  console.log(JSON.stringify({
    ms, baseRssKb, maxRssKb, phase: snap?.phase, updatedAt: snap?.updatedAt, nextSeq: file.__nextSeq,
    diagnostics: snap?.diagnostics?.length,
  }));
}
