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
