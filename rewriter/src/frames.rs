//! Stack map frames with explicit locals, for code that keeps values of its own in new local
//! variables.
//!
//! Why: a guarded monitor site ([`crate::Config::guards`]) keeps the coarse clock's value of
//! its enter in an `int` local after the method's own, read back at the exit, so that a hold
//! outside the sample makes no call at all. The verifier then wants that local typed `int` in
//! every stack map frame (a frame that leaves it out makes it `top`, and the exit's `iload`
//! fails). Frames are stored relative to each other (`same`, `chop`, `append`) and list only
//! the locals up to the last one in use, so each frame is expanded here to its full state
//! (from the method's implicit first frame, JVMS 4.10.1.6) and written back as a `full_frame`
//! whose locals are padded with `top` to the original `max_locals`, then the new `int`s.
//! Offsets are not touched here: fixup.rs maps them afterwards, as for any frame.

use crate::cp::PoolBuilder;
use crate::error::RewriteError;
use crate::reader::Reader;

/// One verification type: its tag and, for `Object` and `Uninitialized`, its operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Vt(pub(crate) u8, pub(crate) u16);

const TOP: Vt = Vt(0, 0);
const INT: Vt = Vt(1, 0);

impl Vt {
    /// Local variable slots the type takes (`long` and `double` two).
    fn slots(self) -> u32 {
        if self.0 == 3 || self.0 == 4 {
            2
        } else {
            1
        }
    }

    fn put(self, v: &mut Vec<u8>) {
        v.push(self.0);
        if self.0 == 7 || self.0 == 8 {
            v.extend_from_slice(&self.1.to_be_bytes());
        }
    }
}

/// The locals of a method's implicit first frame (JVMS 4.10.1.6): `this` (uninitialized in a
/// constructor other than `Object`'s), then the parameters. Reference parameters need a
/// `Class` constant each, added to the pool when the class has none.
pub(crate) fn initial_locals(
    desc: &[u8],
    is_static: bool,
    uninit_this: bool,
    this_class: u16,
    pb: &mut PoolBuilder,
) -> Result<Vec<Vt>, RewriteError> {
    let bad = || RewriteError::Malformed {
        offset: 0,
        reason: "bad method descriptor",
    };
    let mut v = Vec::new();
    if !is_static {
        v.push(if uninit_this {
            Vt(6, 0)
        } else {
            Vt(7, this_class)
        });
    }
    if desc.first() != Some(&b'(') {
        return Err(bad());
    }
    let mut i = 1;
    while *desc.get(i).ok_or_else(bad)? != b')' {
        let s = i;
        while *desc.get(i).ok_or_else(bad)? == b'[' {
            i += 1;
        }
        let c = *desc.get(i).ok_or_else(bad)?;
        if c == b'L' {
            i += desc[i..].iter().position(|&b| b == b';').ok_or_else(bad)?;
        }
        i += 1;
        let t = if i - s > 1 {
            // an array (its descriptor is the class name) or a class (`Lname;`)
            let name = if desc[s] == b'[' {
                &desc[s..i]
            } else {
                &desc[s + 1..i - 1]
            };
            let name = std::str::from_utf8(name).map_err(|_| bad())?;
            Vt(7, pb.class(name)?)
        } else {
            match c {
                b'Z' | b'B' | b'C' | b'S' | b'I' => INT,
                b'F' => Vt(2, 0),
                b'J' => Vt(4, 0),
                b'D' => Vt(3, 0),
                _ => return Err(bad()),
            }
        };
        v.push(t);
    }
    Ok(v)
}

/// `locals` padded with `top` to `max_locals` slots, then `k` `int`s: the locals of every
/// frame of a method whose new locals `max_locals..max_locals + k` are `int`s.
pub(crate) fn padded(locals: &[Vt], max_locals: u16, k: u16) -> Result<Vec<Vt>, &'static str> {
    let mut v = locals.to_vec();
    let mut slots: u32 = v.iter().map(|t| t.slots()).sum();
    if slots > max_locals as u32 {
        return Err("stack map frame has more locals than max_locals");
    }
    while slots < max_locals as u32 {
        v.push(TOP);
        slots += 1;
    }
    v.extend(std::iter::repeat_n(INT, k as usize));
    Ok(v)
}

/// The body of a `full_frame` after its offset: its locals and stack.
pub(crate) fn full_body(locals: &[Vt], stack: &[Vt]) -> Vec<u8> {
    let mut b = Vec::with_capacity(4 + 3 * (locals.len() + stack.len()));
    b.extend_from_slice(&(locals.len() as u16).to_be_bytes());
    for t in locals {
        t.put(&mut b);
    }
    b.extend_from_slice(&(stack.len() as u16).to_be_bytes());
    for t in stack {
        t.put(&mut b);
    }
    b
}

