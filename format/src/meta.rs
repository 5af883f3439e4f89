//! Owned, in-memory view of `PREFIX.methods` and `PREFIX.classtable`, to turn
//! frames into `Class.method(File.java:line)` the way Java prints stack traces.
//! These files only list what events refer to, so they are small.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::parse::{line_for, parse_class_line, parse_method_line, Frame, Hash, MethodId};
use crate::reader::{Line, LineReader};
use crate::{paths, OrcaError};

/// A class from `PREFIX.classtable`, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassInfo {
    /// JVM signature, e.g. `Ljava/lang/Object;`.
    pub signature: String,
    /// Source file name, empty if unknown.
    pub source_file: String,
}

/// A method from `PREFIX.methods`, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodInfo {
    /// e.g. `run`.
    pub name: String,
    /// Descriptor, e.g. `()V`.
    pub signature: String,
    /// Declaring class.
    pub class: Hash,
    /// `(start_location, line)` entries; `None` when the method has no table.
    pub lines: Option<Vec<(u32, u32)>>,
}

/// Classes and methods of one run, for resolving frames.
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// By class ID.
    pub classes: HashMap<Hash, ClassInfo>,
    /// By method ID.
    pub methods: HashMap<MethodId, MethodInfo>,
    /// Lines that could not be parsed (they are skipped; `orca check` says why).
    pub malformed: u64,
}

/// `Lcom/foo/Bar;` -> `com.foo.Bar`, `[I` -> `int[]`: the Java spelling.
pub fn java_class_name(sig: &str) -> String {
    let dims = sig.bytes().take_while(|&c| c == b'[').count();
    let base = &sig[dims..];
    let name = match base.as_bytes().first() {
        Some(b'L') if base.ends_with(';') => base[1..base.len() - 1].replace('/', "."),
        Some(b'B') if base.len() == 1 => "byte".into(),
        Some(b'C') if base.len() == 1 => "char".into(),
        Some(b'D') if base.len() == 1 => "double".into(),
        Some(b'F') if base.len() == 1 => "float".into(),
        Some(b'I') if base.len() == 1 => "int".into(),
        Some(b'J') if base.len() == 1 => "long".into(),
        Some(b'S') if base.len() == 1 => "short".into(),
        Some(b'Z') if base.len() == 1 => "boolean".into(),
        Some(b'V') if base.len() == 1 => "void".into(),
        _ => base.to_string(),
    };
    let mut s = name;
    for _ in 0..dims {
        s.push_str("[]");
    }
    s
}

impl Metadata {
    /// Loads `PREFIX.classtable` and `PREFIX.methods`, skipping bad lines.
    pub fn load(prefix: &Path) -> Result<Metadata, OrcaError> {
        let p = paths(prefix);
        let open = |path: &Path| {
            File::open(path).map_err(|source| OrcaError::Io {
                path: path.display().to_string(),
                source,
            })
        };
        Self::from_readers(open(&p.classtable)?, open(&p.methods)?)
    }

    /// Same as [`Metadata::load`] from readers.
    pub fn from_readers<C: Read, M: Read>(
        classtable: C,
        methods: M,
    ) -> Result<Metadata, OrcaError> {
        let mut md = Metadata::default();
        let mut r = LineReader::new(classtable);
        while let Some((_, line)) = r.next_line().map_err(|e| OrcaError::Io {
            path: "classtable".into(),
            source: e,
        })? {
            let Line::Complete(b) = line else { continue };
            match parse_class_line(b) {
                Ok(c) => {
                    md.classes.entry(c.class).or_insert(ClassInfo {
                        signature: c.signature.decode().into_owned(),
                        source_file: c.source_file.decode().into_owned(),
                    });
                }
                Err(_) => md.malformed += 1,
            }
        }
        let mut r = LineReader::new(methods);
        while let Some((_, line)) = r.next_line().map_err(|e| OrcaError::Io {
            path: "methods".into(),
            source: e,
        })? {
            let Line::Complete(b) = line else { continue };
            match parse_method_line(b) {
                Ok(m) => {
                    md.methods.entry(m.method).or_insert(MethodInfo {
                        name: m.name.decode().into_owned(),
                        signature: m.signature.decode().into_owned(),
                        class: m.class,
                        lines: m
                            .line_table
                            .is_present()
                            .then(|| m.line_table.entries().collect()),
                    });
                }
                Err(_) => md.malformed += 1,
            }
        }
        Ok(md)
    }

    /// Source line of a frame, if its method has a line table covering it.
    pub fn line_of(&self, f: Frame) -> Option<u32> {
        if f.is_native() {
            return None;
        }
        self.methods
            .get(&f.method)?
            .lines
            .as_deref()
            .and_then(|t| line_for(t, f.location))
    }

    /// `Class.method` of a frame (`?.<method 0000002A>` when unknown).
    pub fn method_name(&self, m: MethodId) -> String {
        match self.methods.get(&m) {
            Some(mi) => {
                let class = self
                    .classes
                    .get(&mi.class)
                    .map(|c| java_class_name(&c.signature))
                    .unwrap_or_else(|| format!("<class {}>", mi.class));
                format!("{class}.{}", mi.name)
            }
            None => format!("<method {m}>"),
        }
    }

    /// A frame as Java prints it: `Class.method(File.java:line)`,
    /// `(Native Method)`, `(File.java)` without line, `(Unknown Source)`.
    pub fn frame_to_string(&self, f: Frame) -> String {
        let name = self.method_name(f.method);
        let src = self
            .methods
            .get(&f.method)
            .and_then(|m| self.classes.get(&m.class))
            .map(|c| c.source_file.clone())
            .filter(|s| !s.is_empty());
        if f.is_native() {
            return format!("{name}(Native Method)");
        }
        match (src, self.line_of(f)) {
            (Some(s), Some(l)) => format!("{name}({s}:{l})"),
            (Some(s), None) => format!("{name}({s})"),
            (None, _) => format!("{name}(Unknown Source)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_frames() {
        let md = Metadata::from_readers(
            &b"1.000000000,15DB9742,Lcom/x/PingPong;,PingPong.java\n"[..],
            &b"1.000000000,00000001,run,()V,15DB9742,2;00000000;0000000A;00000008;0000000C\n1.000000000,00000002,n,()V,15DB9742,-1\n"[..],
        )
        .unwrap();
        let f = |m, l| Frame {
            method: MethodId(m),
            location: l,
        };
        assert_eq!(
            md.frame_to_string(f(1, 9)),
            "com.x.PingPong.run(PingPong.java:12)"
        );
        assert_eq!(
            md.frame_to_string(f(1, 3)),
            "com.x.PingPong.run(PingPong.java:10)"
        );
        assert_eq!(
            md.frame_to_string(f(2, 0xFFFFFFFF)),
            "com.x.PingPong.n(Native Method)"
        );
        assert_eq!(
            md.frame_to_string(f(2, 1)),
            "com.x.PingPong.n(PingPong.java)"
        );
        assert_eq!(java_class_name("[[I"), "int[][]");
    }
}
