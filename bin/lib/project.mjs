// The package and a project's live directories, read without writing.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { CliError, EXIT, notFound, usageError } from './errors.mjs';
import { sanitize } from './output.mjs';

const require = createRequire(import.meta.url);

/**
 * The addon: the store's own layout, rules and verdicts, for the CLI to
 * apply; or a CliError saying why its binary does not load.
 */
export function binding() {
  try {
    return require('../../binding.js');
  } catch (error) {
    throw loadFailure(error);
  }
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
 * The project `cwd` belongs to, as the store resolves it, and its
 * directories and file names as the binding lays them out (`layout`).
 */
export function projectDirs(cwd) {
  const root = binding().projectRootOf(cwd, os.homedir());
  const layout = binding().layout(root);
  return {
    cwd,
    root,
    liveDir: layout.liveDir,
    locksDir: layout.locksDir,
    sessionsDir: layout.sessionsDir,
    legacyDir: layout.legacySessionsDir,
    layout,
  };
}

export function statOrNull(p) {
  return fs.statSync(p, { throwIfNoEntry: false }) ?? null;
}

export const isDir = (p) => statOrNull(p)?.isDirectory() ?? false;

/** A directory's names, sorted; none when it does not exist. */
export function listDir(dir) {
  try { return fs.readdirSync(dir).sort(); } catch (error) {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [];
    throw error;
  }
}

export const isSessionId = (id) => typeof id === 'string' && binding().isSessionId(id);

export function checkSessionId(command, id) {
  if (!isSessionId(id)) throw usageError(command, `invalid session id: ${sanitize(id)} (expected ${binding().sessionIdPattern()})`);
  return id;
}

/** The ids of the journals in a directory (`<id><journal suffix>`), valid or not. */
export function journalIds(dirs, dir) {
  const suffix = dirs.layout.journalSuffix;
  return listDir(dir).filter((n) => n.endsWith(suffix)).map((n) => n.slice(0, -suffix.length));
}

/** A session's journal in `dir` (the sessions or the legacy directory). */
export const journalIn = (dirs, dir, id) => path.join(dir, id + dirs.layout.journalSuffix);

/** A session's snapshot file. */
export const snapshotPathOf = (dirs, id) => path.join(dirs.sessionsDir, id + dirs.layout.snapshotSuffix);

/** The journal readers use: the primary one, else the legacy one, else null. */
export function journalPathOf(dirs, id) {
  for (const dir of [dirs.sessionsDir, dirs.legacyDir]) {
    const file = journalIn(dirs, dir, id);
    if (fs.existsSync(file)) return file;
  }
  return null;
}

export function sessionNotFound(dirs, id) {
  return notFound(`no session ${id} in ${dirs.sessionsDir}` + (isDir(dirs.legacyDir) ? ` or ${dirs.legacyDir}` : ''));
}

/**
 * A store reading the project's sessions as every reader does, opened
 * read-only: it creates no directory, sweeps nothing, and writes nothing
 * (its `appendEvent` and `flush` throw).
 */
export function openReader(dirs) {
  const { createLiveSessionStore } = require('../../lib/api.cjs').create(binding(), { readOnly: true });
  const store = createLiveSessionStore({ cwd: dirs.cwd });
  if (path.resolve(store.rootDir) !== path.resolve(dirs.sessionsDir)) {
    throw new CliError(EXIT.INTERNAL, `store root ${store.rootDir} is not ${dirs.sessionsDir}`);
  }
  return store;
}
