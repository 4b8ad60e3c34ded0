// Whether an upstream quiver-cli checkout still carries the code this
// package implements: the two modules (session-store.mjs, source-lock.mjs)
// byte for byte, and, in the modules they import, the declarations they
// reach (for impeccable-paths.mjs the path helpers, for vocabulary.mjs the
// phase lists, for context.mjs resolveProjectRoot and what it calls), so a
// change elsewhere in those files is not reported as one.
//
//   import { checkUpstream, IMPLEMENTED } from './upstream-check.mjs';
//   const report = checkUpstream(readFile); // readFile(relPath) -> text | null
//
// The fingerprints of the version implemented (a83d767) are recorded below
// and checked against that commit by __test__/upstream-check.test.mjs
// whenever QUIVER_REFERENCE_DIR is a clone that holds it.
import crypto from 'node:crypto';
import path from 'node:path';

/** The upstream version this package implements, with the fingerprint of each file's code it runs. */
export const IMPLEMENTED = {
  repository: 'pbakaus/impeccable',
  commit: 'a83d767cf91d8783c7d92cdb64d6da0452343495',
  fingerprints: {
    'skill/scripts/live/session-store.mjs': 'file:a017cb157cb2e136ed0ad2ad0414da32afd87230',
    'skill/scripts/live/source-lock.mjs': 'file:9ccc557be85222d57e7a3eecceec7848e0b6cd0e',
    'skill/scripts/lib/impeccable-paths.mjs': 'decl:18f682f6f7aa7094e06657034aa3f41dcdd19541edf4ce203ff766e300cee6f4',
    'skill/scripts/live/vocabulary.mjs': 'decl:38736e851c81af5e7cb96eb3675e83fad3bf39a56057e179616c839482b93786',
    'skill/scripts/context.mjs': 'decl:b742d5b38e9177e31e905159aae61d1be0db8731f88fad35dc148ad58fb80f1e',
  },
};

/** The modules this package replaces: compared whole. */
export const MODULES = ['skill/scripts/live/session-store.mjs', 'skill/scripts/live/source-lock.mjs'];

/** Git's blob id of a text (what `git hash-object` prints). */
export function blobId(text) {
  const bytes = Buffer.from(text, 'utf8');
  return crypto.createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

const DECLARATION = /^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\s*\*?\s*([\w$]+)|class\s+([\w$]+)|(?:const|let|var)\s+([\w$]+))/;

/** The file's top-level declarations, name -> text without comment-only and blank lines. */
export function declarations(text) {
  const out = new Map();
  let name = null;
  let lines = [];
  let inBlockComment = false;
  const flush = () => {
    if (name !== null) out.set(name, lines.join('\n'));
  };
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (inBlockComment) {
      if (trimmed.includes('*/')) inBlockComment = false;
      continue;
    }
    if (trimmed.startsWith('/*')) {
      if (!trimmed.includes('*/')) inBlockComment = true;
      continue;
    }
    if (trimmed === '' || trimmed.startsWith('//')) continue;
    const m = /^\S/.test(line) ? DECLARATION.exec(line) : null;
    if (m) {
      flush();
      name = m[1] ?? m[2] ?? m[3];
      lines = [line];
    } else if (/^import\s/.test(line) || /^export\s*\{/.test(line)) {
      flush();
      name = null;
      lines = [];
    } else if (name !== null) {
      lines.push(line);
    }
  }
  flush();
  return out;
}

/** Relative imports: local name -> { from (a path relative to the file's dir), name }. */
export function imports(text) {
  const out = new Map();
  const re = /^import\s+(?:([\w$]+)\s*,?\s*)?(?:\{([^}]*)\})?\s*(?:\*\s*as\s+([\w$]+))?\s*from\s*['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const m of text.matchAll(re)) {
    const [, def, named, star, from] = m;
    if (def) out.set(def, { from, name: 'default' });
    if (star) out.set(star, { from, name: '*' });
    for (const part of (named ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
      const [imported, local] = part.split(/\s+as\s+/).map((s) => s.trim());
      out.set(local ?? imported, { from, name: imported });
    }
  }
  return out;
}

