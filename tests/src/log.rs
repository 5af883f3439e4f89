//! A small reader of the three files for test assertions: events with their resolved
//! frames, thread names, methods and classes. Strict validation of every line against
//! docs/FORMAT.md is the job of `orca-format`; this reader only needs to understand them.

use std::collections::HashMap;
use std::path::Path;

/// One `.orca` line.
#[derive(Clone, Debug)]
pub struct Event {
    /// 1-based line number in `.orca`.
    pub line: usize,
    pub nanos: u64,
    pub name: String,
    pub thread: u32,
    /// The `<object>` / `<monitor>` field, where the event has one.
    pub object: Option<u32>,
    /// `MonitorContendedEnter`'s and `LockAcquire`'s owner thread; `Condition*`'s lock.
    pub owner: Option<u32>,
    /// The j.u.c. lock lines' `<mode>`: `R` or `W`.
    pub mode: Option<char>,
    /// (method ID, location) pairs, innermost first. Summary lines: their sites
    /// (`LockOrder`: the held monitor's, then the acquired one's). `LockHold`: the stack of
    /// its `unlock`.
    pub frames: Vec<(u32, u32)>,
    /// Summary lines' numbers: `MonitorHolds`, `LockHolds`, `MonitorContentions` and
    /// `LockContentions` count, total, max (`MonitorHolds`: then its `<sample>`, 1 without
    /// one); `LockOrder` count; `MonitorHoldsUntimed` count and `<sample>`; `MonitorHold` and
    /// `LockHold` its length.
    pub numbers: Vec<u64>,
    /// `LockHold`'s one-frame acquisition site.
    pub site: Option<(u32, u32)>,
}

/// One `.methods` line.
#[derive(Clone, Debug)]
pub struct Method {
    pub name: String,
    pub signature: String,
    pub class: u32,
    /// (start location, line) pairs; `None` for `-1`.
    pub lines: Option<Vec<(u32, u32)>>,
}

/// The three files of one run.
#[derive(Debug, Default)]
pub struct Log {
    pub events: Vec<Event>,
    pub methods: HashMap<u32, Method>,
    /// class ID -> (signature, source file)
    pub classes: HashMap<u32, (String, String)>,
    /// thread ID -> name (unescaped), from ThreadStarted
    pub thread_names: HashMap<u32, String>,
    /// object ID -> class signature (unescaped), from ObjectClass lines (not in `events`)
    pub object_classes: HashMap<u32, String>,
    /// object ID -> the class signature of the second `ObjectClass` line of that ID: another
    /// object shares the ID (docs/FORMAT.md, "Object classes")
    pub shared_objects: HashMap<u32, String>,
    /// Whether the last line of some file lacked its newline (it is left out).
    pub torn: bool,
    /// The sum of the `EventsDropped` lines' counts (the lines are not in `events`).
    pub dropped: u64,
    /// The word of the `RecordingEnded` line (`vmdeath`, `unload`); `None` without one (the
    /// JVM was killed or crashed).
    pub ended: Option<String>,
    /// The settings of the `RecordingStarted` line (`key=value;...`), which must be the
    /// first line; `None` without one.
    pub settings: Option<String>,
}

fn hex(s: &str) -> Result<u32, String> {
    if s.len() != 8
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
    {
        return Err(format!("not 8 uppercase hex digits: {s:?}"));
    }
    u32::from_str_radix(s, 16).map_err(|e| e.to_string())
}

fn timestamp(s: &str) -> Result<u64, String> {
    let (sec, frac) = s
        .split_once('.')
        .ok_or_else(|| format!("bad timestamp {s:?}"))?;
    if frac.len() != 9
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || sec.is_empty()
        || !sec.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(format!("bad timestamp {s:?}"));
    }
    Ok(
        sec.parse::<u64>().map_err(|e| e.to_string())? * 1_000_000_000
            + frac.parse::<u64>().unwrap(),
    )
}

