//! `sassim ltrf analyze LISTING`: the compiler side of LTRF (issue 14) on a kernel's SASS —
//! register-intervals, the prefetch at each interval head with its working set and bank
//! conflicts, LTRF+ dead operands, and (with `--renumber`) the register renumbering that
//! spreads each interval's working set over the main register file's banks.

use crate::outputs::{write_atomic, Plan};
use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use sassim_analysis::ltrf::{analyze, renumber, LtrfKernel, LtrfOptions};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum LtrfCmd {
    /// Register-intervals, prefetches and renumbering of every kernel of a SASS listing.
    Analyze(AnalyzeArgs),
    /// Real and optimal register-interval lengths in dynamic instructions (the paper's
    /// Table 4) of the built-in workloads, from their functional runs.
    Lengths(LengthsArgs),
}

#[derive(Args)]
pub struct LengthsArgs {
    /// Built-in workloads (default: all).
    pub workloads: Vec<String>,
    /// Listing architecture (sm_75, sm_86, sm_90).
    #[arg(long, default_value = "sm_86")]
    pub arch: String,
    /// N: registers allowed in one interval.
    #[arg(long, default_value_t = 16)]
    pub registers: u32,
}

#[derive(Args)]
pub struct AnalyzeArgs {
    /// cuobjdump -sass or nvdisasm listing.
    pub listing: PathBuf,
    /// N: registers allowed in one interval (the paper studies 8, 16 and 32).
    #[arg(long, default_value_t = 16)]
    pub registers: u32,
    /// Banks of the main register file (a register's bank is its number modulo this).
    #[arg(long, default_value_t = 16)]
    pub banks: u32,
    /// Stop after the paper's Algorithm 1 (no merging of intervals by Algorithm 2).
    #[arg(long)]
    pub no_merge: bool,
    /// Also renumber the registers (interference and bank-conflict graph colouring) and
    /// report each interval's prefetch conflicts before and after.
    #[arg(long)]
    pub renumber: bool,
    /// Print every interval's prefetch (head PC, working set, live-in registers, conflicts).
    #[arg(long)]
    pub prefetches: bool,
    /// Write the analysis as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Overwrite an existing JSON file.
    #[arg(long)]
    pub force: bool,
}

pub fn ltrf(c: LtrfCmd) -> Result<ExitCode> {
    match c {
        LtrfCmd::Analyze(a) => analyze_cmd(&a),
        LtrfCmd::Lengths(a) => lengths_cmd(&a),
    }
}

/// One interval's prefetch, as reported.
#[derive(Serialize)]
struct PrefetchOut {
    interval: usize,
    pc: u64,
    instructions: usize,
    working_set: Vec<u8>,
    live_in: Vec<u8>,
    bank_conflicts: u32,
}

