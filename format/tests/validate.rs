//! Hand-written logs, valid and hand-broken, with the exact `file:line` expected.

use orca_format::{validate_readers, Options, Severity, ValidationReport, ViolationKind};

const CLASSES: &str = "\
5087.100000000,15DB9742,LPingPong;,PingPong.java
5087.100000001,6D06D69C,Ljava/lang/Object;,Object.java
";

const METHODS: &str = "\
5087.100000000,00000001,main,([Ljava/lang/String;)V,15DB9742,3;00000000;00000046;00000008;00000047;00000010;00000049
5087.100000001,00000002,run,()V,15DB9742,1;00000000;0000000A
5087.100000002,00000003,wait,()V,6D06D69C,-1
";

/// Two threads: ping-pong with wait/notify, a contention, nested monitors.
const EVENTS: &str = "\
5087.200000000,ThreadStarted,0000AAAA,main
5087.200000100,ThreadStart,0000AAAA,0000BBBB,1;00000001;00000008
5087.200000200,ThreadStarted,0000BBBB,worker%2C1
5087.200000300,MonitorEnter,0000AAAA,00001111,1;00000001;00000010
5087.200000400,MonitorEntered,0000AAAA,00001111,1;00000001;00000010
5087.200000500,MonitorEnter,0000BBBB,00001111,1;00000002;00000000
5087.200000600,MonitorContendedEnter,0000BBBB,00001111,0000AAAA,1;00000002;00000000
5087.200000700,MonitorEntered,0000AAAA,00001111,1;00000001;00000010
5087.200000800,ObjectWait,0000AAAA,00001111,2;00000003;FFFFFFFF;00000001;00000010
5087.200000900,MonitorContendedEntered,0000BBBB,00001111,1;00000002;00000000
5087.200001000,MonitorEntered,0000BBBB,00001111,1;00000002;00000000
5087.200001100,ObjectNotify,0000BBBB,00001111,1;00000002;00000000
5087.200001200,MonitorExit,0000BBBB,00001111,1;00000002;00000000
5087.200001300,ObjectWaited,0000AAAA,00001111,2;00000003;FFFFFFFF;00000001;00000010
5087.200001400,MonitorExit,0000AAAA,00001111,1;00000001;00000010
5087.200001500,MonitorExit,0000AAAA,00001111,1;00000001;00000010
5087.200001600,ThreadSleep,0000BBBB,1;00000002;00000000
5087.200001700,ThreadSlept,0000BBBB,1;00000002;00000000
5087.200001800,ThreadEnded,0000BBBB
5087.200001900,ThreadJoin,0000AAAA,0000BBBB,1;00000001;00000000
5087.200002000,ThreadJoined,0000AAAA,0000BBBB,1;00000001;00000000
5087.200002100,ObjectNotifyAll,0000AAAA,00001111,1;00000001;00000000
5087.200002200,ThreadEnded,0000AAAA
";

fn run(classes: &str, methods: &str, events: &str) -> ValidationReport {
    validate_readers(
        ("t.classtable", classes.as_bytes()),
        ("t.methods", methods.as_bytes()),
        ("t.orca", events.as_bytes()),
        &Options::default(),
    )
    .unwrap()
}

fn lines(r: &ValidationReport, sev: Severity) -> Vec<String> {
    r.violations
        .iter()
        .filter(|v| v.severity == sev)
        .map(|v| v.to_string())
        .collect()
}

/// Replace line `n` (1-based) of `text` by `new`.
fn replace_line(text: &str, n: usize, new: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == n {
                new.to_string()
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect()
}

#[test]
fn valid_log_passes() {
    let r = run(CLASSES, METHODS, EVENTS);
    assert!(r.is_valid(), "{:#?}", r.violations);
    assert!(r.violations.is_empty(), "{:#?}", r.violations);
    assert_eq!(
        (r.events, r.methods, r.classes, r.threads, r.dropped),
        (23, 3, 2, 2, 0)
    );
}

#[test]
fn missing_method_id() {
    let ev = replace_line(
        EVENTS,
        17,
        "5087.200001600,ThreadSleep,0000BBBB,1;00000009;00000000",
    );
    let r = run(CLASSES, METHODS, &ev);
    let errs = lines(&r, Severity::Error);
    assert!(
        errs[0].starts_with("t.orca:17: method ID 00000009"),
        "{errs:?}"
    );
    // The exit's call site no longer matches its entry's either.
    assert!(
        errs[1].starts_with("t.orca:18: ThreadSlept on thread 0000BBBB: call site differs"),
        "{errs:?}"
    );
    assert_eq!(r.violations[0].kind, ViolationKind::UnresolvedMethod);
    assert_eq!(r.violations[0].line, 17);
}

#[test]
fn missing_class_id() {
    let m = replace_line(
        METHODS,
        2,
        "5087.100000001,00000002,run,()V,0BADC1A5,1;00000000;0000000A",
    );
    let r = run(CLASSES, &m, EVENTS);
    let errs = lines(&r, Severity::Error);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("t.methods:2: class ID 0BADC1A5"),
        "{errs:?}"
    );
}

#[test]
fn duplicate_ids() {
    let m = format!("{METHODS}5087.100000003,00000002,run,()V,15DB9742,-1\n");
    let c = format!("{CLASSES}5087.100000003,15DB9742,LOther;,\n");
    let r = run(&c, &m, EVENTS);
    let errs = lines(&r, Severity::Error);
    assert_eq!(
        errs,
        vec![
            "t.classtable:3: class ID 15DB9742 listed again (first at line 1)",
            "t.methods:4: method ID 00000002 listed again (first at line 2)"
        ]
    );
}

