import { TOKEN, OWNER, hexId } from '../lib/events.mjs';
import { row, CFG, alternateColdReplays } from '../lib/harness.mjs';

/** Half the events are stale checkpoints, so diagnostics grow with the journal (the old module's copy per event makes it quadratic). */
export async function run(impls) {
  const id = hexId(6);
  const n = CFG.staleEvents;
  const stale = (sid, i) => (i % 2 === 0
    ? { token: TOKEN, type: 'checkpoint', id: sid, revision: i / 2 + 1, revisionDomain: 'browser', owner: OWNER, reason: 'param_changed', phase: 'cycling', visibleVariant: 1 }
    : { token: TOKEN, type: 'checkpoint', id: sid, revision: 0, revisionDomain: 'browser', owner: 'browser-77c0e1d2', reason: 'browser_resumed', phase: 'generating' });
  const { res } = await alternateColdReplays(impls, 'stale', id, { n, gen: stale });
  row(`replay, ${n.toLocaleString('en-US')} events, half stale checkpoints (µs/event)`, { old: res.js && res.js / n, native: res.native / n });
}
