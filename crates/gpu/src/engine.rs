//! The functional engine as the timing model's [`Executor`].

use sassim_functional::{KernelExec, PendingWrites, Space, WarpId, WarpStatus};
use sassim_timing::exec::{Executor, Issued, MemAccess};
use sassim_timing::inst::MemSpace;

pub struct EngineExec<'a> {
    pub k: &'a mut KernelExec,
    /// Number of instructions issued since the last progress check.
    pub issued: u64,
}

impl Executor for EngineExec<'_> {
    type Writes = PendingWrites;

    fn next_pc(&self, warp: u32) -> Option<u64> {
        self.k.next_pc(WarpId(warp))
    }

    fn blocked(&self, warp: u32) -> bool {
        matches!(
            self.k.warp_state(WarpId(warp)),
            WarpStatus::AtBarrier { .. } | WarpStatus::Blocked
        )
    }

    fn issue(&mut self, warp: u32, clock: u64) -> Result<Issued<PendingWrites>, String> {
        let i = self.k.issue(WarpId(warp), clock).map_err(|e| e.to_string())?;
        self.issued += 1;
        let mem = i.mem.map(|m| MemAccess {
            space: match m.space {
                Space::Global => MemSpace::Global,
                Space::Shared => MemSpace::Shared,
                Space::Local => MemSpace::Local,
                _ => MemSpace::Const,
            },
            addrs: m.addrs,
            active: i.active_mask,
            bytes_per_lane: m.bytes_per_lane,
        });
        Ok(Issued {
            pc: i.pc,
            index: i.index,
            active_mask: i.active_mask,
            exited: i.exited,
            mem,
            writes: i.writes,
        })
    }

    fn commit(&mut self, warp: u32, writes: PendingWrites) {
        self.k.commit(WarpId(warp), &writes);
    }
}
