// Seeded generators of operation sequences for the differential harness.
//
// A sequence is `{ tier, seed, layout, ops }`. Every op is plain JSON: values
// that JSON cannot carry (undefined, NaN, -0, BigInt, cycles, own `__proto__`
// keys, ...) go through encodeValue() and are rebuilt by the runner with
// decodeValue(), so a sequence read back from a fixture replays exactly.
//
// Ops (see transcript.mjs for how each one is applied):
//   { op: 'create' | 'restart', options }     new store instance on the same project
//   { op: 'append', args, detached? }         store.appendEvent(...args)
//   { op: 'otherAppend', args }               appendEvent through a second, long-lived store
//   { op: 'getSnapshot', args, detached? }    store.getSnapshot(...args)
//   { op: 'flush', args, detached? }          store.flush(...args)
//   { op: 'has', args, detached? }            store.has(...args)
//   { op: 'list' }                            store.listActiveSessions()
//   { op: 'deleteSnapshot', id }              rm <sessions>/<id>.snapshot.json
//   { op: 'editSnapshot', id, edit }          rewrite <sessions>/<id>.snapshot.json
//   { op: 'writeJournal', id, dir, bytes }    append raw bytes to <dir>/<id>.jsonl
//   { op: 'writeFile', path, bytes }          write any file under the project root

import { encodeValue, encodeBytes, fromRecipe, recipeOf } from './encode.mjs';
import { nativeVocabulary } from './vocabulary.mjs';

// ---------------------------------------------------------------------------
// PRNG: sfc32 seeded through splitmix32, so nearby seeds diverge immediately.
// ---------------------------------------------------------------------------

export function makeRng(seed) {
  let s = (Number(seed) >>> 0) || 0x9e3779b9;
  function splitmix() {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  }
  let a = splitmix(), b = splitmix(), c = splitmix(), d = splitmix();
  function next() {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  }
  const rng = {
    next,
    int(n) { return Math.floor(next() * n); },
    range(lo, hi) { return lo + Math.floor(next() * (hi - lo + 1)); },
    chance(p) { return next() < p; },
    pick(arr) { return arr[Math.floor(next() * arr.length)]; },
    /** weighted([[w, value], ...]) */
    weighted(entries) {
      let total = 0;
      for (const [w] of entries) total += w;
      let r = next() * total;
      for (const [w, v] of entries) {
        if ((r -= w) < 0) return v;
      }
      return entries[entries.length - 1][1];
    },
    /** Call thunk-valued picks. */
    pickCall(arr) { return arr[Math.floor(next() * arr.length)](); },
  };
  return rng;
}

export const TIERS = ['realistic', 'adversarial'];

/**
 * The types `event()` builds field by field; others get the fields their case
 * reads. A type missing here is only generated more often.
 */
const GENERATED_TYPES = new Set(['generate', 'variant_plan', 'detector_waivers', 'agent_phase', 'variants_ready', 'agent_done',
  'variant_mounted', 'variant_mount_failed', 'checkpoint', 'accept', 'accept_intent', 'discard', 'discarded', 'complete', 'steer',
  'steer_done', 'carbonize_cleanup', 'manual_edit_apply', 'agent_error']);

const AGENT_PHASES = ['picked_up', 'scaffolding', 'source_ready', 'scaffold_fallback', 'generation_ready',
  'first_reviewable', 'second_reviewable', 'all_variants_ready'];
const ACTIONS = ['impeccable', 'bolder', 'quieter', 'distill', 'polish', 'typeset', 'colorize', 'layout',
  'adapt', 'animate', 'delight', 'overdrive'];
const CHECKPOINT_REASONS = ['generate_started', 'variants_progress', 'variants_ready', 'browser_resumed',
  'browser_resumed_svelte_component', 'param_changed', 'variant_anchor_missing', 'steer_input_focused',
  'steer_submitted', 'steer_done', 'steer_error'];
const BROWSER_STATES = ['generating', 'cycling', 'idle', 'picking', 'steer', 'variants_ready', 'confirmed',
  'accept_requested', 'completed', 'discarded'];
const PAGES = ['/', '/pricing', '/blog/hello-world', '/about', '/docs/getting-started'];
const SOURCE_FILES = ['src/components/Hero.tsx', 'src/pages/index.astro', 'src/routes/+page.svelte',
  'app/page.tsx', 'index.html'];
const PREVIEW_MODES = ['source', 'component', 'svelte-component', 'insert'];
/**
 * Classes of value a caller can pass, drawn for every field the reference's
 * reducer reads (see fieldValue). Realistic callers send plain data, numbers
 * as text and dates; adversarial ones anything a JavaScript caller can hold.
 */
export const VALUE_CLASSES = {
  realistic: ['plain', 'plain', 'plain', 'plain', 'numericString', 'lossy', 'date'],
  adversarial: ['plain', 'numericString', 'jsonHostile', 'valueOf', 'toString', 'throwValueOf', 'throwToString', 'symbol', 'bigint',
    'date', 'url', 'buffer', 'typed', 'map', 'set', 'toJSON', 'lossy', 'mixed', 'proxy', 'reentrant', 'frozen',
    'cyclic', 'huge-sparse'],
};
const NUMERIC_STRINGS = [' 0x10 ', '0b11', '1e1', '', ' 3 ', '0o7', '-0', '+5', ' \n2\t', 'Infinity', '0x', '.5', '1_0', '2'];
const UNKNOWN_TYPES = ['exit', 'prefetch', 'manual_edits', 'error', 'done', 'Generate', 'agent-done'];

/**
 * Layouts of the temporary project. `cwd` is where the store is created, `root`
 * where the sessions directories must end up (both relative to the project dir).
 */
export const LAYOUTS = {
  plain: { cwd: '.', root: '.', files: [] },
  subdir: { cwd: 'src/app', root: 'src/app', files: [] },
  npmWorkspace: {
    cwd: 'packages/web/src',
    root: 'packages/web',
    files: [
      ['package.json', '{"name":"mono","private":true,"workspaces":["packages/*"]}\n'],
      ['packages/web/package.json', '{"name":"web"}\n'],
    ],
  },
  pnpmWorkspace: {
    cwd: 'apps/site',
    root: 'apps/site',
    files: [
      ['pnpm-workspace.yaml', "packages:\n  - 'apps/*' # apps\n"],
      ['apps/site/package.json', '{"name":"site"}\n'],
    ],
  },
};

/**
 * Default generator options. Live runs use these; the fixture generator
 * passes smaller limits so the committed files stay small.
 */
/** Keys a spread string may make: wide enough for an object's key table. */
const WIDE_SPREAD = 4096;

export const DEFAULT_OPTIONS = {
  ops: 30,
  // Size of a "big" string, and how many a sequence may carry.
  bigStringBytes: 8 * 1024 * 1024,
  maxBigStrings: 1,
  // Deep nesting in fields that stay in the journal only, and in fields that
  // are copied into the snapshot (and so are pretty-printed into its file).
  journalDepth: 2000,
  snapshotDepth: 2000,
  // false: a raw line without newline is always terminated (by a raw write)
  // before the store appends to that journal again. The old module glues the
  // next append onto a torn tail; the port is required not to.
  tornAppend: false,
  // What the reducer knows: event types and base snapshot fields (see
  // vocabulary.mjs). The harness passes the old module's when it has it, so a
  // type or field added upstream is exercised before it is ported.
  vocabulary: null,
  // The value classes fields read by the reducer are drawn from (default:
  // the tier's VALUE_CLASSES); narrowing them separates one divergence from
  // another while triaging.
  valueClasses: null,
  // Event types to send more often (about 4 events in 10): the cases a port
  // just changed. Snapshot files are then corrupted more often, half the
  // time in a field those cases read.
  focusTypes: null,
};

export function generateSequence(tier, seed, options = {}) {
  if (!TIERS.includes(tier)) throw new Error(`unknown tier ${tier}`);
  const opt = { ...DEFAULT_OPTIONS, ...options };
  opt.vocabulary ??= nativeVocabulary();
  const rng = makeRng(seed ^ (tier === 'adversarial' ? 0x5a5a5a5a : 0));
  const adv = tier === 'adversarial';
  const g = new Gen(rng, adv, opt);
  g.build();
  const coverage = {};
  for (const [type, fields] of Object.entries(g.coverage)) {
    coverage[type] = Object.fromEntries(Object.entries(fields).map(([f, classes]) => [f, [...classes].sort()]));
  }
  return { tier, seed, layout: g.layoutName, ops: g.ops, coverage };
}

