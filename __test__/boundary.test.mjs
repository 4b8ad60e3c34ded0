// The JS-Rust boundary: index.js is type-checked (tsc --checkJs) against the
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

/** tsc's diagnostics for `source` as index.js beside the binding's declarations. */
function typeCheck(source) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-boundary-'));
  try {
    fs.writeFileSync(path.join(dir, 'index.js'), source);
    // `require('./binding.js')` resolves to these declarations.
    fs.copyFileSync(DECLARATIONS, path.join(dir, 'binding.d.ts'));
    fs.writeFileSync(path.join(dir, 'shims.d.ts'), SHIMS);
    const compilerOptions = { allowJs: true, checkJs: true, noEmit: true, strict: false, target: 'es2022', lib: ['es2022'], module: 'commonjs', types: [] };
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['index.js', 'shims.d.ts'] }));
    const r = spawnSync(process.execPath, [TSC, '-p', dir], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.error, undefined, String(r.error));
    return { status: r.status, output: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const INDEX = fs.readFileSync(path.join(PACKAGE_DIR, 'index.js'), 'utf8');

test('index.js calls the binding only as its generated declarations say', () => {
  assert.ok(fs.existsSync(DECLARATIONS), `${DECLARATIONS} missing: run npm run build`);
  const { status, output } = typeCheck(INDEX);
  assert.equal(status, 0, output);
});

test('the check fails for a call the binding does not declare', () => {
  const calls = [
    ['a missing argument', 'native.storeOpen(projectRoot(cwd), !!durable, HOST_OPS)', 'native.storeOpen(projectRoot(cwd), !!durable)'],
    ['a wrong argument type', 'native.storeHas(store, sessionFileId(id))', 'native.storeHas(store, 1)'],
    ['a function it does not have', 'native.storeDropUnrendered(store, id)', 'native.storeForget(store, id)'],
  ];
  let broken = INDEX;
  for (const [, from, to] of calls) {
    assert.ok(broken.includes(from), `index.js no longer calls ${from}`);
    broken = broken.replace(from, to);
  }
  const { status, output } = typeCheck(broken);
  assert.notEqual(status, 0, output);
  for (const [what, , to] of calls) {
    const line = broken.slice(0, broken.indexOf(to)).split('\n').length;
    assert.match(output, new RegExp(`index\\.js\\(${line},\\d+\\): error TS`), `${what} went unnoticed:\n${output}`);
  }
});

test('the boundary constants come from the binding, and HOST_OPS has every function it calls', () => {
  const require = createRequire(import.meta.url);
  const binding = require('../binding.js');
  const { payload, patch, hostOps } = binding.boundary();
  assert.notEqual(payload.whole, payload.changedFields);
  assert.equal(new Set(Object.values(patch)).size, Object.keys(patch).length, 'patch codes are distinct');
  assert.ok(hostOps.includes('startWalk') && hostOps.includes('number'), hostOps.join());
  // index.js checks its HOST_OPS against the list when it loads.
  assert.ok(INDEX.includes('for (const name of HOST_OP_NAMES)'));
  assert.doesNotMatch(INDEX, /CHANGED_FIELDS|code === '/, 'no boundary constant is spelled out in index.js');
});
