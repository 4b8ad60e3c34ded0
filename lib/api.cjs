'use strict';
// The package's API, made over a binding: the package's index.js passes the
// addon binding.js loads, a vendored bundle's index.cjs the one its
// manifest-checking loader loads. The old module's calling conventions:
// parameter defaults, destructuring, its argument checks in its order,
// `path.resolve`, `new Date()` and `JSON.stringify` all run here, in
// JavaScript, so V8 and Node produce exactly the values and messages they
// produce for the old module. The binding does the files, the journal and
// the reducer.
//
// One module in sections (the API; the session store; the source lock; which
// events cross as JSON text; what the addon asks V8; snapshots from the
// addon's payloads), not one module each: every file a process loads costs
// it time as it starts (about 0.4 ms of CPU each on Node 22), and
// quiver-cli's helpers are short processes that load this at every start.

const path = require('node:path');
const { isProxy } = require('node:util').types;

/**
 * The package's exports, by the quiver-cli module whose exports they
 * replace: what `create` returns, what the vendored bundle's index.mjs and
 * the shims re-export, and what the reference suites' swap imports.
 */
const EXPORTS = Object.freeze({
  'session-store.mjs': Object.freeze(['createLiveSessionStore', 'GENERATION_FENCED_PHASES']),
  'source-lock.mjs': Object.freeze(['withSourceLockSync', 'sourceLockPath']),
});

/**
 * The API over `binding`: one property per name of `EXPORTS`, in that
 * order (checked here, so the list cannot drift from what the sections make).
 * Each call makes a new one; nothing is shared between them. `readOnly`
 * (the CLI's, never the package's) opens every store read-only: it creates,
 * sweeps and writes nothing, and its `appendEvent` and `flush` throw.
 * @param {typeof import('../binding.js')} binding
 * @param {{ readOnly?: boolean }} [options]
 */
function create(binding, { readOnly = false } = {}) {
  const api = { ...sessionStore(binding, readOnly), ...sourceLock(binding) };
  const names = Object.values(EXPORTS).flat();
  if (Object.keys(api).join() !== names.join()) throw new Error(`quiver-live-native: the API makes ${Object.keys(api).join(', ')}; EXPORTS lists ${names.join(', ')}`);
  return api;
}

// ---------------------------------------------------------------------------
// The session store (the old session-store.mjs)

/**
 * @param {typeof import('../binding.js')} native
 * @param {boolean} readOnly
 */
