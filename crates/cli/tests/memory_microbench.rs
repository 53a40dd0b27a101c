//! The memory pipeline with the memory hierarchy on, through `sassim microbench`
//! (issue 6). M25 = MICRO'25 reference (`modern-gpu-cores-micro25.md`: Table 2, A9),
//! T4P = the Turing T4 microbenchmarking report (Fig. 3.5, Table 4.2).
//!
//! Latency definitions (M25 Table 2): RAW = issue distance from a load to a consumer that
//! waits on the load's write counter; WAR = issue distance to an instruction that
//! overwrites a source and waits on the load's read counter. Loads that should hit are
//! preceded by a load of the same lines that is waited for.

mod common;
use common::*;

/// R2:R3 = 0x10000 + lane × `bytes` (global), R6 = lane × `bytes` (shared),
/// UR4:UR5 = 0x10000 (uniform global), UR6 = 0 (uniform shared), R10 = 0x160.
fn prelude(bytes: u32) -> String {
    format!(
        ".gpu rtx-a6000\n.global.fill 0x10000 = u32 8192 5\n.init R0 = lane\n.init R3 = 0\n\
         .init UR4 = 0x10000\n.init UR5 = 0\n.init UR6 = 0\n.init R10 = 0x160\n.init R5 = 1\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R2, R0, {bytes:#x}, RZ ;\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R6, R0, {bytes:#x}, RZ ;\n\
         [B------:R-:W-:-:S06] IADD3 R2, R2, 0x10000, RZ ;\n"
    )
}

#[derive(Clone, Copy, PartialEq)]
enum Dep {
    War,
    Raw,
}

/// Issue distance from `op` to `next`, which waits on `op`'s read (WAR) or write (RAW)
/// counter. `warm` (if any) runs first and is waited for.
fn distance(name: &str, bytes: u32, warm: Option<&str>, op: &str, dep: Dep, next: &str) -> u64 {
    let mut src = prelude(bytes);
    if let Some(w) = warm {
        src += &format!("[B------:R-:W1:-:S02] {w} ;\n[B-1----:R-:W-:-:S01] NOP ;\n");
    }
    match dep {
        Dep::War => src += &format!("[B------:R0:W-:-:S02] {op} ;\n[B0-----:R-:W-:-:S01] {next} ;\n"),
        Dep::Raw => src += &format!("[B------:R-:W1:-:S02] {op} ;\n[B-1----:R-:W-:-:S01] {next} ;\n"),
    }
    src += "[B------:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb(&format!("{name}.sass"), &src, &[]);
    assert!(ok, "{name}: {v}");
    let c = cycles(&v, 0);
    let n = c.len();
    // ..., op, next, EXIT
    c[n - 2] - c[n - 3]
}

fn sfx(bytes: u32) -> &'static str {
    match bytes {
        8 => ".64",
        16 => ".128",
        _ => "",
    }
}

fn within1(name: &str, got: u64, paper: u64) {
    assert!(
        got.abs_diff(paper) <= 1,
        "{name}: simulated {got}, M25 Table 2 {paper}"
    );
}

/// Global load: WAR and RAW (the load hits in L1: the same lines were loaded before).
fn ldg(bytes: u32, uniform: bool, war: u64, raw: u64) {
    let addr = if uniform { "[UR4.64]" } else { "[R2.64]" };
    let op = format!("LDG.E{} R12, {addr}", sfx(bytes));
    let warm = op.replace("R12", "R20");
    let name = format!("ldg{bytes}{uniform}");
    let src_reg = if uniform { "MOV R12, RZ" } else { "MOV R2, RZ" };
    let w = distance(&format!("{name}w"), bytes, Some(&warm), &op, Dep::War, src_reg);
    let r = distance(
        &format!("{name}r"),
        bytes,
        Some(&warm),
        &op,
        Dep::Raw,
        "MOV R9, R12",
    );
    within1(&format!("{op} WAR"), w, war);
    within1(&format!("{op} RAW"), r, raw);
}

fn stg(bytes: u32, uniform: bool, war: u64) {
    let addr = if uniform { "[UR4.64]" } else { "[R2.64]" };
    let op = format!("STG.E{} {addr}, R12", sfx(bytes));
    let w = distance(
        &format!("stg{bytes}{uniform}"),
        bytes,
        None,
        &op,
        Dep::War,
        "MOV R12, RZ",
    );
    within1(&format!("{op} WAR"), w, war);
}

