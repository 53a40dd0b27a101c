//! The typed configuration. Every section mirrors one TOML table of a preset
//! (see `presets/*.toml` and `docs/presets.md`). All fields are required: a
//! preset (after `inherits` merging) spells out every number the simulator uses.

use serde::{Deserialize, Serialize};

/// `[gpu]`: identity, clocks and SM resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSection {
    /// Canonical preset name, e.g. `rtx-a6000`.
    pub name: String,
    /// Other names accepted by [`crate::GpuConfig::preset`] (case-insensitive).
    pub aliases: Vec<String>,
    /// One-line description (board, chip, variant).
    pub description: String,
    /// Architecture, `sm_75`, `sm_86`, `sm_90`, `sm_120`...
    pub arch: String,
    /// Name of the opcode table under `presets/opcodes/` (normally equal to `arch`).
    pub opcode_table: String,
    /// Product variant notes (e.g. "SXM5" vs "PCIe").
    pub variant: String,
    /// Device memory in MiB (`cudaDeviceProp.totalGlobalMem`; the limit of `cudaMalloc`).
    pub memory_mb: u64,
    /// SM (core) clock in MHz.
    pub core_clock_mhz: f64,
    /// Interconnect clock in MHz.
    pub icnt_clock_mhz: f64,
    /// L2 clock in MHz.
    pub l2_clock_mhz: f64,
    /// Number of SMs.
    pub num_sms: u32,
    /// SMs per TPC.
    pub sms_per_tpc: u32,
    /// Number of GPCs (TPCs are spread over GPCs round-robin).
    pub num_gpcs: u32,
    /// Maximum resident warps per SM.
    pub max_warps_per_sm: u32,
    /// Maximum resident CTAs per SM.
    pub max_ctas_per_sm: u32,
    /// Maximum resident threads per SM (= max_warps_per_sm * warp_size).
    pub max_threads_per_sm: u32,
    /// 32-bit registers per SM.
    pub regs_per_sm: u32,
    /// Maximum registers per thread.
    pub max_regs_per_thread: u32,
    /// Register allocation granularity per warp (registers per thread).
    pub reg_alloc_granularity: u32,
    /// Maximum shared memory per SM in KB (largest carve-out).
    pub shared_mem_per_sm_max_kb: u32,
    /// Maximum shared memory per CTA in KB (opt-in limit).
    pub shared_mem_per_cta_max_kb: u32,
    /// Unified L1D + shared memory storage per SM in KB.
    pub l1_shared_total_kb: u32,
    /// Sub-cores (processing blocks) per SM; warp w goes to sub-core w % subcores_per_sm.
    pub subcores_per_sm: u32,
    /// Threads per warp.
    pub warp_size: u32,
}

/// `[launch]`: kernel launch and thread-block (CTA) dispatch (docs/model.md, "Kernel launch
/// and CTA dispatch"). A kernel's duration, as a profiler reports it, runs from its start to
/// its end timestamp:
///
/// * `kernel_launch_latency` cycles after the start, the GPU-wide CTA dispatcher begins;
/// * the dispatcher is one server: each CTA it sends to an SM keeps it busy
///   `cta_dispatch_cycles`, each CTA completion it processes `cta_completion_cycles`
///   (fractions allowed); it sends a CTA only to an SM with room for it (resident CTAs plus
///   `sm_cta_queue` waiting ones), and an SM's room comes back when the dispatcher has
///   processed the completion;
/// * on the SM, a CTA starts `cta_launch_latency` cycles after it arrives, once the SM has the
///   resources; its warps are launched one after the other, `warp_launch_cycles` apart, by a
///   per-SM launcher;
/// * a CTA's completion reaches the dispatcher `cta_completion_latency` cycles after its last
///   warp exited;
/// * the end timestamp is `kernel_end_latency` cycles after the last completion was processed,
///   and never earlier than `kernel_min_cycles` after the start.
///
/// Back-to-back launches in one stream: a kernel starts when the previous one has ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchConfig {
    /// Cycles from the kernel's start to the dispatcher's first CTA.
    pub kernel_launch_latency: u32,
    /// The kernel's end timestamp comes at least this many cycles after its start.
    pub kernel_min_cycles: u32,
    /// Cycles from the last CTA completion processed to the kernel's end timestamp.
    pub kernel_end_latency: u32,
    /// Dispatcher cycles per CTA sent to an SM (GPU-wide; 0.5 = two CTAs per cycle).
    pub cta_dispatch_cycles: f64,
    /// Dispatcher cycles per CTA completion processed.
    pub cta_completion_cycles: f64,
    /// CTAs the dispatcher may send to an SM beyond those it can hold (they wait there).
    pub sm_cta_queue: u32,
    /// Per-SM cost of starting a CTA: cycles from its arrival at the SM to its first warp's launch.
    pub cta_launch_latency: u32,
    /// Cycles between two warp launches of the SM's warp launcher.
    pub warp_launch_cycles: f64,
    /// Cycles from a CTA's last warp exit until the dispatcher sees the completion.
    pub cta_completion_latency: u32,
}

