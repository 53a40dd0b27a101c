//! LTRF's hardware side (issue 14, point 2; `sassim_timing::ltrf`, docs/ltrf.md) on
//! hand-written kernels whose intervals, working sets and prefetch costs are known.

use sassim_config::GpuConfig;
use sassim_gpu::{Gpu, KernelRun, RunOptions};
use sassim_sass::microbench::parse;

/// One warp: 16 independent `FADD R(2i), R(2i+1), R(2i+1)` (two registers each) and EXIT.
/// With 8 registers per interval, the pass makes four intervals of four FADDs (8 registers,
/// R(8k)..R(8k+7), one per bank of 16: no conflict) and the EXIT joins the last.
fn chain() -> String {
    let mut s = String::from(".block 32\n");
    for i in 0..16 {
        s += &format!(
            "[B------:R-:W-:-:S01] FADD R{}, R{}, R{} ;\n",
            2 * i,
            2 * i + 1,
            2 * i + 1
        );
    }
    s += "[B------:R-:W-:-:S05] EXIT ;\n";
    s
}

fn run(src: &str, sets: &[&str]) -> KernelRun {
    let mut sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    sets.push("regfile.ltrf.registers_per_interval=8".into());
    let cfg = GpuConfig::preset("rtx-a6000")
        .expect("preset")
        .with_overrides(&sets)
        .expect("overrides");
    let mut gpu = Gpu::new(cfg);
    let mb = parse(src, "ltrf.sass").expect("microbenchmark");
    sassim_gpu::microbench::run_parsed(&mut gpu, &mb, 0, &RunOptions::default()).expect("run")
}

/// Each interval entry prefetches: LTRF its 8 registers, LTRF+ the 4 live on entry (the
/// sources; the destinations are written first). A prefetch costs (conflicts + 1) × the
/// main file's latency plus one crossbar cycle per register (1024-bit crossbar), and the
/// single warp waits for each: 4 × (L + 8) cycles with LTRF, 4 × (L + 4) with LTRF+.
#[test]
fn prefetches_cost_latency_plus_transfer_at_every_interval() {
    let src = chain();
    let base = run(&src, &[]);
    for (org, regs) in [("ltrf", 8u64), ("ltrf_plus", 4u64)] {
        for l in [1u64, 6, 20] {
            let r = run(
                &src,
                &[
                    &format!("regfile.organisation={org}"),
                    &format!("regfile.ltrf.main_latency={l}"),
                ],
            );
            let s = &r.stats;
            assert_eq!(s.ltrf_prefetches, 4, "{org} L={l}");
            assert_eq!(s.ltrf_prefetch_regs, 4 * regs, "{org} L={l}");
            assert_eq!(s.ltrf_prefetch_conflicts, 0);
            assert_eq!(s.ltrf_prefetch_cycles, 4 * (l + regs), "{org} L={l}");
            assert_eq!(s.ltrf_cache_reads, 32, "two source reads per FADD");
            // The warp cannot issue while it prefetches: the bare kernel grows by the
            // prefetch time, less what the baseline spends on register-file port conflicts
            // (LTRF reads operands conflict-free from its cache).
            assert!(
                r.bare_cycles >= base.bare_cycles + 4 * (l + regs) - 16,
                "{org} L={l}: {} vs {}",
                r.bare_cycles,
                base.bare_cycles
            );
            assert!(s.stall_slots[sassim_timing::StallReason::RegisterPrefetch as usize] > 0);
        }
    }
}

/// Registers of one bank are fetched one after the other: a working set R0, R16, R32 (one
/// bank of 16) has 2 conflicts, and its prefetch costs 3 × L + 3.
#[test]
fn prefetch_bank_conflicts_serialise_the_main_file() {
    let src = ".block 32\n\
        [B------:R-:W-:-:S01] FADD R0, R16, R32 ;\n\
        [B------:R-:W-:-:S05] EXIT ;\n";
    let r = run(
        src,
        &["regfile.organisation=ltrf", "regfile.ltrf.main_latency=10"],
    );
    assert_eq!(r.stats.ltrf_prefetches, 1);
    assert_eq!(r.stats.ltrf_prefetch_conflicts, 2);
    assert_eq!(r.stats.ltrf_prefetch_cycles, 3 * 10 + 3);
}

