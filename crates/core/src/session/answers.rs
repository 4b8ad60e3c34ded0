//! What the reducer asks JavaScript, answered without running any.
//!
//! A replay needs V8 now and then: `Date.now()` for a line without a usable
//! `ts`, `Date.parse` for a `ts` that is not canonical ISO text, and
//! `JSON.parse`'s own message for a line that does not parse. The store asks
//! while it holds the journal's lock and the binding's state, where running
//! JavaScript is unsafe: a fake `Date` may append to the same session (a
//! deadlock on the lock) or call the same store (a re-entered borrow), and a
//! terminated worker makes every call fail. So the store asks [`Answers`]
//! instead: a question it has no answer for is noted, answered with a
//! placeholder, and makes the operation return [`StoreError::Unanswered`]
//! without caching or writing anything derived from it. The caller then asks
//! JavaScript the noted questions with nothing held, and runs the operation
//! again with the answers.
//!
//! The same goes for the reducer's operations on the caller's values only
//! V8 can interpret ([`Host::ask`]), with one difference: these may run the
//! caller's code (`valueOf`, getters, Proxy traps), so they are asked one at
//! a time, in the order the old module runs them, each exactly once: the
//! reducer stops at the first one unanswered ([`Refusal::Unanswered`])
//! rather than going on with a placeholder, and an answer may be an
//! exception ([`Refusal::Threw`]), which refuses the case where V8 would
//! have thrown it.
//!
//! [`StoreError::Unanswered`]: crate::session::store::StoreError::Unanswered

use std::cell::{Cell, RefCell};
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;

use crate::js::{JsStr, Value};
use crate::session::host::{Host, HostOp, Refusal};

/// Answers to the questions of earlier attempts, and the ones still open.
#[derive(Default)]
pub struct Answers {
    /// `Date.now()` results, handed out in order; each attempt starts again
    /// from the first, so calls in the same place of a replay get the same.
    now: Vec<f64>,
    next_now: Cell<usize>,
    /// By the text's UTF-16 units (how JS compares strings).
    dates: HashMap<Vec<u16>, f64>,
    /// `JSON.parse` messages in the order the lines were asked about, each
    /// with a keyed hash of its line: a replay asks about the same lines in
    /// the same order every attempt (the journal only grows), so answers go
    /// by position and the hash only confirms the line is the one answered
    /// (a line that is not takes the place and everything after it). A
    /// journal of many bad lines is then held here once as messages, not
    /// twice more as lines and hash tables. Two lines share a hash with odds
    /// near 2^-64, under keys no journal can be written against.
    messages: RefCell<Vec<(u64, String)>>,
    next_message: Cell<usize>,
    keys: RandomState,
    /// What V8 made of [`Host::ask`]'s operations, in the order asked: a
    /// value, or the handle of the exception it threw.
    operations: Vec<Result<Value, u32>>,
    next_operation: Cell<usize>,
    open: RefCell<Questions>,
}

/// Questions an attempt could not answer.
#[derive(Default, Debug)]
pub struct Questions {
    /// How many more `Date.now()` results are needed.
    pub now: usize,
    /// Texts to give to `Date.parse`, by their UTF-16 units.
    pub dates: HashMap<Vec<u16>, JsStr>,
    /// Lines to give to `JSON.parse`, for its error message, in order.
    pub lines: Vec<String>,
    /// The operation to run on its operands, asked after the rest.
    pub operation: Option<(HostOp, Vec<Value>)>,
}

impl Questions {
    /// Whether a question was answered with a placeholder (an operation
    /// is not: it refuses).
    fn has_placeholders(&self) -> bool {
        self.now > 0 || !self.dates.is_empty() || !self.lines.is_empty()
    }
}

impl Answers {
    /// Takes the open questions, to be answered by [`Answers::answer`], and
    /// readies the answers for the next attempt.
    pub fn take_questions(&mut self) -> Questions {
        self.rewind();
        self.next_message.set(0);
        let questions = std::mem::take(self.open.get_mut());
        self.messages.get_mut().reserve_exact(questions.lines.len());
        questions
    }

    pub fn answer_now(&mut self, ms: f64) {
        self.now.push(ms);
    }

    pub fn answer_date(&mut self, text: &JsStr, ms: f64) {
        self.dates.insert(text.units().collect(), ms);
    }

    /// The message for the next line asked about, in the order of
    /// [`Questions::lines`].
    pub fn answer_line(&mut self, line: &str, message: String) {
        let hash = self.keys.hash_one(line);
        self.messages.get_mut().push((hash, message));
    }

    /// What V8 made of the operation asked in [`Questions::operation`].
    pub fn answer_operation(&mut self, outcome: Result<Value, u32>) {
        self.operations.push(outcome);
    }
}

impl Host for Answers {
    fn now_ms(&self) -> f64 {
        let i = self.next_now.get();
        self.next_now.set(i + 1);
        match self.now.get(i) {
            Some(ms) => *ms,
            None => {
                self.open.borrow_mut().now += 1;
                f64::NAN
            }
        }
    }