/// `[frontend]`: fetch, decode, instruction buffer, instruction caches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrontendConfig {
    /// Instruction-buffer entries per warp.
    pub ib_entries: u32,
    /// Pipeline stages from fetch to issue (Fetch, Decode).
    pub fetch_decode_stages: u32,
    /// Instructions fetched and decoded per cycle per sub-core.
    pub fetch_width: u32,
    /// Bytes per SASS instruction.
    pub instruction_bytes: u32,
    /// Private L0 I-cache per sub-core: size in bytes.
    pub l0i_size_bytes: u32,
    pub l0i_line_bytes: u32,
    pub l0i_assoc: u32,
    /// L0 I-cache MSHR entries.
    pub l0i_mshr_entries: u32,
    /// Stream-buffer prefetcher entries (lines); 0 disables prefetching.
    pub stream_buffer_entries: u32,
    /// Number of stream buffers per L0 I-cache.
    pub stream_buffers: u32,
    /// Prefetch requests the stream buffer may send per cycle.
    pub prefetches_per_cycle: u32,
    /// Perfect instruction cache (every fetch hits).
    pub perfect_icache: bool,
    /// Shared L1 instruction/constant cache per SM.
    pub l1i_size_bytes: u32,
    pub l1i_line_bytes: u32,
    pub l1i_assoc: u32,
    /// L0 -> L1 request latency (cycles).
    pub l1i_latency: u32,
    /// L1 -> L0 reply latency (cycles).
    pub l1i_reply_latency: u32,
    /// Requests accepted by the L1I arbiter per cycle (from all sub-cores).
    pub l1i_requests_per_cycle: u32,
    /// Invalidate L0/L1 instruction caches when a kernel ends.
    pub invalidate_icache_at_kernel_end: bool,
    /// Virtual address of the first kernel's code.
    pub kernel_code_base: u64,
    /// Distance between the code of consecutive kernels (each kernel gets its own range).
    pub kernel_code_spacing: u64,
}

/// Warp scheduling policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerPolicy {
    /// Compiler-Guided Greedy Then Youngest (MICRO'25 §5.1.3).
    Cggty,
    /// Greedy Then Oldest (Accel-Sim).
    Gto,
    /// Loose round robin.
    Lrr,
    /// Two-level scheduler with a small active set.
    TwoLevel,
}

/// Organisation of the register file (`regfile.organisation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RegFileOrganisation {
    /// Today's SM: two banks per sub-core, the reuse-based register-file cache (MICRO'25 §5.3).
    #[default]
    Baseline,
    /// LTRF (Sadrosadati et al.): a per-active-warp register cache filled by a prefetch of the
    /// interval's whole working set at each register-interval head, from a main register
    /// file of `[regfile.ltrf]` latency and banks; operands are read from the cache.
    Ltrf,
    /// LTRF+: as LTRF, but a prefetch fetches only the registers live on entry and a
    /// deactivated warp writes back only live ones.
    LtrfPlus,
}

/// `[regfile.ltrf]`: the latency-tolerant register file (used when `organisation` is
/// `ltrf` or `ltrf_plus`; docs/ltrf.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LtrfConfig {
    /// N: registers of one interval's working set (a warp's register-cache partition).
    pub registers_per_interval: u32,
    /// Banks of the main register file (bank of register r = r mod banks).
    pub main_banks: u32,
    /// Cycles of one main-register-file bank access (registers in one bank are read one
    /// after the other).
    pub main_latency: u32,
    /// Bits per cycle the crossbar from the main register file to the cache carries.
    pub crossbar_bits_per_cycle: u32,
    /// Run kernels renumbered by the paper's register renumbering (where the pass can),
    /// functionally and timed: fewer prefetch bank conflicts.
    pub renumber: bool,
}