fn vt(r: &mut Reader) -> Result<Vt, &'static str> {
    let e = |_| "truncated StackMapTable";
    let tag = r.u1("vt").map_err(e)?;
    match tag {
        0..=6 => Ok(Vt(tag, 0)),
        7 | 8 => Ok(Vt(tag, r.u2("vt operand").map_err(e)?)),
        _ => Err("bad verification type tag"),
    }
}

/// The StackMapTable `smt` with every frame a `full_frame` whose locals are [`padded`]: the
/// method's locals from `max_locals` on are `k` new `int`s. `initial` is the implicit first
/// frame's locals ([`initial_locals`]).
pub(crate) fn with_int_locals(
    smt: &[u8],
    initial: &[Vt],
    max_locals: u16,
    k: u16,
) -> Result<Vec<u8>, &'static str> {
    let e = |_| "truncated StackMapTable";
    let mut r = Reader::new(smt, 0);
    let n = r.u2("n").map_err(e)?;
    let mut out = Vec::with_capacity(smt.len() * 2 + 8);
    out.extend_from_slice(&n.to_be_bytes());
    let mut locals: Vec<Vt> = initial.to_vec();
    for _ in 0..n {
        let ft = r.u1("ft").map_err(e)?;
        let mut stack = Vec::new();
        let delta = match ft {
            0..=63 => ft as u16,
            64..=127 => {
                stack.push(vt(&mut r)?);
                (ft - 64) as u16
            }
            247 => {
                let d = r.u2("d").map_err(e)?;
                stack.push(vt(&mut r)?);
                d
            }
            248..=250 => {
                let d = r.u2("d").map_err(e)?;
                let chop = (251 - ft) as usize;
                if chop > locals.len() {
                    return Err("chop_frame removes more locals than there are");
                }
                locals.truncate(locals.len() - chop);
                d
            }
            251 => r.u2("d").map_err(e)?,
            252..=254 => {
                let d = r.u2("d").map_err(e)?;
                for _ in 0..(ft - 251) {
                    locals.push(vt(&mut r)?);
                }
                d
            }
            255 => {
                let d = r.u2("d").map_err(e)?;
                let nl = r.u2("nl").map_err(e)?;
                locals.clear();
                for _ in 0..nl {
                    locals.push(vt(&mut r)?);
                }
                let ns = r.u2("ns").map_err(e)?;
                for _ in 0..ns {
                    stack.push(vt(&mut r)?);
                }
                d
            }
            _ => return Err("reserved stack map frame type"),
        };
        out.push(255);
        out.extend_from_slice(&delta.to_be_bytes());
        out.extend_from_slice(&full_body(&padded(&locals, max_locals, k)?, &stack));
    }
    if r.pos != smt.len() {
        return Err("StackMapTable length does not match its contents");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_frames_become_full_frames_with_the_new_ints() {
        // locals [Object#5]: append [I, J] at 10; same at 20; chop 1 at 30 (drops J);
        // same_locals_1_stack_item Object#9 at 31
        let smt = [0, 4, 253, 0, 10, 1, 4, 9, 250, 0, 9, 64, 7, 0, 9];
        let out = with_int_locals(&smt, &[Vt(7, 5)], 5, 2).unwrap();
        let mut want = vec![0, 4];
        // [Object#5, I, J] = 4 slots, top to 5, then I, I
        let l1 = [Vt(7, 5), INT, Vt(4, 0), TOP, INT, INT];
        want.extend_from_slice(&[255, 0, 10]);
        want.extend_from_slice(&full_body(&l1, &[]));
        want.extend_from_slice(&[255, 0, 9]);
        want.extend_from_slice(&full_body(&l1, &[]));
        let l3 = [Vt(7, 5), INT, TOP, TOP, TOP, INT, INT];
        want.extend_from_slice(&[255, 0, 9]);
        want.extend_from_slice(&full_body(&l3, &[]));
        want.extend_from_slice(&[255, 0, 0]);
        want.extend_from_slice(&full_body(&l3, &[Vt(7, 9)]));
        assert_eq!(out, want);
    }

    #[test]
    fn a_frame_past_max_locals_is_refused() {
        let smt = [0, 1, 252, 0, 0, 4];
        assert!(with_int_locals(&smt, &[], 1, 1).is_err());
    }
}