class Gen {
  constructor(rng, adv, opt) {
    this.rng = rng;
    this.adv = adv;
    this.opt = opt;
    this.ops = [];
    // Big strings and very deep values are rare: a few adversarial sequences
    // carry one (forceBigString places one for sure).
    this.forceBig = !!opt.forceBigString;
    this.bigLeft = !this.forceBig && adv && rng.chance(0.1) ? opt.maxBigStrings : 0;
    this.deepLeft = adv && rng.chance(0.12) ? 1 : 0;
    this.sessions = [];
    this.storeSessionId = undefined;
    this.coverage = {};
    this.pools = this.makePools();
  }

  // -- values that meet ---------------------------------------------------

  /**
   * Small pools drawn once per sequence, a second source of values beside
   * the wide draws: a few keys, strings, numbers (revisions and variant ids
   * at equal and adjacent values), numeric strings and revision domains,
   * so that successive events send the same keys with different values,
   * revisions meet in both domains, and a variant comes twice. Values
   * drawn afresh for each event rarely do, and a wrong merge order or a
   * merge in the wrong domain shows only where they do.
   */
  makePools() {
    const rng = this.rng;
    const few = (n, draw) => {
      const out = [];
      for (let tries = 0; out.length < n && tries < 50; tries++) {
        const v = draw();
        if (!out.includes(v)) out.push(v);
      }
      return out;
    };
    const words = ['a', 'b', 'c', 'mode', 'radius', 'tone', 'x', 'y', 'width', 'theme'];
    const first = rng.range(0, 2);
    return {
      keys: few(3, () => (this.adv && rng.chance(0.3) ? this.oddKey() : rng.pick(words))),
      strings: few(3, () => rng.pick([...PAGES, 'warm', 'cool', 'x', '', ...(this.opt.vocabulary.literals ?? []).filter((l) => /^[a-z_]{1,30}$/.test(l))])),
      numbers: [first, first + 1, first + 2],
      variants: few(2, () => rng.range(1, 4)),
      numericStrings: few(3, () => rng.pick(NUMERIC_STRINGS)),
      domains: rng.chance(0.6) ? ['browser', 'publication'] : ['publication', 'browser', rng.pick(['unknown', undefined])],
      // The kind of plain value each field last took (see meetValue).
      kinds: new Map(),
    };
  }

  /** An object of one to three of the pooled keys, in any order, holding pooled values. */
  pooledObject() {
    const rng = this.rng;
    const keys = [...this.pools.keys];
    for (let i = keys.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [keys[i], keys[j]] = [keys[j], keys[i]];
    }
    keys.length = rng.range(1, keys.length);
    const o = {};
    for (const k of keys) {
      const value = rng.chance(0.5) ? rng.pick(this.pools.numbers) : rng.pick(this.pools.strings);
      Object.defineProperty(o, k, { value, enumerable: true, writable: true, configurable: true });
    }
    return o;
  }

  /**
   * A value of class `cls` for `field` built from the sequence's pools; a
   * class with no parts to pool is drawn as fieldValue draws it. A plain
   * value is an object for a field the old module spreads (`spread`), else
   * mostly of the kind (number, string, object) the field's last one took,
   * so an object a field carried meets the next one's keys.
   */
  meetValue(s, field, spread, cls = this.rng.pick(this.opt.valueClasses ?? VALUE_CLASSES[this.adv ? 'adversarial' : 'realistic'])) {
    const rng = this.rng;
    const p = this.pools;
    const r = (recipe) => fromRecipe(recipe);
    switch (cls) {
      case 'plain': {
        const kinds = { number: () => rng.pick(p.numbers), string: () => rng.pick([...p.strings, ...p.domains]), object: () => this.pooledObject() };
        const kind = spread ? 'object' : p.kinds.get(field) && rng.chance(0.8) ? p.kinds.get(field) : rng.pick(['number', 'string', 'object', 'object']);
        p.kinds.set(field, kind);
        return kinds[kind]();
      }
      case 'numericString': return rng.pick(p.numericStrings);
      case 'valueOf': return r({ $: 'valueOf', ret: rng.pick(p.numbers), v: encodeValue(this.pooledObject()) });
      case 'toString': return r({ $: 'toString', ret: rng.pick([...p.strings, ...p.domains.filter(Boolean)]) });
      case 'date': return r({ $: 'date', t: rng.pick(p.numbers) });
      case 'typed': return r({ $: 'typed', cls: rng.pick(['Uint8Array', 'Float64Array', 'Int32Array']), items: p.numbers.slice(rng.int(3)) });
      case 'proxy': return r({ $: 'proxy', target: encodeValue(this.pooledObject()) });
      case 'frozen': return r({ $: 'frozen', target: encodeValue(this.pooledObject()) });
      default: return this.fieldValue(s, cls);
    }
  }

  /**
   * The class of a value that meets: for a field the old module spreads,
   * mostly one meetValue builds as an object of pooled keys.
   */
  meetClass(spread) {
    const classes = this.opt.valueClasses ?? VALUE_CLASSES[this.adv ? 'adversarial' : 'realistic'];
    const objects = classes.filter((c) => ['plain', 'valueOf', 'proxy', 'frozen', 'typed'].includes(c));
    return this.rng.pick(spread && objects.length && this.rng.chance(0.7) ? objects : classes);
  }

  /**
   * A checkpoint revision that meets the session's others: the domain's
   * last one, the next, the one before, or the other domain's.
   */
  meetRevision(s, domain) {
    const revisions = (s.revisions ??= { browser: 0, publication: 0 });
    const [mine, other] = domain === 'publication' ? ['publication', 'browser'] : ['browser', 'publication'];
    const r = this.rng.pick([revisions[mine], revisions[mine] + 1, revisions[mine] + 1, revisions[mine] - 1, revisions[other]]);
    revisions[mine] = Math.max(revisions[mine], r);
    return r;
  }

  // -- values -------------------------------------------------------------

  /** A realistic value, or (rarely; often in the adversarial tier) a weird one. */
  maybeOdd(realistic, p = this.adv ? 0.3 : 0.06, depthKind = 'snapshot') {
    if (this.rng.chance(p)) return this.oddValue(depthKind);
    return typeof realistic === 'function' ? realistic() : realistic;
  }

  wrongNumber() {
    return this.rng.pick([' 3 ', '0x10', [2], true, null, '2', '', '1e1', false, -1, 2.5, 0, '  ', 'abc', [], [1, 2]]);
  }

  bigString() {
    this.bigLeft--;
    const n = this.opt.bigStringBytes;
    // Plain ASCII so that the same text appears verbatim inside journal and
    // snapshot files (the fixture packer stores it once).
    const unit = 'bigstring' + this.rng.int(1000).toString(36) + '-';
    return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  }

  deep(depth) {
    let v = this.rng.pick([0, 'leaf', null, true]);
    for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { d: v };
    return v;
  }

  oddString() {
    const rng = this.rng;
    return rng.pick([
      '\uD800', 'a\uDC00b', '\uDBFF\uDBFF', 'x\uD83D', '\uD83D\uDE00 ok', '', ' ', '\u0000nul', 'tab\tnl\nq"\\',
      '\u2028\u2029', 'caf\u00e9', '\u{1F600}', '__proto__', 'constructor', '10', '-0', 'NaN', '0x10', ' 3 ',
      '</script>', 'ab'.repeat(rng.range(1, 40)),
    ]);
  }

  /** A value whose coercion (`Number()`, `String()`, `>=`, a spread) throws or bends. */
  hostile({ bigint = true } = {}) {
    return this.rng.pickCall([
      () => ({ toString: 'x' }),
      () => ({ toString: null, valueOf: 1 }),
      () => ({ valueOf: 2 }),
      () => [{ toString: 1 }],
      () => [[{ toString: 1 }]],
      () => this.rng.pick([' 3 ', '1e1', '0x10', '-0', '', ' ', '2', 'Infinity']),
      () => this.rng.pick([NaN, -0, Infinity, 1.5, -1, 0]),
      () => this.rng.pick([[1, 2], [3], [], ['4']]),
      () => this.rng.pick([true, false, null]),
      () => (bigint ? 10n : { toString: 'x' }),
    ]);
  }

  oddKey() {
    return this.rng.pick(['10', '2', '0', '4294967295', '4294967294', '-1', '1.5', '01', 'b', '\uD800', 'k\uDFFF',
      '__proto__', 'constructor', 'toString', '', ' ', '$', '$ref', 'a.b', '\u0000', 'token']);
  }

