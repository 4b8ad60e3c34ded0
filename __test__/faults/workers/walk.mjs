// Fault-suite child: appends the event of one case of ../walk-cases.mjs to a
// session that holds a `generate`, with one implementation, and prints
// {"result": ...}: what the append returned or threw, the files it left, and
// what the same store and a fresh one read afterwards. Timestamps are
// blanked and values digested (sha256 of their canonical encoding), so two
// runs, or a run and a recording, compare as they are.
//
//   node walk.mjs '{"case": NAME, "impl": "native" | "ref", "refPath": FILE, "cwd": DIR}'

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CASES } from '../walk-cases.mjs';
import { encodeValue, canonicalText } from '../../support/encode.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const config = JSON.parse(process.argv[2]);

const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;
const sha256 = (text) => crypto.createHash('sha256').update(text).digest('hex');

async function load() {
  if (config.impl === 'ref') return import(pathToFileURL(config.refPath).href);
  return createRequire(import.meta.url)(path.resolve(here, '..', '..', '..', 'index.js'));
}

/** A snapshot as its phase and the digest of its encoding, timestamps blanked. */
function digest(snapshot) {
  if (snapshot === null) return null;
  return { phase: snapshot.phase, sha256: sha256(canonicalText(encodeValue(snapshot, { digestDeep: true })).replace(ISO, '<ts>')) };
}

function outcome(fn) {
  try {
    return { ok: true, snapshot: digest(fn()) };
  } catch (err) {
    return { ok: false, name: err?.name, message: String(err?.message) };
  }
}

function files(dir) {
  const out = {};
  for (const name of fs.readdirSync(dir).sort()) {
    const text = fs.readFileSync(path.join(dir, name), 'utf8').replace(ISO, '<ts>');
    out[name] = { bytes: Buffer.byteLength(text), sha256: sha256(text) };
  }
  return out;
}

const make = CASES[config.case];
if (!make) throw new Error(`no case ${JSON.stringify(config.case)}`);
const { createLiveSessionStore } = await load();
const store = createLiveSessionStore({ cwd: config.cwd, sessionId: 's' });
store.appendEvent({ type: 'generate', count: 2 });
const append = outcome(() => store.appendEvent(make()));
const result = {
  append,
  files: files(store.rootDir),
  again: outcome(() => store.getSnapshot('s')),
  fresh: outcome(() => createLiveSessionStore({ cwd: config.cwd }).getSnapshot('s')),
};
process.stdout.write(JSON.stringify({ result }) + '\n');
