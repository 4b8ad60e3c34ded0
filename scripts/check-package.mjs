#!/usr/bin/env node
// Refuses a package that would install without its binaries.
//
//   node scripts/check-package.mjs            the root package (its `prepack`)
//   node scripts/check-package.mjs --release  every npm/<platform> package (`prepublishOnly`, before napi prepublish)
//
// The root package carries no binary: each platform's comes in its own
// package, `quiver-live-native-<platform>`, which the root lists in
// `optionalDependencies` so that npm installs the one that fits. `napi
// prepublish` writes that list at publish time (after publishing the
// platform packages). A root tarball without it installs everywhere and then
// fails at `require`, so the root check wants every target listed at the
// root's own version, no `.node` among the root's files, and the versions of
// Cargo.toml, Cargo.lock and npm/* equal to package.json's.
//
// A platform package's binary is its `main`: the release check wants it
// present and built for that package's OS, CPU and C library (an ELF,
// Mach-O or PE header with the right machine; on Linux gnu no glibc symbol
// newer than 2.17, on musl no glibc at all), and without the test build's
// hooks (functions named `*ForTest`, which only the test-hooks feature
// compiles in). Each npm/<platform> package.json also has a `prepack` of its
// own that refuses a tarball without its `main`.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { versionMismatches } from './version.mjs';

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const GLIBC_FLOOR = [2, 17];

/** napi's platform key of a Rust target triple (the ones this package builds). */
export function platformKey(triple) {
  const keys = {
    'x86_64-unknown-linux-gnu': 'linux-x64-gnu',
    'aarch64-unknown-linux-gnu': 'linux-arm64-gnu',
    'x86_64-unknown-linux-musl': 'linux-x64-musl',
    'aarch64-unknown-linux-musl': 'linux-arm64-musl',
    'x86_64-apple-darwin': 'darwin-x64',
    'aarch64-apple-darwin': 'darwin-arm64',
    'x86_64-pc-windows-msvc': 'win32-x64-msvc',
  };
  const key = keys[triple];
  if (!key) throw new Error(`no platform key known for ${triple}`);
  return key;
}

/** The problems of a root package.json that would make a tarball without binaries. */
export function rootProblems(pkg) {
  const problems = [];
  for (const entry of pkg.files ?? []) {
    if (/\.node$/.test(entry)) problems.push(`"files" names ${entry}: the root package carries no binary`);
  }
  const optional = pkg.optionalDependencies ?? {};
  const missing = [];
  for (const triple of pkg.napi?.targets ?? []) {
    const name = `${pkg.napi.binaryName}-${platformKey(triple)}`;
    if (optional[name] !== pkg.version) missing.push(`${name}@${pkg.version}${name in optional ? ` (lists ${optional[name]})` : ''}`);
  }
  if (missing.length) {
    problems.push(
      `optionalDependencies lacks ${missing.join(', ')}. They bring the binaries; \`napi prepublish -t npm\` ` +
        'writes them when publishing (npm publish runs it first, as prepublishOnly)',
    );
  }
  return problems;
}

/** Whether glibc version `a` ([major, minor]) is newer than `b`. */
const newerGlibc = (a, b) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

/** What a binary's header says it is built for: { format, os, cpu, glibc, musl }. */
export function describeBinary(bytes) {
  if (bytes.length >= 20 && bytes.readUInt32BE(0) === 0x7f454c46) {
    const cpu = { 62: 'x64', 183: 'arm64' }[bytes.readUInt16LE(18)] ?? `e_machine ${bytes.readUInt16LE(18)}`;
    const text = bytes.toString('latin1');
    let glibc = null;
    for (const m of text.matchAll(/GLIBC_(\d+)\.(\d+)/g)) {
      const v = [Number(m[1]), Number(m[2])];
      if (!glibc || newerGlibc(v, glibc)) glibc = v;
    }
    return { format: 'elf', os: 'linux', cpu, glibc, musl: !glibc && !text.includes('libc.so.6') };
  }
  if (bytes.length >= 8 && bytes.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = { 0x01000007: 'x64', 0x0100000c: 'arm64' }[bytes.readUInt32LE(4)] ?? `cputype ${bytes.readUInt32LE(4)}`;
    return { format: 'mach-o', os: 'darwin', cpu };
  }
  if (bytes.length >= 64 && bytes.toString('latin1', 0, 2) === 'MZ') {
    const pe = bytes.readUInt32LE(0x3c);
    if (bytes.length >= pe + 6 && bytes.readUInt32BE(pe) === 0x50450000) {
      const cpu = { 0x8664: 'x64', 0xaa64: 'arm64' }[bytes.readUInt16LE(pe + 4)] ?? `machine ${bytes.readUInt16LE(pe + 4)}`;
      return { format: 'pe', os: 'win32', cpu };
    }
  }
  return { format: 'unknown' };
}

/**
 * The test build's hooks a binary carries: the names of the functions it
 * registers (NUL-terminated, as Node-API takes them) that end in `ForTest`.
 */
export function testHooks(bytes) {
  return [...new Set([...bytes.toString('latin1').matchAll(/([A-Za-z]\w*ForTest)\0/g)].map((m) => m[1]))];
}

/**
 * The problems of a platform package dir: its binary missing, or built for
 * another platform (or, unless `glibcFloor` is false, for a newer glibc), or
 * (unless `testBuild` is true) a test build.
 */
export function platformProblems(dir, { glibcFloor = true, testBuild = false } = {}) {
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const file = path.join(dir, pkg.main);
  if (!fs.existsSync(file)) return [`${pkg.name}: ${pkg.main} is missing (build it, then \`napi artifacts\`)`];
  const bytes = fs.readFileSync(file);
  const got = describeBinary(bytes);
  const want = { os: pkg.os?.[0], cpu: pkg.cpu?.[0], libc: pkg.libc?.[0] };
  const problems = [];
  if (got.os !== want.os || got.cpu !== want.cpu) {
    problems.push(`${pkg.name}: ${pkg.main} is a ${got.format} binary for ${got.os ?? '?'} ${got.cpu ?? '?'}, not ${want.os} ${want.cpu}`);
  }
  if (glibcFloor && want.libc === 'glibc' && got.glibc && newerGlibc(got.glibc, GLIBC_FLOOR)) {
    problems.push(`${pkg.name}: ${pkg.main} needs glibc ${got.glibc.join('.')}, above the ${GLIBC_FLOOR.join('.')} floor (build with --target <triple>.2.17 -x)`);
  }
  if (want.libc === 'musl' && got.format === 'elf' && !got.musl) {
    problems.push(`${pkg.name}: ${pkg.main} links glibc, not musl`);
  }
  const hooks = testBuild ? [] : testHooks(bytes);
  if (hooks.length) problems.push(`${pkg.name}: ${pkg.main} is a test build, with the test hooks ${hooks.join(', ')} (release binaries come from \`npm run build\`)`);
  return problems;
}

function main() {
  const release = process.argv.includes('--release');
  const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8'));
  const problems = versionMismatches(PACKAGE_DIR).map((m) => `version differs from package.json's ${pkg.version}: ${m}`);
  if (release) {
    for (const triple of pkg.napi.targets) problems.push(...platformProblems(path.join(PACKAGE_DIR, 'npm', platformKey(triple))));
  } else {
    problems.push(...rootProblems(pkg));
  }
  if (problems.length) {
    console.error(`check-package: refusing to ${release ? 'publish' : 'pack'} ${pkg.name}:\n  - ${problems.join('\n  - ')}`);
    if (!release) console.error('For a tarball that installs on this machine, build and run `node scripts/pack-local.mjs DIR`.');
    process.exit(1);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