/// How data dependences are enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DependenceMode {
    /// Stall counters + dependence counters from the SASS control bits.
    ControlBits,
    /// Hardware scoreboards (RAW/WAW + WAR consumer counting).
    Scoreboard,
    /// Control bits where the kernel has SASS, scoreboards otherwise.
    Hybrid,
}

/// When a warp with stall counter S issued at cycle t may issue again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StallExpiry {
    /// At t + S (MICRO'25 Listing 2).
    Listing2,
    /// At t + S + 1 (MICRO'25 Figure 4(b)).
    Figure4,
}

/// `[compiler]`: the code-generation conventions of the compiler (ptxas) that
/// `--control-bits infer` reproduces for traces recorded without the kernel's SASS
/// (`sassim_analysis::control_bits`; measured on the shipped listings, docs/validation.md).
/// Nothing else reads them: code with the compiler's own control bits runs as compiled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompilerConfig {
    /// Cycles from a fixed-latency predicate producer's issue to an instruction guarded by
    /// the predicate.
    pub guard_predicate_latency: u32,
    /// Cycles between the issue of two memory instructions of a warp.
    pub memory_issue_interval: u32,
    /// Extra cycles a memory instruction waits for a fixed-latency result it reads, beyond
    /// the producer's latency.
    pub memory_read_extra: u32,
    /// Smallest stall count of a control-flow instruction (branch, exit, call, return,
    /// BSYNC, WARPSYNC).
    pub control_min_stall: u32,
    /// A wait of at least this many cycles for a fixed-latency result sets the yield bit
    /// of the instruction before (0: never).
    pub yield_min_stall: u32,
    /// A memory instruction gets a read counter (for WAR) only when one of its source
    /// registers is overwritten within this many instructions of its block.
    pub read_counter_window: u32,
}

/// `[issue]`: scheduler and dependence handling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssueConfig {
    pub scheduler: SchedulerPolicy,
    /// Active-set size of the two-level scheduler.
    pub two_level_active_warps: u32,
    pub dependence: DependenceMode,
    /// WAR scoreboard: max pending consumers per register (0 = unlimited).
    pub scoreboard_max_consumers: u32,
    pub stall_expiry: StallExpiry,
    /// Largest encodable stall counter.
    pub max_stall_counter: u32,
    /// Stall counter values above this with yield = 0 take the special path below.
    pub stall_special_threshold: u32,
    /// Cycles actually stalled when stall > threshold and yield = 0.
    pub stall_gt11_without_yield_cycles: u32,
    /// Cycles stalled by ERRBAR / post-EXIT self-branch (stall 0 + yield).
    pub errbar_stall_cycles: u32,
    /// Cycles an L0 FL constant miss blocks issue before switching warp.
    pub const_miss_switch_cycles: u32,
    /// Cycles after issue at which a CLOCK read takes its value (in the Control stage; M25
    /// rule 15). The pipeline's own depth is fixed in the model: Control is the cycle after
    /// issue, and its dependence-counter increments are visible the cycle after (rule 9).
    pub control_stage_delay: u32,
    /// Honour the yield bit (false: YIELD becomes a NOP).
    pub yield_enabled: bool,
    /// Dependence counters (SB0..) per warp.
    pub dependence_counters: u32,
    /// Largest value of a dependence counter.
    pub dependence_counter_max: u32,
    /// Minimum cycles between two clock-reading instructions (CS2R SR_CLOCK...) of a sub-core.
    pub clock_read_min_interval: u32,
    /// A DEPBAR blocks the warp this many cycles after its issue (it needs stall >= this).
    pub depbar_effect_cycles: u32,
    /// The same for Hopper's `WARPGROUP.DEPBAR.LE gsb0` (the wait for a warpgroup MMA
    /// group): it blocks the warp this many cycles after its issue, whatever its own stall
    /// counter. It acts only on sm_90 code (earlier GPUs have no warpgroup MMA).
    #[serde(default = "default_warpgroup_depbar_effect_cycles")]
    pub warpgroup_depbar_effect_cycles: u32,
    /// Class of opcodes the opcode table does not know: `table` keeps the table's
    /// `[default]`; otherwise a unit name (fp32, int, fp16, sfu, fp64, tensor, uniform,
    /// branch, misc, mem).
    pub unknown_opcode_unit: String,
    /// `table`, `fixed` or `variable`.
    pub unknown_opcode_kind: String,
    /// Latency of unknown opcodes; 0 = the unit's latency.
    pub unknown_opcode_latency: u32,
}

