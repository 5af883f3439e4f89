//! The codes the agent shares with the Java tracker, defined once: the codes of the tracker's
//! call reports ([`ReportCode`], `OrcaEvents.K_*`) and the kinds of its buffered monitor
//! records ([`RecordKind`], `OrcaEvents.R_*`), and the numbers and layouts both sides read
//! (the coarse clock's, the lock-order slots' hash, the lock calls' numbers and outcomes:
//! [`shared_constants!`], [`LockOutcome`]). The kinds of `.orca` lines are the format
//! crate's (`orca_format::EventKind`), which the writer and every reader share.
//!
//! The Java side does not repeat the numbers: `build.rs` includes this file
//! (`#[path = "src/events.rs"]`) and writes `orca/OrcaEvents.java` from [`java_source`], which
//! is compiled together with the tracker. javac inlines the constants, so the tracker never
//! loads `OrcaEvents` at run time and the agent need not define it (javac keeps an unused
//! constant-pool entry for the class, which is never resolved). The rewriter's tests that
//! compile the tracker on their own (`rewriter/tests/tracker.rs`, `jvm_e2e.rs`) include this
//! file by path in the same way, since `orca-agent` depends on `orca-rewriter` and not the
//! other way round. Hence this file stands alone: no `crate::` paths, nothing but `std`.

