//! The operand stack depth the original code reaches.
//!
//! Why: the rewriter raises `max_stack` by what its inserted code needs. Code that overflows
//! its declared `max_stack` is a `VerifyError` ("Exceeded max stack size"), but with the
//! raised limit it could verify: the rewriter would turn a class the JVM rejects into one it
//! accepts (found by the end-to-end mutant test: a Guava method whose `max_stack` was one too
//! small). So before a method is changed, the depth of its code is computed along every path
//! the verifier checks (from offset 0, from every exception handler with one value, and from
//! every stack map frame with the frame's stack), and the method is left unchanged when the
//! code exceeds `max_stack`, underflows, or reaches an instruction with two different depths
//! (all of which the verifier rejects anyway).
//!
//! Limit: a `jsr`'s fall-through is given the depth before the `jsr` (the subroutines javac
//! generated leave the stack as they found it); an odd subroutine is not followed exactly.

use crate::cp::Pool;
use crate::insn::Insn;
use crate::reader::be16;

/// Slots of one field type at the start of `d`, and its length in bytes.
fn field_type(d: &[u8]) -> Option<(u32, usize)> {
    let mut i = 0;
    while *d.get(i)? == b'[' {
        i += 1;
    }
    let len = match *d.get(i)? {
        b'L' => d[i..].iter().position(|&c| c == b';')? + 1,
        b'B' | b'C' | b'F' | b'I' | b'S' | b'Z' | b'J' | b'D' => 1,
        _ => return None,
    };
    let slots = if i == 0 && (d[0] == b'J' || d[0] == b'D') {
        2
    } else {
        1
    };
    Some((slots, i + len))
}

/// (argument slots, return slots) of a method descriptor.
fn method_type(d: &[u8]) -> Option<(u32, u32)> {
    if d.first() != Some(&b'(') {
        return None;
    }
    let mut i = 1;
    let mut args = 0;
    while *d.get(i)? != b')' {
        let (s, n) = field_type(&d[i..])?;
        args += s;
        i += n;
    }
    let ret = &d[i + 1..];
    let r = if ret == b"V" {
        0
    } else {
        let (s, n) = field_type(ret)?;
        if n != ret.len() {
            return None;
        }
        s
    };
    Some((args, r))
}

