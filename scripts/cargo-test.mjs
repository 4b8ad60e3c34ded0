#!/usr/bin/env node
// Runs the Rust tests of the napi-free core for the host target, as
// `napi build` builds for it: both then share one target directory and its
// compiled dependencies instead of building them twice.
//
//   node scripts/cargo-test.mjs [-- CARGO_TEST_ARGS ...]

import { spawnSync } from 'node:child_process';

const rustc = spawnSync('rustc', ['-vV'], { encoding: 'utf8' });
const host = /^host: (\S+)$/m.exec(rustc.stdout ?? '')?.[1];
if (!host) {
  console.error(`cargo-test: cannot tell the host target from \`rustc -vV\` (${rustc.error?.message ?? rustc.stderr})`);
  process.exit(1);
}
const extra = process.argv.slice(2).filter((a) => a !== '--');
const r = spawnSync('cargo', ['test', '--release', '-p', 'quiver-live-core', '--target', host, ...extra], { stdio: 'inherit' });
process.exit(r.status ?? 1);
