#!/usr/bin/env node
// Runs the reference quiver-cli live test suites with this package swapped in.
//
//   QUIVER_REFERENCE_DIR=/path/to/impeccable npm run test:reference -- [--mode LIST] [--ref REF] [--files a,b] [--whole]
//
// The reference is QUIVER_REFERENCE_DIR's working tree, or with --ref (a
// commit, tag or branch; `origin/REF` is tried too) that commit of the clone,
// read with `git archive` (the clone is never changed). Each mode works on its
// own copy in a scratch directory (without .git and node_modules; a fresh
// `git init` answers the one suite that asks git what is ignored). First the
// run says whether the upstream code this package implements (a83d767's
// session-store.mjs and source-lock.mjs, and what they reach in the modules
// they import) is unchanged there, naming the files and commits when not.
//
// Modes (--mode, comma-separated; default `all` = full,mixed,installed):
//   js         the untouched JS modules (the baseline)
//   full       session-store.mjs and source-lock.mjs become two-line re-exports
//              of this package, so every importer uses it
//   mixed      only live-server.mjs and live-accept.mjs import this package,
//              while live-complete, live-resume and live-status keep the JS
//              store on the same sessions directory
//   installed  the four below: the layout a user's project gets, with the
//              bundle vendored into skill/scripts/live/quiver-live-native and the
//              shims applied (`quiver-live vendor --shims`); nothing refers to
//              this package and no node_modules is anywhere up the tree
//     installed-native     the bundle loads: every process must run native
//     installed-no-bundle  the bundle folder removed: every process runs JS
//     installed-corrupt    the binary replaced by a corrupt file of its size
//                          (ELF header kept): the checksum refuses it, JS runs
//     installed-js         QUIVER_LIVE_NATIVE=0: JS runs
//   Each installed mode counts, from the shims' trace (QUIVER_LIVE_NATIVE_TRACE),
//   which implementation every process that imported them chose.
//
// --whole also runs the reference's whole default node suite (the files of
// its scripts/test-suites.mjs default suites) in the JS baseline and in each
// installed mode, and fails a mode that fails a test the baseline passes
// (some of its files need dependencies this copy lacks: those fail in both).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkUpstream, IMPLEMENTED } from './upstream-check.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const PACKAGE_DIR = path.resolve(here, '..');
// The ESM entry, which the swapped modules import.
const packageEntry = path.join(PACKAGE_DIR, 'index.mjs');
const { EXPORTS } = createRequire(import.meta.url)(path.join(PACKAGE_DIR, 'lib', 'api.cjs'));

const STORE_FILES = ['tests/live-session-store.test.mjs'];
const LOCK_FILES = ['tests/live-source-lock.test.mjs'];
const LIVE_FILES = [
  'tests/live-server.test.mjs',
  'tests/live-poll.test.mjs',
  'tests/live-poll-lanes.test.mjs',
  'tests/live-poll-stream.test.mjs',
  'tests/live-recovery-commands.test.mjs',
  'tests/live-completion.test.mjs',
  'tests/live-accept.test.mjs',
];
const LIVE_DIR = path.join('skill', 'scripts', 'live');
const INSTALLED = ['installed-native', 'installed-no-bundle', 'installed-corrupt', 'installed-js'];
const MODES = ['js', 'full', 'mixed', ...INSTALLED];
const USAGE = 'usage: test-reference.mjs [--mode all|installed|js,full,mixed,installed-native,...] [--ref COMMIT|BRANCH] [--files tests/a.test.mjs,...] [--whole]';

