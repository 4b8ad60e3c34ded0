// One live differential case: generate a sequence and compare two
// implementations on it in every way the harness knows.

import { interfaceMembers } from './dts.mjs';
import { generateSequence } from './gen.mjs';
import { runSequence, crossRead, compareTranscripts, allDifferences, formatMismatch, hasReentrantGetter, reentryMismatch, reentryPlan } from './transcript.mjs';

/**
 * compareLive({ tier, seed, reference, candidate, options, workDir })
 *   -> { tier, seed, seq, ops, checks, agreements, mismatches: [{ label, mismatch, report }], known: [{ label, known }] }
 *
 * Checks, each over the whole sequence:
 *   run        the candidate's transcript equals the reference's
 *   cross R→C  reference writes, fresh candidate and fresh reference read the same,
 *              flush the same, and replay the same from the journals alone
 *   cross C→R  candidate writes, then the same reads, flushes and cold replays
 *   mixed      main store instances alternate (reference, candidate, ...), the
 *              second "process" store is the candidate: transcript equals the
 *              reference-only one
 * A sequence with a getter that appends to the store while the store handles
 * its event is compared with the old module run as if appends were
 * serialized (see reentryPlan in transcript.mjs), in which the getters
 * must be called as often, in the same order, as in the candidate.
 * With options.types (a declaration file), `run` also fails when a key every
 * snapshot of the old module holds is not a member of its
 * `LiveSessionSnapshot`.
 * Returned values are compared as assert.deepStrictEqual sees them and more
 * (key order, undefined vs absent, NaN, -0, built-ins by class and content);
 * options.identity also makes a copy of an object the old module returns
 * by reference (the caller's own) a difference.
 */
export function compareLive({ tier, seed, reference, candidate, options = {}, workDir }) {
  const seq = generateSequence(tier, seed, options);
  const result = { tier, seed, seq, ops: seq.ops.length, coverage: seq.coverage, checks: 0, agreements: 0, mismatches: [], known: [] };
  const impls = { reference, candidate, options, workDir };
  const both = runBoth(seq, impls);
  for (const label of CHECKS) {
    const { mismatch, extra, known } = checkLive(label, seq, impls, both);
    result.checks++;
    if (known) result.known.push({ label, known });
    if (!mismatch) {
      result.agreements++;
      continue;
    }
    let report = formatMismatch({ label, seed, tier, mismatch, ops: label.startsWith('cross') ? null : seq.ops });
    if (extra) report += '\n' + extra;
    result.mismatches.push({ label, mismatch, report });
  }
  return result;
}

/** The labels of compareLive's checks, in the order it makes them. */
export const CHECKS = ['run', 'cross reference-writes/candidate-reads', 'cross candidate-writes/reference-reads', 'mixed reference/candidate stores'];

/**
 * checkLive(label, seq, { reference, candidate, options, workDir }, both?)
 *   -> { mismatch, extra, known }
 * One of compareLive's checks on a sequence (any list of ops, a shrunk one
 * too); `both` is runBoth's outcome when it is at hand. A difference
 * docs/RELIABILITY.md lists is no mismatch: `known` names it instead.
 */
export function checkLive(label, seq, impls, both) {
  const { reference, candidate, options = {}, workDir } = impls;
  const identity = !!options.identity;
  switch (label) {
    case 'run': {
      const { expected, actual, serialize } = both ?? runBoth(seq, impls);
      const reentry = serialize && reentryMismatch(expected, actual);
      const { mismatch, known } = reentry ? { mismatch: reentry } : triage(expected, actual);
      const undeclared = !mismatch && options.types && undeclaredKeys(expected, options.types);
      if (undeclared) return { mismatch: undeclared, known };
      return { mismatch, known, extra: mismatch && diffsReport(expected, actual) };
    }
    case 'cross reference-writes/candidate-reads': return { mismatch: crossRead(reference, candidate, seq, workDir).mismatch };
    case 'cross candidate-writes/reference-reads': return { mismatch: crossRead(candidate, reference, seq, workDir).mismatch };
    case 'mixed reference/candidate stores': {
      const { expected, serialize } = both ?? runBoth(seq, impls);
      const mixed = runSequence(reference, seq, workDir, { factories: [reference, candidate], identity, serialize });
      const { mismatch, known } = triage(expected, mixed);
      return { mismatch, known, extra: mismatch && diffsReport(expected, mixed) };
    }
    default: throw new Error(`unknown check ${label}`);
  }
}

