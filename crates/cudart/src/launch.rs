//! One kernel launch: parameters from the host's argument array, the device state, and a run
//! through the timing model (or functional execution only).

use crate::abi::*;
use crate::config::Event;
use crate::error::{RtError, RtResult};
use crate::runtime::Runtime;
use sassim_functional::{ControlFlowKind, ExecError, ExecOptions, KernelExec, Launch};
use sassim_gpu::{ProgressFn, RunOptions, SimError};
use std::ffi::c_void;
use std::sync::Arc;

/// Mode string of functional-only kernel reports.
pub const MODE_FUNCTIONAL: &str = "functional";

/// CUDA's limits on launch dimensions (CUDA C++ Programming Guide, technical specifications
/// per compute capability: identical for 7.5 to 9.0).
const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];
const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65535, 65535];

/// The CUDA error code of a kernel fault.
fn fault_code(e: &ExecError) -> cudaError_t {
    match e {
        ExecError::IllegalAddress { .. } => cudaErrorIllegalAddress,
        ExecError::Misaligned { .. } => cudaErrorMisalignedAddress,
        ExecError::Unsupported { .. } => cudaErrorIllegalInstruction,
        ExecError::Assert(_) => cudaErrorAssert,
        ExecError::Deadlock(_) => cudaErrorLaunchTimeout,
        _ => cudaErrorLaunchFailure,
    }
}

/// Write device printf output through the C library's `stdout`, so that it interleaves with
/// the program's own `printf` in the order of execution.
pub fn write_stdout(bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    extern "C" {
        static mut stdout: *mut libc::FILE;
    }
    // SAFETY: `stdout` is the C library's stream, valid for the life of the process;
    // fwrite copies `bytes.len()` bytes from a live slice.
    unsafe {
        let out = stdout;
        libc::fwrite(bytes.as_ptr().cast(), 1, bytes.len(), out);
    }
}

