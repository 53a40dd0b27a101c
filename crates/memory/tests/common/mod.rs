//! Traffic for the memory system's tests (each test binary uses part of it).
#![allow(dead_code)]

use sassim_memory::{L2ReqKind, L2Request, MemoryConfig};

/// A request to `addr` from the random bits `r`: one in eight a write, one in eight an
/// atomic, the others reads; some sectors (never none), a tag.
pub fn request(r: u64, addr: u64) -> L2Request {
    let kind = match (r >> 8) % 8 {
        0 => L2ReqKind::Write,
        1 => L2ReqKind::Atomic,
        _ => L2ReqKind::Read,
    };
    L2Request {
        addr,
        sectors: ((r >> 40) as u8) | 1,
        kind,
        bytes: if kind == L2ReqKind::Read { 0 } else { 32 },
        atomic_lanes: 1,
        atomic_max_same: 1,
        tag: (r >> 48) as u32,
    }
}

/// An address from the random bits `r`: a quarter to 16 hot lines (hits, merges, reserved
/// hits), the others over 2 MB (misses, evictions, write-backs).
pub fn hot_or_wide(r: u64) -> u64 {
    if (r >> 11).is_multiple_of(4) {
        ((r >> 16) % 16) << 7
    } else {
        ((r >> 16) % (1 << 14)) << 7
    }
}

/// A configuration with small queues and few MSHRs, so that L2 heads stall for MSHRs and for
/// room in the DRAM queue, DRAM scheduler queues fill up, returns and responses back up.
pub fn cramped() -> MemoryConfig {
    let mut cfg = MemoryConfig::a6000_like();
    cfg.l2.partitions = 4;
    cfg.l2.size_kb = 64;
    cfg.l2.mshr_entries = 6;
    cfg.l2.mshr_max_merge = 2;
    // (A miss needs room for its sectors and its victim's dirty ones: up to 16.)
    cfg.l2.queue_l2_to_dram = 16;
    cfg.l2.queue_l2_to_icnt = 2;
    cfg.dram.sched_queue_entries = 8;
    cfg.dram.return_queue_entries = 2;
    cfg.icnt.output_queue_entries = 2;
    cfg.icnt.dest_queue_entries = 4;
    cfg
}
