import { CWD, HELP, JSON_OUTPUT } from '../lib/args.mjs';
import { EXIT } from '../lib/errors.mjs';
import { describeSnapshot } from '../lib/describe.mjs';
import { out, writeJson } from '../lib/output.mjs';
import { checkSessionId, openReader, projectDirs, resolveCwd, sessionNotFound } from '../lib/project.mjs';

export default {
  name: 'show',
  summary: "print one session's snapshot",
  positionals: [{ name: 'id', label: 'session id', required: true }],
  description: `Prints the snapshot of a session, completed or discarded ones included:
a readable summary, or with --json { root, sessionsDir, session } where
session is the whole snapshot (as status --json gives { root, sessionsDir,
sessions }). Reads only.`,
  options: [CWD, JSON_OUTPUT, HELP],
  exitCodes: { 0: '', 2: 'usage error (a bad id, too)', 3: 'no such session, or --cwd does not exist', 4: '', 5: '' },
  run,
};

function run(opts) {
  const id = checkSessionId('show', opts.id);
  const dirs = projectDirs(resolveCwd(opts.cwd));
  const reader = openReader(dirs);
  const snapshot = reader.has(id) ? reader.getSnapshot(id, { includeCompleted: true }) : null;
  if (!snapshot) throw sessionNotFound(dirs, id);
  // As `status --json` wraps its list: the project, then the session.
  if (opts.json) writeJson({ root: dirs.root, sessionsDir: dirs.sessionsDir, session: snapshot });
  else out(describeSnapshot(snapshot, Date.now()));
  return EXIT.OK;
}
