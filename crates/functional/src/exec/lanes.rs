//! Whole-warp operand reads and register writes: the common ALU instructions read a source
//! for all 32 lanes at once (a register is one 128-byte row, a uniform operand one value)
//! and write their destination with one lookup of its pending-write entry, instead of
//! dispatching on the operand kind lane by lane. Every helper gives exactly what the
//! per-lane accessors give for the lanes of its mask (the values of other lanes are left
//! unspecified and never used), and reports the same errors when the mask has a lane.

use super::*;

/// One value per lane.
pub(super) type Lanes = [u32; 32];

impl Ex<'_> {
    /// Register `idx` ([`Ex::reg`]) for the lanes of `lm`, into `v` (other lanes: 0 when
    /// the register is RZ or past the warp's rows, else the row's values).
    #[inline]
    pub(super) fn reg_into(&self, idx: u8, lm: u32, v: &mut Lanes) {
        if idx == 255 {
            *v = [0; 32];
            return;
        }
        let b = idx as usize * 32;
        match self.w().regs.get(b..b + 32) {
            Some(row) => v.copy_from_slice(row),
            None => {
                *v = [0; 32];
                for l in lanes(lm) {
                    v[l] = self.reg(idx, l);
                }
            }
        }
    }

    /// Register `idx` ([`Ex::reg`]) for the lanes of `lm`.
    #[inline]
    fn reg_lanes(&self, idx: u8, lm: u32) -> Lanes {
        let mut v = [0u32; 32];
        self.reg_into(idx, lm, &mut v);
        v
    }

    /// [`Ex::raw`] of operand `o` for the lanes of `lm`, into `v` (written in place: no
    /// 128-byte value is returned through a `Result`).
    #[inline]
    pub(super) fn raw_into(&mut self, o: &D, lm: u32, v: &mut Lanes) -> Res<()> {
        match &o.k {
            K::R(i) => self.reg_into(*i, lm, v),
            K::UR(i) => *v = [self.ureg(*i); 32],
            K::Imm(x) => *v = [*x as u32; 32],
            K::ImmF(f) => *v = [*f as i64 as u32; 32],
            K::Const { bank, addr } if addr.terms[..addr.n as usize].iter().all(|t| t.uniform) => {
                *v = [0; 32];
                if lm != 0 {
                    // No per-lane term: the same word for every lane.
                    let off = self.const_off(addr, lm.trailing_zeros() as usize);
                    *v = [self.cword(*bank, off); 32];
                }
            }
            // The thread index: a column of the warp's table, no dispatch per lane.
            K::SR(SReg::Tid(k)) if lm != 0 && (*k as usize) < 3 => {
                let (w, k) = (self.w(), *k as usize);
                for (x, t) in v.iter_mut().zip(w.tid.iter()) {
                    *x = t[k];
                }
            }
            K::SR(s) if lm != 0 => {
                // A value of the warp or CTA (S2R SR_CTAID.X): read once for every lane.
                if s.same_for_every_lane() {
                    *v = [self.sreg(*s, lm.trailing_zeros() as usize); 32];
                } else {
                    *v = [0; 32];
                    for l in lanes(lm) {
                        v[l] = self.sreg(*s, l);
                    }
                }
            }
            _ => {
                *v = [0; 32];
                for l in lanes(lm) {
                    v[l] = self.raw(o, l)?;
                }
            }
        }
        Ok(())
    }

    /// [`Ex::int`] (`~`, `-` and `|.|` applied) of operand `o` for the lanes of `lm`, into `v`.
    #[inline]
    pub(super) fn int_into(&mut self, o: &D, lm: u32, v: &mut Lanes) -> Res<()> {
        self.raw_into(o, lm, v)?;
        if o.not || o.neg || o.abs {
            for x in v.iter_mut() {
                if o.not {
                    *x = !*x;
                }
                if o.neg {
                    *x = x.wrapping_neg();
                }
                if o.abs {
                    *x = (*x as i32).unsigned_abs();
                }
            }
        }
        Ok(())
    }

    /// Integer source operand `i` for the lanes of `lm` ([`Ex::si`]), into `v` (all 0 when
    /// `lm` is empty).
    #[inline]
    pub(super) fn si_into(&mut self, i: usize, lm: u32, v: &mut Lanes) -> Res<()> {
        if lm == 0 {
            *v = [0; 32];
            return Ok(());
        }
        let o = self.op(i)?;
        match o.k {
            // A register as it is (the usual source): its row, without the dispatch.
            K::R(r) if !(o.not || o.neg || o.abs) => {
                self.reg_into(r, lm, v);
                Ok(())
            }
            _ => self.int_into(o, lm, v),
        }
    }

    /// The warp's row of source `i` when it is a register read as it is (no `|.|`, `-` or
    /// `~`) that the warp holds: what [`Ex::si_into`] and [`Ex::sf_into`] give, without a
    /// copy. None for any other operand (RZ, a register past the rows, a missing operand:
    /// the copying readers handle them) and when `lm` is empty.
    #[inline(always)]
    pub(super) fn plain_row(&self, i: usize, lm: u32) -> Option<&Lanes> {
        // `plain[0]` is the destination's (modifiers not looked at): sources only.
        if i == 0 || lm == 0 {
            return None;
        }
        row_of(self.w(), *self.d.plain.get(i)?)
    }

    /// `f(a, b, c, out)` of the rows of sources 1 to 3 ([`Ex::plain_row`]) with `out` the
    /// pending row of destination register 0, when every lane executes and the instruction
    /// has not written that register yet: what computing a row and [`Ex::wr_lanes`] of it
    /// give, without the row and its copy (`f` sets every lane of `out`). False, and nothing
    /// done, in any other case.
    #[inline(always)]
    pub(super) fn rows3_to_dest(
        &mut self,
        lm: u32,
        f: impl FnOnce(&Lanes, &Lanes, &Lanes, &mut Lanes),
    ) -> bool {
        // The operands' registers as decoded ([`DInst::plain`]): a destination that is not
        // a register is 255, which `fresh_row` refuses as it refuses RZ.
        let [dst, a, b, c] = self.d.plain;
        if lm != u32::MAX {
            return false;
        }
        let w = &self.k.warps[self.wi];
        let (Some(a), Some(b), Some(c)) = (row_of(w, a), row_of(w, b), row_of(w, c)) else {
            return false;
        };
        match self.out.writes.fresh_row(dst) {
            Some(out) => {
                f(a, b, c, out);
                true
            }
            None => false,
        }
    }

    /// `f(out)` with `out` the pending row of destination register 0 when every lane
    /// executes and the instruction has not written that register yet, else a row that is
    /// then written with [`Ex::wr_lanes`]: the same result, without the row's copy in the
    /// common case. `f` must set every lane of `out`.
    #[inline(always)]
    pub(super) fn put_dest0(&mut self, lm: u32, f: impl FnOnce(&mut Lanes)) -> Res<()> {
        if lm == u32::MAX {
            // Destination 0's register as decoded (255, refused, when it is not one).
            let r = self.d.plain[0];
            if let Some(out) = self.out.writes.fresh_row(r) {
                f(out);
                return Ok(());
            }
        }
        let mut v = [0u32; 32];
        f(&mut v);
        self.wr_lanes(0, lm, &v)
    }

    /// `f(lo, hi)` with `lo` and `hi` the pending rows of the register pair of destination 0
    /// when every lane executes and the instruction has written neither register yet, else
    /// two rows then written with [`Ex::wr_pair_lanes`] (the same result). `f` must set every
    /// lane of both.
    #[inline(always)]
    pub(super) fn put_dest0_pair(&mut self, lm: u32, f: impl FnOnce(&mut Lanes, &mut Lanes)) -> Res<()> {
        if lm == u32::MAX {
            // Destination 0's register as decoded (255, refused, when it is not one).
            let r = self.d.plain[0];
            if let Some((lo, hi)) = self.out.writes.fresh_pair(r) {
                f(lo, hi);
                return Ok(());
            }
        }
        let (mut lo, mut hi) = ([0u32; 32], [0u32; 32]);
        f(&mut lo, &mut hi);
        self.wr_pair_lanes(0, lm, &lo, &hi)
    }

    /// Integer source operand `i` for the lanes of `lm` ([`Ex::si`]).
    #[inline]
    pub(super) fn si_lanes(&mut self, i: usize, lm: u32) -> Res<Lanes> {
        let mut v = [0u32; 32];
        self.si_into(i, lm, &mut v)?;
        Ok(v)
    }

    /// Single-precision source operand `i` as bits, `|.|` and `-` applied ([`Ex::f32b`]),
    /// into `v` (all 0 when `lm` is empty).
    #[inline]
    pub(super) fn sf_into(&mut self, i: usize, lm: u32, v: &mut Lanes) -> Res<()> {
        if lm == 0 {
            *v = [0; 32];
            return Ok(());
        }
        let o = self.op(i)?;
        match o.k {
            // A register (the usual source): its row, without the dispatch of `raw_into`.
            K::R(r) => self.reg_into(r, lm, v),
            K::ImmF(f) => *v = [(f as f32).to_bits(); 32],
            _ => self.raw_into(o, lm, v)?,
        }
        if o.abs || o.neg {
            let and = if o.abs { 0x7fff_ffff } else { u32::MAX };
            let xor = if o.neg { 0x8000_0000 } else { 0 };
            for b in v.iter_mut() {
                *b = (*b & and) ^ xor;
            }
        }
        Ok(())
    }

    /// 64-bit source operand `i` with `~` and `-` applied ([`Ex::s64`]) for the lanes of `lm`,
    /// into `v` (all 0 when `lm` is empty).
    #[inline]
    pub(super) fn s64_into(&mut self, i: usize, lm: u32, v: &mut [u64; 32]) -> Res<()> {
        if lm == 0 {
            *v = [0; 32];
            return Ok(());
        }
        let o = self.op(i)?;
        // Every arm sets all 32 lanes (zeroed only where some are not written otherwise).
        match &o.k {
            K::R(255) => *v = [0; 32],
            K::R(r) => {
                let b = *r as usize * 32;
                let regs = &self.w().regs;
                // Both rows held (the second is not RZ): one pass over them.
                match regs.get(b..b + 64).filter(|_| *r < 254) {
                    Some(rows) => {
                        let (lo, hi) = rows.split_at(32);
                        for ((x, &lo), &hi) in v.iter_mut().zip(lo).zip(hi) {
                            *x = lo as u64 | (hi as u64) << 32;
                        }
                    }
                    None => {
                        let lo = self.reg_lanes(*r, lm);
                        let hi = self.reg_lanes(r + 1, lm);
                        for l in 0..32 {
                            v[l] = lo[l] as u64 | (hi[l] as u64) << 32;
                        }
                    }
                }
            }
            K::UR(_) | K::Imm(_) => *v = [self.raw64(o, lm.trailing_zeros() as usize)?; 32],
            K::Const { addr, .. } if addr.terms[..addr.n as usize].iter().all(|t| t.uniform) => {
                *v = [self.raw64(o, lm.trailing_zeros() as usize)?; 32];
            }
            _ => {
                *v = [0; 32];
                for l in lanes(lm) {
                    v[l] = self.raw64(o, l)?;
                }
            }
        }
        if o.not || o.neg {
            for x in v.iter_mut() {
                if o.not {
                    *x = !*x;
                }
                if o.neg {
                    *x = x.wrapping_neg();
                }
            }
        }
        Ok(())
    }

    /// Predicate operand `i` ([`Ex::pred_op`]) as a lane mask, within `lm`.
    #[inline]
    pub(super) fn pred_lanes(&self, i: usize, lm: u32) -> Res<u32> {
        if lm == 0 {
            return Ok(0);
        }
        let o = self.op(i)?;
        if !o.is_pred() {
            return Err(self.unsup(&format!("operand {} is not a predicate", i + 1)));
        }
        let w = self.w();
        let bits = match o.k {
            K::P(p) => w.p[(p & 7) as usize],
            K::UP(p) if w.up >> (p & 7) & 1 == 1 || p == 7 => u32::MAX,
            _ => 0,
        };
        Ok(if o.not { !bits } else { bits } & lm)
    }

    // ---------------- destinations ----------------

    /// [`Ex::wr`] of `v[l]` for every lane `l` of `lm`.
    #[inline]
    pub(super) fn wr_lanes(&mut self, i: usize, lm: u32, v: &Lanes) -> Res<()> {
        if lm == 0 {
            return Ok(());
        }
        match self.op(i)?.k {
            K::R(r) => self.out.writes.r_lanes(r, lm, v),
            // Lane by lane, the last lane's value stays.
            K::UR(r) => self.out.writes.ur(r, v[31 - lm.leading_zeros() as usize]),
            _ => return Err(self.unsup("destination is not a register")),
        }
        Ok(())
    }

    /// [`Ex::wr64`] of `v[l]` for every lane `l` of `lm`.
    #[inline]
    pub(super) fn wr64_lanes(&mut self, i: usize, lm: u32, v: &[u64; 32]) -> Res<()> {
        if lm == 0 {
            return Ok(());
        }
        let lo: Lanes = std::array::from_fn(|l| v[l] as u32);
        let hi: Lanes = std::array::from_fn(|l| (v[l] >> 32) as u32);
        self.wr_pair_lanes(i, lm, &lo, &hi)
    }

    /// [`Ex::wr64`] of the 64-bit value with low word `lo[l]` and high word `hi[l]` for every
    /// lane `l` of `lm` (a result computed as its two words, not split again).
    #[inline]
    pub(super) fn wr_pair_lanes(&mut self, i: usize, lm: u32, lo: &Lanes, hi: &Lanes) -> Res<()> {
        if lm == 0 {
            return Ok(());
        }
        match self.op(i)?.k {
            K::R(255) | K::UR(63) => {}
            K::R(r) => {
                self.out.writes.r_lanes(r, lm, lo);
                self.out.writes.r_lanes(r + 1, lm, hi);
            }
            K::UR(r) => {
                let last = 31 - lm.leading_zeros() as usize;
                self.out.writes.ur(r, lo[last]);
                self.out.writes.ur(r + 1, hi[last]);
            }
            _ => return Err(self.unsup("destination is not a register")),
        }
        Ok(())
    }

    /// Destination `i` and the registers after it := `vals[k][l]` (register k) for every
    /// lane `l` of `lm` (RZ and URZ: nothing; a uniform register takes the last lane's).
    pub(super) fn wrn_lanes(&mut self, i: usize, lm: u32, vals: &[Lanes]) -> Res<()> {
        if lm == 0 {
            return Ok(());
        }
        match self.op(i)?.k {
            K::R(255) | K::UR(63) => {}
            K::R(r) => {
                for (k, v) in vals.iter().enumerate() {
                    self.out.writes.r_lanes(r + k as u8, lm, v);
                }
            }
            K::UR(r) => {
                let last = 31 - lm.leading_zeros() as usize;
                for (k, v) in vals.iter().enumerate() {
                    self.out.writes.ur(r + k as u8, v[last]);
                }
            }
            _ => return Err(self.unsup("destination is not a register")),
        }
        Ok(())
    }

    /// [`Ex::wp`] of bit `l` of `bits` for every lane `l` of `lm`.
    #[inline]
    pub(super) fn wp_lanes(&mut self, i: usize, lm: u32, bits: u32) -> Res<()> {
        if lm == 0 {
            return Ok(());
        }
        match self.op(i)?.k {
            K::P(p) => self.out.writes.p_lanes(p, lm, bits),
            K::UP(p) => self.out.writes.up(p, bits >> (31 - lm.leading_zeros()) & 1 == 1),
            _ => return Err(self.unsup("destination is not a predicate")),
        }
        Ok(())
    }
}

