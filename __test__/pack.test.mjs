// The package as users get it: the root tarball (no binary) and this
// platform's package, made by scripts/pack-local.mjs as napi prepublish
// would publish them, installed offline into an empty ESM project whose PATH
// has no Rust toolchain, all four exports used through `import` and
// `require`. And `npm pack` of the root as it stands is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runNpm, npmRuns } from '../scripts/npm.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const require = createRequire(import.meta.url);
require('../binding.js');
const windows = process.platform === 'win32';

/** PATH without the directories that hold cargo or rustc. */
function pathWithoutRust() {
  const exe = windows ? '.exe' : '';
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir && !fs.existsSync(path.join(dir, `cargo${exe}`)) && !fs.existsSync(path.join(dir, `rustc${exe}`)))
    .join(path.delimiter);
}

function tarballFiles(tgz) {
  return execFileSync('tar', ['tzf', tgz], { encoding: 'utf8' }).split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
}

const npmRunsHere = npmRuns();

test('npm pack of the root as it stands is refused: it has no binaries', { skip: !npmRunsHere && 'npm does not run here' }, (t) => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-pack-'));
  t.after(() => fs.rmSync(out, { recursive: true, force: true }));
  const r = runNpm('npm', ['pack', '--dry-run', '--pack-destination', out], { cwd: root, env: { ...process.env, TMPDIR: out } });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /check-package: refusing to pack quiver-live-native:/);
  assert.match(r.stderr, /optionalDependencies lacks quiver-live-native-linux-x64-gnu@/);
  // npm on Node 22+ may leave its compile cache in TMPDIR (`out`) beside where a tarball would go.
  assert.deepEqual(fs.readdirSync(out).filter((f) => f.endsWith('.tgz')), [], 'no tarball written');
});

