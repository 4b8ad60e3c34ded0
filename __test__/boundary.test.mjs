// The JS-Rust boundary: the wrapper (index.js, lib/) is type-checked (tsc --checkJs) against the
// declarations napi-rs generated for the binding it loads
// (target/binding.d.ts, written by `npm run build`), so a call with an
// argument the binding does not declare, a missing one, or a result used in
// a shape the binding does not return fails here. The constants both sides
// use come from the binding itself (`boundary()`).

import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DECLARATIONS = path.join(PACKAGE_DIR, 'target', 'binding.d.ts');
// TypeScript, a devDependency.
const TSC = createRequire(path.join(PACKAGE_DIR, 'package.json')).resolve('typescript/bin/tsc');

// Node's own modules are not what is checked (the package has no Node
// types); the native store's state is opaque to JavaScript.
const SHIMS = `declare module 'node:path' { const path: any; export = path; }
declare module 'node:util' { export const types: any; }
declare module 'node:os' { const os: any; export = os; }
declare var module: any;
declare var process: any;
declare class Buffer extends Uint8Array {}
interface NativeStore {}
`;

/** The wrapper's modules, by path: index.js and lib/*.cjs. */
function wrapperSources() {
  const files = { 'index.js': fs.readFileSync(path.join(PACKAGE_DIR, 'index.js'), 'utf8') };
  for (const f of fs.readdirSync(path.join(PACKAGE_DIR, 'lib'))) files[`lib/${f}`] = fs.readFileSync(path.join(PACKAGE_DIR, 'lib', f), 'utf8');
  return files;
}

/** tsc's diagnostics for the wrapper's `sources` beside the binding's declarations. */
function typeCheck(sources) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-boundary-'));
  try {
    fs.mkdirSync(path.join(dir, 'lib'));
    for (const [file, source] of Object.entries(sources)) fs.writeFileSync(path.join(dir, file), source);
    // `require('./binding.js')` and `import('../binding.js')` resolve to these declarations.
    fs.copyFileSync(DECLARATIONS, path.join(dir, 'binding.d.ts'));
    fs.writeFileSync(path.join(dir, 'shims.d.ts'), SHIMS);
    const compilerOptions = { allowJs: true, checkJs: true, noEmit: true, strict: false, target: 'es2022', lib: ['es2022'], module: 'commonjs', types: [] };
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: [...Object.keys(sources), 'shims.d.ts'] }));
    const r = spawnSync(process.execPath, [TSC, '-p', dir], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.error, undefined, String(r.error));
    return { status: r.status, output: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const SOURCES = wrapperSources();

test('the wrapper calls the binding only as its generated declarations say', () => {
  assert.ok(fs.existsSync(DECLARATIONS), `${DECLARATIONS} missing: run npm run build`);
  const { status, output } = typeCheck(SOURCES);
  assert.equal(status, 0, output);
});

test('the check fails for a call the binding does not declare', () => {
  const calls = [
    ['a missing argument', 'lib/api.cjs', 'native.storeOpen(projectRoot(cwd), !!durable, HOST_OPS)', 'native.storeOpen(projectRoot(cwd), !!durable)'],
    ['a wrong argument type', 'lib/api.cjs', 'native.storeHas(store, sessionFileId(id))', 'native.storeHas(store, 1)'],
    ['a function it does not have', 'lib/api.cjs', 'native.storeDropUnrendered(store, id)', 'native.storeForget(store, id)'],
    ['a wrong argument type in the lock', 'lib/api.cjs', 'native.unlock(lockPath, token)', 'native.unlock(lockPath, token.length)'],
  ];
  const broken = { ...SOURCES };
  for (const [, file, from, to] of calls) {
    assert.ok(broken[file].includes(from), `${file} no longer calls ${from}`);
    broken[file] = broken[file].replace(from, to);
  }
  const { status, output } = typeCheck(broken);
  assert.notEqual(status, 0, output);
  for (const [what, file, , to] of calls) {
    const line = broken[file].slice(0, broken[file].indexOf(to)).split('\n').length;
    assert.match(output, new RegExp(`${file.replace('.', '\\.')}\\(${line},\\d+\\): error TS`), `${what} went unnoticed:\n${output}`);
  }
});

test('the boundary constants come from the binding, and HOST_OPS has every function it calls', () => {
  const require = createRequire(import.meta.url);
  const binding = require('../binding.js');
  const { payload, patch, hostOps } = binding.boundary();
  assert.notEqual(payload.whole, payload.changedFields);
  assert.equal(new Set(Object.values(patch)).size, Object.keys(patch).length, 'patch codes are distinct');
  assert.ok(hostOps.includes('startWalk') && hostOps.includes('number'), hostOps.join());
  // The wrapper refuses a binding that calls an operation it lacks.
  const { create } = require('../lib/api.cjs');
  const { walk } = binding.boundary();
  const asking = (names) => ({ ...binding, boundary: () => ({ payload, patch, walk, hostOps: names }) });
  assert.equal(typeof create(asking(hostOps)).createLiveSessionStore, 'function');
  assert.throws(() => create(asking([...hostOps, 'cube'])), /lib\/api\.cjs has no HOST_OPS\.cube, which the binding calls/);
  for (const [file, source] of Object.entries(SOURCES)) assert.doesNotMatch(source, /CHANGED_FIELDS|code === '/, `no boundary constant is spelled out in ${file}`);
});
