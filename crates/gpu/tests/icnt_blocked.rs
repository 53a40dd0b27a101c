//! The crossbars' blocked source-cycles reach the kernel report (`icnt_request_blocked`,
//! `icnt_response_blocked`): a head packet that cannot go is counted, in bulk while its
//! source sleeps (`Crossbar::stats`), and a narrower crossbar blocks more.

use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_gpu::workload::{load_builtin, run_workload_timed};
use sassim_gpu::{Gpu, RunOptions};

/// (request blocked, response blocked, request packets) of a vector add on every SM of the
/// RTX A6000 preset with `overrides`, on `threads` threads.
fn blocked(overrides: &[&str], threads: usize) -> (u64, u64, u64) {
    let b = sassim_workload::builtin()
        .into_iter()
        .find(|b| b.name == "vecadd")
        .expect("built-in vecadd");
    let (mut w, listing, smem) = load_builtin(&b, "sm_86").expect("load");
    w.grid = [84, 1, 1];
    let sets: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let cfg = GpuConfig::preset("rtx-a6000")
        .expect("preset")
        .with_overrides(&sets)
        .expect("overrides");
    let opts = RunOptions {
        threads,
        ..RunOptions::default()
    };
    let r = run_workload_timed(
        &mut Gpu::new(cfg),
        &w,
        &listing,
        "sm_86",
        smem,
        ControlFlowKind::Hanoi,
        &opts,
    )
    .expect("vecadd runs");
    assert!(r.check.is_ok(), "{:?}", r.check);
    let m = r.run.mem.expect("memory report");
    (
        m.icnt_request_blocked,
        m.icnt_response_blocked,
        m.icnt_request_packets,
    )
}

#[test]
fn a_narrower_crossbar_blocks_more_source_cycles() {
    let wide = blocked(&[], 1);
    // One flit per cycle instead of the preset's: every packet takes longer to leave.
    let narrow = blocked(&["icnt.flits_per_cycle=1", "icnt.flit_bytes=8"], 1);
    assert_eq!(wide.2, narrow.2, "the same requests cross either way");
    assert!(
        narrow.0 > wide.0,
        "request blocked: narrow {} <= wide {}",
        narrow.0,
        wide.0
    );
    assert!(
        narrow.1 > wide.1,
        "response blocked: narrow {} <= wide {}",
        narrow.1,
        wide.1
    );
    assert!(narrow.1 > 0 && narrow.0 > 0);
    // The bulk count of sleeping sources does not depend on the thread count.
    assert_eq!(
        narrow,
        blocked(&["icnt.flits_per_cycle=1", "icnt.flit_bytes=8"], 2)
    );
}