test('the packed packages install offline and work without cargo on PATH', { timeout: 180_000, skip: !npmRunsHere && 'npm does not run here' }, (t) => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-pack-'));
  t.after(() => fs.rmSync(out, { recursive: true, force: true }));
  // Everything npm and the consumer write to a temp dir (npm's compile cache
  // on Node 22+, the consumer's project) goes under `out`.
  const env = { ...process.env, TMPDIR: out, TEMP: out, TMP: out };
  const tarballs = JSON.parse(execFileSync(process.execPath, [path.join(root, 'scripts', 'pack-local.mjs'), out], { cwd: root, env, encoding: 'utf8' }));
  const [rootTgz, ...platformTgzs] = tarballs;
  assert.equal(path.basename(rootTgz), `${pkg.name}-${pkg.version}.tgz`);
  const files = tarballFiles(rootTgz);
  assert.deepEqual(files.filter((f) => f.endsWith('.node')), [], 'the root tarball carries no binary');
  for (const f of ['package.json', 'index.js', 'index.mjs', 'index.d.ts', 'binding.js', 'bin/quiver-live.mjs', 'README.md', 'LICENSE', 'CHANGELOG.md']) {
    assert.ok(files.includes(f), `${f} in the root tarball`);
  }
  // The CLI is bin/quiver-live.mjs and the modules it imports, the API is
  // index.js over lib/: all of bin/ and lib/ ships.
  for (const [dir, ext] of [['bin', '.mjs'], ['lib', '.cjs']]) {
    for (const f of fs.readdirSync(path.join(root, dir), { recursive: true }).filter((f) => f.endsWith(ext))) {
      assert.ok(files.includes(`${dir}/${f.split(path.sep).join('/')}`), `${dir}/${f} in the root tarball`);
    }
  }
  assert.ok(platformTgzs.length >= 1);
  for (const tgz of platformTgzs) {
    const key = /^quiver-live-native-(.+)-\d+\.\d+\.\d+.*\.tgz$/.exec(path.basename(tgz))[1];
    assert.deepEqual(tarballFiles(tgz).sort(), [`quiver-live-native.${key}.node`, 'README.md', 'package.json'].sort());
  }
  t.diagnostic(`tarballs: ${tarballs.map((f) => `${path.basename(f)} ${fs.statSync(f).size} bytes`).join(', ')}`);

  const consumer = path.join(out, 'consumer');
  fs.mkdirSync(consumer);
  fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'module', private: true }));
  const bareEnv = { ...env, PATH: pathWithoutRust() };
  delete bareEnv.QUIVER_LIVE_NATIVE_BINARY;
  // The root and the package of the binary this run loads. The other
  // platforms' packages are optional and not in the cache: npm skips them.
  const key = path.basename(Object.keys(require.cache).find((p) => p.endsWith('.node'))).split('.').at(-2);
  const mine = platformTgzs.filter((f) => path.basename(f).startsWith(`quiver-live-native-${key}-`));
  assert.equal(mine.length, 1, `a tarball for ${key}`);
  const install = ['install', '--offline', '--no-audit', '--no-fund', rootTgz, ...mine];
  let r = runNpm('npm', install, { cwd: consumer, env: bareEnv });
  // Under emulation, or with a musl Node on a glibc host, npm runs on the
  // host's Node, which refuses this platform's package as foreign: then, and
  // only then, it is forced.
  const npmHost = /EBADPLATFORM[\s\S]*?current: (\{[^}]*\})/.exec(r.stderr);
  const here = { os: process.platform, cpu: process.arch, libc: key.endsWith('-musl') ? 'musl' : 'glibc' };
  const host = npmHost ? JSON.parse(npmHost[1]) : null;
  if (r.status !== 0 && host && (host.os !== here.os || host.cpu !== here.cpu || (host.libc && host.libc !== here.libc))) {
    t.diagnostic(`npm runs on ${JSON.stringify(host)}, this Node on ${JSON.stringify(here)}: installing with --force`);
    r = runNpm('npm', [...install, '--force'], { cwd: consumer, env: bareEnv });
  }
  assert.equal(r.status, 0, r.stderr);
  fs.writeFileSync(path.join(consumer, 'use.mjs'), `
    import { createLiveSessionStore, GENERATION_FENCED_PHASES, withSourceLockSync, sourceLockPath } from 'quiver-live-native';
    import { createRequire } from 'node:module';
    import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-consumer-')); fs.mkdirSync(path.join(dir, '.git'));
    const s = createLiveSessionStore({ cwd: dir, sessionId: 'c1' }).appendEvent({ type: 'generate', count: 2 });
    const locked = withSourceLockSync('a.css', 'me', () => 'ok', { cwd: dir });
    const require = createRequire(import.meta.url);
    const cjs = require('quiver-live-native');
    const binary = Object.keys(require.cache).find((p) => p.endsWith('.node'));
    console.log(JSON.stringify({ phase: s.phase, fenced: GENERATION_FENCED_PHASES.has('completed'), locked,
      lockDir: path.basename(path.dirname(sourceLockPath('a.css', dir))),
      cjs: cjs.createLiveSessionStore({ cwd: dir }).getSnapshot('c1').expectedVariants,
      from: path.basename(path.dirname(binary)) }));
  `);
  const result = JSON.parse(execFileSync(process.execPath, ['use.mjs'], { cwd: consumer, env: bareEnv, encoding: 'utf8' }));
  assert.equal(result.from.startsWith('quiver-live-native-'), true, `binary loaded from its platform package (${result.from})`);
  delete result.from;
  assert.deepEqual(result, { phase: 'generate_requested', fenced: true, locked: 'ok', lockDir: 'locks', cjs: 2 });
  // The installed CLI runs on the installed binary (its verdicts come from it).
  const cli = path.join(consumer, 'node_modules', pkg.name, 'bin', 'quiver-live.mjs');
  const doctor = JSON.parse(execFileSync(process.execPath, [cli, 'doctor', '--json', '--cwd', consumer], { cwd: consumer, env: bareEnv, encoding: 'utf8' }));
  assert.equal(doctor.healthy, true);
});
