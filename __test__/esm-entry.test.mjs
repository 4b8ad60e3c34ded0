// index.mjs loads index.js without Node's CommonJS loader (see its header):
// it must give the same instance `require` gives, in either order, find an
// installed platform package, keep file names in stack traces, and fall back
// to createRequire where process.getBuiltinModule is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY_URL = pathToFileURL(path.join(PACKAGE_DIR, 'index.mjs')).href;
const { platformKey } = createRequire(import.meta.url)('../platform.js');

function node(args, options = {}) {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 30_000, ...options });
  assert.equal(r.status, 0, `node ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

const script = (body) => ['--input-type=module', '-e', body];

test('import, then require: one instance', () => {
  const out = node(script(`
    import { createRequire } from 'node:module';
    const esm = await import(${JSON.stringify(ENTRY_URL)});
    const cjs = createRequire(import.meta.url)(${JSON.stringify(path.join(PACKAGE_DIR, 'index.js'))});
    console.log(JSON.stringify([esm.default === cjs, esm.GENERATION_FENCED_PHASES === cjs.GENERATION_FENCED_PHASES, Object.keys(esm).sort()]));
  `));
  assert.deepEqual(JSON.parse(out), [true, true, ['GENERATION_FENCED_PHASES', 'createLiveSessionStore', 'default', 'sourceLockPath', 'withSourceLockSync']]);
});

test('require, then import: one instance', () => {
  const out = node(script(`
    import { createRequire } from 'node:module';
    const cjs = createRequire(import.meta.url)(${JSON.stringify(path.join(PACKAGE_DIR, 'index.js'))});
    const esm = await import(${JSON.stringify(ENTRY_URL)});
    console.log(JSON.stringify([esm.default === cjs, esm.createLiveSessionStore === cjs.createLiveSessionStore]));
  `));
  assert.deepEqual(JSON.parse(out), [true, true]);
});

test("an error thrown by the wrapper names index.js in its stack", () => {
  const out = node(script(`
    const { createLiveSessionStore } = await import(${JSON.stringify(ENTRY_URL)});
    try { createLiveSessionStore({ cwd: process.cwd() }).getSnapshot('a/b'); } catch (error) {
      console.log(JSON.stringify([error.message, error.stack.includes(${JSON.stringify(path.join(PACKAGE_DIR, 'index.js'))})]));
    }
  `));
  assert.deepEqual(JSON.parse(out), ['invalid session id: a/b', true]);
});

test('without a local binary, the installed quiver-live-native-<platform> package is loaded', (t) => {
  const key = platformKey();
  const local = path.join(PACKAGE_DIR, `quiver-live-native.${key}.node`);
  if (!fs.existsSync(local)) return t.skip(`no local build for ${key}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-esm-entry-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const pkg = path.join(dir, 'node_modules', 'quiver-live-native');
  fs.mkdirSync(pkg, { recursive: true });
  for (const f of ['index.js', 'index.mjs', 'binding.js', 'platform.js', 'package.json']) fs.copyFileSync(path.join(PACKAGE_DIR, f), path.join(pkg, f));
  const platformPkg = path.join(dir, 'node_modules', `quiver-live-native-${key}`);
  fs.mkdirSync(platformPkg);
  fs.copyFileSync(local, path.join(platformPkg, `quiver-live-native.${key}.node`));
  fs.writeFileSync(path.join(platformPkg, 'package.json'), JSON.stringify({ name: `quiver-live-native-${key}`, version: '0.0.0', main: `quiver-live-native.${key}.node` }));
  fs.writeFileSync(path.join(dir, 'use.mjs'), "import { sourceLockPath } from 'quiver-live-native';\nconsole.log(typeof sourceLockPath('a.css', process.cwd()));\n");
  assert.equal(node(['use.mjs'], { cwd: dir }), 'string');
});

test('without process.getBuiltinModule (Node < 20.16, < 22.3) it is createRequire', () => {
  const hide = `data:text/javascript,${encodeURIComponent('delete process.getBuiltinModule;')}`;
  const out = node(['--import', hide, ...script(`
    import { createRequire } from 'node:module';
    const esm = await import(${JSON.stringify(ENTRY_URL)});
    const cjs = createRequire(import.meta.url)(${JSON.stringify(path.join(PACKAGE_DIR, 'index.js'))});
    console.log(JSON.stringify([typeof process.getBuiltinModule, esm.default === cjs]));
  `)]);
  assert.deepEqual(JSON.parse(out), ['undefined', true]);
});
