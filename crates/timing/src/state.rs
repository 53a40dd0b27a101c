//! The SM's per-warp and per-sub-core state records: what the issue stage reads of each
//! warp every cycle (`WarpIssue`, the `HOT_*` flags), the warp record with its instruction
//! buffer and scoreboards, the in-flight instruction records (`Stage`, `MemEntry`,
//! `Fetch`, `PendingResult`), a sub-core's pipeline state and the SM's event kinds.
//! `Sm` (sm.rs) owns them; each stage module reads and writes them.

use crate::frontend::{StreamBuffer, TagCache};
use crate::inst::DEP_COUNTERS;
use crate::regfile::{PortSchedule, Rfc};
use sassim_isa::ArchReg;
use serde::Serialize;
use std::collections::VecDeque;

/// Per-warp records kept when `record` is on (microbenchmarks).
#[derive(Debug, Clone, Default)]
pub struct WarpLog {
    pub issues: Vec<IssueRec>,
    pub clocks: Vec<u64>,
    /// Register-file-cache outcomes of each fixed-latency instruction.
    pub rfc: Vec<RfcLog>,
}

/// One instruction a warp issued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IssueRec {
    /// The cycle, counted from the SM's clock origin (its first CTA's start).
    pub cycle: u64,
    pub pc: u64,
    /// The opcode.
    pub op: String,
}

/// Register-file-cache outcome of one instruction's source reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RfcLog {
    pub pc: u64,
    /// Per source slot: any of its registers hit.
    pub hits: Vec<bool>,
    /// Per register read, in slot order (a 64-bit operand reads two registers, one per
    /// bank).
    pub reads: Vec<RfcRead>,
}

/// One register read through the register-file cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RfcRead {
    /// The source slot.
    pub slot: usize,
    pub reg: u8,
    pub hit: bool,
}

/// The part of a warp's state that the issue stage reads for every live warp every cycle,
/// kept in one cache line per slot (`Sm::iss`) apart from the large `Warp` records: on a
/// loaded GPU, reading those was the readiness check's main cost (cache misses).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct WarpIssue {
    /// The head of the instruction buffer, a copy kept by `Sm::sync_head`: its pc and the
    /// cycle from which it may issue (`u64::MAX`: the buffer is empty; `head_pc` and
    /// `head_idx` then keep the last head's).
    pub(crate) head_pc: u64,
    pub(crate) head_ready: u64,
    pub(crate) stall_until: u64,
    pub(crate) no_issue_at: u64,
    pub(crate) age: u64,
    /// The last DEPBAR's condition applies from this cycle (`NO_DEPBAR`: no DEPBAR
    /// issued). Not an `Option`, which would not fit the line.
    pub(crate) depbar_from: u64,
    /// The static instruction at `head_pc` (`Sm::index_of`), looked up once per new head
    /// rather than by every readiness check (`NO_HEAD`: no instruction at that pc, or no
    /// head yet).
    pub(crate) head_idx: u32,
    /// The last DEPBAR's condition (see `depbar_from`).
    pub(crate) depbar: DepbarCond,
    /// Dependence counters SB0–SB5 and Hopper's warpgroup-MMA group counter (`gsb0`, index
    /// [`GMMA_GROUP_SB`](crate::inst::GMMA_GROUP_SB)).
    pub(crate) sb: [u8; DEP_COUNTERS],
    /// The executor may report the warp blocked (set after each issue).
    pub(crate) maybe_blocked: bool,
}

/// `WarpIssue::depbar_from` of a warp that issued no DEPBAR.
pub(crate) const NO_DEPBAR: u64 = u64::MAX;
/// `WarpIssue::head_idx` when the head's pc has no static instruction (or is not known).
pub(crate) const NO_HEAD: u32 = u32::MAX;

/// A DEPBAR's condition: counter `sb` is at most `le`, and the counters in `ids` (bits) are 0.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DepbarCond {
    pub(crate) sb: u8,
    pub(crate) le: u8,
    pub(crate) ids: u8,
}

const _: () = assert!(
    std::mem::size_of::<WarpIssue>() == 64,
    "WarpIssue is one cache line"
);

impl WarpIssue {
    pub(crate) fn new(age: u64) -> Self {
        WarpIssue {
            head_pc: 0,
            head_ready: u64::MAX,
            stall_until: 0,
            no_issue_at: u64::MAX,
            age,
            depbar_from: NO_DEPBAR,
            head_idx: NO_HEAD,
            depbar: DepbarCond::default(),
            sb: [0; DEP_COUNTERS],
            maybe_blocked: true,
        }
    }
}

