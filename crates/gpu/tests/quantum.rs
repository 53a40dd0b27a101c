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
    run_on(list, 0, quantum, threads, max_cycles)
}

/// [`run`] on an RTX A6000 with `sms` SMs (0: its own 84).
fn run_on(
    list: &std::path::Path,
    sms: u32,
    quantum: u64,
    threads: usize,
    max_cycles: u64,
) -> (Vec<String>, u64) {
    let mut cfg = GpuConfig::preset("rtx-a6000").expect("preset");
    if sms > 0 {
        cfg.gpu.num_sms = sms;
    }
    let mut gpu = Gpu::new(cfg);
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

/// CTAs in waves (the sm_80 vector add's 196 CTAs on 8 SMs that hold 6 each): while CTAs
/// are being sent, the SMs they may go to step alone from a quantum's start, the
/// dispatcher and the launchers run in the serial part, and a CTA finishing stops its SM's
/// own steps. Whole and stopped by cycle limits in the middle of the waves.
#[test]
fn ctas_sent_in_waves_during_quanta_give_the_cycle_by_cycle_results() {
    let list = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/traces/vectoradd-sm80-v5/kernelslist.g");
    for max_cycles in [0, 2_500, 3_333] {
        let (base, none) = run_on(&list, 8, 1, 1, max_cycles);
        assert_eq!(none, 0);
        let cycles: u64 = base
            .iter()
            .filter_map(|t| {
                t.strip_prefix("cycles ")?
                    .split_whitespace()
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .sum();
        assert!(cycles >= 2_500, "limit {max_cycles}: {cycles} cycles");
        let mut on_one = std::collections::BTreeMap::new();
        for (quantum, threads) in [(32, 1), (32, 2), (7, 1), (7, 4)] {
            let (r, in_quanta) = run_on(&list, 8, quantum, threads, max_cycles);
            // The launch latency (1,500 cycles) and most of the first 1,300 cycles of waves
            // run in quanta, and more than half of all the waves.
            let waves = in_quanta.saturating_sub(1_500);
            assert!(
                waves * 4 >= (cycles.min(2_800) - 1_500) * 3,
                "limit {max_cycles}, quantum {quantum}, {threads} threads: {in_quanta} of {cycles} cycles in quanta"
            );
            assert!(
                waves * 2 > cycles - 1_500,
                "{threads} threads: {in_quanta} of {cycles} cycles in quanta"
            );
            // Which cycles run in quanta does not depend on the thread count (one bar,
            // `quantum::PAYING_SHARE`: with a higher one on two threads the compute-bound
            // waves trace ran 39 % of its SM-ticks outside quanta there; twenty-fourth
            // session).
            let one = *on_one.entry(quantum).or_insert(in_quanta);
            assert_eq!(
                in_quanta, one,
                "limit {max_cycles}, quantum {quantum}: cycles in quanta on {threads} threads and on one"
            );
            same(
                &format!("vector add on 8 SMs, limit {max_cycles}, quantum {quantum}, {threads} threads"),
                &base,
                &r,
            );
        }
    }
}

/// A trace of `ctas` CTAs of one warp that moves a register and exits (tracer version 5).
fn tiny_ctas(dir: &std::path::Path, ctas: u32) -> std::path::PathBuf {
    use std::fmt::Write as _;
    let mut t = String::new();
    t.push_str("-kernel name = _Z4tinyv\n-kernel id = 1\n");
    let _ = write!(t, "-grid dim = ({ctas},1,1)\n-block dim = (32,1,1)\n");
    t.push_str("-shmem = 0\n-nregs = 8\n-binary version = 86\n-cuda stream id = 0\n");
    t.push_str("-shmem base_addr = 0x00007fb139000000\n-local mem base_addr = 0x00007fb137000000\n");
    t.push_str("-nvbit version = 1.7\n-accelsim tracer version = 5\n-enable lineinfo = 0\n\n");
    for c in 0..ctas {
        let _ = write!(
            t,
            "#BEGIN_TB\n\nthread block = {c},0,0\n\nwarp = 0\ninsts = 2\n\
             0000 ffffffff 1 R0 MOV 0 0 0 \n0010 ffffffff 0 EXIT 0 0 0 \n\n#END_TB\n\n"
        );
    }
    std::fs::write(dir.join("kernel-1.traceg"), t).expect("trace");
    let list = dir.join("kernelslist.g");
    std::fs::write(&list, "kernel-1.traceg\n").expect("kernelslist");
    list
}

/// CTAs that live a few cycles, so that the last ones are sent, run and finish within one
/// quantum: a quantum that starts while CTAs are being sent may see the kernel end (the
/// drain then starts from the memory system's back half, as for any kernel ending in a
/// quantum).
#[test]
fn a_kernel_can_end_in_the_quantum_that_sends_its_last_ctas() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let list = tiny_ctas(dir.path(), 1_000);
    let (base, _) = run_on(&list, 8, 1, 1, 0);
    for (quantum, threads) in [(32, 1), (32, 2), (7, 2)] {
        let (r, in_quanta) = run_on(&list, 8, quantum, threads, 0);
        assert!(
            in_quanta > 1_500,
            "quantum {quantum}: {in_quanta} cycles in quanta"
        );
        same(
            &format!("tiny CTAs, quantum {quantum}, {threads} threads"),
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