/// `[regfile]`: register file, ports and register-file cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegFileConfig {
    /// Banks per sub-core (bank = register index % banks).
    pub banks: u32,
    pub read_ports_per_bank: u32,
    pub write_ports_per_bank: u32,
    /// Cycles a fixed-latency instruction spends reading operands.
    pub read_cycles: u32,
    /// Width of one port in bits (one warp register = 32 x 32 bits).
    pub port_width_bits: u32,
    pub rfc_enabled: bool,
    /// RFC operand slots per entry (one per source position).
    pub rfc_slots: u32,
    /// RFC entries per bank.
    pub rfc_entries_per_bank: u32,
    /// Ideal RF: all operands read in one cycle, no conflicts.
    pub ideal: bool,
    /// 32-bit registers per sub-core.
    pub regs_per_subcore: u32,
    /// Uniform registers per warp.
    pub uniform_regs_per_warp: u32,
    /// Predicate registers per warp.
    pub predicate_regs_per_warp: u32,
    /// Uniform predicate registers per warp (the scoreboard area model of Table 7).
    pub uniform_predicate_regs_per_warp: u32,
    /// Cycles ahead the port reservation table looks.
    pub port_schedule_horizon: u32,
    /// Cycles of one bank read in the baseline organisation (1: today's SM). An instruction
    /// that reads a bank (an operand the RFC does not hold) stays `bank_latency - 1` cycles
    /// longer in Allocate: a slower main register file behind today's RFC (LTRF §7's "RFC").
    pub bank_latency: u32,
    /// Register-file organisation: `baseline`, `ltrf` or `ltrf_plus`.
    pub organisation: RegFileOrganisation,
    pub ltrf: LtrfConfig,
}

/// One execution unit class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitConfig {
    /// Lanes; the input latch is busy ceil(warp_size / lanes) cycles per instruction.
    pub lanes: u32,
    /// Default dependent-issue latency of the unit's fixed-latency opcodes (cycles).
    pub latency: u32,
    /// Minimum cycles between two instructions entering the unit.
    pub initiation_interval: u32,
    /// One unit shared by all sub-cores of the SM (e.g. FP64 on consumer parts).
    pub shared_by_sm: bool,
    /// Units per sub-core (or per SM when shared_by_sm).
    pub count: u32,
    /// Queue in front of the unit (per sub-core; 0 = none).
    pub queue_entries: u32,
}

/// One row of the tensor-core latency table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorLatency {
    /// Opcode base, `HMMA`, `IMMA`, `DMMA`, `BMMA`...
    pub opcode: String,
    /// Shape modifier, e.g. `16816`, `1688`, `8816`, `*` for any.
    pub shape: String,
    /// Accumulator / destination type modifier (`F32`, `F16`, `S32`, `*`).
    pub acc_type: String,
    /// A row for 2:4-sparse MMAs (`HMMA.SP`, `IMMA.SP`) only; rows without it match dense MMAs
    /// only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sparse: bool,
    pub latency: u32,
    pub initiation_interval: u32,
    /// Multiply-accumulates per cycle of one sub-core's tensor unit. When set, a warpgroup
    /// MMA's (`HGMMA.64x128x16`…) interval is its warp's share of the shape, `(M / 4) · N · K`,
    /// divided by this rate (rounded up), and `initiation_interval` is its minimum: the
    /// interval grows with N as the work does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub macs_per_cycle: Option<u32>,
    pub source: String,
}

/// The tensor unit: a unit plus a latency table by opcode, shape and type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorUnitConfig {
    pub lanes: u32,
    /// Latency used when no table row matches.
    pub latency: u32,
    pub initiation_interval: u32,
    pub shared_by_sm: bool,
    pub count: u32,
    pub queue_entries: u32,
    pub latency_table: Vec<TensorLatency>,
    /// Bytes per cycle of the SM's shared-memory path that feeds warpgroup MMAs their A and B
    /// operands (`HGMMA … gdesc[..]`, Hopper): each warp's MMA takes its quarter of the
    /// operand bytes from this SM-wide port, so small-N MMAs are limited by it. Absent: the
    /// operands cost nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smem_operand_bytes_per_cycle: Option<u32>,
}

