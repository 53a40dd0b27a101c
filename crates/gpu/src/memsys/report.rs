//! The memory statistics of a kernel as the GPU reports them (Accel-Sim categories).

use sassim_memory::{DramStats, L1Stats, L2Stats};
use serde::Serialize;
use std::collections::BTreeMap;

/// Counters of one cache level by Accel-Sim access type and outcome
/// (`GLOBAL_ACC_R` → `HIT` → n).
pub type Breakdown = BTreeMap<String, BTreeMap<String, u64>>;

/// Memory statistics of one kernel.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MemReport {
    /// L1D and shared-memory counters, summed over SMs (the memory system's own). L1D
    /// counts are per 128-byte line request after coalescing (Accel-Sim counts sector
    /// requests of a line the same way); reservation fails are per rejected warp access (a
    /// retry counts again).
    pub l1d: L1Stats,
    /// L1D accesses by Accel-Sim type and outcome: `l1d.by_kind` by name
    /// (`GLOBAL_ACC_R|LOCAL_ACC_R|GLOBAL_ACC_W|LOCAL_ACC_W|CONST_ACC_R|INST_ACC_R` →
    /// `HIT|HIT_RESERVED|MISS|RESERVATION_FAIL|SECTOR_MISS` → n), zeros left out.
    /// `CONST_ACC_R` is the L0 VL constant cache (LDC, the `const_*` counters below);
    /// `INST_ACC_R` is not modelled here (instruction caches are in the SM).
    pub l1d_by_kind: Breakdown,
    /// L0 VL constant cache (LDC), summed over SMs: hits, misses, and lookups that found
    /// their line still being fetched (they wait for it, Accel-Sim's HIT_RESERVED).
    pub const_hits: u64,
    pub const_misses: u64,
    pub const_hit_reserved: u64,
    /// L2 counters, summed over slices (the memory system's own).
    pub l2: L2Stats,
    /// L2 accesses by Accel-Sim type and outcome: `GLOBAL_ACC_R` (reads and atomics; the L2
    /// does not see the space), `GLOBAL_ACC_W` (write-through stores; `L1_WRBK_ACC` is
    /// included).
    pub l2_by_kind: Breakdown,
    /// L2 hit rate over reads ([`sassim_memory::MemStats::l2_read_hit_rate`]).
    pub l2_read_hit_rate: f64,
    /// DRAM counters, summed over channels (the memory system's own).
    pub dram: DramStats,
    /// Data-bus busy cycles / (DRAM cycles × channels).
    pub dram_bandwidth_utilization: f64,
    /// DRAM bytes moved per core cycle, and the preset's peak.
    pub dram_bytes_per_core_cycle: f64,
    pub dram_theoretical_bytes_per_core_cycle: f64,
    /// Average read latency inside the DRAM controller (queue arrival → data), DRAM cycles.
    pub dram_avg_read_latency: f64,
    /// Packets through the request / response crossbars.
    pub icnt_request_packets: u64,
    pub icnt_response_packets: u64,
    /// Source-cycles in which a crossbar's head packet could not go (its port busy or no
    /// credit at its destination): SMs for the request crossbar, L2 slices for the
    /// response crossbar.
    pub icnt_request_blocked: u64,
    pub icnt_response_blocked: u64,
    pub core_cycles: u64,
    /// Per-SM L1D summaries (index = SM id): line accesses, misses (incl. sector misses),
    /// pending hits, reservation fails.
    pub l1d_per_sm: Vec<[u64; 4]>,
}

/// Copy a memory report into a `sassim-report` kernel report (Accel-Sim categories).
pub fn fill_report(m: &MemReport, k: &mut sassim_report::KernelReport) {
    use sassim_report::{AccessKind, CacheCounters, CacheStatus};
    let fill = |c: &mut CacheCounters, b: &Breakdown| {
        for (kind, row) in b {
            let Some(ak) = AccessKind::ALL.iter().copied().find(|a| a.as_str() == kind) else {
                continue;
            };
            for (st, &n) in row {
                if let Some(cs) = CacheStatus::ALL.iter().copied().find(|c| c.as_str() == st) {
                    c.record(ak, cs, n);
                }
            }
        }
    };
    fill(&mut k.l1d, &m.l1d_by_kind);
    fill(&mut k.l2, &m.l2_by_kind);
    k.l1d_per_sm = m
        .l1d_per_sm
        .iter()
        .map(|s| sassim_report::CacheSubStats {
            accesses: s[0],
            misses: s[1],
            pending_hits: s[2],
            reservation_fails: s[3],
        })
        .collect();
    k.dram_reads = m.dram.reads;
    k.dram_writes = m.dram.writes;
    k.dram_row_hits = m.dram.row_hits;
    k.dram_row_misses = m.dram.row_misses + m.dram.row_conflicts;
    k.shared_accesses = m.l1d.shared_accesses;
    k.shared_bank_conflicts = m.l1d.bank_conflict_cycles;
    let extra = [
        ("const_l0vl_hits", m.const_hits),
        ("const_l0vl_misses", m.const_misses),
        ("const_l0vl_hit_reserved", m.const_hit_reserved),
        ("shared_atomics", m.l1d.shared_atomics),
        ("shared_bank_conflict_accesses", m.l1d.bank_conflict_accesses),
        ("l2_reservation_fails", m.l2.reservation_fails),
        ("dram_row_conflicts", m.dram.row_conflicts),
        ("dram_bytes", m.dram.bytes),
        ("icnt_request_packets", m.icnt_request_packets),
        ("icnt_response_packets", m.icnt_response_packets),
        ("icnt_request_blocked", m.icnt_request_blocked),
        ("icnt_response_blocked", m.icnt_response_blocked),
    ];
    for (n, v) in extra {
        k.extra.insert(n.to_string(), v);
    }
    // Per mille, as the extra map holds integers.
    k.extra.insert(
        "dram_bandwidth_utilization_permille".into(),
        (m.dram_bandwidth_utilization * 1000.0).round() as u64,
    );
}
