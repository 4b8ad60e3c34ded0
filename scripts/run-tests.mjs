#!/usr/bin/env node
// Runs the Node suites with node:test, the same way on every Node line.
//
//   node scripts/run-tests.mjs [--list] [DIR_OR_FILE ...] [-- NODE_TEST_FLAGS ...]
//
// `node --test DIR/` runs nothing on Node 22+ (it takes files or globs
// there), and Node 20 takes no globs, so this lists the files itself: every
// `*.test.mjs` under the given directories (default: __test__), each once,
// sorted, skipping node_modules. Helper modules (workers, fixtures, support)
// do not end in `.test.mjs` and are not run. The files are handed to one
// `node --test` of the node running this script; its exit code is this one's.
// --list prints the files and runs nothing.
//
// Tests must leave nothing behind. They run with TMPDIR set to a fresh
// directory, which must be empty again when they end, and the package's tree
// (everything but .git and node_modules) must hold the same entries after as
// before, with git's view of the tracked files unchanged; otherwise this
// names what was left or changed and fails.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TEST_FILE = /\.test\.mjs$/;

function collect(abs, out) {
  const st = fs.statSync(abs, { throwIfNoEntry: false });
  if (!st) {
    console.error(`run-tests: ${path.relative(PACKAGE_DIR, abs)} does not exist`);
    process.exit(1);
  }
  if (st.isFile()) {
    out.add(abs);
    return;
  }
  for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const p = path.join(abs, entry.name);
    if (entry.isDirectory()) collect(p, out);
    else if (entry.isFile() && TEST_FILE.test(entry.name)) out.add(p);
  }
}

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const ours = dash === -1 ? argv : argv.slice(0, dash);
const listOnly = ours.includes('--list');
const targets = ours.filter((a) => a !== '--list');
const flags = dash === -1 ? [] : argv.slice(dash + 1);

const found = new Set();
for (const target of targets.length ? targets : ['__test__']) {
  collect(path.resolve(PACKAGE_DIR, target), found);
}
const files = [...found].map((f) => path.relative(PACKAGE_DIR, f)).sort();
if (files.length === 0) {
  console.error(`run-tests: no *.test.mjs files under ${targets.join(', ') || '__test__'}`);
  process.exit(1);
}

/** Every file and directory under `dir` but .git and node_modules, relative. */
function entries(dir, rel = '', out = new Set()) {
  for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    if (entry.name === '.git' || entry.name === 'node_modules') continue;
    const p = path.join(rel, entry.name);
    out.add(p);
    if (entry.isDirectory()) entries(dir, p, out);
  }
  return out;
}

/** `git status` of the package's tracked files, or null where git cannot tell. */
function gitStatus() {
  const r = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: PACKAGE_DIR, encoding: 'utf8' });
  return r.status === 0 ? r.stdout : null;
}

const NODE_COMPILE_CACHE = 'node-compile-cache';

/** What the run left behind or changed, one line each. */
function leftovers(tmp, before, statusBefore) {
  const found = [];
  for (const p of entries(tmp)) {
    // Node's own module compile cache, which newer Node lines keep in the
    // temporary directory: written by Node, not left by a test.
    if (p.split(path.sep)[0] === NODE_COMPILE_CACHE) continue;
    found.push(`left in the tests' TMPDIR: ${p}`);
  }
  const after = entries(PACKAGE_DIR);
  for (const p of after) if (!before.has(p)) found.push(`left in the package: ${p}`);
  for (const p of before) if (!after.has(p)) found.push(`removed from the package: ${p}`);
  const statusAfter = gitStatus();
  if (statusBefore !== null && statusAfter !== statusBefore) found.push(`tracked files changed: git status was\n${statusBefore || '(clean)\n'}and is\n${statusAfter || '(clean)\n'}`);
  return found;
}

console.log(`run-tests: Node ${process.version}, ${files.length} files: ${files.join(' ')}`);
if (listOnly) process.exit(0);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-tests-'));
// As open as /tmp itself: some tests run workers as another user.
fs.chmodSync(tmp, 0o1777);
const before = entries(PACKAGE_DIR);
const statusBefore = gitStatus();
const r = spawnSync(process.execPath, ['--test', ...flags, ...files], {
  cwd: PACKAGE_DIR, stdio: 'inherit', env: { ...process.env, TMPDIR: tmp, TMP: tmp, TEMP: tmp },
});
const left = leftovers(tmp, before, statusBefore);
fs.rmSync(tmp, { recursive: true, force: true });
if (r.error) throw r.error;
if (left.length) {
  console.error(`run-tests: the tests left files behind or changed the package:\n  ${left.join('\n  ')}`);
  process.exit(1);
}
if (r.signal) {
  console.error(`run-tests: node --test ended by ${r.signal}`);
  process.exit(1);
}
process.exit(r.status ?? 1);
