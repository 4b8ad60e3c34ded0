import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { hexId, generation } from '../lib/events.mjs';
import { PACKAGE_DIR, tmpRoot, project, removeDir, now, usSince, median, NOTES, row, fmt, loadavg, QUICK } from '../lib/harness.mjs';

/**
 * The package laid out in `modules` as npm installs it: its published
 * files, no binary beside them, and this platform's package (the local
 * build as its binary) next to it.
 */
function installPackage(modules) {
  const require = createRequire(import.meta.url);
  const meta = require(path.join(PACKAGE_DIR, 'package.json'));
  const key = require(path.join(PACKAGE_DIR, 'platform.js')).platformKey();
  const pkg = path.join(modules, meta.name);
  for (const entry of [...meta.files, 'package.json']) {
    fs.cpSync(path.join(PACKAGE_DIR, entry), path.join(pkg, entry), { recursive: true });
  }
  const platformPkg = path.join(modules, `${meta.name}-${key}`);
  const binary = `${meta.name}.${key}.node`;
  fs.mkdirSync(platformPkg);
  fs.copyFileSync(path.join(PACKAGE_DIR, 'npm', key, 'package.json'), path.join(platformPkg, 'package.json'));
  fs.copyFileSync(path.join(PACKAGE_DIR, binary), path.join(platformPkg, binary));
}

/**
 * Load cost: quiver-cli's helpers (live-status, live-poll, ...) are short
 * processes, started again and again. Each contender is a whole `node`
 * process, rounds alternating over all contenders, timed three ways: from the
 * outside (spawnSync wall time, what a caller waits), and by the process
 * itself at its end: process.cpuUsage() (user + system: its own work, which a
 * busy machine disturbs less) and performance.now() (from its start, without
 * the exec, linking and exit around it). The figure is the median over rounds of each
 * run minus the bare `node` run of the same round (an empty script), in ms.
 * Contenders: the old module (from QUIVER_REFERENCE_DIR), this package as npm
 * installs it (installPackage) through its ESM entry (`import 'quiver-live-native'`, via `exports`) and its CJS
 * entry (`require`), a vendored bundle's index.mjs, and (with the reference)
 * the skill's session-store.mjs shim choosing that bundle. Two kinds of
 * process: the import alone, and a helper (create a store, read one session,
 * exit). The project holds one session of a generation round.
 */
