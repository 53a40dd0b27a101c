//! sassim-workload: launch specs for CUDA kernels, deterministic inputs, host references and
//! output checking.
//!
//! A workload is a folder `workloads/<name>/` with a CUDA source, committed SASS listings and a
//! launch spec `<name>.toml` (format: `docs/workloads.md`). [`Workload::load`] parses and
//! validates a spec, materializes its buffers, and computes the expected outputs (by a host
//! reference from [`mod@reference`] or from a file). A simulator then
//! 1. allocates [`Workload::buffers`] and copies their bytes to device memory,
//! 2. writes [`Workload::param_bytes`] at constant bank 0 offset [`param_cbank_offset`],
//! 3. launches [`Workload::kernel`] with [`Workload::grid`] / [`Workload::block`] /
//!    [`Workload::shared_mem_bytes`],
//! 4. reads the buffers back and calls [`Workload::check`].

pub mod builtin;
pub mod file;
pub mod fma;
pub mod reference;
pub mod spec;
pub mod values;
pub mod workload;

pub use builtin::{
    builtin, builtin_named, builtin_suite_dir, default_suite, list_suite, BuiltinWorkload, ARCHS, TOOLCHAIN,
};
pub use spec::{ElemType, Param, Spec};
pub use values::{SplitMix64, Values};
pub use workload::{
    Buffer, BufferCheck, CheckReport, Expected, MismatchError, MismatchKind, ParamSlot, SpecError, Workload,
};

/// Offset of the kernel parameter block in constant bank 0 (`c[0x0][...]`) for an SM version
/// (`75`, `86`, `90`, ...), as found in listings from ptxas 13.5: 0x160 for sm_75..sm_89
/// (Turing, Ampere, Ada), 0x210 for sm_90 (Hopper), 0x380 for sm_100 and later (Blackwell;
/// checked on sm_100 and sm_120). `None` before sm_75 (not targeted by CUDA 13).
pub fn param_cbank_offset(sm: u32) -> Option<u32> {
    match sm {
        75..=89 => Some(0x160),
        90..=99 => Some(0x210),
        100.. => Some(0x380),
        _ => None,
    }
}