/// Two warps on one sub-core share its fill path (a prefetch starts when the other's ends),
/// and one warp's execution overlaps the other's prefetches (latency tolerance): the two
/// warps together take less than twice one warp's time.
#[test]
fn prefetches_of_warps_queue_on_the_fill_path_and_overlap_execution() {
    let one = run(
        &chain(),
        &["regfile.organisation=ltrf", "regfile.ltrf.main_latency=20"],
    );
    let two_src = chain().replace(".block 32\n", ".block 160\n.active_warps 0,4\n");
    let two = run(
        &two_src,
        &["regfile.organisation=ltrf", "regfile.ltrf.main_latency=20"],
    );
    assert_eq!(two.stats.ltrf_prefetches, 8);
    // A prefetch waits while the fill path serves the other warp's.
    assert!(two.stats.ltrf_prefetch_cycles >= one.stats.ltrf_prefetch_cycles * 2);
    assert!(
        two.bare_cycles < 2 * one.bare_cycles,
        "{} vs {}",
        two.bare_cycles,
        one.bare_cycles
    );
}

/// With the two-level scheduler, a warp that waits on a long-latency load leaves the active
/// set, writes back its registers and refetches its interval when it comes back.
#[test]
fn deactivated_warps_write_back_and_refetch() {
    let src = ".block 64\n\
        .init R2 = 0x10000\n.init R3 = 0\n\
        .global.fill 0x10000 = u32 64 1\n\
        [B------:R-:W0:-:S02] LDG.E R4, [R2.64] ;\n\
        [B0-----:R-:W-:-:S01] FADD R5, R4, R4 ;\n\
        [B------:R-:W-:-:S05] EXIT ;\n";
    let r = run(
        src,
        &[
            "regfile.organisation=ltrf",
            "issue.scheduler=two_level",
            "issue.two_level_active_warps=1",
        ],
    );
    let s = &r.stats;
    assert_eq!(
        s.ltrf_deactivations, 2,
        "each warp leaves the active set while its load is out"
    );
    assert_eq!(
        s.ltrf_prefetches,
        2 + s.ltrf_deactivations,
        "a refetch per deactivation"
    );
    assert!(s.ltrf_writeback_regs > 0);
}

/// The paper's register renumbering keeps what a kernel computes (issue 14, point 1): every
/// built-in workload whose kernel the pass renumbers (sm_75, sm_86, sm_90 listings) still
/// produces its reference outputs, timed on the preset of its architecture with the renumbered
/// kernel, and runs again under LTRF+ with the renumbered intervals.
#[test]
fn renumbered_workloads_compute_their_reference_outputs() {
    use sassim_analysis::ltrf::{renumber, LtrfOptions};
    use sassim_functional::ControlFlowKind;
    use sassim_gpu::workload::{load_builtin, run_workload_timed};
    let mut renumbered = 0;
    for (arch, preset) in [("sm_75", "t4"), ("sm_86", "rtx-a6000"), ("sm_90", "h100")] {
        for b in sassim_workload::builtin() {
            let Ok((w, listing, smem)) = load_builtin(&b, arch) else {
                continue;
            };
            let mut l = listing.clone();
            let mut moved = false;
            for k in l.kernels.iter_mut() {
                if let Ok(r) = renumber(k, &LtrfOptions::default()) {
                    moved |= r.report.moved_nodes > 0;
                    *k = r.kernel;
                }
            }
            if !moved {
                continue;
            }
            renumbered += 1;
            for sets in [vec![], vec!["regfile.organisation=ltrf_plus".to_string()]] {
                let cfg = GpuConfig::preset(preset)
                    .expect("preset")
                    .with_overrides(&sets)
                    .expect("set");
                let mut g = Gpu::new(cfg);
                let r = run_workload_timed(
                    &mut g,
                    &w,
                    &l,
                    arch,
                    smem,
                    ControlFlowKind::Hanoi,
                    &RunOptions::default(),
                )
                .unwrap_or_else(|e| panic!("{} {arch}: {e}", b.name));
                assert!(r.check.is_ok(), "{} {arch} {sets:?}: {:?}", b.name, r.check);
            }
        }
    }
    assert!(renumbered >= 22, "{renumbered} renumbered workload listings");
}

/// The paper's Table 2 register files as presets (`presets/ltrf/`): each loads, is LTRF, and
/// their main-file latencies follow the table (1, 1.25, 1.5, 1.6, 2.8, 5.3, 6.3x, rounded).
#[test]
fn table2_technology_presets_load() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../presets/ltrf");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("presets/ltrf")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let lat: Vec<u32> = files
        .iter()
        .map(|f| {
            let c = GpuConfig::from_file(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert_eq!(c.regfile.organisation, sassim_config::RegFileOrganisation::Ltrf);
            c.regfile.ltrf.main_latency
        })
        .collect();
    assert_eq!(lat, vec![1, 1, 2, 2, 3, 5, 6]);
}
