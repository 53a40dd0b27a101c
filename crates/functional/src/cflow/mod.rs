//! Control-flow management: which threads of a warp execute, and at which PC.
//!
//! Two implementations of [`ControlFlow`], chosen by [`ControlFlowKind`]:
//! - [`hanoi::Hanoi`]: the mechanism of *Control Flow Management in Modern GPUs* (Hanoi),
//!   section VII, driven by the SASS convergence instructions (section V).
//! - [`simt::SimtStack`]: the classic pre-Volta immediate-post-dominator SIMT stack, which
//!   ignores the convergence instructions (they are hints or no-ops there).
//!
//! The engine calls exactly one method per executed control-flow instruction (and
//! [`ControlFlow::advance`] for every other instruction), always on behalf of the path
//! returned by [`ControlFlow::current`].

pub mod hanoi;
pub mod ipdom;
pub mod simt;

use serde::Serialize;
use std::fmt;
use std::hash::Hasher;

/// Which control-flow manager a launch uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
pub enum ControlFlowKind {
    /// Hanoi (WS stack, REC stack, Bx registers, waiting/finished masks).
    #[default]
    Hanoi,
    /// Immediate-post-dominator SIMT stack (pre-Volta baseline).
    SimtStack,
}

impl std::str::FromStr for ControlFlowKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "hanoi" => Ok(ControlFlowKind::Hanoi),
            "simt" | "simt-stack" | "simtstack" | "ipdom" => Ok(ControlFlowKind::SimtStack),
            _ => Err(format!(
                "unknown control-flow manager `{s}` (expected hanoi or simt)"
            )),
        }
    }
}

impl fmt::Display for ControlFlowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ControlFlowKind::Hanoi => "hanoi",
            ControlFlowKind::SimtStack => "simt",
        })
    }
}

/// A path a warp may execute: PC and active mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PathEntry {
    pub pc: u64,
    pub mask: u32,
}

/// One entry of Hanoi's reconvergence stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RecView {
    /// PC where the reconverged threads continue.
    pub pc: u64,
    /// Bx register holding the reconvergence mask.
    pub b: u8,
    /// Pushed by WARPSYNC (true) or BSSY (false).
    pub warpsync: bool,
}

/// Debug view of the control-flow state of one warp (stacks listed bottom first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum CfView {
    Hanoi {
        ws: Vec<PathEntry>,
        rec: Vec<RecView>,
        /// Bx registers: (mask, valid).
        bx: [(u32, bool); 16],
        waiting: u32,
        finished: u32,
    },
    Simt {
        /// (pc, mask, reconvergence pc).
        stack: Vec<(u64, u32, Option<u64>)>,
        finished: u32,
    },
}

/// The interface between the execution engine and a control-flow manager.
pub trait ControlFlow: Send + fmt::Debug {
    /// Become the manager a new warp of `launched` threads starts with (the state of the
    /// type's `new` with start PC 0 and the same options), keeping the storage (the warp
    /// record of a retired CTA reused by the next CTA).
    fn restart(&mut self, launched: u32);
    /// The path to execute next, or None when every thread finished or is waiting.
    fn current(&self) -> Option<PathEntry>;
    /// Threads that executed EXIT.
    fn finished(&self) -> u32;
    /// Threads that have not finished.
    fn live(&self) -> u32;
    /// Any non-control-flow instruction: the current path moves to `next_pc`.
    fn advance(&mut self, next_pc: u64);
    /// A branch (BRA, JMP, CALL, RET, ...) executed by the current path at `pc`: `groups`
    /// partitions the path's mask by next PC (fall-through included). Listed not-taken first.
    fn branch(&mut self, pc: u64, groups: &[PathEntry]);
    /// `mask` (a subset of the current path) executed EXIT; the others go on at `next_pc`.
    fn exit(&mut self, mask: u32, next_pc: u64);
    fn bssy(&mut self, b: u8, rec_pc: u64, next_pc: u64);
    /// `mask` (guard true) executed `BSYNC Bx`.
    fn bsync(&mut self, b: u8, mask: u32, next_pc: u64);
    /// `mask` executed `BREAK Bx`.
    fn brk(&mut self, b: u8, mask: u32, next_pc: u64);
    /// `BMOV R, Bx`: the value read.
    fn bmov_read(&mut self, b: u8, clear: bool, next_pc: u64) -> u32;
    /// `BMOV Bx, R`.
    fn bmov_write(&mut self, b: u8, val: u32, next_pc: u64);
    /// `WARPSYNC mask` executed by `executing` (guard true).
    fn warpsync(&mut self, mask: u32, executing: u32, next_pc: u64);
    /// `YIELD`; with `as_nop` it only advances.
    fn yield_(&mut self, next_pc: u64, as_nop: bool);
    /// Debug view for tests and reports.
    fn view(&self) -> CfView;
    /// Why the warp cannot run (for deadlock reports), or None if it can.
    fn stuck_reason(&self) -> Option<String>;
    /// Hash everything that decides the manager's future behaviour into `h` (livelock
    /// probes, `exec/probe.rs`: two states that hash alike behave alike).
    fn state_hash(&self, h: &mut dyn Hasher);
}

/// The paths a branch splits the executing path into (the `groups` of
/// [`ControlFlow::branch`]), in `buf`: the groups with threads, at most 32 (a warp's threads),
/// sorted so that the path followed by most threads ends on top (last); ties keep the given
/// order (the taken path, listed last, runs first). A single path means no divergence.
pub(crate) fn split_paths<'a>(groups: &[PathEntry], buf: &'a mut [PathEntry; 32]) -> &'a [PathEntry] {
    let mut n = 0;
    for (slot, g) in buf.iter_mut().zip(groups.iter().filter(|g| g.mask != 0)) {
        *slot = *g;
        n += 1;
    }
    buf[..n].sort_by_key(|g| g.mask.count_ones());
    &buf[..n]
}
