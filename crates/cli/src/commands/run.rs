//! `sassim run`: built-in workloads or launch-spec files (loaded up front, run in parallel
//! on the timing model or functionally), or an Accel-Sim trace (trace-driven mode); the
//! report of the run (table, summary, Accel-Sim lines, JSON, plots) and its progress bars.

use super::{all_cores, check_threads, kernel_threads, load_gpu, parse_cf, EXIT_STOPPED};
use crate::limits::Limits;
use crate::outputs::{self, Plan};
use crate::GpuArgs;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_gpu::footprint::Footprint;
use sassim_gpu::workload::{listing_arch_for, load_builtin, run_workload_timed};
use sassim_gpu::{Gpu, RunOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct RunArgs {
    /// Built-in workload names or launch-spec files (default: the whole built-in suite).
    pub workloads: Vec<String>,
    /// Where the control bits come from: `listing` (the compiler's; a trace kernel without a
    /// listing runs on hardware scoreboards, "hybrid"), `infer` (derived the way ptxas does
    /// from the opcode tables and the preset's `[compiler]` conventions, replacing a
    /// listing's), `scoreboard` (none: hardware scoreboards, as `--set
    /// issue.dependence=scoreboard`). Default: the listing where there is one, otherwise
    /// inferred. The summary names the source each kernel used.
    #[arg(long, value_enum)]
    pub control_bits: Option<ControlBitsArg>,
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
    /// Print the readable per-kernel summary (caches, DRAM, issue-slot breakdown).
    #[arg(long)]
    pub summary: bool,
    /// Also show the bare kernel's cycles (first warp launch to last warp exit, without the
    /// launch cost and CTA dispatch that the `cycles` column includes).
    #[arg(long)]
    pub bare: bool,
    #[command(flatten)]
    pub limits: Limits,
    /// Worker threads: the workloads are independent simulations run in parallel (default:
    /// all cores). Results are the same for any number.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Threads that tick the SMs of one kernel (default: the cores left per job, i.e. all
    /// cores divided by `--jobs`). Statistics are identical for any number.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Overwrite existing output files.
    #[arg(long)]
    pub force: bool,
    /// Run an Accel-Sim trace (its kernelslist.g, or the directory holding it) instead of
    /// workloads (trace-driven mode).
    #[arg(long, value_name = "KERNELSLIST")]
    pub trace: Option<PathBuf>,
    /// SASS listings (cuobjdump -sass or nvdisasm) of the traced binary: control bits are
    /// taken from them; kernels without a listing run with scoreboards (hybrid mode).
    #[arg(long, value_name = "FILE")]
    pub listing: Vec<PathBuf>,
    /// Launch every workload with this grid instead of its spec's (`X[,Y[,Z]]`, CUDA's
    /// limits: X < 2^31, Y and Z ≤ 65535).
    #[arg(long, value_name = "X[,Y,Z]", value_delimiter = ',')]
    pub grid: Option<Vec<u32>>,
    /// Launch every workload with this block instead of its spec's (`X[,Y[,Z]]`, at most
    /// 1024 threads, Z ≤ 64).
    #[arg(long, value_name = "X[,Y,Z]", value_delimiter = ',')]
    pub block: Option<Vec<u32>>,
}

/// `--grid` / `--block` against CUDA's launch limits (the spec checks the rest: 1 to 3
/// entries, none 0, at most 1024 threads).
fn check_launch_dims(grid: Option<&[u32]>, block: Option<&[u32]>) -> Result<()> {
    if let Some(g) = grid {
        let max = [(1u32 << 31) - 1, 65535, 65535];
        for (i, (&d, &m)) in g.iter().zip(&max).enumerate() {
            if d > m {
                bail!(
                    "--grid: dimension {} = {d} is above CUDA's limit {m}",
                    ["x", "y", "z"][i]
                );
            }
        }
    }
    if let Some(b) = block {
        if b.get(2).is_some_and(|&z| z > 64) {
            bail!("--block: z = {} is above CUDA's limit 64", b[2]);
        }
    }
    Ok(())
}

/// The workload `w` with the `--grid` / `--block` of the command line; `dir` resolves the
/// spec's `file` paths.
fn relaunch(
    w: sassim_workload::Workload,
    grid: Option<&[u32]>,
    block: Option<&[u32]>,
    dir: Option<&Path>,
) -> Result<sassim_workload::Workload> {
    if grid.is_none() && block.is_none() {
        return Ok(w);
    }
    let mut spec = w.spec.clone();
    if let Some(g) = grid {
        spec.grid = g.to_vec();
    }
    if let Some(b) = block {
        spec.block = b.to_vec();
    }
    let origin = format!("{} (with --grid/--block)", w.origin);
    sassim_workload::Workload::from_spec(spec, &origin, Some(&w.name), dir).map_err(|e| anyhow!("{e}"))
}

/// Print each distinct warning once (with the number of kernels that gave it).
fn print_warnings(ws: &[(String, String)]) -> Vec<String> {
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    for (who, w) in ws {
        match seen.iter_mut().find(|(x, _)| x == w) {
            Some((_, v)) => v.push(who.clone()),
            None => seen.push((w.clone(), vec![who.clone()])),
        }
    }
    let mut out = Vec::new();
    for (w, who) in seen {
        let line = if who.len() == 1 {
            format!("{}: {w}", who[0])
        } else {
            format!("{w} ({} kernels: {}, ...)", who.len(), who[0])
        };
        eprintln!("warning: {line}");
        out.push(line);
    }
    out
}

/// `--control-bits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ControlBitsArg {
    Listing,
    Infer,
    Scoreboard,
}

