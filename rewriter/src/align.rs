//! Aligning two versions of a class: which instruction of a class another agent changed
//! stands for which instruction of the class it was given.
//!
//! Why: Orca is one of several transformers of a class (APM agents, mocks, coverage tools
//! run beside it). Its own offset maps describe only its own step; when another agent changes
//! the class before Orca sees it, or after Orca changed it, the code that runs has indexes
//! Orca's map does not describe. Such agents insert code and keep what they were given, so an
//! instruction-level diff (Myers' algorithm over the instructions, their constants resolved, so
//! that two constant pools compare) finds every kept instruction; inserted code belongs to the
//! kept instruction after it, as the rewriter's own inserted code does.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use crate::cp::Pool;
use crate::error::RewriteError;
use crate::insn::{decode, Insn};
use crate::reader::{be16, Reader};
use crate::{skip_members, MethodMap};

/// Past this many differing instructions in one method the diff gives up on the middle
/// (its instructions belong to the next kept one): agents insert a few instructions per
/// place, and the search costs time in proportion to this bound squared.
const MAX_EDITS: usize = 500;

/// One method's code: name, descriptor, code bytes.
type MethodCode<'a> = (&'a [u8], &'a [u8], &'a [u8]);

/// For every method of `derived` that `base` has too (same name and descriptor), the map from
/// `derived`'s bytecode indexes to `base`'s. Methods whose code is the same byte for byte
/// are left out (their map is the identity). `Err` when either class cannot be read.
pub fn align(derived: &[u8], base: &[u8]) -> Result<Vec<MethodMap>, RewriteError> {
    let (dpool, dmethods) = methods(derived)?;
    let (bpool, bmethods) = methods(base)?;
    Ok(align_methods(&dpool, &dmethods, &bpool, &bmethods))
}

/// [`align`] against a class that runs: its constant pool (entry count and entries' bytes,
/// as JVMTI `GetConstantPool` gives them) and its methods' (name, descriptor, code).
pub fn align_to_running(
    derived: &[u8],
    pool_count: u16,
    pool_bytes: &[u8],
    base_methods: &[(String, String, Vec<u8>)],
) -> Result<Vec<MethodMap>, RewriteError> {
    let (dpool, dmethods) = methods(derived)?;
    let mut buf = vec![0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 0];
    buf.extend_from_slice(&pool_count.to_be_bytes());
    buf.extend_from_slice(pool_bytes);
    let (bpool, _) = Pool::new(&buf)?;
    let bmethods: Vec<MethodCode> = base_methods
        .iter()
        .map(|(n, d, c)| (n.as_bytes(), d.as_bytes(), c.as_slice()))
        .collect();
    Ok(align_methods(&dpool, &dmethods, &bpool, &bmethods))
}

/// (name, descriptor, code length) of every method with code of a class file.
pub fn code_lengths(bytes: &[u8]) -> Result<Vec<(String, String, u32)>, RewriteError> {
    let (_, ms) = methods(bytes)?;
    Ok(ms
        .iter()
        .map(|(n, d, c)| {
            (
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(d).into_owned(),
                c.len() as u32,
            )
        })
        .collect())
}

fn align_methods(
    dpool: &Pool,
    dmethods: &[MethodCode],
    bpool: &Pool,
    bmethods: &[MethodCode],
) -> Vec<MethodMap> {
    let mut out = Vec::new();
    let mut di = Vec::new();
    let mut bi = Vec::new();
    for (name, desc, dcode) in dmethods {
        let Some((_, _, bcode)) = bmethods.iter().find(|m| m.0 == *name && m.1 == *desc) else {
            continue;
        };
        if dcode == bcode {
            continue;
        }
        di.clear();
        bi.clear();
        if decode(dcode, &mut di).is_err() || decode(bcode, &mut bi).is_err() {
            continue;
        }
        let dt: Vec<u64> = di.iter().map(|i| token(dpool, dcode, i)).collect();
        let bt: Vec<u64> = bi.iter().map(|i| token(bpool, bcode, i)).collect();
        let matched = diff(&dt, &bt);
        out.push(method_map(name, desc, dcode, bcode, &di, &bi, &matched));
    }
    out
}

