// A fixed set of live sessions, written event by event at fixed times, by the
// old JS module (gen-old-fixture.mjs, or live with QUIVER_REFERENCE_DIR) and by
// this package; `quiver-live status` must print the same for both.

import { installFakeDate } from './fake-clock.mjs';

export const BASE = Date.UTC(2025, 4, 1, 10, 0, 0);
/** The CLI's clock when comparing outputs. */
export const NOW = BASE + 2 * 3600 * 1000;

const at = (seconds) => BASE + seconds * 1000;

/** [time, event] in the order they are appended. */
export const STEPS = [
  [at(0), { id: 'alpha', type: 'generate', count: 3, pageUrl: '/pricing', action: 'bolder', token: 'tok-alpha' }],
  [at(5), { id: 'alpha', type: 'agent_phase', phase: 'picked_up' }],
  [at(20), { id: 'alpha', type: 'variant_plan', plan: [{ variant: 1, idea: 'stacked' }, { variant: 2, idea: 'split' }] }],
  [at(60), { id: 'alpha', type: 'variants_ready', sourceFile: 'src/Pricing.jsx', arrivedVariants: 3 }],
  [at(62), { id: 'alpha', type: 'variant_mounted', variant: 2 }],
  [at(63), { id: 'alpha', type: 'variant_mounted', variant: 1 }],
  [at(64), { id: 'alpha', type: 'checkpoint', revision: 2, phase: 'variants_ready', owner: 'tab-1', visibleVariant: 2 }],
  [at(65), { id: 'alpha', type: 'checkpoint', revision: 1, phase: 'generating' }],
  [at(100), { id: 'charlie', type: 'generate', count: 2, pageUrl: '/about' }],
  [at(200), { id: 'charlie', type: 'variants_ready' }],
  [at(210), { id: 'charlie', type: 'variant_mount_failed', variant: 1, url: '/v1.jsx', error: 'SyntaxError: x' }],
  [at(300), { id: 'delta', type: 'generate', count: 1 }],
  [at(400), { id: 'delta', type: 'variants_ready' }],
  [at(500), { id: 'delta', type: 'complete', sourceFile: 'src/Delta.jsx' }],
  [at(600), { id: 'echo', type: 'steer', pageUrl: '/contact', message: 'tighter spacing' }],
  [at(610), { id: 'echo', type: 'agent_error', message: 'boom' }],
  [at(3000), { id: 'bravo', type: 'generate', count: 2, pageUrl: '/' }],
  [at(7000), { id: 'charlie', type: 'accept', variantId: 2, paramValues: { size: 'lg' } }],
];

/** Appends every step through `store.appendEvent`, with the clock at the step's time. */
export function writeScenario(store) {
  let now = BASE;
  const restore = installFakeDate(() => now);
  try {
    for (const [time, event] of STEPS) {
      now = time;
      store.appendEvent(structuredClone(event));
    }
  } finally {
    restore();
  }
}

/** The journal lines the old module writes for the scenario, by hand: `JSON.stringify(entry) + '\n'`. */
export function expectedJournals() {
  const journals = {};
  const seqs = {};
  for (const [time, event] of STEPS) {
    const seq = (seqs[event.id] = (seqs[event.id] ?? 0) + 1);
    const entry = { seq, id: event.id, type: event.type, ts: new Date(time).toISOString(), event: { ...event, id: event.id } };
    journals[event.id] = (journals[event.id] ?? '') + JSON.stringify(entry) + '\n';
  }
  return journals;
}
