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
 * The event fields each case of applyEvent's switch reads (`event.<name>`),
 * by type: the text from its label to the next label with a body (labels
 * sharing one body share its fields).
 */
function caseFields(apply, types) {
  const labels = [...apply.matchAll(/\n\s*(?:case '([^']+)'|default):/g)].map((m) => ({ type: m[1], at: m.index, end: m.index + m[0].length }));
  const out = {};
  for (const type of types) {
    let i = labels.findIndex((l) => l.type === type);
    let body = '';
    while (i >= 0 && i < labels.length && !/\S/.test(body)) {
      body = apply.slice(labels[i].end, labels[i + 1]?.at ?? apply.length);
      i++;
    }
    out[type] = [...new Set([...body.matchAll(/\bevent\.(\w+)/g)].map((m) => m[1]))].filter((f) => f !== 'type' && f !== 'id');
  }
  return out;
}

/** The old module's vocabulary, or null without QUIVER_REFERENCE_DIR. */
export async function referenceVocabulary() {
  const file = referenceModulePath();
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
  return {
    fields: Object.keys(base),
    rebuilds,
    addedFields: [...added],
    eventTypes,
    caseFields: caseFields(apply, eventTypes),
    completedPhases: [...vocab.COMPLETED_SESSION_PHASES],
    fencedPhases: [...mod.GENERATION_FENCED_PHASES],
    mountFailureHistory: Number(/const MOUNT_FAILURE_HISTORY = (\d+)/.exec(source)?.[1]),
  };
}
