//! CTAs on the SMs of one kernel launch: which CTAs are resident where ([`CtaSched`]), and
//! each SM's CTA launcher, which starts the CTAs the dispatcher sent and launches their warps
//! ([`Launchers`]; docs/model.md "Kernel launch and CTA dispatch").

use crate::parallel::{self, SmNote};
use crate::{launch, KernelSource, SimError};
use sassim_timing::Sm;

/// One resident CTA of an SM.
#[derive(Default)]
pub(crate) struct CtaSlot {
    used: bool,
    /// The executor ids of its warps that have not finished (capacity kept from one CTA to
    /// the next).
    warps: Vec<u32>,
}

/// CTA residency of one kernel launch: which CTAs run on which SM.
pub(crate) struct CtaSched {
    pub(crate) per_sm: u32,
    pub(crate) ctas_on_sm: Vec<u32>,
    /// The CTAs resident on each SM: `per_sm` slots per SM (SM `s`'s are
    /// `s * per_sm .. (s + 1) * per_sm`), sized once per launch.
    pub(crate) slots: Vec<CtaSlot>,
    pub(crate) start_pc: u64,
    pub(crate) slot_by_warp_index: bool,
    /// Warps a CTA occupies (its active warps).
    pub(crate) need: usize,
}

impl CtaSched {
    /// Start CTA `cta` on SM `sm` if it has room (CTA slots, and warp slots beyond the
    /// `pending` warps of started CTAs not launched yet): its warps are created in the
    /// executor and returned (executor id, index in the CTA) for the warp launcher.
    pub(crate) fn start<S: KernelSource>(
        &mut self,
        sm: usize,
        cta: u32,
        pending: usize,
        s: &Sm<S::Writes>,
        src: &mut S,
    ) -> Option<Vec<(u32, u32)>> {
        if self.ctas_on_sm[sm] >= self.per_sm || s.free_warp_slots() < self.need + pending {
            return None;
        }
        // Warps placed in the slot of their index within the CTA (microbenchmarks): a
        // second CTA would want the same slots, so an SM runs one such CTA at a time.
        if self.slot_by_warp_index && s.active_warps() > 0 {
            return None;
        }
        let per = self.per_sm as usize;
        // A free slot exists: fewer than `per_sm` CTAs are resident on the SM.
        let slot = self.slots[sm * per..(sm + 1) * per]
            .iter()
            .position(|c| !c.used)?;
        let warps = src.start_cta(sm, cta);
        let c = &mut self.slots[sm * per + slot];
        c.used = true;
        c.warps.clear();
        c.warps.extend(warps.iter().map(|&(w, _)| w));
        self.ctas_on_sm[sm] += 1;
        Some(warps)
    }

    /// SM `s`'s warps that finished in `cycle` (its step's `SmNote::finished`): each CTA they
    /// complete is retired from `src` and its completion sent to `disp`. Returns how many.
    pub(crate) fn retire_finished<S: KernelSource>(
        &mut self,
        s: usize,
        cycle: u64,
        sm: &mut Sm<S::Writes>,
        src: &mut S,
        disp: &mut launch::Dispatcher,
    ) -> u32 {
        let mut done = 0;
        for w in sm.drain_finished() {
            if self.warp_finished(s, w) {
                src.retire_cta(w);
                done += 1;
                disp.cta_finished(cycle + 1, s);
            }
        }
        done
    }

    /// Per SM, the fewest warps of a CTA resident on it that have not finished (`u32::MAX`
    /// without CTAs): fewer finished warps cannot have completed a CTA on it
    /// ([`crate::quantum::QuantumSteps::finish_budgets`]).
    pub(crate) fn finish_budgets(&self, out: &mut Vec<u32>) {
        out.clear();
        out.extend(self.slots.chunks(self.per_sm.max(1) as usize).map(|slots| {
            slots
                .iter()
                .filter(|c| c.used)
                .map(|c| c.warps.len() as u32)
                .min()
                .unwrap_or(u32::MAX)
        }));
    }

    /// Warp `w` of SM `sm` finished: whether it was the last of its CTA (the CTA's slot is
    /// then free).
    fn warp_finished(&mut self, sm: usize, w: u32) -> bool {
        let per = self.per_sm as usize;
        for c in self.slots[sm * per..(sm + 1) * per].iter_mut().filter(|c| c.used) {
            let Some(i) = c.warps.iter().position(|&e| e == w) else {
                continue;
            };
            c.warps.swap_remove(i);
            if c.warps.is_empty() {
                c.used = false;
                self.ctas_on_sm[sm] -= 1;
                return true;
            }
            return false;
        }
        false
    }

