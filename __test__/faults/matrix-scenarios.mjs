// The fault matrix's operations and its checks (not a test file). Each
// scenario builds a project, then runs one operation; the matrix runs that
// operation once for each file-system call it makes, with that call failing
// (an errno) or the process killed right before it, and then checks the
// project (see `verify`).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

export const ID = 'mx1';
const OTHER = ['mx0', 'mx2'];
const SOURCE = 'src/a.css';

/** The errnos each call is failed with, by name. */
export const ERRNOS = ['EIO', 'ENOSPC', 'EACCES', 'EPERM', 'EINTR', 'EAGAIN', 'ENOENT'];

const sessions = (project) => path.join(project, '.impeccable', 'live', 'sessions');
const legacy = (project) => path.join(project, '.impeccable-live', 'sessions');
const journal = (project, id = ID) => path.join(sessions(project), `${id}.jsonl`);

function line(seq, id, event) {
  return JSON.stringify({ seq, id, type: event.type, ts: `2030-01-01T00:00:0${seq}.000Z`, event: { ...event, id } }) + '\n';
}

const HISTORY = [{ type: 'generate', count: 3, pageUrl: '/pricing' }, { type: 'agent_phase', phase: 'picked_up' }, { type: 'variant_mounted', variant: 1 }];
const NEXT = { type: 'variant_mounted', variant: 2, token: 't' };

/** Writes a session's history through the package (its own snapshot file too). */
function seed(pkg, project, id = ID) {
  const store = pkg.createLiveSessionStore({ cwd: project });
  for (const event of HISTORY) store.appendEvent({ ...event, id });
}

/**
 * Each scenario: `setup(pkg, project)` (not under faults) returns the
 * state the operation needs; `run(pkg, project, state)` is the operation,
 * whose every file-system call the matrix fails in turn; `append` marks an
 * appendEvent, whose contract the checks hold it to.
 */
export const SCENARIOS = {
  'open a store': {
    setup: () => ({}),
    run: (pkg, project) => { pkg.createLiveSessionStore({ cwd: project }); },
  },
  'append, fresh session': {
    append: true,
    setup: (pkg, project) => ({ store: pkg.createLiveSessionStore({ cwd: project }) }),
    run: (pkg, project, { store }) => store.appendEvent({ ...HISTORY[0], id: ID }),
  },
  'append, cached session': {
    append: true,
    setup: (pkg, project) => {
      seed(pkg, project);
      const store = pkg.createLiveSessionStore({ cwd: project });
      store.getSnapshot(ID);
      return { store };
    },
    run: (pkg, project, { store }) => store.appendEvent({ ...NEXT, id: ID }),
  },
  'append, legacy journal adopted': {
    append: true,
    setup: (pkg, project) => {
      fs.mkdirSync(legacy(project), { recursive: true });
      fs.writeFileSync(path.join(legacy(project), `${ID}.jsonl`), HISTORY.map((e, i) => line(i + 1, ID, e)).join(''));
      return { store: pkg.createLiveSessionStore({ cwd: project }) };
    },
    run: (pkg, project, { store }) => store.appendEvent({ ...NEXT, id: ID }),
  },
  'append, durable': {
    append: true,
    setup: (pkg, project) => {
      seed(pkg, project);
      const store = pkg.createLiveSessionStore({ cwd: project, durable: true });
      store.getSnapshot(ID);
      return { store };
    },
    run: (pkg, project, { store }) => store.appendEvent({ ...NEXT, id: ID }),
  },
  flush: {
    setup: (pkg, project) => {
      seed(pkg, project);
      // A staged file a writer left, for the flush's sweep to meet.
      const left = path.join(sessions(project), `.${ID}.0123456789ab`);
      fs.writeFileSync(left, '{"partial":');
      const old = new Date(Date.now() - 120_000);
      fs.utimesSync(left, old, old);
      return { store: pkg.createLiveSessionStore({ cwd: project }) };
    },
    run: (pkg, project, { store }) => store.flush(ID),
  },
  'getSnapshot, trusted snapshot file': {
    setup: (pkg, project) => {
      seed(pkg, project);
      return { store: pkg.createLiveSessionStore({ cwd: project }) };
    },
    run: (pkg, project, { store }) => store.getSnapshot(ID),
  },
  'getSnapshot, replay': {
    setup: (pkg, project) => {
      seed(pkg, project);
      fs.appendFileSync(journal(project), line(4, ID, { type: 'variant_mounted', variant: 3 }));
      return { store: pkg.createLiveSessionStore({ cwd: project }) };
    },
    run: (pkg, project, { store }) => store.getSnapshot(ID),
  },
  listActiveSessions: {
    setup: (pkg, project) => {
      for (const id of [ID, ...OTHER]) seed(pkg, project, id);
      pkg.createLiveSessionStore({ cwd: project }).appendEvent({ id: OTHER[0], type: 'complete' });
      return { store: pkg.createLiveSessionStore({ cwd: project }) };
    },
    run: (pkg, project, { store }) => store.listActiveSessions(),
  },
  withSourceLockSync: {
    setup: (pkg, project) => {
      pkg.sourceLockPath(SOURCE, project);
      return {};
    },
    run: (pkg, project) => pkg.withSourceLockSync(SOURCE, { who: 'matrix' }, () => 'inside', { cwd: project }),
  },
};

/** A fresh scratch project whose `.git` makes it its own root. */
export function freshProject() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-matrix-'));
  fs.mkdirSync(path.join(dir, '.git'));
  return dir;
}

