//! LTRF, the latency-tolerant register file (Sadrosadati et al.;
//! `shared/papers/ltrf-latency-tolerant-register-file.txt`), on the modern SM: a register
//! cache with one partition per active warp, filled at each register-interval head by a
//! prefetch from a slow, banked main register file (`[regfile.ltrf]`, docs/ltrf.md).
//!
//! * A warp whose next instruction belongs to another interval than the one its partition
//!   holds starts a prefetch and cannot issue until it completes (LTRF §5, "Executing
//!   Prefetch Operations"): LTRF fetches the interval's whole working set, LTRF+ only the
//!   registers live on entry.
//! * A prefetch takes `(conflicts + 1) × main_latency` cycles in the main file's banks (the
//!   registers of one bank are read one after the other) plus its crossbar transfer,
//!   `registers × crossbar cycles per register`; the sub-core's fill path serves one
//!   prefetch or write-back at a time, so prefetches of several warps queue.
//! * Operands are read from the register cache, conflict-free (`rf_ideal`; LTRF §5: a warp's
//!   registers are interleaved across the cache banks).
//! * With the two-level scheduler, a warp that leaves the active set loses its partition
//!   (LTRF §5, "Warp Stall"): it writes back its registers (LTRF: the working set; LTRF+: the
//!   live ones, approximated by those live on the interval's entry) and refetches when it is
//!   active again. Without the two-level scheduler every warp keeps a partition.

use crate::config::SchedPolicy;
use crate::sm::Sm;
use crate::state::{RegCacheState, NO_INTERVAL};
use crate::stats::StallReason;
use sassim_config::RegFileOrganisation;

impl<W> Sm<W> {
    /// Whether the register file is LTRF (or LTRF+).
    pub(crate) fn ltrf_enabled(&self) -> bool {
        self.cfg.rf_org != RegFileOrganisation::Baseline
    }

    /// LTRF's part of the readiness of warp `slot` whose next instruction is `sidx`:
    /// starts the prefetch of the instruction's interval when the partition holds another.
    pub(crate) fn ltrf_ready(
        &mut self,
        sc: usize,
        slot: usize,
        sidx: usize,
        now: u64,
    ) -> Result<(), StallReason> {
        let Some(p) = self.code[sidx].ltrf else {
            return Ok(());
        };
        if self.warps[slot].rc.interval != p.interval {
            // Only an active warp has a partition to fill.
            if self.cfg.scheduler == SchedPolicy::TwoLevel
                && !self.subcores[sc].two_level_pool.contains(&slot)
            {
                return Err(StallReason::RegisterPrefetch);
            }
            let plus = self.cfg.rf_org == RegFileOrganisation::LtrfPlus;
            let (regs, conflicts) = if plus {
                (p.live, p.conflicts_live)
            } else {
                (p.fetch, p.conflicts)
            };
            let banks = if regs == 0 {
                0
            } else {
                (u64::from(conflicts) + 1) * u64::from(self.cfg.ltrf_main_latency)
            };
            let cost = banks + u64::from(regs) * u64::from(self.cfg.ltrf_xbar_cycles_per_reg);
            let s = &mut self.subcores[sc];
            let start = now.max(s.rc_fill_free);
            s.rc_fill_free = start + cost;
            self.warps[slot].rc = RegCacheState {
                interval: p.interval,
                ready_at: start + cost,
                dirty: if plus { p.live } else { p.fetch },
            };
            self.stats.ltrf_prefetches += 1;
            self.stats.ltrf_prefetch_regs += u64::from(regs);
            self.stats.ltrf_prefetch_conflicts += u64::from(conflicts);
            self.stats.ltrf_prefetch_cycles += start + cost - now;
        }
        if now < self.warps[slot].rc.ready_at {
            return Err(StallReason::RegisterPrefetch);
        }
        Ok(())
    }

    /// Warp `slot` left the two-level scheduler's active set: it writes its registers back
    /// and loses its partition.
    pub(crate) fn ltrf_deactivate(&mut self, sc: usize, slot: usize, now: u64) {
        if !self.ltrf_enabled() || self.warps[slot].rc.interval == NO_INTERVAL {
            return;
        }
        if self.warps[slot].exited {
            // An exited warp's registers are dead: nothing to write back.
            self.warps[slot].rc = RegCacheState::default();
            return;
        }
        let dirty = self.warps[slot].rc.dirty;
        let s = &mut self.subcores[sc];
        let start = now.max(s.rc_fill_free);
        s.rc_fill_free = start + u64::from(dirty) * u64::from(self.cfg.ltrf_xbar_cycles_per_reg);
        self.warps[slot].rc = RegCacheState::default();
        self.stats.ltrf_deactivations += 1;
        self.stats.ltrf_writeback_regs += u64::from(dirty);
    }
}
