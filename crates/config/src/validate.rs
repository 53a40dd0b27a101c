//! Range and consistency checks. Errors name the key and its allowed range.

// `u32::is_multiple_of` needs Rust 1.87; the workspace MSRV is 1.80.
#![allow(clippy::manual_is_multiple_of)]

use crate::error::{ConfigError, Result};
use crate::schema::{GpuConfig, UnitConfig};

fn range<T: PartialOrd + std::fmt::Display + Copy>(key: &str, v: T, min: T, max: T) -> Result<()> {
    if v < min || v > max {
        return Err(ConfigError::OutOfRange {
            key: key.into(),
            value: v.to_string(),
            min: min.to_string(),
            max: max.to_string(),
        });
    }
    Ok(())
}

fn pow2(key: &str, v: u32) -> Result<()> {
    if !v.is_power_of_two() {
        return Err(ConfigError::Inconsistent {
            key: key.into(),
            reason: format!("{v} must be a power of two"),
        });
    }
    Ok(())
}

fn inconsistent(key: &str, reason: String) -> Result<()> {
    Err(ConfigError::Inconsistent {
        key: key.into(),
        reason,
    })
}

fn cache_geometry(prefix: &str, size: u32, line: u32, assoc: u32) -> Result<()> {
    pow2(&format!("{prefix}line_bytes"), line)?;
    range(&format!("{prefix}assoc"), assoc, 1, 1024)?;
    if size == 0 || size % (line * assoc) != 0 {
        return inconsistent(
            &format!("{prefix}size"),
            format!("size {size} B is not a multiple of line ({line} B) x assoc ({assoc})"),
        );
    }
    Ok(())
}

fn unit(name: &str, u: &UnitConfig) -> Result<()> {
    let k = |f: &str| format!("units.{name}.{f}");
    range(&k("lanes"), u.lanes, 1, 64)?;
    range(&k("latency"), u.latency, 1, 1000)?;
    range(&k("initiation_interval"), u.initiation_interval, 1, 256)?;
    range(&k("count"), u.count, 1, 8)?;
    range(&k("queue_entries"), u.queue_entries, 0, 64)?;
    Ok(())
}

