//! The answer first: a short block that `orca report`, `orca record` and the HTML page put
//! before their tables. It names actual deadlocks (who waits for what, held by whom, taken
//! where), then the locks that cost the most blocked time, the longest holds and the
//! missed-wakeup suspects, each with the command that shows more.
//!
//! Locks nobody contended and locks only the JDK's own code takes (every site known of them
//! is in a JDK class: a `ThreadPoolExecutor` worker's lock, a class loader's) are folded away
//! unless `--all` is given, and the block says how many were.

use std::collections::HashMap;
use std::fmt::Write as _;

use orca_format::{parse_stack, Frame, Hash, Metadata, WakeCall};

use crate::deadlocks::Findings;
use crate::report::{site, top_sites, Analysis, WakeKind};
use crate::util::{dur, is_jdk_frame, json_str};

/// Items shown per kind (the commands named show the rest).
const SHOWN: usize = 3;

/// One finding: a headline, its detail lines and the command that shows more.
pub struct Item {
    /// `deadlock`, `potential-deadlock`, `contention`, `long-hold` or `missed-wakeup`.
    pub kind: &'static str,
    pub headline: String,
    pub details: Vec<String>,
    pub more: String,
}

/// What the verdict block says.
pub struct Verdict {
    pub items: Vec<Item>,
    /// Locks folded away (uncontended or JDK-internal: `report::folds`); none with `--all`.
    pub folded: crate::report::Folded,
    /// Missed-wakeup suspects not sought: too many wait/notify events.
    pub wakes_skipped: bool,
}

/// The top frame of a raw stack as text.
fn top_of(md: &Metadata, raw: &str) -> String {
    site(
        md,
        parse_stack(raw.as_bytes(), 0).ok().and_then(|s| s.top()),
    )
}

/// A candidate for "most blocked time": monitor or j.u.c. lock.
struct Hot<'a> {
    id: Hash,
    juc: bool,
    blocked: u64,
    contentions: u64,
    still: u64,
    owners: &'a HashMap<Hash, u64>,
    sites: &'a HashMap<Option<Frame>, (u64, u64)>,
    /// Blocked (count, ns) per whole stack.
    stacks: &'a HashMap<String, (u64, u64)>,
    hold_sites: &'a HashMap<Option<Frame>, (u64, u64)>,
    /// Its hold times are estimates from a sample (holdtiming=sampled).
    estimated: bool,
}

