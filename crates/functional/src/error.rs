//! Errors of the functional engine.

use serde::Serialize;
use std::fmt;

/// Memory spaces, as reported in errors and [`crate::MemAccess`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Space {
    Global,
    Shared,
    Local,
    Const,
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "constant",
        })
    }
}

/// Why execution stopped. Every message names the PC (and warp/lane where it applies).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// An opcode, modifier combination or operand form the engine does not implement.
    #[error("unsupported: {what} at pc {pc:#x}")]
    Unsupported { what: String, pc: u64 },
    /// A memory access outside every allocated region.
    #[error(
        "illegal address: warp {warp} lane {lane} at pc {pc:#x}: {space} address {addr:#x} ({bytes} bytes) is outside every allocation"
    )]
    IllegalAddress {
        warp: u32,
        lane: u32,
        pc: u64,
        addr: u64,
        bytes: u32,
        space: Space,
    },
    /// A misaligned memory access.
    #[error("misaligned address: warp {warp} lane {lane} at pc {pc:#x}: {space} address {addr:#x} is not {bytes}-byte aligned")]
    Misaligned {
        warp: u32,
        lane: u32,
        pc: u64,
        addr: u64,
        bytes: u32,
        space: Space,
    },
    /// The warp's PC does not point to an instruction of the kernel.
    #[error("warp {warp}: pc {pc:#x} is outside the kernel")]
    BadPc { warp: u32, pc: u64 },
    /// No warp can make progress.
    #[error("deadlock: {0}")]
    Deadlock(String),
    /// Bad launch or arguments.
    #[error("launch: {0}")]
    Launch(String),
    /// `issue` called on a warp that cannot issue.
    #[error("warp {warp} cannot issue: {why}")]
    NotReady { warp: u32, why: String },
    /// A device `assert` failed (the message as the CUDA runtime prints it).
    #[error("device-side assert triggered: {0}")]
    Assert(String),
    /// A workload's outputs did not match (message from the workload checker).
    #[error("check failed: {0}")]
    Check(String),
}

impl ExecError {
    pub(crate) fn unsupported(what: impl Into<String>, pc: u64) -> ExecError {
        ExecError::Unsupported {
            what: what.into(),
            pc,
        }
    }
}
