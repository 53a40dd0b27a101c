//! Statistics of timed kernels as `sassim-report` data.

use crate::KernelRun;
use sassim_report::{KernelReport, RunReport};
use sassim_timing::StallReason;

/// The report of one timed kernel.
pub fn kernel_report(
    run: &KernelRun,
    launch_uid: u32,
    grid: [u32; 3],
    block: [u32; 3],
    mode: &str,
) -> KernelReport {
    let s = &run.stats;
    let mut k = KernelReport {
        name: run.name.clone(),
        launch_uid,
        grid,
        block,
        cycles: run.cycles,
        bare_cycles: run.bare_cycles,
        start_cycle: run.start_cycle,
        warp_insts: s.warp_insts,
        thread_insts: s.thread_insts,
        occupancy: run.occupancy,
        ctas: run.ctas as u64,
        rfc_reads: s.rfc_reads,
        rfc_hits: s.rfc_hits,
        l0i_hits: s.l0i_hits,
        l0i_misses: s.l0i_misses,
        ipc_timeline: run.ipc_timeline.clone(),
        mode: mode.to_string(),
        warnings: run.warnings.clone(),
        ..Default::default()
    };
    // The SM's L1 instruction/constant cache: instruction lines and the constant lines the
    // L0 constant caches fetch.
    {
        use sassim_report::{AccessKind, CacheStatus};
        for (kind, hit, reserved, miss) in [
            (AccessKind::InstRead, s.l1i_hits, s.l1i_hit_reserved, s.l1i_misses),
            (
                AccessKind::ConstRead,
                s.l1c_hits,
                s.l1c_hit_reserved,
                s.l1c_misses,
            ),
        ] {
            for (status, n) in [
                (CacheStatus::Hit, hit),
                (CacheStatus::HitReserved, reserved),
                (CacheStatus::Miss, miss),
            ] {
                if n > 0 {
                    k.l1i.record(kind, status, n);
                }
            }
        }
    }
    for r in StallReason::ALL {
        k.stall_breakdown
            .insert(r.name().to_string(), s.stall_slots[r as usize]);
    }
    k.stall_breakdown
        .insert(sassim_report::ISSUED.to_string(), s.issue_slots_used);
    let extra = [
        ("rf_bank_reads", s.rf_bank_reads),
        ("allocate_stall_cycles", s.allocate_stall_cycles),
        ("stream_buffer_hits", s.stream_buffer_hits),
        ("l1i_requests", s.l1i_requests),
        ("l0i_hit_reserved", s.l0i_hit_reserved),
        ("l0c_hits", s.l0c_hits),
        ("l0c_misses", s.l0c_misses),
        ("mem_insts", s.mem_insts),
        ("ib_flushes", s.ib_flushes),
        ("load_wb_conflicts", s.load_wb_conflicts),
        ("stale_reads", s.stale_reads),
        ("sms_used", run.sms_used as u64),
        ("dispatch_no_room_cycles", run.dispatch.no_room_cycles),
        ("ctas_per_sm", run.ctas_per_sm as u64),
    ];
    for (n, v) in extra {
        k.extra.insert(n.to_string(), v);
    }
    // LTRF (docs/ltrf.md): only when the register file is LTRF, so that other reports keep
    // their keys. `ltrf_prefetches` counts dynamic interval entries: warp instructions per
    // prefetch is the dynamic interval length.
    if s.ltrf_cache_reads > 0 || s.ltrf_prefetches > 0 {
        for (n, v) in [
            ("ltrf_prefetches", s.ltrf_prefetches),
            ("ltrf_prefetch_regs", s.ltrf_prefetch_regs),
            ("ltrf_prefetch_conflicts", s.ltrf_prefetch_conflicts),
            ("ltrf_prefetch_cycles", s.ltrf_prefetch_cycles),
            ("ltrf_deactivations", s.ltrf_deactivations),
            ("ltrf_writeback_regs", s.ltrf_writeback_regs),
            ("ltrf_cache_reads", s.ltrf_cache_reads),
        ] {
            k.extra.insert(n.to_string(), v);
        }
    }
    // GPGPU-Sim's L1I is the first-level instruction cache fetch looks up: here the
    // sub-cores' L0 I-caches (their misses are the `l1i_requests` to the SM's L1 I/C).
    use sassim_report::{AccessKind, CacheStatus};
    k.l1i.record(AccessKind::InstRead, CacheStatus::Hit, s.l0i_hits);
    k.l1i
        .record(AccessKind::InstRead, CacheStatus::Miss, s.l0i_misses);
    if let Some(m) = &run.mem {
        crate::memsys::fill_report(m, &mut k);
    }
    k.compute_ipc();
    k
}

/// A run report for `kernels` on the GPU `gpu` (the effective configuration in `config`).
pub fn run_report(gpu: &str, config: serde_json::Value, kernels: Vec<KernelReport>) -> RunReport {
    let mut r = RunReport {
        gpu: gpu.to_string(),
        sim_version: env!("CARGO_PKG_VERSION").to_string(),
        config,
        kernels,
        ..Default::default()
    };
    r.finalize();
    r
}
