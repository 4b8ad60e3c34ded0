'use strict';
// Loads this platform's compiled addon: the file beside this one in a local
// build or a vendored bundle, else the `quiver-live-native-<platform>`
// package npm installed for it.
//
// QUIVER_LIVE_NATIVE_BINARY=/path/to/file.node loads that file instead. It is
// for testing a build whose platform key this loader would not pick (the
// windows-gnu test build, a cross build run under emulation); a release never
// needs it.

const fs = require('node:fs');
const path = require('node:path');

const { SUPPORTED, platformKey } = require('./platform.js');

const BINARY = 'quiver-live-native';

/** How to do without this package where it cannot load. */
const FALLBACK =
  "Keep quiver-cli's own JavaScript modules there: leave skill/scripts/live/session-store.mjs and " +
  'source-lock.mjs as they ship instead of re-exporting quiver-live-native (or import them when loading it throws).';

function fail(message, code, cause) {
  const err = new Error(message, cause ? { cause } : undefined);
  err.code = code;
  return err;
}

function load() {
  const chosen = process.env.QUIVER_LIVE_NATIVE_BINARY;
  if (chosen) {
    try {
      return require(path.resolve(chosen));
    } catch (err) {
      throw fail(`quiver-live-native could not load QUIVER_LIVE_NATIVE_BINARY=${chosen}: ${err.message}`, 'ERR_QUIVER_LIVE_NATIVE_BINARY', err);
    }
  }
  const key = platformKey();
  const local = path.join(__dirname, `${BINARY}.${key}.node`);
  if (fs.existsSync(local)) return require(local);
  if (!SUPPORTED.includes(key)) {
    throw fail(
      `quiver-live-native has no binary for ${process.platform} ${process.arch} (${key}). ` +
        `Supported: ${SUPPORTED.join(', ')}. ${FALLBACK}`,
      'ERR_QUIVER_LIVE_NATIVE_UNSUPPORTED_PLATFORM',
    );
  }
  try {
    return require(installedBinary(key) ?? `${BINARY}-${key}`);
  } catch (err) {
    throw fail(
      `quiver-live-native could not load its binary for ${process.platform} ${process.arch}: the package ` +
        `${BINARY}-${key} is missing or broken (${err.message.split('\n')[0]}). Reinstall with optional dependencies ` +
        `(no --no-optional or --omit=optional). ${FALLBACK}`,
      'ERR_QUIVER_LIVE_NATIVE_BINARY',
      err,
    );
  }
}

/**
 * The platform package's binary where npm, pnpm and Yarn's node_modules
 * linker put it, beside this package in the same node_modules folder, or
 * null. Loaded by its path, it skips Node's package resolution, whose first
 * use costs a short helper process about 1 ms. Node's resolver looks in
 * this package's own node_modules first: a nested copy there, or a layout
 * without node_modules (Yarn PnP), is left to `require`.
 */
function installedBinary(key) {
  const pkg = `${BINARY}-${key}`;
  if (path.basename(path.dirname(__dirname)) !== 'node_modules') return null;
  if (fs.existsSync(path.join(__dirname, 'node_modules', pkg))) return null;
  const file = path.join(__dirname, '..', pkg, `${BINARY}.${key}.node`);
  return fs.existsSync(file) ? file : null;
}

module.exports = load();
module.exports.SUPPORTED_PLATFORMS = SUPPORTED;
