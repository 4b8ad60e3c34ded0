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

const TAG = '$';

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
 */
export function encodeValue(value) {
  const stack = [];
  const onStack = new Set();

  function enc(v) {
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

  function encObject(obj) {
    const plain = encProps(obj, Object.keys(obj));
    const proto = Object.getPrototypeOf(obj);
    if (proto === Object.prototype) return plain;
    if (proto === null) return { $: 'nullproto', v: plain };
    const ctor = Object.prototype.hasOwnProperty.call(proto, 'constructor') ? proto.constructor : null;
    if (typeof ctor === 'function' && ctor.prototype === proto && ctor.name && ctor !== Object) {
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
      const ev = enc(obj[key]);
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

/** Rebuild the JavaScript value an encodeValue() result describes. */
export function decodeValue(encoded) {
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
      default:
        throw new Error(`cannot decode tag ${JSON.stringify(e[TAG])}`);
    }
  }

  return dec(encoded);
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