pub fn run(a: RunArgs) -> Result<ExitCode> {
    let mut cfg = load_gpu(&a.gpu)?;
    if a.control_bits == Some(ControlBitsArg::Scoreboard) {
        cfg = cfg
            .with_overrides(&["issue.dependence=scoreboard".to_string()])
            .map_err(|e| anyhow!("{e}"))?;
    }
    let cf = parse_cf(&a.cf)?;
    if a.functional && (a.json.is_some() || a.plot.is_some() || a.accelsim || a.summary) {
        bail!("--json, --plot, --accelsim and --summary report timing statistics, which --functional does not produce");
    }
    if a.trace.is_some() && !a.workloads.is_empty() {
        bail!("give either workloads or --trace, not both");
    }
    let trace = a.trace.as_ref().map(|t| {
        if t.is_dir() {
            t.join("kernelslist.g")
        } else {
            t.clone()
        }
    });
    // Every file read, so that no output overwrites one of them.
    let mut inputs: Vec<PathBuf> = a.listing.clone();
    inputs.extend(a.workloads.iter().map(PathBuf::from).filter(|p| p.is_file()));
    if Path::new(&a.gpu.gpu).is_file() {
        inputs.push(PathBuf::from(&a.gpu.gpu));
    }
    if let Some(t) = &trace {
        inputs.push(t.clone());
        if let Ok(cmds) = sassim_trace::read_kernelslist(t) {
            for c in cmds {
                if let sassim_trace::TraceCommand::Kernel { path, .. } = c {
                    inputs.push(path);
                }
            }
        }
    }
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    // Outputs are checked before anything is simulated.
    let mut plan = Plan::default();
    if let Some(j) = &a.json {
        plan.add(j, &inputs, a.force)?;
    }
    if let Some(dir) = &a.plot {
        if dir.exists() && !dir.is_dir() {
            bail!("--plot {}: not a directory", dir.display());
        }
        for n in ["stalls.svg", "ipc.svg"] {
            plan.add(&dir.join(n), &inputs, a.force)?;
        }
    }
    a.limits.check(&Footprint::of_config(&cfg))?;
    if let Some(t) = &trace {
        return run_trace(&a, t, cfg);
    }
    let arch = listing_arch_for(&cfg.gpu.arch);
    let mut notes: Vec<(String, String)> = Vec::new();
    if arch != cfg.gpu.arch {
        notes.push((
            cfg.gpu.name.clone(),
            format!(
                "{} is {}; the built-in workloads ship SASS for sm_75, sm_86 and sm_90, using {arch}",
                cfg.gpu.name, cfg.gpu.arch
            ),
        ));
    }
    // Every workload loaded up front: (spec, listing, static shared memory bytes).
    let (grid, block) = (a.grid.as_deref(), a.block.as_deref());
    check_launch_dims(grid, block)?;
    // Host references (computed when a spec is loaded) use `--threads` threads.
    let load_pool = rayon::ThreadPoolBuilder::new()
        .num_threads(check_threads(a.threads)?.unwrap_or_else(all_cores))
        .build()
        .map_err(|e| anyhow!("thread pool: {e}"))?;
    let selected = load_pool.install(|| load_selected(&a, arch, &cfg, &mut notes))?;
    run_selected(&a, cfg, arch, cf, notes, selected)
}