#[test]
fn unbalanced_exit() {
    // Thread B exits the monitor twice.
    let ev = replace_line(
        EVENTS,
        16,
        "5087.200001500,MonitorExit,0000BBBB,00001111,1;00000002;00000000",
    );
    let r = run(CLASSES, METHODS, &ev);
    let errs = lines(&r, Severity::Error);
    assert!(
        errs.iter()
            .any(|e| e.starts_with("t.orca:16: unbalanced MonitorExit")),
        "{errs:?}"
    );
    // And thread A now ends holding it: a note (a thread inside System.exit does so), not an
    // error.
    let notes = lines(&r, Severity::Note);
    assert!(
        notes.iter().any(|e| e.starts_with("t.orca:23:")
            && e.contains("thread 0000AAAA ended holding monitor 00001111")),
        "{notes:?}"
    );
}

#[test]
fn bad_hex_field() {
    let ev = replace_line(
        EVENTS,
        5,
        "5087.200000400,MonitorEntered,0000AAAA,0000111g,1;00000001;00000010",
    );
    let r = run(CLASSES, METHODS, &ev);
    let first = r
        .violations
        .iter()
        .find(|v| v.severity == Severity::Error)
        .unwrap();
    assert_eq!(first.line, 5);
    assert_eq!(first.kind, ViolationKind::Syntax);
    assert!(
        first
            .to_string()
            .starts_with("t.orca:5: field 4 (monitor) `0000111g`"),
        "{first}"
    );
    let ev = replace_line(
        EVENTS,
        5,
        "5087.200000400,MonitorEntered,0000aaaa,00001111,1;00000001;00000010",
    );
    let r = run(CLASSES, METHODS, &ev);
    assert!(lines(&r, Severity::Error)[0].starts_with("t.orca:5: field 3 (thread)"));
}

#[test]
fn bad_fraction_digits() {
    let ev = replace_line(EVENTS, 3, "5087.2000002,ThreadStarted,0000BBBB,worker%2C1");
    let r = run(CLASSES, METHODS, &ev);
    let errs = lines(&r, Severity::Error);
    assert!(
        errs[0].starts_with(
            "t.orca:3: field 1 (timestamp) `5087.2000002`: expected exactly 9 fraction digits"
        ),
        "{errs:?}"
    );
    let c = replace_line(
        CLASSES,
        2,
        "5087.1000000010,6D06D69C,Ljava/lang/Object;,Object.java",
    );
    let r = run(&c, METHODS, EVENTS);
    assert!(lines(&r, Severity::Error)[0].starts_with("t.classtable:2: field 1 (timestamp)"));
}

#[test]
fn stack_depth_and_line_table_counts() {
    let ev = replace_line(
        EVENTS,
        17,
        "5087.200001600,ThreadSleep,0000BBBB,2;00000002;00000000",
    );
    let r = run(CLASSES, METHODS, &ev);
    assert!(lines(&r, Severity::Error)[0].starts_with("t.orca:17: field 4 (stackTrace)"));
    let m = replace_line(
        METHODS,
        2,
        "5087.100000001,00000002,run,()V,15DB9742,2;00000000;0000000A",
    );
    let r = run(CLASSES, &m, EVENTS);
    assert!(lines(&r, Severity::Error)[0].starts_with("t.methods:2: field 6 (lineTable)"));
}

#[test]
fn torn_last_line_is_a_warning() {
    let ev = EVENTS.strip_suffix('\n').unwrap();
    let r = run(CLASSES, METHODS, ev);
    assert!(r.is_valid(), "{:#?}", r.violations);
    let w = lines(&r, Severity::Warning);
    assert_eq!(w.len(), 1);
    assert!(
        w[0].starts_with("t.orca:23: warning: torn last line"),
        "{w:?}"
    );
    assert_eq!(r.violations[0].kind, ViolationKind::Torn);
    // Thread A's ThreadEnded was torn away: its state is left open, as a note.
    assert!(r.torn);
}

#[test]
fn timestamps_per_thread() {
    let ev = replace_line(
        EVENTS,
        18,
        "5087.200001650,ThreadSlept,0000BBBB,1;00000002;00000000",
    );
    let r = run(CLASSES, METHODS, &ev);
    assert!(r.is_valid());
    let ev = replace_line(
        EVENTS,
        18,
        "5087.200001500,ThreadSlept,0000BBBB,1;00000002;00000000",
    );
    let r = run(CLASSES, METHODS, &ev);
    let errs = lines(&r, Severity::Error);
    assert!(
        errs[0].starts_with("t.orca:18: timestamp 5087.200001500 of thread 0000BBBB is before"),
        "{errs:?}"
    );
}

#[test]
fn contended_enter_must_be_followed_by_entered() {
    let ev = replace_line(
        EVENTS,
        10,
        "5087.200000900,MonitorExit,0000BBBB,00001111,1;00000002;00000000",
    );
    let r = run(CLASSES, METHODS, &ev);
    let errs = lines(&r, Severity::Error);
    assert!(
        errs[0].starts_with(
            "t.orca:10: MonitorExit on thread 0000BBBB while its MonitorContendedEnter"
        ),
        "{errs:?}"
    );
    // A non-monitor event in between is allowed (FORMAT.md: matched apart).
    let ev = EVENTS.replace(
        "5087.200000900,MonitorContendedEntered,0000BBBB",
        "5087.200000850,ThreadSleep,0000BBBB,0\n5087.200000860,ThreadSlept,0000BBBB,0\n5087.200000900,MonitorContendedEntered,0000BBBB",
    );
    let r = run(CLASSES, METHODS, &ev);
    assert!(r.is_valid(), "{:?}", r.error_lines());
}

