//! Tensor-core timing (issue 17, point 3): dependent and independent MMA chains per shape and
//! type, timed by the hardware scoreboards (no stall counts telling the answer), on the RTX
//! A6000 (sm_86) and the H100 (sm_90), and the same chains as Accel-Sim traces.
//!
//! Expected values and their sources:
//! * latency: the distance at which ptxas 13.5 places the dependent MMA (HMMA.16816 and
//!   IMMA.16832 → dependent MMA at stall 24, HMMA.1688 → consumer at 14) in the sm_86 and
//!   sm_90 cubins of `workloads/programs/{wmma,mma,imma}_gemm` (`workloads/programs/sass/`);
//! * throughput: NVIDIA's peak dense rates, as the presets cite them. GA102 whitepaper: 128
//!   FP16 FMA per clock per sub-core's tensor core (RTX A6000: 84 SMs x 4 x 128 x 2 x 1.8 GHz =
//!   154.8 dense TFLOPS), INT8 twice that: an HMMA.16816 (2,048 FMA) every 16 cycles, an
//!   HMMA.1688 every 8, an IMMA.16832.S8 (4,096 MAC) every 16. H100 whitepaper: 989 dense FP16
//!   TFLOPS and 1,979 INT8 TOPS (SXM5, 132 SMs at 1,830 MHz) = 512 FMA and 1,024 MAC per clock
//!   per sub-core: one HMMA.16816 or IMMA.16832.S8 every 4 cycles.
//!
//! * Hopper mma.sync (not the whitepaper rate): Luo et al., "Benchmarking and Dissecting the
//!   Nvidia Hopper GPU Architecture" (IPDPS 2024), Table VII, H800 PCIe: FP16 m16n8k16 24.1
//!   cycles, 494.4 TFLOPS = 65.4 % of the H800's 756 dense FP16 TFLOPS; INT8 m16n8k32 24.0
//!   cycles, 977.9 TOPS = 64.6 % of 1,513; sparse FP16 24.0 cycles, 722.8 TFLOPS = 47.8 % of
//!   1,513 (docs/validation/published-tensor-microbenchmarks.md 2a). The model: 1.5x the
//!   whitepaper intervals (66.7 % of peak: +2.0 % and +3.2 %), sparse 2x (50 %: +4.6 %).
//! * 2:4-sparse MMAs (`HMMA.SP`, `IMMA.SP`): twice the dense math rate of their type
//!   (GA102 whitepaper); latency at sm_86 22 = ptxas 13.5's distance to the consumer in
//!   `workloads/programs/spmma_gemm` (Luo Table VII: 24.5 cycles on the A100 and RTX 4090,
//!   -10 %); at sm_90 24 (Luo: 24.0 on the H800).
//!
//! The issue asks for agreement within 10 %; the model reproduces the compiler and whitepaper
//! figures exactly and the measured ones within the margins above.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `n` MMAs `op` (destination/accumulator `c`), each depending on the previous one (`dep`) or
/// all independent (accumulators R16, R20, …), one warp, control bits that do not wait.
fn chain(gpu: &str, op: &str, dep: bool, n: usize) -> String {
    let (a, b) = if op.starts_with("IMMA") {
        ("R8.ROW", "R12.COL")
    } else {
        ("R8", "R12")
    };
    let mut s = format!(".gpu {gpu}\n.block 32\n");
    // Sparse MMAs: metadata in R2, sparsity selector 0.
    let meta = if op.contains(".SP.") { ", R2, 0x0" } else { "" };
    for i in 0..n {
        let c = if dep { 4 } else { 16 + 4 * i };
        s += &format!("[B------:R-:W-:-:S01] {op} R{c}, {a}, {b}, R{c}{meta} ;\n");
    }
    s + "[B------:R-:W-:-:S05] EXIT ;\n"
}

