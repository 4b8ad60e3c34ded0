#!/usr/bin/env node
// quiver-live: inspect a project's live sessions, journals and source locks.
//
// Read-only unless a flag says otherwise (only `locks --clear-stale` removes
// files). Reading goes through this package's store, whose getSnapshot and
// listActiveSessions never write; anything that needs a fresh replay works on a
// copy of the journal in a temporary directory outside the project.
//
// Exit codes: 0 ok, 1 problems found / verify failed, 2 usage error,
// 3 not found, 4 unexpected error (I/O and the like).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';

const require = createRequire(import.meta.url);
const SUPPORTED_PLATFORM_LIST = require('../platform.js').SUPPORTED.join(', ');

const EXIT_OK = 0;
const EXIT_PROBLEMS = 1;
const EXIT_USAGE = 2;
const EXIT_NOT_FOUND = 3;
const EXIT_ERROR = 4;

// As the store: an unreadable lock is only judged stale once it is this old
// (younger, it may be a live acquisition caught between create and write).
const UNREADABLE_LOCK_STALE_MS = 60_000;
// A staging file younger than this whose writer is alive may be in flight.
const STAGING_STALE_MS = 60_000;
const FOLLOW_POLL_MS = 150;

/**
 * An error the CLI reports and exits on. `code` names it for `--json`
 * (usage, not_found, load_failed, error, or a vendor code such as no_binary); `details` are
 * extra fields of the JSON error.
 */
class CliError extends Error {
  constructor(exitCode, message, code = EXIT_CODES[exitCode] ?? 'error', details = {}) {
    super(message);
    this.exitCode = exitCode;
    this.code = code;
    this.details = details;
  }
}
const EXIT_CODES = { [EXIT_PROBLEMS]: 'problems', [EXIT_USAGE]: 'usage', [EXIT_NOT_FOUND]: 'not_found', [EXIT_ERROR]: 'error' };
const usageError = (message) => new CliError(EXIT_USAGE, message);
const notFound = (message) => new CliError(EXIT_NOT_FOUND, message);

// ---------------------------------------------------------------------------
// Output helpers

const useColor = Boolean(process.stdout.isTTY) && process.env.NO_COLOR === undefined;
const paint = (code) => (text) => (useColor ? `\x1b[${code}m${text}\x1b[0m` : text);
const c = {
  bold: paint('1'),
  dim: paint('2'),
  red: paint('31'),
  green: paint('32'),
  yellow: paint('33'),
  cyan: paint('36'),
};

function out(text = '') {
  process.stdout.write(text + '\n');
}

function err(text) {
  process.stderr.write(text + '\n');
}

/** Set by main: whether --json was asked for (warnings are JSON lines then). */
let jsonOutput = false;

/** A warning on stderr that does not stop the command: text, or under --json `{ "warning": { code, message, ... } }`. */
function warn(code, message, details = {}) {
  err(jsonOutput ? JSON.stringify({ warning: { code, message, ...details } }) : `quiver-live: ${message}`);
}

/** Control characters in journal text must not reach the terminal raw. */
function sanitize(text) {
  return String(text).replace(/[\u0000-\u001f\u007f-\u009f]/g, (ch) => {
    const code = ch.charCodeAt(0);
    if (ch === '\n') return '\\n';
    if (ch === '\t') return '\\t';
    if (ch === '\r') return '\\r';
    return '\\x' + code.toString(16).padStart(2, '0');
  });
}

/** A value as one table cell: `-` for null/undefined, strings as they are, the rest as JSON. */
function cell(value) {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return sanitize(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  let text;
  try { text = JSON.stringify(value); } catch { text = String(value); }
  return sanitize(text ?? String(value));
}

function truncate(text, max) {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/**
 * Aligned columns, two spaces apart; the last column is not padded. `styles[i]`
 * may map a cell's text to a colouring function (applied after padding, so
 * escape codes never upset the alignment).
 */
function renderTable(headers, rows, styles = []) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells, header) => cells
    .map((text, i) => {
      const padded = i === cells.length - 1 ? text : text.padEnd(widths[i]);
      const style = header ? c.bold : styles[i]?.(text);
      return style ? style(padded) : padded;
    })
    .join('  ')
    .trimEnd();
  return [line(headers, true), ...rows.map((r) => line(r, false))].join('\n');
}

function formatAge(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms < -1000) return 'future';
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  const d = Math.floor(h / 24);
  return `${d}d${String(h % 24).padStart(2, '0')}h`;
}

function ageSince(stamp, now) {
  let t = null;
  if (typeof stamp === 'number' && Number.isFinite(stamp)) t = stamp;
  else if (typeof stamp === 'string') {
    const parsed = Date.parse(stamp);
    if (!Number.isNaN(parsed)) t = parsed;
  }
  return t === null ? null : now - t;
}

const phaseStyle = (phase) => {
  if (phase === 'agent_error') return c.red;
  if (phase === 'variants_ready' || phase === 'steer_done') return c.green;
  if (/_requested$|_required$/.test(phase)) return c.yellow;
  return null;
};
const renderStyle = (state) => (state === 'failed' ? c.red : state === 'mounted' ? c.green : state === 'pending' ? c.yellow : null);

function writeJson(value) {
  out(JSON.stringify(value, null, 2));
}

// ---------------------------------------------------------------------------
// The package and the project's directories

let bindingModule = null;
/** The addon itself: the store's own rules (session ids, phases, locks) for the CLI to apply. */
function binding() {
  native();
  bindingModule ??= require('../binding.js');
  return bindingModule;
}

function isSessionId(id) {
  return typeof id === 'string' && binding().isSessionId(id);
}

let nativeModule = null;
function native() {
  if (!nativeModule) {
    try {
      nativeModule = require('../index.js');
    } catch (error) {
      throw loadFailure(error);
    }
  }
  return nativeModule;
}

/**
 * Why the addon did not load, for someone who installed the package: the
 * platform, what was tried (the binding's own message), and what still works.
 */
function loadFailure(error) {
  let platform = `${process.platform}-${process.arch}`;
  try { platform = require('../platform.js').platformKey(); } catch { /* keep the rough one */ }
  // The binding's message, without Node's require stack and without repeating the platform.
  const cause = String(error?.message ?? error)
    .replace(/\nRequire stack:(\n- [^\n)]*)*/g, '')
    .replace(/^quiver-live-native could not load its binary for [^:]+: /, '');
  const lines = [
    `cannot load quiver-live-native's binary for ${platform} (Node ${process.version}): ${cause}`,
    "Only this tool needs it: quiver-cli's live scripts fall back to their JavaScript session-store.mjs and source-lock.mjs (docs/ADOPTING.md).",
  ];
  // In a source checkout the binary is built, not installed.
  if (fs.existsSync(new URL('../Cargo.toml', import.meta.url))) lines.push('In this source checkout, `npm run build` builds it.');
  return new CliError(EXIT_ERROR, lines.join('\n'), 'load_failed', { platform, node: process.version, cause });
}

function resolveCwd(option) {
  const cwd = path.resolve(option ?? process.cwd());
  let stat;
  try { stat = fs.statSync(cwd); } catch { throw notFound(`no such directory: ${cwd}`); }
  if (!stat.isDirectory()) throw notFound(`not a directory: ${cwd}`);
  return cwd;
}

/**
 * The project's live directories, derived from `sourceLockPath` (which
 * resolves the project root the way the store does and creates nothing):
 * `<root>/.impeccable/live/locks/<hex>.lock`.
 */
