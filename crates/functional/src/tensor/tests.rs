//! The MMA arithmetic against host references: matrices are spread into fragments with the
//! PTX layouts (pinned in `layout`), multiplied, and D is read back from its fragment.

use super::*;
use sassim_isa::Opcode;

/// The dense MMA (no sparsity metadata).
fn mma(s: &MmaSpec, a: &Frag, b: &Frag, c: &Frag) -> Frag {
    super::mma(s, a, b, c, None)
}

fn spec(s: &str) -> MmaSpec {
    MmaSpec::parse(&Opcode::parse(s)).expect("known MMA")
}

/// xorshift64*: deterministic test data.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Pack a row-major matrix of raw element bit patterns into a fragment.
fn pack(s: &MmaSpec, role: Role, bits: u32, cols: usize, m: &[u64]) -> Frag {
    let mut f: Frag = [[0; 32]; MAX_FRAG_REGS];
    for lane in 0..32u32 {
        for e in 0..elements(s, role) {
            let (r, c) = coord(s, role, lane, e);
            let v = m[r as usize * cols + c as usize];
            let (reg, bit) = slot(bits, e);
            if bits == 64 {
                f[reg as usize][lane as usize] = v as u32;
                f[reg as usize + 1][lane as usize] = (v >> 32) as u32;
            } else {
                let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
                f[reg as usize][lane as usize] |= (v as u32 & mask) << bit;
            }
        }
    }
    f
}

fn unpack(s: &MmaSpec, bits: u32, d: &Frag) -> Vec<u64> {
    let n = s.n as usize;
    let mut out = vec![0u64; s.m as usize * n];
    for lane in 0..32u32 {
        for e in 0..elements(s, Role::C) {
            let (r, c) = coord(s, Role::C, lane, e);
            let (reg, bit) = slot(bits, e);
            let w = d[reg as usize][lane as usize];
            out[r as usize * n + c as usize] = if bits == 64 {
                w as u64 | (d[reg as usize + 1][lane as usize] as u64) << 32
            } else if bits == 16 {
                ((w >> bit) & 0xffff) as u64
            } else {
                w as u64
            };
        }
    }
    out
}

#[test]
fn hmma_f16_inputs_f32_accumulator_matches_the_host_reference() {
    for op in ["HMMA.16816.F32", "HMMA.1688.F32"] {
        let s = spec(op);
        let (m, n, k) = (s.m as usize, s.n as usize, s.k as usize);
        let mut rng = Rng(0x1234 + k as u64);
        // Values j/8 - 4 for j < 64: exact in FP16.
        let mut small = || half::f16::from_f64((rng.next() % 64) as f64 / 8.0 - 4.0).to_bits() as u64;
        let a: Vec<u64> = (0..m * k).map(|_| small()).collect();
        let b: Vec<u64> = (0..k * n).map(|_| small()).collect();
        let c: Vec<u64> = (0..m * n)
            .map(|i| (i as f32 * 0.25 - 3.0).to_bits() as u64)
            .collect();
        let d = mma(
            &s,
            &pack(&s, Role::A, 16, k, &a),
            &pack(&s, Role::B, 16, n, &b),
            &pack(&s, Role::C, 32, n, &c),
        );
        let d = unpack(&s, 32, &d);
        let h = |x: u64| half::f16::from_bits(x as u16).to_f64();
        for i in 0..m {
            for j in 0..n {
                let mut r = f32::from_bits(c[i * n + j] as u32) as f64;
                for kk in 0..k {
                    r += h(a[i * k + kk]) * h(b[kk * n + j]);
                }
                // All values are multiples of 1/64 below 2^10: the result is exact.
                assert_eq!(f32::from_bits(d[i * n + j] as u32) as f64, r, "{op} ({i}, {j})");
            }
        }
    }
}

