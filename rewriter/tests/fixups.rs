//! Unit tests of every offset fix-up on hand-made classes; each output is
//! re-parsed with cafebabe as an independent check.

mod common;
use common::*;
use orca_rewriter::{rewrite, Config, Outcome};

const ACC_STATIC: u16 = 0x0008;
const ACC_SYNC: u16 = 0x0020;

fn invokestatic_of(ops: &[(usize, String)], at: usize) -> String {
    ops.iter()
        .find(|o| o.0 == at)
        .map(|o| o.1.clone())
        .unwrap_or_default()
}

/// javac's synchronized block: monitorenter, try range, handler with the
/// exception-path monitorexit.
#[test]
fn monitor_block_all_tables() {
    let mut b = ClassBuilder::new("t/Block", 52);
    let this = b.this_index();
    let obj = b.class("java/lang/Object");
    let thr = b.class("java/lang/Throwable");
    let code = vec![
        0x2b, 0x59, 0x4d, 0xc2, // aload_1 dup astore_2 monitorenter
        0x2c, 0xc3, // 4: aload_2 monitorexit
        0xa7, 0x00, 0x08, // 6: goto 14
        0x4e, 0x2c, 0xc3, // 9: astore_3 aload_2 monitorexit
        0x2d, 0xbf, // 12: aload_3 athrow
        0xb1, // 14: return
    ];
    let mut smt = be(&[2]);
    smt.push(255);
    smt.extend(be(&[9, 3]));
    smt.push(7);
    smt.extend(be(&[this]));
    smt.push(7);
    smt.extend(be(&[obj]));
    smt.push(7);
    smt.extend(be(&[obj]));
    smt.extend(be(&[1]));
    smt.push(7);
    smt.extend(be(&[thr]));
    smt.push(4); // same_frame at 14
    let lnt = be(&[4, 0, 10, 4, 11, 9, 12, 14, 13]);
    let n_this = b.utf8("this");
    let d_this = b.utf8("Lt/Block;");
    let lvt = be(&[1, 0, 15, n_this, d_this, 0]);
    b.method(
        0,
        "f",
        "(Ljava/lang/Object;)V",
        Some(Code {
            max_stack: 2,
            max_locals: 4,
            code,
            exc: vec![(4, 6, 9, 0), (9, 12, 9, 0)],
            attrs: vec![
                ("StackMapTable", smt),
                ("LineNumberTable", lnt),
                ("LocalVariableTable", lvt),
            ],
        }),
    );
    let input = b.build();
    let (out, maps, notes) = changed(&input);
    assert!(notes.is_empty());
    jvm_same_outcome(&[("t/Block", &input, &out)]);
    let p = reparse(&out, "f");
    assert_eq!(p.code.len(), 37);
    assert_eq!(&p.code[0..4], &[0x2b, 0x59, 0x4d, 0x59]); // dup before monitorenter
    assert_eq!(p.code[7], 0x5f); // swap: monitorEnter's result under the monitor
    assert_eq!(p.code[8], 0xc2);
    assert_eq!(p.code[17], 0xc3);
    // The exception path reports at its handler's head, before the release: `aload_2;
    // invokestatic` (the monitor from the local the release loads it from), then javac's
    // `astore_3; aload_2; monitorexit`, after `goto 31` over the guard's handler `goto 31`
    // (a handler only an exception reaches: C1 compiles no method whose handler is also
    // fallen into).
    assert_eq!(&p.code[21..23], &[0x2c, 0xb8]);
    assert_eq!(&p.code[25..31], &[0xa7, 0, 6, 0xa7, 0, 3]);
    assert_eq!(&p.code[31..36], &[0x4e, 0x2c, 0xc3, 0x2d, 0xbf]);
    assert_eq!(&p.code[18..21], &[0xa7, 0x00, 18]); // goto 36
    assert_eq!(p.code[36], 0xb1);
    // The report's call has a range of its own, first, whose handler goes on to the rest of
    // the path (a failed call goes on to the release, never back to the head); the body's range
    // starts at the monitorEntered call (9), so an exception it throws is handled; the
    // handler's own range covers the report and the release.
    assert_eq!(
        p.exc,
        vec![(22, 25, 28, None), (9, 18, 21, None), (21, 34, 21, None)]
    );
    assert_eq!(p.frames, vec![21, 28, 31, 36]);
    assert_eq!(p.lines, vec![(0, 10), (12, 11), (21, 12), (36, 13)]);
    assert_eq!(p.lvt, vec![(0, 37, "this".to_string())]);
    // [o] dup invokestatic swap -> [rec, o]: one more than the original's 2
    assert_eq!(p.max_stack, 3);
    let ops = ops(&out, "f");
    assert!(invokestatic_of(&ops, 4).contains("monitorEnter"));
    assert!(invokestatic_of(&ops, 9).contains("monitorEntered"));
    assert!(invokestatic_of(&ops, 14).contains("monitorExit"));
    assert!(invokestatic_of(&ops, 22).contains("monitorExit"));
    let m = &maps[0];
    assert_eq!(
        (m.name.as_str(), m.descriptor.as_str()),
        ("f", "(Ljava/lang/Object;)V")
    );
    for (new, old) in [
        (0, 0),
        (2, 2),
        (3, 3),
        (8, 3),
        (9, 3),
        (11, 3),
        (12, 4),
        (13, 5),
        (17, 5),
        (18, 6),
        (21, 9),
        (25, 9),
        (28, 9),
        (31, 9),
        (32, 10),
        (33, 11),
        (34, 12),
        (36, 14),
    ] {
        assert_eq!(m.original(new), Some(old), "new offset {new}");
    }
    assert_eq!(m.original(37), None);
}

