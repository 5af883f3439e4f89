//! Bounds-checked big-endian reading of class-file bytes.
//!
//! Why: malformed input must give an error, never a panic or an
//! out-of-bounds read; every read in the crate goes through here.

use crate::error::RewriteError;

/// A cursor over a byte slice; every read checks the bounds.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], pos: usize) -> Self {
        Reader { buf, pos }
    }

    #[inline]
    fn need(&self, n: usize, what: &'static str) -> Result<(), RewriteError> {
        match self.pos.checked_add(n) {
            Some(end) if end <= self.buf.len() => Ok(()),
            _ => Err(RewriteError::Truncated {
                what,
                needed: self.pos.saturating_add(n),
                len: self.buf.len(),
            }),
        }
    }

    #[inline]
    pub(crate) fn u1(&mut self, what: &'static str) -> Result<u8, RewriteError> {
        self.need(1, what)?;
        let v = self.buf[self.pos];
        self.pos += 1;
        Ok(v)
    }

    #[inline]
    pub(crate) fn u2(&mut self, what: &'static str) -> Result<u16, RewriteError> {
        self.need(2, what)?;
        let v = u16::from_be_bytes([self.buf[self.pos], self.buf[self.pos + 1]]);
        self.pos += 2;
        Ok(v)
    }

    #[inline]
    pub(crate) fn u4(&mut self, what: &'static str) -> Result<u32, RewriteError> {
        self.need(4, what)?;
        let b = &self.buf[self.pos..self.pos + 4];
        self.pos += 4;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline]
    pub(crate) fn skip(&mut self, n: usize, what: &'static str) -> Result<(), RewriteError> {
        self.need(n, what)?;
        self.pos += n;
        Ok(())
    }

    #[inline]
    pub(crate) fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], RewriteError> {
        self.need(n, what)?;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
}

/// Reads a big-endian u16 at `pos` of `b`, or `None` when out of bounds.
#[inline]
pub(crate) fn be16(b: &[u8], pos: usize) -> Option<u16> {
    let s = b.get(pos..pos.checked_add(2)?)?;
    Some(u16::from_be_bytes([s[0], s[1]]))
}

/// Reads a big-endian i32 at `pos` of `b`, or `None` when out of bounds.
#[inline]
pub(crate) fn be32(b: &[u8], pos: usize) -> Option<i32> {
    let s = b.get(pos..pos.checked_add(4)?)?;
    Some(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}
