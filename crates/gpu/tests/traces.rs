//! Trace-driven mode: Accel-Sim traces run through the timing model.

use sassim_config::GpuConfig;
use sassim_gpu::trace_exec::{
    run_kernelslist, run_trace_kernel, TraceKernel, TraceKernelRun, MODE_CONTROL_BITS, MODE_HYBRID,
};
use sassim_gpu::{Gpu, RunOptions};
use sassim_isa::Listing;
use sassim_trace::KernelTraceReader;
use std::path::{Path, PathBuf};

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/traces").join(name)
}

fn gpu(preset: &str) -> Gpu {
    Gpu::new(GpuConfig::preset(preset).expect("preset"))
}

fn opts() -> RunOptions {
    RunOptions {
        max_cycles: 5_000_000,
        ..RunOptions::default()
    }
}

/// Warp instructions in a trace file.
fn trace_instrs(path: &Path) -> u64 {
    let mut r = KernelTraceReader::open(path).unwrap();
    let mut n = 0;
    while let Some(tb) = r.next_block().unwrap() {
        n += tb.n_instrs();
    }
    n
}

/// Run a fixture's kernels list twice on `preset`; check counts, cycles, mode,
/// determinism; return the cycles per kernel.
fn check_fixture(dir: &str, preset: &str, expect_sm: u32) -> Vec<(String, u64)> {
    let list = fixture(dir).join("kernelslist.g");
    let mut g = gpu(preset);
    let runs = run_kernelslist(&mut g, &list, &[], &opts()).unwrap_or_else(|e| panic!("{dir}: {e}"));
    assert!(!runs.is_empty());
    let arch = g.cfg.gpu.arch.clone();
    let mut out = Vec::new();
    for r in &runs {
        let n = trace_instrs(&r.path);
        assert_eq!(
            r.run.stats.warp_insts,
            n,
            "{}: warp instructions",
            r.path.display()
        );
        assert!(r.run.cycles > 0, "{}", r.path.display());
        assert_eq!(r.mode, MODE_HYBRID);
        let want =
            format!("trace recorded for sm_{expect_sm}; simulating on {preset} ({arch}): choose a preset of that architecture with --gpu (`sassim gpus`)");
        assert!(r.warnings.contains(&want), "{:?}", r.warnings);
        out.push((
            r.path.file_name().unwrap().to_string_lossy().into_owned(),
            r.run.cycles,
        ));
    }
    let mut g2 = gpu(preset);
    let again = run_kernelslist(&mut g2, &list, &[], &opts()).unwrap();
    let c1: Vec<u64> = runs.iter().map(|r| r.run.cycles).collect();
    let c2: Vec<u64> = again.iter().map(|r| r.run.cycles).collect();
    assert_eq!(c1, c2, "{dir}: not deterministic");
    eprintln!("{dir} on {preset}: {out:?}");
    out
}

#[test]
fn bfs_sm80_runs_on_ampere() {
    let c = check_fixture("bfs-sm80-v3", "rtx-a6000", 80);
    assert_eq!(c.len(), 16);
}

#[test]
fn vectoradd_sm80_runs_on_ampere() {
    let c = check_fixture("vectoradd-sm80-v5", "rtx-3080", 80);
    assert_eq!(c.len(), 1);
}

#[test]
fn vectoradd_sm61_runs_on_closest_preset() {
    check_fixture("vectoradd-sm61-v4-gtx1080", "rtx-2070s", 61);
}

#[test]
fn matrixmul_sm61_runs_with_barriers() {
    // 32 warps in one CTA, BAR.SYNC between the tile loads and the products.
    check_fixture("matrixmul-sm61-v4", "rtx-2070s", 61);
}

#[test]
fn bfs_memcpys_are_noted() {
    let list = fixture("bfs-sm80-v3").join("kernelslist.g");
    let mut g = gpu("rtx-a6000");
    let runs = run_kernelslist(&mut g, &list, &[], &opts()).unwrap();
    assert_eq!(runs[0].memcpy_htod.len(), 7);
    assert_eq!(runs[1].memcpy_htod.len(), 0);
    assert_eq!(
        runs[2].memcpy_htod,
        vec![sassim_gpu::trace_exec::HostCopy {
            dst: 0x7fc841527000,
            bytes: 1
        }]
    );
}

// ---------------------------------------------------------------------------------
// Synthetic traces.

const HEADER_FORMAT: &str = "#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]";

