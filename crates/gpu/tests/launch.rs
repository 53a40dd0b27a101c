//! Kernel launch and CTA dispatch (`[launch]`, docs/model.md "Kernel launch and CTA
//! dispatch"): every part of the launch model moves a kernel's duration by exactly what it
//! costs, and back-to-back launches of one stream run one after the other.

use sassim_config::GpuConfig;
use sassim_functional::{ControlFlowKind, ExecOptions, KernelExec, Launch};
use sassim_gpu::microbench::run_microbench;
use sassim_gpu::{Gpu, KernelRun, RunOptions};
use sassim_sass::microbench::parse;
use std::sync::Arc;

/// An empty kernel (`EXIT`) of `grid` CTAs of `block` threads.
fn empty(grid: u32, block: u32) -> String {
    format!(".grid {grid}\n.block {block}\n[B------:R-:W-:-:S01] EXIT ;\n")
}

/// Every `[launch]` cost zero, then `sets`.
fn cfg(sets: &[&str]) -> GpuConfig {
    let mut all: Vec<String> = [
        "launch.kernel_launch_latency=0",
        "launch.kernel_min_cycles=0",
        "launch.kernel_end_latency=0",
        "launch.cta_dispatch_cycles=0",
        "launch.cta_completion_cycles=0",
        "launch.sm_cta_queue=0",
        "launch.cta_launch_latency=0",
        "launch.warp_launch_cycles=0",
        "launch.cta_completion_latency=0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    all.extend(sets.iter().map(|s| s.to_string()));
    GpuConfig::load("rtx-a6000", &all).expect("config")
}

/// (kernel duration, bare kernel cycles) of `src` on `cfg`.
fn run(src: &str, cfg: &GpuConfig) -> (u64, u64) {
    let mb = parse(src, "launch.sass").expect("parse");
    let r = run_microbench(&mb, cfg, ControlFlowKind::Hanoi).expect("run");
    assert!(r.error.is_none(), "{:?}", r.error);
    (r.kernel_cycles, r.total_cycles)
}

#[test]
fn without_launch_costs_the_duration_is_the_bare_kernel() {
    let (d, bare) = run(&empty(4, 128), &cfg(&[]));
    assert_eq!(d, bare);
    assert!(bare > 0);
}

#[test]
fn fixed_costs_add_exactly() {
    let src = empty(1, 128);
    let (base, bare) = run(&src, &cfg(&[]));
    for (key, v) in [
        ("launch.kernel_launch_latency", 1500),
        ("launch.cta_launch_latency", 321),
        ("launch.cta_completion_latency", 77),
        ("launch.kernel_end_latency", 40),
    ] {
        let (d, b) = run(&src, &cfg(&[&format!("{key}={v}")]));
        assert_eq!(d, base + v, "{key}");
        assert_eq!(b, bare, "{key} leaves the bare kernel alone");
    }
    // The dispatcher's cost of sending the one CTA and of processing its completion.
    let (d, _) = run(&src, &cfg(&["launch.cta_dispatch_cycles=3"]));
    assert_eq!(d, base + 3);
    let (d, _) = run(&src, &cfg(&["launch.cta_completion_cycles=2.5"]));
    assert_eq!(d, base + 3, "2.5 cycles, rounded up to the end of the cycle");
    // A floor on the duration.
    let (d, b) = run(&src, &cfg(&["launch.kernel_min_cycles=100000"]));
    assert_eq!((d, b), (100_000, bare));
}

#[test]
fn dispatch_rate_limits_many_small_ctas() {
    // 1000 one-warp CTAs on 84 SMs: at one CTA per 1 or 2 cycles the last one arrives at
    // cycle 1000 or 2000 and runs on a warm SM either way: the durations differ by 1000.
    let dur = |sets: &[&str]| launch_on(&mut Gpu::new(cfg(sets)), 1000, 32).cycles;
    let one = dur(&["launch.cta_dispatch_cycles=1"]);
    let two = dur(&["launch.cta_dispatch_cycles=2"]);
    assert_eq!(two - one, 1000);
    // Half a cycle per CTA: two CTAs per cycle, the last arrives at cycle 500.
    let half = dur(&["launch.cta_dispatch_cycles=0.5"]);
    assert_eq!(one - half, 500);
    // Completions occupy the same dispatcher: the dispatch slows down once CTAs finish.
    let shared = dur(&["launch.cta_dispatch_cycles=1", "launch.cta_completion_cycles=1"]);
    assert!(shared > one + 500, "{shared} vs {one}");
}

#[test]
fn warp_launcher_spaces_the_warps_of_an_sm() {
    // One CTA of 32 warps: its last warp is launched 31 intervals after the first; past the
    // cold start every warp finds its code in the I-cache, so 10 more cycles per warp
    // delay the end by 310.
    let src = empty(1, 1024);
    let (a, _) = run(&src, &cfg(&["launch.warp_launch_cycles=20"]));
    let (b, _) = run(&src, &cfg(&["launch.warp_launch_cycles=30"]));
    assert_eq!(b - a, 310);
}

#[test]
fn sm_cta_queue_starts_the_next_cta_at_the_exit() {
    // Two CTAs of 1024 threads on one SM, which holds one (1536 threads): without a queue
    // the second is sent when the dispatcher has processed the first one's completion (100
    // cycles after its exit); with a queue of one it waits on the SM and starts as soon as
    // the first one is done.
    let src = empty(2, 1024);
    let sets = |q: &'static str| cfg(&["gpu.num_sms=1", "launch.cta_completion_latency=100", q]);
    let (no_queue, _) = run(&src, &sets("launch.sm_cta_queue=0"));
    let (queue, _) = run(&src, &sets("launch.sm_cta_queue=1"));
    assert_eq!(no_queue - queue, 100);
}

/// Time an empty kernel on `gpu` (one more launch of its stream).
fn launch_on(gpu: &mut Gpu, grid: u32, block: u32) -> KernelRun {
    let mb = parse(&empty(grid, block), "launch.sass").expect("parse");
    let kernel = Arc::new(mb.kernel.clone());
    let launch = Launch::new(mb.grid, mb.block, Vec::new());
    let mut exec = KernelExec::new(
        kernel.clone(),
        &gpu.cfg.gpu.arch,
        launch,
        ControlFlowKind::Hanoi,
        ExecOptions::default(),
    )
    .expect("exec");
    gpu.run_kernel(&mut exec, &kernel, &RunOptions::default(), None)
        .expect("run")
}

#[test]
fn back_to_back_launches_run_one_after_the_other() {
    let c = cfg(&[
        "launch.kernel_launch_latency=1000",
        "launch.kernel_end_latency=50",
        "launch.cta_dispatch_cycles=1",
    ]);
    let mut gpu = Gpu::new(c.clone());
    let a = launch_on(&mut gpu, 200, 64);
    let b = launch_on(&mut gpu, 200, 64);
    assert_eq!(a.start_cycle, 0);
    assert_eq!(
        b.start_cycle, a.end_cycle,
        "the second kernel starts when the first ends"
    );
    assert_eq!(gpu.now(), b.end_cycle);
    // Its first CTA is sent after the launch latency and reaches its SM a cycle later.
    assert_eq!(b.first_warp_cycle, a.end_cycle + 1000 + 1);
    assert_eq!(a.first_warp_cycle, 1001);
    // Durations include the launch cost; the bare kernels do not.
    assert_eq!(a.cycles, a.end_cycle - a.start_cycle);
    assert!(a.cycles >= a.bare_cycles + 1050);
    // The same kernel alone on a fresh GPU takes as long as the first one here.
    let alone = launch_on(&mut Gpu::new(c), 200, 64);
    assert_eq!(alone.cycles, a.cycles);
}

#[test]
fn records_of_finished_ctas_are_reused_in_timing_mode() {
    // 20,000 one-warp CTAs on 2 SMs: the engine holds the records of the resident warps
    // only (before: one per CTA ever started, 1.6 KB each; a 2^31-CTA grid grew without
    // bound).
    let mut gpu = Gpu::new(cfg(&["gpu.num_sms=2", "gpu.num_gpcs=1"]));
    // (A microbenchmark keeps every warp, so it allows fewer: the grid is set here.)
    let mb = parse(&empty(1, 32), "launch.sass").expect("parse");
    let kernel = Arc::new(mb.kernel.clone());
    let mut exec = KernelExec::new(
        kernel.clone(),
        &gpu.cfg.gpu.arch,
        Launch::new([20_000, 1, 1], mb.block, Vec::new()),
        ControlFlowKind::Hanoi,
        ExecOptions::default(),
    )
    .expect("exec");
    let r = gpu
        .run_kernel(&mut exec, &kernel, &RunOptions::default(), None)
        .expect("run");
    assert_eq!(r.stats.warp_insts, 20_000);
    let resident = 2 * gpu.cfg.gpu.max_warps_per_sm as usize;
    assert!(
        exec.num_warps() <= resident,
        "{} warp records for at most {resident} resident warps",
        exec.num_warps()
    );
    assert!(exec.num_cta_records() <= resident);
}