/// Builds the verdict; `all` keeps what is folded by default.
pub fn verdict(a: &Analysis, f: &Findings, md: &Metadata, prefix: &str, all: bool) -> Verdict {
    let p = shell(prefix);
    let mut items = Vec::new();
    let mut folded = crate::report::Folded::default();
    let name = |h: Hash, juc: bool| a.lock_name(h, juc);

    // Actual deadlocks: threads blocked at the end waiting for each other.
    let blocked: HashMap<Hash, &crate::deadlocks::BlockedThread> =
        f.blocked.iter().map(|b| (b.thread, b)).collect();
    for cyc in &f.wait_for_cycles {
        let threads: Vec<String> = cyc.iter().map(|t| a.thread_label(*t)).collect();
        let mut details = Vec::new();
        for t in cyc {
            let Some(b) = blocked.get(t) else { continue };
            let juc = f.juc.contains(&b.monitor);
            let taken = owner_site(a, f, md, b.owner, b.monitor)
                .map(|s| format!(", which took it at {s}"))
                .unwrap_or_else(|| ", which took it where the log does not say".into());
            details.push(format!(
                "{} waits for {} at {}, held by {}{taken}",
                a.thread_label(*t),
                name(b.monitor, juc),
                top_of(md, &b.stack),
                a.thread_label(b.owner),
            ));
        }
        items.push(Item {
            kind: "deadlock",
            headline: format!(
                "DEADLOCK: {} threads blocked on each other for good: {}",
                cyc.len(),
                threads.join(", ")
            ),
            details,
            more: format!("orca deadlocks {p}"),
        });
    }
    // Lock-order cycles that did not (yet) deadlock.
    let actual: Vec<Hash> = f.blocked.iter().map(|b| b.monitor).collect();
    for c in &f.cycles {
        if c.monitors.iter().all(|m| actual.contains(m)) {
            continue; // the deadlock above
        }
        let names: Vec<String> = c
            .monitors
            .iter()
            .map(|m| name(*m, f.juc.contains(m)))
            .collect();
        let details = c
            .edges
            .iter()
            .map(|e| {
                format!(
                    "{} holds {} (taken at {}) and then takes {} at {}",
                    a.thread_label(e.thread),
                    name(e.from, f.juc.contains(&e.from)),
                    top_of(md, &e.from_stack),
                    name(e.to, f.juc.contains(&e.to)),
                    top_of(md, &e.to_stack)
                )
            })
            .collect();
        items.push(Item {
            kind: "potential-deadlock",
            headline: format!(
                "Potential deadlock: {} locks taken in opposite orders: {}",
                c.monitors.len(),
                names.join(", ")
            ),
            details,
            more: format!("orca deadlocks {p}"),
        });
    }

    // The locks that cost the most blocked time.
    let mut hot: Vec<Hot> = Vec::new();
    for (h, o) in &a.objects {
        if o.contentions == 0 && o.holds.count() + o.open_holds == 0 {
            continue; // a wait object or semaphore only
        }
        hot.push(Hot {
            id: *h,
            juc: false,
            blocked: o.blocked,
            contentions: o.contentions,
            still: o.still_blocked,
            owners: &o.owners,
            sites: &o.sites,
            stacks: &o.blocked_stacks,
            hold_sites: &o.hold_sites,
            estimated: o.holds.is_estimate(),
        });
    }
    for (h, l) in &a.locks {
        hot.push(Hot {
            id: *h,
            juc: true,
            blocked: l.blocked,
            contentions: l.contentions,
            still: l.still_blocked,
            owners: &l.owners,
            sites: &l.sites,
            stacks: &l.blocked_stacks,
            hold_sites: &l.hold_sites,
            estimated: l.write_holds.is_estimate() || l.read_holds.is_estimate(),
        });
    }
    hot.sort_by(|x, y| y.blocked.cmp(&x.blocked).then(x.id.cmp(&y.id)));
    let mut shown = 0;
    let total = a.blocked_total();
    for l in &hot {
        if l.id == Hash(0) && l.contentions == 0 {
            continue; // the row of other monitors' (locks') holds: no lock to fold (issue 46)
        }
        let sites = l.sites.keys().chain(l.hold_sites.keys());
        if !all && crate::report::folds(md, l.contentions, l.blocked, total, sites) {
            folded.locks += 1;
            folded.blocked += l.blocked;
            continue;
        }
        if l.contentions == 0 {
            // `--all` shows it in the tables; the verdict is about what happened (issue 46:
            // "Blocked on ExtensionManager@...: 0 ns in 0 contentions", three times).
            continue;
        }
        if shown == SHOWN {
            continue;
        }
        shown += 1;
        let at = top_sites(l.sites, 1)
            .first()
            .map(|(f, c, ns)| {
                let stacks = l.stacks.iter().map(|(raw, v)| (raw.as_str(), *v));
                let from = caller(md, stacks, *f)
                    .map(|(g, c, ns)| {
                        format!(", called from {} (x{c}, {})", site(md, Some(g)), dur(ns))
                    })
                    .unwrap_or_default();
                format!(", most at {} (x{c}, {}){from}", site(md, *f), dur(*ns))
            })
            .unwrap_or_default();
        let mut details = Vec::new();
        let mut owners: Vec<(&Hash, &u64)> = l.owners.iter().collect();
        owners.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
        if let Some((o, c)) = owners.first() {
            let taken = owner_site(a, f, md, **o, l.id)
                .map(|s| format!("; it took the lock at {s}"))
                .or_else(|| {
                    // Where that thread held the lock longest (its summary lines' sites).
                    let sites = a.thread_hold_sites.get(&(l.id, **o))?;
                    top_sites(sites, 1).first().map(|(f, c, ns)| {
                        // a sampled tracking's count of identified holds (report.rs,
                        // Analysis::identified_only), as the monitor's own line says
                        let least = if a.identified_only(l.id) {
                            "at least "
                        } else {
                            ""
                        };
                        format!(
                            "; it took the lock at {} (held from there {least}x{c}, {})",
                            site(md, *f),
                            hold_time(l.estimated, *ns)
                        )
                    })
                })
                .or_else(|| {
                    top_sites(l.hold_sites, 1).first().map(|(f, _, ns)| {
                        format!(
                            "; the lock was held longest from {} ({})",
                            site(md, *f),
                            hold_time(l.estimated, *ns)
                        )
                    })
                })
                .unwrap_or_default();
            details.push(format!(
                "owner at contention: {} x{c} of {}{taken}",
                a.thread_label(**o),
                l.contentions
            ));
        }
        items.push(Item {
            kind: "contention",
            headline: format!(
                "Blocked on {}: {} in {} contentions{}{at}",
                name(l.id, l.juc),
                dur(l.blocked),
                l.contentions,
                if l.still > 0 {
                    format!(" ({})", a.still_blocked_text(l.still))
                } else {
                    String::new()
                },
            ),
            details,
            more: format!("orca report {p}; orca flame {p} > blocked.collapsed"),
        });
    }

    // The longest holds (events above the agent's threshold).
    let mut long: Vec<(u64, String, String)> = Vec::new();
    for (ns, t, m, _, raw) in &a.long_holds {
        let st = parse_stack(raw.as_bytes(), 0).ok();
        if !all
            && st
                .as_ref()
                .is_some_and(|s| s.frames().all(|f| is_jdk_frame(md, f)))
        {
            continue;
        }
        let at = site(md, st.and_then(|s| s.top()));
        long.push((
            *ns,
            name(*m, false),
            format!("by {} from {at}", a.thread_label(*t)),
        ));
    }
    for (ns, t, l, _, _, at, _) in &a.long_lock_holds {
        if !all && at.is_some_and(|f| is_jdk_frame(md, f)) {
            continue;
        }
        long.push((
            *ns,
            name(*l, true),
            format!("by {} from {}", a.thread_label(*t), site(md, *at)),
        ));
    }
    long.sort_by_key(|x| std::cmp::Reverse(x.0));
    for (ns, lock, by) in long.into_iter().take(SHOWN) {
        items.push(Item {
            kind: "long-hold",
            headline: format!("Long hold: {lock} held {} {by}", dur(ns)),
            details: Vec::new(),
            more: format!("orca report {p}; orca flame --weight held {p}"),
        });
    }

    // Missed-wakeup suspects.
    if !a.wakes_overflow {
        for s in suspects(a, md, all).into_iter().take(SHOWN) {
            items.push(s.item(a, md, &p));
        }
    }
    Verdict {
        items,
        folded,
        wakes_skipped: a.wakes_overflow,
    }
}