#[test]
fn waited_without_wait_and_interleaved_pairs() {
    let ev = replace_line(
        EVENTS,
        9,
        "5087.200000800,ThreadSleep,0000AAAA,1;00000001;00000010",
    );
    let r = run(CLASSES, METHODS, &ev);
    let errs = lines(&r, Severity::Error);
    assert!(
        errs.iter()
            .any(|e| e
                .starts_with("t.orca:14: ObjectWaited on thread 0000AAAA closes a ThreadSleep")),
        "{errs:?}"
    );
    let ev = replace_line(
        EVENTS,
        9,
        "5087.200000800,ObjectNotify,0000AAAA,00001111,1;00000001;00000010",
    );
    let r = run(CLASSES, METHODS, &ev);
    let errs = lines(&r, Severity::Error);
    // Without its ObjectWait, thread AAAA never released the monitor that BBBB then held.
    assert_eq!(
        errs,
        vec![
            "t.orca:14: ObjectWaited on thread 0000AAAA without its ObjectWait",
            "t.orca:16: thread 0000AAAA owns monitor 00001111 from 5087.200000400 (line 5) to 5087.200001500, while thread 0000BBBB owns it from 5087.200001000 (line 11) to 5087.200001200 (line 13)"
        ]
    );
}

#[test]
fn open_pairs_at_end_are_notes() {
    // Cut the log after line 9: A is waiting and holds 1111 twice, B is blocked.
    let ev: String = EVENTS.lines().take(9).map(|l| format!("{l}\n")).collect();
    let r = run(CLASSES, METHODS, &ev);
    assert!(r.is_valid(), "{:#?}", r.violations);
    let notes = lines(&r, Severity::Note);
    assert_eq!(
        notes,
        vec![
            "t.orca:9: note: thread 0000AAAA: ObjectWait of line 9 still open at the end of the log",
            "t.orca:9: note: thread 0000AAAA: still holds monitor 00001111 at the end of the log (2 open MonitorEntered, first at line 5)",
            "t.orca:9: note: thread 0000BBBB: still blocked on monitor 00001111 at the end of the log (MonitorContendedEnter at line 7)",
            "t.orca:9: note: thread 0000BBBB: MonitorEnter of 00001111 at line 6 not yet entered at the end of the log",
        ]
    );
}

#[test]
fn lifecycle_and_misc_lines() {
    let ev = format!("{EVENTS}5087.200002300,ThreadSleep,0000AAAA,0\n\n5087.200002300,ThreadSleep,0000AAAA,0\r\n");
    let r = run(CLASSES, METHODS, &ev);
    let errs = lines(&r, Severity::Error);
    assert_eq!(
        errs[0],
        "t.orca:24: ThreadSleep of thread 0000AAAA after its ThreadEnded at line 23"
    );
    assert_eq!(errs[1], "t.orca:25: empty line");
    assert!(
        errs[2].starts_with("t.orca:26: field 4 (stackTrace)"),
        "{errs:?}"
    );
}

#[test]
fn thread_start_causality() {
    // The started thread's ThreadStarted earlier than the ThreadStart call.
    let ev = replace_line(
        EVENTS,
        3,
        "5087.200000050,ThreadStarted,0000BBBB,worker%2C1",
    );
    let r = run(CLASSES, METHODS, &ev);
    assert_eq!(
        r.error_lines(),
        vec!["t.orca:3: ThreadStarted of thread 0000BBBB at 5087.200000050 is earlier than the ThreadStart that started it at 5087.200000100 (line 2)"]
    );
}

#[test]
fn dropped_events_downgrade_pairing_errors() {
    let ev = replace_line(EVENTS, 16, "5087.200001500,EventsDropped,1");
    let r = run(CLASSES, METHODS, &ev);
    assert!(r.is_valid(), "{:?}", r.error_lines());
    assert_eq!(r.dropped, 1);
    // The thread that lost its MonitorExit ends holding the monitor: a note, not an error.
    assert!(
        r.violations
            .iter()
            .any(|v| v.severity == Severity::Note && v.message.contains("ended holding monitor")),
        "{:?}",
        r.violations
    );
}