pub(crate) struct Warp {
    pub(crate) used: bool,
    pub(crate) exec_id: u32,
    pub(crate) subcore: usize,
    pub(crate) exited: bool,
    pub(crate) finished: bool,
    pub(crate) ib: InstBuffer,
    pub(crate) inflight_fetch: u32,
    pub(crate) epoch: u32,
    pub(crate) fetch_pc: u64,
    pub(crate) fetch_wait_line: Option<u64>,
    pub(crate) sb_staged: [u8; DEP_COUNTERS],
    /// Fixed-latency results not yet committed to the executor's registers.
    pub(crate) pending: Vec<PendingResult>,
    pub(crate) inflight_ops: u32,
    // Scoreboards (DepMode::Scoreboard): pending writes and in-flight consumers per register.
    pub(crate) sb_write: Vec<u8>,
    pub(crate) sb_read: Vec<u8>,
    /// In-flight readers of each register that read it outside the in-order fixed-latency
    /// pipeline (memory and other variable-latency instructions): only these make a later
    /// writer wait (WAR). A fixed-latency reader has read its sources before any later
    /// instruction can write them, as with control bits, where such readers set no read
    /// counter.
    pub(crate) sb_read_late: Vec<u8>,
    /// LTRF: the register-interval whose working set the warp's register-cache partition
    /// holds (`NO_INTERVAL`: none), ready from `rc.ready_at`.
    pub(crate) rc: RegCacheState,
    pub(crate) log: WarpLog,
}

/// A fixed-latency result not yet committed to the executor's registers (it is committed
/// lazily: by the first instruction that may read it, or at write-back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PendingResult {
    /// Cycle from which fixed-latency consumers see it.
    pub(crate) visible_fixed: u64,
    /// Cycle from which memory instructions see it (MICRO'25 rule 24: one cycle later).
    pub(crate) visible_mem: u64,
    /// Slab index of the executor's results.
    pub(crate) slab: usize,
    /// Static instruction that produced it.
    pub(crate) inst: usize,
}

/// A memory access the data memory completes later ([`crate::mem::Access::Pending`]):
/// whose it is, until the memory returns its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PendingMem {
    /// The warp slot and its in-flight instruction (index into its stages).
    pub(crate) slot: usize,
    pub(crate) sidx: usize,
    /// Slab index of the executor's results.
    pub(crate) writes: usize,
}

/// LTRF: what a warp's register-cache partition holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RegCacheState {
    pub(crate) interval: u32,
    pub(crate) ready_at: u64,
    /// Registers a deactivation writes back to the main register file.
    pub(crate) dirty: u16,
}

/// No register-interval in the register cache.
pub(crate) const NO_INTERVAL: u32 = u32::MAX;

impl Default for RegCacheState {
    fn default() -> Self {
        RegCacheState {
            interval: NO_INTERVAL,
            ready_at: 0,
            dirty: 0,
        }
    }
}

pub(crate) fn reg_index(r: &ArchReg) -> usize {
    match *r {
        ArchReg::R(i) => i as usize,
        ArchReg::UR(i) => 256 + i as usize,
        ArchReg::P(i) => 320 + i as usize,
        ArchReg::UP(i) => 328 + i as usize,
        ArchReg::B(i) => 336 + (i as usize & 15),
    }
}
pub(crate) const SB_REGS: usize = 352;

/// `Sm::hot` flags: the slot holds a warp that has not exited (`used && !exited`).
/// Most warp slots an SM can have (one bit each in the `go`/`waiting`/`room` masks).
pub const MAX_WARP_SLOTS: usize = 64;
/// Most sub-cores an SM can have (`gpu.subcores_per_sm` is validated to 1..=8).
pub const MAX_SUBCORES: usize = 8;
pub(crate) const HOT_LIVE: u8 = 1;
/// The head instruction waits on dependence counters or the scoreboard; cleared when one
/// of the warp's counters or scoreboard entries is released, when it issues, and when its
/// instruction buffer is flushed.
pub(crate) const HOT_DEP_WAIT: u8 = 2;
/// Scoreboard mode: the head instruction passed the scoreboard check. It stays passed until
/// the head changes (issue, instruction-buffer flush), since the warp's scoreboard entries
/// only grow when the warp issues.
pub(crate) const HOT_SB_CLEAR: u8 = 4;
/// No room to fetch for the warp: it waits for an I-cache line, or its instruction buffer
/// plus its fetches in flight fill the buffer. Kept by `Sm::sync_room`.
pub(crate) const HOT_NO_ROOM: u8 = 8;

