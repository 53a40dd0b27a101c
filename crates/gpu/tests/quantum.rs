//! Quanta of several cycles for trace-driven kernels (`quantum.rs`, issue 15): the memory
//! system's back half runs the quantum first, each SM then steps through it on its own, and
//! the serial part and the front half follow cycle by cycle. Every statistic, memory
//! counter and cycle count must be what running the cycles one by one gives, on one, two
//! and four threads, for whole runs and runs stopped by a cycle limit.

mod common;

use sassim_config::GpuConfig;
use sassim_gpu::{Gpu, RunOptions};

/// Runs the kernels of `list` with `quantum` and `threads`; (text of each kernel's run,
/// cycles run in quanta).
fn run(list: &std::path::Path, quantum: u64, threads: usize, max_cycles: u64) -> (Vec<String>, u64) {
    let mut gpu = Gpu::new(GpuConfig::preset("rtx-a6000").expect("preset"));
    let o = RunOptions {
        threads,
        trace_quantum: quantum,
        infer_control_bits: true,
        max_cycles,
        ..RunOptions::default()
    };
    let runs = sassim_gpu::trace_exec::run_kernelslist(&mut gpu, list, &[], &o).expect("trace");
    let texts = runs.iter().map(|r| common::kernel_run_text(&r.run)).collect();
    (texts, runs.iter().map(|r| r.run.quantum_cycles).sum())
}

fn same(name: &str, a: &[String], b: &[String]) {
    assert_eq!(a.len(), b.len(), "{name}: kernels");
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(x, y, "{name}: kernel {k} differs");
    }
}

/// The BFS trace (16 kernels of 8 CTAs, memory-latency bound).
#[test]
fn bfs_in_quanta_gives_the_cycle_by_cycle_results() {
    let list = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/traces/bfs-sm80-v3/kernelslist.g");
    let (base, none) = run(&list, 1, 1, 0);
    assert_eq!(none, 0);
    for (quantum, threads) in [(32, 1), (32, 2), (7, 4), (200, 2)] {
        let (r, cycles) = run(&list, quantum, threads, 0);
        assert!(
            cycles > 10_000,
            "quantum {quantum}: only {cycles} cycles in quanta"
        );
        same(&format!("BFS, quantum {quantum}, {threads} threads"), &base, &r);
    }
}

/// Kernels that end inside a quantum (the sm_80 vector add: one kernel, almost all of its
/// cycles in quanta; BFS: 16 kernels): the drain after the kernel starts with the cycles the
/// memory system's back half has run, and undoes them when it finds the memory idle.
#[test]
fn kernels_ending_in_a_quantum_drain_as_cycle_by_cycle() {
    let list = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/traces/vectoradd-sm80-v5/kernelslist.g");
    let (base, _) = run(&list, 1, 1, 0);
    for (quantum, threads) in [(32, 1), (32, 2), (5, 2)] {
        let (r, cycles) = run(&list, quantum, threads, 0);
        assert!(
            cycles > 3_000,
            "quantum {quantum}: only {cycles} cycles in quanta"
        );
        same(
            &format!("vector add, quantum {quantum}, {threads} threads"),
            &base,
            &r,
        );
    }
}

/// A memory-bound gather (every load touches 32 lines; L1s, crossbars and L2 slices full),
/// whole and stopped in the middle of the kernel.
#[test]
fn a_memory_bound_gather_in_quanta_gives_the_cycle_by_cycle_results() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let list = common::small_gather(dir.path());
    for max_cycles in [0, 2_345] {
        let (base, _) = run(&list, 1, 1, max_cycles);
        for threads in [1, 2] {
            let (r, in_quanta) = run(&list, 32, threads, max_cycles);
            assert!(in_quanta > 0, "gather, limit {max_cycles}: no quantum");
            same(
                &format!("gather, limit {max_cycles}, {threads} threads"),
                &base,
                &r,
            );
        }
    }
}