  oddValue(depthKind = 'snapshot') {
    const rng = this.rng;
    if (!this.adv) {
      // Realistic callers send wrong types, not exotic values.
      return rng.pick([() => this.wrongNumber(), () => undefined, () => null, () => ({}), () => 'x', () => ({ a: 1 })])();
    }
    const maxDepth = depthKind === 'journal' ? this.opt.journalDepth : this.opt.snapshotDepth;
    if (this.bigLeft > 0 && rng.chance(0.1)) return this.bigString();
    if (this.deepLeft > 0 && rng.chance(0.1)) {
      this.deepLeft--;
      return this.deep(maxDepth);
    }
    if (this.adv && rng.chance(0.03)) return this.deep(rng.range(7, Math.min(64, maxDepth)));
    return rng.pickCall([
      () => this.oddString(),
      () => rng.pick([1e21, 5e-324, -0, NaN, Infinity, -Infinity, 2 ** 53, 2 ** 53 + 2, -(2 ** 31), 0.1 + 0.2,
        1e-7, 123456789012345680000, Number.MAX_VALUE, Number.MIN_SAFE_INTEGER]),
      () => this.wrongNumber(),
      () => ({ 10: 1, b: 2, 2: 3 }),
      () => JSON.parse('{"10":1,"b":2,"2":3}'),
      () => JSON.parse('{"__proto__":{"polluted":true},"a":1}'),
      () => ({ present: 1, missing: undefined, [this.oddKey()]: this.oddString() }),
      () => {
        const o = {};
        const n = rng.range(1, 4);
        for (let i = 0; i < n; i++) o[this.oddKey()] = rng.chance(0.3) ? undefined : this.oddString();
        return o;
      },
      () => [undefined, NaN, -0, null, this.oddString()],
      () => rng.pick([true, false, null, undefined, 0, 1, -1, NaN, '', -0]),
      () => this.deep(rng.range(1, 6)),
    ]);
  }

  // -- sessions -----------------------------------------------------------

  newSessionId() {
    const rng = this.rng;
    const hex = () => rng.int(0x100000000).toString(16).padStart(8, '0');
    return rng.weighted([
      [6, hex],
      [2, () => 'sess-' + rng.int(100)],
      [1, () => 'A_b-' + rng.int(10)],
      [this.adv ? 1 : 0, () => 'x'.repeat(128)],
      [this.adv ? 1 : 0, () => '_-_'],
    ])();
  }

  session() {
    return this.rng.pick(this.sessions);
  }

  /** The `id` an event for session `s` carries (or omits, for the store default). */
  eventId(s, ev) {
    const rng = this.rng;
    if (s.id === this.storeSessionId && rng.chance(0.45)) {
      if (rng.chance(0.2)) ev.id = rng.pick(['', null, 0, false, undefined]);
      return ev;
    }
    ev.id = s.id;
    return ev;
  }

  // -- events -------------------------------------------------------------