/// An instruction in a warp's instruction buffer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct IbEntry {
    pub(crate) pc: u64,
    /// The cycle from which it may issue (its fetch's arrival).
    pub(crate) ready: u64,
}

/// A warp's instruction buffer: its instructions in fetch order, kept inline in the warp (no
/// heap indirection on the issue stage's hot path).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct InstBuffer {
    slots: [IbEntry; IB_CAPACITY],
    head: u8,
    len: u8,
}

/// Largest instruction buffer a preset may ask for (`frontend.ib_entries` is validated
/// to 1..=16).
pub(crate) const IB_CAPACITY: usize = 16;

impl InstBuffer {
    pub(crate) fn front(&self) -> Option<&IbEntry> {
        (self.len > 0).then(|| &self.slots[self.head as usize])
    }
    pub(crate) fn push_back(&mut self, e: IbEntry) {
        if (self.len as usize) < IB_CAPACITY {
            let i = (self.head as usize + self.len as usize) % IB_CAPACITY;
            self.slots[i] = e;
            self.len += 1;
        }
    }
    pub(crate) fn pop_front(&mut self) -> Option<IbEntry> {
        if self.len == 0 {
            return None;
        }
        let e = self.slots[self.head as usize];
        self.head = ((self.head as usize + 1) % IB_CAPACITY) as u8;
        self.len -= 1;
        Some(e)
    }
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }
}

/// `i mod n` for `i < 2n` (round-robin indices: a start below `n` plus an offset below `n`),
/// without a division.
#[inline]
pub(crate) fn wrap(i: usize, n: usize) -> usize {
    debug_assert!(i < 2 * n);
    if i >= n {
        i - n
    } else {
        i
    }
}

/// Marks constant lines in the shared L1 instruction/constant cache's tag space.
pub(crate) const CONST_LINE_TAG: u64 = 1 << 63;