impl GpuConfig {
    /// Check every value against its allowed range and the cross-field invariants.
    pub fn validate(&self) -> Result<()> {
        let g = &self.gpu;
        if g.name.trim().is_empty() {
            return inconsistent("gpu.name", "must not be empty".into());
        }
        if !g.arch.starts_with("sm_") {
            return inconsistent("gpu.arch", format!("`{}` must look like `sm_86`", g.arch));
        }
        range("gpu.core_clock_mhz", g.core_clock_mhz, 1.0, 10_000.0)?;
        range("gpu.icnt_clock_mhz", g.icnt_clock_mhz, 1.0, 10_000.0)?;
        range("gpu.l2_clock_mhz", g.l2_clock_mhz, 1.0, 10_000.0)?;
        range("gpu.num_sms", g.num_sms, 1, 1024)?;
        range("gpu.sms_per_tpc", g.sms_per_tpc, 1, 4)?;
        range("gpu.num_gpcs", g.num_gpcs, 1, 64)?;
        range("gpu.warp_size", g.warp_size, 32, 32)?;
        range("gpu.subcores_per_sm", g.subcores_per_sm, 1, 8)?;
        range("gpu.max_warps_per_sm", g.max_warps_per_sm, 1, 64)?;
        range("gpu.max_ctas_per_sm", g.max_ctas_per_sm, 1, 64)?;
        range("gpu.regs_per_sm", g.regs_per_sm, 1024, 1 << 20)?;
        range("gpu.max_regs_per_thread", g.max_regs_per_thread, 16, 255)?;
        range("gpu.reg_alloc_granularity", g.reg_alloc_granularity, 1, 256)?;
        range("gpu.l1_shared_total_kb", g.l1_shared_total_kb, 16, 1024)?;
        // gpu.l1_shared_total_kb, max_threads_per_sm and regfile.regs_per_subcore are
        // informational (the model uses l1d.size_kb, max_warps_per_sm and gpu.regs_per_sm):
        // no check ties a key the model uses to them, so each can be changed on its own.
        range(
            "gpu.shared_mem_per_sm_max_kb",
            g.shared_mem_per_sm_max_kb,
            0,
            self.l1d.size_kb,
        )?;
        range("gpu.shared_mem_per_cta_max_kb", g.shared_mem_per_cta_max_kb, 0, 1024)?;
        if g.max_warps_per_sm % g.subcores_per_sm != 0 {
            return inconsistent(
                "gpu.max_warps_per_sm",
                format!("must be a multiple of subcores_per_sm ({})", g.subcores_per_sm),
            );
        }

        self.validate_launch()?;

        let f = &self.frontend;
        range("frontend.ib_entries", f.ib_entries, 1, 16)?;
        range("frontend.fetch_decode_stages", f.fetch_decode_stages, 1, 8)?;
        range("frontend.fetch_width", f.fetch_width, 1, 4)?;
        range("frontend.instruction_bytes", f.instruction_bytes, 8, 16)?;
        range("frontend.stream_buffer_entries", f.stream_buffer_entries, 0, 64)?;
        range("frontend.stream_buffers", f.stream_buffers, 1, 8)?;
        range("frontend.prefetches_per_cycle", f.prefetches_per_cycle, 1, 8)?;
        range("frontend.l0i_mshr_entries", f.l0i_mshr_entries, 1, 256)?;
        range("frontend.l1i_latency", f.l1i_latency, 0, 1000)?;
        range("frontend.l1i_reply_latency", f.l1i_reply_latency, 0, 1000)?;
        range("frontend.l1i_requests_per_cycle", f.l1i_requests_per_cycle, 1, 8)?;
        cache_geometry("frontend.l0i_", f.l0i_size_bytes, f.l0i_line_bytes, f.l0i_assoc)?;
        cache_geometry("frontend.l1i_", f.l1i_size_bytes, f.l1i_line_bytes, f.l1i_assoc)?;
        if f.kernel_code_spacing == 0 || f.kernel_code_spacing % u64::from(f.instruction_bytes) != 0 {
            return inconsistent(
                "frontend.kernel_code_spacing",
                "must be a non-zero multiple of instruction_bytes".into(),
            );
        }

        let i = &self.issue;
        range("issue.two_level_active_warps", i.two_level_active_warps, 1, 64)?;
        range(
            "issue.scoreboard_max_consumers",
            i.scoreboard_max_consumers,
            0,
            1023,
        )?;
        range("issue.max_stall_counter", i.max_stall_counter, 1, 15)?;
        range(
            "issue.stall_special_threshold",
            i.stall_special_threshold,
            0,
            i.max_stall_counter,
        )?;
        range(
            "issue.stall_gt11_without_yield_cycles",
            i.stall_gt11_without_yield_cycles,
            0,
            15,
        )?;
        range("issue.errbar_stall_cycles", i.errbar_stall_cycles, 0, 10_000)?;
        range(
            "issue.const_miss_switch_cycles",
            i.const_miss_switch_cycles,
            0,
            1000,
        )?;
        range("issue.control_stage_delay", i.control_stage_delay, 0, 4)?;
        range("issue.dependence_counters", i.dependence_counters, 1, 16)?;
        range("issue.dependence_counter_max", i.dependence_counter_max, 1, 1023)?;
        range("issue.clock_read_min_interval", i.clock_read_min_interval, 1, 16)?;

        let r = &self.regfile;
        range("regfile.banks", r.banks, 1, 8)?;
        range("regfile.read_ports_per_bank", r.read_ports_per_bank, 1, 4)?;
        range("regfile.write_ports_per_bank", r.write_ports_per_bank, 1, 4)?;
        range("regfile.read_cycles", r.read_cycles, 1, 8)?;
        range("regfile.port_width_bits", r.port_width_bits, 32, 4096)?;
        range("regfile.rfc_slots", r.rfc_slots, 1, 4)?;
        range("regfile.rfc_entries_per_bank", r.rfc_entries_per_bank, 1, 8)?;
        range("regfile.regs_per_subcore", r.regs_per_subcore, 256, 1 << 18)?;
        range("regfile.uniform_regs_per_warp", r.uniform_regs_per_warp, 0, 256)?;
        range(
            "regfile.predicate_regs_per_warp",
            r.predicate_regs_per_warp,
            1,
            16,
        )?;
        range(
            "regfile.port_schedule_horizon",
            r.port_schedule_horizon,
            r.read_cycles,
            256,
        )?;

        let u = &self.units;
        unit("fp32", &u.fp32)?;
        unit("int", &u.int)?;
        unit("fp16", &u.fp16)?;
        unit("sfu", &u.sfu)?;
        unit("fp64", &u.fp64)?;
        unit("uniform", &u.uniform)?;
        unit("branch", &u.branch)?;
        unit("misc", &u.misc)?;
        let t = &u.tensor;
        range("units.tensor.lanes", t.lanes, 1, 64)?;
        range("units.tensor.latency", t.latency, 1, 1000)?;
        range("units.tensor.initiation_interval", t.initiation_interval, 1, 256)?;
        range("units.tensor.count", t.count, 1, 8)?;
        range("units.tensor.queue_entries", t.queue_entries, 0, 64)?;
        for (n, row) in t.latency_table.iter().enumerate() {
            range(
                &format!("units.tensor.latency_table.{n}.latency"),
                row.latency,
                1,
                1000,
            )?;
            range(
                &format!("units.tensor.latency_table.{n}.initiation_interval"),
                row.initiation_interval,
                1,
                256,
            )?;
        }

        let q = &self.result_queue;
        range("result_queue.entries", q.entries, 1, 64)?;
        range("result_queue.pops_per_cycle", q.pops_per_cycle, 1, 8)?;
        range(
            "result_queue.var_latency_consumer_extra",
            q.var_latency_consumer_extra,
            0,
            8,
        )?;
        range(
            "result_queue.load_vs_fixed_wb_delay",
            q.load_vs_fixed_wb_delay,
            0,
            8,
        )?;

        let m = &self.mem_pipeline;
        range("mem_pipeline.queue_entries", m.queue_entries, 1, 64)?;
        range("mem_pipeline.dispatch_latch", m.dispatch_latch, 0, 4)?;
        range("mem_pipeline.addr_calc_interval", m.addr_calc_interval, 1, 32)?;
        range(
            "mem_pipeline.addr_calc_interval_uniform",
            m.addr_calc_interval_uniform,
            1,
            32,
        )?;
        range(
            "mem_pipeline.shared_accept_interval",
            m.shared_accept_interval,
            1,
            32,
        )?;
        range(
            "mem_pipeline.mem_to_rf_bits_per_cycle",
            m.mem_to_rf_bits_per_cycle,
            32,
            4096,
        )?;
        range(
            "mem_pipeline.shared_to_rf_bits_per_cycle",
            m.shared_to_rf_bits_per_cycle,
            32,
            4096,
        )?;
        range(
            "mem_pipeline.store_link_bits_per_cycle",
            m.store_link_bits_per_cycle,
            32,
            4096,
        )?;
        range("mem_pipeline.wb_min_cycles", m.wb_min_cycles, 1, 16)?;
        range("mem_pipeline.src_release_base", m.src_release_base, 1, 100)?;
        range(
            "mem_pipeline.global_addr_calc_regular_extra",
            m.global_addr_calc_regular_extra,
            0,
            100,
        )?;
        range(
            "mem_pipeline.regular_addr_coalesce_extra",
            m.regular_addr_coalesce_extra,
            0,
            100,
        )?;
        range("mem_pipeline.l1_hit_path", m.l1_hit_path, 1, 1000)?;
        range("mem_pipeline.shared_path", m.shared_path, 1, 1000)?;
        range("mem_pipeline.ldc_imm_war_extra", m.ldc_imm_war_extra, 0, 100)?;
        range("mem_pipeline.const_vl_hit_path", m.const_vl_hit_path, 1, 1000)?;
        range("mem_pipeline.ldc_indexed_extra", m.ldc_indexed_extra, 0, 100)?;
        range("mem_pipeline.ldgsts_smem_fill", m.ldgsts_smem_fill, 0, 1000)?;
        range(
            "mem_pipeline.ldsm_multi_matrix_extra",
            m.ldsm_multi_matrix_extra,
            0,
            100,
        )?;
        range("mem_pipeline.prt_entries", m.prt_entries, 1, 4096)?;
        range(
            "mem_pipeline.max_outstanding_requests",
            m.max_outstanding_requests,
            1,
            1 << 20,
        )?;

        let c = &self.const_cache;
        cache_geometry(
            "const_cache.l0_fl.",
            c.l0_fl.size_bytes,
            c.l0_fl.line_bytes,
            c.l0_fl.assoc,
        )?;
        cache_geometry(
            "const_cache.l0_vl.",
            c.l0_vl.size_bytes,
            c.l0_vl.line_bytes,
            c.l0_vl.assoc,
        )?;
        range("const_cache.fl_miss_penalty", c.fl_miss_penalty, 0, 10_000)?;
        range("const_cache.vl_miss_penalty", c.vl_miss_penalty, 0, 10_000)?;

        let l1 = &self.l1d;
        cache_geometry("l1d.", l1.size_kb * 1024, l1.line_bytes, l1.assoc)?;
        pow2("l1d.sector_bytes", l1.sector_bytes)?;
        if l1.line_bytes % l1.sector_bytes != 0 {
            return inconsistent("l1d.sector_bytes", "must divide line_bytes".into());
        }
        range("l1d.latency", l1.latency, 1, 1000)?;
        range("l1d.mshr_entries", l1.mshr_entries, 1, 4096)?;
        range("l1d.banks", l1.banks, 1, 64)?;
        range("l1d.shmem_banks", l1.shmem_banks, 1, 64)?;
        range("l1d.shmem_bank_width_bytes", l1.shmem_bank_width_bytes, 1, 16)?;
        range("l1d.shmem_latency", l1.shmem_latency, 1, 1000)?;
        range("l1d.shmem_atomic_latency", l1.shmem_atomic_latency, 0, 1000)?;
        range(
            "l1d.shmem_atomic_conflict_cycles",
            l1.shmem_atomic_conflict_cycles,
            0.0,
            100.0,
        )?;
        range(
            "l1d.shmem_per_cta_default_kb",
            l1.shmem_per_cta_default_kb,
            0,
            g.shared_mem_per_cta_max_kb,
        )?;
        for (n, opt) in l1.shmem_carveout_options_kb.iter().enumerate() {
            range(
                &format!("l1d.shmem_carveout_options_kb.{n}"),
                *opt,
                0,
                g.shared_mem_per_sm_max_kb,
            )?;
        }

        let l2 = &self.l2;
        range("l2.partitions", l2.partitions, 1, 1024)?;
        range(
            "l2.sub_partitions_per_partition",
            l2.sub_partitions_per_partition,
            1,
            16,
        )?;
        range("l2.latency", l2.latency, 1, 10_000)?;
        range("l2.atomic_latency", l2.atomic_latency, 0, 10_000)?;
        if let Some(r) = l2.rop_latency {
            range("l2.rop_latency", r, 1, 10_000)?;
        }
        range(
            "l2.atomic_conflict_cycles",
            l2.atomic_conflict_cycles,
            0.0,
            1000.0,
        )?;
        pow2("l2.sector_bytes", l2.sector_bytes)?;
        let slice = (l2.size_kb * 1024) / self.l2_slices();
        if (l2.size_kb * 1024) % self.l2_slices() != 0 {
            return inconsistent(
                "l2.size_kb",
                format!(
                    "{} KB does not split evenly over {} slices",
                    l2.size_kb,
                    self.l2_slices()
                ),
            );
        }
        cache_geometry("l2.", slice, l2.line_bytes, l2.assoc)?;

        let ic = &self.icnt;
        range("icnt.latency", ic.latency, 0, 1000)?;
        range("icnt.flit_bytes", ic.flit_bytes, 1, 1024)?;
        range("icnt.flits_per_cycle", ic.flits_per_cycle, 1, 16)?;
        range("icnt.subnets", ic.subnets, 1, 4)?;

        let d = &self.dram;
        range("dram.clock_mhz", d.clock_mhz, 1.0, 50_000.0)?;
        range("dram.data_rate_multiplier", d.data_rate_multiplier, 1, 8)?;
        range("dram.command_ratio", d.command_ratio, 1, 16)?;
        range("dram.channels_per_partition", d.channels_per_partition, 1, 16)?;
        range("dram.bus_width_bytes", d.bus_width_bytes, 1, 64)?;
        range("dram.burst_length", d.burst_length, 1, 64)?;
        range("dram.banks", d.banks, 1, 128)?;
        range("dram.bank_groups", d.bank_groups, 1, d.banks)?;
        range("dram.sched_queue_entries", d.sched_queue_entries, 1, 4096)?;
        range("dram.return_queue_entries", d.return_queue_entries, 1, 4096)?;
        if d.banks % d.bank_groups != 0 {
            return inconsistent("dram.bank_groups", "must divide dram.banks".into());
        }
        let tm = &d.timing;
        for (k, v) in [
            ("t_ccd", tm.t_ccd),
            ("t_ccdl", tm.t_ccdl),
            ("t_rrd", tm.t_rrd),
            ("t_rcd", tm.t_rcd),
            ("t_ras", tm.t_ras),
            ("t_rp", tm.t_rp),
            ("t_rc", tm.t_rc),
            ("t_cl", tm.t_cl),
            ("t_wl", tm.t_wl),
            ("t_wtr", tm.t_wtr),
            ("t_wr", tm.t_wr),
            ("t_rtw", tm.t_rtw),
            ("t_rtp", tm.t_rtp),
        ] {
            range(&format!("dram.timing.{k}"), v, 1, 1000)?;
        }
        if tm.t_rc < tm.t_ras {
            return inconsistent(
                "dram.timing.t_rc",
                format!("t_rc ({}) < t_ras ({})", tm.t_rc, tm.t_ras),
            );
        }
        self.try_opcode_table()?;
        Ok(())
    }
}

