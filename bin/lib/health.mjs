// What a healthy session is, decided here once: `replay --verify` and
// `doctor` both judge sessions with `verifySession`.
//
// A session is healthy when
//   - its journal ends with a newline (a last line without one is a write
//     that stopped midway: a torn tail);
//   - its snapshot file, if it has one, is one readers trust (the binding's
//     verdict, the store's own rule);
//   - and a trusted file holds what a fresh replay of the journal derives:
//     the same fields and the same __nextSeq.
// Lines a replay rejects (not JSON, not an event) are reported, not counted
// as problems: the journal is append-only, so they stay, and every reader
// records them alike as `journal_parse_failed` diagnostics. That includes
// the fragment of a torn tail once the store's next append has closed it
// with a newline. A writer that applies events one by one puts those
// diagnostics before the ones of later events, while a full replay puts
// them last (the old module does both too): their place among the other
// diagnostics is not compared.

import fs from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { unknownVerdict } from './errors.mjs';
import { binding, journalPathOf, snapshotPathOf, statOrNull } from './project.mjs';

/** The journal as the binding's replay finds it, in the CLI's JSON shape; and the snapshot it derives. */
function replayJournal(journalPath, id) {
  const r = binding().inspectJournal(journalPath, id);
  const rejected = new Set(r.rejected.map((l) => l.line));
  const journal = {
    path: journalPath,
    bytes: r.bytes,
    lines: r.lines,
    entries: r.entries,
    nextSeq: r.nextSeq,
    corruptLines: r.rejected.map((l) => ({ line: l.line, error: l.message, text: l.text })),
    tornTail: r.tornTail ? { line: r.tornTail.line, bytes: r.tornTail.bytes, parses: !rejected.has(r.tornTail.line), text: r.tornTail.text } : null,
  };
  return { journal, replayed: JSON.parse(r.snapshotJson) };
}

/**
 * How each part of the trust rule a snapshot file can break (the binding's
 * `SnapshotDistrust`) is said: `found` is the file's value (JSON text), for
 * session `id` and a journal of `journalBytes` bytes.
 */
export function distrustWords(b) {
  const D = b.SnapshotDistrust;
  return new Map([
    [D.Unparsable, () => 'unparsable (not JSON)'],
    [D.NotObject, () => 'not a JSON object'],
    [D.JournalBytes, (found, { journalBytes }) => `__journalBytes ${found} != journal size ${journalBytes}`],
    [D.NextSeq, (found) => `__nextSeq ${found} is not an integer`],
    [D.Id, (found, { id }) => `id ${found} is not ${id}`],
  ]);
}

/** The binding's reasons for distrusting the snapshot file at `file`, as sentences. */
function distrustReasons(file, bytes, id, journalBytes) {
  const words = distrustWords(binding());
  return binding().judgeSnapshotFile(bytes, id, journalBytes).map(({ rule, found = 'undefined' }) => {
    if (!words.has(rule)) throw unknownVerdict('snapshot file trust', rule, file);
    return words.get(rule)(found, { id, journalBytes });
  });
}

/** `diagnostics` split into the replay's parse failures and the rest, each in its order. */
function splitDiagnostics(list) {
  const parseFailed = binding().JOURNAL_PARSE_FAILED;
  return [list.filter((d) => d?.error === parseFailed), list.filter((d) => d?.error !== parseFailed)];
}

function sameField(key, replayed, fromFile) {
  if (key === 'diagnostics' && Array.isArray(replayed) && Array.isArray(fromFile)) {
    return isDeepStrictEqual(splitDiagnostics(replayed), splitDiagnostics(fromFile));
  }
  return isDeepStrictEqual(replayed, fromFile);
}

/**
 * The snapshot file beside a replay: trusted or why not, and where it
 * differs. `readerView()` is what a store reading the file and the journal
 * holds; for a file it does not trust, what the file would give is shown
 * as `{ ...baseSnapshot(id), ...file }` (`base` is a base snapshot).
 */
