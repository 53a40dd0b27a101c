//! The allowed range of every number of a configuration, in one table.
//!
//! [`LIMITS`] names each numeric key of the schema (`*` matches any one path segment:
//! a unit name, a table row, an array index) with its minimum, maximum and whether it
//! must be a power of two. [`check_value`] applies the table to the merged TOML value of
//! a preset (after `inherits` and `--set` overrides) before it is deserialized, so a
//! negative, oversized, NaN or infinite value is reported with its key and the allowed
//! range instead of a type error pointing at a generated line; [`GpuConfig::validate`]
//! applies it again to typed configurations. The bounds are chosen so that no product the
//! model forms from them (sizes × counts × SMs) overflows and no preallocated structure
//! can exhaust the machine: the memory estimate (`sassim-gpu`, `footprint`) covers what
//! remains. `docs/reliability.md` lists the table; a test checks that every numeric field
//! of the schema has a row.
//!
//! [`GpuConfig::validate`]: crate::GpuConfig::validate

use toml::Value;

use crate::error::{ConfigError, Result};

/// A bound of a range: a number or the value of another key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    Int(i64),
    Float(f64),
    /// The value of another (integer) key of the same configuration.
    Key(&'static str),
}

/// The allowed values of one numeric key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    /// Dotted key; `*` matches one segment.
    pub key: &'static str,
    pub min: Bound,
    pub max: Bound,
    /// The model indexes or masks with it: a power of two.
    pub pow2: bool,
}

const fn r(key: &'static str, min: i64, max: i64) -> Limit {
    Limit {
        key,
        min: Bound::Int(min),
        max: Bound::Int(max),
        pow2: false,
    }
}

const fn p2(key: &'static str, min: i64, max: i64) -> Limit {
    Limit {
        key,
        min: Bound::Int(min),
        max: Bound::Int(max),
        pow2: true,
    }
}

const fn f(key: &'static str, min: f64, max: f64) -> Limit {
    Limit {
        key,
        min: Bound::Float(min),
        max: Bound::Float(max),
        pow2: false,
    }
}

/// `min..=key`.
const fn upto(key: &'static str, min: i64, max_key: &'static str) -> Limit {
    Limit {
        key,
        min: Bound::Int(min),
        max: Bound::Key(max_key),
        pow2: false,
    }
}

/// `key..=max`.
const fn from(key: &'static str, min_key: &'static str, max: i64) -> Limit {
    Limit {
        key,
        min: Bound::Key(min_key),
        max: Bound::Int(max),
        pow2: false,
    }
}

const KIB: i64 = 1024;
const MIB: i64 = 1024 * 1024;

