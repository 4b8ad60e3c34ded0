import fs from 'node:fs';
import path from 'node:path';
import { CWD, HELP, JSON_OUTPUT } from '../lib/args.mjs';
import { EXIT, unknownVerdict } from '../lib/errors.mjs';
import { verifySession } from '../lib/health.mjs';
import { inspectLocks } from '../lib/locks.mjs';
import { c, cell, hint, out, sanitize, shellWord, span, truncate, writeJson } from '../lib/output.mjs';
import { binding, isDir, isSessionId, journalIds, journalIn, journalPathOf, listDir, openReader, projectDirs, resolveCwd } from '../lib/project.mjs';

/** How long to wait before looking again at what the first look found. */
const RECHECK_MS = 150;

export default {
  name: 'doctor',
  summary: "check a project's live directory",
  description: `Checks the project's live directory for:
  - stale source locks (see \`locks --help\`)
  - sessions that are not healthy, by the rule \`replay --verify\` applies
    (see \`replay --help\`): a torn journal tail (a journal not ending in a
    newline), a snapshot file readers will not trust (by the store's own
    trust rule; each finding names the part of it the file breaks), or a
    trusted one that differs from a fresh replay
  - legacy journals (in quiver-cli's former sessions directory) not yet
    copied forward
  - staged snapshot files their writers left behind, as the store's sweep
    judges them (no writer holds them, and none touched them lately)
  - journals whose name is not a valid session id (listActiveSessions throws)
Every journal is replayed from scratch (nothing is written). A finding is
looked at again after a short pause, so a write in progress is not reported.
Each finding comes with its fix (with --json, a \`fix\` field): a command
where one does it. Reads only.`,
  options: [CWD, JSON_OUTPUT, HELP],
  exitCodes: { 0: 'healthy', 1: 'problems found', 2: '', 3: '--cwd does not exist', 4: '', 5: '' },
  run,
};

/** The sessions readers see, each judged by verifySession. */
function verifySessions(dirs) {
  const ids = [...new Set([...journalIds(dirs, dirs.sessionsDir), ...journalIds(dirs, dirs.legacyDir)])].filter(isSessionId).sort();
  const reader = openReader(dirs);
  return ids.map((id) => verifySession(dirs, id, reader)).filter(Boolean);
}

function sessionFindings(reports, dirs) {
  const tornTails = [];
  const snapshotMismatches = [];
  const snapshotDiffers = [];
  const notes = [];
  for (const r of reports) {
    const j = r.journal;
    const s = r.snapshotFile;
    for (const p of r.problems) {
      if (p.kind === 'torn_tail') tornTails.push({ file: j.path, id: r.id, bytes: j.bytes, fragmentBytes: j.tornTail.bytes, fragment: truncate(j.tornTail.text, 80) });
      if (p.kind === 'snapshot_untrusted') snapshotMismatches.push({ file: s.path, journal: j.path, id: r.id, journalBytes: j.bytes, snapshotJournalBytes: s.journalBytes, reasons: s.untrustedReasons });
      if (p.kind === 'snapshot_differs') snapshotDiffers.push({ file: s.path, journal: j.path, id: r.id, message: p.message });
    }
    if (j.corruptLines.length) notes.push({ file: j.path, message: `${j.corruptLines.length} line(s) rejected by the replay (recorded as diagnostics; \`${hint(`replay ${r.id} --verify --cwd ${shellWord(dirs.root)}`)}\` lists them)` });
  }
  return { tornTails, snapshotMismatches, snapshotDiffers, notes };
}

/** Snapshot files no reader looks at: of an invalid id, or without a journal. */
function orphanSnapshotNotes(dirs) {
  const notes = [];
  const suffix = dirs.layout.snapshotSuffix;
  for (const name of listDir(dirs.sessionsDir).filter((n) => n.endsWith(suffix))) {
    const id = name.slice(0, -suffix.length);
    const file = path.join(dirs.sessionsDir, name);
    if (!isSessionId(id)) notes.push({ file, message: 'snapshot file of an invalid session id (ignored by readers)' });
    else if (!journalPathOf(dirs, id)) notes.push({ file, message: 'snapshot file without a journal (ignored by readers)' });
  }
  return notes;
}