/// Where the program called the lock's `site` from, when the site is not the program's own
/// line (a library's or the JDK's): of the contentions at the site, the frame below it that
/// blocked longest in all, first outside the site's package and the JDK, with its count and
/// time (issue 46: log4j's blocked time was all at `Category.callAppenders`, and the program's
/// logging call nowhere).
pub(crate) fn caller<'a>(
    md: &Metadata,
    stacks: impl IntoIterator<Item = (&'a str, (u64, u64))>,
    site: Option<Frame>,
) -> Option<(Frame, u64, u64)> {
    let site = site?;
    // A frame's class's package, and whether the class is hidden (a lambda's, whose frame
    // is no line of the program: `Main$$Lambda$1/0x00007f...`).
    let package = |f: Frame| {
        let class = md
            .methods
            .get(&f.method)
            .and_then(|m| md.classes.get(&m.class))?;
        let name = orca_format::java_class_name(&class.signature);
        let (rest, last) = name.rsplit_once('.').unwrap_or(("", &name));
        let hidden = last.starts_with("0x");
        let rest = if hidden { rest } else { &name };
        let package = rest.rsplit_once('.').map_or("", |(p, _)| p).to_string();
        Some((package, hidden))
    };
    let home = package(site).map(|(p, _)| p);
    let mut by: HashMap<Frame, (u64, u64)> = HashMap::new();
    for (raw, (c, ns)) in stacks {
        let Ok(st) = parse_stack(raw.as_bytes(), 0) else {
            continue;
        };
        let mut frames = st.frames();
        if frames.next() != Some(site) {
            continue;
        }
        let outside = |f: &Frame| match package(*f) {
            Some((p, hidden)) => !hidden && Some(p) != home && !is_jdk_frame(md, *f),
            None => false,
        };
        if let Some(f) = frames.find(outside) {
            let e = by.entry(f).or_default();
            e.0 += c;
            e.1 += ns;
        }
    }
    by.into_iter()
        .max_by_key(|(f, (c, ns))| (*ns, *c, std::cmp::Reverse((f.method.0, f.location))))
        .map(|(f, (c, ns))| (f, c, ns))
}