/// Every numeric key of the schema and its allowed values.
pub const LIMITS: &[Limit] = &[
    // [gpu]
    f("gpu.core_clock_mhz", 1.0, 10_000.0),
    f("gpu.icnt_clock_mhz", 1.0, 10_000.0),
    f("gpu.l2_clock_mhz", 1.0, 10_000.0),
    r("gpu.num_sms", 1, 1024),
    r("gpu.memory_mb", 1, 1 << 24),
    r("gpu.sms_per_tpc", 1, 4),
    r("gpu.num_gpcs", 1, 64),
    r("gpu.warp_size", 32, 32),
    r("gpu.subcores_per_sm", 1, 8),
    r("gpu.max_warps_per_sm", 1, 64),
    r("gpu.max_ctas_per_sm", 1, 64),
    r("gpu.max_threads_per_sm", 32, 2048),
    r("gpu.regs_per_sm", 1024, 1 << 20),
    r("gpu.max_regs_per_thread", 16, 255),
    r("gpu.reg_alloc_granularity", 1, 256),
    r("gpu.l1_shared_total_kb", 16, 1024),
    upto("gpu.shared_mem_per_sm_max_kb", 0, "l1d.size_kb"),
    upto("gpu.shared_mem_per_cta_max_kb", 0, "gpu.shared_mem_per_sm_max_kb"),
    // [launch]
    r("launch.kernel_launch_latency", 0, 10_000_000),
    r("launch.kernel_min_cycles", 0, 10_000_000),
    r("launch.kernel_end_latency", 0, 10_000_000),
    f("launch.cta_dispatch_cycles", 0.0, 1e6),
    f("launch.cta_completion_cycles", 0.0, 1e6),
    r("launch.sm_cta_queue", 0, 1024),
    r("launch.cta_launch_latency", 0, 10_000_000),
    f("launch.warp_launch_cycles", 0.0, 1e6),
    r("launch.cta_completion_latency", 0, 10_000_000),
    // [frontend]
    r("frontend.ib_entries", 1, 16),
    r("frontend.fetch_decode_stages", 1, 8),
    r("frontend.fetch_width", 1, 4),
    r("frontend.instruction_bytes", 8, 16),
    r("frontend.l0i_size_bytes", 16, 16 * MIB),
    p2("frontend.l0i_line_bytes", 16, 4096),
    r("frontend.l0i_assoc", 1, 1024),
    r("frontend.l0i_mshr_entries", 1, 256),
    r("frontend.stream_buffer_entries", 0, 64),
    r("frontend.stream_buffers", 1, 8),
    r("frontend.prefetches_per_cycle", 1, 8),
    r("frontend.l1i_size_bytes", 16, 16 * MIB),
    p2("frontend.l1i_line_bytes", 16, 4096),
    r("frontend.l1i_assoc", 1, 1024),
    r("frontend.l1i_latency", 0, 1000),
    r("frontend.l1i_reply_latency", 0, 1000),
    r("frontend.l1i_requests_per_cycle", 1, 8),
    r("frontend.kernel_code_base", 0, 1 << 48),
    r("frontend.kernel_code_spacing", 16, 1 << 32),
    // [issue]
    // [compiler]
    r("compiler.guard_predicate_latency", 0, 1000),
    r("compiler.memory_issue_interval", 0, 1000),
    r("compiler.memory_read_extra", 0, 1000),
    r("compiler.control_min_stall", 1, 15),
    r("compiler.yield_min_stall", 0, 15),
    r("compiler.read_counter_window", 0, 1_000_000),
    r("issue.two_level_active_warps", 1, 64),
    r("issue.scoreboard_max_consumers", 0, 1023),
    r("issue.max_stall_counter", 1, 15),
    upto("issue.stall_special_threshold", 0, "issue.max_stall_counter"),
    r("issue.stall_gt11_without_yield_cycles", 0, 15),
    r("issue.errbar_stall_cycles", 0, 10_000),
    r("issue.const_miss_switch_cycles", 0, 1000),
    r("issue.control_stage_delay", 0, 4),
    r("issue.dependence_counters", 1, 16),
    r("issue.dependence_counter_max", 1, 1023),
    r("issue.clock_read_min_interval", 1, 16),
    r("issue.depbar_effect_cycles", 0, 15),
    r("issue.warpgroup_depbar_effect_cycles", 0, 15),
    r("issue.unknown_opcode_latency", 0, 1000),
    // [regfile]
    r("regfile.banks", 1, 8),
    r("regfile.read_ports_per_bank", 1, 4),
    r("regfile.write_ports_per_bank", 1, 4),
    r("regfile.read_cycles", 1, 8),
    r("regfile.port_width_bits", 32, 4096),
    r("regfile.rfc_slots", 1, 4),
    r("regfile.rfc_entries_per_bank", 1, 8),
    r("regfile.regs_per_subcore", 256, 1 << 18),
    r("regfile.uniform_regs_per_warp", 0, 256),
    r("regfile.predicate_regs_per_warp", 1, 16),
    r("regfile.uniform_predicate_regs_per_warp", 1, 16),
    from("regfile.port_schedule_horizon", "regfile.read_cycles", 256),
    r("regfile.bank_latency", 1, 1000),
    r("regfile.ltrf.registers_per_interval", 1, 255),
    r("regfile.ltrf.main_banks", 1, 256),
    r("regfile.ltrf.main_latency", 1, 1000),
    r("regfile.ltrf.crossbar_bits_per_cycle", 32, 1 << 16),
    // [units]: every unit, the tensor unit's latency table
    r("units.*.lanes", 1, 64),
    r("units.*.latency", 1, 1000),
    r("units.*.initiation_interval", 1, 256),
    r("units.*.count", 1, 8),
    r("units.*.queue_entries", 0, 64),
    r("units.tensor.latency_table.*.latency", 1, 1000),
    r("units.tensor.latency_table.*.initiation_interval", 1, 256),
    r("units.tensor.latency_table.*.macs_per_cycle", 1, 1 << 16),
    r("units.tensor.smem_operand_bytes_per_cycle", 1, 4096),
    // [result_queue]
    r("result_queue.entries", 1, 64),
    r("result_queue.pops_per_cycle", 1, 8),
    r("result_queue.var_latency_consumer_extra", 0, 8),
    r("result_queue.load_vs_fixed_wb_delay", 0, 8),
    // [mem_pipeline]
    r("mem_pipeline.queue_entries", 1, 64),
    r("mem_pipeline.dispatch_latch", 0, 4),
    r("mem_pipeline.addr_calc_interval", 1, 32),
    r("mem_pipeline.addr_calc_interval_uniform", 1, 32),
    r("mem_pipeline.shared_accept_interval", 1, 32),
    r("mem_pipeline.mem_to_rf_bits_per_cycle", 32, 4096),
    r("mem_pipeline.shared_to_rf_bits_per_cycle", 32, 4096),
    r("mem_pipeline.store_link_bits_per_cycle", 32, 4096),
    r("mem_pipeline.wb_min_cycles", 1, 16),
    r("mem_pipeline.src_release_base", 1, 100),
    r("mem_pipeline.global_addr_calc_regular_extra", 0, 100),
    r("mem_pipeline.regular_addr_coalesce_extra", 0, 100),
    r("mem_pipeline.l1_hit_path", 1, 1000),
    r("mem_pipeline.shared_path", 1, 1000),
    r("mem_pipeline.dsm_extra", 0, 10_000),
    r("mem_pipeline.tma_setup", 0, 10_000),
    r("mem_pipeline.ldc_imm_war_extra", 0, 100),
    r("mem_pipeline.const_vl_hit_path", 1, 1000),
    r("mem_pipeline.ldc_indexed_extra", 0, 100),
    r("mem_pipeline.ldgsts_smem_fill", 0, 1000),
    r("mem_pipeline.ldsm_multi_matrix_extra", 0, 100),
    r("mem_pipeline.prt_entries", 1, 4096),
    r("mem_pipeline.max_outstanding_requests", 1, 1 << 20),
    r("mem_pipeline.membar_cta_cycles", 0, 1_000_000),
    r("mem_pipeline.membar_gpu_cycles", 0, 1_000_000),
    r("mem_pipeline.membar_sys_cycles", 0, 1_000_000),
    // [const_cache]
    r("const_cache.*.size_bytes", 16, 16 * MIB),
    p2("const_cache.*.line_bytes", 16, 4096),
    r("const_cache.*.assoc", 1, 1024),
    r("const_cache.*.latency", 0, 1000),
    r("const_cache.fl_miss_penalty", 0, 10_000),
    r("const_cache.vl_miss_penalty", 0, 10_000),
    // [l1d]
    r("l1d.size_kb", 16, 1024),
    p2("l1d.line_bytes", 32, 256),
    p2("l1d.sector_bytes", 8, 256),
    r("l1d.assoc", 1, 1024),
    r("l1d.latency", 1, 1000),
    r("l1d.mshr_entries", 1, 4096),
    r("l1d.mshr_max_merge", 1, 1024),
    r("l1d.miss_queue_entries", 1, 4096),
    r("l1d.miss_latency", 0, 1000),
    r("l1d.fill_latency", 0, 1000),
    r("l1d.miss_requests_per_cycle", 1, 64),
    r("l1d.banks", 1, 64),
    r("l1d.lookups_per_bank_per_cycle", 1, 64),
    r("l1d.shmem_banks", 1, 64),
    r("l1d.shmem_bank_width_bytes", 1, 16),
    r("l1d.shmem_latency", 1, 1000),
    r("l1d.shmem_atomic_latency", 0, 1000),
    f("l1d.shmem_atomic_conflict_cycles", 0.0, 100.0),
    upto(
        "l1d.shmem_carveout_options_kb.*",
        0,
        "gpu.shared_mem_per_sm_max_kb",
    ),
    upto("l1d.shmem_per_cta_default_kb", 0, "gpu.shared_mem_per_cta_max_kb"),
    // [l2]
    r("l2.size_kb", 1, 1024 * KIB),
    r("l2.partitions", 1, 1024),
    r("l2.sub_partitions_per_partition", 1, 16),
    p2("l2.line_bytes", 32, 1024),
    p2("l2.sector_bytes", 8, 256),
    r("l2.assoc", 1, 1024),
    r("l2.latency", 1, 10_000),
    r("l2.rop_latency", 1, 10_000),
    r("l2.fill_latency", 0, 10_000),
    p2("l2.interleave_bytes", 32, 1 << 20),
    r("l2.mshr_entries", 1, 4096),
    r("l2.mshr_max_merge", 1, 1024),
    r("l2.miss_queue_entries", 1, 4096),
    r("l2.data_port_bytes", 1, 1024),
    r("l2.queue_icnt_to_l2", 1, 4096),
    r("l2.queue_l2_to_dram", 1, 4096),
    r("l2.queue_dram_to_l2", 1, 4096),
    r("l2.queue_l2_to_icnt", 1, 4096),
    r("l2.atomic_latency", 0, 10_000),
    f("l2.atomic_conflict_cycles", 0.0, 1000.0),
    // [icnt]
    r("icnt.latency", 0, 1000),
    r("icnt.flit_bytes", 1, 1024),
    r("icnt.flits_per_cycle", 1, 16),
    r("icnt.header_bytes", 1, 1024),
    r("icnt.subnets", 1, 4),
    r("icnt.input_buffer_flits", 1, 65_536),
    r("icnt.output_buffer_flits", 1, 65_536),
    r("icnt.ejection_buffer_entries", 1, 4096),
    // [dram]
    f("dram.clock_mhz", 1.0, 50_000.0),
    r("dram.data_rate_multiplier", 1, 8),
    r("dram.command_ratio", 1, 16),
    r("dram.channels_per_partition", 1, 16),
    r("dram.bus_width_bytes", 1, 64),
    r("dram.burst_length", 1, 64),
    p2("dram.banks", 1, 64),
    Limit {
        key: "dram.bank_groups",
        min: Bound::Int(1),
        max: Bound::Key("dram.banks"),
        pow2: true,
    },
    p2("dram.row_bytes", 64, 64 * KIB),
    r("dram.sched_queue_entries", 1, 4096),
    r("dram.return_queue_entries", 1, 4096),
    r("dram.latency", 0, 100_000),
    r("dram.timing.*", 1, 1000),
];

