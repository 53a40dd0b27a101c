//! Preset keys that document the hardware but drive nothing in the model. They stay in the
//! presets with their sources, but `--set` (and `GpuConfig::with_overrides`) refuses them, so
//! that no researcher changes a number expecting an effect that cannot come. Every other
//! numeric key changes some statistic of a microbenchmark suited to it (test
//! `crates/gpu/tests/preset_keys.rs`, which sweeps every numeric key of every preset).

/// `(key pattern, why)`; `*` in a pattern matches one key segment.
pub const INFORMATIONAL: &[(&str, &str)] = &[
    (
        "gpu.sms_per_tpc",
        "CTAs are placed by GPC (gpu.num_gpcs); TPCs are not modelled",
    ),
    (
        "gpu.l1_shared_total_kb",
        "the L1D + shared-memory size the model uses is l1d.size_kb",
    ),
    (
        "gpu.max_threads_per_sm",
        "the model limits resident warps (max_warps_per_sm): threads = warps x 32",
    ),
    (
        "gpu.warp_size",
        "warps are 32 threads on every modelled architecture",
    ),
    (
        "gpu.shared_mem_per_cta_max_kb",
        "launches are limited by the SM's shared memory (shared_mem_per_sm_max_kb)",
    ),
    (
        "frontend.kernel_code_spacing",
        "code lines come from L2 at a fixed latency; kernels' addresses only keep them apart",
    ),
    (
        "issue.dependence_counters",
        "every warp has SB0-SB5, as the control bits encode",
    ),
    ("l1d.banks", "L1D tag lookups are not limited per bank"),
    (
        "frontend.fetch_width",
        "fetch and decode handle one instruction per cycle per sub-core (M25 5.2)",
    ),
    (
        "frontend.instruction_bytes",
        "SASS instructions are 16 bytes on every modelled architecture",
    ),
    (
        "frontend.l0i_mshr_entries",
        "L0 I-cache misses are tracked per line without an MSHR limit",
    ),
    ("frontend.stream_buffers", "each L0 I-cache has one stream buffer"),
    (
        "frontend.prefetches_per_cycle",
        "the stream buffer's requests go through the L1 arbiter (l1i_requests_per_cycle)",
    ),
    (
        "issue.max_stall_counter",
        "the stall field of the control bits is 4 bits wide",
    ),
    (
        "issue.dependence_counter_max",
        "dependence counters are not bounded in the model",
    ),
    (
        "regfile.write_ports_per_bank",
        "write-back conflicts are modelled by result_queue.load_vs_fixed_wb_delay",
    ),
    (
        "regfile.rfc_entries_per_bank",
        "the register-file cache has one entry per bank (M25 5.3.1)",
    ),
    ("regfile.regs_per_subcore", "occupancy uses gpu.regs_per_sm"),
    (
        "regfile.uniform_regs_per_warp",
        "the uniform register file is not a resource in the model",
    ),
    (
        "regfile.predicate_regs_per_warp",
        "predicates are not a resource in the model",
    ),
    (
        "regfile.uniform_predicate_regs_per_warp",
        "uniform predicates are not a resource in the model (the Table 7 area model reads the presets)",
    ),
    (
        "regfile.port_schedule_horizon",
        "the read-port reservation table looks 64 cycles ahead",
    ),
    (
        "result_queue.entries",
        "the result queue never fills in the model (one result per cycle)",
    ),
    (
        "result_queue.pops_per_cycle",
        "one fixed-latency result is written per cycle",
    ),
    (
        "mem_pipeline.ldsm_multi_matrix_extra",
        "LDSM is not modelled apart from other shared loads",
    ),
    (
        "mem_pipeline.prt_entries",
        "coalescing is not limited by a pending request table",
    ),
    (
        "mem_pipeline.membar_cta_cycles",
        "MEMBAR issues like other instructions",
    ),
    (
        "mem_pipeline.membar_gpu_cycles",
        "MEMBAR issues like other instructions",
    ),
    (
        "mem_pipeline.membar_sys_cycles",
        "MEMBAR issues like other instructions",
    ),
    (
        "const_cache.l0_fl.latency",
        "the L0 FL constant cache is looked up at issue",
    ),
    (
        "const_cache.l0_vl.latency",
        "an LDC hit takes mem_pipeline.const_vl_hit_path",
    ),
    (
        "const_cache.fl_miss_penalty",
        "an L0 FL miss goes through the L1 I/C (frontend.l1i_*), MICRO'25's 79 cycles emerge",
    ),
    (
        "l1d.latency",
        "the L1 hit latency with the SM pipeline is mem_pipeline.l1_hit_path",
    ),
    (
        "l1d.shmem_latency",
        "the shared-memory latency with the SM pipeline is mem_pipeline.shared_path",
    ),
    (
        "l1d.lookups_per_bank_per_cycle",
        "the L1 tag lookups are not limited per bank",
    ),
    (
        "icnt.subnets",
        "requests and replies always travel on two separate networks",
    ),
    (
        "units.fp64.latency",
        "every FP64 opcode has its latency in the opcode tables (presets/opcodes/)",
    ),
    (
        "l2.queue_dram_to_l2",
        "DRAM data waits in the DRAM's return queue (dram.return_queue_entries)",
    ),
    (
        "icnt.output_buffer_flits",
        "the crossbar's output buffers are not bounded",
    ),
    (
        "l2.miss_queue_entries",
        "L2 misses wait in the MSHRs and the L2-to-DRAM queue (l2.queue_l2_to_dram)",
    ),
    (
        "units.*.count",
        "each sub-core (or the SM, when shared_by_sm) has one unit of each class",
    ),
    (
        "units.*.queue_entries",
        "the queues in front of variable-latency units are not bounded",
    ),
];

/// Why `key` (`section.key`, array indices as numbers) is informational, if it is.
pub fn informational(key: &str) -> Option<&'static str> {
    let segs: Vec<&str> = key.split('.').collect();
    INFORMATIONAL.iter().find_map(|(pat, why)| {
        let p: Vec<&str> = pat.split('.').collect();
        (p.len() == segs.len() && p.iter().zip(&segs).all(|(a, b)| *a == "*" || a == b)).then_some(*why)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn patterns() {
        assert!(super::informational("units.fp64.count").is_some());
        assert!(super::informational("units.fp32.latency").is_none());
        assert!(super::informational("gpu.sms_per_tpc").is_some());
        assert!(super::informational("gpu").is_none());
    }
}