impl PendingWrites {
    /// Regular register `idx` (RZ ignored) := `v[l]` for the lanes `l` of `lm`: a new entry
    /// takes `v` where `lm` is set and 0 elsewhere (as a new zeroed entry and then the
    /// lanes' writes would leave it), an existing one is blended; both without a branch per
    /// lane.
    #[inline]
    pub(crate) fn r_lanes(&mut self, idx: u8, lm: u32, v: &Lanes) {
        if idx == 255 {
            return;
        }
        let reg = ArchReg::R(idx);
        match self.written_at(reg) {
            Some(i) => {
                let s = &mut self.w[i];
                s.mask |= lm;
                for (l, (d, x)) in s.vals.iter_mut().zip(v).enumerate() {
                    let m = lane_bits(lm, l);
                    *d = (*x & m) | (*d & !m);
                }
            }
            None => {
                let s = self.push(reg, lm);
                if lm == u32::MAX {
                    s.vals = *v;
                } else {
                    for (l, (d, x)) in s.vals.iter_mut().zip(v).enumerate() {
                        *d = *x & lane_bits(lm, l);
                    }
                }
            }
        }
    }
    /// A new entry of regular register `idx` written in every lane, for the caller to set
    /// all its values (the entry [`PendingWrites::r_lanes`] of a whole warp makes). None for
    /// RZ and when the instruction already wrote the register (the caller then computes the
    /// values apart and blends them with `r_lanes`); nothing is added then.
    #[inline(always)]
    pub(crate) fn fresh_row(&mut self, idx: u8) -> Option<&mut Lanes> {
        // The usual case, the instruction's first write: nothing to look through, and no
        // call (the general case below was a call of ~22 instructions per FFMA).
        if self.len == 0 && idx != 255 {
            return Some(&mut self.push(ArchReg::R(idx), u32::MAX).vals);
        }
        self.fresh_row_after(idx)
    }

