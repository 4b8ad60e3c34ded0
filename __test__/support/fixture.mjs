// Compact on-disk form of a differential fixture: the ops of one generated
// sequence plus the transcript the reference produced for them.
//
// Two tricks keep the files small, both undone exactly by unpackFixture():
// - files are stored as deltas against the previous op (journals usually just
//   grow; snapshot files change a few lines);
// - long strings from the ops (the "big string" cases) are stored once, in
//   `blobs`, and every occurrence inside any other string is replaced by a
//   private-use marker \uE000<index>\uE001.
//
// And one keeps them independent of the Node line: `JSON.parse`'s error
// messages (the `message` of `journal_parse_failed` diagnostics) are worded
// differently by each V8 ("... at position 3" on Node 20, "... at position 3
// (line 1 column 4)" on 22+), so they are not stored. `parseErrors` holds the
// text each message was thrown for, and every occurrence of the message (a
// result string equal to it, the message as a JSON string in a file) is the
// marker \uE002<index>\uE003; unpackFixture() puts back what `JSON.parse`
// says about that text in the running Node.

export const FIXTURE_FORMAT = 'quiver-live-differential/2';
const BLOB_MIN = 16 * 1024;
const MARK_OPEN = '\uE000';
const MARK_CLOSE = '\uE001';
const PARSE_OPEN = '\uE002';
const PARSE_CLOSE = '\uE003';
const RESERVED = [MARK_OPEN, MARK_CLOSE, PARSE_OPEN, PARSE_CLOSE];

function mapStrings(tree, fn) {
  if (typeof tree === 'string') return fn(tree);
  if (Array.isArray(tree)) return tree.map((v) => mapStrings(v, fn));
  if (tree && typeof tree === 'object') {
    const out = {};
    for (const k of Object.keys(tree)) {
      const v = mapStrings(tree[k], fn);
      if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      else out[k] = v;
    }
    return out;
  }
  return tree;
}

function forEachString(tree, fn) {
  if (typeof tree === 'string') fn(tree);
  else if (Array.isArray(tree)) for (const v of tree) forEachString(v, fn);
  else if (tree && typeof tree === 'object') for (const k of Object.keys(tree)) forEachString(tree[k], fn);
}

// -- file deltas ------------------------------------------------------------

/**
 * Line edits turning `a` into `b`: flat triples [copy, delete, insertLines, ...]
 * (the rest of `a` is copied after the last triple). Uses an LCS table for
 * files of moderate size and a single hunk beyond that.
 */
function lineEdits(a, b) {
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let q = 0;
  while (q < a.length - p && q < b.length - p && a[a.length - 1 - q] === b[b.length - 1 - q]) q++;
  const A = a.slice(p, a.length - q);
  const B = b.slice(p, b.length - q);
  const n = A.length;
  const m = B.length;
  if (n * m > 4_000_000 || n === 0 || m === 0) return [p, n, B];
  // lcs[i][j] = LCS length of A[i..], B[j..]
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] = A[i] === B[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
    }
  }
  const edits = [];
  let copy = p;
  let del = 0;
  let ins = [];
  let i = 0;
  let j = 0;
  const flush = () => {
    if (del || ins.length) {
      edits.push(copy, del, ins);
      copy = 0;
      del = 0;
      ins = [];
    }
  };
  while (i < n || j < m) {
    if (i < n && j < m && A[i] === B[j]) {
      flush();
      copy++;
      i++;
      j++;
    } else if (j < m && (i >= n || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j])) {
      ins.push(B[j++]);
    } else {
      del++;
      i++;
    }
  }
  flush();
  return edits;
}

function fileDelta(prev, next) {
  if (typeof prev === 'string' && typeof next === 'string') {
    if (next.startsWith(prev)) return { append: next.slice(prev.length) };
    const edits = { lines: lineEdits(prev.split('\n'), next.split('\n')) };
    if (JSON.stringify(edits).length < JSON.stringify(next).length) return edits;
  }
  return { set: next };
}

function applyDelta(prev, delta) {
  if ('set' in delta) return delta.set;
  if ('append' in delta) return prev + delta.append;
  const a = prev.split('\n');
  const out = [];
  let pos = 0;
  const e = delta.lines;
  for (let k = 0; k < e.length; k += 3) {
    for (let c = 0; c < e[k]; c++) out.push(a[pos++]);
    pos += e[k + 1];
    for (const line of e[k + 2]) out.push(line);
  }
  while (pos < a.length) out.push(a[pos++]);
  return out.join('\n');
}

