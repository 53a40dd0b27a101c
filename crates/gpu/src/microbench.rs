//! `sassim microbench`: a microbenchmark-dialect file through functional execution and
//! the timing model, with per-warp issue logs, clock values, registers and RFC outcomes
//! (JSON schema in docs/microbench.md).

use crate::{Gpu, RunOptions, SimError};
use sassim_config::GpuConfig;
use sassim_functional::{ControlFlowKind, ExecOptions, KernelExec, Launch, WarpId};
use sassim_isa::ArchReg;
use sassim_sass::microbench::{InitValue, Microbench};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use sassim_timing::{IssueRec, RfcLog, RfcRead};

#[derive(Debug, Clone, Serialize)]
pub struct WarpResult {
    pub warp: u32,
    pub subcore: u32,
    pub issues: Vec<IssueRec>,
    pub clocks: Vec<u64>,
    pub regs: BTreeMap<String, Vec<u32>>,
    pub rfc: Vec<RfcLog>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MicrobenchResult {
    pub gpu: String,
    /// Cycles from the first warp's launch to the end of the last warp (the bare kernel).
    pub total_cycles: u64,
    /// The kernel's duration with the launch cost and CTA dispatch (`[launch]`), as a
    /// profiler reports it.
    pub kernel_cycles: u64,
    /// L0 instruction-cache hits and misses and stream-buffer hits, all sub-cores.
    pub l0i_hits: u64,
    pub l0i_misses: u64,
    pub stream_buffer_hits: u64,
    pub warps: Vec<WarpResult>,
    /// The error that stopped the run (e.g. an illegal address), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the run was stopped early (cycle or wall-clock limit), if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

fn init_vals(v: &InitValue, warp: u32, block_x: u32) -> [u32; 32] {
    let mut out = [0u32; 32];
    for (lane, o) in out.iter_mut().enumerate() {
        let lane = lane as u32;
        *o = match v {
            InitValue::Int(i) => *i as u32,
            InitValue::Float(f) => (*f as f32).to_bits(),
            InitValue::TidX => (warp * 32 + lane) % block_x.max(1),
            InitValue::Lane => lane,
            InitValue::Warp => warp,
        };
    }
    out
}

/// Run a parsed microbenchmark-dialect kernel on `gpu` with `ropts` (its global memory
/// mapped and filled, `.init` registers set in every CTA, `shared_bytes` of shared memory per
/// CTA, at least 48 KB): the kernel run, for tests and tools that want the GPU's own
/// statistics rather than [`MicrobenchResult`].
pub fn run_parsed(
    gpu: &mut Gpu,
    mb: &Microbench,
    shared_bytes: u32,
    ropts: &RunOptions,
) -> Result<crate::KernelRun, SimError> {
    let kernel = Arc::new(mb.kernel.clone());
    let launch = Launch {
        shared_bytes: shared_bytes.max(48 * 1024),
        ..Launch::new(mb.grid, mb.block, Vec::new())
    };
    let opts = ExecOptions {
        active_warps: mb.active_warps.clone(),
        yield_as_nop: !gpu.cfg.issue.yield_enabled,
        ..ExecOptions::default()
    };
    let cf = ControlFlowKind::Hanoi;
    let mut exec = KernelExec::new(kernel.clone(), &gpu.cfg.gpu.arch, launch, cf, opts)
        .map_err(|e| SimError::Exec(e.to_string()))?;
    for g in &mb.global {
        exec.memory().map_at(g.addr, g.bytes.len() as u64);
        exec.memory().write(g.addr, &g.bytes);
    }
    let block_x = mb.block[0];
    let inits = mb.inits.clone();
    let mut on_cta = |k: &mut KernelExec, warps: &[WarpId]| {
        for &w in warps {
            let (_, in_cta) = k.warp_location(w);
            for i in &inits {
                let reg = match i.reg.file {
                    sassim_isa::RegFile::R => ArchReg::R(i.reg.idx),
                    sassim_isa::RegFile::UR => ArchReg::UR(i.reg.idx),
                };
                k.set_reg(w, reg, init_vals(&i.value, in_cta, block_x));
            }
        }
    };
    gpu.run_kernel(&mut exec, &kernel, ropts, Some(&mut on_cta))
}

/// Run a microbenchmark on `cfg`. Functional errors (an illegal address…) are returned
/// in `error` together with everything recorded up to that point.
pub fn run_microbench(
    mb: &Microbench,
    cfg: &GpuConfig,
    cf: ControlFlowKind,
) -> Result<MicrobenchResult, SimError> {
    run_microbench_with(mb, cfg, cf, &MicrobenchOptions::default())
}

/// Limits and threads of a microbenchmark run (`sassim microbench --max-cycles --max-wall
/// --threads`).
#[derive(Debug, Clone)]
pub struct MicrobenchOptions {
    /// Stop after this many cycles (0: no limit).
    pub max_cycles: u64,
    /// Stop when this instant passes.
    pub deadline: Option<std::time::Instant>,
    /// Threads that tick the SMs ([`RunOptions::threads`]; the result does not depend on it).
    pub threads: usize,
}

impl Default for MicrobenchOptions {
    fn default() -> Self {
        MicrobenchOptions {
            max_cycles: 0,
            deadline: None,
            threads: 1,
        }
    }
}

/// [`run_microbench`] with `o`: stopped after `o.max_cycles` or at `o.deadline`, with what
/// was recorded until then and the reason in `stopped`; the SMs ticked on `o.threads`
/// threads (the result is the same for any number).
pub fn run_microbench_with(
    mb: &Microbench,
    cfg: &GpuConfig,
    cf: ControlFlowKind,
    o: &MicrobenchOptions,
) -> Result<MicrobenchResult, SimError> {
    if mb.kernel.instructions.is_empty() {
        return Err(SimError::Launch {
            kernel: mb.kernel.name.clone(),
            why: "the microbenchmark has no instructions".into(),
        });
    }
    let kernel = Arc::new(mb.kernel.clone());
    let launch = Launch {
        shared_bytes: 48 * 1024,
        ..Launch::new(mb.grid, mb.block, Vec::new())
    };
    let opts = ExecOptions {
        active_warps: mb.active_warps.clone(),
        yield_as_nop: !cfg.issue.yield_enabled,
        ..ExecOptions::default()
    };
    let mut exec = KernelExec::new(kernel.clone(), &cfg.gpu.arch, launch, cf, opts)
        .map_err(|e| SimError::Exec(e.to_string()))?;
    for g in &mb.global {
        exec.memory().map_at(g.addr, g.bytes.len() as u64);
        exec.memory().write(g.addr, &g.bytes);
    }
    if let Some(bad) = mb.shared.iter().find(|s| {
        let base = sassim_functional::ArchInfo::parse(&cfg.gpu.arch).map_or(0, |a| a.shared_base);
        let mem = 48 * 1024 + u64::from(base);
        s.addr.saturating_add(s.bytes.len() as u64) > mem
    }) {
        return Err(SimError::Launch {
            kernel: mb.kernel.name.clone(),
            why: format!(
                ".shared at {:#x} ({} bytes) ends beyond the CTA's 48 KB of shared memory",
                bad.addr,
                bad.bytes.len()
            ),
        });
    }
    let mut gpu = Gpu::new(cfg.clone());
    let ropts = RunOptions {
        record: true,
        slot_by_warp_index: true,
        ipc_sample_interval: 0,
        deadlock_cycles: 100_000,
        keep_cta_state: true,
        max_cycles: o.max_cycles,
        deadline: o.deadline,
        threads: o.threads.max(1),
        ..RunOptions::default()
    };
    let block_x = mb.block[0];
    let inits = mb.inits.clone();
    let shared = mb.shared.clone();
    let mut on_cta = |k: &mut KernelExec, warps: &[WarpId]| {
        for &w in warps {
            let (_, in_cta) = k.warp_location(w);
            for i in &inits {
                let reg = match i.reg.file {
                    sassim_isa::RegFile::R => ArchReg::R(i.reg.idx),
                    sassim_isa::RegFile::UR => ArchReg::UR(i.reg.idx),
                };
                k.set_reg(w, reg, init_vals(&i.value, in_cta, block_x));
            }
        }
        if let Some(&w0) = warps.first() {
            for s in &shared {
                let mem = k.shared_mut(w0);
                let a = s.addr as usize;
                // The window is checked before the run (`shared_window_error`).
                if let Some(dst) = mem.get_mut(a..a + s.bytes.len()) {
                    dst.copy_from_slice(&s.bytes);
                }
            }
        }
    };
    let (run, error) = match gpu.run_kernel(&mut exec, &kernel, &ropts, Some(&mut on_cta)) {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(e.to_string())),
    };
    // Registers written by the code, reported for every warp.
    let mut written: Vec<ArchReg> = Vec::new();
    for ins in &kernel.instructions {
        for r in sassim_isa::regs_written(ins) {
            if matches!(r, ArchReg::R(_)) && !written.contains(&r) {
                written.push(r);
            }
        }
    }
    written.sort();
    let mut warps = Vec::new();
    let subcores = gpu.core.subcores.max(1);
    if let Some(run) = &run {
        for crate::WarpRecord {
            slot, warp: id, log, ..
        } in &run.logs
        {
            let mut regs = BTreeMap::new();
            for r in &written {
                if let ArchReg::R(i) = r {
                    regs.insert(format!("R{i}"), exec.regs(WarpId(*id), *r).to_vec());
                }
            }
            warps.push(WarpResult {
                warp: *slot as u32,
                subcore: *slot as u32 % subcores,
                issues: log.issues.clone(),
                clocks: log.clocks.clone(),
                regs,
                rfc: log.rfc.clone(),
            });
        }
        warps.sort_by_key(|w| w.warp);
    }
    Ok(MicrobenchResult {
        gpu: cfg.gpu.name.clone(),
        total_cycles: run.as_ref().map_or(0, |r| r.bare_cycles),
        kernel_cycles: run.as_ref().map_or(0, |r| r.cycles),
        l0i_hits: run.as_ref().map_or(0, |r| r.stats.l0i_hits),
        l0i_misses: run.as_ref().map_or(0, |r| r.stats.l0i_misses),
        stream_buffer_hits: run.as_ref().map_or(0, |r| r.stats.stream_buffer_hits),
        warps,
        error,
        stopped: run.as_ref().and_then(|r| r.stopped.clone()),
    })
}