  event(s, type) {
    const rng = this.rng;
    const odd = (v, p) => this.maybeOdd(v, p);
    const ev = { type };
    this.eventId(s, ev);
    const maybe = (key, value, p = 0.7) => { if (rng.chance(p)) ev[key] = value; };
    switch (type) {
      case 'generate':
        maybe('action', odd(() => rng.pick(ACTIONS)), 0.9);
        maybe('freeformPrompt', rng.chance(0.5) ? undefined : odd('make it pop'), 0.5);
        maybe('count', rng.chance(0.8) ? rng.pick([2, 3, 4]) : odd(() => this.wrongNumber(), 0.5), 0.9);
        maybe('pageUrl', odd(() => rng.pick(PAGES)), 0.9);
        maybe('element', odd(() => ({ tagName: 'section', id: 'hero', classes: ['hero', 'dark'], text: 'Welcome' })), 0.8);
        maybe('screenshotPath', odd(() => '.impeccable/live/annotations/' + s.id + '-' + rng.int(3) + '.png'), 0.3);
        maybe('comments', [{ x: rng.int(800), y: rng.int(600), text: odd('tighter') }], 0.2);
        maybe('mode', 'insert', 0.1);
        maybe('token', 'tok-' + rng.int(1000), 0.3);
        if (rng.chance(0.25)) {
          // What the live server journals again after leasing it.
          ev.scaffoldAttempted = true;
          ev.scaffoldDurationMs = odd(() => rng.int(900));
          ev[rng.chance(0.7) ? 'scaffold' : 'scaffoldError'] = rng.chance(0.7)
            ? { previewMode: rng.pick(PREVIEW_MODES), file: rng.pick(SOURCE_FILES) }
            : 'no_anchor';
          if (rng.chance(0.5)) ev.generationReadyAt = this.now();
        }
        break;
      case 'variant_plan':
        maybe('plan', odd(() => ({ variants: [{ n: 1, title: 'Bold' }, { n: 2, title: 'Calm' }] })), 0.9);
        maybe('owner', 'agent', 0.2);
        break;
      case 'detector_waivers':
        maybe('waivers', odd(() => [{ rule: 'low-contrast', variant: rng.range(1, 3) }], 0.25), 0.9);
        break;
      case 'agent_phase':
        if (rng.chance(this.adv ? 0.7 : 0.97)) ev.phase = rng.pick(AGENT_PHASES);
        else if (!this.adv) ev.phase = rng.pick(['', null, undefined]);
        else {
          ev.phase = rng.pick(['__proto__', '__proto__', 'constructor', '10', '2', '', null, undefined, 5, true, ['x'],
            { a: 1 }, '\uD800', 'toString', 'hasOwnProperty', NaN]);
        }
        maybe('at', rng.chance(0.85) ? this.now() : odd(null, 0.8), 0.85);
        maybe('durationMs', rng.chance(0.7) ? rng.int(5000) : odd(null, 0.7), 0.4);
        ev.owner = rng.chance(0.5) ? undefined : 'browser-' + rng.int(9);
        maybe('previewMode', rng.pick(PREVIEW_MODES), 0.2);
        if (this.adv && rng.chance(0.2)) ev.extra = this.oddValue('journal');
        break;
      case 'variants_ready':
      case 'agent_done':
        ev.file = odd(() => rng.pick([...SOURCE_FILES, undefined]));
        ev.sourceFile = odd(() => rng.pick([...SOURCE_FILES, undefined]));
        ev.previewFile = odd(() => rng.pick(['.impeccable/live/preview/' + s.id + '.tsx', undefined]));
        ev.previewMode = odd(() => rng.pick([...PREVIEW_MODES, undefined]));
        ev.message = odd(() => rng.pick(['Variants ready', undefined]));
        ev.sourceEventType = rng.pick(['generate', 'accept', 'steer', undefined]);
        ev.carbonize = rng.weighted([[5, false], [3, true], [1, 'true'], [1, undefined], [this.adv ? 1 : 0, 1]]);
        maybe('arrivedVariants', odd(() => rng.range(1, 4), 0.3), 0.4);
        maybe('at', odd(() => this.now(), 0.3), 0.3);
        break;
      case 'variant_mounted':
        ev.variant = rng.chance(this.adv ? 0.6 : 0.85) ? rng.pick([rng.range(1, 4), rng.pick(this.pools.variants)]) : this.wrongNumber();
        maybe('url', odd(() => '/@fs/src/.impeccable-variants/' + s.id + '/v' + rng.range(1, 4) + '.tsx', 0.2), 0.6);
        if (this.adv && rng.chance(0.15)) ev.extra = this.oddValue('journal');
        if (rng.chance(0.15)) delete ev.variant;
        break;
      case 'variant_mount_failed':
        ev.variant = rng.chance(this.adv ? 0.6 : 0.85) ? rng.pick([rng.range(1, 4), rng.pick(this.pools.variants)]) : this.wrongNumber();
        maybe('url', odd(() => '/@fs/src/v' + rng.range(1, 4) + '.tsx', 0.3), 0.7);
        maybe('error', odd(() => rng.pick(['SyntaxError: Unexpected token', 'Failed to fetch dynamically imported module'])), 0.8);
        maybe('at', odd(() => this.now(), 0.3), 0.3);
        maybe('token', 'tok', 0.1);
        break;
      case 'checkpoint': {
        const domain = rng.chance(0.4)
          ? rng.pick(this.pools.domains)
          : rng.weighted([[6, 'browser'], [3, 'publication'], [1, 'unknown'], [2, undefined], [1, 'absent']]);
        if (domain !== 'absent') ev.revisionDomain = domain;
        const rev = rng.weighted([
          [8, () => { s.revision += rng.pick([1, 1, 1, 0, 2, -1]); return s.revision; }],
          [8, () => this.meetRevision(s, domain)],
          [1, () => ' ' + s.revision + ' '],
          [1, () => '0x10'],
          [1, () => [s.revision]],
          [1, () => true],
          [1, () => null],
          [1, () => 'absent'],
          [this.adv ? 2 : 0, () => this.oddValue()],
          // Falsy but not nullish: where `??` and `||` part ways.
          [this.adv ? 3 : 1, () => rng.pick(this.adv ? [NaN, NaN, 0, '', false, -0] : [0, '', false])],
        ])();
        if (rev !== 'absent') ev.revision = rev;
        const reason = rng.pick(CHECKPOINT_REASONS);
        ev.reason = reason;
        if (rng.chance(reason === 'variants_progress' ? 0.5 : 0.85)) ev.owner = odd(() => 'browser-' + rng.int(3), 0.1);
        ev.phase = rng.chance(0.9) ? rng.pick(BROWSER_STATES) : this.maybeOdd(() => rng.pick([undefined, null, '']), 0.5);
        maybe('pageUrl', rng.pick(PAGES), 0.8);
        maybe('expectedVariants', odd(() => rng.range(2, 4), 0.1), 0.7);
        maybe('arrivedVariants', odd(() => rng.range(0, 4), 0.15), 0.7);
        maybe('visibleVariant', odd(() => rng.range(1, 4), 0.15), 0.7);
        ev.sourceFile = odd(() => rng.pick([...SOURCE_FILES, undefined]), 0.1);
        ev.previewFile = odd(() => rng.pick(['.impeccable/live/preview/p.tsx', undefined]), 0.1);
        ev.previewMode = odd(() => rng.pick([...PREVIEW_MODES, undefined]), 0.1);
        maybe('paramValues', odd(() => (rng.chance(0.5) ? this.pooledObject() : { radius: rng.int(24), tone: rng.pick(['warm', 'cool']) }), 0.25), 0.6);
        break;
      }
      case 'accept':
      case 'accept_intent':
        maybe('variantId', rng.chance(0.8) ? String(rng.pick([rng.range(1, 4), rng.pick(this.pools.variants)])) : this.maybeOdd(() => rng.pick([2, 'x', ' 2 ', null]), 0.5), 0.9);
        maybe('pageUrl', rng.pick(PAGES), 0.8);
        maybe('clientSentAt', this.now(), 0.6);
        maybe('paramValues', odd(() => ({ radius: rng.int(24) }), 0.3), 0.3);
        maybe('at', odd(() => this.now(), 0.3), 0.2);
        maybe('token', 'tok', 0.2);
        break;
      case 'discard':
        maybe('orphaned', rng.pick([true, false, 'true']), 0.3);
        maybe('at', odd(() => this.now(), 0.3), 0.2);
        break;
      case 'discarded':
        maybe('orphaned', true, 0.3);
        maybe('message', odd('cleaned up', 0.2), 0.3);
        break;
      case 'complete':
        maybe('file', odd(() => rng.pick(SOURCE_FILES)), 0.5);
        maybe('sourceFile', odd(() => rng.pick(SOURCE_FILES)), 0.5);
        maybe('previewFile', odd(() => undefined), 0.4);
        maybe('previewMode', odd(() => rng.pick(PREVIEW_MODES)), 0.3);
        maybe('carbonize', false, 0.3);
        break;
      case 'steer':
        ev.message = odd(() => rng.pick(['make the heading larger', 'less purple', '']));
        maybe('pageUrl', 'http://localhost:5173' + rng.pick(PAGES), 0.9);
        break;
      case 'steer_done':
        maybe('message', odd(() => rng.pick(['Done: heading is larger', undefined])), 0.8);
        maybe('file', odd(() => rng.pick(SOURCE_FILES)), 0.6);
        maybe('sourceFile', odd(() => rng.pick([...SOURCE_FILES, undefined])), 0.6);
        maybe('previewFile', odd(() => undefined), 0.3);
        maybe('previewMode', odd(() => rng.pick(PREVIEW_MODES)), 0.3);
        break;
      case 'carbonize_cleanup':
        maybe('file', odd(() => rng.pick(SOURCE_FILES)), 0.8);
        break;
      case 'manual_edit_apply':
        maybe('pageUrl', rng.pick(PAGES), 0.8);
        maybe('edits', odd(() => [{ selector: 'h1', text: 'Hello' }]), 0.8);
        break;
      case 'agent_error':
        maybe('message', odd(() => rng.pick(['model timed out', '', undefined])), 0.8);
        maybe('sourceEventType', rng.pick(['generate', 'generate', 'steer', 'accept', undefined]), 0.9);
        break;
      default:
        // A type the vocabulary has and this generator does not know (one
        // added upstream, say): the fields its case reads, mostly as small
        // valid values that repeat (a list that must not take a value twice
        // meets it twice), and fields reducers read elsewhere, with the
        // values they usually carry.
        for (let i = rng.range(0, 2); i > 0; i--) {
          ev[rng.pick(this.readFields())] = this.maybeOdd(() => rng.pick([1, 2, 3, '2', 'x', true, { a: 1 }, [1]]));
        }
        if (rng.chance(0.5)) ev.payload = this.maybeOdd({ ok: true }, 0.3, 'journal');
        break;
    }
    this.readByReducer(s, ev, type);
    if (this.adv && rng.chance(0.2)) {
      // A field the reducer may coerce, set to what coercion refuses or bends.
      const keys = Object.keys(ev).filter((k) => k !== 'type' && k !== 'id');
      const k = keys.length && rng.chance(0.7) ? rng.pick(keys) : rng.pick(this.readFields());
      // No BigInt for a session whose journal is still only in the legacy
      // directory: see badAppendArgs.
      ev[k] = this.hostile({ bigint: !(s.hasLegacy && !s.hasPrimary) });
    }
    if (this.adv && rng.chance(0.15)) {
      // Odd extra keys, including integer-like ones and undefined values.
      const k = this.oddKey();
      if (k !== 'type' && k !== 'id') ev[k] = rng.chance(0.3) ? undefined : this.oddValue();
    }
    if (this.adv && rng.chance(0.1)) {
      // An own symbol-keyed member: JSON drops it, `{ ...event }` copies it.
      ev[Symbol(rng.pick(['k', undefined]))] = this.fieldValue(s);
    }
    if (this.adv && rng.chance(0.05)) {
      // An event whose own `__proto__` key came from JSON.
      const text = JSON.stringify({ type: ev.type, id: ev.id ?? s.id, __proto__x: 1 }).replace('"__proto__x"', '"__proto__"');
      return JSON.parse(text);
    }
    return ev;
  }

  /**
   * Every field the reference's case for `type` reads (found by running it,
   * nested ones as `a.b`), known types included: fields the switch above
   * left out are added, and some it set are replaced, each with a value of
   * a class drawn from VALUE_CLASSES.
   */
  readByReducer(s, ev, type) {
    const rng = this.rng;
    const fields = this.opt.vocabulary.caseFields?.[type] ?? [];
    const spread = new Set(this.opt.vocabulary.spreadFields?.[type] ?? []);
    // A focused type (a case a port just changed) carries the fields
    // event() leaves out more often (a port's new ones), and more often
    // with values that meet.
    const focused = !!this.opt.focusTypes?.includes(type);
    for (const field of fields) {
      const steps = field.split('.');
      const present = hasPath(ev, steps);
      if (present ? !rng.chance(this.adv ? 0.35 : 0.1) : !rng.chance(focused ? 0.7 : this.adv ? 0.5 : 0.35)) continue;
      setPath(ev, steps, rng.chance(focused ? 0.8 : 0.5) ? this.meetValue(s, `${type}.${field}`, spread.has(field), this.meetClass(spread.has(field))) : this.fieldValue(s));
    }
  }

  /** The snapshot fields the focused types' cases read (vocabulary.snapshotReads). */
  focusFields() {
    this.focusFieldList ??= [...new Set((this.opt.focusTypes ?? []).flatMap((t) => this.opt.vocabulary.snapshotReads?.[t] ?? []))];
    return this.focusFieldList;
  }

  /** Top-level fields the reducer reads: the reference's, else the schema's field names. */
  readFields() {
    const v = this.opt.vocabulary;
    this.readFieldList ??= v.caseFields
      ? [...new Set(Object.values(v.caseFields).flat().map((f) => f.split('.')[0]))].sort()
      : [...v.fields, ...v.addedFields].filter((f) => f !== 'id');
    return this.readFieldList;
  }

