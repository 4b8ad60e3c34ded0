// Canonical, JSON-safe encoding of arbitrary JavaScript values for the
// differential harness.
//
// The encoded form is plain JSON that keeps everything JSON itself loses:
// key order (as the object enumerates it), `undefined` (also as an own key's
// value), NaN, -0, the infinities, BigInt, cycles, array holes, extra array
// properties and unusual prototypes. Strings need no treatment: Node's
// JSON.stringify escapes lone surrogates and JSON.parse restores them.
//
// Tag objects carry the single reserved key "$". A user key that starts
// with "$" is written with one more "$" in front, so it can never be read back
// as a tag.

import { createHash } from 'node:crypto';
import { selfCycle, sparse } from './odd-values.mjs';

const TAG = '$';

/**
 * Values the harness built from a recipe (a tagged description that
 * decodeValue() turns into a Date, a Proxy, an object with a getter or a
 * throwing valueOf, ...): encodeValue() writes such a value as its recipe, so
 * a sequence holding it replays exactly, and a returned value that is the
 * caller's own object shows as that recipe while a copy shows as its parts.
 */
const RECIPES = new WeakMap();

function escapeKey(key) {
  return key.startsWith(TAG) ? TAG + key : key;
}

function unescapeKey(key) {
  return key.startsWith(TAG) ? key.slice(1) : key;
}

function encodeNumber(v) {
  if (Number.isNaN(v)) return { $: 'NaN' };
  if (v === Infinity) return { $: 'Inf' };
  if (v === -Infinity) return { $: '-Inf' };
  if (Object.is(v, -0)) return { $: '-0' };
  return v;
}

/**
 * Encode `value` canonically. Objects are encoded with Object.keys order,
 * which is the order JavaScript itself reports (integer-like keys first).
 * `recipes: false` encodes values built from a recipe by what they hold, as
 * any other value; `refs` (a WeakMap object -> where the caller passed it)
 * encodes the caller's own objects as references to that place.
 */
