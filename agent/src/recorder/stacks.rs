//! Stacks: the current thread's stack walked and translated into format frames, with every
//! location in the original class file's terms.
//!
//! HotSpot's interpreter advances past a `monitorenter` before it blocks, so the frame of a
//! thread contending for a `synchronized` block reports the index of the *next* instruction,
//! often on the next source line. The agent moves such a location back onto the
//! `monitorenter`, so that a contention is reported on the line of the `synchronized`
//! statement, in every mode: hence just enough bytecode decoding to find instruction
//! boundaries.

use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;

use crate::jvmti::{jvmtiFrameInfo, Jni};
use crate::recorder::threads::ThreadState;
use crate::recorder::writer::{Frame, Frames};
use crate::recorder::Recorder;

/// [`Recorder::is_lock_frame`]'s cache: 4,096 methods, 32 KB.
const LOCK_FRAME_BITS: u32 = 12;
pub(crate) const LOCK_FRAME_SLOTS: usize = 1 << LOCK_FRAME_BITS;

impl Recorder {
    /// The current thread's stack from `start_depth` down, as format frames, with every
    /// location in the original class file's terms (see
    /// [`Metadata::original_location`](crate::recorder::metadata::Metadata::original_location)).
    /// `monitor_top`: the top frame is blocked on a monitor, so its location is moved back
    /// onto its `monitorenter` (see [`monitor_location`]).
    pub fn stack(
        &self,
        jni: Jni,
        state: &mut ThreadState,
        start_depth: i32,
        monitor_top: bool,
    ) -> Frames {
        let n = self.walk(jni, start_depth, &mut state.scratch);
        self.frames_from_scratch(jni, state, n, monitor_top)
    }

    /// The current thread's raw frames from `start_depth` down: by the fast walker where it
    /// can, else by JVMTI (0 frames when neither can).
    pub fn walk(
        &self,
        jni: Jni,
        start_depth: i32,
        frames: &mut [MaybeUninit<jvmtiFrameInfo>],
    ) -> usize {
        if let Some(n) = self
            .walker
            .as_ref()
            .and_then(|w| w.stack_trace(jni, start_depth, frames))
        {
            self.fast_walks.fetch_add(1, Ordering::Relaxed);
            return n;
        }
        self.jvmti_walks.fetch_add(1, Ordering::Relaxed);
        self.jvmti.stack_trace(start_depth, frames).unwrap_or(0)
    }

    /// The first `n` frames of the thread's last stack walk, translated.
    pub fn frames_from_scratch(
        &self,
        jni: Jni,
        state: &ThreadState,
        n: usize,
        monitor_top: bool,
    ) -> Frames {
        let mut frames = Frames::with_capacity(n);
        for (i, f) in state.scratch[..n].iter().enumerate() {
            // SAFETY: the walk initialised the first `n` entries.
            let f = unsafe { f.assume_init() };
            let method = self.meta.method_id(&self.jvmti, jni, &self.log, f.method);
            let location = if f.location < 0 {
                u32::MAX
            } else {
                let mut bci = f.location as u32;
                if i == 0 && monitor_top && bci > 0 {
                    if let Ok(code) = self.jvmti.bytecodes(f.method) {
                        bci = monitor_location(&code, bci);
                    }
                }
                self.meta
                    .original_location(&self.jvmti, jni, method, f.method, bci)
            };
            frames.push(Frame { method, location });
        }
        frames
    }

    /// The depth of the first frame from `from` down whose class is neither the tracker nor in
    /// `java.util.concurrent.locks`: the caller of the lock method whose slow path is running
    /// (however many of the JDK's frames are between). `from` when none is found.
    ///
    /// A walk of 8 frames first, and of 24 only when all 8 are the JDK's lock frames: the
    /// fast walker walks from the top of the stack however deep it starts, so frames asked for
    /// and not needed cost as much as the rest, and the caller of a `ReentrantLock.lock` is 4
    /// to 6 frames down (the tracker's report, AQS's slow path, the lock's `Sync`).
    pub fn juc_caller_depth(&self, jni: Jni, from: i32) -> i32 {
        const LOOK: [usize; 2] = [8, 24];
        let mut frames = [MaybeUninit::uninit(); LOOK[1]];
        for look in LOOK {
            let n = self.walk(jni, from, &mut frames[..look]);
            for (i, f) in frames[..n].iter().enumerate() {
                // SAFETY: the walk initialised the first `n` entries.
                let f = unsafe { f.assume_init() };
                // (a frame JVMTI cannot tell about is skipped, as a lock frame)
                if self.is_lock_frame(jni, &f) == Some(false) {
                    return from + i as i32;
                }
            }
            if n < look {
                break; // the stack ended
            }
        }
        from
    }