  /** A value of a class drawn for this tier. */
  fieldValue(s, cls = this.rng.pick(this.opt.valueClasses ?? VALUE_CLASSES[this.adv ? 'adversarial' : 'realistic'])) {
    const rng = this.rng;
    const bigint = !(s.hasLegacy && !s.hasPrimary);
    const plain = () => rng.pick([1, 2, 2, 3, 0, -1, '2', 'x', true, false, null, { a: 1 }, [1], [], {},
      ...(this.opt.vocabulary.literals ?? []).filter((l) => /^[a-z_]{1,30}$/.test(l))]);
    const lossy = () => rng.pick([undefined, NaN, -0, Infinity, () => 1, function named() {}]);
    const r = (recipe) => fromRecipe(recipe);
    switch (cls) {
      case 'plain': return plain();
      case 'numericString': return rng.pick(NUMERIC_STRINGS);
      // What JSON gives: an own `toString`/`valueOf` that is no function, so
      // coercion throws (or, for `valueOf` alone, falls back to toString).
      case 'jsonHostile': return rng.pick([{ toString: 'x' }, [{ toString: 1 }], { valueOf: 2 }, { toString: null, valueOf: 1 }]);
      case 'lossy': return lossy();
      case 'valueOf': return r({ $: 'valueOf', ret: encodeValue(rng.pick([2, 1, 0, -1, 2.5, '3', ' 0x10 ', NaN, true])), v: rng.chance(0.5) ? { a: 1 } : {} });
      case 'toString': return r({ $: 'toString', ret: encodeValue(rng.pick(['2', ' 1 ', 'x', 'publication', 'browser', '', 4])) });
      case 'throwValueOf': return r({ $: 'throwValueOf', message: 'valueOf refused' });
      case 'throwToString': return r({ $: 'throwToString', message: 'toString refused' });
      case 'symbol': return Symbol(rng.pick(['s', undefined]));
      case 'bigint': return bigint ? rng.pick([2n, 0n, -1n]) : plain();
      case 'date': return r({ $: 'date', t: rng.pick([0, 1893456000000, 1e20, NaN]) });
      case 'url': return r({ $: 'url', href: rng.pick(['http://localhost:5173/pricing', 'file:///x/y.tsx']) });
      case 'buffer': return r({ $: 'buffer', bytes: [97, 98] });
      case 'typed': return r({ $: 'typed', cls: rng.pick(['Uint8Array', 'Float64Array', 'Int32Array']), items: [1, 2.5, -1] });
      case 'map': return r({ $: 'map', entries: [['k', 1]] });
      case 'set': return r({ $: 'set', items: [1, 'x'] });
      case 'toJSON': return r({ $: 'toJSON', ret: this.oddJson(), v: { a: 1 } });
      case 'mixed': {
        // A value with toJSON beside values JSON drops or changes.
        const o = { when: r({ $: 'date', t: 0 }), gone: undefined, nan: NaN, neg: -0 };
        if (rng.chance(0.5)) o.fn = () => 1;
        if (rng.chance(0.5)) o.url = r({ $: 'url', href: 'http://localhost/' });
        return o;
      }
      case 'proxy': return r({ $: 'proxy', target: encodeValue(rng.pick([{ a: 1 }, [1, 2], { valueOf: 2 }])) });
      case 'reentrant': {
        const inner = { type: rng.pick(['agent_phase', 'checkpoint', 'variant_mounted']), id: s.id, phase: 'picked_up', revision: 1, variant: 1 };
        return r({ $: 'getter', key: 'k', ret: encodeValue(rng.pick([1, 'x', undefined])), append: encodeValue(inner), v: { before: { $: 'u' } } });
      }
      case 'frozen': return r({ $: 'frozen', target: encodeValue(rng.pick([{ a: 1 }, [1], { variant: 2 }])) });
      // Cycles, mostly hidden from the journal line (see CYCLES in
      // encode.mjs); a plain one is refused before anything is written, so
      // not for a session still only in the legacy directory (badAppendArgs).
      case 'cyclic': {
        const shapes = ['hidden', 'items', 'pair', 'throughInstance', 'getter', 'closedLater', 'shared', ...(bigint ? ['self'] : [])];
        return r({ $: 'cyclic', shape: rng.pick(shapes), ret: encodeValue(rng.pick(['c', 1, { a: 1 }, []])) });
      }
      // Arrays of length 2 ** 32 - 1 or 1e9 with one element, hidden or
      // held (see SPARSE in encode.mjs), and arrays past the binding's walk
      // budget: 70,000 or 200,000 long, sparse or dense.
      case 'huge-sparse': {
        const shape = rng.pick(['hidden', 'inObject', 'asWaiver', 'getter', 'long', 'longDense']);
        const length = { long: rng.pick([70_000, 200_000]), longDense: 70_000 }[shape] ?? rng.pick([2 ** 32 - 1, 1e9]);
        return r({ $: 'huge-sparse', shape, length });
      }
      default: throw new Error(`unknown value class ${cls}`);
    }
  }

  /** What an odd toJSON returns: nothing, a function, NaN, -0, or a value with its own toJSON. */
  oddJson() {
    return this.rng.pick([{ $: 'u' }, { $: 'fn', name: 'f' }, { $: 'NaN' }, { $: '-0' }, 'text', { a: { $: 'u' } },
      { $: 'toJSON', ret: { $: 'toJSON', ret: 'nested' } }]);
  }

  /** A type for the next event of session s, following a loose lifecycle. */
  nextType(s) {
    const rng = this.rng;
    const flow = {
      new: ['generate'],
      generate_requested: ['agent_phase', 'agent_phase', 'generate', 'variant_plan', 'checkpoint', 'detector_waivers',
        'variants_ready', 'agent_done', 'variant_mount_failed', 'agent_error'],
      variants_ready: ['variant_mounted', 'variant_mounted', 'variant_mount_failed', 'checkpoint', 'checkpoint',
        'accept', 'discard', 'steer', 'generate', 'accept_intent', 'manual_edit_apply'],
      accept_requested: ['agent_done', 'complete', 'checkpoint', 'variants_ready', 'carbonize_cleanup', 'agent_error'],
      discard_requested: ['discarded', 'checkpoint', 'agent_done', 'variant_plan'],
      steer_requested: ['steer_done', 'agent_error', 'checkpoint'],
      done: ['generate', 'checkpoint', 'steer', 'complete'],
    };
    const all = this.opt.vocabulary.eventTypes;
    if (this.opt.focusTypes?.length && rng.chance(0.4)) {
      // Half of the time the session's last focused type again: successive
      // events of a changed case meet each other's values.
      if (!s.focused || rng.chance(0.5)) s.focused = rng.pick(this.opt.focusTypes);
      return s.focused;
    }
    // A type the old module handles and `event()` does not build (one
    // added upstream since): often, so a sequence meets it several times.
    const fresh = all.filter((type) => !GENERATED_TYPES.has(type));
    if (fresh.length && rng.chance(0.1)) return rng.pick(fresh);
    if (rng.chance(0.04)) return rng.pick(UNKNOWN_TYPES);
    if (rng.chance(0.65)) {
      const choices = flow[s.stage] || flow.done;
      const type = rng.pick(choices);
      s.stage = {
        generate: 'generate_requested', variants_ready: 'variants_ready', agent_done: 'variants_ready',
        accept: 'accept_requested', accept_intent: 'accept_requested', discard: 'discard_requested',
        steer: 'steer_requested', discarded: 'done', complete: 'done', steer_done: 'variants_ready',
      }[type] || s.stage;
      return type;
    }
    return rng.pick(all);
  }

  now() {
    return Date.UTC(2030, 0, 1) + this.ops.length * 1000 + this.rng.int(900);
  }

  // -- raw journal text ---------------------------------------------------