/// A float key: finite (no NaN) and within `min..=max`.
fn finite_range(key: &str, v: f64, min: f64, max: f64) -> Result<()> {
    if !v.is_finite() {
        return inconsistent(key, format!("{v} is not a finite number"));
    }
    range(key, v, min, max)
}

impl GpuConfig {
    /// `[launch]`: every latency at most 10^7 cycles, costs finite and at most 10^6 cycles.
    fn validate_launch(&self) -> Result<()> {
        let l = &self.launch;
        let lat = 10_000_000;
        range("launch.kernel_launch_latency", l.kernel_launch_latency, 0, lat)?;
        range("launch.kernel_min_cycles", l.kernel_min_cycles, 0, lat)?;
        range("launch.kernel_end_latency", l.kernel_end_latency, 0, lat)?;
        range("launch.cta_launch_latency", l.cta_launch_latency, 0, lat)?;
        range("launch.cta_completion_latency", l.cta_completion_latency, 0, lat)?;
        range("launch.sm_cta_queue", l.sm_cta_queue, 0, 1024)?;
        finite_range("launch.cta_dispatch_cycles", l.cta_dispatch_cycles, 0.0, 1e6)?;
        finite_range("launch.cta_completion_cycles", l.cta_completion_cycles, 0.0, 1e6)?;
        finite_range("launch.warp_launch_cycles", l.warp_launch_cycles, 0.0, 1e6)?;
        Ok(())
    }
}
