#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use sassim_trace::{KernelTraceReader, ThreadBlockTrace};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/traces")
}

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// A fresh directory in this test's own temporary directory (removed with it).
pub fn tmpdir(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = SCRATCH.with(|s| {
        s.path()
            .join(format!("{tag}-{}", N.fetch_add(1, Ordering::SeqCst)))
    });
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Blocks with opcode ids replaced by names, for comparison across readers.
pub type Named = (ThreadBlockTrace, Vec<Vec<String>>);

pub fn read_all(path: &Path) -> (KernelTraceReader, Vec<Named>) {
    let mut r = KernelTraceReader::open(path).unwrap_or_else(|e| panic!("{e}"));
    let mut out = Vec::new();
    while let Some(tb) = r.next_block().unwrap_or_else(|e| panic!("{e}")) {
        let names = tb
            .warps
            .iter()
            .map(|w| {
                w.instrs
                    .iter()
                    .map(|i| r.opcode_name(i.opcode).to_string())
                    .collect()
            })
            .collect();
        out.push((tb, names));
    }
    (r, out)
}

/// Trace files of every fixture, from their kernelslist.g.
pub fn all_kernel_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("kernelslist.g").exists())
        .collect();
    dirs.sort();
    for d in dirs {
        for c in sassim_trace::read_kernelslist(d.join("kernelslist.g")).unwrap() {
            if let sassim_trace::TraceCommand::Kernel { path, .. } = c {
                out.push(path);
            }
        }
    }
    out
}
