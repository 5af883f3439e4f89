//! `orca timeline`: a Chrome trace-event JSON file (Perfetto, chrome://tracing).
//!
//! One track per thread (`tid`), named from ThreadStarted. Blocked, waiting,
//! sleeping, joining and acquiring spans are complete (`X`) events, which nest
//! properly on one thread; monitor holds can overlap without nesting, so they
//! are async (`b`/`e`) events. Flow arrows (`s`/`f`) go from the thread that
//! released a monitor (MonitorExit) to the thread that got it next after
//! blocking (MonitorContendedEntered). In a log without MonitorEntered events
//! (summary lines, the agent's default), the long holds of its MonitorHold
//! events are drawn as hold spans instead (summary lines are not drawn).
//! j.u.c. locks: contended acquisitions (another thread owned the lock as the
//! `LockAcquire` began) are `blocked on lock` spans, outermost holds are
//! `hold lock` async spans (paused during `await`), condition awaits and parks
//! are `await` and `park` spans. In a log summarised for j.u.c. locks
//! (`LockHolds`/`LockHold` lines and no `LockRelease`: the default mode), the
//! holds are not followed from the events (their releases are not written):
//! the long holds of its `LockHold` events are drawn as `hold lock` spans.
//! Events are written as they are found,
//! so memory stays bounded; a first pass finds the earliest timestamp, which
//! becomes 0.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use orca_format::{ConditionOp, Event, EventReader, Frame, Hash, LockOp, Metadata};

use crate::util::json_str;

struct Out<W: Write> {
    w: W,
    n: u64,
    t0: u64,
}

impl<W: Write> Out<W> {
    fn us(&self, ts: u64) -> String {
        let d = ts.saturating_sub(self.t0);
        format!("{}.{:03}", d / 1000, d % 1000)
    }
    fn raw(&mut self, s: &str) -> std::io::Result<()> {
        if self.n > 0 {
            self.w.write_all(b",\n")?;
        }
        self.n += 1;
        self.w.write_all(s.as_bytes())
    }
    fn complete(
        &mut self,
        tid: usize,
        name: &str,
        cat: &str,
        start: u64,
        end: u64,
        args: &str,
    ) -> std::io::Result<()> {
        let s = format!(
            "{{\"ph\":\"X\",\"pid\":1,\"tid\":{tid},\"name\":{},\"cat\":\"{cat}\",\"ts\":{},\"dur\":{},\"args\":{{{args}}}}}",
            json_str(name),
            self.us(start),
            {
                let d = end.saturating_sub(start);
                format!("{}.{:03}", d / 1000, d % 1000)
            }
        );
        self.raw(&s)
    }
}

