//! Parameters of the SM core model. Every number comes from a GPU preset
//! (`presets/*.toml`, crate `sassim-config`); `sassim-gpu` fills this struct.
//! `Default` gives the RTX A6000 values so unit tests of single stages can run alone.

use serde::{Deserialize, Serialize};

/// Issue-scheduler policy (modern-nvidia-gpu-cores §5.1.2; LTRF §4 for two-level).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedPolicy {
    /// Compiler Guided Greedy Then Youngest (default).
    Cggty,
    /// Greedy Then Oldest (Accel-Sim baseline).
    Gto,
    /// Loose round-robin.
    Lrr,
    /// Two-level: round-robin over an active pool of N warps.
    TwoLevel,
}

/// Dependence management (MICRO'25 §7.5, Table 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DepMode {
    /// Compiler control bits: stall counter, yield, dependence counters.
    ControlBits,
    /// RAW/WAW + WAR scoreboards, control bits ignored.
    Scoreboard,
    /// Control bits where the kernel has them, scoreboards otherwise.
    Hybrid,
}

/// When a stall counter S set at cycle t lets the warp issue again (docs/model.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StallExpiry {
    /// Next issue at t+S (MICRO'25 Listing 2; default).
    Listing2,
    /// Next issue at t+S+1 (MICRO'25 Figure 4(b)).
    Figure4,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheGeom {
    pub size_bytes: u32,
    pub line_bytes: u32,
    pub assoc: u32,
}

impl CacheGeom {
    pub fn sets(&self) -> u32 {
        (self.size_bytes / self.line_bytes.max(1) / self.assoc.max(1)).max(1)
    }
}

