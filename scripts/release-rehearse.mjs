#!/usr/bin/env node
// The release workflow (.github/workflows/CI.yml) rehearsed on this Linux x64
// machine, then the packages it would publish installed and used on every
// platform this machine can run.
//
//   npm run release:rehearse [-- --rust-tests]   the whole rehearsal (tens of minutes on 2 cores)
//   node scripts/release-rehearse.mjs --lint     the lint job only (seconds; .ci/run runs it)
//
// Every command comes from the workflow file itself (its `run:` lines, with
// the matrix's values put in), so the rehearsal and the workflow cannot drift
// apart. What cannot run here is said so in the output, step by step:
//
//   lint      run as written.
//   build     Linux targets: the workflow's command (zig, glibc 2.17), cross
//             compiled from x64 for arm64. macOS: STAND-IN, the same command
//             with zig linking (-x): it links here, but the release build
//             belongs on a macOS runner. Windows msvc: STAND-IN, a mingw-linked
//             build of the same code (windows-gnu) in the msvc package's place:
//             linking msvc needs Microsoft's CRT, which no reachable registry
//             carries. Rust tests: only with --rust-tests (npm test runs them).
//   test      not rehearsed: the Node suites per target and Node line
//             (.ci/run runs them on this host, scripts/cross.sh test under
//             emulation).
//   publish   run as written, with `npm publish --dry-run`, no npm token and
//             no GitHub token; then the eight packages are packed and checked
//             with attw.
//   consumers a fresh project per platform installs the root tarball and its
//             platform's tarball, then creates a store, appends, reads back
//             and takes a lock: linux x64 (Node 20-26) and arm64 (qemu), gnu
//             and musl, windows x64 under wine.
//
// Tools are installed when missing (apt-get: shellcheck; scripts/cross.sh
// setup: zig, qemu, wine, mingw, the Node binaries; npm: attw) and cached
// under ~/.cache/quiver-live-native. Builds reuse target/cross/<target>.
// Everything else is written under target/rehearsal: the packages as
// published (repo/), the eight tarballs (tarballs/), the consumers.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { platformKey } from './check-package.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'quiver-live-native');
const CROSS_TOOLS = process.env.QLN_TOOLS || path.join(CACHE, 'cross');
const RUNNER_TEMP = path.join(CACHE, 'rehearsal', 'runner-temp');
const ATTW_VERSION = '0.18.5';
const WORK = path.join(ROOT, 'target', 'rehearsal');
const STAGE = path.join(WORK, 'repo');
const ARTIFACTS = path.join(WORK, 'artifacts');
const TARBALLS = path.join(WORK, 'tarballs');
const CONSUMERS = path.join(WORK, 'consumers');
const CROSS = path.join(ROOT, 'scripts', 'cross.sh');

const workflow = load(fs.readFileSync(path.join(ROOT, '.github', 'workflows', 'CI.yml'), 'utf8'));
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const argv = process.argv.slice(2);
const results = [];
const standIns = new Map(); // platform key -> why its binary is a stand-in

// ------------------------------------------------------------------ running

class StepError extends Error {}

/** Runs `fn` as one step of the output: its name, then PASS, FAIL, STAND-IN or SKIP. */
function step(name, fn, { standIn = null } = {}) {
  console.log(`\n=== ${name}`);
  const t0 = Date.now();
  let status = standIn ? 'STAND-IN' : 'PASS';
  let note = standIn ?? '';
  try {
    const extra = fn();
    if (typeof extra === 'string') note = note ? `${note}; ${extra}` : extra;
  } catch (error) {
    status = 'FAIL';
    note = error instanceof StepError ? error.message : String(error?.stack ?? error);
  }
  const secs = Math.round((Date.now() - t0) / 1000);
  results.push({ name, status, note, secs });
  console.log(`--- ${status} ${name} (${secs} s)${note ? `: ${note}` : ''}`);
  return status !== 'FAIL';
}

function skip(name, why) {
  results.push({ name, status: 'SKIP', note: why, secs: 0 });
  console.log(`\n=== ${name}\n--- SKIP ${name}: ${why}`);
}