export function encodeValue(value, { refs = null, recipes = true, digestDeep = false } = {}) {
  const stack = [];
  const onStack = new Set();

  function enc(v) {
    // `digestDeep` (for results, never for ops): past this depth the rest is
    // digested without recursion, since a snapshot may hold a value nested
    // deeper than any recursive walk (or JSON.stringify) can go.
    if (digestDeep && stack.length >= DIGEST_DEPTH && v !== null && typeof v === 'object') return deepDigest(v);
    if (recipes && ((typeof v === 'object' && v !== null) || typeof v === 'function')) {
      const recipe = RECIPES.get(v);
      if (recipe) return recipe;
      // `refs`: the caller's own objects, by where they were passed.
      const at = refs?.get(v);
      if (at !== undefined) return { $: 'ref', to: at };
    }
    switch (typeof v) {
      case 'undefined': return { $: 'u' };
      case 'number': return encodeNumber(v);
      case 'string': return v;
      case 'boolean': return v;
      case 'bigint': return { $: 'big', v: v.toString() };
      case 'symbol': return { $: 'sym', d: v.description ?? null };
      case 'function': return { $: 'fn', name: v.name };
      default: break;
    }
    if (v === null) return null;
    if (onStack.has(v)) {
      return { $: 'cyc', up: stack.length - stack.lastIndexOf(v) };
    }
    stack.push(v);
    onStack.add(v);
    try {
      if (Array.isArray(v)) return encArray(v);
      return encObject(v);
    } finally {
      stack.pop();
      onStack.delete(v);
    }
  }

  function encArray(arr) {
    if (arr.length > LONG_ARRAY) return encLong(arr);
    const items = new Array(arr.length);
    for (let i = 0; i < arr.length; i++) {
      items[i] = Object.prototype.hasOwnProperty.call(arr, i) ? enc(arr[i]) : { $: 'hole' };
    }
    const extra = Object.keys(arr).filter((k) => !isIndex(k, arr.length));
    const proto = Object.getPrototypeOf(arr);
    if (extra.length === 0 && proto === Array.prototype) return items;
    const out = { $: 'arr', items };
    if (extra.length) out.props = encProps(arr, extra);
    if (proto !== Array.prototype) out.proto = proto === null ? null : enc(proto);
    return out;
  }

  /** An array too long to list hole by hole (`a.length = 2 ** 32 - 1`): its own keys. */
  function encLong(arr) {
    const keys = Object.keys(arr);
    const items = keys.filter((k) => isIndex(k, arr.length)).map((k) => [Number(k), enc(arr[k])]);
    const extra = keys.filter((k) => !isIndex(k, arr.length));
    const out = { $: 'long', length: arr.length, items };
    if (extra.length) out.props = encProps(arr, extra);
    const proto = Object.getPrototypeOf(arr);
    if (proto !== Array.prototype) out.proto = proto === null ? null : enc(proto);
    return out;
  }

  function encObject(obj) {
    const symbols = Object.getOwnPropertySymbols(obj).filter((k) => Object.getOwnPropertyDescriptor(obj, k).enumerable);
    if (symbols.length) {
      // Symbol-keyed members (JSON drops them; a spread copies them).
      return { $: 'symkeys', of: encObjectOnly(obj), syms: symbols.map((k) => [k.description ?? null, enc(obj[k])]) };
    }
    return encObjectOnly(obj);
  }

  function encObjectOnly(obj) {
    const plain = encProps(obj, Object.keys(obj));
    const proto = Object.getPrototypeOf(obj);
    if (proto === Object.prototype) return plain;
    if (proto === null) return { $: 'nullproto', v: plain };
    const ctor = Object.prototype.hasOwnProperty.call(proto, 'constructor') ? proto.constructor : null;
    if (typeof ctor === 'function' && ctor.prototype === proto && ctor.name && ctor !== Object) {
      const state = hostState(obj);
      if (state !== undefined) return { $: 'inst', cls: ctor.name, state, v: plain };
      if (obj instanceof Error) {
        return { $: 'error', cls: ctor.name, message: String(obj.message), v: plain };
      }
      return { $: 'inst', cls: ctor.name, v: plain };
    }
    // An ordinary object with an ordinary-object prototype: what
    // `obj['__proto__'] = value` leaves behind.
    return { $: 'proto', of: enc(proto), v: plain };
  }

  function encProps(obj, keys) {
    const out = {};
    for (const key of keys) {
      const ek = escapeKey(key);
      // A getter is shown, not run: running it may append to a store.
      const desc = Object.getOwnPropertyDescriptor(obj, key);
      const ev = desc && !('value' in desc) ? { $: 'accessor' } : enc(obj[key]);
      if (ek === '__proto__') {
        Object.defineProperty(out, ek, { value: ev, enumerable: true, writable: true, configurable: true });
      } else {
        out[ek] = ev;
      }
    }
    return out;
  }

  return enc(value);
}

const DIGEST_DEPTH = 400;

/** Past this length an array is encoded by its own keys, not element by element. */
const LONG_ARRAY = 100_000;

/**
 * A value of any depth as `{ $: 'deep', nodes, sha256 }`: a hash of its
 * shape and leaves, walked with a stack of its own.
 */
function deepDigest(root) {
  const hash = createHash('sha256');
  const todo = [root];
  let nodes = 0;
  while (todo.length) {
    const v = todo.pop();
    nodes++;
    if (v === null || typeof v !== 'object') {
      hash.update(`${typeof v}:${Object.is(v, -0) ? '-0' : String(v)};`);
      continue;
    }
    const keys = Object.keys(v);
    hash.update(`${Array.isArray(v) ? '[' : '{'}${keys.length}:${keys.join(',')};`);
    for (let i = keys.length - 1; i >= 0; i--) todo.push(v[keys[i]]);
  }
  return { $: 'deep', nodes, sha256: hash.digest('hex') };
}