function findInvalidJournalNames(dirs) {
  return [dirs.sessionsDir, dirs.legacyDir].flatMap((dir) => journalIds(dirs, dir).filter((id) => !isSessionId(id)).map((id) => ({ file: journalIn(dirs, dir, id) })));
}

function findLegacyJournals(dirs) {
  return journalIds(dirs, dirs.legacyDir)
    .filter((id) => !fs.existsSync(journalIn(dirs, dirs.sessionsDir, id)))
    .map((id) => ({ file: journalIn(dirs, dirs.legacyDir, id), id }));
}

/**
 * How each of the binding's verdicts on a staged snapshot file
 * (`StagedFileVerdict`) is reported: null for one left behind (a finding),
 * else why it is in flight. The age limit is the layout's.
 */
export function stagedWords(b, layout) {
  const S = b.StagedFileVerdict;
  return new Map([
    [S.Abandoned, null],
    [S.InUse, 'its writer holds it'],
    [S.Fresh, `touched less than ${span(layout.stagedMinAgeMs)} ago`],
  ]);
}

/**
 * Staged snapshot files as the store's sweep judges them: left behind
 * (abandoned), or in flight (a writer holds the file, or touched it within
 * the store's age limit). Names that are not a staged file's get no verdict.
 */
function findStagingFiles(dirs) {
  const words = stagedWords(binding(), dirs.layout);
  const leftovers = [];
  const inFlight = [];
  for (const name of listDir(dirs.sessionsDir)) {
    const file = path.join(dirs.sessionsDir, name);
    const verdict = binding().stagedFileVerdict(file);
    if (verdict === null) continue;
    if (!words.has(verdict)) throw unknownVerdict('staged file', verdict, file);
    const why = words.get(verdict);
    if (why === null) leftovers.push({ file, verdict });
    else inFlight.push({ file, verdict, why });
  }
  return { leftovers, inFlight };
}

function runChecks(dirs) {
  const now = Date.now();
  const staging = findStagingFiles(dirs);
  const locks = inspectLocks(dirs, now);
  const sessions = sessionFindings(verifySessions(dirs), dirs);
  return {
    checked: {
      locks: locks.length,
      journals: journalIds(dirs, dirs.sessionsDir).length + journalIds(dirs, dirs.legacyDir).length,
      snapshotFiles: listDir(dirs.sessionsDir).filter((n) => n.endsWith(dirs.layout.snapshotSuffix)).length,
    },
    staleLocks: locks.filter((l) => l.stale),
    tornTails: sessions.tornTails,
    snapshotMismatches: sessions.snapshotMismatches,
    snapshotDiffers: sessions.snapshotDiffers,
    legacyJournals: findLegacyJournals(dirs),
    invalidJournalNames: findInvalidJournalNames(dirs),
    stagingFiles: staging.leftovers,
    notes: [
      ...orphanSnapshotNotes(dirs),
      ...sessions.notes,
      ...staging.inFlight.map((s) => ({ file: s.file, message: `staged file being written (${s.why})` })),
    ],
  };
}

/**
 * Each check: its key, its label, one line about a finding, and the fix for
 * that finding (a command where one does it). `dirs` is the project's.
 */