/** Runs `command` in bash (as a workflow's `run:` is), output shown; throws when it fails. */
function sh(command, { cwd = ROOT, env = {}, nice = false } = {}) {
  console.log(`$ ${command.trim().split('\n').join('\n  ')}`);
  const bash = ['bash', '-eo', 'pipefail', '-c', command];
  // Builds yield to whatever else runs on the machine.
  const [file, ...args] = nice ? ['nice', '-n', '10', ...bash] : bash;
  const r = spawnSync(file, args, { cwd, env: { ...process.env, ...env }, stdio: 'inherit' });
  if (r.status !== 0) throw new StepError(`\`${command.trim().split('\n')[0]}\` exited ${r.status ?? r.signal}`);
}

/** Like sh, output captured. */
function capture(file, args, { cwd = ROOT, env = {} } = {}) {
  const r = spawnSync(file, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', error: r.error };
}

/** A workflow `run:` text with its `${{ ... }}` expressions replaced from `context`. */
function expand(text, context) {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr) => {
    if (!(expr in context)) throw new StepError(`the rehearsal does not know \`${expr}\` (in: ${text.trim()})`);
    return context[expr];
  });
}

/** Env of every step: the workflow's `env:`, a runner's temp dir, and the npm of this machine. */
function workflowEnv() {
  fs.mkdirSync(RUNNER_TEMP, { recursive: true });
  return { ...workflow.env, RUNNER_TEMP, CI: 'true' };
}

const jobSteps = (job) => workflow.jobs[job].steps;
const namedStep = (job, pattern) => {
  const found = jobSteps(job).find((s) => pattern.test(s.name ?? s.run ?? ''));
  if (!found) throw new StepError(`no step matching ${pattern} in the ${job} job of CI.yml`);
  return found;
};

// ------------------------------------------------------------------ tools

function aptInstall(packages) {
  const missing = packages.filter((p) => capture('dpkg', ['-s', p]).status !== 0);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) throw new StepError(`needs root for: apt-get install ${missing.join(' ')}`);
  sh(`apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${missing.join(' ')} >/dev/null`);
}

function attwBin() {
  const dir = path.join(CACHE, 'rehearsal', `attw-${ATTW_VERSION}`);
  const bin = path.join(dir, 'node_modules', '.bin', 'attw');
  if (!fs.existsSync(bin)) sh(`npm install --silent --no-audit --no-fund --prefix ${JSON.stringify(dir)} @arethetypeswrong/cli@${ATTW_VERSION}`);
  return bin;
}

// ------------------------------------------------------------------ jobs

function lintJob(cwd) {
  for (const s of jobSteps('lint')) {
    if (!s.run) continue;
    step(`lint: ${s.name ?? s.run}`, () => sh(expand(s.run, {}), { cwd, env: workflowEnv() }));
  }
}

/** The build matrix entry's command, and why it is a stand-in here (or null). */
function buildPlan(settings) {
  const { host, target, build } = settings;
  if (host.startsWith('ubuntu-')) {
    return { command: build, standIn: null, note: host.endsWith('-arm') ? `cross compiled from x64 (the workflow builds on ${host})` : '' };
  }
  if (host.startsWith('macos-')) {
    return {
      command: `${build} -x`,
      standIn: `zig-linked here (-x added): the release build is linked by Apple's linker on ${host}`,
    };
  }
  if (target === 'x86_64-pc-windows-msvc') {
    return {
      command: 'npm run build -- --target x86_64-pc-windows-gnu',
      rename: ['win32-x64-gnu', 'win32-x64-msvc'],
      standIn: `a mingw-linked windows-gnu build of the same code in the msvc package: linking msvc needs Microsoft's CRT (${host})`,
    };
  }
  throw new StepError(`no plan for ${target} on ${host}`);
}