function packFiles(prev, next) {
  const out = [];
  const names = [...new Set([...Object.keys(prev), ...Object.keys(next)])].sort();
  for (const name of names) {
    if (!(name in next)) out.push([name, null]);
    else if (!(name in prev)) out.push([name, { set: next[name] }]);
    else if (JSON.stringify(prev[name]) !== JSON.stringify(next[name])) out.push([name, fileDelta(prev[name], next[name])]);
  }
  return out;
}

function unpackFiles(prev, delta) {
  const out = { ...prev };
  for (const [name, d] of delta) {
    if (d === null) delete out[name];
    else out[name] = applyDelta(prev[name], d);
  }
  const sorted = {};
  for (const name of Object.keys(out).sort()) sorted[name] = out[name];
  return sorted;
}

// -- snapshot results as patches ---------------------------------------------
//
// A returned snapshot is usually the previous snapshot of the same session
// with a few top-level fields changed. Such a result is stored as
// { $: 'patch', base: [entryIndex] | [entryIndex, listIndex], set: {...} }.
// Canonical encodings never give a plain object a "$" key, so the tag is
// unambiguous.

function isPlainEncoded(v) {
  return v && typeof v === 'object' && !Array.isArray(v) && !Object.prototype.hasOwnProperty.call(v, '$')
    && typeof v.id === 'string';
}

function patchAgainst(value, base, where) {
  const kv = Object.keys(value);
  const kb = Object.keys(base.value);
  if (kv.length !== kb.length || kv.some((k, i) => k !== kb[i])) return value;
  const set = {};
  for (const k of kv) {
    if (JSON.stringify(value[k]) !== JSON.stringify(base.value[k])) {
      if (k === '__proto__') return value;
      set[k] = value[k];
    }
  }
  const patch = { $: 'patch', base: where, set };
  return JSON.stringify(patch).length < JSON.stringify(value).length ? patch : value;
}

function packOne(value, where, bases) {
  if (!isPlainEncoded(value)) return value;
  const base = bases.get(value.id);
  bases.set(value.id, { value, where });
  return base ? patchAgainst(value, base, base.where) : value;
}

function packResult(result, index, bases) {
  if (Array.isArray(result)) return result.map((v, j) => packOne(v, [index, j], bases));
  return packOne(result, [index], bases);
}