function projectDirs(cwd) {
  const lockFile = native().sourceLockPath('x', cwd);
  const locksDir = path.dirname(lockFile);
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

function isDir(p) {
  try { return fs.statSync(p).isDirectory(); } catch { return false; }
}

function isFile(p) {
  try { return fs.statSync(p).isFile(); } catch { return false; }
}

function statOrNull(p) {
  try { return fs.statSync(p); } catch { return null; }
}

function listDir(dir) {
  try { return fs.readdirSync(dir).sort(); } catch (error) {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [];
    throw error;
  }
}

function checkSessionId(id) {
  if (id === undefined) throw usageError('missing session id');
  if (!isSessionId(id)) throw usageError(`invalid session id: ${sanitize(id)} (expected [A-Za-z0-9_-]{1,128})`);
  return id;
}

/** The journal readers use: the primary one, else the legacy one, else null. */
function journalPathOf(dirs, id) {
  const primary = path.join(dirs.sessionsDir, id + '.jsonl');
  if (fs.existsSync(primary)) return primary;
  const legacy = path.join(dirs.legacyDir, id + '.jsonl');
  if (fs.existsSync(legacy)) return legacy;
  return null;
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

/**
 * Calls `fn(store)` with a store reading the project's sessions without
 * writing to it. The store creates its sessions dir, so it is only opened on
 * the project when that dir exists; with only a legacy dir, the legacy
 * journals (those of `ids`, or all) are copied into a scratch project; with
 * neither, `fn(null)`.
 */
function withReadOnlyStore(dirs, ids, fn) {
  if (isDir(dirs.sessionsDir)) {
    const store = native().createLiveSessionStore({ cwd: dirs.cwd });
    if (path.resolve(store.rootDir) !== path.resolve(dirs.sessionsDir)) {
      throw new CliError(EXIT_ERROR, `store root ${store.rootDir} is not ${dirs.sessionsDir}`);
    }
    return fn(store);
  }
  if (isDir(dirs.legacyDir)) {
    return withTempProject((tmp) => {
      const legacy = path.join(tmp, '.impeccable-live', 'sessions');
      fs.mkdirSync(legacy, { recursive: true });
      const names = ids ? ids.map((id) => id + '.jsonl') : listDir(dirs.legacyDir).filter((n) => n.endsWith('.jsonl'));
      for (const name of names) {
        const from = path.join(dirs.legacyDir, name);
        if (isFile(from)) fs.copyFileSync(from, path.join(legacy, name));
      }
      return fn(native().createLiveSessionStore({ cwd: tmp }));
    });
  }
  return fn(null);
}

// ---------------------------------------------------------------------------
// Journal reading

/** Calls `fn(lineBuffer, lineNumber, terminated)` for every line of a file, streaming. */
function forEachLine(file, fn) {
  const fd = fs.openSync(file, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    let pending = [];
    let lineNo = 0;
    let read;
    while ((read = fs.readSync(fd, chunk, 0, chunk.length, null)) > 0) {
      let start = 0;
      for (let i = 0; i < read; i++) {
        if (chunk[i] !== 0x0a) continue;
        pending.push(Buffer.from(chunk.subarray(start, i)));
        fn(Buffer.concat(pending), ++lineNo, true);
        pending = [];
        start = i + 1;
      }
      if (start < read) pending.push(Buffer.from(chunk.subarray(start, read)));
    }
    if (pending.length) fn(Buffer.concat(pending), ++lineNo, false);
  } finally {
    fs.closeSync(fd);
  }
}

/** Parses one journal line as the store reads it: `null` for a blank line. */
function parseLine(text) {
  if (!text.trim()) return null;
  try {
    const entry = JSON.parse(text);
    if (!entry || typeof entry !== 'object') return { error: 'entry is not object' };
    return { entry };
  } catch (error) {
    return { error: error.message };
  }
}

/**
 * What a full read of the journal finds: line count, `nextSeq` as a replay
 * computes it, lines that do not parse, and a torn tail (a last line without
 * its newline).
 */
function analyzeJournal(file) {
  const result = { bytes: fs.statSync(file).size, lines: 0, entries: 0, nextSeq: 1, corruptLines: [], tornTail: null };
  forEachLine(file, (buf, lineNo, terminated) => {
    result.lines = lineNo;
    const text = buf.toString('utf8');
    const parsed = parseLine(text);
    if (!terminated) {
      result.tornTail = { line: lineNo, bytes: buf.length, parses: Boolean(parsed?.entry), text: truncate(text, 120) };
    }
    if (!parsed) return;
    if (parsed.error) {
      result.corruptLines.push({ line: lineNo, error: parsed.error, text: truncate(text, 120) });
      return;
    }
    result.entries++;
    if (Number.isInteger(parsed.entry.seq)) result.nextSeq = Math.max(result.nextSeq, parsed.entry.seq + 1);
  });
  return result;
}

/** The last `count` lines of a file (reading backwards), each `{ text, terminated }`; plus the end of the last complete line. */
function lastLines(file, count) {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    let pos = size;
    let buf = Buffer.alloc(0);
    const newlinesNeeded = count + 1;
    const countNewlines = (b) => { let n = 0; for (const byte of b) if (byte === 0x0a) n++; return n; };
    while (pos > 0 && countNewlines(buf) < newlinesNeeded) {
      const len = Math.min(64 * 1024, pos);
      pos -= len;
      const chunk = Buffer.allocUnsafe(len);
      fs.readSync(fd, chunk, 0, len, pos);
      buf = Buffer.concat([chunk, buf]);
    }
    const lastNewline = buf.lastIndexOf(0x0a);
    // Where the last complete line ends: following starts there.
    const completeEnd = lastNewline === -1 ? pos : pos + lastNewline + 1;
    const parts = buf.toString('utf8').split('\n');
    // The last element is '' after a final newline, a torn fragment otherwise.
    const tail = parts.pop();
    // When reading stopped before the file start, the first element may be partial.
    if (pos > 0) parts.shift();
    const lines = [];
    for (const text of parts) if (text.trim()) lines.push({ text, terminated: true });
    if (tail) lines.push({ text: tail, terminated: false });
    return { lines: count === 0 ? [] : lines.slice(-count), completeEnd };
  } finally {
    fs.closeSync(fd);
  }
}

// ---------------------------------------------------------------------------
// Locks

function bootId() {
  try { return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null; } catch { return null; }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot). */
function processStartTime(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 1).trim().split(/\s+/);
    const value = Number(fields[22 - 3]);
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

/** As the old module: `process.kill(pid, 0)`, and only ESRCH means dead. */
function pidReachable(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error?.code !== 'ESRCH';
  }
}

/**
 * A lock file judged as the store judges it: stale when unreadable and older
 * than 60 s, when it has no numeric pid, when the pid is dead, or (with
 * `startTime` and `bootId`) when the pid now belongs to another process.
 */
function inspectLock(file, now, ourBoot) {
  const info = { file, name: path.basename(file), owner: null, pid: null, token: null, source: null, at: null, state: null, stale: false, reason: null, ageMs: null, stamp: null };
  let stat;
  try { stat = fs.lstatSync(file); } catch { return null; }
  info.stamp = { ino: stat.ino, ctimeMs: stat.ctimeMs };
  let held = null;
  try { held = JSON.parse(fs.readFileSync(file, 'utf8')); } catch { held = null; }
  if (!held) {
    info.ageMs = now - stat.mtimeMs;
    info.state = 'unreadable';
    info.stale = info.ageMs > UNREADABLE_LOCK_STALE_MS;
    info.reason = info.stale ? 'unreadable and older than 60 s' : 'unreadable, younger than 60 s (may be mid-write)';
    return info;
  }
  info.owner = held.owner ?? null;
  info.token = typeof held.token === 'string' ? held.token : null;
  info.source = typeof held.file === 'string' ? held.file : null;
  info.at = typeof held.at === 'number' ? held.at : null;
  info.ageMs = now - (info.at ?? stat.mtimeMs);
  if (typeof held.pid !== 'number') {
    info.state = 'no pid';
    info.stale = true;
    info.reason = 'no numeric pid';
    return info;
  }
  info.pid = held.pid;
  if (!pidReachable(held.pid)) {
    info.state = 'dead';
    info.stale = true;
    info.reason = `pid ${held.pid} is not running`;
    return info;
  }
  info.state = 'alive';
  if (typeof held.startTime === 'number' && typeof held.bootId === 'string' && ourBoot) {
    if (held.bootId !== ourBoot) {
      info.state = 'earlier boot';
      info.stale = true;
      info.reason = `written during another boot (${held.bootId})`;
    } else if (held.startTime >= 0 && Number.isInteger(held.startTime) && held.pid >= 1 && held.pid <= 0xffffffff) {
      const current = processStartTime(Math.trunc(held.pid));
      if (current !== null && current !== held.startTime) {
        info.state = 'pid reused';
        info.stale = true;
        info.reason = `pid ${held.pid} now belongs to another process (start time ${current}, lock says ${held.startTime})`;
      }
    }
  }
  return info;
}