export async function run(impls, liveDir) {
  const root = fs.mkdtempSync(path.join(tmpRoot(), 'load-'));
  const dir = project('load-project');
  const id = hexId(11);
  const store = impls.native.createLiveSessionStore({ cwd: dir });
  for (const event of generation(id)) store.appendEvent(event);
  const phase = store.getSnapshot(id, { includeCompleted: true }).phase;

  // The package as npm installs it, the bundle as a skill vendors it.
  const consumer = path.join(root, 'consumer');
  installPackage(path.join(consumer, 'node_modules'));
  const { vendor } = createRequire(import.meta.url)(path.join(PACKAGE_DIR, 'vendor', 'index.js'));
  let shimLive = null;
  if (liveDir) {
    shimLive = path.join(root, 'scripts', 'live');
    fs.cpSync(path.dirname(liveDir), path.join(root, 'scripts'), { recursive: true });
    vendor(path.join(shimLive, 'quiver-live-native'), { platforms: 'current', shims: shimLive });
  } else {
    vendor(path.join(root, 'bundle'), { platforms: 'current' });
  }
  const bundle = shimLive ? path.join(shimLive, 'quiver-live-native') : path.join(root, 'bundle');

  // The floor: an ES module that only loads the same binary, imported like
  // the bundle's index.mjs. What Node's module loader and the dynamic linker
  // cost any package shipping this addon.
  const floorModule = path.join(consumer, 'floor-module.mjs');
  const binary = path.join(bundle, fs.readdirSync(bundle).find((f) => f.endsWith('.node')));
  fs.writeFileSync(floorModule, `const addon = { exports: {} };\nprocess.dlopen(addon, ${JSON.stringify(binary)});\nexport const createLiveSessionStore = addon.exports.Store;\n`);

  const specifiers = {
    floor: pathToFileURL(floorModule).href,
    old: liveDir ? pathToFileURL(path.join(liveDir, 'session-store.mjs')).href : null,
    esm: 'quiver-live-native',
    cjs: 'quiver-live-native',
    vendored: pathToFileURL(path.join(bundle, 'index.mjs')).href,
    shim: shimLive ? pathToFileURL(path.join(shimLive, 'session-store.mjs')).href : null,
  };
  const entries = {};
  // The same import, timed inside the process: without the process's start
  // and exit, which vary by several ms from run to run on a shared machine.
  const timedEntries = {};
  for (const [k, spec] of Object.entries(specifiers)) {
    if (!spec) continue;
    const quoted = JSON.stringify(spec);
    entries[k] = k === 'cjs' ? `const { createLiveSessionStore } = require(${quoted});` : `import { createLiveSessionStore } from ${quoted};`;
    timedEntries[k] = `const t0 = performance.now();\nconst { createLiveSessionStore } = ${k === 'cjs' ? 'require' : 'await import'}(${quoted});\n` +
      'const importMs = performance.now() - t0;';
  }
  const report = (phaseExpr) => `\nconst at = performance.now();\nconst used = process.cpuUsage();\nprocess.stdout.write(JSON.stringify({ at, cpuMs: (used.user + used.system) / 1000, importMs: typeof importMs === 'number' ? importMs : null, phase: ${phaseExpr} }));\n`;
  const helperBody = `\nconst snapshot = createLiveSessionStore({ cwd: ${JSON.stringify(dir)} }).getSnapshot(${JSON.stringify(id)}, { includeCompleted: true });\n` +
    'if (!snapshot) process.exit(3);' + report('snapshot.phase');
  // Two baselines: an empty ES module, and an empty CommonJS script (a
  // CommonJS main skips the ES module loader's start, about 3 ms).
  const scripts = { bare: path.join(consumer, 'bare.mjs'), 'bare-cjs': path.join(consumer, 'bare.cjs') };
  fs.writeFileSync(scripts.bare, report('null'));
  fs.writeFileSync(scripts['bare-cjs'], report('null'));
  for (const [k, text] of Object.entries(entries)) {
    const ext = k === 'cjs' ? 'cjs' : 'mjs';
    scripts[`${k}-import`] = path.join(consumer, `${k}-import.${ext}`);
    scripts[`${k}-timed`] = path.join(consumer, `${k}-timed.${ext}`);
    fs.writeFileSync(scripts[`${k}-import`], text + report('null'));
    if (k !== 'floor') {
      scripts[`${k}-helper`] = path.join(consumer, `${k}-helper.${ext}`);
      fs.writeFileSync(scripts[`${k}-helper`], text + helperBody);
    }
    fs.writeFileSync(scripts[`${k}-timed`], timedEntries[k] + report('null'));
  }
  const env = { ...process.env, NODE_OPTIONS: '', QUIVER_LIVE_NATIVE: '', QUIVER_LIVE_NATIVE_TRACE: '' };
  // Node 20 reads this file of certificates as it starts, before any script
  // (tens of ms for a system bundle): the same in every process, but its
  // variance would swamp the few ms being measured.
  delete env.NODE_EXTRA_CA_CERTS;
  const runOnce = (file) => {
    const t0 = now();
    const r = spawnSync(process.execPath, [file], { cwd: consumer, env, encoding: 'utf8', timeout: 30_000 });
    const ms = usSince(t0) / 1000;
    let got = null;
    try { got = JSON.parse(r.stdout); } catch { /* reported below */ }
    if (r.status !== 0 || !got || got.phase !== (file.includes('-helper.') ? phase : null)) {
      throw new Error(`load: ${path.basename(file)} exited ${r.status} (${r.signal ?? 'no signal'}): ${r.stdout} ${r.stderr}`.trim());
    }
    return { wall: ms, cpu: got.cpuMs, at: got.at, importMs: got.importMs };
  };
  // The first run of the bundle checks its binary's sha256 and remembers it;
  // the warm-up round takes that (and fills the page cache).
  // Each process takes about 80 ms and varies by several, hence many rounds.
  const rounds = QUICK ? 10 : 60;
  const samples = Object.fromEntries(Object.keys(scripts).map((k) => [k, []]));
  for (let r = 0; r < rounds + 1; r++) {
    for (const [k, file] of Object.entries(scripts)) {
      const run = runOnce(file);
      if (r > 0) samples[k].push(run);
    }
  }
  const baseline = (k) => samples[k.startsWith('cjs-') ? 'bare-cjs' : 'bare'];
  const added = (k, f = 'wall') => (samples[k]?.length ? median(samples[k].map((run, i) => run[f] - baseline(k)[i][f])) : null);
  const whole = (k, f = 'wall') => (samples[k]?.length ? median(samples[k].map((run) => run[f])) : null);
  const names = { esm: 'installed package, ESM entry (`import`)', cjs: 'installed package, CJS entry (`require`)', vendored: "vendored bundle's index.mjs", shim: 'skill shim choosing the vendored bundle' };
  for (const k of ['esm', 'cjs', 'vendored', 'shim']) {
    if (!scripts[`${k}-import`]) continue;
    const ms = added(`${k}-import`);
    row(`load: import alone, ${names[k]}, over bare node (ms of wall time, not µs)`, { old: added('old-import'), native: ms, check: { text: '≤ 5 ms', met: ms <= 5 }, floor: k === 'cjs' ? null : added('floor-import'), unit: 'ms' });
    row(`load: import alone, ${names[k]}, over bare node (ms of the process's CPU, not µs)`, { old: added('old-import', 'cpu'), native: added(`${k}-import`, 'cpu') });
    row(`load: import alone, ${names[k]}, over bare node (ms from the process's start to the end of the import, not µs)`, { old: added('old-import', 'at'), native: added(`${k}-import`, 'at') });
    row(`load: import alone, ${names[k]}, timed inside the process around the import (ms, not µs)`, { old: whole('old-timed', 'importMs'), native: whole(`${k}-timed`, 'importMs'), floor: k === 'cjs' ? null : whole('floor-timed', 'importMs'), unit: 'ms' });
  }
  for (const k of ['esm', 'cjs', 'vendored', 'shim']) {
    if (!scripts[`${k}-helper`]) continue;
    row(`load: helper process (create a store, read one session, exit), ${names[k]}, whole process (ms, not µs)`, { old: whole('old-helper'), native: whole(`${k}-helper`) });
  }
  NOTES.push(`load: ${rounds} rounds (+1 warm-up) of every process in turn; bare node ${fmt(whole('bare'))} ms wall, ${fmt(whole('bare', 'cpu'))} ms CPU (an empty .mjs), ` +
    `${fmt(whole('bare-cjs'))} ms wall (an empty .cjs), medians, load average ${loadavg()}; ` +
    `"over bare node" = median over rounds of (run - the same round's bare run of the same module kind); helper processes: whole wall time of spawnSync; ` +
    `the installed package: its published files in node_modules with this platform's package beside it, as npm lays them out; ` +
    `floor: an ES module whose only statement is process.dlopen of the same binary, imported by its file URL (as the vendored index.mjs is: the package's ESM entry pays Node's resolution of a package name besides); NODE_EXTRA_CA_CERTS unset in every process. ` +
    (liveDir ? 'old = the reference\'s session-store.mjs.' : 'old module skipped (QUIVER_REFERENCE_DIR not set), and with it the shim rows.'));
  removeDir(root);
  removeDir(dir);
}