/// (values popped, values pushed) in slots, and whether execution can continue with the next
/// instruction; `None` for an instruction whose effect cannot be known (a bad reference).
pub(crate) fn effect(code: &[u8], ins: &Insn, pool: &Pool) -> Option<(u32, u32, bool)> {
    let pc = ins.off as usize;
    let idx = || be16(code, pc + 1);
    let field = |i: u16| -> Option<u32> {
        let d = pool.nat_descriptor(i, &[9])?;
        let (s, n) = field_type(d)?;
        (n == d.len()).then_some(s)
    };
    let method = |i: u16, tags: &[u8]| method_type(pool.nat_descriptor(i, tags)?);
    let (pop, push) = match ins.op {
        0x00 | 0x84 => (0, 0),
        0x01..=0x08 | 0x0b..=0x0d | 0x10..=0x13 | 0x15 | 0x17 | 0x19 => (0, 1),
        0x1a..=0x1d | 0x22..=0x25 | 0x2a..=0x2d | 0xbb => (0, 1),
        0x09 | 0x0a | 0x0e | 0x0f | 0x14 | 0x16 | 0x18 | 0x1e..=0x21 | 0x26..=0x29 => (0, 2),
        0x2e | 0x30 | 0x32..=0x35 => (2, 1),
        0x2f | 0x31 => (2, 2),
        0x36 | 0x38 | 0x3a | 0x3b..=0x3e | 0x43..=0x46 | 0x4b..=0x4e => (1, 0),
        0x37 | 0x39 | 0x3f..=0x42 | 0x47..=0x4a => (2, 0),
        0x4f | 0x51 | 0x53..=0x56 => (3, 0),
        0x50 | 0x52 => (4, 0),
        0x57 => (1, 0),
        0x58 => (2, 0),
        0x59 => (1, 2),
        0x5a => (2, 3),
        0x5b => (3, 4),
        0x5c => (2, 4),
        0x5d => (3, 5),
        0x5e => (4, 6),
        0x5f => (2, 2),
        // add sub mul div rem, by type i l f d
        0x60..=0x73 => [(2, 1), (4, 2), (2, 1), (4, 2)][(ins.op - 0x60) as usize % 4],
        0x74 | 0x76 => (1, 1),
        0x75 | 0x77 => (2, 2),
        0x78 | 0x7a | 0x7c | 0x7e | 0x80 | 0x82 => (2, 1),
        0x79 | 0x7b | 0x7d => (3, 2),
        0x7f | 0x81 | 0x83 => (4, 2),
        0x85 | 0x87 | 0x8c | 0x8d => (1, 2),
        0x86 | 0x8b | 0x91..=0x93 => (1, 1),
        0x88 | 0x89 | 0x8e | 0x90 => (2, 1),
        0x8a | 0x8f => (2, 2),
        0x94 | 0x97 | 0x98 => (4, 1),
        0x95 | 0x96 => (2, 1),
        0x99..=0x9e | 0xc6 | 0xc7 => (1, 0),
        0x9f..=0xa6 => (2, 0),
        0xa7 | 0xc8 | 0xa9 => return Some((0, 0, false)),
        0xa8 | 0xc9 => (0, 0), // the target gets the return address (see `max_depth`)
        0xaa | 0xab => return Some((1, 0, false)),
        0xac | 0xae | 0xb0 | 0xbf => return Some((1, 0, false)),
        0xad | 0xaf => return Some((2, 0, false)),
        0xb1 => return Some((0, 0, false)),
        0xb2 => (0, field(idx()?)?),
        0xb3 => (field(idx()?)?, 0),
        0xb4 => (1, field(idx()?)?),
        0xb5 => (1 + field(idx()?)?, 0),
        0xb6 | 0xb7 | 0xb9 => {
            let (a, r) = method(idx()?, &[10, 11])?;
            (1 + a, r)
        }
        0xb8 => method(idx()?, &[10, 11])?,
        0xba => method(idx()?, &[18])?,
        0xbc | 0xbd | 0xbe | 0xc0 | 0xc1 => (1, 1),
        0xc2 | 0xc3 => (1, 0),
        0xc4 => match *code.get(pc + 1)? {
            0x15 | 0x17 | 0x19 => (0, 1),
            0x16 | 0x18 => (0, 2),
            0x36 | 0x38 | 0x3a => (1, 0),
            0x37 | 0x39 => (2, 0),
            0x84 => (0, 0),
            0xa9 => return Some((0, 0, false)),
            _ => return None,
        },
        0xc5 => (*code.get(pc + 3)? as u32, 1),
        _ => return None,
    };
    Some((pop, push, true))
}

/// Branch targets of an instruction (absolute offsets).
fn targets(code: &[u8], ins: &Insn, out: &mut Vec<u32>) -> Option<()> {
    let pc = ins.off as usize;
    let at = |d: i64| u32::try_from(pc as i64 + d).ok();
    match ins.op {
        0x99..=0xa8 | 0xc6 | 0xc7 => out.push(at(be16(code, pc + 1)? as i16 as i64)?),
        0xc8 | 0xc9 => out.push(at(crate::reader::be32(code, pc + 1)? as i64)?),
        0xaa | 0xab => {
            let base = (pc + 4) & !3;
            let w = |k: usize| crate::reader::be32(code, base + 4 * k);
            out.push(at(w(0)? as i64)?);
            if ins.op == 0xaa {
                let (lo, hi) = (w(1)? as i64, w(2)? as i64);
                for k in 0..(hi - lo + 1).max(0) as usize {
                    out.push(at(w(3 + k)? as i64)?);
                }
            } else {
                for k in 0..w(1)?.max(0) as usize {
                    out.push(at(w(3 + 2 * k)? as i64)?);
                }
            }
        }
        _ => {}
    }
    Some(())
}

