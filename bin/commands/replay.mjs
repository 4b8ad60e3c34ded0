import { CWD, HELP, JSON_OUTPUT } from '../lib/args.mjs';
import { EXIT } from '../lib/errors.mjs';
import { describeSnapshot, diagnosticLines } from '../lib/describe.mjs';
import { verifySession } from '../lib/health.mjs';
import { c, cell, out, sanitize, truncate, writeJson } from '../lib/output.mjs';
import { checkSessionId, openReader, projectDirs, resolveCwd, sessionNotFound } from '../lib/project.mjs';

export default {
  name: 'replay',
  summary: 'replay a journal from scratch; --verify checks the session is healthy',
  positionals: [{ name: 'id', label: 'session id', required: true }],
  description: `Replays the session's journal from scratch, as a store would, ignoring
the snapshot file (nothing in the project is written).

Without --verify, prints the replayed snapshot (--json: { root, sessionsDir,
journal, session }). With --verify, says whether the session is healthy, by
the rule \`doctor\` applies to every session: the journal ends with a
newline (no torn tail), and a snapshot file, if any, is one readers trust
(by the store's own trust rule: each part of it the file breaks is named)
and holds what the replay derives. Lines the replay rejects are listed
by line number with the replay's other diagnostics; they are not problems
(every reader records them alike, and the journal keeps them).`,
  options: [
    { name: 'verify', type: 'boolean', help: 'check the session; exit 1 when it is not healthy' },
    CWD, JSON_OUTPUT, HELP,
  ],
  exitCodes: {
    0: 'replayed; with --verify, healthy',
    1: 'with --verify, not healthy: a torn tail, or a snapshot file readers\ndistrust or that differs from the replay',
    2: '', 3: 'no such session, or --cwd does not exist', 4: '', 5: '',
  },
  run,
};

function run(opts) {
  const id = checkSessionId('replay', opts.id);
  const dirs = projectDirs(resolveCwd(opts.cwd));
  const report = verifySession(dirs, id, openReader(dirs));
  if (!report) throw sessionNotFound(dirs, id);
  const { replayed, ...verified } = report;
  if (!opts.verify) {
    if (opts.json) writeJson({ root: dirs.root, sessionsDir: dirs.sessionsDir, journal: report.journal.path, session: replayed });
    else {
      out(describeSnapshot(replayed, Date.now()));
      out(c.dim(`(replayed from ${report.journal.path}: ${report.journal.lines} lines, ${report.journal.bytes} bytes)`));
    }
    return EXIT.OK;
  }
  if (opts.json) writeJson(verified);
  else printVerifyReport(verified);
  return verified.consistent ? EXIT.OK : EXIT.PROBLEMS;
}

function printVerifyReport(r) {
  const ok = (text) => c.green(text);
  const bad = (text) => c.red(text);
  const indent = ' '.repeat(13);
  const j = r.journal;
  const lines = [];
  lines.push(`${c.bold('Session')}      ${r.id}`);
  lines.push(`${c.bold('Journal')}      ${j.path}`);
  lines.push(`${indent}${j.bytes} bytes, ${j.lines} lines, ${j.entries} entries, next seq ${j.nextSeq}`);
  const s = r.snapshotFile;
  lines.push(`${c.bold('Snapshot')}     ${s.path}`);
  if (!s.present) {
    lines.push(`${indent}${c.dim('absent (readers replay the journal)')}`);
  } else {
    // The store's reasons, as the binding gives them.
    lines.push(`${indent}${s.trusted ? ok('readers trust it') : bad('readers replay instead:')}`);
    for (const reason of s.untrustedReasons) lines.push(`${indent}  ${bad(reason)}`);
  }
  if (s.parsable) {
    lines.push(`${indent}__nextSeq ${cell(s.nextSeq)} ${s.nextSeqMatches ? ok('= replay') : bad(`!= replay ${j.nextSeq}`)}`);
    if (s.matchesReplay) {
      lines.push(`${indent}content ${ok('matches a fresh replay')}${s.keyOrderDiffers ? c.yellow(' (key order differs)') : ''}`);
    } else {
      lines.push(`${indent}content ${bad(`differs from a fresh replay in ${s.differences.length} field(s)`)}`);
      for (const d of s.differences) {
        lines.push(`${indent}  ${d.field}: file ${truncate(cell(d.snapshotFile), 60)}, replay ${truncate(cell(d.replay), 60)}`);
      }
    }
  }
  const torn = j.tornTail;
  lines.push(`${c.bold('Torn tail')}    ${torn ? bad(`line ${torn.line}: ${torn.bytes} bytes without a newline`) + ` ${sanitize(truncate(torn.text, 60))}` : ok('none')}`);
  lines.push(`${c.bold('Rejected')}     ${j.corruptLines.length ? c.yellow(`${j.corruptLines.length} line(s)`) : ok('none')}`);
  for (const line of j.corruptLines.slice(0, 20)) {
    lines.push(`${indent}line ${line.line}: ${sanitize(line.error)}${torn?.line === line.line ? c.dim(' (the torn tail)') : ''}`);
  }
  if (j.corruptLines.length > 20) lines.push(c.dim(`${indent}(${j.corruptLines.length - 20} more; --json lists all)`));
  lines.push(`${c.bold('Diagnostics')}  ${r.diagnostics.length}`);
  lines.push(...diagnosticLines(r.diagnostics, '--json lists all'));
  for (const note of r.notes) lines.push(c.dim(`note: ${note}`));
  for (const p of r.problems) lines.push(bad(`problem: ${p.message}`));
  lines.push(`${c.bold('Result')}       ${r.consistent ? ok('healthy') : bad('NOT HEALTHY')}`);
  out(lines.join('\n'));
}
