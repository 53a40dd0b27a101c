//! The functional engine as the timing model's [`Executor`].

use sassim_functional::{KernelExec, PendingWrites, Space, WarpId, WarpStatus};
use sassim_timing::exec::{Executor, Issued, MemAccess};
use sassim_timing::inst::MemSpace;

pub struct EngineExec<'a> {
    pub k: &'a mut KernelExec,
    /// Instructions issued so far.
    pub issued: u64,
    /// Called after each CTA's warps are created (microbenchmark initialisation).
    pub on_cta: crate::OnCta<'a>,
    /// Keep the registers of finished CTAs (to report them).
    pub keep_cta_state: bool,
    /// Register writes that changed a value (deadlock detection: spinning warps rewrite
    /// the same values, a loop that computes does not).
    pub reg_changes: u64,
    /// The engine's issue record, reused for every instruction (boxed: ~1.2 KB).
    pub scratch: Box<sassim_functional::Issued>,
}

/// Where a warp of `k` is, for deadlock reports.
pub(crate) fn describe_warp(k: &KernelExec, w: WarpId) -> String {
    k.stuck_reason(w).unwrap_or_else(|| match k.warp_state(w) {
        WarpStatus::AtBarrier { id } => format!("waiting at barrier {id}"),
        WarpStatus::Exited => "exited".into(),
        _ => format!(
            "running at pc {:#x} with mask {:#010x}",
            k.next_pc(w).unwrap_or(0),
            k.next_mask(w).unwrap_or(0)
        ),
    })
}

/// Whether a warp of `k` waits at a barrier or is otherwise blocked by the engine.
pub(crate) fn warp_blocked(k: &KernelExec, w: WarpId) -> bool {
    matches!(
        k.warp_state(w),
        WarpStatus::AtBarrier { .. } | WarpStatus::Blocked
    )
}

/// Copy the used parts of the engine's issue record `i` into the timing model's `out`.
pub(crate) fn copy_issued(i: &sassim_functional::Issued, out: &mut Issued<PendingWrites>) {
    out.pc = i.pc;
    out.index = i.index;
    out.active_mask = i.active_mask;
    out.exited = i.exited;
    out.writes.copy_from(&i.writes);
    match &i.mem {
        None => out.mem = None,
        Some(m) => {
            let space = match m.space {
                Space::Global => MemSpace::Global,
                Space::Shared => MemSpace::Shared,
                Space::Local => MemSpace::Local,
                _ => MemSpace::Const,
            };
            let o = out.mem.get_or_insert_with(|| MemAccess::blank(space));
            o.space = space;
            o.addrs = m.addrs;
            o.active = i.active_mask;
            o.bytes_per_lane = m.bytes_per_lane;
            o.remote = m.remote;
        }
    }
}

impl crate::KernelSource for EngineExec<'_> {
    type Writes = PendingWrites;

    fn tick_sms(
        &mut self,
        sms: &mut [sassim_timing::Sm<PendingWrites>],
        notes: &mut [crate::parallel::SmNote],
        _threads: &crate::parallel::Threads,
        cycle: u64,
    ) -> Result<(), String> {
        // One executor owns every warp and the global memory: the SMs tick in order.
        crate::parallel::tick_in_order(self, sms, notes, cycle)
    }

    fn num_ctas(&self) -> u32 {
        self.k.launch().num_ctas()
    }
    fn warps_per_cta(&self) -> u32 {
        self.k.launch().warps_per_cta()
    }
    fn threads_per_cta(&self) -> u32 {
        self.k.launch().threads_per_cta()
    }
    fn clusters(&self) -> sassim_functional::cluster::ClusterGeom {
        self.k.launch().clusters()
    }
    fn start_cta(&mut self, _sm: usize, id: u32) -> Vec<(u32, u32)> {
        let warps = self.k.start_cta(id);
        if let Some(f) = self.on_cta.as_mut() {
            f(self.k, &warps);
        }
        warps.iter().map(|w| (w.0, self.k.warp_location(*w).1)).collect()
    }
    fn retire_cta(&mut self, warp: u32) {
        if !self.keep_cta_state {
            self.k.retire_cta_of(WarpId(warp));
        }
    }
    fn issued(&self) -> u64 {
        self.issued
    }
    fn progress(&self) -> u64 {
        self.k.progress_counter() + self.reg_changes
    }
    fn hard_progress(&self) -> Option<u64> {
        Some(self.k.progress_counter())
    }
    fn set_livelock_probes(&mut self, on: bool) {
        self.k.set_livelock_probes(on);
    }
    fn livelock_tally(&self) -> sassim_functional::ProbeTally {
        self.k.livelock_tally()
    }
    fn describe(&self, warp: u32) -> String {
        describe_warp(self.k, WarpId(warp))
    }
}

impl Executor for EngineExec<'_> {
    type Writes = PendingWrites;

    fn next_pc(&self, warp: u32) -> Option<u64> {
        self.k.next_pc(WarpId(warp))
    }

    fn blocked(&self, warp: u32) -> bool {
        warp_blocked(self.k, WarpId(warp))
    }

    fn issue(&mut self, warp: u32, clock: u64, out: &mut Issued<PendingWrites>) -> Result<(), String> {
        // The engine's record is reused (no record built per instruction); only its used
        // parts are copied into the timing model's.
        let i = &mut *self.scratch;
        self.k
            .issue_into(WarpId(warp), clock, i)
            .map_err(|e| e.to_string())?;
        self.issued += 1;
        copy_issued(i, out);
        Ok(())
    }

    fn take_bulk(&mut self) -> Option<sassim_timing::exec::BulkCopy> {
        self.k
            .take_bulk()
            .map(|(id, chunks, store)| sassim_timing::exec::BulkCopy { id, chunks, store })
    }

    fn bulk_done(&mut self, id: u32) -> Result<(), String> {
        self.k.bulk_done(id).map_err(|e| e.to_string())
    }

    fn prefetch_commit(&self, warp: u32, writes: &PendingWrites, regs: &[sassim_isa::ArchReg]) {
        prefetch_commit(self.k, WarpId(warp), writes, regs);
    }

    fn commit(&mut self, warp: u32, writes: &PendingWrites) {
        // Register writes that change a value count as progress (deadlock detection).
        let changed = self.k.commit_changed(WarpId(warp), writes);
        self.reg_changes += u64::from(changed);
    }
}

/// [`Executor::prefetch_commit`] of the functional engine's executors: `writes`' record and
/// warp `w`'s rows of the registers it writes.
#[inline]
pub(crate) fn prefetch_commit(
    k: &KernelExec,
    w: WarpId,
    writes: &PendingWrites,
    regs: &[sassim_isa::ArchReg],
) {
    writes.prefetch(regs.len());
    for r in regs {
        if let sassim_isa::ArchReg::R(i) = *r {
            k.prefetch_row(w, i);
        }
    }
}