/// An exception path that is not javac's straight `astore; aload; monitorexit` (here a
/// `checkcast` before the release) is reported after the release, outside its range: the
/// head of its handler cannot be shown to hold the monitor in the local it loads.
#[test]
fn other_exception_paths_report_after_the_release() {
    let mut b = ClassBuilder::new("t/Other", 52);
    let this = b.this_index();
    let obj = b.class("java/lang/Object");
    let thr = b.class("java/lang/Throwable");
    let o = obj.to_be_bytes();
    let code = vec![
        0x2b, 0x59, 0x4d, 0xc2, // aload_1 dup astore_2 monitorenter
        0x2c, 0xc3, // 4: aload_2 monitorexit
        0xa7, 0x00, 0x0b, // 6: goto 17
        0x4e, 0x2c, 0xc0, o[0], o[1], 0xc3, // 9: astore_3 aload_2 checkcast monitorexit
        0x2d, 0xbf, // 15: aload_3 athrow
        0xb1, // 17: return
    ];
    let mut smt = be(&[2]);
    smt.push(255);
    smt.extend(be(&[9, 3]));
    smt.push(7);
    smt.extend(be(&[this]));
    smt.push(7);
    smt.extend(be(&[obj]));
    smt.push(7);
    smt.extend(be(&[obj]));
    smt.extend(be(&[1]));
    smt.push(7);
    smt.extend(be(&[thr]));
    smt.push(7); // same_frame at 17
    b.method(
        0,
        "f",
        "(Ljava/lang/Object;)V",
        Some(Code {
            max_stack: 2,
            max_locals: 4,
            code,
            exc: vec![(4, 6, 9, 0), (9, 15, 9, 0)],
            attrs: vec![("StackMapTable", smt)],
        }),
    );
    let input = b.build();
    let (out, _, notes) = changed(&input);
    assert!(notes.is_empty());
    jvm_same_outcome(&[("t/Other", &input, &out)]);
    let p = reparse(&out, "f");
    // 21: astore_3 aload_2 checkcast, 26: dup monitorexit invokestatic, 31: aload_3 athrow
    assert_eq!(&p.code[21..26], &[0x4e, 0x2c, 0xc0, o[0], o[1]]);
    assert_eq!(&p.code[26..29], &[0x59, 0xc3, 0xb8]);
    assert_eq!(p.exc, vec![(9, 18, 21, None), (21, 28, 21, None)]);
    assert_eq!(p.frames, vec![21, 33]);
}

/// An exception range that starts at an instrumented instruction includes the
/// code inserted in front of it; one that ends there excludes it.
#[test]
fn handler_range_starts_at_instrumented_instruction() {
    let mut b = ClassBuilder::new("t/Range", 49);
    let code = vec![
        0x2b, 0xc2, // 0: aload_1 monitorenter
        0x2b, 0xc3, // 2: aload_1 monitorexit
        0xb1, // 4: return
        0x4c, 0x2b, 0xc3, 0xb1, // 5: astore_1 aload_1 monitorexit return
    ];
    b.method(
        0,
        "g",
        "(Ljava/lang/Object;)V",
        Some(Code {
            max_stack: 1,
            max_locals: 2,
            code,
            exc: vec![(1, 3, 5, 0)],
            attrs: vec![],
        }),
    );
    let (out, _, _) = changed(&b.build());
    let p = reparse(&out, "g");
    // 0 aload_1, 1..6 prefix, 6 monitorenter, 7..10 suffix, 10 aload_1, 11..15 prefix, 15 monitorexit, 16 return
    // 17 astore_1, 18 aload_1, 19..23 prefix, 23 monitorexit, 24 return
    assert_eq!(p.code[6], 0xc2);
    assert_eq!(p.code[15], 0xc3);
    assert_eq!(p.exc, vec![(1, 11, 17, None)]);
    assert_eq!(p.code.len(), 25);
}

fn widening_class(k: usize, with_fallthrough_frame: bool) -> Vec<u8> {
    widening_class_after(&[], k, with_fallthrough_frame)
}

/// `head; iload_0; ifeq L; aload_1; monitorenter; aload_1; monitorexit; nop * k; L: return`,
/// with a frame at L (and, when asked and `head` is empty, at the fall-through of the ifeq).
fn widening_class_after(head: &[u8], k: usize, with_fallthrough_frame: bool) -> Vec<u8> {
    let mut b = ClassBuilder::new("t/Wide", 52);
    let mut code = head.to_vec();
    let br = code.len() + 1;
    code.extend([0x1a, 0x99, 0, 0, 0x2b, 0xc2, 0x2b, 0xc3]);
    code.extend(std::iter::repeat_n(0u8, k));
    let l = code.len() as u16;
    code[br + 1..br + 3].copy_from_slice(&(l - br as u16).to_be_bytes());
    code.push(0xb1);
    let mut smt = Vec::new();
    if with_fallthrough_frame {
        assert!(head.is_empty());
        smt.extend(be(&[2]));
        smt.push(4); // same at 4
        smt.push(251);
        smt.extend(be(&[l - 4 - 1]));
    } else {
        smt.extend(be(&[1]));
        smt.push(251);
        smt.extend(be(&[l]));
    }
    b.method(
        ACC_STATIC,
        "w",
        "(ILjava/lang/Object;)V",
        Some(Code {
            max_stack: 1,
            max_locals: 2,
            code,
            exc: vec![],
            attrs: vec![("StackMapTable", smt)],
        }),
    );
    b.build()
}

/// A conditional branch that no longer reaches becomes `ifne +8; goto_w`.
#[test]
fn conditional_branch_widening_near_32k() {
    let k = 32753; // target at 32761: reaches before, not after +12 bytes
    let input = widening_class(k, true);
    let (out, maps, _) = changed(&input);
    let summary = jvm_same_outcome(&[("t/Wide", &input, &out)]);
    assert!(summary.is_none_or(|s| s.contains("bothOK=1")));
    let p = reparse(&out, "w");
    assert_eq!(&p.code[1..4], &[0x9a, 0x00, 0x08]); // ifne +8
    assert_eq!(p.code[4], 0xc8); // goto_w
    let target = 32761 + 12 + 5;
    let off = i32::from_be_bytes([p.code[5], p.code[6], p.code[7], p.code[8]]);
    assert_eq!(4 + off, target as i32);
    assert_eq!(p.code[target], 0xb1);
    assert_eq!(p.frames, vec![9, target as u16]);
    assert_eq!(maps[0].original(4), Some(1));
    assert_eq!(maps[0].original(9), Some(4));
    // just below the limit: no widening
    let (out, _, _) = changed(&widening_class(32753 - 13, true));
    let p = reparse(&out, "w");
    assert_eq!(p.code[1], 0x99);
}

/// Without a frame at the fall-through, one is added when the state there is
/// provably that of the frame before the branch (here the implicit first
/// frame: `iload_0; ifeq` leaves the stack as it found it and stores nothing).
#[test]
fn widening_adds_a_fallthrough_frame_when_the_state_is_unchanged() {
    let input = widening_class(32753, false);
    let (out, _, _) = changed(&input);
    let summary = jvm_same_outcome(&[("t/Wide", &input, &out)]);
    assert!(
        summary.as_ref().is_none_or(|s| s.contains("bothOK=1")),
        "{summary:?}"
    );
    let p = reparse(&out, "w");
    assert_eq!(&p.code[1..4], &[0x9a, 0x00, 0x08]); // ifne +8
    assert_eq!(p.code[4], 0xc8); // goto_w
    let target = 32761 + 12 + 5;
    assert_eq!(p.frames, vec![9, target as u16]);
}

/// When the state at the fall-through cannot be proved (a local is stored
/// between the last frame and the branch), the method is left unchanged with a
/// note.
#[test]
fn widening_without_a_provable_fallthrough_frame_is_refused() {
    // iconst_0; istore_0 before the branch: a local is stored since the implicit first frame
    let input = widening_class_after(&[0x03, 0x3b], 32753, false);
    match rewrite(&input, &Config::default()).unwrap() {
        Outcome::Unchanged { notes } => {
            assert_eq!(notes.len(), 1);
            assert!(notes[0].reason.contains("widened"), "{}", notes[0].reason);
        }
        o => panic!("{o:?}"),
    }
}

