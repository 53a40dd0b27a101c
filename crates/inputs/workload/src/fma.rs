//! Fused multiply-add of f32 values with the CPU's FMA instructions where it has them: the
//! functional engine's FFMA (a warp's 32 lanes at a time) and the host references of the
//! matrix workloads (`reference::sgemm`) compute the bits of `f32::mul_add`, which without
//! a target CPU feature is a software routine of a few hundred instructions per call.
//! Here because both crates can use it: the functional engine depends on this crate.

/// One value per lane (f32 bits).
pub type Lanes = [u32; 32];

/// `out[l]` = the bits of `a[l]·b[l] + c[l]` rounded once to nearest even (IEEE 754
/// fusedMultiplyAdd, `f32::mul_add`), operands given as bits. Without a target CPU feature,
/// `mul_add` is a software routine of a few hundred instructions; on an x86-64 CPU with
/// FMA the lanes are computed by the FMA instructions. A NaN result (which every NaN operand
/// gives) is recomputed by `mul_add`: IEEE 754 leaves the NaN's payload to the
/// implementation; every other result is fully specified, so both give the same bits.
pub fn fma_rn_lanes(a: &Lanes, b: &Lanes, c: &Lanes, out: &mut Lanes) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has the FMA extension (checked just above), the only
            // requirement of `fma_hw`.
            unsafe { fma_hw(a, b, c, out) };
            return;
        }
    }
    fma_soft(a, b, c, out);
}

/// The NaN lanes of `out` recomputed by `mul_add` ([`fma_rn_lanes`]). Out of line, as is
/// [`fma_soft`], so that the usual path (`fma_hw` and no NaN) saves and restores no
/// registers for the loops' calls of the software `mul_add`.
#[cold]
#[inline(never)]
fn redo_nans(a: &Lanes, b: &Lanes, c: &Lanes, out: &mut Lanes) {
    let is_nan = |r: u32| r & 0x7fff_ffff > 0x7f80_0000;
    for l in 0..32 {
        if is_nan(out[l]) {
            out[l] = f32::from_bits(a[l])
                .mul_add(f32::from_bits(b[l]), f32::from_bits(c[l]))
                .to_bits();
        }
    }
}

/// [`fma_rn_lanes`] by `mul_add` lane by lane (a CPU without FMA).
#[inline(never)]
fn fma_soft(a: &Lanes, b: &Lanes, c: &Lanes, out: &mut Lanes) {
    for l in 0..32 {
        out[l] = f32::from_bits(a[l])
            .mul_add(f32::from_bits(b[l]), f32::from_bits(c[l]))
            .to_bits();
    }
}

/// [`fma_rn_lanes`] by the CPU's FMA instructions (`mul_add` compiles to them where the
/// feature is enabled). NaNs are rare: the lanes are looked at again (`redo_nans`) only
/// when there is one, found by an unordered compare of the results still in vector
/// registers, ORed over the lanes (no early exit, so it vectorizes), instead of a second
/// pass over `out` with integer compares. The NaN case is handled here rather than by the
/// caller, so that the caller needs to keep nothing across the call (a jump to this).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn fma_hw(a: &Lanes, b: &Lanes, c: &Lanes, out: &mut Lanes) {
    let mut nan = 0u32;
    for l in 0..32 {
        let r = f32::from_bits(a[l]).mul_add(f32::from_bits(b[l]), f32::from_bits(c[l]));
        nan |= r.is_nan() as u32;
        out[l] = r.to_bits();
    }
    if nan != 0 {
        redo_nans(a, b, c, out);
    }
}

/// Columns of a [`fma_chain_row`] block: 64 accumulators, eight AVX vectors kept in
/// registers across the whole chain.
const CHAIN_BLOCK: usize = 64;

/// `out[c]` = the chain `acc = a[kk]·b[kk·ldb + c] + acc` over kk = 0 .. a.len()-1 in order
/// from +0, each step rounded once (`f32::mul_add`), by the CPU's FMA instructions. Returns
/// false, leaving `out` unspecified, when the CPU has no FMA or a result is NaN: the caller
/// then computes the row by [`fma_rn_lanes`], whose NaN payloads are `mul_add`'s. A NaN
/// anywhere in a chain reaches its result (a NaN addend gives a NaN), so without a NaN
/// result every step was an ordinary IEEE 754 result, the same bits either way. Also false
/// when `b` is too short (fewer than `(a.len()-1)·ldb + out.len()` values).
pub fn fma_chain_row(a: &[f32], b: &[f32], ldb: usize, out: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has the FMA extension (checked just above), the only
            // requirement of `chain_hw`.
            return unsafe { chain_hw(a, b, ldb, out) };
        }
    }
    let _ = (a, b, ldb, out);
    false
}

