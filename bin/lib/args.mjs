// Arguments and help, the same way for every command: `util.parseArgs`
// reads them, the command's spec says what they mean, and help is printed
// from that spec.

import { parseArgs } from 'node:util';
import { EXIT_TABLE, usageError } from './errors.mjs';
import { PROGRAM, sanitize } from './output.mjs';

/** Options most commands share. */
export const CWD = { name: 'cwd', type: 'string', arg: 'DIR', help: 'resolve the project from DIR (default: the current directory)' };
export const JSON_OUTPUT = { name: 'json', type: 'boolean', help: 'machine-readable output (errors too: one JSON object on stderr)' };
export const HELP = { name: 'help', short: 'h', type: 'boolean', help: 'show this help' };

/** A value that is an option the user forgot to give a value before, not the value. */
const looksLikeOption = (value) => /^--?[A-Za-z]/.test(value);

/**
 * A command's arguments against its spec: `{ help: true }`, or its option
 * values (each converted by the option's `parse`) and positionals by name.
 * Every misuse is a usage error that names the command.
 */
export function parseCommandArgs(cmd, argv) {
  const usage = (message) => usageError(cmd.name, message);
  const specs = new Map(cmd.options.map((o) => [o.name, o]));
  const config = Object.fromEntries(cmd.options.map((o) => [o.name, o.short ? { type: o.type, short: o.short } : { type: o.type }]));
  // Not strict: the tokens are checked here, so every message is this tool's own.
  const { tokens } = parseArgs({ args: argv, options: config, allowPositionals: true, strict: false, tokens: true });
  if (tokens.some((t) => t.kind === 'option' && t.name === 'help')) return { help: true };
  const opts = {};
  const positionals = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const spec = specs.get(token.name);
    const raw = sanitize(token.rawName);
    if (!spec) throw usage(`unknown option ${raw}`);
    if (spec.type === 'boolean') {
      if (token.value !== undefined) throw usage(`${raw} takes no value`);
      opts[spec.name] = true;
      continue;
    }
    if (token.value === undefined) throw usage(`${raw} needs a value`);
    if (!token.inlineValue && looksLikeOption(token.value)) {
      const hint = raw.startsWith('--') ? `; write ${raw}=VALUE for a value starting with -` : '';
      throw usage(`${raw} needs a value (got the option ${sanitize(token.value)}${hint})`);
    }
    if (spec.parse) {
      const parsed = spec.parse(token.value);
      if (parsed === undefined) throw usage(`${raw} needs ${spec.expects}, got ${sanitize(token.value)}`);
      opts[spec.name] = parsed;
    } else {
      opts[spec.name] = token.value;
    }
  }
  const expected = cmd.positionals ?? [];
  if (positionals.length > expected.length) throw usage(`unexpected argument ${sanitize(positionals[expected.length])}`);
  expected.forEach((p, i) => {
    if (positionals[i] === undefined && p.required) throw usage(`missing ${p.label}`);
    opts[p.name] = positionals[i];
  });
  return opts;
}

/** The command line a command is used with. */
function usageLine(cmd) {
  const positionals = (cmd.positionals ?? []).map((p) => `<${p.name}>`);
  return [PROGRAM, cmd.name, ...positionals, '[options]'].join(' ');
}

/** Rows of two columns, the first padded so the second lines up; continuation lines indented to it. */
function columns(rows) {
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  return rows
    .map(([left, right]) => String(right).split('\n').map((line, i) => `  ${(i === 0 ? left : '').padEnd(width)}${line}`).join('\n'))
    .join('\n');
}

function optionLeft(o) {
  return `${o.short ? `-${o.short}, ` : '    '}--${o.name}${o.arg ? ` ${o.arg}` : ''}`;
}

/** The exit code rows of the table in errors.mjs, with a command's own words where it has them. */
function exitRows(codes) {
  return EXIT_TABLE.filter(([code]) => codes[code] !== undefined).map(([code, general]) => [String(code), codes[code] || general]);
}

export function commandHelp(cmd) {
  return `Usage: ${usageLine(cmd)}

${cmd.description}

Options:
${columns(cmd.options.map((o) => [optionLeft(o), o.help]))}

Exit codes:
${columns(exitRows(cmd.exitCodes))}`;
}

export function mainHelp(commands) {
  return `${PROGRAM}: inspect a project's live sessions, journals and source locks.

Usage: ${PROGRAM} <command> [options]
       npx ${PROGRAM} <command> [options]   (without installing)

Commands:
${columns(commands.map((cmd) => [cmd.name, cmd.summary]))}

Every command takes --json and --help; those reading a project take --cwd DIR.
Nothing in a project is written unless a flag says so (only \`locks
--clear-stale\` removes files); \`vendor\` writes the folder it is given.
Installed as both \`${PROGRAM}\` and \`quiver-live\`.

Exit codes:
${columns(EXIT_TABLE.map(([code, text]) => [String(code), text]))}

Colour goes to a terminal only; a non-empty NO_COLOR turns it off, and
FORCE_COLOR forces it (FORCE_COLOR=0 turns it off).
Run \`${PROGRAM} <command> --help\` for a command's options.`;
}
