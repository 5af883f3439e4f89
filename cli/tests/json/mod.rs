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