/// A backward goto that no longer reaches becomes goto_w.
#[test]
fn goto_widening_backward() {
    let mut b = ClassBuilder::new("t/Back", 52);
    let mut code = vec![0x2b, 0xc2, 0x2b, 0xc3];
    code.extend(std::iter::repeat_n(0u8, 32760));
    let at = code.len();
    code.push(0xa7);
    code.extend_from_slice(&(-(at as i32) as i16).to_be_bytes());
    let smt = vec![0, 1, 0]; // same_frame at 0
    b.method(
        ACC_STATIC,
        "g",
        "(ILjava/lang/Object;)V",
        Some(Code {
            max_stack: 1,
            max_locals: 2,
            code,
            exc: vec![],
            attrs: vec![("StackMapTable", smt)],
        }),
    );
    let input = b.build();
    let (out, _, _) = changed(&input);
    assert!(jvm_same_outcome(&[("t/Back", &input, &out)]).is_none_or(|s| s.contains("bothOK=1")));
    let p = reparse(&out, "g");
    let g = at + 12;
    assert_eq!(p.code[g], 0xc8);
    let off = i32::from_be_bytes([p.code[g + 1], p.code[g + 2], p.code[g + 3], p.code[g + 4]]);
    assert_eq!(off, -(g as i32));
    assert_eq!(p.code.len(), g + 5);
}

fn switch_targets(code: &[u8], at: usize) -> (usize, Vec<usize>) {
    let base = (at + 4) & !3;
    let rd = |p: usize| i32::from_be_bytes([code[p], code[p + 1], code[p + 2], code[p + 3]]);
    let mut t = vec![(at as i32 + rd(base)) as usize];
    if code[at] == 0xaa {
        let (lo, hi) = (rd(base + 4), rd(base + 8));
        for k in 0..=(hi - lo) as usize {
            t.push((at as i32 + rd(base + 12 + 4 * k)) as usize);
        }
    } else {
        for k in 0..rd(base + 4) as usize {
            t.push((at as i32 + rd(base + 12 + 8 * k)) as usize);
        }
    }
    (base - at - 1, t)
}

/// A switch whose padding changes (5 bytes inserted in front of it by a
/// static synchronized method's entry code), frames promoted and the
/// catch-all handler appended with its frame.
#[test]
fn switch_padding_changes_in_static_synchronized_method() {
    for op in [0xaa_u8, 0xab] {
        let mut b = ClassBuilder::new("t/Sw", 52);
        let mut code = vec![0x1a, op, 0, 0]; // iload_0, switch at 1, pad 2
        let rel = |t: i32| (t - 1).to_be_bytes();
        let (c0, c1, d) = if op == 0xaa {
            (24, 26, 28)
        } else {
            (28, 30, 32)
        };
        code.extend_from_slice(&rel(d));
        if op == 0xaa {
            code.extend_from_slice(&0i32.to_be_bytes());
            code.extend_from_slice(&1i32.to_be_bytes());
            code.extend_from_slice(&rel(c0));
            code.extend_from_slice(&rel(c1));
        } else {
            code.extend_from_slice(&2i32.to_be_bytes());
            code.extend_from_slice(&0i32.to_be_bytes());
            code.extend_from_slice(&rel(c0));
            code.extend_from_slice(&7i32.to_be_bytes());
            code.extend_from_slice(&rel(c1));
        }
        assert_eq!(code.len(), c0 as usize);
        code.extend_from_slice(&[0x03, 0xac, 0x04, 0xac, 0x02, 0xac]);
        let smt = vec![0, 3, c0 as u8, 1, 1];
        let lnt = be(&[1, 0, 5]);
        b.method(
            ACC_STATIC | ACC_SYNC,
            "s",
            "(I)I",
            Some(Code {
                max_stack: 1,
                max_locals: 1,
                code,
                exc: vec![],
                attrs: vec![("StackMapTable", smt), ("LineNumberTable", lnt)],
            }),
        );
        let input = b.build();
        let (out, maps, _) = changed(&input);
        assert!(jvm_same_outcome(&[("t/Sw", &input, &out)]).is_none_or(|s| s.contains("bothOK=1")));
        let p = reparse(&out, "s");
        assert_eq!(p.code[0], 0x12); // ldc class
        assert_eq!(p.code[6], op);
        let (pad, t) = switch_targets(&p.code, 6);
        assert_eq!(pad, 1, "padding must change from 2 to 1");
        let m = &maps[0];
        let want: Vec<u32> = vec![d as u32, c0 as u32, c1 as u32];
        let got: Vec<u32> = t.iter().map(|&x| m.original(x as u32).unwrap()).collect();
        assert_eq!(got, want);
        // every target is an iconst of a case body
        for &x in &t {
            assert!([0x02, 0x03, 0x04].contains(&p.code[x]));
        }
        // frames: three targets + the appended handler
        assert_eq!(p.frames.len(), 4);
        assert_eq!(&p.frames[..3], &[t[1] as u16, t[2] as u16, t[0] as u16]);
        let (s, e, h, ty) = p.exc[0].clone();
        assert_eq!((s, ty), (0, None));
        assert_eq!(e, h);
        assert_eq!(*p.frames.last().unwrap(), h);
        assert_eq!(
            &p.code[h as usize..],
            &[
                0x12,
                p.code[1],
                0xb8,
                p.code[h as usize + 3],
                p.code[h as usize + 4],
                0xbf
            ]
        );
        assert_eq!(p.lines, vec![(0, 5)]);
        assert!(p.max_stack >= 2);
    }
}

/// Uninitialized(offset) in frames follows the `new` instruction.
#[test]
fn uninitialized_frames_are_remapped() {
    let mut b = ClassBuilder::new("t/Un", 52);
    let c = b.class("t/C");
    let obj = b.class("java/lang/Object");
    let init = b.method_ref("t/C", "<init>", "(Z)V");
    let cb = c.to_be_bytes();
    let ib = init.to_be_bytes();
    let code = vec![
        0x2a, 0xc2, // aload_0 monitorenter
        0xbb, cb[0], cb[1], // 2: new
        0x59, 0x1b, // 5: dup iload_1
        0x99, 0x00, 0x07, // 7: ifeq 14
        0x04, 0xa7, 0x00, 0x04, // 10: iconst_1 goto 15
        0x03, // 14: iconst_0
        0xb7, ib[0], ib[1], // 15: invokespecial
        0x4d, 0x2a, 0xc3, 0xb1, // 18: astore_2 aload_0 monitorexit return
    ];
    let mut smt = be(&[2]);
    for (delta, int_on_stack) in [(14u16, false), (0u16, true)] {
        smt.push(255);
        smt.extend(be(&[delta, 2]));
        smt.push(7);
        smt.extend(be(&[obj]));
        smt.push(1);
        smt.extend(be(&[if int_on_stack { 3 } else { 2 }]));
        smt.push(8);
        smt.extend(be(&[2]));
        smt.push(8);
        smt.extend(be(&[2]));
        if int_on_stack {
            smt.push(1);
        }
    }
    b.method(
        ACC_STATIC,
        "u",
        "(Ljava/lang/Object;Z)V",
        Some(Code {
            max_stack: 4,
            max_locals: 3,
            code,
            exc: vec![],
            attrs: vec![("StackMapTable", smt)],
        }),
    );
    let input = b.build();
    let (out, _, _) = changed(&input);
    jvm_same_outcome(&[("t/Un", &input, &out)]);
    let p = reparse(&out, "u");
    assert_eq!(p.code[10], 0xbb);
    assert_eq!(p.uninit, vec![10, 10, 10, 10]);
    assert_eq!(p.frames, vec![22, 23]);
}