function inspectLocks(dirs, now = Date.now()) {
  const ourBoot = bootId();
  return listDir(dirs.locksDir)
    .filter((name) => name.endsWith('.lock'))
    .map((name) => inspectLock(path.join(dirs.locksDir, name), now, ourBoot))
    .filter(Boolean);
}

/** Removes a lock judged stale, unless it was replaced since it was judged. */
function removeStaleLock(lock) {
  let stat;
  try { stat = fs.lstatSync(lock.file); } catch { return 'already gone'; }
  if (stat.ino !== lock.stamp.ino || stat.ctimeMs !== lock.stamp.ctimeMs) return 'changed since it was read; kept';
  fs.unlinkSync(lock.file);
  return null;
}

function lockJson(lock) {
  const { stamp, ...rest } = lock;
  return rest;
}

// ---------------------------------------------------------------------------
// Snapshot files

const SNAPSHOT_SUFFIX = '.snapshot.json';
const STAGING = /^(.*)\.snapshot\.json\.(.+)\.tmp$/;

/**
 * Whether readers would trust a snapshot file for a journal of `journalBytes`
 * bytes (the store's hydration rule), with the reasons when not.
 */
function judgeSnapshotFile(text, id, journalBytes) {
  const result = { parsable: false, journalBytes: null, nextSeq: null, trusted: false, reasons: [], parsed: null };
  let parsed;
  try { parsed = JSON.parse(text); } catch (error) {
    result.reasons.push(`unparsable: ${error.message}`);
    return result;
  }
  if (!parsed || typeof parsed !== 'object') {
    result.reasons.push('not an object');
    return result;
  }
  result.parsable = true;
  result.parsed = parsed;
  result.journalBytes = parsed.__journalBytes ?? null;
  result.nextSeq = parsed.__nextSeq ?? null;
  if (parsed.__journalBytes !== journalBytes) {
    result.reasons.push(`__journalBytes ${cell(parsed.__journalBytes)} != journal size ${journalBytes}`);
  }
  if (!Number.isInteger(parsed.__nextSeq)) result.reasons.push(`__nextSeq ${cell(parsed.__nextSeq)} is not an integer`);
  if (parsed.id !== id) result.reasons.push(`id ${cell(parsed.id)} is not ${id}`);
  result.trusted = result.reasons.length === 0;
  return result;
}

// ---------------------------------------------------------------------------
// Event summaries (tail)

const SUMMARY_KEYS = [
  'phase', 'count', 'variant', 'variantId', 'arrivedVariants', 'revision', 'revisionDomain', 'reason',
  'owner', 'action', 'carbonize', 'sourceEventType', 'durationMs', 'pageUrl', 'sourceFile', 'file',
  'previewFile', 'previewMode', 'url', 'error', 'message',
];