/// `[units]`: execution units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitsConfig {
    /// FP32 instructions may also issue to the INT pipe (Ampere/Ada/Blackwell dual FP32).
    pub fp32_in_int_pipe: bool,
    pub fp32: UnitConfig,
    pub int: UnitConfig,
    pub fp16: UnitConfig,
    pub sfu: UnitConfig,
    pub fp64: UnitConfig,
    pub tensor: TensorUnitConfig,
    pub uniform: UnitConfig,
    pub branch: UnitConfig,
    /// Miscellaneous fixed-latency ops (NOP, CS2R, moves to special registers...).
    pub misc: UnitConfig,
}

/// `[result_queue]`: write-back of fixed-latency results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultQueueConfig {
    pub entries: u32,
    /// Results written to the RF per cycle from the queue.
    pub pops_per_cycle: u32,
    /// Extra cycle a variable-latency consumer needs (no bypass).
    pub var_latency_consumer_extra: u32,
    /// Delay of a load write-back that collides with a fixed-latency one.
    pub load_vs_fixed_wb_delay: u32,
}

/// `[mem_pipeline]`: sub-core memory unit, shared SM structures and the
/// latency components that reproduce MICRO'25 Table 2 (see docs/presets.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemPipelineConfig {
    /// Per-sub-core memory queue entries.
    pub queue_entries: u32,
    /// Latch in front of the queue.
    pub dispatch_latch: u32,
    /// Cycles per instruction of per-thread address calculation (regular registers).
    pub addr_calc_interval: u32,
    /// Same with a uniform address register.
    pub addr_calc_interval_uniform: u32,
    /// The shared SM structures accept one request every this many cycles.
    pub shared_accept_interval: u32,
    /// Memory -> RF transfer width for global/local results.
    pub mem_to_rf_bits_per_cycle: u32,
    /// Shared-structure (shared memory, LDC) -> RF transfer width.
    pub shared_to_rf_bits_per_cycle: u32,
    /// Minimum cycles of any write-back transfer.
    pub wb_min_cycles: u32,
    /// Sub-core -> SM link width for store data and register addresses.
    pub store_link_bits_per_cycle: u32,
    /// Issue -> sources released for uniform/shared-addressed loads.
    pub src_release_base: u32,
    /// Extra cycles of per-thread 64-bit address calculation (regular global).
    pub global_addr_calc_regular_extra: u32,
    /// Extra cycle for per-thread addresses in the coalescer (PRT), regular registers.
    pub regular_addr_coalesce_extra: u32,
    /// Address release -> data at the RF write port, L1D hit.
    pub l1_hit_path: u32,
    /// Address release -> data at the RF write port, shared memory.
    pub shared_path: u32,
    /// Distributed shared memory (sm_90+): extra cycles of a shared-memory access to another
    /// CTA of the thread-block cluster, over the GPC's SM-to-SM network. Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsm_extra: Option<u32>,
    /// Tensor Memory Accelerator (sm_90+): cycles from a bulk copy's instruction (`UTMALDG`,
    /// `UTMASTG`, `UBLKCP`) to the TMA's first memory request for it. Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tma_setup: Option<u32>,
    /// LDC with immediate address: extra cycles before its sources are released.
    pub ldc_imm_war_extra: u32,
    /// Address release -> data, L0 VL constant-cache hit.
    pub const_vl_hit_path: u32,
    /// Extra cycles of a register-indexed LDC (its WAR is released at write-back).
    pub ldc_indexed_extra: u32,
    /// LDGSTS: global data -> shared memory fill latency.
    pub ldgsts_smem_fill: u32,
    /// Extra latency of LDSM .x2/.x4.
    pub ldsm_multi_matrix_extra: u32,
    /// Pending request table entries (coalescing).
    pub prt_entries: u32,
    /// Max outstanding non-shared requests per SM.
    pub max_outstanding_requests: u32,
    /// MEMBAR stalls (cycles) by scope.
    pub membar_cta_cycles: u32,
    pub membar_gpu_cycles: u32,
    pub membar_sys_cycles: u32,
}

/// A small set-associative cache geometry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmallCache {
    pub size_bytes: u32,
    pub line_bytes: u32,
    pub assoc: u32,
    /// Hit latency in cycles (0 = checked at issue, no extra latency).
    pub latency: u32,
}

