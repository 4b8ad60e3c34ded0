import fs from 'node:fs';
import { CWD, HELP, JSON_OUTPUT } from '../lib/args.mjs';
import { EXIT } from '../lib/errors.mjs';
import { summarize } from '../lib/describe.mjs';
import { c, cell, out, sanitize, truncate, warn } from '../lib/output.mjs';
import { checkSessionId, journalIn, journalPathOf, projectDirs, resolveCwd, sessionNotFound, statOrNull } from '../lib/project.mjs';

const FOLLOW_POLL_MS = 150;

export default {
  name: 'tail',
  summary: "print a session's journal events",
  positionals: [{ name: 'id', label: 'session id', required: true }],
  description: `Prints the last N journal events of a session: seq, timestamp, type and a
short summary. With -f, keeps printing events as complete lines land (polling
every ${FOLLOW_POLL_MS} ms) until interrupted (Ctrl-C). A torn last line is shown
as such without -f; with -f it is printed once its newline arrives.
With --json, one JSON object per line: the journal entry (event tokens
redacted), or { corrupt, error, text } / { torn, text }.`,
  options: [
    { name: 'follow', short: 'f', type: 'boolean', help: 'follow the journal' },
    {
      name: 'lines', short: 'n', type: 'string', arg: 'N', help: 'how many of the last events to print first (default 20)',
      expects: 'a non-negative integer', parse: (v) => (/^\d+$/.test(v) ? Number(v) : undefined),
    },
    CWD, JSON_OUTPUT, HELP,
  ],
  exitCodes: { 0: 'ok (also when -f is stopped by SIGINT/SIGTERM)', 2: '', 3: 'no such session, or --cwd does not exist', 4: '', 5: '' },
  run,
};

function redactToken(entry) {
  if (entry?.event && typeof entry.event === 'object' && !Array.isArray(entry.event) && 'token' in entry.event) {
    return { ...entry, event: { ...entry.event, token: '[redacted]' } };
  }
  return entry;
}

/**
 * A journal line as tail shows it, `{ json, row }`; null for a blank line.
 * Shown, not judged: `replay --verify` says what the store makes of a line.
 */
function describeLine(text, terminated) {
  if (!text.trim()) return null;
  if (!terminated) {
    return { json: { torn: true, text }, row: ['?', '-', '(torn)', sanitize(truncate(text, 80)) + '  (no newline yet)', c.red] };
  }
  let entry;
  try { entry = JSON.parse(text); } catch (error) {
    return { json: { corrupt: true, error: error.message, text }, row: ['?', '-', '(corrupt)', sanitize(truncate(`${error.message}: ${text}`, 100)), c.red] };
  }
  if (!entry || typeof entry !== 'object') {
    return { json: { corrupt: true, error: 'entry is not object', text }, row: ['?', '-', '(corrupt)', sanitize(truncate(text, 100)), c.red] };
  }
  const event = entry.event && typeof entry.event === 'object' ? entry.event : entry;
  return { json: redactToken(entry), row: [cell(entry.seq), cell(entry.ts), cell(entry.type ?? event.type), summarize(event)] };
}

function printRow([seq, ts, type, summary, style]) {
  // Fixed widths so followed lines stay aligned with the first ones.
  out(`${seq.padStart(5)}  ${c.dim(ts.padEnd(24))}  ${(style ?? c.cyan)(type.padEnd(20))}  ${summary}`.trimEnd());
}

/** The last `count` lines of a file (reading backwards), each `{ text, terminated }`; plus the end of the last complete line. */
function lastLines(file, count) {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    let pos = size;
    let buf = Buffer.alloc(0);
    const countNewlines = (b) => { let n = 0; for (const byte of b) if (byte === 0x0a) n++; return n; };
    while (pos > 0 && countNewlines(buf) < count + 1) {
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
    const lines = parts.filter((text) => text.trim()).map((text) => ({ text, terminated: true }));
    if (tail) lines.push({ text: tail, terminated: false });
    return { lines: count === 0 ? [] : lines.slice(-count), completeEnd };
  } finally {
    fs.closeSync(fd);
  }
}

function run(opts) {
  const id = checkSessionId('tail', opts.id);
  const count = opts.lines ?? 20;
  const dirs = projectDirs(resolveCwd(opts.cwd));
  const journalPath = journalPathOf(dirs, id);
  if (!journalPath) throw sessionNotFound(dirs, id);

  const emit = (text, terminated) => {
    const line = describeLine(text, terminated);
    if (!line) return;
    if (opts.json) out(JSON.stringify(line.json));
    else printRow(line.row);
  };

  const { lines, completeEnd } = lastLines(journalPath, count);
  if (!opts.follow) {
    for (const { text, terminated } of lines) emit(text, terminated);
    return EXIT.OK;
  }
  // Following: a torn tail is held back until its newline lands.
  for (const { text, terminated } of lines) if (terminated) emit(text, true);
  return follow(dirs, id, journalPath, completeEnd, emit, opts);
}

/** Prints complete lines as they land, until SIGINT or SIGTERM. */
function follow(dirs, id, startPath, startOffset, emit, opts) {
  return new Promise((resolve) => {
    let journalPath = startPath;
    let offset = startOffset;
    let pending = Buffer.alloc(0);
    const primary = journalIn(dirs, dirs.sessionsDir, id);
    const poll = () => {
      try {
        // A legacy journal is copied forward on its first append; the copy
        // starts with the same bytes, so keep the offset and follow it.
        if (journalPath !== primary && fs.existsSync(primary)) journalPath = primary;
        const stat = statOrNull(journalPath);
        if (!stat) return;
        if (stat.size < offset) {
          warn(opts.json, 'journal_shrank', `${journalPath} shrank (${offset} -> ${stat.size} bytes); reading it again from the start`, { file: journalPath, from: offset, to: stat.size });
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
        warn(opts.json, 'read_failed', error.message, { file: journalPath });
      }
    };
    const timer = setInterval(poll, FOLLOW_POLL_MS);
    const stop = () => {
      clearInterval(timer);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(EXIT.OK);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
