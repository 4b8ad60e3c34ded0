// `quiver-live vendor` (vendor/index.js): the self-contained bundle, its
// loader's checks, and the shims that make a skill's session-store.mjs and
// source-lock.mjs choose between the bundle and their JavaScript. The live
// directory is a stand-in written here; with QUIVER_REFERENCE_DIR set, the
// reference's own skill/scripts is integrated too and live-status.mjs run.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { vendor, writeShims, VendorError } = require('../vendor/index.js');
const { platformKey, SUPPORTED } = require('../platform.js');
const VERSION = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8')).version;
const KEY = platformKey();
const BINARY = `quiver-live-native.${KEY}.node`;
const HAVE_BINARY = fs.existsSync(path.join(PACKAGE_DIR, BINARY));
const REFERENCE = process.env.QUIVER_REFERENCE_DIR;
const needsBinary = HAVE_BINARY ? {} : { skip: `no local build ${BINARY} (npm run build)` };

const scratch = [];
process.on('exit', () => { for (const d of scratch) fs.rmSync(d, { recursive: true, force: true }); });
function tmp(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `qln-vendor-${label}-`));
  scratch.push(dir);
  return dir;
}

const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Runs `node` with `args` ({ code, stdout, stderr }); an `undefined` in `env` unsets that variable. */
function node(args, { env = {}, cwd } = {}) {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 30_000, cwd, env: { ...process.env, QUIVER_LIVE_NATIVE: undefined, QUIVER_LIVE_NATIVE_TRACE: undefined, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const esm = (body, options) => node(['--input-type=module', '-e', body], options);

/** What a bundle's index.mjs import gives in a fresh process: exports, or the error's code and message. */
function tryBundle(dir) {
  const r = esm(`
    try {
      const m = await import(${JSON.stringify(pathToFileURL(path.join(dir, 'index.mjs')).href)});
      console.log(JSON.stringify({ keys: Object.keys(m).sort() }));
    } catch (error) {
      console.log(JSON.stringify({ code: error.code, message: error.message }));
    }`);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/**
 * A package dir of this version with `binaries` (platform -> bytes) beside it
 * instead of the real build (vendor takes the version and the binaries from
 * it, the JavaScript from this package).
 */
function fakePackage(binaries, extra = () => {}) {
  const dir = tmp('pkg');
  fs.copyFileSync(path.join(PACKAGE_DIR, 'package.json'), path.join(dir, 'package.json'));
  for (const [key, bytes] of Object.entries(binaries)) fs.writeFileSync(path.join(dir, `quiver-live-native.${key}.node`), bytes);
  extra(dir);
  return dir;
}

test("installers reach it as require('quiver-live-native/vendor') and import { vendor } from it", (t) => {
  const consumer = tmp('consumer');
  fs.mkdirSync(path.join(consumer, 'node_modules'));
  // A junction on Windows: a directory symlink there needs a privilege.
  try {
    fs.symlinkSync(PACKAGE_DIR, path.join(consumer, 'node_modules', 'quiver-live-native'), process.platform === 'win32' ? 'junction' : 'dir');
  } catch (error) {
    // wine 8 creates no junctions (ENOTSUP).
    if (error.code !== 'ENOTSUP') throw error;
    t.skip(`this file system cannot link a directory (${error.code}), which the test installs the package with`);
    return;
  }
  const r = esm(`
    import { createRequire } from 'node:module';
    import { vendor, writeShims } from 'quiver-live-native/vendor';
    const cjs = createRequire(import.meta.url)('quiver-live-native/vendor');
    console.log(JSON.stringify([typeof vendor, typeof writeShims, cjs.vendor === vendor]));`, { cwd: consumer });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), ['function', 'function', true]);
});

describe('vendor: the bundle', () => {
  test('a self-contained folder: the four exports, this platform binary, a manifest with version, size and sha256', needsBinary, () => {
    const dir = path.join(tmp('bundle'), 'quiver-live-native');
    const report = vendor(dir);
    assert.equal(report.version, VERSION);
    assert.deepEqual(report.platforms.map((b) => b.platform), [KEY]);
    const files = fs.readdirSync(dir).sort();
    assert.deepEqual(files, ['.gitignore', 'README.md', BINARY, 'index.cjs', 'index.mjs', 'lib', 'loader.cjs', 'manifest.json', 'platform.cjs'].sort());
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    assert.deepEqual(manifest, {
      name: 'quiver-live-native', version: VERSION,
      binaries: { [KEY]: { file: BINARY, size: fs.statSync(path.join(PACKAGE_DIR, BINARY)).size, sha256: sha256(path.join(PACKAGE_DIR, BINARY)) } },
    });
    assert.equal(report.binaryBytes, manifest.binaries[KEY].size);
    assert.ok(report.totalBytes > report.binaryBytes && report.totalBytes < report.binaryBytes + 64 * 1024, `${report.totalBytes}`);

    // One copy of the wrapper: lib/ is the package's lib/ as it is (under a
    // header), and index.cjs makes the API with it over the bundle's loader.
    const body = (file) => {
      const [header, ...rest] = fs.readFileSync(path.join(dir, file), 'utf8').split('\n');
      assert.match(header, /^\/\/ Generated by `npx quiver-live-native vendor` from quiver-live-native \S+'s \S+; do not edit/, file);
      return rest.join('\n');
    };
    const lib = fs.readdirSync(path.join(PACKAGE_DIR, 'lib')).sort();
    assert.deepEqual(fs.readdirSync(path.join(dir, 'lib')).sort(), lib);
    for (const f of lib) assert.equal(body(`lib/${f}`), fs.readFileSync(path.join(PACKAGE_DIR, 'lib', f), 'utf8'), f);
    assert.equal(body('index.cjs'), "'use strict';\nmodule.exports = require('./lib/api.cjs').create(require('./loader.cjs'));\n");
    assert.equal(body('platform.cjs'), fs.readFileSync(path.join(PACKAGE_DIR, 'platform.js'), 'utf8'));
    assert.equal(body('loader.cjs'), fs.readFileSync(path.join(PACKAGE_DIR, 'vendor', 'loader.cjs'), 'utf8'));
  });

  test('works copied anywhere without node_modules, through import and require, and loads nothing of the package', needsBinary, () => {
    const made = path.join(tmp('made'), 'b');
    vendor(made);
    // A copy elsewhere, as an installer copies a skill folder.
    const dir = path.join(tmp('copied'), 'skill', 'quiver-live-native');
    fs.cpSync(made, dir, { recursive: true });
    const project = tmp('project');
    fs.mkdirSync(path.join(project, '.git'));
    const r = esm(`
      import { createRequire } from 'node:module';
      const m = await import(${JSON.stringify(pathToFileURL(path.join(dir, 'index.mjs')).href)});
      const c = createRequire(import.meta.url)(${JSON.stringify(path.join(dir, 'index.cjs'))});
      const store = m.createLiveSessionStore({ cwd: ${JSON.stringify(project)}, sessionId: 's1' });
      store.appendEvent({ type: 'generate', count: 2 });
      const locked = m.withSourceLockSync('a.css', 'me', () => 'ran', { cwd: ${JSON.stringify(project)} });
      console.log(JSON.stringify({
        esm: Object.keys(m).sort(), cjs: Object.keys(c).sort(), same: c === m.default,
        phase: c.createLiveSessionStore({ cwd: ${JSON.stringify(project)} }).getSnapshot('s1').phase,
        fenced: m.GENERATION_FENCED_PHASES.has('completed'), locked,
        lock: m.sourceLockPath('a.css', ${JSON.stringify(project)}).startsWith(${JSON.stringify(path.join(project, '.impeccable', 'live', 'locks'))}),
        loaded: Object.keys(createRequire(import.meta.url).cache).filter((f) => f.startsWith(${JSON.stringify(PACKAGE_DIR + path.sep)})),
      }));`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.deepEqual(JSON.parse(r.stdout), {
      esm: ['GENERATION_FENCED_PHASES', 'createLiveSessionStore', 'default', 'sourceLockPath', 'withSourceLockSync'],
      cjs: ['GENERATION_FENCED_PHASES', 'createLiveSessionStore', 'sourceLockPath', 'withSourceLockSync'],
      same: true, phase: 'generate_requested', fenced: true, locked: 'ran', lock: true, loaded: [],
    });
  });

  test('the loader checks the binary: changed bytes, another size, a missing file, a platform the bundle lacks', needsBinary, () => {
    const dir = path.join(tmp('checks'), 'b');
    vendor(dir);
    const bin = path.join(dir, BINARY);
    const good = fs.readFileSync(bin);
    const stamp = path.join(dir, `.${BINARY}.verified`);
    assert.ok(!fs.existsSync(stamp));
    assert.ok(tryBundle(dir).keys, 'a good bundle loads');
    // The first load checked the sha256 and remembered it for this file.
    assert.match(fs.readFileSync(stamp, 'latin1'), new RegExp(`^${sha256(bin)} \\d+:\\d+:${good.length}:\\d+:\\d+\\n$`));
    assert.ok(tryBundle(dir).keys, 'loads again, from the stamp');

    // One byte changed in place, same size: the stamp no longer matches the file, so it is hashed again.
    const flipped = Buffer.from(good);
    flipped[flipped.length >> 1] ^= 0xff;
    fs.writeFileSync(bin, flipped);
    let r = tryBundle(dir);
    assert.equal(r.code, 'QLN_CHECKSUM');
    assert.match(r.message, new RegExp(`${BINARY} has sha256 ${sha256(bin)}, the manifest says ${sha256(path.join(PACKAGE_DIR, BINARY))}: damaged or replaced`));
    // A stamp claiming the bad file is fine is not believed either: it must name the manifest's sha256.
    const st = fs.statSync(bin, { bigint: true });
    fs.writeFileSync(stamp, `${sha256(bin)} ${[st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs].join(':')}\n`);
    assert.equal(tryBundle(dir).code, 'QLN_CHECKSUM');

    fs.writeFileSync(bin, good.subarray(0, 4096));
    r = tryBundle(dir);
    assert.equal(r.code, 'QLN_CHECKSUM');
    assert.match(r.message, /is 4096 bytes, the manifest says \d+/);
    fs.rmSync(bin);
    assert.equal(tryBundle(dir).code, 'QLN_MISSING');
    fs.writeFileSync(bin, good);
    assert.ok(tryBundle(dir).keys, 'the good bytes load again');

    const manifestPath = path.join(dir, 'manifest.json');
    const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
    manifest.binaries = { 'darwin-arm64': manifest.binaries[KEY] };
    fs.writeFileSync(manifestPath, JSON.stringify(manifest));
    r = tryBundle(dir);
    assert.equal(r.code, 'QLN_NO_BINARY');
    assert.match(r.message, new RegExp(`no binary for ${KEY} \\(this bundle has darwin-arm64\\)`));
  });

  test('takes every binary it finds (local builds and installed platform packages of the same version), and fails clearly for one it lacks', () => {
    const others = SUPPORTED.filter((k) => k !== KEY);
    const [a, b, c] = others;
    const pkg = fakePackage({ [a]: 'binary a' }, (dir) => {
      const install = (key, version) => {
        const p = path.join(dir, 'node_modules', `quiver-live-native-${key}`);
        fs.mkdirSync(p, { recursive: true });
        fs.writeFileSync(path.join(p, 'package.json'), JSON.stringify({ name: `quiver-live-native-${key}`, version, main: `quiver-live-native.${key}.node` }));
        fs.writeFileSync(path.join(p, `quiver-live-native.${key}.node`), `binary ${key}`);
      };
      install(b, VERSION);
      install(c, '0.0.0-other');
    });
    const out = path.join(tmp('many'), 'b');
    const report = vendor(out, { packageDir: pkg });
    assert.deepEqual(report.platforms.map((p) => [p.platform, p.source]).sort(), [[a, 'local build'], [b, `quiver-live-native-${b}@${VERSION}`]].sort());
    for (const p of report.platforms) assert.equal(p.sha256, sha256(path.join(out, p.file)));

    assert.deepEqual(vendor(out, { packageDir: pkg, platforms: b }).platforms.map((p) => p.platform), [b]);
    const refuse = (platforms, code, pattern) => assert.throws(() => vendor(out, { packageDir: pkg, platforms }), (e) => e instanceof VendorError && e.code === code && pattern.test(e.message));
    refuse(`${a},${c}`, 'QLN_NO_BINARY', new RegExp(`no binary for ${c} \\(quiver-live-native-${c}@0\\.0\\.0-other is installed, but this package is ${VERSION.replace(/\./g, '\\.')}\\); available here: `));
    refuse('all', 'QLN_NO_BINARY', /no binary for /);
    refuse('vax-vms', 'QLN_UNKNOWN_PLATFORM', /unknown platform vax-vms; supported: /);
    refuse(' , ', 'QLN_USAGE', /names no platform/);
    assert.throws(() => vendor(out, { packageDir: fakePackage({}) }), (e) => e.code === 'QLN_NO_BINARY' && /no binaries to vendor/.test(e.message));
    // A refused run left the earlier bundle as it was.
    assert.deepEqual(Object.keys(JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')).binaries), [b]);
  });

  test('replaces an earlier bundle, refuses a folder holding something else unless forced, and leaves no staging folder', () => {
    const pkg = fakePackage({ [KEY]: 'one' });
    const parent = tmp('replace');
    const out = path.join(parent, 'b');
    vendor(out, { packageDir: pkg });
    fs.writeFileSync(path.join(pkg, `quiver-live-native.${KEY}.node`), 'two');
    vendor(out, { packageDir: pkg });
    assert.equal(fs.readFileSync(path.join(out, `quiver-live-native.${KEY}.node`), 'utf8'), 'two');
    const other = path.join(parent, 'other');
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, 'notes.txt'), 'mine');
    assert.throws(() => vendor(other, { packageDir: pkg }), (e) => e.code === 'QLN_NOT_A_BUNDLE');
    assert.equal(fs.readFileSync(path.join(other, 'notes.txt'), 'utf8'), 'mine');
    vendor(other, { packageDir: pkg, force: true });
    assert.ok(!fs.existsSync(path.join(other, 'notes.txt')));
    assert.deepEqual(fs.readdirSync(parent).sort(), ['b', 'other']);
  });
});

// ---------------------------------------------------------------------------
// The shims

/** A skill's live dir with JavaScript stand-ins that say they are the JavaScript modules. */
function standInLive() {
  const scripts = path.join(tmp('skill'), 'scripts');
  const live = path.join(scripts, 'live');
  fs.mkdirSync(live, { recursive: true });
  fs.writeFileSync(path.join(live, 'session-store.mjs'), `// the JavaScript store
export const GENERATION_FENCED_PHASES = new Set(['js']);
export function createLiveSessionStore() { return { implementation: 'js' }; }
`);
  fs.writeFileSync(path.join(live, 'source-lock.mjs'), `// the JavaScript lock
export function sourceLockPath() { return 'js'; }
export function withSourceLockSync(file, owner, fn) { return fn(); }
`);
  return live;
}

/** A process importing both shims: what each exports and which implementation.mjs chose. */
function runShims(live, env = {}) {
  const url = (f) => JSON.stringify(pathToFileURL(path.join(live, f)).href);
  return esm(`
    const store = await import(${url('session-store.mjs')});
    const lock = await import(${url('source-lock.mjs')});
    const choice = await import(${url('implementation.mjs')});
    console.log(JSON.stringify({
      implementation: choice.implementation,
      store: [...store.GENERATION_FENCED_PHASES].includes('js') ? 'js' : 'native',
      lock: lock.sourceLockPath('a.css', process.cwd()) === 'js' ? 'js' : 'native',
      same: choice.native ? store.createLiveSessionStore === choice.native.createLiveSessionStore && lock.withSourceLockSync === choice.native.withSourceLockSync : null,
      reason: choice.describeImplementation().reason,
    }));`, { env });
}

describe('vendor --shims: the skill keeps its JavaScript and chooses once per process', () => {
  test('native when the bundle loads; JavaScript when it is gone, corrupt, or QUIVER_LIVE_NATIVE=0; =1 fails loudly', needsBinary, () => {
    const live = standInLive();
    const bundle = path.join(live, 'quiver-live-native');
    const report = vendor(bundle, { shims: live });
    assert.deepEqual(report.shims.moved.map((m) => path.basename(m.to)), ['session-store.js.mjs', 'source-lock.js.mjs']);
    assert.deepEqual(fs.readdirSync(live).sort(), ['implementation.mjs', 'quiver-live-native', 'session-store.js.mjs', 'session-store.mjs', 'source-lock.js.mjs', 'source-lock.mjs']);
    assert.match(fs.readFileSync(path.join(live, 'session-store.js.mjs'), 'utf8'), /the JavaScript store/);

    const trace = path.join(tmp('trace'), 'trace.jsonl');
    const expect = (env, implementation, reason) => {
      const r = runShims(live, { QUIVER_LIVE_NATIVE_TRACE: trace, ...env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '', 'nothing printed in normal use');
      const got = JSON.parse(r.stdout);
      assert.deepEqual([got.implementation, got.store, got.lock], [implementation, implementation, implementation], JSON.stringify(env));
      if (implementation === 'native') assert.equal(got.same, true);
      assert.match(got.reason, reason);
    };
    expect({}, 'native', /^the bundle loaded$/);
    expect({ QUIVER_LIVE_NATIVE: '0' }, 'js', /^QUIVER_LIVE_NATIVE=0$/);
    expect({ QUIVER_LIVE_NATIVE: '1' }, 'native', /^QUIVER_LIVE_NATIVE=1$/);
    const bin = path.join(bundle, BINARY);
    const good = fs.readFileSync(bin);
    fs.writeFileSync(bin, Buffer.concat([good.subarray(0, 64), Buffer.alloc(good.length - 64, 0x5a)]));
    expect({}, 'js', /has sha256 [0-9a-f]{64}, the manifest says/);
    fs.writeFileSync(bin, good);
    const away = `${bundle}.away`;
    fs.renameSync(bundle, away);
    expect({}, 'js', /^no bundle at /);
    const loud = runShims(live, { QUIVER_LIVE_NATIVE: '1' });
    assert.notEqual(loud.code, 0);
    assert.match(loud.stderr, /QUIVER_LIVE_NATIVE=1, but quiver-live-native cannot load: no bundle at /);
    fs.renameSync(away, bundle);

    // One line per process: both shims shared one choice.
    const lines = fs.readFileSync(trace, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.implementation), ['native', 'js', 'native', 'js', 'js']);
    assert.ok(lines.every((l) => Number.isInteger(l.pid) && typeof l.reason === 'string'));
  });

  test('`node implementation.mjs` prints the choice, the bundle version and platforms', needsBinary, () => {
    const live = standInLive();
    vendor(path.join(live, 'quiver-live-native'), { shims: live });
    const r = node([path.join(live, 'implementation.mjs')]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      implementation: 'native', reason: 'the bundle loaded', QUIVER_LIVE_NATIVE: null, bundle: path.join(live, 'quiver-live-native') + path.sep,
      version: VERSION, platforms: [KEY], platform: KEY,
    });
    assert.equal(JSON.parse(node([path.join(live, 'implementation.mjs')], { env: { QUIVER_LIVE_NATIVE: 'off' } }).stdout).implementation, 'js');
  });

  test('a bundle elsewhere: implementation.mjs names it relative to the live dir', () => {
    const live = standInLive();
    const bundle = path.join(path.dirname(path.dirname(live)), 'vendor', 'qln');
    vendor(bundle, { packageDir: fakePackage({ [KEY]: 'x' }), shims: live });
    assert.match(fs.readFileSync(path.join(live, 'implementation.mjs'), 'utf8'), /^const BUNDLE = "\.\.\/\.\.\/vendor\/qln\/";$/m);
  });

  test('running it again updates the shims and keeps the moved JavaScript; a changed JavaScript copy or an extra export is refused', () => {
    const pkg = fakePackage({ [KEY]: 'x' });
    const live = standInLive();
    const bundle = path.join(live, 'quiver-live-native');
    vendor(bundle, { packageDir: pkg, shims: live });
    const moved = fs.readFileSync(path.join(live, 'session-store.js.mjs'), 'utf8');
    fs.writeFileSync(path.join(live, 'implementation.mjs'), '// stale\n');
    const again = writeShims(live, bundle);
    assert.deepEqual(again.moved, []);
    assert.equal(fs.readFileSync(path.join(live, 'session-store.js.mjs'), 'utf8'), moved);
    assert.match(fs.readFileSync(path.join(live, 'implementation.mjs'), 'utf8'), /QUIVER_LIVE_NATIVE/);

    // An upstream update copied over the shim: the new JavaScript differs from the moved copy.
    fs.writeFileSync(path.join(live, 'session-store.mjs'), moved + '// changed upstream\n');
    assert.throws(() => writeShims(live, bundle), (e) => e.code === 'QLN_SHIMS_REFUSED' && /session-store\.js\.mjs exists and differs/.test(e.message));
    writeShims(live, bundle, { force: true });
    assert.match(fs.readFileSync(path.join(live, 'session-store.js.mjs'), 'utf8'), /changed upstream/);

    // A JavaScript module exporting a name the bundle does not provide.
    const fresh = standInLive();
    fs.appendFileSync(path.join(fresh, 'source-lock.mjs'), 'export const LOCK_VERSION = 2;\n');
    assert.throws(() => vendor(path.join(fresh, 'quiver-live-native'), { packageDir: pkg, shims: fresh }),
      (e) => e.code === 'QLN_SHIMS_REFUSED' && /exports .*LOCK_VERSION.*not: LOCK_VERSION/.test(e.message));
    assert.deepEqual(fs.readdirSync(fresh).sort(), ['session-store.mjs', 'source-lock.mjs'], 'nothing written or moved');
  });

  test('the reference skill: integrated, live-status.mjs runs on native and on JavaScript', { ...needsBinary, skip: needsBinary.skip || (!REFERENCE && 'QUIVER_REFERENCE_DIR not set') }, () => {
    const root = tmp('reference');
    fs.cpSync(path.join(REFERENCE, 'skill'), path.join(root, 'skill'), { recursive: true });
    const live = path.join(root, 'skill', 'scripts', 'live');
    vendor(path.join(live, 'quiver-live-native'), { shims: live });
    const project = path.join(root, 'project');
    fs.mkdirSync(path.join(project, '.git'), { recursive: true });
    const trace = path.join(root, 'trace.jsonl');
    for (const setting of [undefined, '0']) {
      const r = node([path.join(root, 'skill', 'scripts', 'live-status.mjs')], { cwd: project, env: { QUIVER_LIVE_NATIVE: setting, QUIVER_LIVE_NATIVE_TRACE: trace } });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout).activeSessions, []);
    }
    assert.deepEqual(fs.readFileSync(trace, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l).implementation), ['native', 'js']);
  });
});
