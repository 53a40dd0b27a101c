//! The short whole-simulator fuzzing budget of the test command (docs/reliability.md): a
//! few mutated inputs of every kind through the real `sassim` binary, and every saved
//! regression input. Each run must end within its time limit with a result or a clean
//! error (exit 0-3, no panic, no signal) and stay under 1 GiB of peak RSS.

use sassim_fuzz::sim::run_sassim;
use sassim_fuzz::{repo_root, sim_args, Corpus, Kind};
use std::path::{Path, PathBuf};
use std::time::Duration;

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

const RUNS: u64 = 6;
const RSS_MB: u64 = 1024;
/// `--max-wall` of each run; a run must end within this plus a margin for loading.
const WALL: u64 = 8;

fn sassim() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_sassim"))
}

fn dir(tag: &str) -> PathBuf {
    scratch(&format!("fuzz-sim-{tag}"))
}

fn check(kind: Kind, seed: &str, input: &[u8], d: &Path, what: &str) {
    std::fs::remove_dir_all(d).ok();
    let args = sim_args(kind, seed, input, &repo_root(), d, WALL).unwrap();
    let o = run_sassim(&sassim(), &args, d, Duration::from_secs(WALL + 20)).unwrap();
    if let Some(f) = o.finding(RSS_MB) {
        panic!(
            "{}: {what}: {f} (exit {}, {} ms, {} MiB): sassim {}\n{}",
            kind.name(),
            o.code,
            o.ms,
            o.peak_rss_mb,
            args.join(" "),
            o.stderr
        );
    }
}

#[test]
fn mutated_inputs_through_the_simulator() {
    for kind in Kind::ALL {
        if !kind.available() {
            continue;
        }
        let d = dir(kind.name());
        let enc = dir(&format!("{}-enc", kind.name()));
        std::fs::create_dir_all(&enc).unwrap();
        let corpus = Corpus::load(kind, &repo_root(), &enc).unwrap();
        for i in 0..RUNS {
            let (which, input) = corpus.input(11, i, &enc);
            check(
                kind,
                &corpus.seeds[which].0,
                &input,
                &d,
                &format!("input {i} of seed 11"),
            );
        }
        std::fs::remove_dir_all(&d).ok();
        std::fs::remove_dir_all(&enc).ok();
    }
}

#[test]
fn saved_regressions_through_the_simulator() {
    let base = repo_root().join("crates/fuzz/regressions");
    let mut n = 0;
    for kind in Kind::ALL {
        let Ok(rd) = std::fs::read_dir(base.join(kind.name())) else {
            continue;
        };
        let d = dir(&format!("regr-{}", kind.name()));
        for e in rd.flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".note") {
                continue;
            }
            // `vecadd-...`: mutated from that workload's files (a spec: its spec file, in
            // workloads/<w>/ or workloads/calibration/<w>/).
            let w = name.split('-').next().unwrap_or("vecadd");
            let seed = match kind {
                Kind::Spec => [
                    format!("workloads/{w}/{w}.toml"),
                    format!("workloads/calibration/{w}/{w}.toml"),
                ]
                .into_iter()
                .find(|s| repo_root().join(s).is_file())
                .unwrap_or_else(|| "workloads/vecadd/vecadd.toml".into()),
                // A program's fat-binary section, mutated (the program of that name).
                Kind::Cubin => format!("workloads/programs/bin/{w}"),
                _ => format!("workloads/{w}/"),
            };
            check(kind, &seed, &std::fs::read(&p).unwrap(), &d, &name);
            n += 1;
        }
        std::fs::remove_dir_all(&d).ok();
    }
    assert!(n >= 20, "regression inputs: {n}");
}