// A name used in a text (a property of the same name counts too: more code
// compared, never less).
const mentions = (text, name) => new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`).test(text);

/**
 * The declarations of `text` that `names` reach (transitively), and the
 * imported names they use: { reached: [names], missing: [names], uses: [{ from, name }] }.
 */
export function reach(text, names) {
  const decls = declarations(text);
  const imported = imports(text);
  const reached = new Set();
  const missing = [];
  const uses = new Map();
  const queue = [...names];
  while (queue.length) {
    const name = queue.shift();
    if (reached.has(name)) continue;
    const body = decls.get(name);
    if (body === undefined) {
      if (!missing.includes(name)) missing.push(name);
      continue;
    }
    reached.add(name);
    for (const other of decls.keys()) if (!reached.has(other) && mentions(body, other)) queue.push(other);
    for (const [local, ref] of imported) if (mentions(body, local)) uses.set(`${ref.from}#${ref.name}`, ref);
  }
  return { reached: [...reached].sort(), missing, uses: [...uses.values()], decls };
}

/** The fingerprint of a set of declarations. */
function fingerprintOf(decls, names) {
  const hash = crypto.createHash('sha256');
  for (const name of names) hash.update(`${name}\n${decls.get(name)}\n\0`);
  return `decl:${hash.digest('hex')}`;
}

/**
 * What of upstream this package implements, read through `readFile(relPath)`:
 * for each file, its fingerprint and what it covers (the whole file, or the
 * declarations reached from the modules).
 */
export function tracedCode(readFile) {
  const files = new Map();
  const wanted = new Map(); // file -> Set of names (or '*')
  const want = (file, name) => {
    if (!wanted.has(file)) wanted.set(file, new Set());
    wanted.get(file).add(name);
  };
  for (const file of MODULES) {
    const text = readFile(file);
    files.set(file, text === null ? { file, present: false, fingerprint: null, covers: 'whole file' } : { file, present: true, fingerprint: `file:${blobId(text)}`, covers: 'whole file' });
    if (text === null) continue;
    for (const ref of imports(text).values()) want(path.posix.join(path.posix.dirname(file), ref.from), ref.name);
  }
  // Follow the imports, each file once per new name, until nothing new is reached.
  const done = new Map();
  for (let round = 0; round < 20; round++) {
    let changed = false;
    for (const [file, names] of wanted) {
      const key = [...names].sort().join(',');
      if (done.get(file) === key) continue;
      done.set(file, key);
      changed = true;
      const text = readFile(file);
      if (text === null) {
        files.set(file, { file, present: false, fingerprint: null, covers: [...names].sort().join(', ') });
        continue;
      }
      if (names.has('*') || names.has('default')) {
        files.set(file, { file, present: true, fingerprint: `file:${blobId(text)}`, covers: 'whole file' });
        continue;
      }
      const r = reach(text, names);
      files.set(file, {
        file, present: true,
        fingerprint: r.missing.length ? `file:${blobId(text)}` : fingerprintOf(r.decls, r.reached),
        covers: r.missing.length ? `whole file (${r.missing.join(', ')} not declared there)` : `${[...names].sort().join(', ')} and what ${names.size === 1 ? 'it reaches' : 'they reach'} (${r.reached.length} declarations)`,
        reached: r.reached,
      });
      for (const ref of r.uses) want(path.posix.join(path.posix.dirname(file), ref.from), ref.name);
    }
    if (!changed) break;
  }
  return [...files.values()];
}

/**
 * Compares a checkout with the implemented version. `readFile(relPath)`
 * gives a file's text or null. Returns { same, files: [{ file, covers,
 * same, fingerprint, expected }] }; a file without a recorded fingerprint is
 * compared by `expectedFiles` when given (the traced code of the implemented
 * commit, as tracedCode returns it).
 */
export function checkUpstream(readFile, expectedFiles = null) {
  const expected = new Map((expectedFiles ?? []).map((f) => [f.file, f.fingerprint]));
  const files = tracedCode(readFile).map((f) => {
    const want = expected.get(f.file) ?? IMPLEMENTED.fingerprints[f.file] ?? null;
    return { ...f, expected: want, same: want !== null && f.fingerprint === want };
  });
  return { same: files.every((f) => f.same), files };
}
