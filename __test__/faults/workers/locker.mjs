// Fault-suite worker: takes the source lock from its own process.
//
//   node locker.mjs '<json config>'
//
// config: { cwd, file, mode, ... }
//   mode 'stress':  after `goFile` exists, runs `sections` critical sections
//                   (waitMs `waitMs`), each a read-modify-write of
//                   `counterFile`, with `insideFile` created exclusively on entry
//                   and removed on exit to catch two holders at once.
//   mode 'hold':    takes the lock, prints "in" and blocks inside fn forever.
//   mode 'contend': prints "waiting", then waits up to `waitMs` for the lock;
//                   prints {"result": {acquiredAt}} once inside.
// Lines on stdout are written synchronously.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const config = JSON.parse(process.argv[2]);
const { withSourceLockSync } = createRequire(import.meta.url)(path.resolve(here, '..', '..', '..', 'index.js'));
const cell = new Int32Array(new SharedArrayBuffer(4));

function say(line) {
  fs.writeSync(1, `${line}\n`);
}

if (config.mode === 'stress') {
  say('ready');
  while (!fs.existsSync(config.goFile)) Atomics.wait(cell, 0, 0, 1);
  let done = 0;
  let overlaps = 0;
  const refused = [];
  for (let i = 0; i < config.sections; i++) {
    try {
      withSourceLockSync(config.file, `writer-${config.writer}`, () => {
        let fd = null;
        try {
          fd = fs.openSync(config.insideFile, 'wx');
        } catch (error) {
          if (error.code === 'EEXIST') overlaps++;
          else throw error;
        }
        const n = Number(fs.readFileSync(config.counterFile, 'utf8'));
        fs.writeFileSync(config.counterFile, String(n + 1));
        if (fd !== null) {
          fs.closeSync(fd);
          fs.unlinkSync(config.insideFile);
        }
      }, { cwd: config.cwd, waitMs: config.waitMs });
      done++;
    } catch (error) {
      refused.push(`${error.code || ''} ${error.message}`);
    }
  }
  say(JSON.stringify({ result: { writer: config.writer, done, overlaps, refused: refused.slice(0, 5), refusedCount: refused.length } }));
} else if (config.mode === 'hold') {
  withSourceLockSync(config.file, 'doomed-holder', () => {
    say('in');
    for (;;) Atomics.wait(cell, 0, 0, 1000);
  }, { cwd: config.cwd });
} else if (config.mode === 'contend') {
  say('waiting');
  withSourceLockSync(config.file, 'contender', () => {
    say(JSON.stringify({ result: { acquiredAt: Date.now() } }));
  }, { cwd: config.cwd, waitMs: config.waitMs });
} else {
  throw new Error(`unknown mode ${config.mode}`);
}