fn lds(bytes: u32, uniform: bool, war: u64, raw: u64) {
    let addr = if uniform { "[UR6]" } else { "[R6]" };
    let op = format!("LDS{} R12, {addr}", sfx(bytes));
    let name = format!("lds{bytes}{uniform}");
    let src_reg = if uniform { "MOV R12, RZ" } else { "MOV R6, RZ" };
    let w = distance(&format!("{name}w"), bytes, None, &op, Dep::War, src_reg);
    let r = distance(&format!("{name}r"), bytes, None, &op, Dep::Raw, "MOV R9, R12");
    within1(&format!("{op} WAR"), w, war);
    within1(&format!("{op} RAW"), r, raw);
}

fn sts(bytes: u32, uniform: bool, war: u64) {
    let addr = if uniform { "[UR6]" } else { "[R6]" };
    let op = format!("STS{} {addr}, R12", sfx(bytes));
    let w = distance(
        &format!("sts{bytes}{uniform}"),
        bytes,
        None,
        &op,
        Dep::War,
        "MOV R12, RZ",
    );
    within1(&format!("{op} WAR"), w, war);
}

fn ldc(bytes: u32, indexed: bool, war: u64, raw: u64) {
    let (op, src_reg) = if indexed {
        (format!("LDC{} R12, c[0x0][R10]", sfx(bytes)), "MOV R10, RZ")
    } else {
        (format!("LDC{} R12, c[0x0][0x160]", sfx(bytes)), "MOV R12, RZ")
    };
    let name = format!("ldc{bytes}{indexed}");
    // Table 2 measures hits: the same constant line is loaded first (L0 VL constant cache).
    let warm = op.replace("R12", "R20");
    let w = distance(&format!("{name}w"), 4, Some(&warm), &op, Dep::War, src_reg);
    let r = distance(&format!("{name}r"), 4, Some(&warm), &op, Dep::Raw, "MOV R9, R12");
    within1(&format!("{op} WAR"), w, war);
    within1(&format!("{op} RAW"), r, raw);
}

fn ldgsts(bytes: u32, war: u64, raw: u64) {
    let op = format!("LDGSTS.E{} [R6], [R2.64]", sfx(bytes));
    let warm = format!("LDG.E{} R20, [R2.64]", sfx(bytes));
    let name = format!("ldgsts{bytes}");
    let w = distance(
        &format!("{name}w"),
        bytes,
        Some(&warm),
        &op,
        Dep::War,
        "MOV R2, RZ",
    );
    let r = distance(&format!("{name}r"), bytes, Some(&warm), &op, Dep::Raw, "NOP");
    within1(&format!("{op} WAR"), w, war);
    within1(&format!("{op} RAW"), r, raw);
}

// ---- M25 Table 2, one test per row ----

#[test]
fn t2_load_global_32_uniform() {
    ldg(4, true, 9, 29);
}
#[test]
fn t2_load_global_64_uniform() {
    ldg(8, true, 9, 31);
}
#[test]
fn t2_load_global_128_uniform() {
    ldg(16, true, 9, 35);
}
#[test]
fn t2_load_global_32_regular() {
    ldg(4, false, 11, 32);
}
#[test]
fn t2_load_global_64_regular() {
    ldg(8, false, 11, 34);
}
#[test]
fn t2_load_global_128_regular() {
    ldg(16, false, 11, 38);
}
#[test]
fn t2_store_global_32_uniform() {
    stg(4, true, 10);
}
#[test]
fn t2_store_global_64_uniform() {
    stg(8, true, 12);
}
#[test]
fn t2_store_global_128_uniform() {
    stg(16, true, 16);
}
#[test]
fn t2_store_global_32_regular() {
    stg(4, false, 14);
}
#[test]
fn t2_store_global_64_regular() {
    stg(8, false, 16);
}
#[test]
fn t2_store_global_128_regular() {
    stg(16, false, 20);
}
#[test]
fn t2_load_shared_32_uniform() {
    lds(4, true, 9, 23);
}
#[test]
fn t2_load_shared_64_uniform() {
    lds(8, true, 9, 23);
}
#[test]
fn t2_load_shared_128_uniform() {
    lds(16, true, 9, 25);
}
#[test]
fn t2_load_shared_32_regular() {
    lds(4, false, 9, 24);
}
#[test]
fn t2_load_shared_64_regular() {
    lds(8, false, 9, 24);
}
#[test]
fn t2_load_shared_128_regular() {
    lds(16, false, 9, 26);
}
#[test]
fn t2_store_shared_32_uniform() {
    sts(4, true, 10);
}
#[test]
fn t2_store_shared_64_uniform() {
    sts(8, true, 12);
}
#[test]
fn t2_store_shared_128_uniform() {
    sts(16, true, 16);
}
#[test]
fn t2_store_shared_32_regular() {
    sts(4, false, 12);
}
#[test]
fn t2_store_shared_64_regular() {
    sts(8, false, 14);
}
#[test]
fn t2_store_shared_128_regular() {
    sts(16, false, 18);
}
#[test]
fn t2_load_constant_32_immediate() {
    ldc(4, false, 10, 26);
}
#[test]
fn t2_load_constant_32_regular() {
    ldc(4, true, 29, 29);
}
#[test]
fn t2_load_constant_64_regular() {
    ldc(8, true, 29, 29);
}
#[test]
fn t2_ldgsts_32() {
    ldgsts(4, 13, 39);
}
#[test]
fn t2_ldgsts_64() {
    ldgsts(8, 13, 39);
}
#[test]
fn t2_ldgsts_128() {
    ldgsts(16, 13, 39);
}

