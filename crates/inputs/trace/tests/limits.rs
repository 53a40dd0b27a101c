//! Issue 18: trace headers, block indices and truncations are checked.

use sassim_trace::{read_kernelslist, KernelTraceReader, TraceError};
use std::path::PathBuf;

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

fn fixture() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/traces/vectoradd-sm61-v4-gtx1080/kernel-1.traceg");
    std::fs::read_to_string(p).unwrap()
}

fn dir(tag: &str) -> PathBuf {
    let d = scratch(&format!("trace-limits-{tag}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read_all(text: &str, tag: &str) -> Result<u64, TraceError> {
    let p = dir(tag).join("k.traceg");
    std::fs::write(&p, text).unwrap();
    let mut r = KernelTraceReader::open(&p)?;
    let mut n = 0;
    while r.next_block()?.is_some() {
        n += 1;
    }
    Ok(n)
}

#[test]
fn block_outside_the_grid_is_an_error_at_its_line() {
    let t = fixture();
    assert!(read_all(&t, "ok").unwrap() > 0);
    let grid = t.lines().find(|l| l.starts_with("-grid dim")).unwrap();
    let bad = t.replacen("thread block = 0,0,0", "thread block = 0,5,0", 1);
    let line = bad
        .lines()
        .position(|l| l.contains("thread block = 0,5,0"))
        .unwrap() as u64
        + 1;
    let e = read_all(&bad, "outside").unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("outside the grid"), "{grid}: {msg}");
    // The error is reported at the end of the block; its line is past the block's start.
    assert!(
        matches!(e, TraceError::Parse { line: l, .. } if l > line),
        "{msg}"
    );
}

#[test]
fn trace_cut_before_its_first_block_is_truncated() {
    let t = fixture();
    let head: String = t.split("#BEGIN_TB").next().unwrap().to_string();
    let e = read_all(&head, "cut").unwrap_err();
    assert!(matches!(e, TraceError::Truncated { .. }), "{e}");
    assert!(e.to_string().contains("no thread block"), "{e}");
}

#[test]
fn header_dimensions_are_cudas() {
    let t = fixture();
    let block = t.lines().find(|l| l.starts_with("-block dim")).unwrap();
    let e = read_all(&t.replacen(block, "-block dim = (1024,2,1)", 1), "block").unwrap_err();
    assert!(
        e.to_string().contains("2048 threads") && e.to_string().contains("1..=1024"),
        "{e}"
    );
    let grid = t.lines().find(|l| l.starts_with("-grid dim")).unwrap();
    let e = read_all(&t.replacen(grid, "-grid dim = (1,65536,1)", 1), "grid").unwrap_err();
    assert!(e.to_string().contains("65535"), "{e}");
}

#[test]
fn kernelslist_without_kernels_is_an_error() {
    let d = dir("list");
    for text in [
        "",
        "\n\n",
        "MemcpyHtoD,0x00007f0000000000,4096\n",
        "# only a comment\n",
    ] {
        let p = d.join("kernelslist.g");
        std::fs::write(&p, text).unwrap();
        let e = read_kernelslist(&p).unwrap_err();
        assert!(e.to_string().contains("names no kernel"), "{text:?}: {e}");
    }
}
