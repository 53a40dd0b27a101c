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
