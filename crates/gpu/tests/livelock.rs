//! Livelock detection (`livelock.rs`, docs/model.md "Deadlock detection"): warps that spin
//! while a register keeps changing are reported once their states recur with memory
//! unchanged, at the same cycle for 1, 2 and 4 threads, with or without the SMs split into
//! shards; loops that compute (a counter, a clock) are not.

mod common;

use sassim_config::GpuConfig;
use sassim_functional::{ControlFlowKind, ExecOptions, KernelExec, Launch};
use sassim_gpu::{Gpu, RunOptions, SimError};
use std::collections::HashMap;

/// Deadlock window of these tests (short: the runs take well under a second each).
const WINDOW: u64 = 20_000;

fn opts(threads: usize) -> RunOptions {
    RunOptions {
        threads,
        deadlock_cycles: WINDOW,
        max_cycles: 50 * WINDOW,
        ..RunOptions::default()
    }
}

/// The spinlock workload's sm_75 code on the RTX 2080 Ti preset with the pre-Volta SIMT
/// stack (the lock's holder waits for the reconvergence of the threads spinning on it, as
/// on pre-Volta hardware); `serial`: the kernel's control flow is recorded, which keeps its
/// SMs in one engine (no shards). The run's error.
fn spinlock_2080ti(o: &RunOptions, serial: bool) -> String {
    let b = sassim_workload::builtin_named("spinlock").expect("built-in workload");
    let (w, listing, smem) = sassim_gpu::workload::load_builtin(&b, "sm_75").expect("load");
    let mut gpu = Gpu::new(GpuConfig::preset("rtx-2080ti").expect("preset"));
    let kernel = std::sync::Arc::new(listing.kernel(w.kernel()).expect("kernel").clone());
    let shared = w.shared_mem_bytes() + smem;
    let mut launch = Launch::new(w.grid, w.block, Vec::new());
    launch.shared_bytes = shared.max(1024);
    let eopts = ExecOptions {
        record_cflow_trace: serial,
        ..ExecOptions::default()
    };
    let mut exec =
        KernelExec::new(kernel.clone(), "sm_75", launch, ControlFlowKind::SimtStack, eopts).expect("exec");
    assert_eq!(exec.shardable(), !serial);
    let mut addrs = HashMap::new();
    for b in w.buffers() {
        let a = exec.memory().alloc(b.bytes.len().max(4) as u64, 256);
        exec.memory().write(a, &b.bytes);
        addrs.insert(b.name.clone(), a);
    }
    let params = w.param_bytes(|n| addrs.get(n).copied().unwrap_or(0));
    exec.set_params(&params).expect("params");
    let o = RunOptions {
        shared_per_cta: shared,
        ..o.clone()
    };
    match gpu.run_kernel(&mut exec, &kernel, &o, None) {
        Err(SimError::Deadlock(m)) => m,
        other => panic!("the spinlock is not reported as a livelock: {other:?}"),
    }
}

/// "at cycle N" of a deadlock message.
fn at_cycle(msg: &str) -> &str {
    let i = msg.find(" at cycle ").expect("a cycle");
    let rest = &msg[i + 10..];
    &rest[..rest.find(';').expect("end of the cycle")]
}

#[test]
fn simt_spinlock_on_2080ti_is_a_livelock_at_the_same_cycle_for_any_threads() {
    let one = spinlock_2080ti(&opts(1), false);
    assert!(
        one.starts_with("livelock: every running warp repeats the same state"),
        "{one}"
    );
    let cycle: u64 = at_cycle(&one).parse().expect("a number");
    // Reported soon after a window without memory change, exit or barrier release.
    assert!(cycle > WINDOW && cycle < 3 * WINDOW, "{one}");
    for t in [2, 4] {
        assert_eq!(one, spinlock_2080ti(&opts(t), false), "{t} threads");
    }
    // The SMs' own ports, and sub-cores that never sleep: the same cycle.
    let other_paths = RunOptions {
        sm_ports: false,
        skip_idle_subcores: false,
        ..opts(2)
    };
    assert_eq!(one, spinlock_2080ti(&other_paths, false));
    // One engine for every SM (no shards): the same cycle (warp ids differ in the text).
    // (Debug builds check every cycle an SM skips here; until the SMs' memory was handed
    // out only for sending when only the port's room changed, that check failed on this
    // kernel at cycle 2,314.)
    for t in [1, 2] {
        let serial = spinlock_2080ti(&opts(t), true);
        assert!(serial.starts_with("livelock:"), "{serial}");
        assert_eq!(at_cycle(&one), at_cycle(&serial), "{one}\n---\n{serial}");
    }
}