/**
 * Both implementations' transcripts of `seq`; the reference's as if appends
 * were serialized when a getter appends while its event is handled.
 */
function runBoth(seq, { reference, candidate, options = {}, workDir }) {
  const identity = !!options.identity;
  const actual = runSequence(candidate, seq, workDir, { identity });
  const serialize = hasReentrantGetter(seq) ? { plan: reentryPlan(actual), factory: reference } : undefined;
  const expected = runSequence(reference, seq, workDir, { identity, serialize });
  return { expected, actual, serialize };
}

/**
 * `{ mismatch, known }` of two transcripts: the first difference that is
 * not one docs/RELIABILITY.md lists, and the name of a listed one met.
 */
function triage(expected, actual) {
  const first = compareTranscripts(expected, actual);
  if (!first) return { mismatch: null, known: null };
  const known = knownDifference(expected, actual, first);
  if (!known) return { mismatch: first, known: null };
  const diffs = allDifferences(expected, actual, 100);
  const unknown = diffs.find((d) => !knownDifference(expected, actual, d));
  return { mismatch: unknown ?? (diffs.length ? null : first), known };
}

/**
 * The name of the difference docs/RELIABILITY.md or the README lists that
 * `mismatch` is, or follows from, or null.
 */
function knownDifference(expected, actual, mismatch) {
  const before = expected.entries.slice(0, mismatch.index + 1);
  // An event JSON.stringify refuses, for a session whose journal is only in
  // the legacy directory: the old module copies that journal forward
  // first, this package touches no file (the README's deliberate
  // divergence). The generator keeps such events away from such sessions,
  // but it cannot always tell an append that wrote nothing.
  const copied = before.findIndex((e, i) => /append/i.test(e.op) && e.threw && e.threw === actual.entries[i]?.threw
    && Object.keys(e.files ?? {}).some((f) => copiedForward(f, e.files, actual.entries[i].files)));
  return copied >= 0 ? 'what follows a refused event whose legacy journal the old module copied forward (README, deliberate divergences)' : null;
}

/** Whether `file`, a journal, is in `files` as a copy of its legacy one and missing from `other`. */
function copiedForward(file, files, other = {}) {
  const m = /^\.impeccable\/live\/sessions\/([^/]+\.jsonl)$/.exec(file);
  return !!m && !(file in other) && JSON.stringify(files[`.impeccable-live/sessions/${m[1]}`]) === JSON.stringify(files[file]);
}

function diffsReport(expected, actual) {
  const diffs = allDifferences(expected, actual, 6);
  if (diffs.length <= 1) return '';
  return '  further differences:\n' + diffs.slice(1).map((d) => `    op #${d.index} (${d.op}) ${d.field}: ${d.detail}`).join('\n');
}

/**
 * The keys every snapshot in a transcript holds (those a snapshot file or an
 * event adds to some are not), checked against the members the declaration
 * file gives `LiveSessionSnapshot`: a mismatch naming the first undeclared
 * one, or null.
 */
function undeclaredKeys(transcript, types) {
  let common = null;
  for (const entry of transcript.entries) {
    for (const v of [entry.result].flat()) {
      if (!v || typeof v !== 'object' || typeof v.id !== 'string' || typeof v.phase !== 'string') continue;
      const keys = new Set(Object.keys(v));
      common = common ? new Set([...common].filter((k) => keys.has(k))) : keys;
    }
  }
  const declared = new Set((interfaceMembers(types, 'LiveSessionSnapshot') ?? []).map((m) => m.split(/\??:/)[0]));
  const missing = [...(common ?? [])].filter((k) => !declared.has(k));
  if (!missing.length) return null;
  return { index: 0, op: 'types', field: 'types', detail: `every snapshot has ${missing.join(', ')}, which ${types} does not declare in LiveSessionSnapshot` };
}