/// `[const_cache]`: constant caches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstCacheConfig {
    /// Per-sub-core L0 fixed-latency constant cache (looked up at issue).
    pub l0_fl: SmallCache,
    /// L0 variable-latency constant cache in the shared memory unit (LDC).
    pub l0_vl: SmallCache,
    /// Latency of an L0 FL miss served by the L1 I/C cache (cycles of issue delay).
    pub fl_miss_penalty: u32,
    /// Latency of an L0 VL miss served by the L1 I/C cache.
    pub vl_miss_penalty: u32,
    /// Perfect constant caches.
    pub perfect: bool,
}

/// Cache write policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WritePolicy {
    /// Write-back: stores dirty the line, dirty sectors are written on eviction.
    WriteBack,
    /// Write-through: every store is forwarded to the next level.
    WriteThrough,
    /// Write-back for local memory, write-through for global (GPGPU-Sim `L`; Volta+ L1D).
    LocalWbGlobalWt,
}

/// Allocation on write misses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteAllocate {
    /// Do not allocate on a store miss (write-through caches).
    NoAllocate,
    /// Allocate and fetch the rest of the line (modelled like `LazyFetchOnRead` since
    /// stores are tracked at sector granularity and assumed to cover whole sectors).
    FetchOnWrite,
    /// Allocate, mark the written sectors valid+dirty, fetch nothing (GPGPU-Sim `L`).
    LazyFetchOnRead,
}

/// Set/partition index hashing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hashing {
    /// Accel-Sim's IPOLY hash (`-gpgpu_memory_partition_indexing 2`, set index `P`).
    Ipoly,
    /// XOR of the index with the next-higher address bits (`indexing 1`, set index `X`).
    Xor,
    /// Plain modulo (`indexing 0`, set index `L`).
    Linear,
}

/// `[l1d]`: L1 data cache and shared memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1dConfig {
    /// L1D size in KB when no shared memory is carved out (= gpu.l1_shared_total_kb).
    pub size_kb: u32,
    pub line_bytes: u32,
    pub sector_bytes: u32,
    /// Associativity at full size (sets = size / line / assoc).
    pub assoc: u32,
    /// Minimum hit latency of the L1D arrays (component; see mem_pipeline.l1_hit_path).
    pub latency: u32,
    pub mshr_entries: u32,
    pub mshr_max_merge: u32,
    pub miss_queue_entries: u32,
    /// Core cycles from an L1 miss's tag lookup to its request being ready in the miss
    /// queue (the memory hierarchy, docs/memory.md).
    #[serde(default = "default_l1_miss_latency")]
    pub miss_latency: u32,
    /// Core cycles from a fill's arrival at the L1 to the data being ready for the SM.
    #[serde(default = "default_l1_fill_latency")]
    pub fill_latency: u32,
    /// Requests the L1's miss queue sends into the interconnect per core cycle.
    #[serde(default = "default_l1_miss_requests_per_cycle")]
    pub miss_requests_per_cycle: u32,
    pub banks: u32,
    pub lookups_per_bank_per_cycle: u32,
    pub write_policy: WritePolicy,
    pub write_allocate: WriteAllocate,
    pub hashing: Hashing,
    pub shmem_banks: u32,
    pub shmem_bank_width_bytes: u32,
    /// Minimum latency of the shared-memory arrays (component).
    pub shmem_latency: u32,
    /// Cycles a shared-memory atomic holds its words (read-modify-write) beyond a load;
    /// a later access to the same words waits for it.
    #[serde(default = "default_shmem_atomic_latency")]
    pub shmem_atomic_latency: u32,
    /// Extra cycles per additional lane on the same shared address.
    #[serde(default = "default_shmem_atomic_conflict")]
    pub shmem_atomic_conflict_cycles: f64,
    /// Allowed shared-memory carve-outs in KB.
    pub shmem_carveout_options_kb: Vec<u32>,
    /// Default per-CTA shared memory limit in KB (without opt-in).
    pub shmem_per_cta_default_kb: u32,
}

