//! Constant pool: a non-allocating walker for the fast path, an indexed view
//! for the rewrite path, and a builder that appends only the entries the
//! inserted code needs (deduplicated against the existing pool).

use crate::error::RewriteError;
use crate::reader::{be16, Reader};

pub(crate) const UTF8: u8 = 1;
pub(crate) const CLASS: u8 = 7;
pub(crate) const STRING: u8 = 8;
pub(crate) const FIELDREF: u8 = 9;
pub(crate) const METHODREF: u8 = 10;
pub(crate) const IMETHODREF: u8 = 11;
pub(crate) const NAME_AND_TYPE: u8 = 12;

/// Size in bytes of the body (after the tag) of a fixed-size entry, or
/// `None` for Utf8 / unknown tags.
#[inline]
fn fixed_body(tag: u8) -> Option<(usize, bool)> {
    // (body size, takes two slots)
    Some(match tag {
        3 | 4 => (4, false),      // Integer, Float
        5 | 6 => (8, true),       // Long, Double
        7 | 8 | 16 => (2, false), // Class, String, MethodType
        19 | 20 => (2, false),    // Module, Package
        9..=12 => (4, false),     // Field/Method/IMethod ref, NameAndType
        15 => (3, false),         // MethodHandle
        17 | 18 => (4, false),    // Dynamic, InvokeDynamic
        _ => return None,
    })
}

/// Walks the constant pool starting at byte 8 and calls `f(index, offset, tag)`
/// for every entry; returns the offset just past the pool and its count.
/// Allocates nothing: this is what the `Unchanged` fast path uses.
#[inline]
pub(crate) fn walk<F: FnMut(u16, usize, u8)>(
    b: &[u8],
    mut f: F,
) -> Result<(usize, u16), RewriteError> {
    let mut r = Reader::new(b, 8);
    let count = r.u2("constant_pool_count")?;
    let mut i: u16 = 1;
    while i < count {
        let off = r.pos;
        let tag = r.u1("constant pool tag")?;
        f(i, off, tag);
        if tag == UTF8 {
            let len = r.u2("Utf8 length")? as usize;
            r.skip(len, "Utf8 bytes")?;
            i += 1;
        } else if let Some((n, two)) = fixed_body(tag) {
            r.skip(n, "constant pool entry")?;
            i += if two { 2 } else { 1 };
        } else {
            return Err(RewriteError::BadConstantTag {
                index: i,
                tag,
                offset: off,
            });
        }
    }
    if i != count {
        return Err(RewriteError::Malformed {
            offset: r.pos,
            reason: "a Long/Double entry occupies the slot past the end of the constant pool",
        });
    }
    Ok((r.pos, count))
}

/// (owner, name, descriptor, tag) of a method reference.
pub(crate) type MemberRef<'a> = (&'a [u8], &'a [u8], &'a [u8], u8);

/// Indexed view of the original constant pool (rewrite path only).
pub(crate) struct Pool<'a> {
    pub(crate) buf: &'a [u8],
    /// offset of each entry's tag; 0 for index 0 and for second slots
    pub(crate) offs: Vec<u32>,
}

