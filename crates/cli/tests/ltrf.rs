//! `sassim ltrf analyze` (issue 14, point 1): the LTRF compiler pass on a listing, as text and
//! JSON, with the paper's parameters.

use std::path::PathBuf;
use std::process::Command;

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

fn listing(w: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../workloads/{w}/{w}_sm86.cuobjdump-sass.txt"))
}

/// vecadd on sm_86 with 8 registers per interval: three intervals (the bounds check's
/// `@P0 EXIT` ends the first; the loads and the store form the rest), the first prefetching
/// the 8 registers its 16 instructions access, none of them live on entry (every one is
/// written before it is read), and no bank conflict among 16 banks; renumbering keeps that.
#[test]
fn analyze_vecadd_reports_intervals_prefetches_and_renumbering() {
    let dir = scratch("ltrf");
    std::fs::create_dir_all(&dir).expect("dir");
    let json = dir.join("vecadd.json");
    let out = Command::new(env!("CARGO_BIN_EXE_sassim"))
        .args(["ltrf", "analyze"])
        .arg(listing("vecadd"))
        .args([
            "--registers",
            "8",
            "--renumber",
            "--prefetches",
            "--force",
            "--json",
        ])
        .arg(&json)
        .output()
        .expect("sassim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("vecadd: 32 instructions, 3 intervals"), "{text}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).expect("json")).expect("parse");
    let k = &v["kernels"][0];
    assert_eq!(v["options"]["registers_per_interval"], 8);
    assert_eq!(k["intervals"], 3);
    assert_eq!(
        k["prefetches"][0]["working_set"].as_array().map(Vec::len),
        Some(8)
    );
    assert_eq!(k["prefetched_registers_live"], 0);
    assert_eq!(k["conflict_free_share"], 1.0);
    assert!(k["renumbering"]["refused"].is_null());
    assert_eq!(k["renumbering"]["conflicts_after"], 0);
    // Every working set holds at most N registers.
    for p in k["prefetches"].as_array().expect("prefetches") {
        assert!(p["working_set"].as_array().expect("set").len() <= 8, "{p}");
    }
    // The JSON is not overwritten without --force; bad parameters are refused.
    let again = Command::new(env!("CARGO_BIN_EXE_sassim"))
        .args(["ltrf", "analyze"])
        .arg(listing("vecadd"))
        .arg("--json")
        .arg(&json)
        .output()
        .expect("sassim");
    assert_eq!(again.status.code(), Some(2));
    let bad = Command::new(env!("CARGO_BIN_EXE_sassim"))
        .args(["ltrf", "analyze"])
        .arg(listing("vecadd"))
        .args(["--registers", "0"])
        .output()
        .expect("sassim");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--registers 0"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sassim ltrf lengths` (the paper's Table 4): vecadd's warps run one interval of 16
/// instructions each, as long as the optimal split; spinlock's spin loop crosses intervals
/// (real runs of 15 instructions) though its whole stream fits in 16 registers.
#[test]
fn lengths_compare_real_and_optimal_intervals() {
    let out = Command::new(env!("CARGO_BIN_EXE_sassim"))
        .args(["ltrf", "lengths", "vecadd", "spinlock"])
        .output()
        .expect("sassim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let row = |w: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.starts_with(w))
            .unwrap_or_else(|| panic!("{w}: {text}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(row("vecadd")[1..], ["16.0", "16.0", "100%"]);
    let s = row("spinlock");
    assert_eq!(s[1], "15.1");
    assert!(s[2].parse::<f64>().expect("optimal") > 1000.0, "{s:?}");
    let bad = Command::new(env!("CARGO_BIN_EXE_sassim"))
        .args(["ltrf", "lengths", "nosuch"])
        .output()
        .expect("sassim");
    assert_eq!(bad.status.code(), Some(2));
}
