//! `Array.prototype.sort` with a comparator, step for step as V8 runs it,
//! so that a comparator that is not a total order (`a - b` over values
//! some of which convert to NaN) leaves the elements in V8's order. V8
//! sorts with TimSort (runs extended by binary insertion, merges that
//! gallop); every comparison below is one V8 makes, in the same order, and
//! only its sign is used, with NaN counting as 0. Nothing here assumes the
//! comparator is consistent, so no input can make it fail.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Below this many elements V8 sorts by binary insertion alone, without
/// looking for a natural run first: 8 in the V8 of Node 26, 0 (it always
/// looks) in those of Node 20 to 24.
static INSERTION_ONLY_BELOW: AtomicUsize = AtomicUsize::new(0);

/// Chooses how short arrays are sorted, to match the V8 of this process
/// (the binding asks V8 once, at load).
pub fn set_insertion_only_below(n: usize) {
    INSERTION_ONLY_BELOW.store(n, Ordering::Relaxed);
}

/// The order V8's `sort` leaves `0..n` in when `less(x, y)` says whether
/// the comparator's result for `(x, y)` is below zero.
pub fn v8_sort_order(n: usize, less: impl FnMut(usize, usize) -> bool) -> Vec<usize> {
    sort_order(n, INSERTION_ONLY_BELOW.load(Ordering::Relaxed), less)
}

fn sort_order(n: usize, insertion_only_below: usize, less: impl FnMut(usize, usize) -> bool) -> Vec<usize> {
    let mut sort = TimSort { work: (0..n).collect(), less, min_gallop: MIN_GALLOP, runs: Vec::new() };
    if n < 2 {
        return sort.work;
    }
    if n < insertion_only_below {
        sort.binary_insertion(0, 0, n);
    } else {
        sort.run(n);
    }
    sort.work
}

/// Galloping starts after this many wins in a row, and stops once neither
/// side wins this many times at a gallop.
const MIN_GALLOP: usize = 7;

struct TimSort<F> {
    work: Vec<usize>,
    less: F,
    /// Moves with the data: lower while galloping pays, higher when not.
    min_gallop: usize,
    /// Runs waiting to be merged, as `(base, length)`.
    runs: Vec<(usize, usize)>,
}

/// Where a merge stopped: only what is left of one side needs placing.
enum End {
    Done,
    /// The last of one side goes at the far end of what is left.
    LastOfShorter,
}

impl<F: FnMut(usize, usize) -> bool> TimSort<F> {
    fn less(&mut self, x: usize, y: usize) -> bool {
        (self.less)(x, y)
    }

    fn run(&mut self, n: usize) {
        let min_run = min_run_length(n);
        let (mut low, mut remaining) = (0, n);
        while remaining != 0 {
            let mut length = self.count_and_make_run(low, low + remaining);
            if length < min_run {
                let forced = min_run.min(remaining);
                self.binary_insertion(low, low + length, low + forced);
                length = forced;
            }
            self.runs.push((low, length));
            self.merge_collapse();
            low += length;
            remaining -= length;
        }
        while self.runs.len() > 1 {
            let mut i = self.runs.len() - 2;
            if i > 0 && self.runs[i - 1].1 < self.runs[i + 1].1 {
                i -= 1;
            }
            self.merge_at(i);
        }
    }

    /// Sorts `low..high`, of which `low..start` is sorted already.
    fn binary_insertion(&mut self, low: usize, start: usize, high: usize) {
        let start = if low == start { start + 1 } else { start };
        for end in start..high {
            let pivot = self.work[end];
            let (mut left, mut right) = (low, end);
            while left < right {
                let mid = left + (right - left) / 2;
                if self.less(pivot, self.work[mid]) {
                    right = mid;
                } else {
                    left = mid + 1;
                }
            }
            self.work[left..=end].rotate_right(1);
        }
    }

