// The differential harness itself: values built from recipes replay exactly,
// the field prober finds what a reducer reads (nested, through helpers,
// behind a condition), and the generator sends every field a vocabulary
// names, with no list of its own.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeValue, encodeValue, recipeOf } from './support/encode.mjs';
import { generateSequence, VALUE_CLASSES } from './support/gen.mjs';
import { changedCases, nativeVocabulary, referenceVocabulary } from './support/vocabulary.mjs';
import { shrinkSequence } from './support/shrink.mjs';

const RECIPES = [
  { $: 'valueOf', ret: 2, v: { a: 1 } },
  { $: 'toString', ret: ' 1 ' },
  { $: 'throwValueOf', message: 'no' },
  { $: 'throwToString', message: 'no' },
  { $: 'toJSON', ret: { $: 'u' }, v: { a: 1 } },
  { $: 'toJSON', ret: { $: 'toJSON', ret: 'nested' } },
  { $: 'date', t: 0 },
  { $: 'url', href: 'http://localhost/x' },
  { $: 'buffer', bytes: [97, 98] },
  { $: 'typed', cls: 'Float64Array', items: [1, 2.5] },
  { $: 'map', entries: [['k', 1]] },
  { $: 'set', items: [1, 'x'] },
  { $: 'proxy', target: { a: 1 } },
  { $: 'frozen', target: [1] },
  { $: 'getter', key: 'k', ret: 1, append: { type: 'agent_phase', id: 's' }, v: { before: { $: 'u' } } },
];

test('harness: a value built from a recipe encodes as that recipe, and each decode builds a fresh one', () => {
  for (const recipe of RECIPES) {
    const a = decodeValue(recipe);
    const b = decodeValue(recipe);
    assert.notEqual(a, b, recipe.$);
    assert.deepEqual(encodeValue({ x: a }), { x: recipe }, recipe.$);
    assert.equal(recipeOf(a), recipe);
  }
  assert.equal(Number(decodeValue(RECIPES[0])), 2);
  assert.throws(() => Number(decodeValue(RECIPES[2])), /no/);
  assert.throws(() => String(decodeValue(RECIPES[3])), /no/);
  assert.equal(JSON.stringify({ v: decodeValue(RECIPES[5]) }), '{"v":{}}', 'toJSON is called once: the nested one is not');
  assert.ok(decodeValue(RECIPES[6]) instanceof Date);
  assert.ok(Object.isFrozen(decodeValue(RECIPES[13])));
});

test('harness: a re-entrant getter appends to the store the runner hands it, once per read', () => {
  const appended = [];
  const value = decodeValue(RECIPES[14], { store: () => ({ appendEvent: (e) => appended.push(e) }) });
  assert.equal(value.k, 1);
  assert.equal(value.k, 1);
  assert.deepEqual(appended, [{ type: 'agent_phase', id: 's' }, { type: 'agent_phase', id: 's' }]);
  assert.deepEqual(encodeValue({ ...value }), { before: { $: 'u' }, k: 1 }, 'a spread runs the getter and copies its value');
  assert.deepEqual(encodeValue(value, { recipes: false }), { before: { $: 'u' }, k: { $: 'accessor' } }, 'encoding shows a getter, never runs it');
});

test('harness: a serialized run appends before the op what landed before its line, and counts every getter call', async () => {
  const { loadPackage, loadReference } = await import('./support/impls.mjs');
  const { runSequence, reentryPlan, reentryMismatch, compareTranscripts } = await import('./support/transcript.mjs');
  const getter = (type, phase) => ({ $: 'getter', key: 'k', ret: 1, append: { type, id: 's', phase }, v: {} });
  // The first getter runs while the line is rendered; the second again while
  // the snapshot file is (the snapshot holds `activeOwner`).
  const ops = [
    { op: 'create', options: { sessionId: 's' } },
    { op: 'append', args: [{ type: 'generate' }] },
    { op: 'append', args: [{ type: 'checkpoint', revision: 1, pageUrl: getter('agent_phase', 'early'), owner: getter('steer') }] },
    { op: 'getSnapshot', args: [] },
  ];
  const pkg = loadPackage();
  const raw = runSequence(pkg, ops);
  const plan = reentryPlan(raw);
  assert.deepEqual([...plan.keys()], [2]);
  assert.equal(plan.get(2).calls.length, 3, 'rendering the line calls both getters, the snapshot file the owner again');
  assert.deepEqual([...plan.get(2).early], [0, 1]);
  // The package serializes appends: run as serialized, it does the same.
  const serialized = runSequence(pkg, ops, undefined, { serialize: { plan, factory: pkg } });
  assert.equal(reentryMismatch(serialized, raw), null);
  assert.equal(compareTranscripts(serialized, raw), null);
  const reference = await loadReference();
  if (!reference) return;
  // The old module does not: its own run differs from its serialized one.
  const old = runSequence(reference, ops);
  const oldSerialized = runSequence(reference, ops, undefined, { serialize: { plan: reentryPlan(old), factory: reference } });
  assert.notEqual(compareTranscripts(oldSerialized, old), null);
  assert.equal(compareTranscripts(oldSerialized, raw), null);
});

