//! Parameters of the SM core model. Every number comes from a GPU preset
//! (`presets/*.toml`, crate `sassim-config`); `sassim-gpu` fills this struct.
//! `Default` gives the RTX A6000 values so unit tests of single stages can run alone.

use serde::{Deserialize, Serialize};

/// Issue-scheduler policy (M25 §5.1.2; LTRF §4 for two-level), dependence management
/// (M25 §7.5, Table 7) and stall-counter expiry (docs/model.md): the preset's own types.
pub use sassim_config::{DependenceMode as DepMode, SchedulerPolicy as SchedPolicy, StallExpiry};

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

/// Memory-pipeline parameters: the preset's `[mem_pipeline]` section as it is.
pub type MemPipeConfig = sassim_config::MemPipelineConfig;

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

#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// L0 → L1 → L0 round trip of an L1 I/C hit (request + reply latency).
    pub l1i_latency: u32,
    /// The reply part of `l1i_latency` (L1 → L0).
    pub l1i_reply_latency: u32,
    /// Round trip of an L1 I/C miss (`l1i_latency` + the L2 latency).
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
    /// [`Self::depbar_effect_delay`] of `WARPGROUP.DEPBAR` (the warpgroup MMA group's wait).
    pub warpgroup_depbar_effect_delay: u32,
    pub stall_special_threshold: u32,
    pub clock_read_min_interval: u32,
    pub control_stage_cycles: u32,
    // Register file (§5.3).
    pub rf_banks: u32,
    pub rf_read_ports_per_bank: u32,
    pub rf_read_cycles: u32,
    /// Port-cycles one warp operand takes: warp width × 32 bits over the port width
    /// (`regfile.port_width_bits`).
    pub rf_operand_port_cycles: u8,
    pub rf_ideal: bool,
    /// Register-file organisation (LTRF: operands come from the register cache).
    pub rf_org: sassim_config::RegFileOrganisation,
    /// LTRF: cycles per main-register-file bank access.
    pub ltrf_main_latency: u32,
    /// Baseline organisation: cycles of a bank read (an RFC miss holds Allocate longer).
    pub rf_bank_latency: u32,
    /// LTRF: crossbar cycles per warp register moved between main file and cache.
    pub ltrf_xbar_cycles_per_reg: u32,
    pub rfc_enabled: bool,
    pub rfc_slots: u32,
    pub var_consumer_extra_cycles: u32,
    pub load_wb_conflict_delay: u32,
    // Constant caches.
    pub l0c_fl: CacheGeom,
    pub l0c_fl_miss_latency: u32,
    pub perfect_const_cache: bool,
    // Units.
    pub units: Vec<UnitConfig>,
    /// FP32 instructions may also use the INT/FP32 pipe (Ampere, Blackwell: M25 footnote 1).
    pub fp32_in_int_pipe: bool,
    /// Warpgroup MMAs: bytes per cycle of the SM-wide shared-memory operand path (0 = free).
    pub gmma_smem_bytes_per_cycle: u32,
    pub mem: MemPipeConfig,
}

impl Default for CoreConfig {
    /// The default preset (RTX A6000).
    fn default() -> Self {
        CoreConfig::from_gpu(&sassim_config::GpuConfig::default_preset())
    }
}

/// Hit latencies of the SM-shared memory structures, from arbiter grant to data at the
/// register-file write port (before the transfer).
pub fn hit_latencies(g: &sassim_config::GpuConfig) -> crate::mem::HitLatencies {
    let m = &g.mem_pipeline;
    crate::mem::HitLatencies {
        l1_hit: m.l1_hit_path,
        shared: m.shared_path,
        constant: m.const_vl_hit_path,
        shared_atomic: m.shared_path + g.units.misc.latency,
        global_atomic: m.l1_hit_path + g.l2.latency,
    }
}