  /** A journal line as another process (or an older writer) would leave it. */
  externalEntryLine(s, { tsKind } = {}) {
    const rng = this.rng;
    const type = rng.pick(['complete', 'discarded', 'agent_error', 'checkpoint', 'agent_phase', 'variant_mounted',
      'generate', 'steer_done', 'variants_ready']);
    const event = this.event(s, type);
    if (event.id === undefined || typeof event.id !== 'string' || !event.id) event.id = s.id;
    s.appended++;
    const entry = {};
    const seqKind = rng.weighted([[8, 'next'], [2, 'dup'], [1, 'missing'], [1, 'string'], [this.adv ? 3 : 0, 'odd']]);
    if (seqKind === 'next') entry.seq = s.appended;
    else if (seqKind === 'dup') entry.seq = Math.max(1, s.appended - 1);
    else if (seqKind === 'string') entry.seq = String(s.appended);
    else if (seqKind === 'odd') entry.seq = rng.pick([1e300, 2 ** 53 + 2, 2 ** 53, -5, 0, 1.5, -0, 2 ** 31]);
    entry.id = s.id;
    entry.type = type;
    const ts = tsKind || rng.weighted([[8, 'iso'], [2, 'parseOnly'], [1, 'missing'], [this.adv ? 2 : 0, 'odd']]);
    if (ts === 'iso') entry.ts = new Date(this.now()).toISOString();
    else if (ts === 'parseOnly') {
      entry.ts = rng.pick(['Tue, 01 Jan 2030 00:00:00 GMT', '2030/01/02', '2030-01-03 10:00', 'January 4, 2030 10:00:00 UTC',
        '2030-01-05T00:00:00+02:00', '1/6/2030', '2030-01-07T00:00:00.123456Z']);
    } else if (ts === 'odd') {
      entry.ts = rng.pick(['', 'not a date', 12345, 0, null, true, '2030-13-45', ' ', ['2030'], { t: 1 },
        { toString: 'x' }, [{ toString: 1 }]]);
    }
    if (rng.chance(this.adv ? 0.15 : 0.05)) Object.assign(entry, event);
    else entry.event = event;
    // A BigInt has no JSON form; a line another writer left holds a number.
    const bigintAsNumber = (_k, v) => (typeof v === 'bigint' ? Number(v) : v);
    let text;
    try {
      text = JSON.stringify(entry, bigintAsNumber);
    } catch {
      // A cycle has none either: such a writer leaves the event bare.
      text = JSON.stringify({ seq: entry.seq, id: s.id, type, ts: entry.ts, event: { type, id: s.id } }, bigintAsNumber);
    }
    if (text === undefined) text = 'null';
    return text;
  }

  /** Raw bytes to append to a journal, of every corrupt kind. */
  rawJournalBytes(s) {
    const rng = this.rng;
    const line = () => this.externalEntryLine(s);
    const kind = this.adv
      ? rng.weighted([
        [6, 'entry'], [2, 'truncated'], [1, 'null'], [1, 'number'], [1, 'string'], [1, 'array'], [1, 'true'],
        [1, 'emptyObject'], [1, 'whitespace'], [1, 'blankLines'], [1, 'bom'], [2, 'invalidUtf8'], [2, 'torn'],
        [2, 'hugeSeq'], [2, 'parseOnlyTs'], [1, 'oddTs'], [1, 'crlf'], [1, 'protoKey'], [1, 'dupKeys'],
        [1, 'jsonNumbers'], [1, 'nul'], [1, 'cr'], [1, 'surrogateEscapes'], [1, 'deep'], [1, 'eventFalsy'],
        [1, 'multi'],
      ])
      : rng.weighted([[10, 'entry'], [2, 'parseOnlyTs'], [1, 'crlf'], [1, 'multi'], [1, 'truncated'], [1, 'blankLines']]);
    const seq = () => ++s.appended;
    const nowIso = () => new Date(this.now()).toISOString();
    const ev = (type, extra = '') => `{"type":"${type}","id":"${s.id}"${extra}}`;
    let text;
    let bytes;
    switch (kind) {
      case 'entry': text = line() + '\n'; break;
      case 'multi': text = line() + '\n' + line() + '\n'; break;
      case 'truncated': text = line().slice(0, rng.range(1, 30)) + '\n'; break;
      case 'null': text = 'null\n'; break;
      case 'number': text = rng.pick(['5', '-0', '1e400', '0']) + '\n'; break;
      case 'string': text = '"str"\n'; break;
      case 'array': text = rng.pick(['[1,2]', '[]', '[{"type":"complete"}]']) + '\n'; break;
      case 'true': text = rng.pick(['true', 'false']) + '\n'; break;
      case 'emptyObject': text = '{}\n'; break;
      case 'whitespace': text = rng.pick(['   ', '\t', ' \t \u00a0', '\u2028']) + '\n'; break;
      case 'blankLines': text = '\n\n'; break;
      case 'bom': text = '\uFEFF' + line() + '\n'; break;
      case 'invalidUtf8': {
        const junk = Buffer.from(rng.pick([[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98], [0xc0, 0xaf], [0xfe, 0xfe, 0x41]]));
        const inString = rng.chance(0.6);
        bytes = inString
          ? Buffer.concat([Buffer.from(`{"seq":${seq()},"id":"${s.id}","type":"agent_phase","ts":"${nowIso()}","event":{"type":"agent_phase","id":"${s.id}","phase":"p`), junk, Buffer.from('"}}\n')])
          : Buffer.concat([junk, Buffer.from('\n')]);
        break;
      }
      case 'torn': {
        const full = line();
        text = full.slice(0, rng.range(1, Math.max(1, full.length - 1)));
        break;
      }
      case 'hugeSeq':
        text = `{"seq":${rng.pick(['1e300', '9007199254740993', '9007199254740992', '18014398509481984', '-1', '4294967296', '1.0', '1e2'])},"id":"${s.id}","type":"agent_phase","ts":"${nowIso()}","event":${ev('agent_phase', ',"phase":"picked_up"')}}\n`;
        break;
      case 'parseOnlyTs': text = this.externalEntryLine(s, { tsKind: 'parseOnly' }) + '\n'; break;
      case 'oddTs': text = this.externalEntryLine(s, { tsKind: 'odd' }) + '\n'; break;
      case 'crlf': text = line() + '\r\n'; break;
      case 'protoKey':
        text = rng.pick([
          `{"__proto__":{"type":"complete"},"seq":${seq()}}`,
          `{"seq":${seq()},"ts":"${nowIso()}","event":{"__proto__":{"x":1},"type":"generate","id":"${s.id}"}}`,
          `{"seq":${seq()},"event":{"type":"agent_phase","phase":"__proto__","at":5}}`,
        ]) + '\n';
        break;
      case 'dupKeys': text = `{"seq":${seq()},"type":"generate","type":"complete","event":null}\n`; break;
      case 'jsonNumbers':
        text = `{"seq":${seq()},"ts":"${nowIso()}","event":{"type":"agent_phase","phase":"${rng.pick(['picked_up', '10', '2'])}","at":${rng.pick(['1e400', '-0', '5e-324', '1E21', '0.1', '-1e-400', '123456789012345678901234567890'])},"durationMs":-0}}\n`;
        break;
      case 'nul': text = '{"seq":1,\u0000"type":"x"}\n'; break;
      case 'cr': text = '\r\n'; break;
      case 'surrogateEscapes':
        text = `{"seq":${seq()},"ts":"${nowIso()}","event":{"type":"steer","id":"${s.id}","message":"\\ud800 \\udfff \\ud83d\\ude00","\\udc00":1}}\n`;
        break;
      case 'deep': {
        const d = rng.pick([50, 500, this.opt.journalDepth]);
        if (d > 500 && this.deepLeft > 0) this.deepLeft--;
        text = `{"seq":${seq()},"ts":"${nowIso()}","event":{"type":"agent_phase","phase":"scaffolding","deep":${'['.repeat(d)}1${']'.repeat(d)}}}\n`;
        break;
      }
      case 'eventFalsy':
        text = `{"seq":${seq()},"type":"${rng.pick(['complete', 'discard', 'generate'])}","ts":"${nowIso()}","event":${rng.pick(['null', '0', '""', 'false', '[]', '{}', '{"type":5}'])}}\n`;
        break;
      default: throw new Error(kind);
    }
    return bytes || Buffer.from(text, 'utf8');
  }

  /** Terminate a torn tail before the store appends to its journal again. */
  healTorn(id) {
    const s = this.sessions.find((x) => x.id === id);
    if (!s || !s.torn || this.opt.tornAppend) return;
    for (const dir of ['primary', 'legacy']) {
      if (s.tornDirs.has(dir)) this.writeJournal(s, dir, Buffer.from('\n'));
    }
  }

  // -- ops ----------------------------------------------------------------

  push(op) {
    this.ops.push(op);
  }

  pushAppend(event, { other = false } = {}) {
    this.keepSpreadsWide(event);
    this.noteCoverage(event);
    const id = typeof event?.id === 'string' && event.id ? event.id : this.storeSessionId;
    this.healTorn(id);
    const target = this.sessions.find((x) => x.id === id);
    if (target) target.hasPrimary = true;
    const op = { op: other ? 'otherAppend' : 'append', args: [encodeValue(event)] };
    if (!other && this.rng.chance(0.1)) op.detached = true;
    this.push(op);
  }

