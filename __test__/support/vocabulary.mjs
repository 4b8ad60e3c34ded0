// What a session snapshot is, as this package's schema says and as the old
// module says: base fields in order with their rebuild rule at the head of
// applyEvent, event types, completed and fenced phases, the mount-failure
// history. The reference's is read by running it and from its source, so a
// reducer change upstream shows here before anything else.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { PACKAGE_DIR, referenceModulePath } from './impls.mjs';
import { declarations, reach } from '../../scripts/upstream-check.mjs';

/** The package's schema, from its binding. */
export function nativeVocabulary() {
  const s = createRequire(path.join(PACKAGE_DIR, 'package.json'))('./binding.js').schema();
  const base = s.fields.filter((f) => !f.added);
  return {
    fields: base.map((f) => f.name),
    rebuilds: Object.fromEntries(base.map((f) => [f.name, f.rebuild])),
    addedFields: s.fields.filter((f) => f.added).map((f) => f.name),
    eventTypes: s.eventTypes,
    completedPhases: s.completedPhases,
    fencedPhases: s.generationFencedPhases,
    mountFailureHistory: s.mountFailureHistory,
  };
}

/** How a line at the head of applyEvent (`f: <expr>,`) rebuilds `f`. */
function rebuildOf(field, expr) {
  const f = field.replace(/[$]/g, '\\$&');
  const rules = [
    ['ObjectCopy', new RegExp(`^\\{\\s*\\.\\.\\.\\(snapshot\\.${f} \\|\\| \\{\\}\\)\\s*\\}$`)],
    ['ArrayCopy', new RegExp(`^\\[\\.\\.\\.\\(snapshot\\.${f} \\|\\| \\[\\]\\)\\]$`)],
    ['OrNull', new RegExp(`^snapshot\\.${f} \\|\\| null$`)],
    ['NullishToNull', new RegExp(`^snapshot\\.${f} \\?\\? null$`)],
    ['EntryTime', /^entry\.ts \|\| new Date\(\)\.toISOString\(\)$/],
  ];
  return rules.find(([, re]) => re.test(expr))?.[0] ?? `unrecognized: ${expr}`;
}

/** The body of `function name(...) {...}` in `source`, up to the next top-level function. */
function functionBody(source, name) {
  const start = source.indexOf(`function ${name}(`);
  if (start < 0) throw new Error(`session-store.mjs has no function ${name}`);
  const end = source.indexOf('\nfunction ', start + 1);
  return source.slice(start, end < 0 ? undefined : end);
}

/**
 * The reducer's own functions, imported from its source text with two names
 * exported (applyEvent and baseSnapshot are module-private) and its relative
 * imports pointed at the checkout, so nothing is written anywhere.
 */