impl<'a> Pool<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Result<(Pool<'a>, usize), RewriteError> {
        let count = be16(buf, 8).unwrap_or(0) as usize;
        let mut offs = vec![0u32; count.max(1)];
        let (end, _) = walk(buf, |i, off, _| offs[i as usize] = off as u32)?;
        Ok((Pool { buf, offs }, end))
    }

    pub(crate) fn count(&self) -> usize {
        self.offs.len()
    }

    #[inline]
    pub(crate) fn tag(&self, idx: u16) -> Option<u8> {
        let o = *self.offs.get(idx as usize)? as usize;
        if o == 0 {
            return None;
        }
        self.buf.get(o).copied()
    }

    fn entry(&self, idx: u16, want: u8, reason: &'static str) -> Result<usize, RewriteError> {
        match self.tag(idx) {
            Some(t) if t == want => Ok(self.offs[idx as usize] as usize),
            _ => Err(RewriteError::BadConstantRef { index: idx, reason }),
        }
    }

    /// The bytes of a Utf8 entry.
    pub(crate) fn utf8(&self, idx: u16) -> Result<&'a [u8], RewriteError> {
        let o = self.entry(idx, UTF8, "expected a Utf8 entry")?;
        let len = be16(self.buf, o + 1).unwrap_or(0) as usize;
        // walk() has checked that the bytes are in bounds
        Ok(&self.buf[o + 3..o + 3 + len])
    }

    /// The name of a Class entry.
    pub(crate) fn class_name(&self, idx: u16) -> Result<&'a [u8], RewriteError> {
        let o = self.entry(idx, CLASS, "expected a Class entry")?;
        self.utf8(be16(self.buf, o + 1).unwrap_or(0))
    }

    /// (owner, name, descriptor, tag) of a Methodref or InterfaceMethodref.
    pub(crate) fn member_ref(&self, idx: u16) -> Result<MemberRef<'a>, RewriteError> {
        let t = self.tag(idx);
        if t != Some(METHODREF) && t != Some(IMETHODREF) {
            return Err(RewriteError::BadConstantRef {
                index: idx,
                reason: "expected a method reference",
            });
        }
        let o = self.offs[idx as usize] as usize;
        let class = be16(self.buf, o + 1).unwrap_or(0);
        let nat = be16(self.buf, o + 3).unwrap_or(0);
        let no = self.entry(nat, NAME_AND_TYPE, "expected a NameAndType entry")?;
        let name = self.utf8(be16(self.buf, no + 1).unwrap_or(0))?;
        let desc = self.utf8(be16(self.buf, no + 3).unwrap_or(0))?;
        Ok((self.class_name(class)?, name, desc, t.unwrap_or(0)))
    }

    /// The descriptor of the NameAndType of a Fieldref, Methodref, InterfaceMethodref or
    /// InvokeDynamic entry whose tag is one of `tags`.
    pub(crate) fn nat_descriptor(&self, idx: u16, tags: &[u8]) -> Option<&'a [u8]> {
        if !tags.contains(&self.tag(idx)?) {
            return None;
        }
        self.member_name_and_type(idx).map(|(_, desc)| desc)
    }

    /// (name, descriptor) of a Fieldref, Methodref, InterfaceMethodref or InvokeDynamic
    /// entry: what an instruction's stack effect depends on.
    pub(crate) fn member_name_and_type(&self, idx: u16) -> Option<(&'a [u8], &'a [u8])> {
        let t = self.tag(idx)?;
        if !matches!(t, 9 | METHODREF | IMETHODREF | 18) {
            return None;
        }
        let o = self.offs[idx as usize] as usize;
        let nat = be16(self.buf, o + 3)?;
        let no = self.entry(nat, NAME_AND_TYPE, "").ok()?;
        let name = self.utf8(be16(self.buf, no + 1)?).ok()?;
        let desc = self.utf8(be16(self.buf, no + 3)?).ok()?;
        Some((name, desc))
    }

    fn find_utf8(&self, s: &[u8]) -> Option<u16> {
        (1..self.offs.len()).find_map(|i| {
            let o = self.offs[i] as usize;
            if o != 0 && self.buf[o] == UTF8 {
                let len = be16(self.buf, o + 1)? as usize;
                if len == s.len() && &self.buf[o + 3..o + 3 + len] == s {
                    return Some(i as u16);
                }
            }
            None
        })
    }

    fn find_two(&self, tag: u8, a: u16, b: Option<u16>) -> Option<u16> {
        (1..self.offs.len()).find_map(|i| {
            let o = self.offs[i] as usize;
            if o != 0
                && self.buf[o] == tag
                && be16(self.buf, o + 1) == Some(a)
                && b.is_none_or(|b| be16(self.buf, o + 3) == Some(b))
            {
                Some(i as u16)
            } else {
                None
            }
        })
    }
}

/// Appends constant pool entries, reusing existing or already added ones.
pub(crate) struct PoolBuilder<'p, 'a, 'w> {
    pub(crate) pool: &'p Pool<'a>,
    pub(crate) extra: Vec<u8>,
    next: usize,
    cache: Vec<(u8, Vec<u8>, u16)>,
    wanted: &'w [&'w str],
    /// index in the original pool of each wanted string, 0 when absent
    found: Vec<u16>,
}

