//! The compiler side of LTRF, the latency-tolerant register file (Sadrosadati et al.,
//! ASPLOS'18 / TOCS; `shared/papers/ltrf-latency-tolerant-register-file.txt`), on SASS:
//!
//! * [`intervals`]: register-intervals — single-entry regions whose instructions access at
//!   most N regular registers — formed by the paper's Algorithms 1 and 2 (§3.3);
//! * prefetches ([`Prefetch`]): one at the head of every interval, with the interval's
//!   working set (LTRF fetches all of it) and the part of it live on entry (what LTRF+,
//!   with liveness, fetches); their main-register-file bank conflicts (§4);
//! * LTRF+ dead-operand bits: per instruction, the registers it reads for the last time
//!   (warp-level liveness, [`crate::liveness::Mode::Warp`]);
//! * [`renumber`]: the paper's register renumbering (§4.2): live ranges, the interval
//!   conflict graph, Chaitin-style bank colouring and renaming, which spreads each
//!   interval's working set over the main register file's banks.
//!
//! The hardware side (register cache, prefetch timing, two-level scheduler) lives in the
//! timing model (`crates/timing/src/ltrf.rs`); `sassim ltrf analyze` prints this pass.

pub mod intervals;
pub mod lengths;
pub mod renumber;

use crate::cfg::{Cfg, CfgOptions};
use crate::footprint::{footprints, Footprint};
use crate::liveness::{Liveness, Mode};
use crate::regset::RegSet;
use sassim_isa::Kernel;
use serde::{Deserialize, Serialize};

pub use intervals::{Interval, Intervals};
pub use lengths::{dynamic_lengths, Lengths};
pub use renumber::{renumber, RenumberReport, Renumbered};

/// Labels `.LTRF_<k>` mark the interval heads of a renumbered kernel, so that the
/// hardware model uses the intervals the renumbering was made for.
pub const LTRF_LABEL_PREFIX: &str = ".LTRF_";

/// Whether a label is one of the interval-head marks.
pub fn is_ltrf_label(name: &str) -> bool {
    name.starts_with(LTRF_LABEL_PREFIX)
}

/// Parameters of the pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LtrfOptions {
    /// N: registers allowed in an interval (the size of a warp's register-cache partition).
    pub registers_per_interval: u32,
    /// Banks of the main register file (bank of register r = r mod banks).
    pub banks: u32,
    /// Run Algorithm 2 (merging intervals) after Algorithm 1.
    pub merge: bool,
    /// Renumbering keeps every register's number modulo this (1: no constraint). With the
    /// operand banks of today's register file (2), the renumbered code keeps ptxas's
    /// operand-bank assignment, so the register reads of the renumbered code conflict
    /// exactly as the original's.
    pub keep_modulo: u32,
}

impl Default for LtrfOptions {
    /// The paper's default configuration (Table 3: 16 registers per interval; §4: 16 banks).
    fn default() -> Self {
        LtrfOptions {
            registers_per_interval: 16,
            banks: 16,
            merge: true,
            keep_modulo: 1,
        }
    }
}

/// The prefetch at the head of one interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefetch {
    pub interval: usize,
    /// Instruction index and PC of the head.
    pub head: usize,
    pub pc: u64,
    /// The interval's working set: the prefetch bit-vector (LTRF fetches all of it).
    pub working_set: RegSet,
    /// The part of the working set live on entry (warp-level liveness): what LTRF+ must
    /// fetch; the rest only gets space in the register cache.
    pub live: RegSet,
    /// Main-register-file bank conflicts of fetching the working set: the largest number of
    /// its registers in one bank, minus one (§4: "N conflicts if at most N+1 registers
    /// reside in the same bank").
    pub bank_conflicts: u32,
}

/// Bank conflicts of accessing `set` (its regular registers) in a register file of `banks`
/// banks: the largest number of registers in one bank minus one (0 for an empty set).
pub fn bank_conflicts(set: &RegSet, banks: u32) -> u32 {
    let banks = banks.max(1) as usize;
    let mut count = vec![0u32; banks];
    for r in set.regular_indices() {
        count[r as usize % banks] += 1;
    }
    count.into_iter().max().unwrap_or(0).saturating_sub(1)
}