function buildJob() {
  const matrix = workflow.jobs.build.strategy.matrix.settings;
  const zig = namedStep('build', /^zig and cargo-zigbuild/);
  const githubPath = path.join(RUNNER_TEMP, 'github-path');
  const env = { ...workflowEnv(), GITHUB_PATH: githubPath, LIBNODE_PATH: path.join(CROSS_TOOLS, 'libnode') };
  const ok = step(`build: ${zig.name}`, () => {
    fs.writeFileSync(githubPath, '');
    sh(zig.run, { env });
    // A later step sees the directories a step appended to GITHUB_PATH first on PATH.
    const added = fs.readFileSync(githubPath, 'utf8').split('\n').filter(Boolean);
    env.PATH = [...added.reverse(), process.env.PATH].join(path.delimiter);
  });
  if (!ok) return;
  step('build: Rust targets (dtolnay/rust-toolchain)', () => sh(`rustup --quiet target add ${[...matrix.map((s) => s.target), 'x86_64-pc-windows-gnu'].join(' ')}`));
  const local = path.join(ROOT, `${pkg.napi.binaryName}.linux-x64-gnu.node`);
  const saved = fs.existsSync(local) ? fs.readFileSync(local) : null;
  try {
    for (const settings of matrix) {
      const { target } = settings;
      let plan;
      try {
        plan = buildPlan(settings);
      } catch (error) {
        step(`build: ${target}`, () => { throw error; });
        continue;
      }
      const built = step(`build: ${target}: ${plan.command}`, () => {
        // The workflow builds in its checkout; so does the rehearsal, each target in the
        // target dir scripts/cross.sh uses, and moves the binary out at once.
        for (const f of binariesIn(ROOT)) fs.rmSync(path.join(ROOT, f));
        sh(expand(plan.command, {}), { nice: true, env: { ...env, CARGO_TARGET_DIR: path.join(ROOT, 'target', 'cross', plan.rename ? 'x86_64-pc-windows-gnu' : target) } });
        return [plan.note, uploadArtifact(target, plan)].filter(Boolean).join('; ');
      }, { standIn: plan.standIn });
      if (built && plan.standIn) standIns.set(platformKey(target), plan.standIn);
      if (target === 'x86_64-unknown-linux-gnu' && built) rustTests(env);
    }
  } finally {
    for (const f of binariesIn(ROOT)) fs.rmSync(path.join(ROOT, f));
    if (saved) fs.writeFileSync(local, saved);
  }
}