/// [`LIMITS`] indexed: the first row of each key without `*`, and the rows with `*`.
struct Index {
    exact: std::collections::HashMap<&'static str, usize>,
    wild: Vec<usize>,
}

fn index() -> &'static Index {
    static INDEX: std::sync::OnceLock<Index> = std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let mut exact = std::collections::HashMap::new();
        let mut wild = Vec::new();
        for (i, l) in LIMITS.iter().enumerate() {
            if l.key.split('.').any(|s| s == "*") {
                wild.push(i);
            } else {
                exact.entry(l.key).or_insert(i);
            }
        }
        Index { exact, wild }
    })
}

/// The row of `key` (a dotted path with concrete segments), if any: the first row of
/// [`LIMITS`] that matches it.
pub fn limit_of(key: &str) -> Option<&'static Limit> {
    let ix = index();
    let exact = ix.exact.get(key).copied();
    let wild = ix
        .wild
        .iter()
        .copied()
        .take_while(|&i| exact.is_none_or(|e| i < e))
        .find(|&i| matches(LIMITS[i].key, key));
    wild.or(exact).map(|i| &LIMITS[i])
}

fn matches(pattern: &str, key: &str) -> bool {
    let mut p = pattern.split('.');
    let mut k = key.split('.');
    loop {
        match (p.next(), k.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a == "*" || a == b => {}
            _ => return false,
        }
    }
}

