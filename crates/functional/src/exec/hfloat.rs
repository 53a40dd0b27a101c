//! Half-precision pairs: HADD2, HMUL2, HFMA2.

use super::*;

impl Ex<'_> {
    /// HADD2 / HMUL2 / HFMA2: sources are registers (with .H0_H0 / .H1_H1 / .F32 selectors) or
    /// pairs of immediates written `hi, lo`.
    pub(super) fn half(&mut self, hop: HOp, ftz: bool, f32_out: bool, lm: u32) -> Res<()> {
        let nsrc = if hop == HOp::Fma { 3 } else { 2 };
        let ops = &self.d.o[1..];
        let mut extra = ops
            .len()
            .checked_sub(nsrc)
            .ok_or_else(|| self.unsup("operands"))?;
        // Group operands into sources.
        let mut groups: [(usize, bool); 3] = [(0, false); 3];
        let mut i = 0;
        for g in groups.iter_mut().take(nsrc) {
            let is_imm = |o: &D| matches!(o.k, K::Imm(_) | K::ImmF(_));
            if extra > 0 && i + 1 < ops.len() && is_imm(&ops[i]) && is_imm(&ops[i + 1]) {
                *g = (i + 1, true);
                i += 2;
                extra -= 1;
            } else {
                *g = (i + 1, false);
                i += 1;
            }
        }
        if i != ops.len() {
            return Err(self.unsup("operands"));
        }
        for l in lanes(lm) {
            let mut v = [[0f32; 2]; 3];
            for (k, &(oi, pair)) in groups.iter().take(nsrc).enumerate() {
                v[k] = if pair {
                    let hi = self.half_imm(oi)?;
                    let lo = self.half_imm(oi + 1)?;
                    [lo, hi]
                } else {
                    let o = self.op(oi)?;
                    let raw = match o.k {
                        K::ImmF(f) => {
                            let h = alu::f32_to_f16(f as f32) as u32;
                            h | h << 16
                        }
                        _ => self.raw(o, l)?,
                    };
                    let mut h = match o.h {
                        HSel::F32 => {
                            let f = f32::from_bits(raw);
                            [f, f]
                        }
                        HSel::H1H0 => [alu::f16_to_f32(raw as u16), alu::f16_to_f32((raw >> 16) as u16)],
                        HSel::H0H0 => {
                            let x = alu::f16_to_f32(raw as u16);
                            [x, x]
                        }
                        HSel::H1H1 => {
                            let x = alu::f16_to_f32((raw >> 16) as u16);
                            [x, x]
                        }
                    };
                    for x in h.iter_mut() {
                        if o.abs {
                            *x = x.abs();
                        }
                        if o.neg {
                            *x = -*x;
                        }
                    }
                    h
                };
            }
            let mut r = [0f32; 2];
            for (k, rk) in r.iter_mut().enumerate() {
                let (a, b) = (v[0][k], v[1][k]);
                *rk = match hop {
                    HOp::Add => a + b,
                    HOp::Mul => a * b,
                    HOp::Fma => a.mul_add(b, v[2][k]),
                };
                if ftz {
                    *rk = alu::ftz32(*rk);
                }
            }
            if f32_out {
                self.wr(0, l, r[0].to_bits())?;
            } else {
                let lo = alu::f32_to_f16(r[0]) as u32;
                let hi = alu::f32_to_f16(r[1]) as u32;
                self.wr(0, l, lo | hi << 16)?;
            }
        }
        Ok(())
    }

    fn half_imm(&self, i: usize) -> Res<f32> {
        Ok(match self.op(i)?.k {
            K::ImmF(f) => f as f32,
            K::Imm(v) => alu::f16_to_f32(v as u16),
            _ => return Err(self.unsup("half immediate")),
        })
    }
}
