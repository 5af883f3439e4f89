//! A bounded recording's chunk folder read as one recording (docs/FORMAT.md, "Chunks").
//!
//! [`Chunks`] is a [`Read`] over the chunk files in order that leaves out what each chunk
//! after the first repeats so that it can be read alone: its `RecordingStarted` line, the
//! restated `ThreadStarted` lines of its preamble (those of threads the chain has started
//! already) and its restated `ObjectClass` lines. What comes out is one log, which every
//! reader reads as it reads a `PREFIX.orca`; a dump (`orca dump`) is made of it too.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::reader::{Line, LineReader};

/// The chunk number of a file name `NNNNNN.orca` (six digits or more).
pub fn chunk_number(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".orca")?;
    (digits.len() >= 6 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// The chunk files of folder `dir`, in order.
pub fn chunk_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files: Vec<(u64, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if let Some(n) = entry.file_name().to_str().and_then(chunk_number) {
            files.push((n, entry.path()));
        }
    }
    files.sort();
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// The chunks of a folder (or a given list of chunk files), read as one log.
pub struct Chunks {
    files: std::vec::IntoIter<(PathBuf, Option<u64>)>,
    current: Option<(LineReader<io::Take<File>>, bool)>,
    /// Chunks begun so far.
    index: usize,
    /// The number of the chunk before the current one, and whether the current one follows a
    /// gap (a chunk deleted by hand): its `RecordingStarted` line is kept then, so that readers
    /// know that the lines before it and after it do not pair.
    previous: Option<u64>,
    gap: bool,
    /// Lines of the current chunk's preamble still to come.
    preamble: u64,
    /// Threads whose `ThreadStarted` the output has.
    started: HashSet<u32>,
    /// `ObjectClass` lines per object ID in the output, and in the current chunk.
    classes: HashMap<u32, u32>,
    chunk_classes: HashMap<u32, u32>,
    out: Vec<u8>,
    pos: usize,
}

impl Chunks {
    /// The chunks of folder `dir`.
    pub fn open(dir: &Path) -> io::Result<Chunks> {
        let files = chunk_files(dir)?;
        if files.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no chunk (NNNNNN.orca) in the folder",
            ));
        }
        Ok(Self::of(files.into_iter().map(|f| (f, None)).collect()))
    }

    /// These chunk files, in this order, each up to its number of bytes if given.
    pub fn of(files: Vec<(PathBuf, Option<u64>)>) -> Chunks {
        Chunks {
            files: files.into_iter(),
            current: None,
            index: 0,
            previous: None,
            gap: false,
            preamble: 0,
            started: HashSet::new(),
            classes: HashMap::new(),
            chunk_classes: HashMap::new(),
            out: Vec::new(),
            pos: 0,
        }
    }

    /// Fills `out` with the next kept lines; false at the end.
    fn fill(&mut self) -> io::Result<bool> {
        self.out.clear();
        self.pos = 0;
        loop {
            if self.current.is_none() {
                let Some((path, len)) = self.files.next() else {
                    return Ok(false);
                };
                let last = self.files.len() == 0;
                let f = match File::open(&path) {
                    Ok(f) => f,
                    // Removed by the ring since the listing: the rest still reads.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => {
                        return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display())))
                    }
                };
                let number = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(chunk_number);
                self.gap = matches!((self.previous, number), (Some(p), Some(n)) if n != p + 1);
                self.previous = number.or(self.previous);
                let f = f.take(len.unwrap_or(u64::MAX));
                self.current = Some((LineReader::new(f), last));
                self.index += 1;
                self.preamble = 0;
                self.chunk_classes.clear();
            }
            let (reader, last) = self.current.as_mut().expect("open");
            let last = *last;
            let first = self.index == 1;
            match reader.next_line()? {
                None => {
                    self.current = None;
                    if !self.out.is_empty() {
                        return Ok(true);
                    }
                }
                Some((n, line)) => {
                    let b = match line {
                        Line::Complete(b) => b,
                        // A torn line can only end the last chunk (the JVM killed); one that
                        // ends an earlier chunk is left out, so that no line is split.
                        Line::Torn(b) => {
                            if last {
                                self.out.extend_from_slice(b);
                                return Ok(true);
                            }
                            continue;
                        }
                        Line::TooLong => {
                            self.out.extend_from_slice(b"?\n");
                            continue;
                        }
                    };
                    let mut fields = b.splitn(4, |&c| c == b',');
                    let _ts = fields.next();
                    let kind = fields.next().unwrap_or_default();
                    let third = fields.next().unwrap_or_default();
                    let keep = match kind {
                        // Only the last chunk's says how the recording ended.
                        b"RecordingEnded" => last,
                        b"RecordingStarted" if n == 1 => {
                            self.preamble = preamble_lines(third);
                            first || self.gap
                        }
                        b"ThreadStarted" => {
                            let id = hex(third);
                            let restated = self.preamble > 0;
                            if restated {
                                self.preamble -= 1;
                            }
                            let new = id.is_none_or(|id| self.started.insert(id));
                            !restated || new
                        }
                        b"ObjectClass" => match hex(third) {
                            Some(id) => {
                                let c = self.chunk_classes.entry(id).or_default();
                                *c += 1;
                                let total = self.classes.entry(id).or_default();
                                if *c > *total {
                                    *total = *c;
                                    true
                                } else {
                                    false
                                }
                            }
                            None => true,
                        },
                        _ => {
                            self.preamble = 0;
                            true
                        }
                    };
                    if keep {
                        self.out.extend_from_slice(b);
                        self.out.push(b'\n');
                        if self.out.len() >= 1 << 16 {
                            return Ok(true);
                        }
                    }
                }
            }
        }
    }
}