#[test]
fn fp32_accumulation_rounds_once_to_nearest_even() {
    // C = 1, and one product 2^-24 (half an FP32 ulp of 1) plus another 2^-24: the exact sum
    // 1 + 2^-23 is representable; with one product only, 1 + 2^-24 ties to even (1.0).
    let s = spec("HMMA.1688.F32");
    let (n, k) = (8usize, 8usize);
    let two_m12 = half::f16::from_f64(2f64.powi(-12)).to_bits() as u64;
    let mut a = vec![0u64; 16 * k];
    let mut b = vec![0u64; k * n];
    a[0] = two_m12;
    a[1] = two_m12;
    b[0] = two_m12; // (k 0, n 0)
    b[n] = two_m12; // (k 1, n 0)
    b[1] = two_m12; // (k 0, n 1): row 0 col 1 gets one product only
    let c = vec![1f32.to_bits() as u64; 16 * n];
    let d = unpack(
        &s,
        32,
        &mma(
            &s,
            &pack(&s, Role::A, 16, k, &a),
            &pack(&s, Role::B, 16, n, &b),
            &pack(&s, Role::C, 32, n, &c),
        ),
    );
    assert_eq!(f32::from_bits(d[0] as u32), 1.0 + 2f32.powi(-23));
    assert_eq!(f32::from_bits(d[1] as u32), 1.0);
}

#[test]
fn f16_accumulator_rounds_to_nearest_even_and_bf16_tf32_inputs() {
    // F16 accumulator: 1 + 2^-11 (half an FP16 ulp) ties to 1; 1 + 3·2^-11 rounds up to 1 + 2^-9.
    let s = spec("HMMA.1688.F16");
    let (n, k) = (8usize, 8usize);
    let h = |x: f64| half::f16::from_f64(x).to_bits() as u64;
    let mut a = vec![0u64; 16 * k];
    let mut b = vec![0u64; k * n];
    a[0] = h(2f64.powi(-11));
    a[1] = h(2f64.powi(-10));
    b[0] = h(1.0);
    b[1] = h(1.0);
    b[n + 1] = h(1.0);
    let c = vec![h(1.0); 16 * n];
    let d = unpack(
        &s,
        16,
        &mma(
            &s,
            &pack(&s, Role::A, 16, k, &a),
            &pack(&s, Role::B, 16, n, &b),
            &pack(&s, Role::C, 16, n, &c),
        ),
    );
    assert_eq!(half::f16::from_bits(d[0] as u16).to_f64(), 1.0);
    assert_eq!(half::f16::from_bits(d[1] as u16).to_f64(), 1.0 + 2f64.powi(-9));
    // BF16: 1.5 × 3 = 4.5; TF32 ignores the low 13 mantissa bits of its inputs.
    let s = spec("HMMA.1688.F32.BF16");
    let bf = |x: f32| (x.to_bits() >> 16) as u64;
    let mut a = vec![0u64; 16 * k];
    let mut b = vec![0u64; k * n];
    a[0] = bf(1.5);
    b[0] = bf(3.0);
    let zero: Frag = [[0; 32]; MAX_FRAG_REGS];
    let d = unpack(
        &s,
        32,
        &mma(
            &s,
            &pack(&s, Role::A, 16, k, &a),
            &pack(&s, Role::B, 16, n, &b),
            &zero,
        ),
    );
    assert_eq!(f32::from_bits(d[0] as u32), 4.5);
    let s = spec("HMMA.1688.F32.TF32");
    let mut a = vec![0u64; 16 * k];
    let mut b = vec![0u64; k * n];
    a[0] = (1.0f32.to_bits() | 0x1fff) as u64; // 1 + (2^13 - 1)·2^-23: read as 1.0
    b[0] = 2.0f32.to_bits() as u64;
    let d = unpack(
        &s,
        32,
        &mma(
            &s,
            &pack(&s, Role::A, 32, k, &a),
            &pack(&s, Role::B, 32, n, &b),
            &zero,
        ),
    );
    assert_eq!(f32::from_bits(d[0] as u32), 2.0);
}