/// [`fma_chain_row`] by the FMA instructions: the columns in blocks of [`CHAIN_BLOCK`], each
/// block's chain run to its end with the accumulators in registers (b read in place, no
/// per-step copies or calls).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn chain_hw(a: &[f32], b: &[f32], ldb: usize, out: &mut [f32]) -> bool {
    let mut nan = false;
    for (j, o) in out.chunks_mut(CHAIN_BLOCK).enumerate() {
        let col0 = j * CHAIN_BLOCK;
        let mut acc = [0.0f32; CHAIN_BLOCK];
        if let Ok(o) = <&mut [f32; CHAIN_BLOCK]>::try_from(&mut *o) {
            // A whole block: fixed-size rows, so the loop is unrolled over the vectors.
            for (kk, &x) in a.iter().enumerate() {
                let Some(row) = b
                    .get(kk * ldb + col0..)
                    .and_then(<[f32]>::first_chunk::<CHAIN_BLOCK>)
                else {
                    return false;
                };
                for (s, &y) in acc.iter_mut().zip(row) {
                    *s = x.mul_add(y, *s);
                }
            }
            for (d, &s) in o.iter_mut().zip(&acc) {
                nan |= s.is_nan();
                *d = s;
            }
        } else {
            let w = o.len();
            for (kk, &x) in a.iter().enumerate() {
                let Some(row) = b.get(kk * ldb + col0..kk * ldb + col0 + w) else {
                    return false;
                };
                for (s, &y) in acc.iter_mut().zip(row) {
                    *s = x.mul_add(y, *s);
                }
            }
            for (d, &s) in o.iter_mut().zip(&acc) {
                nan |= s.is_nan();
                *d = s;
            }
        }
    }
    !nan
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole-warp FMA as it was before the NaN test moved into `fma_hw`: the lanes
    /// computed, then scanned for a NaN with integer compares, NaN lanes recomputed by
    /// `mul_add`.
    fn fma_rn_lanes_old(a: &Lanes, b: &Lanes, c: &Lanes, out: &mut Lanes) {
        for l in 0..32 {
            out[l] = f32::from_bits(a[l])
                .mul_add(f32::from_bits(b[l]), f32::from_bits(c[l]))
                .to_bits();
        }
        let is_nan = |r: u32| r & 0x7fff_ffff > 0x7f80_0000;
        if out.iter().fold(false, |any, &r| any | is_nan(r)) {
            for l in 0..32 {
                if is_nan(out[l]) {
                    out[l] = f32::from_bits(a[l])
                        .mul_add(f32::from_bits(b[l]), f32::from_bits(c[l]))
                        .to_bits();
                }
            }
        }
    }

    /// The new path gives the old one's bits: NaN operands (quiet, signalling, with
    /// payloads, both signs) and NaN results of ordinary operands (∞·0, ∞ − ∞), infinities,
    /// subnormals, zeros and ordinary values; a single NaN lane among ordinary ones, in
    /// every lane position (the NaN test covers each of the vector's parts).
    #[test]
    fn fma_lanes_match_old_path() {
        let special: [u32; 16] = [
            0x7fc0_0000,
            0xffc0_0000,
            0x7f80_0001,
            0xff80_0001,
            0x7fa0_0001,
            0xffc1_2345,
            0x7f80_0000,
            0xff80_0000,
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            0x007f_ffff,
            0x3f80_0000,
            0xbfc0_0000,
            0x7f7f_ffff,
        ];
        let n = special.len();
        let check = |a: &Lanes, b: &Lanes, c: &Lanes| {
            let (mut got, mut want) = ([0u32; 32], [0u32; 32]);
            fma_rn_lanes(a, b, c, &mut got);
            fma_rn_lanes_old(a, b, c, &mut want);
            assert_eq!(got, want, "{a:x?}·{b:x?}+{c:x?}");
        };
        // Every combination of three special values, 32 at a time.
        let all: Vec<(u32, u32, u32)> = (0..n * n * n)
            .map(|k| (special[k % n], special[k / n % n], special[k / (n * n)]))
            .collect();
        for chunk in all.chunks(32) {
            let (mut a, mut b, mut c) = ([0x3f80_0000u32; 32], [0x4000_0000u32; 32], [0u32; 32]);
            for (l, &(x, y, z)) in chunk.iter().enumerate() {
                (a[l], b[l], c[l]) = (x, y, z);
            }
            check(&a, &b, &c);
        }
        // One NaN-giving lane among ordinary ones, in each position and each operand.
        let base_a: Lanes = std::array::from_fn(|l| 0x3f80_0000 + (l as u32) * 0x1_2345);
        let base_b: Lanes = std::array::from_fn(|l| 0xbf00_0000 + (l as u32) * 0x2_3456);
        let base_c: Lanes = std::array::from_fn(|l| 0x0000_1000 + (l as u32) * 0x3_4567);
        for l in 0..32 {
            for (x, y, z) in [
                (0x7fc0_0000, base_b[l], base_c[l]),
                (base_a[l], 0xff80_0001, base_c[l]),
                (base_a[l], base_b[l], 0x7fa0_0001),
                (0x7f80_0000, 0, base_c[l]),
                (0x7f80_0000, 0x3f80_0000, 0xff80_0000),
            ] {
                let (mut a, mut b, mut c) = (base_a, base_b, base_c);
                (a[l], b[l], c[l]) = (x, y, z);
                check(&a, &b, &c);
            }
        }
        check(&base_a, &base_b, &base_c);
    }

    /// A row's FMA chains give the bits of `mul_add` step by step, for whole and partial
    /// blocks and a stride wider than the row; a NaN result is reported (false), an
    /// infinite one is not.
    #[test]
    fn chain_row_matches_mul_add() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
        let chain = |a: &[f32], b: &[f32], ldb: usize, c: usize| {
            a.iter()
                .enumerate()
                .fold(0.0f32, |acc, (kk, &x)| x.mul_add(b[kk * ldb + c], acc))
        };
        for (k, cols, ldb) in [(8, 32, 32), (64, 100, 128), (3, 5, 7), (0, 40, 40)] {
            let a: Vec<f32> = (0..k).map(|_| next()).collect();
            let mut b: Vec<f32> = (0..k * ldb).map(|_| next()).collect();
            let mut out = vec![0.0f32; cols];
            let hw = fma_chain_row(&a, &b, ldb, &mut out);
            if hw {
                for (c, o) in out.iter().enumerate() {
                    assert_eq!(o.to_bits(), chain(&a, &b, ldb, c).to_bits(), "k {k} col {c}");
                }
            }
            if k > 1 {
                // An infinity is an ordinary result; ∞ − ∞ gives a NaN.
                b[1] = f32::INFINITY;
                let r = fma_chain_row(&a, &b, ldb, &mut out);
                assert_eq!(r, hw && !chain(&a, &b, ldb, 1).is_nan());
                b[0] = f32::NAN;
                assert!(!fma_chain_row(&a, &b, ldb, &mut out));
            }
        }
    }

    /// The whole-warp FMA gives the bits of `f32::mul_add` lane by lane, for random
    /// operands and the special values (zeros of both signs, infinities, NaNs, subnormals,
    /// the extremes, results that overflow and underflow).
    #[test]
    fn fma_lanes_match_mul_add() {
        let special: [u32; 14] = [
            0,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x7fa0_0001,
            0xffc1_2345,
            1,
            0x8000_0001,
            0x007f_ffff,
            0x7f7f_ffff,
            0xff7f_ffff,
            0x3f80_0000,
            0x0080_0000,
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        };
        for round in 0..4000 {
            let mut ops = [[0u32; 32]; 3];
            for v in ops.iter_mut() {
                for e in v.iter_mut() {
                    let r = next();
                    *e = match round % 4 {
                        // Mostly ordinary values of nearby magnitudes (cancellation, ties).
                        0 => 0x3f00_0000 | (r & 0x01ff_ffff),
                        1 => special[(r % special.len() as u32) as usize],
                        2 if r & 1 == 0 => special[(r >> 1) as usize % special.len()],
                        _ => r,
                    };
                }
            }
            let mut out = [0u32; 32];
            fma_rn_lanes(&ops[0], &ops[1], &ops[2], &mut out);
            for l in 0..32 {
                let want = f32::from_bits(ops[0][l])
                    .mul_add(f32::from_bits(ops[1][l]), f32::from_bits(ops[2][l]))
                    .to_bits();
                assert_eq!(out[l], want, "{:#x}·{:#x}+{:#x}", ops[0][l], ops[1][l], ops[2][l]);
            }
        }
    }
}