/// Synchronized instance method: entered at entry (not re-run by a branch
/// back to 0), exit before every return and in an appended catch-all handler.
#[test]
fn synchronized_instance_method() {
    let mut b = ClassBuilder::new("t/S", 52);
    let code = vec![0x1b, 0x99, 0x00, 0x05, 0x04, 0xac, 0x03, 0xac];
    let smt = vec![0, 1, 6];
    let lnt = be(&[2, 0, 1, 6, 2]);
    b.method(
        ACC_SYNC,
        "m",
        "(I)I",
        Some(Code {
            max_stack: 1,
            max_locals: 2,
            code,
            exc: vec![],
            attrs: vec![("StackMapTable", smt), ("LineNumberTable", lnt)],
        }),
    );
    let code = vec![0x1b, 0x9a, 0xff, 0xff, 0xb1];
    let smt = vec![0, 1, 0];
    b.method(
        ACC_SYNC,
        "loop",
        "(I)V",
        Some(Code {
            max_stack: 1,
            max_locals: 2,
            code,
            exc: vec![],
            attrs: vec![("StackMapTable", smt)],
        }),
    );
    let input = b.build();
    let (out, maps, _) = changed(&input);
    assert!(jvm_same_outcome(&[("t/S", &input, &out)]).is_none_or(|s| s.contains("bothOK=1")));
    let p = reparse(&out, "m");
    assert_eq!(p.code.len(), 25);
    assert_eq!(p.code[0], 0x2a);
    assert_eq!(&p.code[5..8], &[0x99, 0x00, 9]);
    assert_eq!(p.exc, vec![(0, 20, 20, None)]);
    assert_eq!(p.frames, vec![14, 20]);
    assert_eq!(p.lines, vec![(0, 1), (14, 2)]);
    assert_eq!(p.max_stack, 2);
    let o = ops(&out, "m");
    assert!(invokestatic_of(&o, 1).contains("syncEntered"));
    assert!(invokestatic_of(&o, 10).contains("monitorExit"));
    assert!(invokestatic_of(&o, 21).contains("monitorExit"));
    assert_eq!(maps[0].original(0), Some(0));
    assert_eq!(maps[0].original(21), Some(7));
    let p = reparse(&out, "loop");
    // head 4 bytes, then iload_1 at 4, ifne back to 4 (not 0)
    assert_eq!(&p.code[5..8], &[0x9a, 0xff, 0xff]);
    assert_eq!(p.frames, vec![4, 13]);
}

/// Config::hash_at_birth: a constructor of a class with a `synchronized` instance method hashes
/// `this` before each of its returns (its line and original bci stay the return's); a class
/// whose only `synchronized` method is static keeps its constructor, and so does every class
/// without the option.
#[test]
fn constructors_of_classes_with_synchronized_methods_hash_this() {
    let build = |sync_access: u16| {
        let mut b = ClassBuilder::new("t/Born", 52);
        let sup = b
            .method_ref("java/lang/Object", "<init>", "()V")
            .to_be_bytes();
        // aload_0 invokespecial Object.<init>; iload_1 ifeq +4; return; return
        let code = vec![
            0x2a, 0xb7, sup[0], sup[1], 0x1b, 0x99, 0x00, 0x04, 0xb1, 0xb1,
        ];
        // full_frame at 9: `this` initialized (the implicit first frame has it uninitialized)
        let this = b.this_index();
        let mut smt_all = be(&[1]);
        smt_all.push(255);
        smt_all.extend(be(&[9, 2]));
        smt_all.push(7);
        smt_all.extend(be(&[this]));
        smt_all.push(1);
        smt_all.extend(be(&[0]));
        b.method(
            0,
            "<init>",
            "(Z)V",
            Some(Code {
                max_stack: 1,
                max_locals: 2,
                code,
                exc: vec![],
                attrs: vec![
                    ("StackMapTable", smt_all),
                    ("LineNumberTable", be(&[2, 0, 1, 8, 2])),
                ],
            }),
        );
        b.method(
            sync_access,
            "inc",
            "()V",
            Some(Code {
                max_stack: 0,
                max_locals: 1,
                code: vec![0xb1],
                exc: vec![],
                attrs: vec![],
            }),
        );
        b.build()
    };
    let on = Config {
        hash_at_birth: true,
        ..Config::default()
    };
    let input = build(ACC_SYNC);
    let (out, maps) = rewritten(&input, &on);
    assert!(jvm_same_outcome(&[("t/Born", &input, &out)]).is_none_or(|s| s.contains("bothOK=1")));
    let p = reparse(&out, "<init>");
    let o = ops(&out, "<init>");
    // 8: aload_0 invokestatic pop return; 14: the same
    for at in [8, 14] {
        assert_eq!(p.code[at], 0x2a, "{o:#?}");
        assert!(
            invokestatic_of(&o, at + 1).contains("identityHashCode"),
            "{o:#?}"
        );
        assert_eq!(&p.code[at + 4..at + 6], &[0x57, 0xb1]);
    }
    assert_eq!(
        p.frames,
        vec![14],
        "the branch's frame moved with its target"
    );
    assert_eq!(p.lines, vec![(0, 1), (8, 2)]);
    assert_eq!(
        p.max_stack, 2,
        "the original's plus the inserted code's own"
    );
    let init = maps.iter().find(|m| m.name == "<init>").unwrap();
    assert_eq!((init.original(12), init.original(18)), (Some(8), Some(9)));
    // a static synchronized method does not lock instances
    let (out, _) = rewritten(&build(ACC_SYNC | ACC_STATIC), &on);
    assert_eq!(reparse(&out, "<init>").code.len(), 10);
    // off by default
    let (out, _, _) = changed(&input);
    assert_eq!(reparse(&out, "<init>").code.len(), 10);
}

