//! The one clock of all three files: `CLOCK_MONOTONIC`, which HotSpot also uses for
//! `System.nanoTime()` on Linux, so log timestamps line up with the program's own timings.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Nanoseconds on the monotonic clock.
pub fn now_nanos() -> u64 {
    nanos(libc::CLOCK_MONOTONIC)
}

/// CPU time of the calling thread: the writer's own cost, and the share of a core a
/// recorded thread uses, which scales its sampling budgets (the tracker's `Rec.scaled`).
pub fn thread_cpu_nanos() -> u64 {
    nanos(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Clock `id` in nanoseconds; only clocks Linux always has are passed.
fn nanos(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; both callers' clocks exist on Linux.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// How often the [`Ticker`] advances the coarse clock (shared with the tracker:
/// `OrcaEvents.CLOCK_TICK`).
pub use crate::events::TICK_NANOS;

/// Ticks the coarse clock remembers ([`Coarse::ring`]): a power of two, whose bits the
/// coarse time's low bits give up to the tick's number (`OrcaEvents.CLOCK_TICKS`).
pub use crate::events::TICK_RING;

/// The coarse time while the ticker does not tick ([`Coarse::now`]): later than any time, so
/// that the tracker, whose sampling window it always ends, times every hold that begins then
/// with the precise clock, and finds every hold that ends then possibly long (its end is then
/// read precisely too). Never a hold's coarse start (`OrcaEvents.CLOCK_STALE`).
pub use crate::events::STALE;

/// Ticks without a sign of the tracker's use ([`Coarse::used`]) after which the ticker stops
/// ticking. Why so many: a thread that locks all the time shows its use once per sampling
/// window (the tracker's `Rec.WINDOW`, 10 ms), so at most 20 ms apart.
const IDLE_AFTER_TICKS: u32 = 50;

/// How long the ticker parks between looks at [`Coarse::used`] while it does not tick, unless
/// the tracker wakes it ([`Ticker::wake`], the first hold to find the clock stale): what it
/// costs an idle program (a wake-up a second instead of 1,000), and how long the first holds
/// after an idle time would all be timed precisely (as `holdtiming=exact` would) were the
/// tracker unable to wake it.
const IDLE_PARK: Duration = Duration::from_secs(1);

/// The coarse clock: [`now_nanos`] as of the ticker's last tick, read by the tracker with a
/// plain memory load (`Unsafe.getLongOpaque` of its address). Why: a precise clock read costs
/// 21–52 ns on the machines measured (issue 11), twice per hold; a load costs one. Sampled
/// hold timing reads it at both ends of every hold it does not time, so that a hold longer
/// than `holdthreshold` is still found (docs/MODES.md, "Sampled hold timing").
///
/// The ticker's thread may run late (a loaded machine), and then a hold's coarse start is
/// older than the hold. So it also keeps its last [`TICK_RING`] ticks, and the coarse time's
/// low 10 bits are its tick's number (modulo the ring: the time is a microsecond coarser): the
/// next tick after a hold's coarse start is an upper bound of the hold's real start, and the
/// end read precisely minus that tick a lower bound of its length, never an overstatement.
/// (For a hold of more than [`TICK_RING`] ticks that tick is overwritten; its length is then
/// taken from the coarse start, at most a tick and the ticker's lateness over.)
///
/// A ticker ticking in a program that takes no locks costs the kernel 11–27 µs a tick, 1–3%
/// of a core (benches/PROFILE.md), so it stops when the tracker has not used the clock for
/// [`IDLE_AFTER_TICKS`]: it puts one last time in the ring (the next tick after the coarse
/// start of a hold begun before, as any tick is) and sets `now` to [`STALE`], then parks until
/// the first hold that finds the clock stale sets `used` and wakes it (a JNI call, once per
/// idle time), or every [`IDLE_PARK`] to look at `used`; it then ticks again. The holds that
/// begin in between are timed: a few, not the sampler's budget's worth.
#[repr(C)]
pub struct Coarse {
    /// The last tick: its time, the low bits its number modulo [`TICK_RING`]; or [`STALE`].
    pub now: AtomicU64,
    /// The last ticks' times, tick `n` at `n % TICK_RING`.
    pub ring: [AtomicU64; TICK_RING],
    /// Set by the tracker (`Rec.used`) to 1 when it starts a sampling window (out of line, at
    /// most once per window per thread), to 2 when it times a hold because the clock was stale
    /// (and wakes the ticker), storing only when the word is below that; cleared by the ticker.
    pub used: AtomicU64,
    /// [`STALE`] until the guarded sites' sample begins (the program passed
    /// [`SAMPLE_AFTER_HOLDS`]), then the time of the tick that began it: the tracker draws
    /// its holds from then on, and a guarded hold followed that ends at or after it is one of
    /// the sample (`S_SAMPLED`). Never goes back to [`STALE`] within a recording.
    pub sampling: AtomicU64,
    /// Outermost holds at guarded sites so far, added by the tracker 256 at a time while the
    /// sample has not begun (`OrcaSampler.gateTurn`); the ticker compares it with
    /// [`SAMPLE_AFTER_HOLDS`]. Why the tracker's count, not the agent's drains: a hold left
    /// unidentified is counted in the thread's table and reaches the agent only at a drain,
    /// which a thread that times few holds makes seldom (1.5 million holds in 50 ms: none).
    pub holds: AtomicU64,
}

/// The offset of [`Coarse::used`] from the clock's address, which the tracker adds: the
/// layout the tracker is compiled with (`OrcaEvents.CLOCK_USED`, `CLOCK_RING`).
pub const USED_OFFSET: usize = std::mem::offset_of!(Coarse, used);
const _: () = assert!(USED_OFFSET == crate::events::CLOCK_USED_OFFSET);
const _: () = assert!(std::mem::offset_of!(Coarse, ring) == crate::events::CLOCK_RING_OFFSET);
const _: () = assert!(std::mem::offset_of!(Coarse, now) == 0);
const _: () =
    assert!(std::mem::offset_of!(Coarse, sampling) == crate::events::CLOCK_SAMPLING_OFFSET);
const _: () = assert!(std::mem::offset_of!(Coarse, holds) == crate::events::CLOCK_HOLDS_OFFSET);

/// Once the program passed [`SAMPLE_AFTER_HOLDS`], a guarded site's outermost hold is in the
/// sample with probability one in this, drawn per hold by the tracker (`OrcaSampler.gateTurn`),
/// and every hold nested in it with it. Why 16: a hold in the sample costs the tracker's
/// 25–35 ns and one outside it a few (benches/PROFILE.md, "Guarded sites with the sample":
/// 2.8–4.4 ns a hold over no agent in all, measured); and a pair of sites ordered 107 times is
/// seen with probability 99.9% (docs/MODES.md, "Guarded sites").
pub use crate::events::GATE_PERIOD;

/// Outermost holds at guarded sites ([`Coarse::holds`], counted by the tracker in batches of
/// 256 per thread) before the sample begins: a program that takes fewer is recorded with every
/// hold, exactly (issue 45, "small programs"). A million: the tests' programs and a user's
/// small program stay under it, a server passes it in its first seconds.
pub const SAMPLE_AFTER_HOLDS: u64 = 1_000_000;

/// Whether the sample begins once [`SAMPLE_AFTER_HOLDS`] are passed (`guards=on`).
static GATED: AtomicBool = AtomicBool::new(false);

static COARSE: Coarse = Coarse {
    now: AtomicU64::new(STALE),
    ring: [const { AtomicU64::new(0) }; TICK_RING],
    used: AtomicU64::new(0),
    sampling: AtomicU64::new(STALE),
    holds: AtomicU64::new(0),
};

/// The thread that advances [`COARSE`] every [`TICK_NANOS`] while the tracker uses it,
/// started once, on first use.
pub struct Ticker;

/// Whether the ticker ticks: a detach parks it, so that a JVM Orca was attached to runs as
/// it did before, with no thread of the agent waking a thousand times a second.
static TICKING: AtomicBool = AtomicBool::new(false);
static TICKER: OnceLock<Option<std::thread::Thread>> = OnceLock::new();

impl Ticker {
    /// The coarse clock's address (a [`Coarse`]), advancing from now on; `None` when no
    /// thread could be started (the tracker then times every hold).
    pub fn start(gated: bool) -> Option<u64> {
        // Every hold followed until this recording passes the budget.
        GATED.store(gated, Ordering::SeqCst);
        COARSE.holds.store(0, Ordering::SeqCst);
        COARSE.sampling.store(STALE, Ordering::SeqCst);
        TICKING.store(true, Ordering::SeqCst);
        // Stale until the ticker's next tick: a recording after a detach starts no hold from
        // a tick of the earlier recording, and an idle ticker (below) wakes to tick at its
        // next look. Only the ticker's thread ticks, so `now` never goes back.
        COARSE.now.store(STALE, Ordering::SeqCst);
        COARSE.used.store(1, Ordering::SeqCst);
        let ticker = TICKER.get_or_init(|| {
            std::thread::Builder::new()
                .name("orca-ticker".into())
                .spawn(run)
                .ok()
                .map(|h| h.thread().clone())
        });
        let ticker = ticker.as_ref()?;
        ticker.unpark();
        Some(&COARSE as *const Coarse as u64)
    }

    /// A detach: the ticker parks until the next recording starts it (the tracker reads no
    /// coarse time once it is switched off).
    pub fn pause() {
        TICKING.store(false, Ordering::SeqCst);
    }

    /// A hold found the clock stale and set [`Coarse::used`]: the ticker, parked, ticks again.
    pub fn wake() {
        if let Some(Some(t)) = TICKER.get() {
            t.unpark();
        }
    }
}

/// The ticker's thread: ticks while the tracker uses the clock, sleeps longer while it does
/// not ([`Coarse`]), parks while no recording is under way.
fn run() {
    realtime();
    // The last tick's number (only this thread ticks).
    let mut n: usize = 0;
    loop {
        while !TICKING.load(Ordering::SeqCst) {
            COARSE.now.store(STALE, Ordering::SeqCst);
            std::thread::park();
        }
        n = tick(n);
        let mut quiet = 0;
        // Ticking: until the tracker has not used the clock for IDLE_AFTER_TICKS.
        while TICKING.load(Ordering::Relaxed) && quiet < IDLE_AFTER_TICKS {
            std::thread::sleep(Duration::from_nanos(TICK_NANOS));
            n = tick(n);
            quiet = if take_used() { 0 } else { quiet + 1 };
        }
        // Idle: no tick until the tracker uses the clock again.
        n = go_stale(n);
        // (An unpark that comes before the park makes it return at once: none is lost.)
        while TICKING.load(Ordering::Relaxed) && !take_used() {
            std::thread::park_timeout(IDLE_PARK);
        }
    }
}

/// Whether the tracker used the clock since the last look (and clears the mark).
fn take_used() -> bool {
    // A load first: the tracker's line is written only when the mark was seen.
    COARSE.used.load(Ordering::Relaxed) != 0 && COARSE.used.swap(0, Ordering::Relaxed) != 0
}

/// The ticker stops after tick `last`: the time now in the ring as tick `last + 1`, an upper
/// bound of the start of any hold that read tick `last`, but never in `now`, which becomes
/// [`STALE`] (a hold that read it as its coarse start would take the time of the tick after
/// it, the first after the idle time, for its start). Returns the number of that entry.
fn go_stale(last: usize) -> usize {
    let i = (last + 1) % TICK_RING;
    COARSE.ring[i].store(now_nanos(), Ordering::Relaxed);
    COARSE.now.store(STALE, Ordering::SeqCst);
    i
}

/// One tick after tick `last`: the time now, numbered one more; and the sample's start, once
/// the program passed the exact budget. Returns its number.
fn tick(last: usize) -> usize {
    let i = (last + 1) % TICK_RING;
    let t = now_nanos();
    // The ring first: a tracker that sees `now` finds it in the ring too.
    COARSE.ring[i].store(t, Ordering::Relaxed);
    let now = t & !(TICK_RING as u64 - 1) | i as u64;
    COARSE.now.store(now, Ordering::Release);
    if GATED.load(Ordering::Relaxed)
        && COARSE.sampling.load(Ordering::Relaxed) == STALE
        && COARSE.holds.load(Ordering::Relaxed) >= SAMPLE_AFTER_HOLDS
    {
        COARSE.sampling.store(t, Ordering::SeqCst);
    }
    i
}

/// Makes the calling thread (the ticker) a real-time one (`SCHED_FIFO`, the lowest priority)
/// where the process may (root, `CAP_SYS_NICE`, an `RLIMIT_RTPRIO`): on a loaded machine a
/// normal thread that sleeps 1 ms woke up to 120 ms late (2 cores, load 13; 2.5% of its sleeps
/// over 5 ms late), a real-time one at most 1 ms late. Its own work is about a microsecond
/// per tick; the sleep and wake-up cost the kernel 11–27 µs on a 2-core virtual machine (1–3%
/// of a core, busy or idle: benches/PROFILE.md). Elsewhere it stays a normal thread, and a
/// hold's coarse times are then as late as the ticker (docs/MODES.md, "Sampled hold timing").
fn realtime() {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: a valid sched_param; 0 is the calling thread. A refusal (EPERM) changes nothing.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
}

/// Two decimal digits per entry: number formatting is most of the writer's work per line
/// (`core::fmt` took a fifth of its time with `trace=all`).
const DIGITS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends `v` in decimal.
pub fn push_dec(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[d..d + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends `nanos` as `<seconds>.<9 digits>`, the timestamp syntax of docs/FORMAT.md.
pub fn push_timestamp(out: &mut Vec<u8>, nanos: u64) {
    push_dec(out, nanos / 1_000_000_000);
    let mut frac = (nanos % 1_000_000_000) as u32;
    let mut buf = [b'.'; 10];
    let mut i = 10;
    while i > 2 {
        let d = (frac % 100) as usize * 2;
        frac /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[d..d + 2]);
    }
    buf[1] = b'0' + frac as u8;
    out.extend_from_slice(&buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_numbers_as_core_fmt_does() {
        for v in [
            0u64,
            1,
            9,
            10,
            99,
            100,
            101,
            999,
            1000,
            12345,
            u32::MAX as u64,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            push_dec(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
        for n in [
            0u64,
            5,
            1_000_000_000,
            12_000_000_345,
            999_999_999,
            5_087_300_000_000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            push_timestamp(&mut out, n);
            let want = format!("{}.{:09}", n / 1_000_000_000, n % 1_000_000_000);
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }
}
