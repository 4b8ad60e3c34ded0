// The package as users get it: `npm pack`, then an offline install into an
// empty ESM project whose PATH has no Rust toolchain, using all four exports
// through `import` and `require`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

test('npm pack installs offline and works without cargo on PATH', { timeout: 120_000 }, (t) => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-pack-'));
  t.after(() => fs.rmSync(out, { recursive: true, force: true }));
  // Everything npm and the consumer write to a temp dir (npm's compile cache
  // on Node 22+, the consumer's project) goes under `out`.
  const packEnv = { ...process.env, TMPDIR: out };
  const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', out], { cwd: root, env: packEnv, encoding: 'utf8' }));
  const tarball = path.join(out, packed[0].filename);
  const files = packed[0].files.map((f) => f.path);
  for (const f of ['index.js', 'index.d.ts', 'bin/quiver-live.mjs', 'quiver-live-native.linux-x64-gnu.node']) assert.ok(files.includes(f), `${f} in tarball`);
  t.diagnostic(`tarball ${packed[0].filename}: ${packed[0].size} bytes, ${files.length} files`);

  const consumer = path.join(out, 'consumer');
  fs.mkdirSync(consumer);
  fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'module', private: true }));
  const bareEnv = { HOME: os.homedir(), TMPDIR: out, PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter) };
  execFileSync(npm, ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: consumer, env: bareEnv, stdio: 'pipe' });
  fs.writeFileSync(path.join(consumer, 'use.mjs'), `
    import { createLiveSessionStore, GENERATION_FENCED_PHASES, withSourceLockSync, sourceLockPath } from 'quiver-live-native';
    import { createRequire } from 'node:module';
    import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-consumer-')); fs.mkdirSync(path.join(dir, '.git'));
    const s = createLiveSessionStore({ cwd: dir, sessionId: 'c1' }).appendEvent({ type: 'generate', count: 2 });
    const locked = withSourceLockSync('a.css', 'me', () => 'ok', { cwd: dir });
    const cjs = createRequire(import.meta.url)('quiver-live-native');
    console.log(JSON.stringify({ phase: s.phase, fenced: GENERATION_FENCED_PHASES.has('completed'), locked,
      lockDir: path.basename(path.dirname(sourceLockPath('a.css', dir))),
      cjs: cjs.createLiveSessionStore({ cwd: dir }).getSnapshot('c1').expectedVariants }));
  `);
  const result = JSON.parse(execFileSync(process.execPath, ['use.mjs'], { cwd: consumer, env: bareEnv, encoding: 'utf8' }));
  assert.deepEqual(result, { phase: 'generate_requested', fenced: true, locked: 'ok', lockDir: 'locks', cjs: 2 });
});