const binariesIn = (dir) => fs.readdirSync(dir).filter((f) => f.startsWith(`${pkg.napi.binaryName}.`) && f.endsWith('.node'));
/** actions/upload-artifact: the build's `${APP_NAME}.*.node`, as download-artifact will lay it out. */
function uploadArtifact(target, plan) {
  const upload = jobSteps('build').find((s) => s.uses?.startsWith('actions/upload-artifact@'));
  const name = expand(upload.with.name, { 'matrix.settings.target': target });
  const pattern = expand(upload.with.path, { 'env.APP_NAME': workflow.env.APP_NAME });
  const files = binariesIn(ROOT);
  if (files.length !== 1) throw new StepError(`${pattern} matches ${files.length} files: ${files.join(', ') || 'none'}`);
  let file = files[0];
  const dir = path.join(ARTIFACTS, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  if (plan.rename) {
    const renamed = file.replace(`.${plan.rename[0]}.`, `.${plan.rename[1]}.`);
    fs.renameSync(path.join(ROOT, file), path.join(dir, renamed));
    file = renamed;
  } else {
    fs.renameSync(path.join(ROOT, file), path.join(dir, file));
  }
  return `artifact ${name}/${file} (${kb(fs.statSync(path.join(dir, file)).size)})`;
}

function rustTests(env) {
  const s = namedStep('build', /^Rust tests/);
  if (!argv.includes('--rust-tests')) {
    skip(`build: x86_64-unknown-linux-gnu: ${s.name}`, 'npm test runs them on this host (rehearse them here with --rust-tests)');
    return;
  }
  step(`build: x86_64-unknown-linux-gnu: ${s.name}`, () => sh(s.run, { env, nice: true }));
}

function notRehearsed() {
  skip('test: Node suites per target and Node line', 'not rehearsed: .ci/run runs them on linux-x64-gnu (the machine Node, then Node 22 and 26), `scripts/cross.sh test <triple>` under emulation');
  skip('test-musl: Node suites in node:<line>-alpine', 'not rehearsed: no docker here; `scripts/cross.sh test x86_64-unknown-linux-musl` runs them on a musl Node');
  skip('reference: suites against upstream main', 'scheduled job only: `npm run test:reference` with QUIVER_REFERENCE_DIR');
}

/** A copy of the checkout (tracked and new files, nothing ignored) for the publish job to change. */
function checkout() {
  fs.rmSync(STAGE, { recursive: true, force: true });
  fs.mkdirSync(STAGE, { recursive: true });
  const files = capture('git', ['ls-files', '-z', '-co', '--exclude-standard'], { cwd: ROOT }).stdout.split('\0').filter(Boolean);
  for (const f of files) {
    if (!fs.existsSync(path.join(ROOT, f))) continue; // deleted, not yet committed
    fs.mkdirSync(path.dirname(path.join(STAGE, f)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, f), path.join(STAGE, f));
    fs.chmodSync(path.join(STAGE, f), fs.statSync(path.join(ROOT, f)).mode);
  }
  return `${files.length} files (the working tree, as actions/checkout would check it out)`;
}

function publishJob() {
  const env = {
    ...workflowEnv(),
    // No token of any kind: a step that tried to publish for real would fail.
    NODE_AUTH_TOKEN: '',
    npm_config_userconfig: path.join(WORK, 'empty-npmrc'),
  };
  fs.writeFileSync(env.npm_config_userconfig, '');
  if (!step('publish: actions/checkout', checkout)) return false;
  for (const s of jobSteps('publish')) {
    if (s.uses?.startsWith('actions/download-artifact@')) {
      step(`publish: ${s.uses} (path: ${s.with.path})`, () => {
        fs.cpSync(ARTIFACTS, path.join(STAGE, s.with.path), { recursive: true });
        return fs.readdirSync(ARTIFACTS).sort().join(', ');
      });
      continue;
    }
    if (!s.run) continue;
    if (/\bnpm publish\b/.test(s.run)) {
      // --dry-run, and npm_config_dry_run for the npm publish that napi
      // prepublish runs in each npm/<platform>.
      const command = `${expand(s.run, {})} --dry-run`;
      if (!step(`publish: ${s.name}: ${command}`, () => publishDryRun(command, env))) return false;
    } else if (!step(`publish: ${s.name ?? s.run}`, () => sh(expand(s.run, {}), { cwd: STAGE, env }))) {
      return false;
    }
  }
  return true;
}

function publishDryRun(command, env) {
  sh(command, { cwd: STAGE, env: { ...env, npm_config_dry_run: 'true' } });
  const staged = JSON.parse(fs.readFileSync(path.join(STAGE, 'package.json'), 'utf8'));
  const listed = Object.keys(staged.optionalDependencies ?? {});
  if (listed.length !== pkg.napi.targets.length) throw new StepError(`napi prepublish listed ${listed.length} optionalDependencies, not ${pkg.napi.targets.length}`);
  return `napi prepublish listed ${listed.length} platform packages in optionalDependencies`;
}

/** npm pack of the root and every npm/<platform> as published (their prepack checks included). */
function packTarballs() {
  fs.rmSync(TARBALLS, { recursive: true, force: true });
  fs.mkdirSync(TARBALLS, { recursive: true });
  const dirs = [STAGE, ...pkg.napi.targets.map((t) => path.join(STAGE, 'npm', platformKey(t)))];
  const tarballs = [];
  for (const dir of dirs) {
    const r = capture('npm', ['pack', '--json', '--pack-destination', TARBALLS], { cwd: dir });
    if (r.status !== 0) throw new StepError(`npm pack in ${path.relative(WORK, dir)} failed: ${r.stderr.trim().split('\n').slice(-5).join(' ')}`);
    const [info] = JSON.parse(r.stdout.slice(r.stdout.indexOf('[')));
    tarballs.push(info.filename);
  }
  return tarballs;
}

function attw(rootTarball) {
  const r = capture(attwBin(), [rootTarball], { env: { NO_COLOR: '1' } });
  console.log(r.stdout.trim());
  if (r.status !== 0) throw new StepError(`attw exited ${r.status}: ${r.stderr.trim()}`);
  return 'no problems, every entry and resolution mode';
}

// ------------------------------------------------------------------ consumers

const CONSUMER_SCRIPT = `
import { createLiveSessionStore, withSourceLockSync, sourceLockPath } from 'quiver-live-native';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
const project = fs.mkdtempSync(path.join(process.cwd(), 'project-'));
fs.mkdirSync(path.join(project, '.git'));
const store = createLiveSessionStore({ cwd: project, sessionId: 'rehearsal1' });
store.appendEvent({ type: 'generate', count: 3, pageUrl: '/pricing' });
store.appendEvent({ type: 'agent_done', arrivedVariants: 3 });
// Read back through a second store, from the files alone.
const again = createLiveSessionStore({ cwd: project }).getSnapshot('rehearsal1');
const lock = sourceLockPath('src/Hero.jsx', project);
const held = withSourceLockSync('src/Hero.jsx', { who: 'rehearsal' }, () => fs.existsSync(lock), { cwd: project, waitMs: 1000 });
const require = createRequire(import.meta.url);
const binary = Object.keys(require.cache).find((p) => p.endsWith('.node'));
console.log(JSON.stringify({ node: process.version, platform: process.platform + '-' + process.arch, phase: again.phase,
  held, released: !fs.existsSync(lock), sameInstance: require('quiver-live-native').sourceLockPath === sourceLockPath,
  binary: path.relative(process.cwd(), binary).split(path.sep).join('/') }));
`;

const CONSUMERS_PLAN = [
  { key: 'linux-x64-gnu', triple: 'x86_64-unknown-linux-gnu', npm: ['--os=linux', '--cpu=x64', '--libc=glibc'], lines: ['20', '22', '24', '26'] },
  { key: 'linux-arm64-gnu', triple: 'aarch64-unknown-linux-gnu', npm: ['--os=linux', '--cpu=arm64', '--libc=glibc'], how: 'qemu-user' },
  { key: 'linux-x64-musl', triple: 'x86_64-unknown-linux-musl', npm: ['--os=linux', '--cpu=x64', '--libc=musl'], how: 'musl Node' },
  { key: 'linux-arm64-musl', triple: 'aarch64-unknown-linux-musl', npm: ['--os=linux', '--cpu=arm64', '--libc=musl'], how: 'qemu-user, musl Node' },
  { key: 'win32-x64-msvc', triple: 'x86_64-pc-windows-gnu', npm: ['--os=win32', '--cpu=x64'], how: 'wine' },
];

function consumer(plan, tarballs, rows) {
  const [rootTgz] = tarballs;
  const mine = tarballs.find((t) => t.startsWith(`${pkg.name}-${plan.key}-`));
  const dir = path.join(CONSUMERS, plan.key);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `consumer-${plan.key}`, version: '1.0.0', private: true, type: 'module' }, null, 2));
  fs.writeFileSync(path.join(dir, 'use.mjs'), CONSUMER_SCRIPT);
  // As the README says to install before the first release: the two tarballs.
  // npm runs on this x64 glibc host and refuses another platform's package
  // named on its command line (EBADPLATFORM, whatever --os/--cpu/--libc say):
  // there --force installs it.
  const foreign = plan.key !== 'linux-x64-gnu';
  sh(`npm install --no-audit --no-fund ${plan.npm.join(' ')}${foreign ? ' --force' : ''} ${path.join(TARBALLS, rootTgz)} ${path.join(TARBALLS, mine)}`, { cwd: dir });
  const env = { ...process.env };
  delete env.QUIVER_LIVE_NATIVE_BINARY;
  for (const line of plan.lines ?? [null]) {
    const r = capture('bash', [CROSS, 'run', plan.triple, 'use.mjs'], { cwd: dir, env: { ...env, QLN_NODE_LINE: line ?? '' } });
    let got = null;
    try { got = JSON.parse(r.stdout.trim().split('\n').at(-1)); } catch { /* below */ }
    const want = { phase: 'variants_ready', held: true, released: true, sameInstance: true, binary: `node_modules/${pkg.name}-${plan.key}/${pkg.napi.binaryName}.${plan.key}.node` };
    const bad = !got ? 'no result' : Object.entries(want).filter(([k, v]) => got[k] !== v).map(([k, v]) => `${k}: ${JSON.stringify(got[k])}, want ${JSON.stringify(v)}`).join('; ');
    rows.push({ key: plan.key, how: plan.how ?? 'native', got, ok: !bad });
    console.log(`${plan.key}${line ? ` Node ${line}` : ''}: ${r.stdout.trim()}`);
    if (bad) throw new StepError(`${plan.key}: ${bad}${r.status !== 0 ? ` (exit ${r.status}: ${r.stderr.trim().split('\n').slice(-3).join(' ')})` : ''}`);
  }
  const notes = [foreign && 'installed with --force (npm runs on the x64 glibc host)', standIns.get(plan.key) && `the binary is the build's stand-in (${standIns.get(plan.key)})`];
  return notes.filter(Boolean).join('; ');
}