test('harness: built-ins encode with what they hold, and the caller\'s own objects as references', () => {
  assert.deepEqual(encodeValue(new Date(5)), { $: 'inst', cls: 'Date', state: 5, v: {} });
  assert.notDeepEqual(encodeValue(new Date(5)), encodeValue(new Date(6)));
  assert.notDeepEqual(encodeValue(new Map([[1, 2]])), encodeValue(new Map([[1, 3]])));
  assert.deepEqual(encodeValue({ a: 1, [Symbol('s')]: 2 }), { $: 'symkeys', of: { a: 1 }, syms: [['s', 2]] });
  // An op's argument with symbol keys decodes to an object with such members
  // (fresh symbols, same descriptions and order), cycles through them included.
  const withSyms = { a: 1, [Symbol('s')]: { b: NaN }, [Symbol()]: 2 };
  withSyms[Symbol('self')] = withSyms;
  const decoded = decodeValue(encodeValue(withSyms));
  assert.deepEqual(encodeValue(decoded), encodeValue(withSyms));
  const syms = Object.getOwnPropertySymbols(decoded);
  assert.deepEqual(syms.map((k) => [k.description, Object.getOwnPropertyDescriptor(decoded, k).enumerable]), [['s', true], [undefined, true], ['self', true]]);
  assert.equal(decoded[syms[2]], decoded);
  const mine = { a: 1 };
  const refs = new WeakMap([[mine, 'op0.args[0].x']]);
  assert.deepEqual(encodeValue({ x: mine, y: { a: 1 } }, { refs }), { x: { $: 'ref', to: 'op0.args[0].x' }, y: { a: 1 } });
});

/** A reducer in the old module's shape, with reads a list would miss. */
const FAKE_REDUCER = `import { COMPLETED_SESSION_PHASES } from './vocabulary.mjs';
export const GENERATION_FENCED_PHASES = new Set(['done']);
export function createLiveSessionStore() {
  return { flush: (id) => baseSnapshot(id), phases: COMPLETED_SESSION_PHASES };
}
function baseSnapshot(id) {
  return { id, phase: 'new', seen: null };
}
function applyEvent(snapshot, entry) {
  const event = entry.event || entry;
  const next = {
    ...snapshot,
    updatedAt: entry.ts || new Date().toISOString(),
  };
  switch (event.type) {
    case 'ping':
      next.seen = describe(event);
      break;
    case 'gated':
      if (event.mode === 'deep') next.seen = event.inner.leaf;
      break;
    case 'count':
      next.seen = Number(event.n) > next.seen;
      break;
  }
  return next;
}
function describe(event) {
  return event.meta?.kind ?? null;
}
`;

