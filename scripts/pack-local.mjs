#!/usr/bin/env node
// Tarballs that install without a registry, from the binaries built here
// (`npm run build` puts this machine's beside package.json):
//
//   node scripts/pack-local.mjs DIR
//
// writes DIR/quiver-live-native-<version>.tgz, the root package as `napi
// prepublish` would publish it (optionalDependencies naming every target),
// and DIR/quiver-live-native-<platform>-<version>.tgz for each binary found
// (beside package.json, and the one QUIVER_LIVE_NATIVE_BINARY names).
// Install them together: `npm install DIR/*.tgz`. The packages of the other
// platforms are optional and left out. Each tarball passes the checks of
// scripts/check-package.mjs, two aside: the glibc floor (a local build links
// against this machine's glibc) and test hooks (after `npm test`, the build
// here is the test build). Prints the tarballs' paths as JSON.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { platformKey, platformProblems, rootProblems } from './check-package.mjs';
import { runNpm } from './npm.mjs';

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function fail(message) {
  console.error(`pack-local: ${message}`);
  process.exit(1);
}

function pack(dir, out) {
  const r = runNpm('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], { cwd: dir });
  if (r.status !== 0) fail(`npm pack in ${dir} failed: ${r.error?.message ?? r.stderr.trim()}`);
  const [result] = JSON.parse(r.stdout);
  return path.join(out, result.filename);
}

const outArg = process.argv[2];
if (!outArg) fail('usage: node scripts/pack-local.mjs DIR');
const out = path.resolve(outArg);
fs.mkdirSync(out, { recursive: true });

const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8'));
const binaryName = pkg.napi.binaryName;
// key -> binary: those beside package.json, and the one QUIVER_LIVE_NATIVE_BINARY names
// (a cross build) when its name is a target's.
const built = new Map();
for (const key of pkg.napi.targets.map(platformKey)) {
  const file = path.join(PACKAGE_DIR, `${binaryName}.${key}.node`);
  if (fs.existsSync(file)) built.set(key, file);
}
const chosen = process.env.QUIVER_LIVE_NATIVE_BINARY;
const chosenKey = chosen && new RegExp(`^${binaryName}\\.(.+)\\.node$`).exec(path.basename(chosen))?.[1];
if (chosenKey && pkg.napi.targets.map(platformKey).includes(chosenKey)) built.set(chosenKey, path.resolve(chosen));
if (built.size === 0) fail(`no ${binaryName}.<platform>.node beside package.json: run npm run build first`);

const stage = fs.mkdtempSync(path.join(out, '.stage-'));
try {
  const root = path.join(stage, 'root');
  fs.mkdirSync(root);
  for (const entry of pkg.files) fs.cpSync(path.join(PACKAGE_DIR, entry), path.join(root, entry), { recursive: true });
  const optionalDependencies = Object.fromEntries(pkg.napi.targets.map((t) => [`${binaryName}-${platformKey(t)}`, pkg.version]));
  const staged = { ...pkg, optionalDependencies };
  const problems = rootProblems(staged);
  if (problems.length) fail(problems.join('; '));
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify(staged, null, 2) + '\n');
  const tarballs = [pack(root, out)];

  for (const [key, file] of built) {
    const dir = path.join(stage, key);
    fs.cpSync(path.join(PACKAGE_DIR, 'npm', key), dir, { recursive: true });
    fs.copyFileSync(file, path.join(dir, `${binaryName}.${key}.node`));
    const wrong = platformProblems(dir, { glibcFloor: false, testBuild: true });
    if (wrong.length) fail(wrong.join('; '));
    tarballs.push(pack(dir, out));
  }
  console.log(JSON.stringify(tarballs));
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}
