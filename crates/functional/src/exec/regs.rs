//! A warp's registers: reads and writes from outside, and the commit of an instruction's
//! register results.

use super::*;

impl KernelExec {
    /// Register values per lane.
    pub fn regs(&self, w: WarpId, reg: ArchReg) -> [u32; 32] {
        let wp = &self.warps[w.0 as usize];
        let mut out = [0u32; 32];
        match reg {
            ArchReg::R(i) => {
                if (i as usize) < self.nregs && !wp.regs.is_empty() && i != 255 {
                    out.copy_from_slice(&wp.regs[i as usize * 32..i as usize * 32 + 32]);
                }
            }
            ArchReg::UR(i) => out = [if i == 63 { 0 } else { wp.ur[i as usize] }; 32],
            ArchReg::P(i) => {
                for (l, o) in out.iter_mut().enumerate() {
                    *o = wp.p[(i & 7) as usize] >> l & 1;
                }
            }
            ArchReg::UP(i) => out = [(wp.up >> (i & 7) & 1) as u32; 32],
            ArchReg::B(i) => {
                if let CfView::Hanoi { bx, .. } = wp.cf.view() {
                    out = [bx[(i & 15) as usize].0; 32];
                }
            }
        }
        out
    }

    /// Set a register for all lanes of a warp (microbenchmark initialisation).
    pub fn set_reg(&mut self, w: WarpId, reg: ArchReg, vals: [u32; 32]) {
        let nregs = self.nregs;
        let wp = &mut self.warps[w.0 as usize];
        match reg {
            ArchReg::R(i) => {
                if (i as usize) < nregs && i != 255 {
                    wp.regs[i as usize * 32..i as usize * 32 + 32].copy_from_slice(&vals);
                }
            }
            ArchReg::UR(i) => {
                if i != 63 {
                    wp.ur[i as usize] = vals[0]
                }
            }
            ArchReg::P(i) => {
                if i < 7 {
                    let mut m = 0;
                    for (l, v) in vals.iter().enumerate() {
                        m |= ((*v != 0) as u32) << l;
                    }
                    wp.p[i as usize] = m;
                }
            }
            ArchReg::UP(i) => {
                if i < 7 {
                    wp.up = (wp.up & !(1 << i)) | (((vals[0] != 0) as u8) << i);
                }
            }
            ArchReg::B(_) => {}
        }
    }

    /// [`KernelExec::commit`], returning whether it changed a stored value (deadlock
    /// detection: spinning warps rewrite the same values, a loop that computes does not).
    /// RZ/URZ writes change nothing; predicates compare bit 0 of the lanes written, uniform
    /// registers lane 0 (uniform predicates its bit 0); a register beyond the kernel's
    /// count reads as 0. The old values are compared in place, without a copy.
    pub fn commit_changed(&mut self, w: WarpId, writes: &PendingWrites) -> bool {
        if writes.ticket != 0 {
            if let Some(patched) = self.returned_values(writes) {
                return self.commit_changed(w, &patched);
            }
        }
        let mut changed = false;
        for wr in writes.as_slice() {
            changed |= self.commit_one(w, wr);
        }
        changed
    }

    /// Apply one register write; returns whether it changed a stored value (see
    /// [`KernelExec::commit_changed`]). A regular register's row is compared as it is
    /// written, in one pass.
    #[inline]
    fn commit_one(&mut self, w: WarpId, wr: &RegWrite) -> bool {
        let ArchReg::R(i) = wr.reg else {
            let changed = self.write_changes(w, wr);
            self.commit_other(w, wr);
            return changed;
        };
        let nregs = self.nregs;
        let wp = &mut self.warps[w.0 as usize];
        let b = i as usize * 32;
        let row = match wp.regs.get_mut(b..b + 32).map(<&mut [u32; 32]>::try_from) {
            Some(Ok(row)) if (i as usize) < nregs => row,
            // Past the kernel's registers (or freed): nothing is stored, reads give 0.
            _ => return i != 255 && (0..32).any(|l| wr.mask >> l & 1 == 1 && wr.vals[l] != 0),
        };
        let diff = merge_row(row, &wr.vals, wr.mask);
        i != 255 && diff != 0
    }