/// Below version 49 a static synchronized method loads its class with Class.forName.
#[test]
fn synchronized_static_old_version_uses_class_for_name() {
    let mut b = ClassBuilder::new("t/Old", 48);
    b.method(
        ACC_STATIC | ACC_SYNC,
        "s",
        "()V",
        Some(Code {
            max_stack: 0,
            max_locals: 0,
            code: vec![0xb1],
            exc: vec![],
            attrs: vec![],
        }),
    );
    let (out, _, _) = changed(&b.build());
    let o = ops(&out, "s");
    assert!(
        o[0].1.contains("Ldc") && o[0].1.contains("t.Old"),
        "{:?}",
        o[0]
    );
    assert!(o[1].1.contains("forName"));
    let p = reparse(&out, "s");
    assert!(p.frames.is_empty());
    assert_eq!(p.exc.len(), 1);
}

/// A synchronized method that stores into slot 0 is left unchanged with a note.
#[test]
fn synchronized_method_storing_slot0_is_refused() {
    let mut b = ClassBuilder::new("t/S0", 52);
    b.method(
        ACC_SYNC,
        "m",
        "()V",
        Some(Code {
            max_stack: 1,
            max_locals: 1,
            code: vec![0x01, 0x4b, 0xb1],
            exc: vec![],
            attrs: vec![],
        }),
    );
    match rewrite(&b.build(), &Config::default()).unwrap() {
        Outcome::Unchanged { notes } => assert!(notes[0].reason.contains("local 0")),
        o => panic!("{o:?}"),
    }
}

/// Call sites: Object methods whatever the owner (invokeinterface shrinks to
/// invokestatic), Thread exact owner redirected, Thread subclass owner
/// bracketed, invokespecial never touched.
#[test]
fn call_sites() {
    let mut b = ClassBuilder::new("t/Calls", 52);
    let wait = b.method_ref("java/lang/Object", "wait", "(J)V");
    let notify_i = b.imethod_ref("t/Iface", "notify", "()V");
    let wait_special = b.method_ref("java/lang/Object", "wait", "()V");
    let start = b.method_ref("java/lang/Thread", "start", "()V");
    let mystart = b.method_ref("t/MyThread", "start", "()V");
    let sleep = b.method_ref("java/lang/Thread", "sleep", "(J)V");
    let tryacq = b.method_ref(
        "java/util/concurrent/Semaphore",
        "tryAcquire",
        "(JLjava/util/concurrent/TimeUnit;)Z",
    );
    let other = b.method_ref("t/Other", "release", "()V");
    let h = |i: u16| i.to_be_bytes();
    let mut code = vec![0x2a, 0x09, 0xb6, h(wait)[0], h(wait)[1]]; // 0: aload_0 lconst_0 invokevirtual wait(J)
    code.extend_from_slice(&[0x2a, 0xb9, h(notify_i)[0], h(notify_i)[1], 1, 0]); // 5: invokeinterface
    code.extend_from_slice(&[0x2a, 0xb7, h(wait_special)[0], h(wait_special)[1]]); // 11: invokespecial
    code.extend_from_slice(&[0x2a, 0xb6, h(start)[0], h(start)[1]]); // 15
    code.extend_from_slice(&[0x2a, 0xb6, h(mystart)[0], h(mystart)[1]]); // 19
    code.extend_from_slice(&[0x09, 0xb8, h(sleep)[0], h(sleep)[1]]); // 23
    code.extend_from_slice(&[0x2a, 0x09, 0x01, 0xb6, h(tryacq)[0], h(tryacq)[1], 0x57]); // 27
    code.extend_from_slice(&[0x2a, 0xb6, h(other)[0], h(other)[1]]); // 34
    code.push(0xb1); // 38
    b.method(
        0,
        "c",
        "()V",
        Some(Code {
            max_stack: 4,
            max_locals: 1,
            code,
            exc: vec![],
            attrs: vec![],
        }),
    );
    let (out, maps, _) = changed(&b.build());
    let o = ops(&out, "c");
    let text: Vec<String> = o.iter().map(|x| format!("{} {}", x.0, x.1)).collect();
    let find = |s: &str| text.iter().any(|t| t.contains(s));
    assert!(find("objectWait"), "{text:#?}");
    assert!(find("objectNotify"));
    assert!(
        text.iter().any(|t| t.starts_with("10 Invokespecial")),
        "{text:#?}"
    );
    assert!(find("threadStart\""));
    assert!(find("threadStarting"));
    assert!(find("threadSleep"));
    assert!(find("semaphoreTryAcquire"));
    assert!(text
        .iter()
        .any(|t| t.contains("Invokevirtual") && t.contains("t/Other")));
    assert!(!find("Invokeinterface"));
    // invokeinterface (5 bytes) became invokestatic (3 bytes): later offsets shift by -2
    assert_eq!(maps[0].original(9), Some(11));
    assert_eq!(reparse(&out, "c").max_stack, 5);
}

/// Switching a transformation off, filters and the tracker class.
#[test]
fn config_switches_and_filters() {
    let mut b = ClassBuilder::new("t/Cfg", 52);
    b.method(
        ACC_STATIC,
        "m",
        "(Ljava/lang/Object;)V",
        Some(Code {
            max_stack: 1,
            max_locals: 1,
            code: vec![0x2a, 0xc2, 0x2a, 0xc3, 0xb1],
            exc: vec![],
            attrs: vec![],
        }),
    );
    let bytes = b.build();
    let off = Config {
        monitors: false,
        ..Config::default()
    };
    assert!(matches!(
        rewrite(&bytes, &off).unwrap(),
        Outcome::Unchanged { .. }
    ));
    let ex = Config {
        exclude: vec!["t/".into()],
        ..Config::default()
    };
    assert!(matches!(rewrite(&bytes, &ex).unwrap(), Outcome::Excluded));
    let inc = Config {
        include: vec!["u/".into()],
        ..Config::default()
    };
    assert!(matches!(rewrite(&bytes, &inc).unwrap(), Outcome::Excluded));
    let tr = Config {
        tracker_class: "t/Cfg".into(),
        ..Config::default()
    };
    assert!(matches!(rewrite(&bytes, &tr).unwrap(), Outcome::Excluded));
    assert!(matches!(
        rewrite(&bytes, &Config::default()).unwrap(),
        Outcome::Changed { .. }
    ));
}

/// Every truncation and many single-byte corruptions of a class give a
/// result or an error, never a panic.
#[test]
fn malformed_inputs_never_panic() {
    let bytes = widening_class(100, true);
    for n in 0..bytes.len() {
        let _ = rewrite(&bytes[..n], &Config::default());
    }
    for i in 0..bytes.len().min(400) {
        for v in [0u8, 1, 0x7f, 0xff] {
            let mut m = bytes.clone();
            m[i] = v;
            let _ = rewrite(&m, &Config::default());
        }
    }
    assert!(matches!(
        rewrite(b"\xca\xfe\xba\xbe\0\0\0\x20", &Config::default()),
        Err(orca_rewriter::RewriteError::UnsupportedVersion { .. })
    ));
    assert!(matches!(
        rewrite(b"nope", &Config::default()),
        Err(orca_rewriter::RewriteError::BadMagic(_))
    ));
}