/// A kernel as the LTRF compiler leaves it: intervals, prefetches, dead-operand bits.
#[derive(Debug, Clone)]
pub struct LtrfKernel {
    pub name: String,
    pub options: LtrfOptions,
    pub intervals: Intervals,
    /// One per interval, in interval order.
    pub prefetches: Vec<Prefetch>,
    /// Per instruction, the regular registers it reads for the last time (LTRF+).
    pub dead: Vec<RegSet>,
    /// Per instruction, the regular registers it reads or writes.
    pub accessed: Vec<RegSet>,
    /// Per instruction, the regular registers it writes.
    pub written: Vec<RegSet>,
    /// The intervals came from `.LTRF_` labels (a renumbered kernel), not from the
    /// formation algorithm.
    pub from_labels: bool,
    /// What made the analysis approximate (indirect branches without known targets…).
    pub notes: Vec<String>,
}

impl LtrfKernel {
    /// Static instructions per interval.
    pub fn mean_static_length(&self) -> f64 {
        let n = self.intervals.intervals.len();
        if n == 0 {
            0.0
        } else {
            self.accessed.len() as f64 / n as f64
        }
    }

    /// Number of intervals whose prefetch has `k` bank conflicts, for k = 0, 1, 2, …
    pub fn conflict_histogram(&self) -> Vec<usize> {
        let mut h = Vec::new();
        for p in &self.prefetches {
            let k = p.bank_conflicts as usize;
            if h.len() <= k {
                h.resize(k + 1, 0);
            }
            h[k] += 1;
        }
        h
    }
}

/// Interval heads marked by `.LTRF_` labels, as instruction indices.
pub fn labelled_heads(kernel: &Kernel) -> Vec<usize> {
    let mut v: Vec<usize> = kernel
        .labels
        .iter()
        .filter(|(n, _)| is_ltrf_label(n))
        .filter_map(|(_, &pc)| kernel.index_of(pc))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Runs the pass on `kernel`. A kernel with `.LTRF_` labels keeps the intervals they mark.
pub fn analyze(kernel: &Kernel, opts: &LtrfOptions) -> LtrfKernel {
    analyze_with(kernel, opts, &CfgOptions::default())
}

/// [`analyze`] with indirect-branch targets.
pub fn analyze_with(kernel: &Kernel, opts: &LtrfOptions, cfg_opts: &CfgOptions) -> LtrfKernel {
    let cfg = Cfg::build_with(kernel, cfg_opts);
    let fps = footprints(&kernel.instructions);
    let n = opts.registers_per_interval.max(1) as usize;
    let heads = labelled_heads(kernel);
    let from_labels = !heads.is_empty();
    let intervals = if from_labels {
        intervals::from_heads(&cfg, &fps, &heads, n)
    } else {
        intervals::form(&cfg, &fps, n, opts.merge)
    };
    finish(kernel, opts, &cfg, &fps, intervals, from_labels)
}

fn finish(
    kernel: &Kernel,
    opts: &LtrfOptions,
    cfg: &Cfg,
    fps: &[Footprint],
    intervals: Intervals,
    from_labels: bool,
) -> LtrfKernel {
    let live = Liveness::compute(cfg, &kernel.instructions, fps, Mode::Warp);
    let prefetches = intervals
        .intervals
        .iter()
        .enumerate()
        .map(|(k, iv)| Prefetch {
            interval: k,
            head: iv.head,
            pc: kernel.instructions[iv.head].pc,
            working_set: iv.working_set,
            live: iv.working_set.and(&live.live_before(iv.head)),
            bank_conflicts: bank_conflicts(&iv.working_set, opts.banks),
        })
        .collect();
    let dead = (0..fps.len())
        .map(|i| live.dead_after(i, &fps[i]).regular())
        .collect();
    let accessed = fps.iter().map(intervals::regs_of).collect();
    let written = fps.iter().map(|f| f.defs.regular()).collect();
    let mut notes = Vec::new();
    if cfg.indirect_unresolved {
        notes.push(
            "an indirect branch has no known targets and the listing no labels: every block start was taken as a target"
                .to_string(),
        );
    } else if cfg.indirect_approximated {
        notes
            .push("indirect branches: every labelled instruction was taken as a possible target".to_string());
    }
    if !cfg.bad_targets.is_empty() {
        notes.push(format!(
            "branch targets outside the code were ignored: {:?}",
            cfg.bad_targets
        ));
    }
    if !intervals.oversized.is_empty() {
        notes.push(format!(
            "{} interval(s) hold a single instruction that alone accesses more than {} registers",
            intervals.oversized.len(),
            opts.registers_per_interval
        ));
    }
    LtrfKernel {
        name: kernel.name.clone(),
        options: *opts,
        intervals,
        prefetches,
        dead,
        accessed,
        written,
        from_labels,
        notes,
    }
}
