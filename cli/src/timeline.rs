//! `orca timeline`: a Chrome trace-event JSON file (Perfetto, chrome://tracing).
//!
//! One track per thread (`tid`), named from ThreadStarted. The spans are the pairer's
//! (`orca_format::spans`), as every reader's: blocked, waiting, sleeping, joining, acquiring,
//! awaiting and parking spans are complete (`X`) events, which nest properly on one thread;
//! holds can overlap without nesting, so each stretch of a hold (from its begin or the end of a
//! wait on it, to a wait or its release) is an async (`b`/`e`) pair, one lane per monitor and
//! per j.u.c. lock and mode. A span still open at the end of the log ends at its last event,
//! with `"open_at_end":true`. Flow arrows (`s`/`f`) go from the thread that released a monitor
//! to the thread that got it next after blocking. j.u.c. acquisitions are drawn when they were
//! contended (another thread owned the lock as the `LockAcquire` began).
//!
//! Holds the log does not follow line by line are drawn from their long-hold lines: in a log
//! without `MonitorEntered` (summary lines, the default), the `MonitorHold` events; in a log
//! summarised for j.u.c. locks (docs/FORMAT.md), the `LockHold` events. Events are written as
//! they are found, so memory stays bounded; a first pass finds the earliest time drawn, which
//! becomes 0.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use orca_format::spans::{Call, Held, Pairer, Shape, Span, SpanKind};
use orca_format::{ConditionOp, Event, EventReader, Frame, Hash, Metadata};

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
    /// An instant event of a thread.
    fn instant(&mut self, tid: usize, name: &str, cat: &str, ts: u64) -> std::io::Result<()> {
        let s = format!(
            "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":{tid},\"name\":{},\"cat\":\"{cat}\",\"ts\":{}}}",
            json_str(name),
            self.us(ts)
        );
        self.raw(&s)
    }

    /// One stretch of a hold on its lane: an async begin and end (holds overlap without nesting).
    fn hold(
        &mut self,
        tid: usize,
        id: &str,
        name: &str,
        start: u64,
        end: u64,
        args: &str,
    ) -> std::io::Result<()> {
        let s = format!(
            "{{\"ph\":\"b\",\"pid\":1,\"tid\":{tid},\"name\":{},\"cat\":\"hold\",\"id\":{},\"ts\":{},\"args\":{{{args}}}}}",
            json_str(name),
            json_str(id),
            self.us(start)
        );
        self.raw(&s)?;
        let s = format!(
            "{{\"ph\":\"e\",\"pid\":1,\"tid\":{tid},\"name\":{},\"cat\":\"hold\",\"id\":{},\"ts\":{}}}",
            json_str(name),
            json_str(id),
            self.us(end)
        );
        self.raw(&s)
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

/// A track: its number and, once its `ThreadStarted` is read, the thread's name.
struct Track {
    tid: usize,
    name: Option<String>,
}

/// The async (`b`/`e`) id and name of a hold's lane: one per monitor, and per j.u.c. lock and
/// mode (a thread holding both views of a read-write lock draws two).
fn hold_lane(tid: usize, held: Held) -> (String, String) {
    match held {
        Held::Monitor(m) => (format!("{tid}-{m}"), format!("hold {m}")),
        Held::Lock(l, mode) => (format!("{tid}-lock-{l}-{mode}"), format!("hold lock {l}")),
    }
}

/// Writes the trace; returns the number of trace events written.
pub fn run(prefix: &Path, md: &Metadata, output: &Path) -> Result<u64, Box<dyn std::error::Error>> {
    // Pass 1: the earliest time drawn (a hold of a MonitorHold line began before it), the
    // objects' classes, and the log's shape.
    let mut t0 = u64::MAX;
    let mut shape = Shape::default();
    // Classes of the objects (ObjectClass lines, anywhere in the file): span names say
    // `blocked on HashMap@6404CC3C`.
    let mut classes: HashMap<Hash, String> = Default::default();
    let mut r = EventReader::open(prefix)?;
    while let Some((_, rec)) = r.next_event()? {
        let Ok(rec) = rec else { continue };
        shape.observe(&rec.event);
        let ts = rec.timestamp.nanos();
        let start = match rec.event {
            // Not events (docs/FORMAT.md): the trace begins at the first event.
            Event::RecordingStarted { .. } | Event::RecordingEnded { .. } => continue,
            Event::ObjectClass { object, class } => {
                // the first: a second line names another object with the same ID (the report says so)
                classes
                    .entry(object)
                    .or_insert_with(|| orca_format::java_class_name(&class.decode()));
                ts
            }
            Event::MonitorHold { nanos, .. } | Event::LockHold { nanos, .. } => {
                ts.saturating_sub(nanos)
            }
            _ => ts,
        };
        t0 = t0.min(start);
    }
    if t0 == u64::MAX {
        t0 = 0;
    }
    // Holds of j.u.c. locks from the events, else from the LockHold events.
    let juc_summarised = shape.juc_summarised();
    let f = orca_format::output::create(output, false).map_err(|e| e.to_string())?;
    let mut out = Out {
        w: BufWriter::new(f),
        n: 0,
        t0,
    };
    out.w
        .write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    let mut tracks: HashMap<Hash, Track> = HashMap::new();
    let mut draw = Draw {
        last_release: HashMap::new(),
        flow_id: 0,
        juc_summarised,
        classes: &classes,
        md,
    };
    let mut pairer = Pairer::new().with_stretches();
    let mut failed: Option<std::io::Error> = None;
    let mut r = EventReader::open(prefix)?;
    while let Some((_, rec)) = r.next_event()? {
        let Ok(rec) = rec else { continue };
        let ts = rec.timestamp.nanos();
        if let Some(thread) = rec.event.thread() {
            let n = tracks.len();
            tracks.entry(thread).or_insert_with(|| Track {
                tid: n + 1,
                name: None,
            });
        }
        pairer.feed(ts, &rec.event, &mut |s| {
            if failed.is_none() {
                if let Err(e) = draw.span(&mut out, &tracks, &s) {
                    failed = Some(e);
                }
            }
        });
        if let Some(e) = failed.take() {
            return Err(e.into());
        }
        let Some(thread) = rec.event.thread() else {
            continue;
        };
        let tid = tracks[&thread].tid;
        let top = rec.event.stack().and_then(|s| s.top());
        match rec.event {
            Event::ThreadStarted { name, .. } => {
                if let Some(t) = tracks.get_mut(&thread) {
                    t.name = Some(name.decode().into_owned())
                }
            }
            Event::MonitorHold { monitor, nanos, .. } if !shape.monitor_entered => {
                // A long hold that ended now; holds of one monitor on one thread never overlap.
                let (id, name) = hold_lane(tid, Held::Monitor(monitor));
                let args = format!("\"site\":{},\"nanos\":{nanos}", json_str(&draw.site(top)));
                out.hold(tid, &id, &name, ts.saturating_sub(nanos), ts, &args)?;
            }
            Event::LockHold {
                lock,
                mode,
                nanos,
                site: at,
                ..
            } if juc_summarised => {
                // A long hold that ended now; holds of one lock in one mode on one thread never
                // overlap.
                let (id, name) = hold_lane(tid, Held::Lock(lock, mode));
                let args = format!(
                    "\"mode\":\"{mode}\",\"site\":{},\"nanos\":{nanos}",
                    json_str(&draw.site(at.top()))
                );
                out.hold(tid, &id, &name, ts.saturating_sub(nanos), ts, &args)?;
            }
            Event::Condition {
                op: ConditionOp::Signal | ConditionOp::SignalAll,
                condition,
                ..
            } => {
                let name = format!("{} {condition}", rec.event.kind());
                out.instant(tid, &name, "juc", ts)?;
            }
            Event::ThreadUnpark { unparked, .. } => {
                out.instant(tid, &format!("unpark {unparked}"), "juc", ts)?;
            }
            Event::ObjectNotify { object, .. } | Event::ObjectNotifyAll { object, .. } => {
                let name = format!("{} {object}", rec.event.kind());
                out.instant(tid, &name, "call", ts)?;
            }
            _ => {}
        }
    }
    // Close what is still open at the end of the log, and name the tracks.
    pairer.finish(&mut |s| {
        if failed.is_none() {
            if let Err(e) = draw.span(&mut out, &tracks, &s) {
                failed = Some(e);
            }
        }
    });
    if let Some(e) = failed {
        return Err(e.into());
    }
    let mut ts: Vec<_> = tracks.into_iter().collect();
    ts.sort_by_key(|(_, t)| t.tid);
    for (h, t) in ts {
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

/// What drawing a span needs besides the output.
struct Draw<'a> {
    /// Per monitor, the thread that last released it and when (a hold's stretch ending at a
    /// wait or at the exit): the source of a hand-off arrow.
    last_release: HashMap<Hash, (Hash, u64)>,
    flow_id: u64,
    juc_summarised: bool,
    classes: &'a HashMap<Hash, String>,
    md: &'a Metadata,
}

impl Draw<'_> {
    fn site(&self, f: Option<Frame>) -> String {
        f.map(|f| self.md.frame_to_string(f)).unwrap_or_default()
    }

    fn named(&self, h: Hash) -> String {
        named(self.classes, h)
    }

    /// Draws one span of the pairer (a [`SpanKind::Hold`] is drawn by its stretches).
    fn span<W: Write>(
        &mut self,
        out: &mut Out<W>,
        tracks: &HashMap<Hash, Track>,
        s: &Span,
    ) -> std::io::Result<()> {
        let Some(tid) = tracks.get(&s.thread).map(|t| t.tid) else {
            return Ok(());
        };
        let (since, ts) = (s.begin.ts, s.end_ts);
        let site = json_str(&self.site(s.begin.top));
        let open = if s.is_open() {
            ",\"open_at_end\":true"
        } else {
            ""
        };
        match s.kind {
            SpanKind::Blocked { monitor, owner } => {
                let args = format!(
                    "\"monitor\":\"{monitor}\",\"owner\":\"{owner}\",\"site\":{site}{open}"
                );
                let name = format!("blocked on {}", self.named(monitor));
                out.complete(tid, &name, "monitor", since, ts, &args)?;
                if !s.is_open() {
                    self.handoff(out, tracks, s.thread, tid, monitor, owner, since, ts)?;
                }
            }
            SpanKind::Call { call, object } => {
                let name = match call {
                    Call::Wait => format!("wait on {}", self.named(object)),
                    Call::Join => format!("join {}", self.named(object)),
                    Call::Sleep => "sleep".to_string(),
                    Call::Semaphore => format!("acquire semaphore {}", self.named(object)),
                };
                let args = format!("\"site\":{site}{open}");
                out.complete(tid, &name, "call", since, ts, &args)?;
            }
            SpanKind::Acquire {
                lock,
                mode,
                owner,
                outcome,
            } => {
                // Contended only: another thread owned the lock as the acquisition began.
                if owner != Hash::UNKNOWN && owner != s.thread {
                    let outcome = outcome.map_or("open".to_string(), |o| o.kind().to_string());
                    let args = format!(
                        "\"lock\":\"{lock}\",\"mode\":\"{mode}\",\"owner\":\"{owner}\",\"outcome\":\"{outcome}\",\"site\":{site}{open}"
                    );
                    let name = format!("blocked on lock {}", self.named(lock));
                    out.complete(tid, &name, "juc", since, ts, &args)?;
                }
            }
            SpanKind::Await { lock, condition } => {
                let args = format!("\"lock\":\"{lock}\",\"site\":{site}{open}");
                let name = format!("await {}", self.named(condition));
                out.complete(tid, &name, "juc", since, ts, &args)?;
            }
            SpanKind::Park { blocker } => {
                let name = if blocker == Hash::UNKNOWN {
                    "park".to_string()
                } else {
                    format!("park {}", self.named(blocker))
                };
                let args = format!("\"blocker\":\"{blocker}\",\"site\":{site}{open}");
                out.complete(tid, &name, "juc", since, ts, &args)?;
            }
            SpanKind::Stretch { held, resumed, .. } => {
                if let Held::Monitor(m) = held {
                    if !s.is_open() {
                        self.last_release.insert(m, (s.thread, ts));
                    }
                } else if self.juc_summarised {
                    // Its releases are not written: the hold is not one (docs/FORMAT.md).
                    return Ok(());
                }
                let (id, name) = hold_lane(tid, held);
                let mut args = if resumed {
                    "\"after\":\"wait\"".to_string()
                } else {
                    format!("\"site\":{site}")
                };
                if let Held::Lock(_, mode) = held {
                    args = format!("\"mode\":\"{mode}\",{args}");
                }
                out.hold(tid, &id, &name, since, ts, &format!("{args}{open}"))?;
            }
            SpanKind::Hold { .. } => {}
        }
        Ok(())
    }

    /// The arrow from the thread that released `monitor` to `tid`, which got it at `ts` after
    /// blocking since `since`: the last thread seen releasing it meanwhile, else (JVMTI mode, no
    /// MonitorExit) the owner at contention, which released it just before this thread got it.
    #[allow(clippy::too_many_arguments)]
    fn handoff<W: Write>(
        &mut self,
        out: &mut Out<W>,
        tracks: &HashMap<Hash, Track>,
        thread: Hash,
        tid: usize,
        monitor: Hash,
        owner: Hash,
        since: u64,
        ts: u64,
    ) -> std::io::Result<()> {
        let release = match self.last_release.get(&monitor) {
            Some(&(rt, rts)) if rts >= since && rts <= ts => Some((rt, rts)),
            _ if owner != Hash::UNKNOWN => Some((owner, ts)),
            _ => None,
        };
        let Some((rel_thread, rel_ts)) = release else {
            return Ok(());
        };
        if rel_thread == thread {
            return Ok(());
        }
        let Some(rtid) = tracks.get(&rel_thread).map(|t| t.tid) else {
            return Ok(());
        };
        self.flow_id += 1;
        let flow_id = self.flow_id;
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
        out.raw(&s)
    }
}

/// `HashMap@6404CC3C` when the log names the object's class, else the bare ID.
fn named(classes: &std::collections::HashMap<Hash, String>, h: Hash) -> String {
    match classes.get(&h) {
        Some(c) => format!("{}@{h}", crate::report::simple_name(c)),
        None => h.to_string(),
    }
}
