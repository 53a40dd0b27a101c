//! The subcommands.

use crate::GpuArgs;
use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_gpu::workload::{listing_arch_for, load_builtin, run_workload_timed};
use sassim_gpu::{Gpu, RunOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn load_gpu(a: &GpuArgs) -> Result<GpuConfig> {
    GpuConfig::load(&a.gpu, &a.set).map_err(|e| anyhow!("{e}"))
}

fn parse_cf(s: &str) -> Result<ControlFlowKind> {
    s.parse::<ControlFlowKind>().map_err(|e| anyhow!("{e}"))
}

#[derive(Args)]
pub struct RunArgs {
    /// Built-in workload names or launch-spec files (default: the whole built-in suite).
    pub workloads: Vec<String>,
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Control-flow manager: hanoi or simt.
    #[arg(long, default_value = "hanoi")]
    pub cf: String,
    /// Run functionally only (no timing model): warps interleaved round-robin, outputs verified.
    #[arg(long)]
    pub functional: bool,
    /// Write the statistics as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write SVG figures (issue-stall breakdown, IPC over time) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Print Accel-Sim-compatible `name = value` lines.
    #[arg(long)]
    pub accelsim: bool,
    /// Stop a kernel after this many cycles (0 = no limit).
    #[arg(long, default_value_t = 0)]
    pub max_cycles: u64,
    /// Overwrite existing output files.
    #[arg(long)]
    pub force: bool,
}

fn check_output(p: &Path, force: bool) -> Result<()> {
    if p.exists() && !force {
        bail!("{} exists; pass --force to overwrite it", p.display());
    }
    Ok(())
}

pub fn run(a: RunArgs) -> Result<ExitCode> {
    let cfg = load_gpu(&a.gpu)?;
    let cf = parse_cf(&a.cf)?;
    if let Some(j) = &a.json {
        check_output(j, a.force)?;
    }
    let all = sassim_workload::builtin();
    let selected: Vec<_> = if a.workloads.is_empty() {
        all.iter().collect()
    } else {
        let mut v = Vec::new();
        for n in &a.workloads {
            match all.iter().find(|b| b.name == n.as_str()) {
                Some(b) => v.push(b),
                None => bail!(
                    "unknown workload '{n}'; built-in workloads: {}",
                    all.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
                ),
            }
        }
        v
    };
    let arch = listing_arch_for(&cfg.gpu.arch);
    if arch != cfg.gpu.arch {
        eprintln!(
            "note: {} is {}; the built-in workloads ship SASS for sm_75, sm_86 and sm_90, using {arch}",
            cfg.gpu.name, cfg.gpu.arch
        );
    }
    let mut gpu = Gpu::new(cfg.clone());
    let mut failed = false;
    let t0 = std::time::Instant::now();
    let mut rows = Vec::new();
    for b in selected {
        let (w, listing, smem) = load_builtin(b, arch).map_err(|e| anyhow!(e))?;
        if a.functional {
            let r = sassim_functional::run_workload(&w, &listing, arch, cf)
                .map_err(|e| anyhow!("{}: {e}", w.name))?;
            println!(
                "{:<12} functional ({arch}, {cf:?}): {} warp instructions, {} thread instructions, outputs verified",
                w.name, r.stats.warp_instructions, r.stats.thread_instructions
            );
            continue;
        }
        let opts = RunOptions {
            max_cycles: a.max_cycles,
            ..RunOptions::default()
        };
        let t = std::time::Instant::now();
        let r = run_workload_timed(&mut gpu, &w, &listing, arch, smem, cf, &opts)
            .with_context(|| w.name.clone())?;
        let secs = t.elapsed().as_secs_f64();
        for warn in &r.run.warnings {
            eprintln!("warning: {}: {warn}", w.name);
        }
        match &r.check {
            Ok(_) => {}
            Err(e) => {
                failed = true;
                eprintln!("error: {}: output mismatch: {e}", w.name);
            }
        }
        rows.push((r, secs));
    }
    if !a.functional {
        print_table(&rows, t0.elapsed().as_secs_f64());
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_table(rows: &[(sassim_gpu::workload::WorkloadRun, f64)], total_secs: f64) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{:<12} {:>10} {:>8} {:>10}  {:<40} {:>12}",
        "kernel", "cycles", "IPC", "warp insts", "top stall reasons", "sim KIPS"
    );
    let mut tot_insts = 0u64;
    let mut tot_cycles = 0u64;
    for (r, secs) in rows {
        let s = &r.run.stats;
        tot_insts += s.warp_insts;
        tot_cycles += r.run.cycles;
        let mut reasons: Vec<(usize, u64)> = s.stall_slots.iter().copied().enumerate().collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let slots: u64 = s.stall_slots.iter().sum::<u64>() + s.issue_slots_used;
        let top: Vec<String> = reasons
            .iter()
            .filter(|r| r.1 > 0 && r.0 != sassim_timing::StallReason::Idle as usize)
            .take(3)
            .map(|(i, v)| {
                format!(
                    "{} {:.0}%",
                    sassim_timing::StallReason::ALL[*i].name(),
                    100.0 * *v as f64 / slots.max(1) as f64
                )
            })
            .collect();
        let ipc = s.thread_insts as f64 / r.run.cycles.max(1) as f64;
        let _ = writeln!(
            out,
            "{:<12} {:>10} {:>8.2} {:>10}  {:<40} {:>12.1}",
            r.name,
            r.run.cycles,
            ipc,
            s.warp_insts,
            top.join(", "),
            s.warp_insts as f64 / secs.max(1e-9) / 1e3
        );
    }
    let _ = writeln!(
        out,
        "simulator speed: {:.0} warp-instructions/s, {:.0} simulated cycles/s ({:.2} s)",
        tot_insts as f64 / total_secs.max(1e-9),
        tot_cycles as f64 / total_secs.max(1e-9),
        total_secs
    );
}

#[derive(Args)]
pub struct MicrobenchArgs {
    /// Microbenchmark-dialect file (docs/microbench.md).
    pub file: PathBuf,
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Print the result as JSON (schema in docs/microbench.md).
    #[arg(long)]
    pub json: bool,
    /// Control-flow manager: hanoi or simt.
    #[arg(long, default_value = "hanoi")]
    pub cf: String,
}

pub fn microbench(a: MicrobenchArgs) -> Result<ExitCode> {
    let mb = sassim_sass::microbench::parse_file(&a.file).map_err(|e| anyhow!("{e}"))?;
    let mut ga = a.gpu.clone();
    if let (Some(g), "rtx-a6000") = (&mb.gpu, a.gpu.gpu.as_str()) {
        ga.gpu = g.clone();
    }
    let cfg = load_gpu(&ga)?;
    let r =
        sassim_gpu::microbench::run_microbench(&mb, &cfg, parse_cf(&a.cf)?).map_err(|e| anyhow!("{e}"))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!("gpu {}, {} cycles", r.gpu, r.total_cycles);
        for w in &r.warps {
            println!("warp {} (sub-core {}):", w.warp, w.subcore);
            for i in &w.issues {
                println!("  {:>6}  /*{:04x}*/ {}", i.cycle, i.pc, i.op);
            }
            if !w.clocks.is_empty() {
                let d: Vec<String> = w.clocks.windows(2).map(|p| (p[1] - p[0]).to_string()).collect();
                println!("  clocks {:?} (differences {})", w.clocks, d.join(", "));
            }
            for (r, v) in &w.regs {
                println!("  {r} = {:?}", &v[..4.min(v.len())]);
            }
        }
    }
    if let Some(e) = &r.error {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn disasm(file: &Path, json: bool) -> Result<ExitCode> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let name = file.display().to_string();
    let listing = match sassim_sass::parse_listing(&text, &name) {
        Ok(l) if !l.kernels.is_empty() && !l.kernels.iter().all(|k| k.instructions.is_empty()) => l,
        _ => {
            let mb = sassim_sass::microbench::parse(&text, &name).map_err(|e| anyhow!("{e}"))?;
            sassim_isa::Listing {
                arch: None,
                kernels: vec![mb.kernel],
            }
        }
    };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&sassim_sass::disasm_json(&listing))?
        );
    } else {
        print!("{}", sassim_sass::disasm_text(&listing));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn gpus() -> Result<ExitCode> {
    println!("{:<12} {:<8} {:<34} description", "name", "arch", "aliases");
    for p in sassim_config::list_presets() {
        println!(
            "{:<12} {:<8} {:<34} {}",
            p.name,
            p.arch,
            p.aliases.join(", "),
            p.description
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Subcommand)]
pub enum TraceCmd {
    /// Convert an Accel-Sim kernel trace (text, .xz, .gz, .zst) to the compact binary format.
    Convert {
        input: PathBuf,
        output: PathBuf,
        #[arg(long)]
        force: bool,
    },
    /// Print a trace's header and instruction counts.
    Info { input: PathBuf },
}

pub fn trace(t: TraceCmd) -> Result<ExitCode> {
    match t {
        TraceCmd::Convert { input, output, force } => {
            check_output(&output, force)?;
            let s = sassim_trace::convert(&input, &output).map_err(|e| anyhow!("{e}"))?;
            println!("{s:?}");
        }
        TraceCmd::Info { input } => {
            let mut r = sassim_trace::KernelTraceReader::open(&input).map_err(|e| anyhow!("{e}"))?;
            let h = r.header().clone();
            println!("kernel {} grid {:?} block {:?}", h.name, h.grid, h.block);
            let (mut blocks, mut insts) = (0u64, 0u64);
            while let Some(b) = r.next_block().map_err(|e| anyhow!("{e}"))? {
                blocks += 1;
                insts += b.warps.iter().map(|w| w.instrs.len() as u64).sum::<u64>();
            }
            println!("{blocks} thread blocks, {insts} warp instructions");
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Subcommand)]
pub enum CflowCmd {
    /// Compare two control-flow managers (hanoi, simt) on built-in workloads: Levenshtein
    /// distance of the per-warp (PC, mask) traces divided by trace length.
    Compare {
        a: String,
        b: String,
        /// Workloads (default: all built-in).
        #[arg(long)]
        workload: Vec<String>,
        /// Listing architecture (sm_75, sm_86, sm_90).
        #[arg(long, default_value = "sm_86")]
        arch: String,
    },
}

pub fn cflow(c: CflowCmd) -> Result<ExitCode> {
    match c {
        CflowCmd::Compare { a, b, workload, arch } => {
            let (ka, kb) = (parse_cf(&a)?, parse_cf(&b)?);
            for bw in sassim_workload::builtin() {
                if !workload.is_empty() && !workload.iter().any(|w| w == bw.name) {
                    continue;
                }
                let (w, listing, _) = load_builtin(&bw, &arch).map_err(|e| anyhow!(e))?;
                let opts = sassim_functional::RunOptions {
                    exec: sassim_functional::ExecOptions {
                        record_cflow_trace: true,
                        ..Default::default()
                    },
                    ..Default::default()
                };
                let ta = sassim_functional::runner::run_workload_with(&w, &listing, &arch, ka, &opts)
                    .map_err(|e| anyhow!("{}: {a}: {e}", w.name))?;
                let tb = sassim_functional::runner::run_workload_with(&w, &listing, &arch, kb, &opts)
                    .map_err(|e| anyhow!("{}: {b}: {e}", w.name))?;
                let rep = sassim_functional::cflow_compare(&ta.traces, &tb.traces);
                println!(
                    "{:<12} {a} vs {b}: discrepancy {:.4} over {} warps",
                    w.name,
                    rep.overall,
                    rep.per_warp.len()
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct CorrelateArgs {
    /// JSON written by `sassim run --json`.
    pub sim: PathBuf,
    /// Hardware cycles, CSV (docs/report.md).
    pub hw: PathBuf,
    /// Write the log-log scatter plot (SVG) here.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

pub fn correlate(a: CorrelateArgs) -> Result<ExitCode> {
    let _ = a;
    bail!("correlate: report crate not wired yet")
}
