//! Integer, floating-point and warp-wide (SHFL/VOTE/MATCH) instructions.

use super::lanes::{fma_rn_lanes, Lanes};
use super::*;

fn bop(op: BoolOp, a: bool, b: bool) -> bool {
    match op {
        BoolOp::And => a && b,
        BoolOp::Or => a || b,
        BoolOp::Xor => a ^ b,
    }
}

fn sat01(x: f32) -> f32 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// `a[l] * b[l] + c[l]` (the product of 32-bit integers, signed or not, to 64 bits) for
/// every lane, as its low word in `lo[l]` and high word in `hi[l]`. Loops without a carry or
/// branch per lane: the unsigned one is compiled to whole-vector multiplies.
fn mad_wide(a: &Lanes, b: &Lanes, c: &[u64; 32], signed: bool, lo: &mut Lanes, hi: &mut Lanes) {
    let mut put = |l: usize, p: u64| {
        let r = p.wrapping_add(c[l]);
        lo[l] = r as u32;
        hi[l] = (r >> 32) as u32;
    };
    if signed {
        for l in 0..32 {
            put(l, (a[l] as i32 as i64).wrapping_mul(b[l] as i32 as i64) as u64);
        }
    } else {
        for l in 0..32 {
            put(l, a[l] as u64 * b[l] as u64);
        }
    }
}