  /**
   * The reducer spreads the fields it copies (`{ ...x }`, `[...x]`), and a
   * spread string becomes one key or element per character: a big string
   * there makes objects of millions of keys that the old module itself
   * cannot hold in a harness's heap. It is cut to a wide object's worth.
   */
  keepSpreadsWide(event) {
    if (!event || typeof event !== 'object') return;
    const { rebuilds } = this.opt.vocabulary;
    for (const [key, value] of Object.entries(event)) {
      const spread = rebuilds[key] === 'ObjectCopy' || rebuilds[key] === 'ArrayCopy';
      if (spread && typeof value === 'string' && value.length > WIDE_SPREAD) event[key] = value.slice(0, WIDE_SPREAD);
    }
  }

  /** Which reducer-read fields this event carries, and their value classes. */
  noteCoverage(event) {
    const type = event?.type;
    const fields = typeof type === 'string' ? this.opt.vocabulary.caseFields?.[type] : null;
    if (!fields) return;
    const seen = (this.coverage[type] ??= {});
    for (const field of fields) {
      const steps = field.split('.');
      if (!hasPath(event, steps)) continue;
      (seen[field] ??= new Set()).add(valueClass(getPath(event, steps)));
    }
    for (const k of Object.getOwnPropertySymbols(event)) (seen['<own symbol key>'] ??= new Set()).add(valueClass(event[k]));
  }

  writeJournal(s, dir, buf) {
    this.push({ op: 'writeJournal', id: s.id, dir, bytes: encodeBytes(buf) });
    if (dir === 'legacy') s.hasLegacy = true;
    else s.hasPrimary = true;
    // Track which of the session's journals now ends without a newline.
    s.tornDirs = s.tornDirs || new Set();
    if (buf.length && buf[buf.length - 1] !== 0x0a) s.tornDirs.add(dir);
    else if (buf.length) s.tornDirs.delete(dir);
    s.torn = s.tornDirs.size > 0;
  }

  build() {
    const rng = this.rng;
    const opt = this.opt;
    this.layoutName = rng.chance(this.adv ? 0.05 : 0.12)
      ? rng.pick(['subdir', 'npmWorkspace', 'pnpmWorkspace'])
      : 'plain';

    const nSessions = rng.weighted([[5, 1], [4, 2], [2, 3]]);
    while (this.sessions.length < nSessions) {
      const id = this.newSessionId();
      if (!this.sessions.some((s) => s.id === id)) {
        this.sessions.push({ id, revision: 0, appended: 0, stage: 'new', torn: false });
      }
    }
    if (rng.chance(0.35)) this.storeSessionId = this.sessions[0].id;

    // A legacy journal from before the sessions dir moved.
    if (rng.chance(0.25)) {
      const s = this.session();
      let buf = Buffer.alloc(0);
      const n = rng.range(1, 4);
      for (let i = 0; i < n; i++) {
        buf = Buffer.concat([buf, this.adv && rng.chance(0.3) ? this.rawJournalBytes(s) : Buffer.from(this.externalEntryLine(s) + '\n')]);
      }
      this.writeJournal(s, 'legacy', buf);
      if (rng.chance(0.3)) {
        this.push({ op: 'writeFile', path: '.impeccable-live/sessions/' + s.id + '.snapshot.json', bytes: encodeBytes(Buffer.from('{"id":"' + s.id + '","phase":"legacy"}\n')) });
      }
      if (rng.chance(0.2)) this.writeJournal(this.session(), 'primary', Buffer.from(this.externalEntryLine(this.session()) + '\n'));
    }

    this.push({ op: 'create', options: encodeValue(this.storeOptions()) });

    const bigAt = this.forceBig ? rng.range(this.ops.length, opt.ops - 5) : -1;
    let bigPlaced = !this.forceBig;
    while (this.ops.length < opt.ops) {
      if (!bigPlaced && this.ops.length >= bigAt) {
        bigPlaced = true;
        // The forced big string: a generate prompt, so it lands in the journal,
        // the snapshot (pendingEvent) and every snapshot returned after it.
        const ev = this.event(this.session(), 'generate');
        ev.freeformPrompt = this.bigString();
        this.pushAppend(ev);
      } else {
        this.step();
      }
    }
  }

  storeOptions() {
    const o = {};
    if (this.storeSessionId !== undefined) o.sessionId = this.storeSessionId;
    else if (this.rng.chance(0.1)) o.sessionId = this.rng.pick([undefined, '', null]);
    return o;
  }

  step() {
    const rng = this.rng;
    const adv = this.adv;
    const s = this.session();
    const kind = rng.weighted([
      [52, 'append'], [12, 'getSnapshot'], [4, 'flush'], [5, 'has'], [6, 'list'], [4, 'restart'],
      [2, 'deleteSnapshot'], [adv ? 7 : 4, 'writeJournal'], [adv ? 6 : 2, 'badAppend'], [3, 'otherAppend'],
      [(adv ? 3 : 1) * (this.focusFields().length ? 3 : 1), 'editSnapshot'], [adv ? 1 : 0, 'writeFile'], [2, 'mountFailBurst'],
      [(adv ? 4 : 0) * (this.focusFields().length ? 3 : 1), 'rebuildProbe'],
    ]);
    switch (kind) {
      case 'append': this.pushAppend(this.event(s, this.nextType(s))); break;
      case 'otherAppend': {
        const type = rng.pick(['complete', 'discarded', 'agent_error', 'agent_phase', 'checkpoint']);
        const ev = this.event(s, type);
        ev.id = s.id; // the other store has no default id
        this.pushAppend(ev, { other: true });
        break;
      }
      case 'mountFailBurst': {
        const n = rng.range(6, 8);
        for (let i = 0; i < n; i++) this.pushAppend(this.event(s, 'variant_mount_failed'));
        break;
      }
      case 'getSnapshot': this.push(this.withDetach({ op: 'getSnapshot', args: this.readArgs(s, true) })); break;
      case 'flush': this.push(this.withDetach({ op: 'flush', args: this.readArgs(s, false) })); break;
      case 'has': this.push(this.withDetach({ op: 'has', args: [encodeValue(this.idArg(s))] })); break;
      case 'list': this.push({ op: 'list' }); break;
      case 'restart':
        if (rng.chance(0.2)) this.storeSessionId = rng.chance(0.5) ? undefined : this.session().id;
        this.push({ op: 'restart', options: encodeValue(this.storeOptions()) });
        break;
      case 'deleteSnapshot': this.push({ op: 'deleteSnapshot', id: s.id }); break;
      case 'writeJournal': {
        const dir = rng.chance(0.85) ? 'primary' : 'legacy';
        this.writeJournal(s, dir, this.rawJournalBytes(s));
        break;
      }
      case 'badAppend':
        // Some of these are accepted after all (an array with a type, an
        // empty id with a store default), so treat them like appends.
        this.healTorn(s.id);
        this.healTorn(this.storeSessionId);
        this.push({ op: 'append', args: this.badAppendArgs(s) });
        break;
      case 'editSnapshot':
        if (rng.chance(0.6)) {
          // Any base field (the vocabulary's, so new ones too) or field an
          // event adds, holding a value of each JSON type, or one nested past
          // V8's JSON.stringify depth.
          const focused = this.focusFields();
          const field = focused.length && rng.chance(0.5)
            ? rng.pick(focused)
            : rng.pick([...this.opt.vocabulary.fields, ...this.opt.vocabulary.addedFields]);
          const kind = rng.pick([...Object.keys(JSON_VALUES), 'deep']);
          if (kind === 'deep') this.push({ op: 'editSnapshot', id: s.id, edit: 'setFieldDeep', field, depth: 20000 });
          else this.push({ op: 'editSnapshot', id: s.id, edit: 'setField', field, value: rng.pick(JSON_VALUES[kind]) });
          (this.coverage['<snapshot file>'] ??= {});
          (this.coverage['<snapshot file>'][field] ??= new Set()).add(kind);
        } else {
          this.push({ op: 'editSnapshot', id: s.id, edit: rng.pick(EDITS) });
        }
        if (rng.chance(0.7)) this.push({ op: 'restart', options: encodeValue(this.storeOptions()) });
        break;
      case 'rebuildProbe': this.rebuildProbe(s); break;
      case 'writeFile': {
        const name = rng.pick(['bad.name.jsonl', 'has space.jsonl', '.jsonl', 'notes.txt', 'x.snapshot.json', 'UPPER.JSONL']);
        const dir = rng.chance(0.5) ? '.impeccable/live/sessions/' : '.impeccable-live/sessions/';
        this.push({ op: 'writeFile', path: dir + name, bytes: encodeBytes(Buffer.from(this.externalEntryLine(s) + '\n')) });
        break;
      }
      default: throw new Error(kind);
    }
  }

