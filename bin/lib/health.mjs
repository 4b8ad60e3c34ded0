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
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { binding, journalPathOf, native, statOrNull, withTempProject } from './project.mjs';

export const SNAPSHOT_SUFFIX = '.snapshot.json';
const PARSE_FAILED = 'journal_parse_failed';

/** The journal as the binding's replay finds it, in the CLI's JSON shape. */
function journalReport(journalPath, copy, id) {
  const r = binding().inspectJournal(copy, id);
  const rejected = new Set(r.rejected.map((l) => l.line));
  return {
    path: journalPath,
    bytes: r.bytes,
    lines: r.lines,
    entries: r.entries,
    nextSeq: r.nextSeq,
    corruptLines: r.rejected.map((l) => ({ line: l.line, error: l.message, text: l.text })),
    tornTail: r.tornTail ? { line: r.tornTail.line, bytes: r.tornTail.bytes, parses: !rejected.has(r.tornTail.line), text: r.tornTail.text } : null,
  };
}

/** The binding's reasons for distrusting a snapshot file, as sentences. */
function distrustReasons(file, id, journalBytes) {
  return binding().judgeSnapshotFile(file, id, journalBytes).map(({ rule, found = 'undefined' }) => ({
    unparsable: 'unparsable (not JSON)',
    not_object: 'not a JSON object',
    journal_bytes: `__journalBytes ${found} != journal size ${journalBytes}`,
    next_seq: `__nextSeq ${found} is not an integer`,
    id: `id ${found} is not ${id}`,
  })[rule] ?? rule);
}

/** `diagnostics` split into parse failures and the rest, each in its order. */
const splitDiagnostics = (list) => [
  list.filter((d) => d?.error === PARSE_FAILED),
  list.filter((d) => d?.error !== PARSE_FAILED),
];

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
function snapshotReport(snapshotPath, bytes, copyPath, id, journal, replayJson, readerView, base) {
  const file = { path: snapshotPath, present: bytes !== null };
  if (bytes === null) return file;
  const untrustedReasons = distrustReasons(copyPath, id, journal.bytes);
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

/** Reads the snapshot file, then copies the journal; again if the journal moved meanwhile, so both describe one moment. */
function copyMoment(journalPath, snapshotPath, copy) {
  let bytes = null;
  for (let attempt = 0; attempt < 5; attempt++) {
    try { bytes = fs.readFileSync(snapshotPath); } catch (error) {
      if (error.code !== 'ENOENT') throw error;
      bytes = null;
    }
    fs.copyFileSync(journalPath, copy);
    if (statOrNull(journalPath)?.size === fs.statSync(copy).size) break;
  }
  return bytes;
}

/**
 * Replays session `id` from scratch on a copy (in `scratch`, see
 * withScratchStores), judges its snapshot file, and says whether the
 * session is healthy (`consistent`) and if not, why (`problems`). Null when
 * it has no journal. `replayed` is the fresh replay's snapshot.
 */
export function verifySession(dirs, id, scratch) {
  const journalPath = journalPathOf(dirs, id);
  if (!journalPath) return null;
  const snapshotPath = path.join(dirs.sessionsDir, id + SNAPSHOT_SUFFIX);
  const copy = path.join(scratch.replayer.rootDir, id + '.jsonl');
  const bytes = copyMoment(journalPath, snapshotPath, copy);
  // The reader's copy: the same journal beside the same snapshot file.
  const snapshotCopy = path.join(scratch.reader.rootDir, id + SNAPSHOT_SUFFIX);
  fs.copyFileSync(copy, path.join(scratch.reader.rootDir, id + '.jsonl'));
  if (bytes !== null) fs.writeFileSync(snapshotCopy, bytes);
  const journal = journalReport(journalPath, copy, id);
  const replayed = scratch.replayer.getSnapshot(id, { includeCompleted: true });
  const replayJson = JSON.parse(JSON.stringify(replayed));
  const readerView = () => scratch.reader.getSnapshot(id, { includeCompleted: true });
  const base = scratch.replayer.getSnapshot('__quiver_live_base__', { includeCompleted: true });
  const snapshotFile = snapshotReport(snapshotPath, bytes, snapshotCopy, id, journal, replayJson, readerView, base);

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
  if (journal.corruptLines.length) notes.push(`${journal.corruptLines.length} line(s) rejected by the replay: every reader records them as ${PARSE_FAILED} diagnostics`);
  return {
    id,
    consistent: problems.length === 0,
    problems,
    journal,
    snapshotFile,
    diagnostics: replayJson.diagnostics ?? [],
    notes,
    replayed,
  };
}

/**
 * Runs `fn(scratch)` with two stores on scratch projects outside the user's:
 * `replayer` holds journal copies only, so it replays them; `reader` holds
 * each beside a copy of its snapshot file, so it reads them as any reader of
 * the project would.
 */
export function withScratchStores(fn) {
  const open = (dir) => native().createLiveSessionStore({ cwd: dir });
  return withTempProject((a) => withTempProject((b) => fn({ replayer: open(a), reader: open(b) })));
}
