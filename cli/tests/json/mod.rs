//! A minimal JSON reader for the tests, to compare `orca report --json` field by field.

#![allow(dead_code)]

/// A minimal JSON value, to compare `orca report --json` outputs field by field.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn parse(s: &str) -> Json {
        let b = s.trim().as_bytes();
        let mut i = 0;
        let v = Self::value(b, &mut i);
        assert_eq!(i, b.len(), "trailing text in {s}");
        v
    }
    fn ws(b: &[u8], i: &mut usize) {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    }
    fn string(b: &[u8], i: &mut usize) -> String {
        assert_eq!(b[*i], b'"');
        *i += 1;
        let mut out = Vec::new();
        while b[*i] != b'"' {
            if b[*i] == b'\\' {
                *i += 1;
                match b[*i] {
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'u' => {
                        let h = std::str::from_utf8(&b[*i + 1..*i + 5]).unwrap();
                        let c = char::from_u32(u32::from_str_radix(h, 16).unwrap()).unwrap();
                        out.extend_from_slice(c.to_string().as_bytes());
                        *i += 4;
                    }
                    c => out.push(c),
                }
            } else {
                out.push(b[*i]);
            }
            *i += 1;
        }
        *i += 1;
        String::from_utf8(out).unwrap()
    }
    fn value(b: &[u8], i: &mut usize) -> Json {
        Self::ws(b, i);
        let v = match b[*i] {
            b'{' => {
                *i += 1;
                let mut fields = Vec::new();
                loop {
                    Self::ws(b, i);
                    if b[*i] == b'}' {
                        *i += 1;
                        break;
                    }
                    let k = Self::string(b, i);
                    Self::ws(b, i);
                    assert_eq!(b[*i], b':');
                    *i += 1;
                    fields.push((k, Self::value(b, i)));
                    Self::ws(b, i);
                    if b[*i] == b',' {
                        *i += 1;
                    }
                }
                Json::Obj(fields)
            }
            b'[' => {
                *i += 1;
                let mut items = Vec::new();
                loop {
                    Self::ws(b, i);
                    if b[*i] == b']' {
                        *i += 1;
                        break;
                    }
                    items.push(Self::value(b, i));
                    Self::ws(b, i);
                    if b[*i] == b',' {
                        *i += 1;
                    }
                }
                Json::Arr(items)
            }
            b'"' => Json::Str(Self::string(b, i)),
            b't' => {
                *i += 4;
                Json::Bool(true)
            }
            b'f' => {
                *i += 5;
                Json::Bool(false)
            }
            b'n' => {
                *i += 4;
                Json::Null
            }
            _ => {
                let start = *i;
                while *i < b.len()
                    && matches!(b[*i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    *i += 1;
                }
                Json::Num(String::from_utf8(b[start..*i].to_vec()).unwrap())
            }
        };
        Self::ws(b, i);
        v
    }
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(f) => f.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn remove(&mut self, key: &str) {
        if let Json::Obj(f) = self {
            f.retain(|(k, _)| k != key);
        }
    }
    pub fn num(&self, key: &str) -> u64 {
        match self.get(key) {
            Some(Json::Num(n)) => n.parse().unwrap(),
            v => panic!("{key}: {v:?}"),
        }
    }
}

/// A type of docs/JSON.md's tables: `integer, ns`, `string or null`, `array of object`, ...
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Int,
    Str,
    Bool,
    Null,
    Obj,
    /// `map of string`: an object whose keys are data, each value a string.
    Map,
    Arr(Box<Ty>),
}

/// The units an `integer` of docs/JSON.md may have.
const UNITS: [&str; 4] = ["ns", "timestamp ns", "count", "version"];

/// docs/JSON.md's field tables: per path (`report`, `report.monitors[]`, ...), each field with
/// the types it may have, in the document's order.
#[derive(Debug, Default)]
pub struct Schema {
    pub sections: Vec<(String, Fields)>,
}

/// A section's fields, each with the types it may have.
pub type Fields = Vec<(String, Vec<Ty>)>;

impl Schema {
    /// The schema docs/JSON.md documents.
    pub fn documented() -> Schema {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/JSON.md");
        Schema::parse(&std::fs::read_to_string(&path).expect("read docs/JSON.md"))
    }