/// Declares a set of codes shared with the Java tracker: the Rust enum, its decoding, and the
/// name and doc comment of each constant in the generated `OrcaEvents.java`.
macro_rules! shared_codes {
    (
        $(#[doc = $edoc:literal])*
        pub enum $name:ident {
            $( #[doc = $doc:literal] $variant:ident = $value:literal => $java:literal, )*
        }
    ) => {
        $(#[doc = $edoc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(i32)]
        pub enum $name {
            $( #[doc = $doc] $variant = $value, )*
        }

        impl $name {
            /// Every code, in numeric order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The code with number `n`; `None` for a number this agent does not know.
            pub fn from_i32(n: i32) -> Option<$name> {
                match n {
                    $( $value => Some($name::$variant), )*
                    _ => None,
                }
            }

            /// The name of the Java constant.
            pub fn java_name(self) -> &'static str {
                match self {
                    $( $name::$variant => $java, )*
                }
            }

            fn java_doc(self) -> &'static str {
                match self {
                    $( $name::$variant => $doc, )*
                }
            }
        }
    };
}

shared_codes! {
    /// What the tracker reports through `OrcaProfilerTracker.event(int kind, Object subject)`.
    pub enum ReportCode {
        /// About to run monitorenter on subject.
        MonitorEnter = 1 => "K_MONITOR_ENTER",
        /// monitorenter done (or synchronized method entered): subject is held.
        MonitorEntered = 2 => "K_MONITOR_ENTERED",
        /// About to run monitorexit on subject (or leave a synchronized method).
        MonitorExit = 3 => "K_MONITOR_EXIT",
        /// Object.wait called on subject.
        ObjectWait = 4 => "K_OBJECT_WAIT",
        /// wait returned, normally or by exception (the monitor is held again).
        ObjectWaited = 5 => "K_OBJECT_WAITED",
        /// Object.notify called on subject.
        ObjectNotify = 6 => "K_OBJECT_NOTIFY",
        /// Object.notifyAll called on subject.
        ObjectNotifyAll = 7 => "K_OBJECT_NOTIFY_ALL",
        /// Thread.start called on subject.
        ThreadStart = 8 => "K_THREAD_START",
        /// Thread.join called on subject.
        ThreadJoin = 9 => "K_THREAD_JOIN",
        /// join returned, normally or by exception.
        ThreadJoined = 10 => "K_THREAD_JOINED",
        /// subject null: the calling thread sleeps.
        ThreadSleep = 11 => "K_THREAD_SLEEP",
        /// sleep returned, normally or by exception.
        ThreadSlept = 12 => "K_THREAD_SLEPT",
        /// A Semaphore acquire begins on subject.
        SemaphoreAcquire = 13 => "K_SEMAPHORE_ACQUIRE",
        /// permits obtained.
        SemaphoreAcquired = 14 => "K_SEMAPHORE_ACQUIRED",
        /// acquire gave up: tryAcquire returned false, or an exception was thrown.
        SemaphoreAcquireFailed = 15 => "K_SEMAPHORE_ACQUIRE_FAILED",
        /// Semaphore.release called on subject.
        SemaphoreRelease = 16 => "K_SEMAPHORE_RELEASE",
    }
}

shared_codes! {
    /// The kind of a monitor record in a tracker buffer (`OrcaRec`): the low
    /// [`Sizes::KindBits`] bits of the record's second word (0 is none: a torn record).
    pub enum RecordKind {
        /// About to run monitorenter (`trace=all` only).
        Enter = 1 => "R_ENTER",
        /// The monitor is held (`trace=all` only).
        Entered = 2 => "R_ENTERED",
        /// About to release the monitor (`trace=all` only).
        Exit = 3 => "R_EXIT",
        /// An outermost hold ended (second word: then); the third word is when it began, or minus the number of holds counted but not timed that the record stands for (holdtiming=sampled: the end is the coarse clock's, or precise for a hold that may be long; the tracker counts in one record the holds of the same site and monitor that end at the same coarse time one after another, without a wait).
        Hold = 4 => "R_HOLD",
        /// The same, for a hold that waited on its monitor (the agent leaves the waits out).
        HoldWaited = 6 => "R_HOLD_WAITED",
        /// A nested acquisition; third word: N held monitors follow, one (site<<32|hash, 0, 0) each.
        Order = 5 => "R_ORDER",
        /// A j.u.c. lock's outermost hold ended (unlock called then); third word: its start, or minus the holds counted but not timed that the record stands for (as `R_HOLD`'s); site: with SiteBits.
        LockHold = 7 => "R_LOCK_HOLD",
        /// `notifies=counted`: a `notify` (third word: twice the calls the record stands for) or `notifyAll` (plus 1) at the site, on a monitor the thread holds, that found no thread waiting on it in the agent's table of waiters (read by the tracker, agent/src/recorder/waiters.rs); no time (the second word is the kind alone).
        Notified = 8 => "R_NOTIFIED",
        /// A `Semaphore` acquisition (any overload, a `tryAcquire` that failed too) that never took AQS's slow path and lasted less than `waitthreshold`, counted by the tracker: the site of its caller, the semaphore; second word: when it ended; third word: how long it took (ns).
        Acquired = 9 => "R_ACQUIRED",
        /// A `Semaphore.release` (any overload) at the site while no thread was queued on the semaphore (`hasQueuedThreads`), so that it can have ended no wait: third word: the calls the record stands for (the hash is 0, the second word the kind alone).
        Released = 10 => "R_RELEASED",
    }
}

shared_codes! {
    /// Flags in the high bits of a site ID in the tracker's held stack and records (site IDs
    /// stay below 2^22).
    pub enum SiteBits {
        /// A hold of a j.u.c. lock (not a monitor).
        Lock = 0x4000_0000 => "S_LOCK",
        /// ... in the read (shared) mode.
        Read = 0x2000_0000 => "S_READ",
        /// ... that awaited a condition meanwhile (`R_LOCK_HOLD` only).
        Waited = 0x1000_0000 => "S_WAITED",
        /// A monitor's hold under `trace=all` whose section writes no record: its first report found the stack too short for the whole section (engines/stack_room.rs). Held entries only.
        Unwritten = 0x0800_0000 => "S_UNWRITTEN",
        /// A guarded site's hold followed after the sample began (`guards=on`, past the exact budget): one of a sample of one outermost hold in `GATE_PERIOD` (`R_HOLD`, `R_HOLD_WAITED` records and the agent's summary keys only).
        Sampled = 0x0400_0000 => "S_SAMPLED",
        /// A long hold at a guarded site outside the sample (`longHold` only): no hold record follows it.
        Unsampled = 0x0200_0000 => "S_UNSAMPLED",
        /// A long hold reported from the tracker's `exit` (under `monitorExit` or `guardExit`), one more tracker frame above the site's (`longHold` only).
        Deeper = 0x0100_0000 => "S_DEEPER",
        /// The low bits: the site ID itself.
        Mask = 0x00FF_FFFF => "S_MASK",
    }
}

shared_codes! {
    /// The `report` numbers of the hooked j.u.c. methods the tracker itself must tell apart
    /// (methods.rs `Call::hook_report` gives every one; a test there checks these).
    pub enum JucReport {
        /// `Condition.await*`: the thread's j.u.c. holds pause.
        Await = 1033 => "H_AWAIT",
        /// `Condition.signal`: a site hint (`lockSite`) names its caller.
        Signal = 1034 => "H_SIGNAL",
        /// `Condition.signalAll`: as `signal`.
        SignalAll = 1035 => "H_SIGNAL_ALL",
        /// `LockSupport.unpark`: as `signal`.
        Unpark = 1038 => "H_UNPARK",
        /// AQS's acquisition slow path, entered when the fast path failed: contention.
        Slow = 1039 => "H_SLOW",
        /// Lock reports are H_LOCK + class * 8 + call (methods.rs LockClass, LockCall; call 3 and up: a release).
        Lock = 1088 => "H_LOCK",
        /// Bit c set: lock class c is a read (shared) one.
        ReadClasses = 0b101_0010 => "H_READ_CLASSES",
        /// Bit c set: a call of lock class c runs a hooked call of its own lock (AQS's, a StampedLock view's).
        NestingClasses = 0b0110_0111 => "H_NESTING_CLASSES",
    }
}

shared_codes! {
    /// Sizes the tracker's buffers and the agent's reads of them must agree on.
    pub enum Sizes {
        /// Monitor releases each thread's tracker remembers (hash, start, end) for contention owners (a power of two).
        Released = 64 => "RELEASED",
        /// A record's second word: its time shifted left by this, above its kind (RecordKind).
        KindBits = 4 => "KIND_BITS",
        /// Lock-order slots a thread's tracker makes first (a power of two; recorder/summary.rs, OrderSlots); the agent may give it more.
        OrderSlots = 8 => "ORD_SLOTS",
        /// Ints per slot in `Rec.ordKeys`: held site, acquired site, state (0 empty, 1 rows not full, 2 full), filter (bit hash & 31 of each row's acquired monitor), the counts of the other monitors' row and of the 4 rows, then the 4 rows' (held, acquired, guard, guard) hashes (0: none).
        OrderKey = 25 => "ORD_KEY",
        /// Of those, the ints the tracker's table keeps in its first part, slot after slot (held site, acquired site, state, filter, the other monitors' count: what the common case reads); the rest of each slot follows the last slot's (recorder/summary.rs, tracker_index).
        OrderHot = 5 => "ORD_HOT",
        /// Monitors held at most at a nested acquisition the tracker counts itself (so 2 guards at most).
        OrderHeld = 3 => "ORD_HELD",
        /// Occurrences a thread counts in its slots before it hands them to the agent (a flush), so that its summaries stay periodic.
        OrderFlush = 16384 => "ORD_FLUSH",
    }
}

/// Longs per held entry in the tracker's `Rec.held` (site << 32 | hash, start, time waited),
/// which the agent reads for a thread's held monitors; `HELD_WORDS` in `OrcaEvents`. (Not in
/// [`Sizes`]: its values are distinct.)
pub const HELD_WORDS: usize = 3;

/// Declares numbers and layouts shared with the Java tracker whose values may repeat (unlike
/// the codes of [`shared_codes!`]): each is a Rust `pub const` and, in [`java_source`], a
/// constant of `OrcaEvents` of the Java type given (`int`: the value's low 32 bits).
macro_rules! shared_constants {
    (
        $list:ident;
        $( #[doc = $doc:literal] pub const $name:ident: $ty:ty = $value:expr => $java:literal as $jty:literal; )*
    ) => {
        $( #[doc = $doc] pub const $name: $ty = $value; )*

        /// (Java name, doc, Java type, value) of each constant.
        const $list: &[(&str, &str, &str, i64)] = &[ $( ($java, $doc, $jty, $name as i64), )* ];
    };
}

shared_constants! {
    LAYOUTS;
    /// How often the agent's ticker advances the coarse clock (ns; recorder/clock.rs, Ticker).
    pub const TICK_NANOS: u64 = 1_000_000 => "CLOCK_TICK" as "long";
    /// Ticks the coarse clock keeps after its current value (a power of two: the coarse time's low bits are its tick's number modulo this; recorder/clock.rs, Coarse::ring).
    pub const TICK_RING: usize = 1024 => "CLOCK_TICKS" as "int";
    /// The coarse clock while the ticker does not tick (recorder/clock.rs, STALE): later than any time.
    pub const STALE: u64 = i64::MAX as u64 => "CLOCK_STALE" as "long";
    /// The offset of the coarse clock's ring from its address (bytes; tick n at CLOCK_RING + 8 * n; Coarse::ring).
    pub const CLOCK_RING_OFFSET: usize = 8 => "CLOCK_RING" as "long";
    /// The offset of the word the tracker sets when it uses the clock (bytes; Coarse::used): after the clock's own word and its ring.
    pub const CLOCK_USED_OFFSET: usize = CLOCK_RING_OFFSET + 8 * TICK_RING => "CLOCK_USED" as "long";
    /// The offset of the time from which guarded sites' holds are sampled (bytes; Coarse::sampling): STALE until the program passes the exact budget (recorder/clock.rs, SAMPLE_AFTER_HOLDS).
    pub const CLOCK_SAMPLING_OFFSET: usize = CLOCK_USED_OFFSET + 8 => "CLOCK_SAMPLING" as "long";
    /// The offset of the count of outermost holds at guarded sites the tracker adds to, 256 at a time, until the sample begins (bytes; Coarse::holds).
    pub const CLOCK_HOLDS_OFFSET: usize = CLOCK_SAMPLING_OFFSET + 8 => "CLOCK_HOLDS" as "long";
    /// Once the program passed the exact budget, a guarded site's outermost hold is in the sample with probability one in this (OrcaSampler.gateTurn; recorder/clock.rs, GATE_PERIOD).
    pub const GATE_PERIOD: u32 = 16 => "GATE_PERIOD" as "int";
    /// The unit of what a guarded site keeps for a hold outside the sample (ns, a power of two): the coarse clock's value shifted right by this many bits, an int that wraps after about 3.2 days.
    pub const KEPT_SHIFT: u32 = 16 => "KEPT_SHIFT" as "int";
    /// The lock-order slot of a pair of sites (held, acquired), before the table's mask: ((held * ORD_MUL_HELD) ^ acquired) * ORD_MUL >>> ORD_SHIFT, in 32-bit arithmetic (order_slot; OrcaOrderSlots.orderSlot).
    pub const ORD_MUL_HELD: u32 = 0x9E37_79B1 => "ORD_MUL_HELD" as "int";
    /// See ORD_MUL_HELD.
    pub const ORD_MUL: u32 = 0x85EB_CA6B => "ORD_MUL" as "int";
    /// See ORD_MUL_HELD.
    pub const ORD_SHIFT: u32 = 20 => "ORD_SHIFT" as "int";
    /// A j.u.c. lock report's number less H_LOCK is its lock class << L_CALL_BITS | its call (engines/methods.rs: LockClass, LockCall).
    pub const LOCK_CALL_BITS: u32 = 3 => "L_CALL_BITS" as "int";
    /// Calls of this number and up are releases (LockCall::Unlock, LockCall::TryUnlock); those below, acquisitions.
    pub const LOCK_CALL_UNLOCK: u32 = 3 => "L_UNLOCK" as "int";
    /// LockCall::TryUnlock (StampedLock.tryUnlockWrite, tryUnlockRead): a release only when it returns true.
    pub const LOCK_CALL_TRY_UNLOCK: u32 = 4 => "L_TRY_UNLOCK" as "int";
}

/// The slot of a pair of raw site IDs (held, acquired) in a thread's lock-order slots, before
/// the table's mask ([`ORD_MUL_HELD`]); the tracker's `OrcaOrderSlots.orderSlot` computes the
/// same from the same constants (pinned by rewriter/tests/tracker.rs, which runs it).
pub fn order_slot(held_site: u32, site: u32) -> usize {
    ((held_site.wrapping_mul(ORD_MUL_HELD) ^ site).wrapping_mul(ORD_MUL) >> ORD_SHIFT) as usize
}

shared_codes! {
    /// How a hooked j.u.c. lock call ended, as the tracker passes it to the agent (`lockEnd`,
    /// `lockContended`; engines/methods.rs, Outcome).
    pub enum LockOutcome {
        /// Returned normally (a void call).
        Returned = 2 => "O_RETURNED",
        /// Returned true (a stamp other than 0).
        True = 1 => "O_TRUE",
        /// Returned false (a stamp of 0).
        False = 0 => "O_FALSE",
        /// Threw.
        Threw = -1 => "O_THREW",
    }
}

/// The text of `orca/OrcaEvents.java`: every [`ReportCode`] and [`RecordKind`] as a Java
/// compile-time constant.
pub fn java_source() -> String {
    let mut out = String::from(
        "// Generated by agent/build.rs from agent/src/events.rs; edit that file, not this one.\n\
         package orca;\n\
         \n\
         /** The codes the tracker and the agent share. Compile-time constants: javac inlines\n \
         * them, so this class is never loaded at run time. */\n\
         public final class OrcaEvents {\n    \
         private OrcaEvents() {}\n",
    );
    let constants = ReportCode::ALL
        .iter()
        .map(|c| (c.java_name(), c.java_doc(), *c as i32))
        .chain(
            RecordKind::ALL
                .iter()
                .map(|r| (r.java_name(), r.java_doc(), *r as i32)),
        )
        .chain(
            SiteBits::ALL
                .iter()
                .map(|r| (r.java_name(), r.java_doc(), *r as i32)),
        )
        .chain(
            JucReport::ALL
                .iter()
                .map(|r| (r.java_name(), r.java_doc(), *r as i32)),
        )
        .chain(
            Sizes::ALL
                .iter()
                .map(|r| (r.java_name(), r.java_doc(), *r as i32)),
        )
        .chain(
            LockOutcome::ALL
                .iter()
                .map(|r| (r.java_name(), r.java_doc(), *r as i32)),
        )
        .chain(std::iter::once((
            "HELD_WORDS",
            "Longs per held entry in OrcaHeld.held (site << 32 | hash, start, time waited).",
            HELD_WORDS as i32,
        )));
    for (name, doc, value) in constants {
        out.push_str(&format!(
            "\n    /** {} */\n    public static final int {name} = {value};\n",
            doc.trim()
        ));
    }
    for &(name, doc, ty, value) in LAYOUTS {
        let value = match ty {
            "int" => (value as i32).to_string(),
            _ => format!("{value}L"),
        };
        out.push_str(&format!(
            "\n    /** {} */\n    public static final {ty} {name} = {value};\n",
            doc.trim()
        ));
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for &c in ReportCode::ALL {
            assert_eq!(ReportCode::from_i32(c as i32), Some(c));
        }
        for &r in RecordKind::ALL {
            assert_eq!(RecordKind::from_i32(r as i32), Some(r));
        }
        assert_eq!(ReportCode::ALL.len(), 16);
        assert_eq!(ReportCode::from_i32(0), None);
        assert_eq!(ReportCode::from_i32(17), None);
        // Record kinds live in KindBits bits, 0 marking a torn record.
        let kinds = 1..(1 << Sizes::KindBits as i32);
        assert!(RecordKind::ALL.iter().all(|&r| kinds.contains(&(r as i32))));
        assert_eq!(RecordKind::from_i32(0), None);
    }

    #[test]
    fn the_java_source_declares_every_layout_once() {
        let java = java_source();
        for &(name, _, ty, value) in LAYOUTS {
            assert!(ty == "int" || ty == "long", "{name}");
            let value = if ty == "int" {
                (value as i32).to_string()
            } else {
                format!("{value}L")
            };
            let line = format!("public static final {ty} {name} = {value};");
            assert_eq!(java.matches(&line).count(), 1, "{line}");
        }
        assert!(java.contains("public static final long CLOCK_STALE = 9223372036854775807L;"));
        assert!(java.contains("public static final int ORD_MUL_HELD = -1640531535;"));
        for &o in LockOutcome::ALL {
            assert_eq!(LockOutcome::from_i32(o as i32), Some(o));
        }
    }

    #[test]
    fn the_order_slot_hash_is_the_trackers() {
        // Java's int arithmetic: ((h * M1) ^ s) * M2 >>> 20
        let java = |h: i32, s: i32| {
            (((h.wrapping_mul(ORD_MUL_HELD as i32)) ^ s).wrapping_mul(ORD_MUL as i32) as u32
                >> ORD_SHIFT) as usize
        };
        for (h, s) in [
            (0, 0),
            (1, 2),
            (77, 5),
            (0x07FF_FFFF, 3),
            (123_456, 654_321),
        ] {
            assert_eq!(order_slot(h as u32, s as u32), java(h, s), "{h} {s}");
        }
        assert_eq!(order_slot(1, 2), 2520);
    }

    #[test]
    fn the_java_source_declares_every_code_once() {
        let java = java_source();
        for &c in ReportCode::ALL {
            let line = format!("public static final int {} = {};", c.java_name(), c as i32);
            assert_eq!(java.matches(&line).count(), 1, "{line}");
        }
        for &r in RecordKind::ALL {
            let line = format!("public static final int {} = {};", r.java_name(), r as i32);
            assert_eq!(java.matches(&line).count(), 1, "{line}");
        }
    }
}
