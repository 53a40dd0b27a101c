//! SMs in which nothing can act (`sassim_timing` `sleep.rs`, issue 15): an SM whose warps all
//! wait (on memory, on their dependence counters) with empty pipelines, or whose sub-cores
//! all sleep while its arbiters have nothing to do, is not ticked until its next event,
//! memory completion, sub-core wake-up or memory grant, its L1's responses or a warp launched
//! on it; it counts the skipped cycles' stalls when it next ticks, or when the kernel ends. These tests check that
//! cycles are skipped and that nothing a run reports changes: whole runs, runs cut short by
//! a cycle limit (SMs left in the middle of a skip), execution-driven and trace-driven,
//! on one and two threads. (`subcore_sleep.rs` compares every built-in workload with
//! skipping on and off as well.)

mod common;

use sassim_config::GpuConfig;
use sassim_gpu::{Gpu, KernelRun, RunOptions};

/// Built-in workload `name` on the RTX A6000 preset with `opts`.
fn run(name: &str, opts: &RunOptions) -> KernelRun {
    let r = common::run_builtin_a6000(name, None, opts, name);
    if opts.max_cycles == 0 {
        assert!(r.check.is_ok(), "{name}: {:?}", r.check);
    }
    r.run
}

fn opts(skip: bool, threads: usize, max_cycles: u64) -> RunOptions {
    RunOptions {
        threads,
        skip_idle_subcores: skip,
        max_cycles,
        ..RunOptions::default()
    }
}

/// Memory-bound kernels leave their SMs quiet for many cycles: those are skipped, and every
/// statistic, memory counter, cycle count and the occupancy are what ticking them gives.
#[test]
fn quiet_cycles_are_skipped_without_changing_results() {
    for name in ["vecadd", "saxpy", "histogram", "reduce"] {
        for threads in [1, 2] {
            let on = run(name, &opts(true, threads, 0));
            let off = run(name, &opts(false, threads, 0));
            assert_eq!(off.quiet_sm_cycles_skipped, 0, "{name}: skipping is off");
            assert!(
                on.quiet_sm_cycles_skipped > 0,
                "{name}, {threads} thread(s): no quiet SM-cycle was skipped"
            );
            assert!(
                on.quiet_sm_cycles_skipped < on.bare_cycles * u64::from(on.sms_used),
                "{name}: more skipped SM-cycles than SM-cycles"
            );
            assert_eq!(
                common::kernel_run_text(&on),
                common::kernel_run_text(&off),
                "{name}, {threads} thread(s): skipping quiet SM-cycles changed the results"
            );
        }
    }
}

/// A run stopped by a cycle limit may end while SMs skip: they count the cycles up to the
/// stop, as the ticks would have.
#[test]
fn runs_stopped_by_a_cycle_limit_count_the_skipped_cycles() {
    // The limit counts from the kernel's start (launch latency included).
    let full = run("vecadd", &opts(true, 1, 0)).cycles;
    let mut skipped_at_some_stop = false;
    for limit in [1_600, 1_777, 2_001, 2_400, 2_700, 3_000] {
        assert!(limit < full, "the limit {limit} must cut the run ({full} cycles)");
        let on = run("vecadd", &opts(true, 2, limit));
        let off = run("vecadd", &opts(false, 2, limit));
        assert!(on.stopped.is_some(), "limit {limit}: not stopped");
        skipped_at_some_stop |= on.quiet_sm_cycles_skipped > 0;
        assert_eq!(
            common::kernel_run_text(&on),
            common::kernel_run_text(&off),
            "stopped at {limit}: skipping changed the results"
        );
    }
    assert!(
        skipped_at_some_stop,
        "no run skipped a quiet cycle before its stop"
    );
}

/// The trace-driven engine (the BFS trace's 16 kernels, control bits inferred) skips quiet
/// SM-cycles with the same results (each kernel's statistics, memory counters, cycles).
#[test]
fn trace_driven_kernels_skip_quiet_cycles_with_the_same_results() {
    let list = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/traces/bfs-sm80-v3/kernelslist.g");
    let runs = |skip: bool| {
        let mut gpu = Gpu::new(GpuConfig::preset("rtx-a6000").expect("preset"));
        let o = RunOptions {
            threads: 2,
            skip_idle_subcores: skip,
            infer_control_bits: true,
            ..RunOptions::default()
        };
        sassim_gpu::trace_exec::run_kernelslist(&mut gpu, &list, &[], &o).expect("bfs trace")
    };
    let (on, off) = (runs(true), runs(false));
    assert_eq!(on.len(), 16);
    let skipped: u64 = on.iter().map(|r| r.run.quiet_sm_cycles_skipped).sum();
    assert!(skipped > 0, "no quiet SM-cycle of the BFS trace was skipped");
    for (k, (a, b)) in on.iter().zip(off.iter()).enumerate() {
        assert_eq!(b.run.quiet_sm_cycles_skipped, 0);
        assert_eq!(
            common::kernel_run_text(&a.run),
            common::kernel_run_text(&b.run),
            "BFS kernel {k}: skipping changed the results"
        );
    }
}

/// A memory-bound gather keeps its L1 full: the warps' loads are rejected (miss queue, MSHRs)
/// and retried every cycle while the sub-cores sleep. Those SMs are skipped too, their
/// retries counted when they catch up: every statistic and memory counter (the L1's
/// reservation failures by cause included) is what ticking them gives, on one and two
/// threads, for whole runs and runs stopped in the middle.
#[test]
fn rejected_retries_of_skipped_cycles_are_counted() {
    // Removed when the test ends, even by a failure.
    let dir = tempfile::tempdir().expect("temporary directory");
    let list = common::small_gather(dir.path());
    let run = |skip: bool, threads: usize, max_cycles: u64| {
        let mut gpu = Gpu::new(GpuConfig::preset("rtx-a6000").expect("preset"));
        let o = RunOptions {
            threads,
            skip_idle_subcores: skip,
            infer_control_bits: true,
            max_cycles,
            ..RunOptions::default()
        };
        let mut runs =
            sassim_gpu::trace_exec::run_kernelslist(&mut gpu, &list, &[], &o).expect("gather trace");
        assert_eq!(runs.len(), 1);
        runs.remove(0).run
    };
    for (threads, max_cycles) in [(1, 0), (2, 0), (1, 2_345), (2, 3_001)] {
        let on = run(true, threads, max_cycles);
        let off = run(false, threads, max_cycles);
        let fails = on.mem.as_ref().map_or(0, |m| m.l1d.reservation_fails);
        assert!(fails > 1_000, "the gather must fill the L1 ({fails} rejections)");
        assert!(
            on.quiet_sm_cycles_skipped > 0,
            "no SM-cycle of the gather was skipped ({threads} threads, limit {max_cycles})"
        );
        assert_eq!(
            common::kernel_run_text(&on),
            common::kernel_run_text(&off),
            "gather, {threads} thread(s), limit {max_cycles}: skipping changed the results"
        );
    }
}
