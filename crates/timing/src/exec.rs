//! What the timing model needs from whoever supplies instructions: the functional
//! engine (execution-driven mode) or a trace (trace-driven mode).
//!
//! Contract: *execute at issue, commit at write-back*. `issue` performs the
//! instruction (reads sources, computes, accesses memory, updates control flow) and
//! writes its register results as `Writes` into a record the timing model owns, which it
//! hands back to `commit` when the write-back happens in simulated time.

use crate::inst::MemSpace;

/// Memory access of one issued warp instruction.
#[derive(Debug, Clone)]
pub struct MemAccess {
    pub space: MemSpace,
    /// Per-lane byte addresses (valid for lanes in `active`).
    pub addrs: [u64; 32],
    pub active: u32,
    pub bytes_per_lane: u32,
    /// Shared memory of another CTA of the cluster (distributed shared memory).
    pub remote: bool,
}

impl MemAccess {
    /// An access of `space` with no lane active (a record to fill in place).
    pub fn blank(space: MemSpace) -> Self {
        MemAccess {
            space,
            addrs: [0; 32],
            active: 0,
            bytes_per_lane: 0,
            remote: false,
        }
    }
}

/// Result of issuing one warp instruction. The timing model keeps one per instruction in
/// flight and reuses them: the executor writes into the record in place (it is ~1.2 KB with
/// the functional engine's register results, too large to build and move per instruction).
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

impl<W: Default> Default for Issued<W> {
    fn default() -> Self {
        Issued {
            pc: 0,
            index: 0,
            active_mask: 0,
            exited: false,
            mem: None,
            writes: W::default(),
        }
    }
}

pub trait Executor {
    type Writes: Default;
    /// PC of the warp's next instruction, `None` when it has finished.
    fn next_pc(&self, warp: u32) -> Option<u64>;
    /// Whether the warp waits at a barrier (or is otherwise blocked by the engine).
    fn blocked(&self, warp: u32) -> bool;
    /// Issue the warp's next instruction, writing its result into `out`: every field must
    /// be set (`out` holds an earlier instruction's record). After an error `out` holds
    /// nothing meaningful.
    fn issue(&mut self, warp: u32, clock: u64, out: &mut Issued<Self::Writes>) -> Result<(), String>;
    fn commit(&mut self, warp: u32, writes: &Self::Writes);
    /// A hint: `writes`, the record of an instruction that writes `regs`, will be committed
    /// to `warp` soon (at its next issue, or at a load's write-back). An executor may ask the
    /// CPU to bring what that commit touches into its caches ([`sassim_isa::cpu_hint`]),
    /// without reading `writes` now. Changes no result; by default nothing.
    fn prefetch_commit(&self, _warp: u32, _writes: &Self::Writes, _regs: &[sassim_isa::ArchReg]) {}
    /// The bulk copy the instruction just issued started (TMA), if it started one.
    fn take_bulk(&mut self) -> Option<BulkCopy> {
        None
    }
    /// The memory system has moved every chunk of bulk copy `id`.
    fn bulk_done(&mut self, _id: u32) -> Result<(), String> {
        Ok(())
    }
    /// A blank record for [`Executor::issue`] to write into (the timing model allocates
    /// them once and reuses them).
    fn blank_record() -> Issued<Self::Writes> {
        Issued::default()
    }
}
