//! Ticking the SMs of one kernel on several threads, with results that do not depend on
//! the number of threads (issue 15; docs/performance.md "Parallel simulation of one kernel").
//!
//! Per cycle: (1) every SM ticks — its pipeline, its functional execution (its own shard of
//! the kernel, `sassim_functional` `exec/shard.rs`) — reading global memory as it was at
//! the start of the cycle, its L1 taking the responses due at its interconnect port and
//! pushing its requests there (`memsys::SmPorts`); the SMs are split into contiguous
//! groups, one per thread; the same threads tick the memory partitions' share of the
//! previous cycle alongside (`MemModel::with_partitions`: they touch nothing the SMs use);
//! (2) on one thread, in SM order: each shard's logged global stores and atomics are
//! applied and its `printf` text appended; then the CTA bookkeeping and the interconnect's
//! cycles, which move the ports' requests and responses. Nothing in (1) reads what another
//! SM or a partition writes in (1), so (1) gives the same state in any order, and (2) has
//! one order (docs/model.md "Determinism").

use crate::engine::{copy_issued, describe_warp, prefetch_commit, warp_blocked};
use sassim_functional::{GlobalMemory, KernelExec, PendingWrites, WarpId};
use sassim_timing::exec::{Executor, Issued};
use sassim_timing::Sm;

pub use crate::threads::{PartError, PartFn, Threads};

/// What the serial part of a cycle needs of one SM after its step, written by the thread
/// that ticked the SM: one small record per SM, so that the serial part reads a few cache
/// lines instead of every SM's and executor's records (which the other threads own).
#[derive(Debug, Clone, Copy, Default)]
pub struct SmNote {
    /// Warps on the SM before the tick (0 when it was idle): occupancy.
    pub active: u32,
    /// Progress events of the SM's executor part during the tick (deadlock detection).
    pub progress: u32,
    /// Not idle after the tick.
    pub busy: bool,
    /// Warps finished ([`Sm::drain_finished`]).
    pub finished: bool,
    /// The executor part has global effects or output for the serial part.
    pub output: bool,
    /// The L1 sent requests (into its outbox, or at its interconnect port).
    pub outbox: bool,
    /// The serial part left responses for the L1 (in its inbox, or due at its port):
    /// [`crate::memsys::before_tick`] or [`crate::memsys::before_tick_at`] has work.
    pub inbox: bool,
    /// The L1 or its bypass still has requests queued after the tick: the SM's next
    /// [`crate::memsys::after_tick`] has work even if the SM does not tick.
    pub queued: bool,
    /// The SM was left quiet by its last tick ([`Sm::quiet_until`]): it is not ticked
    /// before this cycle unless its L1 gets responses or a warp is launched on it (0: it
    /// ticks). While this is not 0 the SM's clock may be behind the GPU's
    /// ([`catch_up`]); when it is 0 the SM's clock is the GPU's.
    pub quiet_until: u64,
    /// The SM steps alone through the current quantum, in its serial part (`quantum.rs`,
    /// [`crate::quantum::mark_alone`]): a CTA may be sent to it, or its launcher has work.
    pub alone: bool,
    /// With `quiet_until`: the SM has a memory-queue front its L1 rejected
    /// ([`Sm::has_rejected_front`]), whose retries in the skipped cycles are counted when
    /// it catches up; once its L1 sends a request, it ticks again.
    pub quiet_retries: bool,
}

/// Bring SM `sm`, whose note is `note`, to cycle `cycle` if it skipped quiet cycles
/// ([`SmNote::quiet_until`]), before anything but its step reads or changes it.
#[inline]
pub fn catch_up<W>(sm: &mut Sm<W>, note: &mut SmNote, cycle: u64) {
    if note.quiet_until != 0 {
        sm.skip_quiet_to(cycle);
        note.quiet_until = 0;
    }
}

