'use strict';
// `quiver-live vendor`: writes a self-contained copy of this package into a
// folder, for a skill that is copied into projects without node_modules.
//
//   const { vendor } = require('quiver-live-native/vendor');
//   vendor('skill/scripts/live/quiver-live-native', { platforms: ['linux-x64-gnu'], shims: 'skill/scripts/live' });
//
// The folder holds index.mjs and index.cjs (the package's exports), lib/
// (the package's lib/, copied as it is), loader.cjs and platform.cjs (which
// binary fits this process), one binary per platform, and manifest.json (the
// version and each binary's size and sha256, which the loader checks).
// index.cjs makes the API with lib/api.cjs's `create` over the binding
// loader.cjs loads, as the package's index.js does over binding.js: the
// wrapper exists once, in the package's lib/, and is copied here.
//
// With `shims`, the skill's live directory gets the integration:
// session-store.mjs and source-lock.mjs are moved to session-store.js.mjs and
// source-lock.js.mjs, and small modules take their place that export the
// bundle's functions when it loads, else the moved JavaScript ones
// (implementation.mjs makes that choice, once per process).

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { pathToFileURL } = require('node:url');
const { SUPPORTED, platformKey } = require('../platform.js');
const { EXPORTS } = require('../lib/api.cjs');

const PACKAGE_DIR = path.resolve(__dirname, '..');
const NAME = 'quiver-live-native';
const SHIM_DIR = path.join(__dirname, 'shims');
const SHIM_MARKER = 'Written by `quiver-live vendor --shims`';
const BUNDLE_PLACEHOLDER = "const BUNDLE = './quiver-live-native/';";

/** The modules the shims replace, with the names each exports. */
const SHIMMED = Object.entries(EXPORTS).map(([file, names]) => ({ file, moved: file.replace(/\.mjs$/, '.js.mjs'), names }));

class VendorError extends Error {
  constructor(message, code = 'QLN_USAGE') {
    super(message);
    this.name = 'VendorError';
    this.code = code;
  }
}

const isFile = (p) => fs.statSync(p, { throwIfNoEntry: false })?.isFile() ?? false;
const isDir = (p) => fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
const readJson = (p) => JSON.parse(fs.readFileSync(p, 'utf8'));
const binaryName = (key) => `${NAME}.${key}.node`;
const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/**
 * The binaries this package can vendor, by platform: a local build beside
 * the package (`quiver-live-native.<platform>.node`), else an installed
 * `quiver-live-native-<platform>` package of the same version. `skipped`
 * says why an installed package was not taken.
 */
function availableBinaries(packageDir = PACKAGE_DIR) {
  const version = readJson(path.join(packageDir, 'package.json')).version;
  const found = {};
  const skipped = {};
  for (const key of SUPPORTED) {
    const local = path.join(packageDir, binaryName(key));
    if (isFile(local)) {
      found[key] = { path: local, source: 'local build' };
      continue;
    }
    const pkg = `${NAME}-${key}`;
    let manifestPath;
    try {
      manifestPath = require.resolve(`${pkg}/package.json`, { paths: [packageDir] });
    } catch {
      continue;
    }
    const meta = readJson(manifestPath);
    const file = path.join(path.dirname(manifestPath), meta.main || binaryName(key));
    if (meta.version !== version) skipped[key] = `${pkg}@${meta.version} is installed, but this package is ${version}`;
    else if (!isFile(file)) skipped[key] = `${pkg}@${meta.version} is installed without its binary ${path.basename(file)}`;
    else found[key] = { path: file, source: `${pkg}@${meta.version}` };
  }
  return { version, found, skipped };
}

