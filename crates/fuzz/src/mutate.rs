//! Structure-aware mutation of text inputs: the text is split into tokens (numbers in
//! decimal, hex or float form, identifiers, lines) and mutated at that level — numbers are
//! replaced by boundary values in the same notation, identifiers by other identifiers of
//! the corpus, lines deleted, duplicated, swapped or spliced from another seed — with a
//! few byte-level changes on top. Every input is a pure function of (seed, index), so an
//! input that crashed a worker can be rebuilt by the supervisor.

use sassim_workload::SplitMix64;

/// Boundary values: sizes, counts, powers of two and their neighbours, sign limits.
const INTERESTING: &[i128] = &[
    0,
    1,
    -1,
    2,
    3,
    7,
    8,
    15,
    16,
    31,
    32,
    33,
    63,
    64,
    127,
    128,
    255,
    256,
    1023,
    1024,
    4095,
    4096,
    65535,
    65536,
    100_000,
    1 << 20,
    (1 << 31) - 1,
    1 << 31,
    (1 << 32) - 1,
    1 << 32,
    1 << 40,
    (1 << 63) - 1,
    1 << 63,
    (1 << 64) - 1,
    -(1 << 31),
    -(1 << 63),
];

const FLOATS: &[&str] = &[
    "nan", "inf", "-inf", "NAN", "+INF", "1e308", "-0.0", "1e-320", "0.5",
];

/// A token of a text input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Number,
    Ident,
    Other,
}

fn tokens(b: &[u8]) -> Vec<(usize, usize, Tok)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        let kind = if c.is_ascii_digit() || (c == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            i += 1;
            if b[start..].starts_with(b"0x") || b[start..].starts_with(b"0X") {
                i = start + 2;
                while i < b.len() && b[i].is_ascii_hexdigit() {
                    i += 1;
                }
            } else {
                while i < b.len() && (b[i].is_ascii_digit() || matches!(b[i], b'.' | b'e' | b'E')) {
                    i += 1;
                }
            }
            Tok::Number
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'.')) {
                i += 1;
            }
            Tok::Ident
        } else {
            i += 1;
            Tok::Other
        };
        out.push((start, i, kind));
    }
    out
}

/// Identifiers of a text (the dictionary of its corpus).
pub fn identifiers(b: &[u8]) -> Vec<Vec<u8>> {
    tokens(b)
        .into_iter()
        .filter(|t| t.2 == Tok::Ident && t.1 - t.0 <= 40)
        .map(|t| b[t.0..t.1].to_vec())
        .collect()
}

pub struct Rng(pub SplitMix64);

impl Rng {
    pub fn new(seed: u64, index: u64) -> Rng {
        // Decorrelate neighbouring indices.
        let mut s = SplitMix64::new(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        s.next();
        Rng(s)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.0.next() % n as u64) as usize
        }
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.0.next() % 100 < percent
    }
}

fn new_number(old: &[u8], r: &mut Rng) -> Vec<u8> {
    let s = String::from_utf8_lossy(old);
    let hex = s.starts_with("0x") || s.starts_with("0X");
    let is_float = !hex && s.contains(['.', 'e', 'E']);
    if is_float && r.chance(30) || r.chance(5) {
        return FLOATS[r.below(FLOATS.len())].as_bytes().to_vec();
    }
    let cur: i128 = if hex {
        i128::from_str_radix(&s[2..], 16).unwrap_or(0)
    } else {
        s.split(['.', 'e', 'E'])
            .next()
            .unwrap_or("0")
            .parse()
            .unwrap_or(0)
    };
    let v = match r.below(6) {
        0 | 1 => INTERESTING[r.below(INTERESTING.len())],
        2 => cur + 1,
        3 => cur - 1,
        4 => cur ^ (1 << r.below(64)),
        _ => cur.saturating_mul(if r.chance(50) { 2 } else { 1 << 16 }),
    };
    if hex {
        let width = s.len() - 2;
        let v = v as u64;
        format!("0x{v:0width$x}").into_bytes()
    } else if is_float {
        format!("{v}.0").into_bytes()
    } else {
        v.to_string().into_bytes()
    }
}

