//! The statistics data model the simulator fills.
//!
//! Field names are part of the JSON format (`docs/report.md`) and must stay stable. Every
//! struct is `#[serde(default)]`, so JSON written by an older sassim (with fewer fields)
//! still reads. Wall-clock quantities live only in [`HostStats`] (`RunReport::host`), so
//! the JSON of a report without `host` is byte-identical across runs of the same input.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Issue-slot reasons of `KernelReport::stall_breakdown`, in display order. Every
/// sub-core cycle counts once: either `issued` or one stall reason (the reason of the
/// warp closest to issuing).
pub const STALL_REASONS: [&str; 11] = [
    "issued",
    "no_instruction",
    "stall_counter",
    "dependence_counters",
    "yield",
    "exec_unit_latch",
    "const_cache_miss",
    "allocate_port_conflict",
    "barrier",
    "mem_queue_full",
    "idle",
];

/// The `stall_breakdown` key of issue slots that issued an instruction.
pub const ISSUED: &str = "issued";

/// Simulation mode strings of `KernelReport::mode`.
pub const MODE_EXECUTION: &str = "execution-driven";
pub const MODE_TRACE_CONTROL_BITS: &str = "trace-driven (control bits)";
pub const MODE_TRACE_HYBRID: &str = "trace-driven (hybrid scoreboard)";

/// Accel-Sim's `mem_access_type` (gpgpu-sim `abstract_hardware_model.h`), in its order.
/// Serialized with Accel-Sim's spelling (`GLOBAL_ACC_R`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AccessKind {
    #[serde(rename = "GLOBAL_ACC_R")]
    GlobalRead,
    #[serde(rename = "LOCAL_ACC_R")]
    LocalRead,
    #[serde(rename = "CONST_ACC_R")]
    ConstRead,
    #[serde(rename = "TEXTURE_ACC_R")]
    TextureRead,
    #[serde(rename = "GLOBAL_ACC_W")]
    GlobalWrite,
    #[serde(rename = "LOCAL_ACC_W")]
    LocalWrite,
    #[serde(rename = "L1_WRBK_ACC")]
    L1Writeback,
    #[serde(rename = "L2_WRBK_ACC")]
    L2Writeback,
    #[serde(rename = "INST_ACC_R")]
    InstRead,
    #[serde(rename = "L1_WR_ALLOC_R")]
    L1WriteAllocRead,
    #[serde(rename = "L2_WR_ALLOC_R")]
    L2WriteAllocRead,
}

impl AccessKind {
    pub const ALL: [AccessKind; 11] = [
        AccessKind::GlobalRead,
        AccessKind::LocalRead,
        AccessKind::ConstRead,
        AccessKind::TextureRead,
        AccessKind::GlobalWrite,
        AccessKind::LocalWrite,
        AccessKind::L1Writeback,
        AccessKind::L2Writeback,
        AccessKind::InstRead,
        AccessKind::L1WriteAllocRead,
        AccessKind::L2WriteAllocRead,
    ];

    /// Accel-Sim's spelling (`mem_access_type_str`).
    pub fn as_str(self) -> &'static str {
        match self {
            AccessKind::GlobalRead => "GLOBAL_ACC_R",
            AccessKind::LocalRead => "LOCAL_ACC_R",
            AccessKind::ConstRead => "CONST_ACC_R",
            AccessKind::TextureRead => "TEXTURE_ACC_R",
            AccessKind::GlobalWrite => "GLOBAL_ACC_W",
            AccessKind::LocalWrite => "LOCAL_ACC_W",
            AccessKind::L1Writeback => "L1_WRBK_ACC",
            AccessKind::L2Writeback => "L2_WRBK_ACC",
            AccessKind::InstRead => "INST_ACC_R",
            AccessKind::L1WriteAllocRead => "L1_WR_ALLOC_R",
            AccessKind::L2WriteAllocRead => "L2_WR_ALLOC_R",
        }
    }

    /// Whether the access writes (stores and write-backs).
    pub fn is_write(self) -> bool {
        matches!(
            self,
            AccessKind::GlobalWrite
                | AccessKind::LocalWrite
                | AccessKind::L1Writeback
                | AccessKind::L2Writeback
        )
    }
}

