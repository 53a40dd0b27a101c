//! The memory hierarchy wired into the GPU (issue 6): statistics in `KernelRun.mem`
//! (shared-memory bank conflicts, L1/L2 hits and misses, DRAM row hits) and the DRAM
//! bandwidth a streaming kernel reaches on the RTX A6000 preset.

use sassim_config::GpuConfig;
use sassim_gpu::memsys::MemReport;
use sassim_gpu::microbench::run_parsed;
use sassim_gpu::{Gpu, KernelRun, RunOptions};
use sassim_sass::microbench::parse;

/// Run a microbenchmark-dialect kernel with the memory hierarchy on.
fn run(src: &str, preset: &str) -> KernelRun {
    let mb = parse(src, "test.sass").expect("parse");
    let mut gpu = Gpu::new(GpuConfig::preset(preset).expect("preset"));
    assert!(gpu.mem_hierarchy, "the hierarchy is on by default");
    let ropts = RunOptions {
        ipc_sample_interval: 0,
        ..RunOptions::default()
    };
    run_parsed(&mut gpu, &mb, 0, &ropts).expect("run")
}

fn mem(r: &KernelRun) -> &MemReport {
    r.mem.as_ref().expect("memory report with the hierarchy on")
}

/// R2 = 0x10000 + lane × `stride` (global), R6 = lane × `sstride` (shared).
fn prelude(stride: u32, sstride: u32) -> String {
    format!(
        ".global.fill 0x10000 = u32 65536 5\n.init R0 = lane\n.init R3 = 0\n.init R5 = 1\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R2, R0, {stride:#x}, RZ ;\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R6, R0, {sstride:#x}, RZ ;\n\
         [B------:R-:W-:-:S06] IADD3 R2, R2, 0x10000, RZ ;\n"
    )
}

const EXIT: &str = "[B------:R-:W-:-:S05] EXIT ;\n";

#[test]
fn shared_bank_conflicts_are_counted() {
    // Stride 1 word: conflict-free. Stride 2 words: 2-way (+1). Stride 32: 32-way (+31).
    let body = "[B------:R-:W1:-:S02] LDS R12, [R6] ;\n[B-1----:R-:W-:-:S01] NOP ;\n";
    let free = run(&(prelude(4, 4) + body + EXIT), "rtx-a6000");
    let two = run(&(prelude(4, 8) + body + EXIT), "rtx-a6000");
    let all = run(&(prelude(4, 128) + body + EXIT), "rtx-a6000");
    assert_eq!(mem(&free).l1d.shared_accesses, 1);
    assert_eq!(mem(&free).l1d.bank_conflict_cycles, 0);
    assert_eq!(mem(&two).l1d.bank_conflict_cycles, 1);
    assert_eq!(mem(&two).l1d.bank_conflict_accesses, 1);
    assert_eq!(mem(&all).l1d.bank_conflict_cycles, 31);
    // Conflicts cost time: the 32-way access finishes ~30 cycles later.
    assert!(
        all.cycles >= free.cycles + 29,
        "{} vs {}",
        all.cycles,
        free.cycles
    );
}

#[test]
fn l1_and_l2_hits_and_misses_are_counted() {
    // Load a line twice (cold miss, then L1 hit); store to a second line (write-through,
    // allocated in L2) and load it (L1 miss, L2 hit).
    let src = prelude(4, 4)
        + "[B------:R-:W1:-:S02] LDG.E R12, [R2.64] ;\n[B-1----:R-:W-:-:S01] NOP ;\n\
           [B------:R-:W1:-:S02] LDG.E R13, [R2.64] ;\n[B-1----:R-:W-:-:S01] NOP ;\n\
           [B------:R-:W-:-:S02] STG.E [R2.64+0x1000], R5 ;\n"
        + &"[B------:R-:W-:-:S15] NOP ;\n".repeat(30)
        + "[B------:R-:W1:-:S02] LDG.E R14, [R2.64+0x1000] ;\n[B-1----:R-:W-:-:S01] NOP ;\n"
        + EXIT;
    let r = run(&src, "rtx-a6000");
    let m = mem(&r);
    let gr = &m.l1d_by_kind["GLOBAL_ACC_R"];
    assert_eq!(gr.get("HIT"), Some(&1), "{m:#?}");
    assert_eq!(gr.get("MISS"), Some(&2), "{m:#?}");
    assert_eq!(m.l1d_by_kind["GLOBAL_ACC_W"].get("MISS"), Some(&1), "{m:#?}");
    assert_eq!(m.l2.read_misses, 1, "{m:#?}");
    assert_eq!(m.l2.read_hits, 1, "{m:#?}");
    assert_eq!(m.l2.write_misses, 1, "{m:#?}");
    assert_eq!(m.l2_by_kind["GLOBAL_ACC_R"].get("HIT"), Some(&1));
    // The cold miss read 4 sectors from DRAM.
    assert_eq!(m.dram.reads, 4, "{m:#?}");
    assert!(m.dram.row_misses + m.dram.row_conflicts >= 1);
}

