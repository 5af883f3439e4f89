//! Whether the calling thread's stack has room for a whole report section of the tracker.
//!
//! A `StackOverflowError` in HotSpot comes from one place only: the stack bang at a Java
//! method's entry (interpreted or compiled, a native method's wrapper too), which touches the
//! page `StackShadowPages` below the new frame and throws when that page lies in the guard
//! zones at the low end of the thread's stack (`StackReservedPages`, `StackYellowPages`,
//! `StackRedPages`). Native code called through JNI runs inside the shadow zone that bang made
//! sure of and cannot overflow. So a call chain that goes at most `R` bytes below a point
//! whose stack pointer is more than `guard + shadow + R` bytes above the stack's low end
//! cannot throw one.
//!
//! The tracker's report sections (a `synchronized` block's MonitorEnter, MonitorEntered and
//! MonitorExit records under `trace=all`) are made by calls the rewriter inserted into the
//! program's own method, so every report of one section runs from the same frame, a few
//! operand-stack slots apart. The section's first report asks [`has_room`] before it writes
//! anything: with room, none of its later reports can be cut short by a `StackOverflowError`,
//! and the log never holds half a section; without it, the section writes nothing at all
//! (docs/FORMAT.md, "Stack overflows").

use std::cell::Cell;

/// HotSpot's defaults on Linux x86_64 and aarch64 (JDK 17 to 25), in pages: shadow 20, yellow
/// 2, red 1, reserved 1.
const DEFAULT_PAGES: usize = 20 + 2 + 1 + 1;

/// How far below the first report's native frame the rest of a section may go: the tracker's
/// own frames (at most 6 Java frames of a report and its helpers, interpreted frames of a few
/// hundred bytes each), the frames a deoptimisation expands a compiled frame with inlined
/// callees into, and glibc's guard page for a thread the JVM did not make, with a wide margin.
const SECTION_BYTES: usize = 64 * 1024;

thread_local! {
    /// The lowest address of this thread's stack, 0 until asked (a virtual thread's frames
    /// run on its carrier's stack: this is the carrier's, the OS thread's).
    static STACK_LOW: Cell<usize> = const { Cell::new(0) };
}

/// The bytes a report section needs above the stack's low end: the guard and shadow zones of
/// this JVM (its `-XX:Stack*Pages` options where the command line or the JVM's option
/// variables set them) and [`SECTION_BYTES`].
fn needed() -> usize {
    static NEEDED: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *NEEDED.get_or_init(|| {
        let page = page_size();
        let mut args = std::fs::read("/proc/self/cmdline").unwrap_or_default();
        for var in ["JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"] {
            if let Some(v) = std::env::var_os(var) {
                args.push(0);
                args.extend(
                    v.into_encoded_bytes()
                        .iter()
                        .map(|&b| if b == b' ' { 0 } else { b }),
                );
            }
        }
        zone_pages(&args) * page + SECTION_BYTES
    })
}

/// The guard and shadow zones' pages set by `-XX:Stack{Shadow,Yellow,Red,Reserved}Pages=N`
/// in `args` (NUL-separated), each at least its default (a smaller value leaves more room).
fn zone_pages(args: &[u8]) -> usize {
    let mut pages = [20usize, 2, 1, 1];
    let names = ["Shadow", "Yellow", "Red", "Reserved"];
    for arg in args.split(|&b| b == 0) {
        let Some(rest) = std::str::from_utf8(arg)
            .ok()
            .and_then(|a| a.strip_prefix("-XX:Stack"))
        else {
            continue;
        };
        for (i, name) in names.iter().enumerate() {
            if let Some(n) = rest
                .strip_prefix(name)
                .and_then(|r| r.strip_prefix("Pages="))
                .and_then(|n| n.parse::<usize>().ok())
            {
                pages[i] = pages[i].max(n);
            }
        }
    }
    let total: usize = pages.iter().sum();
    total.max(DEFAULT_PAGES)
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// The lowest address of the calling thread's stack, or 0 when glibc cannot say.
fn stack_low() -> usize {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: pthread_getattr_np initialises attr on success, which is destroyed after use;
    // the outputs are plain locals.
    unsafe {
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return 0;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        if ok {
            addr as usize
        } else {
            0
        }
    }
}

/// Whether a report section begun now (on this thread, in this native call) can run to its
/// end without a `StackOverflowError`. A thread whose stack glibc cannot describe has room
/// (as before this check: its sections may still be cut, as any program's frames may).
pub fn has_room() -> bool {
    let marker = 0u8;
    let sp = std::hint::black_box(&marker) as *const u8 as usize;
    let low = STACK_LOW.with(|c| {
        if c.get() == 0 {
            c.set(stack_low().max(1));
        }
        c.get()
    });
    low <= 1 || sp.saturating_sub(low) > needed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_take_the_larger_of_option_and_default() {
        assert_eq!(zone_pages(b"java\0-Xss512k\0Main"), DEFAULT_PAGES);
        assert_eq!(
            zone_pages(b"java\0-XX:StackShadowPages=40\0-XX:StackRedPages=0\0Main"),
            40 + 2 + 1 + 1
        );
        assert_eq!(zone_pages(b"-XX:StackShadowPages=x"), DEFAULT_PAGES);
    }

    #[test]
    fn a_thread_with_a_small_stack_left_has_no_room() {
        assert!(has_room());
        // A thread of 256 KiB: room at its top, none once only `needed` minus a page is left.
        let t = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                fn descend(left: usize) -> (bool, usize) {
                    let pad = [0u8; 1024];
                    std::hint::black_box(&pad);
                    let room = has_room();
                    if !room || left == 0 {
                        return (room, left);
                    }
                    descend(left - 1)
                }
                let top = has_room();
                let (room, left) = descend(250);
                (top, room, left)
            })
            .unwrap();
        let (top, room, left) = t.join().unwrap();
        assert!(top, "room at the top of a 256 KiB stack");
        assert!(
            !room && left > 0,
            "no room before the stack's end ({left} KiB left to go)"
        );
    }
}
