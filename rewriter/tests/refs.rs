//! References past the end of the constant pool: the rewriter appends constants, so such an
//! index (an error the JVM reports) would name an added entry in its output. A class holding
//! one must be refused (left unchanged by the agent), not rewritten.

mod common;
use common::{be, ClassBuilder, Code};
use orca_rewriter::{rewrite, Config, Outcome, RewriteError};

/// A class with a `synchronized` block in `m` (so the rewriter changes it), whose `code` and
/// LocalVariableTable are built from `past`, the first index past the end of the pool.
fn class(code: impl Fn(u16) -> Vec<u8>, lvt_name: impl Fn(u16) -> u16) -> Vec<u8> {
    let mut b = ClassBuilder::new("t/Refs", 52);
    for s in ["Code", "LocalVariableTable", "m", "()V", "Lt/Refs;", "this"] {
        b.utf8(s);
    }
    let desc = b.utf8("Lt/Refs;");
    let past = b.utf8("last") + 1;
    let code = code(past);
    let len = code.len() as u16;
    b.method(
        0x01,
        "m",
        "()V",
        Some(Code {
            max_stack: 2,
            max_locals: 1,
            code,
            exc: vec![],
            attrs: vec![(
                "LocalVariableTable",
                be(&[1, 0, len, lvt_name(past), desc, 0]),
            )],
        }),
    );
    b.build()
}

/// aload_0 monitorenter aload_0 monitorexit, then `tail`, then return.
fn monitor(tail: &[u8]) -> Vec<u8> {
    let mut c = vec![0x2a, 0xc2, 0x2a, 0xc3];
    c.extend_from_slice(tail);
    c.push(0xb1);
    c
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
    // in range: rewritten
    let ok = class(|_| monitor(&[]), |past| past - 1);
    assert_eq!(past_end(&ok), None);
    // a LocalVariableTable name
    let lvt = class(|_| monitor(&[]), |past| past);
    let past = past_end(&lvt).expect("refused");
    // an instruction operand (getstatic #past; pop), in range and past the end
    let op = |i: u16| {
        let [h, l] = i.to_be_bytes();
        monitor(&[0xb2, h, l, 0x57])
    };
    assert_eq!(past_end(&class(|p| op(p - 1), |p| p - 1)), None);
    assert_eq!(past_end(&class(op, |p| p - 1)), Some(past));
    // ldc's one-byte index
    assert_eq!(
        past_end(&class(|p| monitor(&[0x12, p as u8, 0x57]), |p| p - 1)),
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