#[test]
fn read_events_owned() {
    let dir = std::env::temp_dir().join(format!("orca-format-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = dir.join("run");
    std::fs::write(dir.join("run.orca"), EVENTS).unwrap();
    let ev = orca_format::read_events(&prefix).unwrap();
    assert_eq!(ev.len(), 23);
    assert_eq!(ev[2].name.as_deref(), Some("worker,1"));
    assert_eq!(ev[6].owner, Some(orca_format::Hash(0xAAAA)));
    assert_eq!(ev[6].frames[0].method, orca_format::MethodId(2));
    std::fs::write(dir.join("run.orca"), replace_line(EVENTS, 4, "bad")).unwrap();
    let e = orca_format::read_events(&prefix).unwrap_err().to_string();
    assert!(
        e.ends_with("run.orca:4: unknown event kind `bad`") || e.contains("run.orca:4:"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Mutates every byte of every line in many ways: the parsers must return an
/// error or a record, never panic, and the validator must survive garbage.
#[test]
fn mutations_never_panic() {
    let subst: &[u8] = b"0F9aA;,%.-\n\r\xff\xc3 ";
    let mut seed = 0x1234_5678u32;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    for text in [EVENTS, METHODS, CLASSES] {
        for line in text.lines() {
            let b = line.as_bytes();
            for i in 0..b.len() {
                for &c in subst {
                    let mut m = b.to_vec();
                    m[i] = c;
                    let _ = orca_format::parse_event_line(&m);
                    let _ = orca_format::parse_method_line(&m);
                    let _ = orca_format::parse_class_line(&m);
                    if let Ok(r) = orca_format::parse_event_line(&m) {
                        if let Some(s) = r.event.stack() {
                            let _ = s.frames().count();
                        }
                    }
                }
                let mut m = b.to_vec();
                m.truncate(i);
                let _ = orca_format::parse_event_line(&m);
                let _ = orca_format::parse_method_line(&m);
                let _ = orca_format::parse_class_line(&m);
            }
        }
    }
    // Whole-log garbage: random splices of the valid logs.
    for _ in 0..200 {
        let mut ev = EVENTS.as_bytes().to_vec();
        for _ in 0..5 {
            let i = rnd() as usize % ev.len();
            ev[i] = subst[rnd() as usize % subst.len()];
        }
        let r = validate_readers(
            ("t.classtable", CLASSES.as_bytes()),
            ("t.methods", METHODS.as_bytes()),
            ("t.orca", &ev[..]),
            &Options::default(),
        )
        .unwrap();
        for v in &r.violations {
            assert!(v.line >= 1, "{v}");
        }
    }
}

/// j.u.c. locks: a reentrant hold with a contention, a failed and a timed-out tryLock, an
/// interrupted lockInterruptibly, read and write views of one lock, a condition hand-off, a
/// park with a blocker and its unpark.
const JUC_EVENTS: &str = "\
5087.300000000,ThreadStarted,0000AAAA,main
5087.300000100,ThreadStarted,0000BBBB,worker
5087.300000200,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000010
5087.300000300,LockAcquired,0000AAAA,00002222,W,1;00000001;00000010
5087.300000400,LockAcquire,0000AAAA,00002222,W,0000AAAA,1;00000001;00000010
5087.300000500,LockAcquired,0000AAAA,00002222,W,1;00000001;00000010
5087.300000600,LockAcquire,0000BBBB,00002222,W,0000AAAA,1;00000002;00000000
5087.300000700,LockRelease,0000AAAA,00002222,W,1;00000001;00000010
5087.300000800,ConditionAwait,0000AAAA,00003333,00002222,1;00000001;00000008
5087.300000900,LockAcquired,0000BBBB,00002222,W,1;00000002;00000000
5087.300001000,ConditionSignal,0000BBBB,00003333,00002222,1;00000002;00000000
5087.300001100,LockRelease,0000BBBB,00002222,W,1;00000002;00000000
5087.300001200,ConditionAwaited,0000AAAA,00003333,00002222,1;00000001;00000008
5087.300001300,ConditionSignalAll,0000AAAA,00003333,00002222,1;00000001;00000008
5087.300001400,LockRelease,0000AAAA,00002222,W,1;00000001;00000010
5087.300001500,LockAcquire,0000BBBB,00002222,R,00000000,1;00000002;00000000
5087.300001600,LockAcquired,0000BBBB,00002222,R,1;00000002;00000000
5087.300001700,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000010
5087.300001800,LockFailed,0000AAAA,00002222,W,1;00000001;00000010
5087.300001900,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000010
5087.300002000,LockTimedOut,0000AAAA,00002222,W,1;00000001;00000010
5087.300002100,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000010
5087.300002200,LockInterrupted,0000AAAA,00002222,W,1;00000001;00000010
5087.300002300,LockRelease,0000BBBB,00002222,R,1;00000002;00000000
5087.300002400,ThreadPark,0000BBBB,00004444,1;00000002;00000000
5087.300002500,ThreadUnpark,0000AAAA,0000BBBB,1;00000001;00000010
5087.300002600,ThreadParked,0000BBBB,00004444,1;00000002;00000000
5087.300002700,ThreadPark,0000BBBB,00000000,1;00000002;00000000
5087.300002800,ThreadParked,0000BBBB,00000000,1;00000002;00000000
5087.300002900,ThreadEnded,0000BBBB
5087.300003000,ThreadEnded,0000AAAA
";

#[test]
fn juc_lock_log_passes() {
    let r = run(CLASSES, METHODS, JUC_EVENTS);
    assert!(r.violations.is_empty(), "{:#?}", r.violations);
    assert_eq!(r.events, 31);
}

#[test]
fn juc_lock_lines_are_checked_strictly() {
    // Each broken line, and the violation it must give at that line.
    let cases: &[(usize, &str, &str)] = &[
        // A mode that is neither R nor W.
        (
            5,
            "5087.300000400,LockAcquire,0000AAAA,00002222,X,0000AAAA,1;00000001;00000010",
            "field 5 (mode)",
        ),
        // LockAcquire without its owner field.
        (
            5,
            "5087.300000400,LockAcquire,0000AAAA,00002222,W,1;00000001;00000010",
            "LockAcquire: expected 7 fields",
        ),
        // A zero lock.
        (
            4,
            "5087.300000300,LockAcquired,0000AAAA,00000000,W,1;00000001;00000010",
            "field 4 (lock)",
        ),
        // A zero condition.
        (
            9,
            "5087.300000800,ConditionAwait,0000AAAA,00000000,00002222,1;00000001;00000008",
            "field 4 (condition)",
        ),
        // A release of a lock in the mode the thread does not hold.
        (
            12,
            "5087.300001100,LockRelease,0000BBBB,00002222,R,1;00000002;00000000",
            "unbalanced LockRelease",
        ),
        // The exit of an acquisition in another mode than its entry.
        (
            17,
            "5087.300001600,LockAcquired,0000BBBB,00002222,W,1;00000002;00000000",
            "mode differs",
        ),
        // An acquisition's exit for another lock.
        (
            19,
            "5087.300001800,LockFailed,0000AAAA,00005555,W,1;00000001;00000010",
            "but its LockAcquire",
        ),
        // A park closed by an acquisition.
        (
            27,
            "5087.300002600,LockAcquired,0000BBBB,00004444,W,1;00000002;00000000",
            "closes a ThreadPark",
        ),
        // An unpark inside the open park of the same thread.
        (
            26,
            "5087.300002500,ThreadUnpark,0000BBBB,0000AAAA,1;00000001;00000010",
            "inside its open ThreadPark",
        ),
    ];
    for (n, line, want) in cases {
        let r = run(CLASSES, METHODS, &replace_line(JUC_EVENTS, *n, line));
        let errs = lines(&r, Severity::Error);
        assert!(
            errs.iter()
                .any(|e| e.starts_with(&format!("t.orca:{n}: ")) && e.contains(want)),
            "line {n} `{line}`: expected `{want}` in {errs:#?}"
        );
    }
}

#[test]
fn juc_locks_held_at_the_end_are_notes() {
    // Drop main's last release: it ends holding the lock once, which is legal Java.
    let text: String = JUC_EVENTS
        .lines()
        .enumerate()
        .filter(|(i, _)| *i + 1 != 15)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let r = run(CLASSES, METHODS, &text);
    assert!(r.is_valid(), "{:#?}", r.violations);
    let notes = lines(&r, Severity::Note);
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert!(notes[0].contains("ended holding lock 00002222 in mode W (1 LockAcquired"));
}

/// Two threads each take monitor 00001111 once, and lock 00002222 (mode W) once, one after
/// the other; the variants below move one timestamp so that the holds overlap.
const EXCLUSIVE: &str = "\
5087.300000000,ThreadStarted,0000AAAA,a
5087.300000001,ThreadStarted,0000BBBB,b
5087.300000100,MonitorEnter,0000AAAA,00001111,1;00000001;00000010
5087.300000100,MonitorEntered,0000AAAA,00001111,1;00000001;00000010
5087.300000150,MonitorEnter,0000BBBB,00001111,1;00000002;00000000
5087.300000200,MonitorExit,0000AAAA,00001111,1;00000001;00000010
5087.300000200,MonitorEntered,0000BBBB,00001111,1;00000002;00000000
5087.300000300,MonitorExit,0000BBBB,00001111,1;00000002;00000000
5087.300000400,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000020
5087.300000500,LockAcquired,0000AAAA,00002222,W,1;00000001;00000020
5087.300000550,LockAcquire,0000BBBB,00002222,W,0000AAAA,1;00000002;00000004
5087.300000600,ConditionAwait,0000AAAA,00003333,00002222,1;00000001;00000024
5087.300000700,LockAcquired,0000BBBB,00002222,W,1;00000002;00000004
5087.300000800,LockRelease,0000BBBB,00002222,W,1;00000002;00000008
5087.300000900,ConditionAwaited,0000AAAA,00003333,00002222,1;00000001;00000024
5087.300001000,LockRelease,0000AAAA,00002222,W,1;00000001;00000028
5087.300001100,ThreadEnded,0000BBBB
5087.300001200,ThreadEnded,0000AAAA
";

#[test]
fn exclusive_holds_pass() {
    let r = run(CLASSES, METHODS, EXCLUSIVE);
    assert!(r.violations.is_empty(), "{:#?}", r.violations);
}

#[test]
fn two_threads_holding_one_monitor() {
    // B entered before A's exit (the written order stays the same).
    let ev = replace_line(
        EXCLUSIVE,
        7,
        "5087.300000199,MonitorEntered,0000BBBB,00001111,1;00000002;00000000",
    );
    let r = run(CLASSES, METHODS, &ev);
    assert_eq!(
        lines(&r, Severity::Error),
        vec!["t.orca:8: thread 0000BBBB owns monitor 00001111 from 5087.300000199 (line 7) to 5087.300000300, while thread 0000AAAA owns it from 5087.300000100 (line 4) to 5087.300000200 (line 6)"]
    );
    assert_eq!(r.violations[0].kind, ViolationKind::Exclusion);
    // The same overlap found from the other side: B's hold written before A's.
    let mut v: Vec<&str> = ev.lines().collect();
    let a: Vec<&str> = v.drain(2..6).filter(|l| l.contains("AAAA")).collect();
    let at = v
        .iter()
        .position(|l| l.contains("MonitorExit,0000BBBB"))
        .unwrap()
        + 1;
    v.splice(at..at, a);
    let ev2: String = v.iter().map(|l| format!("{l}\n")).collect();
    let r = run(CLASSES, METHODS, &ev2);
    let errs = lines(&r, Severity::Error);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("thread 0000AAAA owns monitor 00001111 from 5087.300000100"),
        "{errs:?}"
    );
}

#[test]
fn a_wait_releases_the_monitor_and_a_waited_takes_it_back() {
    // A waits inside its hold: B may hold the monitor in between, but not past A's
    // ObjectWaited.
    let base = "\
5087.300000000,ThreadStarted,0000AAAA,a
5087.300000001,ThreadStarted,0000BBBB,b
5087.300000100,MonitorEntered,0000AAAA,00001111,1;00000001;00000010
5087.300000200,ObjectWait,0000AAAA,00001111,2;00000003;FFFFFFFF;00000001;00000010
5087.300000300,MonitorEntered,0000BBBB,00001111,1;00000002;00000000
5087.300000400,MonitorExit,0000BBBB,00001111,1;00000002;00000000
5087.300000500,ObjectWaited,0000AAAA,00001111,2;00000003;FFFFFFFF;00000001;00000010
5087.300000600,MonitorExit,0000AAAA,00001111,1;00000001;00000010
";
    let r = run(CLASSES, METHODS, base);
    assert!(r.is_valid(), "{:#?}", r.violations);
    let ev = replace_line(
        base,
        7,
        "5087.300000350,ObjectWaited,0000AAAA,00001111,2;00000003;FFFFFFFF;00000001;00000010",
    );
    let r = run(CLASSES, METHODS, &ev);
    let errs = lines(&r, Severity::Error);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with(
            "t.orca:8: thread 0000AAAA owns monitor 00001111 from 5087.300000350 (line 7)"
        ),
        "{errs:?}"
    );
}

#[test]
fn two_threads_holding_one_exclusive_lock() {
    // A's await ends before B releases: both hold the lock in mode W.
    let ev = replace_line(
        EXCLUSIVE,
        15,
        "5087.300000750,ConditionAwaited,0000AAAA,00003333,00002222,1;00000001;00000024",
    );
    let r = run(CLASSES, METHODS, &ev);
    let errs = lines(&r, Severity::Error);
    assert_eq!(
        errs,
        vec!["t.orca:16: thread 0000AAAA owns lock 00002222 (mode W) from 5087.300000750 (line 15) to 5087.300001000, while thread 0000BBBB owns it from 5087.300000700 (line 13) to 5087.300000800 (line 14)"]
    );
    assert_eq!(r.violations[0].kind, ViolationKind::Exclusion);
    // Without the await, A held it all along.
    let ev: String = EXCLUSIVE
        .lines()
        .filter(|l| !l.contains("Condition"))
        .map(|l| format!("{l}\n"))
        .collect();
    let r = run(CLASSES, METHODS, &ev);
    assert_eq!(lines(&r, Severity::Error).len(), 1, "{:#?}", r.violations);
    // Read holds may overlap: the same log in mode R is valid.
    let r = run(CLASSES, METHODS, &ev.replace(",W,", ",R,"));
    assert!(r.is_valid(), "{:#?}", r.violations);
}

#[test]
fn overlaps_after_lost_events_are_warnings() {
    let ev = replace_line(
        EXCLUSIVE,
        7,
        "5087.300000199,MonitorEntered,0000BBBB,00001111,1;00000002;00000000",
    );
    let r = run(
        CLASSES,
        METHODS,
        &format!("{ev}5087.400000000,EventsDropped,3\n"),
    );
    assert!(r.is_valid(), "{:#?}", r.violations);
    assert_eq!(lines(&r, Severity::Warning).len(), 1);
}

#[test]
fn a_thread_id_names_one_thread() {
    let ev = format!(
        "{EXCLUSIVE}5087.300001300,ThreadStarted,0000BBBB,another\n5087.300001400,ThreadEnded,0000BBBB\n"
    );
    let r = run(CLASSES, METHODS, &ev);
    assert_eq!(
        lines(&r, Severity::Error),
        vec!["t.orca:19: thread ID 0000BBBB started again after its ThreadEnded at line 17: one ID names two threads"]
    );
    assert_eq!(r.violations[0].kind, ViolationKind::IdReuse);
}

#[test]
fn a_class_declares_one_method_per_name_and_descriptor() {
    // The bug of issue 25: a lambda class's `run` listed under the class of another `run`.
    let m = format!("{METHODS}5087.100000003,00000004,run,()V,15DB9742,-1\n");
    let r = run(CLASSES, &m, EVENTS);
    assert_eq!(
        lines(&r, Severity::Error),
        vec!["t.methods:4: method 00000004 (run()V of class 15DB9742) is already method 00000002 at line 2: one of them is not declared by that class"]
    );
    assert_eq!(r.violations[0].kind, ViolationKind::IdReuse);
    // Overloads, and one name in two classes, are fine.
    let m = format!(
        "{METHODS}5087.100000003,00000004,run,(I)V,15DB9742,-1\n5087.100000004,00000005,run,()V,6D06D69C,-1\n"
    );
    let r = run(CLASSES, &m, EVENTS);
    assert!(r.violations.is_empty(), "{:#?}", r.violations);
}

/// An object is named once; a second `ObjectClass` line for its ID says that another object
/// shares the ID (the agent writes one when it sees one); a third is an error.
#[test]
fn an_object_id_is_named_once_or_twice_when_shared() {
    let named = "5087.200002150,ObjectClass,00001111,Ljava/lang/Object;\n";
    let shared = "5087.200002160,ObjectClass,00001111,Ljava/util/HashMap;\n";
    for extra in [named.to_string(), format!("{named}{shared}")] {
        let ev = format!("{EVENTS}{extra}");
        let r = run(CLASSES, METHODS, &ev);
        assert!(r.violations.is_empty(), "{:#?}", r.violations);
    }
    let ev = format!("{EVENTS}{named}{shared}{named}");
    let r = run(CLASSES, METHODS, &ev);
    assert_eq!(
        lines(&r, Severity::Error),
        vec!["t.orca:26: ObjectClass of object 00001111 a third time (before at lines 24 and 25): an object is named once, and once more when another object shares its ID"]
    );
    assert_eq!(r.violations[0].kind, ViolationKind::DuplicateId);
}

#[test]
fn a_log_summarised_for_juc_locks_has_no_lock_stretches() {
    // Default options: a contended LockAcquired, then an await; no releases are written, so
    // the thread may have released and taken the lock again between them.
    let ev = "\
5087.300000000,ThreadStarted,0000AAAA,a
5087.300000001,ThreadStarted,0000BBBB,b
5087.300000100,LockAcquire,0000AAAA,00002222,W,0000BBBB,1;00000001;00000020
5087.300000200,LockAcquired,0000AAAA,00002222,W,1;00000001;00000020
5087.300000300,LockAcquire,0000BBBB,00002222,W,0000AAAA,1;00000002;00000004
5087.300000400,LockAcquired,0000BBBB,00002222,W,1;00000002;00000004
5087.300000500,ConditionAwait,0000BBBB,00003333,00002222,1;00000002;00000024
5087.300000600,ConditionAwait,0000AAAA,00003333,00002222,1;00000001;00000024
";
    let r = run(CLASSES, METHODS, ev);
    assert!(r.is_valid(), "{:#?}", r.violations);
    // The same lines after a LockRelease (a complete trace) overlap.
    let ev = ev.replacen(
        "5087.300000300,",
        "5087.300000250,LockRelease,0000BBBB,00004444,W,1;00000002;00000004\n5087.300000300,",
        1,
    );
    let r = run(CLASSES, METHODS, &ev);
    let overlaps = r
        .violations
        .iter()
        .filter(|v| v.kind == ViolationKind::Exclusion)
        .count();
    assert_eq!(overlaps, 1, "{:#?}", r.violations);
}

#[test]
fn a_hold_open_at_the_end_excludes_later_ones() {
    // A holds the monitor to the end of the log; B's hold after A's entry overlaps it.
    let ev = "\
5087.300000000,ThreadStarted,0000AAAA,a
5087.300000001,ThreadStarted,0000BBBB,b
5087.300000100,MonitorEntered,0000AAAA,00001111,1;00000001;00000010
5087.300000200,MonitorEntered,0000BBBB,00001111,1;00000002;00000000
5087.300000300,MonitorExit,0000BBBB,00001111,1;00000002;00000000
";
    let r = run(CLASSES, METHODS, ev);
    assert_eq!(
        lines(&r, Severity::Error),
        vec!["t.orca:5: thread 0000AAAA owns monitor 00001111 from 5087.300000100 (line 3) to the end of the log, while thread 0000BBBB owns it from 5087.300000200 (line 4) to 5087.300000300 (line 5)"]
    );
    // B's hold before A's entry is fine.
    let ev = ev.replace("5087.300000100,", "5087.300000400,");
    let r = run(CLASSES, METHODS, &ev);
    assert!(r.is_valid(), "{:#?}", r.violations);
}

/// The `RecordingEnded` line: the last, not an event, and how the log ended; a log without it
/// was cut short; a line after it is an error.
#[test]
fn recording_ended_is_the_last_line() {
    let r = run(CLASSES, METHODS, EVENTS);
    assert_eq!(r.ended, None);
    assert!(r.ending().contains("killed (SIGKILL) or crashed"));
    let ended = format!("{EVENTS}5087.300000000,RecordingEnded,vmdeath\n");
    let r = run(CLASSES, METHODS, &ended);
    assert!(r.is_valid(), "{:#?}", r.violations);
    assert_eq!(r.ended, Some(orca_format::RecordingEnd::VmDeath));
    assert_eq!(r.events, EVENTS.lines().count() as u64);
    let after = format!("{ended}5087.300000001,ThreadStarted,0000CCCC,late\n");
    let r = run(CLASSES, METHODS, &after);
    let n = EVENTS.lines().count() + 2;
    let msg = "a line after the RecordingEnded line, which must be the last";
    assert_only_error(&r, n, msg, ViolationKind::AfterEnd);
}

/// `r` has one error, at line `n` of the `.orca` file, saying `msg`, of `kind`.
fn assert_only_error(r: &ValidationReport, n: usize, msg: &str, kind: ViolationKind) {
    assert_eq!(
        lines(r, Severity::Error),
        vec![format!("t.orca:{n}: {msg}")]
    );
    assert!(r.violations.iter().any(|v| v.kind == kind), "{r:#?}");
}

/// The `RecordingStarted` line: the first, not an event, its settings kept for readers; one
/// anywhere else is an error, and so is a setting the format does not allow.
#[test]
fn recording_started_is_the_first_line() {
    let settings = "mode=instrument;trace=summary;holdtiming=sampled;tracking=sampled;stackdepth=8";
    let started = format!("5087.100000000,RecordingStarted,{settings}\n{EVENTS}");
    let r = run(CLASSES, METHODS, &started);
    assert!(r.is_valid(), "{:#?}", r.violations);
    assert_eq!(r.settings.as_deref(), Some(settings));
    assert_eq!(r.events, EVENTS.lines().count() as u64);
    assert_eq!(run(CLASSES, METHODS, EVENTS).settings, None);

    let late = format!("{EVENTS}5087.300000000,RecordingStarted,{settings}\n");
    let r = run(CLASSES, METHODS, &late);
    let n = EVENTS.lines().count() + 1;
    let msg = "a RecordingStarted line that is not the first line";
    assert_only_error(&r, n, msg, ViolationKind::NotFirst);

    let bad = started.replace("tracking=sampled", "tracking=most");
    assert!(!run(CLASSES, METHODS, &bad).is_valid());
}

/// `Thread.join` waits on the joined thread's object: a thread that holds that monitor in a
/// `synchronized` join (JDK 17's `join` is one; a thread joining itself, interrupted) releases
/// it with no event of its own (the nested wait is suppressed), and another thread may take
/// it meanwhile. Not an overlap (found by scripts/check-logs on tests/java/Interrupts.java).
#[test]
fn a_join_releases_the_joined_threads_monitor() {
    let events = "\
5087.400000000,ThreadStarted,0000AAAA,main
5087.400000100,ThreadStarted,0000BBBB,joiner
5087.400000200,ThreadJoin,0000BBBB,0000BBBB,1;00000002;00000000
5087.400000300,MonitorEntered,0000BBBB,0000BBBB,1;00000002;00000000
5087.400000400,MonitorEntered,0000AAAA,0000BBBB,1;00000001;00000000
5087.400000500,MonitorExit,0000AAAA,0000BBBB,1;00000001;00000000
5087.400000600,MonitorExit,0000BBBB,0000BBBB,1;00000002;00000000
5087.400000700,ThreadJoined,0000BBBB,0000BBBB,1;00000002;00000000
5087.400000800,ThreadEnded,0000BBBB
5087.400000900,ThreadEnded,0000AAAA
";
    let r = run(CLASSES, METHODS, events);
    assert!(
        lines(&r, Severity::Error).is_empty(),
        "{:?}",
        lines(&r, Severity::Error)
    );
    // Outside a join the same lines are an overlap.
    let r = run(
        CLASSES,
        METHODS,
        &events
            .replace("ThreadJoin,0000BBBB,0000BBBB", "ThreadSleep,0000BBBB")
            .replace("ThreadJoined,0000BBBB,0000BBBB", "ThreadSlept,0000BBBB"),
    );
    let errs = lines(&r, Severity::Error);
    assert!(
        errs.len() == 1 && errs[0].contains("owns monitor 0000BBBB from"),
        "{errs:?}"
    );
}

/// A second `start()` of a thread that runs (it throws IllegalThreadStateException) is a
/// `ThreadStart` after the thread's `ThreadStarted`: a call that started nothing, not a
/// causality error; the first `ThreadStart` still is checked.
#[test]
fn a_second_start_of_a_running_thread_is_a_call() {
    let events = "\
5087.500000000,ThreadStarted,0000AAAA,main
5087.500000100,ThreadStart,0000AAAA,0000BBBB,1;00000001;00000008
5087.500000200,ThreadStarted,0000BBBB,worker
5087.500000300,ThreadStart,0000AAAA,0000BBBB,1;00000001;00000008
5087.500000400,ThreadEnded,0000BBBB
5087.500000500,ThreadEnded,0000AAAA
";
    let r = run(CLASSES, METHODS, events);
    assert!(
        lines(&r, Severity::Error).is_empty(),
        "{:?}",
        lines(&r, Severity::Error)
    );
    let late_first = events.replacen(
        "5087.500000100,ThreadStart,0000AAAA,0000BBBB,1;00000001;00000008\n",
        "",
        1,
    );
    let errs = lines(&run(CLASSES, METHODS, &late_first), Severity::Error);
    assert!(
        errs.len() == 1 && errs[0].contains("is later than its ThreadStarted"),
        "{errs:?}"
    );
}

#[test]
fn a_chunk_after_the_first_may_end_what_began_before_it() {
    // Chunk 2 of a bounded recording (docs/FORMAT.md, "Chunks"): a restated thread stamped at
    // the chunk's start, a kept-back wait entry of that thread stamped before it, and a
    // MonitorExit whose MonitorEntered is in chunk 1: valid, with a note.
    let chunk = |n: u32| {
        format!(
            "\
5087.500000000,RecordingStarted,mode=instrument;trace=all;stackdepth=8;chunk={n};threads=1
5087.500000000,ThreadStarted,0000AAAA,a
5087.400000000,ObjectWait,0000AAAA,00001111,1;00000001;00000010
5087.600000000,ObjectWaited,0000AAAA,00001111,1;00000001;00000010
5087.700000000,MonitorExit,0000AAAA,00002222,1;00000001;00000010
5087.800000000,RecordingEnded,chunk
"
        )
    };
    let r = run(CLASSES, METHODS, &chunk(2));
    assert!(lines(&r, Severity::Error).is_empty(), "{:#?}", r.violations);
    assert_eq!(r.events, 3);
    let notes = lines(&r, Severity::Note);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("unbalanced MonitorExit") && n.contains("earlier chunk")),
        "{notes:?}"
    );
    assert_eq!(r.ended, Some(orca_format::RecordingEnd::Chunk));
    // The first chunk has nothing before it: the same exit is an error there.
    let r = run(CLASSES, METHODS, &chunk(1));
    let errors = lines(&r, Severity::Error);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("unbalanced MonitorExit"), "{errors:?}");
}
