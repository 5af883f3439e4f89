//! The one clock of all three files: `CLOCK_MONOTONIC`, which HotSpot also uses for
//! `System.nanoTime()` on Linux, so log timestamps line up with the program's own timings.

/// Nanoseconds on the monotonic clock.
pub fn now_nanos() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Two decimal digits per entry: number formatting is most of the writer's work per line
/// (`core::fmt` took a fifth of its time with `trace=all`).
const DIGITS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends `v` in decimal.
pub fn push_dec(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[d..d + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends `nanos` as `<seconds>.<9 digits>`, the timestamp syntax of docs/FORMAT.md.
pub fn push_timestamp(out: &mut Vec<u8>, nanos: u64) {
    push_dec(out, nanos / 1_000_000_000);
    let mut frac = (nanos % 1_000_000_000) as u32;
    let mut buf = [b'.'; 10];
    let mut i = 10;
    while i > 2 {
        let d = (frac % 100) as usize * 2;
        frac /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[d..d + 2]);
    }
    buf[1] = b'0' + frac as u8;
    out.extend_from_slice(&buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_numbers_as_core_fmt_does() {
        for v in [
            0u64,
            1,
            9,
            10,
            99,
            100,
            101,
            999,
            1000,
            12345,
            u32::MAX as u64,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            push_dec(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
        for n in [
            0u64,
            5,
            1_000_000_000,
            12_000_000_345,
            999_999_999,
            5_087_300_000_000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            push_timestamp(&mut out, n);
            let want = format!("{}.{:09}", n / 1_000_000_000, n % 1_000_000_000);
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }
}