/// One SM's cycle `cycle`: its L1 takes the previous cycle's responses, the SM ticks with
/// executor `e` unless it is idle or skips a quiet cycle ([`SmNote::quiet_until`]), its L1
/// sends its due requests (`memsys.rs`); `note`
/// records the outcome. The L1 is not looked at when it has nothing to do: no responses
/// came (`note.inbox`), and the SM neither ticked (only a tick makes requests) nor has
/// requests queued (`note.queued`); its fills make none.
#[inline]
pub fn tick_sm<E: Executor>(
    sm: &mut Sm<E::Writes>,
    e: &mut E,
    cycle: u64,
    note: &mut SmNote,
) -> Result<(), String> {
    tick_sm_with(sm, e, cycle, note, None)
}

/// [`tick_sm`] with the SM's responses taken from and its requests pushed at its
/// interconnect port (`memsys::SmPorts`): `(port, at, delivered_at)`.
#[inline]
pub fn tick_sm_at<E: Executor>(
    sm: &mut Sm<E::Writes>,
    e: &mut E,
    cycle: u64,
    note: &mut SmNote,
    port: PortOf<'_>,
) -> Result<(), String> {
    tick_sm_with(sm, e, cycle, note, Some(port))
}

/// One SM's interconnect port in its step: the port, what it needs, and the fill cycle of
/// the responses waiting there (`memsys::SmPorts`).
pub type PortOf<'p> = (
    &'p mut sassim_memory::SmPort,
    &'p sassim_memory::PortStep<'p>,
    u64,
);

#[inline(always)]
fn tick_sm_with<E: Executor>(
    sm: &mut Sm<E::Writes>,
    e: &mut E,
    cycle: u64,
    note: &mut SmNote,
    mut port: Option<PortOf<'_>>,
) -> Result<(), String> {
    if note.inbox {
        // Fills may complete memory accesses: the SM ticks.
        catch_up(sm, note, cycle);
        match &mut port {
            Some((p, at, delivered_at)) => crate::memsys::before_tick_at(sm, p, at, *delivered_at),
            None => crate::memsys::before_tick(sm),
        }
        note.inbox = false;
    }
    // Cycles in which nothing in the SM can act (`Sm::quiet_until`) are skipped without
    // reading its record: its warps, and so `note.active` and `note.busy`, stay as they are.
    let skip = note.quiet_until > cycle;
    let ticked = if skip {
        #[cfg(debug_assertions)]
        {
            // Debug builds tick it and check that the tick changed nothing but what
            // skipping it counts.
            debug_assert_eq!(note.active, sm.active_warps() as u32, "cycle {cycle}");
            let before = sm.skip_digest();
            debug_assert!(
                sm.rejected_fronts_hold(),
                "cycle {cycle}: a skipped retry would go"
            );
            sm.tick(e)?;
            let after = sm.skip_digest();
            debug_assert!(
                before == after,
                "SM skipped cycle {cycle}, which changed it:\n{before}\n{after}"
            );
            // The same answer for the next cycle (0 or a cycle not after it: it ticks).
            let next = |u: u64| if u > cycle + 1 { u } else { 0 };
            debug_assert_eq!(next(sm.quiet_until()), next(note.quiet_until), "cycle {cycle}");
            sm.count_checked_skip();
        }
        false
    } else {
        catch_up(sm, note, cycle);
        let idle = sm.is_idle();
        note.active = if idle { 0 } else { sm.active_warps() as u32 };
        if !idle {
            sm.tick(e)?;
            note.quiet_until = sm.quiet_until();
            if note.quiet_until != 0 && sm.active_warps() as u32 != note.active {
                // The tick retired warps: `note.active` (this cycle's occupancy) is not
                // what the skipped cycles would count. The next cycle ticks.
                note.quiet_until = 0;
            }
            note.quiet_retries = note.quiet_until != 0 && sm.has_rejected_front();
        }
        !idle
    };
    if ticked || note.queued {
        let sent = match &mut port {
            Some((p, at, _)) => crate::memsys::after_tick_at(sm, cycle, p, at),
            None => crate::memsys::after_tick(sm, cycle),
        };
        note.outbox = sent.any;
        note.queued = sent.queued;
        if sent.any && note.quiet_retries && note.quiet_until != 0 {
            // The L1 changed after this cycle's retries (made or skipped): a rejected
            // front may go next cycle, which ticks (a skipping SM catches up first: not 0).
            note.quiet_until = if skip { cycle + 1 } else { 0 };
        }
    } else {
        note.outbox = false;
    }
    if skip {
        // Its finished warps were taken when it last ticked.
        note.finished = false;
        return Ok(());
    }
    note.finished = sm.has_finished();
    note.busy = !sm.is_idle();
    Ok(())
}