/// `[l2]`: L2 cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2Config {
    /// Total L2 size in KB.
    pub size_kb: u32,
    /// Memory partitions (each with a DRAM channel).
    pub partitions: u32,
    /// L2 slices per partition.
    pub sub_partitions_per_partition: u32,
    pub line_bytes: u32,
    pub sector_bytes: u32,
    pub assoc: u32,
    /// L2 hit latency (ROP latency), core cycles.
    pub latency: u32,
    /// ROP/tag pipeline latency of the memory hierarchy (`sassim-memory`), L2 cycles,
    /// when `latency` is an end-to-end measurement; absent = `latency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rop_latency: Option<u32>,
    /// L2 cycles from a tag hit (or a DRAM fill) to the response being ready for the
    /// response crossbar.
    #[serde(default = "default_l2_fill_latency")]
    pub fill_latency: u32,
    pub hashing: Hashing,
    /// Bytes of consecutive addresses that go to one L2 slice (and DRAM channel) before
    /// the next (a power of two, at least a line).
    #[serde(default = "default_l2_interleave_bytes")]
    pub interleave_bytes: u32,
    pub write_policy: WritePolicy,
    pub write_allocate: WriteAllocate,
    pub mshr_entries: u32,
    pub mshr_max_merge: u32,
    pub miss_queue_entries: u32,
    pub data_port_bytes: u32,
    /// Queues: icnt->L2, L2->DRAM, DRAM->L2, L2->icnt.
    pub queue_icnt_to_l2: u32,
    pub queue_l2_to_dram: u32,
    pub queue_dram_to_l2: u32,
    pub queue_l2_to_icnt: u32,
    /// Cycles the L2 atomic unit needs for an uncontended atomic (added to an L2 hit; a
    /// later access to the line waits for it).
    #[serde(default = "default_l2_atomic_latency")]
    pub atomic_latency: u32,
    /// Atomic-unit cycles per additional lane on the same address.
    #[serde(default = "default_l2_atomic_conflict")]
    pub atomic_conflict_cycles: f64,
}

// Default for presets that do not set it, as presets/rtx-a6000.toml: ptxas 13.5 gives
// `WARPGROUP.DEPBAR.LE gsb0` a stall count of 2 before a BAR.SYNC and before the next k tile's
// HGMMA that reads the same accumulators (workloads/programs/wgmma_gemm): with the ordinary
// DEPBAR's 4 cycles (MICRO'25 A4) those would issue before the group completed. The wait must
// hold the very next instruction: 1 (docs/model.md, "Hopper").
fn default_warpgroup_depbar_effect_cycles() -> u32 {
    1
}

// Defaults for presets that do not set the atomic fields, as presets/rtx-a6000.toml:
// T4 microbenchmarking paper Table 4.2 (Turing, no contention: shared 8, global 76
// cycles, of which 4 and 9 are the trailing load's own queueing in the model, the shared
// one through the sub-core's write-back latch; 32 lanes on one address: 69 and 116 →
// (69 − 8) / 31 ≈ 2 and (116 − 76) / 31 ≈ 1.3 per lane).
fn default_shmem_atomic_latency() -> u32 {
    4
}
fn default_shmem_atomic_conflict() -> f64 {
    2.0
}
fn default_l2_atomic_latency() -> u32 {
    67
}
fn default_l2_atomic_conflict() -> f64 {
    1.3
}

// Defaults for presets that do not set them: the memory hierarchy's T4 calibration
// (docs/memory.md, "Latency convention with the SM pipeline"); the peers' configurations
// have no such keys, and every shipped preset sets them.
fn default_l1_miss_latency() -> u32 {
    4
}
fn default_l1_fill_latency() -> u32 {
    4
}
fn default_l1_miss_requests_per_cycle() -> u32 {
    1
}
fn default_l2_fill_latency() -> u32 {
    2
}
// GPGPU-Sim's `dramid@8` address mapping: 2^8 B per slice and channel.
fn default_l2_interleave_bytes() -> u32 {
    256
}
fn default_icnt_header_bytes() -> u32 {
    8
}

/// `[icnt]`: SM <-> L2 interconnect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IcntConfig {
    /// `xbar`.
    pub topology: String,
    /// Traversal latency in icnt cycles.
    pub latency: u32,
    pub flit_bytes: u32,
    /// Flits per cycle per port (bytes/cycle = flit_bytes * flits_per_cycle).
    pub flits_per_cycle: u32,
    /// Bytes of a packet's header (address and command); data bytes are added to it.
    #[serde(default = "default_icnt_header_bytes")]
    pub header_bytes: u32,
    pub subnets: u32,
    pub input_buffer_flits: u32,
    pub output_buffer_flits: u32,
    /// Per-SM ejection buffer entries.
    pub ejection_buffer_entries: u32,
}