/// Launch `func` (a registered host stub) with `<<<grid, block, shared, stream>>>`.
///
/// # Safety
/// `args` must point to one valid pointer per kernel parameter, each to at least the
/// parameter's size in bytes (what nvcc's launch stubs pass).
pub unsafe fn launch(
    rt: &mut Runtime,
    func: usize,
    grid: dim3,
    block: dim3,
    args: *const *const c_void,
    shared: usize,
    _stream: usize,
) -> RtResult<()> {
    if let Some(e) = rt.init_error.clone() {
        return Err(e);
    }
    let (m, name) = rt.functions.get(&func).cloned().ok_or_else(|| {
        RtError::new(
            cudaErrorInvalidDeviceFunction,
            format!("{func:#x} is not a registered kernel"),
        )
    })?;
    let (g, b) = (grid.arr(), block.arr());
    let threads = b.iter().map(|&x| x as u64).product::<u64>();
    if (0..3).any(|i| g[i] == 0 || b[i] == 0 || g[i] > MAX_GRID[i] || b[i] > MAX_BLOCK[i]) || threads > 1024 {
        return Err(RtError::new(
            cudaErrorInvalidConfiguration,
            format!("kernel {name}: launch <<<{g:?}, {b:?}>>> is outside CUDA's limits"),
        ));
    }
    let ctas = g.iter().map(|&x| x as u64).product::<u64>();
    if ctas > u32::MAX as u64 {
        return Err(RtError::new(
            cudaErrorInvalidConfiguration,
            format!("kernel {name}: grid {g:?} has more than 2^32 blocks"),
        ));
    }
    let attrs = rt.func_attrs.get(&func).copied().unwrap_or_default();
    let opt_in = rt.gpu_cfg.gpu.shared_mem_per_cta_max_kb as u64 * 1024;
    let image = rt.image_of(m, Some(&name))?;
    let k = image.kernels.get(&name).cloned().ok_or_else(|| {
        RtError::fatal(
            cudaErrorInvalidDeviceFunction,
            format!("kernel {name} is not in its module"),
        )
    })?;
    let arch_name = format!("sm_{}", image.arch);
    let arch = sassim_functional::ArchInfo::parse(&arch_name)
        .map_err(|e| RtError::fatal(cudaErrorInvalidKernelImage, e.to_string()))?;
    let static_shared = (k.info.shared_section as u64).saturating_sub(arch.shared_base as u64);
    let dyn_limit = attrs
        .max_dynamic_shared
        .map_or(48 * 1024u64.saturating_sub(static_shared), |v| v as u64);
    if shared as u64 > dyn_limit || static_shared + shared as u64 > opt_in {
        return Err(RtError::new(
            cudaErrorInvalidValue,
            format!(
                "kernel {name}: {shared} bytes of dynamic shared memory exceed the limit of {dyn_limit} \
                 (raise it with cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize); \
                 at most {opt_in} bytes per block in all)"
            ),
        ));
    }
    if let Some(mt) = k.info.max_threads {
        let limit = mt.iter().map(|&x| x.max(1) as u64).product::<u64>();
        if threads > limit {
            return Err(RtError::new(
                cudaErrorInvalidValue,
                format!("kernel {name}: {threads} threads per block exceed its __launch_bounds__ of {limit}"),
            ));
        }
    }
    // Parameters.
    let mut params = vec![0u8; k.info.param_size as usize];
    if !k.info.params.is_empty() && args.is_null() {
        return Err(RtError::new(
            cudaErrorInvalidValue,
            format!("kernel {name}: no argument array"),
        ));
    }
    for (i, p) in k.info.params.iter().enumerate() {
        // SAFETY: the caller guarantees one pointer per parameter (nvcc's stubs pass
        // `void* args[] = { &a, &b, ... }` in ordinal order).
        let src = unsafe { *args.add(i) };
        if src.is_null() {
            return Err(RtError::new(
                cudaErrorInvalidValue,
                format!("kernel {name}: argument {i} is NULL"),
            ));
        }
        // SAFETY: as above, each argument points to at least `p.size` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), p.size as usize) };
        params[p.offset as usize..(p.offset + p.size) as usize].copy_from_slice(bytes);
    }
    let mut launch = Launch::new(g, b, params);
    launch.shared_bytes = (static_shared + shared as u64) as u32;
    launch.const_banks = k.banks.clone();
    launch.const0 = k.const0.clone();
    if let Some(c) = k.info.cluster_dims {
        launch.cluster = c.map(|d| d.max(1));
        if let Some(why) = launch.clusters().error() {
            return Err(RtError::new(
                cudaErrorInvalidConfiguration,
                format!("kernel {name}: {why}"),
            ));
        }
        if arch.sm < 90 {
            return Err(RtError::new(
                cudaErrorInvalidConfiguration,
                format!("kernel {name}: thread-block clusters need sm_90 or later ({arch_name})"),
            ));
        }
    }
    let frame = (k.info.frame_size.max(k.info.min_stack) as u64).div_ceil(16) * 16;
    let eopts = ExecOptions {
        yield_as_nop: !rt.gpu_cfg.issue.yield_enabled,
        local_bytes: frame.max(rt.stack_limit).min(u32::MAX as u64) as u32,
        device_heap_bytes: rt.heap_limit,
        ..ExecOptions::default()
    };
    let mut exec = KernelExec::new(k.code.clone(), &arch_name, launch, ControlFlowKind::Hanoi, eopts)
        .map_err(|e| RtError::fatal(cudaErrorLaunchFailure, format!("kernel {name}: {e}")))?;
    // Device state in, run, device state out.
    rt.host_to_device_mirrors();
    std::mem::swap(exec.memory(), &mut rt.mem);
    // Launch ids count from 1, as Accel-Sim's `kernel_launch_uid`.
    rt.launches += 1;
    let uid = rt.launches;
    let result = if rt.cfg.functional {
        let shared = exec.launch().shared_bytes;
        run_functional(rt, &mut exec, &name, g, b, uid, k.info.regs, shared)
    } else {
        run_timed(rt, &mut exec, &k.code, &name, g, b, uid, k.info.regs)
    };
    std::mem::swap(exec.memory(), &mut rt.mem);
    rt.device_to_host_mirrors();
    let out = exec.take_printf_output();
    write_stdout(&out);
    let (mut report, cycles) = match result {
        Ok(r) => r,
        Err(e) => {
            let fault = exec.fault().cloned();
            let (code, fatal) = match &fault {
                Some(f) => (
                    fault_code(f),
                    matches!(f, ExecError::Unsupported { .. } | ExecError::Deadlock(_)),
                ),
                None => (cudaErrorLaunchFailure, true),
            };
            if let Some(a) = exec.assertion() {
                eprintln!("{a}");
            }
            let msg = format!("kernel {name} ({arch_name}, launch {uid}): {e}");
            if !fatal {
                // A fault of the program (as compute-sanitizer would report it): the program
                // gets the error code; the user sees where it happened.
                eprintln!("sassim: {msg}");
            }
            rt.sticky = Some(code);
            return Err(if fatal {
                RtError::fatal(code, msg)
            } else {
                RtError::new(code, msg)
            });
        }
    };
    let start = rt.now;
    rt.now += cycles;
    report.start_cycle = start;
    rt.event(&Event::Kernel {
        report: Box::new(report),
        start_cycle: start,
        end_cycle: rt.now,
        printf_bytes: out.len() as u64,
    });
    if let Some(message) = rt.stopped.take() {
        // The program cannot go on with a kernel that did not finish: it gets a launch
        // timeout, and `sassim exec` reports the stop (exit status 3).
        eprintln!("sassim: {message}");
        rt.event(&Event::Stopped {
            message: message.clone(),
        });
        rt.sticky = Some(cudaErrorLaunchTimeout);
        return Err(RtError::new(cudaErrorLaunchTimeout, message));
    }
    Ok(())
}

