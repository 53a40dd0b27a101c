//! The kernels of a kernels list that open together ahead of their runs (`run_kernelslist`
//! on several threads): the same runs as opened one by one, and a broken kernel's error the
//! same as on one thread.

use sassim_gpu::{trace_exec::run_kernelslist, Gpu, RunOptions};
use std::path::Path;

fn bfs(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/traces/bfs-sm80-v3")
        .join(name)
}

fn run(list: &Path, threads: usize) -> Result<Vec<String>, String> {
    let mut gpu = Gpu::new(sassim_config::GpuConfig::preset("rtx-a6000").expect("preset"));
    let o = RunOptions {
        threads,
        ..RunOptions::default()
    };
    run_kernelslist(&mut gpu, list, &[], &o)
        .map(|runs| {
            runs.iter()
                .map(|r| {
                    format!(
                        "{} {:?} {:?} {}",
                        r.path.display(),
                        r.run.stats,
                        r.run.mem,
                        r.run.cycles
                    )
                })
                .collect()
        })
        .map_err(|e| e.to_string())
}

/// A list of BFS kernels with a broken one third (its last block never ends): on any number
/// of threads the error is the one the kernel gives when opened alone; without it, the
/// kernels run the same, in their order.
#[test]
fn a_broken_kernel_fails_at_its_turn_whoever_opened_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    for k in [1, 2, 4] {
        let name = format!("kernel-{k}.traceg");
        std::fs::copy(bfs(&name), dir.path().join(&name)).expect("copy");
    }
    let text = std::fs::read_to_string(bfs("kernel-3.traceg")).expect("kernel 3");
    // The last `#END_TB` and what follows it are cut off: the last block never ends.
    let cut = text.rfind("#END_TB").expect("a block end");
    std::fs::write(dir.path().join("kernel-3.traceg"), &text[..cut]).expect("write");
    let list = dir.path().join("kernelslist.g");
    std::fs::write(
        &list,
        "kernel-1.traceg\nkernel-2.traceg\nkernel-3.traceg\nkernel-4.traceg\n",
    )
    .expect("list");
    let one = run(&list, 1).expect_err("kernel 3 is broken");
    assert!(one.contains("kernel-3.traceg"), "{one}");
    for threads in [2, 4] {
        assert_eq!(run(&list, threads).expect_err("kernel 3 is broken"), one);
    }
    // Without the broken kernel, every thread count gives the same runs.
    std::fs::write(&list, "kernel-1.traceg\nkernel-2.traceg\nkernel-4.traceg\n").expect("list");
    let one = run(&list, 1).expect("runs");
    assert_eq!(one.len(), 3);
    assert_eq!(run(&list, 2).expect("runs"), one);
    assert_eq!(run(&list, 4).expect("runs"), one);
}
