// docs/ARCHITECTURE.md holds while the code moves: its layout names every
// file of the binding and every folder of the core, and each row of its
// "To change X, touch these files" table names a file that still holds the
// fact the row says to look for.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ARCHITECTURE = fs.readFileSync(path.join(ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8');

/** The text of the section under `heading`, up to the next `## `. */
function section(heading) {
  const start = ARCHITECTURE.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `ARCHITECTURE.md has no section ${heading}`);
  const end = ARCHITECTURE.indexOf('\n## ', start + heading.length + 2);
  return ARCHITECTURE.slice(start, end < 0 ? undefined : end);
}

/** Every folder under `dir`, relative to it, with a trailing slash. */
function folders(dir, rel = '') {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [`${rel}${e.name}/`, ...folders(dir, `${rel}${e.name}/`)]);
}

/** The code spans of a "look for" cell before its first `: ` outside code (what follows explains). */
function factsIn(cell) {
  const facts = [];
  for (const [, code, colon] of cell.matchAll(/`([^`]+)`|(: )/g)) {
    if (colon) break;
    facts.push(code);
  }
  return facts;
}

test('ARCHITECTURE\'s layout names every file of the binding and every folder of the core', () => {
  const layout = section('## Layout');
  const bindingFiles = fs.readdirSync(path.join(ROOT, 'crates', 'node', 'src'));
  const unnamedFiles = bindingFiles.filter((f) => !new RegExp(`^\\s+${f.replace('.', '\\.')}\\s`, 'm').test(layout));
  assert.deepEqual(unnamedFiles, [], 'crates/node/src files the layout does not name');
  const coreFolders = folders(path.join(ROOT, 'crates', 'core', 'src'));
  assert.ok(coreFolders.length > 5, 'the core has its folders');
  const unnamedFolders = coreFolders.filter((d) => !layout.includes(d.split('/').slice(-2).join('/')));
  assert.deepEqual(unnamedFolders, [], 'crates/core/src folders the layout does not name');
});

test('each row of "To change X, touch these files" names a file that holds what it says to look for', () => {
  const rows = section('## To change X, touch these files').split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| to change'))
    .map((line) => line.split(' | ').map((cell) => cell.replace(/^\|\s*|\s*\|$/g, '')));
  assert.ok(rows.length >= 20, `the table has its rows (${rows.length})`);
  const changes = new Set(rows.map(([change]) => change).filter(Boolean));
  for (const change of ['a new event type', 'the lock staleness rule', 'the snapshot-file trust rule', 'a new OS']) {
    assert.ok(changes.has(change), `a row for ${change}`);
  }
  const stale = [];
  for (const [, file, lookFor] of rows) {
    const rel = /^`([^`]+)`$/.exec(file)?.[1];
    assert.ok(rel, `a file in backticks: ${file}`);
    const text = fs.readFileSync(path.join(ROOT, rel), 'utf8');
    const facts = factsIn(lookFor);
    assert.ok(facts.length > 0, `${rel}: the row says what to look for`);
    for (const fact of facts) if (!text.includes(fact)) stale.push(`${rel}: ${fact}`);
  }
  assert.deepEqual(stale, [], 'facts no longer where the table says');
});
