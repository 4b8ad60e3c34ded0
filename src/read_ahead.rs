//! A journal's lines read, split and skimmed on a second thread while the
//! calling thread applies them.
//!
//! A cold replay of a long journal is about a third reading and validating
//! lines and two thirds applying them, and the two halves are independent
//! until a line is applied. Here a second thread reads the file in chunks,
//! cuts them into whole lines, validates each and locates its members (the
//! same `json_skim` pass a serial replay makes), and hands over batches of
//! bytes and member ranges. Only those cross between threads: values are
//! built and freed on the applying thread, so no allocation is freed on a
//! thread other than the one that made it. (Parsing whole values on the
//! second thread was tried at an earlier stop and was slower than serial.)
//!
//! Lines come out exactly as `BufRead::read_until(b'\n')` gives them: each
//! ends with its `\n`, and a last piece without one is a line of its own,
//! marked incomplete.

use std::io::{self, Read};
use std::ops::Range;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use crate::json_skim::{members_with_nested, MemberSpan};

/// Bytes read per batch: about 250 journal lines, so the batches in flight
/// stay in cache and the applying thread starts soon. Measured on a 20,000
/// event journal: 32–128 KiB were alike, 256 KiB 5% slower, 1 MiB 40%.
pub const CHUNK: usize = 64 << 10;

/// Batches in flight between the threads, beyond the one each is holding:
/// room for the reading thread, usually the faster, to build a lead that
/// absorbs its slower batches. With 2 instead of 8, a cold replay of 20,000
/// events took 2% longer (medians of 21, both orders); 8 batches are 512 KiB.
const IN_FLIGHT: usize = 8;

/// One line of a batch, as byte offsets into its `bytes`.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub start: usize,
    /// End of the line's text, before its `\n`.
    pub body_end: usize,
    /// End of the line in the file, after its `\n` when it has one.
    pub end: usize,
    pub complete: bool,
    /// Where its members and its event's members are in the batch's
    /// `spans`, when the line is UTF-8 and the skim took it; `None` sends
    /// it to the full parser.
    pub members: Option<(Range<usize>, Range<usize>)>,
}

/// Whole lines of the file, in order, with what the skim found.
#[derive(Debug, Default)]
pub struct Batch {
    pub bytes: Vec<u8>,
    pub lines: Vec<Line>,
    pub spans: Vec<MemberSpan>,
}

impl Batch {
    /// A line the skim took: its text, its members and its event's
    /// members. `None` sends the line to the full parser.
    pub fn skimmed(&self, line: &Line) -> Option<(&str, &[MemberSpan], &[MemberSpan])> {
        let (entry, event) = line.members.clone()?;
        // SAFETY: `members` is set only for a line that passed
        // `std::str::from_utf8` when the batch was made, and a batch is not
        // changed after it is handed over.
        let text = unsafe { std::str::from_utf8_unchecked(self.body(line)) };
        Some((text, &self.spans[entry], &self.spans[event]))
    }

    pub fn body(&self, line: &Line) -> &[u8] {
        &self.bytes[line.start..line.body_end]
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.lines.clear();
        self.spans.clear();
    }
}

