// The published types, as a consumer's TypeScript sees them: every export of
// `quiver-live-native` and `quiver-live-native/vendor`, through `import` and
// `require`, under node16 and bundler resolution with --strict. And, where
// attw (@arethetypeswrong/cli) is at hand (ATTW=path), the packed tarball
// passes it for every entry and resolution mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runNpm, npmRuns } from '../scripts/npm.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

function typescript() {
  try {
    return createRequire(path.join(root, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return null;
  }
}

/** A temp project with the package's published files in node_modules. */
function consumer(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-types-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const installed = path.join(dir, 'node_modules', pkg.name);
  fs.mkdirSync(installed, { recursive: true });
  for (const entry of [...pkg.files, 'package.json']) fs.cpSync(path.join(root, entry), path.join(installed, entry), { recursive: true });
  return dir;
}

const ESM_USE = `
import api, { createLiveSessionStore, GENERATION_FENCED_PHASES, withSourceLockSync, sourceLockPath } from 'quiver-live-native'
import type { LiveSessionSnapshot, LiveSessionStore, SourceLockedError } from 'quiver-live-native'
import { vendor, writeShims, VendorError } from 'quiver-live-native/vendor'
import type { VendorReport } from 'quiver-live-native/vendor'

const store: LiveSessionStore = createLiveSessionStore({ cwd: '.', sessionId: 'a1', durable: true })
const snapshot: LiveSessionSnapshot = store.appendEvent({ type: 'generate', count: 3 })
const phase: string = snapshot.phase
const maybe: LiveSessionSnapshot | null = api.createLiveSessionStore().getSnapshot('a1', { includeCompleted: true })
const fenced: boolean = GENERATION_FENCED_PHASES.has(phase)
const n: number = withSourceLockSync('a.css', { who: 'me' }, () => 1, { waitMs: 10, retryMs: 1 })
const lock: string = sourceLockPath('a.css', '.')
const report: VendorReport = vendor('out', { platforms: ['current'], shims: 'live', force: false })
const shims = writeShims('live', 'out')
const moved: string[] = shims.moved.map((m) => m.from)
const error = new VendorError('no', 'QLN_NO_BINARY')
const locked = (e: unknown) => (e as SourceLockedError).code === 'SOURCE_LOCKED'
export { store, maybe, fenced, n, lock, report, moved, error, locked }
`;

const CJS_USE = `
import native = require('quiver-live-native')
import vendoring = require('quiver-live-native/vendor')
const store: native.LiveSessionStore = native.createLiveSessionStore({ cwd: '.' })
const list: native.LiveSessionSnapshot[] = store.listActiveSessions()
const lock: string = native.sourceLockPath('a.css')
const fenced: boolean = native.GENERATION_FENCED_PHASES.has('completed')
const total: number = vendoring.vendor('out').totalBytes
export = { list, lock, fenced, total }
`;

function tsc(t, dir, files, options) {
  const args = [typescript(), '--strict', '--noEmit', '--skipLibCheck', 'false', ...options, ...files];
  const r = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}`.trim() };
}

const noTypescript = !typescript() && 'typescript is not installed (a devDependency: npm ci)';

test('tsc --strict accepts every export through import and require (node16, bundler)', { skip: noTypescript, timeout: 240_000 }, (t) => {
  const dir = consumer(t);
  fs.writeFileSync(path.join(dir, 'use.mts'), ESM_USE);
  fs.writeFileSync(path.join(dir, 'use.cts'), CJS_USE);
  const node16 = tsc(t, dir, ['use.mts', 'use.cts'], ['--module', 'node16', '--moduleResolution', 'node16']);
  assert.equal(node16.status, 0, node16.out);
  const bundler = tsc(t, dir, ['use.mts'], ['--module', 'esnext', '--moduleResolution', 'bundler']);
  assert.equal(bundler.status, 0, bundler.out);
});

test('the types are the package\'s, not any: a wrong call is an error under both entries', { skip: noTypescript, timeout: 240_000 }, (t) => {
  const dir = consumer(t);
  fs.writeFileSync(path.join(dir, 'bad.mts'), `import { createLiveSessionStore } from 'quiver-live-native'\nimport { vendor } from 'quiver-live-native/vendor'\n` +
    `createLiveSessionStore({ durable: 'yes' })\nvendor(42)\n`);
  fs.writeFileSync(path.join(dir, 'bad.cts'), `import native = require('quiver-live-native')\nnative.sourceLockPath(1)\n`);
  const r = tsc(t, dir, ['bad.mts', 'bad.cts'], ['--module', 'node16', '--moduleResolution', 'node16']);
  assert.notEqual(r.status, 0);
  assert.match(r.out, /bad\.mts\(3,\d+\): error TS2322/);
  assert.match(r.out, /bad\.mts\(4,\d+\): error TS2345/);
  assert.match(r.out, /bad\.cts\(2,\d+\): error TS2345/);
});

test('attw finds no problem in the packed tarball, for every entry and resolution mode', { timeout: 180_000 }, (t) => {
  const attw = process.env.ATTW;
  if (!attw) return t.skip('ATTW not set: npm run release:rehearse installs @arethetypeswrong/cli and runs it');
  if (!npmRuns()) return t.skip('npm does not run here');
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-attw-'));
  t.after(() => fs.rmSync(out, { recursive: true, force: true }));
  const packed = runNpm('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], { cwd: root, env: { ...process.env, TMPDIR: out } });
  assert.equal(packed.status, 0, packed.stderr);
  const tarball = path.join(out, JSON.parse(packed.stdout)[0].filename);
  const r = spawnSync(attw, [tarball], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /No problems found/);
  for (const entry of [pkg.name, `${pkg.name}/vendor`]) assert.ok(r.stdout.includes(`"${entry}"`), `attw checked ${entry}`);
});
