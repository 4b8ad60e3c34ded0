#!/usr/bin/env node
// Runs the reference quiver-cli live test suites with this package swapped in.
//
//   QUIVER_REFERENCE_DIR=/path/to/impeccable npm run test:reference [-- --mode full|mixed|js|all] [--files a,b]
//
// It copies the checkout (without .git) to a scratch directory, rewrites the
// imports there, and never touches the checkout itself:
//   js     the untouched JS modules (the baseline),
//   full   session-store.mjs and source-lock.mjs become two-line re-exports of
//          this package, so every importer uses it,
//   mixed  only live-server.mjs and live-accept.mjs import this package, while
//          live-complete, live-resume and live-status keep the JS store on the
//          same sessions directory.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const packageEntry = path.resolve(here, '..', 'index.js');

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

function parseArgs(argv) {
  const args = { mode: 'all', files: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--mode') args.mode = argv[++i];
    else if (argv[i] === '--files') args.files = argv[++i].split(',');
    else if (argv[i] === '--help') {
      console.log('usage: test-reference.mjs [--mode full|mixed|js|all] [--files tests/a.test.mjs,...]');
      process.exit(0);
    }
  }
  return args;
}

function scratchCopy(referenceDir) {
  const dest = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-ref-'));
  fs.cpSync(referenceDir, dest, {
    recursive: true,
    filter: (src) => path.basename(src) !== '.git' && path.basename(src) !== 'node_modules',
  });
  // One suite asks git what the checkout ignores; a fresh repository answers
  // from the copied .gitignore without carrying the reference's history.
  spawnSync('git', ['init', '-q'], { cwd: dest });
  return dest;
}

function writeReexport(file, names) {
  fs.writeFileSync(file, `// quiver-live-native swap: this module now re-exports the native package.\nexport { ${names.join(', ')} } from ${JSON.stringify(packageEntry)};\n`);
}

function applyFullSwap(dir) {
  const live = path.join(dir, 'skill', 'scripts', 'live');
  writeReexport(path.join(live, 'session-store.mjs'), ['createLiveSessionStore', 'GENERATION_FENCED_PHASES']);
  writeReexport(path.join(live, 'source-lock.mjs'), ['withSourceLockSync', 'sourceLockPath']);
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

function runSuites(dir, files) {
  const res = spawnSync(process.execPath, ['--test', '--test-reporter=tap', ...files], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const out = `${res.stdout}\n${res.stderr}`;
  const count = (name) => Number((out.match(new RegExp(`^# ${name} (\\d+)`, 'm')) || [])[1] || 0);
  const failures = [...out.matchAll(/^not ok \d+ - (.*)$/gm)].map((m) => m[1]);
  return { pass: count('pass'), fail: count('fail'), tests: count('tests'), skipped: count('skipped'), failures, out };
}

function main() {
  const referenceDir = process.env.QUIVER_REFERENCE_DIR;
  if (!referenceDir) {
    console.log('reference suites skipped: QUIVER_REFERENCE_DIR not set (point it at a pbakaus/impeccable checkout)');
    return;
  }
  if (!fs.existsSync(packageEntry)) throw new Error(`build the package first: ${packageEntry} is missing`);
  const args = parseArgs(process.argv.slice(2));
  const modes = args.mode === 'all' ? ['full', 'mixed'] : [args.mode];
  const plan = {
    js: args.files || [...STORE_FILES, ...LOCK_FILES, ...LIVE_FILES],
    full: args.files || [...STORE_FILES, ...LOCK_FILES, ...LIVE_FILES],
    mixed: args.files || LIVE_FILES,
  };
  let failed = 0;
  for (const mode of modes) {
    const dir = scratchCopy(path.resolve(referenceDir));
    try {
      if (mode === 'full') applyFullSwap(dir);
      if (mode === 'mixed') applyMixedSwap(dir);
      const started = Date.now();
      const r = runSuites(dir, plan[mode]);
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      console.log(`${mode}: ${r.pass}/${r.tests} passed, ${r.fail} failed, ${r.skipped} skipped (${plan[mode].length} files, ${secs}s)`);
      for (const f of r.failures) console.log(`  not ok: ${f}`);
      if (r.fail > 0 || r.tests === 0) {
        failed++;
        if (process.env.VERBOSE) console.log(r.out);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  if (failed) process.exitCode = 1;
}

main();
