// Shrinking a failing differential sequence before it is printed: fast-check
// searches for a smaller sequence that still fails the same way, leaving out
// operations and then members of the events that remain.
//
// A sequence's ops are plain JSON (values JSON cannot carry are encoded, see
// encode.mjs), so a smaller sequence is a copy with parts left out. fast-check
// shrinks from a given counterexample when its arbitrary can read the value
// without the context it was generated in: a tuple of booleans (keep this
// op?) and a tuple of `constantFrom(LEFT_OUT, member)` (keep this member?),
// each shrinking towards leaving out.

import fc from 'fast-check';

const LEFT_OUT = Symbol('left out');

/**
 * shrinkSequence(seq, fails) -> { seq, runs }
 *
 * `fails(candidate)` runs a candidate sequence (`{ ...seq, ops }`) and says
 * whether it still fails as `seq` does. Rounds of leaving out operations,
 * then event members (two levels deep, never `type` or `id`), repeat until
 * a round leaves nothing more out. A candidate that cannot run (an append
 * before any store was created) fails otherwise, so it is not taken.
 * `runs` counts the candidates run.
 */
export function shrinkSequence(seq, fails) {
  let runs = 0;
  const test = (ops) => {
    runs++;
    return fails({ ...seq, ops });
  };
  let ops = seq.ops;
  for (let round = 0; round < 5; round++) {
    const before = JSON.stringify(ops);
    ops = smallest(ops.map(() => fc.boolean()), ops.map(() => true), (keep) => ops.filter((_op, i) => keep[i]), test);
    const slots = memberSlots(ops);
    ops = smallest(slots.map((s) => fc.constantFrom(LEFT_OUT, s.value)), slots.map((s) => s.value), (kept) => withoutMembers(ops, slots, kept), test);
    if (JSON.stringify(ops) === before) break;
  }
  return { seq: { ...seq, ops }, runs };
}

/**
 * The ops fast-check shrinks `example` (a tuple of `arbs`, read by `build`)
 * to while `test(build(value))` holds; the ops as they were when nothing
 * can be left out.
 */
function smallest(arbs, example, build, test) {
  if (!arbs.length || !test(build(example))) return build(example);
  const outcome = fc.check(fc.property(fc.tuple(...arbs), (value) => !test(build(value))), {
    examples: [[example]],
    numRuns: 1,
    seed: 0,
  });
  return outcome.failed ? build(outcome.counterexample[0]) : build(example);
}

/** The members of appended events that may be left out: `{ op, path, value }`. */
function memberSlots(ops) {
  const slots = [];
  ops.forEach((op, i) => {
    const event = (op.op === 'append' || op.op === 'otherAppend') ? op.args?.[0] : undefined;
    if (!isPlain(event)) return;
    for (const [key, value] of Object.entries(event)) {
      if (key === 'type' || key === 'id') continue;
      slots.push({ op: i, path: [key], value });
      if (isPlain(value) || Array.isArray(value)) {
        for (const [inner, v] of Object.entries(value)) slots.push({ op: i, path: [key, inner], value: v });
      }
    }
  });
  return slots;
}

/** An encoded object that stands for itself (not a recipe: those have `$`). */
function isPlain(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !Object.hasOwn(v, '$');
}

/** A copy of `ops` without the members whose slot holds LEFT_OUT. */
function withoutMembers(ops, slots, kept) {
  const out = structuredClone(ops);
  // Deepest and last first, so an array's later indices go before earlier ones.
  const gone = slots.map((s, i) => ({ ...s, left: kept[i] === LEFT_OUT })).filter((s) => s.left).reverse();
  for (const s of gone) {
    let parent = out[s.op].args[0];
    for (const step of s.path.slice(0, -1)) parent = parent?.[step];
    if (parent === null || typeof parent !== 'object') continue;
    const last = s.path[s.path.length - 1];
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  }
  return out;
}