    /// Reads the tables under each `### \`report...\`` heading (several paths may share one),
    /// rows `| \`field\` | type | meaning |`.
    pub fn parse(md: &str) -> Schema {
        let mut s = Schema::default();
        let mut current: Vec<usize> = Vec::new();
        for line in md.lines() {
            if let Some(h) = line.strip_prefix("### ") {
                current.clear();
                for (i, part) in h.split('`').enumerate() {
                    if i % 2 == 1 && part.starts_with("report") {
                        assert!(
                            s.section(part).is_none(),
                            "docs/JSON.md: {part} described twice"
                        );
                        s.sections.push((part.to_string(), Vec::new()));
                        current.push(s.sections.len() - 1);
                    }
                }
                continue;
            }
            if line.starts_with("## ") {
                current.clear();
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if current.is_empty() || cells.len() < 5 || !cells[1].starts_with('`') {
                continue;
            }
            let field = cells[1].trim_matches('`').to_string();
            let types: Vec<Ty> = cells[2].split(" or ").map(|t| Self::ty(t, line)).collect();
            for &i in &current {
                let fields = &mut s.sections[i].1;
                assert!(
                    !fields.iter().any(|(f, _)| *f == field),
                    "docs/JSON.md: {field} twice in {}",
                    s.sections[i].0
                );
                fields.push((field.clone(), types.clone()));
            }
        }
        assert!(
            s.section("report").is_some(),
            "docs/JSON.md has no `report` section"
        );
        s
    }

    fn ty(t: &str, line: &str) -> Ty {
        let t = t.trim();
        if let Some(unit) = t.strip_prefix("integer, ") {
            assert!(
                UNITS.contains(&unit),
                "docs/JSON.md: unit {unit:?} in {line}"
            );
            return Ty::Int;
        }
        match t {
            "string" => Ty::Str,
            "boolean" => Ty::Bool,
            "null" => Ty::Null,
            "object" => Ty::Obj,
            "map of string" => Ty::Map,
            _ => match t.strip_prefix("array of ") {
                Some(e) => Ty::Arr(Box::new(Self::ty(e, line))),
                None => panic!("docs/JSON.md: type {t:?} (an integer needs its unit) in {line}"),
            },
        }
    }

    pub fn section(&self, path: &str) -> Option<&Fields> {
        self.sections
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, f)| f)
    }

    /// What in `v` (an `orca report --json` output) the schema does not describe: fields it
    /// lacks, fields it has that are not described, values of another type, objects with no
    /// section. Empty when `v` follows it.
    pub fn problems(&self, v: &Json) -> Vec<String> {
        let mut out = Vec::new();
        self.object(v, "report", &mut out);
        out
    }

    fn object(&self, v: &Json, path: &str, out: &mut Vec<String>) {
        let Json::Obj(fields) = v else {
            out.push(format!("{path}: not an object"));
            return;
        };
        let Some(doc) = self.section(path) else {
            out.push(format!("{path}: an object docs/JSON.md has no section for"));
            return;
        };
        for (i, (k, _)) in fields.iter().enumerate() {
            if fields[..i].iter().any(|(k2, _)| k2 == k) {
                out.push(format!("{path}.{k}: written twice"));
            }
        }
        for (k, val) in fields {
            match doc.iter().find(|(f, _)| f == k) {
                None => out.push(format!("{path}.{k}: not described in docs/JSON.md")),
                Some((_, types)) => self.value(val, types, &format!("{path}.{k}"), out),
            }
        }
        for (f, _) in doc {
            if !fields.iter().any(|(k, _)| k == f) {
                out.push(format!("{path}.{f}: described in docs/JSON.md, missing"));
            }
        }
    }

    fn value(&self, v: &Json, types: &[Ty], path: &str, out: &mut Vec<String>) {
        let fits = |t: &Ty| match (v, t) {
            (Json::Num(n), Ty::Int) => n.parse::<i64>().is_ok() || n.parse::<u64>().is_ok(),
            (Json::Str(_), Ty::Str) | (Json::Bool(_), Ty::Bool) | (Json::Null, Ty::Null) => true,
            (Json::Obj(_), Ty::Obj | Ty::Map) | (Json::Arr(_), Ty::Arr(_)) => true,
            _ => false,
        };
        let Some(t) = types.iter().find(|t| fits(t)) else {
            out.push(format!("{path}: {v:?} is none of {types:?}"));
            return;
        };
        match (v, t) {
            (Json::Obj(_), Ty::Obj) => self.object(v, path, out),
            (Json::Obj(fields), Ty::Map) => {
                for (k, x) in fields {
                    self.value(x, &[Ty::Str], &format!("{path}.{k}"), out);
                }
            }
            (Json::Arr(items), Ty::Arr(e)) => {
                let item = format!("{path}[]");
                for x in items {
                    self.value(x, std::slice::from_ref(e.as_ref()), &item, out);
                }
            }
            _ => {}
        }
    }
}

/// Panics unless `json` (an `orca report --json` output) is exactly what docs/JSON.md
/// describes: every field described, every described field there, each of its type.
pub fn assert_documented(json: &Json, ctx: &str) {
    let problems = Schema::documented().problems(json);
    assert!(
        problems.is_empty(),
        "{ctx}: orca report --json against docs/JSON.md:\n  {}",
        problems.join("\n  ")
    );
}
