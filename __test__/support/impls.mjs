// Loading the two implementations under comparison.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const PACKAGE_DIR = path.resolve(here, '..', '..');

/**
 * Where the reference session-store.mjs is, from QUIVER_REFERENCE_DIR (a
 * checkout of pbakaus/impeccable, its skill/scripts/live dir, or the file).
 * Returns null when the variable is unset.
 */
export function referenceModulePath(dir = process.env.QUIVER_REFERENCE_DIR) {
  if (!dir) return null;
  const candidates = [
    path.join(dir, 'skill', 'scripts', 'live', 'session-store.mjs'),
    path.join(dir, 'scripts', 'live', 'session-store.mjs'),
    path.join(dir, 'live', 'session-store.mjs'),
    path.join(dir, 'session-store.mjs'),
    dir,
  ];
  for (const file of candidates) {
    try {
      if (fs.statSync(file).isFile()) return path.resolve(file);
    } catch { /* next */ }
  }
  throw new Error(`QUIVER_REFERENCE_DIR=${dir}: no session-store.mjs found (tried ${candidates.join(', ')})`);
}

/**
 * Import the reference module. `instance` gives a separate module instance
 * (a distinct URL), so the reference can be compared with itself.
 */
export async function loadReference(instance = 0) {
  const file = referenceModulePath();
  if (!file) return null;
  const url = pathToFileURL(file).href + (instance ? `?instance=${instance}` : '');
  const mod = await import(url);
  if (typeof mod.createLiveSessionStore !== 'function') {
    throw new Error(`${file} does not export createLiveSessionStore`);
  }
  return mod.createLiveSessionStore;
}

/** The package's createLiveSessionStore, loaded the way CommonJS users load it. */
export function loadPackage(entry = path.join(PACKAGE_DIR, 'index.js')) {
  const require = createRequire(path.join(PACKAGE_DIR, 'package.json'));
  const mod = require(entry);
  if (typeof mod.createLiveSessionStore !== 'function') {
    throw new Error(`${entry} does not export createLiveSessionStore`);
  }
  return mod.createLiveSessionStore;
}
