'use strict';
// Preloaded (node --require) by `scripts/cross.sh` into a Node run under
// qemu-user. Without binfmt_misc the kernel cannot exec a foreign binary, so
// every child process that starts this Node again (node --test's per-file
// runners, fork(), spawnSync(process.execPath)) is routed through qemu, with
// this preload inherited through NODE_OPTIONS. A child started through a
// shell (`exec('node ...')`) is not: it would find the host's node.
//
// QLN_QEMU: the qemu binary; QLN_QEMU_ARGS: its options, space-separated.

const cp = require('node:child_process');

// Only in the emulated Node: a host Node started by it (npm's, through a
// shell script) inherits NODE_OPTIONS too, and must leave its children be.
const qemu = process.env.QLN_QEMU;
if (qemu && process.arch === 'arm64') {
  const options = (process.env.QLN_QEMU_ARGS || '').split(' ').filter(Boolean);
  const self = process.execPath;
  const isSelf = (file) => file === self || file === 'node';

  // spawn, execFile, fork and exec all end in ChildProcess.prototype.spawn.
  const spawn = cp.ChildProcess.prototype.spawn;
  cp.ChildProcess.prototype.spawn = function (opts) {
    if (opts && isSelf(opts.file)) {
      const args = opts.args || [];
      opts = { ...opts, file: qemu, args: [qemu, ...options, self, ...args.slice(1)] };
    }
    return spawn.call(this, opts);
  };

  // The synchronous ones call an internal spawnSync, not the exported one.
  for (const name of ['spawnSync', 'execFileSync']) {
    const original = cp[name];
    cp[name] = function (file, args, opts) {
      if (!isSelf(file)) return original.apply(this, arguments);
      if (!Array.isArray(args)) return original.call(this, qemu, [...options, self], args);
      return original.call(this, qemu, [...options, self, ...args], opts);
    };
  }
  // ES modules importing { spawnSync } see the replacements too.
  require('node:module').syncBuiltinESMExports();
}
