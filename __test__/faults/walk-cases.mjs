// Caller values that a walk over them could follow forever or copy without
// bound: cycles (plain, through class instances, behind `toJSON`, made by a
// `toJSON` while the journal line is written, returned by getters and
// iterators), one object in two places, sparse arrays of huge length, long
// arrays, deep nesting. Each case is an event appended to a session that
// already holds one `generate`; workers/walk.mjs runs it, and
// walk.test.mjs compares what happens with the old module (or with
// ../fixtures/walk.json, recorded from it by ../fixtures/gen-walk.mjs).
//
// Where the old module itself throws (`JSON.stringify` of the snapshot file
// meets the cycle, the huge array or the depth), it does so after the
// journal line is written: the package must throw the same error after the
// same line, and write no snapshot file.

import { selfCycle, sparse } from '../support/odd-values.mjs';

/**
 * `v` with an own enumerable `toJSON` returning `ret`: JSON sees `ret` only.
 * Set by assignment, so the function is nameless, as the recorded fixture
 * (../fixtures/walk.json) has it.
 */
function behindToJSON(v, ret) {
  v.toJSON = () => ret;
  return v;
}

class Node {
  constructor(parent) {
    this.parent = parent;
  }
}

function nestedArrays(depth) {
  let v = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

function withGetter(key, get) {
  return Object.defineProperty({}, key, { enumerable: true, get });
}

export const CASES = {
  // Cycles the reducer's `[...waivers]` takes out from behind `toJSON`.
  'waivers hiding a self-cycle behind toJSON': () => ({ type: 'detector_waivers', waivers: behindToJSON([selfCycle()], []) }),
  'waivers hiding a two-object cycle behind toJSON': () => {
    const a = { n: 1 };
    const b = { n: 2, a };
    a.b = b;
    return { type: 'detector_waivers', waivers: behindToJSON([a, b], []) };
  },
  'waivers hiding a cycle through a class instance behind toJSON': () => {
    const parent = { n: 1 };
    parent.child = new Node(parent);
    return { type: 'detector_waivers', waivers: behindToJSON([parent], []) };
  },
  'waivers of length 2 ** 32 - 1 whose own iterator yields a cycle': () => {
    const w = behindToJSON(sparse(2 ** 32 - 1), []);
    w[Symbol.iterator] = function* iterate() {
      yield selfCycle();
    };
    return { type: 'detector_waivers', waivers: w };
  },
  // Cycles a `toJSON` makes while the journal line is being written: the
  // old module then holds them in the pending event.
  'toJSON closing a self-cycle in a member written before it': () => {
    const b = { n: 1 };
    return { type: 'generate', b, a: { toJSON() { b.self = b; return 1; } } };
  },
  'toJSON pointing a member back at the event': () => {
    const event = { type: 'generate', x: {} };
    event.toJSON = function toJSON() {
      delete this.toJSON;
      this.x.back = this;
      return { type: 'generate' };
    };
    return event;
  },
  'toJSON making the event hold itself': () => {
    const event = { type: 'generate' };
    event.toJSON = function toJSON() {
      delete this.toJSON;
      this.me = this;
      return { type: 'generate' };
    };
    return event;
  },
  'toJSON closing a cycle of 50 objects': () => {
    const first = { n: 0 };
    let last = first;
    for (let i = 1; i < 50; i++) last = last.next = { n: i };
    return { type: 'generate', first, a: { toJSON() { last.next = first; return 1; } } };
  },
  'paramValues whose getter returns a fresh cycle': () => ({
    type: 'checkpoint',
    revision: 1,
    paramValues: withGetter('r', selfCycle),
  }),
  'a cycle behind toJSON in the pending event': () => ({ type: 'generate', x: behindToJSON(selfCycle(), 'c') }),
  'one object in three places of an event': () => {
    const shared = { x: 1 };
    return { type: 'generate', gone: undefined, a: shared, b: [shared, { shared }] };
  },
  // Sparse arrays of huge length: JSON writes every hole (`Invalid string
  // length`); a walk element by element would never end.
  'an array of length 2 ** 32 - 1 behind toJSON in the pending event': () => ({ type: 'generate', x: behindToJSON(sparse(2 ** 32 - 1), 's') }),
  'an array of length 1e9 as a waiver': () => ({ type: 'detector_waivers', waivers: behindToJSON([sparse(1e9)], []) }),
  'an array of length 2 ** 32 - 1 in an object with toJSON, as a waiver': () => ({
    type: 'detector_waivers',
    waivers: behindToJSON([behindToJSON({ list: sparse(2 ** 32 - 1) }, 'w')], []),
  }),
  'an array of length 2 ** 32 - 1 from a paramValues getter': () => ({
    type: 'checkpoint',
    revision: 1,
    paramValues: withGetter('r', () => sparse(2 ** 32 - 1)),
  }),
  'an array of length 2 ** 32 - 1 in a Map': () => ({ type: 'generate', x: new Map([['k', sparse(2 ** 32 - 1)]]) }),
  'waivers of 200,000 holes behind toJSON': () => ({ type: 'detector_waivers', waivers: behindToJSON(sparse(200_000), []) }),
  'an event holding 100,000 undefined values': () => ({ type: 'generate', list: new Array(100_000).fill(undefined) }),
  // Depth past V8's own `JSON.stringify`.
  'waivers hiding 100,000 nested arrays behind toJSON': () => ({ type: 'detector_waivers', waivers: behindToJSON([nestedArrays(100_000)], []) }),
  'toJSON nesting 100,000 arrays in a member written before it': () => {
    const holder = { d: 0 };
    return { type: 'generate', holder, a: { toJSON() { holder.d = nestedArrays(100_000); return 1; } } };
  },
};
