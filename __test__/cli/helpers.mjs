// Plumbing for cli.test.mjs: run the CLI, make projects, plant faults.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const PACKAGE_DIR = path.resolve(here, '..', '..');
export const CLI = path.join(PACKAGE_DIR, 'bin', 'quiver-live.mjs');
export const FIXTURE_DIR = path.join(here, 'fixtures', 'old-module');
const FAKE_CLOCK = pathToFileURL(path.join(here, 'fake-clock.mjs')).href;

export const native = createRequire(import.meta.url)(path.join(PACKAGE_DIR, 'index.js'));

function nodeArgs(args, now) {
  return [...(now === undefined ? [] : ['--import', FAKE_CLOCK]), CLI, ...args];
}

/** The child's environment: NO_COLOR=1 unless `env` says otherwise (an `undefined` value unsets). */
function childEnv(now, env = {}) {
  const out = { ...process.env, NO_COLOR: '1', ...env };
  delete out.QUIVER_LIVE_FAKE_NOW;
  if (now !== undefined) out.QUIVER_LIVE_FAKE_NOW = String(now);
  for (const [key, value] of Object.entries(out)) if (value === undefined) delete out[key];
  return out;
}

/** Runs the CLI to completion: `{ code, stdout, stderr }`. `now` fakes its clock. */
export function runCli(args, { now, env, cwd } = {}) {
  const r = spawnSync(process.execPath, nodeArgs(args, now), { encoding: 'utf8', env: childEnv(now, env), cwd: cwd ?? PACKAGE_DIR, timeout: 20_000 });
  if (r.error) throw r.error;
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** As runCli, without blocking: many runs can go at once. */
export function runCliAsync(args, { now, env, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs(args, now), { env: childEnv(now, env), cwd: cwd ?? PACKAGE_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs every argument list at once; results in the same order. */
export function runAll(argLists, options) {
  return Promise.all(argLists.map((args) => runCliAsync(args, options)));
}

/** Starts the CLI and leaves it running (for `tail -f`). */
export function startCli(args, { now, env } = {}) {
  const child = spawn(process.execPath, nodeArgs(args, now), { env: childEnv(now, env), stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  const state = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => { state.stdout += d; });
  child.stderr.on('data', (d) => { state.stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, state, exited };
}

export async function waitFor(predicate, what, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const projects = [];
process.on('exit', () => {
  for (const dir of projects) {
    try { fs.rmSync(dir, { recursive: true, force: true }); } catch { /* best effort */ }
  }
});

/** A scratch project whose root is itself (its `.git` stops the root walk); removed at exit. */
export function makeProject(label = 'p') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `quiver-live-cli-test-${label}-`));
  fs.mkdirSync(path.join(dir, '.git'));
  projects.push(dir);
  return dir;
}

export const sessionsDir = (project) => path.join(project, '.impeccable', 'live', 'sessions');
export const locksDir = (project) => path.join(project, '.impeccable', 'live', 'locks');

/** Every file under `dir` with its bytes (base64), for "nothing was written" checks. */
export function treeBytes(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) { out[path.relative(dir, p) + '/'] = 'dir'; walk(p); }
      else out[path.relative(dir, p)] = fs.readFileSync(p).toString('base64');
    }
  };
  walk(dir);
  return out;
}

/** The pid of a process that has exited (a lock naming it is stale). */
export function deadPid() {
  const r = spawnSync(process.execPath, ['-e', '']);
  return r.pid;
}

export function writeLock(project, name, content) {
  fs.mkdirSync(locksDir(project), { recursive: true });
  const file = path.join(locksDir(project), name);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content) + '\n');
  return file;
}

/**
 * Field 22 of our /proc/<pid>/stat, as other processes read it. The path goes
 * through /proc/./ because qemu-user answers a process's reads of its own
 * /proc/<pid>/stat with a start time of its own making (as the core does).
 */
export function ownStartTime() {
  const stat = fs.readFileSync(`/proc/./${process.pid}/stat`, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 1).trim().split(/\s+/)[19]);
}

export function bootId() {
  return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
}

/** Replaces every occurrence of `dir` in text with `<project>`. */
export function normalize(text, dir) {
  // JSON output escapes win32's backslashes.
  return text.split(dir).join('<project>').split(JSON.stringify(dir).slice(1, -1)).join('<project>');
}