/// Where `owner` took `lock`: its open hold at the end of the log (a complete trace), else
/// the lock-order edge it recorded holding the lock (summary lines or events).
fn owner_site(
    a: &Analysis,
    f: &Findings,
    md: &Metadata,
    owner: Hash,
    lock: Hash,
) -> Option<String> {
    if let Some((_, _, s, _)) = a
        .open_holds_at_end
        .iter()
        .find(|(t, l, s, _)| *t == owner && *l == lock && s.is_some())
    {
        return Some(site(md, *s));
    }
    f.cycles
        .iter()
        .flat_map(|c| c.edges.iter())
        .find(|e| e.thread == owner && e.from == lock)
        .map(|e| top_of(md, &e.from_stack))
}

/// One missed-wakeup suspect.
struct Suspect {
    object: Hash,
    thread: Hash,
    wait_site: Option<Frame>,
    waited: u64,
    still: bool,
    /// A notify on the object while nobody waited, before this wait began: (when, site).
    lonely: Option<(u64, Option<Frame>)>,
    /// Waits like it (same object and site) that also got no notify.
    like: u64,
    /// A condition's await (woken by `signal`/`signalAll`), not a monitor's wait.
    condition: bool,
}

impl Suspect {
    fn item(&self, a: &Analysis, md: &Metadata, p: &str) -> Item {
        let obj = a.object_name(self.object);
        let how = if self.still {
            format!("is still waiting at the end, {} on", dur(self.waited))
        } else {
            format!("waited {} on", dur(self.waited))
        };
        let mut details = Vec::new();
        let (calls, notify) = if self.condition {
            ([WakeCall::Signal, WakeCall::SignalAll], "signal")
        } else {
            ([WakeCall::Notify, WakeCall::NotifyAll], "notify")
        };
        // The default recording counts a call that found nobody waiting, or only waits
        // shorter than the agent's threshold, per site, without its object (FORMAT.md,
        // `Notifies`): one of them may have been meant for this wait, or have woken it while
        // it was short (a wait the agent wrote in full early, as its thread wrote another
        // line, may lack its waker). Then the log cannot say that none came.
        let counted = a
            .unwaited_notifies
            .iter()
            .filter(|((call, _), _)| calls.contains(call))
            .max_by_key(|((call, f), n)| (**n, std::cmp::Reverse((*call, f.method.0, f.location))));
        let (mut head, mut came) = ("Wait with no notify", ", and no notify came");
        if let Some((_, at)) = self.lonely {
            details.push(format!(
                "a {notify} at {} came while nobody waited on it, before this wait began: a missed wakeup?",
                site(md, at)
            ));
        } else if let Some(((call, f), n)) = counted {
            (head, came) = ("Wait with no notify written", "");
            details.push(format!(
                "no {notify} on it was written during the wait: a timeout (or interrupt) ended it, or a \
                 {notify} counted at its site, which the log does not name"
            ));
            details.push(format!(
                "{n} {} at {} counted, not recorded one by one (each found nobody waiting, or only \
                 waits shorter than the agent's threshold): one may have been meant for this wait, \
                 or have woken it; `notifies=events` records each with its object",
                call.name(),
                site(md, Some(*f))
            ));
        } else {
            details.push(format!(
                "no {notify} on it during the wait: a timeout (or interrupt) ended it"
            ));
        }
        if self.like > 1 {
            details.push(format!("{} waits at that site got no notify", self.like));
        }
        Item {
            kind: "missed-wakeup",
            headline: format!(
                "{head}: {} {how} {obj} at {}{came}",
                a.thread_label(self.thread),
                site(md, self.wait_site)
            ),
            details,
            more: format!("orca html {p} -o {p}.html (thread lanes); orca report {p}"),
        }
    }
}

