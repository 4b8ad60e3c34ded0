// Shared plumbing for the fault-injection suite (not a test file: its name
// does not match node --test's patterns).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { referenceModulePath } from '../support/impls.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const PACKAGE_DIR = path.resolve(here, '..', '..');
export const PACKAGE_ENTRY = path.join(PACKAGE_DIR, 'index.js');
export const WORKERS = path.join(here, 'workers');

/** The package as CommonJS users load it (index.js). */
export function loadNative() {
  return createRequire(path.join(PACKAGE_DIR, 'package.json'))(PACKAGE_ENTRY);
}


/**
 * Path of the old module's session-store.mjs, from QUIVER_REFERENCE_DIR (one
 * lookup shared with the differential suite); null, after marking the test
 * skipped and saying why, when the variable is unset.
 */
export function referenceOrSkip(t) {
  const refPath = referenceModulePath();
  if (!refPath) t.skip('QUIVER_REFERENCE_DIR not set: old-module comparison not run');
  return refPath;
}

const projects = [];
process.on('exit', () => {
  for (const dir of projects) removeDir(dir);
});

/**
 * A scratch project: a temp dir holding an empty `.git`, so the project-root
 * walk stops there and `<root>` is the dir itself. Tests remove it when done;
 * one a failing test left behind is removed when the process exits.
 */
export function makeProject(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `quiver-faults-${label}-`));
  projects.push(dir);
  fs.mkdirSync(path.join(dir, '.git'));
  return dir;
}

export function removeDir(dir) {
  try { fs.rmSync(dir, { recursive: true, force: true }); } catch { /* best effort */ }
}

export function sessionsDir(project) {
  return path.join(project, '.impeccable', 'live', 'sessions');
}

export function journalPath(project, id) {
  return path.join(sessionsDir(project), `${id}.jsonl`);
}

export function snapshotPath(project, id) {
  return path.join(sessionsDir(project), `${id}.snapshot.json`);
}

/**
 * Splits a journal into lines. `entries` are the lines that parse as JSON
 * objects; `bad` the non-blank ones that do not (with 1-based line numbers);
 * `endsWithNewline` tells whether the file has a torn tail.
 */
export function readJournal(file) {
  const text = fs.readFileSync(file, 'utf8');
  const raw = text.split('\n');
  const entries = [];
  const bad = [];
  raw.forEach((line, i) => {
    if (!line.trim()) return;
    try {
      const entry = JSON.parse(line);
      if (!entry || typeof entry !== 'object') throw new Error('not an object');
      entries.push(entry);
    } catch {
      bad.push({ line: i + 1, text: line.length > 80 ? `${line.slice(0, 80)}...` : line });
    }
  });
  return {
    text,
    bytes: Buffer.byteLength(text),
    lineCount: entries.length + bad.length,
    entries,
    bad,
    endsWithNewline: text.length === 0 || text.endsWith('\n'),
  };
}

/** Sequence-number statistics of journal entries. */
export function seqStats(entries) {
  const counts = new Map();
  for (const e of entries) counts.set(e.seq, (counts.get(e.seq) || 0) + 1);
  let extra = 0; // lines beyond the first that reuse a seq
  let sharing = 0; // lines whose seq appears on more than one line
  for (const n of counts.values()) {
    if (n > 1) {
      extra += n - 1;
      sharing += n;
    }
  }
  const seqs = entries.map((e) => e.seq);
  let increasing = true;
  for (let i = 1; i < seqs.length; i++) if (!(seqs[i] > seqs[i - 1])) increasing = false;
  return { distinct: counts.size, extra, sharing, increasing, min: Math.min(...seqs), max: Math.max(...seqs) };
}

/**
 * Spawns `node [nodeArgs] workers/<script>` with a JSON config as argv[2]
 * (behind `prefix`, a command that runs the rest, when given). stdout is
 * collected line by line (`onLine` sees each), stderr kept for failures.
 * `done` resolves with { code, signal, lines, stderr, timedOut } once the
 * process has exited and been reaped. A worker still running after
 * `timeoutMs` is SIGKILLed, so a hung worker fails its test instead of
 * hanging the suite.
 */
