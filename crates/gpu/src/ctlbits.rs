//! Where a kernel's control bits come from (issue 13, point 5): the compiler's listing, the
//! inference of `sassim_analysis::control_bits` from the opcode tables' latencies, or none
//! (hardware scoreboards).

use crate::prepare;
use sassim_analysis::control_bits::{infer, InferOptions, InstTiming};
use sassim_config::GpuConfig;
use sassim_isa::Kernel;
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
    prepare(kernel, g, core)
        .code
        .iter()
        .map(|si| InstTiming {
            fixed: si.fixed,
            latency: si.latency,
            reads_late: si.reads_late(),
        })
        .collect()
}

/// `kernel` with control bits inferred for `g` (stall counts, counters, wait masks; reuse
/// flags and yield bits cleared).
pub fn with_inferred_control_bits(kernel: &Kernel, g: &GpuConfig, core: &CoreConfig) -> Kernel {
    let t = timings(kernel, g, core);
    let bits = infer(kernel, &t, &InferOptions::default());
    let mut k = kernel.clone();
    for (ins, b) in k.instructions.iter_mut().zip(bits) {
        ins.ctrl = b;
    }
    k
}
