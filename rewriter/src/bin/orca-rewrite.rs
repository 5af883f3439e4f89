//! `orca-rewrite INPUT -o OUTPUT`: runs the rewriter over a `.class`, `.jar`
//! or `.jmod` file, for debugging and for the corpus checks.
//!
//! OUTPUT is a folder (every class of the input is written there, rewritten
//! or not, under its path inside the archive) or, when INPUT is a jar, a
//! `.jar` (every entry copied, rewritten classes replaced). INPUT may also be
//! a folder of classes (e.g. one module of `jimage extract`).

use orca_rewriter::{rewrite, Config, Outcome};
use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str =
    "usage: orca-rewrite INPUT(.class|.jar|.jmod|folder) -o OUTPUT(folder|.jar) [options]
options:
  --no-monitors        do not instrument monitorenter/monitorexit
  --no-synchronized    do not instrument synchronized methods
  --no-object          do not redirect Object.wait/notify/notifyAll
  --no-thread          do not redirect Thread.start/join/sleep
  --no-semaphore       do not redirect Semaphore acquire/tryAcquire/release
  --hash-at-birth      constructors of classes with synchronized instance methods hash
                       `this` (what the agent asks for on JDK 22 and earlier)
  --guards             guarded monitor reports with site IDs (what the agent does with
                       guards=on): each monitor's enter keeps a value in an int local that
                       its exit passes on
  --tracker NAME       tracker class internal name (default orca/OrcaProfilerTracker)
  --include PREFIX     only classes whose internal name starts with PREFIX (repeatable)
  --exclude PREFIX     never classes whose internal name starts with PREFIX (repeatable)
  -v, --verbose        print every note and error with its class";

#[derive(Default)]
struct Stats {
    changed: usize,
    unchanged: usize,
    excluded: usize,
    errors: usize,
    methods_changed: usize,
    bytes_in: usize,
    reasons: BTreeMap<String, usize>,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cfg = Config::default();
    let mut input = None;
    let mut output = None;
    let mut verbose = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let mut val = || {
            i += 1;
            args.get(i).cloned()
        };
        match a {
            "-o" => output = val(),
            "--no-monitors" => cfg.monitors = false,
            "--no-synchronized" => cfg.synchronized_methods = false,
            "--no-object" => cfg.object_calls = false,
            "--no-thread" => cfg.thread_calls = false,
            "--no-semaphore" => cfg.semaphore_calls = false,
            "--hash-at-birth" => cfg.hash_at_birth = true,
            "--guards" => {
                cfg.guards = true;
                cfg.sites = Some(Default::default());
            }
            "--tracker" => match val() {
                Some(v) => cfg.tracker_class = v,
                None => return usage(),
            },
            "--include" => match val() {
                Some(v) => cfg.include.push(v),
                None => return usage(),
            },
            "--exclude" => match val() {
                Some(v) => cfg.exclude.push(v),
                None => return usage(),
            },
            "-v" | "--verbose" => verbose = true,
            "-h" | "--help" => return usage(),
            _ if input.is_none() && !a.starts_with('-') => input = Some(a.to_string()),
            _ => return usage(),
        }
        i += 1;
    }
    let (Some(input), Some(output)) = (input, output) else {
        return usage();
    };
    match run(Path::new(&input), Path::new(&output), &cfg, verbose) {
        Ok(st) => {
            // a closed stdout (e.g. `| head -1`) must not panic
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "{input}: {} classes changed ({} methods), {} unchanged, {} skipped (excluded {}, errors {}); {} bytes read",
                st.changed,
                st.methods_changed,
                st.unchanged,
                st.excluded + st.errors,
                st.excluded,
                st.errors,
                st.bytes_in
            );
            for (r, n) in &st.reasons {
                let _ = writeln!(out, "  {n:6}  {r}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("orca-rewrite: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("{USAGE}");
    ExitCode::from(2)
}

/// Rewrites one class; returns the bytes to write.
fn one(name: &str, bytes: &[u8], cfg: &Config, st: &mut Stats, verbose: bool) -> Option<Vec<u8>> {
    st.bytes_in += bytes.len();
    match rewrite(bytes, cfg) {
        Ok(Outcome::Changed {
            bytes,
            methods,
            notes,
        }) => {
            st.changed += 1;
            st.methods_changed += methods.len();
            for n in notes {
                if verbose {
                    println!("note {name} {}{}: {}", n.name, n.descriptor, n.reason);
                }
                *st.reasons
                    .entry(format!("method left unchanged: {}", n.reason))
                    .or_default() += 1;
            }
            Some(bytes)
        }
        Ok(Outcome::Unchanged { notes }) => {
            st.unchanged += 1;
            for n in notes {
                if verbose {
                    println!("note {name} {}{}: {}", n.name, n.descriptor, n.reason);
                }
                *st.reasons
                    .entry(format!("method left unchanged: {}", n.reason))
                    .or_default() += 1;
            }
            None
        }
        Ok(Outcome::Excluded) => {
            st.excluded += 1;
            *st.reasons
                .entry("class skipped: tracker or excluded by filters".into())
                .or_default() += 1;
            None
        }
        Err(e) => {
            st.errors += 1;
            if verbose {
                println!("error {name}: {e}");
            }
            *st.reasons.entry(format!("class skipped: {e}")).or_default() += 1;
            None
        }
    }
}

fn write_file(path: &Path, data: &[u8]) -> std::io::Result<()> {
    if let Some(p) = path.parent() {
        fs::create_dir_all(p)?;
    }
    fs::write(path, data)
}

/// All `.class` files under `dir`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().and_then(|e| e.to_str()) == Some("class") {
            out.push(p);
        }
    }
    Ok(())
}