export function startWorker(script, config, { onLine, ipc = false, uid, gid, timeoutMs = 60_000, nodeArgs = [], prefix = [], env } = {}) {
  const stdio = ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'];
  const argv = [...prefix, process.execPath, ...nodeArgs, path.join(WORKERS, script), JSON.stringify(config)];
  const child = spawn(argv[0], argv.slice(1), {
    stdio,
    ...(env ? { env } : {}),
    ...(uid !== undefined ? { uid } : {}),
    ...(gid !== undefined ? { gid } : {}),
  });
  const lines = [];
  let partial = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    partial += chunk;
    let nl;
    while ((nl = partial.indexOf('\n')) >= 0) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      lines.push(line);
      if (onLine) onLine(line, child);
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeoutMs);
  timer.unref();
  const done = new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (partial) lines.push(partial);
      resolve({ code, signal, lines, stderr: timedOut ? `(killed after ${timeoutMs} ms)\n${stderr}` : stderr, timedOut });
    });
  });
  return { child, done, lines };
}

/** The first JSON line a worker printed that has `key`, parsed. */
export function resultLine(lines, key = 'result') {
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    try {
      const v = JSON.parse(line);
      if (v && key in v) return v[key];
    } catch { /* not ours */ }
  }
  return undefined;
}

/**
 * What the case `name` of walk-cases.mjs does with `impl` ('native', or 'ref'
 * with `refPath`), from a child (workers/walk.mjs) that must exit cleanly
 * within a minute.
 */
export async function runWalkCase(name, impl, refPath = null) {
  const cwd = makeProject('walk');
  try {
    const res = await startWorker('walk.mjs', { case: name, impl, refPath, cwd }, { timeoutMs: 60_000 }).done;
    const how = res.timedOut ? 'was killed after a minute' : res.signal ? `died by ${res.signal}` : `exited ${res.code}`;
    if (res.code !== 0 || res.timedOut) throw new Error(`${name}: ${impl} ${how}\n${res.stderr.slice(0, 2000)}`);
    return resultLine(res.lines);
  } finally {
    removeDir(cwd);
  }
}

export function expectClean(res, what) {
  if (res.code !== 0 || res.timedOut) {
    throw new Error(`${what} exited with code ${res.code} signal ${res.signal}\n${res.stderr}`);
  }
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Prints a key figure so it shows up in `node --test` output. */
export function figure(text) {
  console.log(`[faults] ${text}`);
}

// ---------------------------------------------------------------------------
// Mounts (tmpfs), for disk-fault tests. Root only, and only where the
// container lets us mount.

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout || ''}${r.stderr || ''}${r.error ? r.error.message : ''}`.trim() };
}

/**
 * Mounts a tmpfs of `size` at `dir`. Returns null on success, else why it
 * could not (so the caller can skip with that reason).
 */
export function mountTmpfs(dir, size) {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not running as root';
  const r = run('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir]);
  return r.ok ? null : `mount -t tmpfs failed: ${r.out}`;
}

export function remount(dir, mode) {
  const r = run('mount', ['-o', `remount,${mode}`, dir]);
  return r.ok ? null : `mount -o remount,${mode} failed: ${r.out}`;
}

export function unmount(dir) {
  const r = run('umount', [dir]);
  if (!r.ok) run('umount', ['-l', dir]);
}

/**
 * Shell text that runs this Node with `args`, each quoted. Under emulation
 * (scripts/cross.sh sets QLN_QEMU) it runs through qemu: a shell's `exec` is
 * not rewritten as this process's own spawns are. qemu-user sizes the guest's
 * stack from RLIMIT_STACK, so a `ulimit` before it applies as it would natively.
 */
export function shellNode(args) {
  const quoted = (s) => `'${s.replace(/'/g, `'\\''`)}'`;
  const qemu = process.env.QLN_QEMU ? [process.env.QLN_QEMU, ...(process.env.QLN_QEMU_ARGS || '').split(' ').filter(Boolean)] : [];
  return [...qemu, process.execPath, ...args].map(quoted).join(' ');
}
