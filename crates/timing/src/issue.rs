//! Issue: warp readiness (stall counter, yield, dependence counters, DEPBAR,
//! execution-unit latch, constant cache, memory queue), the scheduling policies and the
//! issue of one instruction per cycle per sub-core (M25 A4, A5, rules 1–15).

use crate::config::{SchedPolicy, StallExpiry};
use crate::exec::Executor;
use crate::inst::{ConstAddr, Special};
use crate::sleep::{ACTED, NEVER};
use crate::sm::{Sm, COMMITTED};
use crate::state::{ConstWait, DepbarCond, Stage, HOT_DEP_WAIT, HOT_LIVE, HOT_SB_CLEAR, NO_HEAD};
use crate::stats::StallReason;

impl<W> Sm<W> {
    /// Readiness of one warp at `now`: Ok(()) or the reason it cannot issue.
    #[inline(always)]
    pub(crate) fn ready<E: Executor<Writes = W>>(
        &mut self,
        ex: &E,
        sc: usize,
        slot: usize,
        now: u64,
    ) -> Result<(), StallReason> {
        let hot = self.hot[slot];
        debug_assert_eq!(
            hot & HOT_LIVE != 0,
            self.warps[slot].used && !self.warps[slot].exited
        );
        if hot & HOT_LIVE == 0 {
            return Err(StallReason::Idle);
        }
        // A warp found waiting on its dependence counters (or scoreboard) stays so until one
        // of its counters or scoreboard entries is released: skip the re-evaluation. Checked
        // first because nothing the checks below look at can change while the flag is set
        // (it is cleared by an issue, an instruction-buffer flush and every release), and it
        // spares a cache miss on the instruction buffer of every waiting warp every cycle.
        if hot & HOT_DEP_WAIT != 0 {
            return Err(StallReason::DependenceCounters);
        }
        // The warp's per-cycle state, one cache line apart from its `Warp` record.
        let v = &self.iss[slot];
        // A warp becomes blocked (barrier, no runnable path) only by its own issue; poll the
        // executor only while it is.
        if v.maybe_blocked {
            if ex.blocked(self.warps[slot].exec_id) {
                // Another warp's issue (in any sub-core) may release it: no sleep.
                self.wake_by(ACTED);
                return Err(StallReason::Barrier);
            }
            self.iss[slot].maybe_blocked = false;
        }
        let v = &self.iss[slot];
        debug_assert_eq!(
            self.warps[slot].ib.front().map_or(u64::MAX, |h| h.ready),
            v.head_ready,
            "stale instruction-buffer head"
        );
        // An empty buffer has `head_ready == u64::MAX`.
        if v.head_ready > now {
            let t = v.head_ready;
            self.wake_by(t);
            return Err(StallReason::NoInstruction);
        }
        debug_assert_eq!(self.warps[slot].ib.front().map(|h| h.pc), Some(v.head_pc));
        debug_assert_eq!(
            self.index_of(v.head_pc).map_or(NO_HEAD, |i| i as u32),
            v.head_idx,
            "stale head index"
        );
        if v.head_idx == NO_HEAD {
            return Err(StallReason::NoInstruction);
        }
        let sidx = v.head_idx as usize;
        if now < v.stall_until {
            let t = v.stall_until;
            self.wake_by(t);
            return Err(StallReason::StallCounter);
        }
        if self.code[sidx].ltrf.is_some() {
            self.ltrf_ready(sc, slot, sidx, now)?;
        }
        let (no_issue_at, depbar_from) = (self.iss[slot].no_issue_at, self.iss[slot].depbar_from);
        if no_issue_at == now {
            self.wake_by(now + 1);
            return Err(StallReason::Yield);
        }
        // A DEPBAR's condition starts to count at `depbar_from` (`NO_DEPBAR`: never).
        if depbar_from > now {
            self.wake_by(depbar_from);
        }
        let v = &self.iss[slot];
        let inst = &self.code[sidx];
        let waits = if self.uses_control_bits {
            (inst.ctrl.wait_mask != 0 && (0..6).any(|k| inst.ctrl.waits_on(k) && v.sb[k] != 0)) || {
                // Without a DEPBAR, `from` is NO_DEPBAR (u64::MAX): never reached.
                let DepbarCond { sb, le, ids } = v.depbar;
                now >= v.depbar_from
                    && !(v.sb[sb as usize % crate::inst::DEP_COUNTERS] <= le
                        && (0..6).all(|k| ids & (1 << k) == 0 || v.sb[k] == 0))
            }
        } else {
            self.scoreboard_waits(slot, sidx)
        };
        // DEPBAR's condition only starts to matter `depbar_effect_cycles` after it issued, so a
        // warp blocked by it is known to stay blocked only from then on.
        if waits {
            self.hot[slot] |= HOT_DEP_WAIT;
            self.sync_masks(slot);
            return Err(StallReason::DependenceCounters);
        }
        if !self.uses_control_bits && self.scoreboard_late_read_waits(slot, sidx, now) {
            return Err(StallReason::DependenceCounters);
        }
        let inst = &self.code[sidx];
        let s = &self.subcores[sc];
        let min_gap = self.cfg.clock_read_min_interval as u64;
        if inst.special == Special::ClockRead {
            if let Some(t) = s.last_clock_issue.map(|c| c + min_gap).filter(|&t| now < t) {
                self.wake_by(t);
                return Err(StallReason::StallCounter);
            }
        }
        if inst.mem.is_some() {
            if self.mem_queue_full(sc) {
                return Err(StallReason::MemQueueFull);
            }
        } else if inst.fixed {
            let unit = self.latch_unit(sc, inst.unit);
            let shared = self.unit_shared(unit);
            let free = if shared {
                self.shared_unit_free[unit]
            } else {
                self.subcores[sc].unit_free[unit]
            };
            if free > now {
                self.wake_by(free);
                return Err(StallReason::ExecUnitLatch);
            }
        }
        Ok(())
    }
    /// Whether sub-core `sc`'s memory queue and dispatch latch are full: no memory
    /// instruction can issue.
    #[inline]
    fn mem_queue_full(&self, sc: usize) -> bool {
        self.subcores[sc].mem_occupancy >= self.cfg.mem.queue_entries + self.cfg.mem.dispatch_latch
    }