/// Waits that no notify ended: a notify that came while nobody waited and then a wait that
/// got none first, then the waits at the sites that got no notify most often. Waits still
/// open at the end count only after such a lonely notify (an idle worker waits for good).
fn suspects(a: &Analysis, md: &Metadata, all: bool) -> Vec<Suspect> {
    let mut wakes = a.wakes.clone();
    wakes.sort_by_key(|w| w.ts);
    /// A notify while nobody waited: (when, site).
    type Lonely = Option<(u64, Option<Frame>)>;
    #[derive(Default)]
    struct Obj {
        /// Waiting threads: (since, site, notified, lonely notify before it).
        waiting: HashMap<Hash, (u64, Option<Frame>, bool, Lonely)>,
        /// A condition's (its waits are woken by signals).
        condition: bool,
        lonely: Lonely,
    }
    let mut objs: HashMap<Hash, Obj> = HashMap::new();
    let mut found: Vec<Suspect> = Vec::new();
    for w in &wakes {
        let o = objs.entry(w.object).or_default();
        o.condition |= w.condition;
        match w.what {
            WakeKind::Wait => {
                let lonely = o.lonely.take();
                o.waiting.insert(w.thread, (w.ts, w.site, false, lonely));
            }
            WakeKind::Notify => {
                if o.waiting.is_empty() {
                    o.lonely = Some((w.ts, w.site));
                } else {
                    for x in o.waiting.values_mut() {
                        x.2 = true;
                    }
                }
            }
            WakeKind::Waited => {
                if let Some((since, site, notified, lonely)) = o.waiting.remove(&w.thread) {
                    if !notified {
                        found.push(Suspect {
                            object: w.object,
                            thread: w.thread,
                            wait_site: site,
                            waited: w.ts.saturating_sub(since),
                            still: false,
                            lonely,
                            like: 1,
                            condition: w.condition,
                        });
                    }
                }
            }
        }
    }
    for (h, o) in objs {
        for (t, (since, site, notified, lonely)) in o.waiting {
            if !notified && lonely.is_some() {
                found.push(Suspect {
                    object: h,
                    thread: t,
                    wait_site: site,
                    waited: a.last_ts.saturating_sub(since),
                    still: true,
                    lonely,
                    like: 1,
                    condition: o.condition,
                });
            }
        }
    }
    if !all {
        found.retain(|s| !s.wait_site.is_some_and(|f| is_jdk_frame(md, f)));
    }
    // One per (object, site): the longest, counting the others.
    let mut by: HashMap<(Hash, Option<(u32, u32)>), Suspect> = HashMap::new();
    for s in found {
        let key = (s.object, s.wait_site.map(|f| (f.method.0, f.location)));
        match by.get_mut(&key) {
            Some(b) => {
                let like = b.like + 1;
                if (s.lonely.is_some(), s.waited) > (b.lonely.is_some(), b.waited) {
                    *b = s;
                }
                b.like = like;
            }
            None => {
                by.insert(key, s);
            }
        }
    }
    let mut v: Vec<Suspect> = by.into_values().collect();
    v.sort_by(|x, y| {
        (y.lonely.is_some(), y.like, y.waited)
            .cmp(&(x.lonely.is_some(), x.like, x.waited))
            .then(x.object.cmp(&y.object))
    });
    v
}

/// The verdict as the text block at the top of `orca report`.
pub fn text(v: &Verdict) -> String {
    let mut s = String::from("Verdict\n");
    if v.items.is_empty() {
        s.push_str("  no deadlock, no contention, no long hold, no wait without a notify\n");
    }
    let mut last_more = String::new();
    for (i, it) in v.items.iter().enumerate() {
        let _ = writeln!(s, "  {}", it.headline);
        for d in &it.details {
            let _ = writeln!(s, "      {d}");
        }
        // One "more:" line per run of items that share it.
        let next_same = v.items.get(i + 1).is_some_and(|n| n.more == it.more);
        if !next_same && it.more != last_more {
            let _ = writeln!(s, "      more: {}", it.more);
        }
        last_more = if next_same {
            String::new()
        } else {
            it.more.clone()
        };
    }
    if let Some(note) = v.folded.note() {
        let _ = writeln!(s, "  {note}");
    }
    if v.wakes_skipped {
        let _ = writeln!(
            s,
            "  (missed-wakeup suspects not sought: more than {} wait/notify events)",
            crate::report::WAKES_KEPT
        );
    }
    s
}

/// The verdict as JSON (for `--json` and the HTML page).
pub fn json(v: &Verdict) -> String {
    let items: Vec<String> = v
        .items
        .iter()
        .map(|it| {
            let details: Vec<String> = it.details.iter().map(|d| json_str(d)).collect();
            format!(
                "{{\"kind\":{},\"headline\":{},\"details\":[{}],\"more\":{}}}",
                json_str(it.kind),
                json_str(&it.headline),
                details.join(","),
                json_str(&it.more)
            )
        })
        .collect();
    format!(
        "{{\"items\":[{}],\"folded\":{},\"folded_blocked_ns\":{}}}",
        items.join(","),
        v.folded.locks,
        v.folded.blocked
    )
}