// ------------------------------------------------------------------ output

const kb = (n) => `${(n / 1024).toFixed(1)} kB`;

function summary(tarballs, rows) {
  const lines = ['', '=== release rehearsal: summary', ''];
  const width = Math.max(...results.map((r) => r.name.length));
  for (const r of results) lines.push(`${r.status.padEnd(8)} ${r.name.padEnd(width)} ${String(r.secs).padStart(4)} s${r.note ? `  ${r.note.split('\n')[0]}` : ''}`);
  if (tarballs.length) {
    lines.push('', 'tarballs (target/rehearsal/tarballs):');
    for (const t of tarballs) {
      const key = t.slice(pkg.name.length + 1).replace(/-?\d+\.\d+\.\d+.*\.tgz$/, '');
      const note = standIns.get(key) ? `  STAND-IN binary: ${standIns.get(key)}` : '';
      lines.push(`  ${t.padEnd(48)} ${kb(fs.statSync(path.join(TARBALLS, t)).size).padStart(10)}${note}`);
    }
  }
  if (rows.length) {
    lines.push('', 'consumers (installed from the tarballs, then used):');
    for (const { key, how, got, ok } of rows) {
      lines.push(`  ${ok ? 'PASS' : 'FAIL'} ${key.padEnd(17)} ${how.padEnd(22)} ${got ? `Node ${got.node} ${got.platform}: phase ${got.phase}, lock held ${got.held} and released ${got.released}, binary ${got.binary}` : 'no result'}`);
    }
  }
  const failed = results.filter((r) => r.status === 'FAIL').length;
  const counts = ['PASS', 'STAND-IN', 'SKIP', 'FAIL'].map((s) => `${results.filter((r) => r.status === s).length} ${s.toLowerCase()}`).join(', ');
  lines.push('', `${failed ? 'FAILED' : 'passed'}: ${counts}`);
  const text = lines.join('\n');
  console.log(text);
  fs.mkdirSync(WORK, { recursive: true });
  fs.writeFileSync(path.join(WORK, 'summary.txt'), `${text}\n`);
  return failed === 0;
}

