//! Accel-Sim/GPGPU-Sim compatible `name = value` statistics lines.
//!
//! The spelling and number formats follow gpgpu-sim's `gpgpu_sim::gpu_print_stat`,
//! `shader_print_cache_stats`, `cache_stats::print_stats`, `shader_core_stats::print`,
//! `memory_stats_t::memlatstat_print` and `gpgpu_context::print_simulation_time`, and
//! Accel-Sim's `main.cc` exit lines, so that Accel-Sim's `util/job_launching/get_stats.py`
//! and its plotting/correlation scripts read them. Every line is documented in
//! `docs/report.md`.
//!
//! As in GPGPU-Sim, `gpu_sim_*`, `gpu_ipc` and `gpu_occupancy` are per kernel, and every
//! other counter is a running total over the kernels simulated so far (get_stats.py's
//! "aggregate" statistics, which it differences per kernel).

use std::fmt::Write as _;

use crate::model::{
    finite, ratio, AccessKind, CacheCounters, CacheStatus, CacheSubStats, HostStats, RunReport,
};

/// Renders the Accel-Sim statistics block of every kernel, each followed by its
/// `gpgpu_simulation_time`/`gpgpu_simulation_rate` lines, and the final exit lines.
///
/// `host` supplies the wall-clock figures; pass `&HostStats::default()` for
/// deterministic output (the elapsed time is then 1 s, GPGPU-Sim's minimum).
pub fn accelsim_lines(report: &RunReport, host: &HostStats) -> String {
    let mut out = String::new();
    let total_cycles: u64 = report
        .kernels
        .iter()
        .fold(0u64, |a, k| a.saturating_add(k.cycles));

    let mut tot_cycle = 0u64;
    let mut tot_insn = 0u64;
    let mut tot_winsn = 0u64;
    let mut tot_ctas = 0u64;
    let mut occ_weighted = 0.0f64;
    let mut l1i = CacheCounters::default();
    let mut l1d = CacheCounters::default();
    let mut l1d_per_sm: Vec<CacheSubStats> = Vec::new();
    let mut l2 = CacheCounters::default();
    let mut dram_reads = 0u64;
    let mut dram_writes = 0u64;

    for (i, k) in report.kernels.iter().enumerate() {
        tot_cycle = tot_cycle.saturating_add(k.cycles);
        tot_insn = tot_insn.saturating_add(k.thread_insts);
        tot_winsn = tot_winsn.saturating_add(k.warp_insts);
        tot_ctas = tot_ctas.saturating_add(k.ctas);
        occ_weighted += finite(k.occupancy) * k.cycles as f64;
        l1i.add(&k.l1i);
        l1d.add(&k.l1d);
        if l1d_per_sm.len() < k.l1d_per_sm.len() {
            l1d_per_sm.resize(k.l1d_per_sm.len(), CacheSubStats::default());
        }
        for (dst, src) in l1d_per_sm.iter_mut().zip(&k.l1d_per_sm) {
            dst.add(src);
        }
        l2.add(&k.l2);
        dram_reads = dram_reads.saturating_add(k.dram_reads);
        dram_writes = dram_writes.saturating_add(k.dram_writes);
        let tot_occ = if tot_cycle == 0 {
            0.0
        } else {
            occ_weighted / tot_cycle as f64
        };

        // gpu_print_stat
        let _ = writeln!(out, "kernel_name = {} ", k.name);
        let _ = writeln!(out, "kernel_launch_uid = {} ", k.launch_uid);
        let _ = writeln!(out, "gpu_sim_cycle = {}", k.cycles);
        let _ = writeln!(out, "gpu_sim_insn = {}", k.thread_insts);
        let _ = writeln!(out, "gpu_ipc = {:12.4}", ratio(k.thread_insts, k.cycles));
        let _ = writeln!(out, "gpu_tot_sim_cycle = {tot_cycle}");
        let _ = writeln!(out, "gpu_tot_sim_insn = {tot_insn}");
        let _ = writeln!(out, "gpu_tot_ipc = {:12.4}", ratio(tot_insn, tot_cycle));
        let _ = writeln!(out, "gpu_tot_issued_cta = {tot_ctas}");
        let _ = writeln!(out, "gpu_occupancy = {:.4}% ", finite(k.occupancy) * 100.0);
        let _ = writeln!(out, "gpu_tot_occupancy = {:.4}% ", tot_occ * 100.0);

        // shader_print_cache_stats
        out.push_str("\n========= Core cache stats =========\n");
        out.push_str("L1I_cache:\n");
        write_totals(&mut out, "\tL1I", &l1i);
        out.push_str("L1D_cache:\n");
        for (sm, s) in l1d_per_sm.iter().enumerate() {
            let _ = writeln!(
                out,
                "\tL1D_cache_core[{sm}]: Access = {}, Miss = {}, Miss_rate = {:.3}, \
                 Pending_hits = {}, Reservation_fails = {}",
                s.accesses,
                s.misses,
                ratio(s.misses, s.accesses),
                s.pending_hits,
                s.reservation_fails
            );
        }
        write_totals(&mut out, "\tL1D", &l1d);

        // Total_core_cache_stats: GPGPU-Sim sums every core cache (L1I, L1D, L1C, L1T).
        let mut core = l1d.clone();
        core.add(&l1i);
        out.push_str("\nTotal_core_cache_stats:\n");
        write_breakdown(&mut out, "Total_core_cache_stats_breakdown", &core);

        // shader_core_stats::print
        let _ = writeln!(out, "gpgpu_n_tot_thrd_icount = {tot_insn}");
        let _ = writeln!(out, "gpgpu_n_tot_w_icount = {tot_winsn}");
        // LTRF (sassim's own lines, in Accel-Sim's `name = value` form): present when the
        // register file is LTRF.
        for (n, v) in k.extra.iter().filter(|(n, _)| n.starts_with("ltrf_")) {
            let _ = writeln!(out, "{n} = {v}");
        }

        // memory_stats_t::memlatstat_print
        let _ = writeln!(out, "total dram reads = {dram_reads}");
        let _ = writeln!(out, "total dram writes = {dram_writes}");

        // L2 cache stats
        out.push_str("\n========= L2 cache stats =========\n");
        write_totals(&mut out, "L2", &l2);
        out.push_str("L2_total_cache_breakdown:\n");
        write_breakdown(&mut out, "L2_cache_stats_breakdown", &l2);

        // gpgpu_context::print_simulation_time
        let elapsed = elapsed_seconds(host, i, tot_cycle, total_cycles);
        let (d, h, m, s) = split_time(elapsed);
        let _ = writeln!(
            out,
            "\n\ngpgpu_simulation_time = {d} days, {h} hrs, {m} min, {s} sec ({elapsed} sec)"
        );
        // GPGPU-Sim rounds to whole seconds (at least 1); the measured time, for runs
        // shorter than that:
        let precise = host
            .kernel_end_seconds
            .get(i)
            .copied()
            .map(finite)
            .unwrap_or_else(|| {
                let w = finite(host.wall_seconds);
                if total_cycles == 0 {
                    w
                } else {
                    w * tot_cycle as f64 / total_cycles as f64
                }
            });
        let _ = writeln!(out, "sassim_simulation_seconds = {precise:.3}");
        let _ = writeln!(out, "gpgpu_simulation_rate = {} (inst/sec)", tot_insn / elapsed);
        let _ = writeln!(out, "gpgpu_simulation_rate = {} (cycle/sec)", tot_cycle / elapsed);
    }
    out.push_str("GPGPU-Sim: *** simulation thread exiting ***\n");
    out.push_str("GPGPU-Sim: *** exit detected ***\n");
    out
}