fn pairs(s: &str) -> Result<Option<Vec<(u32, u32)>>, String> {
    let mut parts = s.split(';');
    let count: i64 = parts
        .next()
        .unwrap_or("")
        .parse()
        .map_err(|_| format!("bad count in {s:?}"))?;
    if count == -1 {
        return if parts.next().is_none() {
            Ok(None)
        } else {
            Err(format!("-1 followed by pairs: {s:?}"))
        };
    }
    let rest: Vec<&str> = parts.collect();
    if count < 0 || rest.len() != 2 * count as usize {
        return Err(format!(
            "count {count} does not match {} fields in {s:?}",
            rest.len()
        ));
    }
    rest.chunks(2)
        .map(|c| Ok((hex(c[0])?, hex(c[1])?)))
        .collect::<Result<Vec<_>, String>>()
        .map(Some)
}

/// Undoes the free-text escape of docs/FORMAT.md.
pub fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = s
                .get(i + 1..i + 3)
                .ok_or_else(|| format!("truncated escape in {s:?}"))?;
            if !h
                .bytes()
                .all(|c| c.is_ascii_digit() || (b'A'..=b'F').contains(&c))
            {
                return Err(format!("bad escape %{h} in {s:?}"));
            }
            out.push(u8::from_str_radix(h, 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|e| e.to_string())
}

fn mode(s: &str) -> Result<char, String> {
    match s {
        "R" => Ok('R'),
        "W" => Ok('W'),
        _ => Err(format!("bad mode {s:?}")),
    }
}