/// [`tick_sm`] for every SM, in SM order, with one executor (a source that is not split by
/// SM).
pub fn tick_in_order<E: Executor>(
    e: &mut E,
    sms: &mut [Sm<E::Writes>],
    notes: &mut [SmNote],
    cycle: u64,
) -> Result<(), String> {
    for (sm, note) in sms.iter_mut().zip(notes.iter_mut()) {
        tick_sm(sm, e, cycle, note)?;
    }
    Ok(())
}

/// `f` for each SM of a part of a step (`first`: the index of its first SM) with its part
/// of the instruction source (a functional shard, a part of a trace) and its note; an error
/// names its SM.
#[inline(always)]
pub(crate) fn each_sm<W, P>(
    first: usize,
    sms: &mut [Sm<W>],
    parts: &mut [P],
    notes: &mut [SmNote],
    mut f: impl FnMut(usize, &mut Sm<W>, &mut P, &mut SmNote) -> Result<(), String>,
) -> Result<(), PartError> {
    for (i, ((sm, p), note)) in sms
        .iter_mut()
        .zip(parts.iter_mut())
        .zip(notes.iter_mut())
        .enumerate()
    {
        f(first + i, sm, p, note).map_err(|e| (first + i, e))?;
    }
    Ok(())
}

/// [`each_sm`] with each SM's interconnect port as well.
#[inline(always)]
pub(crate) fn each_at_port<W, P>(
    first: usize,
    sms: &mut [Sm<W>],
    parts: &mut [P],
    notes: &mut [SmNote],
    ports: &mut [sassim_memory::SmPort],
    mut f: impl FnMut(usize, &mut Sm<W>, &mut P, &mut SmNote, &mut sassim_memory::SmPort) -> Result<(), String>,
) -> Result<(), PartError> {
    for (i, (((sm, p), note), port)) in sms
        .iter_mut()
        .zip(parts.iter_mut())
        .zip(notes.iter_mut())
        .zip(ports.iter_mut())
        .enumerate()
    {
        f(first + i, sm, p, note, port).map_err(|e| (first + i, e))?;
    }
    Ok(())
}

/// Threads worth using for the SMs of `notes` (busy after the last cycle).
/// The next step's parts get about as many of them each ([`Threads::plan_step`]).
pub fn useful_threads(threads: &Threads, notes: &[SmNote]) -> usize {
    threads.plan_step(notes.iter().map(|n| n.busy))
}

/// One SM's part of the kernel.
struct Shard {
    issued: u64,
    reg_changes: u64,
    /// CTAs were reserved on the shard whose records its SM's next step makes
    /// ([`KernelExec::reserve_cta`], [`tick_shard`]): [`KernelExec::starts_pending`], kept
    /// here so that a step does not read the executor's record for it (and a skipped step
    /// reads neither: a CTA start wakes its SM).
    starts_pending: bool,
    k: KernelExec,
    /// The engine's issue record, reused (boxed: ~1.2 KB).
    scratch: Box<sassim_functional::Issued>,
}

/// Bits of a timing-model warp id that name the SM of a [`ShardedEngine`] warp.
pub const SM_BITS: u32 = 12;

/// The functional engine split by SM (see the module docs). Warp ids the timing model
/// sees are `local << SM_BITS | sm` (at most 2^SM_BITS SMs). The kernel's global memory is
/// held here while the kernel runs and given back to the [`KernelExec`] it was made from
/// when this is dropped; with `keep_cta_state` the finished CTAs stay in their shards until
/// [`ShardedEngine::return_ctas`] moves them there too.
pub struct ShardedEngine<'a> {
    main: &'a mut KernelExec,
    global: GlobalMemory,
    shards: Vec<Shard>,
    /// Progress events of all shards so far (summed from the SMs' notes).
    progress: u64,
    on_cta: crate::OnCta<'a>,
    /// Keep finished CTAs (their registers are read after the run).
    keep_cta_state: bool,
    /// With `keep_cta_state`: the SM of each CTA started, in start order.
    started: Vec<usize>,
}