/// Accel-Sim's `cache_request_status`, in its order, with its spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum CacheStatus {
    #[serde(rename = "HIT")]
    Hit,
    #[serde(rename = "HIT_RESERVED")]
    HitReserved,
    #[serde(rename = "MISS")]
    Miss,
    #[serde(rename = "RESERVATION_FAIL")]
    ReservationFail,
    #[serde(rename = "SECTOR_MISS")]
    SectorMiss,
    #[serde(rename = "MSHR_HIT")]
    MshrHit,
}

impl CacheStatus {
    pub const ALL: [CacheStatus; 6] = [
        CacheStatus::Hit,
        CacheStatus::HitReserved,
        CacheStatus::Miss,
        CacheStatus::ReservationFail,
        CacheStatus::SectorMiss,
        CacheStatus::MshrHit,
    ];

    /// Accel-Sim's spelling (`cache_request_status_str`).
    pub fn as_str(self) -> &'static str {
        match self {
            CacheStatus::Hit => "HIT",
            CacheStatus::HitReserved => "HIT_RESERVED",
            CacheStatus::Miss => "MISS",
            CacheStatus::ReservationFail => "RESERVATION_FAIL",
            CacheStatus::SectorMiss => "SECTOR_MISS",
            CacheStatus::MshrHit => "MSHR_HIT",
        }
    }

    /// Whether Accel-Sim's `TOTAL_ACCESS` line counts this status (all but
    /// `RESERVATION_FAIL` and `MSHR_HIT`, which is already a `SECTOR_MISS`).
    pub fn counts_in_total_access(self) -> bool {
        !matches!(self, CacheStatus::ReservationFail | CacheStatus::MshrHit)
    }
}

/// Counters of one cache level (summed over its instances: all SMs' L1Ds, all L2 slices).
///
/// `accesses`, `hits`, `misses`, `pending_hits` and `reservation_fails` are the summary
/// counters (Accel-Sim's `cache_sub_stats`: accesses = HIT + HIT_RESERVED + MISS +
/// SECTOR_MISS, misses = MISS + SECTOR_MISS, pending_hits = HIT_RESERVED). `breakdown`
/// holds the per access-kind, per status counts printed as
/// `…_stats_breakdown[KIND][STATUS]`. [`CacheCounters::record`] keeps both consistent;
/// a simulator that only knows the summary may leave `breakdown` empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CacheCounters {
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    pub pending_hits: u64,
    pub reservation_fails: u64,
    pub breakdown: BTreeMap<AccessKind, BTreeMap<CacheStatus, u64>>,
}

impl CacheCounters {
    /// Counts `n` requests of `kind` that ended with `status`, in both the breakdown and
    /// the summary counters (with Accel-Sim's `get_sub_stats` rules).
    pub fn record(&mut self, kind: AccessKind, status: CacheStatus, n: u64) {
        *self.breakdown.entry(kind).or_default().entry(status).or_default() += n;
        match status {
            CacheStatus::Hit => {
                self.accesses += n;
                self.hits += n;
            }
            CacheStatus::HitReserved => {
                self.accesses += n;
                self.pending_hits += n;
            }
            CacheStatus::Miss | CacheStatus::SectorMiss => {
                self.accesses += n;
                self.misses += n;
            }
            CacheStatus::ReservationFail => self.reservation_fails += n,
            CacheStatus::MshrHit => {}
        }
    }

    /// The breakdown count of `kind`/`status` (0 when absent).
    pub fn get(&self, kind: AccessKind, status: CacheStatus) -> u64 {
        self.breakdown
            .get(&kind)
            .and_then(|m| m.get(&status))
            .copied()
            .unwrap_or(0)
    }

    /// Accel-Sim's `[KIND][TOTAL_ACCESS]`: the statuses that count as an access.
    pub fn total_access(&self, kind: AccessKind) -> u64 {
        CacheStatus::ALL
            .iter()
            .filter(|s| s.counts_in_total_access())
            .map(|&s| self.get(kind, s))
            .fold(0u64, u64::saturating_add)
    }

    /// Miss rate (`misses / accesses`), 0 without accesses.
    pub fn miss_rate(&self) -> f64 {
        ratio(self.misses, self.accesses)
    }

