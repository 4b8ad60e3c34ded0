//! What the core copies from the V8 it runs in, asked of V8 once, at load.

use napi::bindgen_prelude::*;
use quiver_live_core::js::sort;

/// The fewest elements V8's `sort` looks for a natural run in before it
/// sorts by binary insertion alone, or 0 when it always looks: a
/// descending array costs n - 1 comparisons when the run is found, more
/// when it is not (crates/core/fixtures/gen-v8-sort.mjs measures the same).
const INSERTION_ONLY_BELOW: &str = "(() => {
  for (let n = 3; n <= 64; n++) {
    let comparisons = 0;
    Array.from({ length: n }, (_, i) => [n - i]).sort((a, b) => (comparisons++, a - b));
    if (comparisons === n - 1) return n === 3 ? 0 : n;
  }
  return 0;
})()";

/// Asks V8 how its `sort` looks for runs, and tells the core.
pub fn learn_sort(env: &Env) -> Result<()> {
    let n: u32 = env.run_script(INSERTION_ONLY_BELOW)?;
    sort::set_insertion_only_below(n as usize);
    Ok(())
}