    /// [`PendingWrites::fresh_row`] when the instruction already wrote something (or `idx`
    /// is RZ).
    #[inline(never)]
    fn fresh_row_after(&mut self, idx: u8) -> Option<&mut Lanes> {
        let reg = ArchReg::R(idx);
        if idx == 255 || self.written_at(reg).is_some() {
            return None;
        }
        Some(&mut self.push(reg, u32::MAX).vals)
    }

    /// New entries of regular registers `idx` and `idx + 1` written in every lane, for the
    /// caller to set all their values (what two [`PendingWrites::r_lanes`] of a whole warp
    /// make). None, and nothing added, when either is RZ, when the instruction already wrote
    /// either, or when there is no room for both (the caller then takes the general path).
    #[inline]
    pub(crate) fn fresh_pair(&mut self, idx: u8) -> Option<(&mut Lanes, &mut Lanes)> {
        let (r0, r1) = (ArchReg::R(idx), ArchReg::R(idx.wrapping_add(1)));
        let n = self.len as usize;
        if idx >= 254 || n + 2 > MAX_WRITES || self.w[..n].iter().any(|w| w.reg == r0 || w.reg == r1) {
            return None;
        }
        self.push(r0, u32::MAX);
        self.push(r1, u32::MAX);
        let (a, b) = self.w[n..n + 2].split_at_mut(1);
        Some((&mut a[0].vals, &mut b[0].vals))
    }