/** The platforms asked for: a list or comma-separated text; `current` and `all` allowed. */
function requestedPlatforms(platforms, found) {
  if (platforms === undefined || platforms === null) {
    const all = SUPPORTED.filter((key) => found[key]);
    if (all.length === 0) {
      throw new VendorError(`no binaries to vendor: none built beside ${PACKAGE_DIR} and no ${NAME}-<platform> package installed (supported: ${SUPPORTED.join(', ')})`, 'QLN_NO_BINARY');
    }
    return all;
  }
  const list = (Array.isArray(platforms) ? platforms : String(platforms).split(','))
    .map((p) => String(p).trim())
    .filter(Boolean)
    .flatMap((p) => (p === 'all' ? SUPPORTED : p === 'current' ? [platformKey()] : [p]));
  if (list.length === 0) throw new VendorError('--platforms names no platform');
  const unknown = list.filter((p) => !SUPPORTED.includes(p));
  if (unknown.length) throw new VendorError(`unknown platform ${unknown.join(', ')}; supported: ${SUPPORTED.join(', ')}`, 'QLN_UNKNOWN_PLATFORM');
  return [...new Set(list)];
}

/** The bundle's CommonJS entry: the package's API over the binary the bundle's loader checks and loads. */
const BUNDLE_CJS = `'use strict';
module.exports = require('./lib/api.cjs').create(require('./loader.cjs'));
`;

/** The bundle's ESM entry: index.cjs through Node's require, so that \`import\` and \`require\` share one instance. */
const BUNDLE_ESM = `import { createRequire } from 'node:module';

const api = createRequire(import.meta.url)('./index.cjs');

export const { ${Object.values(EXPORTS).flat().join(', ')} } = api;
export default api;
`;

/** `text` with its only `from` replaced by `to`; throws when `from` is not there exactly once. */
function replaceOnce(text, from, to, what) {
  const parts = text.split(from);
  if (parts.length !== 2) throw new VendorError(`${what}: expected one \`${from}\`, found ${parts.length - 1}`);
  return parts.join(to);
}

function generatedHeader(version, from) {
  return `// Generated by \`npx ${NAME} vendor\` from ${NAME} ${version}'s ${from}; do not edit (vendor again).\n`;
}

function bundleReadme(version, binaries) {
  return `# ${NAME} ${version}, vendored

Written by \`npx ${NAME} vendor\`; do not edit: run it again to update.

- \`index.mjs\` / \`index.cjs\`: ${Object.entries(EXPORTS).map(([file, names]) => `${names.map((n) => `\`${n}\``).join(', ')} (the API of ${file})`).join(',\n  ')}.
- \`lib/\`: the package's JavaScript, which makes that API over the binary.
- \`loader.cjs\`, \`platform.cjs\`: pick this platform's binary, check its size and sha256
  against \`manifest.json\`, load it; they throw (with a \`code\`) when no good binary is here.
- Binaries: ${binaries.map((b) => `\`${b.platform}\``).join(', ')}.

A binary that passed its check is remembered in \`.<binary>.verified\` (ignored by git).
`;
}

/** Checks `dir` may be (re)written: absent, empty, or an earlier bundle; else needs `force`. */
function checkTarget(dir, force) {
  if (!fs.existsSync(dir)) return;
  if (!isDir(dir)) throw new VendorError(`${dir} exists and is not a directory`, 'QLN_NOT_A_BUNDLE');
  if (force || fs.readdirSync(dir).length === 0) return;
  let manifest = null;
  try { manifest = readJson(path.join(dir, 'manifest.json')); } catch { /* not a bundle */ }
  if (manifest?.name !== NAME) {
    throw new VendorError(`${dir} is not empty and holds no earlier ${NAME} bundle (force, --force on the command line, replaces it)`, 'QLN_NOT_A_BUNDLE');
  }
}

/**
 * Writes the bundle into `dir` and returns what it holds. Options:
 * `platforms` (default: every platform with a binary available), `shims` (a
 * skill's live directory to integrate, see writeShims), `force` (replace a
 * non-empty directory that is no bundle, or shims over changed files).
 * The folder is built beside `dir` and then put in its place, so a process
 * loading it never sees half a bundle.
 */