function parseArgs(argv) {
  const args = { modes: null, files: null, ref: null, whole: false };
  for (let i = 0; i < argv.length; i++) {
    const value = () => {
      if (argv[i + 1] === undefined) fail(`${argv[i]} needs a value\n${USAGE}`);
      return argv[++i];
    };
    if (argv[i] === '--mode') args.modes = value().split(',');
    else if (argv[i] === '--files') args.files = value().split(',');
    else if (argv[i] === '--ref') args.ref = value();
    else if (argv[i] === '--whole') args.whole = true;
    else if (argv[i] === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else fail(`unknown argument ${argv[i]}\n${USAGE}`);
  }
  const modes = (args.modes ?? ['all']).flatMap((m) => (m === 'all' ? ['full', 'mixed', ...INSTALLED] : m === 'installed' ? INSTALLED : [m]));
  const unknown = modes.filter((m) => !MODES.includes(m));
  if (unknown.length) fail(`unknown mode ${unknown.join(', ')}; modes: ${MODES.join(', ')}, all, installed`);
  args.modes = [...new Set(modes)];
  return args;
}

function fail(message) {
  console.error(`test-reference: ${message}`);
  process.exit(2);
}

function git(dir, args, options = {}) {
  return spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8', maxBuffer: 1 << 30, ...options });
}

// ---------------------------------------------------------------------------
// The reference tree

/**
 * Where the reference comes from: the working tree, or `ref` of the clone.
 * Returns { describe, commit, readFile(rel), materialize(dest) }.
 */
function referenceSource(dir, ref) {
  if (!ref) {
    const head = git(dir, ['rev-parse', 'HEAD']);
    const commit = head.status === 0 ? head.stdout.trim() : null;
    return {
      describe: `${dir} (working tree${commit ? ` at ${commit.slice(0, 12)}` : ''})`,
      commit,
      readFile: (rel) => readOrNull(path.join(dir, rel)),
      materialize(dest) {
        fs.cpSync(dir, dest, { recursive: true, filter: (src) => !['.git', 'node_modules'].includes(path.basename(src)) });
      },
    };
  }
  let commit = null;
  for (const candidate of [ref, `origin/${ref}`]) {
    const r = git(dir, ['rev-parse', '--verify', '--quiet', `${candidate}^{commit}`]);
    if (r.status === 0) {
      commit = r.stdout.trim();
      break;
    }
  }
  if (!commit) fail(`--ref ${ref}: no such commit or branch in ${dir} (QUIVER_REFERENCE_DIR must be a clone with history)`);
  const subject = git(dir, ['log', '-1', '--format=%cs %s', commit]).stdout.trim();
  let pristine = null;
  return {
    describe: `${ref} = ${commit.slice(0, 12)} (${subject}) of ${dir}`,
    commit,
    readFile(rel) {
      const r = git(dir, ['show', `${commit}:${rel}`]);
      return r.status === 0 ? r.stdout : null;
    },
    materialize(dest) {
      if (!pristine) {
        pristine = scratchDir('quiver-ref-archive-');
        const archive = git(dir, ['archive', '--format=tar', commit], { encoding: 'buffer' });
        if (archive.status !== 0) throw new Error(`git archive ${commit}: ${archive.stderr}`);
        const tar = spawnSync('tar', ['-x', '-C', pristine], { input: archive.stdout, maxBuffer: 1 << 30 });
        if (tar.status !== 0) throw new Error(`tar -x: ${tar.stderr}`);
      }
      fs.cpSync(pristine, dest, { recursive: true });
    },
  };
}

function readOrNull(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

const scratchDirs = [];
const removeScratch = () => {
  for (const d of scratchDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
};
process.on('exit', removeScratch);
/** The suite run in progress, ended with this process. */
let running = null;
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
  process.on(signal, () => {
    if (running) killGroup(running);
    removeScratch();
    process.exit(code);
  });
}
function scratchDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  scratchDirs.push(dir);
  return dir;
}

function scratchCopy(source) {
  const dest = scratchDir('quiver-ref-');
  source.materialize(dest);
  // One suite asks git what the checkout ignores; a fresh repository answers
  // from the copied .gitignore without carrying the reference's history.
  spawnSync('git', ['init', '-q'], { cwd: dest });
  return dest;
}

// ---------------------------------------------------------------------------
// Upstream tracking

/** Prints whether the checkout still carries the code this package implements; returns that. */
function reportUpstream(source, referenceDir) {
  const implemented = IMPLEMENTED.commit.slice(0, 7);
  const report = checkUpstream(source.readFile);
  if (report.same) {
    console.log(`upstream: ${source.describe}: the code this package implements is unchanged since ${implemented}:`);
    for (const f of report.files) console.log(`  same  ${f.file}: ${f.covers}`);
    return report;
  }
  console.log(`UPSTREAM CHANGED: ${source.describe} differs from ${implemented}, the version this package implements:`);
  for (const f of report.files) {
    const state = f.same ? 'same   ' : f.present ? 'CHANGED' : 'MISSING';
    console.log(`  ${state}  ${f.file}: ${f.covers}`);
    if (f.same) continue;
    // Commits on either side: `>` only in the checkout, `<` only in the implemented version.
    const log = source.commit
      ? git(referenceDir, ['log', '--left-right', '--format=%m %h %cs %s', `${IMPLEMENTED.commit}...${source.commit}`, '--', f.file])
      : null;
    if (log?.status === 0 && log.stdout.trim()) {
      console.log(`           commits touching it (> only in ${source.commit.slice(0, 7)}, < only in ${implemented}):`);
      for (const entry of log.stdout.trim().split('\n')) console.log(`             ${entry}`);
    } else {
      console.log(`           (no commit list: ${source.commit ? `the clone lacks ${implemented}, or the file only moved` : 'not a git checkout'})`);
    }
  }
  return report;
}

// ---------------------------------------------------------------------------
// Layouts

function writeReexport(file, names) {
  fs.writeFileSync(file, `// quiver-live-native swap: this module now re-exports the native package.\nexport { ${names.join(', ')} } from ${JSON.stringify(packageEntry)};\n`);
}

function applyFullSwap(dir) {
  const live = path.join(dir, LIVE_DIR);
  for (const [file, names] of Object.entries(EXPORTS)) writeReexport(path.join(live, file), names);
}

function applyMixedSwap(dir) {
  const scripts = path.join(dir, 'skill', 'scripts');
  const rewrites = [
    ['live-server.mjs', './live/session-store.mjs'],
    ['live-accept.mjs', './live/source-lock.mjs'],
  ];
  for (const [file, from] of rewrites) {
    const p = path.join(scripts, file);
    const text = fs.readFileSync(p, 'utf8');
    const needle = `from '${from}'`;
    if (!text.includes(needle)) throw new Error(`mixed swap: ${file} does not import ${from}`);
    fs.writeFileSync(p, text.split(needle).join(`from ${JSON.stringify(packageEntry)}`));
  }
}

/** node_modules folders from `dir` up to the filesystem root (the installed layout has none). */
function nodeModulesAbove(dir) {
  const found = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'node_modules'))) found.push(path.join(d, 'node_modules'));
    if (path.dirname(d) === d) return found;
  }
}

