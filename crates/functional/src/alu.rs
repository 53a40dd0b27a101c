//! Pure arithmetic helpers: bit manipulation, rounding, half precision.

use crate::decode::{Cmp, Round, ShfTy};

/// LOP3 lookup: bit i of the result is `lut[(a_i << 2) | (b_i << 1) | c_i]` (a = 0xF0, b = 0xCC,
/// c = 0xAA convention).
pub fn lop3(a: u32, b: u32, c: u32, lut: u8) -> u32 {
    let mut r = 0u32;
    for k in 0..8u32 {
        if lut >> k & 1 == 1 {
            let ma = if k & 4 != 0 { a } else { !a };
            let mb = if k & 2 != 0 { b } else { !b };
            let mc = if k & 1 != 0 { c } else { !c };
            r |= ma & mb & mc;
        }
    }
    r
}

/// PLOP3 lookup on single bits.
pub fn plop3(a: bool, b: bool, c: bool, lut: u8) -> bool {
    let k = (a as u32) << 2 | (b as u32) << 1 | c as u32;
    lut >> k & 1 == 1
}

/// SHF funnel shift of the 64-bit value `hi:lo`.
pub fn shf(lo: u32, shift: u32, hi: u32, left: bool, ty: ShfTy, high: bool, wrap: bool) -> u32 {
    let is64 = matches!(ty, ShfTy::U64 | ShfTy::S64);
    let n = if wrap {
        shift & if is64 { 63 } else { 31 }
    } else {
        shift.min(if is64 { 64 } else { 32 })
    };
    let v = ((hi as u64) << 32) | lo as u64;
    let r: u64 = if left {
        ((v as u128) << n) as u64
    } else {
        match ty {
            ShfTy::S32 | ShfTy::S64 => ((v as i64 as i128) >> n) as u64,
            _ => ((v as u128) >> n) as u64,
        }
    };
    if high {
        // .HI: the high word. For left shifts that is bits 32..63 of (hi:lo) << n.
        (r >> 32) as u32
    } else {
        r as u32
    }
}

/// PRMT byte permute. `mode` 0 = default (selector nibbles), others per PTX prmt modes.
pub fn prmt(a: u32, sel: u32, b: u32, mode: u8) -> u32 {
    let bytes = ((b as u64) << 32) | a as u64;
    let byte = |i: u32| ((bytes >> (8 * (i & 7))) & 0xff) as u32;
    match mode {
        0 => {
            let mut r = 0u32;
            for k in 0..4 {
                let s = (sel >> (4 * k)) & 0xf;
                let mut v = byte(s & 7);
                if s & 8 != 0 {
                    v = if v & 0x80 != 0 { 0xff } else { 0 };
                }
                r |= v << (8 * k);
            }
            r
        }
        _ => {
            let s = sel & 3;
            let idx: [u32; 4] = match mode {
                1 => [s, s + 1, s + 2, s + 3], // F4E forward 4 extract
                2 => [s, s.wrapping_sub(1), s.wrapping_sub(2), s.wrapping_sub(3)], // B4E
                3 => [s, s, s, s],             // RC8 replicate byte
                4 => [0, 1, 2, 3].map(|k: u32| k.max(s)), // ECL edge clamp left
                5 => [0, 1, 2, 3].map(|k: u32| k.min(s)), // ECR edge clamp right
                _ => {
                    let h = (sel & 1) * 2;
                    [h, h + 1, h, h + 1] // RC16 replicate half
                }
            };
            let mut r = 0u32;
            for (k, i) in idx.iter().enumerate() {
                r |= byte(i & 7) << (8 * k);
            }
            r
        }
    }
}

/// FLO: position of the most significant 1 (unsigned) or of the most significant bit that
/// differs from the sign (signed); 0xffffffff when none. `.SH` returns 31 - position.
pub fn flo(a: u32, signed: bool, sh: bool) -> u32 {
    let v = if signed && (a as i32) < 0 { !a } else { a };
    if v == 0 {
        return 0xffff_ffff;
    }
    let pos = 31 - v.leading_zeros();
    if sh {
        31 - pos
    } else {
        pos
    }
}

