//! `sassim microbench --threads N` (issue 15): a microbenchmark's complete result — cycles,
//! issue logs, clock reads, registers read back after the run, RFC outcomes, L0 counts —
//! is the same for 1, 2 and 4 threads ticking the SMs, on the paper's listings (one warp
//! whose registers are reported), a CTA of four warps meeting at a barrier, and grids of
//! several CTAs that run on several SMs at once (global atomics, stores and loads through
//! L1, L2 and DRAM). The registers read back are checked against what the code computes,
//! so a run that reported the wrong warps' registers fails too.

mod common;
use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_gpu::microbench::{run_microbench_with, MicrobenchOptions, MicrobenchResult};
use sassim_sass::microbench::{parse, parse_file};
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/sass-samples/microbench")
}

fn run(mb: &sassim_sass::microbench::Microbench, threads: usize) -> MicrobenchResult {
    let gpu = mb.gpu.as_deref().unwrap_or("rtx-a6000");
    let cfg = GpuConfig::preset(gpu).expect("preset");
    let o = MicrobenchOptions {
        threads,
        ..MicrobenchOptions::default()
    };
    run_microbench_with(mb, &cfg, ControlFlowKind::Hanoi, &o).expect("microbenchmark runs")
}

/// The JSON of a run with 1 thread, after checking that 2 and 4 threads give the same.
fn same_for_1_2_4_threads(name: &str, mb: &sassim_sass::microbench::Microbench) -> MicrobenchResult {
    let one = run(mb, 1);
    let one_json = serde_json::to_string_pretty(&one).expect("JSON");
    for t in [2, 4] {
        let other = serde_json::to_string_pretty(&run(mb, t)).expect("JSON");
        assert!(
            one_json == other,
            "{name}: {t} threads differ from 1:\n{one_json}\n---\n{other}"
        );
    }
    one
}

fn reg<'a>(r: &'a MicrobenchResult, i: usize, name: &str) -> &'a [u32] {
    r.warps[i]
        .regs
        .get(name)
        .unwrap_or_else(|| panic!("warp {i} has no {name}"))
}

/// The MICRO'25 listings (`fixtures/sass-samples/microbench`), including the one that
/// faults (Listing 3 with stall 4: the error and what was recorded before it).
#[test]
fn paper_listings_do_not_depend_on_threads() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sass"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for f in &files {
        let name = f.display().to_string();
        let mb = parse_file(f).unwrap_or_else(|e| panic!("{name}: {e}"));
        let r = same_for_1_2_4_threads(&name, &mb);
        match &r.error {
            // Listing 3 with stall 4 reads a stale address register.
            Some(e) => assert!(
                name.contains("bypass_s4") && e.contains("illegal address"),
                "{name}: {e}"
            ),
            None => assert!(!r.warps.is_empty() && r.total_cycles > 0, "{name}"),
        }
    }
    // Listing 2 with stall 4: R5 = R1 + R1 with R1 = 3.0 written in time (M25 A4.1).
    let mb = parse_file(&fixtures().join("listing2_stall_s4.sass")).expect("listing 2");
    let r = run(&mb, 2);
    assert!(
        reg(&r, 0, "R5").iter().all(|&x| f32::from_bits(x) == 6.0),
        "{r:?}"
    );
}

/// One CTA, four warps on sub-core 0 meeting at a barrier, then independent FADDs (the
/// scheduler microbenchmark of `crates/cli/tests/sched_microbench.rs`).
#[test]
fn barrier_of_four_warps_does_not_depend_on_threads() {
    let mut s = String::from(
        ".block 512\n.active_warps 0,4,8,12\n.init R1 = warp\n.init R2 = 1.0\n\
         [B------:R-:W-:-:S01] BAR.SYNC 0x0 ;\n\
         [B------:R-:W-:-:S01] CS2R.32 R40, SR_CLOCKLO ;\n\
         [B------:R-:W-:-:S01] IADD3 R3, R1, 0x10, RZ ;\n",
    );
    for i in 0..8 {
        let stall = if i == 1 { 4 } else { 1 };
        s += &format!(
            "[B------:R-:W-:-:S{stall:02}] FADD R{}, R{}, R{} ;\n",
            2 * i + 20,
            2 * i + 1,
            2 * i + 2
        );
    }
    s += "[B------:R-:W-:-:S01] CS2R.32 R41, SR_CLOCKLO ;\n[B------:R-:W-:-:S05] EXIT ;\n";
    let mb = parse(&s, "barrier4").expect("parse");
    let r = same_for_1_2_4_threads("barrier4", &mb);
    let slots: Vec<u32> = r.warps.iter().map(|w| w.warp).collect();
    assert_eq!(slots, [0, 4, 8, 12]);
    for (i, w) in r.warps.iter().enumerate() {
        assert_eq!(w.clocks.len(), 2, "slot {}", w.warp);
        assert_eq!(w.issues.len(), 13, "slot {}", w.warp);
        // R3 = the warp's index in the CTA (`.init R1 = warp`) + 16.
        assert!(
            reg(&r, i, "R3").iter().all(|&x| x == w.warp + 16),
            "slot {}",
            w.warp
        );
    }
}

