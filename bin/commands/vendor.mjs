import path from 'node:path';
import { createRequire } from 'node:module';
import { HELP, JSON_OUTPUT } from '../lib/args.mjs';
import { CliError, EXIT } from '../lib/errors.mjs';
import { out, renderTable, writeJson } from '../lib/output.mjs';

const require = createRequire(import.meta.url);
const { SUPPORTED } = require('../../platform.js');

/** The supported platforms, a few to a line. */
function platformLines() {
  const lines = [];
  for (let i = 0; i < SUPPORTED.length; i += 3) lines.push(SUPPORTED.slice(i, i + 3).join(', '));
  return lines.join(',\n');
}

/** The vendor module's error codes, by exit code. */
const VENDOR_EXIT = {
  QLN_USAGE: EXIT.USAGE,
  QLN_UNKNOWN_PLATFORM: EXIT.USAGE,
  QLN_NO_BINARY: EXIT.NOT_FOUND,
  QLN_NOT_A_BUNDLE: EXIT.PROBLEMS,
  QLN_SHIMS_REFUSED: EXIT.PROBLEMS,
};

export default {
  name: 'vendor',
  summary: 'write a self-contained copy of this package into a folder (for a skill without node_modules)',
  positionals: [{ name: 'dir', label: 'target directory', required: true }],
  description: `Writes <dir> as a self-contained folder: index.mjs and index.cjs (the four
exports of session-store.mjs and source-lock.mjs), a loader that picks this
platform's binary by process.platform, process.arch and the C library, the
binaries, and manifest.json (the version and each binary's size and sha256,
which the loader checks before loading). No network, no install step, no
node_modules at run time. The folder is built beside <dir> and then put in
its place; an earlier bundle there is replaced.

Binaries come from this package: a local build beside it
(quiver-live-native.<platform>.node), else an installed
quiver-live-native-<platform> package of the same version.

With --shims, LIVE_DIR (a skill's scripts/live) is integrated: its
session-store.mjs and source-lock.mjs move to session-store.js.mjs and
source-lock.js.mjs, and in their place come modules that export the bundle's
functions when it loads, else the JavaScript ones; implementation.mjs makes
that choice once per process (QUIVER_LIVE_NATIVE=0 forces JavaScript, =1
requires the bundle; \`node implementation.mjs\` prints the choice). Running it
again updates the shims and keeps the moved JavaScript. See docs/ADOPTING.md.`,
  options: [
    {
      name: 'platforms', type: 'string', arg: 'LIST',
      help: `comma-separated platforms, or \`current\`, or \`all\`\n(default: every one available here); supported:\n${platformLines()}`,
    },
    { name: 'shims', type: 'string', arg: 'LIVE_DIR', help: 'integrate the bundle into that live directory' },
    { name: 'force', type: 'boolean', help: 'replace a non-empty <dir> that holds no bundle, or a\n*.js.mjs that differs from the module it would replace' },
    JSON_OUTPUT, HELP,
  ],
  exitCodes: {
    0: 'written', 1: 'refused (<dir> is not a bundle, the shims check failed)', 2: 'usage error (an unknown platform, too)',
    3: 'a requested platform has no binary here', 4: '',
  },
  run,
};

function formatBytes(n) {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;
}

function run(opts) {
  const { vendor, VendorError } = require('../../vendor/index.js');
  let report;
  try {
    report = vendor(opts.dir, { platforms: opts.platforms, shims: opts.shims, force: Boolean(opts.force) });
  } catch (error) {
    if (!(error instanceof VendorError)) throw error;
    const exitCode = VENDOR_EXIT[error.code] ?? EXIT.INTERNAL;
    throw new CliError(exitCode, error.message, { code: error.code.replace(/^QLN_/, '').toLowerCase(), command: exitCode === EXIT.USAGE ? 'vendor' : null });
  }
  if (opts.json) {
    writeJson(report);
    return EXIT.OK;
  }
  out(`Vendored quiver-live-native ${report.version} into ${report.dir}`);
  out(renderTable(['PLATFORM', 'SIZE', 'SHA256', 'FROM'],
    report.platforms.map((b) => [b.platform, formatBytes(b.size), b.sha256.slice(0, 16) + '…', b.source])));
  out(`${report.platforms.length} binar${report.platforms.length === 1 ? 'y' : 'ies'} ${formatBytes(report.binaryBytes)}; ` +
    `the whole folder ${formatBytes(report.totalBytes)} (${formatBytes(report.totalBytes - report.binaryBytes)} of JavaScript, manifest and README)`);
  if (report.shims) {
    for (const m of report.shims.moved) out(`moved ${m.from} -> ${path.basename(m.to)}`);
    for (const w of report.shims.written) out(`wrote ${w}`);
    out(`\`node ${path.join(report.shims.liveDir, 'implementation.mjs')}\` says which implementation runs.`);
  }
  return EXIT.OK;
}
