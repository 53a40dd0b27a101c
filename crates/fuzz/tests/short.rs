//! The short fuzzing budget of the test command (docs/reliability.md): a few hundred
//! mutated inputs per kind through the parsers and validators in process, and every saved
//! regression input. Any panic fails the test; so does an input slower than 5 s.

use sassim_fuzz::{parse, prepare_scratch, repo_root, Corpus, Kind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const RUNS: u64 = 300;
const SLOW: Duration = Duration::from_secs(5);

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

fn scratch(kind: Kind, tag: &str) -> PathBuf {
    let d = SCRATCH.with(|s| s.path().join(format!("{}-{tag}", kind.name())));
    prepare_scratch(kind, &repo_root(), &d).unwrap();
    d
}

fn run_one(kind: Kind, input: &[u8], dir: &std::path::Path, what: &str) -> bool {
    let t = Instant::now();
    let r = std::panic::catch_unwind(|| parse(kind, input, dir));
    assert!(r.is_ok(), "{}: {what} panicked", kind.name());
    assert!(
        t.elapsed() < SLOW,
        "{}: {what} took {:?}",
        kind.name(),
        t.elapsed()
    );
    r.unwrap().is_ok()
}

#[test]
fn mutated_inputs_of_every_kind() {
    let mut summary = Vec::new();
    for kind in Kind::ALL {
        if !kind.available() {
            continue;
        }
        let dir = scratch(kind, "short");
        let corpus = Corpus::load(kind, &repo_root(), &dir).unwrap();
        // The seeds themselves are valid inputs.
        for (name, bytes) in &corpus.seeds {
            if kind != Kind::Correlate {
                assert!(
                    run_one(kind, bytes, &dir, name),
                    "{}: seed {name} is rejected",
                    kind.name()
                );
            }
        }
        let mut accepted = 0;
        for i in 0..RUNS {
            let (_, input) = corpus.input(7, i, &dir);
            accepted += u32::from(run_one(kind, &input, &dir, &format!("input {i} of seed 7")));
        }
        summary.push(format!("{} {accepted}/{RUNS}", kind.name()));
        std::fs::remove_dir_all(&dir).ok();
    }
    eprintln!("accepted: {}", summary.join(", "));
}

#[test]
fn saved_regressions_end_cleanly() {
    let base = repo_root().join("crates/fuzz/regressions");
    let mut n = 0;
    for kind in Kind::ALL {
        let Ok(rd) = std::fs::read_dir(base.join(kind.name())) else {
            continue;
        };
        let dir = scratch(kind, "regr");
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "note") {
                continue;
            }
            let input = std::fs::read(&p).unwrap();
            run_one(kind, &input, &dir, &p.display().to_string());
            n += 1;
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    assert!(n >= 20, "regression inputs found: {n}");
}

/// The issue-18 inputs are refused with errors that name the key or line.
#[test]
fn issue_cases_are_refused_by_name() {
    let base = repo_root().join("crates/fuzz/regressions");
    let dir = scratch(Kind::Set, "issue");
    for e in std::fs::read_dir(base.join("set")).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap();
        let key = text.split('=').next().unwrap().trim().to_string();
        let err = parse(Kind::Set, text.as_bytes(), &dir).unwrap_err();
        assert!(
            err.contains(&format!("`{key}`")) || err.contains("dram.burst_length"),
            "{text}: {err}"
        );
    }
    let text = std::fs::read(base.join("listing/vecadd-pc-repeated-hang-107.txt")).unwrap();
    let err = parse(Kind::Listing, &text, &dir).unwrap_err();
    assert!(err.contains("does not follow the previous one"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
