//! All offset fix-ups of a rewritten method, in one place.
//!
//! Why one module: every structure that holds a bytecode offset (branches,
//! switches, the exception table, LineNumberTable, LocalVariable(Type)Table,
//! StackMapTable, type annotations) must agree on the same old->new mapping;
//! keeping them together makes that mapping impossible to apply twice or
//! inconsistently.
//!
//! The model: each original instruction `i` becomes `prefix(i) insn(i)
//! suffix(i)`. Its *label* (`label[i]`) is the start of its prefix: every
//! branch, frame, handler and line entry that named the original offset names
//! the label, so the inserted code is attributed to the original instruction.
//! The optional method *head* (code at method entry, e.g. the
//! `syncEntered` call of a synchronized method) is placed before
//! `label[0]`: a backward branch to offset 0 does not run it again, but
//! ranges starting at 0 (line 1 entry, parameter variables, exception ranges)
//! start at the new offset 0 and so cover it. The optional *tail* is appended
//! after the original code (a catch-all handler).

use crate::cp::Pool;
use crate::insn::*;
use crate::reader::{be16, be32, Reader};
use crate::stack;

/// Edits of one instruction: code before it, a replacement of the
/// instruction itself, code after it. Inserted code must not contain
/// offset-dependent instructions.
#[derive(Default, Clone, Debug)]
pub(crate) struct InsnEdit {
    pub(crate) prefix: Vec<u8>,
    pub(crate) replace: Option<Vec<u8>>,
    pub(crate) suffix: Vec<u8>,
    pub(crate) guard: Option<Guard>,
}

/// An exception range over part of an instruction's prefix whose handler is the instruction
/// itself (the end of the prefix), listed before every other entry of the exception table.
/// Why: the exception path of a `synchronized` block reports the release before it, at the
/// head of a handler whose range covers that handler (javac's, which retries the release); a
/// report whose invocation throws (a StackOverflowError) must go on to the release, not back
/// to the head to fail again forever. The instruction needs a stack map frame: that of the
/// prefix's start (the handler's head, the previous frame) with the one stack item `item`
/// (a verification type, copied from that frame; empty when the class needs no frames).
///
/// The handler is not the instruction itself but a `goto` to it just before it, which only
/// the exception reaches: the prefix ends in [`GUARD_EXIT`], `goto` over that handler, and
/// the handler `goto`s on. Why: C1 gives up on a method ("Exception handler can be reached by
/// both normal and exceptional control flow") when a handler's block is also entered by falling
/// into it, which the instruction itself is.
#[derive(Clone, Debug)]
pub(crate) struct Guard {
    /// [from, to) of the prefix
    pub(crate) range: (u32, u32),
    pub(crate) item: Vec<u8>,
}

/// The end of a guarded prefix, after the guarded call: `goto +6` over the handler, and the
/// handler, `goto +3`, both to the guarded instruction (see [`Guard`]).
pub(crate) const GUARD_EXIT: [u8; 6] = [0xA7, 0, 6, 0xA7, 0, 3];

/// A catch-all handler appended after the original code, covering the whole
/// original code (and the head), with its StackMapTable frame body.
pub(crate) struct Tail {
    pub(crate) code: Vec<u8>,
    /// full_frame body: u2 nlocals, locals, u2 nstack, stack
    pub(crate) frame_body: Vec<u8>,
    /// The handler's range starts after the head instead of at 0. Why: a hooked method's
    /// handler reports the exit of a call whose entry report is the head; if the head's call
    /// itself throws (a StackOverflowError at the invocation), no entry was reported.
    pub(crate) after_head: bool,
}

/// Everything the transformations want done to one method.
pub(crate) struct MethodEdits {
    pub(crate) head: Vec<u8>,
    pub(crate) per: Vec<InsnEdit>,
    pub(crate) tail: Option<Tail>,
    /// extra operand stack the inserted code needs on top of the original max
    pub(crate) extra_stack: u16,
    /// absolute minimum max_stack (for head/tail code)
    pub(crate) min_stack: u16,
    /// new locals after the original max_locals (guarded monitor sites, typed in every
    /// frame by frames.rs before the code is rewritten)
    pub(crate) extra_locals: u16,
    /// Where exception ranges that began at offset 0 begin: after the head's first
    /// `covered_from` bytes, the code that initializes the new locals. Why: a handler's frame
    /// types them, and the verifier checks that frame against every instruction its range
    /// covers, including those before the locals are set.
    pub(crate) covered_from: u32,
}

/// Context needed to rewrite a Code attribute.
pub(crate) struct CodeCtx<'a> {
    /// attribute name of each known Code sub-attribute, by constant pool index
    pub(crate) names: &'a dyn Fn(u16) -> Option<&'a [u8]>,
    /// the class's constant pool (for the stack effect of instructions)
    pub(crate) pool: &'a Pool<'a>,
    /// class file major version
    pub(crate) major: u16,
    /// constant pool index of the Utf8 "StackMapTable" (only needed when a
    /// frame must be added to a method that has no StackMapTable)
    pub(crate) smt_name: Option<u16>,
}