/// The map from the matches: a kept instruction goes to its counterpart, an inserted one to
/// the next kept instruction's (the last instruction's when none follows).
fn method_map(
    name: &[u8],
    desc: &[u8],
    dcode: &[u8],
    bcode: &[u8],
    di: &[Insn],
    bi: &[Insn],
    matched: &[Option<usize>],
) -> MethodMap {
    let mut target = vec![0u32; di.len()];
    let mut next = bi.last().map_or(0, |i| i.off);
    for k in (0..di.len()).rev() {
        if let Some(b) = matched[k] {
            next = bi[b].off;
        }
        target[k] = next;
    }
    let mut entries: Vec<(u32, u32)> = Vec::new();
    for (k, i) in di.iter().enumerate() {
        if entries.last().map(|e| e.1) != Some(target[k]) {
            entries.push((i.off, target[k]));
        }
    }
    MethodMap {
        name: String::from_utf8_lossy(name).into_owned(),
        descriptor: String::from_utf8_lossy(desc).into_owned(),
        entries,
        new_code_length: dcode.len() as u32,
        original_code_length: bcode.len() as u32,
        sites: Vec::new(),
        exit_enters: Vec::new(),
    }
}

/// The constant pool and the methods with code of a class file.
fn methods(bytes: &[u8]) -> Result<(Pool<'_>, Vec<MethodCode<'_>>), RewriteError> {
    let mut r = Reader::new(bytes, 0);
    let magic = r.u4("magic")?;
    if magic != 0xCAFE_BABE {
        return Err(RewriteError::BadMagic(magic));
    }
    let (pool, end) = Pool::new(bytes)?;
    let mut r = Reader::new(bytes, end);
    r.skip(6, "access, this and super class")?;
    let ni = r.u2("interfaces_count")? as usize;
    r.skip(2 * ni, "interfaces")?;
    skip_members(&mut r, "fields")?;
    let nm = r.u2("methods_count")?;
    let mut out = Vec::with_capacity(nm as usize);
    for _ in 0..nm {
        r.skip(2, "access")?;
        let name = pool.utf8(r.u2("name")?)?;
        let desc = pool.utf8(r.u2("descriptor")?)?;
        let na = r.u2("attributes_count")?;
        for _ in 0..na {
            let an = r.u2("attribute_name_index")?;
            let len = r.u4("attribute_length")? as usize;
            let body = r.bytes(len, "attribute")?;
            if pool.utf8(an).ok() == Some(b"Code".as_slice()) {
                let n = body
                    .get(4..8)
                    .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize);
                if let Some(code) = body.get(8..8 + n) {
                    out.push((name, desc, code));
                }
            }
        }
    }
    Ok((pool, out))
}

/// What an instruction does, independent of where it is and of its class's constant pool:
/// the opcode, its constant resolved, its other operands, except branch offsets (which move
/// when code is inserted between).
fn token(pool: &Pool, code: &[u8], i: &Insn) -> u64 {
    let mut h = DefaultHasher::new();
    let at = i.off as usize;
    let bytes = &code[at..at + i.len as usize];
    i.op.hash(&mut h);
    match i.op {
        // ldc
        0x12 => constant(pool, u16::from(bytes[1]), &mut h),
        // ldc_w, ldc2_w, field and method instructions, new, anewarray, checkcast, instanceof
        0x13 | 0x14 | 0xb2..=0xbb | 0xbd | 0xc0 | 0xc1 => {
            constant(pool, be16(bytes, 1).unwrap_or(0), &mut h)
        }
        // multianewarray: class and dimensions
        0xc5 => {
            constant(pool, be16(bytes, 1).unwrap_or(0), &mut h);
            bytes[3].hash(&mut h);
        }
        // branches, switches: their targets move
        0x99..=0xa8 | 0xaa | 0xab | 0xc6..=0xc9 => {}
        _ => bytes.hash(&mut h),
    }
    h.finish()
}

