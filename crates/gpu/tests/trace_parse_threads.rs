//! Issue 15: a kernel trace's thread blocks are parsed on the SMs' threads
//! (`TraceKernel::open_on`); the kernel, its blocks and its errors do not depend on how
//! many.

use sassim_config::GpuConfig;
use sassim_gpu::threads::Threads;
use sassim_gpu::trace_exec::{run_trace_kernel, TraceKernel};
use sassim_gpu::{Gpu, RunOptions};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/traces")
        .join(name)
}

/// What a test can see of an opened kernel.
fn summary(tk: &TraceKernel) -> String {
    format!(
        "{:?}\nblocks {} records {} static {}\n{:?}",
        tk.kernel(),
        tk.num_blocks(),
        tk.total_instrs(),
        tk.static_count(),
        tk.warnings()
    )
}

#[test]
fn a_trace_opened_on_any_thread_count_is_the_same_kernel() {
    // Kernel 11 of BFS: 8 blocks of 16 warps.
    let p = fixture("bfs-sm80-v3/kernel-11.traceg");
    let one = TraceKernel::open(&p, &[]).unwrap();
    assert_eq!(one.num_blocks(), 8);
    let want = summary(&one);
    for n in [2, 3, 4] {
        let tk = TraceKernel::open_on(&p, &[], &Threads::new(n)).unwrap();
        assert_eq!(summary(&tk), want, "{n} threads");
    }
    // And it runs the same (the blocks kept for the run are the same).
    let run = |threads: usize| {
        let mut g = Gpu::new(GpuConfig::preset("rtx-a6000").expect("preset"));
        let opts = RunOptions {
            threads,
            max_cycles: 5_000_000,
            ..RunOptions::default()
        };
        let r = run_trace_kernel(&mut g, &p, &[], &opts).unwrap();
        (r.run.cycles, format!("{:?} {:?}", r.run.stats, r.run.mem))
    };
    let a = run(1);
    assert!(a.0 > 0);
    assert_eq!(run(2), a);
    assert_eq!(run(4), a);
}

#[test]
fn a_malformed_block_names_file_and_line_on_any_thread_count() {
    let text = std::fs::read_to_string(fixture("bfs-sm80-v3/kernel-11.traceg")).unwrap();
    // A bad opcode on an instruction line of the 5th block.
    let begin = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("#BEGIN_TB"))
        .nth(4)
        .unwrap()
        .0;
    let (i, line) = text
        .lines()
        .enumerate()
        .skip(begin + 1)
        .find(|(_, l)| l.starts_with("00"))
        .unwrap();
    let mut fields: Vec<&str> = line.split(' ').collect();
    // `pc mask ndst [dst…] opcode`: a digit where the opcode is.
    let op = 3 + fields[2].parse::<usize>().unwrap();
    fields[op] = "9BAD";
    let bad = fields.join(" ");
    let mut lines: Vec<&str> = text.lines().collect();
    lines[i] = &bad;
    let d = std::env::temp_dir().join(format!("sassim-gpu-parse-threads-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("bad.traceg");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let err = |n: usize| match TraceKernel::open_on(&p, &[], &Threads::new(n)) {
        Ok(_) => panic!("{n} threads: a bad opcode was accepted"),
        Err(e) => e.to_string(),
    };
    let want = err(1);
    assert!(
        want.contains(&format!("{}:{}", p.display(), i + 1)) && want.contains("opcode"),
        "{want}"
    );
    for n in [2, 4] {
        assert_eq!(err(n), want, "{n} threads");
    }
}