// ---- M25 §5.4 / A9: memory pipeline throughput ----

/// Issue intervals of 12 independent always-hitting loads in each of `n` warps on
/// sub-cores 0..n.
fn load_run_intervals(n: u32) -> Vec<Vec<u64>> {
    let active: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let mut src = format!(
        ".gpu rtx-a6000\n.block 128\n.active_warps {}\n.global.fill 0x10000 = u32 8192 5\n\
         .init R0 = lane\n.init R3 = 0\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R2, R0, 0x4, RZ ;\n\
         [B------:R-:W-:-:S06] IADD3 R2, R2, 0x10000, RZ ;\n\
         [B------:R-:W1:-:S02] LDG.E R20, [R2.64] ;\n[B-1----:R-:W-:-:S01] NOP ;\n",
        active.join(",")
    );
    for k in 0..12 {
        src += &format!("[B------:R-:W-:-:S01] LDG.E R{}, [R2.64] ;\n", 30 + k);
    }
    src += "[B------:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb(&format!("tput{n}.sass"), &src, &[]);
    assert!(ok, "{v}");
    (0..n as u64)
        .map(|w| {
            let iss = warp(&v, w)["issues"].as_array().expect("issues").clone();
            let c: Vec<u64> = iss
                .iter()
                .filter(|i| i["op"].as_str().is_some_and(|o| o.starts_with("LDG")))
                .map(|i| i["cycle"].as_u64().expect("cycle"))
                .skip(1)
                .collect();
            c.windows(2).map(|p| p[1] - p[0]).collect()
        })
        .collect()
}

/// One warp: five loads back to back (queue of 4 + latch), then one every 4 cycles
/// (address calculation, M25 rules 34–35).
#[test]
fn throughput_one_subcore() {
    let iv = load_run_intervals(1);
    assert_eq!(&iv[0][..4], &[1, 1, 1, 1], "{iv:?}");
    assert!(iv[0][5..].iter().all(|&d| d == 4), "{iv:?}");
}

/// 2 sub-cores: each still every 4 cycles; 3: every 6; 4: every 8 — the shared structures
/// take one request every 2 cycles (M25 rule 36); the sub-cores are staggered by 2.
#[test]
fn throughput_shared_structures_limit() {
    for (n, every) in [(2u32, 4u64), (3, 6), (4, 8)] {
        let iv = load_run_intervals(n);
        for (w, d) in iv.iter().enumerate() {
            assert_eq!(&d[..4], &[1, 1, 1, 1], "{n} sub-cores, warp {w}: {d:?}");
            assert!(
                d[5..].iter().all(|&x| x == every),
                "{n} sub-cores, warp {w}: {d:?}"
            );
        }
        // The sixth loads of the sub-cores leave 2 cycles apart.
        let mut firsts: Vec<u64> = iv.iter().map(|d| d[4]).collect();
        firsts.sort_unstable();
        assert!(firsts.windows(2).all(|p| p[1] - p[0] == 2), "{n}: {firsts:?}");
    }
}

// ---- T4 (T4P Fig. 3.5 and Table 4.2), each within 10 % ----

fn t4_prelude(contended: bool) -> String {
    let idx = if contended { "RZ" } else { "R0" };
    format!(
        ".gpu t4\n.global.fill 0x10000 = u32 8192 5\n.shared.fill 0x0 = u32 1024 5\n\
         .init R0 = lane\n.init R3 = 0\n.init R5 = 1\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R2, {idx}, 0x4, RZ ;\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R6, {idx}, 0x4, RZ ;\n\
         [B------:R-:W-:-:S06] IADD3 R2, R2, 0x10000, RZ ;\n"
    )
}

fn within10(name: &str, got: u64, paper: f64) {
    let err = (got as f64 - paper).abs() / paper;
    assert!(
        err <= 0.10,
        "{name}: simulated {got}, T4P {paper} ({:.1} % off)",
        err * 100.0
    );
}