/// Version 49 (no StackMapTable): jsr/ret finally-style code with monitors,
/// a synchronized method, and a goto that must be widened; verified by the
/// JVM's old (type-inferencing) verifier.
#[test]
fn old_class_with_jsr_ret_and_widening() {
    let mut b = ClassBuilder::new("t/Jsr", 49);
    // static void f(Object o): aload_0 monitorenter; jsr F; aload_0 monitorexit; return; F: astore_1 ret 1
    let code = vec![
        0x2a, 0xc2, // 0
        0xa8, 0x00, 0x06, // 2: jsr 8
        0x2a, 0xc3, // 5
        0xb1, // 7
        0x4c, 0xa9, 0x01, // 8: astore_1 ret 1
    ];
    b.method(
        ACC_STATIC,
        "f",
        "(Ljava/lang/Object;)V",
        Some(Code {
            max_stack: 1,
            max_locals: 2,
            code,
            exc: vec![],
            attrs: vec![],
        }),
    );
    // synchronized instance method with a far backward goto (becomes goto_w)
    let mut code = vec![0x2a, 0xc2, 0x2a, 0xc3]; // 0
    code.extend(std::iter::repeat_n(0u8, 32758));
    let at = code.len();
    code.push(0x1b); // iload_1
    code.push(0x9a); // ifne 0
    code.extend_from_slice(&(-(at as i32 + 1) as i16).to_be_bytes());
    code.push(0xb1);
    b.method(
        ACC_SYNC,
        "g",
        "(I)V",
        Some(Code {
            max_stack: 1,
            max_locals: 2,
            code,
            exc: vec![],
            attrs: vec![],
        }),
    );
    let input = b.build();
    let (out, _, notes) = changed(&input);
    assert!(notes.is_empty(), "{notes:?}");
    assert!(jvm_same_outcome(&[("t/Jsr", &input, &out)]).is_none_or(|s| s.contains("bothOK=1")));
    let p = reparse(&out, "f");
    assert_eq!(p.code[10], 0xa8); // jsr after the 5+3 inserted bytes
    let p = reparse(&out, "g");
    // head 4 + monitor code 12: the ifne no longer reaches offset 4 and is inverted around a goto_w
    let i = at + 16;
    assert_eq!(&p.code[i + 1..i + 4], &[0x99, 0x00, 0x08]);
    assert_eq!(p.code[i + 4], 0xc8);
}

/// Type annotations inside Code: localvar ranges like the LVT, offsets of
/// `new`/`instanceof`/type arguments follow their instruction.
#[test]
fn type_annotation_offsets() {
    let mut b = ClassBuilder::new("t/Ta", 52);
    let c = b.class("t/C").to_be_bytes();
    let init = b.method_ref("t/C", "<init>", "()V").to_be_bytes();
    let ann = b.utf8("Lt/A;");
    let value = b.utf8("value");
    let code = vec![
        0x2a, 0xc2, // 0
        0xbb, c[0], c[1], 0x59, // 2: new, 5: dup
        0xb7, init[0], init[1], // 6
        0x4c, 0x2b, // 9: astore_1, 10: aload_1
        0xc1, c[0], c[1], 0x57, // 11: instanceof, 14: pop
        0x2a, 0xc3, 0xb1, // 15, 16, 17
    ];
    let mut ta = be(&[5]);
    let plain = |ta: &mut Vec<u8>| {
        ta.push(0); // type_path length
        ta.extend(be(&[ann, 0]));
    };
    ta.push(0x40);
    ta.extend(be(&[1, 10, 8, 1]));
    plain(&mut ta);
    ta.push(0x44);
    ta.extend(be(&[2]));
    plain(&mut ta);
    ta.push(0x43);
    ta.extend(be(&[11]));
    ta.push(0);
    ta.extend(be(&[ann, 1, value]));
    ta.push(b'[');
    ta.extend(be(&[1]));
    ta.push(b's');
    ta.extend(be(&[value]));
    ta.push(0x47);
    ta.extend(be(&[6]));
    ta.push(0);
    plain(&mut ta);
    ta.push(0x42);
    ta.extend(be(&[0]));
    plain(&mut ta);
    b.method(
        ACC_STATIC,
        "ta",
        "(Ljava/lang/Object;)V",
        Some(Code {
            max_stack: 2,
            max_locals: 2,
            code,
            exc: vec![],
            attrs: vec![("RuntimeInvisibleTypeAnnotations", ta)],
        }),
    );
    let input = b.build();
    let (out, _, notes) = changed(&input);
    assert!(notes.is_empty());
    let cf = cafebabe::parse_class(&out).unwrap();
    let dbg = format!("{:?}", cf.methods[0].attributes);
    assert!(dbg.contains("start_pc: 18, length: 12, index: 1"), "{dbg}");
    assert!(dbg.contains("Offset { offset: 10 }"), "{dbg}");
    assert!(dbg.contains("Offset { offset: 19 }"), "{dbg}");
    assert!(
        dbg.contains("TypeArgument { offset: 14, type_argument_index: 0 }"),
        "{dbg}"
    );
    assert!(dbg.contains("Catch { exception_table_index: 0 }"), "{dbg}");
    let p = reparse(&out, "ta");
    assert_eq!((p.code[10], p.code[14], p.code[19]), (0xbb, 0xb7, 0xc1));
}

fn rewritten(bytes: &[u8], config: &Config) -> (Vec<u8>, Vec<orca_rewriter::MethodMap>) {
    match rewrite(bytes, config).expect("rewrite") {
        Outcome::Changed { bytes, methods, .. } => (bytes, methods),
        o => panic!("expected Changed, got {o:?}"),
    }
}