/// Cycles between consecutive MMA issues of warp 0, with scoreboards.
fn gaps(gpu: &str, op: &str, dep: bool) -> Vec<u64> {
    let name = format!("{gpu}-{op}-{dep}.sass");
    let (v, ok) = mb(
        &name,
        &chain(gpu, op, dep, 8),
        &["--set", "issue.dependence=scoreboard"],
    );
    assert!(ok, "{name}: {v}");
    let issues: Vec<u64> = warp(&v, 0)["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .filter(|i| i["op"].as_str().is_some_and(|o| o.contains("MMA")))
        .map(|i| i["cycle"].as_u64().expect("cycle"))
        .collect();
    assert_eq!(issues.len(), 8, "{name}");
    issues.windows(2).map(|w| w[1] - w[0]).collect()
}

/// (GPU, opcode, latency, initiation interval).
const EXPECTED: [(&str, &str, u64, u64); 13] = [
    ("rtx-a6000", "HMMA.16816.F32", 24, 16),
    ("rtx-a6000", "HMMA.1688.F32", 14, 8),
    ("rtx-a6000", "IMMA.16832.S8.S8", 24, 16),
    // Sparse: the dense interval of the same MACs halved (HMMA.SP.16832 = 4,096 MACs in the 16
    // cycles of a dense HMMA.16816's 2,048); latency 22, ptxas's distance at sm_86 (Luo: 24.5
    // on the A100 and RTX 4090, -10 %).
    ("rtx-a6000", "HMMA.SP.16832.F32", 22, 16),
    ("rtx-a6000", "HMMA.SP.16816.F32", 22, 8),
    ("rtx-a6000", "HMMA.SP.16816.F32.TF32", 22, 16),
    ("rtx-a6000", "IMMA.SP.16832.S8.S8", 22, 8),
    ("rtx-a6000", "IMMA.SP.16864.S8.S8", 22, 16),
    ("rtx-3080", "HMMA.SP.16832.F32", 22, 32),
    // Hopper mma.sync at 2/3 of the whitepaper rate (Luo: 65.4 %, 64.6 %), sparse at 1/2 (47.8 %).
    ("h100", "HMMA.16816.F32", 24, 6),
    ("h100", "IMMA.16832.S8.S8", 24, 6),
    ("h100", "HMMA.SP.16832.F32", 24, 8),
    ("h100", "IMMA.SP.16864.S8.S8", 24, 8),
];

/// Fraction of a sub-core's peak FP16 (or INT8) tensor rate an interval gives, against Luo's
/// measured fraction: within 10 %.
#[test]
fn hopper_mma_sync_rates_are_within_ten_percent_of_luo() {
    // (opcode, MACs, whitepaper MACs per clock per sub-core, Luo's measured fraction of peak).
    for (op, macs, peak, luo) in [
        ("HMMA.16816.F32", 2048.0, 512.0, 494.4 / 756.0),
        ("IMMA.16832.S8.S8", 4096.0, 1024.0, 977.9 / 1513.0),
        ("HMMA.SP.16832.F32", 4096.0, 1024.0, 722.8 / 1513.0),
    ] {
        let ind = gaps("h100", op, false);
        let model = macs / ind[0] as f64 / peak;
        assert!(
            (model / luo - 1.0).abs() < 0.10,
            "{op}: model {model:.3} of peak, Luo {luo:.3}"
        );
        let dep = gaps("h100", op, true);
        assert!(
            (dep[0] as f64 / 24.05 - 1.0).abs() < 0.10,
            "{op}: latency {dep:?}"
        );
    }
}

#[test]
fn mma_chains_reproduce_compiler_latencies_and_peak_rates() {
    for (gpu, op, lat, ii) in EXPECTED {
        // A dependent MMA waits for the result and for the unit (RTX 3080 FP32-accumulate: the
        // 32-cycle interval exceeds the 24-cycle latency).
        let dep = gaps(gpu, op, true);
        let lat = lat.max(ii);
        assert!(
            dep.iter().all(|&g| g == lat),
            "{gpu} {op} dependent: {dep:?}, expected {lat}"
        );
        let ind = gaps(gpu, op, false);
        assert!(
            ind.iter().all(|&g| g == ii),
            "{gpu} {op} independent: {ind:?}, expected {ii}"
        );
    }
}

/// A one-warp Accel-Sim trace (format v4) of the chain, in its own directory.
fn write_trace(dir: &Path, op: &str, dep: bool, n: usize) -> PathBuf {
    std::fs::create_dir_all(dir).expect("dir");
    let mut body = String::new();
    for i in 0..n {
        let c = if dep { 4 } else { 16 + 4 * i };
        // pc mask dest_num dests opcode src_num srcs mem_width
        body += &format!("{:04x} ffffffff 1 R{c} {op} 3 R8 R12 R{c} 0 \n", 16 * i);
    }
    body += &format!("{:04x} ffffffff 0 EXIT 0 0 \n", 16 * n);
    let trace = format!(
        "-kernel name = mma_chain\n-kernel id = 1\n-grid dim = (1,1,1)\n-block dim = (32,1,1)\n\
         -shmem = 0\n-nregs = 64\n-binary version = 86\n-cuda stream id = 0\n\
         -shmem base_addr = 0x00007f0000000000\n-local mem base_addr = 0x00007f1000000000\n\
         -nvbit version = 1.5.5\n-accelsim tracer version = 4\n\n\
         #traces format = threadblock_x threadblock_y threadblock_z warpid_tb PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]\n\n\
         #BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\ninsts = {}\n{body}\n#END_TB\n",
        n + 1
    );
    std::fs::write(dir.join("kernel-1.traceg"), trace).expect("trace");
    std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg\n").expect("list");
    dir.join("kernelslist.g")
}

fn trace_cycles(dir: &Path) -> u64 {
    trace_cycles_on(dir, "rtx-a6000")
}

/// Cycles of the first kernel of the trace in `dir` on `gpu`.
fn trace_cycles_on(dir: &Path, gpu: &str) -> u64 {
    let json = dir.join("r.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sassim"))
        .args(["run", "--trace"])
        .arg(dir.join("kernelslist.g"))
        .args(["--gpu", gpu, "--json"])
        .arg(&json)
        .arg("--force")
        .output()
        .expect("sassim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&std::fs::read(&json).expect("json")).expect("parse");
    v["kernels"][0]["cycles"].as_u64().expect("cycles")
}

/// Accel-Sim traces with MMA instructions run with the same tensor model: eight more MMAs
/// in a chain cost eight latencies, eight more independent ones eight initiation intervals.
#[test]
fn mma_traces_use_the_same_tensor_model() {
    let base = scratch("mma-trace");
    for (dep, per) in [(true, 24u64), (false, 16u64)] {
        let mut c = Vec::new();
        for n in [8usize, 16] {
            let d = base.join(format!("{dep}-{n}"));
            write_trace(&d, "HMMA.16816.F32", dep, n);
            c.push(trace_cycles(&d));
        }
        assert_eq!(c[1] - c[0], 8 * per, "dependent {dep}: {c:?}");
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// Hopper warpgroup MMA (issue 17): `n` `HGMMA.64xNx16.F32` of one warpgroup (128 threads),
/// each ending a commit group (`gsb0`); `dep`: each followed by `WARPGROUP.DEPBAR.LE gsb0, 0`
/// (a dependent chain: the next waits for the previous result), otherwise issued back to back.
fn gmma_chain(n_shape: u32, dep: bool, n: usize) -> String {
    let mut s = ".gpu h100\n.block 128\n".to_string();
    for _ in 0..n {
        s += &format!("[B------:R-:W-:-:S04] HGMMA.64x{n_shape}x16.F32 R24, gdesc[UR4], R24, gsb0 ;\n");
        if dep {
            s += "[B------:R-:W-:-:S01] WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n";
        }
    }
    s + "[B------:R-:W-:-:S01] WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n[B------:R-:W-:-:S05] EXIT ;\n"
}

fn gmma_issues(n_shape: u32, dep: bool, n: usize) -> Vec<u64> {
    let name = format!("h100-hgmma-{n_shape}-{dep}-{n}.sass");
    let (v, ok) = mb(&name, &gmma_chain(n_shape, dep, n), &[]);
    assert!(ok, "{name}: {v}");
    warp(&v, 0)["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .filter(|i| {
            i["op"]
                .as_str()
                .is_some_and(|o| o.starts_with("HGMMA") || o == "EXIT")
        })
        .map(|i| i["cycle"].as_u64().expect("cycle"))
        .collect()
}

/// Luo et al. (IPDPS 2024, Table VIII, H800; docs/validation/published-tensor-microbenchmarks.md
/// §2b): dense `wgmma.m64n256k16` FP16 (SS) has a 128-cycle latency, and its throughput is the
/// whitepaper peak (729 of 756 TFLOPS at the H800's clock), i.e. one m64n256k16 per 128 cycles
/// per warpgroup. The model: a dependent chain (wait for each group) takes the latency plus the
/// DEPBAR round trip, within 10 % of 128; independent MMAs complete one interval apart (the
/// slope of the time to drain 6 and 12 of them): the tensor unit's N / 2 cycles (H100
/// whitepaper 512 FMA/clk/sub-core) or the shared-memory operand path's 4 × (512 + 8N) / 128
/// cycles (2 KB of A and 32N bytes of B per warpgroup at 128 B/cycle), whichever is longer.
/// Third-party H800 measurements of one warpgroup's SS chain (hopper-isa-facts.md §7: 21.0,
/// 22.8, 27.0, 35.3, 67.4 cycles for N = 8 … 128) are 5–15 % above these.
#[test]
fn warpgroup_mma_reproduces_published_latency_and_peak_rate() {
    let dep = gmma_issues(256, true, 6);
    for w in dep[..6].windows(2) {
        let g = w[1] - w[0];
        assert!(
            (128..=141).contains(&g),
            "dependent m64n256k16: {g} cycles, expected 128 + 10 %"
        );
    }
    for (n, ii) in [(256u64, 128u64), (128, 64), (64, 32), (32, 24), (16, 20), (8, 18)] {
        let a = gmma_issues(n as u32, false, 6);
        let b = gmma_issues(n as u32, false, 12);
        let (ta, tb) = (a[6] - a[0], b[12] - b[0]);
        assert_eq!(
            (tb - ta) / 6,
            ii,
            "independent m64n{n}k16: 6 in {ta}, 12 in {tb} cycles"
        );
        // Draining n MMAs: (n − 1) intervals and one latency, within 10 %.
        let want = 5 * ii + 128;
        assert!(
            ta >= want && ta <= want + want / 10,
            "6 × m64n{n}k16 drain in {ta}, expected ~{want}"
        );
    }
}

/// A one-warpgroup Accel-Sim trace (format v5, sm_90) of `n` `HGMMA.64x64x16.F32`, each
/// ending a commit group, each followed by `WARPGROUP.DEPBAR.LE gsb0, 0` when `dep` (once at
/// the end otherwise). As NVBit records them, the MMAs list only their descriptor registers
/// (no accumulators) and the commit flag.
fn write_gmma_trace(dir: &Path, dep: bool, n: usize) -> PathBuf {
    std::fs::create_dir_all(dir).expect("dir");
    let mut warp = String::new();
    let mut pc = 0;
    let mut count = 0;
    let mut line = |warp: &mut String, s: &str| {
        *warp += &format!("{pc:04x} ffffffff {s}\n");
        pc += 16;
        count += 1;
    };
    for i in 0..n {
        line(&mut warp, "0 HGMMA.64x64x16.F32 2 UR4 UR6 1 0 0 0");
        if dep || i + 1 == n {
            line(&mut warp, "0 WARPGROUP.DEPBAR.LE 0 0 0 0");
        }
    }
    line(&mut warp, "0 EXIT 0 0 0 0");
    let mut tb = String::new();
    for w in 0..4 {
        tb += &format!("warp = {w}\ninsts = {count}\n{warp}");
    }
    let trace = format!(
        "-kernel name = gmma_chain\n-kernel id = 1\n-grid dim = (1,1,1)\n-block dim = (128,1,1)\n\
         -shmem = 0\n-nregs = 168\n-binary version = 90\n-cuda stream id = 0\n\
         -shmem base_addr = 0x00007f0000000000\n-local mem base_addr = 0x00007f1000000000\n\
         -nvbit version = 1.8\n-accelsim tracer version = 5\n-enable lineinfo = 0\n\n\
         #traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses] immediate1 immediate2\n\n\
         #BEGIN_TB\n\nthread block = 0,0,0\n\n{tb}#END_TB\n"
    );
    std::fs::write(dir.join("kernel-1.traceg"), trace).expect("trace");
    std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg\n").expect("list");
    dir.join("kernelslist.g")
}

fn h100_trace_cycles(dir: &Path) -> u64 {
    trace_cycles_on(dir, "h100")
}

/// Accel-Sim traces with warpgroup MMAs run with the same tensor model (issue 17): the trace
/// has no accumulator registers, so the MMAs complete on the `gsb0` group counter that the
/// traced `WARPGROUP.DEPBAR` waits on, as with a listing: six more dependent m64n64k16 cost
/// six latencies (128 cycles + the DEPBAR round trip, as in
/// `warpgroup_mma_reproduces_published_latency_and_peak_rate`), six more independent ones six
/// initiation intervals (32 cycles, the shared-memory operand path's 4 × (512 + 8N) / 128).
/// (With register scoreboards the trace's DEPBAR waited for nothing: 32 cycles both ways.)
#[test]
fn warpgroup_mma_traces_use_the_same_tensor_model() {
    let base = scratch("gmma-trace");
    let mut per = Vec::new();
    for dep in [true, false] {
        let mut c = Vec::new();
        for n in [6usize, 12] {
            let d = base.join(format!("{dep}-{n}"));
            write_gmma_trace(&d, dep, n);
            c.push(h100_trace_cycles(&d));
        }
        per.push((c[1] - c[0]) / 6);
    }
    assert!(
        (128..=141).contains(&per[0]),
        "dependent: {} cycles per MMA",
        per[0]
    );
    assert_eq!(per[1], 32, "independent: cycles per MMA");
    let _ = std::fs::remove_dir_all(&base);
}
