//! `sassim-gpu`: the GPU around the SMs — CTA scheduling with occupancy limits, kernel
//! sequencing, the cycle loop, deadlock detection, and the microbenchmark runner.

mod cta;
pub mod ctlbits;
pub mod ctlbits_validation;
pub mod engine;
pub mod footprint;
pub mod l1_bypass;
pub mod launch;
pub mod livelock;
pub mod ltrf;
pub mod memsys;
pub mod microbench;
pub mod parallel;
pub mod quantum;
pub mod report;
pub mod threads;
pub mod trace_exec;
mod trace_part;
pub mod workload;

use engine::EngineExec;
use sassim_config::GpuConfig;
use sassim_functional::{KernelExec, WarpId};
use sassim_isa::{ArchReg, Kernel};
use sassim_timing::config::classify;
use sassim_timing::{decode_kernel, CoreConfig, CoreStats, Sm, StaticInst};
use std::collections::BTreeMap;

#[cfg(test)]
mod tests {
    #[test]
    fn placement_interleaves_gpcs() {
        // 84 SMs in 7 GPCs of 12: SM 0, 12, 24, … then 1, 13, …
        let o = super::sm_placement_order(84, 7);
        assert_eq!(&o[..8], &[0, 12, 24, 36, 48, 60, 72, 1]);
        let mut sorted = o.clone();
        sorted.sort();
        assert_eq!(sorted, (0..84).collect::<Vec<_>>());
        assert_eq!(super::sm_placement_order(40, 5)[..3], [0, 8, 16]);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("{0}")]
    Exec(String),
    #[error("deadlock: {0}")]
    Deadlock(String),
    #[error("kernel {kernel} cannot run: {why}")]
    Launch { kernel: String, why: String },
    #[error("cycle limit of {0} reached")]
    CycleLimit(u64),
}

/// A kernel decoded for the timing model.
#[derive(Debug, Clone)]
pub struct PreparedKernel {
    pub code: Vec<StaticInst>,
    /// Opcodes the opcode table does not know, with their static counts.
    pub unknown_opcodes: BTreeMap<String, u64>,
    /// Registers per thread (highest register written or read + 1, plus the two the
    /// ABI reserves, rounded to the allocation granularity).
    pub regs_per_thread: u32,
}

pub fn prepare(kernel: &Kernel, g: &GpuConfig, core: &CoreConfig) -> PreparedKernel {
    let table = g.opcode_table();
    let mut unknown = BTreeMap::new();
    let code = decode_kernel(&kernel.instructions, core, &mut |ins| {
        let (c, known) = classify(table, ins);
        if !known {
            *unknown.entry(ins.opcode.base.clone()).or_insert(0) += 1;
        }
        c
    });
    let mut code = code;
    if g.regfile.organisation != sassim_config::RegFileOrganisation::Baseline {
        ltrf::annotate(kernel, g, &mut code);
    }
    let mut max_reg = 0u32;
    for ins in &kernel.instructions {
        for r in sassim_isa::regs_written(ins)
            .iter()
            .chain(sassim_isa::regs_read(ins).iter())
        {
            if let ArchReg::R(i) = r {
                max_reg = max_reg.max(*i as u32 + 1);
            }
        }
    }
    let gran = g.gpu.reg_alloc_granularity.max(1);
    let regs = (max_reg + 2).div_ceil(gran) * gran;
    PreparedKernel {
        code,
        unknown_opcodes: unknown,
        regs_per_thread: regs.clamp(gran, g.gpu.max_regs_per_thread.max(gran)),
    }
}

/// Progress callback: (simulated cycle, CTAs finished, CTAs in the kernel, warp
/// instructions issued). Called every `progress_interval` cycles.
#[derive(Clone)]
pub struct ProgressFn(pub std::sync::Arc<dyn Fn(u64, u32, u32, u64) + Send + Sync>);

impl std::fmt::Debug for ProgressFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressFn")
    }
}

/// What runs after each CTA's warps are created ([`Gpu::run_kernel`]): microbenchmarks set
/// registers there. `None`: nothing.
pub type OnCta<'a> = Option<&'a mut dyn FnMut(&mut KernelExec, &[WarpId])>;

