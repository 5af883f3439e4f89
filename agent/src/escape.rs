//! Text encoding rules of docs/FORMAT.md: modified UTF-8 in, escaped UTF-8 out.

/// Which bytes a field may not contain as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextKind {
    /// Thread names and source file names: `%`, `,`, `;`, controls and DEL are escaped.
    Free,
    /// Method names and signatures: like [`TextKind::Free`] but `;` stays, since every
    /// reference descriptor ends with it and the JVM forbids it anywhere else in these names.
    JvmName,
}

/// Appends `text` to `out`, escaping as docs/FORMAT.md says, so that no text can split a
/// field or a line of the log.
pub fn push_escaped(out: &mut Vec<u8>, text: &str, kind: TextKind) {
    for &b in text.as_bytes() {
        let escape =
            matches!(b, b'%' | b',' | 0x00..=0x1F | 0x7F) || (b == b';' && kind == TextKind::Free);
        if escape {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        } else {
            out.push(b);
        }
    }
}

/// Decodes the JVM's "modified UTF-8" (JNI/JVMTI strings) into a Rust string: NUL is encoded
/// as `C0 80` and characters outside the BMP as two 3-byte surrogates. Invalid sequences
/// become U+FFFD rather than an error: a name must never stop the recording.
pub fn modified_utf8_to_string(bytes: &[u8]) -> String {
    if bytes.is_ascii() {
        // The common case: ASCII is the same in both encodings.
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut units: Vec<u16> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let cont = |k: usize| {
            bytes
                .get(i + k)
                .copied()
                .filter(|c| c & 0xC0 == 0x80)
                .map(|c| (c & 0x3F) as u16)
        };
        if b < 0x80 {
            units.push(b as u16);
            i += 1;
        } else if b & 0xE0 == 0xC0 {
            match cont(1) {
                Some(c1) => {
                    units.push(((b & 0x1F) as u16) << 6 | c1);
                    i += 2;
                }
                None => {
                    units.push(0xFFFD);
                    i += 1;
                }
            }
        } else if b & 0xF0 == 0xE0 {
            match (cont(1), cont(2)) {
                (Some(c1), Some(c2)) => {
                    units.push(((b & 0x0F) as u16) << 12 | c1 << 6 | c2);
                    i += 3;
                }
                _ => {
                    units.push(0xFFFD);
                    i += 1;
                }
            }
        } else {
            units.push(0xFFFD);
            i += 1;
        }
    }
    String::from_utf16_lossy(&units)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &str, kind: TextKind) -> String {
        let mut v = Vec::new();
        push_escaped(&mut v, s, kind);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn escapes_separators_and_controls() {
        assert_eq!(
            esc("a,b;c%d\ne\r\u{7f}", TextKind::Free),
            "a%2Cb%3Bc%25d%0Ae%0D%7F"
        );
        assert_eq!(
            esc("(Ljava/lang/String;)V", TextKind::JvmName),
            "(Ljava/lang/String;)V"
        );
        assert_eq!(esc("we,ird%", TextKind::JvmName), "we%2Cird%25");
        assert_eq!(esc("héllo→😀", TextKind::Free), "héllo→😀");
    }

    #[test]
    fn decodes_modified_utf8() {
        // NUL as C0 80, U+1F600 as a surrogate pair of 3-byte sequences.
        let bytes = [
            b'a', 0xC0, 0x80, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80, 0xC3, 0xA9,
        ];
        assert_eq!(modified_utf8_to_string(&bytes), "a\u{0}😀é");
        assert_eq!(modified_utf8_to_string(&[0xFF, b'x']), "\u{FFFD}x");
    }
}