/// Load-to-use (RAW) of the last load in `body` + `LDG R12` + consumer.
fn t4_load_to_use(name: &str, before: &str) -> u64 {
    let src = t4_prelude(false)
        + before
        + "[B------:R-:W1:-:S02] LDG.E R12, [R2.64] ;\n[B-1----:R-:W-:-:S01] MOV R9, R12 ;\n\
           [B------:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb(&format!("{name}.sass"), &src, &[]);
    assert!(ok, "{v}");
    let c = cycles(&v, 0);
    let n = c.len();
    c[n - 2] - c[n - 3]
}

fn idle(n: usize) -> String {
    "[B------:R-:W-:-:S15] NOP ;\n".repeat(n)
}

#[test]
fn t4_l1_hit_latency() {
    let warm = "[B------:R-:W1:-:S02] LDG.E R20, [R2.64] ;\n[B-1----:R-:W-:-:S01] NOP ;\n";
    within10("L1 hit", t4_load_to_use("t4l1", warm), 32.0);
}

#[test]
fn t4_l2_hit_latency() {
    // A write-through store allocates the line in L2 only; the load then misses L1.
    let before = "[B------:R-:W-:-:S02] STG.E [R2.64], R5 ;\n".to_string() + &idle(40);
    within10("L2 hit", t4_load_to_use("t4l2", &before), 188.0);
}

#[test]
fn t4_l2_miss_latency() {
    within10("L2 miss (DRAM)", t4_load_to_use("t4dram", ""), 296.0);
}

/// Load-to-use of `LDG R12` after `before` on the H100 PCIe preset (the T4 prelude's
/// registers and memory).
fn h100_pcie_load_to_use(name: &str, before: &str) -> u64 {
    let src = t4_prelude(false).replacen(".gpu t4", ".gpu h100-pcie", 1)
        + before
        + "[B------:R-:W1:-:S02] LDG.E R12, [R2.64] ;\n[B-1----:R-:W-:-:S01] MOV R9, R12 ;\n\
           [B------:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb(&format!("{name}.sass"), &src, &[]);
    assert!(ok, "{v}");
    let c = cycles(&v, 0);
    let n = c.len();
    c[n - 2] - c[n - 3]
}

/// H100 PCIe (presets/h100-pcie.toml): the SM pipeline's L1 hit (MICRO'25 Table 2, 32 for a
/// per-thread address), and L2 hits and misses that many cycles later as a published
/// pointer-chase benchmark measures on the H100 ([MDL]: L1 40, L2 291, main memory 700):
/// 32 + 251 = 283 and 32 + 660 = 692.
#[test]
fn h100_pcie_load_latencies() {
    let warm = "[B------:R-:W1:-:S02] LDG.E R20, [R2.64] ;\n[B-1----:R-:W-:-:S01] NOP ;\n";
    let l1 = h100_pcie_load_to_use("h100l1", warm);
    assert_eq!(l1, 32, "L1 hit");
    let before = "[B------:R-:W-:-:S02] STG.E [R2.64], R5 ;\n".to_string() + &idle(40);
    let l2 = h100_pcie_load_to_use("h100l2", &before);
    within10("H100 PCIe L2 hit", l2, 283.0);
    let dram = h100_pcie_load_to_use("h100dram", "");
    within10("H100 PCIe L2 miss (DRAM)", dram, 692.0);
    eprintln!("h100-pcie load-to-use: L1 {l1}, L2 {l2}, DRAM {dram}");
}

/// T4P Table 4.2 method: the latency of atomic A is the time of A followed by a load B
/// of the same location, minus the time of B alone (same cache state). B is issued
/// right after A and must see A's result (same-address ordering).
fn t4_atomic(name: &str, shared: bool, contended: bool) -> u64 {
    let (atom, ld) = if shared {
        ("ATOMS.ADD R14, [R6], R5", "LDS R12, [R6]")
    } else {
        ("ATOMG.E.ADD.STRONG.GPU R14, [R2.64], R5", "LDG.E R12, [R2.64]")
    };
    let warm = format!(
        "[B------:R-:W1:-:S02] {} ;\n[B-1----:R-:W-:-:S01] NOP ;\n{}",
        atom.replace("R14", "R16"),
        idle(40)
    );
    let b = format!("[B------:R-:W1:-:S02] {ld} ;\n[B-1----:R-:W-:-:S01] MOV R9, R12 ;\n");
    let pair = format!("[B------:R-:W-:-:S01] {atom} ;\n{b}");
    let (vp, ok) = mb(
        &format!("{name}p.sass"),
        &(t4_prelude(contended) + &warm + &timed(&pair)),
        &[],
    );
    assert!(ok, "{vp}");
    let (vb, ok) = mb(
        &format!("{name}b.sass"),
        &(t4_prelude(contended) + &warm + &timed(&b)),
        &[],
    );
    assert!(ok, "{vb}");
    elapsed(&vp) - elapsed(&vb)
}