/// Latencies of the memory pipeline, relative to the instruction's arrival in the
/// sub-core memory queue (two cycles after issue: Issue → Control → queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemPipeConfig {
    /// Memory queue entries per sub-core (4) — rule 34.
    pub queue_entries: u32,
    /// Dispatch latch in front of the queue (1) — rule 34.
    pub dispatch_latch: u32,
    /// Cycles between address calculations with regular-register addresses (4) — rule 35.
    pub addr_interval_regular: u32,
    /// Cycles between address calculations with uniform addresses.
    pub addr_interval_uniform: u32,
    /// Cycles between requests accepted by the SM-shared structures (2) — rule 36.
    pub shared_accept_interval: u32,
    /// Queue arrival → sources read, uniform / regular global address.
    pub global_src_read_uniform: u32,
    pub global_src_read_regular: u32,
    /// Queue arrival → sources read for shared-memory and constant (LDC) accesses.
    pub shared_src_read: u32,
    /// Extra cycle of per-thread address processing after the read with regular addresses.
    pub per_thread_addr_extra: u32,
    /// Cycles to read 1024 bits of store data from the register file (512 b/cycle → 2).
    pub store_data_cycles_per_1024b: u32,
    /// Extra address-read cycles of LDGSTS (two addresses).
    pub ldgsts_extra_src_cycles: u32,
    /// Memory → register file transfer width for global/local/const data (512).
    pub mem_to_rf_bits_per_cycle: u32,
    /// Shared memory → register file transfer width and minimum cycles (fitted, docs/model.md).
    pub shared_to_rf_bits_per_cycle: u32,
    pub shared_to_rf_min_cycles: u32,
    /// LDC with a register offset releases its sources only at write-back (Table 2: WAR 29).
    pub ldc_indexed_war_at_writeback: bool,
    /// LDGSTS: shared-memory write after the global data arrives.
    pub ldgsts_shared_write_cycles: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitConfig {
    pub name: String,
    /// Lanes: 32 = full warp (input latch busy 1 cycle), 16 = half warp (2 cycles).
    pub lanes: u32,
    /// Shared by the whole SM (e.g. FP64 on consumer GPUs) instead of one per sub-core.
    pub shared_by_sm: bool,
    /// Initiation interval of a shared unit in cycles.
    pub initiation_interval: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreConfig {
    pub subcores: u32,
    pub warp_size: u32,
    pub max_warps: u32,
    // Front-end (§5.2).
    pub ib_entries: u32,
    pub fetch_to_issue_stages: u32,
    pub l0i: CacheGeom,
    pub stream_buffer_entries: u32,
    pub perfect_icache: bool,
    pub l1i: CacheGeom,
    pub l1i_latency: u32,
    pub l1i_miss_latency: u32,
    pub l1i_requests_per_cycle: u32,
    // Issue (§5.1).
    pub scheduler: SchedPolicy,
    pub two_level_active_warps: u32,
    pub dependence: DepMode,
    /// 0 = unlimited.
    pub scoreboard_max_consumers: u32,
    pub stall_expiry: StallExpiry,
    pub stall_gt11_without_yield_cycles: u32,
    pub errbar_stall_cycles: u32,
    pub const_miss_switch_cycles: u32,
    pub depbar_effect_delay: u32,
    pub yield_enabled: bool,
    pub control_stage_cycles: u32,
    // Register file (§5.3).
    pub rf_banks: u32,
    pub rf_read_ports_per_bank: u32,
    pub rf_read_cycles: u32,
    pub rf_ideal: bool,
    pub rfc_enabled: bool,
    pub rfc_slots: u32,
    pub var_consumer_extra_cycles: u32,
    pub load_wb_conflict_delay: u32,
    // Constant caches.
    pub l0c_fl: CacheGeom,
    pub l0c_fl_miss_latency: u32,
    // Units.
    pub units: Vec<UnitConfig>,
    pub mem: MemPipeConfig,
}

impl Default for MemPipeConfig {
    fn default() -> Self {
        MemPipeConfig {
            queue_entries: 4,
            dispatch_latch: 1,
            addr_interval_regular: 4,
            addr_interval_uniform: 2,
            shared_accept_interval: 2,
            global_src_read_uniform: 7,
            global_src_read_regular: 9,
            shared_src_read: 7,
            per_thread_addr_extra: 1,
            store_data_cycles_per_1024b: 2,
            ldgsts_extra_src_cycles: 2,
            mem_to_rf_bits_per_cycle: 512,
            shared_to_rf_bits_per_cycle: 1024,
            shared_to_rf_min_cycles: 2,
            ldc_indexed_war_at_writeback: true,
            ldgsts_shared_write_cycles: 7,
        }
    }
}

impl Default for CoreConfig {
    fn default() -> Self {
        let unit = |name: &str, lanes, shared| UnitConfig {
            name: name.to_string(),
            lanes,
            shared_by_sm: shared,
            initiation_interval: 1,
        };
        CoreConfig {
            subcores: 4,
            warp_size: 32,
            max_warps: 48,
            ib_entries: 3,
            fetch_to_issue_stages: 2,
            l0i: CacheGeom {
                size_bytes: 16 * 1024,
                line_bytes: 128,
                assoc: 4,
            },
            stream_buffer_entries: 8,
            perfect_icache: false,
            l1i: CacheGeom {
                size_bytes: 128 * 1024,
                line_bytes: 128,
                assoc: 8,
            },
            l1i_latency: 20,
            l1i_miss_latency: 200,
            l1i_requests_per_cycle: 1,
            scheduler: SchedPolicy::Cggty,
            two_level_active_warps: 8,
            dependence: DepMode::ControlBits,
            scoreboard_max_consumers: 63,
            stall_expiry: StallExpiry::Listing2,
            stall_gt11_without_yield_cycles: 2,
            errbar_stall_cycles: 45,
            const_miss_switch_cycles: 4,
            depbar_effect_delay: 4,
            yield_enabled: true,
            control_stage_cycles: 1,
            rf_banks: 2,
            rf_read_ports_per_bank: 1,
            rf_read_cycles: 3,
            rf_ideal: false,
            rfc_enabled: true,
            rfc_slots: 3,
            var_consumer_extra_cycles: 1,
            load_wb_conflict_delay: 1,
            l0c_fl: CacheGeom {
                size_bytes: 2048,
                line_bytes: 64,
                assoc: 4,
            },
            l0c_fl_miss_latency: 79,
            units: vec![
                unit("fp32", 32, false),
                unit("int", 16, false),
                unit("sfu", 4, false),
                unit("fp64", 2, true),
                unit("tensor", 32, false),
                unit("uniform", 32, false),
                unit("branch", 32, false),
                unit("mem", 32, false),
            ],
            mem: MemPipeConfig::default(),
        }
    }
}
