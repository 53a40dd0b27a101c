//! Simulator speed on the built-in workloads (timing model, RTX A6000 preset).
//! Reports simulated warp-instructions per second and simulated cycles per second.
//! `cargo bench -p sassim-gpu --bench speed` (SASSIM_BENCH_REPS sets the repetitions).

use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_gpu::workload::{listing_arch_for, load_builtin, run_workload_timed};
use sassim_gpu::{Gpu, RunOptions};
use std::time::Instant;

mod common;

fn main() {
    let reps = common::env_number("SASSIM_BENCH_REPS", 5, 1, 1000) as u32;
    let cfg = GpuConfig::preset("rtx-a6000").expect("preset");
    let arch = listing_arch_for(&cfg.gpu.arch);
    let suite: Vec<_> = sassim_workload::builtin()
        .iter()
        .map(|b| load_builtin(b, arch).expect("workload"))
        .collect();
    println!(
        "{:<12} {:>10} {:>12} {:>14} {:>14}",
        "workload", "cycles", "warp insts", "warp-insts/s", "cycles/s"
    );
    let (mut tot_i, mut tot_c, mut tot_t) = (0u64, 0u64, 0f64);
    for (w, listing, smem) in &suite {
        let mut best = f64::MAX;
        let mut last = None;
        for _ in 0..reps {
            let mut gpu = Gpu::new(cfg.clone());
            let t = Instant::now();
            let r = run_workload_timed(
                &mut gpu,
                w,
                listing,
                arch,
                *smem,
                ControlFlowKind::Hanoi,
                &RunOptions::default(),
            )
            .expect("run");
            best = best.min(t.elapsed().as_secs_f64());
            last = Some(r);
        }
        let r = last.expect("ran");
        let (i, c) = (r.run.stats.warp_insts, r.run.cycles);
        tot_i += i;
        tot_c += c;
        tot_t += best;
        println!(
            "{:<12} {:>10} {:>12} {:>14.0} {:>14.0}",
            w.name,
            c,
            i,
            i as f64 / best,
            c as f64 / best
        );
    }
    println!(
        "{:<12} {:>10} {:>12} {:>14.0} {:>14.0}",
        "total",
        tot_c,
        tot_i,
        tot_i as f64 / tot_t,
        tot_c as f64 / tot_t
    );
    println!("peak RSS {} MB", common::peak_rss_mb());
}