/** The installed layout: the bundle vendored into the skill, the shims applied, then the mode's damage. */
function applyInstalled(dir, mode) {
  const above = nodeModulesAbove(dir);
  if (above.length) throw new Error(`the installed layout needs no node_modules up the tree, found ${above.join(', ')}`);
  const { vendor } = createRequire(import.meta.url)(path.join(PACKAGE_DIR, 'vendor', 'index.js'));
  const live = path.join(dir, LIVE_DIR);
  const bundle = path.join(live, 'quiver-live-native');
  const report = vendor(bundle, { shims: live });
  const env = {};
  if (mode === 'installed-no-bundle') fs.rmSync(bundle, { recursive: true });
  if (mode === 'installed-corrupt') {
    for (const b of report.platforms) {
      const file = path.join(bundle, b.file);
      const bytes = fs.readFileSync(file);
      // The ELF (or Mach-O, PE) header stays, so only the checksum tells.
      for (let i = 64, x = 0x9e3779b1; i < bytes.length; i++) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        bytes[i] = x >>> 24;
      }
      fs.writeFileSync(file, bytes);
    }
  }
  if (mode === 'installed-js') env.QUIVER_LIVE_NATIVE = '0';
  return { env, bundle: report };
}

/** What each installed mode must see in the trace: every process on one implementation, with a reason like this. */
const EXPECT = {
  'installed-native': { implementation: 'native', reason: /^the bundle loaded$/ },
  'installed-no-bundle': { implementation: 'js', reason: /^no bundle at / },
  'installed-corrupt': { implementation: 'js', reason: /has sha256 [0-9a-f]{64}, the manifest says / },
  'installed-js': { implementation: 'js', reason: /^QUIVER_LIVE_NATIVE=0$/ },
};

