//! Coding primitives over a [`Coder`]: decisions, adaptive unsigned and signed integers,
//! context-tree symbols, raw bits and usually-zero residuals.

use std::io;

use cabac::vp8::VP8Context as Ctx;

use super::coder::Coder;

/// Code one decision; returns the (encoded or decoded) value.
#[inline]
pub(super) fn flag<C: Coder>(c: &mut C, ctx: &mut Ctx, v: bool) -> io::Result<bool> {
    let mut b = v;
    c.bit(ctx, &mut b)?;
    Ok(b)
}

/// Adaptive contexts of an unsigned integer: Elias-gamma style, the bit
/// length in unary (one context per position), the two bits after the
/// leading one with contexts, the rest raw.
#[derive(Clone)]
pub(super) struct IntCtx {
    len: [Ctx; 24],
    mant: [[Ctx; 3]; 65],
}

impl Default for IntCtx {
    fn default() -> Self {
        IntCtx {
            len: [Ctx::default(); 24],
            mant: [[Ctx::default(); 3]; 65],
        }
    }
}

#[inline]
pub(super) fn bitlen(v: u64) -> u32 {
    64 - v.leading_zeros()
}

pub(super) fn code_u<C: Coder>(c: &mut C, ctx: &mut IntCtx, v: u64) -> io::Result<u64> {
    let n = bitlen(v);
    let mut k = 0u32;
    while k < 64 {
        if !flag(c, &mut ctx.len[(k as usize).min(23)], k < n)? {
            break;
        }
        k += 1;
    }
    if k == 0 {
        return Ok(0);
    }
    let mut r = 1u64;
    let mut i = k - 1;
    for j in 0..2usize {
        if i == 0 {
            break;
        }
        i -= 1;
        let mut b = v >> i & 1 == 1;
        let cx = if j == 0 { 0 } else { 1 + (r & 1) as usize };
        c.bit(&mut ctx.mant[k as usize][cx], &mut b)?;
        r = r << 1 | u64::from(b);
    }
    if i > 0 {
        let low = if i == 64 { v } else { v & ((1u64 << i) - 1) };
        r = r << i | c.raw(i, low)?;
    }
    Ok(r)
}

#[inline]
pub(super) fn zz(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub(super) fn unzz(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

pub(super) fn code_s<C: Coder>(c: &mut C, ctx: &mut IntCtx, v: i64) -> io::Result<i64> {
    Ok(unzz(code_u(c, ctx, zz(v))?))
}

/// `n`-bit symbol through a binary context tree (`ctx.len() >= 2^n`).
pub(super) fn code_tree<C: Coder>(c: &mut C, ctx: &mut [Ctx], n: u32, v: u32) -> io::Result<u32> {
    let mut node = 1usize;
    for i in (0..n).rev() {
        let b = flag(c, &mut ctx[node], v >> i & 1 == 1)?;
        node = node << 1 | usize::from(b);
    }
    Ok((node - (1 << n)) as u32)
}

/// `n` raw bits (the separate raw-bit stream).
#[inline]
pub(super) fn code_raw<C: Coder>(c: &mut C, n: u32, v: u64) -> io::Result<u64> {
    c.raw(n, v)
}

/// A residual that is usually zero: a per-static zero flag, then the value.
pub(super) fn code_res<C: Coder>(c: &mut C, zero: &mut Ctx, ctx: &mut IntCtx, v: i64) -> io::Result<i64> {
    if flag(c, zero, v == 0)? {
        return Ok(0);
    }
    let m = code_u(c, ctx, zz(v).wrapping_sub(1))?;
    Ok(unzz(m.wrapping_add(1)))
}
