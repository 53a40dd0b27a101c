//! Sub-core sleep: skipping the cycles of a sub-core in which nothing can change.
//!
//! On a loaded GPU most cycles of most sub-cores change nothing: every warp waits on its
//! stall counter, its next instruction, a full memory queue or its dependence counters, and
//! the instructions in the pipeline wait for their next step. Running every stage of such a
//! sub-core every cycle only finds that again (and counts the same stall reason).
//!
//! So each stage of a sub-core's cycle says when it could next act: [`ACTED`] when it did
//! something this cycle, otherwise the first cycle at which a time it waits for is reached
//! ([`NEVER`] when only something outside the sub-core can end its wait), and the readiness
//! check of each warp records the times at which its answer could change
//! (`Sm::wake_by`). When the earliest of these is more than a cycle ahead, the sub-core
//! sleeps until then: its cycles only count the stall reason its last evaluated cycle
//! counted, which is what each of them would count.
//!
//! Whatever changes a sub-core's state from outside its own stages wakes it (`Sm::touch_sc`):
//! every change of a warp's readiness flags or instruction-buffer head (`sync_masks`,
//! `sync_head`), every event of one of its warps or its I-cache lines, memory completions,
//! the memory and L1 I-cache arbiters taking its requests, dependence-counter increments
//! becoming visible, warps retiring or arriving, and TMA copies. A cross-sub-core effect that
//! could make a warp issue earlier (a barrier) is never slept through: a warp blocked at a
//! barrier keeps its sub-core awake.
//!
//! Sleeping is off for the two-level scheduler, LTRF and scoreboard dependences (their
//! per-cycle checks look at more state), and with `Sm::skip_idle_subcores` false. Debug
//! builds evaluate the sleeping cycles all the same and assert that they change nothing and
//! count the sleep's reason.
//!
//! **SMs that skip cycles.** A whole SM is quiet in a cycle when none of its warps can issue
//! or fetch, no sub-core's pipeline holds work and nothing else is pending (`Sm::quiet`): its
//! tick only counts each sub-core's blocked stall. Its cycles are as empty when every
//! sub-core sleeps and neither arbiter, retirement nor the TMA has work: its tick only counts
//! the sleeping sub-cores' stalls, and the memory arbiter's retries of fronts the L1 rejected
//! (each counted again). After a tick that leaves the SM so, it stays so until its next
//! event, memory completion, sub-core wake-up or memory grant (`Sm::quiet_until`), unless
//! something from outside changes it: responses for its L1, a warp launched on it, or (with
//! a rejected front) its L1 sending a request. The engines (`sassim_gpu` `parallel.rs`) do
//! not call `tick` in those cycles, without reading the SM's record, and catch up before its
//! next tick or at the end of the kernel (`Sm::skip_quiet_to`: the same stall counts, sleep
//! counts, retries and cycle count as the skipped ticks). On the loaded vector add half of
//! the SM-cycles are quiet and a third of the rest asleep; on the memory-bound gather most
//! SM-cycles are asleep with rejected fronts. Debug builds tick every such cycle and assert
//! that it changed nothing else (`Sm::skip_digest`) and that the rejected fronts would be
//! rejected again.

use crate::exec::Executor;
use crate::sm::Sm;
use crate::stats::StallReason;

/// A stage's answer: it did something this cycle (the sub-core cannot sleep).
pub(crate) const ACTED: u64 = 0;
/// A stage's answer: nothing it waits for is a time; only a change from outside (a touch)
/// or another stage of the sub-core can end its wait.
pub(crate) const NEVER: u64 = u64::MAX;

/// A sleeping sub-core: it skips its cycles before `until`, counting `reason` in each.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SubCoreSleep {
    pub(crate) until: u64,
    pub(crate) reason: StallReason,
}

impl SubCoreSleep {
    pub(crate) const AWAKE: SubCoreSleep = SubCoreSleep {
        until: 0,
        reason: StallReason::Idle,
    };
}

impl<W> Sm<W> {
    /// A readiness check found that its answer may change at cycle `t`.
    #[inline(always)]
    pub(crate) fn wake_by(&mut self, t: u64) {
        self.wake_at = self.wake_at.min(t);
    }

    /// Something outside sub-core `sc`'s stages changed its state: it runs its next cycle.
    #[inline(always)]
    pub(crate) fn touch_sc(&mut self, sc: usize) {
        self.sleep[sc].until = 0;
    }

    /// As [`Sm::touch_sc`] for the sub-core of warp slot `slot`.
    #[inline(always)]
    pub(crate) fn touch_slot(&mut self, slot: usize) {
        let sc = self.slot_sc[slot] as usize;
        self.sleep[sc].until = 0;
    }

    /// Wake every sub-core.
    pub(crate) fn touch_all(&mut self) {
        for s in self.sleep.iter_mut() {
            s.until = 0;
        }
    }

