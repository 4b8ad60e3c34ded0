'use strict';
// Loads this platform's compiled addon: the file beside this one in a local
// build or a vendored bundle, else the `quiver-live-native-<platform>`
// package npm installed for it.

const fs = require('node:fs');
const path = require('node:path');

const { SUPPORTED, platformKey } = require('./platform.js');

const BINARY = 'quiver-live-native';

function load() {
  const key = platformKey();
  const local = path.join(__dirname, `${BINARY}.${key}.node`);
  if (fs.existsSync(local)) return require(local);
  if (!SUPPORTED.includes(key)) {
    throw new Error(
      `quiver-live-native has no binary for ${process.platform} ${process.arch} (${key}); ` +
        `supported: ${SUPPORTED.join(', ')}. Keep using the JavaScript session-store.mjs and source-lock.mjs there.`,
    );
  }
  try {
    return require(`${BINARY}-${key}`);
  } catch (err) {
    const why = new Error(
      `quiver-live-native could not load its binary for ${key}: the package ${BINARY}-${key} ` +
        `is missing or broken (${err.message}). Reinstall without --no-optional / --omit=optional, ` +
        `or keep using the JavaScript session-store.mjs and source-lock.mjs.`,
    );
    why.cause = err;
    throw why;
  }
}

module.exports = load();
module.exports.SUPPORTED_PLATFORMS = SUPPORTED;