impl<'a> ShardedEngine<'a> {
    /// Split `main` (which must be [`KernelExec::shardable`]) into `num_sms` shards;
    /// `keep_cta_state`: finished CTAs are not retired ([`ShardedEngine::return_ctas`]).
    pub fn new(
        main: &'a mut KernelExec,
        num_sms: usize,
        on_cta: crate::OnCta<'a>,
        keep_cta_state: bool,
    ) -> Self {
        let global = std::mem::take(main.memory());
        let shards = (0..num_sms.max(1))
            .map(|_| Shard {
                k: main.new_shard(),
                issued: 0,
                reg_changes: 0,
                starts_pending: false,
                scratch: Box::default(),
            })
            .collect();
        ShardedEngine {
            main,
            global,
            shards,
            progress: 0,
            on_cta,
            keep_cta_state,
            started: Vec::new(),
        }
    }

    /// With `keep_cta_state`, after the run: move every CTA the shards ran into the
    /// [`KernelExec`] this was made from, with the warp ids a run without shards gives
    /// them ([`KernelExec::adopt_shard_ctas`]), and return the map from the timing model's
    /// warp ids to those (None: a warp that was never started).
    pub fn return_ctas(&mut self) -> impl Fn(u32) -> Option<u32> {
        self.finish_starts();
        let mut shards: Vec<&mut KernelExec> = self.shards.iter_mut().map(|s| &mut s.k).collect();
        let ids = self.main.adopt_shard_ctas(&mut shards, &self.started);
        self.started.clear();
        move |warp| {
            let (sm, w) = split(warp);
            ids.get(sm)?
                .get(w.0 as usize)
                .map(|i| i.0)
                .filter(|&i| i != u32::MAX)
        }
    }

    /// Make the records of every CTA reserved and not made yet (a step that stopped at an
    /// error may have left some).
    fn finish_starts(&mut self) {
        for sh in self.shards.iter_mut().filter(|s| s.starts_pending) {
            sh.k.finish_starts();
            sh.starts_pending = false;
        }
    }

    /// Shard and local warp of a timing-model warp id.
    fn locate(&self, warp: u32) -> (usize, WarpId) {
        split(warp)
    }
}

impl Drop for ShardedEngine<'_> {
    fn drop(&mut self) {
        self.finish_starts();
        std::mem::swap(self.main.memory(), &mut self.global);
        for sh in &mut self.shards {
            self.main.absorb_shard_output(&mut sh.k);
        }
    }
}

/// A shard as the timing model's executor for one cycle.
struct ShardExec<'s> {
    sh: &'s mut Shard,
    global: &'s GlobalMemory,
    /// The shard's progress counter when the step first issued or committed (None: it did
    /// neither, so its progress and output did not change). Read only then: most SM steps
    /// of a loaded GPU do neither, and reading the counters is a cache miss per SM.
    before: Option<u64>,
}

impl ShardExec<'_> {
    /// Before the step's first issue or commit: remember the progress counter.
    #[inline]
    fn first_call(&mut self) {
        if self.before.is_none() {
            self.before = Some(self.sh.k.shard_progress() + self.sh.reg_changes);
        }
    }
}

/// The shard's own id of a timing-model warp id.
#[inline]
fn local(warp: u32) -> WarpId {
    WarpId(warp >> SM_BITS)
}

/// Shard (SM) and the shard's own id of a timing-model warp id.
fn split(warp: u32) -> (usize, WarpId) {
    ((warp & ((1 << SM_BITS) - 1)) as usize, local(warp))
}

