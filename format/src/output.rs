//! How every file Orca writes is opened: the agent's three log files and each output of
//! `orca` (`html`, `pprof`, `flame`, `timeline`, `record --html`/`--pprof`). Here, beside the
//! reader, because both the agent and the command depend on this crate and must refuse the
//! same paths the same way.
//!
//! Users record into shared folders, as root or as a service account. A path whose last
//! component someone else made a symbolic link, a FIFO or a device, or a file of another
//! user, would have Orca overwrite (or block on, or feed) what that account can reach. So an
//! output is written only into a regular file: a new one, or an existing one of the user
//! writing it, and never through a link at the last component (`O_NOFOLLOW`). A link higher
//! up the path is the user's own choice of folder, and is followed.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why an output file was not opened. Every message names the path and what to do.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// A symbolic link at the last component (which someone else may have planted).
    #[error("{}: is a symbolic link; Orca does not write through links (the file it points to could be anyone's): remove the link or choose another path", path.display())]
    Link {
        /// The path given.
        path: PathBuf,
    },
    /// A folder.
    #[error("{}: is a directory; give the path of a file", path.display())]
    Directory {
        /// The path given.
        path: PathBuf,
    },
    /// A FIFO, a device or a socket.
    #[error("{}: is a {kind}, not a regular file; Orca writes only regular files: choose another path", path.display())]
    Special {
        /// The path given.
        path: PathBuf,
        /// What it is ("FIFO", "character device", ...).
        kind: &'static str,
    },
    /// A regular file of another user.
    #[error("{}: belongs to user {owner}, not to this user ({me}); Orca replaces only files of the user writing them: remove it or choose another path", path.display())]
    Owner {
        /// The path given.
        path: PathBuf,
        /// The file's owner (uid).
        owner: u32,
        /// The effective uid writing.
        me: u32,
    },
    /// Any other failure (no such folder, no permission, a full disk).
    #[error("{}: {source}", path.display())]
    Io {
        /// The path given.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
}

impl OutputError {
    /// The path refused or failed.
    pub fn path(&self) -> &Path {
        match self {
            OutputError::Link { path }
            | OutputError::Directory { path }
            | OutputError::Special { path, .. }
            | OutputError::Owner { path, .. }
            | OutputError::Io { path, .. } => path,
        }
    }

    /// A refusal of what is at the path (not an I/O error such as a missing folder).
    pub fn is_refusal(&self) -> bool {
        !matches!(self, OutputError::Io { .. })
    }
}

fn kind_of(t: std::fs::FileType) -> Option<&'static str> {
    if t.is_fifo() {
        Some("FIFO")
    } else if t.is_char_device() {
        Some("character device")
    } else if t.is_block_device() {
        Some("block device")
    } else if t.is_socket() {
        Some("socket")
    } else if t.is_file() {
        None
    } else {
        Some("special file")
    }
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// What is at `path` (not followed) or at the open file: refused unless a regular file of
/// this user.
fn check(path: &Path, md: &std::fs::Metadata) -> Result<(), OutputError> {
    check_for(path, md, euid())
}

/// As [`check`], for files that user `me` will write.
fn check_for(path: &Path, md: &std::fs::Metadata, me: u32) -> Result<(), OutputError> {
    let t = md.file_type();
    let path = path.to_path_buf();
    if t.is_symlink() {
        return Err(OutputError::Link { path });
    }
    if t.is_dir() {
        return Err(OutputError::Directory { path });
    }
    if let Some(kind) = kind_of(t) {
        return Err(OutputError::Special { path, kind });
    }
    if md.uid() != me {
        return Err(OutputError::Owner {
            path,
            owner: md.uid(),
            me,
        });
    }
    Ok(())
}

/// Whether [`create`] would refuse what is at `path` now (nothing there is fine), without
/// opening it: for a caller that opens several files and must refuse before it empties any.
pub fn may_create(path: &Path) -> Result<(), OutputError> {
    may_create_as(path, euid())
}