function sessionStore(native, readOnly) {
  const SCHEMA = native.schema();
  const COMPLETED_PHASES = new Set(SCHEMA.completedPhases);
  // Phase names a store shares (see `shareStrings`): the reducer's are a
  // handful; a journal or snapshot file may name any others.
  const MAX_PHASE_NAMES = 64;
  // The payload kinds, patch codes, walk answers and HOST_OPS names the binding uses.
  const boundary = native.boundary();
  const materialize = payloadDecoder(boundary);
  const HOST_OPS = hostOps(materialize, boundary);

  function projectRoot(cwd) {
    return native.projectRootOf(path.resolve(cwd), homedir());
  }

  /** The old module's `safeSessionId`: its message concatenates the id as JS does. */
  function sessionFileId(id) {
    if (typeof id !== 'string' || !native.isSessionId(id)) throw new Error('invalid session id: ' + id);
    return id;
  }

  /** @param {{ cwd?: string, sessionId?: string, durable?: boolean }} [options] */
  function createLiveSessionStore({ cwd = process.cwd(), sessionId, durable } = {}) {
    const [store, rootDir, legacyRootDir] = readOnly
      ? native.storeOpenReadOnly(projectRoot(cwd), HOST_OPS)
      : native.storeOpen(projectRoot(cwd), !!durable, HOST_OPS);
    // The object last handed out per session, with the native version it
    // shows: an unchanged session returns the same object, as the old
    // module's cache does.
    const handedOut = new Map();
    // The old module's snapshots share their id with the session's and their
    // phase with the reducer's constant, where JSON.parse gives each snapshot
    // copies of its own: a store holding thousands keeps one of each string.
    const phaseNames = new Map();
    // Own members only: nothing on a prototype is read or run.
    const shareStrings = (parsed, id) => {
      if (!isPlainMember(parsed)) return parsed;
      if (Object.hasOwn(parsed, 'id') && parsed.id === id) parsed.id = id;
      const phase = Object.hasOwn(parsed, 'phase') ? parsed.phase : undefined;
      if (typeof phase === 'string') {
        const name = phaseNames.get(phase);
        if (name !== undefined) parsed.phase = name;
        else if (phaseNames.size < MAX_PHASE_NAMES) phaseNames.set(phase, phase);
      }
      const pending = Object.hasOwn(parsed, 'pendingEvent') ? parsed.pendingEvent : undefined;
      if (isPlainMember(pending) && Object.hasOwn(pending, 'id') && pending.id === id) pending.id = id;
      return parsed;
    };

    function current(id, version) {
      const held = handedOut.get(id);
      if (held && held.version === version) return held.snapshot;
      const snapshot = materialize(native.storeSnapshot(store, id, held ? held.version : -1), held?.snapshot, shareStrings, id);
      handedOut.set(id, { version, snapshot });
      return snapshot;
    }

    function getSnapshot(id = sessionId, opts = {}) {
      if (!id) throw new Error('session id required');
      // The read checks the id itself (-1: invalid): one call into the addon.
      const version = typeof id === 'string' ? native.storeRead(store, id) : -1;
      if (version < 0) throw new Error('invalid session id: ' + id);
      const snapshot = current(id, version);
      if (!opts.includeCompleted && COMPLETED_PHASES.has(snapshot.phase)) return null;
      return snapshot;
    }

    /**
     * Writes a snapshot file the addon left for V8 to render (`awaited` is
     * `[journalBytes, nextSeq]`): the snapshot holds values only V8 can
     * stringify, or nests deeper than the addon writes unchecked. This is the
     * old module's own `JSON.stringify(payload, null, 2)` of the very objects
     * it holds, so `toJSON` and getters run, and where it throws (a RangeError
     * past V8's depth, a throwing `toJSON`) it throws the same and writes
     * nothing.
     */
    function persist(id, version, snapshot, awaited) {
      let text;
      try {
        text = JSON.stringify({ ...snapshot, __journalBytes: awaited[0], __nextSeq: awaited[1] }, null, 2) + '\n';
      } catch (err) {
        // After an append, the session is derived again (the old module's
        // cache still holds the state before it, so its next read replays the
        // journal); after a flush, the state and the object handed out stay,
        // as the old module keeps what the flush read.
        if (!native.storeDropUnrendered(store, id)) handedOut.delete(id);
        throw err;
      }
      native.storePersist(store, id, version, text);
    }

    return {
      rootDir,
      legacyRootDir,
      appendEvent(event) {
        if (!event || typeof event !== 'object') throw new Error('event object required');
        const id = event.id || sessionId;
        if (!id || typeof id !== 'string') throw new Error('event id required');
        if (!event.type || typeof event.type !== 'string') throw new Error('event type required');
        const normalized = { ...event, id };
        sessionFileId(id);
        let ts, entry, exotic;
        try {
          ts = new Date().toISOString();
          [entry, exotic] = renderEntry({ seq: 0, id, type: normalized.type, ts, event: normalized });
        } catch (err) {
          // The old module reads the session before it stamps and renders the
          // entry, so a refused event still leaves that state cached.
          native.storeRead(store, id);
          throw err;
        }
        // The snapshot holds the event as it is in memory: read it value by
        // value when its JSON text would lose something, else parse the text.
        // Own symbol-keyed members (JSON and the model have no place for
        // them, `{ ...event }` copies them) make the addon hold it whole too.
        const base = handedOut.get(id);
        const baseVersion = base ? base.version : -1;
        const symbolKeyed = Object.getOwnPropertySymbols(normalized).length !== 0;
        const [version, payload, awaited] =
          exotic || symbolKeyed
            ? native.storeAppend(store, id, normalized, entry, ts, baseVersion, symbolKeyed)
            : native.storeAppendJson(store, id, entry, baseVersion);
        const snapshot = materialize(payload, base?.snapshot, shareStrings, id);
        handedOut.set(id, { version, snapshot });
        if (awaited) persist(id, version, snapshot, awaited);
        return snapshot;
      },
      has(id) {
        if (!id || typeof id !== 'string') return false;
        return native.storeHas(store, sessionFileId(id));
      },
      getSnapshot,
      flush(id = sessionId) {
        if (!id) throw new Error('session id required');
        const [version, awaited] = native.storeFlush(store, sessionFileId(id));
        const snapshot = current(id, version);
        if (awaited) persist(id, version, snapshot, awaited);
        return snapshot;
      },
      listActiveSessions() {
        const [ids, versions] = native.storeReadActive(store);
        return ids.map((id, i) => current(id, versions[i]));
      },
    };
  }

  return { createLiveSessionStore, GENERATION_FENCED_PHASES: readOnlySet(SCHEMA.generationFencedPhases) };
}

