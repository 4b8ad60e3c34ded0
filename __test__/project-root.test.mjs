// Checks that the package puts session files under the same project root as
// quiver-cli: replays __test__/fixtures/project-roots.json (recorded from the
// reference's resolveProjectRoot by fixtures/gen-project-roots.mjs) through
// createLiveSessionStore({ cwd }).rootDir, which is <root>/.impeccable/live/sessions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const cases = JSON.parse(fs.readFileSync(path.join(here, 'fixtures/project-roots.json'), 'utf8'));

function loadStoreFactory() {
  try {
    const native = createRequire(import.meta.url)('../index.js');
    if (typeof native.createLiveSessionStore === 'function') return { create: native.createLiveSessionStore };
    return { reason: 'createLiveSessionStore is not exported by index.js yet' };
  } catch (error) {
    return { reason: `index.js does not load (build the package first): ${error.message}` };
  }
}

const { create, reason } = loadStoreFactory();

// Same layout rule as the generator: `<tmp>/<n>/layout`, HOME resolved from
// the case's `home` against the layout, cwd passed as `${layout}/${cwd}`.
function buildLayout(base, index, testCase) {
  const layout = path.join(base, String(index), 'layout');
  fs.mkdirSync(layout, { recursive: true });
  for (const dir of testCase.dirs) fs.mkdirSync(path.join(layout, dir), { recursive: true });
  for (const [rel, content] of Object.entries(testCase.files)) {
    fs.mkdirSync(path.dirname(path.join(layout, rel)), { recursive: true });
    fs.writeFileSync(path.join(layout, rel), content);
  }
  return layout;
}

test('project root matches quiver-cli for every fixture layout', { skip: reason }, (t) => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-project-root-node-'));
  // os.homedir() reads USERPROFILE on Windows, HOME elsewhere.
  const HOME = process.platform === 'win32' ? 'USERPROFILE' : 'HOME';
  const savedHome = process.env[HOME];
  t.after(() => {
    process.env[HOME] = savedHome;
    fs.rmSync(base, { recursive: true, force: true });
  });
  // A backslash is a separator on win32, not part of a name as in these posix layouts.
  const posixOnly = (c) => path.sep === '\\' && JSON.stringify([c.dirs, c.cwd, Object.keys(c.files), c.expectedRoot]).includes('\\\\');
  const skipped = cases.filter(posixOnly).map((c) => c.name);
  if (skipped.length) t.diagnostic(`posix-only layouts not built on win32: ${skipped.join('; ')}`);
  cases.forEach((testCase, index) => {
    if (posixOnly(testCase)) return;
    const layout = buildLayout(base, index, testCase);
    process.env[HOME] = path.resolve(layout, testCase.home);
    const cwd = `${layout}/${testCase.cwd}`;
    if (testCase.expectedRoot === null) {
      assert.throws(() => create({ cwd }), testCase.expectedError, testCase.name);
      return;
    }
    const expected = path.join(path.resolve(layout, testCase.expectedRoot), '.impeccable', 'live', 'sessions');
    assert.equal(create({ cwd }).rootDir, expected, testCase.name);
  });
});

// The home directory, where the walk up stops, is os.homedir()'s, also where
// HOME is empty (os.homedir() gives '', which resolves to the process's
// working directory) or unset (the user database's entry).
test('the home directory is os.homedir(), with HOME empty, unset or set', { skip: reason ?? (process.platform === 'win32' && 'os.homedir() reads USERPROFILE on Windows') }, (t) => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-project-home-')));
  t.after(() => fs.rmSync(base, { recursive: true, force: true }));
  // A workspace member's folder: its root is the member (apps/a) unless home stops the walk.
  fs.writeFileSync(path.join(base, 'package.json'), JSON.stringify({ workspaces: ['apps/*'] }));
  const sub = path.join(base, 'apps', 'a', 'b');
  fs.mkdirSync(sub, { recursive: true });
  const index = path.join(here, '..', 'index.js');
  const script = `const os = require('node:os');
const { createLiveSessionStore } = require(${JSON.stringify(index)});
process.stdout.write(JSON.stringify({ home: os.homedir(), rootDir: createLiveSessionStore({ cwd: process.cwd() }).rootDir }));`;
  const run = (home) => {
    const env = { ...process.env };
    if (home === undefined) delete env.HOME;
    else env.HOME = home;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: sub, env, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const empty = run('');
  assert.equal(empty.home, '');
  assert.equal(empty.rootDir, run(sub).rootDir, "HOME='' is the working directory");
  assert.equal(run(path.join(base, 'elsewhere')).rootDir, path.join(base, 'apps', 'a', '.impeccable', 'live', 'sessions'));
  assert.equal(empty.rootDir, path.join(sub, '.impeccable', 'live', 'sessions'), 'the walk stops at the working directory');
  const unset = run(undefined);
  assert.equal(unset.rootDir, run(unset.home).rootDir, 'HOME unset is the user database entry');
});