    /// The length of the run at `low` (ascending, or strictly descending
    /// and then reversed), at least 1.
    fn count_and_make_run(&mut self, low: usize, high: usize) -> usize {
        if low + 1 == high {
            return 1;
        }
        let descending = self.less(self.work[low + 1], self.work[low]);
        let mut length = 2;
        let mut previous = self.work[low + 1];
        for idx in low + 2..high {
            let current = self.work[idx];
            if self.less(current, previous) != descending {
                break;
            }
            previous = current;
            length += 1;
        }
        if descending {
            self.work[low..low + length].reverse();
        }
        length
    }

    /// Merges until each run is longer than the next, and than the two
    /// after it together.
    fn merge_collapse(&mut self) {
        while self.runs.len() > 1 {
            let mut n = self.runs.len() - 2;
            let len = |i: usize, runs: &[(usize, usize)]| runs[i].1;
            let holds = |i: usize, runs: &[(usize, usize)]| i < 2 || len(i - 2, runs) > len(i - 1, runs) + len(i, runs);
            if !holds(n + 1, &self.runs) || !holds(n, &self.runs) {
                if len(n - 1, &self.runs) < len(n + 1, &self.runs) {
                    n -= 1;
                }
                self.merge_at(n);
            } else if len(n, &self.runs) <= len(n + 1, &self.runs) {
                self.merge_at(n);
            } else {
                break;
            }
        }
    }

    fn merge_at(&mut self, i: usize) {
        let (mut base_a, mut len_a) = self.runs[i];
        let (base_b, len_b) = self.runs.remove(i + 1);
        self.runs[i].1 = len_a + len_b;
        // What of A is below B's first element is in place already, and
        // so is what of B is above A's last.
        let key = self.work[base_b];
        let k = gallop_right(&self.work[base_a..base_a + len_a], key, 0, &mut self.less);
        base_a += k;
        len_a -= k;
        if len_a == 0 {
            return;
        }
        let key = self.work[base_a + len_a - 1];
        let len_b = gallop_left(&self.work[base_b..base_b + len_b], key, len_b - 1, &mut self.less);
        if len_b == 0 {
            return;
        }
        if len_a <= len_b {
            self.merge_low(base_a, len_a, base_b, len_b);
        } else {
            self.merge_high(base_a, len_a, base_b, len_b);
        }
    }