impl Executor for ShardExec<'_> {
    type Writes = PendingWrites;

    fn next_pc(&self, warp: u32) -> Option<u64> {
        self.sh.k.next_pc(local(warp))
    }

    fn blocked(&self, warp: u32) -> bool {
        warp_blocked(&self.sh.k, local(warp))
    }

    fn issue(&mut self, warp: u32, clock: u64, out: &mut Issued<PendingWrites>) -> Result<(), String> {
        self.first_call();
        let i = &mut *self.sh.scratch;
        self.sh
            .k
            .issue_shard(local(warp), clock, i, self.global)
            .map_err(|e| e.to_string())?;
        self.sh.issued += 1;
        copy_issued(i, out);
        Ok(())
    }

    fn prefetch_commit(&self, warp: u32, writes: &PendingWrites, regs: &[sassim_isa::ArchReg]) {
        prefetch_commit(&self.sh.k, local(warp), writes, regs);
    }

    fn commit(&mut self, warp: u32, writes: &PendingWrites) {
        self.first_call();
        let changed = self.sh.k.commit_changed(local(warp), writes);
        self.sh.reg_changes += u64::from(changed);
    }
}

impl crate::KernelSource for ShardedEngine<'_> {
    type Writes = PendingWrites;

    fn num_ctas(&self) -> u32 {
        self.main.launch().num_ctas()
    }
    fn warps_per_cta(&self) -> u32 {
        self.main.launch().warps_per_cta()
    }
    fn threads_per_cta(&self) -> u32 {
        self.main.launch().threads_per_cta()
    }
    fn clusters(&self) -> sassim_functional::cluster::ClusterGeom {
        self.main.launch().clusters()
    }
    fn start_cta(&mut self, sm: usize, id: u32) -> Vec<(u32, u32)> {
        let Some(sh) = self.shards.get_mut(sm) else {
            return Vec::new();
        };
        let warps: Vec<(u32, u32)> =
            sh.k.reserve_cta(id)
                .iter()
                .map(|&(w, in_cta)| (w.0 << SM_BITS | sm as u32, in_cta))
                .collect();
        match self.on_cta.as_mut() {
            // The hook reads and sets the warps' records: they are made now.
            Some(f) => {
                sh.k.finish_starts();
                let ids: Vec<WarpId> = warps.iter().map(|&(w, _)| local(w)).collect();
                f(&mut sh.k, &ids);
            }
            // Made by the SM's next step, on its thread ([`tick_shard`]).
            None => sh.starts_pending = true,
        }
        if self.keep_cta_state {
            self.started.push(sm);
        }
        warps
    }
    fn retire_cta(&mut self, warp: u32) {
        if !self.keep_cta_state {
            let (s, w) = self.locate(warp);
            self.shards[s].k.retire_cta_of(w);
        }
    }
    fn issued(&self) -> u64 {
        self.shards.iter().map(|s| s.issued).sum()
    }
    fn progress(&self) -> u64 {
        self.progress
    }
    fn hard_progress(&self) -> Option<u64> {
        // Read from every shard: called only a few times per deadlock window (`livelock.rs`).
        Some(self.shards.iter().map(|s| s.k.shard_progress()).sum())
    }
    fn set_livelock_probes(&mut self, on: bool) {
        self.shards.iter_mut().for_each(|s| s.k.set_livelock_probes(on));
    }
    fn livelock_tally(&self) -> sassim_functional::ProbeTally {
        self.shards
            .iter()
            .fold(Default::default(), |t, s| t + s.k.livelock_tally())
    }
    fn describe(&self, warp: u32) -> String {
        let (s, w) = self.locate(warp);
        // (Reports come after a whole step, which made every CTA's records.)
        debug_assert!(!self.shards[s].starts_pending);
        describe_warp(&self.shards[s].k, w)
    }

    fn tick_sms(
        &mut self,
        sms: &mut [Sm<PendingWrites>],
        notes: &mut [SmNote],
        threads: &Threads,
        cycle: u64,
    ) -> Result<(), String> {
        self.step(sms, notes, None, threads, cycle)
    }

    fn ticks_at_ports(&self) -> bool {
        true
    }

    fn tick_sms_at(
        &mut self,
        sms: &mut [Sm<PendingWrites>],
        notes: &mut [SmNote],
        ports: crate::memsys::SmPorts<'_>,
        threads: &Threads,
        cycle: u64,
    ) -> Result<(), String> {
        self.step(sms, notes, Some(ports), threads, cycle)
    }
}