/// Integer comparison.
pub fn icmp(a: u32, b: u32, cmp: Cmp, signed: bool) -> bool {
    let o = if signed {
        (a as i32).cmp(&(b as i32))
    } else {
        a.cmp(&b)
    };
    use std::cmp::Ordering::*;
    match cmp {
        Cmp::F => false,
        Cmp::T => true,
        Cmp::Lt => o == Less,
        Cmp::Eq => o == Equal,
        Cmp::Le => o != Greater,
        Cmp::Gt => o == Greater,
        Cmp::Ne => o != Equal,
        Cmp::Ge => o != Less,
        _ => false,
    }
}

/// Float comparison (ordered variants are false on NaN, unordered `..U` true).
pub fn fcmp(a: f64, b: f64, cmp: Cmp) -> bool {
    let nan = a.is_nan() || b.is_nan();
    match cmp {
        Cmp::F => false,
        Cmp::T => true,
        Cmp::Lt => !nan && a < b,
        Cmp::Eq => !nan && a == b,
        Cmp::Le => !nan && a <= b,
        Cmp::Gt => !nan && a > b,
        Cmp::Ne => !nan && a != b,
        Cmp::Ge => !nan && a >= b,
        Cmp::Num => !nan,
        Cmp::Nan => nan,
        Cmp::Ltu => nan || a < b,
        Cmp::Equ => nan || a == b,
        Cmp::Leu => nan || a <= b,
        Cmp::Gtu => nan || a > b,
        Cmp::Neu => nan || a != b,
        Cmp::Geu => nan || a >= b,
    }
}

/// Flush a single-precision denormal to a zero of the same sign.
pub fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

fn next_up32(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f32::from_bits(1);
    }
    let b = x.to_bits();
    f32::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

fn next_down32(x: f32) -> f32 {
    -next_up32(-x)
}

/// Round the exact value `s + e` (s, e as from an error-free transformation, |e| tiny relative
/// to s) to single precision with a directed mode.
pub fn round_f32(s: f64, e: f64, rnd: Round) -> f32 {
    let r = s as f32;
    if rnd == Round::Rn || r.is_nan() {
        return r;
    }
    // Compare r with the exact value s + e.
    let rd = r as f64;
    let below = rd < s || (rd == s && e > 0.0); // r < exact
    let above = rd > s || (rd == s && e < 0.0); // r > exact
    match rnd {
        Round::Rz => {
            if r > 0.0 && (above || r.is_infinite() && s.is_finite()) {
                next_down32(r)
            } else if r < 0.0 && (below || r.is_infinite() && s.is_finite()) {
                next_up32(r)
            } else {
                r
            }
        }
        Round::Rm => {
            if above {
                next_down32(r)
            } else {
                r
            }
        }
        Round::Rp => {
            if below {
                next_up32(r)
            } else {
                r
            }
        }
        Round::Rn => r,
    }
}

/// Exact sum as (s, e) with s + e == a + b (Knuth TwoSum).
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// Round a double to an integer-valued double with a mode.
pub fn round_int(x: f64, rnd: Round) -> f64 {
    match rnd {
        Round::Rn => {
            let r = x.round();
            // Ties to even.
            if (x - x.trunc()).abs() == 0.5 {
                2.0 * (x / 2.0).round()
            } else {
                r
            }
        }
        Round::Rz => x.trunc(),
        Round::Rm => x.floor(),
        Round::Rp => x.ceil(),
    }
}

/// IEEE half → single.
pub fn f16_to_f32(h: u16) -> f32 {
    let s = ((h >> 15) & 1) as u32;
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as u32;
    let bits = if e == 0 {
        if m == 0 {
            s << 31
        } else {
            // Subnormal: value = m * 2^-24.
            let v = m as f32 * (1.0 / 16_777_216.0);
            return if s == 1 { -v } else { v };
        }
    } else if e == 31 {
        (s << 31) | 0x7f80_0000 | (m << 13)
    } else {
        (s << 31) | (((e - 15 + 127) as u32) << 23) | (m << 13)
    };
    f32::from_bits(bits)
}

