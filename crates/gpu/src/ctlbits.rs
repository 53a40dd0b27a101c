//! Where a kernel's control bits come from (issue 13, point 5): the compiler's listing, the
//! inference of `sassim_analysis::control_bits` from the opcode tables' latencies, or none
//! (hardware scoreboards).

use crate::prepare;
use sassim_analysis::control_bits::{infer, InferOptions, InstTiming};
use sassim_config::GpuConfig;
use sassim_isa::Kernel;
use sassim_timing::inst::{MemKind, MemSpace};
use sassim_timing::CoreConfig;

/// The source of a kernel's control bits (`--control-bits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ControlBitSource {
    /// The compiler's, from the SASS listing (traces: when the listing is given).
    #[default]
    Listing,
    /// Inferred from the opcode tables' latencies (traces without a listing).
    Infer,
    /// None: hardware scoreboards keep dependent instructions apart (hybrid mode).
    Scoreboard,
}

impl ControlBitSource {
    pub fn name(self) -> &'static str {
        match self {
            ControlBitSource::Listing => "listing",
            ControlBitSource::Infer => "inferred",
            ControlBitSource::Scoreboard => "scoreboard",
        }
    }
}

/// The timing class of every instruction of `kernel` on `g`, for the inference.
pub fn timings(kernel: &Kernel, g: &GpuConfig, core: &CoreConfig) -> Vec<InstTiming> {
    let unit = |name: &str| core.units.iter().position(|u| u.name == name);
    let small = |u: usize| u8::try_from(u).unwrap_or(u8::MAX);
    let (fp32, int) = (unit("fp32"), unit("int"));
    prepare(kernel, g, core)
        .code
        .iter()
        .zip(&kernel.instructions)
        .map(|(si, ins)| InstTiming {
            fixed: si.fixed,
            latency: si.latency,
            reads_late: si.reads_late(),
            memory: si.reads_late(),
            control: is_control_flow(&ins.opcode.base),
            unit: small(si.unit),
            alt_unit: int
                .filter(|_| core.fp32_in_int_pipe && fp32 == Some(si.unit))
                .map(small),
            fixed_read: si
                .mem
                .filter(|m| m.space == MemSpace::Shared && m.kind == MemKind::Load)
                .map(|_| g.mem_pipeline.src_release_base),
            // Memory instructions: `memory_issue_interval`; units shared by the SM: no
            // per-warp spacing.
            latch: if si.mem.is_some() || core.units.get(si.unit).is_some_and(|u| u.shared_by_sm) {
                0
            } else {
                si.latch_cycles
            },
        })
        .collect()
}

/// Branches, exits, calls, returns, warp synchronisation, memory barriers and cache control
/// (ptxas gives them a stall count of at least `[compiler] control_min_stall`).
fn is_control_flow(base: &str) -> bool {
    matches!(
        base,
        "BRA"
            | "BRX"
            | "JMP"
            | "JMX"
            | "EXIT"
            | "CALL"
            | "RET"
            | "BSYNC"
            | "WARPSYNC"
            | "KILL"
            | "MEMBAR"
            | "CCTL"
    )
}

/// The inference's settings for `g`: the preset's `[compiler]` conventions and its
/// dependence counters.
pub fn infer_options(g: &GpuConfig) -> InferOptions {
    let c = &g.compiler;
    let small = |v: u32| u8::try_from(v.min(15)).unwrap_or(15);
    InferOptions {
        max_stall: small(g.issue.max_stall_counter),
        counters: u8::try_from(g.issue.dependence_counters.min(8)).unwrap_or(8),
        guard_predicate_latency: c.guard_predicate_latency,
        memory_issue_interval: c.memory_issue_interval,
        extra_for_late_readers: c.memory_read_extra,
        control_min_stall: small(c.control_min_stall),
        yield_min_stall: small(c.yield_min_stall),
        read_counter_window: c.read_counter_window,
    }
}

/// `kernel` with control bits inferred for `g` (stall counts, counters, wait masks; reuse
/// flags and yield bits cleared).
pub fn with_inferred_control_bits(kernel: &Kernel, g: &GpuConfig, core: &CoreConfig) -> Kernel {
    let t = timings(kernel, g, core);
    let bits = infer(kernel, &t, &infer_options(g));
    let mut k = kernel.clone();
    for (ins, b) in k.instructions.iter_mut().zip(bits) {
        ins.ctrl = b;
    }
    k
}
