// The package's layout as napi-rs v3 publishes it: seven platform packages
// under npm/, a root package without binaries, one version everywhere, and
// the checks that refuse a tarball without its binaries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeBinary, platformKey, platformProblems, rootProblems, testHooks } from '../scripts/check-package.mjs';
import { versionMismatches } from '../scripts/version.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const readJson = (rel) => JSON.parse(fs.readFileSync(path.join(root, rel), 'utf8'));
const pkg = readJson('package.json');

const TARGETS = {
  'x86_64-unknown-linux-gnu': { key: 'linux-x64-gnu', os: 'linux', cpu: 'x64', libc: 'glibc' },
  'aarch64-unknown-linux-gnu': { key: 'linux-arm64-gnu', os: 'linux', cpu: 'arm64', libc: 'glibc' },
  'x86_64-unknown-linux-musl': { key: 'linux-x64-musl', os: 'linux', cpu: 'x64', libc: 'musl' },
  'aarch64-unknown-linux-musl': { key: 'linux-arm64-musl', os: 'linux', cpu: 'arm64', libc: 'musl' },
  'x86_64-apple-darwin': { key: 'darwin-x64', os: 'darwin', cpu: 'x64' },
  'aarch64-apple-darwin': { key: 'darwin-arm64', os: 'darwin', cpu: 'arm64' },
  'x86_64-pc-windows-msvc': { key: 'win32-x64-msvc', os: 'win32', cpu: 'x64' },
};

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-package-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Headers just long enough for describeBinary. */
function elf(machine, extra = '') {
  const b = Buffer.alloc(64);
  b.writeUInt32BE(0x7f454c46, 0);
  b[4] = 2;
  b.writeUInt16LE(machine, 18);
  return Buffer.concat([b, Buffer.from(extra, 'latin1')]);
}
function machO(cputype) {
  const b = Buffer.alloc(32);
  b.writeUInt32LE(0xfeedfacf, 0);
  b.writeUInt32LE(cputype, 4);
  return b;
}
function pe(machine) {
  const b = Buffer.alloc(256);
  b.write('MZ', 0, 'latin1');
  b.writeUInt32LE(0x80, 0x3c);
  b.writeUInt32BE(0x50450000, 0x80);
  b.writeUInt16LE(machine, 0x84);
  return b;
}

test('napi.targets lists the seven release targets, each with its npm/<platform> package', () => {
  assert.deepEqual([...pkg.napi.targets].sort(), Object.keys(TARGETS).sort());
  assert.deepEqual(fs.readdirSync(path.join(root, 'npm')).sort(), Object.values(TARGETS).map((t) => t.key).sort());
  for (const [triple, want] of Object.entries(TARGETS)) {
    assert.equal(platformKey(triple), want.key);
    const sub = readJson(`npm/${want.key}/package.json`);
    const binary = `${pkg.napi.binaryName}.${want.key}.node`;
    assert.equal(sub.name, `${pkg.name}-${want.key}`);
    assert.equal(sub.version, pkg.version);
    assert.deepEqual(sub.os, [want.os], want.key);
    assert.deepEqual(sub.cpu, [want.cpu], want.key);
    assert.deepEqual(sub.libc, want.libc ? [want.libc] : undefined, want.key);
    assert.equal(sub.main, binary);
    assert.deepEqual(sub.files, [binary]);
    for (const field of ['license', 'engines', 'repository', 'homepage', 'bugs']) assert.deepEqual(sub[field], pkg[field], `${want.key} ${field}`);
    assert.match(sub.scripts.prepack, /existsSync\(m\)/, `${want.key} refuses to pack without its binary`);
  }
});