fn run(input: &Path, output: &Path, cfg: &Config, verbose: bool) -> Result<Stats, String> {
    let mut st = Stats::default();
    if input.is_dir() {
        let mut files = Vec::new();
        walk(input, &mut files).map_err(|e| format!("cannot list {}: {e}", input.display()))?;
        files.sort();
        for f in files {
            let rel = f.strip_prefix(input).unwrap_or(&f).to_path_buf();
            let data = fs::read(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
            let out = one(&rel.display().to_string(), &data, cfg, &mut st, verbose).unwrap_or(data);
            let dest = output.join(&rel);
            write_file(&dest, &out).map_err(|e| format!("cannot write {}: {e}", dest.display()))?;
        }
        return Ok(st);
    }
    let ext = input.extension().and_then(|e| e.to_str()).unwrap_or("");
    let data = fs::read(input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    match ext {
        "class" => {
            let name = input
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("x.class")
                .to_string();
            let out = one(&name, &data, cfg, &mut st, verbose).unwrap_or(data);
            let dest = if output.extension().and_then(|e| e.to_str()) == Some("class") {
                output.to_path_buf()
            } else {
                output.join(&name)
            };
            write_file(&dest, &out).map_err(|e| format!("cannot write {}: {e}", dest.display()))?;
        }
        "jar" | "zip" | "jmod" => {
            let (zbytes, prefix) = if ext == "jmod" {
                if data.len() < 4 || &data[..4] != b"JM\x01\x00" {
                    return Err(format!(
                        "{}: not a jmod (missing JM header)",
                        input.display()
                    ));
                }
                (&data[4..], "classes/")
            } else {
                (&data[..], "")
            };
            let mut zip = zip::ZipArchive::new(std::io::Cursor::new(zbytes))
                .map_err(|e| format!("{}: {e}", input.display()))?;
            let to_jar = output.extension().and_then(|e| e.to_str()) == Some("jar");
            if to_jar && ext == "jmod" {
                return Err("a jmod can only be written to a folder".into());
            }
            let mut jar = if to_jar {
                let f = fs::File::create(output)
                    .map_err(|e| format!("cannot create {}: {e}", output.display()))?;
                Some(zip::ZipWriter::new(f))
            } else {
                None
            };
            for k in 0..zip.len() {
                let mut ent = zip
                    .by_index(k)
                    .map_err(|e| format!("{}: entry {k}: {e}", input.display()))?;
                let name = ent.name().to_string();
                let is_class =
                    name.ends_with(".class") && name.starts_with(prefix) && !ent.is_dir();
                if let Some(w) = jar.as_mut() {
                    if !is_class {
                        drop(ent);
                        let raw = zip.by_index_raw(k).map_err(|e| e.to_string())?;
                        w.raw_copy_file(raw)
                            .map_err(|e| format!("copying {name}: {e}"))?;
                        continue;
                    }
                }
                if !is_class {
                    continue;
                }
                let mut buf = Vec::with_capacity(ent.size() as usize);
                ent.read_to_end(&mut buf)
                    .map_err(|e| format!("{name}: {e}"))?;
                drop(ent);
                let out = one(&name, &buf, cfg, &mut st, verbose).unwrap_or(buf);
                let rel = &name[prefix.len()..];
                if let Some(w) = jar.as_mut() {
                    let opts = zip::write::SimpleFileOptions::default()
                        .compression_method(zip::CompressionMethod::Deflated);
                    w.start_file(name.as_str(), opts)
                        .map_err(|e| e.to_string())?;
                    w.write_all(&out).map_err(|e| e.to_string())?;
                } else {
                    let dest: PathBuf = output.join(rel);
                    write_file(&dest, &out)
                        .map_err(|e| format!("cannot write {}: {e}", dest.display()))?;
                }
            }
            if let Some(w) = jar {
                w.finish().map_err(|e| e.to_string())?;
            }
        }
        _ => {
            return Err(format!(
                "{}: expected a .class, .jar or .jmod file",
                input.display()
            ))
        }
    }
    Ok(st)
}
