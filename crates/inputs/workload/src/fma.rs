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
            // One test over the lanes (no early exit, so it vectorizes); NaNs are rare.
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
            return;
        }
    }
    for l in 0..32 {
        out[l] = f32::from_bits(a[l])
            .mul_add(f32::from_bits(b[l]), f32::from_bits(c[l]))
            .to_bits();
    }
}

/// [`fma_rn_lanes`] by the CPU's FMA instructions (`mul_add` compiles to them where the
/// feature is enabled).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn fma_hw(a: &Lanes, b: &Lanes, c: &Lanes, out: &mut Lanes) {
    for l in 0..32 {
        out[l] = f32::from_bits(a[l])
            .mul_add(f32::from_bits(b[l]), f32::from_bits(c[l]))
            .to_bits();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