#[test]
fn t4_shared_atomic_latency() {
    within10("shared atomic", t4_atomic("t4as", true, false), 8.0);
    within10(
        "shared atomic, 32 lanes on one address",
        t4_atomic("t4asc", true, true),
        69.0,
    );
}

#[test]
fn t4_global_atomic_latency() {
    within10("global atomic", t4_atomic("t4ag", false, false), 76.0);
    within10(
        "global atomic, 32 lanes on one address",
        t4_atomic("t4agc", false, true),
        116.0,
    );
}

/// M25 rule 41: fixed-latency instructions read constants through the sub-core's L0 FL
/// cache, LDC through the L0 VL cache — after an LDC of an address, a fixed-latency read of
/// the same address still misses: its issue is delayed by about 79 cycles; a second read
/// then hits.
#[test]
fn ldc_and_fixed_latency_constant_caches_are_distinct() {
    let src = "[B------:R-:W0:-:S02] LDC R4, c[0x0][0x170] ;\n[B0-----:R-:W-:-:S01] NOP ;\n\
               [B------:R-:W-:-:S01] FADD R6, R7, c[0x0][0x170] ;\n\
               [B------:R-:W-:-:S01] FADD R8, R7, c[0x0][0x170] ;\n[B------:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb(
        "constcaches.sass",
        src,
        &["--set", "frontend.perfect_icache=true"],
    );
    assert!(ok, "{v}");
    let c = cycles(&v, 0);
    // LDC, NOP, FADD (miss), FADD (hit), EXIT
    let miss_delay = c[2] - c[1];
    assert!(
        (78..=82).contains(&miss_delay),
        "issue delay of the FL miss: {miss_delay} ({c:?})"
    );
    assert_eq!(c[3] - c[2], 1, "the second read hits");
}

/// M25 §5.4 / A9: results of the memory structures reach the register file through one
/// write-back latch per sub-core at 512 bits per cycle. Two back-to-back 128-bit L1-hit
/// loads of one warp: the second's data is ready 4 cycles after the first's (address
/// calculation pace), but its 8-cycle transfer waits for the first's, so its consumer issues
/// 8 cycles after the first load's consumer, not 4.
#[test]
fn memory_writeback_latch_serialises_transfers() {
    let mut src = prelude(16);
    src += "[B------:R-:W1:-:S02] LDG.E.128 R20, [R2.64] ;\n[B-1----:R-:W-:-:S01] NOP ;\n";
    src += "[B------:R-:W0:-:S01] LDG.E.128 R12, [R2.64] ;\n[B------:R-:W1:-:S02] LDG.E.128 R16, [R2.64] ;\n";
    src += "[B0-----:R-:W-:-:S01] MOV R8, R12 ;\n[B-1----:R-:W-:-:S01] MOV R9, R16 ;\n[B------:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb("wblatch.sass", &src, &[]);
    assert!(ok, "{v}");
    let c = cycles(&v, 0);
    let n = c.len();
    // ..., LDG (1st), LDG (2nd), MOV (waits 1st), MOV (waits 2nd), EXIT
    let (first, c1, c2) = (c[n - 5], c[n - 3], c[n - 2]);
    within1("LDG.128 regular RAW", c1 - first, 38);
    assert_eq!(
        c2 - c1,
        8,
        "second 128-bit result waits for the write-back latch: {c:?}"
    );
}

/// The L0 FL constant cache is backed by the SM's L1 instruction/constant cache (M25 A6,
/// Fig. 3; T4P: the second constant level is the L1 I-cache): a constant line that is not in
/// the L1 either (no LDC brought it) costs an L1 miss on top of the ~79-cycle L1 hit.
#[test]
fn fixed_latency_constant_miss_goes_through_l1_ic() {
    let src = "[B------:R-:W-:-:S01] NOP ;\n[B------:R-:W-:-:S01] FADD R6, R7, c[0x0][0x170] ;\n\
               [B------:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb("constcold.sass", src, &["--set", "frontend.perfect_icache=true"]);
    assert!(ok, "{v}");
    let c = cycles(&v, 0);
    assert!(
        c[1] - c[0] > 120,
        "cold constant line: L1 I/C miss, delay {} ({c:?})",
        c[1] - c[0]
    );
}