/** An object (not an array) JSON.parse may have made. */
function isPlainMember(x) {
  return x !== null && typeof x === 'object' && !Array.isArray(x);
}

/**
 * The phases after which late generation events are fenced off. The
 * reducer runs natively and reads its own copy, so this Set is read-only:
 * `add`, `delete` and `clear` throw instead of silently changing nothing.
 */
function readOnlySet(items) {
  const set = new Set(items);
  for (const method of ['add', 'delete', 'clear']) {
    Object.defineProperty(set, method, {
      value() {
        throw new TypeError(`GENERATION_FENCED_PHASES is read-only in quiver-live-native (${method})`);
      },
    });
  }
  return Object.freeze(set);
}

// ---------------------------------------------------------------------------
// The source lock (the old source-lock.mjs)

/** @param {typeof import('../binding.js')} native */
function sourceLock(native) {
  function sourceLockPath(file, cwd = process.cwd()) {
    const absFile = path.resolve(cwd, file);
    return native.lockPath(absFile, path.resolve(cwd), homedir());
  }

  function withSourceLockSync(file, owner, fn, { cwd = process.cwd(), waitMs = 0, retryMs = 5 } = {}) {
    const lockPath = sourceLockPath(file, cwd);
    const absFile = path.resolve(cwd, file);
    const deadline = Date.now() + Math.max(0, Number(waitMs) || 0);
    const ownerJson = JSON.stringify(owner);
    const fileJson = JSON.stringify(absFile);
    let token;
    while ((token = native.tryLock(lockPath, ownerJson, fileJson)) === null) {
      if (Date.now() >= deadline) {
        const locked = /** @type {Error & { code?: string, lockPath?: string }} */ (new Error('source_locked'));
        locked.code = 'SOURCE_LOCKED';
        locked.lockPath = lockPath;
        throw locked;
      }
      sleepSync(Math.max(1, Math.min(Number(retryMs) || 5, deadline - Date.now())));
    }
    try {
      return fn();
    } finally {
      native.unlock(lockPath, token);
    }
  }

  return { withSourceLockSync, sourceLockPath };
}

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * `os.homedir()`. Outside Windows that is HOME whenever HOME is set, even
 * empty (libuv reads it first), so `node:os`, whose first load costs a short
 * helper process about 0.3 ms, loads only where HOME is unset.
 */
function homedir() {
  const home = process.platform === 'win32' ? undefined : process.env.HOME;
  return home ?? require('node:os').homedir();
}

// ---------------------------------------------------------------------------
// Which events cross as JSON text: an event whose text says all of it is
// parsed natively from the entry line; anything else is read value by value,
// and what is not plain data is held by reference and asked of V8 (HOST_OPS).
// None of this runs the caller's code.

/**
 * The entry's JSON text (the old module's own `JSON.stringify(entry)`), and
 * whether the text says less than the event: it holds a value JSON drops or
 * changes, or one that is not plain data (see `plainData`), which the old
 * module holds by reference and coerces with V8's operators. Such an event
 * is read value by value. The check runs first and runs none of the
 * caller's code, so a getter or `toJSON` runs only in `JSON.stringify`, as
 * often and with the same stack as in the old module, and what it does
 * there (append, throw) is what it does there.
 */
/** @returns {[string, boolean]} */
function renderEntry(entry) {
  const exotic = saysLess(entry.event);
  return [JSON.stringify(entry), exotic];
}