fn lookup<'a>(root: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(root, |v, seg| match v {
        Value::Table(t) => t.get(seg),
        Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    })
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

impl Limit {
    fn bound(&self, b: Bound, root: &Value) -> Option<f64> {
        match b {
            Bound::Int(i) => Some(i as f64),
            Bound::Float(x) => Some(x),
            Bound::Key(k) => match lookup(root, k)? {
                Value::Integer(i) => Some(*i as f64),
                Value::Float(x) => Some(*x),
                _ => None,
            },
        }
    }

    /// Check one value of this key; `root` resolves bounds that name other keys.
    fn check(&self, key: &str, v: &Value, root: &Value) -> Result<()> {
        let x = match v {
            Value::Integer(i) => *i as f64,
            Value::Float(x) => *x,
            // Types are the deserializer's business (it names the expected type).
            _ => return Ok(()),
        };
        let (Some(min), Some(max)) = (self.bound(self.min, root), self.bound(self.max, root)) else {
            return Ok(()); // the other key is missing or mistyped: reported on its own
        };
        let show = |b: Bound, n: f64| match b {
            Bound::Key(k) => format!("{} (`{k}`)", fmt_num(n)),
            _ => fmt_num(n),
        };
        // Written so that NaN fails: every comparison with NaN is false.
        let ok = x.is_finite() && x >= min && x <= max;
        if !ok {
            return Err(ConfigError::OutOfRange {
                key: key.to_string(),
                value: match v {
                    Value::Integer(i) => i.to_string(),
                    _ => format!("{x}"),
                },
                min: show(self.min, min),
                max: show(self.max, max),
            });
        }
        if self.pow2 {
            let i = x as u64;
            if !i.is_power_of_two() {
                return Err(ConfigError::Inconsistent {
                    key: key.to_string(),
                    reason: format!(
                        "{i} must be a power of two in {}..={}",
                        fmt_num(min),
                        fmt_num(max)
                    ),
                });
            }
        }
        Ok(())
    }
}

