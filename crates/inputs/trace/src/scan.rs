//! Tokens and numbers of a text-trace instruction line.
//!
//! [`Toks`] splits a line at separators (space, tab, carriage return); [`parse_hex`],
//! [`parse_u64`] and [`parse_i64`] read one token. With `QUICK`, the number readers of
//! [`Toks`] first try a scan that reads the token and its value in one pass (eight hex
//! digits at a time); it takes only tokens whose value it is sure of (plain digits, at
//! most 16 hex or 19 decimal ones, ending at a separator or the end of the line) and
//! leaves every other token, unread, to the general way: token, then its parser. Both
//! ways give the same value, and the same error, for every line.

/// Decimal number of at most 20 digits (no sign), `None` for anything else or above
/// `u64::MAX`.
#[inline(always)]
pub(crate) fn parse_u64(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 20 {
        return None;
    }
    if t.len() < 20 {
        // At most 19 digits: no overflow.
        let mut v: u64 = 0;
        for &c in t {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + u64::from(d);
        }
        return Some(v);
    }
    let mut v: u64 = 0;
    for &c in t {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(v)
}

/// Signed decimal number (`-`/`+` allowed); an unsigned value above `i64::MAX` keeps
/// its bits (`%d` of an unsigned value).
pub(crate) fn parse_i64(t: &[u8]) -> Option<i64> {
    match t.split_first() {
        Some((b'-', rest)) => {
            let v = parse_u64(rest)?;
            if v == 1u64 << 63 {
                Some(i64::MIN)
            } else {
                i64::try_from(v).ok().map(|v| -v)
            }
        }
        Some((b'+', rest)) => parse_u64(rest).map(|v| v as i64),
        // `%d` of an unsigned value may exceed i64::MAX: keep the bits.
        _ => parse_u64(t).map(|v| v as i64),
    }
}

/// Value of each byte as a hex digit; `NOT_HEX` for the others.
const NOT_HEX: u8 = 0x80;
const HEX: [u8; 256] = {
    let mut t = [NOT_HEX; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = match c as u8 {
            b'0'..=b'9' => c as u8 - b'0',
            b'a'..=b'f' => c as u8 - b'a' + 10,
            b'A'..=b'F' => c as u8 - b'A' + 10,
            _ => NOT_HEX,
        };
        c += 1;
    }
    t
};

/// A hex number with an optional `0x`/`0X` prefix, at most 16 significant digits.
#[inline(always)]
pub(crate) fn parse_hex(t: &[u8]) -> Option<u64> {
    let t = match t {
        [b'0', b'x' | b'X', rest @ ..] => rest,
        _ => t,
    };
    if t.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    let mut bad = 0u8;
    for &c in t {
        let d = HEX[c as usize];
        bad |= d;
        v = v << 4 | u64::from(d & 15);
    }
    if bad & NOT_HEX != 0 {
        return None;
    }
    if t.len() > 16 && t.len() - t.iter().take_while(|&&c| c == b'0').count() > 16 {
        return None;
    }
    Some(v)
}

/// Token separators of an instruction line: space, tab, carriage return.
const SEP: [bool; 256] = {
    let mut t = [false; 256];
    t[b' ' as usize] = true;
    t[b'\t' as usize] = true;
    t[b'\r' as usize] = true;
    t
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = ONES * 0x80;

/// The hex digits that lead the eight bytes `w` (little-endian: its first byte is the
/// first digit): how many (0 to 8) and their value.
#[inline(always)]
fn hex8(w: u64) -> (u32, u64) {
    // Each byte below 0x80 plus a constant below 0x80 stays in its byte; the high bit of
    // the sum tells whether the byte reached a bound.
    let b = w & !HIGH;
    let digit = (b + ONES * (0x80 - u64::from(b'0'))) & !(b + ONES * (0x7f - u64::from(b'9')));
    let l = b | (ONES * 0x20);
    let alpha = (l + ONES * (0x80 - u64::from(b'a'))) & !(l + ONES * (0x7f - u64::from(b'f')));
    let hex = (digit | alpha) & !w & HIGH;
    let k = (!hex & HIGH).trailing_zeros() / 8;
    if k == 0 {
        return (0, 0);
    }
    // Digit values: the low nibble, plus 9 for a letter (bit 6 set).
    let nib = (w & (ONES * 0x0f)) + 9 * ((w >> 6) & ONES);
    // The first digit to the top byte and the k-th to the bottom one, then pair them up.
    let mut x = (nib << (8 * (8 - k))).swap_bytes();
    x = (x | x >> 4) & 0x00ff_00ff_00ff_00ff;
    x = (x | x >> 8) & 0x0000_ffff_0000_ffff;
    x = (x | x >> 16) & 0x0000_0000_ffff_ffff;
    (k, x)
}

/// Tokens of one line. `QUICK`: the number readers try the one-pass scans first.
pub(crate) struct Toks<'a, const QUICK: bool> {
    s: &'a [u8],
    pos: usize,
}

impl<'a, const QUICK: bool> Toks<'a, QUICK> {
    pub(crate) fn new(s: &'a [u8]) -> Self {
        Toks { s, pos: 0 }
    }

    /// The next token, `None` at the end of the line.
    #[inline(always)]
    pub(crate) fn next(&mut self) -> Option<&'a [u8]> {
        self.skip_sep();
        let s = self.s;
        let st = self.pos;
        if st >= s.len() {
            return None;
        }
        let mut i = st + 1;
        while let Some(&c) = s.get(i) {
            if SEP[c as usize] {
                break;
            }
            i += 1;
        }
        self.pos = i;
        s.get(st..i)
    }

    #[inline(always)]
    fn skip_sep(&mut self) {
        let mut p = self.pos;
        while let Some(&c) = self.s.get(p) {
            if !SEP[c as usize] {
                break;
            }
            p += 1;
        }
        self.pos = p;
    }

    /// Whether a token ending before byte `i` ends there (a separator or the end).
    #[inline(always)]
    fn ends_at(&self, i: usize) -> bool {
        self.s.get(i).is_none_or(|&c| SEP[c as usize])
    }

    /// The value of the next token read as [`parse_hex`] reads it, when the one-pass scan
    /// takes the token; `None` (nothing consumed but separators) otherwise.
    #[inline(always)]
    pub(crate) fn quick_hex(&mut self) -> Option<u64> {
        if !QUICK {
            return None;
        }
        let s = self.s;
        // The shape of a listed address first: one space and `0x`.
        let mut i = self.pos;
        if s.get(i..i + 3) == Some(b" 0x") {
            i += 3;
        } else {
            self.skip_sep();
            i = self.pos;
            if let (Some(b'0'), Some(b'x' | b'X')) = (s.get(i), s.get(i + 1)) {
                i += 2;
            }
        }
        let (n1, v1) = hex8(word(s, i));
        // Eight digits and a separator (a mask): no second word.
        let (n, v) = if n1 < 8 || self.ends_at(i + 8) {
            (n1, v1)
        } else {
            // Sixteen digits and a seventeenth: not a separator, so the general way.
            let (n2, v2) = hex8(word(s, i + 8));
            (8 + n2, v1 << (4 * n2) | v2)
        };
        let end = i + n as usize;
        if n == 0 || !self.ends_at(end) {
            return None;
        }
        self.pos = end;
        Some(v)
    }

    /// The value of the next token read as [`parse_u64`] reads it, when the scan takes it
    /// (at most 19 digits); `None` (nothing consumed but separators) otherwise.
    #[inline(always)]
    pub(crate) fn quick_u64(&mut self) -> Option<u64> {
        if !QUICK {
            return None;
        }
        self.skip_sep();
        let (n, v) = digits(self.s, self.pos)?;
        let end = self.pos + n;
        if !self.ends_at(end) {
            return None;
        }
        self.pos = end;
        Some(v)
    }

    /// The number of the next token when it is a general register `R<n>` (one to three
    /// digits, at most 255) as [`crate::record::Reg::parse`] reads it; `None` (nothing
    /// consumed but separators) otherwise.
    #[inline(always)]
    pub(crate) fn quick_r(&mut self) -> Option<u8> {
        if !QUICK {
            return None;
        }
        self.skip_sep();
        if self.s.get(self.pos) != Some(&b'R') {
            return None;
        }
        let st = self.pos + 1;
        let (n, v) = digits(self.s, st)?;
        let end = st + n;
        if n > 3 || !self.ends_at(end) {
            return None;
        }
        let r = u8::try_from(v).ok()?;
        self.pos = end;
        Some(r)
    }

    /// The value of the next token read as [`parse_i64`] reads it, when the scan takes it
    /// (no sign or `-`, at most 18 digits); `None` (nothing consumed but separators)
    /// otherwise.
    #[inline(always)]
    pub(crate) fn quick_i64(&mut self) -> Option<i64> {
        if !QUICK {
            return None;
        }
        self.skip_sep();
        let neg = self.s.get(self.pos) == Some(&b'-');
        let st = self.pos + usize::from(neg);
        let (n, v) = digits(self.s, st)?;
        let end = st + n;
        if n > 18 || !self.ends_at(end) {
            return None;
        }
        self.pos = end;
        // Below 10^18: the negation cannot overflow.
        Some(if neg { -(v as i64) } else { v as i64 })
    }
}

