//! The SM's Tensor Memory Accelerator: the asynchronous bulk copies of Hopper's
//! `UTMALDG`/`UTMASTG` and `UBLKCP` move through the memory hierarchy after the instruction
//! issued.
//!
//! The executor performs the copy's data movement at issue and describes it as a
//! [`BulkCopy`] (the 16-byte chunks of global memory it reads or writes). This unit starts a
//! copy `mem_pipeline.tma_setup` cycles after its instruction issued (the TMA's setup), sends
//! its chunks to the SM's data memory as warp-wide requests of 32 × 16 bytes, one per cycle
//! when the memory accepts it, in order, and tells the executor when the last one has
//! completed ([`Executor::bulk_done`]): for a load, that is when the bytes complete on the
//! copy's mbarrier, which the waiting warps poll. Sources: docs/model.md "Hopper".

use crate::exec::{BulkCopy, Executor, MemAccess};
use crate::inst::{MemKind, MemSpace};
use crate::mem::{Access, MemReq};
use crate::sm::Sm;
use std::collections::{HashMap, VecDeque};

/// Chunks per request: one warp-wide request of 32 lanes × 16 bytes.
const CHUNKS_PER_REQUEST: usize = 32;

/// One copy in progress.
#[derive(Debug)]
struct Job {
    copy: BulkCopy,
    /// Cycle at which the TMA may send the copy's first request (issue + setup).
    start: u64,
    /// Chunks sent so far.
    sent: usize,
    /// Requests sent whose data has not arrived.
    outstanding: u32,
    /// The latest cycle at which a request's data is ready (requests the memory answered
    /// with a fixed time).
    ready_at: u64,
}

/// The TMA unit of one SM.
#[derive(Debug, Default)]
pub struct TmaUnit {
    jobs: VecDeque<Job>,
    /// Memory request id → index of its job in issue order (`first_job + k`).
    pending: HashMap<u64, u64>,
    /// Sequence number of `jobs[0]`.
    first_job: u64,
    /// Bulk copies finished (statistics).
    pub copies: u64,
    /// Requests sent to the data memory.
    pub requests: u64,
}

impl TmaUnit {
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// A copy whose instruction issued at `now`, started after `setup` cycles.
    pub(crate) fn push(&mut self, copy: BulkCopy, now: u64, setup: u64) {
        self.jobs.push_back(Job {
            copy,
            start: now + setup,
            sent: 0,
            outstanding: 0,
            ready_at: 0,
        });
    }

    /// A data-memory request completed; false if it is not one of the TMA's.
    pub(crate) fn completed(&mut self, id: u64) -> bool {
        let Some(seq) = self.pending.remove(&id) else {
            return false;
        };
        if let Some(j) = seq
            .checked_sub(self.first_job)
            .and_then(|k| self.jobs.get_mut(k as usize))
        {
            j.outstanding = j.outstanding.saturating_sub(1);
        }
        true
    }
}

impl<W> Sm<W> {
    /// One cycle of the TMA unit: send the next request of the oldest copy that has chunks
    /// left to send, and report the copies whose data have all arrived, in order.
    pub(crate) fn tma_stage<E: Executor<Writes = W>>(&mut self, ex: &mut E, now: u64) -> Result<(), String> {
        let next = self.tma.jobs.iter().position(|j| j.sent < j.copy.chunks.len());
        if let Some(k) = next.filter(|&k| self.tma.jobs[k].start <= now) {
            let j = &self.tma.jobs[k];
            {
                let end = (j.sent + CHUNKS_PER_REQUEST).min(j.copy.chunks.len());
                let mut acc = MemAccess::blank(MemSpace::Global);
                acc.bytes_per_lane = 16;
                for (lane, &a) in j.copy.chunks[j.sent..end].iter().enumerate() {
                    acc.addrs[lane] = a;
                    acc.active |= 1 << lane;
                }
                let store = j.copy.store;
                let id = self.next_mem_id;
                let req = MemReq {
                    id,
                    space: MemSpace::Global,
                    kind: if store { MemKind::Store } else { MemKind::Load },
                    bits: 128,
                    access: Some(&acc),
                    warp: 0,
                    const_addr: None,
                    const_l1_extra: 0,
                };
                // The TMA's reads bypass the L1; its writes take the L1's write-through path
                // (no allocation).
                let outcome = if store {
                    self.mem.access(now, &req)
                } else {
                    self.mem_done_from = 0;
                    self.mem.access_bypassing_l1(now, &req)
                };
                let seq = self.tma.first_job + k as u64;
                let j = &mut self.tma.jobs[k];
                match outcome {
                    Access::Retry => {}
                    Access::ReadyAt(t) => {
                        j.sent = end;
                        j.ready_at = j.ready_at.max(t);
                    }
                    Access::Pending => {
                        j.sent = end;
                        j.outstanding += 1;
                        self.tma.pending.insert(id, seq);
                    }
                }
                if !matches!(outcome, Access::Retry) {
                    self.next_mem_id += 1;
                    self.tma.requests += 1;
                }
            }
        }
        while let Some(j) = self.tma.jobs.front() {
            if j.sent < j.copy.chunks.len() || j.outstanding > 0 || j.ready_at.max(j.start) > now {
                break;
            }
            let j = self.tma.jobs.pop_front().expect("job");
            self.tma.first_job += 1;
            self.tma.copies += 1;
            ex.bulk_done(j.copy.id)?;
        }
        Ok(())
    }
}
