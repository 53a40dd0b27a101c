//! What the timing model needs from whoever supplies instructions: the functional
//! engine (execution-driven mode) or a trace (trace-driven mode).
//!
//! Contract: *execute at issue, commit at write-back*. `issue` performs the
//! instruction (reads sources, computes, accesses memory, updates control flow) and
//! returns its register results as `Writes`, which the timing model hands back to
//! `commit` when the write-back happens in simulated time.

use crate::inst::MemSpace;

/// Memory access of one issued warp instruction.
#[derive(Debug, Clone)]
pub struct MemAccess {
    pub space: MemSpace,
    /// Per-lane byte addresses (valid for lanes in `active`).
    pub addrs: [u64; 32],
    pub active: u32,
    pub bytes_per_lane: u32,
}

/// Result of issuing one warp instruction.
#[derive(Debug)]
pub struct Issued<W> {
    pub pc: u64,
    /// Index of the static instruction in the kernel.
    pub index: usize,
    /// Lanes that executed the instruction.
    pub active_mask: u32,
    /// The warp has no thread left after this instruction.
    pub exited: bool,
    pub mem: Option<MemAccess>,
    pub writes: W,
}

/// An asynchronous bulk copy (Hopper's TMA) that an issued instruction started: the 16-byte
/// chunks of global memory it reads (`store`: writes), and the id its completion is reported
/// with ([`Executor::bulk_done`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkCopy {
    pub id: u32,
    pub chunks: Vec<u64>,
    pub store: bool,
}

pub trait Executor {
    type Writes;
    /// PC of the warp's next instruction, `None` when it has finished.
    fn next_pc(&self, warp: u32) -> Option<u64>;
    /// Whether the warp waits at a barrier (or is otherwise blocked by the engine).
    fn blocked(&self, warp: u32) -> bool;
    fn issue(&mut self, warp: u32, clock: u64) -> Result<Issued<Self::Writes>, String>;
    fn commit(&mut self, warp: u32, writes: &Self::Writes);
    /// The bulk copy the instruction just issued started (TMA), if it started one.
    fn take_bulk(&mut self) -> Option<BulkCopy> {
        None
    }
    /// The memory system has moved every chunk of bulk copy `id`.
    fn bulk_done(&mut self, _id: u32) -> Result<(), String> {
        Ok(())
    }
}
