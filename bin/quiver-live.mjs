#!/usr/bin/env node
// quiver-live-native's CLI: inspect a project's live sessions, journals and
// source locks. One module per command in ./commands; what they share in
// ./lib. Read-only unless a flag says otherwise (only `locks --clear-stale`
// removes files); `vendor` writes the folder it is given.

import fs from 'node:fs';
import { commandHelp, mainHelp, parseCommandArgs } from './lib/args.mjs';
import { classify, EXIT, usageError } from './lib/errors.mjs';
import { err, out, PROGRAM, sanitize } from './lib/output.mjs';
import doctor from './commands/doctor.mjs';
import locks from './commands/locks.mjs';
import replay from './commands/replay.mjs';
import show from './commands/show.mjs';
import status from './commands/status.mjs';
import tail from './commands/tail.mjs';
import vendor from './commands/vendor.mjs';

const COMMANDS = [status, show, replay, tail, locks, doctor, vendor];
const byName = new Map(COMMANDS.map((cmd) => [cmd.name, cmd]));

function command(name) {
  const cmd = byName.get(name);
  if (!cmd) throw usageError(null, `unknown command: ${sanitize(name)}`);
  return cmd;
}

async function main(argv) {
  const [first, ...rest] = argv;
  if (first === undefined) {
    err(mainHelp(COMMANDS));
    return EXIT.USAGE;
  }
  if (first === '--help' || first === '-h') {
    out(mainHelp(COMMANDS));
    return EXIT.OK;
  }
  if (first === '--version' || first === '-V') {
    out(JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
    return EXIT.OK;
  }
  if (first === 'help') {
    out(rest.length === 0 ? mainHelp(COMMANDS) : commandHelp(command(rest[0])));
    return EXIT.OK;
  }
  if (first.startsWith('-')) throw usageError(null, `unknown option ${sanitize(first)} (options go after the command)`);
  const cmd = command(first);
  const opts = parseCommandArgs(cmd, rest);
  if (opts.help) {
    out(commandHelp(cmd));
    return EXIT.OK;
  }
  return cmd.run(opts);
}

/** Whether `--json` was asked for (before any `--`), even when the arguments did not parse. */
function wantsJson(argv) {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * Reports an error: a line on stderr (a usage error adds where its help
 * is), or with --json one JSON object on stderr, `{ "error": { code,
 * exitCode, message, ... } }` (stdout stays empty). Returns the exit code.
 */
function reportError(error, json) {
  const e = classify(error);
  const help = e.exitCode === EXIT.USAGE ? `${PROGRAM} ${e.command ? `${e.command} ` : ''}--help` : null;
  if (json) {
    err(JSON.stringify({ error: { code: e.code, exitCode: e.exitCode, message: e.message, ...e.details, ...(help && { help }) } }));
  } else {
    err(`${PROGRAM}${e.command ? ` ${e.command}` : ''}: ${e.message}`);
    if (help) err(`Run \`${help}\` for usage.`);
    if (e.exitCode === EXIT.INTERNAL && e.details.stack) err(e.details.stack);
  }
  return e.exitCode;
}

process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.OK);
  throw error;
});

const argv = process.argv.slice(2);
try {
  process.exitCode = await main(argv);
} catch (error) {
  process.exitCode = reportError(error, wantsJson(argv));
}