/// Options of one timing run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Trace kernels without a SASS listing run with control bits inferred from the opcode
    /// tables (`--control-bits infer`) instead of hardware scoreboards.
    pub infer_control_bits: bool,
    /// Stop the kernel after this many cycles (0 = no limit); the run ends with its
    /// partial statistics and [`KernelRun::stopped`] says why.
    pub max_cycles: u64,
    /// Stop the kernel (partial statistics, [`KernelRun::stopped`]) when this instant
    /// passes (`--max-wall`); checked every 64 cycles (`WALL_CHECK_CYCLES`).
    pub deadline: Option<std::time::Instant>,
    /// A deadlock is reported after this many cycles without progress (0 = never): no
    /// memory change, exit, barrier release or register write that changes a value.
    /// Spinning warps that rewrite the same values do not count.
    pub deadlock_cycles: u64,
    /// Record per-warp issue logs (microbenchmarks).
    pub record: bool,
    /// Place warps in the SM slot equal to their index within the CTA
    /// (microbenchmarks' `.active_warps`; sub-core = slot % 4).
    pub slot_by_warp_index: bool,
    /// Shared memory bytes per CTA (for occupancy).
    pub shared_per_cta: u32,
    /// Sample IPC every this many cycles (0 = off).
    pub ipc_sample_interval: u64,
    /// Whether the kernel's control bits are real (false: hybrid mode uses scoreboards).
    pub has_control_bits: bool,
    /// Keep the registers of finished CTAs (to report them).
    pub keep_cta_state: bool,
    /// Progress reporting.
    pub progress: Option<ProgressFn>,
    pub progress_interval: u64,
    /// Registers per thread for occupancy when known from the binary (a cubin's
    /// `EIATTR_REGCOUNT`); None: derived from the highest register the code names.
    pub regs_per_thread: Option<u32>,
    /// Threads that tick the SMs of one kernel (`--threads`; results do not depend on it).
    pub threads: usize,
    /// Let sub-cores sleep through cycles in which nothing can change them, and leave quiet
    /// SMs unticked until their next event (`sassim_timing::sleep`; results do not depend
    /// on it).
    pub skip_idle_subcores: bool,
    /// The SMs take their responses from and push their requests at their interconnect
    /// ports in their own step ([`memsys::SmPorts`]; sources split by SM); off: the serial
    /// part of each cycle moves them through the SMs' inboxes and outboxes (results do not
    /// depend on it).
    pub sm_ports: bool,
    /// Trace-driven kernels step their SMs through quanta of up to this many cycles when
    /// the memory system allows (`quantum.rs`; results do not depend on it); 0 or 1: one
    /// cycle at a time.
    pub trace_quantum: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            infer_control_bits: false,
            max_cycles: 0,
            deadline: None,
            deadlock_cycles: 1_000_000,
            record: false,
            slot_by_warp_index: false,
            shared_per_cta: 0,
            ipc_sample_interval: 1000,
            has_control_bits: true,
            keep_cta_state: false,
            progress: None,
            progress_interval: 20_000,
            regs_per_thread: None,
            threads: 1,
            skip_idle_subcores: true,
            sm_ports: true,
            trace_quantum: 32,
        }
    }
}