/// Result of rewriting one Code attribute.
pub(crate) struct NewCode {
    /// the new Code attribute body (after attribute_length)
    pub(crate) body: Vec<u8>,
    /// (new offset, original offset) runs, sorted by new offset
    pub(crate) map: Vec<(u32, u32)>,
    pub(crate) new_len: u32,
    pub(crate) old_len: u32,
}

const NONE: u32 = u32::MAX;

/// Parsed view of the original Code attribute.
pub(crate) struct CodeView<'a> {
    pub(crate) max_stack: u16,
    pub(crate) max_locals: u16,
    pub(crate) code: &'a [u8],
    pub(crate) exc: &'a [u8],
    /// (name index, body)
    pub(crate) attrs: Vec<(u16, &'a [u8])>,
}

/// Splits a Code attribute body into its parts.
pub(crate) fn parse_code(body: &[u8]) -> Result<CodeView<'_>, &'static str> {
    let e = |_| "truncated Code attribute";
    let mut r = Reader::new(body, 0);
    let max_stack = r.u2("max_stack").map_err(e)?;
    let max_locals = r.u2("max_locals").map_err(e)?;
    let len = r.u4("code_length").map_err(e)? as usize;
    if len == 0 || len > 65535 {
        return Err("code_length out of range");
    }
    let code = r.bytes(len, "code").map_err(e)?;
    let n = r.u2("exception_table_length").map_err(e)? as usize;
    let exc = r.bytes(n * 8, "exception_table").map_err(e)?;
    let na = r.u2("attributes_count").map_err(e)?;
    let mut attrs = Vec::with_capacity(na as usize);
    for _ in 0..na {
        let name = r.u2("attribute_name_index").map_err(e)?;
        let l = r.u4("attribute_length").map_err(e)? as usize;
        attrs.push((name, r.bytes(l, "attribute").map_err(e)?));
    }
    if r.pos != body.len() {
        return Err("Code attribute length does not match its contents");
    }
    Ok(CodeView {
        max_stack,
        max_locals,
        code,
        exc,
        attrs,
    })
}

fn put2(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&(x as u16).to_be_bytes());
}
fn put4(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_be_bytes());
}
fn set2(v: &mut [u8], pos: usize, x: u32) {
    v[pos..pos + 2].copy_from_slice(&(x as u16).to_be_bytes());
}

/// Known attributes inside Code.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Lnt,
    Lvt,
    Smt,
    TypeAnn,
}

struct Frame {
    off: u32,
    ft: u8,
    body: (usize, usize),
}

/// Checks, for a synchronized instance method, that every StackMapTable frame
/// keeps local 0 as `this`, which the appended catch-all handler's frame
/// relies on. `is_this(cp_index)` says whether a Class entry names this class.
pub(crate) fn frames_keep_this(
    smt: &[u8],
    init_locals: usize,
    is_this: &dyn Fn(u16) -> bool,
) -> Result<bool, &'static str> {
    let mut count = init_locals;
    let mut first_ok = true;
    let mut r = Reader::new(smt, 0);
    let e = |_| "truncated StackMapTable";
    let n = r.u2("n").map_err(e)?;
    let vt = |r: &mut Reader| -> Result<Option<u16>, &'static str> {
        let t = r.u1("vt").map_err(e)?;
        match t {
            0..=6 => Ok(None),
            7 => Ok(Some(r.u2("cp").map_err(e)?)),
            8 => {
                r.u2("off").map_err(e)?;
                Ok(None)
            }
            _ => Err("bad verification type tag"),
        }
    };
    for _ in 0..n {
        let ft = r.u1("ft").map_err(e)?;
        match ft {
            0..=63 => {}
            64..=127 => {
                vt(&mut r)?;
            }
            247 => {
                r.u2("d").map_err(e)?;
                vt(&mut r)?;
            }
            248..=250 => {
                r.u2("d").map_err(e)?;
                let k = (251 - ft) as usize;
                if k >= count {
                    first_ok = false;
                    count = 0;
                } else {
                    count -= k;
                }
            }
            251 => {
                r.u2("d").map_err(e)?;
            }
            252..=254 => {
                r.u2("d").map_err(e)?;
                for j in 0..(ft - 251) {
                    let c = vt(&mut r)?;
                    if count == 0 && j == 0 {
                        first_ok = c.is_some_and(is_this);
                    }
                }
                count += (ft - 251) as usize;
            }
            255 => {
                r.u2("d").map_err(e)?;
                let nl = r.u2("nl").map_err(e)?;
                first_ok = nl > 0;
                for j in 0..nl {
                    let c = vt(&mut r)?;
                    if j == 0 {
                        first_ok = c.is_some_and(is_this);
                    }
                }
                count = nl as usize;
                let ns = r.u2("ns").map_err(e)?;
                for _ in 0..ns {
                    vt(&mut r)?;
                }
            }
            _ => return Err("reserved stack map frame type"),
        }
        if !first_ok {
            return Ok(false);
        }
    }
    Ok(first_ok)
}