impl Ex<'_> {
    #[inline]
    pub(super) fn n(&self) -> usize {
        self.d.o.len()
    }

    /// Source operand `i` as an integer.
    #[inline]
    pub(super) fn si(&mut self, i: usize, lane: usize) -> Res<u32> {
        let o = self.op(i)?;
        self.int(o, lane)
    }
    #[inline]
    fn sf(&mut self, i: usize, lane: usize) -> Res<f32> {
        let o = self.op(i)?;
        self.f32v(o, lane)
    }
    fn sd(&mut self, i: usize, lane: usize) -> Res<f64> {
        let o = self.op(i)?;
        self.f64v(o, lane)
    }
    #[inline]
    fn s64(&mut self, i: usize, lane: usize) -> Res<u64> {
        let o = self.op(i)?;
        let mut v = self.raw64(o, lane)?;
        if o.not {
            v = !v;
        }
        if o.neg {
            v = v.wrapping_neg();
        }
        Ok(v)
    }
    fn imm_u8(&self, i: usize) -> Res<u8> {
        match self.op(i)?.k {
            K::Imm(v) => Ok(v as u8),
            K::ImmF(f) => Ok(f as u8),
            _ => Err(self.unsup("expected an immediate")),
        }
    }
    /// Number of trailing predicate operands (carry-ins and the like), at most `max`.
    fn trailing_preds(&self, max: usize) -> usize {
        self.d
            .o
            .iter()
            .rev()
            .take(max)
            .take_while(|o| o.is_pred())
            .count()
    }

    pub(super) fn data_op(&mut self, op: &Op) -> Res<()> {
        let lm = self.exec_lanes();
        match *op {
            Op::Iadd3 { x } => {
                let pins = if x { self.trailing_preds(2) } else { 0 };
                let n = self.n();
                if n < 4 + pins {
                    return Err(self.unsup("operands"));
                }
                let pouts = n - 4 - pins;
                if pouts > 2 || (1..=pouts).any(|k| !self.d.o[k].is_pred()) {
                    return Err(self.unsup("operands"));
                }
                let s0 = 1 + pouts;
                if lm == 0 {
                    return Ok(());
                }
                // Whole warp: each source negated (~x + 1) or inverted as a whole.
                let mut src = [[0u32; 32]; 3];
                let mut plus = [0u64; 3];
                for (k, v) in src.iter_mut().enumerate() {
                    let o = self.op(s0 + k)?;
                    self.raw_into(o, lm, v)?;
                    if o.neg || o.not {
                        v.iter_mut().for_each(|x| *x = !*x);
                    }
                    plus[k] = u64::from(o.neg);
                }
                let mut cins = [0u32; 2];
                for (k, c) in cins.iter_mut().enumerate().take(pins) {
                    *c = self.pred_lanes(n - pins + k, lm)?;
                }
                let (mut c1, mut c2) = (0u32, 0u32);
                self.put_dest0(lm, |dst| {
                    for l in 0..32 {
                        let cin = u64::from(cins[0] >> l & 1) + u64::from(cins[1] >> l & 1);
                        let t1 = src[0][l] as u64 + plus[0] + src[1][l] as u64 + plus[1] + cin;
                        let t2 = (t1 & 0xffff_ffff) + src[2][l] as u64 + plus[2];
                        dst[l] = t2 as u32;
                        c1 |= u32::from(t1 >> 32 != 0) << l;
                        c2 |= u32::from(t2 >> 32 != 0) << l;
                    }
                })?;
                if pouts >= 1 {
                    self.wp_lanes(1, lm, c1)?;
                }
                if pouts >= 2 {
                    self.wp_lanes(2, lm, c2)?;
                }
            }
            Op::Viadd => {
                let a = self.si_lanes(1, lm)?;
                let b = self.si_lanes(2, lm)?;
                let v: Lanes = std::array::from_fn(|l| a[l].wrapping_add(b[l]));
                self.wr_lanes(0, lm, &v)?;
            }
            Op::Imad { kind, signed, x } => {
                let pin = if x { self.trailing_preds(1) } else { 0 };
                if self.n() < 4 + pin {
                    return Err(self.unsup("operands"));
                }
                let (mut a, mut b) = ([0u32; 32], [0u32; 32]);
                self.si_into(1, lm, &mut a)?;
                self.si_into(2, lm, &mut b)?;
                let cins = if pin == 1 { self.pred_lanes(4, lm)? } else { 0 };
                let cin = |l: usize| cins >> l & 1;
                match kind {
                    ImadKind::Lo => {
                        let mut c = [0u32; 32];
                        self.si_into(3, lm, &mut c)?;
                        self.put_dest0(lm, |v| {
                            for (l, r) in v.iter_mut().enumerate() {
                                *r = a[l].wrapping_mul(b[l]).wrapping_add(c[l]).wrapping_add(cin(l));
                            }
                        })?;
                    }
                    // The addend is 64 bits wide (a register pair), as for IMAD.WIDE:
                    // ptxas's integer division puts the reciprocal estimate x0 in the high
                    // register and zero in the low one (`MOV R2, RZ; IMAD.HI.U32 R3, R3, R7,
                    // R2` is x0 + hi(x0 * e)).
                    ImadKind::Hi | ImadKind::Wide => {
                        let mut c = [0u64; 32];
                        self.s64_into(3, lm, &mut c)?;
                        if cins != 0 {
                            // The carry-in joins the addend (the sum is the same mod 2^64).
                            for (l, c) in c.iter_mut().enumerate() {
                                *c = c.wrapping_add(cin(l) as u64);
                            }
                        }
                        // The 64-bit results as their low and high words, in one pass.
                        if kind == ImadKind::Hi {
                            let mut lo = [0u32; 32];
                            self.put_dest0(lm, |hi| mad_wide(&a, &b, &c, signed, &mut lo, hi))?;
                        } else {
                            self.put_dest0_pair(lm, |lo, hi| mad_wide(&a, &b, &c, signed, lo, hi))?;
                        }
                    }
                }
            }
            Op::Lea { hi, x, sx32 } => {
                let pin = if x { self.trailing_preds(1) } else { 0 };
                let n = self.n();
                let pout = usize::from(self.op(1)?.is_pred() && n > 1);
                let s0 = 1 + pout;
                let nsrc = n - s0 - pin;
                // lo: a, b, s ; hi: a, b, c, s ; hi.sx32: a, b, s
                let want = if hi && !sx32 { 4 } else { 3 };
                if nsrc != want {
                    return Err(self.unsup("operands"));
                }
                // Whole warp, the sources read in the order the lane loop read them.
                let (mut a, mut b, mut s, mut c) = ([0u32; 32], [0u32; 32], [0u32; 32], [0u32; 32]);
                self.si_into(s0, lm, &mut a)?;
                self.si_into(s0 + 1, lm, &mut b)?;
                self.si_into(s0 + nsrc - 1, lm, &mut s)?;
                let cins = if pin == 1 { self.pred_lanes(n - 1, lm)? } else { 0 };
                if hi && !sx32 {
                    self.si_into(s0 + 2, lm, &mut c)?;
                }
                let mut sum = [0u64; 32];
                for l in 0..32 {
                    let (a, s) = (a[l], s[l] & 63);
                    let shifted: u32 = if hi {
                        let c = if !sx32 {
                            c[l]
                        } else if (a as i32) < 0 {
                            u32::MAX
                        } else {
                            0
                        };
                        let v = ((c as u64) << 32) | a as u64;
                        ((v as u128) << s >> 32) as u32
                    } else {
                        ((a as u64) << s) as u32
                    };
                    sum[l] = shifted as u64 + b[l] as u64 + u64::from(cins >> l & 1);
                }
                self.wr_lanes(0, lm, &sum.map(|x| x as u32))?;
                if pout == 1 {
                    let carry = (0..32).fold(0u32, |m, l| m | u32::from(sum[l] >> 32 != 0) << l);
                    self.wp_lanes(1, lm, carry)?;
                }
            }
            Op::Lop3 => {
                let pout = usize::from(self.op(0)?.is_pred());
                let n = self.n();
                if n != 6 + pout {
                    return Err(self.unsup("operands"));
                }
                let pin = self.op(n - 1)?;
                if !(matches!(pin.k, K::P(7) | K::UP(7)) && pin.not) {
                    return Err(self.unsup("LOP3 predicate input other than !PT"));
                }
                let lut = self.imm_u8(pout + 4)?;
                let a = self.si_lanes(pout + 1, lm)?;
                let b = self.si_lanes(pout + 2, lm)?;
                let c = self.si_lanes(pout + 3, lm)?;
                let r: Lanes = std::array::from_fn(|l| alu::lop3(a[l], b[l], c[l], lut));
                self.wr_lanes(pout, lm, &r)?;
                if pout == 1 {
                    let nz = (0..32).fold(0u32, |m, l| m | u32::from(r[l] != 0) << l);
                    self.wp_lanes(0, lm, nz)?;
                }
            }
            Op::Lop { op } => {
                for l in lanes(lm) {
                    let a = self.si(1, l)?;
                    let b = self.si(2, l)?;
                    let r = match op {
                        BoolOp::And => a & b,
                        BoolOp::Or => a | b,
                        BoolOp::Xor => a ^ b,
                    };
                    self.wr(0, l, r)?;
                }
            }
            Op::Plop3 => {
                if self.n() != 7 {
                    return Err(self.unsup("operands"));
                }
                let l1 = self.imm_u8(5)?;
                let l2 = self.imm_u8(6)?;
                for l in lanes(lm) {
                    let a = self.pred_op(2, l)?;
                    let b = self.pred_op(3, l)?;
                    let c = self.pred_op(4, l)?;
                    self.wp(0, l, alu::plop3(a, b, c, l1))?;
                    self.wp(1, l, alu::plop3(a, b, c, l2))?;
                }
            }
            Op::Shf { left, ty, hi, wrap } => {
                let lo = self.si_lanes(1, lm)?;
                let s = self.si_lanes(2, lm)?;
                let h = self.si_lanes(3, lm)?;
                let v: Lanes = std::array::from_fn(|l| alu::shf(lo[l], s[l], h[l], left, ty, hi, wrap));
                self.wr_lanes(0, lm, &v)?;
            }
            Op::Shl => {
                for l in lanes(lm) {
                    let a = self.si(1, l)?;
                    let s = self.si(2, l)?;
                    self.wr(0, l, if s >= 32 { 0 } else { a << s })?;
                }
            }
            Op::Shr { signed } => {
                for l in lanes(lm) {
                    let a = self.si(1, l)?;
                    let s = self.si(2, l)?.min(32);
                    let r = if signed {
                        ((a as i32 as i64) >> s) as u32
                    } else {
                        ((a as u64) >> s) as u32
                    };
                    self.wr(0, l, r)?;
                }
            }
            Op::Isetp {
                cmp,
                signed,
                bop: bo,
                ex,
            } => {
                let n = self.n();
                if n != 5 + usize::from(ex) {
                    return Err(self.unsup("operands"));
                }
                let (mut a, mut b) = ([0u32; 32], [0u32; 32]);
                self.si_into(2, lm, &mut a)?;
                self.si_into(3, lm, &mut b)?;
                let c = self.pred_lanes(4, lm)?;
                let los = if ex { self.pred_lanes(5, lm)? } else { 0 };
                // Whole warp: the lanes' less-than and equal bits (a signed order is the
                // unsigned order with the sign bits flipped), then the comparison.
                let flip = if signed { 0x8000_0000 } else { 0 };
                let (mut lt, mut eq) = (0u32, 0u32);
                for l in 0..32 {
                    let (x, y) = (a[l] ^ flip, b[l] ^ flip);
                    lt |= u32::from(x < y) << l;
                    eq |= u32::from(x == y) << l;
                }
                let gt = !(lt | eq);
                let r = if ex {
                    let eq_lo = eq & los;
                    match cmp {
                        Cmp::Eq => eq_lo,
                        Cmp::Ne => !eq | los,
                        Cmp::Lt | Cmp::Le => lt | eq_lo,
                        Cmp::Gt | Cmp::Ge => gt | eq_lo,
                        Cmp::T => u32::MAX,
                        _ => 0,
                    }
                } else {
                    match cmp {
                        Cmp::T => u32::MAX,
                        Cmp::Lt => lt,
                        Cmp::Eq => eq,
                        Cmp::Le => lt | eq,
                        Cmp::Gt => gt,
                        Cmp::Ne => !eq,
                        Cmp::Ge => !lt,
                        _ => 0,
                    }
                };
                let rs = r & lm;
                let bops = |r: u32| match bo {
                    BoolOp::And => r & c,
                    BoolOp::Or => r | c,
                    BoolOp::Xor => r ^ c,
                };
                self.wp_lanes(0, lm, bops(rs))?;
                self.wp_lanes(1, lm, bops(!rs))?;
            }
            Op::Iabs => {
                for l in lanes(lm) {
                    let a = self.si(1, l)?;
                    self.wr(0, l, (a as i32).unsigned_abs())?;
                }
            }
            Op::Imnmx { signed } => {
                for l in lanes(lm) {
                    let a = self.si(1, l)?;
                    let b = self.si(2, l)?;
                    let min = self.pred_op(3, l)?;
                    let lt = alu::icmp(a, b, Cmp::Lt, signed);
                    let r = if min == lt { a } else { b };
                    self.wr(0, l, r)?;
                }
            }
            Op::Fchk => {
                for l in lanes(lm) {
                    let a = self.f32v(self.op(1)?, l)?;
                    let b = self.f32v(self.op(2)?, l)?;
                    self.wp(0, l, alu::fchk_divide(a, b))?;
                }
            }
            Op::F2fp { bf16 } => {
                for l in lanes(lm) {
                    let hi = self.f32v(self.op(1)?, l)?;
                    let lo = self.f32v(self.op(2)?, l)?;
                    let cvt = |x: f32| if bf16 { alu::f32_to_bf16(x) } else { alu::f32_to_f16(x) } as u32;
                    self.wr(0, l, cvt(hi) << 16 | cvt(lo))?;
                }
            }
            Op::Lepc => {
                let pc = self.d.pc;
                for l in lanes(lm) {
                    self.wr64(0, l, pc)?;
                }
            }
            Op::Viaddmnmx { signed } => {
                for l in lanes(lm) {
                    let a = self.si(1, l)?.wrapping_add(self.si(2, l)?);
                    let c = self.si(3, l)?;
                    let min = self.pred_op(4, l)?;
                    let lt = alu::icmp(a, c, Cmp::Lt, signed);
                    let r = if min == lt { a } else { c };
                    self.wr(0, l, r)?;
                }
            }
            Op::Popc => {
                for l in lanes(lm) {
                    let a = self.si(1, l)?;
                    self.wr(0, l, a.count_ones())?;
                }
            }
            Op::Flo { signed, sh } => {
                for l in lanes(lm) {
                    let a = self.si(1, l)?;
                    self.wr(0, l, alu::flo(a, signed, sh))?;
                }
            }
            Op::Idp(d) => {
                for l in lanes(lm) {
                    let (a, b, c) = (self.si(1, l)?, self.si(2, l)?, self.si(3, l)?);
                    self.wr(0, l, d.dot(a, b, c))?;
                }
            }
            Op::Brev => {
                for l in lanes(lm) {
                    let a = self.si(1, l)?;
                    self.wr(0, l, a.reverse_bits())?;
                }
            }
            Op::Sel | Op::Fsel => {
                for l in lanes(lm) {
                    let p = self.pred_op(3, l)?;
                    let v = if matches!(op, Op::Fsel) {
                        let i = if p { 1 } else { 2 };
                        self.sf(i, l)?.to_bits()
                    } else {
                        self.si(if p { 1 } else { 2 }, l)?
                    };
                    self.wr(0, l, v)?;
                }
            }
            Op::Prmt { mode } => {
                for l in lanes(lm) {
                    let a = self.si(1, l)?;
                    let s = self.si(2, l)?;
                    let b = self.si(3, l)?;
                    self.wr(0, l, alu::prmt(a, s, b, mode))?;
                }
            }
            Op::Mov => {
                if self.n() == 3 {
                    match self.op(2)?.k {
                        K::Imm(0xf) => {}
                        _ => return Err(self.unsup("MOV with a lane mask other than 0xf")),
                    }
                }
                if lm != 0 {
                    let o = self.op(1)?;
                    let mut v = [0u32; 32];
                    match o.k {
                        K::ImmF(f) if f.fract() != 0.0 || f.abs() > u32::MAX as f64 => {
                            v = [(f as f32).to_bits(); 32];
                        }
                        _ => self.int_into(o, lm, &mut v)?,
                    }
                    self.wr_lanes(0, lm, &v)?;
                }
            }
            Op::S2R => {
                let mut v = [0u32; 32];
                self.si_into(1, lm, &mut v)?;
                self.wr_lanes(0, lm, &v)?;
            }
            Op::Cs2r { bits64 } => {
                let s = match self.op(1)?.k {
                    K::SR(s) => s,
                    _ => return Err(self.unsup("operand")),
                };
                if lm != 0 {
                    let mut v = [0u64; 32];
                    match s {
                        SReg::ClockLo | SReg::GlobalTimerLo => {
                            self.clock_read();
                            v = [self.clock; 32];
                        }
                        SReg::Zero => {}
                        _ => {
                            for l in lanes(lm) {
                                v[l] = self.sreg(s, l) as u64;
                            }
                        }
                    }
                    if bits64 {
                        self.wr64_lanes(0, lm, &v)?;
                    } else {
                        self.wr_lanes(0, lm, &v.map(|x| x as u32))?;
                    }
                }
            }
            Op::R2ur => {
                if self.g != 0 {
                    let l = self.g.trailing_zeros() as usize;
                    let v = self.si(1, l)?;
                    self.wr(0, l, v)?;
                }
            }
            Op::Ldc { size } => {
                let (bank, addr) = match &self.op(1)?.k {
                    K::Const { bank, addr } => (*bank, *addr),
                    _ => return Err(self.unsup("source is not a constant")),
                };
                for l in lanes(lm) {
                    let off = self.const_off(&addr, l);
                    let w0 = self.cword(bank, off & !3);
                    match size.bytes {
                        8 => {
                            let v = self.cword(bank, off) as u64 | (self.cword(bank, off + 4) as u64) << 32;
                            self.wr64(0, l, v)?;
                        }
                        4 => {
                            let v = self.cword(bank, off);
                            self.wr(0, l, v)?;
                        }
                        b => {
                            let sh = (off & 3) as u32 * 8;
                            let raw = (w0 >> sh) as u64 & ((1u64 << (8 * b)) - 1);
                            let v = if size.signed { alu::sext(raw, 8 * b) } else { raw };
                            self.wr(0, l, v as u32)?;
                        }
                    }
                }
            }
            Op::P2r { byte } => {
                if !matches!(self.op(1)?.k, K::PredBits) {
                    return Err(self.unsup("operand"));
                }
                for l in lanes(lm) {
                    let src = self.si(2, l)?;
                    let mask = self.si(3, l)? & 0x7f;
                    let w = self.w();
                    let mut preds = 0u32;
                    for i in 0..7 {
                        preds |= (w.p[i] >> l & 1) << i;
                    }
                    let sh = 8 * byte as u32;
                    let v = (src & !(mask << sh)) | ((preds & mask) << sh);
                    self.wr(0, l, v)?;
                }
            }
            Op::R2p { byte } => {
                if !matches!(self.op(0)?.k, K::PredBits) {
                    return Err(self.unsup("operand"));
                }
                for l in lanes(lm) {
                    let src = self.si(1, l)? >> (8 * byte as u32);
                    let mask = self.si(2, l)? & 0x7f;
                    for i in 0..7u8 {
                        if mask >> i & 1 == 1 {
                            self.out.writes.p(i, l, src >> i & 1 == 1);
                        }
                    }
                }
            }
            // ---------------- float ----------------
            Op::F {
                op: fop,
                ftz,
                sat,
                rnd,
            } => {
                let fz = |x: f32| if ftz { alu::ftz32(x) } else { x };
                let plain = rnd == Round::Rn && !ftz && !sat;
                if plain && fop == FOp::Fma {
                    // The common FFMA of three registers: straight from their rows into the
                    // destination's entry (a whole warp), or into a row that is then written.
                    if self.rows3_to_dest(lm, fma_rn_lanes) {
                        return Ok(());
                    }
                    if let (Some(a), Some(b), Some(c)) = (
                        self.plain_row(1, lm),
                        self.plain_row(2, lm),
                        self.plain_row(3, lm),
                    ) {
                        let mut v = [0u32; 32];
                        fma_rn_lanes(a, b, c, &mut v);
                        return self.wr_lanes(0, lm, &v);
                    }
                }
                let (mut av, mut bv, mut cv) = ([0u32; 32], [0u32; 32], [0u32; 32]);
                self.sf_into(1, lm, &mut av)?;
                self.sf_into(2, lm, &mut bv)?;
                let fma = matches!(fop, FOp::Fma);
                if fma {
                    self.sf_into(3, lm, &mut cv)?;
                }
                if fma && plain {
                    // The common FFMA: one rounding, nothing else (in hardware when it can).
                    return self.put_dest0(lm, |v| fma_rn_lanes(&av, &bv, &cv, v));
                } else if plain {
                    // FADD / FMUL to nearest: the exact double sum or product rounded once,
                    // what the lane loop below computes, for the whole warp.
                    let f = |x: u32| f32::from_bits(x) as f64;
                    return self.put_dest0(lm, |v| {
                        for (r, (&a, &b)) in v.iter_mut().zip(av.iter().zip(&bv)) {
                            let x = if fop == FOp::Add { f(a) + f(b) } else { f(a) * f(b) };
                            *r = (x as f32).to_bits();
                        }
                    });
                }
                let mut v = [0u32; 32];
                {
                    for l in lanes(lm) {
                        let a = fz(f32::from_bits(av[l]));
                        let b = fz(f32::from_bits(bv[l]));
                        let r = match fop {
                            FOp::Add => {
                                let (s, e) = alu::two_sum(a as f64, b as f64);
                                alu::round_f32(s, e, rnd)
                            }
                            FOp::Mul => alu::round_f32(a as f64 * b as f64, 0.0, rnd),
                            FOp::Fma => {
                                let c = fz(f32::from_bits(cv[l]));
                                if rnd == Round::Rn {
                                    a.mul_add(b, c)
                                } else {
                                    alu::fma32_rounded(a, b, c, rnd)
                                }
                            }
                        };
                        let r = fz(r);
                        let r = if sat { sat01(r) } else { r };
                        v[l] = r.to_bits();
                    }
                }
                self.wr_lanes(0, lm, &v)?;
            }
            Op::Fsetp { cmp, bop: bo, ftz } => {
                for l in lanes(lm) {
                    let mut a = self.sf(2, l)?;
                    let mut b = self.sf(3, l)?;
                    if ftz {
                        a = alu::ftz32(a);
                        b = alu::ftz32(b);
                    }
                    let c = self.pred_op(4, l)?;
                    let r = alu::fcmp(a as f64, b as f64, cmp);
                    self.wp(0, l, bop(bo, r, c))?;
                    self.wp(1, l, bop(bo, !r, c))?;
                }
            }
            Op::Fmnmx { ftz } => {
                for l in lanes(lm) {
                    let mut a = self.sf(1, l)?;
                    let mut b = self.sf(2, l)?;
                    if ftz {
                        a = alu::ftz32(a);
                        b = alu::ftz32(b);
                    }
                    let min = self.pred_op(3, l)?;
                    let r = if a.is_nan() {
                        b
                    } else if b.is_nan() {
                        a
                    } else if min {
                        // -0 < +0 for min/max.
                        if a < b || (a == b && a.is_sign_negative()) {
                            a
                        } else {
                            b
                        }
                    } else if a > b || (a == b && a.is_sign_positive()) {
                        a
                    } else {
                        b
                    };
                    self.wr(0, l, r.to_bits())?;
                }
            }
            Op::Mufu { f } => {
                for l in lanes(lm) {
                    let r = match f {
                        Mufu::Rcp64h | Mufu::Rsq64h => {
                            let hi = self.si(1, l)?;
                            let x = f64::from_bits((hi as u64) << 32);
                            let y = if f == Mufu::Rcp64h {
                                1.0 / x
                            } else {
                                1.0 / x.sqrt()
                            };
                            (y.to_bits() >> 32) as u32
                        }
                        _ => {
                            let x = alu::ftz32(self.sf(1, l)?) as f64;
                            let y = match f {
                                Mufu::Rcp => 1.0 / x,
                                Mufu::Rsq => 1.0 / x.sqrt(),
                                Mufu::Sqrt => x.sqrt(),
                                Mufu::Ex2 => x.exp2(),
                                Mufu::Lg2 => x.log2(),
                                // MUFU.SIN/COS take the angle in revolutions (the compiler
                                // multiplies by 1/(2*pi) first).
                                Mufu::Sin => (x * std::f64::consts::TAU).sin(),
                                Mufu::Cos => (x * std::f64::consts::TAU).cos(),
                                Mufu::Tanh => x.tanh(),
                                Mufu::Rcp64h | Mufu::Rsq64h => unreachable!(),
                            };
                            alu::ftz32(y as f32).to_bits()
                        }
                    };
                    self.wr(0, l, r)?;
                }
            }
            Op::I2f { dst, src, rnd } => {
                for l in lanes(lm) {
                    let v: f64 = match src.bits() {
                        64 => {
                            let r = self.s64(1, l)?;
                            if rnd != Round::Rn {
                                return Err(self.unsup("64-bit I2F rounding other than RN"));
                            }
                            if dst == Ty::F32 {
                                let f = if src.signed() { r as i64 as f32 } else { r as f32 };
                                self.wr(0, l, f.to_bits())?;
                                continue;
                            }
                            if src.signed() {
                                r as i64 as f64
                            } else {
                                r as f64
                            }
                        }
                        bits => {
                            let r = self.si(1, l)? as u64 & ((1u64 << bits) - 1);
                            if src.signed() {
                                alu::sext(r, bits) as i64 as f64
                            } else {
                                r as f64
                            }
                        }
                    };
                    match dst {
                        Ty::F64 => self.wr64(0, l, v.to_bits())?,
                        _ => self.wr(0, l, alu::round_f32(v, 0.0, rnd).to_bits())?,
                    }
                }
            }
            Op::F2i { dst, src, rnd, ftz } => {
                for l in lanes(lm) {
                    let x = if src == Ty::F64 {
                        self.sd(1, l)?
                    } else {
                        let f = self.sf(1, l)?;
                        (if ftz { alu::ftz32(f) } else { f }) as f64
                    };
                    let r = alu::round_int(x, rnd);
                    let (lo, hi): (f64, f64) = match dst {
                        Ty::U8 => (0.0, 255.0),
                        Ty::S8 => (-128.0, 127.0),
                        Ty::U16 => (0.0, 65535.0),
                        Ty::S16 => (-32768.0, 32767.0),
                        Ty::U32 => (0.0, u32::MAX as f64),
                        Ty::S32 => (i32::MIN as f64, i32::MAX as f64),
                        Ty::U64 => (0.0, u64::MAX as f64),
                        _ => (i64::MIN as f64, i64::MAX as f64),
                    };
                    let c = if r.is_nan() { 0.0 } else { r.clamp(lo, hi) };
                    let bits: u64 = if dst.signed() {
                        if dst == Ty::S64 {
                            c as i64 as u64
                        } else {
                            c as i64 as u64 & 0xffff_ffff
                        }
                    } else {
                        c as u64
                    };
                    if dst.bits() == 64 {
                        self.wr64(0, l, bits)?;
                    } else {
                        self.wr(0, l, bits as u32)?;
                    }
                }
            }
            Op::F2f {
                dst,
                src,
                rnd,
                int_round,
                ftz,
            } => {
                for l in lanes(lm) {
                    let x: f64 = match src {
                        Ty::F64 => self.sd(1, l)?,
                        Ty::F16 => {
                            let b = self.si(1, l)?;
                            alu::f16_to_f32(b as u16) as f64
                        }
                        _ => {
                            let f = self.sf(1, l)?;
                            (if ftz { alu::ftz32(f) } else { f }) as f64
                        }
                    };
                    let x = if int_round { alu::round_int(x, rnd) } else { x };
                    match dst {
                        Ty::F64 => self.wr64(0, l, x.to_bits())?,
                        Ty::F16 => {
                            if rnd != Round::Rn && !int_round {
                                return Err(self.unsup("F2F.F16 rounding other than RN"));
                            }
                            self.wr(0, l, alu::f32_to_f16(x as f32) as u32)?
                        }
                        _ => {
                            let r = if int_round {
                                x as f32
                            } else {
                                alu::round_f32(x, 0.0, rnd)
                            };
                            let r = if ftz { alu::ftz32(r) } else { r };
                            self.wr(0, l, r.to_bits())?
                        }
                    }
                }
            }
            Op::H {
                op: hop,
                ftz,
                f32_out,
            } => self.half(hop, ftz, f32_out, lm)?,
            Op::Dop { op: dop, rnd } => {
                for l in lanes(lm) {
                    let a = self.sd(1, l)?;
                    let b = self.sd(2, l)?;
                    let r = match (dop, rnd) {
                        (DOp::Add, Round::Rn) => a + b,
                        (DOp::Mul, Round::Rn) => a * b,
                        (DOp::Fma, Round::Rn) => a.mul_add(b, self.sd(3, l)?),
                        (DOp::Add, _) => alu::f64_rounded(a, b, 0.0, alu::RoundedOp::Add, rnd),
                        (DOp::Mul, _) => alu::f64_rounded(a, b, 0.0, alu::RoundedOp::Mul, rnd),
                        (DOp::Fma, _) => {
                            let c = self.sd(3, l)?;
                            alu::f64_rounded(a, b, c, alu::RoundedOp::Fma, rnd)
                        }
                    };
                    self.wr64(0, l, r.to_bits())?;
                }
            }
            Op::Dsetp { cmp, bop: bo } => {
                for l in lanes(lm) {
                    let a = self.sd(2, l)?;
                    let b = self.sd(3, l)?;
                    let c = self.pred_op(4, l)?;
                    let r = alu::fcmp(a, b, cmp);
                    self.wp(0, l, bop(bo, r, c))?;
                    self.wp(1, l, bop(bo, !r, c))?;
                }
            }
            // ---------------- memory ----------------
            Op::Ld { .. } | Op::St { .. } | Op::Atom { .. } | Op::Ldgsts { .. } => self.mem_op(op)?,
            // ---------------- warp ----------------
            Op::Shfl { mode } => self.shfl(mode)?,
            Op::Vote { mode } => self.vote(mode)?,
            Op::Match { all, wide } => self.match_(all, wide)?,
            Op::Redux { op, signed } => {
                if self.n() != 2 {
                    return Err(self.unsup("operands"));
                }
                let mut acc: Option<u32> = None;
                for l in lanes(self.g) {
                    let v = self.si(1, l)?;
                    acc = Some(match acc {
                        None => v,
                        Some(a) => match op {
                            ReduxOp::Sum => a.wrapping_add(v),
                            ReduxOp::And => a & v,
                            ReduxOp::Or => a | v,
                            ReduxOp::Xor => a ^ v,
                            ReduxOp::Min | ReduxOp::Max => {
                                let lt = alu::icmp(v, a, Cmp::Lt, signed);
                                if lt == (op == ReduxOp::Min) {
                                    v
                                } else {
                                    a
                                }
                            }
                        },
                    });
                }
                if let Some(v) = acc {
                    let l = self.g.trailing_zeros() as usize;
                    self.wr(0, l, v)?;
                }
            }
            Op::Bar { .. } => {
                if self.g != 0 {
                    let id = match self.op(0)?.k {
                        K::Imm(v) => v as u32,
                        _ => {
                            let o = self.op(0)?;
                            self.raw(o, self.g.trailing_zeros() as usize)?
                        }
                    };
                    self.out.barrier = Some(id);
                }
            }
            Op::Nop => {}
            Op::Tensor(t) => self.tensor_op(t)?,
            Op::Hopper(h) => self.hopper_op(h)?,
            Op::Unsupported(ref what) => {
                return Err(ExecError::unsupported(what.clone(), self.d.pc));
            }
            _ => return Err(self.unsup("not a data instruction")),
        }
        Ok(())
    }
}