    /// Count a cycle of sub-core `sc` in which it issued nothing, for `reason`.
    #[inline(always)]
    pub(crate) fn count_stall(&mut self, reason: StallReason) {
        self.count_stalls(reason, 1);
    }

    /// [`Sm::count_stall`] for `k` cycles.
    #[inline(always)]
    fn count_stalls(&mut self, reason: StallReason, k: u64) {
        self.stats.stall_slots[reason as usize] += k;
        self.last_stall = reason;
    }

    /// Move the SM's clock `k` cycles on (its cycle count with it).
    #[inline(always)]
    pub(crate) fn advance_clock(&mut self, k: u64) {
        self.now += k;
        self.stats.cycles = self.now - self.clock_origin;
    }

    /// Count `k` quiet cycles (see [`Sm::quiet_until`]): each sub-core's blocked stall,
    /// and the SM's clock.
    #[inline]
    pub(crate) fn quiet_cycles(&mut self, k: u64) {
        for sc in 0..self.subcores.len() {
            let reason = self.blocked_reason(sc);
            self.count_stalls(reason, k);
        }
        self.advance_clock(k);
    }

    /// Count `k` cycles in which every sub-core sleeps and nothing else acts (see
    /// [`Sm::quiet_until`]): what each sleeping sub-core counts, and the SM's clock.
    fn asleep_cycles(&mut self, k: u64) {
        for sc in 0..self.subcores.len() {
            debug_assert!(
                self.now + k <= self.sleep[sc].until,
                "sub-core {sc} woke while skipped"
            );
            self.stats.stall_slots[self.sleep[sc].reason as usize] += k;
            self.slept_cycles += k;
        }
        self.advance_clock(k);
    }

    /// After a tick: the first cycle whose tick may act if nothing from outside changes the
    /// SM (its L1's responses, a warp launched on it), when its ticks until then would do
    /// nothing but count stalls. That holds when it is quiet (`Sm::quiet`: no warp can issue
    /// or fetch, empty pipelines; until its next event or memory completion), or when every
    /// sub-core sleeps and neither arbiter, retirement nor the TMA has work (until the
    /// earliest of those, its sub-cores' wake-ups and the memory arbiter's next grant); a
    /// memory-queue front the memory rejected is retried every cycle, and those retries
    /// are counted when the SM catches up, so the SM must tick again once its L1 sends a
    /// request ([`Sm::has_rejected_front`]) or takes a response.
    /// 0 when its next tick may act, when it is idle (then it is not ticked), or when
    /// skipping idle work is off (`Sm::skip_idle_subcores`). [`Sm::skip_quiet_to`] counts
    /// the skipped cycles as their ticks would.
    #[inline]
    pub fn quiet_until(&self) -> u64 {
        // An idle SM is not ticked at all (and counts nothing).
        if !self.skip_idle_subcores || self.is_idle() {
            return 0;
        }
        let until = self.events.next_at().min(self.mem_done_from);
        if self.quiet() {
            return until;
        }
        if !self.may_sleep()
            || self.l1i_queued != 0
            || !self.staged.is_empty()
            || self.drained != 0
            || !self.tma.is_empty()
        {
            return 0;
        }
        // An awake sub-core's `until` is 0.
        let subcores = self.sleep[..self.subcores.len()]
            .iter()
            .fold(until, |u, s| u.min(s.until));
        if subcores <= self.now {
            return 0;
        }
        subcores.min(self.arbiter_next())
    }

    /// Bring an SM that was not ticked since [`Sm::quiet_until`] let it skip cycles to
    /// cycle `cycle`: the stall counts and cycles of the ticks it skipped. Nothing when it
    /// is at `cycle` already.
    pub fn skip_quiet_to(&mut self, cycle: u64) {
        if cycle > self.now {
            let k = cycle - self.now;
            self.quiet_skipped += k;
            if self.quiet() {
                self.quiet_cycles(k);
            } else {
                self.count_skipped_retries(self.now, cycle);
                self.asleep_cycles(k);
            }
        }
    }

    /// Cycles in which the engine did not tick the SM (see [`Sm::quiet_until`]). A measure
    /// of the simulator's work, not of the GPU: results are the same either way.
    pub fn quiet_skipped(&self) -> u64 {
        self.quiet_skipped
    }

    /// Debug builds, where the engine ticks the cycles it would skip (to check them): what
    /// such a tick must leave unchanged (everything but the stall counts, the SM's clock
    /// and the sleep counters).
    #[cfg(debug_assertions)]
    pub fn skip_digest(&self) -> String {
        use std::fmt::Write;
        let mut d = String::new();
        for sc in 0..self.subcores.len() {
            d += &self.sleep_digest(sc);
            let _ = write!(d, "|sleep {} {:?}", self.sleep[sc].until, self.sleep[sc].reason);
        }
        let _ = write!(
            d,
            "|{} {} {} {} {} {} {} {:?} {} {} {} {} {} {}",
            self.go,
            self.waiting,
            self.room,
            self.mem_head,
            self.exited,
            self.drained,
            self.arb_free,
            self.arb_front,
            self.arb_rr,
            self.l1i_rr,
            self.l1i_queued,
            self.used_warps,
            self.next_age,
            self.mem_done_from
        );
        d
    }

