//! A tiny class-file assembler for hand-made test classes, and an
//! independent re-parse with cafebabe.
#![allow(dead_code)]

pub mod mutate;

use cafebabe::attributes::{AttributeData, CodeData};

pub struct ClassBuilder {
    pub major: u16,
    cp: Vec<Vec<u8>>,
    this: u16,
    super_: u16,
    methods: Vec<Vec<u8>>,
    fields: Vec<Vec<u8>>,
}

pub struct Code {
    pub max_stack: u16,
    pub max_locals: u16,
    pub code: Vec<u8>,
    /// (start, end, handler, catch type index)
    pub exc: Vec<(u16, u16, u16, u16)>,
    /// (attribute name, body)
    pub attrs: Vec<(&'static str, Vec<u8>)>,
}

impl ClassBuilder {
    pub fn new(name: &str, major: u16) -> Self {
        let mut b = ClassBuilder {
            major,
            cp: Vec::new(),
            this: 0,
            super_: 0,
            methods: Vec::new(),
            fields: Vec::new(),
        };
        b.this = b.class(name);
        b.super_ = b.class("java/lang/Object");
        b
    }
    fn add(&mut self, e: Vec<u8>) -> u16 {
        if let Some(i) = self.cp.iter().position(|x| *x == e) {
            return i as u16 + 1;
        }
        self.cp.push(e);
        self.cp.len() as u16
    }
    pub fn this_index(&self) -> u16 {
        self.this
    }
    pub fn utf8(&mut self, s: &str) -> u16 {
        let mut e = vec![1];
        e.extend_from_slice(&(s.len() as u16).to_be_bytes());
        e.extend_from_slice(s.as_bytes());
        self.add(e)
    }
    pub fn class(&mut self, s: &str) -> u16 {
        let n = self.utf8(s);
        let mut e = vec![7];
        e.extend_from_slice(&n.to_be_bytes());
        self.add(e)
    }
    pub fn method_ref(&mut self, owner: &str, name: &str, desc: &str) -> u16 {
        self.member(10, owner, name, desc)
    }
    pub fn imethod_ref(&mut self, owner: &str, name: &str, desc: &str) -> u16 {
        self.member(11, owner, name, desc)
    }
    fn member(&mut self, tag: u8, owner: &str, name: &str, desc: &str) -> u16 {
        let c = self.class(owner);
        let n = self.utf8(name);
        let d = self.utf8(desc);
        let mut nat = vec![12];
        nat.extend_from_slice(&n.to_be_bytes());
        nat.extend_from_slice(&d.to_be_bytes());
        let nat = self.add(nat);
        let mut e = vec![tag];
        e.extend_from_slice(&c.to_be_bytes());
        e.extend_from_slice(&nat.to_be_bytes());
        self.add(e)
    }
    /// A field without attributes.
    pub fn field(&mut self, access: u16, name: &str, desc: &str) {
        let n = self.utf8(name);
        let d = self.utf8(desc);
        let mut f = Vec::new();
        f.extend_from_slice(&access.to_be_bytes());
        f.extend_from_slice(&n.to_be_bytes());
        f.extend_from_slice(&d.to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        self.fields.push(f);
    }
    pub fn method(&mut self, access: u16, name: &str, desc: &str, code: Option<Code>) {
        let n = self.utf8(name);
        let d = self.utf8(desc);
        let mut m = Vec::new();
        m.extend_from_slice(&access.to_be_bytes());
        m.extend_from_slice(&n.to_be_bytes());
        m.extend_from_slice(&d.to_be_bytes());
        match code {
            None => m.extend_from_slice(&0u16.to_be_bytes()),
            Some(c) => {
                m.extend_from_slice(&1u16.to_be_bytes());
                let cn = self.utf8("Code");
                let mut body = Vec::new();
                body.extend_from_slice(&c.max_stack.to_be_bytes());
                body.extend_from_slice(&c.max_locals.to_be_bytes());
                body.extend_from_slice(&(c.code.len() as u32).to_be_bytes());
                body.extend_from_slice(&c.code);
                body.extend_from_slice(&(c.exc.len() as u16).to_be_bytes());
                for (a, b, h, t) in &c.exc {
                    for x in [a, b, h, t] {
                        body.extend_from_slice(&x.to_be_bytes());
                    }
                }
                body.extend_from_slice(&(c.attrs.len() as u16).to_be_bytes());
                for (name, ab) in &c.attrs {
                    let an = self.utf8(name);
                    body.extend_from_slice(&an.to_be_bytes());
                    body.extend_from_slice(&(ab.len() as u32).to_be_bytes());
                    body.extend_from_slice(ab);
                }
                m.extend_from_slice(&cn.to_be_bytes());
                m.extend_from_slice(&(body.len() as u32).to_be_bytes());
                m.extend_from_slice(&body);
            }
        }
        self.methods.push(m);
    }
    pub fn build(&self) -> Vec<u8> {
        let mut v = vec![0xca, 0xfe, 0xba, 0xbe, 0, 0];
        v.extend_from_slice(&self.major.to_be_bytes());
        v.extend_from_slice(&(self.cp.len() as u16 + 1).to_be_bytes());
        for e in &self.cp {
            v.extend_from_slice(e);
        }
        v.extend_from_slice(&0x21u16.to_be_bytes());
        v.extend_from_slice(&self.this.to_be_bytes());
        v.extend_from_slice(&self.super_.to_be_bytes());
        v.extend_from_slice(&[0, 0]); // interfaces
        v.extend_from_slice(&(self.fields.len() as u16).to_be_bytes());
        for f in &self.fields {
            v.extend_from_slice(f);
        }
        v.extend_from_slice(&(self.methods.len() as u16).to_be_bytes());
        for m in &self.methods {
            v.extend_from_slice(m);
        }
        v.extend_from_slice(&[0, 0]);
        v
    }
}

/// Big-endian u16 list helper for attribute bodies.
pub fn be(xs: &[u16]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// Re-parses with cafebabe (an independent parser, bytecode included) and
/// returns the Code of method `name`, as owned data.
pub struct Parsed {
    pub max_stack: u16,
    pub code: Vec<u8>,
    pub exc: Vec<(u16, u16, u16, Option<String>)>,
    pub lines: Vec<(u16, u16)>,
    pub lvt: Vec<(u16, u16, String)>,
    /// absolute frame offsets
    pub frames: Vec<u16>,
    /// Uninitialized offsets found in frames
    pub uninit: Vec<u16>,
}

pub fn reparse(bytes: &[u8], name: &str) -> Parsed {
    let cf = cafebabe::parse_class(bytes).expect("cafebabe must parse the output");
    let m = cf.methods.iter().find(|m| m.name == name).expect("method");
    let code: &CodeData = m
        .attributes
        .iter()
        .find_map(|a| match &a.data {
            AttributeData::Code(c) => Some(c),
            _ => None,
        })
        .expect("code");
    assert!(code.bytecode.is_some());
    let mut p = Parsed {
        max_stack: code.max_stack,
        code: code.code.to_vec(),
        exc: code
            .exception_table
            .iter()
            .map(|e| {
                (
                    e.start_pc,
                    e.end_pc,
                    e.handler_pc,
                    e.catch_type.as_ref().map(|s| s.to_string()),
                )
            })
            .collect(),
        lines: vec![],
        lvt: vec![],
        frames: vec![],
        uninit: vec![],
    };
    use cafebabe::attributes::{StackMapEntry as F, VerificationType as V};
    for a in &code.attributes {
        match &a.data {
            AttributeData::LineNumberTable(l) => p
                .lines
                .extend(l.iter().map(|e| (e.start_pc, e.line_number))),
            AttributeData::LocalVariableTable(l) => p
                .lvt
                .extend(l.iter().map(|e| (e.start_pc, e.length, e.name.to_string()))),
            AttributeData::StackMapTable(fs) => {
                let mut prev: i32 = -1;
                for f in fs {
                    let (d, vts): (u16, Vec<&V>) = match f {
                        F::Same { offset_delta } => (*offset_delta, vec![]),
                        F::SameLocals1StackItem {
                            offset_delta,
                            stack,
                        } => (*offset_delta, vec![stack]),
                        F::Chop { offset_delta, .. } => (*offset_delta, vec![]),
                        F::Append {
                            offset_delta,
                            locals,
                        } => (*offset_delta, locals.iter().collect()),
                        F::FullFrame {
                            offset_delta,
                            locals,
                            stack,
                        } => (*offset_delta, locals.iter().chain(stack.iter()).collect()),
                    };
                    prev = prev + d as i32 + 1;
                    p.frames.push(prev as u16);
                    for v in vts {
                        if let V::Uninitialized { code_offset } = v {
                            p.uninit.push(*code_offset);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    p
}

/// The opcodes of method `name` as parsed by cafebabe, Debug-formatted.
pub fn ops(bytes: &[u8], name: &str) -> Vec<(usize, String)> {
    let cf = cafebabe::parse_class(bytes).expect("cafebabe must parse the output");
    let m = cf.methods.iter().find(|m| m.name == name).expect("method");
    for a in &m.attributes {
        if let AttributeData::Code(c) = &a.data {
            return c
                .bytecode
                .as_ref()
                .unwrap()
                .opcodes
                .iter()
                .map(|(o, op)| (*o, format!("{op:?}")))
                .collect();
        }
    }
    panic!("no code")
}

/// Rewrites with the default configuration and expects a change.
pub fn changed(
    bytes: &[u8],
) -> (
    Vec<u8>,
    Vec<orca_rewriter::MethodMap>,
    Vec<orca_rewriter::MethodNote>,
) {
    match orca_rewriter::rewrite(bytes, &orca_rewriter::Config::default()).expect("rewrite") {
        orca_rewriter::Outcome::Changed {
            bytes,
            methods,
            notes,
        } => (bytes, methods, notes),
        o => panic!("expected Changed, got {o:?}"),
    }
}

/// Every class of the JDK 17 jmods and of /usr/share/java/*.jar (symlinks
/// deduplicated), as (source, entry name, bytes). `jmods_only` limits it to
/// the JDK.
pub fn corpus(jmods_only: bool) -> Vec<(String, String, Vec<u8>)> {
    use std::io::Read;
    let home = std::env::var("ORCA_CORPUS_JDK")
        .unwrap_or_else(|_| "/usr/lib/jvm/java-17-openjdk-amd64".into());
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(format!("{home}/jmods")) {
        files.extend(
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "jmod")),
        );
    }
    if !jmods_only {
        if let Ok(rd) = std::fs::read_dir("/usr/share/java") {
            let mut jars: Vec<_> = rd
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "jar"))
                .filter_map(|p| std::fs::canonicalize(p).ok())
                .collect();
            jars.sort();
            jars.dedup();
            files.extend(jars);
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let Ok(data) = std::fs::read(&f) else {
            continue;
        };
        let (z, prefix) = if f.extension().is_some_and(|e| e == "jmod") {
            (&data[4.min(data.len())..], "classes/")
        } else {
            (&data[..], "")
        };
        let Ok(mut zip) = zip::ZipArchive::new(std::io::Cursor::new(z)) else {
            continue;
        };
        for k in 0..zip.len() {
            let Ok(mut e) = zip.by_index(k) else { continue };
            let name = e.name().to_string();
            if !name.ends_with(".class") || !name.starts_with(prefix) {
                continue;
            }
            let mut b = Vec::with_capacity(e.size() as usize);
            if e.read_to_end(&mut b).is_ok() {
                out.push((f.display().to_string(), name, b));
            }
        }
    }
    out
}

/// Loads original and rewritten hand-made classes in HotSpot with
/// verification forced (tests/jvm/VerifyHarness.java) and asserts that both
/// have the same outcome; returns the harness summary, or None without a JDK.
pub fn jvm_same_outcome(classes: &[(&str, &[u8], &[u8])]) -> Option<String> {
    use std::process::Command;
    static HARNESS: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    let home =
        std::env::var("JAVA_HOME").unwrap_or_else(|_| "/usr/lib/jvm/java-17-openjdk-amd64".into());
    let java = std::path::Path::new(&home).join("bin/java");
    let h = HARNESS.get_or_init(|| {
        let javac = std::path::Path::new(&home).join("bin/javac");
        if !javac.exists() {
            return None;
        }
        let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("orca-harness-{}", std::process::id()));
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/jvm/VerifyHarness.java");
        let ok = Command::new(javac)
            .arg("-d")
            .arg(&d)
            .arg(src)
            .status()
            .ok()?
            .success();
        ok.then_some(d)
    });
    let h = h.as_ref()?;
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "orca-jvmcheck-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    ));
    for (name, a, b) in classes {
        for (sub, bytes) in [("orig", a), ("new", b)] {
            let p = d.join(sub).join(format!("{name}.class"));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
    }
    let out = Command::new(java)
        .args([
            "-Xverify:all",
            "-XX:+UnlockDiagnosticVMOptions",
            "-XX:+BytecodeVerificationLocal",
            "-cp",
        ])
        .arg(h)
        .arg("VerifyHarness")
        .arg(d.join("orig"))
        .arg(d.join("new"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let _ = std::fs::remove_dir_all(&d);
    assert!(text.contains(" differ=0 "), "JVM outcome differs:\n{text}");
    eprintln!("JVM: {}", text.trim());
    Some(text.lines().last().unwrap_or("").to_string())
}