function summaryValue(value) {
  if (typeof value === 'string') return /^[\w./:@#?=&%+~-]+$/.test(value) ? value : JSON.stringify(value);
  let text;
  try { text = JSON.stringify(value); } catch { text = String(value); }
  return truncate(text ?? String(value), 40);
}

/** One line about an event: its most telling fields (never its token). */
function summarize(event) {
  if (!event || typeof event !== 'object') return '';
  const parts = [];
  for (const key of SUMMARY_KEYS) {
    if (event[key] !== undefined && event[key] !== null) parts.push(`${key}=${summaryValue(event[key])}`);
  }
  if (Array.isArray(event.waivers)) parts.push(`waivers=${event.waivers.length}`);
  if (event.plan !== undefined && event.plan !== null) parts.push(`plan=${summaryValue(event.plan)}`);
  if (event.paramValues && typeof event.paramValues === 'object') parts.push(`params=${Object.keys(event.paramValues).length}`);
  return sanitize(truncate(parts.join(' '), 110));
}

function redactToken(entry) {
  if (entry?.event && typeof entry.event === 'object' && !Array.isArray(entry.event) && 'token' in entry.event) {
    return { ...entry, event: { ...entry.event, token: '[redacted]' } };
  }
  return entry;
}

/** A journal line as tail prints it: `{ text }` for the table, `{ json }` for --json. */
function describeLine(text, terminated) {
  const parsed = parseLine(text);
  if (!parsed) return null;
  if (!terminated) {
    return {
      json: { torn: true, text },
      row: ['?', '-', '(torn)', sanitize(truncate(text, 80)) + '  (no newline yet)', c.red],
    };
  }
  if (parsed.error) {
    return {
      json: { corrupt: true, error: parsed.error, text },
      row: ['?', '-', '(corrupt)', sanitize(truncate(`${parsed.error}: ${text}`, 100)), c.red],
    };
  }
  const entry = parsed.entry;
  const event = entry.event && typeof entry.event === 'object' ? entry.event : entry;
  return {
    json: redactToken(entry),
    row: [cell(entry.seq), cell(entry.ts), cell(entry.type ?? event.type), summarize(event)],
  };
}

function printTailRow(row) {
  const [seq, ts, type, summary, style] = row;
  // Fixed widths so followed lines stay aligned with the first ones.
  const typeCell = (style ?? c.cyan)(type.padEnd(20));
  out(`${seq.padStart(5)}  ${c.dim(ts.padEnd(24))}  ${typeCell}  ${summary}`.trimEnd());
}

// ---------------------------------------------------------------------------
// Commands

const COMMON_OPTIONS = `  --cwd DIR   resolve the project from DIR (default: the current directory)
  --json      machine-readable output (errors too: one JSON object on stderr)
  -h, --help  show this help`;

const COMMANDS = {
  status: {
    summary: 'list active sessions',
    usage: 'quiver-live status [--cwd DIR] [--json]',
    help: `Lists the sessions that are not completed or discarded, sorted by id:
phase, render state, the event waiting for the agent, and the age of the
last event (from updatedAt). Reads only; never writes a snapshot file.

Options:
${COMMON_OPTIONS}

Exit codes: 0 ok, 2 usage error, 3 --cwd does not exist.`,
    flags: ['json'],
    values: ['cwd'],
    positionals: [],
    run: cmdStatus,
  },
  show: {
    summary: "print one session's snapshot",
    usage: 'quiver-live show <id> [--cwd DIR] [--json]',
    help: `Prints the snapshot of a session, completed or discarded ones included:
a readable summary, or with --json { root, sessionsDir, session } where
session is the whole snapshot (as status --json gives { root, sessionsDir,
sessions }). Reads only.

Options:
${COMMON_OPTIONS}

Exit codes: 0 ok, 2 usage error (bad id), 3 no such session.`,
    flags: ['json'],
    values: ['cwd'],
    positionals: ['id'],
    run: cmdShow,
  },
  replay: {
    summary: 'replay a journal from scratch; --verify compares it with the snapshot file',
    usage: 'quiver-live replay <id> [--verify] [--cwd DIR] [--json]',
    help: `Replays the session's journal from scratch, ignoring the snapshot file,
on a copy in a temporary directory (nothing in the project is written).

Without --verify, prints the replayed snapshot (--json: { root, sessionsDir,
journal, session }). With --verify, compares it
with the snapshot file (minus __journalBytes/__nextSeq), says whether readers
would trust that file (__journalBytes equal to the journal's size, integer
__nextSeq, matching id), and lists the replay's diagnostics, a torn tail (a
last line without its newline) and lines that fail to parse, by line number.
A session without a snapshot file is consistent when its journal is clean.

Options:
  --verify    compare with the snapshot file; exit 1 when inconsistent
${COMMON_OPTIONS}

Exit codes: 0 consistent, 1 snapshot file stale or different from the replay,
or torn/corrupt journal lines (--verify only), 2 usage error, 3 no such session.`,
    flags: ['json', 'verify'],
    values: ['cwd'],
    positionals: ['id'],
    run: cmdReplay,
  },
  tail: {
    summary: "print a session's journal events",
    usage: 'quiver-live tail <id> [-f] [-n N] [--cwd DIR] [--json]',
    help: `Prints the last N journal events of a session: seq, timestamp, type and a
short summary. With -f, keeps printing events as complete lines land (polling
every ${FOLLOW_POLL_MS} ms) until interrupted (Ctrl-C). A torn last line is shown
as such without -f; with -f it is printed once its newline arrives.
With --json, one JSON object per line: the journal entry (event tokens
redacted), or { corrupt, error, text } / { torn, text }.

Options:
  -f, --follow  follow the journal
  -n N          how many of the last events to print first (default 20)
${COMMON_OPTIONS}

Exit codes: 0 ok (also when -f is stopped by SIGINT/SIGTERM), 2 usage error,
3 no such session.`,
    flags: ['json', 'follow'],
    values: ['cwd', 'n'],
    positionals: ['id'],
    run: cmdTail,
  },
  locks: {
    summary: 'list source locks; --clear-stale removes stale ones',
    usage: 'quiver-live locks [--cwd DIR] [--json] [--clear-stale]',
    help: `Lists the source locks in <root>/.impeccable/live/locks: owner, pid, state,
age and the locked file. A lock is stale when its pid is dead (kill(pid, 0)
fails with ESRCH), when its startTime/bootId show the pid now belongs to
another process (another boot, or another start time in /proc/<pid>/stat),
when it has no numeric pid, or when it is unreadable and older than 60 s.

Options:
  --clear-stale  remove the stale locks (and only those); each is re-checked
                 just before removal and kept if it was replaced meanwhile
${COMMON_OPTIONS}

Exit codes: 0 no stale lock left, 1 stale locks found and not removed,
2 usage error, 3 --cwd does not exist.`,
    flags: ['json', 'clear-stale'],
    values: ['cwd'],
    positionals: [],
    run: cmdLocks,
  },
  doctor: {
    summary: "check a project's live directory",
    usage: 'quiver-live doctor [--cwd DIR] [--json]',
    help: `Checks the project's live directory for:
  - stale source locks (see \`quiver-live locks --help\`)
  - torn journal tails (a journal not ending in a newline)
  - snapshot files readers will not trust: unparsable, or __journalBytes not
    the journal's size (stale), non-integer __nextSeq, or another id
  - legacy journals in <root>/.impeccable-live/sessions not yet copied forward
  - leftover *.snapshot.json.*.tmp staging files (writer gone or older than 60 s)
  - journals whose name is not a valid session id (listActiveSessions throws)
A finding is re-checked once after a short pause, so a write in progress is
not reported. Each finding is followed by its fix (with --json, a \`fix\`
field on each finding): a command where one does it. Reads only.

Options:
${COMMON_OPTIONS}

Exit codes: 0 healthy, 1 problems found, 2 usage error, 3 --cwd does not exist.`,
    flags: ['json'],
    values: ['cwd'],
    positionals: [],
    run: cmdDoctor,
  },
  vendor: {
    summary: 'write a self-contained copy of this package into a folder (for a skill without node_modules)',
    usage: 'quiver-live vendor <dir> [--platforms LIST] [--shims LIVE_DIR] [--force] [--json]',
    help: `Writes <dir> as a self-contained folder: index.mjs and index.cjs (the four
exports of session-store.mjs and source-lock.mjs), a loader that picks this
platform's binary by process.platform, process.arch and the C library, the
binaries, and manifest.json (the version and each binary's size and sha256,
which the loader checks before loading). No network, no install step, no
node_modules at run time. The folder is built beside <dir> and then put in
its place; an earlier bundle there is replaced.

Binaries come from this package: a local build beside it
(quiver-live-native.<platform>.node), else an installed
quiver-live-native-<platform> package of the same version.

With --shims, LIVE_DIR (a skill's scripts/live) is integrated: its
session-store.mjs and source-lock.mjs move to session-store.js.mjs and
source-lock.js.mjs, and in their place come modules that export the bundle's
functions when it loads, else the JavaScript ones; implementation.mjs makes
that choice once per process (QUIVER_LIVE_NATIVE=0 forces JavaScript, =1
requires the bundle; \`node implementation.mjs\` prints the choice). Running it
again updates the shims and keeps the moved JavaScript. See docs/ADOPTING.md.

Options:
  --platforms LIST  comma-separated platforms, or \`current\`, or \`all\`
                    (default: every one available here); supported:
                    ${SUPPORTED_PLATFORM_LIST}
  --shims LIVE_DIR  integrate the bundle into that live directory
  --force           replace a non-empty <dir> that holds no bundle, or a
                    *.js.mjs that differs from the module it would replace
  --json            machine-readable output (errors too: one JSON object on stderr)
  -h, --help        show this help

Exit codes: 0 written, 1 refused (<dir> not a bundle, shims check failed),
2 usage error (unknown platform), 3 a requested platform has no binary here.`,
    flags: ['json', 'force'],
    values: ['platforms', 'shims'],
    positionals: ['dir'],
    run: cmdVendor,
  },
};

const FLAG_ALIASES = { '-f': 'follow', '-h': 'help', '-n': 'n' };

function mainHelp() {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  return `quiver-live: inspect a project's live sessions, journals and source locks.

Usage: quiver-live <command> [options]

Commands:
${Object.entries(COMMANDS).map(([name, cmd]) => `  ${name.padEnd(width)}  ${cmd.summary}`).join('\n')}

Every command takes --json and --help, and those reading a project --cwd DIR.
Nothing in a project is written unless a flag says so (only \`locks
--clear-stale\` removes files); \`vendor\` writes the folder it is given.
Installed as both \`quiver-live\` and \`quiver-live-native\` (\`npx quiver-live-native\`).

Exit codes:
  0  ok
  1  problems found (doctor, locks), verify failed (replay --verify)
  2  usage error
  3  not found (session, --cwd directory, a binary to vendor)
  4  unexpected error (I/O)

Colour is used only when stdout is a terminal and NO_COLOR is unset.
Run \`quiver-live <command> --help\` for a command's options.`;
}

function commandHelp(name) {
  const cmd = COMMANDS[name];
  return `Usage: ${cmd.usage}\n\n${cmd.help}`;
}

/** Parses a command's arguments against its flags, value options and positionals. */
function parseArgs(name, argv) {
  const cmd = COMMANDS[name];
  const opts = { _: [] };
  let onlyPositionals = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (onlyPositionals || arg === '-' || !arg.startsWith('-')) {
      opts._.push(arg);
      continue;
    }
    if (arg === '--') {
      onlyPositionals = true;
      continue;
    }
    let key;
    let inline;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      key = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
    } else if (FLAG_ALIASES[arg]) {
      key = FLAG_ALIASES[arg];
    } else if (/^-n\d+$/.test(arg)) {
      key = 'n';
      inline = arg.slice(2);
    } else {
      throw usageError(`unknown option ${sanitize(arg)} for \`${name}\``);
    }
    if (key === 'help') {
      if (inline !== undefined) throw usageError('--help takes no value');
      opts.help = true;
    } else if (cmd.flags.includes(key)) {
      if (inline !== undefined) throw usageError(`--${key} takes no value`);
      opts[key] = true;
    } else if (cmd.values.includes(key)) {
      let value = inline;
      if (value === undefined) {
        const next = argv[i + 1];
        // `tail ID -n --cwd DIR` is a missing -n value, not a -n of `--cwd`.
        if (next === undefined || (next.startsWith('-') && next !== '-' && !onlyPositionals)) {
          const hint = arg.startsWith('--') ? `; write ${arg}=VALUE for a value starting with -` : '';
          throw usageError(`${arg} needs a value${next === undefined ? '' : ` (got the option ${sanitize(next)}${hint})`}`);
        }
        value = next;
        i++;
      }
      opts[key] = value;
    } else {
      throw usageError(`unknown option ${sanitize(arg)} for \`${name}\``);
    }
  }
  if (opts.help) return opts;
  if (opts._.length > cmd.positionals.length) {
    throw usageError(`unexpected argument ${sanitize(opts._[cmd.positionals.length])} for \`${name}\``);
  }
  cmd.positionals.forEach((p, i) => { opts[p] = opts._[i]; });
  return opts;
}

// --- status ----------------------------------------------------------------

