// Fault-suite child: worker threads that hold source locks and are
// terminated inside `withSourceLockSync`, with one implementation; prints
// {"result": ...}: for each case, whether the lock file was there after the
// worker ended, and what this thread's own withSourceLockSync then did.
//
//   node terminated-holder.mjs '{"impl": "native" | "ref", "refPath": FILE, "cwd": DIR}'
//
// refPath is the old module's session-store.mjs; its source-lock.mjs beside it is used.

import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

const here = path.dirname(fileURLToPath(import.meta.url));
const config = JSON.parse(process.argv[2]);
const entry = config.impl === 'ref'
  ? pathToFileURL(path.join(path.dirname(config.refPath), 'source-lock.mjs')).href
  : pathToFileURL(path.resolve(here, '..', '..', '..', 'index.mjs')).href;
const { withSourceLockSync, sourceLockPath } = await import(entry);

// The worker takes the locks of `files`, nested, tells it holds them, and
// spins inside the innermost section until it is terminated (or, with
// `exit`, calls process.exit there); with `leave`, it returns from its
// sections first and spins after.
const HOLDER = `
  const { parentPort, workerData: { entry, cwd, files, leave, exit } } = require('node:worker_threads');
  import(entry).then(({ withSourceLockSync }) => {
    const inside = (i) => {
      if (i < files.length) return withSourceLockSync(files[i], { worker: i }, () => inside(i + 1), { cwd });
      if (!leave) {
        parentPort.postMessage('inside');
        if (exit) process.exit(0);
        for (;;);
      }
    };
    inside(0);
    parentPort.postMessage('left');
    for (;;);
  });
`;

async function holder(files, { leave = false, exit = false } = {}) {
  const worker = new Worker(HOLDER, { eval: true, workerData: { entry, cwd: config.cwd, files, leave, exit } });
  const exited = once(worker, 'exit');
  const [said] = await once(worker, 'message');
  return { worker, said, exited };
}

function ownTry(file) {
  try {
    return withSourceLockSync(file, 'main', () => 'ran', { cwd: config.cwd });
  } catch (err) {
    return err.code ?? err.message;
  }
}

const lockOf = (file) => sourceLockPath(file, config.cwd);
const there = (file) => fs.existsSync(lockOf(file));
/** Another holder's lock at the name: another token, this live pid. */
const foreign = (file) => {
  const text = `${JSON.stringify({ owner: 'other', token: 'another-holder', pid: process.pid, at: Date.now(), file: path.resolve(config.cwd, file) })}\n`;
  fs.writeFileSync(lockOf(file), text);
  return text;
};

const result = {};

{
  const { worker, said } = await holder(['src/a.css']);
  const held = there('src/a.css');
  await worker.terminate();
  result.terminatedInside = { said, held, lockLeft: there('src/a.css'), then: ownTry('src/a.css') };
}
{
  const { worker } = await holder(['src/b.css', 'src/c.css']);
  await worker.terminate();
  result.terminatedInsideTwo = { lockLeft: [there('src/b.css'), there('src/c.css')], then: [ownTry('src/b.css'), ownTry('src/c.css')] };
}
{
  const { exited } = await holder(['src/f.css'], { exit: true });
  await exited;
  result.exitedInside = { lockLeft: there('src/f.css'), then: ownTry('src/f.css') };
}
{
  const { worker } = await holder(['src/d.css']);
  const text = foreign('src/d.css');
  await worker.terminate();
  result.replacedByAnother = { kept: fs.readFileSync(lockOf('src/d.css'), 'utf8') === text };
  fs.rmSync(lockOf('src/d.css'));
}
{
  const { worker, said } = await holder(['src/e.css'], { leave: true });
  const text = foreign('src/e.css');
  await worker.terminate();
  result.releasedBefore = { said, kept: fs.readFileSync(lockOf('src/e.css'), 'utf8') === text };
  fs.rmSync(lockOf('src/e.css'));
}
process.stdout.write(JSON.stringify({ result }) + '\n');
