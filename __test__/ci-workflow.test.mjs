// .github/workflows/CI.yml cannot run here: this holds it to package.json
// (every target built on a runner of its OS and tested on every Node line,
// publishing on a tag) and, where actionlint is at hand, to GitHub's schema.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const workflowPath = path.join(root, '.github', 'workflows', 'CI.yml');
const workflow = load(fs.readFileSync(workflowPath, 'utf8'));
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const NODE_LINES = ['20', '22', '24', '26'];
const jobs = workflow.jobs;

function steps(job) {
  return jobs[job].steps;
}

function runs(job) {
  return steps(job).map((s) => s.run ?? '').join('\n');
}

/** The runner label a target is built and tested on must be of its OS and CPU. */
function assertRunnerFits(target, host) {
  if (target.endsWith('-apple-darwin')) {
    assert.match(host, /^macos-/, target);
    assert.equal(/intel/.test(host), target.startsWith('x86_64'), `${target} on ${host}`);
  } else if (target.includes('-windows-')) {
    assert.match(host, /^windows-/, target);
  } else {
    assert.match(host, /^ubuntu-/, target);
    assert.equal(host.endsWith('-arm'), target.startsWith('aarch64'), `${target} on ${host}`);
  }
}

test('the workflow parses, and every job it needs exists', () => {
  assert.equal(typeof jobs, 'object');
  for (const [name, job] of Object.entries(jobs)) {
    assert.ok(job['runs-on'], `${name} has runs-on`);
    assert.ok(Array.isArray(job.steps) && job.steps.length > 0, `${name} has steps`);
    for (const need of [job.needs ?? []].flat()) assert.ok(need in jobs, `${name} needs ${need}, which exists`);
    for (const step of job.steps) {
      assert.ok(step.uses || step.run, `${name}: a step uses or runs something`);
      if (step.uses) assert.match(step.uses, /^[\w.-]+\/[\w./-]+@[\w.-]+$/, `${name}: ${step.uses} names a version`);
    }
  }
});

test('every napi target is built on a runner of its own OS, with npm run build', () => {
  const settings = jobs.build.strategy.matrix.settings;
  assert.deepEqual(settings.map((s) => s.target).sort(), [...pkg.napi.targets].sort());
  for (const { target, host, build } of settings) {
    assertRunnerFits(target, host);
    // npm run build passes --no-js: binding.js and index.js are hand-written.
    assert.match(build, /\bnpm run build -- --target /, target);
    assert.ok(build.includes(target), `${target}: the build names its target`);
    if (target.endsWith('-linux-gnu')) assert.ok(build.includes(`${target}.2.17 -x`), `${target} links against glibc 2.17`);
  }
  assert.match(pkg.scripts.build, /--no-js/);
  const upload = steps('build').find((s) => s.uses?.startsWith('actions/upload-artifact@'));
  assert.equal(upload.with.name, 'bindings-${{ matrix.settings.target }}');
});

test('every target is tested on Node 20, 22, 24 and 26', () => {
  const native = jobs.test.strategy.matrix;
  const musl = jobs['test-musl'].strategy.matrix;
  assert.deepEqual(native.node, NODE_LINES);
  assert.deepEqual(musl.node, NODE_LINES);
  for (const { target, host } of native.settings) assertRunnerFits(target, host);
  const tested = [...native.settings.map((s) => s.target), ...musl.target].sort();
  assert.deepEqual(tested, [...pkg.napi.targets].sort());
  assert.ok(musl.target.every((t) => t.endsWith('-musl')));
  for (const job of ['test', 'test-musl']) {
    assert.deepEqual(jobs[job].needs, ['build']);
    const download = steps(job).find((s) => s.uses?.startsWith('actions/download-artifact@'));
    assert.match(download.with.name, /^bindings-\$\{\{ matrix\.(settings\.)?target \}\}$/, job);
    assert.match(runs(job), /node scripts\/run-tests\.mjs/, job);
  }
  assert.match(runs('test-musl'), /node:\$\{\{ matrix\.node \}\}-alpine/);
});

test('a version tag publishes, after every test, through napi prepublish', () => {
  assert.ok(workflow.on.push.tags.includes('v*'));
  const publish = jobs.publish;
  assert.match(publish.if, /startsWith\(github\.ref, 'refs\/tags\/v'\)/);
  for (const need of ['test', 'test-musl', 'lint']) assert.ok(publish.needs.includes(need), `publish needs ${need}`);
  assert.equal(publish.permissions['id-token'], 'write');
  assert.match(runs('publish'), /npm run artifacts/);
  assert.match(runs('publish'), /npm publish/);
  // npm publish runs prepublishOnly: the binaries' check, then napi prepublish.
  assert.match(pkg.scripts.prepublishOnly, /check-package\.mjs --release && napi prepublish -t npm/);
  // The job may only read the repository and has no GitHub token: napi
  // prepublish must not try to create a GitHub release.
  assert.equal(publish.permissions.contents, 'read');
  assert.match(pkg.scripts.prepublishOnly, /napi prepublish [^&]*--no-gh-release/);
});

test('lint follows sourced files and checks this workflow', () => {
  // Without -x, shellcheck stops at SC1091 on every `source`.
  assert.match(runs('lint'), /^shellcheck -x .*scripts\/cross\.sh.*\.ci\/run/m);
  assert.match(runs('lint'), /actionlint" -no-color \.github\/workflows\/CI\.yml/);
  assert.match(runs('lint'), /node scripts\/version\.mjs/);
  assert.match(runs('lint'), /^cargo clippy --workspace --locked -- -D warnings$/m, 'warnings fail the lint job');
});

test('a scheduled job runs the reference suites against upstream main', () => {
  assert.ok(workflow.on.schedule.length > 0);
  const reference = jobs.reference;
  assert.match(reference.if, /schedule/);
  const checkout = reference.steps.find((s) => s.with?.repository === 'pbakaus/impeccable');
  assert.equal(checkout.with.ref, 'main');
  assert.equal(reference.env.QUIVER_REFERENCE_DIR, `\${{ github.workspace }}/${checkout.with.path}`);
  assert.match(runs('reference'), /npm run test:reference -- --ref main/);
  for (const job of ['lint', 'build']) assert.match(jobs[job].if, /github\.event_name != 'schedule'/, job);
});

test('actionlint finds nothing', (t) => {
  const actionlint = process.env.ACTIONLINT || 'actionlint';
  const r = spawnSync(actionlint, ['-no-color', workflowPath], { encoding: 'utf8' });
  if (r.error?.code === 'ENOENT') {
    t.skip(`actionlint not found (${actionlint}); .ci/run installs one and sets ACTIONLINT`);
    return;
  }
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