    /// Adds `o` into `self` (saturating).
    pub fn add(&mut self, o: &CacheCounters) {
        self.accesses = self.accesses.saturating_add(o.accesses);
        self.hits = self.hits.saturating_add(o.hits);
        self.misses = self.misses.saturating_add(o.misses);
        self.pending_hits = self.pending_hits.saturating_add(o.pending_hits);
        self.reservation_fails = self.reservation_fails.saturating_add(o.reservation_fails);
        for (k, m) in &o.breakdown {
            let dst = self.breakdown.entry(*k).or_default();
            for (s, v) in m {
                let e = dst.entry(*s).or_default();
                *e = e.saturating_add(*v);
            }
        }
    }
}

/// Summary counters of one cache instance (one SM's L1D), printed as Accel-Sim's
/// `L1D_cache_core[i]: Access = …` lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CacheSubStats {
    pub accesses: u64,
    pub misses: u64,
    pub pending_hits: u64,
    pub reservation_fails: u64,
}

impl CacheSubStats {
    pub fn add(&mut self, o: &CacheSubStats) {
        self.accesses = self.accesses.saturating_add(o.accesses);
        self.misses = self.misses.saturating_add(o.misses);
        self.pending_hits = self.pending_hits.saturating_add(o.pending_hits);
        self.reservation_fails = self.reservation_fails.saturating_add(o.reservation_fails);
    }
}

/// Statistics of one kernel launch. Counters cover this kernel only (not running totals).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KernelReport {
    /// Kernel name as in the input (mangled for traces and listings).
    pub name: String,
    /// Launch number, 1-based in launch order (Accel-Sim's `kernel_launch_uid`,
    /// `kernel-N.traceg`).
    pub launch_uid: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Cycle of the GPU clock at which the kernel started (0 for the first kernel).
    pub start_cycle: u64,
    /// Core cycles from the kernel's start to its end timestamp, as a hardware profiler's
    /// kernel duration: launch cost, CTA dispatch and the CTAs.
    pub cycles: u64,
    /// The bare kernel: core cycles from the first warp's launch to the end of the last
    /// warp, without the launch cost (0 in reports of older sassim versions).
    pub bare_cycles: u64,
    /// Warp instructions issued.
    pub warp_insts: u64,
    /// Thread instructions (active lanes summed over issued warp instructions).
    pub thread_insts: u64,
    /// `thread_insts / bare_cycles` (over `cycles` when `bare_cycles` is 0): the SMs' IPC
    /// while the kernel runs. (Accel-Sim's `gpu_ipc` line divides by `cycles`.)
    pub ipc: f64,
    /// Achieved occupancy, 0..=1: resident warps averaged over the bare kernel's cycles and
    /// SMs, divided by the maximum warps per SM (Accel-Sim's `gpu_occupancy` / 100).
    pub occupancy: f64,
    /// CTAs launched.
    pub ctas: u64,
    /// Issue slots (sub-core cycles, summed over SMs) by reason; see [`STALL_REASONS`].
    pub stall_breakdown: BTreeMap<String, u64>,
    /// Register-file-cache reads and hits.
    pub rfc_reads: u64,
    pub rfc_hits: u64,
    /// L0 instruction-cache hits and misses.
    pub l0i_hits: u64,
    pub l0i_misses: u64,
    pub l1i: CacheCounters,
    pub l1d: CacheCounters,
    /// Per-SM L1D summaries (index = SM id), for the `L1D_cache_core[i]` lines.
    pub l1d_per_sm: Vec<CacheSubStats>,
    pub l2: CacheCounters,
    /// DRAM read / write requests (column commands).
    pub dram_reads: u64,
    pub dram_writes: u64,
    pub dram_row_hits: u64,
    pub dram_row_misses: u64,
    /// Shared-memory warp accesses and the extra cycles of bank conflicts.
    pub shared_accesses: u64,
    pub shared_bank_conflicts: u64,
    /// `(cycle relative to start_cycle, IPC of the interval that ends at that cycle)`,
    /// IPC in thread instructions per cycle like `ipc`.
    pub ipc_timeline: Vec<(u64, f64)>,
    /// One of [`MODE_EXECUTION`], [`MODE_TRACE_CONTROL_BITS`], [`MODE_TRACE_HYBRID`].
    pub mode: String,
    /// Any further counters the simulator wants to export (name → value).
    pub extra: BTreeMap<String, u64>,
    pub warnings: Vec<String>,
}

