//! The functional runner: warps interleaved round-robin, one instruction at a time, results
//! committed immediately, CTA barriers, deadlock detection.

use crate::cflow::ControlFlowKind;
use crate::error::ExecError;
use crate::exec::{ExecOptions, Issued, KernelExec, Launch, WarpId, WarpStatus};
use crate::memory::GlobalMemory;
use crate::trace::WarpTrace;
use crate::tracer::{prepare_workload, PreparedWorkload};
use sassim_isa::{Kernel, Listing};
use std::collections::HashMap;
use std::sync::Arc;

/// Options of the functional runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    pub exec: ExecOptions,
    /// CTAs resident at once (None: all of them). New CTAs start as others finish.
    pub max_resident_ctas: Option<u32>,
    /// Deadlock: stop after this many consecutive warp instructions in which no memory
    /// changed, no thread exited and no barrier was released.
    pub deadlock_steps: u64,
    /// Hard limit on warp instructions (None: unlimited).
    pub max_steps: Option<u64>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            exec: ExecOptions::default(),
            max_resident_ctas: None,
            deadlock_steps: 2_000_000,
            max_steps: None,
        }
    }
}

/// Statistics of a functional run.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RunStats {
    pub warp_instructions: u64,
    /// Sum over warp instructions of the lanes that executed (guard true).
    pub thread_instructions: u64,
    pub ctas: u32,
    pub warps: u32,
}

/// Result of [`run_functional`].
#[derive(Debug, Clone)]
pub struct FunctionalResult {
    pub stats: RunStats,
    /// Per-warp control-flow traces (empty unless `record_cflow_trace`).
    pub traces: Vec<WarpTrace>,
    /// Global memory after the run.
    pub memory: GlobalMemory,
}

/// Run a launch whose global memory needs no setup (e.g. microbenchmarks writing their own data).
pub fn run_functional(
    kernel: Arc<Kernel>,
    arch: &str,
    launch: Launch,
    cf: ControlFlowKind,
    opts: RunOptions,
) -> Result<FunctionalResult, ExecError> {
    let mut ex = KernelExec::new(kernel, arch, launch, cf, opts.exec.clone())?;
    let (stats, traces) = run_exec(&mut ex, &opts)?;
    Ok(FunctionalResult {
        stats,
        traces,
        memory: ex.memory().clone(),
    })
}

/// Run every CTA of a prepared [`KernelExec`] to completion.
pub fn run_exec(ex: &mut KernelExec, opts: &RunOptions) -> Result<(RunStats, Vec<WarpTrace>), ExecError> {
    run_exec_with(ex, opts, &mut |_, _, _| Ok::<(), ExecError>(()))
}

