//! Finding the first byte of a small set in a slice, many bytes per step.
//!
//! A journal line is mostly string text, and both the JSON code (where does
//! a string's plain run end?) and the read-ahead (where does a line end?)
//! spend much of their time looking for one of a few bytes. A byte at a
//! time was their largest cost; here sixteen bytes are checked per step on
//! x86-64 (SSE2, which every x86-64 processor has) and eight elsewhere and
//! for the last few bytes. The one unsafe loop lives here; a set only says
//! how to flag its bytes.

/// A set of bytes to look for.
pub trait ByteSet {
    /// Whether `b` is in the set.
    fn contains(b: u8) -> bool;

    /// Per byte of the little-endian word `x`, the high bit set when that
    /// byte is in the set (other bits are ignored). A flag may be wrong only
    /// above a byte rightly flagged, so the lowest flag is exact (the usual
    /// zero-byte trick, see [`zero_flags`]).
    fn flags(x: u64) -> u64;

    /// Per byte of `x`, all ones when that byte is in the set.
    ///
    /// # Safety
    /// Needs SSE2, which the callers are compiled only with.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    unsafe fn flags_sse2(x: std::arch::x86_64::__m128i) -> std::arch::x86_64::__m128i;
}

pub const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);

/// Per byte of `x`, the high bit set where the byte is zero (exact for the
/// lowest such byte), so `zero_flags(x ^ (ONES * c))` flags byte `c`.
#[inline]
pub fn zero_flags(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x
}

/// The offset of the first byte of `b` in `S`, or `b.len()` when none is.
#[inline]
pub fn first_in<S: ByteSet>(b: &[u8]) -> usize {
    let mut i = 0;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_movemask_epi8};
        // SAFETY: this block is compiled only with SSE2; each load reads the
        // 16 bytes at `i`, inside `b` (the loop condition), and has no
        // alignment requirement.
        unsafe {
            while i + 16 <= b.len() {
                let x = _mm_loadu_si128(b.as_ptr().add(i).cast::<__m128i>());
                let mask = _mm_movemask_epi8(S::flags_sse2(x)) as u32;
                if mask != 0 {
                    return i + mask.trailing_zeros() as usize;
                }
                i += 16;
            }
        }
    }
    i + first_in_by_words::<S>(&b[i..])
}

/// [`first_in`] eight bytes per step.
#[inline]
pub fn first_in_by_words<S: ByteSet>(b: &[u8]) -> usize {
    let mut i = 0;
    while let Some(chunk) = b.get(i..i + 8) {
        let flags = S::flags(u64::from_le_bytes(chunk.try_into().unwrap_or_default())) & HIGH;
        if flags != 0 {
            return i + flags.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    i + b[i..].iter().position(|&c| S::contains(c)).unwrap_or(b.len() - i)
}