impl KernelReport {
    /// Sets `ipc` from `thread_insts` and [`KernelReport::busy_cycles`] (0 when those are 0).
    pub fn compute_ipc(&mut self) {
        self.ipc = ratio(self.thread_insts, self.busy_cycles());
    }

    /// `bare_cycles`, or `cycles` when the bare kernel is not known (older reports).
    pub fn busy_cycles(&self) -> u64 {
        if self.bare_cycles > 0 {
            self.bare_cycles
        } else {
            self.cycles
        }
    }

    /// Total issue slots in `stall_breakdown` (issued + all stall reasons).
    pub fn issue_slots(&self) -> u64 {
        self.stall_breakdown
            .values()
            .fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// The `n` largest stall reasons (excluding `issued`) with their share of all issue
    /// slots in percent, largest first; ties broken by name. Zero counts are left out.
    pub fn top_stalls(&self, n: usize) -> Vec<(String, f64)> {
        let total = self.issue_slots();
        let mut v: Vec<(&String, u64)> = self
            .stall_breakdown
            .iter()
            .filter(|(k, &c)| k.as_str() != ISSUED && c > 0)
            .map(|(k, &c)| (k, c))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        v.into_iter()
            .take(n)
            .map(|(k, c)| (k.clone(), 100.0 * ratio(c, total)))
            .collect()
    }
}

/// Totals over all kernels of a run (see [`TotalReport::from_kernels`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TotalReport {
    pub kernels: u64,
    /// Sum of the kernels' cycles (kernels run one after the other).
    pub cycles: u64,
    /// Sum of the kernels' [`KernelReport::busy_cycles`].
    pub bare_cycles: u64,
    pub warp_insts: u64,
    pub thread_insts: u64,
    /// `thread_insts / bare_cycles`.
    pub ipc: f64,
    /// Bare-cycle-weighted mean of the kernels' occupancy.
    pub occupancy: f64,
    pub ctas: u64,
    pub stall_breakdown: BTreeMap<String, u64>,
    pub rfc_reads: u64,
    pub rfc_hits: u64,
    pub l0i_hits: u64,
    pub l0i_misses: u64,
    pub l1i: CacheCounters,
    pub l1d: CacheCounters,
    pub l2: CacheCounters,
    pub dram_reads: u64,
    pub dram_writes: u64,
    pub dram_row_hits: u64,
    pub dram_row_misses: u64,
    pub shared_accesses: u64,
    pub shared_bank_conflicts: u64,
}

impl TotalReport {
    /// Sums the kernels' counters.
    pub fn from_kernels(kernels: &[KernelReport]) -> TotalReport {
        let mut t = TotalReport {
            kernels: kernels.len() as u64,
            ..TotalReport::default()
        };
        let mut occ_weighted = 0.0f64;
        for k in kernels {
            t.cycles = t.cycles.saturating_add(k.cycles);
            t.bare_cycles = t.bare_cycles.saturating_add(k.busy_cycles());
            t.warp_insts = t.warp_insts.saturating_add(k.warp_insts);
            t.thread_insts = t.thread_insts.saturating_add(k.thread_insts);
            t.ctas = t.ctas.saturating_add(k.ctas);
            occ_weighted += finite(k.occupancy) * k.busy_cycles() as f64;
            for (r, v) in &k.stall_breakdown {
                let e = t.stall_breakdown.entry(r.clone()).or_default();
                *e = e.saturating_add(*v);
            }
            t.rfc_reads = t.rfc_reads.saturating_add(k.rfc_reads);
            t.rfc_hits = t.rfc_hits.saturating_add(k.rfc_hits);
            t.l0i_hits = t.l0i_hits.saturating_add(k.l0i_hits);
            t.l0i_misses = t.l0i_misses.saturating_add(k.l0i_misses);
            t.l1i.add(&k.l1i);
            t.l1d.add(&k.l1d);
            t.l2.add(&k.l2);
            t.dram_reads = t.dram_reads.saturating_add(k.dram_reads);
            t.dram_writes = t.dram_writes.saturating_add(k.dram_writes);
            t.dram_row_hits = t.dram_row_hits.saturating_add(k.dram_row_hits);
            t.dram_row_misses = t.dram_row_misses.saturating_add(k.dram_row_misses);
            t.shared_accesses = t.shared_accesses.saturating_add(k.shared_accesses);
            t.shared_bank_conflicts = t.shared_bank_conflicts.saturating_add(k.shared_bank_conflicts);
        }
        t.ipc = ratio(t.thread_insts, t.bare_cycles);
        t.occupancy = if t.bare_cycles == 0 {
            0.0
        } else {
            occ_weighted / t.bare_cycles as f64
        };
        t
    }
}

