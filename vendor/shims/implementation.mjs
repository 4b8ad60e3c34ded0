// Which implementation of the live session store and source lock runs here:
// quiver-live-native's vendored bundle when it loads, else the JavaScript
// modules beside this file (session-store.js.mjs, source-lock.js.mjs).
// Written by `quiver-live vendor --shims`; session-store.mjs and
// source-lock.mjs import it, so the choice is made once per process, and
// nothing is printed.
//
//   QUIVER_LIVE_NATIVE=0        always the JavaScript modules
//   QUIVER_LIVE_NATIVE=1        the bundle, or fail at import when it cannot load
//   unset                       the bundle when it loads, else JavaScript
//   QUIVER_LIVE_NATIVE_TRACE=F  append one JSON line per process to file F
//
// `node implementation.mjs` prints the choice and why, as JSON.
const BUNDLE = './quiver-live-native/';

// node:fs through process.getBuiltinModule: importing it as an ES module
// costs an extra millisecond or so (its namespace loads fs/promises).
const fs = process.getBuiltinModule?.('node:fs') ?? (await import('node:fs')).default;
const bundleUrl = (name = '') => new URL(BUNDLE + name, import.meta.url);
const bundlePath = () => process.getBuiltinModule?.('node:url').fileURLToPath(bundleUrl()) ?? bundleUrl().href;
const setting = (process.env.QUIVER_LIVE_NATIVE ?? '').trim().toLowerCase();
const forced = ['0', 'false', 'off', 'no'].includes(setting) ? 'js' : ['1', 'true', 'on', 'yes'].includes(setting) ? 'native' : null;

let loaded = null;
let reason;
if (forced === 'js') {
  reason = `QUIVER_LIVE_NATIVE=${process.env.QUIVER_LIVE_NATIVE}`;
} else {
  try {
    loaded = await import(bundleUrl('index.mjs'));
    reason = forced ? `QUIVER_LIVE_NATIVE=${process.env.QUIVER_LIVE_NATIVE}` : 'the bundle loaded';
  } catch (error) {
    reason = fs.existsSync(bundleUrl('index.mjs')) ? String(error?.message ?? error) : `no bundle at ${bundlePath()}`;
    if (forced === 'native') {
      throw new Error(`QUIVER_LIVE_NATIVE=${process.env.QUIVER_LIVE_NATIVE}, but quiver-live-native cannot load: ${reason}`, { cause: error });
    }
  }
}

/** The bundle's API (the four names of the JS modules), or null when the JS modules run. */
export const native = loaded;
/** 'native' or 'js'. */
export const implementation = loaded ? 'native' : 'js';

/** The choice, why it was made, and what the bundle holds. */
export function describeImplementation() {
  const out = { implementation, reason, QUIVER_LIVE_NATIVE: process.env.QUIVER_LIVE_NATIVE ?? null, bundle: bundlePath(), version: null, platforms: [], platform: null };
  try {
    const manifest = JSON.parse(fs.readFileSync(bundleUrl('manifest.json'), 'utf8'));
    out.version = manifest.version;
    out.platforms = Object.keys(manifest.binaries);
  } catch {
    // no bundle, or not readable: the reason says which
  }
  try {
    out.platform = process.getBuiltinModule('node:module').createRequire(import.meta.url)(BUNDLE + 'platform.cjs').platformKey();
  } catch {
    // no bundle (or a Node without process.getBuiltinModule)
  }
  return out;
}

if (process.env.QUIVER_LIVE_NATIVE_TRACE) {
  try {
    fs.appendFileSync(process.env.QUIVER_LIVE_NATIVE_TRACE, JSON.stringify({ pid: process.pid, implementation, reason, script: process.argv[1] ?? null }) + '\n');
  } catch {
    // a debugging aid only
  }
}

if (process.argv[1]?.endsWith('implementation.mjs')) {
  console.log(JSON.stringify(describeImplementation(), null, 2));
}