#[test]
fn dram_row_hits_are_counted() {
    // 8 consecutive lines (1 KB) of one DRAM row: after the first activate the column
    // reads of the same bank hit the open row.
    let mut src = prelude(4, 4);
    for k in 0..16 {
        src += &format!(
            "[B------:R-:W1:-:S01] LDG.E R{}, [R2.64+{:#x}] ;\n",
            12 + k,
            k * 0x80
        );
    }
    src += "[B------:R-:W-:-:S01] NOP ;\n[B-1----:R-:W-:-:S01] NOP ;\n";
    src += EXIT;
    let r = run(&src, "rtx-a6000");
    let m = mem(&r);
    assert_eq!(m.dram.reads, 64, "{m:#?}");
    assert!(m.dram.row_hits > 0, "{m:#?}");
    assert!(m.dram.row_hits > m.dram.row_misses, "{m:#?}");
}

#[test]
fn global_atomics_and_constants_are_counted() {
    let src = prelude(4, 4)
        + "[B------:R-:W1:-:S02] ATOMG.E.ADD.STRONG.GPU R12, [R2.64], R5 ;\n[B-1----:R-:W-:-:S01] NOP ;\n\
           [B------:R-:W1:-:S02] LDC R13, c[0x0][0x160] ;\n[B-1----:R-:W-:-:S01] NOP ;\n\
           [B------:R-:W1:-:S02] LDC R14, c[0x0][0x164] ;\n[B-1----:R-:W-:-:S01] NOP ;\n"
        + EXIT;
    let r = run(&src, "rtx-a6000");
    let m = mem(&r);
    assert_eq!(m.l1d.global_atomics, 1);
    assert_eq!(m.l2.atomic_misses, 1, "{m:#?}");
    // LDC goes to the L0 VL constant cache. The timing model does not get LDC's constant
    // address yet (StaticInst::const_operand skips LDC), so every LDC counts as a hit.
    assert_eq!(m.const_hits + m.const_misses, 2, "{m:#?}");
    assert!(m.l1d_by_kind["CONST_ACC_R"].contains_key("HIT"));
}

/// A read stream: 336 CTAs of 256 threads (4 per SM on all 84 SMs), each thread loads
/// 8 × 16 B at a stride of the whole grid's footprint (11 MB in all, twice the L2).
fn stream_kernel() -> String {
    let threads: u64 = 336 * 256;
    let step = threads * 16;
    let words = 8 * step / 4;
    let mut s = format!(
        ".kernel stream\n.grid 336\n.block 256\n.global.fill 0x1000000 = u32 {words} 1\n\
         .init R0 = tid.x\n.init R3 = 0\n\
         [B------:R-:W0:-:S02] S2R R1, SR_CTAID.X ;\n\
         [B0-----:R-:W-:-:S04] IMAD R2, R1, 0x100, R0 ;\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R2, R2, 0x10, RZ ;\n\
         [B------:R-:W-:-:S06] IADD3 R2, R2, 0x1000000, RZ ;\n"
    );
    for k in 0..8u64 {
        s += &format!(
            "[B------:R-:W1:-:S01] LDG.E.128 R{}, [R2.64+{:#x}] ;\n",
            4 + 4 * k,
            k * step
        );
    }
    s += "[B------:R-:W-:-:S01] NOP ;\n[B-1----:R-:W-:-:S01] NOP ;\n";
    s += EXIT;
    s
}

#[test]
fn stream_reaches_most_of_the_dram_bandwidth() {
    let r = run(&stream_kernel(), "rtx-a6000");
    let m = mem(&r);
    let bytes = m.dram.bytes as f64;
    assert_eq!(
        m.dram.bytes,
        336 * 256 * 16 * 8,
        "every byte read once from DRAM: {m:#?}"
    );
    let frac = bytes / r.cycles as f64 / m.dram_theoretical_bytes_per_core_cycle;
    eprintln!(
        "stream: {} cycles, {:.1} B/cycle of {:.1} peak = {:.1} %; row hits {} misses {} conflicts {}",
        r.cycles,
        bytes / r.cycles as f64,
        m.dram_theoretical_bytes_per_core_cycle,
        100.0 * frac,
        m.dram.row_hits,
        m.dram.row_misses,
        m.dram.row_conflicts
    );
    assert!((0.60..=0.92).contains(&frac), "{:.3} of peak", frac);
}

#[test]
fn hierarchy_runs_are_deterministic() {
    let src = prelude(4, 4)
        + "[B------:R-:W1:-:S01] LDG.E R12, [R2.64] ;\n[B------:R-:W1:-:S01] LDG.E R13, [R2.64+0x4000] ;\n\
           [B------:R-:W-:-:S02] STG.E [R2.64+0x8000], R5 ;\n[B-1----:R-:W-:-:S01] NOP ;\n"
        + EXIT;
    let a = run(&src, "t4");
    let b = run(&src, "t4");
    assert_eq!(a.cycles, b.cycles);
    assert_eq!(
        serde_json::to_string(mem(&a)).expect("json"),
        serde_json::to_string(mem(&b)).expect("json")
    );
}