/// Wall-clock facts about the simulator itself. Not deterministic, so kept out of the
/// rest of the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostStats {
    /// Wall-clock seconds of the whole simulation.
    pub wall_seconds: f64,
    /// Simulated warp instructions per wall-clock second.
    pub warp_insts_per_s: f64,
    /// Simulated core cycles per wall-clock second.
    pub cycles_per_s: f64,
    /// Optional: wall-clock seconds from the start of the run to the end of each kernel
    /// (index = position in `RunReport::kernels`). When absent, the Accel-Sim
    /// `gpgpu_simulation_time` of a kernel is apportioned from `wall_seconds` by cycles.
    pub kernel_end_seconds: Vec<f64>,
    /// Optional: worker threads used.
    pub threads: u32,
}

impl HostStats {
    /// Host statistics of `report` simulated in `wall_seconds`.
    pub fn new(report: &RunReport, wall_seconds: f64) -> HostStats {
        let w = finite(wall_seconds).max(0.0);
        let t = TotalReport::from_kernels(&report.kernels);
        let rate = |x: u64| if w > 0.0 { x as f64 / w } else { 0.0 };
        HostStats {
            wall_seconds: w,
            warp_insts_per_s: rate(t.warp_insts),
            cycles_per_s: rate(t.cycles),
            kernel_end_seconds: Vec::new(),
            threads: 0,
        }
    }
}

/// Statistics of one simulator run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunReport {
    /// GPU preset name.
    pub gpu: String,
    /// sassim version (`CARGO_PKG_VERSION` of the binary, plus git describe if known).
    pub sim_version: String,
    /// The effective configuration (preset with overrides), as JSON.
    pub config: serde_json::Value,
    /// Kernels in launch order.
    pub kernels: Vec<KernelReport>,
    pub total: TotalReport,
    /// Run-level warnings.
    pub warnings: Vec<String>,
    /// Wall-clock statistics; `None` for deterministic output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<HostStats>,
}

impl RunReport {
    /// Recomputes `total` (and each kernel's `ipc`) from the kernels.
    pub fn finalize(&mut self) {
        for k in &mut self.kernels {
            k.compute_ipc();
        }
        self.total = TotalReport::from_kernels(&self.kernels);
    }

    /// A copy whose floats are all finite (non-finite ones become 0), for JSON, which has
    /// no NaN or infinity.
    pub fn with_finite_floats(&self) -> RunReport {
        let mut r = self.clone();
        for k in &mut r.kernels {
            k.ipc = finite(k.ipc);
            k.occupancy = finite(k.occupancy);
            for p in &mut k.ipc_timeline {
                p.1 = finite(p.1);
            }
        }
        r.total.ipc = finite(r.total.ipc);
        r.total.occupancy = finite(r.total.occupancy);
        if let Some(h) = &mut r.host {
            h.wall_seconds = finite(h.wall_seconds);
            h.warp_insts_per_s = finite(h.warp_insts_per_s);
            h.cycles_per_s = finite(h.cycles_per_s);
            for s in &mut h.kernel_end_seconds {
                *s = finite(*s);
            }
        }
        r
    }

    /// A copy without the wall-clock part.
    pub fn without_host(&self) -> RunReport {
        RunReport {
            host: None,
            ..self.clone()
        }
    }
}

/// `a / b` as f64, 0 when `b` is 0.
pub(crate) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// `x`, or 0 when not finite.
pub(crate) fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}
