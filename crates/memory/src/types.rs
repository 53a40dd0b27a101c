//! Requests and responses exchanged with the SM pipeline and between components.

/// Address space of a warp access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemSpace {
    Global,
    Shared,
    Local,
}

/// Kind of a warp access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

/// A warp memory access as it arrives at the SM's shared memory structures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarpMemRequest {
    /// Caller-chosen identifier, returned by [`crate::SmMemory::pop_completed`].
    pub id: u64,
    pub warp: u32,
    pub space: MemSpace,
    pub kind: AccessKind,
    /// Byte address per lane (only lanes set in `active` are used).
    pub addrs: [u64; 32],
    /// Active-lane mask.
    pub active: u32,
    /// Bytes accessed per lane (1, 2, 4, 8 or 16).
    pub bytes_per_lane: u32,
}

/// Result of [`crate::SmMemory::access`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessOutcome {
    /// Served inside the SM (L1 hit, shared memory incl. bank-conflict replays, stores);
    /// data ready for write-back at `ready_at` (core cycles).
    Done { ready_at: u64 },
    /// At least one line missed; completion is reported by `pop_completed`.
    Pending,
    /// A structural resource (MSHR, miss queue, pending-request table, replaceable way)
    /// is exhausted; nothing changed, retry in a later cycle.
    Rejected,
}

/// Kind of a request between L1 and L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum L2ReqKind {
    /// Read the sectors in `sectors`.
    Read,
    /// Write-through store of the sectors (acknowledged).
    Write,
    /// Eviction of dirty sectors from a write-back L1 (not acknowledged).
    WriteBack,
    /// Read-modify-write performed at the L2 atomic unit (returns data).
    Atomic,
}

/// A request of one 128-byte line (with a sector mask) from an SM to the L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Request {
    /// Line-aligned address.
    pub addr: u64,
    /// Sector mask inside the line (bit i = sector i).
    pub sectors: u8,
    pub kind: L2ReqKind,
    /// Payload bytes carried to L2 (store / atomic operand data).
    pub bytes: u32,
    /// Atomics: lanes in the request and the largest number of lanes on one address.
    pub atomic_lanes: u16,
    pub atomic_max_same: u16,
    /// Opaque L1 bookkeeping tag, echoed in the response.
    pub tag: u32,
}

/// A response from L2 to an SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Response {
    pub addr: u64,
    pub sectors: u8,
    pub kind: L2ReqKind,
    pub tag: u32,
}

/// Number of Accel-Sim access types counted in [`crate::L1Stats::by_kind`].
pub const ACCESS_TYPES: usize = 9;
/// Number of Accel-Sim access outcomes counted in [`crate::L1Stats::by_kind`].
pub const ACCESS_OUTCOMES: usize = 5;
/// Accel-Sim's `mem_access_type` names, in index order.
pub const ACCESS_TYPE_NAMES: [&str; ACCESS_TYPES] = [
    "GLOBAL_ACC_R",
    "LOCAL_ACC_R",
    "CONST_ACC_R",
    "TEXTURE_ACC_R",
    "GLOBAL_ACC_W",
    "LOCAL_ACC_W",
    "L1_WRBK_ACC",
    "L2_WRBK_ACC",
    "INST_ACC_R",
];
/// Accel-Sim's `cache_request_status` names, in index order.
pub const ACCESS_OUTCOME_NAMES: [&str; ACCESS_OUTCOMES] =
    ["HIT", "HIT_RESERVED", "MISS", "RESERVATION_FAIL", "SECTOR_MISS"];
pub const ACC_GLOBAL_R: usize = 0;
pub const ACC_LOCAL_R: usize = 1;
pub const ACC_CONST_R: usize = 2;
pub const ACC_GLOBAL_W: usize = 4;
pub const ACC_LOCAL_W: usize = 5;
pub const ACC_L1_WRBK: usize = 6;
pub const ACC_INST_R: usize = 8;

/// The access kind (`by_kind` row) of a load (`store`: a store) in `space`: local memory's
/// own rows, global's for everything else the L1 caches.
pub fn data_access_kind(space: MemSpace, store: bool) -> usize {
    match (space == MemSpace::Local, store) {
        (true, false) => ACC_LOCAL_R,
        (false, false) => ACC_GLOBAL_R,
        (true, true) => ACC_LOCAL_W,
        (false, true) => ACC_GLOBAL_W,
    }
}
pub const OUT_HIT: usize = 0;
pub const OUT_HIT_RESERVED: usize = 1;
pub const OUT_MISS: usize = 2;
pub const OUT_RESERVATION_FAIL: usize = 3;
pub const OUT_SECTOR_MISS: usize = 4;

/// An item waiting in a delay queue (the L1's miss queue, an L2 slice's ROP pipeline and
/// queue to DRAM, a DRAM channel's reads in flight, an SM port's staged requests, the
/// crossbars' destination queues): it may leave the queue (be sent, looked up, delivered,
/// moved on) once the queue's clock reaches `at`. Each queue's field says which clock `at`
/// counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Due<T> {
    /// The cycle from which the item may leave its queue.
    pub at: u64,
    /// The queued item.
    pub item: T,
}