/// `{prefix}_total_cache_*` lines (`prefix` carries the indentation).
fn write_totals(out: &mut String, prefix: &str, c: &CacheCounters) {
    let _ = writeln!(out, "{prefix}_total_cache_accesses = {}", c.accesses);
    let _ = writeln!(out, "{prefix}_total_cache_misses = {}", c.misses);
    if c.accesses > 0 {
        let _ = writeln!(out, "{prefix}_total_cache_miss_rate = {:.4}", c.miss_rate());
    }
    let _ = writeln!(out, "{prefix}_total_cache_pending_hits = {}", c.pending_hits);
    let _ = writeln!(
        out,
        "{prefix}_total_cache_reservation_fails = {}",
        c.reservation_fails
    );
}

/// `\tNAME[KIND][STATUS] = N` for every kind and status, then `[KIND][TOTAL_ACCESS]`.
fn write_breakdown(out: &mut String, name: &str, c: &CacheCounters) {
    for kind in AccessKind::ALL {
        for status in CacheStatus::ALL {
            let _ = writeln!(
                out,
                "\t{name}[{}][{}] = {}",
                kind.as_str(),
                status.as_str(),
                c.get(kind, status)
            );
        }
    }
    for kind in AccessKind::ALL {
        let _ = writeln!(
            out,
            "\t{name}[{}][TOTAL_ACCESS] = {}",
            kind.as_str(),
            c.total_access(kind)
        );
    }
}

/// Whole seconds from the start of the run to the end of kernel `i`, at least 1 (as
/// GPGPU-Sim's `MAX(difference, 1)`).
fn elapsed_seconds(host: &HostStats, i: usize, cum_cycles: u64, total_cycles: u64) -> u64 {
    let secs = match host.kernel_end_seconds.get(i) {
        Some(&s) => finite(s),
        None => {
            let w = finite(host.wall_seconds);
            if total_cycles == 0 {
                w
            } else {
                w * cum_cycles as f64 / total_cycles as f64
            }
        }
    };
    if secs >= 1.0 {
        // Truncation like `time_t` differences; `as` saturates for huge values.
        secs as u64
    } else {
        1
    }
}

fn split_time(difference: u64) -> (u64, u64, u64, u64) {
    let d = difference / (3600 * 24);
    let h = difference / 3600 - 24 * d;
    let m = difference / 60 - 60 * (h + 24 * d);
    let s = difference - 60 * (m + 60 * (h + 24 * d));
    (d, h, m, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_split_matches_gpgpusim() {
        assert_eq!(split_time(1), (0, 0, 0, 1));
        assert_eq!(split_time(3661), (0, 1, 1, 1));
        assert_eq!(split_time(90061), (1, 1, 1, 1));
    }

    #[test]
    fn elapsed_is_at_least_one() {
        let h = HostStats::default();
        assert_eq!(elapsed_seconds(&h, 0, 10, 10), 1);
        let h = HostStats {
            wall_seconds: 100.0,
            ..HostStats::default()
        };
        assert_eq!(elapsed_seconds(&h, 0, 25, 100), 25);
        let h = HostStats {
            wall_seconds: f64::NAN,
            kernel_end_seconds: vec![f64::INFINITY],
            ..HostStats::default()
        };
        assert_eq!(elapsed_seconds(&h, 0, 25, 100), 1);
    }
}
