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
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::js::json::byte_scan::{self, zero_flags, ByteSet, ONES};
use crate::js::json::skim::{members_with_nested, MemberSpan};
use crate::sys;

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
    /// Whether the lines were skimmed when the batch was split: the second
    /// thread skims them; the calling thread leaves a batch it takes itself
    /// unskimmed, to skim each line just before applying it, while the line
    /// is in cache (skimming a whole 64 KiB batch first and applying it
    /// after cost it 7% more than a serial replay).
    pub skimmed: bool,
}

impl Batch {
    /// A line the skim took: its text, its members and its event's
    /// members. `None` sends the line to the full parser (in a skimmed
    /// batch; see [`Batch::skimmed`]).
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
/// first read error.
///
/// Both threads take batches from the file in turn (see [`Source`]): the
/// second thread reads and skims batch after batch, and the calling thread,
/// whenever the batch it needs next is not ready, takes the next unread one
/// itself instead of waiting. On this two-core virtual machine
/// the second core was now and then unavailable for a whole replay (the
/// thread placed on the caller's core, or its core at half speed), and a
/// caller that only waited then ran slower than one reading alone. When no
/// thread can be started, the calling thread reads everything.
pub fn for_each_batch<R: Read + Send>(reader: R, chunk: usize, apply: impl FnMut(&Batch)) -> io::Result<()> {
    let source = Mutex::new(Source { reader, carry: Vec::new(), taken: 0, done: false });
    let (full_tx, full_rx) = sync_channel::<Taken>(IN_FLIGHT);
    let (empty_tx, empty_rx) = sync_channel::<Batch>(IN_FLIGHT + 2);
    let caller_cpu = AtomicUsize::new(usize::MAX);
    std::thread::scope(|scope| {
        let (source, cpu) = (&source, &caller_cpu);
        let producer = std::thread::Builder::new()
            .name("quiver-read-ahead".to_owned())
            .spawn_scoped(scope, move || produce(source, chunk, cpu, full_tx, empty_rx));
        // Without the thread its channel is closed at once: the calling
        // thread then takes every batch itself.
        let result = apply_in_order(source, chunk, &caller_cpu, &full_rx, &empty_tx, apply);
        // Hanging up stops a producer still reading (its next send fails).
        drop(full_rx);
        match producer.map(|p| p.join()) {
            Ok(Err(_)) => Err(io::Error::other("the journal read-ahead thread failed")),
            _ => result,
        }
    })
}

/// The unread part of the file, which either thread may take the next batch
/// of. Batches are numbered as they are taken, under the lock, so their
/// numbers follow the file.
struct Source<R> {
    reader: R,
    /// The unfinished line the last batch taken ended before.
    carry: Vec<u8>,
    /// Batches taken so far: the next one's number.
    taken: usize,
    /// The end of the file was reached, or a read failed.
    done: bool,
}

/// A batch and its number, or the read error that ended the file.
type Taken = (usize, io::Result<Batch>);

impl<R: Read> Source<R> {
    /// Reads the next batch's whole lines into `batch` (not yet split);
    /// its number, or `None` once everything was taken.
    fn take(&mut self, chunk: usize, batch: &mut Batch) -> io::Result<Option<usize>> {
        if self.done {
            return Ok(None);
        }
        let read = read_batch(&mut self.reader, chunk, &mut self.carry, batch);
        self.done = !matches!(read, Ok(false));
        read?;
        self.taken += 1;
        Ok(Some(self.taken - 1))
    }
}

fn take_next<R: Read>(source: &Mutex<Source<R>>, chunk: usize, batch: &mut Batch) -> io::Result<Option<usize>> {
    // A panic on the second thread fails the whole call (`for_each_batch`
    // turns its join error into the result), so whatever it left behind is
    // never used for a replay; taking the lock anyway only lets the calling
    // thread finish its loop instead of panicking too.
    source.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take(chunk, batch)
}

/// Batches in a row the second thread may find itself on the calling
/// thread's processor before it stops (see [`produce`]).
const SHARED_CPU_PATIENCE: u32 = 4;

/// The second thread: takes, skims and hands over batches until none is
/// left, or until it keeps finding itself on the calling thread's processor
/// (`caller_cpu`, which the calling thread updates per batch). There it only
/// takes turns with the calling thread, which takes every batch the second
/// thread leaves: forced onto one processor, a replay of 20,000 events took
/// 0.81 µs per event with both threads and 0.74 with one.
fn produce<R: Read>(source: &Mutex<Source<R>>, chunk: usize, caller_cpu: &AtomicUsize, full: SyncSender<Taken>, empty: Receiver<Batch>) {
    let mut skim = Skim::default();
    let mut sharing = 0;
    loop {
        sharing = match sys::current_cpu() {
            Some(cpu) if cpu == caller_cpu.load(Ordering::Relaxed) => sharing + 1,
            _ => 0,
        };
        if sharing >= SHARED_CPU_PATIENCE {
            return;
        }
        let mut batch = empty.try_recv().unwrap_or_default();
        let taken = match take_next(source, chunk, &mut batch) {
            Ok(None) => return,
            Ok(Some(n)) => {
                split(&mut batch, Some(&mut skim));
                (n, Ok(batch))
            }
            Err(e) => (usize::MAX, Err(e)),
        };
        let failed = taken.1.is_err();
        if full.send(taken).is_err() || failed {
            return;
        }
    }
}

/// The calling thread: applies the batches in file order as they become
/// ready, taking one itself whenever the next is not ready and it holds
/// none ahead (so it never runs more than one batch ahead of what the
/// second thread hands over). A batch it takes is split but not skimmed
/// (see [`Batch::skimmed`]). Returns the first read error.
fn apply_in_order<R: Read>(
    source: &Mutex<Source<R>>,
    chunk: usize,
    caller_cpu: &AtomicUsize,
    full: &Receiver<Taken>,
    empty: &SyncSender<Batch>,
    mut apply: impl FnMut(&Batch),
) -> io::Result<()> {
    let mut ahead: Vec<(usize, Batch)> = Vec::new();
    let mut next = 0;
    let mut producing = true;
    loop {
        if let Some(at) = ahead.iter().position(|(n, _)| *n == next) {
            let (_, batch) = ahead.swap_remove(at);
            // The last batch taken may hold nothing (the file ended at a newline).
            if !batch.lines.is_empty() {
                caller_cpu.store(sys::current_cpu().unwrap_or(usize::MAX), Ordering::Relaxed);
                apply(&batch);
            }
            next += 1;
            let _ = empty.try_send(batch);
            continue;
        }
        if producing {
            match full.try_recv() {
                Ok((n, batch)) => {
                    ahead.push((n, batch?));
                    continue;
                }
                // Closed and empty: every batch it took was handed over.
                Err(TryRecvError::Disconnected) => {
                    producing = false;
                    continue;
                }
                Err(TryRecvError::Empty) => {}
            }
        }
        if ahead.is_empty() || !producing {
            let mut batch = Batch::default();
            match take_next(source, chunk, &mut batch)? {
                Some(n) => {
                    split(&mut batch, None);
                    ahead.push((n, batch));
                    continue;
                }
                // Everything taken, and all of it handed over and applied.
                None if !producing => return Ok(()),
                None => {}
            }
        }
        // The next batch is with the second thread: wait for it.
        match full.recv() {
            Ok((n, batch)) => ahead.push((n, batch?)),
            Err(_) => producing = false,
        }
    }
}

/// Member lists a skim reuses from line to line.
type Skim = (Vec<MemberSpan>, Vec<MemberSpan>);

/// Empties `batch` and fills it with the next whole lines: `carry` (the
/// previous read's unfinished line) and at least one more chunk, cut after
/// its last newline; what follows the cut becomes the new `carry`. Returns
/// whether the end of the file was reached (the batch then holds everything
/// left, a last line without newline included). The batch is not split.
fn read_batch(reader: &mut impl Read, chunk: usize, carry: &mut Vec<u8>, batch: &mut Batch) -> io::Result<bool> {
    batch.clear();
    batch.bytes.append(carry);
    let (cut, eof) = fill(reader, &mut batch.bytes, chunk)?;
    carry.extend_from_slice(&batch.bytes[cut..]);
    batch.bytes.truncate(cut);
    Ok(eof)
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

/// The offset of the first `\n` in `b` (see `byte_scan`).
fn newline(b: &[u8]) -> Option<usize> {
    let at = byte_scan::first_in::<Newline>(b);
    (at < b.len()).then_some(at)
}

#[cfg(test)]
fn newline_by_words(b: &[u8]) -> Option<usize> {
    let at = byte_scan::first_in_by_words::<Newline>(b);
    (at < b.len()).then_some(at)
}

struct Newline;

impl ByteSet for Newline {
    fn contains(c: u8) -> bool {
        c == b'\n'
    }

    fn flags(x: u64) -> u64 {
        zero_flags(x ^ (ONES * u64::from(b'\n')))
    }

    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    unsafe fn flags_sse2(x: std::arch::x86_64::__m128i) -> std::arch::x86_64::__m128i {
        use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_set1_epi8};
        // SAFETY: SSE2 only, as the trait requires of the caller.
        unsafe { _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\n' as i8)) }
    }
}

/// Cuts a batch's bytes into lines, and skims each when given `skim`.
fn split(batch: &mut Batch, mut skim: Option<&mut Skim>) {
    batch.skimmed = skim.is_some();
    let mut start = 0;
    while start < batch.bytes.len() {
        let rest = &batch.bytes[start..];
        let (body_end, end, complete) = match newline(rest) {
            Some(i) => (start + i, start + i + 1, true),
            None => (batch.bytes.len(), batch.bytes.len(), false),
        };
        let skim = skim.as_deref_mut();
        let members = skim.zip(std::str::from_utf8(&batch.bytes[start..body_end]).ok()).and_then(|((entry, event), text)| {
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

    /// The lines and what was found, for text read in `chunk`s; checks on
    /// the way that the calling thread reading alone (as when no thread
    /// can be started) finds the same.
    fn batches(text: &[u8], chunk: usize) -> Vec<(Vec<u8>, bool, bool)> {
        let lines = |out: &mut Vec<(Vec<u8>, bool, bool)>, b: &Batch| {
            for l in &b.lines {
                out.push((b.body(l).to_vec(), l.complete, skims(b, l)));
            }
        };
        let mut out = Vec::new();
        for_each_batch(text, chunk, |b| lines(&mut out, b)).unwrap();
        let mut alone = Vec::new();
        let source = Mutex::new(Source { reader: text, carry: Vec::new(), taken: 0, done: false });
        let (full_tx, full_rx) = sync_channel::<Taken>(1);
        let (empty_tx, _empty_rx) = sync_channel::<Batch>(1);
        drop(full_tx);
        apply_in_order(&source, chunk, &AtomicUsize::new(usize::MAX), &full_rx, &empty_tx, |b| lines(&mut alone, b)).unwrap();
        assert_eq!(alone, out, "chunk {chunk}: the calling thread alone");
        out
    }

    /// Whether the skim takes the line: as found when the batch was
    /// skimmed, else skimmed now (as the replay does for such a batch).
    fn skims(b: &Batch, l: &Line) -> bool {
        if b.skimmed {
            return l.members.is_some();
        }
        let (mut entry, mut event) = Skim::default();
        std::str::from_utf8(b.body(l)).ok().and_then(|t| members_with_nested(t, "event", &mut entry, &mut event)).is_some()
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
        // As the second thread splits a batch: skimmed, spans kept per line.
        let mut b = Batch { bytes: text.to_vec(), ..Batch::default() };
        split(&mut b, Some(&mut Skim::default()));
        assert!(b.skimmed);
        let (text, entry, event) = b.skimmed(&b.lines[0]).unwrap();
        let spans: Vec<&str> = entry.iter().chain(event).map(|m| &text[m.key.clone()]).collect();
        assert_eq!(spans, ["seq", "event", "type"]);
        assert!(b.lines[1..].iter().all(|l| b.skimmed(l).is_none()));
        // As the calling thread splits one it took: nothing skimmed yet.
        b.lines.clear();
        b.spans.clear();
        split(&mut b, None);
        assert_eq!(b.lines.len(), 4);
        assert!(!b.skimmed && b.lines.iter().all(|l| l.members.is_none()));
    }

    /// With reads that stall now and then, both threads end up taking
    /// batches; the lines still come out once each, in file order.
    #[test]
    fn batches_taken_by_both_threads_come_out_in_order() {
        struct Stalling<'a>(&'a [u8], usize);
        impl Read for Stalling<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.1 += 1;
                if self.1.is_multiple_of(5) {
                    std::thread::sleep(std::time::Duration::from_micros(300));
                }
                self.0.read(buf)
            }
        }
        let text: String = (0..400).map(|i| format!("{{\"seq\":{i},\"event\":{{\"type\":\"t{}\"}}}}\n", i % 7)).collect();
        let want = reference(text.as_bytes());
        for chunk in [16, 100, 700] {
            let mut got = Vec::new();
            let mut skimmed = 0;
            for_each_batch(Stalling(text.as_bytes(), 0), chunk, |b| {
                for l in &b.lines {
                    got.push((b.body(l).to_vec(), l.complete));
                    skimmed += usize::from(skims(b, l));
                }
            })
            .unwrap();
            assert_eq!(got, want, "chunk {chunk}");
            assert_eq!(skimmed, 400, "chunk {chunk}");
        }
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