#[test]
fn imma_is_exact_wraps_and_saturates() {
    for (op, abits) in [
        ("IMMA.16832.S8.S8", 8u32),
        ("IMMA.16816.U8.S8", 8),
        ("IMMA.8816.S8.S8", 8),
        ("IMMA.16864.S4.S4", 4),
        ("IMMA.16832.U4.U4", 4),
        ("IMMA.8832.S4.S4", 4),
    ] {
        let s = spec(op);
        let (m, n, k) = (s.m as usize, s.n as usize, s.k as usize);
        let mut rng = Rng(99 + k as u64);
        let mask = (1u64 << abits) - 1;
        let a: Vec<u64> = (0..m * k).map(|_| rng.next() & mask).collect();
        let b: Vec<u64> = (0..k * n).map(|_| rng.next() & mask).collect();
        let c: Vec<u64> = (0..m * n)
            .map(|_| (rng.next() as i32 >> 8) as u32 as u64)
            .collect();
        let val = |t: MmaType, x: u64| -> i64 {
            match t {
                MmaType::S8 => x as u8 as i8 as i64,
                MmaType::S4 => ((x as i32) << 28 >> 28) as i64,
                _ => x as i64,
            }
        };
        let d = unpack(
            &s,
            32,
            &mma(
                &s,
                &pack(&s, Role::A, abits, k, &a),
                &pack(&s, Role::B, abits, n, &b),
                &pack(&s, Role::C, 32, n, &c),
            ),
        );
        for i in 0..m {
            for j in 0..n {
                let mut r = c[i * n + j] as u32 as i32 as i64;
                for kk in 0..k {
                    r += val(s.a, a[i * k + kk]) * val(s.b, b[kk * n + j]);
                }
                assert_eq!(d[i * n + j] as u32 as i32 as i64, r, "{op} ({i}, {j})");
            }
        }
    }
    // Overflow: C = i32::MAX and a positive product wraps, or saturates with .SAT.
    for (op, want) in [("IMMA.8816.S8.S8", i32::MIN), ("IMMA.8816.S8.S8.SAT", i32::MAX)] {
        let s = spec(op);
        let mut a = vec![0u64; 8 * 16];
        let mut b = vec![0u64; 16 * 8];
        a[0] = 1;
        b[0] = 1;
        let c = vec![i32::MAX as u32 as u64; 64];
        let d = unpack(
            &s,
            32,
            &mma(
                &s,
                &pack(&s, Role::A, 8, 16, &a),
                &pack(&s, Role::B, 8, 8, &b),
                &pack(&s, Role::C, 32, 8, &c),
            ),
        );
        assert_eq!(d[0] as u32 as i32, want, "{op}");
    }
}