/// DRAM technology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DramType {
    Gddr6,
    Gddr6x,
    Gddr7,
    Hbm2e,
    Hbm3,
}

/// DRAM scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DramScheduler {
    Frfcfs,
    Fifo,
}

/// DRAM timing, in DRAM command-clock cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramTiming {
    pub t_ccd: u32,
    pub t_ccdl: u32,
    pub t_rrd: u32,
    pub t_rcd: u32,
    pub t_ras: u32,
    pub t_rp: u32,
    pub t_rc: u32,
    pub t_cl: u32,
    pub t_wl: u32,
    /// Write-to-read turnaround (GPGPU-Sim tCDLR).
    pub t_wtr: u32,
    pub t_wr: u32,
    /// Read-to-write turnaround.
    pub t_rtw: u32,
    /// Read-to-precharge.
    pub t_rtp: u32,
}

/// `[dram]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    #[serde(rename = "type")]
    pub dram_type: DramType,
    /// Memory clock in MHz as listed in MICRO'25 Table 4 ("Mem. Clock").
    pub clock_mhz: f64,
    /// Transfers per pin per `clock_mhz` cycle (data rate = clock * this).
    pub data_rate_multiplier: u32,
    /// Data : command clock ratio.
    pub command_ratio: u32,
    /// Channels per memory partition.
    pub channels_per_partition: u32,
    /// Bus width of one channel in bytes.
    pub bus_width_bytes: u32,
    pub burst_length: u32,
    pub banks: u32,
    pub bank_groups: u32,
    pub row_bytes: u32,
    pub scheduler: DramScheduler,
    pub sched_queue_entries: u32,
    pub return_queue_entries: u32,
    /// Extra fixed latency added to each access (core cycles).
    pub latency: u32,
    /// GPGPU-Sim style address-mapping string.
    pub address_mapping: String,
    pub timing: DramTiming,
}

/// The whole configuration of one GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    pub gpu: GpuSection,
    pub launch: LaunchConfig,
    pub frontend: FrontendConfig,
    pub issue: IssueConfig,
    pub compiler: CompilerConfig,
    pub regfile: RegFileConfig,
    pub units: UnitsConfig,
    pub result_queue: ResultQueueConfig,
    pub mem_pipeline: MemPipelineConfig,
    pub const_cache: ConstCacheConfig,
    pub l1d: L1dConfig,
    pub l2: L2Config,
    pub icnt: IcntConfig,
    pub dram: DramConfig,
    /// Opcode table resolved against `units`, built on first use.
    #[serde(skip)]
    pub(crate) opcodes: OpcodeCache,
}

/// Lazily built opcode table (not part of the serialized config; equality ignores it).
#[derive(Clone, Default)]
pub struct OpcodeCache(pub(crate) std::sync::OnceLock<std::sync::Arc<crate::opcodes::OpcodeTable>>);

impl std::fmt::Debug for OpcodeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "OpcodeCache(built)"
        } else {
            "OpcodeCache(empty)"
        })
    }
}

impl PartialEq for OpcodeCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl GpuConfig {
    /// Peak DRAM bandwidth in GB/s: partitions * channels * bus bytes * clock * data rate.
    pub fn dram_bandwidth_gbps(&self) -> f64 {
        let d = &self.dram;
        f64::from(self.l2.partitions)
            * f64::from(d.channels_per_partition)
            * f64::from(d.bus_width_bytes)
            * d.clock_mhz
            * f64::from(d.data_rate_multiplier)
            / 1000.0
    }

    /// Number of L2 slices (sub-partitions).
    pub fn l2_slices(&self) -> u32 {
        self.l2.partitions * self.l2.sub_partitions_per_partition
    }

    /// L2 sets per slice.
    pub fn l2_sets_per_slice(&self) -> u32 {
        let slice_bytes = self.l2.size_kb * 1024 / self.l2_slices().max(1);
        slice_bytes / (self.l2.line_bytes * self.l2.assoc).max(1)
    }

    /// Warps per sub-core.
    pub fn warps_per_subcore(&self) -> u32 {
        self.gpu.max_warps_per_sm / self.gpu.subcores_per_sm.max(1)
    }

    /// Input-latch occupancy (cycles) of a unit with `lanes` lanes.
    pub fn latch_cycles(&self, lanes: u32) -> u32 {
        self.gpu.warp_size.div_ceil(lanes.max(1))
    }
}