/// Run a microbenchmark-dialect kernel (Hanoi control flow, RTX A6000) with the test's
/// deadlock window.
fn run_mb(src: &str) -> Result<sassim_gpu::KernelRun, SimError> {
    let mb = sassim_sass::microbench::parse(src, "livelock.sass").expect("microbenchmark");
    let mut gpu = Gpu::new(GpuConfig::preset("rtx-a6000").expect("preset"));
    sassim_gpu::microbench::run_parsed(&mut gpu, &mb, 0, &opts(1))
}

#[test]
fn a_long_register_only_loop_is_not_a_livelock() {
    // A counter that never repeats: ~15 windows without memory change, exit or barrier
    // release, every warp's registers changing.
    let src = ".grid 2\n.block 64\n.init R1 = 25000\n\
               loop:\n\
               [B------:R-:W-:-:S04] IADD3 R1, R1, -0x1, RZ ;\n\
               [B------:R-:W-:-:S05] ISETP.NE.AND P0, PT, R1, RZ, PT ;\n\
               [B------:R-:W-:-:S05] @P0 BRA loop ;\n\
               [B------:R-:W-:-:S05] EXIT ;\n";
    let r = run_mb(src).expect("the loop ends");
    assert!(r.stopped.is_none());
    assert!(r.cycles > 10 * WINDOW, "{} cycles", r.cycles);
}

#[test]
fn a_loop_that_waits_for_the_clock_is_not_a_livelock() {
    // The clock value is compared and then overwritten: the registers repeat at every
    // branch, but the loop ends when the clock passes 400,000.
    let src = ".grid 1\n.block 32\n\
               loop:\n\
               [B------:R-:W-:-:S02] CS2R.32 R2, SR_CLOCKLO ;\n\
               [B------:R-:W-:-:S05] ISETP.LT.U32.AND P0, PT, R2, 0x61a80, PT ;\n\
               [B------:R-:W-:-:S04] MOV R2, RZ ;\n\
               [B------:R-:W-:-:S05] @P0 BRA loop ;\n\
               [B------:R-:W-:-:S05] EXIT ;\n";
    let r = run_mb(src).expect("the loop ends");
    assert!(r.cycles > 10 * WINDOW, "{} cycles", r.cycles);
}

#[test]
fn a_register_loop_that_toggles_forever_is_a_livelock() {
    // R1 alternates between 0 and 1 (a register change at every iteration, so the
    // deadlock check alone never fires) and never reaches 7.
    let src = ".grid 1\n.block 32\n.init R1 = 0\n\
               loop:\n\
               [B------:R-:W-:-:S04] LOP3.LUT R1, R1, 0x1, RZ, 0x3c, !PT ;\n\
               [B------:R-:W-:-:S05] ISETP.NE.AND P0, PT, R1, 0x7, PT ;\n\
               [B------:R-:W-:-:S05] @P0 BRA loop ;\n\
               [B------:R-:W-:-:S05] EXIT ;\n";
    match run_mb(src) {
        Err(SimError::Deadlock(m)) => assert!(m.starts_with("livelock:"), "{m}"),
        other => panic!("not reported: {other:?}"),
    }
}

/// The kernel launch latency (modelled time before the first CTA is sent, in which no warp
/// exists) is not counted as cycles without progress: a deadlock window as long as it lets
/// the built-in vector add finish on the RTX A6000 (it used to report a deadlock at the
/// window's end, before any warp had run).
#[test]
fn the_launch_latency_is_not_a_deadlock() {
    let cfg = GpuConfig::preset("rtx-a6000").expect("preset");
    let window = u64::from(cfg.launch.kernel_launch_latency);
    assert!(window > 0, "the preset has a launch latency");
    let o = RunOptions {
        deadlock_cycles: window,
        ..opts(1)
    };
    let r = common::run_builtin_a6000("vecadd", None, &o, "no deadlock");
    assert!(r.check.is_ok(), "{:?}", r.check);
    assert!(r.run.cycles > window, "{} cycles", r.run.cycles);
}
