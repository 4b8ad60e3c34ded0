// npm and npx as child processes, the same way on every OS.

import { spawnSync } from 'node:child_process';

const windows = process.platform === 'win32';

/**
 * Runs `tool` (npm or npx) with `args`. Windows runs npm.cmd and npx.cmd
 * only through a shell, which takes the arguments as they are: each is
 * quoted for it there.
 */
export function runNpm(tool, args, options = {}) {
  return spawnSync(windows ? `${tool}.cmd` : tool, windows ? args.map((a) => `"${a}"`) : args, { ...options, shell: windows, encoding: 'utf8' });
}

/** Whether npm runs here (the Node of a Windows emulation may have none). */
export function npmRuns() {
  return runNpm('npm', ['--version']).status === 0;
}