function cmdStatus(opts) {
  const dirs = projectDirs(resolveCwd(opts.cwd));
  const now = Date.now();
  const sessions = withReadOnlyStore(dirs, null, (store) => (store ? listActive(store, dirs) : []));
  const rows = sessions.map((s) => ({
    id: s.id,
    phase: s.phase ?? null,
    renderState: s.renderState ?? null,
    pendingEventType: s.pendingEvent && typeof s.pendingEvent === 'object' ? s.pendingEvent.type ?? null : null,
    pendingEventSeq: s.pendingEventSeq ?? null,
    updatedAt: s.updatedAt ?? null,
    ageMs: ageSince(s.updatedAt, now),
  }));
  if (opts.json) {
    writeJson({ root: dirs.root, sessionsDir: dirs.sessionsDir, sessions: rows });
    return EXIT_OK;
  }
  if (rows.length === 0) {
    out(`No active sessions in ${dirs.sessionsDir}`);
    return EXIT_OK;
  }
  const table = rows.map((r) => [
    cell(r.id),
    cell(r.phase),
    cell(r.renderState),
    r.pendingEventType === null ? '-' : cell(r.pendingEventType) + (r.pendingEventSeq === null ? '' : ` #${cell(r.pendingEventSeq)}`),
    formatAge(r.ageMs),
  ]);
  out(renderTable(['ID', 'PHASE', 'RENDER', 'PENDING', 'AGE'], table, [null, phaseStyle, renderStyle, (t) => (t === '-' ? null : c.cyan), null]));
  return EXIT_OK;
}

/**
 * `listActiveSessions()`, which throws (as the old module's does) when a
 * journal's name is not a valid session id; then the valid ones are listed
 * one by one and the others named on stderr (`doctor` reports them).
 */
function listActive(store, dirs) {
  try {
    return store.listActiveSessions();
  } catch (error) {
    if (!/^invalid session id/.test(error?.message)) throw error;
    const ids = new Set();
    for (const dir of [dirs.legacyDir, dirs.sessionsDir]) {
      for (const name of listDir(dir).filter((n) => n.endsWith('.jsonl'))) ids.add(name.slice(0, -'.jsonl'.length));
    }
    const valid = [...ids].sort().filter((id) => {
      if (isSessionId(id)) return true;
      warn('invalid_journal_name', `skipping journal with an invalid session id: ${sanitize(id)}.jsonl (listActiveSessions throws on it)`, { name: `${id}.jsonl` });
      return false;
    });
    return valid.map((id) => store.getSnapshot(id)).filter(Boolean);
  }
}

// --- show ------------------------------------------------------------------

function sessionNotFound(dirs, id) {
  return notFound(`no session ${id} in ${dirs.sessionsDir}` + (isDir(dirs.legacyDir) ? ` or ${dirs.legacyDir}` : ''));
}

function cmdShow(opts) {
  const id = checkSessionId(opts.id);
  const dirs = projectDirs(resolveCwd(opts.cwd));
  const snapshot = withReadOnlyStore(dirs, [id], (store) => (store && store.has(id) ? store.getSnapshot(id, { includeCompleted: true }) : null));
  if (!snapshot) throw sessionNotFound(dirs, id);
  // As `status --json` wraps its list: the project, then the session.
  if (opts.json) writeJson({ root: dirs.root, sessionsDir: dirs.sessionsDir, session: snapshot });
  else out(describeSnapshot(snapshot, Date.now()));
  return EXIT_OK;
}

function describeSnapshot(s, now) {
  const rows = [];
  const add = (label, value) => rows.push([label, value]);
  const active = !binding().schema().completedPhases.includes(s.phase);
  const phaseText = cell(s.phase);
  add('Session', cell(s.id));
  add('Phase', (phaseStyle(s.phase) ?? ((t) => t))(phaseText) + (active ? '' : c.dim('  (finished)')));
  const mounted = Array.isArray(s.mountedVariants) && s.mountedVariants.length ? ` (variants ${s.mountedVariants.join(', ')} on screen)` : '';
  add('Render', (renderStyle(s.renderState) ?? ((t) => t))(cell(s.renderState)) + mounted);
  add('Updated', s.updatedAt ? `${cell(s.updatedAt)} (${formatAge(ageSince(s.updatedAt, now))} ago)` : '-');
  add('Page', cell(s.pageUrl));
  add('Source', cell(s.sourceFile));
  add('Preview', cell(s.previewFile) + (s.previewMode != null ? ` (${cell(s.previewMode)})` : ''));
  add('Variants', `expected ${cell(s.expectedVariants)}, arrived ${cell(s.arrivedVariants)}, visible ${cell(s.visibleVariant)}`);
  if (s.pendingEvent && typeof s.pendingEvent === 'object') {
    add('Pending', c.cyan(cell(s.pendingEvent.type)) + (s.pendingEventSeq != null ? ` (seq ${cell(s.pendingEventSeq)})` : '') + ' ' + summarize(s.pendingEvent));
  } else {
    add('Pending', '-');
  }
  const generation = [`phase ${cell(s.generationPhase)}`];
  if (s.generationCompletedAt != null) generation.push(`completed ${describeTime(s.generationCompletedAt)}`);
  if (s.generationCanceled) generation.push(`canceled (${cell(s.cancelReason)}) ${describeTime(s.generationCanceledAt)}`);
  add('Generation', generation.join('; '));
  add('Checkpoints', `browser ${cell(s.browserCheckpointRevision)}, publication ${cell(s.publicationCheckpointRevision)}, owner ${cell(s.activeOwner)}`);
  const failures = Array.isArray(s.mountFailures) ? s.mountFailures : [];
  if (failures.length) {
    const last = failures[failures.length - 1] ?? {};
    add('Mount fails', `${failures.length} (last: variant ${cell(last.variant)} ${cell(last.error)})`);
  }
  const artifacts = Array.isArray(s.annotationArtifacts) ? s.annotationArtifacts : [];
  if (artifacts.length) add('Artifacts', artifacts.map((a) => `${cell(a?.type)}: ${cell(a?.path)}`).join(', '));
  if (Array.isArray(s.detectorWaivers)) add('Waivers', String(s.detectorWaivers.length));
  if (s.message !== undefined) add('Message', truncate(cell(s.message), 100));
  const diagnostics = Array.isArray(s.diagnostics) ? s.diagnostics : [];
  add('Diagnostics', diagnostics.length ? (c.yellow(String(diagnostics.length))) : '0');
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = rows.map(([label, value]) => `${c.bold(label.padEnd(width))}  ${value}`);
  for (const d of diagnostics.slice(-10)) lines.push(`  - ${describeDiagnostic(d)}`);
  if (diagnostics.length > 10) lines.push(c.dim(`  (${diagnostics.length - 10} earlier; --json shows all)`));
  return lines.join('\n');
}

function describeTime(value) {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? cell(value) : d.toISOString();
  }
  return cell(value);
}