/// Six CTAs of three warps, one per SM, all at once: every thread adds 1 to one global
/// counter (the atomic returns the old value), stores its thread index, loads the counter
/// and a shared word set by `.shared`, and reads the clock around it.
const ATOMICS: &str = ".grid 6\n.block 128\n.active_warps 0,1,3\n.init R2 = 0x1000\n.init R3 = 0\n\
    .init R6 = 1\n.init R7 = tid.x\n.global.fill 0x1000 = u32 64 0\n.shared 0x0 = u32 [7, 8, 9, 10]\n\
    [B------:R-:W-:-:S01] CS2R.32 R20, SR_CLOCKLO ;\n\
    [B------:R-:W0:-:S02] ATOMG.E.ADD.STRONG.GPU PT, R8, [R2.64], R6 ;\n\
    [B------:R-:W1:-:S02] LDG.E R9, [R2.64] ;\n\
    [B------:R-:W-:-:S02] STG.E [R2.64+0x4], R7 ;\n\
    [B------:R-:W2:-:S02] LDG.E R10, [R2.64+0x4] ;\n\
    [B------:R-:W3:-:S02] LDS R11, [0x4] ;\n\
    [B0123--:R-:W-:-:S04] IADD3 R12, R8, R9, R10 ;\n\
    [B------:R-:W-:-:S01] CS2R.32 R21, SR_CLOCKLO ;\n\
    [B------:R-:W-:-:S05] EXIT ;\n";

#[test]
fn grid_with_global_atomics_does_not_depend_on_threads() {
    let mb = parse(ATOMICS, "atomics6").expect("parse");
    let r = same_for_1_2_4_threads("atomics6", &mb);
    assert_eq!(r.warps.len(), 18, "six CTAs of three warps");
    // The CTAs ran at the same time (on six SMs): every warp's first clock read is the same.
    let first: Vec<u64> = r.warps.iter().map(|w| w.clocks[0]).collect();
    assert!(first.iter().all(|&c| c == first[0]), "{first:?}");
    // The atomics returned every count from 0 to 575 once, and each warp's lanes got
    // consecutive counts.
    let mut olds: Vec<u32> = Vec::new();
    for i in 0..r.warps.len() {
        let v = reg(&r, i, "R8");
        assert!(v.windows(2).all(|p| p[1] == p[0] + 1), "warp {i}: {v:?}");
        olds.extend_from_slice(v);
        assert!(
            reg(&r, i, "R11").iter().all(|&x| x == 8),
            "warp {i}: the .shared word"
        );
    }
    olds.sort_unstable();
    assert_eq!(olds, (0..576).collect::<Vec<u32>>());
}

/// Four CTAs of eight warps (the `mem` microbenchmark of `tests/preset_keys.rs`): loads
/// 32 KB apart, stores and loads 1 MB apart, through L1, L2 and DRAM.
#[test]
fn grid_through_the_memory_hierarchy_does_not_depend_on_threads() {
    let s = common::mem_microbench(false);
    let mb = parse(&s, "mem4").expect("parse");
    let r = same_for_1_2_4_threads("mem4", &mb);
    assert_eq!(r.warps.len(), 32, "four CTAs of eight warps");
    assert!(r.l0i_misses > 0 && r.total_cycles > 300, "{r:?}");
    for i in 0..r.warps.len() {
        // Two words of the 1-filled memory.
        assert!(reg(&r, i, "R40").iter().all(|&x| x == 2), "warp {i}");
    }
}

/// Two CTAs on two SMs: CTA 0 stores to a word in the cycle in which CTA 1 loads it. The
/// load reads memory as it was at the start of the cycle (docs/model.md "Determinism"), so
/// it gets the old value whatever the thread count; a single executor ticking the SMs in
/// order (the engine before microbenchmarks were split by SM) let SM 1 see SM 0's store.
#[test]
fn same_cycle_store_and_load_on_two_sms_follow_the_rule() {
    let src = ".grid 2\n.block 32\n.init R2 = 0x1000\n.init R3 = 0\n.init R6 = 7\n\
        .global.fill 0x1000 = u32 64 0\n\
        [B------:R-:W0:-:S04] S2R R1, SR_CTAID.X ;\n\
        [B0-----:R-:W-:-:S05] ISETP.NE.AND P0, PT, R1, RZ, PT ;\n\
        [B------:R-:W-:-:S05] @P0 BRA other ;\n\
        [B------:R-:W-:-:S02] STG.E [R2.64], R6 ;\n\
        [B------:R-:W-:-:S05] EXIT ;\n\
        other:\n\
        [B------:R-:W0:-:S02] LDG.E R9, [R2.64] ;\n\
        [B0-----:R-:W-:-:S05] EXIT ;\n";
    let mb = parse(src, "race").expect("parse");
    let r = same_for_1_2_4_threads("race", &mb);
    assert_eq!(r.warps.len(), 2);
    let at = |i: usize, op: &str| {
        r.warps[i]
            .issues
            .iter()
            .find(|x| x.op == op)
            .map(|x| x.cycle)
            .unwrap_or_else(|| panic!("warp {i} issued no {op}: {r:?}"))
    };
    // The logs are in CTA order: CTA 0 stores, CTA 1 loads, in the same cycle.
    assert_eq!(reg(&r, 1, "R1"), [1; 32]);
    assert_eq!(at(0, "STG.E"), at(1, "LDG.E"), "{r:?}");
    assert_eq!(reg(&r, 1, "R9"), [0; 32], "the load saw the same cycle's store");
}