fn parse_event(line: usize, text: &str) -> Result<Event, String> {
    let f: Vec<&str> = text.split(',').collect();
    let need = |n: usize| {
        if f.len() == n {
            Ok(())
        } else {
            Err(format!("{} fields, expected {n}", f.len()))
        }
    };
    let nanos = timestamp(f[0])?;
    let name = f.get(1).ok_or("no event name")?.to_string();
    let thread = hex(f.get(2).ok_or("no thread")?)?;
    let mut e = Event {
        line,
        nanos,
        name: name.clone(),
        thread,
        object: None,
        owner: None,
        mode: None,
        frames: Vec::new(),
        numbers: Vec::new(),
        site: None,
    };
    let num = |s: &str| s.parse::<u64>().map_err(|e| format!("{s:?}: {e}"));
    let stack = |s: &str| pairs(s).and_then(|p| p.ok_or_else(|| "stack depth -1".to_string()));
    match name.as_str() {
        "ThreadStarted" => need(4)?,
        "ThreadEnded" => need(3)?,
        "ThreadSleep" | "ThreadSlept" => {
            need(4)?;
            e.frames = stack(f[3])?;
        }
        "MonitorContendedEnter" => {
            need(6)?;
            e.object = Some(hex(f[3])?);
            e.owner = Some(hex(f[4])?);
            e.frames = stack(f[5])?;
        }
        "MonitorContendedEntered"
        | "ObjectWait"
        | "ObjectWaited"
        | "ObjectNotify"
        | "ObjectNotifyAll"
        | "ThreadStart"
        | "ThreadJoin"
        | "ThreadJoined"
        | "SemaphoreAcquire"
        | "SemaphoreAcquired"
        | "SemaphoreRelease"
        | "MonitorEnter"
        | "MonitorEntered"
        | "MonitorExit" => {
            need(5)?;
            e.object = Some(hex(f[3])?);
            e.frames = stack(f[4])?;
        }
        "LockAcquire" => {
            need(7)?;
            e.object = Some(hex(f[3])?);
            e.mode = Some(mode(f[4])?);
            e.owner = Some(hex(f[5])?);
            e.frames = stack(f[6])?;
        }
        "LockAcquired" | "LockFailed" | "LockTimedOut" | "LockInterrupted" | "LockRelease"
        | "LockHeldAtStart" => {
            need(6)?;
            e.object = Some(hex(f[3])?);
            e.mode = Some(mode(f[4])?);
            e.frames = stack(f[5])?;
        }
        "ConditionAwait" | "ConditionAwaited" | "ConditionSignal" | "ConditionSignalAll" => {
            need(6)?;
            e.object = Some(hex(f[3])?);
            e.owner = Some(hex(f[4])?);
            e.frames = stack(f[5])?;
        }
        "ThreadPark" | "ThreadParked" | "ThreadUnpark" => {
            need(5)?;
            e.object = Some(hex(f[3])?);
            e.frames = stack(f[4])?;
        }
        "MonitorHolds" => {
            // numbers: count, total, max, and the row's <sample> (1 when it has none)
            need(9).or_else(|_| need(10))?;
            e.object = Some(hex(f[3])?);
            let sample = if f.len() == 10 { num(f[9])? } else { 1 };
            e.numbers = vec![num(f[4])?, num(f[5])?, num(f[6])?, sample];
            e.frames = stack(f[8])?;
        }
        "MonitorContentions" => {
            // numbers: count, total, max (as MonitorHolds); frames: the site (the stack after
            // it, which an older agent left out, is not read).
            need(9).or_else(|_| need(10))?;
            e.object = Some(hex(f[3])?);
            e.numbers = vec![num(f[4])?, num(f[5])?, num(f[6])?];
            e.frames = stack(f[8])?;
        }
        "LockContentions" => {
            need(10).or_else(|_| need(11))?;
            e.object = Some(hex(f[3])?);
            e.mode = Some(mode(f[4])?);
            e.numbers = vec![num(f[5])?, num(f[6])?, num(f[7])?];
            e.frames = stack(f[9])?;
        }
        "MonitorHoldsUntimed" => {
            // numbers: count, and the row's <sample> (1 when it has none)
            need(6).or_else(|_| need(7))?;
            e.object = Some(hex(f[3])?);
            let sample = if f.len() == 7 { num(f[6])? } else { 1 };
            e.numbers = vec![num(f[4])?, sample];
            e.frames = stack(f[5])?;
        }
        "LockOrder" => {
            need(9)?;
            e.object = Some(hex(f[3])?);
            e.owner = Some(hex(f[4])?);
            e.numbers = vec![num(f[5])?];
            e.frames = stack(f[7])?;
            e.frames.extend(stack(f[8])?);
        }
        "MonitorHold" => {
            need(6)?;
            e.object = Some(hex(f[3])?);
            e.numbers = vec![num(f[4])?];
            e.frames = stack(f[5])?;
        }
        "LockHolds" => {
            need(10)?;
            e.object = Some(hex(f[3])?);
            e.mode = Some(mode(f[4])?);
            e.numbers = vec![num(f[5])?, num(f[6])?, num(f[7])?];
            e.frames = stack(f[9])?;
        }
        "LockHoldsUntimed" => {
            need(7)?;
            e.object = Some(hex(f[3])?);
            e.mode = Some(mode(f[4])?);
            e.numbers = vec![num(f[5])?];
            e.frames = stack(f[6])?;
        }
        "LockHold" => {
            need(8)?;
            e.object = Some(hex(f[3])?);
            e.mode = Some(mode(f[4])?);
            e.numbers = vec![num(f[5])?];
            e.site = stack(f[6])?.first().copied();
            e.frames = stack(f[7])?;
        }
        "Notifies" => {
            // <call> is numbers[1]: 0 notify, 1 notifyAll, 2 signal, 3 signalAll, 4 unpark,
            // 5 release, 6 start.
            need(6)?;
            let all = match f[3] {
                "notify" => 0,
                "notifyAll" => 1,
                "signal" => 2,
                "signalAll" => 3,
                "unpark" => 4,
                "release" => 5,
                "start" => 6,
                c => return Err(format!("Notifies: call {c:?}")),
            };
            e.numbers = vec![num(f[4])?, all];
            e.frames = stack(f[5])?;
        }
        "Waits" => {
            // numbers: count, total, max, call (0 wait, 1 await, 2 park, 3 acquire, 4 join,
            // 5 sleep); the stack after the site (an older agent left it out) is not read.
            need(9).or_else(|_| need(10))?;
            let call = match f[3] {
                "wait" => 0,
                "await" => 1,
                "park" => 2,
                "acquire" => 3,
                "join" => 4,
                "sleep" => 5,
                c => return Err(format!("Waits: call {c:?}")),
            };
            e.object = Some(hex(f[4])?);
            e.numbers = vec![num(f[5])?, num(f[6])?, num(f[7])?, call];
            e.frames = stack(f[8])?;
        }
        other => return Err(format!("unknown event {other:?}")),
    }
    Ok(e)
}

