//! Misses in flight are not hits (issue 13, point 6): in every cache of the model a
//! request that finds its line still being fetched for an earlier miss waits for that fill
//! and is counted as Accel-Sim's HIT_RESERVED — the L0 and L1 instruction caches, the L0
//! FL and VL constant caches with the L1 I/C behind them, the L1 data cache and the L2.

use sassim_config::GpuConfig;
use sassim_gpu::memsys::MemReport;
use sassim_gpu::microbench::run_parsed;
use sassim_gpu::{Gpu, KernelRun, RunOptions};
use sassim_sass::microbench::parse;

/// Run a microbenchmark-dialect kernel with the memory hierarchy, warps in the slot of
/// their index (sub-core = index % 4) and issue logs recorded.
fn run(src: &str, sets: &[&str]) -> KernelRun {
    let mb = parse(src, "inflight.sass").expect("parse");
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let mut gpu = Gpu::new(GpuConfig::load("rtx-a6000", &sets).expect("preset"));
    let ropts = RunOptions {
        record: true,
        slot_by_warp_index: true,
        ipc_sample_interval: 0,
        ..RunOptions::default()
    };
    run_parsed(&mut gpu, &mb, 0, &ropts).expect("run")
}

/// Issue cycles of `op` per (SM, warp slot), in SM then slot order.
fn issues_of(r: &KernelRun, op: &str) -> Vec<u64> {
    let mut v: Vec<(usize, usize, u64)> = Vec::new();
    for l in &r.logs {
        for i in &l.log.issues {
            if i.op == op {
                v.push((l.sm, l.slot, i.cycle));
            }
        }
    }
    v.sort();
    v.into_iter().map(|x| x.2).collect()
}

fn spread(v: &[u64]) -> u64 {
    v.iter().max().unwrap() - v.iter().min().unwrap()
}

fn mem(r: &KernelRun) -> &MemReport {
    r.mem.as_ref().expect("memory report")
}

fn count(b: &sassim_gpu::memsys::Breakdown, kind: &str, status: &str) -> u64 {
    b.get(kind).and_then(|m| m.get(status)).copied().unwrap_or(0)
}

/// RTX A6000: L0→L1→L0 78 cycles, L2 211: an L1 I/C miss answers after 289.
const L1_MISS_ROUND_TRIP: u64 = 39 + 39 + 211;

/// The issue's cold-start microbenchmark: four warps on the four sub-cores of a cold SM.
/// Each sub-core's L0 misses; the first request misses the L1 I-cache, the other three
/// find the line in flight and wait for it. All four warps issue their first instruction
/// within a few cycles of each other, after the L2 round trip (before: warp 0 at 291,
/// warps 1–3 at 81–83, as if the line in flight were a hit).
#[test]
fn cold_sm_four_subcores_wait_for_the_same_instruction_line() {
    let src = ".block 128\n.active_warps 0,1,2,3\n\
               [B------:R-:W-:-:S01] FADD R20, R2, R3 ;\n[B------:R-:W-:-:S01] EXIT ;\n";
    let r = run(src, &[]);
    let first = issues_of(&r, "FADD");
    assert_eq!(first.len(), 4);
    assert!(spread(&first) <= 3, "first issues {first:?}");
    assert!(first.iter().all(|&c| c > L1_MISS_ROUND_TRIP), "{first:?}");
    // The code line and the eight lines each stream buffer prefetches after it: every line
    // misses once in the L1, the three other sub-cores' requests of it are reserved hits.
    let s = &r.stats;
    assert_eq!((s.l1i_misses, s.l1i_hit_reserved, s.l1i_hits), (9, 27, 0));
    assert_eq!(s.l0i_misses, 4, "one demand miss per sub-core");
}

/// L0 I-cache: four warps of one sub-core miss the same line; the first request goes to
/// the L1, the other three find it in flight in the sub-core and wait.
#[test]
fn l0_icache_requests_of_one_subcore_share_the_miss() {
    let src = ".block 512\n.active_warps 0,4,8,12\n\
               [B------:R-:W-:-:S01] FADD R20, R2, R3 ;\n[B------:R-:W-:-:S01] EXIT ;\n";
    let r = run(src, &[]);
    let first = issues_of(&r, "FADD");
    assert_eq!(first.len(), 4);
    // One sub-core fetches one instruction per cycle, for the warp that issued last when it
    // has room: after the fill the warps' first instructions issue three cycles apart.
    assert!(spread(&first) <= 9, "first issues {first:?}");
    assert!(first.iter().all(|&c| c > L1_MISS_ROUND_TRIP), "{first:?}");
    assert_eq!(r.stats.l0i_misses, 1);
    assert_eq!(r.stats.l0i_hit_reserved, 3);
    assert_eq!(r.stats.l1i_misses, 9, "the line and its 8 prefetches");
    assert_eq!(r.stats.l1i_hit_reserved, 0);
}