/// What the run loop needs from whoever supplies the kernel's instructions: the
/// functional engine ([`engine::EngineExec`], or split by SM: [`parallel::ShardedEngine`])
/// or a trace.
pub trait KernelSource {
    /// The register results the executor hands the timing model.
    type Writes: Default + Send;
    fn num_ctas(&self) -> u32;
    fn warps_per_cta(&self) -> u32;
    fn threads_per_cta(&self) -> u32;
    /// Create the warps of CTA `id` on simulated SM `sm`: (executor warp id, warp index
    /// within the CTA).
    fn start_cta(&mut self, sm: usize, id: u32) -> Vec<(u32, u32)>;
    /// Cycle `cycle` of the SMs: each SM's L1 takes the previous cycle's responses, the SM
    /// ticks unless it is idle, its L1 sends its requests ([`parallel::tick_sm`]); in SM
    /// order, or on the threads of `threads` with the same result. An error is the
    /// lowest-numbered failing SM's.
    fn tick_sms(
        &mut self,
        sms: &mut [Sm<Self::Writes>],
        notes: &mut [parallel::SmNote],
        threads: &parallel::Threads,
        cycle: u64,
    ) -> Result<(), String>;
    /// Whether the source ticks its SMs at their interconnect ports
    /// ([`KernelSource::tick_sms_at`]) under the memory hierarchy; otherwise the serial part
    /// of a cycle moves their responses and requests (their inboxes and outboxes).
    fn ticks_at_ports(&self) -> bool {
        false
    }
    /// [`KernelSource::tick_sms`] with each SM taking its responses from and pushing its
    /// requests at its interconnect port, `ports.ports[i]` for `sms[i]`
    /// ([`parallel::tick_sm_at`]). Called only when [`KernelSource::ticks_at_ports`].
    fn tick_sms_at(
        &mut self,
        sms: &mut [Sm<Self::Writes>],
        notes: &mut [parallel::SmNote],
        ports: memsys::SmPorts<'_>,
        threads: &parallel::Threads,
        cycle: u64,
    ) -> Result<(), String> {
        let _ = (sms, notes, ports, threads, cycle);
        Err("this kernel source does not tick its SMs at their interconnect ports".into())
    }
    /// Quanta of several cycles (`quantum.rs`): the first cycle from `now` on in which the
    /// kernel could end (its last warp finish), when an SM issues at most
    /// `issue_per_cycle` instructions a cycle; quanta end before it. `None`: the source
    /// does not step its SMs in quanta.
    fn quantum_horizon(&self, now: u64, issue_per_cycle: u64) -> Option<u64> {
        let _ = (now, issue_per_cycle);
        None
    }
    /// The SMs' steps of a quantum (`steps`): [`quantum::sm_quantum`] for each SM, on the
    /// threads of `threads` with the same result; what each did is then
    /// [`KernelSource::quantum_acc`]. Called only when [`KernelSource::quantum_horizon`] is
    /// not `None`.
    fn tick_sms_quantum(
        &mut self,
        sms: &mut [Sm<Self::Writes>],
        notes: &mut [parallel::SmNote],
        ports: memsys::SmPorts<'_>,
        threads: &parallel::Threads,
        steps: &quantum::QuantumSteps<'_>,
    ) -> Result<(), String> {
        let _ = (sms, notes, ports, threads, steps);
        Err("this kernel source does not step its SMs in quanta".into())
    }
    /// What SM `s`'s steps of the last quantum did.
    fn quantum_acc(&self, s: usize) -> quantum::QuantumAcc {
        let _ = s;
        quantum::QuantumAcc::default()
    }
    /// The step of cycle `cycle` of the SMs that `alone` marks, each at its port in `ports`
    /// as `at` says (in a quantum's serial part: the SMs whose own steps stopped early or
    /// that may receive a CTA), on the threads of `threads` with the result of stepping them
    /// one after the other: each such SM's note gets whether a response waits at its port
    /// (`inbox`) and what its step did. An error names the SM (the lowest that failed).
    #[allow(clippy::too_many_arguments)]
    fn tick_sms_alone(
        &mut self,
        sms: &mut [Sm<Self::Writes>],
        notes: &mut [parallel::SmNote],
        ports: &mut [sassim_memory::SmPort],
        at: &sassim_memory::PortStep<'_>,
        threads: &parallel::Threads,
        cycle: u64,
        alone: &[bool],
    ) -> Result<(), String> {
        let _ = (sms, notes, ports, at, threads, cycle, alone);
        Err("this kernel source does not step its SMs in quanta".into())
    }
    /// All warps of the CTA of `warp` have finished.
    fn retire_cta(&mut self, warp: u32);
    /// Warp instructions issued so far.
    fn issued(&self) -> u64;
    /// A counter that changes whenever the kernel makes progress (for deadlock detection):
    /// memory changes, exits, barrier releases. Default: instructions issued.
    fn progress(&self) -> u64 {
        self.issued()
    }
    /// The part of [`KernelSource::progress`] that is not register writes (memory changes,
    /// exits, barrier releases), for livelock detection (`livelock.rs`); `None` (the
    /// default): the source's progress has no register part, and there are no probes.
    /// Called a few times per `deadlock_cycles` cycles.
    fn hard_progress(&self) -> Option<u64> {
        None
    }
    /// Turn the warps' livelock probes on or off, each starting afresh
    /// ([`sassim_functional::KernelExec::set_livelock_probes`]).
    fn set_livelock_probes(&mut self, on: bool) {
        let _ = on;
    }
    /// What the warps' livelock probes saw since they were turned on
    /// ([`sassim_functional::KernelExec::livelock_tally`]; by default nothing).
    fn livelock_tally(&self) -> sassim_functional::ProbeTally {
        sassim_functional::ProbeTally::default()
    }
    /// Where a warp is, for deadlock reports.
    fn describe(&self, warp: u32) -> String;
    /// Thread-block clusters of the launch (none by default).
    fn clusters(&self) -> sassim_functional::cluster::ClusterGeom {
        sassim_functional::cluster::ClusterGeom {
            grid: [self.num_ctas(), 1, 1],
            cluster: [1, 1, 1],
        }
    }
}

/// One warp's log of a run with `record` set ([`KernelRun::logs`]).
#[derive(Debug, Clone)]
pub struct WarpRecord {
    /// The simulated SM.
    pub sm: usize,
    /// The warp's slot on the SM.
    pub slot: usize,
    /// The executor's warp id.
    pub warp: u32,
    pub log: sassim_timing::WarpLog,
}

/// Result of timing one kernel.
#[derive(Debug, Clone, Default)]
pub struct KernelRun {
    pub name: String,
    /// The kernel's duration as a hardware profiler reports it: from its start to its end
    /// timestamp, launch cost and CTA dispatch included (`end_cycle - start_cycle`).
    pub cycles: u64,
    /// The bare kernel: from the first warp's launch to the cycle after the last warp
    /// finished (what the SMs were busy for; no launch cost).
    pub bare_cycles: u64,
    /// GPU cycles at which the kernel started and ended (the GPU's time runs on from one
    /// launch to the next).
    pub start_cycle: u64,
    pub end_cycle: u64,
    /// GPU cycle at which the first warp was launched.
    pub first_warp_cycle: u64,
    /// The CTA dispatcher's counters.
    pub dispatch: launch::DispatchStats,
    pub stats: CoreStats,
    pub ctas: u32,
    pub ctas_per_sm: u32,
    pub sms_used: u32,
    /// Average active warps per SM-cycle divided by the maximum.
    pub occupancy: f64,
    pub warnings: Vec<String>,
    /// (cycle, thread instructions per cycle over the last interval)
    pub ipc_timeline: Vec<(u64, f64)>,
    /// Per-warp logs when `record` was set.
    pub logs: Vec<WarpRecord>,
    /// Memory-hierarchy statistics (L1, L2, DRAM) when the hierarchy is modelled.
    pub mem: Option<memsys::MemReport>,
    /// Why the kernel was stopped before it finished (cycle or wall-clock limit); the
    /// statistics cover the cycles simulated until then.
    pub stopped: Option<String>,
    /// SM-cycles the engine did not tick because nothing in the SM could act (quiet, or
    /// every sub-core asleep; `sassim_timing` `sleep.rs`): a measure of the simulator's
    /// work, not a statistic of the GPU (the
    /// results are the same with `RunOptions::skip_idle_subcores` off, which turns it off).
    pub quiet_sm_cycles_skipped: u64,
    /// Cycles run in quanta of several cycles (`quantum.rs`): a measure of the simulator's
    /// work, not a statistic of the GPU (the results are the same with
    /// `RunOptions::trace_quantum` at 1).
    pub quantum_cycles: u64,
}