  /**
   * A snapshot file whose field holds a value the rebuild rules at the head
   * of the old module's `applyEvent` treat differently (see REBUILD_PROBES),
   * read by a fresh store that then appends: a field given the wrong rule
   * shows in that append's result, unless the event's case sets the field
   * itself, which an unknown type never does.
   */
  rebuildProbe(s) {
    const rng = this.rng;
    const focused = this.focusFields();
    const field = focused.length && rng.chance(0.8) ? rng.pick(focused) : rng.pick(this.opt.vocabulary.fields.filter((f) => f !== 'id'));
    const value = rng.pick(REBUILD_PROBES);
    if (value === ABSENT) this.push({ op: 'editSnapshot', id: s.id, edit: 'deleteField', field });
    else this.push({ op: 'editSnapshot', id: s.id, edit: 'setField', field, value });
    (this.coverage['<snapshot file>'] ??= {});
    (this.coverage['<snapshot file>'][field] ??= new Set()).add(value === ABSENT ? 'absent' : value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);
    this.push({ op: 'restart', options: encodeValue(this.storeOptions()) });
    const ev = this.event(s, rng.chance(0.6) ? rng.pick(UNKNOWN_TYPES) : this.nextType(s));
    ev.id = s.id;
    this.pushAppend(ev);
  }

  withDetach(op) {
    if (this.rng.chance(0.1)) op.detached = true;
    return op;
  }

  idArg(s) {
    const rng = this.rng;
    if (rng.chance(this.adv ? 0.7 : 0.85)) return s.id;
    if (!this.adv) return rng.pick(['../x', 'a/b', 'x'.repeat(129), 'x'.repeat(128), '', 5, null, undefined, 'nosuch']);
    return rng.pick(['../x', 'a/b', 'x'.repeat(129), 'x'.repeat(128), '', 5, null, undefined, 'nosuch', 'a.b', '..',
      'a\\b', ' ', '\uD800', ['a'], { id: s.id }, s.id + '\n', 'ü']);
  }

  readArgs(s, withOpts) {
    const rng = this.rng;
    const args = [];
    const useDefault = this.storeSessionId !== undefined && rng.chance(0.3);
    if (useDefault) {
      if (rng.chance(0.5) && withOpts) args.push(undefined);
      else if (!withOpts || rng.chance(0.5)) return args.map(encodeValue);
    } else if (rng.chance(0.05)) {
      return [];
    } else {
      args.push(this.idArg(s));
    }
    if (withOpts && rng.chance(0.6)) {
      args.push(rng.weighted([
        [5, { includeCompleted: true }], [2, { includeCompleted: false }], [1, {}], [1, undefined],
        [this.adv ? 1 : 0, { includeCompleted: 'yes' }], [this.adv ? 1 : 0, { includeCompleted: 0 }],
        [this.adv ? 1 : 0, null], [this.adv ? 1 : 0, 'str'],
      ]));
    }
    return args.map(encodeValue);
  }

  badAppendArgs(s) {
    const rng = this.rng;
    // Deliberate divergence (README): the old module copies a legacy journal
    // forward before JSON.stringify throws on a BigInt or a cycle; this
    // package touches no file on bad input. Such events are sent only to
    // sessions whose journal is already in the primary directory (the
    // divergence has its own test in __test__/store.test.mjs).
    const legacyOnly = s.hasLegacy && !s.hasPrimary;
    const stringifyFails = (args) => {
      try { JSON.stringify(args[0]); return false; } catch { return true; }
    };
    const args = this.badAppendCandidate(s);
    if (legacyOnly && args.length && stringifyFails(args)) return [null].map(encodeValue);
    return args.map(encodeValue);
  }

  badAppendCandidate(s) {
    const rng = this.rng;
    const base = () => ({ type: 'generate', id: s.id });
    const cyclic = () => {
      const e = base();
      if (rng.chance(0.5)) e.self = e;
      else { e.meta = { list: [1, { up: null }] }; e.meta.list[1].up = e.meta; }
      return e;
    };
    if (!this.adv) {
      return rng.pickCall([
        () => [null],
        () => [rng.pick([5, 'str'])],
        () => [{ id: s.id }],
        () => [{ id: s.id, type: rng.pick([5, '']) }],
        () => [{ type: 'generate', id: rng.pick(['../x', 'a/b', 'x'.repeat(129), 5]) }],
        () => [{ type: 'generate' }],
        () => [{ ...base(), n: 10n }],
        () => [cyclic()],
      ]);
    }
    const v = rng.pickCall([
      () => [],
      () => [null],
      () => [undefined],
      () => [rng.pick([5, 'str', true, 0, ''])],
      () => [{ id: s.id }],
      () => [{ id: s.id, type: rng.pick([5, '', null, ['generate'], { t: 1 }, true]) }],
      () => [{ type: 'generate', id: rng.pick(['../x', 'a/b', 'x'.repeat(129), 5, [s.id], 'a b', '.', '\uD800']) }],
      () => [{ type: 'generate' }],
      () => [{ type: 'generate', id: '' }],
      () => [{ ...base(), n: 10n }],
      () => [{ ...base(), nested: { deeper: [1, 2n] } }],
      () => [cyclic()],
      () => {
        const arr = [1, 2];
        arr.type = 'generate';
        arr.id = s.id;
        return [arr];
      },
      () => [{ ...base(), fn: () => 1, sym: Symbol('s') }],
    ]);
    return v;
  }
}

/** Snapshot-file values by JSON type. */
const JSON_VALUES = {
  number: [5, -1, 0, 1.5, 1e21],
  string: ['ab', '', '5', 'completed'],
  null: [null],
  boolean: [true, false],
  array: [[], [null], [1, 'x'], [{ toString: 1 }]],
  object: [{}, { a: 1 }, { toString: 1 }, { type: 'generate' }],
};

/**
 * Values that tell the rebuild rules apart: `...snapshot` keeps each as it
 * is; `|| null` turns the falsy ones into null, `?? null` only an absent
 * field; `{ ...(f || {}) }` spreads a string into an object; `[...(f || [])]`
 * throws for a number or an object.
 */
const ABSENT = Symbol('absent');
const REBUILD_PROBES = [0, '', false, null, ABSENT, 'ab', 5, {}, { a: 1 }, [1]];

const EDITS = ['phase', 'dropMeta', 'wrongId', 'garbage', 'nextSeqFloat', 'extraKeys', 'weirdTypes', 'empty',
  'integerKeys', 'journalBytesOff', 'truncate', 'dropKeys'];
export { EDITS };

/** Seeds for a run: `count` seeds starting at `base`, one per tier. */
export function seedList(base, count) {
  const out = [];
  for (let i = 0; i < count; i++) out.push((base + i) >>> 0);
  return out;
}

function hasPath(obj, steps) {
  let o = obj;
  for (const step of steps) {
    if (o === null || (typeof o !== 'object' && typeof o !== 'function') || !Object.prototype.hasOwnProperty.call(o, step)) return false;
    o = Object.getOwnPropertyDescriptor(o, step).value;
  }
  return true;
}

function getPath(obj, steps) {
  let o = obj;
  for (const step of steps) o = Object.getOwnPropertyDescriptor(o, step)?.value;
  return o;
}

/** Sets obj.a.b...: a step that is not a plain object becomes one. */
function setPath(obj, steps, value) {
  let o = obj;
  for (const step of steps.slice(0, -1)) {
    const cur = Object.getOwnPropertyDescriptor(o, step)?.value;
    if (!cur || typeof cur !== 'object' || Array.isArray(cur) || Object.isFrozen(cur) || recipeOf(cur)) o[step] = {};
    o = o[step];
  }
  const last = steps[steps.length - 1];
  if (last === '__proto__') Object.defineProperty(o, last, { value, enumerable: true, writable: true, configurable: true });
  else o[last] = value;
}

/** The class label of a generated value, for the coverage report. */
export function valueClass(v) {
  const recipe = recipeOf(v);
  if (recipe) return recipe.$ === 'getter' ? 'reentrant' : recipe.$;
  if (v === undefined || typeof v === 'function' || (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0)))) return 'lossy';
  if (typeof v === 'symbol' || typeof v === 'bigint') return typeof v;
  if (typeof v === 'string' && NUMERIC_STRINGS.includes(v)) return 'numericString';
  if (v && typeof v === 'object' && !recipeOf(v) && [v, v[0]].some((o) => o && typeof o === 'object' && ['toString', 'valueOf'].some((k) => Object.hasOwn(o, k) && typeof o[k] !== 'function'))) return 'jsonHostile';
  if (v && typeof v === 'object' && Object.values(v).some((x) => recipeOf(x))) return 'mixed';
  return 'plain';
}
