//! Hardware scoreboards: how data dependences are enforced without SASS control bits
//! (`issue.dependence = "scoreboard"`, and `"hybrid"` for kernels without SASS). Each warp
//! counts, per register, the writes in flight, the reads in flight and the reads outside
//! the fixed-latency pipeline (RAW/WAW on the first, WAR on the last, and an optional cap on
//! consumers, `issue.scoreboard_max_consumers`). The issue stage and the events call these
//! only in that mode; they are out of line and `#[cold]` so that the control-bit path stays
//! compact.

use crate::sm::Sm;
use crate::state::{reg_index, HOT_DEP_WAIT, HOT_SB_CLEAR, NO_HEAD};
use sassim_isa::ArchReg;

impl<W> Sm<W> {
    /// Without control bits (`dependence = "scoreboard"`): whether the head instruction
    /// `sidx` of `slot` waits on the register scoreboard (a pending write of a register it
    /// reads or writes, a late read of one it writes, or a register at its consumer limit).
    /// The answer "clear" is cached in `HOT_SB_CLEAR` until the next issue or release. Out of
    /// line and cold: control-bit runs never take it, and their issue path stays compact.
    #[cold]
    #[inline(never)]
    pub(crate) fn scoreboard_waits(&mut self, slot: usize, sidx: usize) -> bool {
        let inst = &self.code[sidx];
        let w = &self.warps[slot];
        let max = self.cfg.scoreboard_max_consumers;
        let check = || {
            let raw = inst.reads.iter().any(|r| w.sb_write[reg_index(r)] > 0)
                || inst.writes.iter().any(|r| w.sb_write[reg_index(r)] > 0);
            let war = inst.writes.iter().any(|r| w.sb_read_late[reg_index(r)] > 0);
            let full = max > 0 && inst.reads.iter().any(|r| w.sb_read[reg_index(r)] as u32 >= max);
            raw || war || full
        };
        if self.hot[slot] & HOT_SB_CLEAR != 0 {
            debug_assert!(!check(), "stale scoreboard-clear flag");
            false
        } else {
            let waits = check();
            if !waits {
                self.hot[slot] |= HOT_SB_CLEAR;
            }
            waits
        }
    }

    /// Without control bits: the write scoreboard of a fixed-latency result is released when
    /// fixed-latency consumers may read it (bypass); memory instructions read the register
    /// file one cycle later (M25 rule 24, Listing 3): a memory instruction `sidx` of `slot`
    /// that reads a register of a result in that window waits. Cold like
    /// [`Sm::scoreboard_waits`].
    #[cold]
    #[inline(never)]
    pub(crate) fn scoreboard_late_read_waits(&self, slot: usize, sidx: usize, now: u64) -> bool {
        let inst = &self.code[sidx];
        inst.reads_late()
            && self.warps[slot].pending.iter().any(|p| {
                p.visible_fixed <= now
                    && now < p.visible_mem
                    && self.code[p.inst].writes.iter().any(|x| {
                        let k = reg_index(x);
                        inst.reads.iter().any(|r| reg_index(r) == k)
                    })
            })
    }

    /// Without control bits: the issued instruction `sidx` of `slot` holds the scoreboard
    /// entries of the registers it writes and reads (`late`: read outside the fixed-latency
    /// pipeline).
    #[cold]
    #[inline(never)]
    pub(crate) fn scoreboard_issue(&mut self, slot: usize, sidx: usize, late: bool) {
        let inst = &self.code[sidx];
        let w = &mut self.warps[slot];
        for r in &inst.writes {
            w.sb_write[reg_index(r)] += 1;
        }
        for r in &inst.reads {
            let c = &mut w.sb_read[reg_index(r)];
            *c = c.saturating_add(1);
            if late {
                let c = &mut w.sb_read_late[reg_index(r)];
                *c = c.saturating_add(1);
            }
        }
    }

    /// Without control bits: a source-read release of instruction `sidx` of `slot` (its
    /// registers' read scoreboard entries). Cold: control-bit runs never take it.
    #[cold]
    #[inline(never)]
    pub(crate) fn scoreboard_read_done(&mut self, slot: usize, sidx: usize) {
        let w = &mut self.warps[slot];
        let late = self.code[sidx].reads_outside_fixed_pipeline();
        for r in &self.code[sidx].reads {
            let c = &mut w.sb_read[reg_index(r)];
            *c = c.saturating_sub(1);
            if late {
                let c = &mut w.sb_read_late[reg_index(r)];
                *c = c.saturating_sub(1);
            }
        }
        if self.sb_release_wakes(slot, &self.code[sidx].reads) {
            self.hot[slot] &= !HOT_DEP_WAIT;
            self.sync_masks(slot);
        }
    }

    /// Without control bits: the write release of instruction `sidx` of `slot`. Cold like
    /// [`Sm::scoreboard_read_done`].
    #[cold]
    #[inline(never)]
    pub(crate) fn scoreboard_write_done(&mut self, slot: usize, sidx: usize) {
        let w = &mut self.warps[slot];
        for r in &self.code[sidx].writes {
            let c = &mut w.sb_write[reg_index(r)];
            *c = c.saturating_sub(1);
        }
        if self.sb_release_wakes(slot, &self.code[sidx].writes) {
            self.hot[slot] &= !HOT_DEP_WAIT;
            self.sync_masks(slot);
        }
    }

    /// Scoreboard entries of the `released` registers were released for the warp in `slot`:
    /// whether a wait on its scoreboard may have ended. Only when its head instruction
    /// reads or writes one of them: its other entries did not change (they only grow when
    /// the warp issues, which it cannot do while its head waits), so the wait would hold.
    fn sb_release_wakes(&self, slot: usize, released: &[ArchReg]) -> bool {
        if self.hot[slot] & HOT_DEP_WAIT == 0 {
            return false;
        }
        let v = &self.iss[slot];
        let head = (v.head_ready != u64::MAX && v.head_idx != NO_HEAD).then_some(v.head_idx as usize);
        head.is_none_or(|h| {
            let h = &self.code[h];
            released.iter().any(|r| {
                let k = reg_index(r);
                h.reads.iter().chain(&h.writes).any(|x| reg_index(x) == k)
            })
        })
    }
}