async function withFakeReference(fn) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-fake-ref-'));
  try {
    fs.writeFileSync(path.join(dir, 'session-store.mjs'), FAKE_REDUCER);
    fs.writeFileSync(path.join(dir, 'vocabulary.mjs'), "export const COMPLETED_SESSION_PHASES = ['completed'];\n");
    return await fn(path.join(dir, 'session-store.mjs'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('harness: the prober finds the fields a case reads, nested, through helpers and behind a condition', async () => {
  const vocab = await withFakeReference((file) => referenceVocabulary(file));
  assert.deepEqual(vocab.eventTypes, ['ping', 'gated', 'count']);
  assert.deepEqual(vocab.caseFields, { ping: ['meta', 'meta.kind'], gated: ['inner', 'inner.leaf', 'mode'], count: ['n'] });
  assert.deepEqual(vocab.coercedFields.count, ['n']);
  assert.deepEqual(vocab.snapshotReads.count, ['seen']);
  assert.deepEqual(vocab.fields, ['id', 'phase', 'seen']);
});

test('harness: the generator sends every field of the vocabulary, of every value class, known types included', () => {
  const base = nativeVocabulary();
  const vocabulary = {
    ...base,
    eventTypes: [...base.eventTypes, 'brand_new'],
    caseFields: { ...Object.fromEntries(base.eventTypes.map((t) => [t, []])), generate: ['count', 'novel.inner'], brand_new: ['x'] },
  };
  const carried = {};
  const classes = new Set();
  const expected = VALUE_CLASSES.adversarial.filter((c) => !['plain', 'numericString', 'lossy'].includes(c));
  // 40 seeds at least; more until every class has been drawn there (each
  // field draws one of some twenty classes, so some take longer to come).
  for (let seed = 1; seed <= 40 || (seed <= 200 && expected.some((c) => !classes.has(c))); seed++) {
    for (const tier of ['realistic', 'adversarial']) {
      const seq = generateSequence(tier, seed, { vocabulary, focusTypes: ['generate', 'brand_new'] });
      for (const [type, fields] of Object.entries(seq.coverage)) {
        for (const [field, cls] of Object.entries(fields)) {
          carried[`${type}.${field}`] = (carried[`${type}.${field}`] ?? 0) + 1;
          if (type === 'generate' && field === 'novel.inner') cls.forEach((c) => classes.add(c));
        }
      }
    }
  }
  for (const key of ['generate.count', 'generate.novel.inner', 'brand_new.x']) assert.ok(carried[key] > 10, `${key}: ${carried[key] ?? 0} sequences`);
  const missing = expected.filter((c) => !classes.has(c));
  assert.deepEqual(missing, [], 'every class reaches a field only the vocabulary names');
});

test('harness: with QUIVER_REFERENCE_DIR, the old module\'s every event type has the fields it reads', async (t) => {
  const reference = await referenceVocabulary();
  if (!reference) {
    t.skip('reference check skipped: QUIVER_REFERENCE_DIR not set');
    return;
  }
  for (const type of reference.eventTypes) assert.ok(Array.isArray(reference.caseFields[type]), type);
  assert.ok(reference.caseFields.checkpoint.includes('revisionDomain'));
  assert.ok(reference.coercedFields.variant_mounted.includes('variant'));
  assert.deepEqual(reference.spreadFields.checkpoint, ['paramValues'], 'the fields a case spreads');
});

test('harness: values meet across events (the same keys with different values, equal revisions in both domains, a variant twice)', () => {
  const base = nativeVocabulary();
  // A field only the vocabulary names, as a port's new one is.
  const vocabulary = { ...base, caseFields: { ...Object.fromEntries(base.eventTypes.map((t) => [t, []])), checkpoint: ['hints', 'revision', 'revisionDomain'] } };
  const seen = { keyMeets: 0, revisionMeets: 0, variantTwice: 0 };
  const sequences = 40;
  for (let seed = 1; seed <= sequences; seed++) {
    const seq = generateSequence('realistic', seed, { vocabulary, focusTypes: ['checkpoint'] });
    const events = seq.ops.filter((op) => op.op === 'append' && op.args[0] && typeof op.args[0] === 'object').map((op) => op.args[0]);
    const checkpoints = events.filter((e) => e.type === 'checkpoint');
    const hints = checkpoints.map((e) => e.hints).filter((h) => h && typeof h === 'object' && !Array.isArray(h) && !h.$);
    if (hints.some((a, i) => hints.slice(i + 1).some((b) => Object.keys(a).some((k) => Object.hasOwn(b, k) && a[k] !== b[k])))) seen.keyMeets++;
    const revisions = checkpoints.filter((e) => typeof e.revision === 'number').map((e) => [e.revisionDomain === 'publication' ? 'p' : 'b', e.revision]);
    if (revisions.some(([d, r], i) => revisions.slice(i + 1).some(([d2, r2]) => d !== d2 && Math.abs(r - r2) <= 1))) seen.revisionMeets++;
    const acks = generateSequence('realistic', seed, { vocabulary, focusTypes: ['variant_mounted'] }).ops
      .filter((op) => op.op === 'append' && op.args[0]?.type === 'variant_mounted' && typeof op.args[0].variant === 'number').map((op) => op.args[0].variant);
    if (new Set(acks).size < acks.length) seen.variantTwice++;
  }
  // Values drawn afresh for each event meet in about 1 sequence of 40 here.
  for (const [what, n] of Object.entries(seen)) assert.ok(n >= sequences / 8, `${what}: ${n} of ${sequences} sequences`);
});

test('harness: the cases that changed are those whose code differs, through the helpers and constants they reach', () => {
  const changed = (edit) => changedCases(FAKE_REDUCER, edit(FAKE_REDUCER));
  assert.deepEqual(changed((t) => t), []);
  assert.deepEqual(changed((t) => t.replace("case 'ping':", "case 'ping':\n      // a comment only")), [], 'comments and layout do not count');
  assert.deepEqual(changed((t) => t.replace('Number(event.n) > next.seen', 'Number(event.n) >= next.seen')), ['count']);
  assert.deepEqual(changed((t) => t.replace('?? null', '?? false')), ['ping'], 'a helper the case calls');
  assert.deepEqual(changed((t) => t.replace("case 'count':", "case 'fresh':\n      next.seen = 1;\n      break;\n    case 'count':")), ['fresh'], 'a new type');
  assert.deepEqual(changed((t) => t.replace("case 'gated':\n      if (event.mode === 'deep') next.seen = event.inner.leaf;\n      break;\n", '')), ['gated'], 'a type the reference dropped');
});

test('harness: a failing sequence shrinks to the operations and event members its failure needs', () => {
  const ops = [{ op: 'create', options: {} }];
  for (let i = 0; i < 25; i++) ops.push({ op: 'append', args: [{ type: 't', id: 's', n: i, extra: { keep: i === 7, other: 'x' }, noise: [1, 2] }] });
  // Fails while the store is created and the 8th event's extra.keep is sent after it.
  const fails = (seq) => seq.ops[0]?.op === 'create' && seq.ops.some((op) => op.args?.[0]?.extra?.keep === true);
  const { seq, runs } = shrinkSequence({ tier: 'realistic', seed: 1, ops }, fails);
  assert.deepEqual(seq.ops, [{ op: 'create', options: {} }, { op: 'append', args: [{ type: 't', id: 's', extra: { keep: true } }] }]);
  assert.ok(runs < 400, `${runs} candidates`);
  const passing = shrinkSequence({ tier: 'realistic', seed: 1, ops }, () => false);
  assert.deepEqual(passing.seq.ops, ops, 'a sequence that does not fail is left as it is');
});

test('harness: a difference the README lists is named, not reported as a mismatch; a flush too deep to render agrees', async (t) => {
  const { loadPackage, loadReference } = await import('./support/impls.mjs');
  const { checkLive } = await import('./support/live.mjs');
  const reference = await loadReference();
  if (!reference) {
    t.skip('reference check skipped: QUIVER_REFERENCE_DIR not set');
    return;
  }
  const impls = { reference, candidate: loadPackage(), options: {} };
  // A flush whose snapshot nests past V8's JSON.stringify throws in both,
  // and both keep the state the flush read, and the object handed out.
  const deep = [
    { op: 'otherAppend', args: [{ type: 'agent_phase', id: 's' }] },
    { op: 'editSnapshot', id: 's', edit: 'setFieldDeep', field: 'annotationArtifacts', depth: 20000 },
    { op: 'restart', options: {} },
    { op: 'getSnapshot', args: ['s', {}] },
    { op: 'flush', args: ['s'] },
    { op: 'getSnapshot', args: ['s', {}] },
    { op: 'append', args: [{ type: 'agent_done', id: 's' }] },
    { op: 'list' },
  ];
  const agreed = checkLive('run', { tier: 'realistic', seed: 0, layout: 'plain', ops: deep }, impls);
  assert.equal(agreed.mismatch, null);
  assert.equal(agreed.known, null);
  // An event JSON.stringify refuses, for a session only in the legacy
  // directory: the old module copies the journal forward, this package
  // touches no file (the README's deliberate divergence).
  const legacy = [
    { op: 'create', options: {} },
    { op: 'writeJournal', dir: 'legacy', id: 'l', bytes: { utf8: '{"seq":1,"id":"l","type":"agent_phase","ts":"2030-01-01T00:00:00.000Z","event":{"type":"agent_phase","id":"l"}}\n' } },
    { op: 'append', args: [{ type: 'agent_done', id: 'l', n: { $: 'big', v: '1' } }] },
    { op: 'list' },
  ];
  const named = checkLive('run', { tier: 'realistic', seed: 0, layout: 'plain', ops: legacy }, impls);
  assert.equal(named.mismatch, null);
  assert.match(named.known, /legacy journal the old module copied forward/);
});