fn lines(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut s = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            out.push((s, i + 1));
            s = i + 1;
        }
    }
    if s < b.len() {
        out.push((s, b.len()));
    }
    out
}

/// One structure-aware mutation of `b` in place. `other` is another seed (splicing),
/// `dict` the corpus' identifiers.
pub fn mutate_once(b: &mut Vec<u8>, other: &[u8], dict: &[Vec<u8>], r: &mut Rng) {
    let pick = r.below(100);
    if pick < 45 {
        let t: Vec<_> = tokens(b).into_iter().filter(|t| t.2 == Tok::Number).collect();
        if let Some(&(s, e, _)) = t.get(r.below(t.len())) {
            let n = new_number(&b[s..e], r);
            b.splice(s..e, n);
        }
    } else if pick < 60 {
        let t: Vec<_> = tokens(b).into_iter().filter(|t| t.2 == Tok::Ident).collect();
        if let (Some(&(s, e, _)), false) = (t.get(r.below(t.len())), dict.is_empty()) {
            b.splice(s..e, dict[r.below(dict.len())].clone());
        }
    } else if pick < 82 {
        let l = lines(b);
        if l.is_empty() {
            return;
        }
        let (s, e) = l[r.below(l.len())];
        match r.below(3) {
            0 => {
                b.drain(s..e);
            }
            1 => {
                let line = b[s..e].to_vec();
                b.splice(s..s, line);
            }
            _ => {
                let (s2, e2) = l[r.below(l.len())];
                if (s2, e2) != (s, e) {
                    let (a, c) = if s < s2 {
                        ((s, e), (s2, e2))
                    } else {
                        ((s2, e2), (s, e))
                    };
                    if a.1 <= c.0 {
                        let mut out = b[..a.0].to_vec();
                        out.extend_from_slice(&b[c.0..c.1]);
                        out.extend_from_slice(&b[a.1..c.0]);
                        out.extend_from_slice(&b[a.0..a.1]);
                        out.extend_from_slice(&b[c.1..]);
                        *b = out;
                    }
                }
            }
        }
    } else if pick < 88 {
        let l = lines(b);
        let o = lines(other);
        if l.is_empty() || o.is_empty() {
            return;
        }
        let (s, _) = l[r.below(l.len())];
        let i = r.below(o.len());
        let j = (i + 1 + r.below(8)).min(o.len());
        let ins = other[o[i].0..o[j - 1].1].to_vec();
        b.splice(s..s, ins);
    } else if pick < 92 {
        let n = r.below(b.len() + 1);
        b.truncate(n);
    } else {
        if b.is_empty() {
            b.push(b'\n');
        }
        let i = r.below(b.len());
        match r.below(3) {
            0 => b[i] ^= 1 << r.below(8),
            1 => b.insert(i, [b'\n', b' ', b',', b'-', b'0', 0xff, b'#', b'['][r.below(8)]),
            _ => {
                b.remove(i);
            }
        }
    }
}

/// Byte-level mutation of a binary input (flip, set a boundary byte, delete, duplicate a
/// run, truncate).
pub fn mutate_bytes(b: &mut Vec<u8>, r: &mut Rng) {
    if b.is_empty() {
        b.push(0);
    }
    let i = r.below(b.len());
    match r.below(6) {
        0 => b[i] ^= 1 << r.below(8),
        1 => b[i] = [0u8, 1, 0x7f, 0x80, 0xff][r.below(5)],
        2 => {
            b.remove(i);
        }
        3 => {
            let e = (i + 1 + r.below(64)).min(b.len());
            let run = b[i..e].to_vec();
            b.splice(i..i, run);
        }
        4 => b.truncate(i),
        _ => {
            for k in 0..r.below(8).min(b.len() - i) {
                b[i + k] = 0xff;
            }
        }
    }
}