impl Log {
    /// The `.orca` lines the agent counts as written in its exit line: the events and the
    /// `ObjectClass` lines (not `EventsDropped`).
    pub fn lines_written(&self) -> usize {
        self.events.len() + self.object_classes.len() + self.shared_objects.len()
    }

    /// Reads `PREFIX.orca`, `PREFIX.methods` and `PREFIX.classtable`. Any line this reader
    /// does not understand is an error naming the file and line. `EventsDropped` lines are
    /// counted in `dropped` rather than listed; `ObjectClass` lines go to `object_classes`, the
    /// `RecordingStarted` line to `settings`, and the `RecordingEnded` line to `ended`.
    pub fn read(prefix: &Path) -> Result<Log, String> {
        let read = |ext: &str| {
            let p = format!("{}.{ext}", prefix.display());
            std::fs::read_to_string(&p).map_err(|e| format!("{p}: {e}"))
        };
        let mut log = Log::default();
        // After `kill -9` each file may end in a torn line: set it aside, remember it.
        let complete = |text: String, torn: &mut bool| -> String {
            if text.is_empty() || text.ends_with('\n') {
                return text;
            }
            *torn = true;
            let cut = text.rfind('\n').map(|i| i + 1).unwrap_or(0);
            text[..cut].to_string()
        };
        let mut torn = false;
        let orca = complete(read("orca")?, &mut torn);
        let methods = complete(read("methods")?, &mut torn);
        let classes = complete(read("classtable")?, &mut torn);
        log.torn = torn;
        for (i, text) in orca.lines().enumerate() {
            let ctx = |e: String| format!("{}.orca:{}: {e}: {text}", prefix.display(), i + 1);
            if text.split(',').nth(1) == Some("EventsDropped") {
                let n = text.split(',').nth(2).and_then(|n| n.parse::<u64>().ok());
                log.dropped += n.ok_or_else(|| ctx("bad EventsDropped count".into()))?;
                continue;
            }
            if text.split(',').nth(1) == Some("ObjectClass") {
                let f: Vec<&str> = text.split(',').collect();
                if f.len() != 4 {
                    return Err(ctx(format!("{} fields, expected 4", f.len())));
                }
                let object = hex(f[2]).map_err(ctx)?;
                let class = unescape(f[3]).map_err(ctx)?;
                match log.object_classes.entry(object) {
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(class);
                    }
                    std::collections::hash_map::Entry::Occupied(_) => {
                        if log.shared_objects.insert(object, class).is_some() {
                            return Err(ctx("a third ObjectClass line for this object".into()));
                        }
                    }
                }
                continue;
            }
            if text.split(',').nth(1) == Some("RecordingEnded") {
                log.ended = text.split(',').nth(2).map(str::to_string);
                continue;
            }
            if text.split(',').nth(1) == Some("RecordingStarted") {
                if i != 0 || text.split(',').count() != 3 {
                    return Err(ctx(
                        "a RecordingStarted line not first, or not 3 fields".into()
                    ));
                }
                log.settings = text.split(',').nth(2).map(str::to_string);
                continue;
            }
            let e = parse_event(i + 1, text).map_err(ctx)?;
            if e.name == "ThreadStarted" {
                let name = unescape(text.split(',').nth(3).unwrap()).map_err(ctx)?;
                log.thread_names.insert(e.thread, name);
            }
            log.events.push(e);
        }
        for (i, text) in methods.lines().enumerate() {
            let ctx = |e: String| format!("{}.methods:{}: {e}: {text}", prefix.display(), i + 1);
            let f: Vec<&str> = text.split(',').collect();
            if f.len() != 6 {
                return Err(ctx(format!("{} fields", f.len())));
            }
            timestamp(f[0]).map_err(ctx)?;
            let id = hex(f[1]).map_err(ctx)?;
            let m = Method {
                name: unescape(f[2]).map_err(ctx)?,
                signature: unescape(f[3]).map_err(ctx)?,
                class: hex(f[4]).map_err(ctx)?,
                lines: pairs(f[5]).map_err(ctx)?,
            };
            if log.methods.insert(id, m).is_some() {
                return Err(ctx("method ID listed twice".into()));
            }
        }
        for (i, text) in classes.lines().enumerate() {
            let ctx = |e: String| format!("{}.classtable:{}: {e}: {text}", prefix.display(), i + 1);
            let f: Vec<&str> = text.split(',').collect();
            if f.len() != 4 {
                return Err(ctx(format!("{} fields", f.len())));
            }
            timestamp(f[0]).map_err(ctx)?;
            let id = hex(f[1]).map_err(ctx)?;
            if log
                .classes
                .insert(
                    id,
                    (unescape(f[2]).map_err(ctx)?, unescape(f[3]).map_err(ctx)?),
                )
                .is_some()
            {
                return Err(ctx("class ID listed twice".into()));
            }
        }
        Ok(log)
    }

    /// Checks the invariants every log must satisfy: IDs resolve, per-thread timestamps never
    /// decrease, entry/exit events pair up per thread. Returns every violation.
    pub fn invariant_violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut last: HashMap<u32, u64> = HashMap::new();
        // Open method-call pairs and open contentions, tracked apart: a contention can happen
        // inside a call (the JDK's `join` enters the thread's monitor).
        let mut open_call: HashMap<u32, String> = HashMap::new();
        let mut open_contention: HashMap<u32, Option<u32>> = HashMap::new();
        for e in &self.events {
            for (m, _) in &e.frames {
                if !self.methods.contains_key(m) {
                    v.push(format!("line {}: method {m:08X} not in .methods", e.line));
                }
            }
            if let Some(prev) = last.insert(e.thread, e.nanos) {
                if e.nanos < prev {
                    v.push(format!(
                        "line {}: timestamp goes back on thread {:08X}",
                        e.line, e.thread
                    ));
                }
            }
            let entry_of = |n: &str| match n {
                "ObjectWaited" => Some("ObjectWait"),
                "ThreadJoined" => Some("ThreadJoin"),
                "ThreadSlept" => Some("ThreadSleep"),
                "SemaphoreAcquired" => Some("SemaphoreAcquire"),
                "LockAcquired" | "LockFailed" | "LockTimedOut" | "LockInterrupted" => {
                    Some("LockAcquire")
                }
                "ConditionAwaited" => Some("ConditionAwait"),
                "ThreadParked" => Some("ThreadPark"),
                _ => None,
            };
            match e.name.as_str() {
                "MonitorContendedEnter" => {
                    if let Some(o) = open_contention.insert(e.thread, e.object) {
                        v.push(format!("line {}: contention on thread {:08X} while one on {o:?} is open", e.line, e.thread));
                    }
                }
                "MonitorContendedEntered" => match open_contention.remove(&e.thread) {
                    Some(o) if o == e.object => {}
                    o => v.push(format!("line {}: MonitorContendedEntered without its MonitorContendedEnter (open: {o:?})", e.line)),
                },
                "ObjectWait" | "ThreadJoin" | "ThreadSleep" | "SemaphoreAcquire"
                | "LockAcquire" | "ConditionAwait" | "ThreadPark" => {
                    if let Some(o) = open_call.insert(e.thread, e.name.clone()) {
                        v.push(format!("line {}: {} while {o} is open on thread {:08X}", e.line, e.name, e.thread));
                    }
                }
                name => {
                    if let Some(entry) = entry_of(name) {
                        match open_call.remove(&e.thread) {
                            Some(o) if o == entry => {}
                            o => v.push(format!("line {}: {name} on thread {:08X} without its {entry} (open: {o:?})", e.line, e.thread)),
                        }
                    }
                }
            }
        }
        for (id, m) in &self.methods {
            if !self.classes.contains_key(&m.class) {
                v.push(format!(
                    "method {id:08X} ({}) has class {:08X} not in .classtable",
                    m.name, m.class
                ));
            }
        }
        v
    }

    /// `Class.method` of a method ID, for messages and assertions.
    pub fn method_name(&self, id: u32) -> String {
        match self.methods.get(&id) {
            Some(m) => {
                let class = self
                    .classes
                    .get(&m.class)
                    .map(|c| c.0.as_str())
                    .unwrap_or("?");
                let class = class
                    .trim_start_matches('L')
                    .trim_end_matches(';')
                    .replace('/', ".");
                format!("{class}.{}", m.name)
            }
            None => format!("?{id:08X}"),
        }
    }

    /// The source line of a frame, from the method's line table.
    /// Every `notify` (`all`: `notifyAll`) call the log records, as (calls, top frame): one
    /// per `ObjectNotify`/`ObjectNotifyAll` event, and the count of each `Notifies` line (the
    /// calls that woke nobody, counted per site by the default recording).
    pub fn notify_calls(&self, all: bool) -> Vec<(u64, (u32, u32))> {
        let event = if all {
            "ObjectNotifyAll"
        } else {
            "ObjectNotify"
        };
        self.events
            .iter()
            .filter_map(|e| {
                let top = *e.frames.first()?;
                if e.name == event {
                    Some((1, top))
                } else if e.name == "Notifies" && e.numbers[1] == all as u64 {
                    Some((e.numbers[0], top))
                } else {
                    None
                }
            })
            .collect()
    }

    pub fn line_of(&self, method: u32, location: u32) -> Option<u32> {
        let lines = self.methods.get(&method)?.lines.as_ref()?;
        lines
            .iter()
            .filter(|(start, _)| *start <= location)
            .max_by_key(|(start, _)| *start)
            .map(|(_, line)| *line)
    }

    /// `Class.method:line` of an event's first frame.
    pub fn top_frame(&self, e: &Event) -> Option<String> {
        let (m, loc) = *e.frames.first()?;
        Some(format!(
            "{}:{}",
            self.method_name(m),
            self.line_of(m, loc)
                .map(|l| l.to_string())
                .unwrap_or("?".into())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_juc_summary_lines() {
        let e = parse_event(
            1,
            "5087.300000000,LockHolds,0000AAAA,00002222,W,2,21000,20000,2;317;1;590;1,1;00000001;00000010",
        )
        .unwrap();
        assert_eq!(
            (e.object, e.mode, &e.numbers[..], &e.frames[..]),
            (
                Some(0x2222),
                Some('W'),
                &[2, 21000, 20000][..],
                &[(1, 0x10)][..]
            )
        );
        let e = parse_event(
            2,
            "5087.312000000,LockHold,0000AAAA,00002222,R,20000000,1;00000001;00000010,2;00000001;00000014;00000003;00000008",
        )
        .unwrap();
        assert_eq!(
            (e.object, e.mode, &e.numbers[..], e.site),
            (Some(0x2222), Some('R'), &[20_000_000][..], Some((1, 0x10)))
        );
        assert_eq!(e.frames, [(1, 0x14), (3, 8)]);
        assert!(parse_event(3, "5087.300000000,LockHold,0000AAAA,00002222,R,1,0").is_err());
    }
}