fn header(name: &str, grid: u32, block: u32, version: u32) -> String {
    format!(
        "-kernel name = {name}\n-kernel id = 1\n-grid dim = ({grid},1,1)\n-block dim = ({block},1,1)\n\
         -shmem = 0\n-nregs = 16\n-binary version = {version}\n-cuda stream id = 0\n\
         -shmem base_addr = 0x00007f0000000000\n-local mem base_addr = 0x00007f0001000000\n\
         -nvbit version = 1.5.5\n-accelsim tracer version = 4\n-enable lineinfo = 0\n\n{HEADER_FORMAT}\n\n"
    )
}

/// Write a trace: `warps(cta, warp)` gives the lines of one warp.
fn write_trace(
    dir: &Path,
    file: &str,
    name: &str,
    grid: u32,
    block: u32,
    version: u32,
    warps: impl Fn(u32, u32) -> Vec<String>,
) -> PathBuf {
    let mut s = header(name, grid, block, version);
    for cta in 0..grid {
        s += &format!("#BEGIN_TB\n\nthread block = {cta},0,0\n\n");
        for w in 0..block.div_ceil(32) {
            let lines = warps(cta, w);
            s += &format!("warp = {w}\ninsts = {}\n", lines.len());
            for l in lines {
                s += &l;
                s += "\n";
            }
            s += "\n";
        }
        s += "#END_TB\n\n";
    }
    let p = dir.join(file);
    std::fs::write(&p, s).unwrap();
    p
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = scratch(&format!("traces-{tag}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The dynamic trace of the built-in `vecadd` kernel (workloads/vecadd, sm_86 listing),
/// every thread in range: c[i] = a[i] + b[i].
fn vecadd_trace(dir: &Path, grid: u32, block: u32) -> PathBuf {
    let (a, b, c) = (0x7f10_0000_0000u64, 0x7f20_0000_0000u64, 0x7f30_0000_0000u64);
    write_trace(dir, "vecadd.traceg", "vecadd", grid, block, 86, |cta, w| {
        let i0 = (cta * block + w * 32) as u64;
        let m = |base: u64| format!("4 1 0x{:x} 4", base + 4 * i0);
        vec![
            "0000 ffffffff 1 R1 MOV 0 0".into(),
            "0010 ffffffff 1 R6 S2R 0 0".into(),
            "0020 ffffffff 1 R3 S2R 0 0".into(),
            "0030 ffffffff 1 R6 IMAD 2 R6 R3 0".into(),
            "0040 ffffffff 0 ISETP.GE.U32.AND 1 R6 0".into(),
            "0050 00000000 0 EXIT 0 0".into(),
            "0060 ffffffff 1 R7 MOV 0 0".into(),
            "0070 ffffffff 0 ULDC.64 0 0".into(),
            "0080 ffffffff 1 R4 IMAD.WIDE.U32 2 R6 R7 0".into(),
            "0090 ffffffff 1 R2 IMAD.WIDE.U32 2 R6 R7 0".into(),
            format!("00a0 ffffffff 1 R4 LDG.E.CONSTANT 1 R4 {}", m(b)),
            format!("00b0 ffffffff 1 R3 LDG.E.CONSTANT 1 R2 {}", m(a)),
            "00c0 ffffffff 1 R6 IMAD.WIDE.U32 2 R6 R7 0".into(),
            "00d0 ffffffff 1 R9 FADD 2 R4 R3 0".into(),
            format!("00e0 ffffffff 0 STG.E 2 R6 R9 {}", m(c)),
            "00f0 ffffffff 0 EXIT 0 0".into(),
        ]
    })
}

fn vecadd_listing() -> Listing {
    let p = root().join("workloads/vecadd/vecadd_sm86.cuobjdump-sass.txt");
    sassim_sass::parse_listing_file(&p).unwrap()
}

fn run_one(path: &Path, listings: &[Listing]) -> TraceKernelRun {
    let mut g = gpu("rtx-a6000");
    run_trace_kernel(&mut g, path, listings, &opts()).unwrap()
}

#[test]
fn control_bits_come_from_the_listing() {
    let dir = tmpdir("cb");
    let t = vecadd_trace(&dir, 2, 128);
    let listing = vecadd_listing();
    let with = run_one(&t, std::slice::from_ref(&listing));
    assert_eq!(with.mode, MODE_CONTROL_BITS);
    assert_eq!(with.run.stats.warp_insts, 2 * 4 * 16);
    // sm_86 trace on an sm_86 preset: no architecture warning, every opcode known.
    assert!(with.warnings.is_empty(), "{:?}", with.warnings);
    let without = run_one(&t, &[]);
    assert_eq!(without.mode, MODE_HYBRID);
    assert_eq!(without.run.stats.warp_insts, with.run.stats.warp_insts);

    // A longer stall count on the MOV at 0x60 (S01 in the listing) delays every warp.
    let mut slow = listing.clone();
    let k = slow.kernels.iter_mut().find(|k| k.name == "vecadd").unwrap();
    let i = k.index_of(0x60).unwrap();
    assert_eq!(k.instructions[i].ctrl.stall, 1);
    k.instructions[i].ctrl.stall = 15;
    k.instructions[i].ctrl.yield_ = true;
    let slowed = run_one(&t, &[slow]);
    assert_eq!(slowed.mode, MODE_CONTROL_BITS);
    assert!(
        slowed.run.cycles >= with.run.cycles + 10,
        "stall 15 instead of 1: {} vs {} cycles",
        slowed.run.cycles,
        with.run.cycles
    );
    eprintln!(
        "vecadd 2x128: control bits {} cycles, hybrid {} cycles, MOV stall 15 {} cycles",
        with.run.cycles, without.run.cycles, slowed.run.cycles
    );
    // Deterministic.
    assert_eq!(
        run_one(&t, std::slice::from_ref(&listing)).run.cycles,
        with.run.cycles
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn listing_of_another_binary_is_rejected() {
    let dir = tmpdir("mismatch");
    let t = vecadd_trace(&dir, 1, 64);
    let p = root().join("workloads/saxpy/saxpy_sm86.cuobjdump-sass.txt");
    let mut other = sassim_sass::parse_listing_file(&p).unwrap();
    other.kernels[0].name = "vecadd".into();
    let r = run_one(&t, &[other]);
    assert_eq!(r.mode, MODE_HYBRID);
    assert!(
        r.warnings.iter().any(|w| w.contains("does not match the trace")),
        "{:?}",
        r.warnings
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn static_code_is_synthesised_from_records() {
    let dir = tmpdir("synth");
    let t = vecadd_trace(&dir, 1, 32);
    let tk = TraceKernel::open(&t, &[]).unwrap();
    assert_eq!(tk.num_blocks(), 1);
    assert_eq!(tk.total_instrs(), 16);
    assert_eq!(tk.static_count(), 16);
    let k = tk.kernel();
    let at = |pc: u64| &k.instructions[k.index_of(pc).unwrap()];
    use sassim_isa::{regs_read, regs_written, ArchReg::R};
    // ISETP: predicate destinations padded, R6 read.
    assert_eq!(regs_read(at(0x40)), vec![R(6)]);
    assert!(regs_written(at(0x40)).is_empty());
    // LDG.E: 64-bit address pair, destination R4.
    assert_eq!(regs_read(at(0xa0)), vec![R(4), R(5)]);
    assert_eq!(regs_written(at(0xa0)), vec![R(4)]);
    // STG.E: address pair and data.
    assert_eq!(regs_read(at(0xe0)), vec![R(6), R(7), R(9)]);
    // IMAD.WIDE writes a pair.
    assert_eq!(regs_written(at(0x80)), vec![R(4), R(5)]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn barrier_waits_for_the_whole_cta() {
    let dir = tmpdir("bar");
    // Warp 0 runs 24 dependent IADD3s before the barrier; warp 1 reaches it at once.
    let t = write_trace(&dir, "bar.traceg", "bar", 1, 64, 86, |_, w| {
        let mut v = Vec::new();
        if w == 0 {
            for k in 0..24 {
                v.push(format!("{:04x} ffffffff 1 R2 IADD3 2 R2 R255 0", 0x10 * k));
            }
        } else {
            v.push("0000 ffffffff 1 R2 IADD3 2 R2 R255 0".into());
        }
        v.push("0180 ffffffff 0 BAR.SYNC 0 0".into());
        v.push("0190 ffffffff 1 R3 IADD3 2 R2 R255 0".into());
        v.push("01a0 ffffffff 0 EXIT 0 0".into());
        v
    });
    let mut g = gpu("rtx-a6000");
    let o = RunOptions {
        record: true,
        ..opts()
    };
    let r = run_trace_kernel(&mut g, &t, &[], &o).unwrap();
    assert_eq!(r.run.stats.warp_insts, 27 + 4);
    let issue_of = |warp: u32, pc: u64| {
        r.run
            .logs
            .iter()
            .find(|l| l.warp == warp)
            .and_then(|l| l.log.issues.iter().find(|i| i.pc == pc))
            .map(|i| i.cycle)
            .unwrap()
    };
    let bar0 = issue_of(0, 0x180);
    let bar1 = issue_of(1, 0x180);
    let after1 = issue_of(1, 0x190);
    assert!(bar1 < bar0, "warp 1 reaches the barrier first");
    // Released by warp 0's arrival (in the same cycle at the earliest, as in
    // execution-driven mode), after waiting for it.
    assert!(
        after1 >= bar0,
        "warp 1 leaves the barrier at {after1}, warp 0 arrived at {bar0}"
    );
    assert!(
        after1 > bar1 + 20,
        "warp 1 waited at the barrier: {bar1} -> {after1}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_opcodes_are_reported_with_counts() {
    let dir = tmpdir("unknown");
    let t = write_trace(&dir, "u.traceg", "u", 2, 32, 86, |_, _| {
        vec![
            "0000 ffffffff 1 R2 FROBNICATE.X 1 R2 0".into(),
            "0010 ffffffff 1 R2 FROBNICATE 1 R2 0".into(),
            "0020 ffffffff 0 EXIT 0 0".into(),
        ]
    });
    let r = run_one(&t, &[]);
    assert_eq!(r.run.stats.warp_insts, 6);
    let w = r
        .warnings
        .iter()
        .find(|w| w.contains("opcodes unknown"))
        .unwrap_or_else(|| panic!("{:?}", r.warnings));
    assert!(w.contains("FROBNICATE (2 static, 4 dynamic)"), "{w}");
    assert_eq!(r.warnings, r.run.warnings);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pascal_pcs_are_renumbered_densely() {
    let tk = TraceKernel::open(&fixture("vectoradd-sm61-v4-gtx1080/kernel-1.traceg"), &[]).unwrap();
    let k = tk.kernel();
    // 8-byte instructions with a control word every 32 bytes: 3 instructions per 32 bytes.
    for (i, ins) in k.instructions.iter().enumerate() {
        assert_eq!(ins.pc, i as u64 * 16);
    }
    assert_eq!(k.instructions[0].opcode.base, "MOV");
}

#[test]
fn blocks_without_instructions_are_skipped() {
    let dir = tmpdir("empty");
    let t = write_trace(&dir, "e.traceg", "e", 3, 64, 86, |cta, w| {
        if cta == 1 || w == 1 {
            Vec::new()
        } else {
            vec![
                "0000 ffffffff 1 R2 IADD3 2 R2 R255 0".into(),
                "0010 ffffffff 0 EXIT 0 0".into(),
            ]
        }
    });
    let r = run_one(&t, &[]);
    assert_eq!(r.run.stats.warp_insts, 4);
    assert_eq!(r.run.ctas, 2);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("1 thread blocks without instructions")),
        "{:?}",
        r.warnings
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// CTA `k` runs the trace's block `k` whatever order the CTAs start in (the dispatcher can start
/// an SM's second CTA before another SM's first), as in Accel-Sim; block k here has k + 2
/// records per warp, which the source's description of the warp names.
#[test]
fn cta_k_runs_block_k_whatever_the_start_order() {
    use sassim_gpu::KernelSource;
    let dir = tmpdir("order");
    let t = write_trace(&dir, "o.traceg", "o", 4, 32, 86, |cta, _| {
        let mut v: Vec<String> = (0..=cta)
            .map(|i| format!("{:04x} ffffffff 1 R2 IADD3 2 R2 R255 0", 16 * i))
            .collect();
        v.push(format!("{:04x} ffffffff 0 EXIT 0 0", 16 * (cta + 1)));
        v
    });
    let mut tk = TraceKernel::open(&t, &[]).unwrap();
    for (sm, id) in [(0, 2), (1, 0), (0, 3), (1, 1)] {
        let warps = tk.start_cta(sm, id);
        assert_eq!(warps, vec![(id, 0)], "CTA {id}: one warp of id {id}");
        let d = tk.describe(id);
        assert!(d.contains(&format!("of {}", id + 2)), "CTA {id}: {d}");
    }
    // Every block was started once: another start of block 2 is an error, not a new block.
    assert!(tk.start_cta(0, 2).is_empty());
    assert!(
        tk.stream_error().is_some_and(|e| e.contains("block 2")),
        "{:?}",
        tk.stream_error()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