impl<'p, 'a, 'w> PoolBuilder<'p, 'a, 'w> {
    /// `wanted`: strings that will probably be needed; they are looked up in
    /// one pass (an absent one is then known to be absent without a scan).
    pub(crate) fn new(pool: &'p Pool<'a>, wanted: &'w [&'w str]) -> Self {
        // wanted strings bucketed by length (lengths >= 127 share the last bucket)
        let mut order: Vec<usize> = (0..wanted.len()).collect();
        order.sort_by_key(|&k| wanted[k].len().min(127));
        let mut start = [0u8; 129];
        for &k in &order {
            start[wanted[k].len().min(127) + 1] += 1;
        }
        for l in 1..129 {
            start[l] = start[l].saturating_add(start[l - 1]);
        }
        let mut found: Vec<u16> = vec![0; wanted.len()];
        for i in 1..pool.offs.len() {
            let o = pool.offs[i] as usize;
            if o == 0 || pool.buf[o] != UTF8 {
                continue;
            }
            let len = be16(pool.buf, o + 1).unwrap_or(0) as usize;
            let l = len.min(127);
            let (a, b) = (start[l] as usize, start[l + 1] as usize);
            if a == b {
                continue;
            }
            let s = &pool.buf[o + 3..o + 3 + len];
            for &k in &order[a..b] {
                if found[k] == 0 && wanted[k].as_bytes() == s {
                    found[k] = i as u16;
                }
            }
        }
        PoolBuilder {
            pool,
            extra: Vec::new(),
            next: pool.count(),
            cache: Vec::new(),
            wanted,
            found,
        }
    }

    /// A point to return to with [`PoolBuilder::rollback`].
    pub(crate) fn mark(&self) -> (usize, usize, usize) {
        (self.extra.len(), self.next, self.cache.len())
    }

    /// Forgets the entries added since `mark` (a method that ended up
    /// unchanged must not leave constants behind).
    pub(crate) fn rollback(&mut self, mark: (usize, usize, usize)) {
        self.extra.truncate(mark.0);
        self.next = mark.1;
        self.cache.truncate(mark.2);
    }

    /// New constant_pool_count.
    pub(crate) fn count(&self) -> usize {
        self.next
    }

    fn cached(&self, tag: u8, key: &[u8]) -> Option<u16> {
        self.cache
            .iter()
            .find(|(t, k, _)| *t == tag && k == key)
            .map(|e| e.2)
    }

    fn add(&mut self, tag: u8, key: Vec<u8>, body: &[u8]) -> Result<u16, RewriteError> {
        if self.next >= 0xFFFF {
            return Err(RewriteError::ConstantPoolFull);
        }
        let idx = self.next as u16;
        self.next += 1;
        self.extra.push(tag);
        self.extra.extend_from_slice(body);
        self.cache.push((tag, key, idx));
        Ok(idx)
    }

    pub(crate) fn utf8(&mut self, s: &str) -> Result<u16, RewriteError> {
        let key = s.as_bytes();
        if let Some(i) = self.cached(UTF8, key) {
            return Ok(i);
        }
        let known = self
            .wanted
            .iter()
            .position(|w| w.as_bytes() == key)
            .map(|k| self.found[k]);
        let found = match known {
            Some(0) => None,
            Some(i) => Some(i),
            None => self.pool.find_utf8(key),
        };
        if let Some(i) = found {
            self.cache.push((UTF8, key.to_vec(), i));
            return Ok(i);
        }
        let mut body = (key.len() as u16).to_be_bytes().to_vec();
        body.extend_from_slice(key);
        self.add(UTF8, key.to_vec(), &body)
    }

    fn two(&mut self, tag: u8, a: u16, b: Option<u16>) -> Result<u16, RewriteError> {
        let mut key = a.to_be_bytes().to_vec();
        if let Some(b) = b {
            key.extend_from_slice(&b.to_be_bytes());
        }
        if let Some(i) = self.cached(tag, &key) {
            return Ok(i);
        }
        // an entry that refers to a new entry cannot exist in the original pool
        let old = self.pool.count() as u16;
        let may_exist = a < old && b.is_none_or(|b| b < old);
        if let Some(i) = if may_exist {
            self.pool.find_two(tag, a, b)
        } else {
            None
        } {
            self.cache.push((tag, key, i));
            return Ok(i);
        }
        let body = key.clone();
        self.add(tag, key, &body)
    }

    pub(crate) fn class(&mut self, name: &str) -> Result<u16, RewriteError> {
        let n = self.utf8(name)?;
        self.two(CLASS, n, None)
    }

    pub(crate) fn string(&mut self, s: &str) -> Result<u16, RewriteError> {
        let n = self.utf8(s)?;
        self.two(STRING, n, None)
    }

    /// A CONSTANT_Integer (tag 3).
    pub(crate) fn integer(&mut self, v: i32) -> Result<u16, RewriteError> {
        let key = v.to_be_bytes().to_vec();
        if let Some(i) = self.cached(3, &key) {
            return Ok(i);
        }
        self.add(3, key.clone(), &key)
    }

    pub(crate) fn methodref(
        &mut self,
        owner: &str,
        name: &str,
        desc: &str,
    ) -> Result<u16, RewriteError> {
        let c = self.class(owner)?;
        let n = self.utf8(name)?;
        let d = self.utf8(desc)?;
        let nat = self.two(NAME_AND_TYPE, n, Some(d))?;
        self.two(METHODREF, c, Some(nat))
    }

    /// A CONSTANT_Fieldref of a field of class `owner` (the constant-pool index of its Class).
    pub(crate) fn fieldref(
        &mut self,
        owner: u16,
        name: &str,
        desc: &str,
    ) -> Result<u16, RewriteError> {
        let n = self.utf8(name)?;
        let d = self.utf8(desc)?;
        let nat = self.two(NAME_AND_TYPE, n, Some(d))?;
        self.two(FIELDREF, owner, Some(nat))
    }
}