/// A hooked method (issue 12): entry report in the head, an exit report before every return,
/// a catch-all handler after the head that reports and rethrows, with a frame of no locals; a
/// static method passes null; other methods and a class not named are untouched.
#[test]
fn method_hooks_at_entry_and_every_exit() {
    let mut b = ClassBuilder::new("t/Hooked", 52);
    // int m(int): if (x == 0) return 1; return 0;
    let code = vec![0x1b, 0x99, 0x00, 0x05, 0x04, 0xac, 0x03, 0xac];
    let smt = vec![0, 1, 6];
    let lnt = be(&[2, 0, 1, 6, 2]);
    b.method(
        0,
        "m",
        "(I)I",
        Some(Code {
            max_stack: 1,
            max_locals: 2,
            code,
            exc: vec![],
            attrs: vec![("StackMapTable", smt), ("LineNumberTable", lnt)],
        }),
    );
    b.method(
        ACC_STATIC,
        "s",
        "()V",
        Some(Code {
            max_stack: 0,
            max_locals: 0,
            code: vec![0xb1],
            exc: vec![],
            attrs: vec![],
        }),
    );
    b.method(
        0,
        "other",
        "()V",
        Some(Code {
            max_stack: 0,
            max_locals: 1,
            code: vec![0xb1],
            exc: vec![],
            attrs: vec![],
        }),
    );
    let input = b.build();
    let hook = |name: &str, report: i32| orca_rewriter::MethodHook {
        class: "t/Hooked".into(),
        name: name.into(),
        descriptor: None,
        report,
        sync_field: None,
    };
    let config = Config {
        hooks: vec![hook("m", 9), hook("s", 300)],
        ..Config::default()
    };
    let (out, maps) = rewritten(&input, &config);
    assert!(jvm_same_outcome(&[("t/Hooked", &input, &out)]).is_none_or(|s| s.contains("bothOK=1")));
    let p = reparse(&out, "m");
    // head: aload_0 bipush 9 invokestatic (6 bytes); each return gets invokestatic (3)
    assert_eq!(&p.code[..3], &[0x2a, 0x10, 9]);
    let o = ops(&out, "m");
    assert!(invokestatic_of(&o, 3).contains("methodEntry"), "{o:#?}");
    assert!(invokestatic_of(&o, 11).contains("methodExit"), "{o:#?}");
    assert!(invokestatic_of(&o, 16).contains("methodExit"), "{o:#?}");
    let end = p.code.len() as u16;
    assert_eq!(p.exc, vec![(6, end - 4, end - 4, None)], "after the head");
    assert_eq!(&p.code[end as usize - 1..], &[0xbf]);
    assert!(p.frames.contains(&(end - 4)));
    assert_eq!(p.lines, vec![(0, 1), (15, 2)]);
    assert_eq!(
        maps.iter().find(|m| m.name == "m").unwrap().original(0),
        Some(0)
    );
    let p = reparse(&out, "s");
    assert_eq!(
        &p.code[..4],
        &[0x01, 0x11, 0x01, 0x2c],
        "aconst_null sipush 300"
    );
    assert_eq!(p.max_stack, 2);
    assert_eq!(reparse(&out, "other").code, vec![0xb1]);
    // not the class named: unchanged, on the fast path
    let other = Config {
        hooks: vec![orca_rewriter::MethodHook {
            class: "t/Elsewhere".into(),
            ..hook("m", 9)
        }],
        ..Config::default()
    };
    assert!(matches!(
        rewrite(&input, &other).unwrap(),
        Outcome::Unchanged { .. }
    ));
}

/// Natives at their call sites, inline (issue 12): the call stays, between callEntry and
/// callExit; a static sleep through another owner asks callEntryVia with the owner class;
/// rules of hooked methods are skipped.
#[test]
fn inline_call_sites_keep_the_call() {
    let mut b = ClassBuilder::new("t/Inline", 52);
    let wait = b.method_ref("java/lang/Object", "wait", "(J)V");
    let sleep = b.method_ref("t/Worker", "sleep", "(J)V");
    let start = b.method_ref("java/lang/Thread", "start", "()V");
    let h = |i: u16| i.to_be_bytes();
    let mut code = vec![0x2a, 0x09, 0xb6, h(wait)[0], h(wait)[1]]; // 0: aload_0 lconst_0 wait(J)
    code.extend_from_slice(&[0x09, 0xb8, h(sleep)[0], h(sleep)[1]]); // 5: lconst_0 Worker.sleep
    code.extend_from_slice(&[0x2a, 0xb6, h(start)[0], h(start)[1]]); // 9: start
    code.push(0xb1); // 13
    b.method(
        0,
        "c",
        "()V",
        Some(Code {
            max_stack: 3,
            max_locals: 1,
            code,
            exc: vec![],
            attrs: vec![],
        }),
    );
    let config = Config {
        inline_calls: vec![
            ("wait".into(), "(J)V".into(), 4),
            ("sleep".into(), "(J)V".into(), 11),
        ],
        skip_calls: vec![("start".into(), "()V".into())],
        ..Config::default()
    };
    let (out, maps) = rewritten(&b.build(), &config);
    let o = ops(&out, "c");
    let text: Vec<String> = o.iter().map(|x| format!("{} {}", x.0, x.1)).collect();
    let at = |i: usize| text[i].as_str();
    // aload_0 lconst_0 | dup2_x1 pop2 dup_x2 bipush 4 callEntry | wait(J) | callExit
    assert!(
        at(2).contains("Dup2X1") && at(4).contains("DupX2"),
        "{text:#?}"
    );
    assert!(at(6).contains("callEntry"), "{text:#?}");
    assert!(
        at(7).contains("Invokevirtual") && at(7).contains("wait"),
        "{text:#?}"
    );
    assert!(at(8).contains("callExit"), "{text:#?}");
    // lconst_0 | ldc_w t/Worker bipush 11 callEntryVia | Worker.sleep | callExit
    assert!(
        at(10).contains("Ldc") && at(10).contains("t/Worker"),
        "{text:#?}"
    );
    assert!(at(12).contains("callEntryVia"), "{text:#?}");
    assert!(
        at(13).contains("Invokestatic") && at(13).contains("t/Worker"),
        "{text:#?}"
    );
    assert!(at(14).contains("callExit"), "{text:#?}");
    // start() is hooked elsewhere: left as it is
    assert!(
        at(16).contains("Invokevirtual") && at(16).contains("start"),
        "{text:#?}"
    );
    assert!(!text.iter().any(|t| t.contains("threadStart")));
    assert_eq!(reparse(&out, "c").max_stack, 5);
    // the inserted code belongs to the call it was inserted for
    assert_eq!(maps[0].original(2), Some(2));
}