/**
 * Whether the event's JSON text would say less than the event: some value
 * in it is no plain data, or one JSON drops or changes, or `toJSON` was
 * given to every object. Reads data properties only, with a stack of its
 * own: any depth, none of the caller's code.
 * @param {object} event
 */
function saysLess(event) {
  if ('toJSON' in Array.prototype) return true;
  const todo = [event];
  // A cycle is walked once; `JSON.stringify` then refuses it.
  const seen = new Set();
  while (todo.length) {
    const v = todo.pop();
    if (typeof v !== 'object' || v === null) {
      if (typeof v === 'bigint' || jsonLoses(v)) return true;
      continue;
    }
    if (seen.has(v)) continue;
    seen.add(v);
    if (!plainData(v, todo)) return true;
  }
  return false;
}

/** Whether JSON text drops or changes a value that is not an object. */
function jsonLoses(value) {
  return (
    value === undefined ||
    typeof value === 'function' ||
    typeof value === 'symbol' ||
    (typeof value === 'number' && (value !== value || value === Infinity || value === -Infinity || (value === 0 && 1 / value < 0)))
  );
}

/**
 * Whether the object `v` is plain data: what its JSON text and a copy of it
 * say is all V8 would ever make of it. Not a Proxy; an ordinary object or
 * array; every own property an enumerable data property, none of them a
 * conversion (`toJSON`, `valueOf`, `toString`, `Symbol.toPrimitive`); no
 * array holes or extra properties. Its values are not looked at; when
 * `values` is given, each is pushed there as it is read (`saysLess` walks
 * them). It runs none of the caller's code. Anything else is held by
 * reference and asked of V8 (see `HOST_OPS`).
 * @param {object} v
 * @param {unknown[]} [values]
 */
function plainData(v, values) {
  if (isProxy(v)) return false;
  const array = Array.isArray(v);
  if (Object.getPrototypeOf(v) !== (array ? Array.prototype : Object.prototype)) return false;
  const keys = Reflect.ownKeys(v);
  if (array && keys.length !== v.length + 1) return false;
  for (const key of keys) {
    if (typeof key !== 'string' || CONVERSIONS.has(key)) return false;
    const own = Reflect.getOwnPropertyDescriptor(v, key);
    if (!own.enumerable) {
      if (array && key === 'length') continue;
      return false;
    }
    if (!('value' in own)) return false;
    if (values) values.push(own.value);
  }
  return true;
}

const CONVERSIONS = new Set(['toJSON', 'valueOf', 'toString']);

/** The most values one walk of the addon copies; past them it holds objects. */
const WALK_BUDGET = 65536;

/**
 * The test of one walk of the addon over a caller's value (see the
 * binding's `convert::from_js`), asked about each object it meets: it
 * reads the object as data only when it is plain data (`plainData`), met
 * for the first time, and the walk has copied fewer than WALK_BUDGET values;
 * any other it holds by reference, as the old module holds every value,
 * and asks V8 about. So a cycle, an object met twice, a sparse or a very
 * long array cost the walk one value each, and V8 answers for them (a
 * circular structure, an invalid string length) as for the old module.
 * Objects are numbered as first met; one met again is answered with its
 * number, so that the walk can tell a cycle. The state is the walk's own.
 * `WALK` are the binding's answer codes (its `boundary().walk`).
 */
function startWalk(WALK) {
  const met = new Map();
  let budget = WALK_BUDGET;
  return (v) => {
    const again = met.get(v);
    if (again !== undefined) return again;
    met.set(v, met.size);
    if (!plainData(v)) return WALK.hold;
    budget -= Array.isArray(v) ? v.length : Object.keys(v).length;
    return budget >= 0 ? WALK.read : WALK.hold;
  };
}

// ---------------------------------------------------------------------------
// What the addon asks V8

