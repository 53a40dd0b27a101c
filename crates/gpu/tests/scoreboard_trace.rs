//! Issue 13 point 4 on a trace without its SASS: the calibration `ffmakernel` (20 dependent
//! FFMAs per thread) recorded as an Accel-Sim trace and run on `h100-pcie` without its
//! listing (hybrid mode: scoreboards) issues every FFMA 4 cycles after the previous one, as
//! the same trace with the listing's control bits does, and as the execution-driven run.

use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_gpu::{Gpu, KernelRun, RunOptions};
use std::path::PathBuf;

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// FFMA issue cycles of warp 0 of the first SM.
fn ffma_issues(r: &KernelRun) -> Vec<u64> {
    let log = &r
        .logs
        .iter()
        .filter(|l| l.sm == 0)
        .min_by_key(|l| l.slot)
        .expect("a warp log")
        .log;
    log.issues
        .iter()
        .filter(|i| i.op == "FFMA")
        .map(|i| i.cycle)
        .collect()
}

#[test]
fn ffma_chain_of_a_trace_without_sass_issues_at_the_latency() {
    let dir = root().join("workloads/calibration/ffmakernel");
    let spec = sassim_workload::Workload::load(dir.join("ffmakernel.toml")).expect("spec");
    let listing =
        sassim_sass::parse_listing_file(&dir.join("ffmakernel_sm90.cuobjdump-sass.txt")).expect("listing");
    let out = scratch("sbtrace");
    std::fs::create_dir_all(&out).expect("temp dir");
    sassim_functional::tracer::write_workload_trace(
        &spec,
        &listing,
        "sm_90",
        ControlFlowKind::Hanoi,
        &out,
        1,
    )
    .expect("trace");
    let trace = out.join("kernel-1.traceg");
    let cfg = GpuConfig::preset("h100-pcie").expect("preset");
    let opts = RunOptions {
        record: true,
        ipc_sample_interval: 0,
        ..RunOptions::default()
    };
    let hybrid = sassim_gpu::trace_exec::run_trace_kernel(&mut Gpu::new(cfg.clone()), &trace, &[], &opts)
        .expect("hybrid run");
    let listed = sassim_gpu::trace_exec::run_trace_kernel(
        &mut Gpu::new(cfg.clone()),
        &trace,
        std::slice::from_ref(&listing),
        &opts,
    )
    .expect("control-bits run");
    assert!(hybrid.mode.contains("scoreboard"), "{}", hybrid.mode);
    assert!(listed.mode.contains("control bits"), "{}", listed.mode);
    let (h, l) = (ffma_issues(&hybrid.run), ffma_issues(&listed.run));
    assert_eq!(h.len(), 20);
    let gaps = |v: &[u64]| -> Vec<u64> { v.windows(2).map(|w| w[1] - w[0]).collect() };
    assert_eq!(gaps(&h), vec![4; 19], "scoreboards: {h:?}");
    assert_eq!(gaps(&l), vec![4; 19], "control bits: {l:?}");
    // The execution-driven run of the same code (the listing's control bits).
    let mut gpu = Gpu::new(cfg);
    let w = sassim_gpu::workload::run_workload_timed(
        &mut gpu,
        &spec,
        &listing,
        "sm_90",
        0,
        ControlFlowKind::Hanoi,
        &opts,
    )
    .expect("workload");
    assert!(w.check.is_ok(), "{:?}", w.check);
    assert_eq!(gaps(&ffma_issues(&w.run)), vec![4; 19]);
    // The chain's span is the same; the whole kernel is 20 cycles shorter with
    // scoreboards, which wait only for real dependences where the compiler's stall counts
    // are conservative: ULDC [S08] (the first FFMA issues 1 cycle after it instead of 8),
    // the last FFMA [S05] before FSETP (4 needed), FSETP [S13] before EXIT (1).
    assert_eq!(h[19] - h[0], l[19] - l[0]);
    let (hb, lb) = (hybrid.run.bare_cycles, listed.run.bare_cycles);
    assert_eq!(lb - hb, 7 + 1 + 12, "hybrid {hb}, control bits {lb}");
}