function describeDiagnostic(d) {
  if (!d || typeof d !== 'object') return cell(d);
  const { error, ...rest } = d;
  const fields = Object.entries(rest).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${summaryValue(v)}`);
  return sanitize(truncate(`${cell(error)} ${fields.join(' ')}`.trim(), 140));
}

// --- replay ----------------------------------------------------------------

function cmdReplay(opts) {
  const id = checkSessionId(opts.id);
  const dirs = projectDirs(resolveCwd(opts.cwd));
  const journalPath = journalPathOf(dirs, id);
  if (!journalPath) throw sessionNotFound(dirs, id);
  const snapshotPath = path.join(dirs.sessionsDir, id + SNAPSHOT_SUFFIX);

  return withTempProject((tmp) => {
    const store = native().createLiveSessionStore({ cwd: tmp });
    const copy = path.join(store.rootDir, id + '.jsonl');
    let snapshotText = null;
    let size = 0;
    // Read the snapshot file, then copy the journal; if the journal moved in
    // between (a writer appended), try again so the two describe one moment.
    for (let attempt = 0; attempt < 5; attempt++) {
      try { snapshotText = fs.readFileSync(snapshotPath, 'utf8'); } catch (error) {
        if (error.code !== 'ENOENT') throw error;
        snapshotText = null;
      }
      fs.copyFileSync(journalPath, copy);
      size = fs.statSync(copy).size;
      const after = statOrNull(journalPath);
      if (after && after.size === size) break;
    }
    const journal = { path: journalPath, ...analyzeJournal(copy) };
    journal.bytes = size;
    const replayed = store.getSnapshot(id, { includeCompleted: true });

    if (!opts.verify) {
      if (opts.json) writeJson({ root: dirs.root, sessionsDir: dirs.sessionsDir, journal: journalPath, session: replayed });
      else {
        out(describeSnapshot(replayed, Date.now()));
        out(c.dim(`(replayed from ${journalPath}: ${journal.lines} lines, ${size} bytes)`));
      }
      return EXIT_OK;
    }

    const base = store.getSnapshot('__quiver_live_base__', { includeCompleted: true });
    const report = verifyReport(id, journal, snapshotPath, snapshotText, replayed, base);
    if (opts.json) writeJson(report);
    else printVerifyReport(report);
    return report.consistent ? EXIT_OK : EXIT_PROBLEMS;
  });
}

function verifyReport(id, journal, snapshotPath, snapshotText, replayed, base) {
  const replayJson = JSON.parse(JSON.stringify(replayed));
  const snapshotFile = { path: snapshotPath, present: snapshotText !== null };
  const notes = [];
  if (snapshotText !== null) {
    const judged = judgeSnapshotFile(snapshotText, id, journal.bytes);
    Object.assign(snapshotFile, {
      parsable: judged.parsable,
      journalBytes: judged.journalBytes,
      journalBytesMatches: judged.journalBytes === journal.bytes,
      nextSeq: judged.nextSeq,
      nextSeqMatches: judged.nextSeq === journal.nextSeq,
      trusted: judged.trusted,
      untrustedReasons: judged.reasons,
    });
    if (judged.parsable) {
      const { __journalBytes, __nextSeq, ...content } = judged.parsed;
      // What a reader trusting the file would hold: { ...baseSnapshot(id), ...file }.
      const hydrated = { ...JSON.parse(JSON.stringify({ ...base, id })), ...content };
      const differences = [];
      for (const key of new Set([...Object.keys(replayJson), ...Object.keys(hydrated)])) {
        if (!isDeepStrictEqual(replayJson[key], hydrated[key])) {
          differences.push({ field: key, snapshotFile: hydrated[key], replay: replayJson[key] });
        }
      }
      snapshotFile.matchesReplay = differences.length === 0;
      snapshotFile.differences = differences;
      snapshotFile.keyOrderDiffers = differences.length === 0 && JSON.stringify(replayJson) !== JSON.stringify(hydrated);
      if (differences.length === 1 && differences[0].field === 'diagnostics' && journal.corruptLines.length && snapshotFile.journalBytesMatches) {
        notes.push('after corrupt lines, an incremental writer records later diagnostics after the parse failures, while a full replay puts parse failures last');
      }
    } else {
      snapshotFile.matchesReplay = false;
      snapshotFile.differences = [];
    }
  } else {
    notes.push('no snapshot file: readers replay the journal');
  }
  const snapshotOk = !snapshotFile.present || (snapshotFile.trusted && snapshotFile.matchesReplay && snapshotFile.nextSeqMatches);
  const journalOk = !journal.tornTail && journal.corruptLines.length === 0;
  return {
    id,
    consistent: snapshotOk && journalOk,
    journal,
    snapshotFile,
    diagnostics: replayJson.diagnostics ?? [],
    notes,
  };
}

function printVerifyReport(r) {
  const ok = (text) => c.green(text);
  const bad = (text) => c.red(text);
  const j = r.journal;
  const lines = [];
  lines.push(`${c.bold('Session')}      ${r.id}`);
  lines.push(`${c.bold('Journal')}      ${j.path}`);
  lines.push(`             ${j.bytes} bytes, ${j.lines} lines, ${j.entries} entries, next seq ${j.nextSeq}`);
  const s = r.snapshotFile;
  lines.push(`${c.bold('Snapshot')}     ${s.path}`);
  if (!s.present) {
    lines.push(`             ${c.dim('absent (readers replay the journal)')}`);
  } else if (!s.parsable) {
    lines.push(`             ${bad('unparsable')}: ${s.untrustedReasons.join('; ')}`);
  } else {
    lines.push(`             __journalBytes ${cell(s.journalBytes)} ${s.journalBytesMatches ? ok('= journal size') : bad(`!= journal size ${j.bytes}`)}`
      + ` -> ${s.trusted ? ok('readers trust it') : bad('readers replay instead')}`);
    for (const reason of s.untrustedReasons.filter((x) => !x.startsWith('__journalBytes'))) lines.push(`             ${bad(reason)}`);
    lines.push(`             __nextSeq ${cell(s.nextSeq)} ${s.nextSeqMatches ? ok('= replay') : bad(`!= replay ${j.nextSeq}`)}`);
    if (s.matchesReplay) {
      lines.push(`             content ${ok('matches a fresh replay')}${s.keyOrderDiffers ? c.yellow(' (key order differs)') : ''}`);
    } else {
      lines.push(`             content ${bad(`differs from a fresh replay in ${s.differences.length} field(s)`)}`);
      for (const d of s.differences) {
        lines.push(`               ${d.field}: file ${truncate(cell(d.snapshotFile), 60)}, replay ${truncate(cell(d.replay), 60)}`);
      }
    }
  }
  lines.push(`${c.bold('Torn tail')}    ${j.tornTail ? bad(`line ${j.tornTail.line}: ${j.tornTail.bytes} bytes without a newline`) + ` ${sanitize(truncate(j.tornTail.text, 60))}` : ok('none')}`);
  lines.push(`${c.bold('Corrupt')}      ${j.corruptLines.length ? bad(`${j.corruptLines.length} line(s)`) : ok('none')}`);
  for (const line of j.corruptLines.slice(0, 20)) {
    lines.push(`             line ${line.line}: ${sanitize(line.error)}${j.tornTail?.line === line.line ? c.dim(' (the torn tail)') : ''}`);
  }
  if (j.corruptLines.length > 20) lines.push(c.dim(`             (${j.corruptLines.length - 20} more; --json lists all)`));
  lines.push(`${c.bold('Diagnostics')}  ${r.diagnostics.length}`);
  for (const d of r.diagnostics.slice(-10)) lines.push(`  - ${describeDiagnostic(d)}`);
  if (r.diagnostics.length > 10) lines.push(c.dim(`  (${r.diagnostics.length - 10} earlier; --json lists all)`));
  for (const note of r.notes) lines.push(c.dim(`note: ${note}`));
  lines.push(`${c.bold('Result')}       ${r.consistent ? ok('consistent') : bad('INCONSISTENT')}`);
  out(lines.join('\n'));
}

// --- tail ------------------------------------------------------------------

function cmdTail(opts) {
  const id = checkSessionId(opts.id);
  let count = 20;
  if (opts.n !== undefined) {
    if (!/^\d+$/.test(opts.n)) throw usageError(`-n needs a non-negative integer, got ${sanitize(opts.n)}`);
    count = Number(opts.n);
  }
  const dirs = projectDirs(resolveCwd(opts.cwd));
  let journalPath = journalPathOf(dirs, id);
  if (!journalPath) throw sessionNotFound(dirs, id);

  const emit = (text, terminated) => {
    const line = describeLine(text, terminated);
    if (!line) return;
    if (opts.json) out(JSON.stringify(line.json));
    else printTailRow(line.row);
  };

  const { lines, completeEnd } = lastLines(journalPath, count);
  if (!opts.follow) {
    for (const { text, terminated } of lines) emit(text, terminated);
    return EXIT_OK;
  }
  // Following: a torn tail is held back until its newline lands.
  for (const { text, terminated } of lines) if (terminated) emit(text, true);

  return new Promise((resolve) => {
    let offset = completeEnd;
    let pending = Buffer.alloc(0);
    const primary = path.join(dirs.sessionsDir, id + '.jsonl');
    const poll = () => {
      try {
        // A legacy journal is copied forward on its first append; the copy
        // starts with the same bytes, so keep the offset and follow it.
        if (journalPath !== primary && fs.existsSync(primary)) journalPath = primary;
        const stat = statOrNull(journalPath);
        if (!stat) return;
        if (stat.size < offset) {
          warn('journal_shrank', `${journalPath} shrank (${offset} -> ${stat.size} bytes); reading it again from the start`, { file: journalPath, from: offset, to: stat.size });
          offset = 0;
          pending = Buffer.alloc(0);
        }
        if (stat.size === offset) return;
        const fd = fs.openSync(journalPath, 'r');
        try {
          const buf = Buffer.allocUnsafe(stat.size - offset);
          const read = fs.readSync(fd, buf, 0, buf.length, offset);
          offset += read;
          pending = Buffer.concat([pending, buf.subarray(0, read)]);
        } finally {
          fs.closeSync(fd);
        }
        let nl;
        while ((nl = pending.indexOf(0x0a)) !== -1) {
          emit(pending.subarray(0, nl).toString('utf8'), true);
          pending = pending.subarray(nl + 1);
        }
      } catch (error) {
        warn('read_failed', error.message, { file: journalPath });
      }
    };
    const timer = setInterval(poll, FOLLOW_POLL_MS);
    const stop = () => {
      clearInterval(timer);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(EXIT_OK);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

// --- locks -----------------------------------------------------------------

function cmdLocks(opts) {
  const dirs = projectDirs(resolveCwd(opts.cwd));
  const locks = inspectLocks(dirs);
  const removed = [];
  const kept = [];
  if (opts['clear-stale']) {
    for (const lock of locks.filter((l) => l.stale)) {
      let why;
      try { why = removeStaleLock(lock); } catch (error) { why = `could not remove: ${error.message}`; }
      if (why === null || why === 'already gone') removed.push({ ...lockJson(lock), removal: why ?? 'removed' });
      else kept.push({ ...lockJson(lock), removal: why });
    }
  }
  const remainingStale = opts['clear-stale'] ? kept.length : locks.filter((l) => l.stale).length;
  if (opts.json) {
    const json = { locksDir: dirs.locksDir, locks: locks.map(lockJson) };
    if (opts['clear-stale']) Object.assign(json, { removed, notRemoved: kept });
    writeJson(json);
  } else {
    if (locks.length === 0) out(`No locks in ${dirs.locksDir}`);
    else {
      const stateStyle = (t) => (t === 'alive' ? c.green : c.red);
      out(renderTable(
        ['LOCK', 'OWNER', 'PID', 'STATE', 'AGE', 'FILE'],
        locks.map((l) => [
          l.name,
          truncate(cell(l.owner), 40),
          cell(l.pid),
          l.stale ? `${l.state} (stale)` : l.state,
          formatAge(l.ageMs),
          cell(l.source),
        ]),
        [null, null, null, stateStyle, null, null],
      ));
    }
    for (const r of removed) out(`removed ${r.name}: ${r.reason}${r.removal === 'already gone' ? ' (already gone)' : ''}`);
    for (const k of kept) out(`kept ${k.name}: ${k.removal}`);
    if (!opts['clear-stale'] && remainingStale) {
      out(c.yellow(`${remainingStale} stale lock(s); \`quiver-live locks --clear-stale\` removes them`));
    }
  }
  return remainingStale ? EXIT_PROBLEMS : EXIT_OK;
}