/** What a built-in object holds beyond its own keys, encoded (undefined for others). */
function hostState(obj) {
  if (obj instanceof Date) return encodeNumber(obj.getTime());
  if (obj instanceof URL) return obj.href;
  if (ArrayBuffer.isView(obj)) return Array.from(new Uint8Array(obj.buffer, obj.byteOffset, obj.byteLength));
  if (obj instanceof Map) return [...obj].map(([k, v]) => [encodeValue(k), encodeValue(v)]);
  if (obj instanceof Set) return [...obj].map((v) => encodeValue(v));
  if (obj instanceof String || obj instanceof Number || obj instanceof Boolean) return encodeValue(obj.valueOf());
  return undefined;
}

function isIndex(key, length) {
  if (!/^(0|[1-9][0-9]*)$/.test(key)) return false;
  const n = Number(key);
  return n < length && n < 2 ** 32 - 1;
}

function defineOwn(obj, key, value) {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/**
 * Rebuild the JavaScript value an encodeValue() result describes. `ctx.store()`
 * is the store a re-entrant getter appends to (none: the getter only returns).
 */
export function decodeValue(encoded, ctx = {}) {
  const stack = [];

  function dec(e) {
    if (e === null || typeof e !== 'object') return e;
    if (Array.isArray(e)) {
      const arr = new Array(e.length);
      stack.push(arr);
      try {
        fillArray(arr, e);
      } finally {
        stack.pop();
      }
      return arr;
    }
    if (Object.prototype.hasOwnProperty.call(e, TAG)) return decTag(e);
    const obj = {};
    stack.push(obj);
    try {
      fillObject(obj, e);
    } finally {
      stack.pop();
    }
    return obj;
  }

  function fillArray(arr, items) {
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (item && typeof item === 'object' && !Array.isArray(item) && item[TAG] === 'hole') continue;
      arr[i] = dec(item);
    }
  }

  function fillObject(obj, e) {
    for (const key of Object.keys(e)) defineOwn(obj, unescapeKey(key), dec(e[key]));
  }

  function decTag(e) {
    switch (e[TAG]) {
      case 'u': return undefined;
      case 'NaN': return NaN;
      case 'Inf': return Infinity;
      case '-Inf': return -Infinity;
      case '-0': return -0;
      case 'big': return BigInt(e.v);
      case 'sym': return Symbol(e.d ?? undefined);
      case 'fn': {
        // Only the name survives; calling it returns undefined.
        const fn = function () {};
        Object.defineProperty(fn, 'name', { value: e.name ?? '' });
        return fn;
      }
      case 'cyc': return stack[stack.length - e.up];
      case 'arr': {
        const arr = new Array(e.items.length);
        stack.push(arr);
        try {
          fillArray(arr, e.items);
          if (e.props) fillObject(arr, e.props);
          if ('proto' in e) Object.setPrototypeOf(arr, e.proto === null ? null : dec(e.proto));
        } finally {
          stack.pop();
        }
        return arr;
      }
      case 'long': {
        const arr = [];
        arr.length = e.length;
        stack.push(arr);
        try {
          for (const [i, item] of e.items) arr[i] = dec(item);
          if (e.props) fillObject(arr, e.props);
          if ('proto' in e) Object.setPrototypeOf(arr, e.proto === null ? null : dec(e.proto));
        } finally {
          stack.pop();
        }
        return arr;
      }
      case 'nullproto': {
        const obj = Object.create(null);
        stack.push(obj);
        try { fillObject(obj, e.v); } finally { stack.pop(); }
        return obj;
      }
      case 'proto': {
        const obj = {};
        stack.push(obj);
        try {
          fillObject(obj, e.v);
          Object.setPrototypeOf(obj, dec(e.of));
        } finally {
          stack.pop();
        }
        return obj;
      }
      case 'symkeys': {
        // The object, then its symbol-keyed members (fresh symbols, with the
        // descriptions), decoded with it on the stack as they were encoded.
        const obj = dec(e.of);
        stack.push(obj);
        try {
          for (const [d, v] of e.syms) obj[Symbol(d ?? undefined)] = dec(v);
        } finally {
          stack.pop();
        }
        return obj;
      }
      default: {
        const build = RECIPE_BUILDERS[e[TAG]];
        if (!build) throw new Error(`cannot decode tag ${JSON.stringify(e[TAG])}`);
        const value = build(e, dec, ctx);
        RECIPES.set(value, e);
        return value;
      }
    }
  }

  return dec(encoded);
}

