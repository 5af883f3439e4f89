//! Line splitting with bounded memory.
//!
//! The Orca files can be many gigabytes long, so they are never read whole: a
//! [`LineReader`] keeps one buffer (1 MiB, grown only for a longer line and never
//! beyond [`LineReader::max_line`]) and hands out borrowed line slices, which is
//! what lets the parser stay zero-copy and fast.

use std::io::{self, Read};

/// Default size of the read buffer: large enough that `read` calls are rare.
const DEFAULT_CAPACITY: usize = 1 << 20;
/// Default longest accepted line. A line table of a 64 KiB method is about
/// 1.2 MB, so 16 MiB leaves room while still bounding memory.
pub const DEFAULT_MAX_LINE: usize = 16 << 20;

/// One line as read from a file, without its `\n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// A line ended by `\n`.
    Complete(&'a [u8]),
    /// The last line of the file has no final `\n`: the writer was killed
    /// (FORMAT.md allows this only after `kill -9`). Its content is unreliable.
    Torn(&'a [u8]),
    /// The line was longer than the reader's limit; it has been skipped.
    TooLong,
}

/// Streaming line reader over any [`Read`], with 1-based line numbers.
///
/// Memory use is bounded by `max_line`, whatever the file's length.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    scan: usize,
    end: usize,
    eof: bool,
    line_no: u64,
    bytes: u64,
    max_line: usize,
}

impl<R: Read> LineReader<R> {
    /// A reader with the default buffer size and line limit.
    pub fn new(inner: R) -> Self {
        Self::with_max_line(inner, DEFAULT_MAX_LINE)
    }

    /// A reader that rejects lines longer than `max_line` bytes.
    pub fn with_max_line(inner: R, max_line: usize) -> Self {
        let cap = DEFAULT_CAPACITY.min(max_line.max(64) + 1);
        LineReader {
            inner,
            buf: vec![0; cap],
            start: 0,
            scan: 0,
            end: 0,
            eof: false,
            line_no: 0,
            bytes: 0,
            max_line,
        }
    }

    /// The longest line (without `\n`) this reader accepts.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// Number of the line last returned (1-based; 0 before the first).
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    /// Bytes consumed so far (for throughput figures).
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// The next line and its number, or `None` at the end of the file.
    pub fn next_line(&mut self) -> io::Result<Option<(u64, Line<'_>)>> {
        let mut skipping = false;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.scan..self.end]) {
                let nl = self.scan + i;
                let s = self.start;
                self.start = nl + 1;
                self.scan = self.start;
                self.line_no += 1;
                self.bytes += (nl + 1 - s) as u64;
                if skipping {
                    return Ok(Some((self.line_no, Line::TooLong)));
                }
                if nl - s > self.max_line {
                    return Ok(Some((self.line_no, Line::TooLong)));
                }
                return Ok(Some((self.line_no, Line::Complete(&self.buf[s..nl]))));
            }
            self.scan = self.end;
            if self.eof {
                if self.start < self.end {
                    let s = self.start;
                    let e = self.end;
                    self.start = e;
                    self.scan = e;
                    self.line_no += 1;
                    self.bytes += (e - s) as u64;
                    if skipping || e - s > self.max_line {
                        return Ok(Some((self.line_no, Line::TooLong)));
                    }
                    return Ok(Some((self.line_no, Line::Torn(&self.buf[s..e]))));
                }
                if skipping {
                    self.line_no += 1;
                    return Ok(Some((self.line_no, Line::TooLong)));
                }
                return Ok(None);
            }
            // Need more data: compact, grow or start skipping an over-long line.
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.scan -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                if self.buf.len() <= self.max_line {
                    let n = (self.buf.len() * 2).min(self.max_line + 1);
                    self.buf.resize(n.max(self.buf.len() + 1), 0);
                } else {
                    // Drop what we have of this line and keep looking for its end.
                    skipping = true;
                    self.bytes += self.end as u64;
                    self.end = 0;
                    self.scan = 0;
                }
            }
            let n = loop {
                match self.inner.read(&mut self.buf[self.end..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(data: &[u8], max: usize) -> Vec<(u64, String)> {
        let mut r = LineReader::with_max_line(data, max);
        let mut out = Vec::new();
        while let Some((n, l)) = r.next_line().unwrap() {
            let s = match l {
                Line::Complete(b) => format!("C:{}", String::from_utf8_lossy(b)),
                Line::Torn(b) => format!("T:{}", String::from_utf8_lossy(b)),
                Line::TooLong => "L".to_string(),
            };
            out.push((n, s));
        }
        out
    }

    #[test]
    fn splits_and_numbers() {
        let v = lines(b"a\nbb\n\nccc", 100);
        assert_eq!(
            v,
            vec![
                (1, "C:a".into()),
                (2, "C:bb".into()),
                (3, "C:".into()),
                (4, "T:ccc".into())
            ]
        );
        assert!(lines(b"", 10).is_empty());
    }

    #[test]
    fn too_long_lines_are_skipped() {
        let mut data = vec![b'x'; 300];
        data.extend_from_slice(b"\nok\n");
        data.extend(vec![b'y'; 300]);
        let v = lines(&data, 100);
        assert_eq!(
            v,
            vec![(1, "L".into()), (2, "C:ok".into()), (3, "L".into())]
        );
    }
}