/// Bytes `i..i + 8` of `s` as a little-endian word, zero bytes past the end.
#[inline(always)]
fn word(s: &[u8], i: usize) -> u64 {
    if let Some(c) = s.get(i..i + 8) {
        let mut b = [0u8; 8];
        b.copy_from_slice(c);
        return u64::from_le_bytes(b);
    }
    let mut w = 0u64;
    for (k, &c) in s.get(i..).unwrap_or(&[]).iter().enumerate() {
        w |= u64::from(c) << (8 * k);
    }
    w
}

/// The decimal digits from `s[i]` on: how many (1 to 19) and their value; `None` when
/// there is none or more than 19.
#[inline(always)]
fn digits(s: &[u8], i: usize) -> Option<(usize, u64)> {
    let mut v = 0u64;
    let mut n = 0;
    while let Some(&c) = s.get(i + n) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if n == 19 {
            return None;
        }
        v = v * 10 + u64::from(d);
        n += 1;
    }
    (n > 0).then_some((n, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens that stress the scans: prefixes, lengths around 8, 16, 19 and 20 digits,
    /// overflow, signs, junk, and non-ASCII bytes.
    fn nasty_tokens() -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = [
            "0",
            "0x",
            "0X",
            "0X1f",
            "0x0x1",
            "x1",
            "ffffffffffffffff",
            "0xffffffffffffffff",
            "0000ffffffffffffffff",
            "1ffffffffffffffff",
            "0x10000000000000000",
            "00000000000000000000000001",
            "fg",
            "7fc841520003",
            "0x7f0006aff788",
            "DEADbeef",
            "12345678",
            "123456789",
            "-",
            "+",
            "-0",
            "+5",
            "+18446744073709551615",
            "0x000000000000000000001",
            "0x0000000000000001",
            "0x00000000000000001",
            "--1",
            "-9223372036854775808",
            "-9223372036854775809",
            "9223372036854775807",
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "9999999999999999999",
            "999999999999999999",
            "-999999999999999999",
            "-9999999999999999999",
            "1a",
            "a1",
            "NaN",
            "nan",
            "inf",
            "-inf",
            "1e5",
            "1.5",
            "0x1g",
            "R1",
            "",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        v.push(vec![b'1', 0xff]);
        v.push(vec![0xc3, 0xa9]);
        v.push(vec![b'0', b'x', b'a', 0x80 | b'a']);
        v.push(b"12\x0b34".to_vec());
        v.push(b"12\x0034".to_vec());
        v
    }

    /// Every reader on `line`, quick and general: the same values, the same tokens left.
    fn check_line(line: &[u8]) {
        type Read<'a, const Q: bool> = fn(&mut Toks<'a, Q>) -> Option<Option<i128>>;
        fn run<'a, const Q: bool>(line: &'a [u8], read: Read<'a, Q>) -> Vec<Option<Option<i128>>> {
            let mut t = Toks::<Q>::new(line);
            let mut out = Vec::new();
            for _ in 0..8 {
                out.push(read(&mut t));
                out.push(t.next().map(|x| i128::from(x.len() as u64)).map(Some));
            }
            out
        }
        fn hex<const Q: bool>(t: &mut Toks<'_, Q>) -> Option<Option<i128>> {
            if let Some(v) = t.quick_hex() {
                return Some(Some(v.into()));
            }
            t.next().map(|x| parse_hex(x).map(i128::from))
        }
        fn dec<const Q: bool>(t: &mut Toks<'_, Q>) -> Option<Option<i128>> {
            if let Some(v) = t.quick_u64() {
                return Some(Some(v.into()));
            }
            t.next().map(|x| parse_u64(x).map(i128::from))
        }
        fn sdec<const Q: bool>(t: &mut Toks<'_, Q>) -> Option<Option<i128>> {
            if let Some(v) = t.quick_i64() {
                return Some(Some(v.into()));
            }
            t.next().map(|x| parse_i64(x).map(i128::from))
        }
        let s = String::from_utf8_lossy(line);
        assert_eq!(run::<true>(line, hex), run::<false>(line, hex), "hex: {s:?}");
        assert_eq!(run::<true>(line, dec), run::<false>(line, dec), "dec: {s:?}");
        assert_eq!(run::<true>(line, sdec), run::<false>(line, sdec), "sdec: {s:?}");
    }

    #[test]
    fn quick_scans_read_as_the_general_parsers() {
        let toks = nasty_tokens();
        // Each token alone, at the end of a line, and between separators of each kind.
        for t in &toks {
            for (pre, post) in [("", ""), (" ", " "), ("\t", "\r"), ("  ", " 1"), ("", " 0x12 -3")] {
                let mut line = pre.as_bytes().to_vec();
                line.extend_from_slice(t);
                line.extend_from_slice(post.as_bytes());
                check_line(&line);
            }
        }
        // Pairs, and random lines of digits, letters, signs and separators.
        for a in &toks {
            for b in toks.iter().step_by(3) {
                let mut line = a.clone();
                line.push(b' ');
                line.extend_from_slice(b);
                check_line(&line);
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let alphabet = b"0123456789abcdefABCDEFxX-+ \t\rgz\x80\xff";
        for len in 0..48 {
            for _ in 0..200 {
                let line: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        // Mostly hex digits, so long numbers occur.
                        let r = (x >> 32) as usize;
                        if r & 3 != 0 {
                            alphabet[r / 4 % 16]
                        } else {
                            alphabet[r / 4 % alphabet.len()]
                        }
                    })
                    .collect();
                check_line(&line);
            }
        }
    }

    #[test]
    fn hex8_reads_the_leading_digits_of_a_word() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bytes: [u8; 8] = std::array::from_fn(|k| {
                let r = (x >> (8 * k)) as u8;
                if r & 7 == 0 {
                    r
                } else {
                    b"0123456789abcdefABCDEF"[usize::from(r) % 22]
                }
            });
            let n = bytes.iter().take_while(|c| c.is_ascii_hexdigit()).count();
            let want = bytes[..n]
                .iter()
                .fold(0u64, |v, &c| v << 4 | u64::from(HEX[usize::from(c)]));
            assert_eq!(hex8(u64::from_le_bytes(bytes)), (n as u32, want), "{bytes:?}");
        }
    }

    #[test]
    fn number_parsers_match_their_definitions() {
        // Hex: optional 0x/0X, hex digits only, at most 16 significant digits.
        let reference = |t: &[u8]| -> Option<u64> {
            let s = std::str::from_utf8(t).ok()?;
            let s = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
            if s.is_empty() || !s.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            let sig = s.trim_start_matches('0');
            if sig.len() > 16 {
                return None;
            }
            Some(if sig.is_empty() {
                0
            } else {
                u64::from_str_radix(sig, 16).ok()?
            })
        };
        for t in nasty_tokens() {
            assert_eq!(parse_hex(&t), reference(&t), "{t:?}");
            let s = std::str::from_utf8(&t).unwrap_or("\u{0}");
            // Decimal: digits only (no sign), at most 20 of them, at most u64::MAX.
            let dec = |s: &str| {
                s.parse::<u64>()
                    .ok()
                    .filter(|_| s.len() <= 20 && !s.starts_with('+'))
            };
            assert_eq!(parse_u64(&t), dec(s), "{s}");
            // Signed: a sign, then such a decimal; negative ones down to i64::MIN, positive
            // ones above i64::MAX keep their bits.
            let want = match s.as_bytes().first() {
                Some(b'-') => dec(&s[1..]).and_then(|u| 0i64.checked_sub_unsigned(u)),
                Some(b'+') => dec(&s[1..]).map(|u| u as i64),
                _ => dec(s).map(|u| u as i64),
            };
            assert_eq!(parse_i64(&t), want, "{s}");
        }
    }
}