    /// The execution unit whose input latch an instruction of `unit` would use at `now`:
    /// FP32 instructions may take the INT/FP32 pipe when its latch is free first.
    pub(crate) fn latch_unit(&self, sc: usize, unit: usize) -> usize {
        if self.cfg.fp32_in_int_pipe && self.fp32_unit == Some(unit) {
            if let Some(alt) = self.int_unit {
                let s = &self.subcores[sc];
                if s.unit_free[alt] < s.unit_free[unit] {
                    return alt;
                }
            }
        }
        unit
    }
    pub(crate) fn pick(&self, sc: usize, now: u64, ready: &[usize], exclude: Option<usize>) -> Option<usize> {
        let s = &self.subcores[sc];
        let ok = |slot: usize| ready.contains(&slot) && Some(slot) != exclude;
        let youngest = || {
            ready
                .iter()
                .copied()
                .filter(|&x| Some(x) != exclude)
                .max_by_key(|&x| self.iss[x].age)
        };
        let oldest = || {
            ready
                .iter()
                .copied()
                .filter(|&x| Some(x) != exclude)
                .min_by_key(|&x| self.iss[x].age)
        };
        let rr = |pool: &[usize]| {
            let n = pool.len();
            let start = s
                .last_issued
                .and_then(|l| pool.iter().position(|&x| x == l))
                .map_or(0, |p| p + 1);
            (0..n).map(|k| pool[(start + k) % n]).find(|&x| ok(x))
        };
        // Greedy: the warp that issued in the previous cycle (MICRO'25 A5.3).
        let greedy = s
            .last_issued
            .filter(|&l| ok(l) && s.last_issue_cycle.wrapping_add(1) == now);
        match self.cfg.scheduler {
            SchedPolicy::Cggty => greedy.or_else(youngest),
            SchedPolicy::Gto => greedy.or_else(oldest),
            SchedPolicy::Lrr => rr(&s.warps),
            SchedPolicy::TwoLevel => rr(&s.two_level_pool),
        }
    }
    #[inline]
    pub(crate) fn update_two_level_pool<E: Executor<Writes = W>>(&mut self, ex: &E, sc: usize, now: u64) {
        if self.cfg.scheduler == SchedPolicy::TwoLevel {
            self.update_two_level_pool_now(ex, sc, now);
        }
    }
    fn update_two_level_pool_now<E: Executor<Writes = W>>(&mut self, ex: &E, sc: usize, now: u64) {
        let n = self.cfg.two_level_active_warps.max(1) as usize;
        let warps = &self.warps;
        let iss = &self.iss;
        let code = &self.code;
        let s = &mut self.subcores[sc];
        // Demote warps waiting on a long-latency dependence or at a barrier (a pool of
        // barrier-blocked warps would never let the warps they wait for in: deadlock);
        // promote the oldest others.
        let long_wait = |slot: usize| -> bool {
            let w = &warps[slot];
            if !w.used || w.exited || ex.blocked(w.exec_id) {
                return true;
            }
            match w.ib.front() {
                Some(h) => {
                    let i = (h.pc / sassim_isa::INSTRUCTION_BYTES) as usize;
                    code.get(i)
                        .is_some_and(|inst| (0..6).any(|k| inst.ctrl.waits_on(k) && iss[slot].sb[k] != 0))
                }
                None => false,
            }
        };
        let before = s.two_level_pool.len();
        s.two_level_pool.retain(|&x| !long_wait(x));
        // LTRF: a warp leaving the active set loses its register-cache partition.
        let demoted: Vec<usize> = if before != s.two_level_pool.len()
            && self.cfg.rf_org != sassim_config::RegFileOrganisation::Baseline
        {
            s.warps
                .iter()
                .copied()
                .filter(|x| {
                    !s.two_level_pool.contains(x) && warps[*x].rc.interval != crate::state::NO_INTERVAL
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut cands: Vec<usize> = s
            .warps
            .iter()
            .copied()
            .filter(|x| !s.two_level_pool.contains(x) && !long_wait(*x))
            .collect();
        cands.sort_by_key(|&x| iss[x].age);
        for x in cands {
            if s.two_level_pool.len() >= n {
                break;
            }
            s.two_level_pool.push(x);
        }
        for x in demoted {
            self.ltrf_deactivate(sc, x, now);
        }
    }
    /// Returns when it could act next (`crate::sleep`): `ACTED` when it issued or changed
    /// something, else the earliest time a warp's readiness or the constant-cache wait may
    /// change (`NEVER`: only a touch can change them).
    pub(crate) fn issue_stage<E: Executor<Writes = W>>(
        &mut self,
        ex: &mut E,
        sc: usize,
        now: u64,
    ) -> Result<u64, String> {
        let m = self.sc_mask[sc];
        debug_assert_eq!(m == 0, self.subcores[sc].warps.is_empty());
        if m == 0 {
            self.count_stall(StallReason::Idle);
            return Ok(NEVER);
        }
        // An idle sub-core (`sc_busy` false) has nothing in Control and no constant wait.
        let busy = self.sc_busy[sc];
        debug_assert!(
            busy || (self.subcores[sc].control.is_none() && self.subcores[sc].const_wait.is_none())
        );
        if busy && self.subcores[sc].control.is_some() {
            // (Control's and Allocate's own answers say when this may change.)
            self.count_stall(StallReason::AllocatePortConflict);
            return Ok(NEVER);
        }
        // Every warp of the sub-core exited or known to wait on its dependence counters
        // (a flag only a release, an issue or a flush clears): nothing can issue, and the
        // stall reason is what the full evaluation below would find (the common case of a
        // memory-bound kernel, checked without looking at the warps' state).
        if self.cfg.scheduler != SchedPolicy::TwoLevel && (!busy || self.subcores[sc].const_wait.is_none()) {
            let blocked = (self.go & m == 0).then_some(self.waiting & m != 0);
            if let Some(any_waits) = blocked {
                let reason = if any_waits {
                    StallReason::DependenceCounters
                } else {
                    StallReason::Idle
                };
                self.count_stall(reason);
                return Ok(NEVER);
            }
        }
        self.update_two_level_pool(ex, sc, now);
        // A constant-cache miss that still blocks issue (rule 13; `choose_and_issue`): the
        // stall is `ConstCacheMiss` whichever warps are ready, so their readiness is not
        // evaluated (without LTRF the evaluation only caches flags a later one recomputes;
        // with LTRF it may start register-cache prefetches, so it runs).
        if busy && !self.ltrf_enabled() {
            if let Some(ConstWait { since, ready_at, .. }) = self.subcores[sc].const_wait {
                let switch_at = since + self.cfg.const_miss_switch_cycles as u64;
                if now < ready_at && now < switch_at {
                    self.count_stall(StallReason::ConstCacheMiss);
                    return Ok(ready_at.min(switch_at));
                }
            }
        }
        if !self.ltrf_enabled() && matches!(self.cfg.scheduler, SchedPolicy::Cggty | SchedPolicy::Gto) {
            // Greedy-then-youngest/oldest: the choice is the first ready warp in the policy's
            // order, so the warps are checked in that order up to the first ready one (every
            // warp only when none is; see `first_ready`).
            return match self.first_ready(ex, sc, now) {
                Ok(slot) => self.choose_and_issue(ex, sc, now, &[slot], StallReason::Idle),
                Err(best) => self.choose_and_issue(ex, sc, now, &[], best),
            };
        }
        // Readiness of every warp of the sub-core, in a buffer kept by the SM (no allocation
        // and no clearing cost per cycle).
        let mut buf = std::mem::take(&mut self.ready_buf);
        buf.clear();
        let mut best = StallReason::Idle;
        if self.ltrf_enabled() {
            // LTRF: a warp's check may start a register-cache prefetch that delays the next
            // warp's, so the warps are checked in the sub-core's order.
            for k in 0..self.subcores[sc].warps.len() {
                let slot = self.subcores[sc].warps[k];
                // Only the ready warps are listed (the policies choose among them).
                match self.ready(ex, sc, slot, now) {
                    Ok(()) => buf.push(slot),
                    Err(r) => best = best.min(r),
                }
            }
        } else {
            // Otherwise the checks are independent and their order does not matter (the
            // reason is the minimum, the policies choose by age, which is unique, or by the
            // sub-core's order): only the warps in `go` are checked. An exited warp's reason
            // is `Idle`, a waiting warp's `DependenceCounters` (what `ready` answers for
            // them without looking further).
            let m = self.sc_mask[sc];
            if self.waiting & m != 0 {
                best = StallReason::DependenceCounters;
            }
            let mut bits = self.go & m;
            while bits != 0 {
                let slot = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                match self.ready(ex, sc, slot, now) {
                    Ok(()) => buf.push(slot),
                    Err(r) => best = best.min(r),
                }
            }
        }
        let r = self.choose_and_issue(ex, sc, now, &buf, best);
        self.ready_buf = buf;
        r
    }

    /// Without LTRF, under greedy-then-youngest (CGGTY) or greedy-then-oldest (GTO): the warp
    /// `choose_and_issue` would choose from the list of every ready warp of sub-core `sc`, or
    /// the stall reason (the minimum over its warps) when none is ready. The readiness checks
    /// are then independent of each other (they only cache flags that a later check would
    /// recompute), so they stop at the first ready warp in the policy's order: the greedy warp
    /// (the last to issue, in the previous cycle), then the others youngest (oldest) first —
    /// `SubCore::warps` is in age order (`Sm::age_rank`). While a constant-cache miss has made the scheduler switch away from its warp, the
    /// choice is the youngest ready warp but that one.
    fn first_ready<E: Executor<Writes = W>>(
        &mut self,
        ex: &E,
        sc: usize,
        now: u64,
    ) -> Result<usize, StallReason> {
        let m = self.sc_mask[sc];
        let go = self.go & m;
        let mut best = if self.waiting & m != 0 {
            StallReason::DependenceCounters
        } else {
            StallReason::Idle
        };
        // `choose_and_issue`'s switch (the still-blocking part of the wait returned earlier).
        let exclude = if self.sc_busy[sc] {
            match self.subcores[sc].const_wait {
                Some(ConstWait { slot, ready_at, .. }) if now < ready_at => Some(slot),
                _ => None,
            }
        } else {
            None
        };
        let mut tried = 0u64;
        if exclude.is_none() {
            let s = &self.subcores[sc];
            if let Some(g) = s
                .last_issued
                .filter(|&g| s.last_issue_cycle.wrapping_add(1) == now && go >> g & 1 == 1)
            {
                match self.ready(ex, sc, g, now) {
                    Ok(()) => return Ok(g),
                    Err(r) => best = best.min(r),
                }
                tried = 1 << g;
            }
        }
        let youngest_first = exclude.is_some() || self.cfg.scheduler == SchedPolicy::Cggty;
        debug_assert!(self.subcores[sc]
            .warps
            .windows(2)
            .all(|p| self.iss[p[0]].age < self.iss[p[1]].age));
        debug_assert!(self.subcores[sc]
            .warps
            .iter()
            .enumerate()
            .all(|(r, &w)| self.age_rank[w] as usize == r));
        // The other candidates youngest (oldest) first, as bits of their age rank
        // (`Sm::age_rank`): the walk costs one step per candidate, not per warp.
        let left = go & !tried & !exclude.map_or(0, |w| 1u64 << w);
        // With the memory queue full, a warp whose head is a memory instruction cannot issue
        // and gives `MemQueueFull` or a later reason (`ready`): once `best` is that low and
        // only such warps are left, the walk's result is known. (The warps not visited keep
        // their cached flags; the next full evaluation recomputes them the same way.)
        let mem_full = self.mem_queue_full(sc);
        if mem_full && left & !self.mem_head == 0 {
            if let Some(best) = self.mem_full_walk(ex, sc, now, left, best) {
                return Err(best);
            }
        }
        let mut unvisited = left;
        let mut ranks = 0u64;
        let mut bits = left;
        while bits != 0 {
            let slot = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            ranks |= 1u64 << self.age_rank[slot];
        }
        while ranks != 0 {
            if mem_full && best <= StallReason::MemQueueFull && unvisited & !self.mem_head == 0 {
                if cfg!(debug_assertions) {
                    self.assert_mem_full_walk(ex, sc, now, unvisited);
                }
                break;
            }
            let rank = if youngest_first {
                63 - ranks.leading_zeros() as usize
            } else {
                ranks.trailing_zeros() as usize
            };
            ranks &= !(1u64 << rank);
            let slot = self.rank_slot[sc][rank] as usize;
            debug_assert_eq!(slot, self.subcores[sc].warps[rank]);
            unvisited &= !(1u64 << slot);
            match self.ready(ex, sc, slot, now) {
                Ok(()) => return Ok(slot),
                Err(r) => best = best.min(r),
            }
        }
        Err(best)
    }

    /// The walk when every candidate of `left` has a memory instruction at its head and the
    /// memory queue is full: none can issue and the result is the lowest reason, so their
    /// order does not matter; they are checked in slot order (no ranks to build) until one
    /// gives `MemQueueFull`. None if one was ready after all (cannot happen, `ready`; the
    /// walk in the policy's order then decides).
    fn mem_full_walk<E: Executor<Writes = W>>(
        &mut self,
        ex: &E,
        sc: usize,
        now: u64,
        left: u64,
        mut best: StallReason,
    ) -> Option<StallReason> {
        let mut bits = left;
        while bits != 0 && best > StallReason::MemQueueFull {
            let slot = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            match self.ready(ex, sc, slot, now) {
                Err(r) => best = best.min(r),
                Ok(()) => {
                    debug_assert!(false, "warp slot {slot} ready with the memory queue full");
                    return None;
                }
            }
        }
        if cfg!(debug_assertions) {
            self.assert_mem_full_walk(ex, sc, now, bits);
        }
        Some(best)
    }

    /// Debug check of a walk cut short with the memory queue full: what the rest of it would
    /// have found for the warps of `left` (its flag caching does not change results).
    fn assert_mem_full_walk<E: Executor<Writes = W>>(&mut self, ex: &E, sc: usize, now: u64, left: u64) {
        let mut bits = left;
        while bits != 0 {
            let slot = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let r = self.ready(ex, sc, slot, now);
            debug_assert!(
                r.is_err_and(|r| r >= StallReason::MemQueueFull),
                "warp slot {slot}: {r:?} with the memory queue full"
            );
        }
    }

    /// The second half of the issue stage: the constant-cache wait, the policy's choice,
    /// and the issue of the chosen warp.
    fn choose_and_issue<E: Executor<Writes = W>>(
        &mut self,
        ex: &mut E,
        sc: usize,
        now: u64,
        ready: &[usize],
        best: StallReason,
    ) -> Result<u64, String> {
        // When nothing is ready: the earliest time the readiness checks may change
        // (`Sm::wake_by`), and below the constant-cache wait's.
        let mut wake = self.wake_at;
        // L0 fixed-latency constant cache: a miss blocks issue (rule 13).
        let mut exclude = None;
        if let Some(ConstWait {
            slot: wslot,
            since,
            line,
            ready_at,
        }) = self.subcores[sc].const_wait
        {
            let switch_at = since + self.cfg.const_miss_switch_cycles as u64;
            if now >= ready_at {
                self.subcores[sc].l0c.fill(line);
                self.subcores[sc].const_wait = None;
                wake = ACTED;
            } else if now < switch_at {
                self.count_stall(StallReason::ConstCacheMiss);
                return Ok(wake.min(ready_at).min(switch_at));
            } else {
                exclude = Some(wslot);
                wake = wake.min(ready_at);
            }
        }
        let chosen = if exclude.is_some() {
            // Switch to the youngest ready warp.
            ready
                .iter()
                .copied()
                .filter(|&x| Some(x) != exclude)
                .max_by_key(|&x| self.iss[x].age)
        } else {
            self.pick(sc, now, ready, None)
        };
        let Some(slot) = chosen else {
            let reason = if exclude.is_some() {
                StallReason::ConstCacheMiss
            } else {
                best
            };
            self.count_stall(reason);
            return Ok(wake);
        };
        // The chosen warp passed its readiness check this cycle: its head is known.
        let v = &self.iss[slot];
        if v.head_ready == u64::MAX || v.head_idx == NO_HEAD {
            return Err(self.no_instruction_error(slot));
        }
        let sidx = v.head_idx as usize;
        if self.code[sidx].fixed && !self.cfg.perfect_const_cache {
            if let Some(ConstAddr { bank, offset }) = self.code[sidx].const_operand {
                let line = self.subcores[sc].l0c.line_of((bank as u64) << 32 | offset);
                if self.subcores[sc].l0c.probe(line) {
                    self.stats.l0c_hits += 1;
                } else if exclude.is_none() {
                    // The miss goes to the SM's L1 instruction/constant cache through the
                    // sub-core's request queue and the round-robin L1 arbiter (M25 A6,
                    // Fig. 3; T4P: the second constant level is the L1 I-cache).
                    self.stats.l0c_misses += 1;
                    let l1line = self.const_l1_line(bank, offset);
                    self.subcores[sc].l1_queue.push_back(l1line);
                    self.l1i_queued |= 1 << sc;
                    self.subcores[sc].const_wait = Some(ConstWait {
                        slot,
                        since: now,
                        line,
                        ready_at: u64::MAX,
                    });
                    self.sc_busy[sc] = true;
                    self.count_stall(StallReason::ConstCacheMiss);
                    return Ok(ACTED);
                } else {
                    // The switched-to warp misses too (the line in flight is usually the
                    // same): it stays the choice and keeps missing until the line is there
                    // (`wake` includes `ready_at`), unless a warp checked before it becomes
                    // ready (their times are in `wake`) or a touch.
                    self.count_stall(StallReason::ConstCacheMiss);
                    return Ok(wake);
                }
            }
        }
        self.do_issue(ex, sc, slot, sidx, now)?;
        Ok(ACTED)
    }
    pub(crate) fn do_issue<E: Executor<Writes = W>>(
        &mut self,
        ex: &mut E,
        sc: usize,
        slot: usize,
        sidx: usize,
        now: u64,
    ) -> Result<(), String> {
        // Results reach fixed-latency consumers through the result queue's bypass; memory
        // instructions read the register file one cycle later (M25 rule 24, Listing 3).
        // Other variable-latency instructions (MUFU, conversions) read like fixed-latency
        // ones: the compiler places FFMA → F2I at stall 4 (docs/model.md).
        let fixed = !self.code[sidx].reads_late();
        let read_delay = self.code[sidx].read_delay as u64;
        // Commit results that are visible to this consumer.
        {
            let id = self.warps[slot].exec_id;
            // A fixed-latency producer of this warp may still sit in Control or Allocate when
            // its result is due (a latency-2 `ULDC` whose consumer issues two cycles later, in
            // the cycle the producer enters Allocate): its value is visible on the compiler's
            // schedule all the same (docs/model.md, "Results delayed in Allocate").
            let sc = self.warps[slot].subcore;
            let extra = if fixed {
                0
            } else {
                self.cfg.var_consumer_extra_cycles as u64
            };
            for which in 0..2 {
                let s = &self.subcores[sc];
                let Some(st) = (if which == 0 { s.control } else { s.allocate }) else {
                    continue;
                };
                let p = &self.code[st.sidx];
                let due = st.issue + p.latency as u64 + if p.uniform_dest { 0 } else { extra };
                if st.slot == slot && p.fixed && p.mem.is_none() && due <= now + read_delay {
                    self.commit_slot(ex, id, st.writes);
                    // Committed: the pending entry Allocate makes for it commits nothing.
                    let s = &mut self.subcores[sc];
                    let latch = if which == 0 {
                        &mut s.control
                    } else {
                        &mut s.allocate
                    };
                    if let Some(l) = latch {
                        l.writes = COMMITTED;
                    }
                }
            }
            let mut i = 0;
            while i < self.warps[slot].pending.len() {
                let p = self.warps[slot].pending[i];
                let vis = if fixed { p.visible_fixed } else { p.visible_mem };
                if vis <= now + read_delay {
                    self.warps[slot].pending.remove(i);
                    self.commit_slot(ex, id, p.slab);
                } else {
                    i += 1;
                }
            }
        }
        // A source whose fixed-latency producer's result is still not visible is read stale
        // (MICRO'25 Listing 2: the program sees the old value). Counted, with examples, so a
        // researcher sees where control bits and the model disagree.
        if !self.warps[slot].pending.is_empty() {
            let reads = &self.code[sidx].reads;
            if let Some(p) = self.warps[slot]
                .pending
                .iter()
                .find(|p| self.code[p.inst].writes.iter().any(|x| reads.contains(x)))
            {
                let producer = p.inst;
                self.count_stale_read(now, sidx, producer);
            }
        }
        // The SM's clock counter counts from its first CTA (`Sm::start_at`).
        let clock = now - self.clock_origin + self.cfg.control_stage_cycles as u64;
        let id = self.warps[slot].exec_id;
        // The executor writes into a slab record (no record moved per instruction).
        let wslot = self.alloc_slab::<E>();
        if let Err(e) = ex.issue(id, clock, &mut self.slab[wslot]) {
            self.free_slab_record(wslot);
            return Err(e);
        }
        let issued = &self.slab[wslot];
        let (active_mask, issued_pc, exited) = (issued.active_mask, issued.pc, issued.exited);
        if self.code[sidx].bulk {
            self.start_bulk_copy(ex, now);
        }
        let inst = &self.code[sidx];
        let ctrl = inst.ctrl;
        let special = inst.special;
        let unit = inst.unit;
        let latch = inst.latch_cycles as u64;
        let is_mem = inst.mem.is_some();
        let is_fixed = inst.fixed;
        self.stats.warp_insts += 1;
        self.stats.thread_insts += active_mask.count_ones() as u64;
        self.stats.issue_slots_used += 1;
        if is_mem {
            self.stats.mem_insts += 1;
        }
        if self.record {
            self.record_issue(slot, sidx, now, issued_pc, clock);
        }
        let cbits = self.uses_control_bits;
        let unit = if is_fixed && !is_mem {
            self.latch_unit(sc, unit)
        } else {
            unit
        };
        let shared = self.unit_shared(unit);
        let s = &mut self.subcores[sc];
        s.last_issued = Some(slot);
        s.last_issue_cycle = now;
        if special == Special::ClockRead {
            s.last_clock_issue = Some(now);
        }
        if is_fixed && !is_mem {
            if shared {
                let ii = self.cfg.units[unit].initiation_interval.max(1) as u64;
                self.shared_unit_free[unit] = now + latch.max(ii);
            } else {
                s.unit_free[unit] = now + latch;
            }
        }
        if is_mem {
            s.mem_occupancy += 1;
        }
        let stage = Stage {
            slot,
            sidx,
            issue: now,
            writes: wslot,
            entered: now,
        };
        let s = &mut self.subcores[sc];
        s.control = Some(stage);
        self.sc_busy[sc] = true;
        let cfg_expiry = self.cfg.stall_expiry;
        let gt11 = self.cfg.stall_gt11_without_yield_cycles as u64;
        let special_threshold = self.cfg.stall_special_threshold as u64;
        let errbar = self.cfg.errbar_stall_cycles as u64;
        let depbar_delay = self.cfg.depbar_effect_delay as u64;
        let gmma_depbar_delay = self.cfg.warpgroup_depbar_effect_delay as u64;
        self.warps[slot].ib.pop_front();
        self.sync_head(slot);
        self.sync_room(slot);
        let w = &mut self.warps[slot];
        if !is_fixed || is_mem {
            w.inflight_ops += 1;
        }
        if cbits {
            let stall = ctrl.stall as u64;
            let mut until = match cfg_expiry {
                StallExpiry::Listing2 => now + stall.max(1),
                StallExpiry::Figure4 => now + stall + 1,
            };
            if stall > special_threshold && !ctrl.yield_ {
                until = now + gt11;
            }
            if (special == Special::Errbar || special == Special::SelfBranch) && stall == 0 && ctrl.yield_ {
                until = now + errbar;
            }
            let v = &mut self.iss[slot];
            v.stall_until = until;
            if ctrl.yield_ {
                v.no_issue_at = now + 1;
            }
            if let Special::Depbar { sb, le, ids } = special {
                // WARPGROUP.DEPBAR.LE gsb0 has its own delay (`issue.warpgroup_depbar_effect_cycles`,
                // 1: it holds the next instruction whatever its own stall count; ptxas 13.5
                // gives it stall 2 before a BAR.SYNC and the next k tile's HGMMA reading the
                // same accumulators, workloads/programs/wgmma_gemm).
                let delay = if sb == crate::inst::GMMA_GROUP_SB {
                    gmma_depbar_delay
                } else {
                    depbar_delay
                };
                v.depbar_from = now + delay;
                v.depbar = DepbarCond { sb, le, ids };
            }
        } else {
            self.iss[slot].stall_until = now + 1;
            self.scoreboard_issue(slot, sidx, !is_fixed || is_mem);
        }
        if exited {
            self.warp_exited(slot);
        }
        self.iss[slot].maybe_blocked = ex.blocked(id);
        self.hot[slot] &= !(HOT_DEP_WAIT | HOT_SB_CLEAR);
        self.sync_masks(slot);
        // A warp whose next PC holds no instruction ran off its code (no EXIT on that path).
        if let Some(next) = ex.next_pc(id) {
            if self.index_of(next).is_none() {
                return Err(past_code_error(id, next));
            }
        }
        // The engine executed the instruction: if the warp's next PC is not the next one
        // fetched (taken branch, reconvergence), flush and redirect fetch.
        self.redirect_if_needed(ex, slot);
        // Results still pending are committed at the warp's next issue at the earliest (an
        // entry whose record was committed early holds no record: `COMMITTED`).
        let id = self.warps[slot].exec_id;
        for p in &self.warps[slot].pending {
            self.prefetch_commit_of(ex, id, p.inst, p.slab);
        }
        Ok(())
    }

    // The rare parts of an issue, out of line so that the common path stays compact in the
    // instruction cache (`#[cold]` also tells the compiler which branches are unlikely).

    /// The error of a chosen warp without an instruction at its head.
    #[cold]
    #[inline(never)]
    fn no_instruction_error(&self, slot: usize) -> String {
        let pc = self.warps[slot].ib.front().map(|x| x.pc).unwrap_or_default();
        format!("no instruction at pc {pc:#x}")
    }

    /// Count a source read stale (its producer `producer`'s result not yet visible to the
    /// consumer `sidx`), with an example while there are fewer than `STALE_EXAMPLES`.
    #[cold]
    #[inline(never)]
    fn count_stale_read(&mut self, now: u64, sidx: usize, producer: usize) {
        self.stats.stale_reads += 1;
        if self.stats.stale_read_examples.len() < crate::stats::STALE_EXAMPLES {
            self.stats.stale_read_examples.push(crate::stats::StaleRead {
                cycle: now,
                consumer_pc: self.code[sidx].pc,
                producer_pc: self.code[producer].pc,
            });
        }
    }

    /// A bulk (TMA) instruction issued: its copy starts in the SM's TMA unit.
    #[cold]
    #[inline(never)]
    fn start_bulk_copy<E: Executor<Writes = W>>(&mut self, ex: &mut E, now: u64) {
        if let Some(b) = ex.take_bulk() {
            self.tma
                .push(b, now, u64::from(self.cfg.mem.tma_setup.unwrap_or(0)));
        }
    }

    /// Recording runs (`trace record`, the listings' tests): the issue in the warp's log.
    #[cold]
    #[inline(never)]
    fn record_issue(&mut self, slot: usize, sidx: usize, now: u64, pc: u64, clock: u64) {
        let inst = &self.code[sidx];
        let op = inst.op.clone();
        let clock_read = inst.special == Special::ClockRead;
        let cycle = now - self.clock_origin;
        let w = &mut self.warps[slot];
        w.log.issues.push(crate::state::IssueRec { cycle, pc, op });
        if clock_read {
            w.log.clocks.push(clock);
        }
    }

    /// The warp in `slot` executed its EXIT: no longer live; it retires once its memory
    /// operations are back (`drained`).
    #[cold]
    #[inline(never)]
    fn warp_exited(&mut self, slot: usize) {
        self.warps[slot].exited = true;
        self.hot[slot] &= !HOT_LIVE;
        self.sync_masks(slot);
        self.exited |= 1 << slot;
        if self.warps[slot].inflight_ops == 0 {
            self.drained |= 1 << slot;
        }
    }
}

/// The error of a warp whose next pc is past the kernel's code.
#[cold]
#[inline(never)]
fn past_code_error(id: u32, next: u64) -> String {
    format!("warp {id} continues at pc {next:#x}, past the kernel's code (a path without EXIT?)")
}
