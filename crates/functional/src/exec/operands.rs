//! Operand reads (per lane) and destination writes of the executing instruction.

use super::*;

impl Ex<'_> {
    // ---------------- operand reads ----------------

    #[inline]
    pub(super) fn reg(&self, idx: u8, lane: usize) -> u32 {
        if idx == 255 {
            return 0;
        }
        let w = self.w();
        w.regs.get(idx as usize * 32 + lane).copied().unwrap_or(0)
    }
    #[inline]
    pub(super) fn ureg(&self, idx: u8) -> u32 {
        if idx >= 63 {
            0
        } else {
            self.w().ur[idx as usize]
        }
    }
    /// The 32-bit word at byte offset `off` of constant bank `bank` (0 outside the bank's
    /// contents, as for a bank the driver did not load).
    pub(super) fn cword(&self, bank: u32, off: i64) -> u32 {
        if off < 0 || off as usize + 4 > CBANK_BYTES {
            return 0;
        }
        let o = off as usize;
        let bytes: &[u8] = if bank == 0 {
            &self.k.cbank
        } else {
            match self.k.banks.get(bank as usize) {
                Some(Some(b)) => b,
                _ => return 0,
            }
        };
        match bytes.get(o..o + 4) {
            Some(w) => u32::from_le_bytes(w.try_into().expect("4 bytes")),
            None => 0,
        }
    }
    pub(super) fn const_off(&self, addr: &MemAddr, lane: usize) -> i64 {
        let mut off = addr.offset;
        for t in &addr.terms[..addr.n as usize] {
            let v = if t.uniform {
                self.ureg(t.idx)
            } else {
                self.reg(t.idx, lane)
            };
            off += v as i64 * t.scale as i64;
        }
        off
    }
    pub(super) fn sreg(&mut self, s: SReg, lane: usize) -> u32 {
        let w = self.w();
        let c = &self.k.ctas[self.cta];
        let v = match s {
            SReg::Tid(k) => w.tid[lane][k as usize],
            SReg::Ctaid(k) => c.ctaid[k as usize],
            SReg::Ntid(k) => self.k.launch.block[k as usize],
            SReg::Nctaid(k) => self.k.launch.grid[k as usize],
            SReg::LaneId => lane as u32,
            SReg::WarpId => w.in_cta,
            SReg::VirtId => w.in_cta,
            SReg::SmId => 0,
            SReg::ClockLo | SReg::GlobalTimerLo => self.clock as u32,
            SReg::ClockHi | SReg::GlobalTimerHi => (self.clock >> 32) as u32,
            SReg::CgaCtaId => c.rank,
            SReg::LtMask => (1u32 << lane) - 1,
            SReg::LeMask => ((1u64 << (lane + 1)) - 1) as u32,
            SReg::EqMask => 1 << lane,
            SReg::GtMask => !(((1u64 << (lane + 1)) - 1) as u32),
            SReg::GeMask => !((1u32 << lane) - 1),
            SReg::SwinHi => (SHARED_WINDOW >> 32) as u32,
            SReg::SwinLo => SHARED_WINDOW as u32,
            SReg::Zero => 0,
        };
        if s.is_clock() {
            self.clock_read();
        }
        v
    }

    /// The instruction reads a clock: the timing model is told, and the warp's livelock
    /// probe knows that its states now depend on time (`exec/probe.rs`).
    pub(super) fn clock_read(&mut self) {
        self.out.clock_read = true;
        self.k.warps[self.wi].probe.taint();
    }

    /// Raw 32-bit value of a source (integer view of immediates).
    #[inline]
    pub(super) fn raw(&mut self, o: &D, lane: usize) -> Res<u32> {
        Ok(match &o.k {
            K::R(i) => self.reg(*i, lane),
            K::UR(i) => self.ureg(*i),
            K::Imm(v) => *v as u32,
            K::ImmF(f) => *f as i64 as u32,
            K::Const { bank, addr } => {
                let off = self.const_off(addr, lane);
                self.cword(*bank, off)
            }
            K::SR(s) => self.sreg(*s, lane),
            K::P(_) | K::UP(_) => self.pred(o, lane) as u32,
            _ => return Err(self.unsup("operand kind")),
        })
    }
    /// Integer source with `~` and `-` applied.
    #[inline]
    pub(super) fn int(&mut self, o: &D, lane: usize) -> Res<u32> {
        let mut v = self.raw(o, lane)?;
        if o.not {
            v = !v;
        }
        if o.neg {
            v = v.wrapping_neg();
        }
        if o.abs {
            v = (v as i32).unsigned_abs();
        }
        Ok(v)
    }
    /// 64-bit source (register pair, constant pair, immediate).
    #[inline]
    pub(super) fn raw64(&mut self, o: &D, lane: usize) -> Res<u64> {
        Ok(match &o.k {
            K::R(i) => {
                if *i == 255 {
                    0
                } else {
                    self.reg(*i, lane) as u64 | (self.reg(i + 1, lane) as u64) << 32
                }
            }
            K::UR(i) => {
                if *i >= 63 {
                    0
                } else {
                    self.ureg(*i) as u64 | (self.ureg(i + 1) as u64) << 32
                }
            }
            K::Imm(v) => *v as u64,
            K::Const { bank, addr } => {
                let off = self.const_off(addr, lane);
                self.cword(*bank, off) as u64 | (self.cword(*bank, off + 4) as u64) << 32
            }
            _ => return Err(self.unsup("64-bit operand kind")),
        })
    }
    /// Single-precision source bits with |.| and - applied.
    pub(super) fn f32b(&mut self, o: &D, lane: usize) -> Res<u32> {
        let mut b = match &o.k {
            K::ImmF(f) => (*f as f32).to_bits(),
            _ => self.raw(o, lane)?,
        };
        if o.abs {
            b &= 0x7fff_ffff;
        }
        if o.neg {
            b ^= 0x8000_0000;
        }
        Ok(b)
    }
    #[inline]
    pub(super) fn f32v(&mut self, o: &D, lane: usize) -> Res<f32> {
        Ok(f32::from_bits(self.f32b(o, lane)?))
    }
    pub(super) fn f64v(&mut self, o: &D, lane: usize) -> Res<f64> {
        let mut b = match &o.k {
            K::ImmF(f) => f.to_bits(),
            K::Imm(v) => (*v as u64) << 32,
            _ => self.raw64(o, lane)?,
        };
        if o.abs {
            b &= !(1u64 << 63);
        }
        if o.neg {
            b ^= 1u64 << 63;
        }
        Ok(f64::from_bits(b))
    }
    #[inline]
    pub(super) fn pred(&self, o: &D, lane: usize) -> bool {
        let w = self.w();
        let v = match o.k {
            K::P(i) => w.p[(i & 7) as usize] >> lane & 1 == 1,
            K::UP(i) => w.up >> (i & 7) & 1 == 1 || i == 7,
            _ => false,
        };
        v ^ o.not
    }
    #[inline]
    pub(super) fn pred_op(&self, i: usize, lane: usize) -> Res<bool> {
        let o = self.op(i)?;
        if !o.is_pred() {
            return Err(self.unsup(&format!("operand {} is not a predicate", i + 1)));
        }
        Ok(self.pred(o, lane))
    }

    // ---------------- destinations ----------------

    #[inline]
    pub(super) fn wr(&mut self, i: usize, lane: usize, v: u32) -> Res<()> {
        match self.op(i)?.k {
            K::R(r) => self.out.writes.r(r, lane, v),
            K::UR(r) => self.out.writes.ur(r, v),
            _ => return Err(self.unsup("destination is not a register")),
        }
        Ok(())
    }
    #[inline]
    pub(super) fn wr64(&mut self, i: usize, lane: usize, v: u64) -> Res<()> {
        match self.op(i)?.k {
            K::R(255) | K::UR(63) => {}
            K::R(r) => {
                self.out.writes.r(r, lane, v as u32);
                self.out.writes.r(r + 1, lane, (v >> 32) as u32);
            }
            K::UR(r) => {
                self.out.writes.ur(r, v as u32);
                self.out.writes.ur(r + 1, (v >> 32) as u32);
            }
            _ => return Err(self.unsup("destination is not a register")),
        }
        Ok(())
    }
    #[inline]
    pub(super) fn wp(&mut self, i: usize, lane: usize, v: bool) -> Res<()> {
        match self.op(i)?.k {
            K::P(p) => self.out.writes.p(p, lane, v),
            K::UP(p) => self.out.writes.up(p, v),
            _ => return Err(self.unsup("destination is not a predicate")),
        }
        Ok(())
    }
}
