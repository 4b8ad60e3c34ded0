#!/usr/bin/env node
// Keeps one version everywhere the package states it: package.json (the
// source), the Cargo workspace (Cargo.toml and Cargo.lock's entries for the
// two crates) and every npm/<platform>/package.json.
//
//   node scripts/version.mjs           check; exit 1 naming each file that differs
//   node scripts/version.mjs --write   write package.json's version into the others
//
// `npm version` runs the --write form (see package.json's "version" script).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CRATES = ['quiver-live-core', 'quiver-live-native'];

const WORKSPACE_VERSION = /^(\[workspace\.package\][^[]*?^version\s*=\s*")([^"]*)(")/m;
const lockVersion = (crate) => new RegExp(`^(name = "${crate}"\\nversion = ")([^"]*)(")`, 'm');

function read(rel) {
  return fs.readFileSync(path.join(PACKAGE_DIR, rel), 'utf8');
}

/** Every place a version is stated, with what it states and how to rewrite it. */
export function versionSites(dir = PACKAGE_DIR) {
  const at = (rel) => fs.readFileSync(path.join(dir, rel), 'utf8');
  const sites = [];
  const toml = at('Cargo.toml');
  sites.push({ file: 'Cargo.toml', version: WORKSPACE_VERSION.exec(toml)?.[2], pattern: WORKSPACE_VERSION });
  const lock = at('Cargo.lock');
  for (const crate of CRATES) {
    sites.push({ file: 'Cargo.lock', crate, version: lockVersion(crate).exec(lock)?.[2], pattern: lockVersion(crate) });
  }
  for (const name of fs.readdirSync(path.join(dir, 'npm')).sort()) {
    const rel = `npm/${name}/package.json`; // also the label: '/' on every OS
    if (fs.existsSync(path.join(dir, rel))) sites.push({ file: rel, version: JSON.parse(at(rel)).version, json: true });
  }
  return sites;
}

export function packageVersion(dir = PACKAGE_DIR) {
  return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
}

/** The sites whose version is not package.json's, as "file (crate): found". */
export function versionMismatches(dir = PACKAGE_DIR) {
  const want = packageVersion(dir);
  return versionSites(dir)
    .filter((s) => s.version !== want)
    .map((s) => `${s.file}${s.crate ? ` (${s.crate})` : ''}: ${s.version ?? 'no version found'}`);
}

function write() {
  const want = packageVersion();
  for (const site of versionSites()) {
    if (site.version === want) continue;
    const text = read(site.file);
    let next;
    if (site.json) {
      const json = JSON.parse(text);
      json.version = want;
      next = JSON.stringify(json, null, 2) + '\n';
    } else {
      next = text.replace(site.pattern, `$1${want}$3`);
    }
    fs.writeFileSync(path.join(PACKAGE_DIR, site.file), next);
    console.log(`version: ${site.file}${site.crate ? ` (${site.crate})` : ''} ${site.version} -> ${want}`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) write();
  const wrong = versionMismatches();
  if (wrong.length) {
    console.error(`version: package.json says ${packageVersion()}, but\n  ${wrong.join('\n  ')}\nRun node scripts/version.mjs --write.`);
    process.exit(1);
  }
}
