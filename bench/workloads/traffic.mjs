import { TRAFFIC_DIR, loadTraffic } from '../lib/events.mjs';
import { project, removeDir, now, usSince, alternate, NOTES, MISSES, row, CFG, journalProjects, coldReplay, checkSame } from '../lib/harness.mjs';

/**
 * The journals recorded from the reference's server (bench/traffic/): their
 * events re-appended through appendEvent into a fresh store (fresh project
 * each time, set up untimed; timestamps differ, the work is the same), and the
 * journal itself replayed cold.
 */
export async function run(impls) {
  const traffic = loadTraffic();
  if (!traffic.length) {
    NOTES.push(`traffic: no journals in ${TRAFFIC_DIR}`);
    return;
  }
  for (const t of traffic) {
    const reps = Math.max(1, Math.round(CFG.trafficAppends / t.events.length));
    const last = {};
    const appendRound = (k) => () => {
      let total = 0;
      for (let r = 0; r < reps; r++) {
        const dir = project(`traffic-${k}`);
        const store = impls[k].createLiveSessionStore({ cwd: dir });
        const t0 = now();
        for (const e of t.events) store.appendEvent(e);
        total += usSince(t0);
        last[k] = store.getSnapshot(t.id, { includeCompleted: true });
        removeDir(dir);
      }
      return total / (reps * t.events.length);
    };
    const app = await alternate({ native: appendRound('native'), js: impls.js ? appendRound('js') : null });
    if (last.js && (last.native.phase !== last.js.phase || last.native.diagnostics.length !== last.js.diagnostics.length)) {
      MISSES.push(`traffic ${t.name}: native and old snapshots differ after the same appends`);
    }
    const dirs = journalProjects(impls, `traffic-replay-${t.name}`, t.id, { text: t.text });
    const out = { native: {}, js: {} };
    const replayRound = (k) => () => {
      let total = 0;
      for (let r = 0; r < CFG.trafficReplays; r++) total += coldReplay(impls[k], dirs[k], t.id, out[k]);
      return total / CFG.trafficReplays;
    };
    const rep = await alternate({ native: replayRound('native'), js: impls.js ? replayRound('js') : null });
    checkSame(`traffic ${t.name} replay`, out.native.snapshot, out.js.snapshot);
    for (const dir of Object.values(dirs)) removeDir(dir);
    const label = `traffic ${t.name} (${t.events.length} events, ${(t.text.length / 1024).toFixed(1)} KiB)`;
    row(`${label}: appendEvent (µs/event)`, { old: app.js, native: app.native });
    row(`${label}: cold replay (µs/replay)`, { old: rep.js, native: rep.native });
  }
  NOTES.push(`traffic: ${traffic.length} journals from bench/traffic/; appendEvent re-appends each journal's events into a fresh project and store (untimed setup), ` +
    `repeated to about ${CFG.trafficAppends} appends per round; cold replay = a new store's first getSnapshot over the journal, snapshot file removed, ` +
    `${CFG.trafficReplays} per round.`);
}