/// The simulated GPU.
pub struct Gpu {
    pub cfg: GpuConfig,
    pub core: CoreConfig,
    kernels_launched: u64,
    /// The GPU's time: the end of the last kernel. The next kernel of the stream starts here.
    now: u64,
    /// Model the L1/L2/DRAM hierarchy (true) or let every access hit with the preset's
    /// fixed latencies (false: microbenchmarks of the SM pipeline).
    pub mem_hierarchy: bool,
    /// The memory system, kept across kernels.
    mem: Option<memsys::MemModel>,
    /// The threads that tick SMs, kept across kernels (rebuilt when the count changes).
    threads: Option<parallel::Threads>,
}

impl Gpu {
    /// The threads for `opts` (kept across kernels: the caller puts them back in
    /// `self.threads`), made anew when the count asked for changed.
    pub(crate) fn take_threads(&mut self, opts: &RunOptions) -> parallel::Threads {
        match self.threads.take() {
            Some(t) if t.asked() == opts.threads.max(1) => t,
            _ => parallel::Threads::new(opts.threads),
        }
    }

    pub fn new(cfg: GpuConfig) -> Self {
        let core = CoreConfig::from_gpu(&cfg);
        Gpu {
            cfg,
            core,
            kernels_launched: 0,
            now: 0,
            mem_hierarchy: true,
            mem: None,
            threads: None,
        }
    }

    /// The GPU's clock: core cycles simulated so far, over all kernels.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// CTAs of this kernel that fit on one SM at once.
    pub fn ctas_per_sm(
        &self,
        warps_per_cta: u32,
        threads_per_cta: u32,
        regs_per_thread: u32,
        shared: u32,
    ) -> u32 {
        let g = &self.cfg.gpu;
        // (gpu.max_threads_per_sm = max_warps_per_sm × 32 adds no limit: a CTA's threads fit
        // in its warps.)
        let _ = threads_per_cta;
        let by_warps = g.max_warps_per_sm / warps_per_cta.max(1);
        let regs_per_cta = regs_per_thread * g.warp_size * warps_per_cta;
        let by_regs = g.regs_per_sm / regs_per_cta.max(1);
        let by_shared = (g.shared_mem_per_sm_max_kb * 1024)
            .checked_div(shared)
            .unwrap_or(u32::MAX);
        g.max_ctas_per_sm.min(by_warps).min(by_regs).min(by_shared)
    }