impl CoreConfig {
    /// Core parameters of a GPU preset.
    pub fn from_gpu(g: &sassim_config::GpuConfig) -> Self {
        let u = &g.units;
        let unit = |name: &str, c: &sassim_config::UnitConfig| UnitConfig {
            name: name.to_string(),
            lanes: c.lanes,
            shared_by_sm: c.shared_by_sm,
            initiation_interval: c.initiation_interval,
        };
        let f = &g.frontend;
        let i = &g.issue;
        let r = &g.regfile;
        CoreConfig {
            subcores: g.gpu.subcores_per_sm,
            warp_size: g.gpu.warp_size,
            max_warps: g.gpu.max_warps_per_sm,
            ib_entries: f.ib_entries,
            fetch_to_issue_stages: f.fetch_decode_stages,
            l0i: CacheGeom {
                size_bytes: f.l0i_size_bytes,
                line_bytes: f.l0i_line_bytes,
                assoc: f.l0i_assoc,
            },
            stream_buffer_entries: f.stream_buffer_entries,
            perfect_icache: f.perfect_icache,
            l1i: CacheGeom {
                size_bytes: f.l1i_size_bytes,
                line_bytes: f.l1i_line_bytes,
                assoc: f.l1i_assoc,
            },
            l1i_latency: f.l1i_latency + f.l1i_reply_latency,
            l1i_reply_latency: f.l1i_reply_latency,
            l1i_miss_latency: f.l1i_latency + f.l1i_reply_latency + g.l2.latency,
            l1i_requests_per_cycle: f.l1i_requests_per_cycle,
            scheduler: i.scheduler,
            two_level_active_warps: i.two_level_active_warps,
            dependence: i.dependence,
            scoreboard_max_consumers: i.scoreboard_max_consumers,
            stall_expiry: i.stall_expiry,
            stall_special_threshold: i.stall_special_threshold,
            stall_gt11_without_yield_cycles: i.stall_gt11_without_yield_cycles,
            errbar_stall_cycles: i.errbar_stall_cycles,
            const_miss_switch_cycles: i.const_miss_switch_cycles,
            depbar_effect_delay: i.depbar_effect_cycles,
            warpgroup_depbar_effect_delay: i.warpgroup_depbar_effect_cycles,
            clock_read_min_interval: i.clock_read_min_interval,
            control_stage_cycles: i.control_stage_delay,
            rf_banks: r.banks,
            rf_read_ports_per_bank: r.read_ports_per_bank,
            rf_read_cycles: r.read_cycles,
            rf_operand_port_cycles: (g.gpu.warp_size * 32)
                .div_ceil(r.port_width_bits.max(32))
                .min(255) as u8,
            // LTRF reads every operand from its register cache: conflict-free (LTRF §5: a warp's
            // registers are interleaved across the cache banks).
            rf_ideal: r.ideal || r.organisation != sassim_config::RegFileOrganisation::Baseline,
            rf_org: r.organisation,
            ltrf_main_latency: r.ltrf.main_latency,
            rf_bank_latency: r.bank_latency,
            ltrf_xbar_cycles_per_reg: (g.gpu.warp_size * 32).div_ceil(r.ltrf.crossbar_bits_per_cycle.max(1)),
            rfc_enabled: r.rfc_enabled,
            rfc_slots: r.rfc_slots,
            var_consumer_extra_cycles: g.result_queue.var_latency_consumer_extra,
            load_wb_conflict_delay: g.result_queue.load_vs_fixed_wb_delay,
            l0c_fl: CacheGeom {
                size_bytes: g.const_cache.l0_fl.size_bytes,
                line_bytes: g.const_cache.l0_fl.line_bytes,
                assoc: g.const_cache.l0_fl.assoc,
            },
            l0c_fl_miss_latency: g.const_cache.fl_miss_penalty,
            perfect_const_cache: g.const_cache.perfect,
            units: vec![
                unit("fp32", &u.fp32),
                unit("int", &u.int),
                unit("fp16", &u.fp16),
                unit("sfu", &u.sfu),
                unit("fp64", &u.fp64),
                UnitConfig {
                    name: "tensor".into(),
                    lanes: u.tensor.lanes,
                    shared_by_sm: u.tensor.shared_by_sm,
                    initiation_interval: u.tensor.initiation_interval,
                },
                unit("uniform", &u.uniform),
                unit("branch", &u.branch),
                unit("misc", &u.misc),
                UnitConfig {
                    name: "mem".into(),
                    lanes: g.gpu.warp_size,
                    shared_by_sm: false,
                    initiation_interval: 1,
                },
            ],
            fp32_in_int_pipe: u.fp32_in_int_pipe,
            gmma_smem_bytes_per_cycle: u.tensor.smem_operand_bytes_per_cycle.unwrap_or(0),
            mem: g.mem_pipeline.clone(),
        }
    }
}

/// The opcode-table class of an instruction, for [`crate::inst::decode_kernel`].
/// Returns the class and whether the opcode was known to the table.
pub fn classify(
    table: &sassim_config::OpcodeTable,
    ins: &sassim_isa::Instruction,
) -> (crate::inst::InstClass, bool) {
    use sassim_config::{LatencyKind, UnitKind};
    let mods: Vec<&str> = ins.opcode.mods.iter().map(String::as_str).collect();
    let l = table.lookup(&ins.opcode.base, &mods);
    let unit = match l.info.unit {
        UnitKind::Fp32 => "fp32",
        UnitKind::Int => "int",
        UnitKind::Fp16 => "fp16",
        UnitKind::Sfu => "sfu",
        UnitKind::Fp64 => "fp64",
        UnitKind::Tensor => "tensor",
        UnitKind::Uniform => "uniform",
        UnitKind::Branch => "branch",
        UnitKind::Misc => "misc",
        UnitKind::Mem => "mem",
    };
    (
        crate::inst::InstClass {
            unit: unit.to_string(),
            fixed: l.info.kind == LatencyKind::Fixed,
            latency: l.info.latency,
            // The tensor unit is busy for the instruction's initiation interval (by opcode,
            // shape and type, `units.tensor.latency_table`); other units for their issue cycles.
            latch_cycles: Some(if l.info.unit == UnitKind::Tensor {
                l.info.initiation_interval
            } else {
                l.info.issue_cycles
            }),
            initiation: Some(l.info.initiation_interval),
            read_delay: l.info.read_delay,
        },
        l.known,
    )
}
