//! The interface from the SM's memory arbiter to the data memories (L1/shared/
//! constant caches, crate `sassim-memory`), and a fixed-latency implementation
//! in which every access hits (microbenchmarks of MICRO'25 Table 2).

use crate::exec::MemAccess;
use crate::inst::{MemKind, MemSpace};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone)]
pub struct MemReq<'a> {
    pub id: u64,
    pub space: MemSpace,
    pub kind: MemKind,
    /// Bits per thread.
    pub bits: u32,
    /// The warp's per-lane addresses (borrowed from the memory queue entry).
    pub access: Option<&'a MemAccess>,
    /// SM warp slot of the instruction (local-memory addressing).
    pub warp: u32,
    /// LDC: the constant bank and offset of the operand when known at decode
    /// (`bank << 32 | offset`).
    pub const_addr: Option<u64>,
    /// LDC whose line misses the L0 VL cache: cycles the SM's L1 I/C needs beyond a hit to
    /// have the line (an L1 miss, or the rest of a fetch in flight), 0 otherwise.
    pub const_l1_extra: u64,
}

/// Names, to the memory that made it, an access it rejected and found rejected again
/// ([`DataMemory::rejected_again`]): the SM's arbiter keeps it while the access stays its
/// sub-core's memory-queue front, and asks about the retry with it alone
/// ([`DataMemory::rejected_again_token`]), without reading the queue or the access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryToken {
    /// The memory's own meaning (an index of its retry table).
    pub entry: u32,
    /// The memory's own meaning (which access the entry must still hold).
    pub id: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Data available at this cycle (before the transfer to the register file).
    ReadyAt(u64),
    /// Completes later; reported by `DataMemory::completed`.
    Pending,
    /// Not accepted this cycle.
    Retry,
}

pub trait DataMemory: Send {
    fn access(&mut self, now: u64, req: &MemReq) -> Access;
    /// A global load of the TMA, which does not go through the SM's L1 (docs/model.md
    /// "Hopper"); a memory without an L1 serves it as any access.
    fn access_bypassing_l1(&mut self, now: u64, req: &MemReq) -> Access {
        self.access(now, req)
    }
    /// A retry of the access of warp slot `warp` (kind `kind`, addresses `access`) that
    /// this memory rejected before: `Some` when it is known to be rejected again, which is
    /// then counted as [`DataMemory::access`] would count it, with a token naming the
    /// access for [`DataMemory::rejected_again_token`]; `None`: nothing done, call
    /// `access`. The SM's arbiter asks this first, skipping the request's construction.
    fn rejected_again(&mut self, access: &MemAccess, warp: u32, kind: MemKind) -> Option<RetryToken> {
        let t = self.would_reject_again(access, warp, kind)?;
        self.rejected_again_token(t).then_some(t)
    }
    /// [`DataMemory::rejected_again`] of the access that `token` (returned by it) names, the
    /// access itself unchanged since: the same answer, without reading the access.
    fn rejected_again_token(&mut self, _token: RetryToken) -> bool {
        false
    }
    /// Count `k` more retries of the access that `token` names as rejected again for their
    /// remembered cause, as `k` calls of [`DataMemory::rejected_again_token`] that each
    /// answered true would (the cycles an SM skipped, `Sm::skip_quiet_to`). The caller
    /// knows that the rejection held through them: nothing the memory's answer depends on
    /// changed (no fill, completion, send or access).
    fn count_rejected_again(&mut self, token: RetryToken, k: u64) {
        for _ in 0..k {
            let again = self.rejected_again_token(token);
            debug_assert!(again, "a skipped retry would not have been rejected");
        }
    }
    /// What [`DataMemory::rejected_again_token`] would answer now, without counting anything.
    fn would_reject_token(&self, _token: RetryToken) -> bool {
        false
    }
    /// What [`DataMemory::rejected_again`] would answer now, without counting anything
    /// (debug checks of the arbiter's shortcut, tests).
    fn would_reject_again(&self, _access: &MemAccess, _warp: u32, _kind: MemKind) -> Option<RetryToken> {
        None
    }
    /// For the GPU's memory system to reach its own implementation.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
    /// The most requests the memory sends to the interconnect in the SM's next cycle (the
    /// GPU's quanta end an SM's steps before a cycle whose input queue has less room).
    fn max_sends_per_cycle(&self) -> usize {
        0
    }
    /// Ids of pending accesses that completed by `now`.
    fn completed(&mut self, _now: u64, _out: &mut Vec<u64>) {}
    /// The first cycle at which [`DataMemory::completed`] may return an id, as the memory
    /// stands (0: any cycle). It changes only through `completed`, `access_bypassing_l1`
    /// and what the GPU's memory system does through [`crate::Sm::data_memory`], so the SM
    /// keeps it and calls `completed` from that cycle on only.
    fn done_from(&self) -> u64 {
        0
    }
    /// Whether an LDC of constant address `addr` (`bank << 32 | offset`) would miss the L0
    /// VL constant cache and fetch its line from the L1 I/C (not present, not in flight).
    fn const_line_absent(&self, _addr: u64) -> bool {
        false
    }
}

/// Hit latencies of the SM-shared structures, from arbiter grant to data ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitLatencies {
    pub l1_hit: u32,
    pub shared: u32,
    pub constant: u32,
    pub shared_atomic: u32,
    pub global_atomic: u32,
}

impl Default for HitLatencies {
    fn default() -> Self {
        // Fitted to MICRO'25 Table 2 (RTX A6000); see docs/model.md.
        HitLatencies {
            l1_hit: 18,
            shared: 12,
            constant: 15,
            shared_atomic: 20,
            global_atomic: 200,
        }
    }
}

/// Every access hits with a fixed latency.
#[derive(Debug, Clone, Default)]
pub struct FixedLatencyMemory {
    pub lat: HitLatencies,
}

impl DataMemory for FixedLatencyMemory {
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn access(&mut self, now: u64, req: &MemReq) -> Access {
        let l = match (req.space, req.kind) {
            (MemSpace::Shared, MemKind::Atomic) => self.lat.shared_atomic,
            (_, MemKind::Atomic) => self.lat.global_atomic,
            (MemSpace::Shared, _) => self.lat.shared,
            (MemSpace::Const, _) => self.lat.constant,
            _ => self.lat.l1_hit,
        };
        Access::ReadyAt(now + l as u64)
    }
}
