//! A bounded recording's ring of chunk files (`maxsize`, `maxage`; docs/FORMAT.md, "Chunks").
//!
//! The writer thread does all of it: a program thread never waits for a rotation, a removal
//! or a dump. Each chunk is a recording of its own with the shared `.methods` and
//! `.classtable`: it begins with a `RecordingStarted` line that says which chunk it is and how
//! many restated `ThreadStarted` lines (one per thread alive at its start) follow, so that
//! every thread a line names is named in it. Object classes are restated by the writer when a
//! chunk first names the object ([`super::writer`]'s `Classes`).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::options::Ring;
use orca_format::FastMap;

/// The file of chunk `n` in `dir`: `000001.orca`, ...
pub fn chunk_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:06}.orca"))
}

/// The chunk number of a file name `NNNNNN.orca` (six digits or more).
pub fn chunk_number(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".orca")?;
    (digits.len() >= 6 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Makes the chunk folder (or empties it of the chunks of an earlier run: they would read as
/// part of this one) and opens chunk 1.
pub fn create_folder(dir: &Path) -> io::Result<(File, u64)> {
    match std::fs::symlink_metadata(dir) {
        Ok(md) if md.file_type().is_symlink() => {
            return Err(io::Error::other(
                "is a symbolic link; Orca does not write through links: remove it or choose another prefix",
            ))
        }
        Ok(md) if !md.is_dir() => {
            return Err(io::Error::other(
                "is not a folder (a bounded recording's chunks go into a folder of that name): remove it or choose another prefix",
            ))
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::create_dir_all(dir)?,
        Err(e) => return Err(e),
    }
    let mut stale = 0u64;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_str().and_then(chunk_number).is_some() {
            std::fs::remove_file(entry.path())?;
            stale += 1;
        }
    }
    let path = chunk_path(dir, 1);
    let file = orca_format::output::create(&path, true).map_err(|e| match e {
        orca_format::output::OutputError::Io { source, .. } => source,
        e => io::Error::other(e.to_string()),
    })?;
    Ok((file, stale))
}

/// A chunk closed, still on disk.
#[derive(Clone, Copy, Debug)]
struct Closed {
    number: u64,
    bytes: u64,
    /// When its last line was written (`now_nanos`).
    closed_at: u64,
}

/// The ring's state, kept by the writer thread.
pub struct ChunkRing {
    pub cfg: Ring,
    pub dir: PathBuf,
    closed: VecDeque<Closed>,
    /// The chunk being written.
    pub number: u64,
    /// When it was opened (`now_nanos`).
    pub opened_at: u64,
    /// The settings of the recording (`key=value;...`), which every chunk's first line repeats.
    pub settings: String,
    /// The threads alive, by the `ThreadStarted` and `ThreadEnded` lines written: each
    /// chunk restates them.
    pub threads: FastMap<u32, Box<str>>,
    /// A full disk was said (once).
    pub said_full: bool,
    /// A chunk that could not be opened was said (once); the current one goes on meanwhile.
    pub said_open: bool,
    /// Chunks removed by the ring (size or age), for the exit line.
    pub removed: u64,
    /// Bytes and lines of the current chunk's preamble (its first lines).
    pub preamble: (usize, u64),
    /// Lines a full disk took (not written), and whether the last write failed.
    pub dropped_lines: u64,
    pub failing: bool,
}

impl ChunkRing {
    pub fn new(cfg: Ring, dir: PathBuf, now: u64) -> ChunkRing {
        ChunkRing {
            cfg,
            dir,
            closed: VecDeque::new(),
            number: 1,
            opened_at: now,
            settings: String::new(),
            threads: FastMap::default(),
            said_full: false,
            said_open: false,
            removed: 0,
            preamble: (0, 0),
            dropped_lines: 0,
            failing: false,
        }
    }

    /// Whether the current chunk (`bytes` long, with what is buffered) is due to be closed.
    pub fn due(&self, bytes: u64, now: Option<u64>) -> bool {
        self.cfg.chunk_bytes.is_some_and(|b| bytes >= b)
            || now.is_some_and(|now| {
                self.cfg
                    .chunk_nanos
                    .is_some_and(|n| now.saturating_sub(self.opened_at) >= n)
            })
    }

    /// Opens the next chunk's file; [`ChunkRing::close_current`] then makes it the current one.
    pub fn open_next(&self) -> io::Result<(File, PathBuf)> {
        let path = chunk_path(&self.dir, self.number + 1);
        let file = orca_format::output::create(&path, true).map_err(|e| match e {
            orca_format::output::OutputError::Io { source, .. } => source,
            e => io::Error::other(e.to_string()),
        })?;
        Ok((file, path))
    }

    /// The current chunk, `bytes` long, is closed at `now`; the next one is current.
    pub fn close_current(&mut self, bytes: u64, now: u64) {
        self.closed.push_back(Closed {
            number: self.number,
            bytes,
            closed_at: now,
        });
        self.number += 1;
        self.opened_at = now;
    }

    /// The first line of the chunk being written and its restated threads, all stamped `now`.
    pub fn preamble(&self, now: u64) -> Vec<u8> {
        let mut out = Vec::new();
        let mut ts = Vec::new();
        crate::recorder::clock::push_timestamp(&mut ts, now);
        let mut threads: Vec<(&u32, &Box<str>)> = self.threads.iter().collect();
        threads.sort_by_key(|(id, _)| **id);
        out.extend_from_slice(&ts);
        let _ = writeln!(
            out,
            ",RecordingStarted,{};chunk={};threads={}",
            self.settings,
            self.number,
            threads.len()
        );
        for (id, name) in threads {
            out.extend_from_slice(&ts);
            out.extend_from_slice(b",ThreadStarted,");
            crate::recorder::writer::push_hex(&mut out, *id);
            out.push(b',');
            crate::escape::push_escaped(&mut out, name, crate::escape::TextKind::Free);
            out.push(b'\n');
        }
        out
    }

    /// The number of the oldest chunk on disk.
    pub fn first(&self) -> u64 {
        self.closed.front().map_or(self.number, |c| c.number)
    }

    /// Removes the oldest closed chunk; false when none is left.
    pub fn remove_oldest(&mut self) -> bool {
        let Some(c) = self.closed.pop_front() else {
            return false;
        };
        // A chunk deleted by hand is gone already.
        let _ = std::fs::remove_file(chunk_path(&self.dir, c.number));
        self.removed += 1;
        true
    }

    /// Removes the oldest chunks while the chunks' total (the current one `current` bytes
    /// long) passes `maxsize`, and every chunk whose last line is older than `maxage`.
    pub fn enforce(&mut self, current: u64, now: Option<u64>) {
        if let Some(max) = self.cfg.max_size {
            let mut total = current + self.closed.iter().map(|c| c.bytes).sum::<u64>();
            while total > max {
                let Some(c) = self.closed.front().copied() else {
                    break;
                };
                self.remove_oldest();
                total -= c.bytes;
            }
        }
        if let (Some(age), Some(now)) = (self.cfg.max_age, now) {
            while self
                .closed
                .front()
                .is_some_and(|c| now.saturating_sub(c.closed_at) > age)
            {
                self.remove_oldest();
            }
        }
    }

    /// The closed chunks on disk, oldest first, with the time each was closed.
    pub fn closed_chunks(&self) -> impl Iterator<Item = (PathBuf, u64)> + '_ {
        self.closed
            .iter()
            .map(|c| (chunk_path(&self.dir, c.number), c.closed_at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(chunk_number("000001.orca"), Some(1));
        assert_eq!(chunk_number("1234567.orca"), Some(1234567));
        assert_eq!(chunk_number("00001.orca"), None);
        assert_eq!(chunk_number("00000a.orca"), None);
        assert_eq!(chunk_number("000001.methods"), None);
        assert_eq!(
            chunk_path(Path::new("d"), 12),
            PathBuf::from("d/000012.orca")
        );
    }

    #[test]
    fn the_ring_keeps_its_bound() {
        let dir = std::env::temp_dir().join(format!("orca-ring-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (_, stale) = create_folder(&dir).unwrap();
        assert_eq!(stale, 0);
        let cfg = Ring::of(Some(160 << 10), None).unwrap();
        let mut ring = ChunkRing::new(cfg, dir.clone(), 0);
        for i in 0..20u64 {
            assert!(ring.due(20 << 10, None));
            ring.open_next().unwrap();
            ring.close_current(20 << 10, i);
            ring.enforce(0, None);
            let total: u64 = ring.closed.iter().map(|c| c.bytes).sum();
            assert!(total <= 160 << 10);
        }
        // 8 closed chunks of 20 KiB fit in 160 KiB: the 12 oldest are gone.
        assert_eq!(ring.removed, 12);
        let left: Vec<u64> = ring.closed.iter().map(|c| c.number).collect();
        assert_eq!(left, (13..=20).collect::<Vec<_>>());
        assert!(!chunk_path(&dir, 12).exists() && chunk_path(&dir, 13).exists());
        let (_, stale) = create_folder(&dir).unwrap();
        assert_eq!(stale, 9);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