/// Calls `apply` on every batch of `reader`'s lines, from its position to its
/// end, in order, reading and skimming ahead on a second thread. Returns the
/// first read error. When no thread can be started, returns `Ok(false)`
/// having read nothing, and the caller reads serially.
pub fn for_each_batch<R: Read + Send>(reader: R, chunk: usize, mut apply: impl FnMut(&Batch)) -> io::Result<bool> {
    let (full_tx, full_rx) = sync_channel::<io::Result<Batch>>(IN_FLIGHT);
    let (empty_tx, empty_rx) = sync_channel::<Batch>(IN_FLIGHT + 2);
    std::thread::scope(|scope| {
        let producer = std::thread::Builder::new()
            .name("quiver-read-ahead".to_owned())
            .spawn_scoped(scope, move || produce(reader, chunk, full_tx, empty_rx));
        let Ok(producer) = producer else { return Ok(false) };
        let mut result = Ok(true);
        for batch in full_rx.iter() {
            match batch {
                Ok(batch) => {
                    apply(&batch);
                    let _ = empty_tx.try_send(batch);
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        // Hanging up stops a producer still reading (its next send fails).
        drop(full_rx);
        match producer.join() {
            Ok(()) => result,
            Err(_) => Err(io::Error::other("the journal read-ahead thread failed")),
        }
    })
}

/// The second thread: reads, cuts at the last newline, skims, hands over.
fn produce<R: Read>(mut reader: R, chunk: usize, full: SyncSender<io::Result<Batch>>, empty: Receiver<Batch>) {
    let mut carry = Vec::new();
    let mut skim = (Vec::new(), Vec::new());
    loop {
        let mut batch = empty.try_recv().unwrap_or_default();
        batch.clear();
        batch.bytes.append(&mut carry);
        let (cut, eof) = match fill(&mut reader, &mut batch.bytes, chunk) {
            Ok(v) => v,
            Err(e) => {
                let _ = full.send(Err(e));
                return;
            }
        };
        carry.extend_from_slice(&batch.bytes[cut..]);
        batch.bytes.truncate(cut);
        split(&mut batch, &mut skim);
        if !batch.lines.is_empty() && full.send(Ok(batch)).is_err() {
            return;
        }
        if eof {
            return;
        }
    }
}

/// Reads at least one more chunk into `bytes`, and more while no newline
/// has arrived, so the batch holds at least one whole line. Returns where
/// the batch ends (after its last newline, or everything at the end of the
/// file) and whether the end was reached.
fn fill(reader: &mut impl Read, bytes: &mut Vec<u8>, chunk: usize) -> io::Result<(usize, bool)> {
    loop {
        let old = bytes.len();
        // `read_to_end` on a `take` fills spare capacity without zeroing it
        // first, and retries interrupted reads.
        let n = reader.by_ref().take(chunk as u64).read_to_end(bytes)?;
        if n == 0 {
            return Ok((bytes.len(), true));
        }
        // What came before `old` holds no newline (a batch's carried tail,
        // or a chunk this loop already searched).
        if let Some(at) = bytes[old..].iter().rposition(|&b| b == b'\n') {
            return Ok((old + at + 1, false));
        }
    }
}

/// The offset of the first `\n` in `b`: sixteen bytes per step on x86-64
/// (SSE2, which every x86-64 processor has), eight elsewhere and in the tail.
fn newline(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
        // SAFETY: the intrinsics need SSE2, which this block is compiled only
        // with; each load reads the 16 bytes at `i`, inside `b` (the loop
        // condition), and has no alignment requirement.
        unsafe {
            let nl = _mm_set1_epi8(b'\n' as i8);
            while i + 16 <= b.len() {
                let x = _mm_loadu_si128(b.as_ptr().add(i).cast::<__m128i>());
                let mask = _mm_movemask_epi8(_mm_cmpeq_epi8(x, nl)) as u32;
                if mask != 0 {
                    return Some(i + mask.trailing_zeros() as usize);
                }
                i += 16;
            }
        }
    }
    newline_by_words(&b[i..]).map(|p| i + p)
}

/// [`newline`] eight bytes per step.
fn newline_by_words(b: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let mut i = 0;
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or_default()) ^ (ONES * u64::from(b'\n'));
        // The lowest flagged byte is exact (see `json::plain_len`).
        let flags = x.wrapping_sub(ONES) & !x & HIGH;
        if flags != 0 {
            return Some(i + flags.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    b[i..].iter().position(|&c| c == b'\n').map(|p| i + p)
}

/// Cuts a batch's bytes into lines and skims each.
fn split(batch: &mut Batch, (entry, event): &mut (Vec<MemberSpan>, Vec<MemberSpan>)) {
    let mut start = 0;
    while start < batch.bytes.len() {
        let rest = &batch.bytes[start..];
        let (body_end, end, complete) = match newline(rest) {
            Some(i) => (start + i, start + i + 1, true),
            None => (batch.bytes.len(), batch.bytes.len(), false),
        };
        let members = std::str::from_utf8(&batch.bytes[start..body_end]).ok().and_then(|text| {
            members_with_nested(text, "event", entry, event)?;
            let at = batch.spans.len();
            batch.spans.extend(entry.iter().cloned());
            let mid = batch.spans.len();
            batch.spans.extend(event.iter().cloned());
            Some((at..mid, mid..batch.spans.len()))
        });
        batch.lines.push(Line { start, body_end, end, complete, members });
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines and what was found, per batch, for text read in `chunk`s.
    fn batches(text: &[u8], chunk: usize) -> Vec<(Vec<u8>, bool, bool)> {
        let mut out = Vec::new();
        let started = for_each_batch(text, chunk, |b| {
            for l in &b.lines {
                out.push((b.body(l).to_vec(), l.complete, l.members.is_some()));
            }
        })
        .unwrap();
        assert!(started);
        out
    }

    /// What `read_until(b'\n')` gives, line by line.
    fn reference(text: &[u8]) -> Vec<(Vec<u8>, bool)> {
        let mut r = io::BufReader::new(text);
        let mut out = Vec::new();
        loop {
            let mut buf = Vec::new();
            if io::BufRead::read_until(&mut r, b'\n', &mut buf).unwrap() == 0 {
                return out;
            }
            let complete = buf.last() == Some(&b'\n');
            if complete {
                buf.pop();
            }
            out.push((buf, complete));
        }
    }

    #[test]
    fn lines_match_read_until_at_every_chunk_size() {
        let texts: [&[u8]; 6] = [
            b"",
            b"\n",
            b"{\"a\":1}\n{\"b\":2}\n",
            b"{\"a\":1}\n\n  \n{\"event\":{\"type\":\"x\"}}\n{\"torn\":",
            b"no newline at all",
            b"{\"a\":\"\xff\"}\n{\"a\":\"\xc3\xa9\"}\r\n[1]\n",
        ];
        for text in texts {
            let want = reference(text);
            for chunk in [1, 2, 3, 5, 8, 64, CHUNK] {
                let got = batches(text, chunk);
                let got_lines: Vec<(Vec<u8>, bool)> = got.iter().map(|(b, c, _)| (b.clone(), *c)).collect();
                assert_eq!(got_lines, want, "chunk {chunk}, text {:?}", String::from_utf8_lossy(text));
            }
        }
    }

    #[test]
    fn newline_finds_the_first_one_at_every_offset() {
        // Past two 16-byte steps and into the eight-byte and byte tails.
        for len in 0..56 {
            for at in 0..len {
                let mut b = vec![b'a'; len];
                b[at] = b'\n';
                if at + 3 < len {
                    b[at + 3] = b'\n';
                }
                // Bytes that differ from a newline by one bit or by a borrow.
                for (i, x) in b.iter_mut().enumerate() {
                    if *x != b'\n' && i % 3 == 0 {
                        *x = [0x0b, 0x8a, 0x09, 0x0a ^ 0x80][i % 4];
                    }
                }
                assert_eq!(newline(&b), Some(at), "len {len} at {at}");
                assert_eq!(newline_by_words(&b), Some(at), "len {len} at {at}");
            }
            assert_eq!(newline(&vec![b'x'; len]), None);
            assert_eq!(newline_by_words(&vec![b'x'; len]), None);
        }
    }

    #[test]
    fn skim_results_travel_with_their_lines() {
        let text = b"{\"seq\":1,\"event\":{\"type\":\"a\"}}\nnot json\n{\"e\\u0076ent\":{}}\n{\"a\":\"\xff\"}\n";
        let got = batches(text, 7);
        let found: Vec<bool> = got.iter().map(|(_, _, m)| *m).collect();
        assert_eq!(found, [true, false, false, false]);
        let mut spans = Vec::new();
        for_each_batch(&text[..], CHUNK, |b| {
            let (text, entry, event) = b.skimmed(&b.lines[0]).unwrap();
            spans = entry.iter().chain(event).map(|m| text[m.key.clone()].to_owned()).collect();
        })
        .unwrap();
        assert_eq!(spans, ["seq", "event", "type"]);
    }

    /// A read error reaches the caller, after the lines read before it.
    #[test]
    fn read_errors_are_returned() {
        struct Failing(usize);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("disk gone"));
                }
                self.0 -= 1;
                let line = b"{\"a\":1}\n";
                let n = line.len().min(buf.len());
                buf[..n].copy_from_slice(&line[..n]);
                Ok(n)
            }
        }
        let mut seen = 0;
        let err = for_each_batch(Failing(3), 8, |b| seen += b.lines.len()).unwrap_err();
        assert_eq!(err.to_string(), "disk gone");
        assert!(seen <= 3);
    }
}