/// A site's hold time "in all", as the report writes it: `~` when the lock's hold times are
/// estimated from a sample, "not timed" when none of the site's holds was (issue 46: the
/// verdict said "0 ns in all" of holds that no clock had read).
fn hold_time(estimated: bool, ns: u64) -> String {
    match crate::report::site_time(if estimated { "~" } else { "" }, ns) {
        t if t == "not timed" => t,
        t => format!("{t} in all"),
    }
}

/// `s` quoted for a POSIX shell when it needs it.
fn shell(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:@%".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orca_format::EventReader;

    fn verdict_of(log: &str) -> String {
        let a = Analysis::run(EventReader::new(log.as_bytes())).unwrap();
        let f = crate::deadlocks::analyze(EventReader::new(log.as_bytes())).unwrap();
        text(&verdict(&a, &f, &Metadata::default(), "t", false))
    }

    /// The owner at contention's holds from its summary lines: under a sampled tracking, where
    /// its site also counted holds of other monitors (maybe this one's, left unidentified),
    /// the count is a lower bound and says so, as the monitor's own line does; without the
    /// settings line (or with tracking=full) it is exact.
    #[test]
    fn an_owners_holds_under_sampled_tracking_are_at_least() {
        let rows = "\
1.000000000,MonitorContendedEnter,0000BBBB,00001111,0000AAAA,1;00000001;00000010
1.000100000,MonitorContendedEntered,0000BBBB,00001111,1;00000001;00000010
2.000000000,MonitorHoldsUntimed,0000AAAA,00001111,4,1;00000002;00000004
2.000000000,MonitorHoldsUntimed,0000AAAA,00000000,40,1;00000002;00000004
";
        let sampled = format!("0.500000000,RecordingStarted,mode=instrument;trace=summary;holdtiming=sampled;tracking=sampled;stackdepth=8\n{rows}");
        let v = verdict_of(&sampled);
        assert!(
            v.contains("(held from there at least x4, not timed)"),
            "{v}"
        );
        let v = verdict_of(rows);
        assert!(v.contains("(held from there x4, not timed)"), "{v}");
    }

    /// `--all` shows every lock in the tables, but a verdict item only for what happened: no
    /// "Blocked on ...: 0 ns in 0 contentions" for a lock nobody waited for.
    #[test]
    fn all_adds_no_verdict_item_for_a_lock_without_contention() {
        let log = "\
1.000000000,MonitorEntered,0000AAAA,00001111,1;00000001;00000010
1.000100000,MonitorExit,0000AAAA,00001111,1;00000001;00000011
";
        let a = Analysis::run(EventReader::new(log.as_bytes())).unwrap();
        let f = crate::deadlocks::analyze(EventReader::new(log.as_bytes())).unwrap();
        let v = text(&verdict(&a, &f, &Metadata::default(), "t", true));
        assert!(!v.contains("0 contentions"), "{v}");
    }

    /// A notify while nobody waited, then a wait that no notify ended: a missed-wakeup
    /// suspect, found although the file has the waiter's lines before the notifier's (the
    /// file is not sorted across threads). A wait that a notify ended is none.
    #[test]
    fn a_notify_before_the_wait_and_a_wait_no_notify_ended_is_a_suspect() {
        let log = "\
1.000000300,ObjectWait,0000BBBB,0000F001,1;00000002;00000009
1.200000300,ObjectWaited,0000BBBB,0000F001,1;00000002;00000009
1.000000100,ObjectNotify,0000AAAA,0000F001,1;00000001;00000005
";
        let v = verdict_of(log);
        assert!(
            v.contains(
                "  Wait with no notify: [0000BBBB] waited 200.000 ms on object 0000F001 at "
            ),
            "{v}"
        );
        assert!(
            v.contains("came while nobody waited on it, before this wait began"),
            "{v}"
        );

        let notified = "\
1.000000300,ObjectWait,0000BBBB,0000F001,1;00000002;00000009
1.200000300,ObjectWaited,0000BBBB,0000F001,1;00000002;00000009
1.000000100,ObjectNotify,0000AAAA,0000F001,1;00000001;00000005
1.100000000,ObjectNotify,0000AAAA,0000F001,1;00000001;00000005
";
        let v = verdict_of(notified);
        assert!(!v.contains("Wait with no notify"), "{v}");
    }
}