    /// Debug builds: count a checked tick (see [`Sm::skip_digest`]) as skipped.
    #[cfg(debug_assertions)]
    pub fn count_checked_skip(&mut self) {
        self.quiet_skipped += 1;
    }

    /// Whether the configuration lets sub-cores sleep (see the module).
    pub(crate) fn may_sleep(&self) -> bool {
        self.skip_idle_subcores
            && self.uses_control_bits
            && !self.ltrf_enabled()
            && self.cfg.scheduler != crate::config::SchedPolicy::TwoLevel
    }

    /// Run sub-core `sc`'s cycle: its pipeline stages, issue and fetch, or only its stall
    /// count while it sleeps (debug builds run the stages anyway and check).
    pub(crate) fn subcore_cycle<E: Executor<Writes = W>>(
        &mut self,
        ex: &mut E,
        sc: usize,
        now: u64,
    ) -> Result<(), String> {
        let asleep = self.sleep[sc];
        if now < asleep.until {
            self.slept_cycles += 1;
            if !cfg!(debug_assertions) {
                self.stats.stall_slots[asleep.reason as usize] += 1;
                return Ok(());
            }
            // Debug builds: run the cycle and check that sleeping through it was right.
            let before = self.sleep_digest(sc);
            self.stages(ex, sc, now)?;
            let after = self.sleep_digest(sc);
            debug_assert!(
                before == after,
                "sub-core {sc} slept through a cycle that changed it (cycle {now}, asleep until {}):\n{before}\n{after}",
                asleep.until
            );
            debug_assert_eq!(self.last_stall, asleep.reason, "sub-core {sc}, cycle {now}");
            self.sleep[sc] = asleep;
            return Ok(());
        }
        let wake = self.stages(ex, sc, now)?;
        self.sleep[sc] = if wake > now + 1 && self.may_sleep() {
            SubCoreSleep {
                until: wake,
                reason: self.last_stall,
            }
        } else {
            SubCoreSleep::AWAKE
        };
        Ok(())
    }

    /// The stages of sub-core `sc` for one cycle; returns the earliest cycle at which one of
    /// them could act again ([`ACTED`] if one did).
    #[inline(always)]
    fn stages<E: Executor<Writes = W>>(&mut self, ex: &mut E, sc: usize, now: u64) -> Result<u64, String> {
        // The issue stage's readiness checks add to this (`Sm::wake_by`).
        self.wake_at = NEVER;
        let mut wake = NEVER;
        if self.sc_busy[sc] {
            wake = wake.min(self.allocate_stage(sc, now));
            wake = wake.min(self.var_read_stage(sc, now));
            wake = wake.min(self.mem_addr_stage(sc, now));
            wake = wake.min(self.control_stage(sc, now));
            wake = wake.min(self.decode_stage(sc, now));
        } else if self.blocked(sc) {
            // Nothing in its pipeline, no warp that can issue or fetch: its issue and
            // fetch stages would do nothing but count this (and only a touch changes that).
            self.count_blocked(sc);
            return Ok(NEVER);
        }
        wake = wake.min(self.issue_stage(ex, sc, now)?);
        wake = wake.min(self.fetch_stage(sc, now));
        if self.sc_busy[sc] {
            self.sc_busy[sc] = self.subcores[sc].has_work();
        }
        Ok(wake)
    }

    /// Debug builds: what a sleeping cycle of sub-core `sc` must leave unchanged (its
    /// pipeline, its warps' fetch and issue state, the SM's events and statistics but the
    /// stall counts). The warps' cached readiness flags are left out: a check may set them
    /// without changing what the next check finds.
    fn sleep_digest(&self, sc: usize) -> String {
        use std::fmt::Write;
        let mut d = format!("{:?}", self.subcores[sc]);
        for &slot in &self.subcores[sc].warps {
            let w = &self.warps[slot];
            let v = &self.iss[slot];
            let _ = write!(
                d,
                "|{slot}: {:?} {} {} {} {:?} {:?} {} {} {} {} {} {} {:?} {:?} {}",
                w.ib,
                w.inflight_fetch,
                w.epoch,
                w.fetch_pc,
                w.fetch_wait_line,
                w.sb_staged,
                w.pending.len(),
                w.inflight_ops,
                w.exited,
                v.head_ready,
                v.stall_until,
                v.no_issue_at,
                v.sb,
                v.depbar_from,
                v.head_idx
            );
        }
        let mut stats = self.stats.clone();
        stats.stall_slots = Default::default();
        stats.cycles = 0;
        let _ = write!(
            d,
            "|{} {} {} {} {:?} {:?}",
            self.events.len(),
            self.event_seq,
            self.staged.len(),
            self.next_mem_id,
            self.sc_busy[sc],
            stats
        );
        d
    }
}
