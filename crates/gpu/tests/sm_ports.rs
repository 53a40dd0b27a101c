//! The SMs' responses and requests moved at their interconnect ports in their own step
//! (`RunOptions::sm_ports`, the default) or by the serial part of each cycle through their
//! inboxes and outboxes: every statistic is the same, on one thread and on two, for
//! execution-driven kernels (global atomics, a vector add on every SM) and the BFS trace.

mod common;

use sassim_gpu::RunOptions;

/// Everything a run of built-in workload `name` reports, as text.
fn run_text(name: &str, grid: Option<u32>, opts: &RunOptions) -> String {
    let r = common::run_builtin_a6000(name, grid, opts, name);
    assert!(r.check.is_ok(), "{name}: {:?}", r.check);
    common::kernel_run_text(&r.run)
}

fn opts(sm_ports: bool, threads: usize) -> RunOptions {
    RunOptions {
        sm_ports,
        threads,
        ..RunOptions::default()
    }
}

#[test]
fn ports_in_the_sm_step_change_no_statistic() {
    for (name, grid) in [("histogram", Some(64)), ("vecadd", Some(84))] {
        let serial = run_text(name, grid, &opts(false, 1));
        assert!(serial.contains("l2"), "{name}: no memory statistics in\n{serial}");
        for threads in [1, 2] {
            let at_ports = run_text(name, grid, &opts(true, threads));
            assert!(
                serial == at_ports,
                "{name}, {threads} threads: ports differ from the serial delivery:\n{serial}\n---\n{at_ports}"
            );
        }
    }
}

#[test]
fn ports_in_the_sm_step_change_no_statistic_of_a_trace() {
    let serial = common::bfs_trace_text(&opts(false, 1));
    assert_eq!(serial, common::bfs_trace_text(&opts(true, 1)));
    assert_eq!(serial, common::bfs_trace_text(&opts(true, 2)));
}