/** Every entry under `dir`: kind, mode, and bytes of files (no times). */
export function tree(dir) {
  const out = {};
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath ?? entry.path, entry.name);
    const st = fs.lstatSync(full);
    out[path.relative(dir, full)] = entry.isFile() ? `${st.mode.toString(8)} ${fs.readFileSync(full, 'latin1')}` : `${st.mode.toString(8)}`;
  }
  return out;
}

/** The operation's outcome, as JSON can carry it. */
export function outcome(run) {
  try {
    const value = run();
    return { ok: true, value: value === undefined ? null : value };
  } catch (error) {
    return { ok: false, error: { message: String(error?.message), code: error?.code ?? null } };
  }
}

const isStaged = (name) => /^\.[A-Za-z0-9_-]+\.[0-9a-f]{12}$/.test(name);

/** Journal lines as parsed entries (all of them must parse). */
function entries(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/**
 * What every fresh reader must read: each session replayed from its
 * journal alone (a scratch copy of the journals, no snapshot file), by the
 * package's own replay.
 */
function coldReplay(pkg, project) {
  const copy = freshProject();
  try {
    for (const [from, to] of [[sessions(project), sessions(copy)], [legacy(project), legacy(copy)]]) {
      if (!fs.existsSync(from)) continue;
      fs.mkdirSync(to, { recursive: true });
      for (const name of fs.readdirSync(from).filter((n) => n.endsWith('.jsonl'))) fs.copyFileSync(path.join(from, name), path.join(to, name));
    }
    return readAll(pkg.createLiveSessionStore, copy);
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}

function readAll(createLiveSessionStore, project) {
  const ids = [ID, ...OTHER];
  const store = createLiveSessionStore({ cwd: project });
  return Object.fromEntries(ids.map((id) => [id, JSON.stringify(store.getSnapshot(id, { includeCompleted: true }))]));
}

/**
 * The checks after one run, each a message when it fails:
 * - the contract: an append that threw changed no file, one that returned
 *   has its line in the journal and the state a replay gives; reads change
 *   no file;
 * - a fresh package store (and the old module's, when given) read what a
 *   cold replay of the journals gives;
 * - no staged file survives the next sweep (once old enough);
 * - `seq` is 1..n in every journal;
 * - no journal stays locked, and the source lock can be taken.
 * `result` is null when the run was killed.
 */
export async function verify({ pkg, reference, project, scenario, before, result }) {
  const failures = [];
  const spec = SCENARIOS[scenario];
  const now = tree(project);
  const fail = (m) => failures.push(m);
  if (result && spec.append) {
    const grew = entries(journal(project)).length - before.lines;
    if (!result.ok && JSON.stringify(now) !== JSON.stringify(before.tree)) fail(`threw (${result.error.message}) and changed files: ${diffKeys(before.tree, now)}`);
    if (result.ok && grew !== 1) fail(`returned, and the journal has ${grew} new lines`);
    if (result.ok && JSON.stringify(result.value) !== coldReplay(pkg, project)[ID]) fail('returned a snapshot other than the replay of its journal');
  }
  if (result && /^getSnapshot|^listActive/.test(scenario) && JSON.stringify(now) !== JSON.stringify(before.tree)) fail(`a read changed files: ${diffKeys(before.tree, now)}`);
  if (result && scenario === 'withSourceLockSync' && result.ok && result.value !== 'inside') fail(`fn's result lost: ${JSON.stringify(result.value)}`);

  const cold = coldReplay(pkg, project);
  const fresh = readAll(pkg.createLiveSessionStore, project);
  for (const id of Object.keys(cold)) {
    if (fresh[id] !== cold[id]) fail(`a fresh store reads ${id} otherwise than a cold replay`);
  }
  if (reference) {
    const old = readAll(reference, project);
    for (const id of Object.keys(cold)) {
      if (old[id] !== cold[id]) fail(`a fresh old-module store reads ${id} otherwise than a cold replay`);
    }
  }

  for (const id of [ID, ...OTHER]) {
    const seqs = entries(journal(project, id)).map((e) => e.seq);
    if (seqs.some((s, i) => s !== i + 1)) fail(`${id}'s seqs are not 1..n: ${seqs.join(',')}`);
    if (fs.existsSync(journal(project, id)) && spawnSync('flock', ['--nonblock', journal(project, id), 'true']).status !== 0) fail(`${id}'s journal is still locked`);
  }
  if (!sourceLockFree(pkg, project, result === null)) fail('the source lock cannot be taken');

  const dir = sessions(project);
  if (fs.existsSync(dir)) {
    const old = new Date(Date.now() - 120_000);
    for (const name of fs.readdirSync(dir).filter(isStaged)) fs.utimesSync(path.join(dir, name), old, old);
    pkg.createLiveSessionStore({ cwd: project }).flush(ID);
    const left = fs.readdirSync(dir).filter(isStaged);
    if (left.length) fail(`staged files survive a sweep: ${left.join(', ')}`);
  }
  return failures;
}

/**
 * Whether the source lock can be taken. After a crash between creating the
 * lock file and writing it, the file is unreadable, and both modules take
 * such a lock for held until it is a minute old: then it must be free.
 */
function sourceLockFree(pkg, project, crashed) {
  const take = () => {
    try {
      pkg.withSourceLockSync(SOURCE, 'checker', () => {}, { cwd: project });
      return true;
    } catch (error) {
      if (error.code !== 'SOURCE_LOCKED') throw error;
      return false;
    }
  };
  if (take()) return true;
  const lock = pkg.sourceLockPath(SOURCE, project);
  if (!crashed || fs.statSync(lock).size !== 0) return false;
  const old = new Date(Date.now() - 61_000);
  fs.utimesSync(lock, old, old);
  return take();
}

function diffKeys(a, b) {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k]).join(', ');
}