    /// Predicate `idx` (PT ignored) := bit `l` of `bits` for the lanes `l` of `lm`: a new
    /// entry takes the bits of `lm` and 0 elsewhere (as a new zeroed entry and then the
    /// lanes' writes would leave it), without zeroing it first; an existing one is blended.
    #[inline]
    pub(crate) fn p_lanes(&mut self, idx: u8, lm: u32, bits: u32) {
        if idx == 7 {
            return;
        }
        let reg = ArchReg::P(idx);
        match self.written_at(reg) {
            Some(i) => {
                let s = &mut self.w[i];
                s.mask |= lm;
                for (l, d) in s.vals.iter_mut().enumerate() {
                    let m = lane_bits(lm, l);
                    *d = (bits >> l & 1 & m) | (*d & !m);
                }
            }
            None => {
                let b = bits & lm;
                let s = self.push(reg, lm);
                for (l, d) in s.vals.iter_mut().enumerate() {
                    *d = b >> l & 1;
                }
            }
        }
    }
}

/// The row of register `r` in warp `w`'s registers, None for RZ (255: also what
/// [`DInst::plain`] gives for an operand that is not a plain register) and past the rows (a
/// function of the warp alone, so that the rows can be read while the pending writes are
/// written).
#[inline(always)]
fn row_of(w: &Warp, r: u8) -> Option<&Lanes> {
    if r == 255 {
        return None;
    }
    let b = r as usize * 32;
    w.regs.get(b..b + 32)?.try_into().ok()
}