/// Parses a StackMapTable: frames and the positions of Uninitialized offsets.
fn parse_smt(
    b: &[u8],
    frames: &mut Vec<Frame>,
    uninit: &mut Vec<usize>,
) -> Result<(), &'static str> {
    let e = |_| "truncated StackMapTable";
    let mut r = Reader::new(b, 0);
    let n = r.u2("n").map_err(e)?;
    let mut prev: i64 = -1;
    let vt = |r: &mut Reader, uninit: &mut Vec<usize>| -> Result<(), &'static str> {
        match r.u1("vt").map_err(e)? {
            0..=6 => {}
            7 => {
                r.u2("cp").map_err(e)?;
            }
            8 => {
                uninit.push(r.pos);
                r.u2("off").map_err(e)?;
            }
            _ => return Err("bad verification type tag"),
        }
        Ok(())
    };
    for _ in 0..n {
        let ft = r.u1("ft").map_err(e)?;
        let delta: u32;
        let start;
        match ft {
            0..=63 => {
                delta = ft as u32;
                start = r.pos;
            }
            64..=127 => {
                delta = (ft - 64) as u32;
                start = r.pos;
                vt(&mut r, uninit)?;
            }
            247 => {
                delta = r.u2("d").map_err(e)? as u32;
                start = r.pos;
                vt(&mut r, uninit)?;
            }
            248..=251 => {
                delta = r.u2("d").map_err(e)? as u32;
                start = r.pos;
            }
            252..=254 => {
                delta = r.u2("d").map_err(e)? as u32;
                start = r.pos;
                for _ in 0..(ft - 251) {
                    vt(&mut r, uninit)?;
                }
            }
            255 => {
                delta = r.u2("d").map_err(e)? as u32;
                start = r.pos;
                let nl = r.u2("nl").map_err(e)?;
                for _ in 0..nl {
                    vt(&mut r, uninit)?;
                }
                let ns = r.u2("ns").map_err(e)?;
                for _ in 0..ns {
                    vt(&mut r, uninit)?;
                }
            }
            _ => return Err("reserved stack map frame type"),
        }
        let off = prev + delta as i64 + 1;
        if off > 65535 {
            return Err("stack map frame offset past the code");
        }
        prev = off;
        frames.push(Frame {
            off: off as u32,
            ft,
            body: (start, r.pos),
        });
    }
    if r.pos != b.len() {
        return Err("StackMapTable length does not match its contents");
    }
    Ok(())
}

/// The one stack item (its verification type's bytes) of the stack map frame at `head`, when
/// there is such a frame, its stack holds exactly one item that is not `Uninitialized`, and
/// no other frame lies in `(head, until]`: what a [`Guard`] at `head` needs.
pub(crate) fn handler_stack_item(smt: &[u8], head: u32, until: u32) -> Option<Vec<u8>> {
    let mut frames = Vec::new();
    let mut uninit = Vec::new();
    parse_smt(smt, &mut frames, &mut uninit).ok()?;
    if frames.iter().any(|f| f.off > head && f.off <= until) {
        return None;
    }
    let f = frames.iter().find(|f| f.off == head)?;
    let b = &smt[f.body.0..f.body.1];
    // (length of the verification type at the start of `v`)
    let vt_len = |v: &[u8]| -> Option<usize> {
        match *v.first()? {
            0..=6 => Some(1),
            7 | 8 => Some(3),
            _ => None,
        }
    };
    let item = match f.ft {
        64..=127 | 247 => b,
        255 => {
            let nl = be16(b, 0)? as usize;
            let mut p = 2;
            for _ in 0..nl {
                p += vt_len(b.get(p..)?)?;
            }
            if be16(b, p)? != 1 {
                return None;
            }
            &b[p + 2..]
        }
        _ => return None,
    };
    (vt_len(item)? == item.len() && item[0] != 8).then(|| item.to_vec())
}