function vendor(dir, { platforms, shims, force = false, packageDir = PACKAGE_DIR } = {}) {
  if (typeof dir !== 'string' || dir === '') throw new VendorError('vendor: a target directory is required');
  const target = path.resolve(dir);
  const { version, found, skipped } = availableBinaries(packageDir);
  const chosen = requestedPlatforms(platforms, found);
  const missing = chosen.filter((key) => !found[key]);
  if (missing.length) {
    const why = missing.map((key) => `${key} (${skipped[key] ?? `neither ${binaryName(key)} beside the package nor ${NAME}-${key} installed`})`);
    const have = Object.keys(found);
    throw new VendorError(`no binary for ${why.join('; ')}; available here: ${have.length ? have.join(', ') : 'none'}`, 'QLN_NO_BINARY');
  }
  checkTarget(target, force);
  const shimPlan = shims === undefined || shims === null ? null : planShims(path.resolve(shims), target, force);

  const parent = path.dirname(target);
  fs.mkdirSync(parent, { recursive: true });
  // mkdirSync, not mkdtempSync: the folder gets the usual mode (umask), not 0700.
  const staging = path.join(parent, `.${path.basename(target)}.vendor-${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
  fs.mkdirSync(staging);
  const binaries = [];
  try {
    fs.writeFileSync(path.join(staging, 'index.cjs'), generatedHeader(version, 'vendor/index.js') + BUNDLE_CJS);
    fs.writeFileSync(path.join(staging, 'index.mjs'), generatedHeader(version, 'vendor/index.js') + BUNDLE_ESM);
    // The JavaScript is this package's own, as it runs here.
    const copy = (from, to) => fs.writeFileSync(path.join(staging, to), generatedHeader(version, from) + fs.readFileSync(path.join(PACKAGE_DIR, from), 'utf8'));
    fs.mkdirSync(path.join(staging, 'lib'));
    for (const file of fs.readdirSync(path.join(PACKAGE_DIR, 'lib')).filter((f) => f.endsWith('.cjs'))) copy(`lib/${file}`, `lib/${file}`);
    copy('vendor/loader.cjs', 'loader.cjs');
    copy('platform.js', 'platform.cjs');
    for (const key of chosen) {
      const file = binaryName(key);
      fs.copyFileSync(found[key].path, path.join(staging, file));
      const size = fs.statSync(path.join(staging, file)).size;
      binaries.push({ platform: key, file, size, sha256: sha256(path.join(staging, file)), source: found[key].source });
    }
    const manifest = {
      name: NAME,
      version,
      binaries: Object.fromEntries(binaries.map((b) => [b.platform, { file: b.file, size: b.size, sha256: b.sha256 }])),
    };
    fs.writeFileSync(path.join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    fs.writeFileSync(path.join(staging, 'README.md'), bundleReadme(version, binaries));
    fs.writeFileSync(path.join(staging, '.gitignore'), '.*.verified\n*.tmp\n');
    swapInto(staging, target);
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  const report = {
    dir: target,
    version,
    platforms: binaries,
    binaryBytes: binaries.reduce((n, b) => n + b.size, 0),
    totalBytes: treeBytes(target),
    shims: null,
  };
  if (shimPlan) report.shims = applyShims(shimPlan);
  return report;
}

/** Puts the finished `staging` folder at `target`, replacing an earlier one. */
function swapInto(staging, target) {
  if (!fs.existsSync(target)) {
    fs.renameSync(staging, target);
    return;
  }
  const old = `${staging}.old`;
  fs.renameSync(target, old);
  try {
    fs.renameSync(staging, target);
  } catch (error) {
    fs.renameSync(old, target);
    throw error;
  }
  fs.rmSync(old, { recursive: true, force: true });
}

function treeBytes(dir) {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    total += entry.isDirectory() ? treeBytes(p) : fs.statSync(p).size;
  }
  return total;
}

// ---------------------------------------------------------------------------
// Shims

/** How implementation.mjs names the bundle: a relative URL from the live dir, ending in `/`. */
function bundleSpecifier(liveDir, bundleDir) {
  let rel = path.relative(liveDir, bundleDir).split(path.sep).join('/');
  if (rel === '') throw new VendorError('the bundle cannot be the live directory itself', 'QLN_SHIMS_REFUSED');
  if (!rel.startsWith('../')) rel = `./${rel}`;
  return `${rel}/`;
}

/** The names an ES module exports, by importing it in a child process. */
function exportedNames(file) {
  const script = `const m = await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(JSON.stringify(Object.keys(m)));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new VendorError(`cannot import ${file} to check its exports: ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' ')}`, 'QLN_SHIMS_REFUSED');
  return JSON.parse(r.stdout);
}

/**
 * What writeShims would do, checked before anything is written: each module
 * is there (or already shimmed with its JavaScript moved beside it), and
 * exports exactly the names the bundle provides.
 */
function planShims(liveDir, bundleDir, force) {
  if (!isDir(liveDir)) throw new VendorError(`no live directory ${liveDir}`, 'QLN_SHIMS_REFUSED');
  const steps = [];
  for (const spec of SHIMMED) {
    const file = path.join(liveDir, spec.file);
    const moved = path.join(liveDir, spec.moved);
    const current = isFile(file) ? fs.readFileSync(file, 'utf8') : null;
    const shimmed = current !== null && current.includes(SHIM_MARKER);
    if (current === null) throw new VendorError(`no ${spec.file} in ${liveDir}`, 'QLN_SHIMS_REFUSED');
    if (shimmed && !isFile(moved)) throw new VendorError(`${file} is a shim, but the JavaScript module ${spec.moved} is not beside it`, 'QLN_SHIMS_REFUSED');
    if (!shimmed && isFile(moved) && fs.readFileSync(moved, 'utf8') !== current && !force) {
      throw new VendorError(`${moved} exists and differs from ${spec.file} (force, --force on the command line, replaces it with ${spec.file})`, 'QLN_SHIMS_REFUSED');
    }
    const js = shimmed ? moved : file;
    const names = exportedNames(js);
    const extra = names.filter((n) => !spec.names.includes(n));
    const absent = spec.names.filter((n) => !names.includes(n));
    if (extra.length || absent.length) {
      throw new VendorError(`${js} exports ${names.join(', ') || 'nothing'}; the shim provides ${spec.names.join(', ')}` +
        `${extra.length ? ` (not: ${extra.join(', ')})` : ''}${absent.length ? ` (missing there: ${absent.join(', ')})` : ''}`, 'QLN_SHIMS_REFUSED');
    }
    steps.push({ ...spec, path: file, movedPath: moved, shimmed });
  }
  return { liveDir, specifier: bundleSpecifier(liveDir, bundleDir), steps };
}

/**
 * Integrates a vendored bundle into a skill's live directory: moves
 * session-store.mjs and source-lock.mjs to *.js.mjs (unless already done),
 * writes the two shims and implementation.mjs. Running it again updates the
 * shims and leaves the moved JavaScript alone.
 */
function writeShims(liveDir, bundleDir, { force = false } = {}) {
  return applyShims(planShims(path.resolve(liveDir), path.resolve(bundleDir), force));
}

function applyShims(plan) {
  const moved = [];
  const written = [];
  for (const step of plan.steps) {
    if (!step.shimmed) {
      fs.renameSync(step.path, step.movedPath);
      moved.push({ from: step.path, to: step.movedPath });
    }
    writeAtomic(step.path, fs.readFileSync(path.join(SHIM_DIR, step.file), 'utf8'));
    written.push(step.path);
  }
  const selector = replaceOnce(fs.readFileSync(path.join(SHIM_DIR, 'implementation.mjs'), 'utf8'), BUNDLE_PLACEHOLDER,
    `const BUNDLE = ${JSON.stringify(plan.specifier)};`, 'shims/implementation.mjs');
  const selectorPath = path.join(plan.liveDir, 'implementation.mjs');
  writeAtomic(selectorPath, selector);
  written.push(selectorPath);
  return { liveDir: plan.liveDir, bundle: plan.specifier, moved, written };
}

function writeAtomic(file, text) {
  const staging = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(staging, text);
  fs.renameSync(staging, file);
}

module.exports = { vendor, writeShims, VendorError };