function unpackOne(value, done) {
  if (!value || typeof value !== 'object' || Array.isArray(value) || value.$ !== 'patch') return value;
  const [i, j] = value.base;
  const base = j === undefined ? done[i].result : done[i].result[j];
  const out = {};
  for (const k of Object.keys(base)) {
    const v = Object.prototype.hasOwnProperty.call(value.set, k) ? value.set[k] : base[k];
    if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

function unpackResult(result, done) {
  if (Array.isArray(result)) return result.map((v) => unpackOne(v, done));
  return unpackOne(result, done);
}

// -- JSON.parse messages -------------------------------------------------------

/** The message `JSON.parse(text)` throws in this Node. */
export function jsonParseMessage(text) {
  try {
    JSON.parse(text);
  } catch (err) {
    return err.message;
  }
  throw new Error(`fixture parse error text ${JSON.stringify(text.slice(0, 80))} parses without error`);
}

/**
 * Replace each JSON.parse message of `parseFailures` (Map message -> Set of
 * the texts it was thrown for) in the entries' results and files by its
 * marker. Returns the marked entries and the texts, by marker index.
 */
function markParseMessages(entries, parseFailures) {
  const texts = [];
  const markers = new Map();
  const markerFor = (message) => {
    if (!markers.has(message)) {
      const sources = [...parseFailures.get(message)];
      if (sources.length !== 1) {
        throw new Error(`JSON.parse threw ${JSON.stringify(message)} for ${sources.length} different texts: `
          + 'cannot tell which one the transcript shows');
      }
      markers.set(message, PARSE_OPEN + texts.length + PARSE_CLOSE);
      texts.push(sources[0]);
    }
    return markers.get(message);
  };
  const quoted = [...parseFailures.keys()].map((message) => [JSON.stringify(message), message]);
  const inFile = (s) => {
    let out = s;
    for (const [q, message] of quoted) {
      if (out.includes(q)) out = out.split(q).join(`"${markerFor(message)}"`);
    }
    return out;
  };
  const marked = entries.map((entry) => {
    const out = { ...entry };
    if ('result' in out) out.result = mapStrings(out.result, (s) => (parseFailures.has(s) ? markerFor(s) : s));
    out.files = mapStrings(out.files, inFile);
    return out;
  });
  return { entries: marked, texts };
}

/** Undo markParseMessages with the messages of this Node. */
function restoreParseMessages(entries, texts) {
  if (!texts.length) return entries;
  const messages = texts.map(jsonParseMessage);
  const inFile = messages.map((m) => JSON.stringify(m).slice(1, -1));
  const re = new RegExp(`${PARSE_OPEN}(\\d+)${PARSE_CLOSE}`, 'g');
  const restore = (table) => (s) => (s.includes(PARSE_OPEN) ? s.replace(re, (_, i) => table[Number(i)]) : s);
  return entries.map((entry) => {
    const out = { ...entry };
    if ('result' in out) out.result = mapStrings(out.result, restore(messages));
    out.files = mapStrings(out.files, restore(inFile));
    return out;
  });
}

// -- pack / unpack ------------------------------------------------------------

/**
 * packFixture(seq, transcript, extra, parseFailures) -> plain JSON object.
 * `seq` is a generated sequence ({ tier, seed, layout, ops }); `parseFailures`
 * maps each message JSON.parse threw while the transcript was made to the set
 * of texts it threw it for.
 */
export function packFixture(seq, transcript, extra = {}, parseFailures = new Map()) {
  for (const tree of [seq.ops, transcript.entries]) {
    forEachString(tree, (s) => {
      if (RESERVED.some((c) => s.includes(c))) {
        throw new Error('fixture text contains a marker character (U+E000 to U+E003)');
      }
    });
  }
  const { entries, texts: parseErrors } = markParseMessages(transcript.entries, parseFailures);
  let prevFiles = {};
  const bases = new Map();
  const expected = entries.map((entry, index) => {
    const { files, ...rest } = entry;
    if ('result' in rest) rest.result = packResult(rest.result, index, bases);
    const packed = { ...rest, files: packFiles(prevFiles, files) };
    prevFiles = files;
    return packed;
  });
  const body = { ops: seq.ops, expected };

  const blobs = [];
  forEachString(seq.ops, (s) => {
    if (s.length >= BLOB_MIN && !blobs.includes(s)) blobs.push(s);
  });
  blobs.sort((a, b) => b.length - a.length);
  const packedBody = blobs.length
    ? mapStrings(body, (s) => {
      if (s.length < BLOB_MIN) return s;
      let out = s;
      blobs.forEach((blob, i) => {
        if (out.includes(blob)) out = out.split(blob).join(MARK_OPEN + i + MARK_CLOSE);
      });
      return out;
    })
    : body;

  return {
    format: FIXTURE_FORMAT,
    tier: seq.tier,
    seed: seq.seed,
    layout: seq.layout,
    ...extra,
    blobs,
    parseErrors,
    ops: packedBody.ops,
    expected: packedBody.expected,
  };
}

/** unpackFixture(json) -> { seq, expected: transcript } */
export function unpackFixture(fx) {
  if (fx.format !== FIXTURE_FORMAT) throw new Error(`unknown fixture format ${fx.format}`);
  const blobs = fx.blobs || [];
  const re = new RegExp(`${MARK_OPEN}(\\d+)${MARK_CLOSE}`, 'g');
  const restore = blobs.length
    ? (tree) => mapStrings(tree, (s) => (s.includes(MARK_OPEN) ? s.replace(re, (_, i) => blobs[Number(i)]) : s))
    : (tree) => tree;
  const ops = restore(fx.ops);
  let files = {};
  const done = [];
  const entries = restore(fx.expected).map((packed) => {
    const { files: delta, ...rest } = packed;
    files = unpackFiles(files, delta);
    if ('result' in rest) rest.result = unpackResult(rest.result, done);
    const entry = { ...rest, files };
    done.push(entry);
    return entry;
  });
  return {
    seq: { tier: fx.tier, seed: fx.seed, layout: fx.layout, ops },
    expected: { entries: restoreParseMessages(entries, fx.parseErrors || []) },
  };
}
