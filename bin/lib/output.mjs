// Writing for people and for programs: colour, tables, ages, warnings.

/** The name users run the CLI by; every hint and message uses it. */
export const PROGRAM = 'quiver-live-native';
/** How a hint spells a command, runnable without installing anything first. */
export const hint = (args) => `npx ${PROGRAM} ${args}`;

/**
 * Whether to colour output (https://no-color.org, and Node's FORCE_COLOR):
 * FORCE_COLOR decides when set (`0` or `false` turn colour off, any other
 * value on); else a non-empty NO_COLOR turns it off; else colour goes to a
 * terminal only.
 */
export function colorEnabled(env, isTTY) {
  if (env.FORCE_COLOR !== undefined) return !['0', 'false'].includes(env.FORCE_COLOR);
  if (env.NO_COLOR) return false;
  return Boolean(isTTY);
}

const useColor = colorEnabled(process.env, process.stdout.isTTY);
const paint = (code) => (text) => (useColor ? `\x1b[${code}m${text}\x1b[0m` : text);
export const c = {
  bold: paint('1'),
  dim: paint('2'),
  red: paint('31'),
  green: paint('32'),
  yellow: paint('33'),
  cyan: paint('36'),
};

export function out(text = '') {
  process.stdout.write(text + '\n');
}

export function err(text) {
  process.stderr.write(text + '\n');
}

export function writeJson(value) {
  out(JSON.stringify(value, null, 2));
}

/**
 * A warning on stderr that does not stop the command: text, or with
 * `json` one line `{ "warning": { code, message, ... } }`.
 */
export function warn(json, code, message, details = {}) {
  err(json ? JSON.stringify({ warning: { code, message, ...details } }) : `${PROGRAM}: ${message}`);
}

/** Control characters in journal text must not reach the terminal raw. */
export function sanitize(text) {
  return String(text).replace(/[\u0000-\u001f\u007f-\u009f]/g, (ch) => {
    if (ch === '\n') return '\\n';
    if (ch === '\t') return '\\t';
    if (ch === '\r') return '\\r';
    return '\\x' + ch.charCodeAt(0).toString(16).padStart(2, '0');
  });
}

/** A value as one table cell: `-` for null/undefined, strings as they are, the rest as JSON. */
export function cell(value) {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return sanitize(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  let text;
  try { text = JSON.stringify(value); } catch { text = String(value); }
  return sanitize(text ?? String(value));
}

export function truncate(text, max) {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/**
 * Aligned columns, two spaces apart; the last column is not padded.
 * `styles[i]` may map a cell's text to a colouring function (applied after
 * padding, so escape codes never upset the alignment).
 */
export function renderTable(headers, rows, styles = []) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells, header) => cells
    .map((text, i) => {
      const padded = i === cells.length - 1 ? text : text.padEnd(widths[i]);
      const style = header ? c.bold : styles[i]?.(text);
      return style ? style(padded) : padded;
    })
    .join('  ')
    .trimEnd();
  return [line(headers, true), ...rows.map((r) => line(r, false))].join('\n');
}

export function formatAge(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms < -1000) return 'future';
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  const d = Math.floor(h / 24);
  return `${d}d${String(h % 24).padStart(2, '0')}h`;
}

/** Milliseconds from a timestamp (ms or date text) to `now`; null when it is neither. */
export function ageSince(stamp, now) {
  let t = null;
  if (typeof stamp === 'number' && Number.isFinite(stamp)) t = stamp;
  else if (typeof stamp === 'string') {
    const parsed = Date.parse(stamp);
    if (!Number.isNaN(parsed)) t = parsed;
  }
  return t === null ? null : now - t;
}

/** A path as one shell word (quoted unless it is plain). */
export function shellWord(text) {
  // Windows shells take a backslash as it is and quote with double quotes.
  if (process.platform === 'win32') return /^[\w@%+=:,.\\/-]+$/.test(text) ? text : `"${String(text).replace(/"/g, '""')}"`;
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${String(text).replace(/'/g, `'\\''`)}'`;
}

/** A duration the binding gives in ms, in words: `a minute`, `5 minutes`, `30 s`. */
export function span(ms) {
  const minutes = ms / (60 * 1000);
  if (Number.isInteger(minutes) && minutes > 0) return minutes === 1 ? 'a minute' : `${minutes} minutes`;
  return `${ms / 1000} s`;
}
