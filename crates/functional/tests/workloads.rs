//! Every workload of the suite runs functionally on sm_75, sm_86 and sm_90 under both
//! control-flow managers, with outputs verified by the workload's checker.

use sassim_functional::{run_workload, ControlFlowKind, ExecError};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(name: &str, arch: &str, cf: ControlFlowKind) -> Result<String, ExecError> {
    let dir = root().join("workloads").join(name);
    let spec = sassim_workload::Workload::load(dir.join(format!("{name}.toml"))).expect("spec");
    let sm = arch.trim_start_matches("sm_");
    let file = dir.join(format!("{name}_sm{sm}.cuobjdump-sass.txt"));
    let text = std::fs::read_to_string(&file).expect("listing");
    let listing = sassim_sass::parse_listing(&text, &file.display().to_string()).expect("parse");
    let r = run_workload(&spec, &listing, arch, cf)?;
    Ok(format!(
        "{} ({} warp instrs, {} thread instrs)",
        r.check, r.stats.warp_instructions, r.stats.thread_instructions
    ))
}

fn check_all(name: &str, simt_ok: bool) {
    let dir = root().join("workloads").join(name);
    if !dir.join(format!("{name}.toml")).exists() {
        eprintln!("{name}: no spec yet, skipped");
        return;
    }
    for arch in ["sm_75", "sm_86", "sm_90"] {
        let r = run(name, arch, ControlFlowKind::Hanoi);
        match r {
            Ok(s) => eprintln!("{arch} hanoi: {s}"),
            Err(e) => panic!("{name} {arch} hanoi: {e}"),
        }
        let r = run(name, arch, ControlFlowKind::SimtStack);
        match (r, simt_ok) {
            (Ok(s), true) => eprintln!("{arch} simt: {s}"),
            (Err(e), true) => panic!("{name} {arch} simt: {e}"),
            (Err(ExecError::Deadlock(d)), false) => eprintln!("{arch} simt: expected deadlock: {d}"),
            (r, false) => panic!("{name} {arch} simt: expected a deadlock, got {r:?}"),
        }
    }
}

#[test]
fn vecadd() {
    check_all("vecadd", true);
}
#[test]
fn saxpy() {
    check_all("saxpy", true);
}
#[test]
fn reduce() {
    check_all("reduce", true);
}
#[test]
fn matmul() {
    check_all("matmul", true);
}
#[test]
fn histogram() {
    check_all("histogram", true);
}
#[test]
fn divergent() {
    check_all("divergent", true);
}
#[test]
fn shfl_reduce() {
    check_all("shfl_reduce", true);
}
/// The intra-warp spinlock finishes under Hanoi (YIELD) and deadlocks under the pre-Volta
/// SIMT stack, as in the Hanoi paper's section III/VI-C.
#[test]
fn spinlock() {
    check_all("spinlock", false);
}

fn spin_opts(yield_as_nop: bool, yield_release: bool) -> sassim_functional::RunOptions {
    sassim_functional::RunOptions {
        exec: sassim_functional::ExecOptions {
            yield_as_nop,
            yield_release,
            ..Default::default()
        },
        deadlock_steps: 100_000,
        ..Default::default()
    }
}

fn spin_run(arch: &str, opts: &sassim_functional::RunOptions) -> Result<(), ExecError> {
    let dir = root().join("workloads/spinlock");
    let spec = sassim_workload::Workload::load(dir.join("spinlock.toml")).expect("spec");
    let sm = arch.trim_start_matches("sm_");
    let text = std::fs::read_to_string(dir.join(format!("spinlock_sm{sm}.cuobjdump-sass.txt"))).unwrap();
    let listing = sassim_sass::parse_listing(&text, "spinlock").unwrap();
    sassim_functional::runner::run_workload_with(&spec, &listing, arch, ControlFlowKind::Hanoi, opts)
        .map(|_| ())
}

/// With YIELD treated as a NOP the spinlock stops with a deadlock report (bounded steps).
#[test]
fn spinlock_yield_as_nop_deadlocks() {
    for arch in ["sm_75", "sm_86", "sm_90"] {
        match spin_run(arch, &spin_opts(true, true)) {
            Err(ExecError::Deadlock(m)) => {
                assert!(m.contains("spinning"), "{m}");
                eprintln!("{arch}: {m}");
            }
            r => panic!("{arch}: expected a deadlock, got {r:?}"),
        }
    }
}

/// CUDA 13 places BSYNC before the critical section on sm_86/sm_90: with the paper's YIELD
/// alone (sibling swap, otherwise NOP) the lock holder waits at BSYNC while the others spin;
/// the yielded-state release (convergence-barrier patent) is what lets it finish. sm_75 has
/// no BSSY/BSYNC around the loop and needs only the sibling swap.
#[test]
fn spinlock_needs_yield_release_on_sm86_sm90() {
    assert!(spin_run("sm_75", &spin_opts(false, false)).is_ok());
    for arch in ["sm_86", "sm_90"] {
        match spin_run(arch, &spin_opts(false, false)) {
            Err(ExecError::Deadlock(m)) => eprintln!("{arch}: {m}"),
            r => panic!("{arch}: expected a deadlock, got {r:?}"),
        }
    }
}

/// Control-flow traces of Hanoi and the SIMT stack on the divergent workload, compared with
/// the Hanoi paper's metric.
#[test]
fn cflow_compare_hanoi_vs_simt() {
    let dir = root().join("workloads/divergent");
    let spec = sassim_workload::Workload::load(dir.join("divergent.toml")).expect("spec");
    for arch in ["sm_75", "sm_86", "sm_90"] {
        let sm = arch.trim_start_matches("sm_");
        let text = std::fs::read_to_string(dir.join(format!("divergent_sm{sm}.cuobjdump-sass.txt"))).unwrap();
        let listing = sassim_sass::parse_listing(&text, "divergent").unwrap();
        let opts = sassim_functional::RunOptions {
            exec: sassim_functional::ExecOptions {
                record_cflow_trace: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let h = sassim_functional::runner::run_workload_with(
            &spec,
            &listing,
            arch,
            ControlFlowKind::Hanoi,
            &opts,
        )
        .unwrap();
        let s = sassim_functional::runner::run_workload_with(
            &spec,
            &listing,
            arch,
            ControlFlowKind::SimtStack,
            &opts,
        )
        .unwrap();
        assert!(!h.traces.is_empty() && h.traces.iter().all(|t| !t.entries.is_empty()));
        assert_eq!(
            sassim_functional::cflow_compare(&h.traces, &h.traces).overall,
            0.0
        );
        let r = sassim_functional::cflow_compare(&h.traces, &s.traces);
        assert_eq!(r.unmatched, 0);
        assert!(r.overall < 1.0);
        eprintln!(
            "{arch}: Hanoi vs SIMT stack discrepancy {:.2}%",
            100.0 * r.overall
        );
    }
}