/// [`may_create`] for a file that user `uid` will write (`orca attach` as root: the target
/// JVM's agent writes as the JVM's user).
pub fn may_create_as(path: &Path, uid: u32) -> Result<(), OutputError> {
    match std::fs::symlink_metadata(path) {
        Ok(md) => check_for(path, &md, uid),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(OutputError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Creates `path`, or empties it when it is a regular file of this user; `read`: open it for
/// reading too. Refuses a symbolic link at the last component, a directory, a FIFO, a device,
/// a socket and another user's file without touching them (a FIFO is never opened: a writer
/// would block on it or feed its reader).
pub fn create(path: &Path, read: bool) -> Result<File, OutputError> {
    let io = |source: io::Error| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    may_create(path)?;
    // Between that look and the open something else may be put there: the open follows no
    // link and does not block on a FIFO, and what it opened is checked again before it is
    // emptied.
    let file = OpenOptions::new()
        .read(read)
        .write(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => OutputError::Link {
                path: path.to_path_buf(),
            },
            Some(libc::EISDIR) => OutputError::Directory {
                path: path.to_path_buf(),
            },
            Some(libc::ENXIO) => OutputError::Special {
                path: path.to_path_buf(),
                kind: "FIFO",
            },
            _ => io(e),
        })?;
    check(path, &file.metadata().map_err(io)?)?;
    // SAFETY: F_GETFL/F_SETFL on a descriptor this function owns.
    unsafe {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    file.set_len(0).map_err(io)?;
    Ok(file)
}

/// Writes `data` to `path` as [`create`] opens it.
pub fn write(path: &Path, data: impl AsRef<[u8]>) -> Result<(), OutputError> {
    use std::io::Write;
    let mut f = create(path, false)?;
    f.write_all(data.as_ref())
        .map_err(|source| OutputError::Io {
            path: path.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("orca-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_new_file_and_one_of_ours_are_written_and_emptied() {
        let d = dir("ours");
        let p = d.join("out.html");
        write(&p, "first, longer").unwrap();
        write(&p, "second").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "second");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn links_folders_and_fifos_are_refused_untouched() {
        let d = dir("refused");
        let victim = d.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let link = d.join("run.orca");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = create(&link, true).unwrap_err();
        assert!(matches!(e, OutputError::Link { .. }), "{e}");
        assert!(
            e.to_string().contains("run.orca: is a symbolic link"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // a link to a folder
        let to_dir = d.join("to-dir");
        std::os::unix::fs::symlink(&d, &to_dir).unwrap();
        assert!(matches!(
            create(&to_dir, false),
            Err(OutputError::Link { .. })
        ));
        // a dangling link: nothing is created where it points
        let dangling = d.join("dangling");
        std::os::unix::fs::symlink(d.join("made"), &dangling).unwrap();
        assert!(matches!(
            create(&dangling, false),
            Err(OutputError::Link { .. })
        ));
        assert!(!d.join("made").exists());
        assert!(matches!(
            create(&d, false),
            Err(OutputError::Directory { .. })
        ));
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = create(&fifo, false).unwrap_err();
        assert!(
            e.to_string().contains("is a FIFO, not a regular file"),
            "{e}"
        );
        let e = create(Path::new("/dev/null"), false).unwrap_err();
        assert!(e.to_string().contains("is a character device"), "{e}");
        assert!(e.is_refusal());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn another_users_file_is_refused_when_root() {
        if euid() != 0 {
            eprintln!("not root: another user's file cannot be made here");
            return;
        }
        let d = dir("owner");
        let p = d.join("theirs.orca");
        std::fs::write(&p, "theirs").unwrap();
        std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
        let e = create(&p, false).unwrap_err();
        assert!(
            e.to_string()
                .contains("belongs to user 65534, not to this user (0)"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "theirs");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
