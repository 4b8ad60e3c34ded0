'use strict';
// The binary loader of a vendored quiver-live-native bundle (written by
// `quiver-live vendor`): picks this platform's binary from manifest.json,
// checks its size and sha256 against the manifest, then loads it. It throws
// an Error with a `code` (QLN_NO_BINARY, QLN_MISSING, QLN_CHECKSUM, QLN_LOAD) when no
// good binary is here; the skill's implementation.mjs catches that and keeps
// the JavaScript modules.
//
// Hashing costs milliseconds (node:crypto alone takes 3-6 ms to load), so a
// binary that passed is remembered in `.<binary>.verified` beside it: its
// sha256 with the file's device, inode, size, mtime and ctime. Any write to
// the binary, a copy or a replacement changes those, and the next load hashes
// it again. Where the folder is read-only, every load hashes.

const fs = require('node:fs');
const path = require('node:path');
const { platformKey } = require('./platform.cjs');

function fail(code, message) {
  const error = new Error(`quiver-live-native bundle ${__dirname}: ${message}`);
  error.code = code;
  return error;
}

function identity(stat) {
  return [stat.dev, stat.ino, stat.size, stat.mtimeNs, stat.ctimeNs].join(':');
}

function sha256(file) {
  return require('node:crypto').createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

function check(file, entry) {
  let stat;
  try {
    stat = fs.statSync(file, { bigint: true });
  } catch (error) {
    throw fail('QLN_MISSING', `${entry.file} is missing (${error.code ?? error.message})`);
  }
  if (stat.size !== BigInt(entry.size)) {
    throw fail('QLN_CHECKSUM', `${entry.file} is ${stat.size} bytes, the manifest says ${entry.size}: damaged or replaced; vendor the bundle again`);
  }
  const stampFile = path.join(__dirname, `.${entry.file}.verified`);
  const stamp = `${entry.sha256} ${identity(stat)}\n`;
  try {
    // utf8 takes Node's one-call read (0.2-0.4 ms less than latin1 in a
    // fresh process); the stamp is ASCII, so a damaged one still differs.
    if (fs.readFileSync(stampFile, 'utf8') === stamp) return;
  } catch {
    // not checked here yet
  }
  const actual = sha256(file);
  if (actual !== entry.sha256) {
    throw fail('QLN_CHECKSUM', `${entry.file} has sha256 ${actual}, the manifest says ${entry.sha256}: damaged or replaced; vendor the bundle again`);
  }
  const staging = `${stampFile}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(staging, stamp);
    fs.renameSync(staging, stampFile);
  } catch {
    try { fs.unlinkSync(staging); } catch { /* never written */ }
  }
}

function load() {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, 'manifest.json'), 'utf8'));
  const key = platformKey();
  const entry = manifest.binaries[key];
  if (!entry) {
    const have = Object.keys(manifest.binaries);
    throw fail('QLN_NO_BINARY', `no binary for ${key} (this bundle has ${have.length ? have.join(', ') : 'none'})`);
  }
  const file = path.join(__dirname, entry.file);
  check(file, entry);
  try {
    return require(file);
  } catch (error) {
    const why = fail('QLN_LOAD', `${entry.file} did not load: ${error.message}`);
    why.cause = error;
    throw why;
  }
}

module.exports = load();
