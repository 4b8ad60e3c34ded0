import { CWD, HELP, JSON_OUTPUT } from '../lib/args.mjs';
import { EXIT } from '../lib/errors.mjs';
import { inspectLocks, removeStaleLock } from '../lib/locks.mjs';
import { c, cell, formatAge, hint, out, renderTable, shellWord, truncate, writeJson } from '../lib/output.mjs';
import { projectDirs, resolveCwd } from '../lib/project.mjs';

export default {
  name: 'locks',
  summary: 'list source locks; --clear-stale removes stale ones',
  description: `Lists the project's source locks: owner, pid, state, age and the locked
file. Each lock is judged by the store's own rule (the one it applies
before sweeping a lock), on every OS: stale when its owner is gone (its pid
is not running, or its recorded start time or boot shows the pid now
belongs to another process) or when it has no numeric pid; never merely
because it is old, except a lock that cannot be read, which is stale past
the store's age limit. Each stale lock is listed with the reason.`,
  options: [
    { name: 'clear-stale', type: 'boolean', help: 'remove the stale locks (and only those); each is judged again\njust before removal and kept if it is no longer stale' },
    CWD, JSON_OUTPUT, HELP,
  ],
  exitCodes: { 0: 'no stale lock left', 1: 'stale locks found and not removed', 2: '', 3: '--cwd does not exist', 4: '', 5: '' },
  run,
};

function run(opts) {
  const dirs = projectDirs(resolveCwd(opts.cwd));
  const locks = inspectLocks(dirs);
  const removed = [];
  const kept = [];
  if (opts['clear-stale']) {
    for (const lock of locks.filter((l) => l.stale)) {
      const removal = removeStaleLock(lock);
      (removal === 'kept' ? kept : removed).push({ ...lock, removal });
    }
  }
  const remainingStale = opts['clear-stale'] ? kept.length : locks.filter((l) => l.stale).length;
  if (opts.json) {
    const json = { locksDir: dirs.locksDir, locks };
    if (opts['clear-stale']) Object.assign(json, { removed, notRemoved: kept });
    writeJson(json);
    return remainingStale ? EXIT.PROBLEMS : EXIT.OK;
  }
  if (locks.length === 0) out(`No locks in ${dirs.locksDir}`);
  else {
    const stateStyle = (t) => (t === 'alive' ? c.green : c.red);
    out(renderTable(
      ['LOCK', 'OWNER', 'PID', 'STATE', 'AGE', 'FILE'],
      locks.map((l) => [l.name, truncate(cell(l.owner), 40), cell(l.pid), l.stale ? `${l.state} (stale)` : l.state, formatAge(l.ageMs), cell(l.source)]),
      [null, null, null, stateStyle, null, null],
    ));
  }
  for (const r of removed) out(`removed ${r.name}: ${r.reason}${r.removal === 'already gone' ? ' (already gone)' : ''}`);
  for (const k of kept) out(`kept ${k.name}: no longer stale`);
  if (!opts['clear-stale'] && remainingStale) {
    out(c.yellow(`${remainingStale} stale lock(s); \`${hint(`locks --clear-stale --cwd ${shellWord(dirs.root)}`)}\` removes them`));
  }
  return remainingStale ? EXIT.PROBLEMS : EXIT.OK;
}