    /// Time one kernel launch whose functional state is `exec`. `on_cta` (if any) runs after
    /// each CTA's warps are created (microbenchmark initialisation); without it, a parallel
    /// run makes a CTA's records on its SM's thread ([`KernelExec::reserve_cta`]).
    pub fn run_kernel<'a>(
        &mut self,
        exec: &'a mut KernelExec,
        kernel: &Kernel,
        opts: &RunOptions,
        on_cta: OnCta<'a>,
    ) -> Result<KernelRun, SimError> {
        let active = exec.options().active_warps.clone();
        // TMA loads complete on their mbarriers when the timing model has moved their bytes.
        exec.set_defer_bulk(true);
        let mut prepared = prepare(kernel, &self.cfg, &self.core);
        if let Some(r) = opts.regs_per_thread {
            let gran = self.cfg.gpu.reg_alloc_granularity.max(1);
            prepared.regs_per_thread = r.max(1).div_ceil(gran) * gran;
        }
        // Split by SM (parallel ticking, the same results for any thread count) unless the
        // kernel shares state between SMs beyond global memory. Kept CTAs (their registers
        // are read after the run) go back into `exec` with the warp ids the serial engine
        // gives them, and the issue logs name those ids.
        let num_sms = (self.cfg.gpu.num_sms as usize).min(exec.launch().num_ctas().max(1) as usize);
        if exec.shardable() && num_sms <= 1 << parallel::SM_BITS {
            let mut src = parallel::ShardedEngine::new(exec, num_sms, on_cta, opts.keep_cta_state);
            let mut run = self.run_source(&mut src, kernel, prepared, opts, active.as_deref());
            if opts.keep_cta_state {
                let main_id = src.return_ctas();
                if let Ok(r) = &mut run {
                    for log in &mut r.logs {
                        log.warp = main_id(log.warp).unwrap_or(log.warp);
                    }
                }
            }
            return run;
        }
        let mut src = EngineExec {
            k: exec,
            issued: 0,
            on_cta,
            keep_cta_state: opts.keep_cta_state,
            reg_changes: 0,
            scratch: Box::default(),
        };
        self.run_source(&mut src, kernel, prepared, opts, active.as_deref())
    }

    /// Time one kernel launch whose instructions come from `src`.
    pub fn run_source<S: KernelSource>(
        &mut self,
        src: &mut S,
        kernel: &Kernel,
        prepared: PreparedKernel,
        opts: &RunOptions,
        active_warps: Option<&[u32]>,
    ) -> Result<KernelRun, SimError> {
        let mut run = KernelRun {
            name: kernel.name.clone(),
            ..Default::default()
        };
        if !prepared.unknown_opcodes.is_empty() {
            let list: Vec<String> = prepared
                .unknown_opcodes
                .iter()
                .map(|(k, v)| format!("{k} ({v})"))
                .collect();
            run.warnings.push(format!(
                "opcodes unknown to the {} opcode table ran with the default class: {}",
                self.cfg.gpu.arch,
                list.join(", ")
            ));
        }
        let per_sm = self.ctas_per_sm(
            src.warps_per_cta(),
            src.threads_per_cta(),
            prepared.regs_per_thread,
            opts.shared_per_cta,
        );
        if per_sm == 0 {
            return Err(SimError::Launch {
                kernel: kernel.name.clone(),
                why: format!(
                    "a CTA of {} threads with {} registers/thread and {} B shared memory does not fit on an SM",
                    src.threads_per_cta(),
                    prepared.regs_per_thread,
                    opts.shared_per_cta
                ),
            });
        }
        // Warps placed by their index in the CTA (microbenchmarks) need the same slots in
        // every CTA: one CTA at a time per SM.
        let per_sm = if opts.slot_by_warp_index { 1 } else { per_sm };
        let num_ctas = src.num_ctas();
        run.ctas = num_ctas;
        run.ctas_per_sm = per_sm;
        // CTAs go round-robin over all SMs (SMs beyond the CTA count would stay idle); a
        // cluster kernel keeps every SM, so that each GPC can hold whole clusters.
        let geom = src.clusters();
        let num_sms = if geom.size() > 1 {
            self.cfg.gpu.num_sms as usize
        } else {
            (self.cfg.gpu.num_sms as usize).min(num_ctas.max(1) as usize)
        };
        run.sms_used = num_sms as u32;
        let code_base = self.cfg.frontend.kernel_code_base
            + self.kernels_launched * self.cfg.frontend.kernel_code_spacing;
        self.kernels_launched += 1;
        let threads = self.take_threads(opts);
        // The memory system lives as long as the GPU: L2 and DRAM state carry over from
        // one kernel to the next (created for all SMs on first use, its partitions on the
        // threads).
        let mut mem = match self.mem.take() {
            Some(m) if m.is_hierarchy() == self.mem_hierarchy => m,
            _ => match memsys::MemModel::new_on(
                &self.cfg,
                self.cfg.gpu.num_sms as usize,
                self.mem_hierarchy,
                &threads,
            ) {
                Ok(m) => m,
                Err(e) => {
                    self.threads = Some(threads);
                    return Err(SimError::Exec(e));
                }
            },
        };
        mem.begin_kernel();
        // SMs are grouped in GPCs as in the preset; CTAs are spread over the GPCs first
        // (the first SM of every GPC, then the second, …). `phys[i]` is the physical SM of
        // the i-th simulated SM (its interconnect port).
        let phys: Vec<usize> = sm_placement_order(self.cfg.gpu.num_sms, self.cfg.gpu.num_gpcs)
            .into_iter()
            .take(num_sms)
            .collect();
        // One copy of the code for all SMs.
        let code: std::sync::Arc<[StaticInst]> = prepared.code.into();
        let start_pc = kernel.instructions.first().map_or(0, |i| i.pc);
        let mut cs = cta::CtaSched {
            per_sm,
            ctas_on_sm: vec![0; num_sms],
            slots: (0..num_sms * per_sm as usize)
                .map(|_| cta::CtaSlot::default())
                .collect(),
            start_pc,
            slot_by_warp_index: opts.slot_by_warp_index,
            need: active_warps.map_or(src.warps_per_cta() as usize, <[u32]>::len),
        };
        // The kernel starts when the previous one of the stream has ended.
        let start = self.now;
        let timing = launch::LaunchTiming::from_config(&self.cfg.launch);
        let mut disp = launch::Dispatcher::new(timing, num_sms, per_sm, num_ctas, start);
        let gpc_of = phys
            .iter()
            .map(|&p| gpc_of_sm(p, self.cfg.gpu.num_sms, self.cfg.gpu.num_gpcs))
            .collect();
        if !disp.set_clusters(geom, gpc_of, per_sm) {
            self.threads = Some(threads);
            self.mem = Some(mem);
            return Err(SimError::Launch {
                kernel: kernel.name.clone(),
                why: format!(
                    "a cluster of {} CTAs does not fit in one GPC ({} CTAs per SM, {} GPCs of {} SMs)",
                    geom.size(),
                    per_sm,
                    self.cfg.gpu.num_gpcs,
                    self.cfg.gpu.num_sms.div_ceil(self.cfg.gpu.num_gpcs.max(1))
                ),
            });
        }
        // The SMs are made on the threads (their zeroed state and its page faults are a few
        // tens of µs an SM; the threads' parts match the first steps' when the SMs are busy).
        let (core, mem_ref) = (&self.core, &mem);
        let made = threads.map(num_sms, &|s| {
            let mut sm = Sm::new(core.clone(), mem_ref.sm_memory(phys[s]));
            sm.record = opts.record;
            sm.skip_idle_subcores = opts.skip_idle_subcores;
            sm.set_kernel(code.clone(), code_base, opts.has_control_bits);
            sm
        });
        let mut sms: Vec<Sm<S::Writes>> = match made {
            Ok(sms) => sms,
            Err(e) => {
                self.threads = Some(threads);
                self.mem = Some(mem);
                return Err(SimError::Exec(e));
            }
        };
        // What each SM's step reports to the serial part of the cycle (and the serial part
        // to the step: responses delivered).
        let mut notes = vec![parallel::SmNote::default(); num_sms];
        notes.iter_mut().for_each(|n| n.busy = true);
        mem.collect(
            cycle_before(start),
            &mut sms,
            &phys,
            &mut notes,
            opts.sm_ports && src.ticks_at_ports(),
        );
        let mut launchers = cta::Launchers::new(timing, num_sms);
        let mut done_ctas = 0u32;
        let mut cycle: u64 = start;
        // Cycles without progress are counted from the end of the kernel launch latency
        // (modelled time in which no warp exists; a deadlock window shorter than it used to
        // report every kernel).
        let mut last_progress = match disp.sends_from() {
            u64::MAX => start,
            begin => begin,
        };
        let mut last_issued = 0u64;
        let mut livelock = livelock::LivelockWatch::new(src, start, opts.deadlock_cycles);
        let mut occ_sum: u64 = 0;
        let mut sample_insts = 0u64;
        let max_warps = self.core.max_warps as u64;
        // A quantum saw the kernel end: its back half has run ahead of the drain.
        let mut ended_ahead = false;
        let quanta = opts.trace_quantum > 1 && src.quantum_horizon(start, 1).is_some();
        let mut qbufs = quantum::QuantumBufs {
            start,
            // One instruction a cycle per sub-core.
            issue_per_cycle: u64::from(self.core.subcores.max(1)),
            ..Default::default()
        };
        qbufs.set_busy_bound(opts.trace_quantum.saturating_mul(num_sms as u64));
        while done_ctas < num_ctas {
            // Several cycles at once when nothing in them needs the serial part between
            // every two (`quantum.rs`).
            let q = if qbufs.committed() > 0 {
                // Its back half ran during the last quantum's steps (the kernel cannot end
                // in it, and no CTA can be sent in it).
                qbufs.may_end = false;
                quantum::mark_alone(&disp, &launchers, &mut notes);
                qbufs.committed()
            } else if quanta
                && !qbufs.paused(cycle)
                && disp.sends_from() > cycle + 1
                && quantum::mark_alone(&disp, &launchers, &mut notes) * quantum::ALONE_SHARE <= num_sms
            {
                let q = quantum::room(opts, cycle, cycle, last_progress, src, &disp, true, &mut qbufs)
                    .min(mem.max_quantum());
                // While CTAs are being sent the kernel may end in any quantum (those not sent
                // yet are not known); before the first is, in none.
                qbufs.may_end = if disp.all_dispatched() {
                    cycle + q > qbufs.horizon
                } else {
                    disp.dispatching()
                };
                q
            } else {
                0
            };
            let cycle_was = cycle;
            // The last cycle of this step in which the kernel may have progressed.
            let progressed_in: Option<u64>;
            if q > 1 {
                // The next quantum's back half runs beside this one's steps unless the kernel
                // may end in this one, or the wall-clock limit has passed (a committed quantum
                // must run, so the limit is looked at after every uncommitted one).
                let past_deadline = opts.deadline.is_some_and(|d| std::time::Instant::now() >= d);
                let next = if qbufs.may_end || past_deadline {
                    0
                } else {
                    quantum::room(
                        opts,
                        cycle,
                        cycle + q,
                        last_progress,
                        src,
                        &disp,
                        false,
                        &mut qbufs,
                    )
                };
                let mut serial = quantum::LoopSerial {
                    disp: &mut disp,
                    cs: &mut cs,
                    launchers: &mut launchers,
                    done_ctas: &mut done_ctas,
                    num_ctas,
                };
                let done = quantum::run(
                    q,
                    cycle,
                    next,
                    src,
                    &mut sms,
                    &mut notes,
                    &mut mem,
                    &threads,
                    &mut qbufs,
                    &mut serial,
                )
                .map_err(SimError::Exec)?;
                occ_sum += done.occupancy;
                let ran = done.ended_at.map_or(q, |e| e + 1 - cycle);
                run.quantum_cycles += ran;
                cycle += ran;
                qbufs.note(&done, cycle);
                ended_ahead |= done.ended_at.is_some();
                progressed_in = done.last_progress;
            } else {
                // The dispatcher sends CTAs; SMs start the CTAs that arrived and launch warps.
                launchers.cycle(cycle, &mut disp, &mut cs, &mut sms, &mut notes, src, |_| true)?;
                // The memory partitions' share of the last cycle runs alongside the SMs' step.
                mem.with_partitions(&threads, |ports| match ports {
                    Some(ports) => src.tick_sms_at(&mut sms, &mut notes, ports, &threads, cycle),
                    None => src.tick_sms(&mut sms, &mut notes, &threads, cycle),
                })
                .map_err(SimError::Exec)?;
                occ_sum += notes.iter().map(|n| u64::from(n.active)).sum::<u64>();
                for (s, sm) in sms.iter_mut().enumerate() {
                    if notes[s].finished {
                        done_ctas += cs.retire_finished(s, cycle, sm, src, &mut disp);
                    }
                }
                mem.tick_beyond_sms(cycle, &mut sms, &mut notes, &phys)
                    .map_err(SimError::Exec)?;
                progressed_in = Some(cycle);
                cycle += 1;
            }
            if src.progress() != last_issued {
                last_issued = src.progress();
                // The cycle after the last with progress.
                last_progress = progressed_in.map_or(cycle, |c| c + 1);
            }
            let stepped = cycle - cycle_was;
            let elapsed = cycle - start;
            if last_progress < cycle
                && opts.deadlock_cycles > 0
                && cycle - last_progress > opts.deadlock_cycles
            {
                self.now = cycle;
                // A load that the L1 can never accept is the likely cause: name it first.
                let cause = memsys::never_admitted(&mut sms).map_or(String::new(), |(sm, n)| {
                    format!(
                        "; SM {sm}'s L1 can never accept a warp load that misses in {} lines: it has \
                         {} MSHR entries (l1d.mshr_entries) and admits a warp access whole (docs/memory.md)",
                        n.needed, n.capacity
                    )
                });
                return Err(SimError::Deadlock(format!(
                    "no progress (memory change, exit, barrier release or register change) for {} cycles at cycle {}{cause}; {}",
                    opts.deadlock_cycles,
                    cycle - start,
                    describe_running(&cs, &sms, src)
                )));
            }
            if livelock.due(cycle) {
                if let Some(idle) = livelock.look(src, cycle) {
                    self.now = cycle;
                    return Err(SimError::Deadlock(format!(
                        "livelock: every running warp repeats the same state (pc, registers and control flow) without changing memory; no memory change, exit or barrier release for {idle} cycles at cycle {}; {}",
                        cycle - start,
                        describe_running(&cs, &sms, src)
                    )));
                }
            }
            if opts.ipc_sample_interval > 0 && elapsed.is_multiple_of(opts.ipc_sample_interval) {
                let total: u64 = sms.iter().map(|s| s.stats.thread_insts).sum();
                run.ipc_timeline.push((
                    elapsed,
                    (total - sample_insts) as f64 / opts.ipc_sample_interval as f64,
                ));
                sample_insts = total;
            }
            if let Some(p) = &opts.progress {
                if opts.progress_interval > 0 && elapsed.is_multiple_of(opts.progress_interval) {
                    (p.0)(elapsed, done_ctas, num_ctas, src.issued());
                }
            }
            if opts.max_cycles > 0 && elapsed >= opts.max_cycles {
                run.stopped = Some(format!(
                    "stopped at the cycle limit of {} ({done_ctas} of {num_ctas} CTAs finished)",
                    opts.max_cycles
                ));
                break;
            }
            if let Some(d) = opts.deadline.filter(|_| qbufs.committed() == 0) {
                // Every 64 cycles: a fully loaded GPU on a busy machine simulates a few hundred
                // cycles per second, and the fuzzing runs found 1,024 cycles too coarse (a run
                // with --max-wall 9 ended after 10.7 s).
                if (stepped > 1 || elapsed.is_multiple_of(WALL_CHECK_CYCLES))
                    && std::time::Instant::now() >= d
                {
                    run.stopped = Some(format!(
                        "stopped by the wall-clock limit at cycle {elapsed} ({done_ctas} of {num_ctas} CTAs finished)"
                    ));
                    break;
                }
            }
        }
        // SMs that skipped quiet cycles count them (none is left quiet when every CTA has
        // finished; a run stopped by a limit may leave some).
        for (sm, note) in sms.iter_mut().zip(notes.iter_mut()) {
            parallel::catch_up(sm, note, cycle);
        }
        // A kernel is complete when its memory operations are (HW: the membar at kernel
        // end): requests still in flight (stores, their acknowledgements) drain before the
        // next kernel starts, so that none of them reaches the next kernel's L1s. (A kernel
        // stopped by a limit is abandoned as it is.) The drain is part of the bare kernel.
        // The last cycle's responses are still in the SMs' inboxes; its partitions' share
        // has not run.
        let drain_start = cycle;
        if ended_ahead {
            // The kernel ended in a quantum whose back half ran further: the drain starts
            // with the cycles it has run (also after a wall-clock stop in the same step,
            // which leaves the memory system whole for the next kernel).
            cycle = quantum::drain_ahead(cycle - 1, &mut mem, &mut sms, &mut notes, &mut qbufs);
        }
        mem.finish_partitions();
        mem.fill_delivered(&mut sms);
        let drain_limit = if opts.deadlock_cycles > 0 {
            opts.deadlock_cycles
        } else {
            DRAIN_LIMIT
        };
        while run.stopped.is_none() && !mem.drained(&mut sms) {
            mem.tick(cycle, &mut sms, &phys);
            cycle += 1;
            if cycle - drain_start > drain_limit {
                self.now = cycle;
                return Err(SimError::Deadlock(format!(
                    "the memory system did not drain within {} cycles after the last block finished",
                    drain_limit
                )));
            }
        }
        let first = launchers.first_warp.unwrap_or(cycle);
        let end = if run.stopped.is_some() {
            cycle
        } else {
            disp.finish(start).max(cycle)
        };
        run.start_cycle = start;
        run.end_cycle = end;
        run.first_warp_cycle = first;
        run.cycles = end - start;
        run.bare_cycles = cycle - first;
        run.dispatch = disp.stats;
        self.now = end;
        for (s, sm) in sms.iter_mut().enumerate() {
            run.stats.add(&sm.stats);
            run.quiet_sm_cycles_skipped += sm.quiet_skipped();
            if opts.record {
                for (slot, warp, log) in sm.take_logs_with_ids() {
                    run.logs.push(WarpRecord {
                        sm: s,
                        slot,
                        warp,
                        log,
                    });
                }
            }
        }
        run.stats.cycles = run.bare_cycles;
        if run.stats.stale_reads > 0 {
            let ex: Vec<String> = run
                .stats
                .stale_read_examples
                .iter()
                .map(|e| {
                    format!(
                        "pc {:#x} at cycle {} (result of pc {:#x})",
                        e.consumer_pc, e.cycle, e.producer_pc
                    )
                })
                .collect();
            run.warnings.push(format!(
                "{} instruction(s) read a register before its fixed-latency producer's result was visible \
                 (stale reads, as MICRO'25 Listing 2 shows for too-short stall counts), e.g. {}",
                run.stats.stale_reads,
                ex.join(", ")
            ));
        }
        run.mem = mem.report(&mut sms);
        self.mem = Some(mem);
        self.threads = Some(threads);
        run.occupancy = if run.bare_cycles == 0 {
            0.0
        } else {
            occ_sum as f64 / (run.bare_cycles * num_sms as u64 * max_warps) as f64
        };
        Ok(run)
    }
}