    /// Merges front to back, A (the shorter) copied out.
    fn merge_low(&mut self, base_a: usize, mut len_a: usize, base_b: usize, mut len_b: usize) {
        let temp = self.work[base_a..base_a + len_a].to_vec();
        let (mut dest, mut a, mut b) = (base_a, 0, base_b);
        self.work[dest] = self.work[b];
        dest += 1;
        b += 1;
        len_b -= 1;
        let end = 'merge: {
            if len_b == 0 {
                break 'merge End::Done;
            }
            if len_a == 1 {
                break 'merge End::LastOfShorter;
            }
            loop {
                let (mut wins_a, mut wins_b) = (0, 0);
                loop {
                    if self.less(self.work[b], temp[a]) {
                        self.work[dest] = self.work[b];
                        (dest, b, len_b, wins_b, wins_a) = (dest + 1, b + 1, len_b - 1, wins_b + 1, 0);
                        if len_b == 0 {
                            break 'merge End::Done;
                        }
                        if wins_b >= self.min_gallop {
                            break;
                        }
                    } else {
                        self.work[dest] = temp[a];
                        (dest, a, len_a, wins_a, wins_b) = (dest + 1, a + 1, len_a - 1, wins_a + 1, 0);
                        if len_a == 1 {
                            break 'merge End::LastOfShorter;
                        }
                        if wins_a >= self.min_gallop {
                            break;
                        }
                    }
                }
                self.min_gallop += 1;
                let mut first = true;
                while first || wins_a >= MIN_GALLOP || wins_b >= MIN_GALLOP {
                    first = false;
                    self.min_gallop = self.min_gallop.saturating_sub(1).max(1);
                    wins_a = gallop_right(&temp[a..a + len_a], self.work[b], 0, &mut self.less);
                    if wins_a > 0 {
                        self.work[dest..dest + wins_a].copy_from_slice(&temp[a..a + wins_a]);
                        (dest, a, len_a) = (dest + wins_a, a + wins_a, len_a - wins_a);
                        if len_a == 1 {
                            break 'merge End::LastOfShorter;
                        }
                        // Only an inconsistent comparator gets here.
                        if len_a == 0 {
                            break 'merge End::Done;
                        }
                    }
                    self.work[dest] = self.work[b];
                    (dest, b, len_b) = (dest + 1, b + 1, len_b - 1);
                    if len_b == 0 {
                        break 'merge End::Done;
                    }
                    wins_b = gallop_left(&self.work[b..b + len_b], temp[a], 0, &mut self.less);
                    if wins_b > 0 {
                        self.work.copy_within(b..b + wins_b, dest);
                        (dest, b, len_b) = (dest + wins_b, b + wins_b, len_b - wins_b);
                        if len_b == 0 {
                            break 'merge End::Done;
                        }
                    }
                    self.work[dest] = temp[a];
                    (dest, a, len_a) = (dest + 1, a + 1, len_a - 1);
                    if len_a == 1 {
                        break 'merge End::LastOfShorter;
                    }
                }
                self.min_gallop += 1;
            }
        };
        match end {
            End::Done => self.work[dest..dest + len_a].copy_from_slice(&temp[a..a + len_a]),
            End::LastOfShorter => {
                self.work.copy_within(b..b + len_b, dest);
                self.work[dest + len_b] = temp[a];
            }
        }
    }

    /// Merges back to front, B (the shorter) copied out. Positions are
    /// one past the element meant (`a` is A's next element plus one), so
    /// that none goes below zero.
    fn merge_high(&mut self, base_a: usize, mut len_a: usize, base_b: usize, mut len_b: usize) {
        let temp = self.work[base_b..base_b + len_b].to_vec();
        let (mut dest, mut b, mut a) = (base_b + len_b, len_b, base_a + len_a);
        self.work[dest - 1] = self.work[a - 1];
        dest -= 1;
        a -= 1;
        len_a -= 1;
        let end = 'merge: {
            if len_a == 0 {
                break 'merge End::Done;
            }
            if len_b == 1 {
                break 'merge End::LastOfShorter;
            }
            loop {
                let (mut wins_a, mut wins_b) = (0, 0);
                loop {
                    if self.less(temp[b - 1], self.work[a - 1]) {
                        self.work[dest - 1] = self.work[a - 1];
                        (dest, a, len_a, wins_a, wins_b) = (dest - 1, a - 1, len_a - 1, wins_a + 1, 0);
                        if len_a == 0 {
                            break 'merge End::Done;
                        }
                        if wins_a >= self.min_gallop {
                            break;
                        }
                    } else {
                        self.work[dest - 1] = temp[b - 1];
                        (dest, b, len_b, wins_b, wins_a) = (dest - 1, b - 1, len_b - 1, wins_b + 1, 0);
                        if len_b == 1 {
                            break 'merge End::LastOfShorter;
                        }
                        if wins_b >= self.min_gallop {
                            break;
                        }
                    }
                }
                self.min_gallop += 1;
                let mut first = true;
                while first || wins_a >= MIN_GALLOP || wins_b >= MIN_GALLOP {
                    first = false;
                    self.min_gallop = self.min_gallop.saturating_sub(1).max(1);
                    let k = gallop_right(&self.work[base_a..base_a + len_a], temp[b - 1], len_a - 1, &mut self.less);
                    wins_a = len_a - k;
                    if wins_a > 0 {
                        (dest, a) = (dest - wins_a, a - wins_a);
                        self.work.copy_within(a..a + wins_a, dest);
                        len_a -= wins_a;
                        if len_a == 0 {
                            break 'merge End::Done;
                        }
                    }
                    self.work[dest - 1] = temp[b - 1];
                    (dest, b, len_b) = (dest - 1, b - 1, len_b - 1);
                    if len_b == 1 {
                        break 'merge End::LastOfShorter;
                    }
                    let k = gallop_left(&temp[..len_b], self.work[a - 1], len_b - 1, &mut self.less);
                    wins_b = len_b - k;
                    if wins_b > 0 {
                        (dest, b) = (dest - wins_b, b - wins_b);
                        self.work[dest..dest + wins_b].copy_from_slice(&temp[b..b + wins_b]);
                        len_b -= wins_b;
                        if len_b == 1 {
                            break 'merge End::LastOfShorter;
                        }
                        // Only an inconsistent comparator gets here.
                        if len_b == 0 {
                            break 'merge End::Done;
                        }
                    }
                    self.work[dest - 1] = self.work[a - 1];
                    (dest, a, len_a) = (dest - 1, a - 1, len_a - 1);
                    if len_a == 0 {
                        break 'merge End::Done;
                    }
                }
                self.min_gallop += 1;
            }
        };
        match end {
            End::Done => self.work[dest - len_b..dest].copy_from_slice(&temp[..len_b]),
            End::LastOfShorter => {
                (dest, a) = (dest - len_a, a - len_a);
                self.work.copy_within(a..a + len_a, dest);
                self.work[dest - 1] = temp[b - 1];
            }
        }
    }
}

