// The live server's events, as it journals them, and journals written
// straight to disk: what every workload appends and replays.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const TRAFFIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'traffic');

/** The names live-server.mjs records for `agent_phase`, in lifecycle order. */
export const AGENT_PHASES = ['picked_up', 'scaffolding', 'source_ready', 'scaffold_fallback', 'generation_ready',
  'first_reviewable', 'second_reviewable', 'all_variants_ready'];
/** The synthetic names an earlier bench used (they hid a cost of the real ones). */
export const SYNTHETIC_PHASES = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'];

export const BASE_TS = Date.parse('2025-06-01T10:00:00.000Z');
export const TOKEN = '6f1c2b9e-4d7a-4e8b-9a35-2c1d0e7f8a94';
export const OWNER = 'browser-3fa94c21';
const PAGE = '/pricing';
const SOURCE = 'src/components/Hero.jsx';

/** Session id `n` (n < 2^32): 8 hex characters, as the browser's id8() makes them; distinct for distinct n. */
export const hexId = (n) => (Math.imul(n + 1, 0x9e3779b1) >>> 0).toString(16).padStart(8, '0');

/** The element context the browser sends with `generate` (live-browser.js extractContext). */
const ELEMENT = {
  tagName: 'section', id: null, classes: ['hero', 'hero--dark'],
  textContent: 'Simple pricing for teamsStart free, upgrade when your team grows.Start free trial',
  outerHTML: '<section class="hero hero--dark"><h1 class="hero__title">Simple pricing for teams</h1><p class="hero__lede">Start free, upgrade when your team grows.</p><a class="button button--primary" href="/signup">Start free trial</a></section>',
  computedStyles: {
    'font-family': 'Inter, system-ui, sans-serif', 'font-size': '16px', 'font-weight': '400', 'line-height': '1.5',
    color: 'rgb(241, 245, 249)', background: 'rgb(15, 23, 42) none repeat scroll 0% 0% / auto padding-box border-box',
    'background-color': 'rgb(15, 23, 42)', padding: '96px 48px', margin: '0px', display: 'flex', position: 'relative',
    gap: '24px', 'border-radius': '0px', 'box-shadow': 'none',
  },
  cssCustomProperties: { '--brand': '#4f46e5', '--brand-ink': '#eef2ff', '--radius': '12px', '--space-4': '16px' },
  parentContext: '<main class="page page--pricing">', boundingRect: { width: 1280, height: 420 },
};

/** An element with neither id nor classes: the preflight cannot locate it (`insufficient_locator`). */
const HEADING = {
  ...ELEMENT, tagName: 'h2', classes: [], textContent: 'Choose your plan', outerHTML: '<h2>Choose your plan</h2>',
  parentContext: '<div class="plans">', boundingRect: { width: 1120, height: 48 },
};

/** What the generation preflight (live-wrap.mjs) hands back, which the server adds to the generate event. */
function scaffold(id, count) {
  const examples = Array.from({ length: count }, (_, i) => `@scope ([data-impeccable-variant="${i + 1}"]) { :scope > .variant-class { ... } }`);
  return {
    file: SOURCE, sourceWritten: false,
    wrapperBlock: `    <div data-impeccable-variants="${id}" data-impeccable-variant-count="${count}" style={{ display: "contents" }}>\n` +
      `      {/* impeccable-variants-start ${id} */}\n      {/* Original */}\n      <div data-impeccable-variant="original">\n` +
      '        <section className="hero hero--dark">\n          <h1 className="hero__title">Simple pricing for teams</h1>\n' +
      '          <p className="hero__lede">Start free, upgrade when your team grows.</p>\n' +
      '          <a className="button button--primary" href="/signup">Start free trial</a>\n        </section>\n      </div>\n' +
      `      {/* Variants: insert below this line */}\n      {/* impeccable-variants-end ${id} */}\n    </div>`,
    replaceStartLine: 3, replaceEndLine: 7, startLine: 3, endLine: 15, insertLine: 13,
    commentSyntax: { open: '{/*', close: '*/}' }, styleMode: 'scoped', styleTag: '<style data-impeccable-css="SESSION_ID">',
    cssSelectorPrefixExamples: [],
    cssAuthoring: {
      mode: 'scoped', styleTag: '<style data-impeccable-css="SESSION_ID">', strategy: 'scope-rule',
      rulePattern: examples[0].replace('"1"', '"N"'), selectorExamples: examples,
      requirements: ['Use @scope blocks keyed to each [data-impeccable-variant="N"] wrapper.', 'Use the styleTag exactly.'],
      forbidden: ['Do not use global [data-impeccable-variant="N"] selector prefixes for this styleMode.'],
    },
    originalLineCount: 5,
  };
}

