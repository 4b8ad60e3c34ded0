// Fault-matrix worker: runs one scenario's operation (see
// ../matrix-scenarios.mjs) under the fault seam of the `faults` build,
// which QUIVER_LIVE_NATIVE_BINARY names.
//
//   node matrix.mjs '<json config>'
//
// config: { scenario, mode, ... }
//   mode 'count': runs the operation once, failing nothing; prints
//                 {"calls": [...]}, the file-system calls it made.
//   mode 'errno': for each [at, errno] of `cases`, in a fresh project: the
//                 at-th call fails with errno; prints {"case": {...}} with
//                 the outcome and what the checks found.
//   mode 'crash': in `project`, sets up, prints {"before": {...}}, then runs
//                 the operation with the process killed before call `at`;
//                 prints {"survived": true} if it was not.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { SCENARIOS, freshProject, tree, outcome, verify } from '../matrix-scenarios.mjs';
import { loadReference } from '../../support/impls.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const config = JSON.parse(process.argv[2]);
const pkg = require(path.resolve(here, '..', '..', '..', 'index.js'));
const seam = require(path.resolve(process.env.QUIVER_LIVE_NATIVE_BINARY));
const spec = SCENARIOS[config.scenario];

function say(value) {
  fs.writeSync(1, `${JSON.stringify(value)}\n`);
}

/** The files, and the lines of the journal a read of mx1 uses (the legacy one when it is the only one). */
function beforeOf(project) {
  const journals = [path.join(project, '.impeccable', 'live', 'sessions', 'mx1.jsonl'), path.join(project, '.impeccable-live', 'sessions', 'mx1.jsonl')];
  const journal = journals.find((j) => fs.existsSync(j));
  const lines = journal ? fs.readFileSync(journal, 'utf8').split('\n').filter(Boolean).length : 0;
  return { tree: tree(project), lines };
}

if (config.mode === 'count') {
  const project = freshProject();
  const state = spec.setup(pkg, project);
  seam.faultArm(null, null);
  const result = outcome(() => spec.run(pkg, project, state));
  say({ calls: seam.faultDisarm(), result });
  fs.rmSync(project, { recursive: true, force: true });
} else if (config.mode === 'errno') {
  const reference = await loadReference();
  for (const [at, errno] of config.cases) {
    const project = freshProject();
    try {
      const state = spec.setup(pkg, project);
      const before = beforeOf(project);
      seam.faultArm(at, os.constants.errno[errno]);
      const result = outcome(() => spec.run(pkg, project, state));
      const calls = seam.faultDisarm();
      const failures = await verify({ pkg, reference, project, scenario: config.scenario, before, result });
      say({ case: { at, errno, call: calls[at - 1] ?? null, ok: result.ok, error: result.error?.code ?? null, failures } });
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  }
} else if (config.mode === 'crash') {
  const state = spec.setup(pkg, config.project);
  say({ before: beforeOf(config.project) });
  seam.faultArm(config.at, null);
  spec.run(pkg, config.project, state);
  seam.faultDisarm();
  say({ survived: true });
} else {
  throw new Error(`unknown mode ${config.mode}`);
}
