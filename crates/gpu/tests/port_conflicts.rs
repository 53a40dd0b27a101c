//! Register-file port conflicts delay a fixed-latency producer in Allocate, but the stall counter
//! the compiler sets for it still covers its consumers: "the stall-counter value needed for
//! correctness is constant regardless of the number of RF port conflicts" (MICRO'25 5.3, rule 22).
//!
//! The `flops` workload (2 full SMs of dependent FFMA chains, two of three operands in one bank)
//! keeps Allocate busy; its final `LEA; LEA.HI.X (stall 5); STG [R2.64]` reads the address on the
//! compiler's schedule while other warps' FFMAs hold the ports. Before the fix the STG read a
//! stale R3 and the run failed with an illegal address.

use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_gpu::workload::{load_builtin, run_workload_timed};
use sassim_gpu::{Gpu, RunOptions};

fn run(sets: &[&str]) -> sassim_gpu::workload::WorkloadRun {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let cfg = GpuConfig::load("rtx-a6000", &sets).unwrap();
    let b = sassim_workload::builtin_named("flops").unwrap();
    let (w, listing, smem) = load_builtin(&b, "sm_86").unwrap();
    let mut gpu = Gpu::new(cfg);
    run_workload_timed(
        &mut gpu,
        &w,
        &listing,
        "sm_86",
        smem,
        ControlFlowKind::Hanoi,
        &RunOptions::default(),
    )
    .unwrap()
}

#[test]
fn producers_delayed_by_port_conflicts_are_visible_on_the_compilers_schedule() {
    let one = run(&[]);
    assert!(
        one.run.stats.allocate_stall_cycles > 1000,
        "{}",
        one.run.stats.allocate_stall_cycles
    );
    one.check.as_ref().unwrap();
    // Two read ports per bank remove the conflicts: faster, same values.
    let two = run(&["regfile.read_ports_per_bank=2"]);
    two.check.as_ref().unwrap();
    assert_eq!(two.run.stats.allocate_stall_cycles, 0);
    assert!(two.run.cycles < one.run.cycles);
}

/// A latency-2 producer (`ULDC UR6` at stall 2 in the sm_90 `flops` listing) is still in
/// Allocate when its consumer issues, in the cycle it entered it: the consumer must see the
/// value on the compiler's schedule all the same. Before, 24 warps read the stale UR6 on the
/// H100 and stored their results at the wrong place (768 of 2,048 outputs wrong).
#[test]
fn consumer_of_a_producer_still_in_allocate_reads_its_result() {
    let cfg = sassim_config::GpuConfig::preset("h100").expect("preset");
    let b = sassim_workload::builtin()
        .into_iter()
        .find(|b| b.name == "flops")
        .expect("flops");
    let (w, listing, smem) = sassim_gpu::workload::load_builtin(&b, "sm_90").expect("listing");
    let mut gpu = sassim_gpu::Gpu::new(cfg);
    let r = sassim_gpu::workload::run_workload_timed(
        &mut gpu,
        &w,
        &listing,
        "sm_90",
        smem,
        sassim_functional::ControlFlowKind::Hanoi,
        &sassim_gpu::RunOptions::default(),
    )
    .expect("run");
    assert!(r.check.is_ok(), "{:?}", r.check);
}
