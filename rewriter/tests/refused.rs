//! Input the JVM rejects that the rewriter's output would make acceptable must be refused, not
//! rewritten (both found by the end-to-end mutant test, tests/e2e/mutants.rs):
//! - references past the end of the constant pool: the rewriter appends constants, so such an
//!   index would name an added entry in its output; the class is unreadable for the rewriter;
//! - code that exceeds its `max_stack`: the rewriter raises `max_stack`; the method is left
//!   unchanged, with a note.

mod common;
use common::{be, ClassBuilder, Code};
use orca_rewriter::{rewrite, Config, MethodNote, Outcome, RewriteError};

/// A class with a `synchronized` block in `m` (so the rewriter changes it) whose
/// LocalVariableTable names `lvt_name(past)`, and a method `n` with `code(past)` (which the
/// rewriter leaves as it is); `past` is the first index past the end of the pool.
fn class(code: impl Fn(u16) -> Vec<u8>, lvt_name: impl Fn(u16) -> u16) -> Vec<u8> {
    let mut b = ClassBuilder::new("t/Refs", 52);
    for s in ["Code", "LocalVariableTable", "m", "n", "()V", "this"] {
        b.utf8(s);
    }
    let desc = b.utf8("Lt/Refs;");
    let past = b.utf8("last") + 1;
    let m = vec![0x2a, 0xc2, 0x2a, 0xc3, 0xb1];
    b.method(
        0x01,
        "m",
        "()V",
        Some(Code {
            max_stack: 2,
            max_locals: 1,
            code: m,
            exc: vec![],
            attrs: vec![(
                "LocalVariableTable",
                be(&[1, 0, 5, lvt_name(past), desc, 0]),
            )],
        }),
    );
    b.method(
        0x01,
        "n",
        "()V",
        Some(Code {
            max_stack: 2,
            max_locals: 1,
            code: code(past),
            exc: vec![],
            attrs: vec![],
        }),
    );
    b.build()
}

/// `op` with a two-byte index, pop, return.
fn with_index(op: u8, i: u16) -> Vec<u8> {
    let [h, l] = i.to_be_bytes();
    vec![op, h, l, 0x57, 0xb1]
}

fn past_end(bytes: &[u8]) -> Option<u16> {
    match rewrite(bytes, &Config::default()) {
        Err(RewriteError::BadConstantRef { index, reason }) if reason.contains("past the end") => {
            Some(index)
        }
        Ok(Outcome::Changed { .. }) => None,
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn references_past_the_end_of_the_pool_are_refused() {
    let ret = |_| vec![0xb1];
    // in range: rewritten
    assert_eq!(past_end(&class(ret, |past| past - 1)), None);
    // a LocalVariableTable name
    let past = past_end(&class(ret, |past| past)).expect("refused");
    // instruction operands of a method the rewriter does not change: ldc_w, getstatic
    for op in [0x13, 0xb2] {
        assert_eq!(past_end(&class(|p| with_index(op, p - 1), |p| p - 1)), None);
        assert_eq!(
            past_end(&class(|p| with_index(op, p), |p| p - 1)),
            Some(past)
        );
    }
    // ldc's one-byte index
    assert_eq!(
        past_end(&class(|p| vec![0x12, p as u8, 0x57, 0xb1], |p| p - 1)),
        Some(past)
    );
}

/// The mutant the end-to-end mutant test (tests/e2e/mutants.rs) found: Guava's
/// `ByteStreams$LimitedInputStream` whose LocalVariableTable names entry #106 of a 106-entry
/// pool. HotSpot rejects it (`ClassFormatError: Name index 106 in LocalVariableTable has bad
/// constant type`); rewritten, #106 was an added Utf8 and HotSpot accepted the class.
#[test]
fn the_mutant_found_end_to_end_is_refused() {
    let b = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/mutants-found/lvt-name-past-pool.class"
    ))
    .unwrap();
    assert_eq!(past_end(&b), Some(106));
}

/// The notes of a class the rewriter leaves unchanged, or of one it changes.
fn notes(bytes: &[u8]) -> (bool, Vec<MethodNote>) {
    match rewrite(bytes, &Config::default()).expect("readable") {
        Outcome::Changed { notes, .. } => (true, notes),
        Outcome::Unchanged { notes } => (false, notes),
        Outcome::Excluded => panic!("excluded"),
    }
}

/// A class whose `m` runs `code` (a `synchronized` block) with `max_stack`, then returns.
fn stack_class(max_stack: u16, code: &[u8]) -> Vec<u8> {
    let mut b = ClassBuilder::new("t/Stack", 52);
    b.method(
        0x01,
        "m",
        "()V",
        Some(Code {
            max_stack,
            max_locals: 1,
            code: code.to_vec(),
            exc: vec![],
            attrs: vec![],
        }),
    );
    b.build()
}

#[test]
fn code_over_its_max_stack_is_left_unchanged() {
    // aload_0 aload_0 pop monitorenter aload_0 monitorexit return: depth 2
    let code = [0x2a, 0x2a, 0x57, 0xc2, 0x2a, 0xc3, 0xb1];
    let (changed, n) = notes(&stack_class(2, &code));
    assert!(changed && n.is_empty(), "{n:?}");
    let (changed, n) = notes(&stack_class(1, &code));
    assert!(!changed, "{n:?}");
    assert_eq!(n.len(), 1);
    assert!(n[0].reason.contains("exceeds max_stack"), "{n:?}");
    // underflow (pop on an empty stack) and falling off the end of the code
    for bad in [
        &[0x57, 0x2a, 0xc2, 0x2a, 0xc3, 0xb1][..],
        &[0x2a, 0xc2, 0x2a, 0xc3],
    ] {
        let (changed, n) = notes(&stack_class(2, bad));
        assert!(!changed && n.len() == 1, "{n:?}");
    }
}

/// The second mutant: Guava's `Synchronized$SynchronizedDeque` whose `pollLast` has a
/// `max_stack` one too small. HotSpot rejects it (`VerifyError: Operand stack overflow`);
/// rewritten with `max_stack` raised by one, HotSpot accepted it.
#[test]
fn the_mutant_over_its_max_stack_is_left_unchanged() {
    let b = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/mutants-found/max-stack-too-small.class"
    ))
    .unwrap();
    let (_, n) = notes(&b);
    assert!(
        n.iter()
            .any(|n| n.name == "pollLast" && n.reason.contains("exceeds max_stack")),
        "{n:?}"
    );
}
