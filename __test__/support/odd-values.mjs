// Building blocks of caller values a walk over them could follow forever
// or copy without bound, shared by the differential generator's `cyclic`
// and `huge-sparse` classes (encode.mjs) and the walk cases
// (faults/walk-cases.mjs). What V8 names in its messages stays with each
// user (a class for a cycle through an instance, a `toJSON` function):
// the recorded fixtures depend on them.

/** `{ k: 1, self: <itself> }` */
export function selfCycle() {
  const c = { k: 1 };
  c.self = c;
  return c;
}

/** `[]` of `length` holding 'x' at index 3. */
export function sparse(length) {
  const a = [];
  a.length = length;
  a[3] = 'x';
  return a;
}