impl ShardedEngine<'_> {
    /// The SMs' step ([`crate::KernelSource::tick_sms`], or `tick_sms_at` with `ports`),
    /// then the cycle's global effects in SM order.
    fn step(
        &mut self,
        sms: &mut [Sm<PendingWrites>],
        notes: &mut [SmNote],
        ports: Option<crate::memsys::SmPorts<'_>>,
        threads: &Threads,
        cycle: u64,
    ) -> Result<(), String> {
        let global = &self.global;
        let useful = useful_threads(threads, notes);
        let r = match ports {
            Some(ps) => {
                let (at, delivered_at) = (&ps.at, ps.delivered_at);
                let tick = |first: usize,
                            sms: &mut [Sm<PendingWrites>],
                            shards: &mut [Shard],
                            notes: &mut [SmNote],
                            ports: &mut [sassim_memory::SmPort]| {
                    each_at_port(first, sms, shards, notes, ports, |_, sm, sh, note, port| {
                        tick_shard(sm, sh, global, cycle, note, Some((port, at, delivered_at)))
                    })
                };
                threads.for_parts4(useful, sms, &mut self.shards[..], notes, ps.ports, &tick)
            }
            None => {
                let tick = |first: usize,
                            sms: &mut [Sm<PendingWrites>],
                            shards: &mut [Shard],
                            notes: &mut [SmNote]| {
                    each_sm(first, sms, shards, notes, |_, sm, sh, note| {
                        tick_shard(sm, sh, global, cycle, note, None)
                    })
                };
                threads.for_parts3(useful, sms, &mut self.shards[..], notes, &tick)
            }
        };
        // The cycle's global effects, in SM order.
        for (sh, note) in self.shards.iter_mut().zip(notes.iter_mut()) {
            self.progress += u64::from(note.progress);
            if note.output {
                let before = sh.k.shard_progress();
                sh.k.apply_shard_log(&mut self.global);
                self.main.absorb_shard_output(&mut sh.k);
                self.progress += sh.k.shard_progress() - before;
                // Output left (a fault or assertion the kernel's record already had one
                // of): what the next step reports if it does not call the executor.
                note.output = sh.k.shard_has_output();
            }
        }
        r
    }
}

/// One SM's step with its shard ([`tick_sm`], or [`tick_sm_at`] with `port`), and what the
/// serial part needs of the shard in its note.
#[inline(always)]
fn tick_shard(
    sm: &mut Sm<PendingWrites>,
    sh: &mut Shard,
    global: &GlobalMemory,
    cycle: u64,
    note: &mut SmNote,
    port: Option<PortOf<'_>>,
) -> Result<(), String> {
    // A quiet SM without responses is skipped (`tick_sm_with`) without reading its shard:
    // no CTA can have been started on it (a launch wakes it), and its note's `output` stays
    // what the serial part left (the shard's output, `ShardedEngine::step`). On a loaded GPU
    // most SMs are skipped most cycles, and the shards' records are 84 cache lines apart.
    let skipped = note.quiet_until > cycle && !note.inbox;
    debug_assert!(!skipped || !sh.starts_pending, "a CTA started on a quiet SM");
    debug_assert_eq!(sh.starts_pending, sh.k.starts_pending());
    // CTAs started on the SM this cycle (the serial part gave out their ids): their records
    // and zeroed registers are made here, on the thread that runs them.
    if !skipped && sh.starts_pending {
        sh.k.finish_starts();
        sh.starts_pending = false;
    }
    let mut e = ShardExec {
        sh,
        global,
        before: None,
    };
    tick_sm_with(sm, &mut e, cycle, note, port)?;
    if let Some(before) = e.before {
        note.progress = (sh.k.shard_progress() + sh.reg_changes - before) as u32;
        note.output = sh.k.shard_has_output();
    } else {
        // No issue or commit: the shard's output is unchanged since the serial part set
        // `note.output` to it (or since this note's last step did).
        debug_assert_eq!(note.output, e.sh.k.shard_has_output());
        note.progress = 0;
    }
    Ok(())
}