/// The cycle before `c` (for the responses "of the cycle before" the first).
pub(crate) fn cycle_before(c: u64) -> u64 {
    c.saturating_sub(1)
}

/// How often (in cycles) the run loop looks at the wall clock for `--max-wall`.
const WALL_CHECK_CYCLES: u64 = 64;

/// Cycles the memory system may take to drain after a kernel when deadlock detection is off.
const DRAIN_LIMIT: u64 = 10_000_000;

/// The GPC of physical SM `sm` (SMs are numbered GPC by GPC, as in [`sm_placement_order`]).
pub fn gpc_of_sm(sm: usize, num_sms: u32, num_gpcs: u32) -> usize {
    let n = num_sms as usize;
    let g = (num_gpcs as usize).clamp(1, n.max(1));
    sm / n.div_ceil(g).max(1)
}

/// Physical SM ids in CTA-placement order: SMs are numbered GPC by GPC; placement takes the
/// first SM of each GPC, then the second of each, and so on.
pub fn sm_placement_order(num_sms: u32, num_gpcs: u32) -> Vec<usize> {
    let n = num_sms as usize;
    let g = (num_gpcs as usize).clamp(1, n.max(1));
    let per = n.div_ceil(g);
    let mut order = Vec::with_capacity(n);
    for k in 0..per {
        for gpc in 0..g {
            let sm = gpc * per + k;
            if sm < n {
                order.push(sm);
            }
        }
    }
    order
}

/// Where the first running warps are (deadlock and livelock reports): what `src` says of
/// each and what its SM's timing model says.
fn describe_running<S: KernelSource + ?Sized>(cs: &cta::CtaSched, sms: &[Sm<S::Writes>], src: &S) -> String {
    let mut waiting = Vec::new();
    for w in cs.running_warps(16) {
        let why = src.describe(w);
        let timing = sms.iter().find_map(|sm| sm.describe_warp(w)).unwrap_or_default();
        waiting.push(format!("warp {w}: {why} [{timing}]"));
    }
    waiting.join("; ")
}