/// Single → IEEE half, round to nearest even.
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let s = ((b >> 16) & 0x8000) as u16;
    if x.is_nan() {
        return s | 0x7e00;
    }
    let a = x.abs();
    if a >= 65520.0 {
        return s | 0x7c00;
    }
    if a < 6.103_515_6e-5 {
        // Subnormal half (or zero): quantum 2^-24.
        let q = (a as f64) * 16_777_216.0;
        let r = round_int(q, Round::Rn) as u16;
        return s | r;
    }
    let e = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let m = b & 0x7f_ffff;
    let mut h = ((e as u32) << 10) | (m >> 13);
    let rest = m & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && h & 1 == 1) {
        h += 1;
    }
    s | h as u16
}

/// Sign-extend the low `bits` bits.
pub fn sext(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        return v;
    }
    let sh = 64 - bits;
    (((v << sh) as i64) >> sh) as u64
}

/// Single → bfloat16, round to nearest even (NaN stays a quiet NaN).
pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) | 0x40) as u16;
    }
    let round = 0x7fff + ((b >> 16) & 1);
    (b.wrapping_add(round) >> 16) as u16
}

/// `FCHK.DIVIDE`: true when the fast division sequence ptxas emits for `a / b` (MUFU.RCP and
/// FFMA refinement) might not give the correctly rounded quotient, so the program takes the
/// exact slow path. NVIDIA does not document the exact condition; sassim's is conservative
/// (docs/model.md): any NaN, infinity, zero or subnormal divisor, a zero or subnormal
/// dividend (the refinement FFMAs lose the sign of a zero quotient), or exponents whose
/// difference or whose dividend is near the ends of the normal range. A conservative answer
/// only sends more divisions down the exact path (same result, slower).
pub fn fchk_divide(a: f32, b: f32) -> bool {
    let exp = |x: f32| ((x.to_bits() >> 23) & 0xff) as i32;
    let (ea, eb) = (exp(a), exp(b));
    if !a.is_finite() || !b.is_finite() || b == 0.0 || eb == 0 {
        return true;
    }
    if ea == 0 {
        return true; // zero or subnormal dividend
    }
    let d = ea - eb;
    !(-124..=124).contains(&d) || !(3..=252).contains(&ea) || !(3..=252).contains(&eb)
}

/// The operation of [`f64_rounded`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundedOp {
    Add,
    Mul,
    /// `a * b + c` with one rounding.
    Fma,
}

fn apfloat_round(rnd: Round) -> rustc_apfloat::Round {
    match rnd {
        Round::Rn => rustc_apfloat::Round::NearestTiesToEven,
        Round::Rz => rustc_apfloat::Round::TowardZero,
        Round::Rm => rustc_apfloat::Round::TowardNegative,
        Round::Rp => rustc_apfloat::Round::TowardPositive,
    }
}

/// Double-precision add, multiply or fused multiply-add with IEEE rounding mode `rnd`
/// (DADD/DMUL/DFMA `.RZ/.RM/.RP`), computed exactly by `rustc_apfloat`.
pub fn f64_rounded(a: f64, b: f64, c: f64, op: RoundedOp, rnd: Round) -> f64 {
    use rustc_apfloat::ieee::Double;
    use rustc_apfloat::Float;
    let (x, y, z) = (
        Double::from_bits(a.to_bits() as u128),
        Double::from_bits(b.to_bits() as u128),
        Double::from_bits(c.to_bits() as u128),
    );
    let r = apfloat_round(rnd);
    let v = match op {
        RoundedOp::Add => x.add_r(y, r).value,
        RoundedOp::Mul => x.mul_r(y, r).value,
        RoundedOp::Fma => x.mul_add_r(y, z, r).value,
    };
    f64::from_bits(v.to_bits() as u64)
}

/// Single-precision fused multiply-add with IEEE rounding mode `rnd` (FFMA `.RZ/.RM/.RP`).
pub fn fma32_rounded(a: f32, b: f32, c: f32, rnd: Round) -> f32 {
    use rustc_apfloat::ieee::Single;
    use rustc_apfloat::Float;
    let f = |x: f32| Single::from_bits(x.to_bits() as u128);
    let v = f(a).mul_add_r(f(b), f(c), apfloat_round(rnd)).value;
    f32::from_bits(v.to_bits() as u32)
}
