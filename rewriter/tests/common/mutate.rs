//! The mutation operators of the fuzzers, shared by `rewriter/tests/fuzz.rs` (the rewriter
//! alone) and `tests/e2e/mutants.rs` (mutants loaded in real JVMs under the agent), which
//! includes this file with `#[path]`. Deterministic: a fixed seed gives the same mutants.

/// xorshift64: small, fast and the same on every platform.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// One to four random edits of `seed`: bytes overwritten or flipped, interesting 16-bit values
/// written, truncation, deletion or duplication of a short run.
pub fn mutate(seed: &[u8], r: &mut Rng) -> Vec<u8> {
    let mut m = seed.to_vec();
    let rounds = 1 + r.below(4);
    for _ in 0..rounds {
        if m.is_empty() {
            break;
        }
        // half of the positions in the last 60% (methods and attributes)
        let pos = if r.below(2) == 0 {
            r.below(m.len())
        } else {
            m.len() * 2 / 5 + r.below(m.len() - m.len() * 2 / 5)
        };
        match r.below(7) {
            0 | 1 => m[pos] = r.next() as u8,
            2 => m[pos] ^= 1 << r.below(8),
            3 => {
                let v: u16 = [0, 1, 2, 0x7fff, 0x8000, 0xffff, r.next() as u16 & 0xff][r.below(7)];
                if pos + 2 <= m.len() {
                    m[pos..pos + 2].copy_from_slice(&v.to_be_bytes());
                }
            }
            4 => m.truncate(pos),
            5 => {
                let len = r.below(16).min(m.len() - pos);
                m.drain(pos..pos + len);
            }
            _ => {
                let len = r.below(16).min(m.len() - pos);
                let chunk: Vec<u8> = m[pos..pos + len].to_vec();
                let at = r.below(m.len());
                m.splice(at..at, chunk);
            }
        }
    }
    m
}