/// j.u.c. lock call sites (issue 13): with sites and `lock_sites`, `lock()`/`lockInterruptibly()`
/// (interface or virtual, any owner) and `tryLock()` get `dup; <site>; lockSite` before the
/// unchanged call, each its own site at the call's offset; the timed `tryLock` and `unlock`
/// do not; without `lock_sites` nothing changes.
#[test]
fn lock_calls_name_their_site() {
    let mut b = ClassBuilder::new("t/Locks", 52);
    let lock = b.imethod_ref("java/util/concurrent/locks/Lock", "lock", "()V");
    let try_lock = b.method_ref("java/util/concurrent/locks/ReentrantLock", "tryLock", "()Z");
    let timed = b.method_ref(
        "java/util/concurrent/locks/ReentrantLock",
        "tryLock",
        "(JLjava/util/concurrent/TimeUnit;)Z",
    );
    let unlock = b.imethod_ref("java/util/concurrent/locks/Lock", "unlock", "()V");
    let h = |i: u16| i.to_be_bytes();
    // 0: aload_1 invokeinterface lock 1 0 | 6: aload_2 invokevirtual tryLock pop
    // 11: aload_2 lconst_0 aconst_null invokevirtual tryLock(J,TimeUnit) pop
    // 18: aload_1 invokeinterface unlock 1 0 | 24: return
    let mut code = vec![0x2b, 0xb9, h(lock)[0], h(lock)[1], 1, 0];
    code.extend_from_slice(&[0x2c, 0xb6, h(try_lock)[0], h(try_lock)[1], 0x57]);
    code.extend_from_slice(&[0x2c, 0x09, 0x01, 0xb6, h(timed)[0], h(timed)[1], 0x57]);
    code.extend_from_slice(&[0x2b, 0xb9, h(unlock)[0], h(unlock)[1], 1, 0, 0xb1]);
    b.method(
        ACC_STATIC,
        "c",
        "(Ljava/util/concurrent/locks/Lock;Ljava/util/concurrent/locks/ReentrantLock;)V",
        Some(Code {
            max_stack: 4,
            max_locals: 2,
            code,
            exc: vec![],
            attrs: vec![],
        }),
    );
    let input = b.build();
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(7));
    let off = Config {
        sites: Some(counter.clone()),
        ..Config::default()
    };
    assert!(matches!(
        rewrite(&input, &off).unwrap(),
        Outcome::Unchanged { .. }
    ));
    let config = Config {
        sites: Some(counter),
        lock_sites: true,
        ..Config::default()
    };
    let (out, maps) = rewritten(&input, &config);
    let o = ops(&out, "c");
    let text: Vec<String> = o.iter().map(|x| format!("{} {}", x.0, x.1)).collect();
    let hinted: Vec<&String> = text.iter().filter(|t| t.contains("lockSite")).collect();
    assert_eq!(hinted.len(), 2, "{text:#?}");
    let p = reparse(&out, "c");
    // aload_1 | dup sipush 7 invokestatic lockSite | invokeinterface lock
    assert_eq!(&p.code[..5], &[0x2b, 0x59, 0x11, 0, 7]);
    assert_eq!(p.max_stack, 6);
    // the sites are the calls' original offsets, numbered in order
    assert_eq!(maps[0].sites, vec![(7, 1), (8, 7)]);
    assert!(text
        .iter()
        .any(|t| t.contains("Invokeinterface") && t.contains("unlock")));
    assert_eq!(text.iter().filter(|t| t.contains("tryLock")).count(), 2);
}

/// A hooked j.u.c. lock method (issue 13, `MethodHook::sync_field`): the entry passes `this`
/// and its synchronizer field to `lockEntry`, a `return` calls `lockExit`, an `ireturn` passes
/// the boolean to `lockExitZ`, the catch-all handler calls `lockThrew` and rethrows; the
/// class still verifies and behaves the same.
#[test]
fn lock_hooks_pass_the_synchronizer_and_the_outcome() {
    let mut b = ClassBuilder::new("t/MyLock", 52);
    b.field(0, "sync", "Ljava/lang/Object;");
    b.method(
        0,
        "lock",
        "()V",
        Some(Code {
            max_stack: 0,
            max_locals: 1,
            code: vec![0xb1],
            exc: vec![],
            attrs: vec![],
        }),
    );
    b.method(
        0,
        "tryLock",
        "()Z",
        Some(Code {
            max_stack: 1,
            max_locals: 1,
            code: vec![0x04, 0xac],
            exc: vec![],
            attrs: vec![],
        }),
    );
    let input = b.build();
    let hook = |name: &str, report: i32| orca_rewriter::MethodHook {
        class: "t/MyLock".into(),
        name: name.into(),
        descriptor: None,
        report,
        sync_field: Some(("sync".into(), "Ljava/lang/Object;".into())),
    };
    let config = Config {
        hooks: vec![hook("lock", 1088), hook("tryLock", 1089)],
        ..Config::default()
    };
    let (out, _) = rewritten(&input, &config);
    assert!(jvm_same_outcome(&[("t/MyLock", &input, &out)]).is_none_or(|s| s.contains("bothOK=1")));
    let p = reparse(&out, "lock");
    // aload_0 dup getfield sync | sipush 1088 | invokestatic lockEntry
    assert_eq!(&p.code[..3], &[0x2a, 0x59, 0xb4]);
    assert_eq!(&p.code[5..8], &[0x11, 0x04, 0x40]);
    assert_eq!(p.max_stack, 3);
    let o = ops(&out, "lock");
    let text: Vec<String> = o.iter().map(|x| x.1.clone()).collect();
    assert!(text.iter().any(|t| t.contains("lockEntry")), "{text:#?}");
    assert!(text.iter().any(|t| t.contains("lockExit")), "{text:#?}");
    assert!(text.iter().any(|t| t.contains("lockThrew")), "{text:#?}");
    let o = ops(&out, "tryLock");
    let text: Vec<String> = o.iter().map(|x| x.1.clone()).collect();
    let z = text
        .iter()
        .position(|t| t.contains("lockExitZ"))
        .expect("lockExitZ");
    assert!(text[z - 1].contains("Dup"), "{text:#?}");
    assert!(text[z + 1].contains("Ireturn"), "{text:#?}");
}

/// `StampedLock`'s argument-less acquisitions name their site too; its releases do not.
#[test]
fn stamped_lock_calls_name_their_site() {
    let mut b = ClassBuilder::new("t/Stamped", 52);
    let write = b.method_ref("java/util/concurrent/locks/StampedLock", "writeLock", "()J");
    let unlock = b.method_ref(
        "java/util/concurrent/locks/StampedLock",
        "unlockWrite",
        "(J)V",
    );
    let h = |i: u16| i.to_be_bytes();
    // 0: aload_0 invokevirtual writeLock lstore_1 | 5: aload_0 lload_1 invokevirtual unlockWrite
    // 10: return
    let mut code = vec![0x2a, 0xb6, h(write)[0], h(write)[1], 0x40];
    code.extend_from_slice(&[0x2a, 0x1f, 0xb6, h(unlock)[0], h(unlock)[1], 0xb1]);
    b.method(
        ACC_STATIC,
        "c",
        "(Ljava/util/concurrent/locks/StampedLock;)V",
        Some(Code {
            max_stack: 3,
            max_locals: 3,
            code,
            exc: vec![],
            attrs: vec![],
        }),
    );
    let config = Config {
        sites: Some(std::sync::Arc::new(std::sync::atomic::AtomicU32::new(1))),
        lock_sites: true,
        ..Config::default()
    };
    let (out, maps) = rewritten(&b.build(), &config);
    let text: Vec<String> = ops(&out, "c").into_iter().map(|x| x.1).collect();
    assert_eq!(
        text.iter().filter(|t| t.contains("lockSite")).count(),
        1,
        "{text:#?}"
    );
    let p = reparse(&out, "c");
    assert_eq!(&p.code[..5], &[0x2a, 0x59, 0x11, 0, 1]);
    assert_eq!(maps[0].sites, vec![(1, 1)]);
}
