// Exit codes and the errors the CLI stops on.

/** Each cause of an exit has its own code; `EXIT_TABLE` is how help prints them. */
export const EXIT = {
  OK: 0,
  PROBLEMS: 1,
  USAGE: 2,
  NOT_FOUND: 3,
  IO: 4,
  NO_BINARY: 5,
  INTERNAL: 6,
};

export const EXIT_TABLE = [
  [EXIT.OK, 'ok'],
  [EXIT.PROBLEMS, 'problems found (doctor, locks), not healthy (replay --verify), refused (vendor)'],
  [EXIT.USAGE, 'usage error (the message names the command whose --help to read)'],
  [EXIT.NOT_FOUND, 'not found: a session, the --cwd directory, a binary to vendor'],
  [EXIT.IO, 'a file could not be read or written (the OS error and the path are printed)'],
  [EXIT.NO_BINARY, "quiver-live-native's binary cannot load on this platform"],
  [EXIT.INTERNAL, 'an unexpected error in this tool (please report it with the message)'],
];

/** The code an error is named by under --json, by exit code. */
const CODE_NAMES = {
  [EXIT.PROBLEMS]: 'problems',
  [EXIT.USAGE]: 'usage',
  [EXIT.NOT_FOUND]: 'not_found',
  [EXIT.IO]: 'io',
  [EXIT.NO_BINARY]: 'load_failed',
  [EXIT.INTERNAL]: 'internal',
};

/**
 * An error the CLI reports and exits on. `code` names it under --json;
 * `details` are extra fields of the JSON error; `command` (for usage
 * errors) is the command whose help the message points at.
 */
export class CliError extends Error {
  constructor(exitCode, message, { code = CODE_NAMES[exitCode], details = {}, command = null } = {}) {
    super(message);
    this.exitCode = exitCode;
    this.code = code;
    this.details = details;
    this.command = command;
  }
}

export const usageError = (command, message) => new CliError(EXIT.USAGE, message, { command });
export const notFound = (message) => new CliError(EXIT.NOT_FOUND, message);

/**
 * Any error as the CLI reports it: its own errors as they are, an fs error
 * (it carries a `syscall`) as an I/O error with its OS code and path, the
 * rest as internal.
 */
export function classify(error) {
  if (error instanceof CliError) return error;
  if (typeof error?.syscall === 'string' || /^E[A-Z]+$/.test(error?.code ?? '')) {
    const details = Object.fromEntries(['errno', 'syscall', 'path'].filter((k) => error[k] !== undefined).map((k) => [k, error[k]]));
    return new CliError(EXIT.IO, String(error.message), { code: 'io', details: { osCode: error.code, ...details } });
  }
  return new CliError(EXIT.INTERNAL, String(error?.message ?? error), { details: { stack: error?.stack ?? null } });
}

/**
 * A verdict of the binding's that this CLI has no words for: the binding
 * and the CLI disagree, which is a bug of this tool (exit 6). It is named,
 * never dropped: a lock, file or rule the store judged must not vanish
 * from a report.
 */
export function unknownVerdict(kind, verdict, subject) {
  return new CliError(EXIT.INTERNAL, `the binding's ${kind} verdict on ${subject} is ${JSON.stringify(verdict)}, which this CLI does not know`, {
    details: { kind, verdict, subject },
  });
}