/// A workload to run: its spec, listing and static shared memory bytes.
type Selected = (sassim_workload::Workload, sassim_isa::Listing, u32);

/// The workloads `run` was given (the default suite when none), loaded.
fn load_selected(
    a: &RunArgs,
    arch: &str,
    cfg: &GpuConfig,
    notes: &mut Vec<(String, String)>,
) -> Result<Vec<Selected>> {
    let (grid, block) = (a.grid.as_deref(), a.block.as_deref());
    let all = sassim_workload::builtin();
    let suite_dir = sassim_workload::builtin_suite_dir();
    let builtin_dir = |name: &str| suite_dir.as_ref().map(|d| d.join(name));
    let mut selected = Vec::new();
    if a.workloads.is_empty() {
        for b in &sassim_workload::default_suite() {
            let (w, l, s) = load_builtin(b, arch).map_err(|e| anyhow!(e))?;
            selected.push((relaunch(w, grid, block, builtin_dir(b.name).as_deref())?, l, s));
        }
    }
    for n in &a.workloads {
        if let Some(b) = all.iter().find(|b| b.name == n.as_str()) {
            let (w, l, s) = load_builtin(b, arch).map_err(|e| anyhow!(e))?;
            selected.push((relaunch(w, grid, block, builtin_dir(b.name).as_deref())?, l, s));
        } else if n.ends_with(".toml") || Path::new(n).is_file() {
            let p = Path::new(n);
            let (w, l, smem, ws) = load_spec_file(p, arch, &a.listing, cfg, &a.limits)?;
            notes.extend(ws.into_iter().map(|x| (w.name.clone(), x)));
            selected.push((relaunch(w, grid, block, p.parent())?, l, smem));
        } else {
            bail!(
                "unknown workload '{n}': not a launch-spec file, and the built-in workloads are {}",
                all.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
            );
        }
    }
    Ok(selected)
}

