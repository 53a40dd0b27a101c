//! `sassim-analysis`: control-flow and dataflow analysis of SASS kernels, at the level of
//! `sassim-isa` (no simulator state), and the LTRF compiler pass built on it.
//!
//! | module | what |
//! |---|---|
//! | [`regset`] | [`RegSet`]: a set of R/UR/P/UP/B registers as bit vectors |
//! | [`footprint`] | the registers each instruction reads, writes and kills (guarded and part-register writes keep the old value), 64-bit corrections, exactness |
//! | [`cfg`] | basic blocks and the [`Cfg`]: `BRA` with guards and predicate operands, `BRX`/`JMX` jump tables (targets given, or every label), `CALL.REL`/`RET`, `EXIT`, convergence instructions |
//! | [`dom`] | dominator and post-dominator trees, of a [`Cfg`]'s blocks or of any graph given as successor lists (the SIMT stack's reconvergence points) |
//! | [`loops`] | natural loops, nesting, irreducibility |
//! | [`liveness`] | liveness per block and instruction, per thread or per warp (divergent paths run one after the other), dead-operand bits |
//! | [`reaching`] | reaching definitions, def-use chains, webs (live ranges) |
//! | [`control_bits`] | stall counts, dependence counters and wait masks inferred from opcode latencies (traces without SASS) |
//! | [`ltrf`] | register-intervals (LTRF Algorithms 1 and 2), prefetches, LTRF+ liveness, register renumbering |
//!
//! Instructions are named by their index in `Kernel::instructions`, blocks by their index
//! in `Cfg::blocks`. Everything is deterministic and allocation-bounded by the kernel's
//! size; nothing panics on any kernel the parsers produce.
//!
//! ```
//! use sassim_analysis::{Cfg, DomTree, Liveness, Loops, Mode, footprint::footprints};
//! let k = sassim_sass::microbench::parse(
//!     "MOV R0, RZ ;\nloop: IADD3 R0, R0, 0x1, RZ ;\nISETP.NE.AND P0, PT, R0, 0x8, PT ;\n@P0 BRA loop ;\nEXIT ;",
//!     "k.sass",
//! ).unwrap().kernel;
//! let cfg = Cfg::build(&k);
//! let loops = Loops::find(&cfg, &DomTree::dominators(&cfg));
//! assert_eq!(loops.loops.len(), 1);
//! let live = Liveness::compute(&cfg, &k.instructions, &footprints(&k.instructions), Mode::Thread);
//! assert_eq!(live.live_after(1).to_string(), "{R0}");
//! ```

// The dataflow passes index several parallel per-block and per-instruction tables with the
// same index; ranges read better there than zipped iterators.
#![allow(clippy::needless_range_loop)]

pub mod cfg;
pub mod control_bits;
pub mod dom;
pub mod footprint;
pub mod liveness;
pub mod loops;
pub mod ltrf;
pub mod reaching;
pub mod regset;
#[cfg(test)]
mod test_kernels;

pub use cfg::{Block, Cfg, CfgOptions, Edge, EdgeKind};
pub use dom::DomTree;
pub use footprint::{footprint, Footprint};
pub use liveness::{Liveness, Mode};
pub use loops::{Loop, Loops};
pub use reaching::{DefUse, Webs};
pub use regset::RegSet;