test('the root package: no binary of its own, its metadata, LICENSE and CHANGELOG', () => {
  assert.ok(!pkg.files.some((f) => f.endsWith('.node')), 'no .node in files');
  assert.equal(pkg.optionalDependencies, undefined, 'napi prepublish writes optionalDependencies at publish');
  for (const f of ['LICENSE', 'CHANGELOG.md', 'README.md', 'index.js', 'index.mjs', 'index.d.ts', 'binding.js']) {
    assert.ok(pkg.files.includes(f), `${f} in files`);
    assert.ok(fs.existsSync(path.join(root, f)), `${f} exists`);
  }
  assert.equal(pkg.license, 'MIT');
  const license = fs.readFileSync(path.join(root, 'LICENSE'), 'utf8');
  assert.match(license, /^MIT License\n\nCopyright \(c\) \d{4} quiver-live-native contributors\n/);
  const newest = /^## (\S+)/m.exec(fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8'))?.[1];
  assert.equal(newest, pkg.version, "the CHANGELOG's newest entry is package.json's version");
  assert.match(pkg.repository.url, /^git\+https:\/\/github\.com\/.+\.git$/);
  assert.ok(pkg.homepage && pkg.bugs.url);
  assert.equal(pkg.scripts.prepack, 'node scripts/check-package.mjs');
});

test('the toolchain floors: package.json, Cargo.toml and the README say the same', () => {
  assert.equal(pkg.engines.node, '>= 20.17');
  const cli = readJson('node_modules/@napi-rs/cli/package.json');
  assert.match(cli.engines.node, /^\^20\.17\.0 /, '@napi-rs/cli still needs 20.17 on the 20 line');
  assert.match(fs.readFileSync(path.join(root, 'Cargo.toml'), 'utf8'), /^rust-version = "1\.89"$/m);
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  assert.match(readme, /Node(\.js)? (>=|≥) 20\.17/);
  assert.match(readme, /Rust (>=|≥) 1\.89/);
});

