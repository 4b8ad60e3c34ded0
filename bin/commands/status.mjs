import { CWD, HELP, JSON_OUTPUT } from '../lib/args.mjs';
import { EXIT } from '../lib/errors.mjs';
import { phaseStyle, renderStyle } from '../lib/describe.mjs';
import { ageSince, c, cell, formatAge, out, renderTable, sanitize, warn, writeJson } from '../lib/output.mjs';
import { isSessionId, journalIds, openReader, projectDirs, resolveCwd } from '../lib/project.mjs';

export default {
  name: 'status',
  summary: 'list active sessions',
  description: `Lists the sessions that are not completed or discarded, sorted by id:
phase, render state, the event waiting for the agent, and the age of the
last event (from updatedAt). Reads only; never writes a snapshot file.`,
  options: [CWD, JSON_OUTPUT, HELP],
  exitCodes: { 0: '', 2: '', 3: '--cwd does not exist', 4: '', 5: '' },
  run,
};

function run(opts) {
  const dirs = projectDirs(resolveCwd(opts.cwd));
  const now = Date.now();
  const sessions = listActive(openReader(dirs), dirs, opts);
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
    return EXIT.OK;
  }
  if (rows.length === 0) {
    out(`No active sessions in ${dirs.sessionsDir}`);
    return EXIT.OK;
  }
  const table = rows.map((r) => [
    cell(r.id),
    cell(r.phase),
    cell(r.renderState),
    r.pendingEventType === null ? '-' : cell(r.pendingEventType) + (r.pendingEventSeq === null ? '' : ` #${cell(r.pendingEventSeq)}`),
    formatAge(r.ageMs),
  ]);
  out(renderTable(['ID', 'PHASE', 'RENDER', 'PENDING', 'AGE'], table, [null, phaseStyle, renderStyle, (t) => (t === '-' ? null : c.cyan), null]));
  return EXIT.OK;
}

/**
 * `listActiveSessions()`, which throws (as the old module's does) when a
 * journal's name is not a valid session id; then the valid ones are listed
 * one by one and the others named on stderr (`doctor` reports them).
 */
function listActive(store, dirs, opts) {
  try {
    return store.listActiveSessions();
  } catch (error) {
    if (!/^invalid session id/.test(error?.message)) throw error;
    const ids = new Set([...journalIds(dirs, dirs.legacyDir), ...journalIds(dirs, dirs.sessionsDir)]);
    const valid = [...ids].sort().filter((id) => {
      if (isSessionId(id)) return true;
      const name = id + dirs.layout.journalSuffix;
      warn(opts.json, 'invalid_journal_name', `skipping journal with an invalid session id: ${sanitize(name)} (listActiveSessions throws on it)`, { name });
      return false;
    });
    return valid.map((id) => store.getSnapshot(id)).filter(Boolean);
  }
}
