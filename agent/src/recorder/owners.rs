//! The owner of a contended monitor that no instrumented code holds, asked of the JVM late.
//!
//! Why: the JVM names a monitor's owner only at a safepoint (`GetObjectMonitorUsage` stops
//! every thread), and asking at every contention stopped a Jetty server about 180 times a
//! second (its selector's `interruptLock`, a JDK monitor, contended for microseconds at a
//! time; 275 µs a safepoint on average), while only a contention written in full, one that
//! lasted `contentionthreshold`, prints its owner. So a contention whose line is kept back
//! leaves an [`OwnerQuery`], which the contention engine answers once the contention has
//! lasted [`ask_after`]; one that ends sooner costs no safepoint. docs/FORMAT.md,
//! `<ownerThread>`, says what that makes of the owner.

use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

/// How long a contention lasts before its owner is asked: half the contention threshold,
/// so that one that lasts the threshold has normally been asked about before it ends, even
/// when the asking thread was a little late.
pub fn ask_after(contention_threshold: u64) -> u64 {
    contention_threshold / 2
}

/// One contention's question "who holds the monitor?", shared by the contending thread's
/// kept-back line (which reads the answer) and the asker (which answers it).
pub struct OwnerQuery {
    /// When the contention was seen ([`now_nanos`](super::clock::now_nanos)).
    pub since: u64,
    /// The contending thread: an answer naming it came after the contention had ended.
    pub thread: u32,
    /// A JNI global reference to the monitor, made and deleted by the asker.
    pub object: usize,
    state: AtomicU8,
    owner: AtomicU32,
}

const OPEN: u8 = 0;
const ASKING: u8 = 1;
const ANSWERED: u8 = 2;
const CLOSED: u8 = 3;

impl OwnerQuery {
    pub fn new(since: u64, thread: u32, object: usize) -> OwnerQuery {
        OwnerQuery {
            since,
            thread,
            object,
            state: AtomicU8::new(OPEN),
            owner: AtomicU32::new(0),
        }
    }

    /// Whether nobody has asked yet and the contention's line is not written.
    pub fn is_open(&self) -> bool {
        self.state.load(Ordering::Acquire) == OPEN
    }

    /// The asker takes the query; `false` when the line was written first (nothing to ask).
    pub fn claim(&self) -> bool {
        self.state
            .compare_exchange(OPEN, ASKING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The asker's answer (a thread ID, 0 for nobody), unless the line was written meanwhile.
    pub fn answer(&self, owner: u32) {
        let owner = if owner == self.thread { 0 } else { owner };
        self.owner.store(owner, Ordering::Relaxed);
        let _ = self
            .state
            .compare_exchange(ASKING, ANSWERED, Ordering::Release, Ordering::Relaxed);
    }

    /// The owner for the contention's line, which is being written: the asker's answer, or
    /// 0 ("not known") when it had none yet. The query is closed either way: an answer that
    /// comes later is not used (the line is written without waiting for it).
    pub fn owner(&self) -> u32 {
        match self.state.swap(CLOSED, Ordering::AcqRel) {
            ANSWERED => self.owner.load(Ordering::Relaxed),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_before_the_line_is_its_owner() {
        let q = OwnerQuery::new(1, 7, 0);
        assert!(q.claim());
        q.answer(9);
        assert_eq!(q.owner(), 9);
    }

    #[test]
    fn a_line_written_first_takes_no_answer_and_nobody_asks() {
        let q = OwnerQuery::new(1, 7, 0);
        assert_eq!(q.owner(), 0);
        assert!(!q.is_open());
        assert!(!q.claim());
        // an answer under way when the line was written is dropped
        let q = OwnerQuery::new(1, 7, 0);
        assert!(q.claim());
        assert_eq!(q.owner(), 0);
        q.answer(9);
        assert_eq!(q.owner(), 0);
    }

    #[test]
    fn the_contending_thread_itself_is_no_owner() {
        // asked after it got the monitor, before its Entered event closed the query
        let q = OwnerQuery::new(1, 7, 0);
        assert!(q.claim());
        q.answer(7);
        assert_eq!(q.owner(), 0);
    }
}
