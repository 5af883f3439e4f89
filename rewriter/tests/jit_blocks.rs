//! C1 gives up on a whole method ("exception handler covers itself") when an instruction it
//! treats as throwing sits in the basic block an exception handler begins and that handler
//! covers it. javac's catch-all handler of a `synchronized` block covers its own `monitorexit`,
//! which C1 treats as not throwing; a call the rewriter places beside it is a call. A method C1
//! skips runs in the interpreter until C2 takes it, so this costs real programs their warm-up
//! (Derby's `EmbedResultSet.movePosition` did).
//!
//! Over the corpus (every class of the JDK's jmods and of /usr/share/java), no rewritten method
//! may have more calls in such a place than its original; tests/e2e/jit.rs runs the JIT itself
//! on the shapes javac emits.

mod common;
use cafebabe::attributes::{AttributeData, CodeData};
use cafebabe::bytecode::Opcode;
use orca_rewriter::{rewrite, Config, Outcome};
use std::collections::BTreeSet;

/// Calls that lie in the basic block a handler begins, covered by that handler as C1 sees it
/// (before any catch-all listed earlier that covers them), per method (in class-file order),
/// or `None` for a class cafebabe cannot read.
fn self_covered_calls(bytes: &[u8]) -> Option<Vec<(String, usize)>> {
    let cf = cafebabe::parse_class(bytes).ok()?;
    let mut out = Vec::new();
    for m in &cf.methods {
        let code: Option<&CodeData> = m.attributes.iter().find_map(|a| match &a.data {
            AttributeData::Code(c) => Some(c),
            _ => None,
        });
        let name = format!("{}{}", m.name, m.descriptor);
        let Some(code) = code else {
            out.push((name, 0));
            continue;
        };
        let ops = &code.bytecode.as_ref()?.opcodes;
        // Block leaders as C1's block list builder finds them: branch targets, handler entries
        // and whatever follows a branch, a switch, a return or a throw.
        let mut leaders = BTreeSet::new();
        for e in &code.exception_table {
            leaders.insert(e.handler_pc as i64);
        }
        for (i, (off, op)) in ops.iter().enumerate() {
            let at = *off as i64;
            let next = ops.get(i + 1).map(|(o, _)| *o as i64);
            let mut ends = true;
            match op {
                Opcode::Goto(j)
                | Opcode::IfAcmpeq(j)
                | Opcode::IfAcmpne(j)
                | Opcode::IfIcmpeq(j)
                | Opcode::IfIcmpge(j)
                | Opcode::IfIcmpgt(j)
                | Opcode::IfIcmple(j)
                | Opcode::IfIcmplt(j)
                | Opcode::IfIcmpne(j)
                | Opcode::Ifeq(j)
                | Opcode::Ifge(j)
                | Opcode::Ifgt(j)
                | Opcode::Ifle(j)
                | Opcode::Iflt(j)
                | Opcode::Ifne(j)
                | Opcode::Ifnonnull(j)
                | Opcode::Ifnull(j)
                | Opcode::Jsr(j) => {
                    leaders.insert(at + *j as i64);
                }
                Opcode::Lookupswitch(t) => {
                    leaders.insert(at + t.default as i64);
                    leaders.extend(t.match_offsets.iter().map(|(_, j)| at + *j as i64));
                }
                Opcode::Tableswitch(t) => {
                    leaders.insert(at + t.default as i64);
                    leaders.extend(t.jumps.iter().map(|j| at + *j as i64));
                }
                Opcode::Athrow
                | Opcode::Return
                | Opcode::Ireturn
                | Opcode::Lreturn
                | Opcode::Freturn
                | Opcode::Dreturn
                | Opcode::Areturn
                | Opcode::Ret(_) => {}
                _ => ends = false,
            }
            if ends {
                if let Some(n) = next {
                    leaders.insert(n);
                }
            }
        }
        // For each call, the handlers C1 joins: those covering it in table order, up to the
        // first catch-all (C1's `handle_exception` stops there). It gives up when one of them
        // begins the call's own block.
        let block_of = |off: usize| -> i64 {
            leaders
                .range(..=off as i64)
                .next_back()
                .copied()
                .unwrap_or(0)
        };
        let mut n = 0;
        for (off, op) in ops {
            if !matches!(
                op,
                Opcode::Invokestatic(_)
                    | Opcode::Invokevirtual(_)
                    | Opcode::Invokespecial(_)
                    | Opcode::Invokeinterface(..)
                    | Opcode::Invokedynamic(_)
            ) {
                continue;
            }
            for e in &code.exception_table {
                let (start, end) = (e.start_pc as usize, e.end_pc as usize);
                if !(start <= *off && *off < end) {
                    continue;
                }
                if block_of(*off) == e.handler_pc as i64 {
                    n += 1;
                    break;
                }
                if e.catch_type.is_none() {
                    break;
                }
            }
        }
        out.push((name, n));
    }
    Some(out)
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "slow in debug; run with cargo test --release"
)]
fn no_call_is_added_where_a_handler_covers_its_own_block() {
    let corpus = common::corpus(false);
    assert!(
        !corpus.is_empty(),
        "no corpus: the JDK 17 jmods (openjdk-17-jdk-headless) are missing"
    );
    let cfg = Config::default();
    let (mut checked, mut failures) = (0usize, Vec::new());
    for (src, name, bytes) in &corpus {
        let Ok(Outcome::Changed { bytes: out, .. }) = rewrite(bytes, &cfg) else {
            continue;
        };
        let (Some(before), Some(after)) = (self_covered_calls(bytes), self_covered_calls(&out))
        else {
            continue;
        };
        checked += 1;
        for ((m, a), (_, b)) in before.iter().zip(&after) {
            if b > a {
                failures.push(format!("{src}!{name} {m}: {a} -> {b}"));
            }
        }
    }
    assert!(checked > 1000, "only {checked} changed classes checked");
    assert!(
        failures.is_empty(),
        "{} methods gained a call in a block its own handler covers (C1 skips them), e.g.:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}