/// Stack depths (in slots) of the frames of a StackMapTable body, as (offset, depth).
pub(crate) fn frame_depths(smt: &[u8], out: &mut Vec<(u32, u32)>) -> Option<()> {
    let mut p = 2;
    let n = be16(smt, 0)?;
    let mut off: i64 = -1;
    // skips `k` verification types, returning their slots
    let skip = |p: &mut usize, k: usize| -> Option<u32> {
        let mut slots = 0;
        for _ in 0..k {
            let t = *smt.get(*p)?;
            *p += if t == 7 || t == 8 { 3 } else { 1 };
            slots += if t == 3 || t == 4 { 2 } else { 1 };
        }
        Some(slots)
    };
    for _ in 0..n {
        let t = *smt.get(p)?;
        p += 1;
        let (delta, depth) = match t {
            0..=63 => (t as u16, 0),
            64..=127 => (t as u16 - 64, skip(&mut p, 1)?),
            247..=255 => {
                let d = be16(smt, p)?;
                p += 2;
                match t {
                    247 => (d, skip(&mut p, 1)?),
                    248..=251 => (d, 0),
                    252..=254 => {
                        skip(&mut p, (t - 251) as usize)?;
                        (d, 0)
                    }
                    _ => {
                        let nl = be16(smt, p)? as usize;
                        p += 2;
                        skip(&mut p, nl)?;
                        let ns = be16(smt, p)? as usize;
                        p += 2;
                        (d, skip(&mut p, ns)?)
                    }
                }
            }
            _ => return None,
        };
        off += delta as i64 + 1;
        out.push((off as u32, depth));
    }
    Some(())
}

/// Why a method's code is left as it is.
pub(crate) const TOO_DEEP: &str =
    "operand stack exceeds max_stack, underflows or has two depths at one instruction (the verifier rejects the method): left unchanged";

/// Whether the code stays within `max_stack` on every path the verifier checks, with one depth
/// per instruction; `false` also when that cannot be worked out.
pub(crate) fn within_max_stack(
    code: &[u8],
    insns: &[Insn],
    exc: &[u8],
    smt: Option<&[u8]>,
    max_stack: u16,
    pool: &Pool,
) -> bool {
    let index = |off: u32| insns.binary_search_by_key(&off, |i| i.off).ok();
    let mut depth: Vec<Option<u32>> = vec![None; insns.len()];
    let mut work: Vec<usize> = Vec::new();
    let mut seeds: Vec<(u32, u32)> = vec![(0, 0)];
    for h in exc.chunks_exact(8) {
        seeds.push((be16(h, 4).unwrap_or(0) as u32, 1));
    }
    if let Some(b) = smt {
        if frame_depths(b, &mut seeds).is_none() {
            return false;
        }
    }
    let set = |at: u32, d: u32, depth: &mut Vec<Option<u32>>, work: &mut Vec<usize>| {
        let Some(i) = index(at) else { return false };
        match depth[i] {
            None => {
                depth[i] = Some(d);
                work.push(i);
                true
            }
            Some(e) => e == d,
        }
    };
    for (at, d) in seeds {
        if !set(at, d, &mut depth, &mut work) {
            return false;
        }
    }
    let mut tg = Vec::new();
    while let Some(i) = work.pop() {
        let ins = &insns[i];
        let d = depth[i].unwrap_or(0);
        let Some((pop, push, next)) = effect(code, ins, pool) else {
            return false;
        };
        if d < pop || d - pop + push > max_stack as u32 {
            return false;
        }
        let after = d - pop + push;
        tg.clear();
        if targets(code, ins, &mut tg).is_none() {
            return false;
        }
        // jsr: the subroutine starts with the return address pushed
        let to = if ins.op == 0xa8 || ins.op == 0xc9 {
            if after + 1 > max_stack as u32 {
                return false;
            }
            after + 1
        } else {
            after
        };
        for &t in &tg {
            if !set(t, to, &mut depth, &mut work) {
                return false;
            }
        }
        if next {
            if i + 1 < insns.len() {
                if !set(insns[i + 1].off, after, &mut depth, &mut work) {
                    return false;
                }
            } else {
                // falls off the end of the code
                return false;
            }
        }
    }
    true
}