#[derive(Default)]
struct ThreadState {
    tid: usize,
    name: Option<String>,
    contended: Option<(Hash, Hash, u64, Option<Frame>)>,
    call: Option<(&'static str, Hash, u64, Option<Frame>)>,
    held: Vec<(Hash, u32, u64)>,
    /// The open j.u.c. call: (span name, object, owner at a lock acquisition, since, site).
    juc: Option<(&'static str, Hash, Hash, u64, Option<Frame>)>,
    /// Held j.u.c. locks: (lock, count); `awaiting` the lock an open await released.
    juc_held: Vec<(Hash, u32)>,
    awaiting: Option<Hash>,
}

/// The begin (`b`) or end (`e`) of a hold span of a j.u.c. lock.
fn juc_hold(tid: usize, lock: Hash, phase: char, at: &str) -> String {
    format!(
        "{{\"ph\":\"{phase}\",\"pid\":1,\"tid\":{tid},\"name\":\"hold lock {lock}\",\"cat\":\"hold\",\"id\":\"{tid}-lock-{lock}\",\"ts\":{at}}}"
    )
}

/// Writes the trace; returns the number of trace events written.
pub fn run(prefix: &Path, md: &Metadata, output: &Path) -> Result<u64, Box<dyn std::error::Error>> {
    // Pass 1: earliest timestamp.
    let mut t0 = u64::MAX;
    let mut last = 0;
    let mut entered_events = false;
    let (mut lock_releases, mut lock_summaries) = (false, false);
    // Classes of the objects (ObjectClass lines, anywhere in the file): span names say
    // `blocked on HashMap@6404CC3C`.
    let mut classes: std::collections::HashMap<Hash, String> = Default::default();
    let mut r = EventReader::open(prefix)?;
    while let Some((_, rec)) = r.next_event()? {
        if let Ok(rec) = rec {
            let mut start = rec.timestamp.nanos();
            match rec.event {
                Event::ObjectClass { object, class } => {
                    // the first: a second line names another object with the same ID (the report says so)
                    classes
                        .entry(object)
                        .or_insert_with(|| orca_format::java_class_name(&class.decode()));
                }
                Event::MonitorEntered { .. } => entered_events = true,
                Event::MonitorHold { nanos, .. } => start = start.saturating_sub(nanos),
                Event::LockHold { nanos, .. } => {
                    lock_summaries = true;
                    start = start.saturating_sub(nanos)
                }
                Event::LockHolds { .. } => lock_summaries = true,
                Event::Lock {
                    op: LockOp::Release,
                    ..
                } => lock_releases = true,
                _ => {}
            }
            t0 = t0.min(start);
            last = last.max(rec.timestamp.nanos());
        }
    }
    if t0 == u64::MAX {
        t0 = 0;
    }
    // Holds of j.u.c. locks from the events, else from the LockHold events.
    let juc_summarised = lock_summaries && !lock_releases;
    let f = orca_format::output::create(output, false).map_err(|e| e.to_string())?;
    let mut out = Out {
        w: BufWriter::new(f),
        n: 0,
        t0,
    };
    out.w
        .write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    let mut threads: HashMap<Hash, ThreadState> = HashMap::new();
    let mut last_release: HashMap<Hash, (Hash, u64)> = HashMap::new();
    let mut flow_id = 0u64;
    let site = |f: Option<Frame>| f.map(|f| md.frame_to_string(f)).unwrap_or_default();
    let mut r = EventReader::open(prefix)?;
    while let Some((_, rec)) = r.next_event()? {
        let Ok(rec) = rec else { continue };
        let ts = rec.timestamp.nanos();
        let Some(thread) = rec.event.thread() else {
            continue;
        };
        let n = threads.len();
        let t = threads.entry(thread).or_insert_with(|| ThreadState {
            tid: n + 1,
            ..Default::default()
        });
        let tid = t.tid;
        let top = rec.event.stack().and_then(|s| s.top());
        match rec.event {
            Event::ThreadStarted { name, .. } => t.name = Some(name.decode().into_owned()),
            Event::MonitorContendedEnter { monitor, owner, .. } => {
                t.contended = Some((monitor, owner, ts, top))
            }
            Event::MonitorContendedEntered { monitor, .. } => {
                if let Some((m, owner, since, f)) = t.contended.take() {
                    let args = format!(
                        "\"monitor\":\"{m}\",\"owner\":\"{owner}\",\"site\":{}",
                        json_str(&site(f))
                    );
                    out.complete(
                        tid,
                        &format!("blocked on {}", named(&classes, m)),
                        "monitor",
                        since,
                        ts,
                        &args,
                    )?;
                    // The releaser: the last thread seen releasing it while this
                    // one was blocked, else (JVMTI mode, no MonitorExit) the owner
                    // at contention, which released it just before this thread got it.
                    let release = match last_release.get(&monitor) {
                        Some(&(rt, rts)) if rts >= since && rts <= ts => Some((rt, rts)),
                        _ if owner != Hash::UNKNOWN => Some((owner, ts)),
                        _ => None,
                    };
                    if let Some((rel_thread, rel_ts)) = release {
                        if rel_thread != thread {
                            if let Some(rt) = threads.get(&rel_thread) {
                                flow_id += 1;
                                let rtid = rt.tid;
                                out.complete(
                                    rtid,
                                    &format!("release {monitor}"),
                                    "monitor",
                                    rel_ts,
                                    rel_ts + 1,
                                    "",
                                )?;
                                out.complete(
                                    tid,
                                    &format!("acquired {monitor}"),
                                    "monitor",
                                    ts,
                                    ts + 1,
                                    "",
                                )?;
                                let s = format!(
                                    "{{\"ph\":\"s\",\"pid\":1,\"tid\":{rtid},\"name\":\"handoff\",\"cat\":\"monitor\",\"id\":{flow_id},\"ts\":{}}}",
                                    out.us(rel_ts)
                                );
                                out.raw(&s)?;
                                let s = format!(
                                    "{{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":{tid},\"name\":\"handoff\",\"cat\":\"monitor\",\"id\":{flow_id},\"ts\":{}}}",
                                    out.us(ts)
                                );
                                out.raw(&s)?;
                            }
                        }
                    }
                }
            }
            Event::MonitorEntered { monitor, .. } => {
                match t.held.iter_mut().find(|h| h.0 == monitor) {
                    Some(h) => h.1 += 1,
                    None => {
                        t.held.push((monitor, 1, ts));
                        let s = format!(
                        "{{\"ph\":\"b\",\"pid\":1,\"tid\":{tid},\"name\":\"hold {monitor}\",\"cat\":\"hold\",\"id\":\"{tid}-{monitor}\",\"ts\":{},\"args\":{{\"site\":{}}}}}",
                        out.us(ts),
                        json_str(&site(top))
                    );
                        out.raw(&s)?;
                    }
                }
            }
            Event::MonitorExit { monitor, .. } => {
                if let Some(i) = t.held.iter().position(|h| h.0 == monitor) {
                    t.held[i].1 -= 1;
                    if t.held[i].1 == 0 {
                        t.held.swap_remove(i);
                        let s = format!(
                            "{{\"ph\":\"e\",\"pid\":1,\"tid\":{tid},\"name\":\"hold {monitor}\",\"cat\":\"hold\",\"id\":\"{tid}-{monitor}\",\"ts\":{}}}",
                            out.us(ts)
                        );
                        out.raw(&s)?;
                        last_release.insert(monitor, (thread, ts));
                    }
                }
            }
            Event::ObjectWait { object, .. } => {
                // Object.wait releases the monitor: a hand-off source too.
                if t.held.iter().any(|h| h.0 == object) {
                    last_release.insert(object, (thread, ts));
                    // The hold pauses while waiting: end its span, restart it at ObjectWaited.
                    let s = format!(
                        "{{\"ph\":\"e\",\"pid\":1,\"tid\":{tid},\"name\":\"hold {object}\",\"cat\":\"hold\",\"id\":\"{tid}-{object}\",\"ts\":{}}}",
                        out.us(ts)
                    );
                    out.raw(&s)?;
                }
                t.call = Some(("wait on", object, ts, top));
            }
            Event::ThreadJoin { joined, .. } => t.call = Some(("join", joined, ts, top)),
            Event::ThreadSleep { .. } => t.call = Some(("sleep", Hash(0), ts, top)),
            Event::SemaphoreAcquire { semaphore, .. } => {
                t.call = Some(("acquire semaphore", semaphore, ts, top))
            }
            Event::ObjectWaited { object, .. } if t.held.iter().any(|h| h.0 == object) => {
                if let Some((what, obj, since, f)) = t.call.take() {
                    let args = format!("\"site\":{}", json_str(&site(f)));
                    out.complete(
                        tid,
                        &format!("{what} {}", named(&classes, obj)),
                        "call",
                        since,
                        ts,
                        &args,
                    )?;
                }
                let s = format!(
                    "{{\"ph\":\"b\",\"pid\":1,\"tid\":{tid},\"name\":\"hold {object}\",\"cat\":\"hold\",\"id\":\"{tid}-{object}\",\"ts\":{},\"args\":{{\"after\":\"wait\"}}}}",
                    out.us(ts)
                );
                out.raw(&s)?;
            }
            Event::ObjectWaited { .. }
            | Event::ThreadJoined { .. }
            | Event::ThreadSlept { .. }
            | Event::SemaphoreAcquired { .. } => {
                if let Some((what, obj, since, f)) = t.call.take() {
                    let name = if what == "sleep" {
                        what.to_string()
                    } else {
                        format!("{what} {}", named(&classes, obj))
                    };
                    let args = format!("\"site\":{}", json_str(&site(f)));
                    out.complete(tid, &name, "call", since, ts, &args)?;
                }
            }
            Event::MonitorHold { monitor, nanos, .. } if !entered_events => {
                // A long hold that ended now; holds of one monitor on one thread never overlap.
                let id = format!("{tid}-{monitor}");
                let s = format!(
                    "{{\"ph\":\"b\",\"pid\":1,\"tid\":{tid},\"name\":\"hold {monitor}\",\"cat\":\"hold\",\"id\":\"{id}\",\"ts\":{},\"args\":{{\"site\":{},\"nanos\":{nanos}}}}}",
                    out.us(ts.saturating_sub(nanos)),
                    json_str(&site(top))
                );
                out.raw(&s)?;
                let s = format!(
                    "{{\"ph\":\"e\",\"pid\":1,\"tid\":{tid},\"name\":\"hold {monitor}\",\"cat\":\"hold\",\"id\":\"{id}\",\"ts\":{}}}",
                    out.us(ts)
                );
                out.raw(&s)?;
            }
            Event::LockHold {
                lock,
                mode,
                nanos,
                site: at,
                ..
            } if !lock_releases => {
                // A long hold that ended now; holds of one lock on one thread never overlap
                // (a thread holding both views draws them as one lane, as from the events).
                let begin = format!(
                    "{{\"ph\":\"b\",\"pid\":1,\"tid\":{tid},\"name\":\"hold lock {lock}\",\"cat\":\"hold\",\"id\":\"{tid}-lock-{lock}\",\"ts\":{},\"args\":{{\"mode\":\"{mode}\",\"site\":{},\"nanos\":{nanos}}}}}",
                    out.us(ts.saturating_sub(nanos)),
                    json_str(&site(at.top()))
                );
                out.raw(&begin)?;
                let at = out.us(ts);
                out.raw(&juc_hold(tid, lock, 'e', &at))?;
            }
            Event::LockAcquire { lock, owner, .. } => {
                t.juc = Some(("blocked on lock", lock, owner, ts, top))
            }
            Event::Lock { op, lock, mode, .. } => {
                if op != LockOp::Release {
                    if let Some((what, l, owner, since, f)) = t.juc.take() {
                        if owner != Hash::UNKNOWN && owner != thread {
                            let args = format!(
                                "\"lock\":\"{l}\",\"mode\":\"{mode}\",\"owner\":\"{owner}\",\"outcome\":\"{}\",\"site\":{}",
                                rec.event.kind(),
                                json_str(&site(f))
                            );
                            out.complete(
                                tid,
                                &format!("{what} {}", named(&classes, l)),
                                "juc",
                                since,
                                ts,
                                &args,
                            )?;
                        }
                    }
                }
                match op {
                    _ if juc_summarised => {}
                    LockOp::Acquired => match t.juc_held.iter_mut().find(|h| h.0 == lock) {
                        Some(h) => h.1 += 1,
                        None => {
                            t.juc_held.push((lock, 1));
                            let at = out.us(ts);
                            out.raw(&juc_hold(tid, lock, 'b', &at))?;
                        }
                    },
                    LockOp::Release => {
                        if let Some(i) = t.juc_held.iter().position(|h| h.0 == lock) {
                            t.juc_held[i].1 -= 1;
                            if t.juc_held[i].1 == 0 {
                                t.juc_held.swap_remove(i);
                                let at = out.us(ts);
                                out.raw(&juc_hold(tid, lock, 'e', &at))?;
                            }
                        }
                    }
                    _ => {}
                }
            }
            Event::Condition {
                op,
                condition,
                lock,
                ..
            } => match op {
                ConditionOp::Await => {
                    // await releases the lock: its hold span pauses until ConditionAwaited.
                    if t.juc_held.iter().any(|h| h.0 == lock) {
                        t.awaiting = Some(lock);
                        let at = out.us(ts);
                        out.raw(&juc_hold(tid, lock, 'e', &at))?;
                    }
                    t.juc = Some(("await", condition, Hash::UNKNOWN, ts, top));
                }
                ConditionOp::Awaited => {
                    if let Some((what, c, _, since, f)) = t.juc.take() {
                        let args = format!("\"lock\":\"{lock}\",\"site\":{}", json_str(&site(f)));
                        out.complete(
                            tid,
                            &format!("{what} {}", named(&classes, c)),
                            "juc",
                            since,
                            ts,
                            &args,
                        )?;
                    }
                    if t.awaiting.take() == Some(lock) {
                        let at = out.us(ts);
                        out.raw(&juc_hold(tid, lock, 'b', &at))?;
                    }
                }
                ConditionOp::Signal | ConditionOp::SignalAll => {
                    let s = format!(
                        "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":{tid},\"name\":\"{} {condition}\",\"cat\":\"juc\",\"ts\":{}}}",
                        rec.event.kind(),
                        out.us(ts)
                    );
                    out.raw(&s)?;
                }
            },
            Event::ThreadPark { blocker, .. } => {
                t.juc = Some(("park", blocker, Hash::UNKNOWN, ts, top));
            }
            Event::ThreadParked { .. } => {
                if let Some((what, b, _, since, f)) = t.juc.take() {
                    let name = if b == Hash::UNKNOWN {
                        what.to_string()
                    } else {
                        format!("{what} {}", named(&classes, b))
                    };
                    let args = format!("\"blocker\":\"{b}\",\"site\":{}", json_str(&site(f)));
                    out.complete(tid, &name, "juc", since, ts, &args)?;
                }
            }
            Event::ThreadUnpark { unparked, .. } => {
                let s = format!(
                    "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":{tid},\"name\":\"unpark {unparked}\",\"cat\":\"juc\",\"ts\":{}}}",
                    out.us(ts)
                );
                out.raw(&s)?;
            }
            Event::ObjectNotify { object, .. } | Event::ObjectNotifyAll { object, .. } => {
                let s = format!(
                    "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":{tid},\"name\":\"{} {object}\",\"cat\":\"call\",\"ts\":{}}}",
                    rec.event.kind(),
                    out.us(ts)
                );
                out.raw(&s)?;
            }
            _ => {}
        }
    }
    // Close what is still open at the end of the log, and name the tracks.
    let mut ts: Vec<_> = threads.into_iter().collect();
    ts.sort_by_key(|(_, t)| t.tid);
    for (h, t) in ts {
        if let Some((m, owner, since, _)) = t.contended {
            let args = format!("\"monitor\":\"{m}\",\"owner\":\"{owner}\",\"open_at_end\":true");
            out.complete(
                t.tid,
                &format!("blocked on {}", named(&classes, m)),
                "monitor",
                since,
                last,
                &args,
            )?;
        }
        if let Some((what, obj, since, _)) = t.call {
            out.complete(
                t.tid,
                &format!("{what} {}", named(&classes, obj)),
                "call",
                since,
                last,
                "\"open_at_end\":true",
            )?;
        }
        if let Some((what, obj, owner, since, _)) = t.juc {
            let contended = owner != Hash::UNKNOWN && owner != h;
            if what != "blocked on lock" || contended {
                out.complete(
                    t.tid,
                    &format!("{what} {}", named(&classes, obj)),
                    "juc",
                    since,
                    last,
                    "\"open_at_end\":true",
                )?;
            }
        }
        for (l, _) in &t.juc_held {
            if t.awaiting != Some(*l) {
                let at = out.us(last);
                out.raw(&juc_hold(t.tid, *l, 'e', &at))?;
            }
        }
        let waiting_on = t.call.and_then(|c| (c.0 == "wait on").then_some(c.1));
        for (m, _, _) in t.held {
            if waiting_on == Some(m) {
                continue; // its span already ended at the ObjectWait
            }
            let s = format!(
                "{{\"ph\":\"e\",\"pid\":1,\"tid\":{},\"name\":\"hold {m}\",\"cat\":\"hold\",\"id\":\"{}-{m}\",\"ts\":{}}}",
                t.tid,
                t.tid,
                out.us(last)
            );
            out.raw(&s)?;
        }
        let name = match &t.name {
            Some(n) => format!("{n} [{h}]"),
            None => format!("[{h}]"),
        };
        let s = format!(
            "{{\"ph\":\"M\",\"pid\":1,\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
            t.tid,
            json_str(&name)
        );
        out.raw(&s)?;
    }
    out.raw(
        "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"java (orca)\"}}",
    )?;
    out.w.write_all(b"\n]}\n")?;
    out.w.flush()?;
    Ok(out.n)
}

/// `HashMap@6404CC3C` when the log names the object's class, else the bare ID.
fn named(classes: &std::collections::HashMap<Hash, String>, h: Hash) -> String {
    match classes.get(&h) {
        Some(c) => format!("{}@{h}", crate::report::simple_name(c)),
        None => h.to_string(),
    }
}