/// [`run_exec`] calling `on_issue` after each instruction is issued and committed (the
/// Accel-Sim trace writer records the instruction stream this way).
pub fn run_exec_with<E: From<ExecError>>(
    ex: &mut KernelExec,
    opts: &RunOptions,
    on_issue: &mut dyn FnMut(&KernelExec, WarpId, &Issued) -> Result<(), E>,
) -> Result<(RunStats, Vec<WarpTrace>), E> {
    let nctas = ex.launch().num_ctas();
    let max_res = opts.max_resident_ctas.unwrap_or(nctas).max(1);
    let mut next_cta = 0u32;
    let mut resident: Vec<Vec<WarpId>> = Vec::new();
    let mut all: Vec<WarpId> = Vec::new();
    let mut stats = RunStats {
        ctas: nctas,
        ..RunStats::default()
    };
    let mut last_progress = ex.progress_counter();
    let mut idle_steps: u64 = 0;
    let mut clock: u64 = 0;
    loop {
        // Start CTAs while there is room.
        resident.retain(|ws| ws.iter().any(|w| ex.warp_state(*w) != WarpStatus::Exited));
        // The CTAs of a thread-block cluster start together (they are co-scheduled).
        let csize = ex.launch().cluster_size().max(1);
        while ((resident.len() as u32) < max_res || !next_cta.is_multiple_of(csize)) && next_cta < nctas {
            let id = ex.launch().clusters().dispatch_order(next_cta);
            let ws = ex.start_cta(id);
            stats.warps = stats.warps.saturating_add(ws.len() as u32);
            if ex.options().record_cflow_trace {
                // Kept for the traces (the engine keeps these warps' records).
                all.extend(&ws);
            }
            resident.push(ws);
            next_cta += 1;
        }
        if resident.is_empty() {
            break;
        }
        let mut issued_any = false;
        for ws in &resident {
            for &w in ws {
                if let WarpStatus::Ready { .. } = ex.warp_state(w) {
                    let is = ex.issue(w, clock)?;
                    let writes = is.writes;
                    ex.commit(w, &writes);
                    on_issue(ex, w, &is)?;
                    clock += 1;
                    issued_any = true;
                    stats.warp_instructions += 1;
                    stats.thread_instructions += is.active_mask.count_ones() as u64;
                    let p = ex.progress_counter();
                    if p != last_progress {
                        last_progress = p;
                        idle_steps = 0;
                    } else {
                        idle_steps += 1;
                    }
                    if is.exited {
                        ex.retire_cta_of(w);
                    }
                }
            }
        }
        if let Some(m) = opts.max_steps {
            if stats.warp_instructions >= m {
                return Err(ExecError::Deadlock(format!(
                    "stopped after the limit of {m} warp instructions; {}",
                    describe(ex, &resident)
                ))
                .into());
            }
        }
        if !issued_any {
            return Err(
                ExecError::Deadlock(format!("no warp can issue; {}", describe(ex, &resident))).into(),
            );
        }
        if idle_steps >= opts.deadlock_steps {
            return Err(ExecError::Deadlock(format!(
                "no progress (memory change, exit or barrier release) in {idle_steps} warp instructions; {}",
                describe(ex, &resident)
            ))
            .into());
        }
    }
    let traces = if ex.options().record_cflow_trace {
        all.iter()
            .map(|&w| {
                let (cta, warp_in_cta) = ex.warp_location(w);
                WarpTrace {
                    warp: w.0,
                    cta,
                    warp_in_cta,
                    entries: ex.take_cflow_trace(w),
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok((stats, traces))
}

/// "warps [0,1] spinning at pc 0x70 ...; warp 2 waiting at barrier 0": the state of every
/// resident warp that has not exited, grouped.
fn describe(ex: &KernelExec, resident: &[Vec<WarpId>]) -> String {
    let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
    for &w in resident.iter().flatten() {
        let st = match ex.warp_state(w) {
            WarpStatus::Exited => continue,
            WarpStatus::Ready { pc } => {
                let mut s = format!(
                    "running (spinning) at pc {pc:#x} with mask {:#010x}",
                    ex.next_mask(w).unwrap_or(0)
                );
                if let crate::cflow::CfView::Hanoi { waiting, rec, .. } = ex.cflow_view(w) {
                    if waiting != 0 {
                        if let Some(r) = rec.last() {
                            s += &format!(
                                " while threads {waiting:#010x} wait to reconverge (B{} -> pc {:#x})",
                                r.b, r.pc
                            );
                        }
                    }
                }
                s
            }
            WarpStatus::AtBarrier { id } => format!("waiting at barrier {id}"),
            WarpStatus::Blocked => format!(
                "blocked: {}",
                ex.stuck_reason(w).unwrap_or_else(|| "no runnable path".into())
            ),
        };
        match groups.iter_mut().find(|g| g.0 == st) {
            Some(g) => g.1.push(w.0),
            None => groups.push((st, vec![w.0])),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(s, ws)| {
            let list: Vec<String> = ws.iter().take(16).map(|w| w.to_string()).collect();
            let more = if ws.len() > 16 {
                format!(",… ({} warps)", ws.len())
            } else {
                String::new()
            };
            format!("warps [{}{more}] {s}", list.join(","))
        })
        .collect();
    parts.join("; ")
}

/// Result of [`run_workload`].
#[derive(Debug, Clone)]
pub struct WorkloadResult {
    pub stats: RunStats,
    pub check: sassim_workload::CheckReport,
    pub traces: Vec<WarpTrace>,
    /// Final contents of every buffer, by name.
    pub outputs: HashMap<String, Vec<u8>>,
}

/// Run a workload spec on a parsed listing: allocate and fill its buffers, lay out the
/// parameters with `param_bytes`, run every CTA, read the buffers back and check them.
pub fn run_workload(
    spec: &sassim_workload::Workload,
    listing: &Listing,
    arch: &str,
    cf: ControlFlowKind,
) -> Result<WorkloadResult, ExecError> {
    run_workload_with(spec, listing, arch, cf, &RunOptions::default())
}

/// [`run_workload`] with options.
pub fn run_workload_with(
    spec: &sassim_workload::Workload,
    listing: &Listing,
    arch: &str,
    cf: ControlFlowKind,
    opts: &RunOptions,
) -> Result<WorkloadResult, ExecError> {
    let PreparedWorkload {
        exec: mut ex,
        buffers,
    } = prepare_workload(spec, listing, arch, cf, opts)?;
    let (stats, traces) = run_exec(&mut ex, opts)?;
    let (outputs, check) = check_outputs(spec, &ex, &buffers)?;
    Ok(WorkloadResult {
        stats,
        check,
        traces,
        outputs,
    })
}

/// Read the `buffers` of a prepared workload back after its run and check them against
/// the spec's host references: the final contents by name and the check report (a
/// mismatch is `ExecError::Check`).
pub(crate) fn check_outputs(
    spec: &sassim_workload::Workload,
    ex: &KernelExec,
    buffers: &[(String, u64, u64)],
) -> Result<(HashMap<String, Vec<u8>>, sassim_workload::CheckReport), ExecError> {
    let mut outputs = HashMap::new();
    for (name, a, n) in buffers {
        let bytes = ex
            .memory_ref()
            .read(*a, *n as usize)
            .ok_or_else(|| ExecError::Check(format!("buffer `{name}` unreadable")))?;
        outputs.insert(name.clone(), bytes);
    }
    let check = spec
        .check(&outputs)
        .map_err(|e| ExecError::Check(e.to_string()))?;
    Ok((outputs, check))
}