/** An object with the recipe's plain keys (`v`, encoded) and `extra` defined on it. */
function withProps(e, dec, extra) {
  const obj = {};
  if (e.v) for (const key of Object.keys(e.v)) defineOwn(obj, unescapeKey(key), dec(e.v[key]));
  for (const [key, desc] of Object.entries(extra)) Object.defineProperty(obj, key, { enumerable: false, configurable: true, ...desc });
  return obj;
}

/**
 * Host values a caller can pass, by recipe tag. Every one is rebuilt fresh
 * from its recipe, so two runs of a sequence get equal, distinct values.
 */
const RECIPE_BUILDERS = {
  valueOf: (e, dec) => withProps(e, dec, { valueOf: { value: () => dec(e.ret) } }),
  toString: (e, dec) => withProps(e, dec, { toString: { value: () => dec(e.ret) } }),
  throwValueOf: (e, dec) => withProps(e, dec, { valueOf: { value: () => { throw new Error(e.message); } } }),
  throwToString: (e, dec) => withProps(e, dec, {
    toString: { value: () => { throw new Error(e.message); } },
    valueOf: { value() { return this; } },
  }),
  toJSON: (e, dec) => withProps(e, dec, { toJSON: { value: () => dec(e.ret) } }),
  date: (e) => new Date(e.t),
  url: (e) => new URL(e.href),
  buffer: (e) => Buffer.from(e.bytes),
  typed: (e) => new globalThis[e.cls](e.items),
  map: (e, dec) => new Map(e.entries.map(([k, v]) => [dec(k), dec(v)])),
  set: (e, dec) => new Set(e.items.map(dec)),
  proxy: (e, dec) => new Proxy(dec(e.target), {}),
  frozen: (e, dec) => Object.freeze(dec(e.target)),
  // A getter that (with a store) appends another event first: re-entrancy.
  getter: (e, dec, ctx) => {
    const obj = withProps(e, dec, {});
    Object.defineProperty(obj, e.key, {
      enumerable: true,
      configurable: true,
      get() {
        const store = e.append && ctx.store?.();
        if (store) store.appendEvent(dec(e.append));
        return dec(e.ret);
      },
    });
    return obj;
  },
  // A cycle, in one of the shapes of CYCLES.
  cyclic: (e, dec) => CYCLES[e.shape](dec(e.ret)),
  // A sparse array of `length` in one of the shapes of SPARSE.
  'huge-sparse': (e) => SPARSE[e.shape](e.length),
};

/** An instance of a class, for a cycle through one. */
class CycleNode {
  constructor(parent) {
    this.parent = parent;
  }
}

/** `v` with `toJSON` returning `ret`: own and enumerable, or (`hidden`) not. */
function withToJSON(v, ret, { hidden = false } = {}) {
  Object.defineProperty(v, 'toJSON', { value: () => ret, enumerable: !hidden, writable: true, configurable: true });
  return v;
}

/**
 * Cycles, by shape. `self` is plain (JSON.stringify refuses it before
 * anything is written); the others hide theirs from the journal line
 * behind `toJSON` or a getter, or close it while the line is written, so
 * it shows where the old module copies a member out (`[...waivers]`,
 * `{ ...paramValues }`) or writes the snapshot file.
 */