/// L0 FL constant caches (one per sub-core) behind the L1 I/C: four sub-cores read the same
/// constant in a fixed-latency instruction; one L1 miss, three reserved hits, and the
/// four instructions issue together after the L2 round trip.
#[test]
fn fixed_latency_constant_misses_wait_for_the_l1_fill() {
    let src = ".block 128\n.active_warps 0,1,2,3\n\
               [B------:R-:W-:-:S01] FADD R20, R2, c[0x0][0x170] ;\n[B------:R-:W-:-:S01] EXIT ;\n";
    let r = run(src, &["frontend.perfect_icache=true"]);
    let first = issues_of(&r, "FADD");
    assert!(spread(&first) <= 3, "{first:?}");
    assert!(first.iter().all(|&c| c > L1_MISS_ROUND_TRIP), "{first:?}");
    let s = &r.stats;
    assert_eq!((s.l1c_misses, s.l1c_hit_reserved, s.l1c_hits), (1, 3, 0));
    assert_eq!(s.l0c_misses, 4);
}

/// L0 VL constant cache (LDC): a second LDC of a line whose fetch is in flight waits for
/// it (one miss, one reserved hit); its result is not ready before the first one's.
#[test]
fn ldc_of_a_line_in_flight_waits_for_it() {
    // Warps 0 and 1 (sub-cores 0 and 1) load the same constant line.
    let src = ".block 64\n\
               [B------:R-:W0:-:S02] LDC R4, c[0x0][0x170] ;\n\
               [B0-----:R-:W-:-:S01] MOV R5, R4 ;\n[B------:R-:W-:-:S01] EXIT ;\n";
    let r = run(src, &["frontend.perfect_icache=true"]);
    let m = mem(&r);
    assert_eq!((m.const_misses, m.const_hit_reserved, m.const_hits), (1, 1, 0));
    assert_eq!(count(&m.l1d_by_kind, "CONST_ACC_R", "HIT_RESERVED"), 1);
    let ldc = issues_of(&r, "LDC");
    let mov = issues_of(&r, "MOV");
    // The VL miss also missed the L1 I/C: L2 round trip on top of the VL miss penalty.
    assert!(mov[0] - ldc[0] > L1_MISS_ROUND_TRIP, "{ldc:?} {mov:?}");
    assert!(
        mov[1] >= mov[0],
        "the second result is not ready before the fill: {mov:?}"
    );
    assert!(mov[1] - mov[0] <= 3, "{mov:?}");
    assert_eq!(
        (r.stats.l1c_misses, r.stats.l1c_hit_reserved),
        (1, 0),
        "the VL cache asks once"
    );
}

/// R2:R3 = 0x10000 (one global line), read by every warp.
const GLOBAL: &str = ".global.fill 0x10000 = u32 64 5\n.init R2 = 0x10000\n.init R3 = 0\n";

/// L1 data cache: four warps (four sub-cores) of a cold SM load the same line: one miss,
/// three reserved hits (merged into the MSHR), and the four loads' data arrive together.
#[test]
fn l1d_loads_of_a_line_in_flight_are_reserved_hits() {
    let src = format!(
        ".block 128\n.active_warps 0,1,2,3\n{GLOBAL}\
         [B------:R-:W0:-:S02] LDG.E R4, [R2.64] ;\n[B0-----:R-:W-:-:S01] MOV R5, R4 ;\n\
         [B------:R-:W-:-:S01] EXIT ;\n"
    );
    let r = run(&src, &["frontend.perfect_icache=true"]);
    let m = mem(&r);
    assert_eq!(count(&m.l1d_by_kind, "GLOBAL_ACC_R", "MISS"), 1);
    assert_eq!(count(&m.l1d_by_kind, "GLOBAL_ACC_R", "HIT_RESERVED"), 3);
    assert_eq!((m.l1d.misses, m.l1d.hit_reserved, m.l1d.hits), (1, 3, 0));
    assert_eq!(m.l1d_per_sm[0][1..3], [1, 3], "per-SM misses and pending hits");
    let mov = issues_of(&r, "MOV");
    // The requests reach the L1 two cycles apart (shared-structure arbiter); the data of
    // all four comes with the one fill.
    assert!(spread(&mov) <= 8, "{mov:?}");
    assert_eq!(m.l2.read_misses, 1);
}

/// L2: two SMs load the same line; the second request finds it being fetched from DRAM:
/// a reserved hit, not a second miss, and both loads complete close together.
#[test]
fn l2_requests_of_a_line_in_flight_are_reserved_hits() {
    let src = format!(
        ".grid 2\n.block 32\n{GLOBAL}\
         [B------:R-:W0:-:S02] LDG.E R4, [R2.64] ;\n[B0-----:R-:W-:-:S01] MOV R5, R4 ;\n\
         [B------:R-:W-:-:S01] EXIT ;\n"
    );
    let r = run(&src, &["frontend.perfect_icache=true"]);
    let m = mem(&r);
    assert_eq!(m.l1d.misses, 2, "one L1 miss per SM");
    assert_eq!(m.l2.read_misses, 1);
    assert_eq!(m.l2.hit_reserved, 1);
    assert_eq!(count(&m.l2_by_kind, "GLOBAL_ACC_R", "HIT_RESERVED"), 1);
    assert_eq!(m.dram.reads, 1, "one sector read from DRAM");
    let mov = issues_of(&r, "MOV");
    assert_eq!(mov.len(), 2);
    assert!(spread(&mov) <= 4, "{mov:?}");
}
