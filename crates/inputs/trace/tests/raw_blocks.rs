//! Issue 15: thread blocks read raw and parsed on several threads (`next_raw_blocks`,
//! `BlockParser::parse`, `accept`) give the blocks, opcode ids and errors of the serial
//! reader (`next_block`).

use sassim_trace::{KernelTraceReader, OpcodeId, ThreadBlockTrace};
use std::path::{Path, PathBuf};

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/traces")
        .join(rel)
}

fn dir(tag: &str) -> PathBuf {
    let d = scratch(&format!("trace-raw-{tag}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Blocks with their opcode names, or the error's text.
type Read = Result<Vec<(ThreadBlockTrace, Vec<String>)>, String>;

fn names(rd: &KernelTraceReader, tb: &ThreadBlockTrace) -> Vec<String> {
    tb.warps
        .iter()
        .flat_map(|w| w.instrs.iter())
        .map(|i| rd.opcode_name(i.opcode).to_string())
        .collect()
}

fn serial(path: &Path) -> Read {
    let mut rd = KernelTraceReader::open(path).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(tb) = rd.next_block().map_err(|e| e.to_string())? {
        let n = names(&rd, &tb);
        out.push((tb, n));
    }
    Ok(out)
}

/// Batches of `batch` blocks, each parsed on `threads` scoped threads (block `i` of a batch
/// on thread `i % threads`), accepted in order.
fn threaded(path: &Path, batch: usize, threads: usize) -> Read {
    let mut rd = KernelTraceReader::open(path).map_err(|e| e.to_string())?;
    let parser = rd.block_parser().expect("a text trace");
    let mut out = Vec::new();
    loop {
        let mut raws = rd
            .next_raw_blocks(batch, 1 << 20)
            .expect("a text trace")
            .map_err(|e| e.to_string())?;
        if raws.is_empty() {
            return Ok(out);
        }
        let n = raws.len();
        let mut parsed: Vec<Option<_>> = (0..n).map(|_| None).collect();
        std::thread::scope(|s| {
            let mut shares: Vec<Vec<(usize, &mut _)>> = (0..threads).map(|_| Vec::new()).collect();
            for (i, r) in raws.iter_mut().enumerate() {
                shares[i % threads].push((i, r));
            }
            let handles: Vec<_> = shares
                .into_iter()
                .map(|share| {
                    let parser = &parser;
                    s.spawn(move || {
                        share
                            .into_iter()
                            .map(|(i, r)| (i, parser.parse(r)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for h in handles {
                for (i, p) in h.join().unwrap() {
                    parsed[i] = Some(p);
                }
            }
        });
        for p in parsed {
            let p = p.expect("every block parsed").map_err(|e| e.to_string())?;
            let tb = rd.accept(p).map_err(|e| e.to_string())?;
            let n = names(&rd, &tb);
            out.push((tb, n));
        }
    }
}

fn assert_same_every_way(path: &Path) -> Read {
    let want = serial(path);
    for (batch, threads) in [(1, 1), (3, 2), (8, 4), (64, 3)] {
        assert_eq!(
            threaded(path, batch, threads),
            want,
            "{}: batches of {batch} on {threads} threads",
            path.display()
        );
    }
    want
}

#[test]
fn blocks_parsed_on_threads_are_those_read_one_by_one() {
    // Several blocks (8 of BFS, opcodes first seen in later blocks too), another dialect.
    for rel in [
        "bfs-sm80-v3/kernel-11.traceg",
        "bfs-sm80-v3/kernel-2.traceg",
        "vectoradd-sm61-v4-gtx1080/kernel-1.traceg",
        "vectoradd-sm80-v5/kernel-1.traceg",
    ] {
        let blocks = assert_same_every_way(&fixture(rel)).unwrap();
        assert!(!blocks.is_empty(), "{rel}");
    }
    // The opcode ids are the serial reader's too (first seen, first numbered).
    let p = fixture("bfs-sm80-v3/kernel-11.traceg");
    let mut a = KernelTraceReader::open(&p).unwrap();
    while a.next_block().unwrap().is_some() {}
    let mut b = KernelTraceReader::open(&p).unwrap();
    let parser = b.block_parser().unwrap();
    loop {
        let mut raws = b.next_raw_blocks(3, 1 << 20).unwrap().unwrap();
        if raws.is_empty() {
            break;
        }
        let parsed: Vec<_> = raws.iter_mut().map(|r| parser.parse(r)).collect();
        for p in parsed {
            b.accept(p.unwrap()).unwrap();
        }
    }
    assert!(a.opcodes().len() > 5);
    assert_eq!(a.opcodes().len(), b.opcodes().len());
    for i in 0..a.opcodes().len() {
        assert_eq!(
            a.opcode_name(OpcodeId(i as u16)),
            b.opcode_name(OpcodeId(i as u16))
        );
    }
}

/// The fixture's text with line `n` (1-based) replaced.
fn with_line(text: &str, n: usize, new: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines[n - 1] = new;
    lines.join("\n") + "\n"
}

/// Line number (1-based) of the `k`-th line (0-based) that satisfies `f`.
fn nth_line(text: &str, k: usize, f: impl Fn(&str) -> bool) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| f(l))
        .nth(k)
        .map(|(i, _)| i + 1)
        .unwrap()
}

#[test]
fn malformed_blocks_name_file_and_line_on_any_thread_count() {
    let text = std::fs::read_to_string(fixture("bfs-sm80-v3/kernel-11.traceg")).unwrap();
    let d = dir("bad");
    let is_instr = |l: &str| l.as_bytes().first().is_some_and(u8::is_ascii_digit);
    let begins = |l: &str| l.starts_with("#BEGIN_TB");
    // A bad register in the 4th block; a bad register in the 2nd block and a nested
    // `#BEGIN_TB` later in the same block (the register comes first in the file); a bad
    // line between blocks after a good one; the file cut inside the 6th block.
    let bad_reg = |k: usize| {
        let b = nth_line(&text, k, begins);
        let i = text
            .lines()
            .enumerate()
            .skip(b)
            .find(|(_, l)| is_instr(l))
            .unwrap()
            .0
            + 1;
        (i, text.lines().nth(i - 1).unwrap().replacen(" R", " Q", 1))
    };
    let (l4, bad4) = bad_reg(3);
    let (l2, bad2) = bad_reg(1);
    let nested = nth_line(&text, 1, begins) + 40;
    let between = nth_line(&text, 2, begins) - 1;
    let cut = nth_line(&text, 5, begins) + 20;
    let cases: Vec<(&str, String, usize)> = vec![
        ("reg", with_line(&text, l4, &bad4), l4),
        (
            "reg-then-nested",
            with_line(&with_line(&text, l2, &bad2), nested, "#BEGIN_TB"),
            l2,
        ),
        ("between", with_line(&text, between, "garbage"), between),
        (
            "cut",
            text.lines().take(cut).collect::<Vec<_>>().join("\n") + "\n",
            cut,
        ),
    ];
    for (tag, t, line) in cases {
        let p = d.join(format!("{tag}.traceg"));
        std::fs::write(&p, t).unwrap();
        let want = serial(&p).expect_err(tag);
        assert!(
            want.contains(&format!("{}:{line}", p.display())),
            "{tag}: `{want}` names line {line}"
        );
        for (batch, threads) in [(1, 1), (3, 2), (8, 4)] {
            assert_eq!(
                threaded(&p, batch, threads).expect_err(tag),
                want,
                "{tag}: {batch}/{threads}"
            );
        }
    }
}
