//! `sassim-functional`: execution-driven SASS semantics.
//!
//! - [`KernelExec`]: one kernel launch. [`KernelExec::issue`] executes the next instruction
//!   of a warp (reads sources, computes, accesses memory, updates control flow) and returns
//!   its register results as [`PendingWrites`]; [`KernelExec::commit`] applies them.
//! - [`cflow`]: pluggable control-flow managers — Hanoi and the IPDOM SIMT stack.
//! - [`runner`]: a functional runner (round-robin, immediate commit, deadlock detection)
//!   and [`run_workload`] for the `sassim-workload` specs.
//! - [`trace`]: control-flow traces and their comparison (Levenshtein discrepancy).
//! - [`tracer`]: an Accel-Sim trace writer (`kernelslist.g`, `kernel-N.traceg`, tracer
//!   version 4 with address compression) for any executed workload.
//!
//! See `docs/functional.md`.

mod alu;
pub mod cflow;
pub mod cluster;
pub mod decode;
pub mod error;
pub mod exec;
pub mod hopper;
pub mod idp;
pub mod memory;
pub mod runner;
pub mod tensor;
pub mod tma;
pub mod trace;
pub mod tracer;

pub use cflow::{CfView, ControlFlow, ControlFlowKind, PathEntry, RecView};
pub use error::{ExecError, Space};
pub use exec::{
    ArchInfo, ExecOptions, Issued, KernelExec, Launch, MemAccess, MemKind, PendingWrites, ProbeTally,
    RegWrite, WarpId, WarpStatus, DEFAULT_SHARED_BYTES, LOCAL_BYTES, MAX_WRITES,
};
pub use memory::GlobalMemory;
pub use runner::{run_functional, run_workload, FunctionalResult, RunOptions, WorkloadResult};
pub use trace::{cflow_compare, levenshtein, CflowReport, WarpTrace};
pub use tracer::{
    kernel_header, prepare_workload, trace_exec, write_workload_trace, write_workload_trace_with,
    AddrCompression, KernelTracer, TraceCounts, TraceOptions, TraceSummary, TraceWriteError,
};