/**
 * One generation round of session `id`, as the server journals it: the
 * browser's generate and its first checkpoint; the agent's poll (picked_up,
 * scaffolding, the generate again with the scaffold, source_ready, the
 * generate again with generationReadyAt, generation_ready); per arriving
 * variant a browser checkpoint, the *_reviewable phase the server derives from
 * it, and a mount ack; the agent's done; then `tune` param changes. With
 * `fallback` (every other round by default) the element is one the preflight
 * cannot locate: scaffoldError and scaffold_fallback instead of the scaffold
 * and source_ready, as in every generation of the reference's suites. Round `g`
 * continues the browser's revisions of round g - 1, so nothing is stale and no
 * diagnostics accumulate: a session repeating rounds keeps a bounded snapshot.
 */
export function generation(id, g = 0, { count = 3, tune = 6, fallback = g % 2 === 1 } = {}) {
  const t0 = BASE_TS + g * 60_000;
  let rev = g * (1 + count + tune);
  let k = 0;
  const at = () => t0 + 250 * k++;
  const checkpoint = (reason, phase, arrived, visible, paramValues) => ({
    token: TOKEN, type: 'checkpoint', id, revision: ++rev, revisionDomain: 'browser', owner: OWNER, reason, pageUrl: PAGE,
    phase, expectedVariants: count, arrivedVariants: arrived, visibleVariant: visible,
    ...(arrived ? { sourceFile: SOURCE, previewMode: 'source' } : {}), paramValues,
  });
  const phase = (name, extra) => ({ type: 'agent_phase', id, phase: name, at: at(), ...extra });
  const generate = { token: TOKEN, type: 'generate', id, action: 'bolder', count, pageUrl: PAGE, element: fallback ? HEADING : ELEMENT };
  const scaffolded = fallback
    ? { ...generate, scaffoldAttempted: true, scaffoldDurationMs: null, scaffoldError: 'insufficient_locator' }
    : { ...generate, scaffoldAttempted: true, scaffoldDurationMs: 431.7, scaffold: scaffold(id, count) };
  const out = [
    generate,
    checkpoint('generate_started', 'generating', 0, 0, {}),
    phase('picked_up'),
    phase('scaffolding'),
    scaffolded,
    phase(fallback ? 'scaffold_fallback' : 'source_ready', { durationMs: fallback ? null : 431.7, previewMode: 'source' }),
    { ...scaffolded, generationReadyAt: t0 + 900 },
    phase('generation_ready'),
  ];
  for (let n = 1; n <= count; n++) {
    const reason = n < count ? 'variants_progress' : 'variants_ready';
    out.push(checkpoint(reason, 'generating', n, 1, {}));
    const progress = { arrivedVariants: n, expectedVariants: count, checkpointReason: reason };
    if (n === 1) out.push(phase('first_reviewable', progress));
    else if (n === 2 && count >= 3) out.push(phase('second_reviewable', progress));
    if (n === count && n > 1) out.push(phase('all_variants_ready', progress));
    out.push({ token: TOKEN, type: 'variant_mounted', id, variant: n, url: `/${SOURCE}?t=${at()}` });
  }
  out.push({ type: 'agent_done', id, file: SOURCE, sourceEventType: 'generate', carbonize: false });
  const params = { weight: 600, accent: 'indigo', density: 'comfortable' };
  for (let i = 0; i < tune; i++) {
    params.weight = 400 + ((g + i) % 5) * 100;
    if (i % 3 === 2) params.density = params.density === 'compact' ? 'comfortable' : 'compact';
    out.push(checkpoint('param_changed', 'cycling', count, 1 + (i % count), { ...params }));
  }
  return out;
}
export const GENERATION_LENGTH = generation('00000000').length;