/// Natural runs shorter than this are extended by binary insertion: `n`
/// itself below 64, else a length between 32 and 64 that splits `n` into
/// a power of two of runs or just under.
fn min_run_length(mut n: usize) -> usize {
    let mut odd = 0;
    while n >= 64 {
        odd |= n & 1;
        n >>= 1;
    }
    n + odd
}

/// Where `key` goes in the sorted `run`, before any elements equal to it,
/// searched outwards from `hint`.
fn gallop_left(run: &[usize], key: usize, hint: usize, less: &mut impl FnMut(usize, usize) -> bool) -> usize {
    let (mut last, mut offset) = (0, 1);
    if less(run[hint], key) {
        let max = run.len() - hint;
        while offset < max && less(run[hint + offset], key) {
            last = offset;
            offset = 2 * offset + 1;
        }
        offset = offset.min(max);
        (last, offset) = (last + hint + 1, offset + hint);
    } else {
        let max = hint + 1;
        while offset < max && !less(run[hint - offset], key) {
            last = offset;
            offset = 2 * offset + 1;
        }
        offset = offset.min(max);
        // `hint - offset` may be -1: `last` holds one more.
        (last, offset) = (hint + 1 - offset, hint - last);
    }
    while last < offset {
        let m = last + (offset - last) / 2;
        if less(run[m], key) {
            last = m + 1;
        } else {
            offset = m;
        }
    }
    offset
}

/// Where `key` goes in the sorted `run`, after any elements equal to it,
/// searched outwards from `hint`.
fn gallop_right(run: &[usize], key: usize, hint: usize, less: &mut impl FnMut(usize, usize) -> bool) -> usize {
    let (mut last, mut offset) = (0, 1);
    if less(key, run[hint]) {
        let max = hint + 1;
        while offset < max && less(key, run[hint - offset]) {
            last = offset;
            offset = 2 * offset + 1;
        }
        offset = offset.min(max);
        (last, offset) = (hint + 1 - offset, hint - last);
    } else {
        let max = run.len() - hint;
        while offset < max && !less(key, run[hint + offset]) {
            last = offset;
            offset = 2 * offset + 1;
        }
        offset = offset.min(max);
        (last, offset) = (last + hint + 1, offset + hint);
    }
    while last < offset {
        let m = last + (offset - last) / 2;
        if less(key, run[m]) {
            offset = m;
        } else {
            last = m + 1;
        }
    }
    offset
}

#[cfg(test)]
mod tests;