    /// Whether the frame's method's class is the tracker's (`java.lang.Orca*`) or in
    /// `java.util.concurrent.locks`; `None` when JVMTI cannot tell. Cached per method: a
    /// contended j.u.c. acquisition asks it of every frame down to the lock's caller, and two
    /// JVMTI calls per frame (one allocating the class's signature) were 0.24% of Derby's
    /// samples with four clients (0.08% cached; the walk was the rest of `juc_caller_depth`'s
    /// 1.6%).
    fn is_lock_frame(&self, jni: Jni, f: &jvmtiFrameInfo) -> Option<bool> {
        let key = f.method as usize;
        if key == 0 || key & 1 != 0 {
            return None;
        }
        let slot = &self.lock_frames
            [((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LOCK_FRAME_BITS)) as usize];
        let v = slot.load(Ordering::Relaxed);
        if v & !1 == key {
            return Some(v & 1 != 0);
        }
        let class = self.jvmti.method_declaring_class(f.method).ok()?;
        let sig = self.jvmti.class_signature(class).unwrap_or_default();
        jni.delete_local_ref(class);
        // `Ljava/lang/Orca`: the tracker's classes (build.rs).
        let lock =
            sig.starts_with("Ljava/util/concurrent/locks/") || sig.starts_with("Ljava/lang/Orca");
        // A jmethodID names one method for the JVM's life: a slot another method overwrites
        // is only asked again.
        slot.store(key | lock as usize, Ordering::Relaxed);
        Some(lock)
    }

    /// The site of the frame `depth` frames down the current thread's stack (its method and
    /// original bytecode index), interned; 0 when there is none.
    pub fn caller_site(&self, jni: Jni, depth: i32) -> u32 {
        let Ok((method, location)) = self.jvmti.frame_location(depth) else {
            return 0;
        };
        if location < 0 || method.is_null() {
            return 0;
        }
        let id = self.meta.method_id(&self.jvmti, jni, &self.log, method);
        let bci = self
            .meta
            .original_location(&self.jvmti, jni, id, method, location as u32);
        self.sites.intern(method, bci)
    }

    /// The frame a site stands for, its method described to the writer on first use.
    pub fn site_frame(&self, jni: Jni, site: u32) -> Option<Frame> {
        let (method, bci) = self.sites.get(site)?;
        Some(Frame {
            method: self.meta.method_id(&self.jvmti, jni, &self.log, method),
            location: bci,
        })
    }
}

const MONITORENTER: u8 = 0xC2;

/// Length of the instruction at `pc`, or `None` if the code is cut short or unknown.
fn instruction_length(code: &[u8], pc: usize) -> Option<usize> {
    let op = *code.get(pc)?;
    let fixed = match op {
        0x10 | 0x12 | 0x15..=0x19 | 0x36..=0x3A | 0xA9 | 0xBC => 2,
        0x11
        | 0x13
        | 0x14
        | 0x84
        | 0x99..=0xA8
        | 0xB2..=0xB8
        | 0xBB
        | 0xBD
        | 0xC0
        | 0xC1
        | 0xC6
        | 0xC7 => 3,
        0xC5 => 4,
        0xB9 | 0xBA | 0xC8 | 0xC9 => 5,
        0xC4 => {
            // wide: iinc takes 6 bytes, the loads and stores 4.
            return Some(if *code.get(pc + 1)? == 0x84 { 6 } else { 4 });
        }
        0xAA | 0xAB => {
            let base = (pc + 4) & !3;
            let word = |i: usize| -> Option<i32> {
                Some(i32::from_be_bytes(
                    code.get(base + 4 * i..base + 4 * i + 4)?.try_into().ok()?,
                ))
            };
            let n = if op == 0xAA {
                let (low, high) = (word(1)?, word(2)?);
                3 + usize::try_from(i64::from(high) - i64::from(low) + 1).ok()?
            } else {
                2 + 2 * usize::try_from(word(1)?).ok()?
            };
            return Some(base + 4 * n - pc);
        }
        0xCA..=0xFF => return None,
        _ => 1,
    };
    Some(fixed)
}

/// The location to report for a thread blocked on a monitor at `location` in `code`: the
/// `monitorenter` just before it, if there is one, else `location` unchanged.
pub fn monitor_location(code: &[u8], location: u32) -> u32 {
    let target = location as usize;
    let mut pc = 0;
    while pc < target {
        let Some(len) = instruction_length(code, pc) else {
            return location;
        };
        if pc + len == target {
            return if code[pc] == MONITORENTER {
                pc as u32
            } else {
                location
            };
        }
        pc += len;
    }
    location
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_back_onto_monitorenter_only() {
        // getstatic #2; dup; astore_0; monitorenter; getstatic #3; ...
        let code = [0xB2, 0, 2, 0x59, 0x4B, 0xC2, 0xB2, 0, 3, 0x04, 0x60];
        assert_eq!(monitor_location(&code, 6), 5);
        assert_eq!(monitor_location(&code, 5), 5);
        assert_eq!(monitor_location(&code, 9), 9);
        // sipush 0x00C2 must not be mistaken for a monitorenter.
        let code = [0x11, 0x00, 0xC2, 0x57];
        assert_eq!(monitor_location(&code, 3), 3);
    }

    #[test]
    fn walks_over_switches() {
        // iload_0 at 0, tableswitch at 1 (padding to 4), default, low 0, high 1, 2 offsets; monitorenter after.
        let mut code = vec![0x1A, 0xAA, 0, 0];
        for w in [20i32, 0, 1, 20, 20] {
            code.extend_from_slice(&w.to_be_bytes());
        }
        code.push(0xC2);
        let after = code.len() as u32;
        assert_eq!(monitor_location(&code, after), after - 1);
    }
}