/// Hashes constant `idx` by its content (recursively through its references).
fn constant(pool: &Pool, idx: u16, h: &mut impl Hasher) {
    constant_at(pool, idx, h, 0)
}

fn constant_at(pool: &Pool, idx: u16, h: &mut impl Hasher, depth: u32) {
    let Some(tag) = pool.tag(idx) else {
        return;
    };
    tag.hash(h);
    let o = pool.offs[idx as usize] as usize;
    let b = pool.buf;
    let r16 = |at: usize| be16(b, at).unwrap_or(0);
    if depth > 4 {
        return;
    }
    match tag {
        1 => {
            if let Ok(s) = pool.utf8(idx) {
                s.hash(h);
            }
        }
        3 | 4 => b.get(o + 1..o + 5).hash(h),
        5 | 6 => b.get(o + 1..o + 9).hash(h),
        7 | 8 | 16 | 19 | 20 => constant_at(pool, r16(o + 1), h, depth + 1),
        9..=12 => {
            constant_at(pool, r16(o + 1), h, depth + 1);
            constant_at(pool, r16(o + 3), h, depth + 1);
        }
        15 => {
            b.get(o + 1).hash(h);
            constant_at(pool, r16(o + 2), h, depth + 1);
        }
        // Dynamic, InvokeDynamic: bootstrap method index and name and type
        17 | 18 => {
            r16(o + 1).hash(h);
            constant_at(pool, r16(o + 3), h, depth + 1);
        }
        _ => {}
    }
}

/// For each element of `a`, the index of the element of `b` it is kept as, by a shortest
/// edit script (Myers, "An O(ND) Difference Algorithm", 1986) after the common prefix and
/// suffix are taken off; past [`MAX_EDITS`] the middle stays unmatched.
fn diff(a: &[u64], b: &[u64]) -> Vec<Option<usize>> {
    let mut out = vec![None; a.len()];
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    for (k, o) in out.iter_mut().enumerate().take(pre) {
        *o = Some(k);
    }
    let (a1, b1) = (&a[pre..], &b[pre..]);
    let suf = a1
        .iter()
        .rev()
        .zip(b1.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    for k in 0..suf {
        out[a.len() - 1 - k] = Some(b.len() - 1 - k);
    }
    let (a2, b2) = (&a1[..a1.len() - suf], &b1[..b1.len() - suf]);
    if let Some(pairs) = myers(a2, b2) {
        for (x, y) in pairs {
            out[pre + x] = Some(pre + y);
        }
    }
    out
}

/// The matched pairs of a shortest edit script of `a` into `b`, or `None` past [`MAX_EDITS`].
fn myers(a: &[u64], b: &[u64]) -> Option<Vec<(usize, usize)>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    if n == 0 || m == 0 {
        return Some(Vec::new());
    }
    let max = ((n + m) as usize).min(MAX_EDITS) as isize;
    let off = max + 1;
    let mut v = vec![0isize; 2 * off as usize + 1];
    // trace[d]: the frontier before step d, for diagonals -d..=d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'outer: for d in 0..=max {
        trace.push(v[(off - d) as usize..=(off + d) as usize].to_vec());
        let mut k = -d;
        while k <= d {
            let i = (k + off) as usize;
            let mut x = if k == -d || (k != d && v[i - 1] < v[i + 1]) {
                v[i + 1]
            } else {
                v[i - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[i] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'outer;
            }
            k += 2;
        }
    }
    let dmax = found?;
    let mut pairs = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..=dmax).rev() {
        let t = &trace[d as usize];
        let at = |k: isize| t[(k + d) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            x -= 1;
            y -= 1;
            pairs.push((x as usize, y as usize));
        }
        x = prev_x;
        y = prev_y;
    }
    while x > 0 && y > 0 {
        x -= 1;
        y -= 1;
        pairs.push((x as usize, y as usize));
    }
    pairs.reverse();
    Some(pairs)
}