const CYCLES = {
  self: () => selfCycle(),
  hidden: (ret) => withToJSON(selfCycle(), ret, { hidden: true }),
  items: () => withToJSON([selfCycle()], []),
  pair: () => {
    const a = { n: 1 };
    const b = { n: 2, a };
    a.b = b;
    return withToJSON([a, b], []);
  },
  throughInstance: () => {
    const parent = { n: 1 };
    parent.child = new CycleNode(parent);
    return withToJSON([parent], []);
  },
  getter: (ret) => withToJSON(Object.defineProperty({}, 'r', { enumerable: true, configurable: true, get: selfCycle }), ret, { hidden: true }),
  // `b` is written before `a`'s toJSON makes it hold itself.
  closedLater: () => {
    const b = { n: 1 };
    const a = Object.defineProperty({}, 'toJSON', {
      value: () => {
        b.self = b;
        return 1;
      },
    });
    return { b, a };
  },
  shared: () => {
    const s = { x: 1 };
    return { a: s, b: [s, { s }], gone: undefined };
  },
};

/**
 * `a` answering its own conversions and spread (`Symbol.toPrimitive`,
 * `Symbol.iterator`), as V8 would otherwise join or iterate every hole of
 * a huge length, which takes minutes (the old module as much as any).
 */
function quick(a) {
  a[Symbol.toPrimitive] = () => 2;
  a[Symbol.iterator] = function* items() {
    for (const key of Object.keys(a)) if (/^\d+$/.test(key)) yield a[key];
  };
  return a;
}

/**
 * Sparse and long arrays, by shape: JSON writes every hole of one
 * (`Invalid string length` past V8's longest string), so it is met where
 * the old module copies it out of what hid it or writes the snapshot file.
 */
const SPARSE = {
  hidden: (length) => withToJSON(quick(sparse(length)), 's'),
  inObject: (length) => withToJSON({ list: sparse(length) }, 'o', { hidden: true }),
  asWaiver: (length) => withToJSON([quick(sparse(length))], []),
  getter: (length) => withToJSON(Object.defineProperty({}, 'list', { enumerable: true, configurable: true, get: () => sparse(length) }), 'g', { hidden: true }),
  long: (length) => withToJSON(sparse(length), []),
  longDense: (length) => new Array(length).fill(undefined),
};

/** The recipe a value was built from, if it was. */
export function recipeOf(value) {
  return (typeof value === 'object' && value !== null) || typeof value === 'function' ? RECIPES.get(value) : undefined;
}

/** Build the value a recipe describes (as the runner will), for the generator's own use. */
export function fromRecipe(recipe) {
  return decodeValue(recipe);
}

// ---------------------------------------------------------------------------
// Raw bytes
// ---------------------------------------------------------------------------

/** Bytes as JSON: `{ utf8 }` when they are valid UTF-8, else `{ b64 }`. */
export function encodeBytes(buf) {
  const text = buf.toString('utf8');
  if (Buffer.byteLength(text, 'utf8') === buf.length && Buffer.from(text, 'utf8').equals(buf)) {
    return { utf8: text };
  }
  return { b64: buf.toString('base64') };
}

export function decodeBytes(enc) {
  if (typeof enc.utf8 === 'string') return Buffer.from(enc.utf8, 'utf8');
  return Buffer.from(enc.b64, 'base64');
}

/**
 * File contents for a transcript: the text itself when the bytes are valid
 * UTF-8 (a plain string), else `{ b64 }`.
 */
export function fileContent(buf) {
  const e = encodeBytes(buf);
  return typeof e.utf8 === 'string' ? e.utf8 : e;
}

/** Stable JSON text of an encoded tree (used for equality). */
export function canonicalText(encoded) {
  return JSON.stringify(encoded);
}