/// Collects the positions of offsets inside a type annotation attribute:
/// `lv` gets (start_pc position) of localvar_target entries, `off` gets
/// positions of offset_target / type_argument_target offsets.
fn parse_type_annotations(
    b: &[u8],
    lv: &mut Vec<usize>,
    off: &mut Vec<usize>,
) -> Result<(), &'static str> {
    let e = |_| "truncated type annotation";
    let mut r = Reader::new(b, 0);
    let n = r.u2("n").map_err(e)?;
    for _ in 0..n {
        let tt = r.u1("target_type").map_err(e)?;
        match tt {
            0x40 | 0x41 => {
                let tl = r.u2("table_length").map_err(e)?;
                for _ in 0..tl {
                    lv.push(r.pos);
                    r.skip(6, "localvar entry").map_err(e)?;
                }
            }
            0x42 => r.skip(2, "catch_target").map_err(e)?,
            0x43..=0x46 => {
                off.push(r.pos);
                r.skip(2, "offset_target").map_err(e)?;
            }
            0x47..=0x4b => {
                off.push(r.pos);
                r.skip(3, "type_argument_target").map_err(e)?;
            }
            _ => return Err("type annotation target not allowed in Code"),
        }
        let pl = r.u1("type_path").map_err(e)? as usize;
        r.skip(2 * pl, "type_path").map_err(e)?;
        skip_annotation_body(&mut r, 0)?;
    }
    if r.pos != b.len() {
        return Err("type annotation attribute length does not match its contents");
    }
    Ok(())
}

fn skip_annotation_body(r: &mut Reader, depth: u32) -> Result<(), &'static str> {
    let e = |_| "truncated annotation";
    if depth > 64 {
        return Err("annotation nesting too deep");
    }
    r.skip(2, "type_index").map_err(e)?;
    let np = r.u2("num_pairs").map_err(e)?;
    for _ in 0..np {
        r.skip(2, "name").map_err(e)?;
        skip_element_value(r, depth + 1)?;
    }
    Ok(())
}

fn skip_element_value(r: &mut Reader, depth: u32) -> Result<(), &'static str> {
    let e = |_| "truncated element_value";
    if depth > 64 {
        return Err("annotation nesting too deep");
    }
    match r.u1("tag").map_err(e)? {
        b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' | b's' | b'c' => {
            r.skip(2, "v").map_err(e)?
        }
        b'e' => r.skip(4, "enum").map_err(e)?,
        b'@' => skip_annotation_body(r, depth + 1)?,
        b'[' => {
            let n = r.u2("n").map_err(e)?;
            for _ in 0..n {
                skip_element_value(r, depth + 1)?;
            }
        }
        _ => return Err("bad element_value tag"),
    }
    Ok(())
}