// --- vendor ----------------------------------------------------------------

const vendorModule = () => require('../vendor/index.js');
const VENDOR_EXIT = { QLN_USAGE: EXIT_USAGE, QLN_UNKNOWN_PLATFORM: EXIT_USAGE, QLN_NO_BINARY: EXIT_NOT_FOUND, QLN_NOT_A_BUNDLE: EXIT_PROBLEMS, QLN_SHIMS_REFUSED: EXIT_PROBLEMS };

function formatBytes(n) {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;
}

function cmdVendor(opts) {
  if (opts.dir === undefined) throw usageError('missing target directory');
  const { vendor, VendorError } = vendorModule();
  let report;
  try {
    report = vendor(opts.dir, { platforms: opts.platforms, shims: opts.shims, force: Boolean(opts.force) });
  } catch (error) {
    if (!(error instanceof VendorError)) throw error;
    throw new CliError(VENDOR_EXIT[error.code] ?? EXIT_ERROR, error.message, error.code.replace(/^QLN_/, '').toLowerCase());
  }
  if (opts.json) {
    writeJson(report);
    return EXIT_OK;
  }
  out(`Vendored quiver-live-native ${report.version} into ${report.dir}`);
  out(renderTable(['PLATFORM', 'SIZE', 'SHA256', 'FROM'],
    report.platforms.map((b) => [b.platform, formatBytes(b.size), b.sha256.slice(0, 16) + '…', b.source])));
  out(`${report.platforms.length} binar${report.platforms.length === 1 ? 'y' : 'ies'} ${formatBytes(report.binaryBytes)}; ` +
    `the whole folder ${formatBytes(report.totalBytes)} (${formatBytes(report.totalBytes - report.binaryBytes)} of JavaScript, manifest and README)`);
  if (report.shims) {
    for (const m of report.shims.moved) out(`moved ${m.from} -> ${path.basename(m.to)}`);
    for (const w of report.shims.written) out(`wrote ${w}`);
    out(`\`node ${path.join(report.shims.liveDir, 'implementation.mjs')}\` says which implementation runs.`);
  }
  return EXIT_OK;
}

// --- doctor ----------------------------------------------------------------

function findTornTails(dirs) {
  const found = [];
  for (const dir of [dirs.sessionsDir, dirs.legacyDir]) {
    for (const name of listDir(dir).filter((n) => n.endsWith('.jsonl'))) {
      const file = path.join(dir, name);
      const size = statOrNull(file)?.size ?? 0;
      if (size === 0) continue;
      const fd = fs.openSync(file, 'r');
      try {
        const start = Math.max(0, size - 4096);
        const buf = Buffer.allocUnsafe(size - start);
        const read = fs.readSync(fd, buf, 0, buf.length, start);
        const tail = buf.subarray(0, read);
        if (tail[tail.length - 1] === 0x0a) continue;
        const fragment = tail.subarray(tail.lastIndexOf(0x0a) + 1);
        found.push({ file, bytes: size, fragmentBytes: start > 0 && tail.lastIndexOf(0x0a) === -1 ? null : fragment.length, fragment: truncate(fragment.toString('utf8'), 80) });
      } finally {
        fs.closeSync(fd);
      }
    }
  }
  return found;
}

function findSnapshotProblems(dirs) {
  const problems = [];
  const notes = [];
  for (const name of listDir(dirs.sessionsDir).filter((n) => n.endsWith(SNAPSHOT_SUFFIX))) {
    const id = name.slice(0, -SNAPSHOT_SUFFIX.length);
    const file = path.join(dirs.sessionsDir, name);
    if (!isSessionId(id)) {
      notes.push({ file, message: 'snapshot file of an invalid session id (ignored by readers)' });
      continue;
    }
    const journal = journalPathOf(dirs, id);
    if (!journal) {
      notes.push({ file, message: 'snapshot file without a journal (ignored by readers)' });
      continue;
    }
    let text;
    try { text = fs.readFileSync(file, 'utf8'); } catch (error) {
      problems.push({ file, journal, id, reasons: [`unreadable: ${error.message}`] });
      continue;
    }
    const journalBytes = statOrNull(journal)?.size ?? -1;
    const judged = judgeSnapshotFile(text, id, journalBytes);
    if (!judged.trusted) problems.push({ file, journal, id, journalBytes, snapshotJournalBytes: judged.journalBytes, reasons: judged.reasons });
  }
  return { problems, notes };
}

function findInvalidJournalNames(dirs) {
  const found = [];
  for (const dir of [dirs.sessionsDir, dirs.legacyDir]) {
    for (const name of listDir(dir).filter((n) => n.endsWith('.jsonl'))) {
      if (!isSessionId(name.slice(0, -'.jsonl'.length))) found.push({ file: path.join(dir, name) });
    }
  }
  return found;
}

function findLegacyJournals(dirs) {
  return listDir(dirs.legacyDir)
    .filter((n) => n.endsWith('.jsonl') && !fs.existsSync(path.join(dirs.sessionsDir, n)))
    .map((n) => ({ file: path.join(dirs.legacyDir, n), id: n.slice(0, -'.jsonl'.length) }));
}

function findStagingFiles(dirs, now) {
  const leftovers = [];
  const inFlight = [];
  for (const name of listDir(dirs.sessionsDir)) {
    const m = STAGING.exec(name);
    if (!m) continue;
    const file = path.join(dirs.sessionsDir, name);
    const stat = statOrNull(file);
    if (!stat) continue;
    const pid = /^\d+$/.test(m[2]) ? Number(m[2]) : null;
    const ageMs = now - stat.mtimeMs;
    const writerAlive = pid !== null && pidReachable(pid);
    const entry = { file, pid, writerAlive, ageMs };
    if (!writerAlive || ageMs > STAGING_STALE_MS) leftovers.push(entry);
    else inFlight.push(entry);
  }
  return { leftovers, inFlight };
}