/// One kernel's analysis, as reported.
#[derive(Serialize)]
struct KernelOut {
    name: String,
    instructions: usize,
    intervals: usize,
    pass1_intervals: usize,
    pass2_rounds: usize,
    mean_interval_length: f64,
    oversized_intervals: usize,
    /// Registers fetched by all prefetches: LTRF (whole working sets) and LTRF+ (live-in).
    prefetched_registers: usize,
    prefetched_registers_live: usize,
    /// Intervals whose prefetch has k bank conflicts, k = 0, 1, …
    conflict_histogram: Vec<usize>,
    conflict_free_share: f64,
    /// Dead-operand bits (LTRF+): register reads that are a register's last use.
    dead_operands: usize,
    renumbering: Option<RenumberOut>,
    prefetches: Vec<PrefetchOut>,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct RenumberOut {
    /// Why the kernel was not renumbered (it is reported unchanged).
    refused: Option<String>,
    live_ranges: usize,
    moved_nodes: usize,
    conflict_free_before: f64,
    conflict_free_after: f64,
    conflicts_before: u64,
    conflicts_after: u64,
}

#[derive(Serialize)]
struct Report {
    listing: String,
    options: LtrfOptions,
    kernels: Vec<KernelOut>,
}

fn share_zero(v: &[u32]) -> f64 {
    if v.is_empty() {
        return 1.0;
    }
    v.iter().filter(|&&c| c == 0).count() as f64 / v.len() as f64
}

fn kernel_out(k: &sassim_isa::Kernel, a: &LtrfKernel, renumber_it: bool, opts: &LtrfOptions) -> KernelOut {
    let conflicts: Vec<u32> = a.prefetches.iter().map(|p| p.bank_conflicts).collect();
    let renumbering = renumber_it.then(|| match renumber(k, opts) {
        Ok(r) => RenumberOut {
            refused: None,
            live_ranges: r.report.live_ranges,
            moved_nodes: r.report.moved_nodes,
            conflict_free_before: share_zero(&r.report.conflicts_before),
            conflict_free_after: share_zero(&r.report.conflicts_after),
            conflicts_before: r.report.conflicts_before.iter().map(|&c| u64::from(c)).sum(),
            conflicts_after: r.report.conflicts_after.iter().map(|&c| u64::from(c)).sum(),
        },
        Err(why) => RenumberOut {
            refused: Some(why),
            live_ranges: 0,
            moved_nodes: 0,
            conflict_free_before: share_zero(&conflicts),
            conflict_free_after: share_zero(&conflicts),
            conflicts_before: conflicts.iter().map(|&c| u64::from(c)).sum(),
            conflicts_after: conflicts.iter().map(|&c| u64::from(c)).sum(),
        },
    });
    KernelOut {
        name: k.name.clone(),
        instructions: k.instructions.len(),
        intervals: a.intervals.intervals.len(),
        pass1_intervals: a.intervals.pass1_intervals,
        pass2_rounds: a.intervals.pass2_rounds,
        mean_interval_length: a.mean_static_length(),
        oversized_intervals: a.intervals.oversized.len(),
        prefetched_registers: a.prefetches.iter().map(|p| p.working_set.regular_len()).sum(),
        prefetched_registers_live: a.prefetches.iter().map(|p| p.live.regular_len()).sum(),
        conflict_histogram: a.conflict_histogram(),
        conflict_free_share: share_zero(&conflicts),
        dead_operands: a.dead.iter().map(|d| d.regular_len()).sum(),
        renumbering,
        prefetches: a
            .prefetches
            .iter()
            .map(|p| PrefetchOut {
                interval: p.interval,
                pc: p.pc,
                instructions: a.intervals.intervals[p.interval].len(),
                working_set: p.working_set.regular_indices().collect(),
                live_in: p.live.regular_indices().collect(),
                bank_conflicts: p.bank_conflicts,
            })
            .collect(),
        notes: a.notes.clone(),
    }
}

fn regs(v: &[u8]) -> String {
    v.iter().map(|r| format!("R{r}")).collect::<Vec<_>>().join(" ")
}

fn render(r: &Report, prefetches: bool) -> String {
    let o = &r.options;
    let mut s = format!(
        "{}: register-intervals of at most {} registers, {} main register-file banks{}\n",
        r.listing,
        o.registers_per_interval,
        o.banks,
        if o.merge { "" } else { ", Algorithm 1 only" }
    );
    for k in &r.kernels {
        let _ = writeln!(
            s,
            "\n{}: {} instructions, {} intervals ({} after Algorithm 1, {} merging rounds), {:.1} instructions per interval",
            k.name, k.instructions, k.intervals, k.pass1_intervals, k.pass2_rounds, k.mean_interval_length
        );
        let _ = writeln!(
            s,
            "  prefetches: {} registers (LTRF), {} live on entry (LTRF+); conflict-free {:.1} %; conflicts per prefetch {:?}; {} dead-operand bits",
            k.prefetched_registers,
            k.prefetched_registers_live,
            100.0 * k.conflict_free_share,
            k.conflict_histogram,
            k.dead_operands
        );
        if let Some(n) = &k.renumbering {
            match &n.refused {
                Some(why) => {
                    let _ = writeln!(s, "  renumbering: not done ({why})");
                }
                None => {
                    let _ = writeln!(
                        s,
                        "  renumbering: {} live ranges, {} moved; conflict-free prefetches {:.1} % -> {:.1} %, conflicts {} -> {}",
                        n.live_ranges,
                        n.moved_nodes,
                        100.0 * n.conflict_free_before,
                        100.0 * n.conflict_free_after,
                        n.conflicts_before,
                        n.conflicts_after
                    );
                }
            }
        }
        if k.oversized_intervals > 0 {
            let _ = writeln!(s, "  {} oversized interval(s)", k.oversized_intervals);
        }
        for n in &k.notes {
            let _ = writeln!(s, "  note: {n}");
        }
        if prefetches {
            for p in &k.prefetches {
                let _ = writeln!(
                    s,
                    "  interval {:3} @ {:#06x}: {:3} instructions, {} conflicts, fetch {{{}}}, live {{{}}}",
                    p.interval,
                    p.pc,
                    p.instructions,
                    p.bank_conflicts,
                    regs(&p.working_set),
                    regs(&p.live_in)
                );
            }
        }
    }
    s
}

fn analyze_cmd(a: &AnalyzeArgs) -> Result<ExitCode> {
    if !(1..=255).contains(&a.registers) {
        bail!("--registers {}: allowed 1 to 255", a.registers);
    }
    if !(1..=256).contains(&a.banks) {
        bail!("--banks {}: allowed 1 to 256", a.banks);
    }
    let mut outs = Plan::default();
    if let Some(j) = &a.json {
        outs.add(j, &[a.listing.as_path()], a.force)?;
    }
    let listing = read_listing(&a.listing)?;
    let opts = LtrfOptions {
        registers_per_interval: a.registers,
        banks: a.banks,
        merge: !a.no_merge,
        ..LtrfOptions::default()
    };
    let report = Report {
        listing: a.listing.display().to_string(),
        options: opts,
        kernels: listing
            .kernels
            .iter()
            .map(|k| kernel_out(k, &analyze(k, &opts), a.renumber, &opts))
            .collect(),
    };
    print!("{}", render(&report, a.prefetches));
    if let Some(j) = &a.json {
        write_atomic(j, serde_json::to_string_pretty(&report)?.as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn read_listing(p: &Path) -> Result<sassim_isa::Listing> {
    let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
    let l = sassim_sass::parse_listing(&text, &p.display().to_string()).map_err(|e| anyhow!("{e}"))?;
    if l.kernels.iter().all(|k| k.instructions.is_empty()) {
        bail!(
            "{}: no instructions (expected a cuobjdump -sass or nvdisasm listing)",
            p.display()
        );
    }
    Ok(l)
}

fn lengths_cmd(a: &LengthsArgs) -> Result<ExitCode> {
    use sassim_analysis::ltrf::{dynamic_lengths, Lengths};
    if !(1..=255).contains(&a.registers) {
        bail!("--registers {}: allowed 1 to 255", a.registers);
    }
    let all = sassim_workload::builtin();
    let names: Vec<&str> = all.iter().map(|b| b.name).collect();
    if let Some(bad) = a.workloads.iter().find(|w| !names.contains(&w.as_str())) {
        bail!(
            "unknown workload '{bad}'; the built-in workloads are {}",
            names.join(", ")
        );
    }
    let opts = LtrfOptions {
        registers_per_interval: a.registers,
        ..LtrfOptions::default()
    };
    let ropts = sassim_functional::RunOptions {
        exec: sassim_functional::ExecOptions {
            record_cflow_trace: true,
            ..Default::default()
        },
        ..Default::default()
    };
    println!(
        "dynamic instructions per interval entry (real) and per run of at most {} registers (optimal), {}",
        a.registers, a.arch
    );
    println!("{:<12} {:>8} {:>8} {:>6}", "workload", "real", "optimal", "ratio");
    let mut means = Vec::new();
    for b in &all {
        if !a.workloads.is_empty() && !a.workloads.iter().any(|w| w == b.name) {
            continue;
        }
        let Ok((w, listing, _)) = sassim_gpu::workload::load_builtin(b, &a.arch) else {
            continue;
        };
        let Some(k) = listing.kernel(w.kernel()) else {
            continue;
        };
        let run = sassim_functional::runner::run_workload_with(
            &w,
            &listing,
            &a.arch,
            sassim_functional::ControlFlowKind::Hanoi,
            &ropts,
        )
        .map_err(|e| anyhow!("{}: {e}", b.name))?;
        let streams: Vec<Vec<usize>> = run
            .traces
            .iter()
            .map(|t| t.entries.iter().filter_map(|&(pc, _)| k.index_of(pc)).collect())
            .collect();
        let lt = analyze(k, &opts);
        let (real, optimal): (Lengths, Lengths) = dynamic_lengths(&lt, &streams, a.registers as usize);
        println!(
            "{:<12} {:>8.1} {:>8.1} {:>5.0}%",
            b.name,
            real.mean(),
            optimal.mean(),
            100.0 * real.mean() / optimal.mean().max(f64::MIN_POSITIVE)
        );
        means.push((real.mean(), optimal.mean()));
    }
    if !means.is_empty() {
        let avg = |f: fn(&(f64, f64)) -> f64| means.iter().map(f).sum::<f64>() / means.len() as f64;
        let min = |f: fn(&(f64, f64)) -> f64| means.iter().map(f).fold(f64::INFINITY, f64::min);
        let max = |f: fn(&(f64, f64)) -> f64| means.iter().map(f).fold(0.0, f64::max);
        let ratio = means
            .iter()
            .map(|m| m.0 / m.1.max(f64::MIN_POSITIVE))
            .sum::<f64>()
            / means.len() as f64;
        println!(
            "average {:.1} / {:.1} (real is {:.0}% of optimal, mean of the ratios), minimum {:.1} / {:.1}, maximum {:.1} / {:.1} (real / optimal)",
            avg(|m| m.0),
            avg(|m| m.1),
            100.0 * ratio,
            min(|m| m.0),
            min(|m| m.1),
            max(|m| m.0),
            max(|m| m.1)
        );
    }
    Ok(ExitCode::SUCCESS)
}
