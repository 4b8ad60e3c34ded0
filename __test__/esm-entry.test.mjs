// index.mjs is index.js through Node's require: `import` and `require` give
// one instance in either order, the ESM entry names every export of the
// CommonJS one, and an installed package finds its platform package.
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
    console.log(JSON.stringify([esm.default === cjs, esm.GENERATION_FENCED_PHASES === cjs.GENERATION_FENCED_PHASES, Object.keys(esm).sort(), Object.keys(cjs).sort()]));
  `));
  const [same, sameSet, esmNames, cjsNames] = JSON.parse(out);
  assert.deepEqual([same, sameSet], [true, true]);
  // Every export of the CommonJS entry is a named export of the ESM one.
  assert.deepEqual(esmNames, [...cjsNames, 'default'].sort());
  assert.deepEqual(cjsNames, ['GENERATION_FENCED_PHASES', 'createLiveSessionStore', 'sourceLockPath', 'withSourceLockSync']);
});

test("the CommonJS entry's exports are lib/api.cjs's EXPORTS, in order (the ESM entry's, above)", () => {
  const { EXPORTS } = createRequire(import.meta.url)('../lib/api.cjs');
  assert.deepEqual(Object.keys(createRequire(import.meta.url)('../index.js')), Object.values(EXPORTS).flat());
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

test("an error thrown by the wrapper names the wrapper's module in its stack", (t) => {
  // The store makes its sessions directory under cwd: a project of its own.
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-esm-stack-'));
  t.after(() => fs.rmSync(project, { recursive: true, force: true }));
  const out = node(script(`
    const { createLiveSessionStore } = await import(${JSON.stringify(ENTRY_URL)});
    try { createLiveSessionStore({ cwd: process.cwd() }).getSnapshot('a/b'); } catch (error) {
      console.log(JSON.stringify([error.message, error.stack.includes(${JSON.stringify(path.join(PACKAGE_DIR, 'lib', 'api.cjs'))})]));
    }
  `), { cwd: project });
  assert.deepEqual(JSON.parse(out), ['invalid session id: a/b', true]);
});

/**
 * A project with the package installed as npm lays it out (no local binary)
 * and its platform package beside it, or with `nested`, inside the package's
 * own node_modules as well (where npm puts it when another version is
 * hoisted). Returns the project dir.
 */
function installedProject(t, { nested = false } = {}) {
  const key = platformKey();
  const local = path.join(PACKAGE_DIR, `quiver-live-native.${key}.node`);
  if (!fs.existsSync(local)) {
    t.skip(`no local build for ${key}`);
    return null;
  }
  // Real, as the paths Node loads modules from are (macOS's tmpdir is a link).
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'qln-esm-entry-')));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const pkg = path.join(dir, 'node_modules', 'quiver-live-native');
  fs.mkdirSync(pkg, { recursive: true });
  for (const f of ['index.js', 'index.mjs', 'binding.js', 'platform.js', 'package.json']) fs.copyFileSync(path.join(PACKAGE_DIR, f), path.join(pkg, f));
  fs.cpSync(path.join(PACKAGE_DIR, 'lib'), path.join(pkg, 'lib'), { recursive: true });
  const platformPackage = (parent) => {
    const at = path.join(parent, `quiver-live-native-${key}`);
    fs.mkdirSync(at, { recursive: true });
    fs.copyFileSync(local, path.join(at, `quiver-live-native.${key}.node`));
    fs.writeFileSync(path.join(at, 'package.json'), JSON.stringify({ name: `quiver-live-native-${key}`, version: '0.0.0', main: `quiver-live-native.${key}.node` }));
  };
  platformPackage(path.join(dir, 'node_modules'));
  if (nested) platformPackage(path.join(pkg, 'node_modules'));
  // Which binary loaded, and whether Node's resolver was asked for the
  // platform package.
  fs.writeFileSync(path.join(dir, 'use.mjs'), `
    import Module, { createRequire } from 'node:module';
    const resolve = Module._resolveFilename;
    const asked = [];
    Module._resolveFilename = function (request, ...rest) {
      if (request.startsWith('quiver-live-native-')) asked.push(request);
      return resolve.call(this, request, ...rest);
    };
    const { sourceLockPath } = await import('quiver-live-native');
    const binary = Object.keys(createRequire(import.meta.url).cache).find((p) => p.endsWith('.node'));
    console.log(JSON.stringify({ works: typeof sourceLockPath('a.css', process.cwd()), binary: binary.slice(${JSON.stringify(dir.length + 1)}), asked }));
  `);
  return dir;
}

test('without a local binary, the platform package beside the package is loaded by its path', (t) => {
  const dir = installedProject(t);
  if (!dir) return;
  const key = platformKey();
  assert.deepEqual(JSON.parse(node(['use.mjs'], { cwd: dir })), {
    works: 'string',
    binary: path.join('node_modules', `quiver-live-native-${key}`, `quiver-live-native.${key}.node`),
    asked: [],
  });
});

test("a platform package in the package's own node_modules wins, as Node's resolver has it", (t) => {
  const dir = installedProject(t, { nested: true });
  if (!dir) return;
  const key = platformKey();
  assert.deepEqual(JSON.parse(node(['use.mjs'], { cwd: dir })), {
    works: 'string',
    binary: path.join('node_modules', 'quiver-live-native', 'node_modules', `quiver-live-native-${key}`, `quiver-live-native.${key}.node`),
    asked: [`quiver-live-native-${key}`],
  });
});