test('one version in package.json, Cargo.toml, Cargo.lock and npm/*; a difference is found', (t) => {
  assert.deepEqual(versionMismatches(), []);
  const dir = tempDir(t);
  for (const f of ['package.json', 'Cargo.toml', 'Cargo.lock']) fs.copyFileSync(path.join(root, f), path.join(dir, f));
  fs.cpSync(path.join(root, 'npm'), path.join(dir, 'npm'), { recursive: true });
  const toml = path.join(dir, 'Cargo.toml');
  fs.writeFileSync(toml, fs.readFileSync(toml, 'utf8').replace(/^version = "[^"]*"/m, 'version = "9.9.9"'));
  const sub = path.join(dir, 'npm', 'darwin-x64', 'package.json');
  fs.writeFileSync(sub, JSON.stringify({ ...JSON.parse(fs.readFileSync(sub, 'utf8')), version: '0.0.1' }));
  assert.deepEqual(versionMismatches(dir), ['Cargo.toml: 9.9.9', 'npm/darwin-x64/package.json: 0.0.1']);
});

test('prepack refuses the root without optionalDependencies for every target at its version', () => {
  const [problem, ...rest] = rootProblems(pkg);
  assert.deepEqual(rest, []);
  for (const { key } of Object.values(TARGETS)) assert.ok(problem.includes(`quiver-live-native-${key}@${pkg.version}`), key);
  const published = Object.fromEntries(Object.values(TARGETS).map(({ key }) => [`quiver-live-native-${key}`, pkg.version]));
  assert.deepEqual(rootProblems({ ...pkg, optionalDependencies: published }), []);
  const stale = rootProblems({ ...pkg, optionalDependencies: { ...published, 'quiver-live-native-darwin-arm64': '0.0.1' } });
  assert.equal(stale.length, 1);
  assert.match(stale[0], /quiver-live-native-darwin-arm64@\S+ \(lists 0\.0\.1\)/);
  assert.match(rootProblems({ ...pkg, files: [...pkg.files, '*.node'], optionalDependencies: published })[0], /carries no binary/);
});

test('binaries are told apart by their headers', () => {
  assert.deepEqual(describeBinary(elf(62, 'GLIBC_2.2.5\0GLIBC_2.17\0libc.so.6\0')), { format: 'elf', os: 'linux', cpu: 'x64', glibc: [2, 17], musl: false });
  assert.deepEqual(describeBinary(elf(183, 'libc.so\0')), { format: 'elf', os: 'linux', cpu: 'arm64', glibc: null, musl: true });
  assert.deepEqual(describeBinary(machO(0x01000007)), { format: 'mach-o', os: 'darwin', cpu: 'x64' });
  assert.deepEqual(describeBinary(machO(0x0100000c)), { format: 'mach-o', os: 'darwin', cpu: 'arm64' });
  assert.deepEqual(describeBinary(pe(0x8664)), { format: 'pe', os: 'win32', cpu: 'x64' });
  assert.deepEqual(describeBinary(Buffer.from('not a binary at all, just some text')), { format: 'unknown' });
});

test('the release check refuses a platform package without its binary, or with the wrong one', (t) => {
  const dir = tempDir(t);
  const stage = (key, bytes) => {
    const d = path.join(dir, key);
    fs.cpSync(path.join(root, 'npm', key), d, { recursive: true });
    if (bytes) fs.writeFileSync(path.join(d, `quiver-live-native.${key}.node`), bytes);
    return d;
  };
  assert.match(platformProblems(stage('darwin-x64'))[0], /quiver-live-native\.darwin-x64\.node is missing/);
  assert.deepEqual(platformProblems(stage('linux-arm64-gnu', elf(183, 'GLIBC_2.17\0libc.so.6\0'))), []);
  assert.match(platformProblems(stage('linux-x64-gnu', elf(183, 'GLIBC_2.17\0')))[0], /for linux arm64, not linux x64/);
  const newGlibc = stage('linux-x64-musl', elf(62, 'GLIBC_2.34\0libc.so.6\0'));
  assert.match(platformProblems(newGlibc)[0], /links glibc, not musl/);
  fs.rmSync(path.join(dir, 'linux-x64-gnu'), { recursive: true });
  const floor = stage('linux-x64-gnu', elf(62, 'GLIBC_2.34\0libc.so.6\0'));
  assert.match(platformProblems(floor)[0], /needs glibc 2\.34, above the 2\.17 floor/);
  assert.deepEqual(platformProblems(floor, { glibcFloor: false }), []);
  assert.deepEqual(platformProblems(stage('darwin-arm64', machO(0x0100000c))), []);
  assert.match(platformProblems(stage('win32-x64-msvc', machO(0x01000007)))[0], /mach-o binary for darwin x64, not win32 x64/);
  const hooked = stage('linux-arm64-musl', elf(183, 'libc.so\0storePanicForTest\0storeOpen\0'));
  assert.deepEqual(platformProblems(hooked), [
    `quiver-live-native-linux-arm64-musl: quiver-live-native.linux-arm64-musl.node is a test build, with the test hooks storePanicForTest (release binaries come from \`npm run build\`)`,
  ]);
  assert.deepEqual(platformProblems(hooked, { testBuild: true }), []);
});

test('test hooks: npm test builds with them, the release build (npm run build) without', () => {
  const { build, 'build:test': buildTest, test: npmTest } = pkg.scripts;
  assert.match(buildTest, / --features test-hooks /);
  assert.equal(buildTest.replace(' --features test-hooks', ''), build, 'the test build is the release build plus the feature');
  assert.doesNotMatch(build, /features/);
  assert.match(npmTest, /^npm run build:test && /);
  assert.match(fs.readFileSync(path.join(root, 'crates', 'node', 'Cargo.toml'), 'utf8'), /^\[features\]\n(#.*\n)*test-hooks = \[\]$/m);
  // The hook's name is what the release check looks for.
  const binding = createRequire(import.meta.url)('../binding.js');
  const loaded = Object.keys(createRequire(import.meta.url).cache).find((p) => p.endsWith('.node'));
  const hooks = Object.keys(binding).filter((name) => name.endsWith('ForTest'));
  assert.deepEqual(testHooks(fs.readFileSync(loaded)), hooks);
});

test('the binary this run loads is what its name says', () => {
  const require = createRequire(import.meta.url);
  require('../binding.js');
  const loaded = Object.keys(require.cache).find((p) => p.endsWith('.node'));
  const key = path.basename(loaded).split('.').at(-2);
  const got = describeBinary(fs.readFileSync(loaded));
  const [osName, cpu, abi] = key.split('-');
  assert.equal(got.os, osName, key);
  assert.equal(got.cpu, cpu, key);
  if (abi === 'musl') assert.equal(got.musl, true, key);
  if (abi === 'gnu' && osName === 'linux') assert.ok(got.glibc, key);
});