/// Check every numeric value of a merged configuration against [`LIMITS`]. Values whose key
/// has no row are left to the deserializer (unknown keys are errors there).
pub fn check_value(root: &Value) -> Result<()> {
    fn walk(root: &Value, v: &Value, path: &mut Vec<String>) -> Result<()> {
        match v {
            Value::Table(t) => {
                for (k, c) in t {
                    path.push(k.clone());
                    walk(root, c, path)?;
                    path.pop();
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    path.push(i.to_string());
                    walk(root, c, path)?;
                    path.pop();
                }
            }
            Value::Integer(_) | Value::Float(_) => {
                let key = path.join(".");
                if let Some(l) = limit_of(&key) {
                    l.check(&key, v, root)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
    walk(root, root, &mut Vec::new())
}

/// Every numeric key of `root` that has no row in [`LIMITS`] (a test keeps this empty).
pub fn unlimited_keys(root: &Value) -> Vec<String> {
    fn walk(v: &Value, path: &mut Vec<String>, out: &mut Vec<String>) {
        match v {
            Value::Table(t) => {
                for (k, c) in t {
                    path.push(k.clone());
                    walk(c, path, out);
                    path.pop();
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    path.push(i.to_string());
                    walk(c, path, out);
                    path.pop();
                }
            }
            Value::Integer(_) | Value::Float(_) => {
                let key = path.join(".");
                if limit_of(&key).is_none() {
                    out.push(key);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(root, &mut Vec::new(), &mut out);
    out
}
