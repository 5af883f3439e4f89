//! Bytecode instruction decoding (lengths and branch targets).
//!
//! Why: every offset fix-up needs the instruction boundaries; decoding is
//! kept separate so that it is tested once and used everywhere.

use crate::reader::be32;

pub(crate) const GOTO: u8 = 0xa7;
pub(crate) const JSR: u8 = 0xa8;
pub(crate) const TABLESWITCH: u8 = 0xaa;
pub(crate) const LOOKUPSWITCH: u8 = 0xab;
pub(crate) const INVOKEVIRTUAL: u8 = 0xb6;
pub(crate) const INVOKESTATIC: u8 = 0xb8;
pub(crate) const INVOKEINTERFACE: u8 = 0xb9;
pub(crate) const MONITORENTER: u8 = 0xc2;
pub(crate) const MONITOREXIT: u8 = 0xc3;
pub(crate) const WIDE: u8 = 0xc4;
pub(crate) const IFNULL: u8 = 0xc6;
pub(crate) const IFNONNULL: u8 = 0xc7;
pub(crate) const GOTO_W: u8 = 0xc8;
pub(crate) const JSR_W: u8 = 0xc9;

/// One decoded instruction of the original code.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Insn {
    pub(crate) off: u32,
    pub(crate) len: u32,
    pub(crate) op: u8,
}

/// Whether `op` is a branch with a 2-byte offset (if*, goto, jsr, ifnull, ifnonnull).
#[inline]
pub(crate) fn is_short_branch(op: u8) -> bool {
    (0x99..=0xa8).contains(&op) || op == IFNULL || op == IFNONNULL
}

/// The opposite condition of a conditional branch (used when a conditional
/// branch is widened to `if!cond +8; goto_w target`).
#[inline]
pub(crate) fn invert(op: u8) -> u8 {
    if (0x99..=0xa6).contains(&op) {
        ((op - 0x99) ^ 1) + 0x99
    } else {
        op ^ 1 // ifnull <-> ifnonnull
    }
}

/// Fixed length of an opcode, 0 for switches/wide (variable), None for invalid.
#[inline]
const fn fixed_len(op: u8) -> Option<u32> {
    Some(match op {
        0x00..=0x0f => 1,
        0x10 => 2,
        0x11 => 3,
        0x12 => 2,
        0x13 | 0x14 => 3,
        0x15..=0x19 => 2,
        0x1a..=0x35 => 1,
        0x36..=0x3a => 2,
        0x3b..=0x83 => 1,
        0x84 => 3,
        0x85..=0x98 => 1,
        0x99..=0xa8 => 3,
        0xa9 => 2,
        0xaa | 0xab => 0,
        0xac..=0xb1 => 1,
        0xb2..=0xb8 => 3,
        0xb9 | 0xba => 5,
        0xbb => 3,
        0xbc => 2,
        0xbd => 3,
        0xbe | 0xbf => 1,
        0xc0 | 0xc1 => 3,
        0xc2 | 0xc3 => 1,
        0xc4 => 0,
        0xc5 => 4,
        0xc6 | 0xc7 => 3,
        0xc8 | 0xc9 => 5,
        _ => return None,
    })
}

/// Length of the instruction at `pc` (checked against the end of `code`).
#[inline]
pub(crate) fn insn_len(code: &[u8], pc: usize) -> Result<u32, &'static str> {
    let n = code.len();
    let op = code[pc];
    let len = match fixed_len(op) {
        None => return Err("invalid opcode in code"),
        Some(0) => match op {
            WIDE => match code.get(pc + 1) {
                Some(0x84) => 6,
                Some(0x15..=0x19) | Some(0x36..=0x3a) | Some(0xa9) => 4,
                _ => return Err("invalid opcode after wide"),
            },
            TABLESWITCH => {
                let base = (pc + 4) & !3;
                let lo = be32(code, base + 4).ok_or("truncated tableswitch")?;
                let hi = be32(code, base + 8).ok_or("truncated tableswitch")?;
                if hi < lo {
                    return Err("tableswitch high < low");
                }
                let cnt = (hi as i64 - lo as i64 + 1) as usize;
                if cnt > 65536 {
                    return Err("tableswitch too large");
                }
                (base + 12 + 4 * cnt - pc) as u32
            }
            _ => {
                let base = (pc + 4) & !3;
                let np = be32(code, base + 4).ok_or("truncated lookupswitch")?;
                if !(0..=65536).contains(&np) {
                    return Err("lookupswitch npairs out of range");
                }
                (base + 8 + 8 * np as usize - pc) as u32
            }
        },
        Some(l) => l,
    };
    if pc + len as usize > n {
        return Err("instruction runs past the end of the code");
    }
    Ok(len)
}

/// Decodes all instructions; `Err` names the problem (the method is then
/// left unchanged).
pub(crate) fn decode(code: &[u8], out: &mut Vec<Insn>) -> Result<(), &'static str> {
    let mut pc = 0usize;
    while pc < code.len() {
        let len = insn_len(code, pc)?;
        out.push(Insn {
            off: pc as u32,
            len,
            op: code[pc],
        });
        pc += len as usize;
    }
    Ok(())
}

/// Fast-path check (no allocation): does the code hold a `monitorenter` or
/// `monitorexit` instruction? A byte scan rejects most methods; a hit (which
/// may be an operand byte) is confirmed by decoding. Invalid code answers
/// `true` so that the full path reports it.
pub(crate) fn has_monitor_insn(code: &[u8]) -> bool {
    // branch-free over 32-byte chunks so that it vectorizes
    let mut chunks = code.chunks_exact(32);
    let mut seen = false;
    for c in &mut chunks {
        let mut m = false;
        for &x in c {
            m |= (x == MONITORENTER) | (x == MONITOREXIT);
        }
        if m {
            seen = true;
            break;
        }
    }
    if !seen
        && !chunks
            .remainder()
            .iter()
            .any(|&b| b == MONITORENTER || b == MONITOREXIT)
    {
        return false;
    }
    let mut pc = 0usize;
    while pc < code.len() {
        let op = code[pc];
        if op == MONITORENTER || op == MONITOREXIT {
            return true;
        }
        let l = LEN[op as usize];
        if l != 0 {
            pc += l as usize;
            continue;
        }
        match insn_len(code, pc) {
            Ok(l) => pc += l as usize,
            Err(_) => return true,
        }
    }
    false
}

/// Fixed instruction lengths by opcode (0: variable or invalid).
static LEN: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = match fixed_len(i as u8) {
            Some(l) => l as u8,
            None => 0,
        };
        i += 1;
    }
    t
};
