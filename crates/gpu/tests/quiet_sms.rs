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

/// A memory-bound random gather (the trace `scripts/gen-gather-trace.py` writes, smaller:
/// 336 CTAs of 8 warps, two gathers each), written to a fresh directory.
fn gather_trace(dir: &std::path::Path) -> std::path::PathBuf {
    use std::fmt::Write;
    std::fs::create_dir_all(dir).expect("trace directory");
    let mut t = String::from(
        "-kernel name = _Z6gatherPKfPKjPf\n-kernel id = 1\n-grid dim = (336,1,1)\n\
         -block dim = (256,1,1)\n-shmem = 0\n-nregs = 16\n-binary version = 86\n\
         -cuda stream id = 0\n-shmem base_addr = 0x00007fb139000000\n\
         -local mem base_addr = 0x00007fb137000000\n-nvbit version = 1.7\n\
         -accelsim tracer version = 5\n-enable lineinfo = 0\n\n",
    );
    // xorshift64: the same addresses every run.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for cta in 0..336u64 {
        let _ = write!(t, "#BEGIN_TB\n\nthread block = {cta},0,0\n\n");
        for w in 0..8u64 {
            let mut lines = vec![
                "0000 ffffffff 1 R0 S2R 0 0 0 ".to_string(),
                "0010 ffffffff 1 R1 IMAD 2 R0 R0 0 0 ".to_string(),
                "0020 ffffffff 1 R2 MOV 0 0 0 ".to_string(),
            ];
            for g in 0..2u64 {
                let addrs: Vec<String> = (0..32)
                    .map(|_| format!("{:#x}", 0x7F00_0000_0000u64 + 4 * (next() % (64 << 20))))
                    .collect();
                lines.push(format!(
                    "{:04x} ffffffff 1 R{} LDG.E 1 R1 4 0 {} 0 ",
                    0x30 + 0x10 * g,
                    4 + g,
                    addrs.join(" ")
                ));
            }
            for g in 0..2u64 {
                lines.push(format!(
                    "{:04x} ffffffff 1 R2 FADD 2 R2 R{} 0 0 ",
                    0x50 + 0x10 * g,
                    4 + g
                ));
            }
            let base = 0x7F10_0000_0000u64 + 4 * (cta * 8 + w) * 32;
            lines.push(format!("0070 ffffffff 0 STG.E 2 R1 R2 4 1 {base:#x} 4 0 "));
            lines.push("0080 ffffffff 0 EXIT 0 0 0 ".to_string());
            let _ = write!(t, "warp = {w}\ninsts = {}\n{}\n\n", lines.len(), lines.join("\n"));
        }
        t.push_str("#END_TB\n\n");
    }
    std::fs::write(dir.join("kernel-1.traceg"), t).expect("trace");
    std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg\n").expect("kernel list");
    dir.join("kernelslist.g")
}

/// A memory-bound gather keeps its L1 full: the warps' loads are rejected (miss queue, MSHRs)
/// and retried every cycle while the sub-cores sleep. Those SMs are skipped too, their
/// retries counted when they catch up: every statistic and memory counter (the L1's
/// reservation failures by cause included) is what ticking them gives, on one and two
/// threads, for whole runs and runs stopped in the middle.
#[test]
fn rejected_retries_of_skipped_cycles_are_counted() {
    let dir = std::env::temp_dir().join(format!("sassim-quiet-gather-{}", std::process::id()));
    let list = gather_trace(&dir);
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
    let _ = std::fs::remove_dir_all(&dir);
}