// ------------------------------------------------------------------ main

function main() {
  if (argv.includes('--lint')) {
    step('tools: shellcheck (apt-get)', () => aptInstall(['shellcheck', 'python3-venv']));
    lintJob(ROOT);
    const failed = results.filter((r) => r.status === 'FAIL');
    console.log(`\nlint: ${failed.length ? `FAILED (${failed.map((r) => r.name).join(', ')})` : 'passed'}`);
    process.exit(failed.length ? 1 : 0);
  }
  fs.mkdirSync(WORK, { recursive: true });
  step('tools: shellcheck (apt-get)', () => aptInstall(['shellcheck', 'python3-venv']));
  step('tools: scripts/cross.sh setup (zig, qemu, wine, mingw, Node binaries)', () => sh(`bash ${CROSS} setup`));
  step(`tools: @arethetypeswrong/cli ${ATTW_VERSION} (npm)`, () => void attwBin());
  step('lint: npm ci', () => sh('npm ci --no-audit --no-fund'));
  lintJob(ROOT);
  fs.rmSync(ARTIFACTS, { recursive: true, force: true });
  buildJob();
  notRehearsed();
  let tarballs = [];
  const rows = [];
  if (publishJob()) {
    step('packages: npm pack of the root and npm/* as published', () => {
      tarballs = packTarballs();
      return `${tarballs.length} tarballs`;
    });
    const rootTgz = tarballs.find((t) => t === `${pkg.name}-${pkg.version}.tgz`);
    if (rootTgz) {
      step(`packages: attw ${rootTgz}`, () => attw(path.join(TARBALLS, rootTgz)));
      fs.rmSync(CONSUMERS, { recursive: true, force: true });
      for (const plan of CONSUMERS_PLAN) {
        if (!tarballs.some((t) => t.startsWith(`${pkg.name}-${plan.key}-`))) {
          skip(`consumer: ${plan.key}`, 'no tarball (its build failed)');
          continue;
        }
        step(`consumer: ${plan.key} (${plan.how ?? `Node ${plan.lines.join(', ')}`})`, () => consumer(plan, [rootTgz, ...tarballs.filter((t) => t !== rootTgz)], rows));
      }
    }
  }
  process.exit(summary(tarballs, rows) ? 0 : 1);
}

main();