fn progress_fn(fd: i32, name: &str) -> ProgressFn {
    let name = name.to_string();
    ProgressFn(Arc::new(move |cycle, done, total, insts| {
        let line = format!("{name} {cycle} {done} {total} {insts}\n");
        // SAFETY: writes a live buffer to a descriptor; errors (a full pipe) are ignored.
        unsafe {
            libc::write(fd, line.as_ptr().cast(), line.len());
        }
    }))
}

#[allow(clippy::too_many_arguments)]
fn run_timed(
    rt: &mut Runtime,
    exec: &mut KernelExec,
    code: &sassim_isa::Kernel,
    name: &str,
    g: [u32; 3],
    b: [u32; 3],
    uid: u32,
    regs: u32,
) -> Result<(sassim_report::KernelReport, u64), String> {
    let opts = RunOptions {
        shared_per_cta: exec.launch().shared_bytes,
        max_cycles: rt.cfg.max_cycles,
        deadline: rt.deadline,
        deadlock_cycles: rt.cfg.deadlock_cycles,
        regs_per_thread: Some(regs),
        progress: rt.cfg.progress_fd.map(|fd| progress_fn(fd, name)),
        threads: rt.cfg.threads,
        ..RunOptions::default()
    };
    let run = rt
        .gpu
        .run_kernel(exec, code, &opts, None)
        .map_err(|e: SimError| e.to_string())?;
    let report = sassim_gpu::report::kernel_report(&run, uid, g, b, sassim_report::MODE_EXECUTION);
    if let Some(why) = &run.stopped {
        rt.stopped = Some(format!("kernel {name} (launch {uid}) {why}"));
    }
    Ok((report, run.cycles))
}

#[allow(clippy::too_many_arguments)]
fn run_functional(
    rt: &mut Runtime,
    exec: &mut KernelExec,
    name: &str,
    g: [u32; 3],
    b: [u32; 3],
    uid: u32,
    regs: u32,
    shared: u32,
) -> Result<(sassim_report::KernelReport, u64), String> {
    // As many CTAs resident as the timing model would place (blocks that wait for each
    // other, e.g. through a spinlock, must be able to run together).
    let warps = exec.launch().warps_per_cta();
    let threads = exec.launch().threads_per_cta();
    let gran = rt.gpu_cfg.gpu.reg_alloc_granularity.max(1);
    let per_sm = rt
        .gpu
        .ctas_per_sm(warps, threads, regs.max(1).div_ceil(gran) * gran, shared);
    let opts = sassim_functional::RunOptions {
        max_resident_ctas: Some((per_sm.max(1)).saturating_mul(rt.gpu_cfg.gpu.num_sms)),
        ..sassim_functional::RunOptions::default()
    };
    let (stats, _) = sassim_functional::runner::run_exec(exec, &opts).map_err(|e| e.to_string())?;
    let report = sassim_report::KernelReport {
        name: name.to_string(),
        launch_uid: uid,
        grid: g,
        block: b,
        warp_insts: stats.warp_instructions,
        thread_insts: stats.thread_instructions,
        ctas: stats.ctas as u64,
        mode: MODE_FUNCTIONAL.to_string(),
        ..Default::default()
    };
    Ok((report, 0))
}
