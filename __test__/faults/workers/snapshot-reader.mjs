// Fault-suite child: reads one session each time a line arrives on stdin,
// the three ways a reader in another process does, and prints the times:
//
//   plain:   fs.readFileSync of the snapshot file, then JSON.parse (what
//            the old module's reader does first)
//   package: a fresh store of this package, getSnapshot(id)
//   old:     a fresh store of the old module, getSnapshot(id) (with refPath)
//
//   node snapshot-reader.mjs '<json config>'    config: { cwd, id, snapshot, refPath }
//
// Prints "ready", then per request {"read": {...}}.

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const config = JSON.parse(process.argv[2]);
const native = createRequire(import.meta.url)(path.resolve(here, '..', '..', '..', 'index.js'));
const old = config.refPath ? await import(pathToFileURL(config.refPath).href) : null;

function timed(fn) {
  const started = process.hrtime.bigint();
  let value;
  let error = null;
  try {
    value = fn();
  } catch (err) {
    error = String(err?.message ?? err).slice(0, 200);
  }
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, value, error };
}

const mounted = (s) => s?.mountedVariants?.length;

fs.writeSync(1, 'ready\n');
for await (const _line of readline.createInterface({ input: process.stdin })) {
  const plain = timed(() => {
    const text = fs.readFileSync(config.snapshot, 'utf8');
    JSON.parse(text);
    return text.length;
  });
  const pkg = timed(() => mounted(native.createLiveSessionStore({ cwd: config.cwd }).getSnapshot(config.id)));
  const ref = old ? timed(() => mounted(old.createLiveSessionStore({ cwd: config.cwd }).getSnapshot(config.id))) : null;
  fs.writeSync(1, `${JSON.stringify({ read: { plain, package: pkg, old: ref } })}\n`);
}
