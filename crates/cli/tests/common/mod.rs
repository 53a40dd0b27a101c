//! Running the `sassim` binary on generated microbenchmarks.
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
pub fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Run `sassim microbench --json` on `src` with extra arguments; returns the JSON and
/// whether the command succeeded. The source is written to a temporary directory that is
/// removed afterwards.
pub fn mb(name: &str, src: &str, args: &[&str]) -> (Value, bool) {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = dir.path().join(name);
    std::fs::write(&p, src).expect("write microbenchmark");
    mb_file(&p, args)
}

pub fn mb_file(p: &std::path::Path, args: &[&str]) -> (Value, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_sassim"))
        .arg("microbench")
        .arg(p)
        .arg("--json")
        .args(args)
        .output()
        .expect("run sassim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (v, out.status.success())
}

pub fn warp(v: &Value, slot: u64) -> &Value {
    v["warps"]
        .as_array()
        .and_then(|a| a.iter().find(|w| w["warp"] == slot))
        .unwrap_or_else(|| panic!("no warp {slot} in {v}"))
}

pub fn cycles(v: &Value, slot: u64) -> Vec<u64> {
    warp(v, slot)["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .map(|i| i["cycle"].as_u64().expect("cycle"))
        .collect()
}

pub fn clocks(v: &Value, slot: u64) -> Vec<u64> {
    warp(v, slot)["clocks"]
        .as_array()
        .expect("clocks")
        .iter()
        .map(|c| c.as_u64().expect("clock"))
        .collect()
}

/// Difference between the first two clock reads of warp 0.
pub fn elapsed(v: &Value) -> u64 {
    let c = clocks(v, 0);
    c[1] - c[0]
}

pub fn reg(v: &Value, slot: u64, r: &str) -> Vec<u32> {
    warp(v, slot)["regs"][r]
        .as_array()
        .unwrap_or_else(|| panic!("no {r}"))
        .iter()
        .map(|x| x.as_u64().expect("u32") as u32)
        .collect()
}

/// `body` between two clock reads (with a NOP after the first), one warp.
pub fn timed(body: &str) -> String {
    format!(
        "[B------:R-:W-:-:S01] CS2R.32 R200, SR_CLOCKLO ;\n[B------:R-:W-:-:S01] NOP ;\n{body}\n\
         [B------:R-:W-:-:S01] CS2R.32 R202, SR_CLOCKLO ;\n[B------:R-:W-:-:S05] EXIT ;\n"
    )
}