/// Rewrites one Code attribute with `edits` applied and every offset fixed.
/// `Err` is a human-readable reason to leave the method unchanged.
pub(crate) fn rewrite_code(
    cv: &CodeView,
    insns: &[Insn],
    edits: &MethodEdits,
    ctx: &CodeCtx,
) -> Result<NewCode, String> {
    let code = cv.code;
    let clen = code.len();
    let n = insns.len();
    // offset -> instruction index
    let mut idx_of = vec![NONE; clen + 1];
    for (i, ins) in insns.iter().enumerate() {
        idx_of[ins.off as usize] = i as u32;
    }
    idx_of[clen] = n as u32;
    let at = |o: i64| -> Result<usize, String> {
        if o < 0 || o as usize > clen || idx_of[o as usize] == NONE {
            Err(format!("offset {o} is not an instruction boundary"))
        } else {
            Ok(idx_of[o as usize] as usize)
        }
    };
    // branch targets (instruction index) of 2- and 4-byte branches
    let mut tgt = vec![NONE; n];
    for (i, ins) in insns.iter().enumerate() {
        let o = ins.off as usize;
        let t = if is_short_branch(ins.op) {
            ins.off as i64 + be16(code, o + 1).unwrap_or(0) as i16 as i64
        } else if ins.op == GOTO_W || ins.op == JSR_W {
            ins.off as i64 + be32(code, o + 1).unwrap_or(0) as i64
        } else if ins.op == TABLESWITCH || ins.op == LOOKUPSWITCH {
            // validate all targets now
            for t in switch_targets(code, ins) {
                let ti = at(ins.off as i64 + t as i64)?;
                if ti == n {
                    return Err("switch target at the end of the code".into());
                }
            }
            continue;
        } else {
            continue;
        };
        let ti = at(t)?;
        if ti == n {
            return Err("branch target at the end of the code".into());
        }
        tgt[i] = ti as u32;
    }

    // known sub-attributes
    let mut kinds = Vec::with_capacity(cv.attrs.len());
    for (name, _) in &cv.attrs {
        let k = match (ctx.names)(*name) {
            Some(b"LineNumberTable") => Kind::Lnt,
            Some(b"LocalVariableTable") | Some(b"LocalVariableTypeTable") => Kind::Lvt,
            Some(b"StackMapTable") => Kind::Smt,
            Some(b"RuntimeVisibleTypeAnnotations") | Some(b"RuntimeInvisibleTypeAnnotations") => {
                Kind::TypeAnn
            }
            Some(other) => {
                return Err(format!(
                    "Code has attribute {} whose offsets the rewriter does not know",
                    String::from_utf8_lossy(other)
                ))
            }
            None => return Err("Code attribute name is not a Utf8 constant".into()),
        };
        kinds.push(k);
    }
    let mut frames = Vec::new();
    let mut uninit = Vec::new();
    let mut smt_count = 0;
    let mut smt: &[u8] = &[];
    for (k, (_, b)) in kinds.iter().zip(&cv.attrs) {
        if *k == Kind::Smt {
            smt_count += 1;
            smt = b;
            parse_smt(b, &mut frames, &mut uninit)?;
        }
    }
    if smt_count > 1 {
        return Err("more than one StackMapTable".into());
    }
    let has_smt = smt_count == 1;
    let needs_frames = ctx.major >= 50;

    // ---- layout, widening branches until stable ----
    let mut wide = vec![false; n];
    for (i, ins) in insns.iter().enumerate() {
        if ins.op == GOTO_W || ins.op == JSR_W {
            wide[i] = true;
        }
    }
    let mut label = vec![0u32; n + 1];
    let mut start = vec![0u32; n];
    let head = edits.head.len() as u32;
    let mut rounds = 0;
    let code_end = loop {
        rounds += 1;
        if rounds > 64 {
            return Err("branch widening did not converge".into());
        }
        let mut pos = head;
        for (i, ins) in insns.iter().enumerate() {
            let ed = &edits.per[i];
            label[i] = pos;
            pos += ed.prefix.len() as u32;
            start[i] = pos;
            let size = match ins.op {
                TABLESWITCH | LOOKUPSWITCH => {
                    let old_pad = 3 - (ins.off & 3);
                    let new_pad = 3 - (pos & 3);
                    ins.len - old_pad + new_pad
                }
                op if is_short_branch(op) && wide[i] => {
                    if op == GOTO || op == JSR {
                        5
                    } else {
                        8
                    }
                }
                _ => ed.replace.as_ref().map_or(ins.len, |r| r.len() as u32),
            };
            pos += size + ed.suffix.len() as u32;
            if pos > 70000 {
                return Err("method would exceed 65535 bytes of code".into());
            }
        }
        label[n] = pos;
        let mut changed = false;
        for (i, ins) in insns.iter().enumerate() {
            if is_short_branch(ins.op) && !wide[i] {
                let d = label[tgt[i] as usize] as i64 - start[i] as i64;
                if d < i16::MIN as i64 || d > i16::MAX as i64 {
                    wide[i] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break pos;
        }
    };
    let tail_len = edits.tail.as_ref().map_or(0, |t| t.code.len() as u32);
    let total = code_end + tail_len;
    if total > 65535 {
        return Err(format!(
            "method would have {total} bytes of code (limit 65535)"
        ));
    }
    // a widened conditional branch falls through to a new branch target
    // (after its goto_w): it needs a frame there
    // (after its goto_w): it needs a frame there. When the original has none,
    // one is added if the state there is provably that of the last frame
    // before the branch (see `falls_through_unchanged`): a `same_frame`.
    if needs_frames {
        let mut added = Vec::new();
        for (i, ins) in insns.iter().enumerate() {
            if wide[i] && is_short_branch(ins.op) && ins.op != GOTO && ins.op != JSR {
                let next = ins.off + ins.len;
                if frames.binary_search_by_key(&next, |f| f.off).is_err() {
                    if has_smt && falls_through_unchanged(code, insns, i, &frames, smt, ctx, &at) {
                        added.push(Frame {
                            off: next,
                            ft: 0,
                            body: (0, 0),
                        });
                    } else {
                        return Err(format!(
                            "conditional branch at {} must be widened but its fall-through has no stack map frame",
                            ins.off
                        ));
                    }
                }
            }
        }
        if !added.is_empty() {
            frames.extend(added);
            frames.sort_by_key(|f| f.off);
            frames.dedup_by_key(|f| f.off);
        }
    }

    // ---- emit code ----
    let mut out = Vec::with_capacity(total as usize + 64);
    out.extend_from_slice(&edits.head);
    let mut map: Vec<(u32, u32)> = Vec::with_capacity(n + 2);
    if head > 0 {
        map.push((0, 0));
    }
    for (i, ins) in insns.iter().enumerate() {
        if map.last().is_none_or(|m| m.1 != ins.off) {
            map.push((label[i], ins.off));
        }
        let ed = &edits.per[i];
        out.extend_from_slice(&ed.prefix);
        debug_assert_eq!(out.len() as u32, start[i]);
        let s = start[i] as i64;
        let o = ins.off as usize;
        match ins.op {
            op if is_short_branch(op) => {
                let t = label[tgt[i] as usize] as i64;
                if !wide[i] {
                    out.push(op);
                    out.extend_from_slice(&((t - s) as i16).to_be_bytes());
                } else if op == GOTO || op == JSR {
                    out.push(if op == GOTO { GOTO_W } else { JSR_W });
                    out.extend_from_slice(&((t - s) as i32).to_be_bytes());
                } else {
                    out.push(invert(op));
                    out.extend_from_slice(&8i16.to_be_bytes());
                    out.push(GOTO_W);
                    out.extend_from_slice(&((t - s - 3) as i32).to_be_bytes());
                }
            }
            GOTO_W | JSR_W => {
                let t = label[tgt[i] as usize] as i64;
                out.push(ins.op);
                out.extend_from_slice(&((t - s) as i32).to_be_bytes());
            }
            TABLESWITCH | LOOKUPSWITCH => {
                out.push(ins.op);
                while out.len() % 4 != 0 {
                    out.push(0);
                }
                let ob = (o + 4) & !3; // original aligned base
                let reloc = |rel: i32| -> i32 {
                    let ti = idx_of[(ins.off as i64 + rel as i64) as usize] as usize;
                    (label[ti] as i64 - s) as i32
                };
                let def = be32(code, ob).unwrap_or(0);
                out.extend_from_slice(&reloc(def).to_be_bytes());
                if ins.op == TABLESWITCH {
                    let lo = be32(code, ob + 4).unwrap_or(0);
                    let hi = be32(code, ob + 8).unwrap_or(0);
                    out.extend_from_slice(&lo.to_be_bytes());
                    out.extend_from_slice(&hi.to_be_bytes());
                    let cnt = (hi as i64 - lo as i64 + 1) as usize;
                    for k in 0..cnt {
                        let r = be32(code, ob + 12 + 4 * k).unwrap_or(0);
                        out.extend_from_slice(&reloc(r).to_be_bytes());
                    }
                } else {
                    let np = be32(code, ob + 4).unwrap_or(0);
                    out.extend_from_slice(&np.to_be_bytes());
                    for k in 0..np as usize {
                        let m = be32(code, ob + 8 + 8 * k).unwrap_or(0);
                        let r = be32(code, ob + 12 + 8 * k).unwrap_or(0);
                        out.extend_from_slice(&m.to_be_bytes());
                        out.extend_from_slice(&reloc(r).to_be_bytes());
                    }
                }
            }
            _ => match &ed.replace {
                Some(r) => out.extend_from_slice(r),
                None => out.extend_from_slice(&code[o..o + ins.len as usize]),
            },
        }
        out.extend_from_slice(&ed.suffix);
    }
    debug_assert_eq!(out.len() as u32, code_end);
    if let Some(t) = &edits.tail {
        out.extend_from_slice(&t.code);
        if let Some(last) = insns.last() {
            map.push((code_end, last.off));
        }
    }

    // mapping helpers
    let lab = |o: u32| -> Result<u32, String> { Ok(label[at(o as i64)?]) };
    let range_start = |o: u32| -> Result<u32, String> {
        if o == 0 {
            Ok(0)
        } else {
            lab(o)
        }
    };
    // For exception ranges, code inserted after an instruction (its suffix) belongs to what
    // follows: a range that starts right after `monitorenter` covers the `monitorEntered`
    // call, so that an exception the call throws (a StackOverflowError) reaches the handler
    // that releases the monitor, as any exception after `monitorenter` does in the original
    // code; and a range that ends right after the exception path's `monitorexit` does not
    // cover the report after it, so that the release never retries on a failed report.
    let exception_boundary = |o: u32| -> Result<u32, String> {
        if o == 0 {
            return Ok(edits.covered_from);
        }
        let i = at(o as i64)?;
        let suffix = i
            .checked_sub(1)
            .map_or(0, |p| edits.per[p].suffix.len() as u32);
        Ok(label[i] - suffix)
    };

    // ---- body ----
    let max_stack = cv.max_stack as u32 + edits.extra_stack as u32;
    let max_stack = max_stack.max(edits.min_stack as u32);
    if max_stack > 65535 {
        return Err("max_stack would exceed 65535".into());
    }
    let mut body = Vec::with_capacity(out.len() + cv.exc.len() + 256);
    put2(&mut body, max_stack);
    let max_locals = cv.max_locals as u32 + edits.extra_locals as u32;
    if max_locals > 65535 {
        return Err("max_locals would exceed 65535".into());
    }
    put2(&mut body, max_locals);
    put4(&mut body, out.len() as u32);
    body.extend_from_slice(&out);
    let guards = edits.per.iter().filter(|e| e.guard.is_some()).count();
    let nexc = cv.exc.len() / 8 + edits.tail.is_some() as usize + guards;
    put2(&mut body, nexc as u32);
    // the guards first: the JVM takes the first entry whose range covers the instruction
    for (i, e) in edits.per.iter().enumerate() {
        if let Some(g) = &e.guard {
            put2(&mut body, label[i] + g.range.0);
            put2(&mut body, label[i] + g.range.1);
            put2(&mut body, start[i] - 3);
            put2(&mut body, 0);
        }
    }
    for e in cv.exc.chunks_exact(8) {
        let s = u16::from_be_bytes([e[0], e[1]]) as u32;
        let en = u16::from_be_bytes([e[2], e[3]]) as u32;
        let h = u16::from_be_bytes([e[4], e[5]]) as u32;
        if s >= en || h as usize >= clen {
            return Err("invalid exception table entry".into());
        }
        put2(&mut body, exception_boundary(s)?);
        put2(&mut body, exception_boundary(en)?);
        put2(&mut body, lab(h)?);
        body.extend_from_slice(&e[6..8]);
    }
    if let Some(t) = &edits.tail {
        put2(
            &mut body,
            if t.after_head {
                head
            } else {
                edits.covered_from
            },
        );
        put2(&mut body, code_end);
        put2(&mut body, code_end);
        put2(&mut body, 0);
    }
    let add_smt = edits.tail.is_some() && needs_frames && !has_smt;
    put2(&mut body, (cv.attrs.len() + add_smt as usize) as u32);
    for (k, (name, b)) in kinds.iter().zip(&cv.attrs) {
        put2(&mut body, *name as u32);
        let len_pos = body.len();
        put4(&mut body, 0);
        let st = body.len();
        match k {
            Kind::Lnt => {
                let mut r = Reader::new(b, 0);
                let cnt = r.u2("n").map_err(|_| "truncated LineNumberTable")? as usize;
                if b.len() != 2 + 4 * cnt {
                    return Err("LineNumberTable length mismatch".into());
                }
                put2(&mut body, cnt as u32);
                for e in b[2..].chunks_exact(4) {
                    let pc = u16::from_be_bytes([e[0], e[1]]) as u32;
                    if pc as usize >= clen {
                        return Err("LineNumberTable entry past the code".into());
                    }
                    put2(&mut body, range_start(pc)?);
                    body.extend_from_slice(&e[2..4]);
                }
            }
            Kind::Lvt => {
                let mut r = Reader::new(b, 0);
                let cnt = r.u2("n").map_err(|_| "truncated LocalVariableTable")? as usize;
                if b.len() != 2 + 10 * cnt {
                    return Err("LocalVariable(Type)Table length mismatch".into());
                }
                put2(&mut body, cnt as u32);
                for e in b[2..].chunks_exact(10) {
                    let s = u16::from_be_bytes([e[0], e[1]]) as u32;
                    let l = u16::from_be_bytes([e[2], e[3]]) as u32;
                    let ns = range_start(s)?;
                    let ne = lab(s + l)?;
                    put2(&mut body, ns);
                    put2(&mut body, ne - ns);
                    body.extend_from_slice(&e[4..10]);
                }
            }
            Kind::TypeAnn => {
                let mut lv = Vec::new();
                let mut offs = Vec::new();
                parse_type_annotations(b, &mut lv, &mut offs)?;
                body.extend_from_slice(b);
                let (v, base) = (&mut body, st);
                for p in lv {
                    let s = be16(b, p).unwrap_or(0) as u32;
                    let l = be16(b, p + 2).unwrap_or(0) as u32;
                    let ns = range_start(s)?;
                    let ne = lab(s + l)?;
                    set2(v, base + p, ns);
                    set2(v, base + p + 2, ne - ns);
                }
                for p in offs {
                    let o = be16(b, p).unwrap_or(0) as u32;
                    let i = at(o as i64)?;
                    if i == n {
                        return Err("type annotation offset at the end of the code".into());
                    }
                    set2(v, base + p, start[i]);
                }
            }
            Kind::Smt => {
                write_frames(
                    &mut body, b, &frames, &uninit, &label, &start, &at, edits, code_end,
                )?;
            }
        }
        let l = (body.len() - st) as u32;
        body[len_pos..len_pos + 4].copy_from_slice(&l.to_be_bytes());
    }
    if add_smt {
        let name = ctx
            .smt_name
            .ok_or("no StackMapTable name in the constant pool")?;
        put2(&mut body, name as u32);
        let len_pos = body.len();
        put4(&mut body, 0);
        let st = body.len();
        write_frames(
            &mut body,
            &[],
            &[],
            &[],
            &label,
            &start,
            &at,
            edits,
            code_end,
        )?;
        let l = (body.len() - st) as u32;
        body[len_pos..len_pos + 4].copy_from_slice(&l.to_be_bytes());
    }
    Ok(NewCode {
        body,
        map,
        new_len: out.len() as u32,
        old_len: clen as u32,
    })
}

pub(crate) fn switch_targets(code: &[u8], ins: &Insn) -> Vec<i32> {
    let o = ins.off as usize;
    let ob = (o + 4) & !3;
    let mut v = vec![be32(code, ob).unwrap_or(0)];
    if ins.op == TABLESWITCH {
        let lo = be32(code, ob + 4).unwrap_or(0);
        let hi = be32(code, ob + 8).unwrap_or(0);
        for k in 0..(hi as i64 - lo as i64 + 1) as usize {
            v.push(be32(code, ob + 12 + 4 * k).unwrap_or(0));
        }
    } else {
        let np = be32(code, ob + 4).unwrap_or(0);
        for k in 0..np as usize {
            v.push(be32(code, ob + 12 + 8 * k).unwrap_or(0));
        }
    }
    v
}

/// Whether the type state after the conditional branch `insns[i]` (at its
/// fall-through) is exactly that of the last stack map frame at or before it
/// (or of the method's implicit first frame): that frame has an empty stack,
/// and the straight-line code from it to the branch stores no local, does not
/// initialize an object, calls no subroutine, and leaves the operand stack as
/// empty as it found it (whatever it pushes, the branch and the instructions
/// before it consume). Then a `same_frame` at the fall-through is exact.
/// javac's loops (`i < n`, `it.hasNext()` at the loop head, which has a frame)
/// are this case.
fn falls_through_unchanged(
    code: &[u8],
    insns: &[Insn],
    i: usize,
    frames: &[Frame],
    smt: &[u8],
    ctx: &CodeCtx,
    at: &dyn Fn(i64) -> Result<usize, String>,
) -> bool {
    let off = insns[i].off;
    let k = frames.partition_point(|f| f.off <= off);
    let from = if k == 0 {
        0
    } else {
        let f = &frames[k - 1];
        let mut depths = Vec::new();
        if stack::frame_depths(smt, &mut depths).is_none()
            || depths.iter().find(|(o, _)| *o == f.off).map(|d| d.1) != Some(0)
        {
            return false;
        }
        match at(f.off as i64) {
            Ok(j) => j,
            Err(_) => return false,
        }
    };
    let mut depth: i64 = 0;
    for ins in &insns[from..=i] {
        let stores = match ins.op {
            0x36..=0x4e | JSR | JSR_W => true,
            WIDE => !matches!(code.get(ins.off as usize + 1), Some(0x15..=0x19 | 0x84)),
            0xb7 => be16(code, ins.off as usize + 1)
                .and_then(|i| ctx.pool.member_name_and_type(i))
                .is_none_or(|(name, _)| name.first() == Some(&b'<')),
            _ => false,
        };
        let Some((pop, push, true)) = stack::effect(code, ins, ctx.pool) else {
            return false;
        };
        if stores {
            return false;
        }
        depth -= pop as i64;
        if depth < 0 {
            return false;
        }
        depth += push as i64;
    }
    depth == 0
}

#[allow(clippy::too_many_arguments)]
fn write_frames(
    body: &mut Vec<u8>,
    b: &[u8],
    frames: &[Frame],
    uninit: &[usize],
    label: &[u32],
    start: &[u32],
    at: &dyn Fn(i64) -> Result<usize, String>,
    edits: &MethodEdits,
    code_end: u32,
) -> Result<(), String> {
    let n = start.len();
    let guarded = |i: usize| edits.per[i].guard.as_ref().filter(|g| !g.item.is_empty());
    let mut count = frames.len() + edits.tail.is_some() as usize;
    for f in frames {
        let i = at(f.off as i64)?;
        if i < n && guarded(i).is_some() {
            count += 2;
        }
    }
    if count > 65535 {
        return Err("too many stack map frames".into());
    }
    put2(body, count as u32);
    let mut prev: i64 = -1;
    let mut ui = 0;
    for f in frames {
        let i = at(f.off as i64)?;
        if i == n {
            return Err("stack map frame at the end of the code".into());
        }
        let no = label[i] as i64;
        let delta = (no - prev - 1) as u32;
        prev = no;
        match f.ft {
            0..=63 | 251 => {
                if delta < 64 {
                    body.push(delta as u8);
                } else {
                    body.push(251);
                    put2(body, delta);
                }
            }
            64..=127 | 247 => {
                if delta < 64 {
                    body.push(64 + delta as u8);
                } else {
                    body.push(247);
                    put2(body, delta);
                }
            }
            ft => {
                body.push(ft);
                put2(body, delta);
            }
        }
        let bs = body.len();
        body.extend_from_slice(&b[f.body.0..f.body.1]);
        while ui < uninit.len() && uninit[ui] < f.body.1 {
            let p = uninit[ui];
            let o = be16(b, p).unwrap_or(0);
            let j = at(o as i64)?;
            if j == n {
                return Err("Uninitialized offset at the end of the code".into());
            }
            set2(body, bs + (p - f.body.0), start[j]);
            ui += 1;
        }
        if let Some(g) = guarded(i) {
            // same_locals_1_stack_item at the guard's handler (the `goto` before the guarded
            // instruction) and at the guarded instruction, after its prefix
            for no in [start[i] as i64 - 3, start[i] as i64] {
                let delta = (no - prev - 1) as u32;
                prev = no;
                if delta < 64 {
                    body.push(64 + delta as u8);
                } else {
                    body.push(247);
                    put2(body, delta);
                }
                body.extend_from_slice(&g.item);
            }
        }
    }
    if let Some(t) = &edits.tail {
        let delta = (code_end as i64 - prev - 1) as u32;
        body.push(255);
        put2(body, delta);
        body.extend_from_slice(&t.frame_body);
    }
    Ok(())
}