#[test]
fn dmma_is_a_chain_of_fused_multiply_adds() {
    let s = spec("DMMA.884");
    let mut rng = Rng(7);
    let mut r = || (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
    let a: Vec<f64> = (0..32).map(|_| r()).collect();
    let b: Vec<f64> = (0..32).map(|_| r()).collect();
    let c: Vec<f64> = (0..64).map(|_| r()).collect();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let d = unpack(
        &s,
        64,
        &mma(
            &s,
            &pack(&s, Role::A, 64, 4, &bits(&a)),
            &pack(&s, Role::B, 64, 8, &bits(&b)),
            &pack(&s, Role::C, 64, 8, &bits(&c)),
        ),
    );
    for i in 0..8 {
        for j in 0..8 {
            let mut x = c[i * 8 + j];
            for kk in 0..4 {
                x = a[i * 4 + kk].mul_add(b[kk * 8 + j], x);
            }
            assert_eq!(f64::from_bits(d[i * 8 + j]).to_bits(), x.to_bits(), "({i}, {j})");
        }
    }
}

/// Sparse MMAs against the dense product of the decompressed A: random 2:4 patterns, metadata
/// written by the rule of `sparse` (the host side of the exec test `spmma` does the same from
/// the PTX description).
#[test]
fn sparse_mma_equals_the_dense_product_of_the_expanded_a() {
    for (op, bits, sel) in [
        ("HMMA.SP.16832.F32", 16, 1u8),
        ("HMMA.SP.16816.F32", 16, 3),
        ("HMMA.SP.1688.F32.TF32", 32, 2),
        ("IMMA.SP.16832.S8.S8", 8, 0),
        ("IMMA.SP.16864.S8.S8", 8, 0),
        ("IMMA.SP.16864.S4.S4", 4, 1),
    ] {
        let s = spec(op);
        let (m, n, k) = (s.m as usize, s.n as usize, s.k as usize);
        let unit = if s.family == MmaFamily::I { 8 } else { 16 };
        let (dense_units, per_unit) = (k * bits / unit, (unit / bits).max(1));
        let t = dense_units / 2 / 8; // metadata threads per quad
        let mut rng = Rng(0x5eed + k as u64 + bits as u64);
        // Keep 2 of every 4 units (for tf32, 1 of every 2 elements = an aligned unit pair).
        let mut a_dense = vec![0u64; m * k];
        let mut stored = vec![0u64; m * k / 2];
        let mut meta = [0u32; 32];
        let val = |rng: &mut Rng| match (s.family, bits) {
            (MmaFamily::I, 4) => rng.next() % 16,
            (MmaFamily::I, _) => rng.next() % 256,
            (_, 16) => half::f16::from_f64((rng.next() % 64) as f64 / 8.0 - 4.0).to_bits() as u64,
            _ => ((rng.next() % 64) as f32 / 8.0 - 4.0).to_bits() as u64,
        };
        for r in 0..m {
            for chunk in 0..dense_units / 4 {
                let (i0, i1) = if bits == 32 {
                    if rng.next().is_multiple_of(2) {
                        (0, 1)
                    } else {
                        (2, 3)
                    }
                } else {
                    let i0 = rng.next() % 3;
                    (i0, i0 + 1 + rng.next() % (3 - i0))
                };
                for (slot, idx) in [(0, i0), (1, i1)] {
                    let u = 2 * chunk + slot; // stored unit
                    let lane = 4 * (r % 8) + t * sel as usize + u / 8;
                    meta[lane] |= (idx as u32) << (2 * (u % 8) + 16 * (r / 8));
                    for e in 0..per_unit {
                        let dcol = ((4 * chunk + idx as usize) * unit + e * bits) / bits;
                        let scol = (u * unit + e * bits) / bits;
                        if bits == 32 && slot == 1 {
                            continue; // second half of the same tf32 element
                        }
                        let v = val(&mut rng);
                        a_dense[r * k + dcol] = v;
                        stored[r * (k / 2) + scol] = v;
                    }
                }
            }
        }
        let b: Vec<u64> = (0..k * n).map(|_| val(&mut rng)).collect();
        let c: Vec<u64> = (0..m * n).map(|i| (i as u64 % 7) * 3).collect();
        let c_bits: Vec<u64> = if s.family == MmaFamily::I {
            c.clone()
        } else {
            c.iter().map(|&x| (x as f32).to_bits() as u64).collect()
        };
        let d = super::mma(
            &s,
            &pack(&s, Role::A, bits as u32, k / 2, &stored),
            &pack(&s, Role::B, bits as u32, n, &b),
            &pack(&s, Role::C, 32, n, &c_bits),
            Some((&meta, sel)),
        );
        let d = unpack(&s, 32, &d);
        let num = |x: u64| -> f64 {
            match (s.family, bits) {
                (MmaFamily::I, 4) => ((x as i32) << 28 >> 28) as f64,
                (MmaFamily::I, _) => x as u8 as i8 as f64,
                (_, 16) => half::f16::from_bits(x as u16).to_f64(),
                _ => f32::from_bits(x as u32) as f64,
            }
        };
        for i in 0..m {
            for j in 0..n {
                let mut r = c[i * n + j] as f64;
                for kk in 0..k {
                    r += num(a_dense[i * k + kk]) * num(b[kk * n + j]);
                }
                let got = if s.family == MmaFamily::I {
                    d[i * n + j] as u32 as i32 as f64
                } else {
                    f32::from_bits(d[i * n + j] as u32) as f64
                };
                // Multiples of 1/64 below 2^12 (FP) or small integers: exact.
                assert_eq!(got, r, "{op} ({i}, {j})");
            }
        }
    }
}
