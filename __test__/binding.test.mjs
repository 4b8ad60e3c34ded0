// binding.js, the loader: which binary it picks, and what a user sees where
// none fits. Each case runs in a child process, some with process.platform
// and process.arch faked before the package is required.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { SUPPORTED_PLATFORMS } = require('../binding.js');

/** Runs `script` in a child Node (without QUIVER_LIVE_NATIVE_BINARY unless given); its JSON output. */
function child(script, env = {}) {
  const base = { ...process.env };
  delete base.QUIVER_LIVE_NATIVE_BINARY;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: root, env: { ...base, ...env }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** A child that fakes the platform, requires the package and reports how that failed. */
function requireAs(platform, arch) {
  return child(`
    Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} });
    Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} });
    let out;
    try { require('./index.js'); out = { loaded: true }; }
    catch (e) { out = { message: e.message, code: e.code }; }
    console.log(JSON.stringify(out));
  `);
}

function loadedBinary() {
  return Object.keys(require.cache).find((p) => p.endsWith('.node'));
}

test('QUIVER_LIVE_NATIVE_BINARY loads the file it names', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-binding-'));
  try {
    const copy = path.join(dir, 'chosen.node');
    fs.copyFileSync(loadedBinary(), copy);
    const out = child(
      `const api = require('./index.js');
       console.log(JSON.stringify({ loaded: Object.keys(require.cache).filter((p) => p.endsWith('.node')),
         lock: typeof api.sourceLockPath('a.css', process.cwd()) }));`,
      { QUIVER_LIVE_NATIVE_BINARY: copy },
    );
    assert.deepEqual(out, { loaded: [fs.realpathSync(copy)], lock: 'string' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('QUIVER_LIVE_NATIVE_BINARY naming no loadable file fails, naming it', () => {
  const missing = path.join(os.tmpdir(), 'qln-no-such-binary.node');
  const out = child(
    `try { require('./index.js'); console.log('{}'); }
     catch (e) { console.log(JSON.stringify({ message: e.message, code: e.code, cause: !!e.cause })); }`,
    { QUIVER_LIVE_NATIVE_BINARY: missing },
  );
  assert.equal(out.code, 'ERR_QUIVER_LIVE_NATIVE_BINARY');
  assert.ok(out.message.startsWith(`quiver-live-native could not load QUIVER_LIVE_NATIVE_BINARY=${missing}: `), out.message);
  assert.equal(out.cause, true);
});

test('an unsupported platform: the error names it, lists the supported ones and the fallback', () => {
  for (const [platform, arch] of [['freebsd', 'x64'], ['linux', 'riscv64'], ['win32', 'arm64'], ['darwin', 'ppc64']]) {
    const out = requireAs(platform, arch);
    assert.equal(out.code, 'ERR_QUIVER_LIVE_NATIVE_UNSUPPORTED_PLATFORM', `${platform} ${arch}`);
    assert.match(out.message, new RegExp(`^quiver-live-native has no binary for ${platform} ${arch} \\(${platform}-${arch}`));
    assert.ok(out.message.includes(`Supported: ${SUPPORTED_PLATFORMS.join(', ')}.`), out.message);
    assert.ok(out.message.includes('skill/scripts/live/session-store.mjs and source-lock.mjs'), out.message);
    assert.doesNotMatch(out.message, /npm has a bug/);
  }
});

test('a supported platform whose package is not installed: the error names the package and both ways out', () => {
  const current = path.basename(loadedBinary()).split('.').at(-2);
  const other = SUPPORTED_PLATFORMS.find((key) => key !== current && !fs.existsSync(path.join(root, `quiver-live-native.${key}.node`)));
  const [platform, arch] = other.split('-');
  if (platform === 'linux') return; // gnu or musl follows the real C library, not a faked one
  const out = requireAs(platform, arch);
  assert.equal(out.code, 'ERR_QUIVER_LIVE_NATIVE_BINARY');
  assert.ok(out.message.startsWith(`quiver-live-native could not load its binary for ${platform} ${arch}: the package quiver-live-native-${other} is missing`), out.message);
  assert.ok(out.message.includes('Reinstall with optional dependencies'), out.message);
  assert.ok(out.message.includes('skill/scripts/live/session-store.mjs'), out.message);
});

test('the supported list is package.json\'s targets', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const keys = fs.readdirSync(path.join(root, 'npm')).sort();
  assert.deepEqual([...SUPPORTED_PLATFORMS].sort(), keys);
  assert.equal(pkg.napi.targets.length, keys.length);
});
