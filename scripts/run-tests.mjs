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

import fs from 'node:fs';
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

console.log(`run-tests: Node ${process.version}, ${files.length} files: ${files.join(' ')}`);
if (listOnly) process.exit(0);
const r = spawnSync(process.execPath, ['--test', ...flags, ...files], { cwd: PACKAGE_DIR, stdio: 'inherit' });
if (r.error) throw r.error;
if (r.signal) {
  console.error(`run-tests: node --test ended by ${r.signal}`);
  process.exit(1);
}
process.exit(r.status ?? 1);