impl Warp {
    pub(crate) fn new() -> Self {
        Warp {
            used: false,
            exec_id: 0,
            subcore: 0,
            exited: false,
            finished: false,
            ib: InstBuffer::default(),
            inflight_fetch: 0,
            epoch: 0,
            fetch_pc: 0,
            fetch_wait_line: None,
            sb_staged: [0; DEP_COUNTERS],
            pending: Vec::with_capacity(8),
            inflight_ops: 0,
            sb_write: Vec::new(),
            sb_read: Vec::new(),
            sb_read_late: Vec::new(),
            rc: RegCacheState::default(),
            log: WarpLog::default(),
        }
    }
    /// Make the record of a freed slot the record of a new warp: every field as
    /// [`Warp::new`] and `Sm::add_warp` set it, the vectors' storage kept (no allocation per
    /// warp started). `scoreboards`: the register scoreboards are used (no control bits).
    pub(crate) fn restart(&mut self, exec_id: u32, subcore: usize, start_pc: u64, scoreboards: bool) {
        let Warp {
            used,
            exec_id: e,
            subcore: s,
            exited,
            finished,
            ib,
            inflight_fetch,
            epoch,
            fetch_pc,
            fetch_wait_line,
            sb_staged,
            pending,
            inflight_ops,
            sb_write,
            sb_read,
            sb_read_late,
            rc,
            log,
        } = self;
        *used = true;
        *e = exec_id;
        *s = subcore;
        *exited = false;
        *finished = false;
        *ib = InstBuffer::default();
        *inflight_fetch = 0;
        *epoch = 0;
        *fetch_pc = start_pc;
        *fetch_wait_line = None;
        *sb_staged = [0; DEP_COUNTERS];
        pending.clear();
        *inflight_ops = 0;
        for v in [sb_write, sb_read, sb_read_late] {
            v.clear();
            if scoreboards {
                v.resize(SB_REGS, 0);
            }
        }
        *rc = RegCacheState::default();
        *log = WarpLog::default();
    }
    /// PC of the oldest instruction fetched or to be fetched.
    pub(crate) fn stream_head(&self, inflight: &VecDeque<Fetch>, slot: usize) -> u64 {
        if let Some(e) = self.ib.front() {
            return e.pc;
        }
        inflight
            .iter()
            .filter(|f| f.slot == slot && f.epoch == self.epoch)
            .map(|f| f.pc)
            .min()
            .unwrap_or(self.fetch_pc)
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Fetch {
    pub(crate) slot: usize,
    pub(crate) pc: u64,
    pub(crate) epoch: u32,
    pub(crate) arrive: u64,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Stage {
    pub(crate) slot: usize,
    pub(crate) sidx: usize,
    pub(crate) issue: u64,
    pub(crate) writes: usize,
    pub(crate) entered: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct MemEntry {
    pub(crate) st: Stage,
    pub(crate) arrive: u64,
    /// Cycle at which it may go to the SM arbiter (after address calculation).
    pub(crate) arb_ready: Option<u64>,
}

/// A sub-core held by a constant-cache miss (M25 rule 13): its L0 constant cache missed for
/// one warp's operand, and the sub-core issues nothing for `const_miss_switch_cycles` (or
/// until the line is there, if sooner), then only other warps until the line is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConstWait {
    /// The slot of the warp that missed.
    pub(crate) slot: usize,
    /// The cycle of the miss.
    pub(crate) since: u64,
    /// The L0 constant-cache line it waits for.
    pub(crate) line: u64,
    /// The cycle the line came back from the L1 (`u64::MAX`: not yet).
    pub(crate) ready_at: u64,
}

/// `repr(C)`: what the stages of a busy sub-core look at every cycle comes first.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct SubCore {
    pub(crate) control: Option<Stage>,
    pub(crate) allocate: Option<Stage>,
    pub(crate) var_q: VecDeque<Stage>,
    pub(crate) mem_q: VecDeque<MemEntry>,
    /// Entries of `mem_q` the address stage has not taken yet (`arb_ready` is `None`): while
    /// there are none, the stage has nothing to look for (a full queue waiting on the L1).
    pub(crate) addr_waiting: u32,
    pub(crate) fetches: VecDeque<Fetch>,
    /// Lines requested from the L1 I/C cache, in order.
    pub(crate) l1_queue: VecDeque<u64>,
    pub(crate) const_wait: Option<ConstWait>,
    /// Its warps' slots (their bits: `Sm::sc_mask`).
    pub(crate) warps: Vec<usize>,
    pub(crate) last_issued: Option<usize>,
    pub(crate) last_issue_cycle: u64,
    pub(crate) addr_free: u64,
    pub(crate) mem_occupancy: u32,
    /// The memory write-back latch is busy until this cycle.
    pub(crate) mem_wb_free: u64,
    pub(crate) unit_free: Vec<u64>,
    /// Variable-latency units of the sub-core: free to start an instruction from this cycle.
    pub(crate) var_unit_free: Vec<u64>,
    pub(crate) ports: PortSchedule,
    pub(crate) rfc: Rfc,
    pub(crate) last_clock_issue: Option<u64>,
    /// Demand misses of its L0 I-cache in flight.
    pub(crate) demand: Vec<crate::frontend::LineFill>,
    pub(crate) l0i: TagCache,
    pub(crate) sbuf: StreamBuffer,
    pub(crate) l0c: TagCache,
    pub(crate) two_level_pool: Vec<usize>,
    /// LTRF: the sub-core's path from the main register file to its register cache is busy
    /// (prefetches and write-backs, one at a time) until this cycle.
    pub(crate) rc_fill_free: u64,
    /// Banks written by fixed-latency results per cycle (ring of 64).
    pub(crate) fixed_wb: [u8; 64],
    pub(crate) fixed_wb_cycle: [u64; 64],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Event {
    /// Write-back of a variable-latency or memory instruction.
    Writeback { slot: usize, sidx: usize, writes: usize },
    /// Sources of an instruction read: decrement its read counter.
    ReadDone { slot: usize, sidx: usize },
    /// A memory access issued to `DataMemory` completed.
    MemDone { slot: usize, sidx: usize, writes: usize },
    /// Fixed-latency write counter / scoreboard release.
    FixedDone { slot: usize, sidx: usize },
    /// I-cache line arrives at sub-core `sc`.
    ILine { sc: usize, line: u64 },
}

impl SubCore {
    /// Whether any of its pipeline structures holds work (see `Sm::sc_busy`).
    pub(crate) fn has_work(&self) -> bool {
        self.control.is_some()
            || self.allocate.is_some()
            || !self.var_q.is_empty()
            || !self.mem_q.is_empty()
            || !self.fetches.is_empty()
            || !self.l1_queue.is_empty()
            || self.const_wait.is_some()
    }
}