async function importReducer(file, source) {
  const dir = path.dirname(file);
  const text = source.replace(/(\bfrom\s+)(['"])(\.{1,2}\/[^'"]+)\2/g,
    (_m, from, q, spec) => from + q + pathToFileURL(path.resolve(dir, spec)).href + q)
    + '\nexport { applyEvent as __probedApplyEvent, baseSnapshot as __probedBaseSnapshot };\n';
  const mod = await import('data:text/javascript;base64,' + Buffer.from(text).toString('base64'));
  return { applyEvent: mod.__probedApplyEvent, baseSnapshot: mod.__probedBaseSnapshot };
}

/** Every string literal of a function's text: the values its comparisons look for. */
function stringLiterals(text) {
  return [...new Set([...text.matchAll(/'([^'\\\n]*)'/g)].map((m) => m[1]))];
}

const PROBE = Symbol('probe');
const NESTED_LIMIT = 3;

/**
 * Runs applyEvent on events that are Proxies recording every property read
 * (through helpers too: toPendingEvent's spread, a nested `x.y`), so the
 * fields are exactly what the old module reads, by type. Each type is run
 * against several prior snapshots (fenced, canceled, mounted, ...) with
 * every field answering the same value, then with one field at a time
 * answering each value, so the branches that read more fields are taken too.
 * The values are the usual suspects plus every string literal of applyEvent
 * (what its comparisons look for).
 */
function probeCaseFields(applyEvent, baseSnapshot, types, literals, fencedPhases) {
  const values = [undefined, PROBE, true, false, null, 0, 1, 2, -1, 5, '', 'x', ...literals];
  const base = baseSnapshot('probe');
  const priors = [
    base,
    { ...base, generationCanceled: true },
    { ...base, phase: 'accept_requested' },
    ...fencedPhases.map((phase) => ({ ...base, phase })),
    { ...base, browserCheckpointRevision: 5, publicationCheckpointRevision: 5, checkpointRevision: 5 },
    { ...base, pendingEvent: { type: 'generate' }, pendingEventSeq: 1 },
    { ...base, mountedVariants: [1], mountFailures: [{ variant: 2 }], generationCompletedAt: 1 },
  ];
  const out = { fields: {}, coerced: {}, spread: {} };
  for (const type of types) {
    const reads = new Set();
    const entryReads = new Set();
    // Fields whose keys a case lists (`{ ...event.f }`): objects there meet.
    const spread = new Set();
    const recorder = (target, prefix, valueOf, sink, depth) => new Proxy(target, {
      get(t, key, receiver) {
        if (typeof key === 'symbol' || Object.prototype.hasOwnProperty.call(t, key)) return Reflect.get(t, key, receiver);
        const p = prefix + key;
        sink.add(p);
        const v = valueOf(p);
        return v === PROBE ? (depth < NESTED_LIMIT ? recorder({}, p + '.', valueOf, sink, depth + 1) : {}) : v;
      },
      has(t, key) {
        if (typeof key === 'symbol' || Object.prototype.hasOwnProperty.call(t, key)) return Reflect.has(t, key);
        sink.add(prefix + key);
        return valueOf(prefix + key) !== undefined;
      },
      ownKeys(t) {
        if (prefix && sink === reads) spread.add(prefix.slice(0, -1));
        return Reflect.ownKeys(t);
      },
    });
    const run = (prior, valueOf) => {
      const event = recorder({ type, id: 'probe' }, '', valueOf, reads, 0);
      const entry = recorder({ seq: 3, ts: '2030-01-01T00:00:00.000Z', event }, '', () => undefined, entryReads, NESTED_LIMIT);
      try {
        applyEvent({ ...prior }, entry);
      } catch { /* a coercion refused a probe value: what it read still counts */ }
    };
    for (const prior of priors) {
      for (const v of values) run(prior, () => v);
    }
    // Then each field read so far takes every value while the others are
    // all absent or all objects, until no new field is read: a field read
    // only when another holds a given value (`event.inner.leaf` when
    // `event.mode === 'deep'`) is found.
    for (let round = 0; round < 4; round++) {
      const before = reads.size;
      for (const prior of priors) {
        for (const base of [undefined, PROBE]) {
          for (const field of [...reads]) {
            for (const v of values) run(prior, (p) => (p === field ? v : base));
          }
        }
      }
      if (reads.size === before) break;
    }
    reads.delete('type');
    reads.delete('id');
    // `x.valueOf` / `x.toString` read on a probe object are a coercion of x.
    const coerced = [...reads].filter((p) => /\.(valueOf|toString)$/.test(p)).map((p) => p.replace(/\.(valueOf|toString)$/, ''));
    out.fields[type] = [...reads].filter((p) => !/\.(valueOf|toString)$/.test(p)).sort();
    out.coerced[type] = [...new Set(coerced)].sort();
    out.spread[type] = [...spread].sort();
  }
  return out;
}

/**
 * The snapshot fields each case reads (`next.f`, `next[...]` through a
 * string literal naming a field, and `snapshot.f` in a helper the case hands
 * `next` to), from the function text: the head of applyEvent copies every
 * field, so only the source tells a case's own reads apart.
 */
function snapshotReads(source, apply, types, fieldNames) {
  const bodies = caseBodies(apply);
  const known = new Set(fieldNames);
  const out = {};
  for (const type of types) {
    const body = bodies.get(type) ?? '';
    const fields = new Set();
    for (const m of body.matchAll(/\bnext\.(\w+)\b(?!\s*=(?!=))/g)) fields.add(m[1]);
    for (const m of body.matchAll(/'(\w+)'/g)) if (known.has(m[1])) fields.add(m[1]);
    for (const m of body.matchAll(/\b(\w+)\(next\)/g)) {
      if (!source.includes(`function ${m[1]}(`)) continue;
      for (const r of functionBody(source, m[1]).matchAll(/\bsnapshot\.(\w+)/g)) fields.add(r[1]);
    }
    out[type] = [...fields].sort();
  }
  return out;
}

/**
 * Each `case` label of applyEvent's text with the body it runs: labels
 * that fall through to the next share its body; `default` is `<default>`.
 */
function caseBodies(apply) {
  const labels = [...apply.matchAll(/\n\s*(?:case '([^']+)'|default):/g)].map((m) => ({ type: m[1] ?? '<default>', at: m.index, end: m.index + m[0].length }));
  const out = new Map();
  for (let i = 0; i < labels.length; i++) {
    let j = i;
    let body = '';
    while (j < labels.length && !/\S/.test(body)) {
      body = apply.slice(labels[j].end, labels[j + 1]?.at ?? apply.length);
      j++;
    }
    out.set(labels[i].type, body);
  }
  return out;
}

/** Code as compared: comments dropped, white space collapsed. */
function codeOf(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(^|\s)\/\/.*$/gm, '$1').replace(/\s+/g, ' ').trim();
}

/**
 * The event types whose `case` in applyEvent runs different code in
 * `after` than in `before` (two texts of session-store.mjs): its body
 * differs, or a top-level declaration it reaches (a helper, a constant,
 * and what they reach) does; a label only one of them has counts too.
 * Comments and layout do not. A change of `default` or of the head of
 * applyEvent touches every type, and is not a case of its own.
 */
export function changedCases(before, after) {
  const [was, is] = [before, after].map((source) => ({ bodies: caseBodies(functionBody(source, 'applyEvent')), decls: declarations(source) }));
  const changed = [];
  for (const type of new Set([...is.bodies.keys(), ...was.bodies.keys()])) {
    if (type === '<default>') continue;
    const [a, b] = [was.bodies.get(type), is.bodies.get(type)];
    if (a === undefined || b === undefined || codeOf(a) !== codeOf(b)) {
      changed.push(type);
      continue;
    }
    const uses = (body, decls) => [...decls.keys()].filter((name) => name !== 'applyEvent' && new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`).test(body));
    const reached = reach(after, uses(b, is.decls)).reached.filter((name) => name !== 'applyEvent');
    if (reached.some((name) => was.decls.get(name) === undefined || codeOf(was.decls.get(name)) !== codeOf(is.decls.get(name)))) changed.push(type);
  }
  return changed;
}

/** The old module's vocabulary (its session-store.mjs: `file`), or null without QUIVER_REFERENCE_DIR. */
export async function referenceVocabulary(file = referenceModulePath()) {
  if (!file) return null;
  const source = fs.readFileSync(file, 'utf8');
  const mod = await import(pathToFileURL(file).href);
  const vocab = await import(pathToFileURL(path.join(path.dirname(file), 'vocabulary.mjs')).href);

  // The base snapshot, by running the module on an empty session.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-vocab-'));
  let base;
  try {
    fs.mkdirSync(path.join(dir, '.git'));
    base = mod.createLiveSessionStore({ cwd: dir }).flush('vocab');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  const apply = functionBody(source, 'applyEvent');
  const head = /const next = \{([\s\S]*?)\n\s*\};/.exec(apply)?.[1] ?? '';
  const rebuilds = Object.fromEntries(Object.keys(base).map((k) => [k, 'Copied']));
  for (const line of head.split('\n')) {
    const m = /^\s*(\w+):\s*(.*?),?\s*$/.exec(line);
    if (m) rebuilds[m[1]] = rebuildOf(m[1], m[2]);
  }
  const eventTypes = [...apply.matchAll(/case '([^']+)':/g)].map((m) => m[1]);
  const added = new Set();
  for (const m of apply.matchAll(/next\.(\w+) =/g)) if (!(m[1] in base)) added.add(m[1]);
  const reducer = await importReducer(file, source);
  const literals = stringLiterals(apply);
  const probed = probeCaseFields(reducer.applyEvent, reducer.baseSnapshot, eventTypes, literals, [...mod.GENERATION_FENCED_PHASES]);
  return {
    fields: Object.keys(base),
    rebuilds,
    addedFields: [...added],
    eventTypes,
    caseFields: probed.fields,
    coercedFields: probed.coerced,
    spreadFields: probed.spread,
    snapshotReads: snapshotReads(source, apply, eventTypes, [...Object.keys(base), ...added]),
    literals,
    completedPhases: [...vocab.COMPLETED_SESSION_PHASES],
    fencedPhases: [...mod.GENERATION_FENCED_PHASES],
    mountFailureHistory: Number(/const MOUNT_FAILURE_HISTORY = (\d+)/.exec(source)?.[1]),
  };
}