/// The `threads=K` of a chunk's settings: lines of restated threads after it.
fn preamble_lines(settings: &[u8]) -> u64 {
    std::str::from_utf8(settings)
        .ok()
        .and_then(|s| {
            s.split(';')
                .find_map(|i| i.strip_prefix("threads="))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn hex(b: &[u8]) -> Option<u32> {
    let b = b.split(|&c| c == b',').next()?;
    std::str::from_utf8(b)
        .ok()
        .and_then(|s| u32::from_str_radix(s, 16).ok())
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.out.len() && !self.fill()? {
            return Ok(0);
        }
        let n = (self.out.len() - self.pos).min(buf.len());
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Writes a dump (`orca dump`): `OUT.orca` made of `events` (chunks or one event file, each
/// up to its bytes if given) read as one log, ended by `RecordingEnded,dump` stamped `at`, and
/// `OUT.methods`, `OUT.classtable` copied from `methods` and `classtable` up to their bytes.
/// Each output is opened as every Orca output is ([`crate::output::create`]). Returns the
/// bytes of `OUT.orca`.
pub fn write_dump(
    events: Vec<(PathBuf, Option<u64>)>,
    methods: (&Path, u64),
    classtable: (&Path, u64),
    at: u64,
    out: &Path,
) -> Result<u64, String> {
    use std::io::Write;
    let p = crate::paths_as_written(out);
    let fail = |path: &Path, e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    // The folder is made if missing, as the agent's own.
    if let Some(dir) = p.orca.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| fail(dir, &e))?;
    }
    for (from, len, to) in [
        (methods.0, methods.1, &p.methods),
        (classtable.0, classtable.1, &p.classtable),
    ] {
        let mut src = File::open(from).map_err(|e| fail(from, &e))?.take(len);
        let mut dst = crate::output::create(to, false).map_err(|e| e.to_string())?;
        io::copy(&mut src, &mut dst).map_err(|e| fail(to, &e))?;
    }
    let mut dst =
        io::BufWriter::new(crate::output::create(&p.orca, false).map_err(|e| e.to_string())?);
    let mut src = Chunks::of(events);
    let mut bytes = io::copy(&mut src, &mut dst).map_err(|e| fail(&p.orca, &e))?;
    let end = format!(
        "{}.{:09},RecordingEnded,dump\n",
        at / 1_000_000_000,
        at % 1_000_000_000
    );
    dst.write_all(end.as_bytes())
        .and_then(|()| dst.flush())
        .map_err(|e| fail(&p.orca, &e))?;
    bytes += end.len() as u64;
    Ok(bytes)
}

/// A recording's event file: one `PREFIX.orca`, or a chunk folder read as one.
pub enum LogFile {
    /// `PREFIX.orca`.
    File(File),
    /// A chunk folder.
    Chunks(Box<Chunks>),
}

impl LogFile {
    /// Opens `path`: a folder is a chunk folder.
    pub fn open(path: &Path) -> io::Result<LogFile> {
        if path.is_dir() {
            Ok(LogFile::Chunks(Box::new(Chunks::open(path)?)))
        } else {
            File::open(path).map(LogFile::File)
        }
    }
}

impl Read for LogFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            LogFile::File(f) => f.read(buf),
            LogFile::Chunks(c) => c.read(buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_leaves_out_what_chunks_restate() {
        let dir = std::env::temp_dir().join(format!("orca-chunks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let s = "mode=instrument;trace=summary;stackdepth=8";
        std::fs::write(
            dir.join("000002.orca"),
            format!("1.000000000,RecordingStarted,{s};chunk=2;threads=1\n1.000000000,ThreadStarted,0000000A,main\n1.100000000,ObjectClass,00000011,LA;\n1.200000000,ThreadStarted,0000000B,w\n"),
        )
        .unwrap();
        std::fs::write(
            dir.join("000003.orca"),
            format!("2.000000000,RecordingStarted,{s};chunk=3;threads=2\n2.000000000,ThreadStarted,0000000A,main\n2.000000000,ThreadStarted,0000000B,w\n2.100000000,ObjectClass,00000011,LA;\n2.100000000,ObjectClass,00000011,LB;\n2.200000000,ThreadEnded,0000000B\n2.300000000,RecordingEnded,vmdeath\n"),
        )
        .unwrap();
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        let mut text = String::new();
        Chunks::open(&dir)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(
            text,
            format!("1.000000000,RecordingStarted,{s};chunk=2;threads=1\n1.000000000,ThreadStarted,0000000A,main\n1.100000000,ObjectClass,00000011,LA;\n1.200000000,ThreadStarted,0000000B,w\n2.100000000,ObjectClass,00000011,LB;\n2.200000000,ThreadEnded,0000000B\n2.300000000,RecordingEnded,vmdeath\n")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