impl MethodMap {
    /// This map (new -> middle indexes) followed by `inner` (middle -> original): new ->
    /// original. This map's sites (middle indexes) are translated; `inner`'s sites, already
    /// original, are kept.
    pub fn then(&self, inner: &MethodMap) -> MethodMap {
        let through = |b: u32| inner.original(b).unwrap_or(b);
        let mut entries: Vec<(u32, u32)> = Vec::with_capacity(self.entries.len());
        for &(n, m) in &self.entries {
            let o = through(m);
            if entries.last().map(|e| e.1) != Some(o) {
                entries.push((n, o));
            }
        }
        let mut sites: Vec<(u32, u32)> =
            self.sites.iter().map(|&(id, b)| (id, through(b))).collect();
        sites.extend(inner.sites.iter().copied());
        let mut exit_enters = self.exit_enters.clone();
        exit_enters.extend(inner.exit_enters.iter().copied());
        MethodMap {
            name: self.name.clone(),
            descriptor: self.descriptor.clone(),
            entries,
            new_code_length: self.new_code_length,
            original_code_length: inner.original_code_length,
            sites,
            exit_enters,
        }
    }

    /// The identity map of a method whose code is `len` bytes long (before [`MethodMap::then`]
    /// when a step changed nothing of it).
    pub fn identity(name: &str, descriptor: &str, len: u32) -> MethodMap {
        MethodMap {
            name: name.to_string(),
            descriptor: descriptor.to_string(),
            entries: vec![(0, 0)],
            new_code_length: len,
            original_code_length: len,
            sites: Vec::new(),
            exit_enters: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insertions_keep_every_other_element() {
        let a = [9, 9, 1, 2, 3, 7, 4, 5];
        let b = [1, 2, 3, 4, 5];
        let m = diff(&a, &b);
        assert_eq!(
            m,
            vec![
                None,
                None,
                Some(0),
                Some(1),
                Some(2),
                None,
                Some(3),
                Some(4)
            ]
        );
    }

    #[test]
    fn a_deletion_and_an_insertion() {
        let a = [1, 3, 8, 4];
        let b = [1, 2, 3, 4];
        assert_eq!(diff(&a, &b), vec![Some(0), Some(2), None, Some(3)]);
    }

    #[test]
    fn the_diff_is_a_subsequence_of_equal_elements() {
        // pseudo-random sequences over a small alphabet
        let mut s = 12345u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 60) % 4
        };
        for _ in 0..200 {
            let a: Vec<u64> = (0..30).map(|_| next()).collect();
            let b: Vec<u64> = (0..25).map(|_| next()).collect();
            let m = diff(&a, &b);
            let mut last = None;
            let mut kept = 0;
            for (i, x) in m.iter().enumerate() {
                if let Some(j) = *x {
                    assert_eq!(a[i], b[j]);
                    assert!(last.is_none_or(|l| l < j));
                    last = Some(j);
                    kept += 1;
                }
            }
            assert_eq!(kept, lcs(&a, &b), "{a:?} {b:?}");
        }
    }

    fn lcs(a: &[u64], b: &[u64]) -> usize {
        let mut t = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in 0..a.len() {
            for j in 0..b.len() {
                t[i + 1][j + 1] = if a[i] == b[j] {
                    t[i][j] + 1
                } else {
                    t[i][j + 1].max(t[i + 1][j])
                };
            }
        }
        t[a.len()][b.len()]
    }

    #[test]
    fn composition_goes_through_both_maps() {
        let outer = MethodMap {
            name: "m".into(),
            descriptor: "()V".into(),
            entries: vec![(0, 0), (12, 0), (13, 1), (20, 8)],
            new_code_length: 30,
            original_code_length: 18,
            sites: vec![],
            exit_enters: vec![],
        };
        let inner = MethodMap {
            name: "m".into(),
            descriptor: "()V".into(),
            entries: vec![(0, 0), (1, 1), (8, 4)],
            new_code_length: 18,
            original_code_length: 10,
            sites: vec![(3, 4)],
            exit_enters: vec![],
        };
        let c = outer.then(&inner);
        assert_eq!(c.entries, vec![(0, 0), (13, 1), (20, 4)]);
        assert_eq!(c.original(12), Some(0));
        assert_eq!(c.original(25), Some(4));
        assert_eq!(c.sites, vec![(3, 4)]);
    }
}
