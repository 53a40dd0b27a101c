//! Microbenchmark sources and runs shared by the gpu crate's tests.

/// The `mem` microbenchmark (`preset_keys.rs`, `microbench_threads.rs`): four CTAs of eight warps; each thread reads 8 lines 32 KB apart
/// and 8 lines 1 MB apart (rows of one bank), writes lines it then reads back (write/read
/// turnarounds): 512 KB through L1, L2 and DRAM. `store_sum`: each thread then stores
/// R20 + R37.
#[allow(dead_code)]
pub fn mem_microbench(store_sum: bool) -> String {
    let mut s = String::from(
        ".grid 4\n.block 256\n.init R0 = tid.x\n.init R3 = 0\n.init R5 = 1\n\
         .global.fill 0x100000 = u32 2359296 1\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R2, R0, 0x80, RZ ;\n\
         [B------:R-:W-:-:S06] IADD3 R2, R2, 0x100000, RZ ;\n",
    );
    for i in 0..8 {
        s += &format!(
            "[B------:R-:W0:-:S02] LDG.E R{}, [R2.64+{:#x}] ;\n",
            20 + i,
            i * 0x8000
        );
    }
    for i in 0..8 {
        s += &format!(
            "[B------:R-:W-:-:S02] STG.E [R2.64+{:#x}], R5 ;\n\
             [B------:R-:W1:-:S02] LDG.E R{}, [R2.64+{:#x}] ;\n",
            0x40000 + i * 0x100000,
            30 + i,
            0x40020 + i * 0x100000
        );
    }
    s += "[B01----:R-:W-:-:S01] IADD3 R40, R20, R37, RZ ;\n";
    if store_sum {
        s += "[B------:R-:W-:-:S02] STG.E [R2.64+0x80000], R40 ;\n";
    }
    s += "[B------:R-:W-:-:S05] EXIT ;\n";
    s
}

/// Every statistic of the BFS trace's 16 kernels (Accel-Sim tracer v3, RTX A6000) under
/// `opts`, per kernel as text (`parallel.rs`, `subcore_sleep.rs`).
#[allow(dead_code)]
pub fn bfs_trace_text(opts: &sassim_gpu::RunOptions) -> Vec<String> {
    let list = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/traces/bfs-sm80-v3/kernelslist.g");
    let mut gpu = sassim_gpu::Gpu::new(sassim_config::GpuConfig::preset("rtx-a6000").expect("preset"));
    let runs = sassim_gpu::trace_exec::run_kernelslist(&mut gpu, &list, &[], opts).expect("bfs trace");
    assert_eq!(runs.len(), 16);
    runs.iter()
        .map(|r| {
            format!(
                "{:?} {:?} {:?} {}",
                r.run.stats, r.run.mem, r.run.dispatch, r.run.cycles
            )
        })
        .collect()
}

/// Everything a kernel run reports (statistics, memory counters, cycles, occupancy), as text.
#[allow(dead_code)]
pub fn kernel_run_text(k: &sassim_gpu::KernelRun) -> String {
    format!(
        "cycles {} bare {} first {} ctas {} sms {} occupancy {:?}\nstats {:?}\nmem {:?}\ndispatch {:?}\nipc {:?}",
        k.cycles, k.bare_cycles, k.first_warp_cycle, k.ctas, k.sms_used, k.occupancy, k.stats, k.mem, k.dispatch, k.ipc_timeline
    )
}

/// Built-in workload `name` (with `grid` CTAs instead of its own when given) on the RTX
/// A6000 preset, sm_86 code and Hanoi control flow, under `opts`; panics with `what` on an
/// error.
#[allow(dead_code)]
pub fn run_builtin_a6000(
    name: &str,
    grid: Option<u32>,
    opts: &sassim_gpu::RunOptions,
    what: &str,
) -> sassim_gpu::workload::WorkloadRun {
    let b = sassim_workload::builtin_named(name).expect("built-in workload");
    let (mut w, listing, smem) = sassim_gpu::workload::load_builtin(&b, "sm_86").expect("load");
    if let Some(g) = grid {
        w.grid = [g, 1, 1];
    }
    let mut gpu = sassim_gpu::Gpu::new(sassim_config::GpuConfig::preset("rtx-a6000").expect("preset"));
    sassim_gpu::workload::run_workload_timed(
        &mut gpu,
        &w,
        &listing,
        "sm_86",
        smem,
        sassim_functional::ControlFlowKind::Hanoi,
        opts,
    )
    .unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// The gather of `scripts/gen-gather-trace.py`, smaller (336 CTAs, two gathers each),
/// written into `dir`; its kernels list. A memory-bound load whose L1s reject loads.
#[allow(dead_code)]
pub fn small_gather(dir: &std::path::Path) -> std::path::PathBuf {
    let gather = sassim_trace::synthetic::GatherTrace {
        ctas: 336,
        gathers: 2,
        table_bytes: 256 << 20,
        seed: 15,
    };
    gather.write(dir).expect("gather trace")
}
