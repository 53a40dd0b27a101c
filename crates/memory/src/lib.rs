//! sassim-memory: the memory hierarchy below the SM's memory pipeline.
//!
//! * [`SmMemory`] — per SM: sectored L1 data cache (MSHRs with merging, miss queue,
//!   write-through/write-back per space) and shared memory (32 banks, conflict replays,
//!   atomics).
//! * [`MemorySystem`] — interconnect (crossbar per direction), L2 slices
//!   (partitions × sub-partitions, IPOLY/XOR/linear hashing, write-back write-allocate,
//!   atomic units) and DRAM channels (bank timing, FR-FCFS, open page), each in its own
//!   clock domain.
//!
//! Typical use by the SM model, once per core cycle `now`:
//! ```
//! use sassim_memory::*;
//! let cfg = MemoryConfig::t4_like();
//! let mut sm = SmMemory::new(&cfg);
//! let mut mem = MemorySystem::new(&cfg, 1);
//! let mut req = WarpMemRequest {
//!     id: 7, warp: 0, space: MemSpace::Global, kind: AccessKind::Load,
//!     addrs: [0; 32], active: u32::MAX, bytes_per_lane: 4,
//! };
//! for (i, a) in req.addrs.iter_mut().enumerate() { *a = 0x1000 + 4 * i as u64; }
//! assert_eq!(sm.access(0, &req), AccessOutcome::Pending);
//! let mut done = None;
//! for now in 0..2000 {
//!     sm.tick(now, &mut |r| mem.push(now, 0, r));
//!     mem.tick(now);
//!     while let Some(resp) = mem.pop_response(0) { sm.fill(now, resp); }
//!     if let Some((id, at)) = sm.pop_completed(now) { done = Some((id, at)); break; }
//! }
//! assert_eq!(done.unwrap().0, 7);
//! ```

mod cache;
mod chain;
pub mod coalesce;
pub mod config;
mod counters;
mod dram;
pub mod error;
pub mod hash;
mod icnt;
mod l1;
mod l2;
mod partition;
mod system;
#[cfg(test)]
mod test_rng;
pub mod types;
mod way_mshr;

pub use config::{
    ClockConfig, DramConfig, DramTiming, DramType, Hashing, IcntConfig, L1dConfig, L2Config, MemoryConfig,
    SharedMemConfig, WriteAllocate, WritePolicy,
};
pub use dram::DramStats;
pub use error::ConfigError;
pub use hash::{ipoly_hash, AddressMapping, Location};
pub use icnt::IcntStats;
pub use l1::{L1Cache, L1Stats, NeverAdmitted, SmMemory, Ticket};
pub use l2::L2Stats;
pub use partition::{Partition, PartitionStep};
pub use system::{BackHalf, CycleClocks, MakeParts, MemStats, MemorySystem, PortStep, SmPort, StepParts};
pub use types::{
    AccessKind, AccessOutcome, L2ReqKind, L2Request, L2Response, MemSpace, WarpMemRequest, ACCESS_OUTCOMES,
    ACCESS_OUTCOME_NAMES, ACCESS_TYPES, ACCESS_TYPE_NAMES,
};