function snapshotReport(snapshotPath, bytes, id, journal, replayJson, readerView, base) {
  const file = { path: snapshotPath, present: bytes !== null };
  if (bytes === null) return file;
  const untrustedReasons = distrustReasons(snapshotPath, bytes, id, journal.bytes);
  let parsed = null;
  try { parsed = JSON.parse(bytes.toString('utf8')); } catch { /* reported by the binding's verdict */ }
  const parsable = Boolean(parsed) && typeof parsed === 'object';
  Object.assign(file, {
    parsable,
    journalBytes: parsable ? parsed.__journalBytes ?? null : null,
    nextSeq: parsable ? parsed.__nextSeq ?? null : null,
    trusted: untrustedReasons.length === 0,
    untrustedReasons,
  });
  file.journalBytesMatches = file.journalBytes === journal.bytes;
  file.nextSeqMatches = file.nextSeq === journal.nextSeq;
  file.differences = [];
  if (parsable) {
    const { __journalBytes, __nextSeq, ...content } = parsed;
    const hydrated = file.trusted ? JSON.parse(JSON.stringify(readerView())) : { ...JSON.parse(JSON.stringify({ ...base, id })), ...content };
    for (const key of new Set([...Object.keys(replayJson), ...Object.keys(hydrated)])) {
      if (!sameField(key, replayJson[key], hydrated[key])) file.differences.push({ field: key, snapshotFile: hydrated[key], replay: replayJson[key] });
    }
    file.keyOrderDiffers = file.differences.length === 0 && JSON.stringify(Object.keys(replayJson)) !== JSON.stringify(Object.keys(hydrated));
  }
  file.matchesReplay = parsable && file.differences.length === 0;
  return file;
}

/** The snapshot file's bytes, or null when there is none. */
function readSnapshotFile(file) {
  try { return fs.readFileSync(file); } catch (error) {
    if (error.code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Replays session `id` from scratch (the binding replays its journal as a
 * store would, ignoring the snapshot file), judges its snapshot file, and
 * says whether the session is healthy (`consistent`) and if not, why
 * (`problems`). Null when it has no journal. `replayed` is the fresh
 * replay's snapshot. `reader` is a store reading the project as any reader
 * does (see openReader).
 */
export function verifySession(dirs, id, reader) {
  for (let attempt = 1; ; attempt++) {
    const journalPath = journalPathOf(dirs, id);
    if (!journalPath) return null;
    // A writer appends to the journal, then rewrites the snapshot file: the
    // two describe one moment when the journal kept its size meanwhile.
    const sizeBefore = statOrNull(journalPath)?.size;
    const report = verifyOnce(dirs, id, journalPath, reader);
    const sizeAfter = statOrNull(journalPath)?.size;
    if ((sizeBefore === report.journal.bytes && sizeAfter === sizeBefore) || attempt === 5) return report;
  }
}

function verifyOnce(dirs, id, journalPath, reader) {
  const snapshotPath = snapshotPathOf(dirs, id);
  const bytes = readSnapshotFile(snapshotPath);
  const { journal, replayed } = replayJournal(journalPath, id);
  const readerView = () => reader.getSnapshot(id, { includeCompleted: true });
  const base = reader.getSnapshot('__quiver_live_base__', { includeCompleted: true });
  const snapshotFile = snapshotReport(snapshotPath, bytes, id, journal, replayed, readerView, base);

  const problems = [];
  if (journal.tornTail) problems.push({ kind: 'torn_tail', message: `line ${journal.tornTail.line} has no newline (${journal.tornTail.bytes} bytes)` });
  if (snapshotFile.present && !snapshotFile.trusted) problems.push({ kind: 'snapshot_untrusted', message: snapshotFile.untrustedReasons.join('; ') });
  if (snapshotFile.trusted && !(snapshotFile.matchesReplay && snapshotFile.nextSeqMatches)) {
    const fields = snapshotFile.differences.map((d) => d.field);
    if (!snapshotFile.nextSeqMatches) fields.push('__nextSeq');
    problems.push({ kind: 'snapshot_differs', message: `readers trust it, but it differs from a fresh replay in ${fields.join(', ')}` });
  }
  const notes = [];
  if (!snapshotFile.present) notes.push('no snapshot file: readers replay the journal');
  if (journal.corruptLines.length) notes.push(`${journal.corruptLines.length} line(s) rejected by the replay: every reader records them as ${binding().JOURNAL_PARSE_FAILED} diagnostics`);
  return {
    id,
    consistent: problems.length === 0,
    problems,
    journal,
    snapshotFile,
    diagnostics: replayed.diagnostics ?? [],
    notes,
    replayed,
  };
}