    fn date_parse_fallback(&self, s: &JsStr) -> f64 {
        let units: Vec<u16> = s.units().collect();
        match self.dates.get(&units) {
            Some(ms) => *ms,
            None => {
                self.open.borrow_mut().dates.insert(units, s.clone());
                f64::NAN
            }
        }
    }

    fn json_parse_message(&self, line: &str) -> String {
        let at = self.next_message.get();
        self.next_message.set(at + 1);
        let mut messages = self.messages.borrow_mut();
        match messages.get(at) {
            Some((hash, message)) if *hash == self.keys.hash_one(line) => message.clone(),
            _ => {
                // Answers from here on were for other lines: asked again.
                messages.truncate(at);
                self.open.borrow_mut().lines.push(line.to_owned());
                String::new()
            }
        }
    }

    fn used_placeholders(&self) -> bool {
        self.open.borrow().has_placeholders()
    }

    fn ask(&self, op: HostOp, args: &[&Value]) -> Result<Value, Refusal> {
        let at = self.next_operation.get();
        self.next_operation.set(at + 1);
        match self.operations.get(at) {
            Some(Ok(value)) => Ok(value.clone()),
            Some(Err(thrown)) => Err(Refusal::Threw(*thrown)),
            None => {
                let mut open = self.open.borrow_mut();
                if open.operation.is_none() {
                    open.operation = Some((op, args.iter().map(|v| (*v).clone()).collect()));
                }
                Err(Refusal::Unanswered)
            }
        }
    }

    fn rewind(&self) {
        self.next_now.set(0);
        self.next_operation.set(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_are_noted_then_answered_in_order() {
        let mut a = Answers::default();
        assert!(a.now_ms().is_nan());
        assert!(a.now_ms().is_nan());
        assert!(a.date_parse_fallback(&JsStr::from("Jan 1 2030")).is_nan());
        assert_eq!(a.json_parse_message("{x"), "");
        assert_eq!(a.json_parse_message("{y"), "");
        assert!(a.used_placeholders());
        let q = a.take_questions();
        assert_eq!((q.now, q.dates.len()), (2, 1));
        assert_eq!(q.lines, ["{x", "{y"]);
        a.answer_now(5.0);
        a.answer_now(6.0);
        a.answer_date(&JsStr::from("Jan 1 2030"), 7.0);
        a.answer_line("{x", "bad".into());
        a.answer_line("{y", "worse".into());
        assert!(!a.used_placeholders());
        assert_eq!((a.now_ms(), a.now_ms()), (5.0, 6.0));
        assert_eq!(a.date_parse_fallback(&JsStr::from("Jan 1 2030")), 7.0);
        assert_eq!(a.json_parse_message("{x"), "bad");
        assert_eq!(a.json_parse_message("{y"), "worse");
        assert!(!a.used_placeholders());
        // A third call in a later attempt is a new question.
        assert!(a.now_ms().is_nan());
        assert_eq!(a.take_questions().now, 1);
        // A line that is not the one answered at its place is asked again,
        // and so is every line after it.
        assert_eq!(a.json_parse_message("{x"), "bad");
        assert_eq!(a.json_parse_message("{z"), "");
        assert_eq!(a.json_parse_message("{y"), "");
        assert_eq!(a.take_questions().lines, ["{z", "{y"]);
        a.answer_line("{z", "z".into());
        a.answer_line("{y", "worse".into());
        assert_eq!([a.json_parse_message("{x"), a.json_parse_message("{z"), a.json_parse_message("{y")], ["bad", "z", "worse"]);
        assert!(!a.used_placeholders());
    }

    #[test]
    fn operations_are_asked_one_at_a_time_and_an_exception_refuses() {
        let mut a = Answers::default();
        let x = Value::Host(0);
        let refusal = |asked: Result<Value, Refusal>| asked.err();
        assert_eq!(refusal(a.ask(HostOp::Number, &[&x])), Some(Refusal::Unanswered));
        // Only the first open operation is asked: its answer may change
        // what the reducer does next.
        assert_eq!(refusal(a.ask(HostOp::GreaterOrEqual, &[&x, &x])), Some(Refusal::Unanswered));
        // An open operation refuses: no placeholder was handed out.
        assert!(!a.used_placeholders());
        let q = a.take_questions();
        assert!(matches!(q.operation, Some((HostOp::Number, ref args)) if matches!(args[..], [Value::Host(0)])));
        a.answer_operation(Ok(Value::Number(2.0)));
        assert!(matches!(a.ask(HostOp::Number, &[&x]), Ok(Value::Number(n)) if n == 2.0));
        assert_eq!(refusal(a.ask(HostOp::GreaterOrEqual, &[&x, &x])), Some(Refusal::Unanswered));
        a.take_questions();
        a.answer_operation(Err(7));
        assert!(a.ask(HostOp::Number, &[&x]).is_ok());
        assert_eq!(refusal(a.ask(HostOp::GreaterOrEqual, &[&x, &x])), Some(Refusal::Threw(7)));
        assert!(a.take_questions().operation.is_none());
        // A rewind hands out the same answers again, the exception included.
        a.rewind();
        assert!(a.ask(HostOp::Number, &[&x]).is_ok());
        assert_eq!(refusal(a.ask(HostOp::GreaterOrEqual, &[&x, &x])), Some(Refusal::Threw(7)));
    }
}