/// `run` of loaded workloads.
fn run_selected(
    a: &RunArgs,
    cfg: GpuConfig,
    arch: &str,
    cf: ControlFlowKind,
    mut notes: Vec<(String, String)>,
    mut selected: Vec<Selected>,
) -> Result<ExitCode> {
    if a.control_bits == Some(ControlBitsArg::Infer) {
        // The compiler's control bits replaced by inferred ones (to compare the two).
        let core = Gpu::new(cfg.clone()).core;
        for (_, l, _) in selected.iter_mut() {
            for k in l.kernels.iter_mut() {
                *k = sassim_gpu::ctlbits::with_inferred_control_bits(k, &cfg, &core);
            }
        }
    }
    let t0 = std::time::Instant::now();
    if a.functional {
        print_warnings(&notes);
        for (w, listing, _) in &selected {
            let (w, listing) = (w.clone(), listing.clone());
            let fopts = sassim_functional::RunOptions {
                exec: sassim_functional::ExecOptions {
                    yield_as_nop: !cfg.issue.yield_enabled,
                    ..Default::default()
                },
                ..Default::default()
            };
            let r = sassim_functional::runner::run_workload_with(&w, &listing, arch, cf, &fopts)
                .map_err(|e| anyhow!("{}: {e}", w.name))?;
            println!(
                "{:<12} functional ({arch}, {cf}): {} warp instructions, {} thread instructions, outputs verified",
                w.name, r.stats.warp_instructions, r.stats.thread_instructions
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bars = indicatif::MultiProgress::new();
    let deadline = a.limits.deadline();
    // Each workload is its own application on its own GPU; they run on a pool of `--jobs`
    // threads and are reported in order, so the results do not depend on the thread count.
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| anyhow!("thread pool: {e}"))?;
    let threads = kernel_threads(check_threads(a.threads)?, jobs.min(selected.len().max(1)));
    let results: Vec<Result<(sassim_gpu::workload::WorkloadRun, f64)>> = pool.install(|| {
        use rayon::prelude::*;
        selected
            .par_iter()
            .map(|(w, listing, smem)| {
                let smem = *smem;
                let bar = bars.add(progress_bar(&w.name, tty));
                let opts = RunOptions {
                    max_cycles: a.limits.max_cycles,
                    deadline,
                    deadlock_cycles: a.limits.deadlock_cycles,
                    progress: Some(progress_fn(bar.clone())),
                    threads,
                    ..RunOptions::default()
                };
                let mut gpu = Gpu::new(cfg.clone());
                let r = run_workload_timed(&mut gpu, w, listing, arch, smem, cf, &opts)
                    .with_context(|| w.name.clone())?;
                bar.finish_and_clear();
                Ok((r, t0.elapsed().as_secs_f64()))
            })
            .collect()
    });
    let mut failed = false;
    let mut stopped = false;
    let mut kernels = Vec::new();
    let mut kernel_end = Vec::new();
    for r in results {
        let (r, end) = r?;
        if !tty {
            eprintln!(
                "{}: {} cycles, {} warp instructions",
                r.name, r.run.cycles, r.run.stats.warp_insts
            );
        }
        notes.extend(r.run.warnings.iter().map(|w| (r.name.clone(), w.clone())));
        if let Some(why) = &r.run.stopped {
            stopped = true;
            notes.push((
                r.name.clone(),
                format!("{why}; partial statistics, outputs not checked"),
            ));
        } else if let Err(e) = &r.check {
            failed = true;
            eprintln!("error: {}: output mismatch: {e}", r.name);
        }
        let uid = kernels.len() as u32 + 1;
        let spec = &selected[kernels.len()].0;
        let mut rep = sassim_gpu::report::kernel_report(
            &r.run,
            uid,
            spec.grid,
            spec.block,
            sassim_report::MODE_EXECUTION,
        );
        if let Some(why) = &r.run.stopped {
            rep.warnings.push(why.clone());
        }
        kernels.push(rep);
        kernel_end.push(end);
    }
    let warnings = print_warnings(&notes);
    // Threads used: the workloads run at once, each ticking its SMs on `threads`.
    let used = jobs.min(selected.len().max(1)) * threads;
    finish_report(a, &cfg, kernels, t0, kernel_end, used, warnings)?;
    Ok(if failed {
        ExitCode::from(1)
    } else if stopped {
        ExitCode::from(EXIT_STOPPED)
    } else {
        ExitCode::SUCCESS
    })
}

/// A user's launch spec: its listing is `--listing` (the first given) or the
/// `<name>_smXX.cuobjdump-sass.txt` / `.nvdisasm-hex.txt` beside the spec for `arch`; the
/// static shared memory comes from `<name>.ptxas-v.txt` when present. The spec's buffers
/// are checked against the memory limit (with the configuration's estimate) before they
/// are built. Returns warnings (listing architecture, missing ptxas report).
fn load_spec_file(
    path: &Path,
    arch: &str,
    listings: &[PathBuf],
    cfg: &GpuConfig,
    limits: &Limits,
) -> Result<(sassim_workload::Workload, sassim_isa::Listing, u32, Vec<String>)> {
    let origin = path.display().to_string();
    let mut limit_err = None;
    let w = sassim_workload::Workload::load_checked(path, |spec| {
        spec.check_sizes()?;
        let mut fp = Footprint::of_config(cfg);
        fp.extend(Footprint::of_spec(spec));
        limits.check(&fp).map_err(|e| {
            let m = e.to_string();
            limit_err = Some(m.clone());
            m
        })
    });
    let w = match (w, limit_err) {
        (Err(_), Some(m)) => bail!("{origin}: {m}"),
        (w, _) => w.map_err(|e| anyhow!("{e}"))?,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(&w.name)
        .to_string();
    let sm = arch.replace('_', "");
    let candidates = [
        dir.join(format!("{stem}_{sm}.cuobjdump-sass.txt")),
        dir.join(format!("{stem}_{sm}.nvdisasm-hex.txt")),
    ];
    let lpath = match listings.first() {
        Some(l) => l.clone(),
        None => candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
            anyhow!(
                "{}: no SASS listing for {arch}: give --listing FILE or put {} beside the spec",
                path.display(),
                candidates[0].display()
            )
        })?,
    };
    let listing = sassim_sass::parse_listing_file(&lpath).map_err(|e| anyhow!("{e}"))?;
    let mut warnings = Vec::new();
    if let Some(la) = &listing.arch {
        if la != arch {
            warnings.push(format!(
                "{} is a listing for {la}; it runs as {arch} code (parameter offsets and opcode latencies of {arch})",
                lpath.display()
            ));
        }
    }
    let ptxas = dir.join(format!("{stem}.ptxas-v.txt"));
    let smem = match std::fs::read_to_string(&ptxas) {
        Ok(t) => sassim_gpu::workload::ptxas_usage(&t, w.kernel(), arch).map_or(0, |u| u.1),
        Err(_) => {
            let uses_shared = listing.kernel(w.kernel()).is_some_and(|k| {
                k.instructions.iter().any(|i| {
                    matches!(
                        i.opcode.base.as_str(),
                        "LDS" | "STS" | "ATOMS" | "LDSM" | "LDGSTS"
                    )
                })
            });
            if uses_shared {
                warnings.push(format!(
                    "{} not found: the kernel uses shared memory but its static size is unknown; 0 bytes assumed (plus the spec's shared_mem_bytes), so a timing run may report an illegal shared address. Put the `ptxas -v` output there (docs/workloads.md)",
                    ptxas.display()
                ));
            }
            0
        }
    };
    Ok((w, listing, smem, warnings))
}

fn finish_report(
    a: &RunArgs,
    cfg: &GpuConfig,
    kernels: Vec<sassim_report::KernelReport>,
    t0: std::time::Instant,
    kernel_end: Vec<f64>,
    threads: usize,
    warnings: Vec<String>,
) -> Result<()> {
    let config: serde_json::Value = serde_json::from_str(&cfg.to_json()).unwrap_or(serde_json::Value::Null);
    let mut report = sassim_gpu::report::run_report(&cfg.gpu.name, config, kernels);
    report.warnings.extend(warnings);
    let mut host = sassim_report::HostStats::new(&report, t0.elapsed().as_secs_f64());
    host.kernel_end_seconds = kernel_end;
    host.threads = threads as u32;
    if a.accelsim {
        print!("{}", sassim_report::accelsim_lines(&report, &host));
    }
    if a.summary {
        print!("{}", sassim_report::summary(&report));
    }
    print!("{}", sassim_report::table_with(&report, &host, a.bare));
    if let Some(j) = &a.json {
        outputs::write_atomic(j, sassim_report::to_json(&report).as_bytes())?;
    }
    if let Some(dir) = &a.plot {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for (name, f) in [("stalls.svg", 0), ("ipc.svg", 1)] {
            outputs::write_with(&dir.join(name), |tmp| {
                if f == 0 {
                    sassim_report::plot_stalls(&report, tmp)
                } else {
                    sassim_report::plot_ipc(&report, tmp)
                }
                .map_err(|e| anyhow!("{e}"))
            })?;
        }
    }
    Ok(())
}

/// Trace-driven mode: every kernel of an Accel-Sim kernelslist.g.
fn run_trace(a: &RunArgs, kernelslist: &Path, cfg: GpuConfig) -> Result<ExitCode> {
    let mut listings = Vec::new();
    for l in &a.listing {
        listings.push(sassim_sass::parse_listing_file(l).map_err(|e| anyhow!("{e}"))?);
    }
    let mut gpu = Gpu::new(cfg.clone());
    let t0 = std::time::Instant::now();
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = progress_bar("trace", tty);
    let opts = RunOptions {
        max_cycles: a.limits.max_cycles,
        deadline: a.limits.deadline(),
        deadlock_cycles: a.limits.deadlock_cycles,
        progress: Some(progress_fn(bar.clone())),
        // Kernels without a listing: inferred unless `listing` (scoreboards) or `scoreboard`
        // was asked for.
        infer_control_bits: matches!(a.control_bits, None | Some(ControlBitsArg::Infer)),
        threads: kernel_threads(check_threads(a.threads)?, 1),
        ..RunOptions::default()
    };
    let runs = sassim_gpu::trace_exec::run_kernelslist(&mut gpu, kernelslist, &listings, &opts)
        .map_err(|e| anyhow!("{e}"))?;
    bar.finish_and_clear();
    if runs.is_empty() {
        bail!("{}: the list names no kernel", kernelslist.display());
    }
    let mut kernels = Vec::new();
    let mut ends = Vec::new();
    let mut notes = Vec::new();
    let mut stopped = false;
    for (k, r) in runs.iter().enumerate() {
        notes.extend(r.warnings.iter().map(|w| (r.run.name.clone(), w.clone())));
        let (grid, block) = sassim_trace::KernelTraceReader::open(&r.path)
            .map(|t| (t.header().grid, t.header().block))
            .unwrap_or(([0; 3], [0; 3]));
        let mut rep = sassim_gpu::report::kernel_report(&r.run, k as u32 + 1, grid, block, &r.mode);
        rep.warnings = r.warnings.clone();
        if let Some(why) = &r.run.stopped {
            stopped = true;
            rep.warnings.push(why.clone());
            notes.push((r.run.name.clone(), format!("{why}; partial statistics")));
        }
        kernels.push(rep);
        ends.push(t0.elapsed().as_secs_f64());
    }
    let mut modes: Vec<(String, String)> = runs
        .iter()
        .map(|r| (r.run.name.clone(), r.mode.clone()))
        .collect();
    modes.dedup_by(|x, y| x.1 == y.1);
    for (n, m) in &modes {
        eprintln!("{n}: {m}");
    }
    let warnings = print_warnings(&notes);
    finish_report(a, &cfg, kernels, t0, ends, opts.threads, warnings)?;
    Ok(if stopped {
        ExitCode::from(EXIT_STOPPED)
    } else {
        ExitCode::SUCCESS
    })
}

fn progress_bar(name: &str, tty: bool) -> indicatif::ProgressBar {
    if !tty {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(100);
    let style =
        indicatif::ProgressStyle::with_template("{prefix:>12} [{bar:30}] {percent:>3}% {msg} (eta {eta})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> ");
    pb.set_style(style);
    pb.set_prefix(name.to_string());
    pb
}

fn progress_fn(pb: indicatif::ProgressBar) -> sassim_gpu::ProgressFn {
    let start = std::time::Instant::now();
    sassim_gpu::ProgressFn(std::sync::Arc::new(move |cycle, done, total, _insts| {
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        pb.set_length(total.max(1) as u64);
        pb.set_position(done as u64);
        pb.set_message(format!("{cycle} cycles, {:.0} cycles/s", cycle as f64 / secs));
    }))
}