    /// The first `n` warps (by executor id) of the resident CTAs that have not finished
    /// (deadlock reports).
    pub(crate) fn running_warps(&self, n: usize) -> Vec<u32> {
        let mut ws: Vec<u32> = self.slots.iter().flat_map(|c| c.warps.iter().copied()).collect();
        ws.sort_unstable();
        ws.truncate(n);
        ws
    }

    /// Place a launched warp on its SM.
    pub(crate) fn add_warp<W>(&self, sm: &mut Sm<W>, w: &launch::WarpStart) -> Result<(), SimError> {
        let placed = if self.slot_by_warp_index {
            sm.add_warp_at(w.in_cta as usize, w.warp, self.start_pc)
        } else {
            sm.add_warp(w.warp, self.start_pc).is_some()
        };
        if placed {
            Ok(())
        } else {
            Err(SimError::Exec(format!(
                "no free warp slot for warp {} of CTA {} (slot {})",
                w.warp, w.cta, w.in_cta
            )))
        }
    }
}

/// The SMs' CTA launchers of one kernel launch ([`launch::SmLauncher`]), the SMs among them
/// with work, and the cycle of the kernel's first warp.
pub(crate) struct Launchers {
    timing: launch::LaunchTiming,
    sms: Vec<launch::SmLauncher>,
    /// The SMs whose launcher is not empty, a bit each (visited in SM order).
    waiting: Vec<u64>,
    /// The CTAs the dispatcher sent in the current cycle (reused).
    sent: Vec<launch::Dispatch>,
    pub(crate) first_warp: Option<u64>,
}

impl Launchers {
    pub(crate) fn new(timing: launch::LaunchTiming, num_sms: usize) -> Self {
        Launchers {
            timing,
            sms: vec![launch::SmLauncher::default(); num_sms],
            waiting: vec![0u64; num_sms.div_ceil(64)],
            sent: Vec::new(),
            first_warp: None,
        }
    }

    /// SM `s`'s launcher has CTAs or warps to start.
    pub(crate) fn has_work(&self, s: usize) -> bool {
        self.waiting.get(s / 64).is_some_and(|w| w >> (s % 64) & 1 == 1)
    }

    /// The work of cycle `cycle` before the SMs' steps: the dispatcher's (CTAs sent reach
    /// their SMs' launchers), then every launcher with work whose SM `steps` allows starts
    /// the CTAs that arrived and launches their warps, in SM order.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cycle<S: KernelSource>(
        &mut self,
        cycle: u64,
        disp: &mut launch::Dispatcher,
        cs: &mut CtaSched,
        sms: &mut [Sm<S::Writes>],
        notes: &mut [SmNote],
        src: &mut S,
        steps: impl Fn(usize) -> bool,
    ) -> Result<(), SimError> {
        self.sent.clear();
        disp.step(cycle, &mut self.sent);
        for d in &self.sent {
            // (Quanta: CTAs go only to SMs that step alone, `quantum::mark_alone`.)
            if !steps(d.sm) {
                return Err(SimError::Exec(format!(
                    "internal: CTA {} sent at cycle {cycle} to SM {}, which steps on its own in a quantum",
                    d.cta, d.sm
                )));
            }
            self.sms[d.sm].arrive(&self.timing, d);
            self.waiting[d.sm / 64] |= 1 << (d.sm % 64);
        }
        for (word, set) in self.waiting.iter_mut().enumerate() {
            let mut bits = *set;
            while bits != 0 {
                let s = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if !steps(s) {
                    // (Quanta: only SMs whose launcher is empty step on their own.)
                    return Err(SimError::Exec(format!(
                        "internal: SM {s}'s launcher has work at cycle {cycle} while the SM steps on its own in a quantum"
                    )));
                }
                let l = &mut self.sms[s];
                while let Some(cta) = l.ready_cta(cycle) {
                    // An SM skipping quiet cycles is brought to this one first.
                    parallel::catch_up(&mut sms[s], &mut notes[s], cycle);
                    let Some(warps) = cs.start(s, cta, l.warps_pending(), &sms[s], src) else {
                        break;
                    };
                    l.start_cta(&self.timing, cycle, &warps);
                }
                while let Some(w) = l.launch_due(cycle) {
                    parallel::catch_up(&mut sms[s], &mut notes[s], cycle);
                    if !sms[s].start_at(cycle) {
                        return Err(SimError::Exec(format!(
                            "SM {s} is at cycle {} when a warp is launched at {cycle}",
                            sms[s].now()
                        )));
                    }
                    cs.add_warp(&mut sms[s], &w)?;
                    self.first_warp.get_or_insert(cycle);
                }
                if l.is_empty() {
                    *set &= !(1 << (s % 64));
                }
            }
        }
        Ok(())
    }
}