/**
 * What the addon asks V8 to run on values only V8 can interpret (the
 * reducer's `Number()`, `>=`, property keys and spreads, as the old
 * module's `applyEvent` runs them), and the two helpers it needs for that:
 * `startWalk` to tell what it may read as data, `materialize` to build its
 * operands. `spreadHeld`, `setOnCopy` and `toPendingEvent` make objects the
 * addon holds as they are: they may have symbol keys (an agent phase that
 * is a Symbol keys its timing, an event's own symbol-keyed members), which
 * spreads copy and JSON drops. `appendItems` makes an array the addon holds
 * too: it holds the caller's own objects, as the old module's does, which
 * a copy cannot stand for where `JSON.stringify` names the objects of a
 * cycle. None changes its operands. One frozen object per binding: nothing
 * here holds state. The binding's `boundary()` gives the walk's answer
 * codes and the operations it calls (`hostOps`); each must be here.
 * @param {(payload: any) => any} materialize
 * @param {{ walk: { read: number, hold: number }, hostOps: string[] }} boundary
 */
function hostOps(materialize, boundary) {
  const names = boundary.hostOps;
  const HOST_OPS = Object.freeze({
    startWalk: () => startWalk(boundary.walk),
    materialize: (payload) => materialize(payload),
    number: (x) => Number(x),
    greaterOrEqual: (a, b) => a >= b,
    propertyKey: (x) => Reflect.ownKeys({ [x]: 0 })[0],
    appendItems: (list, x) => [...list, ...(Array.isArray(x) ? x : [])],
    spreadHeld: (x) => ({ ...x }),
    toPendingEvent: (event) => {
      const copy = { ...event };
      delete copy.token;
      return copy;
    },
    setOnCopy: (o, k, v) => {
      const copy = { ...o };
      copy[k] = v;
      return copy;
    },
  });

  for (const name of names) {
    if (typeof HOST_OPS[name] !== 'function') throw new Error(`quiver-live-native: lib/api.cjs has no HOST_OPS.${name}, which the binding calls`);
  }
  return HOST_OPS;
}

// ---------------------------------------------------------------------------
// Snapshots from the addon's payloads

/**
 * The `materialize` of a binding whose payload kinds and patch codes are
 * `codes` (its `boundary()`).
 * @param {import('../binding.js').Boundary} codes
 */
function payloadDecoder({ payload: PAYLOAD, patch: PATCH }) {
  const SPECIAL = new Map([
    [PATCH.undefined, undefined],
    [PATCH.nan, NaN],
    [PATCH.infinity, Infinity],
    [PATCH.negativeInfinity, -Infinity],
    [PATCH.negativeZero, -0],
  ]);

  /**
   * A snapshot from its native payload: the whole snapshot as JSON text, or
   * `[kind, text, patches, kept]`, where a kind of `PAYLOAD.changedFields`
   * means the text holds only the fields that changed since `previous`, the
   * snapshot handed out before. The new snapshot is then a copy of that one
   * with those fields replaced: same keys, same order. `share(parsed, id)`
   * is handed what JSON.parse made before anything else can see it (never
   * a value of the caller's, which patches put in).
   * @param {any} payload
   * @param {any} [previous]
   * @param {(parsed: any, id: string | undefined) => any} [share]
   * @param {string} [id]
   */
  function materialize(payload, previous, share = asParsed, id = undefined) {
    if (typeof payload === 'string') return share(JSON.parse(payload), id);
    const [kind, text, patches, kept] = payload;
    const parsed = patches === null ? share(JSON.parse(text), id) : patched(JSON.parse(text), JSON.parse(patches), kept);
    return kind === PAYLOAD.changedFields ? Object.assign({ ...previous }, parsed) : parsed;
  }

  function asParsed(parsed) {
    return parsed;
  }

  /**
   * Puts back what JSON cannot carry; each patch is `[path, code, ...args]`
   * (codes: `PATCH`). An empty path is the root itself (a value built on its
   * own).
   */
  function patched(root, patches, kept) {
    for (const [steps, code, ...args] of patches) {
      const last = steps.length - 1;
      let target = root;
      for (let i = 0; i < last; i++) target = target[steps[i]];
      if (code === PATCH.proto) {
        const owner = last < 0 ? root : target[steps[last]];
        Object.setPrototypeOf(owner, patched(JSON.parse(args[0]), args[1], kept));
        continue;
      }
      const value = code === PATCH.host ? kept[args[0]] : SPECIAL.get(code);
      if (last < 0) root = value;
      else target[steps[last]] = value;
    }
    return root;
  }

  return materialize;
}

module.exports = { create, EXPORTS };