function readTrace(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** "native in 12 processes, js in 0", and whether the trace is what the mode expects. */
function judgeTrace(mode, lines) {
  const count = (impl) => lines.filter((l) => l.implementation === impl).length;
  const summary = `native in ${count('native')} process(es), js in ${count('js')}`;
  const want = EXPECT[mode];
  const wrong = lines.filter((l) => l.implementation !== want.implementation || !want.reason.test(l.reason));
  const problems = [];
  if (lines.length === 0) problems.push('no process imported the shims');
  if (wrong.length) problems.push(`${wrong.length} process(es) chose otherwise, e.g. ${JSON.stringify(wrong[0])}`);
  return { summary, problems };
}

// ---------------------------------------------------------------------------
// Running

/** Ends a suite run and whatever its tests started (servers included): its whole process group. */
function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

// The reference's live-server suite listens on this fixed port: two runs at
// once (or a server an interrupted run left behind) fail each other.
const LIVE_SERVER_PORT = 8499;

/** Waits (at most 5 minutes) until 127.0.0.1:port can be listened on; false if it never could. */
async function portFree(port) {
  const deadline = Date.now() + 5 * 60 * 1000;
  let told = false;
  for (;;) {
    const free = await new Promise((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return true;
    if (Date.now() > deadline) return false;
    if (!told) console.log(`  waiting for 127.0.0.1:${port} (the live-server suite's fixed port), in use by another process`);
    told = true;
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** Runs `node --test` on `files` in `dir` (at most 30 minutes); the counts and failures of its TAP report. */
async function runSuites(dir, files, env = {}) {
  if (!(await portFree(LIVE_SERVER_PORT))) {
    return { pass: 0, fail: 0, tests: 0, skipped: 0, cancelled: 0, failures: [], topFailures: [`127.0.0.1:${LIVE_SERVER_PORT} stayed in use for 5 minutes`], out: '', timedOut: false };
  }
  // Some of the reference's tests leave their temporary folders behind; each
  // run gets its own temporary folder, removed when the run ends.
  const tmp = scratchDir('quiver-ref-tmp-');
  const child = spawn(process.execPath, ['--test', '--test-reporter=tap', ...files], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '', NODE_PATH: '', QUIVER_LIVE_NATIVE: '', QUIVER_LIVE_NATIVE_TRACE: '', TMPDIR: tmp, TMP: tmp, TEMP: tmp, ...env },
  });
  running = child;
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
  child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; killGroup(child); }, 30 * 60 * 1000);
  await new Promise((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  running = null;
  // Anything its tests left running (a server whose test was cut short) goes too.
  killGroup(child);
  fs.rmSync(tmp, { recursive: true, force: true });
  // The report is on stdout, its summary the last such lines (what the tests
  // themselves print goes to stderr, or sits inside the report as comments).
  const count = (name) => Number([...stdout.matchAll(new RegExp(`^# ${name} (\\d+)$`, 'gm'))].at(-1)?.[1] ?? 0);
  // Failing tests by name, the scratch path taken out so runs compare.
  const failures = [...stdout.matchAll(/^\s*not ok \d+ - (.*)$/gm)].map((m) => m[1].split(dir).join('<ref>'));
  const topFailures = [...stdout.matchAll(/^not ok \d+ - (.*)$/gm)].map((m) => m[1].split(dir).join('<ref>'));
  return { pass: count('pass'), fail: count('fail'), tests: count('tests'), skipped: count('skipped'), cancelled: count('cancelled'), todo: count('todo'), failures, topFailures, out: `${stdout}\n${stderr}`, timedOut };
}

/** The reference's whole default node suite: the node files of its default suites, else every tests/*.test.mjs. */
async function wholeSuiteFiles(dir) {
  const suitesFile = path.join(dir, 'scripts', 'test-suites.mjs');
  if (fs.existsSync(suitesFile)) {
    try {
      const m = await import(pathToFileURL(suitesFile).href);
      const files = [];
      for (const name of m.DEFAULT_SUITES) for (const c of m.SUITES[name].commands) if (c.runner === 'node') files.push(...c.files);
      if (files.length) return { files: [...new Set(files)], from: 'the node files of its default suites (scripts/test-suites.mjs)' };
    } catch {
      // fall through
    }
  }
  const files = fs.readdirSync(path.join(dir, 'tests')).filter((f) => f.endsWith('.test.mjs')).map((f) => `tests/${f}`);
  return { files, from: 'every tests/*.test.mjs' };
}

function line(label, r, extra = '') {
  return `${label}: ${r.pass}/${r.tests} passed, ${r.fail} failed, ${r.skipped} skipped${r.cancelled ? `, ${r.cancelled} cancelled` : ''}${extra}`;
}

/** A run passes when every test passed or was skipped (a cancelled test is no pass). */
const clean = (r) => r.tests > 0 && r.fail === 0 && !r.timedOut && r.pass + r.skipped + (r.todo ?? 0) === r.tests;

async function main() {
  const referenceDir = process.env.QUIVER_REFERENCE_DIR;
  if (!referenceDir) {
    console.log('reference suites skipped: QUIVER_REFERENCE_DIR not set (point it at a pbakaus/impeccable checkout; a clone with history for --ref)');
    return;
  }
  if (!fs.existsSync(packageEntry)) throw new Error(`build the package first: ${packageEntry} is missing`);
  const args = parseArgs(process.argv.slice(2));
  const source = referenceSource(path.resolve(referenceDir), args.ref);
  const upstream = reportUpstream(source, path.resolve(referenceDir));
  console.log(`node ${process.version}; modes: ${args.modes.join(', ')}${args.whole ? '; with the whole default suite' : ''}`);

  let failed = 0;
  let baseline = null;
  const wholeFor = async (dir) => {
    if (!baseline) {
      const w = await wholeSuiteFiles(dir);
      const js = scratchCopy(source);
      const started = Date.now();
      baseline = { ...(await runSuites(js, w.files)), files: w.files, from: w.from };
      console.log(line(`whole suite, js baseline (${w.files.length} files: ${w.from}; ${((Date.now() - started) / 1000).toFixed(0)}s)`, baseline));
    }
    return baseline;
  };

  for (const mode of args.modes) {
    const dir = scratchCopy(source);
    const installed = INSTALLED.includes(mode);
    const trace = path.join(scratchDir('quiver-ref-trace-'), 'trace.jsonl');
    let env = {};
    let note = '';
    try {
      if (mode === 'full') applyFullSwap(dir);
      if (mode === 'mixed') applyMixedSwap(dir);
      if (installed) {
        const applied = applyInstalled(dir, mode);
        env = { ...applied.env, QUIVER_LIVE_NATIVE_TRACE: trace };
        note = ` [bundle ${applied.bundle.version}: ${applied.bundle.platforms.map((b) => b.platform).join(', ')}]`;
      }
    } catch (error) {
      console.log(`${mode}: could not set up: ${error.message}`);
      failed++;
      continue;
    }
    const groups = args.files
      ? [['files', args.files]]
      : mode === 'mixed' ? [['7 live suites', LIVE_FILES]] : [['7 live suites', LIVE_FILES], ['store + lock suites', [...STORE_FILES, ...LOCK_FILES]]];
    let modeFailed = false;
    const started = Date.now();
    for (const [label, files] of groups) {
      const r = await runSuites(dir, files, env);
      console.log(line(`${mode} ${label}`, r, r.timedOut ? ' (timed out)' : ''));
      for (const f of r.topFailures) console.log(`  not ok: ${f}`);
      if (!clean(r)) {
        modeFailed = true;
        if (process.env.VERBOSE) console.log(r.out);
      }
    }
    if (installed) {
      const judged = judgeTrace(mode, readTrace(trace));
      console.log(`${mode} implementation: ${judged.summary}${note}`);
      for (const p of judged.problems) console.log(`  WRONG IMPLEMENTATION: ${p}`);
      if (judged.problems.length) modeFailed = true;
    }
    if (args.whole && installed) {
      const base = await wholeFor(dir);
      fs.rmSync(trace, { force: true });
      const r = await runSuites(dir, base.files, env);
      const known = new Set(base.failures);
      const fresh = [...new Set(r.failures.filter((f) => !known.has(f)))];
      console.log(line(`${mode} whole suite`, r, `; failing beyond the js baseline: ${fresh.length ? fresh.length : 'none'}`));
      for (const f of fresh.slice(0, 20)) console.log(`  new failure: ${f}`);
      console.log(`${mode} whole suite implementation: ${judgeTrace(mode, readTrace(trace)).summary}`);
      if (fresh.length) modeFailed = true;
    }
    if (args.whole && mode === 'js') await wholeFor(dir);
    console.log(`${mode}: ${modeFailed ? 'FAILED' : 'ok'} (${((Date.now() - started) / 1000).toFixed(1)}s)`);
    if (modeFailed) failed++;
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (!upstream.same) console.log(`note: upstream differs from ${IMPLEMENTED.commit.slice(0, 7)} (see the top of this output)`);
  if (failed) process.exitCode = 1;
}

await main();
