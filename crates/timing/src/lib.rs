//! `sassim-timing`: the cycle-level model of an NVIDIA SM as revealed by
//! "Dissecting and Modeling the Architecture of Modern GPU Cores" (MICRO'25):
//! four sub-cores with an L0 I-cache and stream buffer, the CGGTY issue scheduler
//! driven by compiler control bits, Control and Allocate stages, a two-bank register
//! file with a register-file cache, a result queue, and the memory pipeline.
//!
//! Components (one module each; docs/architecture.md lists them): [`fetch`] and
//! [`frontend`] (fetch, decode, L0 I-cache, stream buffer), [`issue`] (readiness, the
//! scheduling policies, issue), [`pipeline`] (Control, Allocate, register reads),
//! [`mempipe`] (the memory queue, address calculation, the SM arbiter), [`sm`] (the SM
//! record, retirement, the cycle loop), `events` (the SM's event queue), [`sleep`] (the
//! sub-cores' cycles and sleep), [`state`] (the per-warp and per-sub-core state records the
//! stages share), [`regfile`], [`mem`], [`inst`] (static decode), [`exec`] (the executor
//! interface), [`config`], [`stats`], [`ltrf`] (the latency-tolerant register file's
//! register cache and prefetches), [`tma`].

pub mod config;
pub(crate) mod events;
pub mod exec;
pub mod fetch;
pub mod frontend;
pub mod inst;
pub mod issue;
pub mod ltrf;
pub mod mem;
pub mod mempipe;
pub mod pipeline;
pub mod regfile;
pub(crate) mod scoreboard;
pub mod sleep;
pub mod sm;
pub mod state;
pub mod stats;
pub mod tma;

pub use config::{CoreConfig, DepMode, SchedPolicy, StallExpiry};
pub use exec::{Executor, Issued, MemAccess};
pub use inst::{decode_kernel, InstClass, LtrfSlot, StaticInst};
pub use mem::{DataMemory, FixedLatencyMemory, HitLatencies};
pub use sm::Sm;
pub use state::{IssueRec, RfcLog, RfcRead, WarpLog};
pub use stats::{CoreStats, StallReason};
