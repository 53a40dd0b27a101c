//! Issue 15: a kernel trace's thread blocks are parsed on the SMs' threads
//! (`TraceKernel::open_on`); the kernel, its blocks and its errors do not depend on how
//! many.

use sassim_config::GpuConfig;
use sassim_gpu::threads::Threads;
use sassim_gpu::trace_exec::{run_trace_kernel, TraceKernel};
use sassim_gpu::{Gpu, RunOptions};
use std::path::{Path, PathBuf};

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

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
    let d = scratch("gpu-parse-threads");
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

/// A trace of many batches (64 blocks: 8 batches on two threads), read, parsed, accepted and
/// scanned in a pipeline: broken in several places, it gives the error of the first place in
/// file order whatever the thread count, be the error met by the reader (a stray line between
/// blocks), the parser (a bad opcode), the reader's acceptance (a block outside the grid) or
/// the scan (a PC that is no instruction slot); unbroken, the same kernel.
#[test]
fn errors_of_a_long_trace_come_in_file_order_on_any_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let list = sassim_trace::synthetic::ComputeTrace { ctas: 64, ffma: 4 }
        .write(dir.path())
        .expect("trace");
    let good = dir.path().join("kernel-1.traceg");
    assert!(list.exists());
    let text = std::fs::read_to_string(&good).expect("text");
    let lines: Vec<&str> = text.lines().collect();
    let begins: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("#BEGIN_TB"))
        .collect();
    assert_eq!(begins.len(), 64);
    // The first load of block `b` (`0020 ffffffff 1 R2 LDG.E …`).
    let first_instr = |b: usize| {
        (begins[b]..lines.len())
            .find(|&i| lines[i].starts_with("0020 "))
            .expect("a load")
    };
    type Edit = Box<dyn Fn(&mut Vec<String>)>;
    let read_error = |b: usize| -> Edit {
        let at = begins[b];
        Box::new(move |l: &mut Vec<String>| l.insert(at, "stray".into()))
    };
    let parse_error = |b: usize| -> Edit {
        let i = first_instr(b);
        Box::new(move |l: &mut Vec<String>| l[i] = l[i].replace("LDG.E", "9BAD"))
    };
    let grid_error = |b: usize| -> Edit {
        let i = (begins[b]..lines.len())
            .find(|&i| lines[i].starts_with("thread block"))
            .expect("tb");
        Box::new(move |l: &mut Vec<String>| l[i] = "thread block = 100000,0,0".into())
    };
    let scan_error = |b: usize| -> Edit {
        let i = first_instr(b);
        Box::new(move |l: &mut Vec<String>| l[i] = l[i].replacen("0020", "0024", 1))
    };
    let open = |edits: &[&Edit], threads: usize| {
        let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        // Later lines first, so that earlier indices stay right.
        for e in edits.iter().rev() {
            e(&mut l);
        }
        let p = dir.path().join("edited.traceg");
        std::fs::write(&p, l.join("\n") + "\n").expect("write");
        match TraceKernel::open_on(&p, &[], &Threads::new(threads)) {
            Ok(tk) => Ok(summary(&tk)),
            Err(e) => Err(e.to_string()),
        }
    };
    let (r, pe, g, s) = (read_error(45), parse_error(20), grid_error(37), scan_error(30));
    let cases: [(&str, Vec<&Edit>); 8] = [
        ("none", vec![]),
        ("read", vec![&r]),
        ("parse", vec![&pe]),
        ("grid", vec![&g]),
        ("scan", vec![&s]),
        ("parse before scan", vec![&pe, &s]),
        ("scan before grid and read", vec![&s, &g, &r]),
        ("grid before read", vec![&g, &r]),
    ];
    for (name, edits) in &cases {
        let one = open(edits, 1);
        match (*name, &one) {
            ("none", Ok(_)) => {}
            ("none", Err(e)) => panic!("{e}"),
            (_, Ok(_)) => panic!("{name}: no error"),
            (_, Err(_)) => {}
        }
        for threads in [2, 3, 4] {
            assert_eq!(open(edits, threads), one, "{name}, {threads} threads");
        }
    }
    // Each error is the one of its kind.
    let err = |e: &[&Edit]| open(e, 2).expect_err("an error");
    assert!(err(&[&r]).contains("stray"), "{}", err(&[&r]));
    assert!(err(&[&pe]).contains("opcode"), "{}", err(&[&pe]));
    assert!(err(&[&g]).contains("grid"), "{}", err(&[&g]));
    assert!(err(&[&s]).contains("instruction slot"), "{}", err(&[&s]));
    assert_eq!(err(&[&pe, &s]), err(&[&pe]));
    assert_eq!(err(&[&s, &g, &r]), err(&[&s]));
    assert_eq!(err(&[&g, &r]), err(&[&g]));
}

/// A trace whose blocks name more than 65,536 distinct opcodes between them, the second block
/// also holding a line that is no instruction: the same error on one thread as on several (each
/// block's opcodes are interned in its own table, then adopted in order, whatever the count).
#[test]
fn a_trace_of_too_many_opcodes_fails_the_same_on_any_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    sassim_trace::synthetic::ComputeTrace { ctas: 2, ffma: 0 }
        .write(dir.path())
        .expect("trace");
    let text = std::fs::read_to_string(dir.path().join("kernel-1.traceg")).expect("text");
    let header = &text[..text.find("#BEGIN_TB").expect("a block")];
    let mut t = header.to_string();
    for (b, (prefix, n)) in [("A", 40_000), ("B", 30_000)].into_iter().enumerate() {
        let extra = usize::from(b == 1);
        t += &format!(
            "#BEGIN_TB\n\nthread block = {b},0,0\n\nwarp = 0\ninsts = {}\n",
            n + extra
        );
        for k in 0..n {
            t += &format!("0000 ffffffff 0 OP{prefix}{k} 0 0 0 \n");
        }
        if b == 1 {
            t += "0000 ffffffff 0 9BAD 0 0 0 \n";
        }
        t += "#END_TB\n\n";
    }
    let p = dir.path().join("many.traceg");
    std::fs::write(&p, t).expect("write");
    let err = |n: usize| match TraceKernel::open_on(&p, &[], &Threads::new(n)) {
        Ok(_) => panic!("{n} threads: accepted"),
        Err(e) => e.to_string(),
    };
    let one = err(1);
    for n in [2, 3, 4] {
        assert_eq!(err(n), one, "{n} threads");
    }
}
