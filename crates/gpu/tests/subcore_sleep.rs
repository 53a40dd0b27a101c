//! Sub-core sleep (`sassim_timing::sleep`, issue 15) on whole kernels: every built-in
//! workload (execution-driven, RTX A6000 and H100 presets) and the BFS trace give the same
//! statistics, memory counters and cycles with sub-cores sleeping through their idle cycles
//! as without, and the kernels still compute their reference outputs.

mod common;

use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_gpu::workload::{load_builtin, run_workload_timed};
use sassim_gpu::{Gpu, RunOptions};

/// Everything a run reports, as text.
fn run_text(preset: &str, name: &str, skip: bool) -> String {
    let b = sassim_workload::builtin_named(name).expect("built-in workload");
    let arch = if preset == "h100" { "sm_90" } else { "sm_86" };
    let (w, listing, smem) = load_builtin(&b, arch).expect("load");
    let mut gpu = Gpu::new(GpuConfig::preset(preset).expect("preset"));
    let opts = RunOptions {
        threads: 2,
        skip_idle_subcores: skip,
        ..RunOptions::default()
    };
    let r = run_workload_timed(&mut gpu, &w, &listing, arch, smem, ControlFlowKind::Hanoi, &opts)
        .unwrap_or_else(|e| panic!("{preset} {name}, sleep {skip}: {e}"));
    assert!(r.check.is_ok(), "{preset} {name}, sleep {skip}: {:?}", r.check);
    common::kernel_run_text(&r.run)
}

fn suite_is_the_same(preset: &str) {
    for b in sassim_workload::builtin() {
        let on = run_text(preset, b.name, true);
        let off = run_text(preset, b.name, false);
        assert!(
            on == off,
            "{preset} {}: sleep changes results:\n{on}\n---\n{off}",
            b.name
        );
    }
}

#[test]
fn builtin_workloads_on_rtx_a6000_do_not_depend_on_sleep() {
    suite_is_the_same("rtx-a6000");
}

#[test]
fn builtin_workloads_on_h100_do_not_depend_on_sleep() {
    suite_is_the_same("h100");
}

/// The BFS trace (Accel-Sim tracer v3, 16 kernels, control bits inferred).
#[test]
fn bfs_trace_does_not_depend_on_sleep() {
    // Control bits inferred (what `sassim run --trace` does): sleep needs them.
    let run = |skip: bool| {
        common::bfs_trace_text(&RunOptions {
            skip_idle_subcores: skip,
            infer_control_bits: true,
            ..RunOptions::default()
        })
    };
    assert_eq!(run(true), run(false));
}
