// Fault-suite child: runs store and lock calls against a project where odd
// files (FIFOs, sockets, devices, directories, links) sit at the names the
// package opens, and prints each call's outcome as {"result": [...]}. Run in
// its own process so that a call that hangs or aborts fails its test (by
// the parent's timeout or the exit status) instead of the suite.
//
//   node special.mjs '<json config>'
//
// config: { cwd, calls: [{ op: 'read' | 'append' | 'flush' | 'list' | 'lock', id, file }] }

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const config = JSON.parse(process.argv[2]);
const { createLiveSessionStore, withSourceLockSync } = createRequire(import.meta.url)(path.resolve(here, '..', '..', '..', 'index.js'));

const CALLS = {
  read: ({ id }) => createLiveSessionStore({ cwd: config.cwd }).getSnapshot(id, { includeCompleted: true })?.phase,
  append: ({ id }) => createLiveSessionStore({ cwd: config.cwd }).appendEvent({ id, type: 'generate', count: 2 }).phase,
  flush: ({ id }) => createLiveSessionStore({ cwd: config.cwd }).flush(id).phase,
  list: () => createLiveSessionStore({ cwd: config.cwd }).listActiveSessions().map((s) => s.id),
  lock: ({ file }) => withSourceLockSync(file, 'special', () => 'ran', { cwd: config.cwd, waitMs: 200 }),
};

const results = [];
for (const call of config.calls) {
  const started = Date.now();
  try {
    results.push({ ...call, ok: true, value: CALLS[call.op](call), ms: Date.now() - started });
  } catch (err) {
    const { name, message, code, errno, syscall } = err;
    results.push({ ...call, ok: false, name, message, code, errno, syscall, path: err.path ?? err.lockPath, ms: Date.now() - started });
  }
  // Each outcome as soon as it is known: a later call that hangs still
  // leaves the earlier ones to read.
  fs.writeSync(1, `${JSON.stringify({ partial: results.at(-1) })}\n`);
}
fs.writeSync(1, `${JSON.stringify({ result: results })}\n`);
