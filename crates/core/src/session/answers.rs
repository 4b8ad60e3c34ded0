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
//! [`StoreError::Unanswered`]: crate::session::store::StoreError::Unanswered

use std::cell::{Cell, RefCell};
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

use crate::js::JsStr;
use crate::session::reducer::Host;

/// Answers to the questions of earlier attempts, and the ones still open.
#[derive(Default)]
pub struct Answers {
    /// `Date.now()` results, handed out in order; each attempt starts again
    /// from the first, so calls in the same place of a replay get the same.
    now: Vec<f64>,
    next_now: Cell<usize>,
    /// By the text's UTF-16 units (how JS compares strings).
    dates: HashMap<Vec<u16>, f64>,
    /// By a keyed hash of the line: a journal of many bad lines would
    /// otherwise be held once more here, and the lines' own text is needed
    /// only to ask. Two distinct lines collide with odds near 2^-64 per
    /// pair, under keys no journal can be written against.
    messages: HashMap<u64, String>,
    keys: RandomState,
    open: RefCell<Questions>,
}

/// Questions an attempt could not answer.
#[derive(Default, Debug)]
pub struct Questions {
    /// How many more `Date.now()` results are needed.
    pub now: usize,
    /// Texts to give to `Date.parse`, by their UTF-16 units.
    pub dates: HashMap<Vec<u16>, JsStr>,
    /// Lines to give to `JSON.parse`, for its error message.
    pub lines: HashSet<String>,
}

impl Questions {
    pub fn is_empty(&self) -> bool {
        self.now == 0 && self.dates.is_empty() && self.lines.is_empty()
    }
}

impl Answers {
    /// Takes the open questions, to be answered by [`Answers::answer`], and
    /// readies the answers for the next attempt.
    pub fn take_questions(&mut self) -> Questions {
        self.next_now.set(0);
        std::mem::take(self.open.get_mut())
    }

    pub fn answer_now(&mut self, ms: f64) {
        self.now.push(ms);
    }

    pub fn answer_date(&mut self, text: &JsStr, ms: f64) {
        self.dates.insert(text.units().collect(), ms);
    }

    pub fn answer_line(&mut self, line: &str, message: String) {
        self.messages.insert(self.keys.hash_one(line), message);
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
        match self.messages.get(&self.keys.hash_one(line)) {
            Some(m) => m.clone(),
            None => {
                self.open.borrow_mut().lines.insert(line.to_owned());
                String::new()
            }
        }
    }

    fn unanswered(&self) -> bool {
        !self.open.borrow().is_empty()
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
        assert_eq!(a.json_parse_message("{x"), "");
        assert!(a.unanswered());
        let q = a.take_questions();
        assert_eq!((q.now, q.dates.len(), q.lines.len()), (2, 1, 1));
        a.answer_now(5.0);
        a.answer_now(6.0);
        a.answer_date(&JsStr::from("Jan 1 2030"), 7.0);
        a.answer_line("{x", "bad".into());
        assert!(!a.unanswered());
        assert_eq!((a.now_ms(), a.now_ms()), (5.0, 6.0));
        assert_eq!(a.date_parse_fallback(&JsStr::from("Jan 1 2030")), 7.0);
        assert_eq!(a.json_parse_message("{x"), "bad");
        assert!(!a.unanswered());
        // A third call in a later attempt is a new question.
        assert!(a.now_ms().is_nan());
        assert_eq!(a.take_questions().now, 1);
    }
}
