//! Running the built-in (or user) workloads through the timing model, with output checks.

use crate::{Gpu, KernelRun, RunOptions, SimError};
use sassim_functional::{ControlFlowKind, ExecOptions, KernelExec, Launch};
use sassim_isa::{Kernel, Listing};
use sassim_workload::{BuiltinWorkload, Workload};
use std::collections::HashMap;
use std::sync::Arc;

/// Architectures the built-in workloads ship listings for.
pub const LISTING_ARCHS: [&str; 3] = ["sm_75", "sm_86", "sm_90"];

/// The shipped listing architecture closest to (not above, where possible) `arch`.
pub fn listing_arch_for(arch: &str) -> &'static str {
    let n: u32 = arch.trim_start_matches("sm_").parse().unwrap_or(86);
    match n {
        0..=79 => "sm_75",
        80..=89 => "sm_86",
        _ => "sm_90",
    }
}

/// Registers per thread and static shared memory from a ptxas `-v` report, for `arch`.
pub fn ptxas_usage(info: &str, kernel: &str, arch: &str) -> Option<(u32, u32)> {
    let key = format!("Compiling entry function '{kernel}' for '{arch}'");
    let start = info.find(&key)?;
    let rest = &info[start..];
    let line = rest.lines().find(|l| l.contains("Used "))?;
    let num_before = |word: &str| -> Option<u32> {
        let i = line.find(word)?;
        line[..i].split_whitespace().last()?.parse().ok()
    };
    let regs = num_before(" registers")?;
    let smem = num_before(" bytes smem").unwrap_or(0);
    Some((regs, smem))
}

#[derive(Debug)]
pub struct WorkloadRun {
    pub name: String,
    pub arch: String,
    pub run: KernelRun,
    pub check: Result<sassim_workload::CheckReport, String>,
}

/// A workload's kernel launch as [`run_workload_timed`] runs it: the kernel (LTRF's
/// renumbered one when the configuration asks for it), its functional state with the
/// buffers allocated and the parameters set, where each buffer is, and the run options with
/// the CTAs' shared memory.
pub struct PreparedWorkload {
    pub kernel: Arc<Kernel>,
    pub exec: KernelExec,
    pub addrs: HashMap<String, u64>,
    pub opts: RunOptions,
}

/// Set up workload `w`'s launch on `gpu` ([`PreparedWorkload`]).
pub fn prepare_workload(
    gpu: &Gpu,
    w: &Workload,
    listing: &Listing,
    arch: &str,
    static_smem: u32,
    cf: ControlFlowKind,
    opts: &RunOptions,
) -> Result<PreparedWorkload, SimError> {
    let kernel = listing.kernel(w.kernel()).ok_or_else(|| SimError::Launch {
        kernel: w.kernel().to_string(),
        why: format!("the {arch} listing has no function named {}", w.kernel()),
    })?;
    // LTRF with renumbering runs the renumbered kernel.
    let kernel = Arc::new(crate::ltrf::kernel_for(kernel, &gpu.cfg).unwrap_or_else(|| kernel.clone()));
    let shared = w.shared_mem_bytes() + static_smem;
    let mut launch = Launch::new(w.grid, w.block, Vec::new());
    launch.shared_bytes = shared.max(1024);
    // `issue.yield_enabled = false` turns YIELD into a NOP (the Hanoi paper's deadlock study).
    let eopts = ExecOptions {
        yield_as_nop: !gpu.cfg.issue.yield_enabled,
        ..ExecOptions::default()
    };
    let mut exec = KernelExec::new(kernel.clone(), arch, launch.clone(), cf, eopts)
        .map_err(|e| SimError::Exec(e.to_string()))?;
    let mut addrs = HashMap::new();
    for b in w.buffers() {
        let a = exec.memory().alloc_with(&b.bytes, 4, 256);
        addrs.insert(b.name.clone(), a);
    }
    let params = w.param_bytes(|n| addrs.get(n).copied().unwrap_or(0));
    exec.set_params(&params)
        .map_err(|e| SimError::Exec(e.to_string()))?;
    let opts = RunOptions {
        shared_per_cta: shared,
        ..opts.clone()
    };
    Ok(PreparedWorkload {
        kernel,
        exec,
        addrs,
        opts,
    })
}

/// Allocate the workload's buffers, launch its kernel on the timing model and check the
/// outputs against the host reference.
pub fn run_workload_timed(
    gpu: &mut Gpu,
    w: &Workload,
    listing: &Listing,
    arch: &str,
    static_smem: u32,
    cf: ControlFlowKind,
    opts: &RunOptions,
) -> Result<WorkloadRun, SimError> {
    let mut p = prepare_workload(gpu, w, listing, arch, static_smem, cf, opts)?;
    let run = gpu.run_kernel(&mut p.exec, &p.kernel, &p.opts, None)?;
    // The outputs are compared in place in device memory (not copied out first).
    let mem = p.exec.memory_ref();
    let output = |name: &str| mem.bytes_at(*p.addrs.get(name)?, w.buffer(name)?.bytes.len());
    let check = w.check_with(output).map_err(|e| e.to_string());
    Ok(WorkloadRun {
        name: w.name.clone(),
        arch: arch.to_string(),
        run,
        check,
    })
}

/// Load a built-in workload's spec and listing for `arch`.
pub fn load_builtin(b: &BuiltinWorkload, arch: &str) -> Result<(Workload, Listing, u32), String> {
    let w = b.load().map_err(|e| e.to_string())?;
    let text = b
        .listing(arch)
        .ok_or_else(|| format!("workload {} has no {arch} listing", b.name))?;
    let listing = sassim_sass::parse_listing(
        text,
        &format!(
            "workloads/{0}/{0}_{1}.cuobjdump-sass.txt",
            b.name,
            arch.replace('_', "")
        ),
    )
    .map_err(|e| e.to_string())?;
    let smem = ptxas_usage(b.ptxas_info, w.kernel(), arch).map_or(0, |u| u.1);
    Ok((w, listing, smem))
}