/// All ones if lane `l` is in `lm`, else 0 (a select mask the lane loops vectorise with).
#[inline(always)]
fn lane_bits(lm: u32, l: usize) -> u32 {
    if lm & (1u32 << l) != 0 {
        u32::MAX
    } else {
        0
    }
}

/// The whole-warp FMA of FFMA (round to nearest even), shared with the host references.
pub(crate) use sassim_workload::fma::fma_rn_lanes;

#[cfg(test)]
mod tests {
    use super::*;

    /// Pending writes holding `regs` (whole rows of distinct values), in that order.
    fn with(regs: &[u8]) -> PendingWrites {
        let mut p = PendingWrites::default();
        for (k, &r) in regs.iter().enumerate() {
            let v: Lanes = std::array::from_fn(|l| (k * 100 + l) as u32);
            p.r_lanes(r, u32::MAX, &v);
        }
        p
    }

    /// A pair written through `fresh_pair` (or a row through `fresh_row`) leaves the pending
    /// writes as `r_lanes` of the whole warp would, and neither adds anything where the
    /// general path must take over (RZ, a register already written, no room for both).
    #[test]
    fn fresh_pair_and_row_are_r_lanes() {
        let lo: Lanes = std::array::from_fn(|l| 0x1000 + l as u32);
        let hi: Lanes = std::array::from_fn(|l| 0x2000 + l as u32);
        let starts: [&[u8]; 6] = [&[], &[7], &[4], &[5], &[1, 2, 3, 9], &[1, 2, 3, 9, 10]];
        for start in starts {
            for idx in [4u8, 20, 253, 254, 255] {
                let mut want = with(start);
                let n = want.len as usize;
                if n + 2 <= MAX_WRITES || start.contains(&idx) {
                    want.r_lanes(idx, u32::MAX, &lo);
                    want.r_lanes(idx.wrapping_add(1), u32::MAX, &hi);
                }
                let mut got = with(start);
                match got.fresh_pair(idx) {
                    Some((a, b)) => {
                        *a = lo;
                        *b = hi;
                        assert_eq!(got, want, "pair R{idx} after {start:?}");
                    }
                    None => {
                        assert_eq!(got, with(start), "nothing added for R{idx} after {start:?}");
                        assert!(
                            idx >= 254
                                || n + 2 > MAX_WRITES
                                || start.contains(&idx)
                                || start.contains(&(idx + 1))
                        );
                    }
                }
                if n < MAX_WRITES {
                    let mut want = with(start);
                    want.r_lanes(idx, u32::MAX, &lo);
                    let mut got = with(start);
                    match got.fresh_row(idx) {
                        Some(a) => {
                            *a = lo;
                            assert_eq!(got, want);
                        }
                        None => {
                            assert_eq!(got, with(start));
                            assert!(idx == 255 || start.contains(&idx));
                        }
                    }
                }
            }
        }
    }
}