function runDoctorChecks(dirs) {
  const now = Date.now();
  const staging = findStagingFiles(dirs, now);
  const snapshots = findSnapshotProblems(dirs);
  const locks = inspectLocks(dirs, now);
  const journals = [dirs.sessionsDir, dirs.legacyDir].reduce((n, dir) => n + listDir(dir).filter((x) => x.endsWith('.jsonl')).length, 0);
  return {
    checked: {
      locks: locks.length,
      journals,
      snapshotFiles: listDir(dirs.sessionsDir).filter((n) => n.endsWith(SNAPSHOT_SUFFIX)).length,
    },
    staleLocks: locks.filter((l) => l.stale).map(lockJson),
    tornTails: findTornTails(dirs),
    snapshotMismatches: snapshots.problems,
    legacyJournals: findLegacyJournals(dirs),
    invalidJournalNames: findInvalidJournalNames(dirs),
    stagingFiles: staging.leftovers,
    notes: [
      ...snapshots.notes,
      ...staging.inFlight.map((s) => ({ file: s.file, message: `staging file of live writer pid ${s.pid} (in flight)` })),
    ],
  };
}

/** A path as one shell word (quoted unless it is plain). */
function shellWord(text) {
  // Windows shells take a backslash as it is and quote with double quotes.
  if (process.platform === 'win32') return /^[\w@%+=:,.\\/-]+$/.test(text) ? text : `"${String(text).replace(/"/g, '""')}"`;
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${String(text).replace(/'/g, `'\\''`)}'`;
}

/**
 * Each check: its key, its label, one line about a finding, and the fix for
 * that finding (a command where one does it). `dirs` is the project's.
 */
const DOCTOR_CHECKS = [
  ['staleLocks', 'stale locks', (l) => `${l.name}: ${l.reason}${l.owner !== null ? ` (owner ${truncate(cell(l.owner), 40)})` : ''}`,
    (l, dirs) => `quiver-live locks --clear-stale --cwd ${shellWord(dirs.root)} (removes stale locks only, each re-checked first)`],
  ['tornTails', 'torn tails', (t) => `${t.file}: ends without a newline${t.fragmentBytes !== null ? ` (last ${t.fragmentBytes} bytes: ${sanitize(t.fragment)})` : ''}`,
    (t) => 'the next append through quiver-live-native ends the fragment with a newline (it replays as one diagnosed line; ' +
      'the old JS module would glue the next event onto it and lose it)' +
      (t.fragmentBytes !== null ? `; to drop the fragment instead, with no writer running: truncate -s ${t.bytes - t.fragmentBytes} ${shellWord(t.file)}` : '')],
  ['snapshotMismatches', 'snapshot files', (s) => `${s.file}: ${s.reasons.join('; ')}`,
    (s, dirs) => `nothing is lost: readers replay the journal instead and the next append rewrites the file; ` +
      `\`quiver-live replay ${s.id} --verify --cwd ${shellWord(dirs.root)}\` shows the differences; deleting it is safe: rm ${shellWord(s.file)}`],
  ['legacyJournals', 'legacy journals', (l) => `${l.file}: not yet copied to the sessions dir`,
    (l, dirs) => `nothing to do: readers read it where it is, and the session's next append copies it to ${dirs.sessionsDir}`],
  ['stagingFiles', 'staging files', (s) => `${s.file}: leftover (${s.writerAlive ? `older than ${STAGING_STALE_MS / 1000} s` : 'writer gone'})`,
    (s) => `a writer left it behind and nothing reads it: rm ${shellWord(s.file)}`],
  ['invalidJournalNames', 'journal names', (j) => `${j.file}: not a valid session id (listActiveSessions throws on it)`,
    (j) => `move it out of ${path.dirname(j.file)}, or rename it to a valid id ([A-Za-z0-9_-]{1,128}.jsonl): listActiveSessions fails while it is there`],
];

function cmdDoctor(opts) {
  const dirs = projectDirs(resolveCwd(opts.cwd));
  let checks = runDoctorChecks(dirs);
  const count = (r) => DOCTOR_CHECKS.reduce((n, [key]) => n + r[key].length, 0);
  if (count(checks) > 0) {
    // A writer may have been between its journal append and its snapshot
    // write: look again once, and report only what is still there.
    sleepMs(150);
    const again = runDoctorChecks(dirs);
    for (const [key] of DOCTOR_CHECKS) {
      const first = new Set(checks[key].map((item) => item.file));
      checks[key] = again[key].filter((item) => first.has(item.file));
    }
    checks.notes = again.notes;
    checks.checked = again.checked;
  }
  const problems = count(checks);
  for (const [key, , , fix] of DOCTOR_CHECKS) checks[key] = checks[key].map((item) => ({ ...item, fix: fix(item, dirs) }));
  if (opts.json) {
    writeJson({
      root: dirs.root,
      liveDir: dirs.liveDir,
      healthy: problems === 0,
      problems,
      checked: checks.checked,
      checks: Object.fromEntries(DOCTOR_CHECKS.map(([key]) => [key, checks[key]])),
      notes: checks.notes,
    });
    return problems ? EXIT_PROBLEMS : EXIT_OK;
  }
  out(`${c.bold('Project root')}  ${dirs.root}`);
  out(`${c.bold('Live dir')}      ${dirs.liveDir}${isDir(dirs.liveDir) ? '' : c.dim(' (absent)')}`);
  const k = checks.checked;
  out(`${c.bold('Checked')}       ${k.journals} journal(s), ${k.snapshotFiles} snapshot file(s), ${k.locks} lock(s)`);
  const width = Math.max(...DOCTOR_CHECKS.map(([, label]) => label.length));
  for (const [key, label, describe] of DOCTOR_CHECKS) {
    const items = checks[key];
    out(`${items.length ? c.red('FAIL') : c.green('ok  ')}  ${label.padEnd(width)}  ${items.length || 'none'}`);
    for (const item of items) {
      out(`        ${describe(item)}`);
      out(`          ${c.cyan('fix:')} ${item.fix}`);
    }
  }
  for (const note of checks.notes) out(c.dim(`note: ${note.file}: ${note.message}`));
  out(problems ? c.red(`${problems} problem(s) found`) : c.green('healthy'));
  return problems ? EXIT_PROBLEMS : EXIT_OK;
}

function sleepMs(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// ---------------------------------------------------------------------------
// Entry

async function main(argv) {
  const [first, ...rest] = argv;
  if (first === undefined) {
    err(mainHelp());
    return EXIT_USAGE;
  }
  if (first === '--help' || first === '-h') {
    out(mainHelp());
    return EXIT_OK;
  }
  if (first === '--version' || first === '-V') {
    out(JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
    return EXIT_OK;
  }
  if (first === 'help') {
    if (rest.length === 0) { out(mainHelp()); return EXIT_OK; }
    if (!Object.hasOwn(COMMANDS, rest[0])) throw usageError(`unknown command: ${sanitize(rest[0])}`);
    out(commandHelp(rest[0]));
    return EXIT_OK;
  }
  if (first.startsWith('-')) throw usageError(`unknown option ${sanitize(first)} (options go after the command)`);
  if (!Object.hasOwn(COMMANDS, first)) throw usageError(`unknown command: ${sanitize(first)}`);
  const opts = parseArgs(first, rest);
  if (opts.help) {
    out(commandHelp(first));
    return EXIT_OK;
  }
  return COMMANDS[first].run(opts);
}

process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT_OK);
  throw error;
});

/** Whether `--json` was asked for (before any `--`), even when the arguments did not parse. */
function wantsJson(argv) {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * Reports an error: a line on stderr, or with --json one JSON object on
 * stderr, `{ "error": { code, exitCode, message, ... } }` (stdout stays empty).
 */
function reportError(error, json) {
  const known = error instanceof CliError;
  const exitCode = known ? error.exitCode : EXIT_ERROR;
  if (json) {
    const body = known
      ? { code: error.code, exitCode, message: error.message, ...error.details }
      : { code: 'internal', exitCode, message: String(error?.message ?? error), stack: error?.stack ?? null };
    if (exitCode === EXIT_USAGE) body.help = 'quiver-live --help';
    err(JSON.stringify({ error: body }));
  } else if (known) {
    err(`quiver-live: ${error.message}`);
    if (exitCode === EXIT_USAGE) err('Run `quiver-live --help` for usage.');
  } else {
    err(`quiver-live: ${error?.stack ?? error}`);
  }
  return exitCode;
}

jsonOutput = wantsJson(process.argv.slice(2));
try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  process.exitCode = reportError(error, jsonOutput);
}