const CHECKS = [
  ['staleLocks', 'stale locks', (l) => `${l.name}: ${l.reason}${l.owner !== null ? ` (owner ${truncate(cell(l.owner), 40)})` : ''}`,
    (l, dirs) => `${hint(`locks --clear-stale --cwd ${shellWord(dirs.root)}`)} (removes stale locks only, each judged again first)`],
  ['tornTails', 'torn tails', (t) => `${t.file}: ends without a newline (last ${t.fragmentBytes} bytes: ${sanitize(t.fragment)})`,
    (t) => 'the next append through quiver-live-native ends the fragment with a newline (it replays as one diagnosed line; ' +
      'the old JS module would glue the next event onto it and lose it); ' +
      `to drop the fragment instead, with no writer running: truncate -s ${t.bytes - t.fragmentBytes} ${shellWord(t.file)}`],
  ['snapshotMismatches', 'snapshot files', (s) => `${s.file}: ${s.reasons.join('; ')}`,
    (s, dirs) => `nothing is lost: readers replay the journal instead and the next append rewrites the file; ` +
      `\`${hint(`replay ${s.id} --verify --cwd ${shellWord(dirs.root)}`)}\` shows the differences; deleting it is safe: rm ${shellWord(s.file)}`],
  ['snapshotDiffers', 'snapshot content', (s) => `${s.file}: ${s.message}`,
    (s, dirs) => `\`${hint(`replay ${s.id} --verify --cwd ${shellWord(dirs.root)}`)}\` shows the differences; ` +
      `with no writer running, deleting the file makes readers replay the journal: rm ${shellWord(s.file)}`],
  ['legacyJournals', 'legacy journals', (l) => `${l.file}: not yet copied to the sessions dir`,
    (l, dirs) => `nothing to do: readers read it where it is, and the session's next append copies it to ${dirs.sessionsDir}`],
  ['stagingFiles', 'staging files', (s) => `${s.file}: left behind by a writer (no writer holds it)`,
    (s) => `nothing reads it and no writer holds it: rm ${shellWord(s.file)} (the next flush() of any session removes it too)`],
  ['invalidJournalNames', 'journal names', (j) => `${j.file}: not a valid session id (listActiveSessions throws on it)`,
    (j, dirs) => `move it out of ${path.dirname(j.file)}, or rename it to a valid id (${binding().sessionIdPattern()}${dirs.layout.journalSuffix}): listActiveSessions fails while it is there`],
];

function sleepMs(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function run(opts) {
  const dirs = projectDirs(resolveCwd(opts.cwd));
  const checks = runChecks(dirs);
  const count = (r) => CHECKS.reduce((n, [key]) => n + r[key].length, 0);
  if (count(checks) > 0) {
    // A writer may have been between its journal append and its snapshot
    // write: look again once, and report only what is still there.
    sleepMs(RECHECK_MS);
    const again = runChecks(dirs);
    for (const [key] of CHECKS) {
      const first = new Set(checks[key].map((item) => item.file));
      checks[key] = again[key].filter((item) => first.has(item.file));
    }
    checks.notes = again.notes;
    checks.checked = again.checked;
  }
  const problems = count(checks);
  for (const [key, , , fix] of CHECKS) checks[key] = checks[key].map((item) => ({ ...item, fix: fix(item, dirs) }));
  if (opts.json) {
    writeJson({
      root: dirs.root,
      liveDir: dirs.liveDir,
      healthy: problems === 0,
      problems,
      checked: checks.checked,
      checks: Object.fromEntries(CHECKS.map(([key]) => [key, checks[key]])),
      notes: checks.notes,
    });
    return problems ? EXIT.PROBLEMS : EXIT.OK;
  }
  out(`${c.bold('Project root')}  ${dirs.root}`);
  out(`${c.bold('Live dir')}      ${dirs.liveDir}${isDir(dirs.liveDir) ? '' : c.dim(' (absent)')}`);
  const k = checks.checked;
  out(`${c.bold('Checked')}       ${k.journals} journal(s), ${k.snapshotFiles} snapshot file(s), ${k.locks} lock(s)`);
  const width = Math.max(...CHECKS.map(([, label]) => label.length));
  for (const [key, label, describe] of CHECKS) {
    const items = checks[key];
    out(`${items.length ? c.red('FAIL') : c.green('ok  ')}  ${label.padEnd(width)}  ${items.length || 'none'}`);
    for (const item of items) {
      out(`        ${describe(item)}`);
      out(`          ${c.cyan('fix:')} ${item.fix}`);
    }
  }
  for (const note of checks.notes) out(c.dim(`note: ${note.file}: ${note.message}`));
  out(problems ? c.red(`${problems} problem(s) found`) : c.green('healthy'));
  return problems ? EXIT.PROBLEMS : EXIT.OK;
}
