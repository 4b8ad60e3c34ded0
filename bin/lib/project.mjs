// The package and a project's live directories, read without writing.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { CliError, EXIT, notFound, usageError } from './errors.mjs';
import { sanitize } from './output.mjs';

const require = createRequire(import.meta.url);

/** The package's JavaScript API, or a CliError saying why its binary does not load. */
export function native() {
  try {
    return require('../../index.js');
  } catch (error) {
    throw loadFailure(error);
  }
}

/** The addon itself: the store's own rules and verdicts, for the CLI to apply. */
export function binding() {
  native();
  return require('../../binding.js');
}

/**
 * Why the addon did not load, for someone who installed the package: the
 * platform, what was tried (the binding's own message), and what still works.
 */
function loadFailure(error) {
  let platform = `${process.platform}-${process.arch}`;
  try { platform = require('../../platform.js').platformKey(); } catch { /* keep the rough one */ }
  // The binding's message, without Node's require stack and without repeating the platform.
  const cause = String(error?.message ?? error)
    .replace(/\nRequire stack:(\n- [^\n)]*)*/g, '')
    .replace(/^quiver-live-native could not load its binary for [^:]+: /, '');
  const lines = [
    `cannot load quiver-live-native's binary for ${platform} (Node ${process.version}): ${cause}`,
    "Only this tool needs it: quiver-cli's live scripts fall back to their JavaScript session-store.mjs and source-lock.mjs (docs/ADOPTING.md).",
  ];
  // In a source checkout the binary is built, not installed.
  if (fs.existsSync(new URL('../../Cargo.toml', import.meta.url))) lines.push('In this source checkout, `npm run build` builds it.');
  return new CliError(EXIT.NO_BINARY, lines.join('\n'), { details: { platform, node: process.version, cause } });
}

export function resolveCwd(option) {
  const cwd = path.resolve(option ?? process.cwd());
  const stat = statOrNull(cwd);
  if (!stat) throw notFound(`no such directory: ${cwd}`);
  if (!stat.isDirectory()) throw notFound(`not a directory: ${cwd}`);
  return cwd;
}

/**
 * The project's live directories, derived from `sourceLockPath` (which
 * resolves the project root the way the store does and creates nothing):
 * `<root>/.impeccable/live/locks/<hex>.lock`.
 */
export function projectDirs(cwd) {
  const locksDir = path.dirname(native().sourceLockPath('x', cwd));
  const liveDir = path.dirname(locksDir);
  const root = path.dirname(path.dirname(liveDir));
  return {
    cwd,
    root,
    liveDir,
    locksDir,
    sessionsDir: path.join(liveDir, 'sessions'),
    legacyDir: path.join(root, '.impeccable-live', 'sessions'),
  };
}

export function statOrNull(p) {
  return fs.statSync(p, { throwIfNoEntry: false }) ?? null;
}

export const isDir = (p) => statOrNull(p)?.isDirectory() ?? false;
export const isFile = (p) => statOrNull(p)?.isFile() ?? false;

/** A directory's names, sorted; none when it does not exist. */
export function listDir(dir) {
  try { return fs.readdirSync(dir).sort(); } catch (error) {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [];
    throw error;
  }
}

export const isSessionId = (id) => typeof id === 'string' && binding().isSessionId(id);

export function checkSessionId(command, id) {
  if (!isSessionId(id)) throw usageError(command, `invalid session id: ${sanitize(id)} (expected [A-Za-z0-9_-]{1,128})`);
  return id;
}

/** The ids of the journals in a directory (`<id>.jsonl`), valid or not. */
export const journalIds = (dir) => listDir(dir).filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -'.jsonl'.length));

/** The journal readers use: the primary one, else the legacy one, else null. */
export function journalPathOf(dirs, id) {
  for (const dir of [dirs.sessionsDir, dirs.legacyDir]) {
    const file = path.join(dir, id + '.jsonl');
    if (fs.existsSync(file)) return file;
  }
  return null;
}

export function sessionNotFound(dirs, id) {
  return notFound(`no session ${id} in ${dirs.sessionsDir}` + (isDir(dirs.legacyDir) ? ` or ${dirs.legacyDir}` : ''));
}

/** A scratch project outside the user's: a temp dir whose `.git` makes it its own root. */
function withTempProject(fn) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-live-cli-'));
  try {
    fs.mkdirSync(path.join(dir, '.git'));
    return fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Copies the journals (and snapshot files) of `ids`, or of all sessions, from `from` to `to`. */
function copySessions(from, to, ids) {
  fs.mkdirSync(to, { recursive: true });
  for (const id of ids ?? journalIds(from)) {
    for (const name of [id + '.jsonl', id + '.snapshot.json']) {
      if (isFile(path.join(from, name))) fs.copyFileSync(path.join(from, name), path.join(to, name));
    }
  }
}

/**
 * Calls `fn(store)` with a store reading the project's sessions without
 * writing to it. Opening a store creates its sessions dir, so it is opened
 * on the project only when that dir exists; else the sessions (those of
 * `ids`, or all) are read from copies in a scratch project. With no
 * sessions dir and no legacy one, `fn(null)`.
 */
export function withReadOnlyStore(dirs, ids, fn) {
  const primary = isDir(dirs.sessionsDir);
  if (!primary && !isDir(dirs.legacyDir)) return fn(null);
  if (primary) {
    const store = native().createLiveSessionStore({ cwd: dirs.cwd });
    if (path.resolve(store.rootDir) !== path.resolve(dirs.sessionsDir)) {
      throw new CliError(EXIT.INTERNAL, `store root ${store.rootDir} is not ${dirs.sessionsDir}`);
    }
    return fn(store);
  }
  return withTempProject((tmp) => {
    if (primary) copySessions(dirs.sessionsDir, path.join(tmp, '.impeccable', 'live', 'sessions'), ids);
    copySessions(dirs.legacyDir, path.join(tmp, '.impeccable-live', 'sessions'), ids);
    return fn(native().createLiveSessionStore({ cwd: tmp }));
  });
}