/** A whole session as the server's day sees them; `kind` picks how it ends. */
export function sessionEvents(id, kind) {
  if (kind === 'steer') {
    const message = 'Less padding above the title, please';
    const cp = (revision, reason, extra) => ({
      token: TOKEN, type: 'checkpoint', id, revision, revisionDomain: 'browser', owner: OWNER, phase: 'steer', reason, pageUrl: PAGE, ...extra,
    });
    return [
      { token: TOKEN, type: 'steer', id, message, pageUrl: `http://localhost:5173${PAGE}` },
      cp(1, 'steer_input_focused', { focused: true }),
      cp(2, 'steer_submitted', { message }),
      { type: 'steer_done', id, message: 'Tightened the hero spacing', sourceEventType: 'steer', carbonize: false },
      cp(3, 'steer_done', { message: 'Tightened the hero spacing', file: '' }),
    ];
  }
  if (kind === 'discard') {
    return [...generation(id, 0, { count: 4, tune: 3, fallback: true }),
      { token: TOKEN, type: 'discard', id },
      { type: 'discarded', id, file: SOURCE, sourceEventType: 'discard', carbonize: false }];
  }
  const round = generation(id, 0);
  return [...round,
    { token: TOKEN, type: 'accept', id, variantId: '2', pageUrl: PAGE, clientSentAt: BASE_TS + 20_000, paramValues: round[round.length - 1].paramValues },
    { type: 'complete', id, file: SOURCE, sourceEventType: 'accept', carbonize: false }];
}
export const SESSION_KINDS = ['accept', 'steer', 'accept', 'discard'];

/** Event `i` of one long session that keeps regenerating (generation rounds back to back). */
export function longEvent(id, i) {
  const g = Math.floor(i / GENERATION_LENGTH);
  const key = `${id}/${g}`;
  if (longEvent.key !== key) { longEvent.key = key; longEvent.round = generation(id, g); }
  return longEvent.round[i % GENERATION_LENGTH];
}

/** The phase a replay of `n` longEvent events ends in. */
export function phaseAfterLong(id, n) {
  let phase = 'new';
  for (const e of generation(id, Math.floor((n - 1) / GENERATION_LENGTH)).slice(0, ((n - 1) % GENERATION_LENGTH) + 1)) {
    if (e.type === 'generate') phase = 'generate_requested';
    else if (e.type === 'checkpoint') phase = e.phase;
    else if (e.type === 'agent_done') phase = 'variants_ready';
  }
  return phase;
}

/** agent_phase events only, cycling through `names`. */
export const phaseEvent = (names) => (id, i) => ({ type: 'agent_phase', id, phase: names[i % names.length], at: BASE_TS + i * 250, durationMs: 40 + (i % 7) });

/** A checkpoint nobody else sends (a raw line appended by a foreign writer). */
export const foreignCheckpoint = (id, i) => ({
  token: TOKEN, type: 'checkpoint', id, revision: 1_000_000 + i, revisionDomain: 'browser', owner: OWNER, reason: 'param_changed',
  pageUrl: PAGE, phase: 'cycling', expectedVariants: 3, arrivedVariants: 3, visibleVariant: 1 + (i % 3),
  sourceFile: SOURCE, previewMode: 'source', paramValues: { weight: 500 + (i % 5) * 100, accent: 'indigo', density: 'comfortable' },
});

export function journalLine(seq, event, at = BASE_TS + (seq - 1) * 1000) {
  return JSON.stringify({ seq, id: event.id, type: event.type, ts: new Date(at).toISOString(), event }) + '\n';
}

/** Writes `n` events from `gen(id, i)` straight into a journal, as appendEvent would have. */
export function writeJournal(file, id, n, gen) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  try {
    let chunk = '';
    for (let i = 0; i < n; i++) {
      chunk += journalLine(i + 1, gen(id, i));
      if (chunk.length > 1 << 22) { fs.writeSync(fd, chunk); chunk = ''; }
    }
    if (chunk) fs.writeSync(fd, chunk);
  } finally {
    fs.closeSync(fd);
  }
}

export const sessionsDir = (root) => path.join(root, '.impeccable', 'live', 'sessions');
export const journalOf = (root, id) => path.join(sessionsDir(root), `${id}.jsonl`);
export const snapshotOf = (root, id) => path.join(sessionsDir(root), `${id}.snapshot.json`);

/** The recorded journals of bench/traffic/: name, session id, lines, events. */
export function loadTraffic() {
  if (!fs.existsSync(TRAFFIC_DIR)) return [];
  return fs.readdirSync(TRAFFIC_DIR).filter((n) => n.endsWith('.jsonl')).sort().map((n) => {
    const text = fs.readFileSync(path.join(TRAFFIC_DIR, n), 'utf8');
    const entries = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    return { name: n.slice(0, -'.jsonl'.length), id: entries[0].id, text, events: entries.map((e) => e.event) };
  });
}