    /// Whether committing `wr` would change what [`KernelExec::regs`] reads (see
    /// [`KernelExec::commit_changed`]).
    #[inline]
    fn write_changes(&self, w: WarpId, wr: &RegWrite) -> bool {
        let wp = &self.warps[w.0 as usize];
        match wr.reg {
            ArchReg::R(255) | ArchReg::UR(63) => false,
            ArchReg::R(i) => {
                let i = i as usize;
                if i < self.nregs && !wp.regs.is_empty() {
                    let old = &wp.regs[i * 32..i * 32 + 32];
                    if wr.mask == u32::MAX {
                        return *old != wr.vals; // every lane: one comparison of the rows
                    }
                    let diff = (0..32).fold(0u32, |m, l| m | u32::from(old[l] != wr.vals[l]) << l);
                    diff & wr.mask != 0
                } else {
                    (0..32).any(|l| wr.mask >> l & 1 == 1 && wr.vals[l] != 0)
                }
            }
            ArchReg::UR(i) => wp.ur[i as usize] != wr.vals[0],
            ArchReg::UP(i) => (u32::from(wp.up >> (i & 7) & 1) ^ wr.vals[0]) & 1 != 0,
            ArchReg::P(i) => {
                let old = wp.p[(i & 7) as usize];
                (old ^ bit0_mask(&wr.vals)) & wr.mask != 0
            }
            ArchReg::B(_) => self.regs(w, wr.reg)[0] != wr.vals[0],
        }
    }

    /// Apply the register results of an issued instruction.
    pub fn commit(&mut self, w: WarpId, writes: &PendingWrites) {
        self.commit_changed(w, writes);
    }

    /// Apply a write of a register other than a regular one.
    fn commit_other(&mut self, w: WarpId, wr: &RegWrite) {
        let wp = &mut self.warps[w.0 as usize];
        match wr.reg {
            ArchReg::R(_) | ArchReg::B(_) => {}
            ArchReg::UR(i) => {
                if i != 63 {
                    wp.ur[i as usize] = wr.vals[0];
                }
            }
            ArchReg::P(i) => {
                if i < 7 {
                    // Bit 0 of each lane of `mask`, the other lanes kept.
                    let m = wp.p[i as usize];
                    wp.p[i as usize] = (m & !wr.mask) | (bit0_mask(&wr.vals) & wr.mask);
                }
            }
            ArchReg::UP(i) => {
                if i < 7 {
                    wp.up = (wp.up & !(1 << i)) | (((wr.vals[0] & 1) as u8) << i);
                }
            }
        }
    }
}

/// Bit 0 of each lane's value, as a lane mask (a predicate's lanes).
#[inline]
fn bit0_mask(vals: &[u32; 32]) -> u32 {
    let mut m = 0u32;
    for (l, v) in vals.iter().enumerate() {
        m |= (v & 1) << l;
    }
    m
}

/// Write the lanes of `mask` of `vals` into `row`; returns the bits that changed, OR-ed
/// over the lanes (0: the row was unchanged). Fixed-size rows: compiled to whole-row vector
/// operations.
#[inline]
fn merge_row(row: &mut [u32; 32], vals: &[u32; 32], mask: u32) -> u32 {
    let old = *row;
    // The new row as a value of its own: compared with the old one as it is, not read back
    // from the row just written.
    let new: [u32; 32] = if mask == u32::MAX {
        // Every lane (the common case).
        *vals
    } else {
        std::array::from_fn(|l| {
            let m = 0u32.wrapping_sub(mask >> l & 1);
            (old[l] & !m) | (vals[l] & m)
        })
    };
    *row = new;
    let mut diff = 0u32;
    for l in 0..32 {
        diff |= old[l] ^ new[l];
    }
    diff
}

#[cfg(test)]
mod tests {
    use super::{bit0_mask, merge_row};

    /// Merging a row gives the lanes of `mask` from the new values and the others kept, and
    /// reports a change exactly when some stored value changed.
    #[test]
    fn merge_row_is_lane_by_lane() {
        let old: [u32; 32] = std::array::from_fn(|l| (l as u32).wrapping_mul(0x85eb_ca6b));
        let mut vals = old;
        vals[3] ^= 0x10;
        vals[31] = !vals[31];
        for mask in [u32::MAX, 0, 1 << 3, 1 << 31, !(1 << 3) & !(1 << 31), 0x00ff_00ff] {
            for new in [old, vals] {
                let mut row = old;
                let diff = merge_row(&mut row, &new, mask);
                let want: [u32; 32] =
                    std::array::from_fn(|l| if mask >> l & 1 == 1 { new[l] } else { old[l] });
                assert_eq!(row, want);
                assert_eq!(diff != 0, want != old, "mask {mask:#x}");
            }
        }
    }

    /// The packed bit 0 of each lane is the lane-by-lane predicate value, whatever the
    /// other bits of the lane's value.
    #[test]
    fn bit0_mask_packs_lane_bits() {
        let vals: [u32; 32] = std::array::from_fn(|l| (l as u32).wrapping_mul(0x9e37_79b9) ^ (l as u32 % 3));
        let want = (0..32).fold(0u32, |m, l| m | (vals[l] & 1) << l);
        assert_eq!(bit0_mask(&vals), want);
        assert_eq!(bit0_mask(&[1; 32]), u32::MAX);
        assert_eq!(bit0_mask(&[2; 32]), 0);
        let mut one = [0u32; 32];
        one[31] = 3;
        assert_eq!(bit0_mask(&one), 1 << 31);
    }
}
