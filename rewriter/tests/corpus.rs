//! Corpus test: every class of the JDK 17 jmods and of /usr/share/java/*.jar
//! is rewritten with every transformation on; every output must parse with
//! cafebabe (bytecode included), keep its methods, and every changed method
//! must have a consistent offset map.
//!
//! Runs in release mode (`cargo test --release -p orca-rewriter --test
//! corpus`, ~30 s on 2 cores); ignored in debug builds where it is slow
//! (run it there with `-- --ignored`).

mod common;
use orca_rewriter::{rewrite, Config, Outcome};
use std::collections::BTreeMap;

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "slow in debug; run with cargo test --release"
)]
fn corpus_outputs_parse_with_cafebabe() {
    let corpus = common::corpus(false);
    if corpus.is_empty() {
        eprintln!("no corpus on this machine: skipped");
        return;
    }
    let cfg = Config {
        hash_at_birth: true,
        ..Config::default()
    };
    let (mut changed, mut unchanged, mut excluded, mut errors, mut methods) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let bytes_total: usize = corpus.iter().map(|c| c.2.len()).sum();
    for (src, name, bytes) in &corpus {
        match rewrite(bytes, &cfg) {
            Ok(Outcome::Changed {
                bytes: out,
                methods: maps,
                notes,
            }) => {
                changed += 1;
                methods += maps.len();
                for n in notes {
                    *reasons.entry(n.reason).or_default() += 1;
                }
                let orig_ok = cafebabe::parse_class(bytes).ok().map(|c| c.methods.len());
                match cafebabe::parse_class(&out) {
                    Ok(cf) => {
                        if let Some(n) = orig_ok {
                            if n != cf.methods.len() {
                                failures.push(format!("{src}!{name}: method count changed"));
                            }
                        }
                    }
                    Err(e) if orig_ok.is_some() => {
                        failures.push(format!("{src}!{name}: cafebabe rejects output: {e}"))
                    }
                    Err(_) => {}
                }
                if let Err(e) = second_parser(&out) {
                    if second_parser(bytes).is_ok() {
                        failures.push(format!(
                            "{src}!{name}: classfile-parser rejects output: {e}"
                        ));
                    }
                }
                if orig_ok.is_some() {
                    if let Err(e) = untouched_identical(bytes, &out, &maps) {
                        failures.push(format!("{src}!{name}: {e}"));
                    }
                }
                for m in &maps {
                    let mono = m
                        .entries
                        .windows(2)
                        .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1);
                    if !mono
                        || m.entries.first().map(|e| e.0) != Some(0)
                        || m.new_code_length < m.original_code_length.min(1)
                    {
                        failures.push(format!(
                            "{src}!{name}: bad offset map for {}{}",
                            m.name, m.descriptor
                        ));
                    }
                }
            }
            Ok(Outcome::Unchanged { notes }) => {
                unchanged += 1;
                for n in notes {
                    *reasons.entry(n.reason).or_default() += 1;
                }
            }
            Ok(Outcome::Excluded) => excluded += 1,
            Err(e) => {
                errors += 1;
                *reasons.entry(format!("error: {e}")).or_default() += 1;
            }
        }
    }
    eprintln!(
        "corpus: {} classes ({} MB): {changed} changed ({methods} methods), {unchanged} unchanged, {} skipped (excluded {excluded}, errors {errors})",
        corpus.len(),
        bytes_total / 1_000_000,
        excluded + errors
    );
    for (r, n) in &reasons {
        eprintln!("  {n:6} {r}");
    }
    for f in failures.iter().take(20) {
        eprintln!("FAIL {f}");
    }
    assert!(failures.is_empty(), "{} failures", failures.len());
    assert!(changed > 1000);
}

/// Second independent check with classfile-parser: the class, every Code
/// attribute and every StackMapTable parse completely.
fn second_parser(b: &[u8]) -> Result<(), String> {
    use classfile_parser::attribute_info::{
        code_attribute_parser, stack_map_table_attribute_parser,
    };
    use classfile_parser::constant_info::ConstantInfo;
    let (rest, cf) = classfile_parser::class_parser(b)
        .map_err(|e| format!("{e:?}").chars().take(100).collect::<String>())?;
    if !rest.is_empty() {
        return Err("trailing bytes".into());
    }
    let name = |i: u16| match cf.const_pool.get(i as usize - 1) {
        Some(ConstantInfo::Utf8(u)) => u.utf8_string.clone(),
        _ => String::new(),
    };
    for m in &cf.methods {
        for a in &m.attributes {
            if name(a.attribute_name_index) != "Code" {
                continue;
            }
            let (rest, code) = code_attribute_parser(&a.info).map_err(|_| "Code".to_string())?;
            if !rest.is_empty() || code.code.len() != code.code_length as usize {
                return Err("Code length".into());
            }
            for ca in &code.attributes {
                if name(ca.attribute_name_index) == "StackMapTable" {
                    let (rest, _) = stack_map_table_attribute_parser(&ca.info)
                        .map_err(|_| "StackMapTable".to_string())?;
                    if !rest.is_empty() {
                        return Err("StackMapTable length".into());
                    }
                }
            }
        }
    }
    Ok(())
}

/// Everything the rewriter did not change is identical (as cafebabe sees it):
/// version, access, names, interfaces, fields, class attributes, every
/// method's flags, name, descriptor and non-Code attributes, and the whole
/// Code of every method not in `maps`.
fn untouched_identical(
    a: &[u8],
    b: &[u8],
    maps: &[orca_rewriter::MethodMap],
) -> Result<(), String> {
    use cafebabe::attributes::AttributeData;
    let x = cafebabe::parse_class(a).map_err(|e| e.to_string())?;
    let y = cafebabe::parse_class(b).map_err(|e| e.to_string())?;
    let d = |v: &dyn std::fmt::Debug| format!("{v:?}");
    if (
        x.major_version,
        x.minor_version,
        d(&x.access_flags),
        &x.this_class,
        &x.super_class,
    ) != (
        y.major_version,
        y.minor_version,
        d(&y.access_flags),
        &y.this_class,
        &y.super_class,
    ) {
        return Err("class header differs".into());
    }
    if d(&x.interfaces) != d(&y.interfaces)
        || d(&x.fields) != d(&y.fields)
        || d(&x.attributes) != d(&y.attributes)
    {
        return Err("interfaces, fields or class attributes differ".into());
    }
    for (m, n) in x.methods.iter().zip(&y.methods) {
        if m.name != n.name
            || d(&m.descriptor) != d(&n.descriptor)
            || d(&m.access_flags) != d(&n.access_flags)
            || m.attributes.len() != n.attributes.len()
        {
            return Err(format!("method {} header differs", m.name));
        }
        let changed = maps
            .iter()
            .any(|mm| mm.name == m.name && mm.descriptor == m.descriptor.to_string());
        for (p, q) in m.attributes.iter().zip(&n.attributes) {
            if p.name != q.name {
                return Err(format!("method {}: attribute order differs", m.name));
            }
            let is_code = matches!(p.data, AttributeData::Code(_));
            if (!is_code || !changed) && d(&p.data) != d(&q.data) {
                return Err(format!(
                    "method {}: untouched attribute {} differs",
                    m.name, p.name
                ));
            }
        }
    }
    Ok(())
}
