//! Warp-wide instructions: SHFL, VOTE, MATCH.

use super::*;

impl Ex<'_> {
    /// SHFL Pd, Rd, a, b, c (PTX shfl.sync semantics; c = clamp | segmask << 8). Lanes outside
    /// the range read their own value and get Pd = false.
    pub(super) fn shfl(&mut self, mode: ShflMode) -> Res<()> {
        let (pd, rd) = if self.op(0)?.is_pred() {
            (Some(0), 1)
        } else {
            (None, 0)
        };
        let s = rd + 1;
        let mut src = [0u32; 32];
        let srco = self.op(s)?;
        for (l, v) in src.iter_mut().enumerate() {
            *v = self.raw(srco, l)?;
        }
        for l in lanes(self.g) {
            let b = self.si(s + 1, l)? & 0x1f;
            let c = self.si(s + 2, l)?;
            let cval = c & 0x1f;
            let segmask = (c >> 8) & 0x1f;
            let lane = l as u32;
            let max_lane = (lane & segmask) | (cval & !segmask);
            let min_lane = lane & segmask;
            let (j, ok) = match mode {
                ShflMode::Up => {
                    let j = lane as i32 - b as i32;
                    (j, j >= max_lane as i32)
                }
                ShflMode::Down => {
                    let j = lane + b;
                    (j as i32, j <= max_lane)
                }
                ShflMode::Bfly => {
                    let j = lane ^ b;
                    (j as i32, j <= max_lane)
                }
                ShflMode::Idx => {
                    let j = min_lane | (b & !segmask);
                    (j as i32, j <= max_lane)
                }
            };
            let j = if ok && (0..32).contains(&j) { j as usize } else { l };
            self.wr(rd, l, src[j])?;
            if let Some(p) = pd {
                self.wp(p, l, ok)?;
            }
        }
        Ok(())
    }

    /// VOTE.{ALL,ANY,EQ} [Rd,] [Pd,] Psrc: Rd = ballot of Psrc over the executing lanes.
    pub(super) fn vote(&mut self, mode: VoteMode) -> Res<()> {
        let n = self.n();
        let (rd, pd, ps) = match (self.op(0)?.is_reg(), n) {
            (true, 3) => (Some(0), Some(1), 2),
            (true, 2) => (Some(0), None, 1),
            (false, 2) => (None, Some(0), 1),
            _ => return Err(self.unsup("operands")),
        };
        let mut ballot = 0u32;
        for l in lanes(self.g) {
            if self.pred_op(ps, l)? {
                ballot |= 1 << l;
            }
        }
        let r = match mode {
            VoteMode::All => ballot == self.g,
            VoteMode::Any => ballot != 0,
            VoteMode::Eq => ballot == 0 || ballot == self.g,
        };
        let lm = self.exec_lanes();
        for l in lanes(lm) {
            if let Some(rd) = rd {
                self.wr(rd, l, ballot)?;
            }
            if let Some(pd) = pd {
                self.wp(pd, l, r)?;
            }
        }
        Ok(())
    }

    /// MATCH.ANY Rd, Ra: lanes with the same value; MATCH.ALL Pd, Rd, Ra: mask if all equal.
    pub(super) fn match_(&mut self, all: bool, wide: bool) -> Res<()> {
        let (pd, rd) = if self.op(0)?.is_pred() {
            (Some(0), 1)
        } else {
            (None, 0)
        };
        let so = self.op(rd + 1)?;
        let mut v = [0u64; 32];
        for l in lanes(self.g) {
            v[l] = if wide {
                self.raw64(so, l)?
            } else {
                self.raw(so, l)? as u64
            };
        }
        for l in lanes(self.g) {
            let mut m = 0u32;
            for k in lanes(self.g) {
                if v[k] == v[l] {
                    m |= 1 << k;
                }
            }
            if all {
                let eq = m == self.g;
                self.wr(rd, l, if eq { m } else { 0 })?;
                if let Some(p) = pd {
                    self.wp(p, l, eq)?;
                }
            } else {
                self.wr(rd, l, m)?;
            }
        }
        Ok(())
    }
}
