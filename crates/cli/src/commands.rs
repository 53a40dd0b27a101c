//! The subcommands.

use crate::limits::Limits;
use crate::outputs::{self, Plan};
use crate::GpuArgs;
use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_gpu::footprint::Footprint;
use sassim_gpu::workload::{listing_arch_for, load_builtin, run_workload_timed};
use sassim_gpu::{Gpu, RunOptions};
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

/// Exit status of a run stopped by --max-cycles or --max-wall (partial statistics).
pub const EXIT_STOPPED: u8 = 3;

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

/// The machine's cores (1 if unknown).
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Threads per kernel: `--threads`, or the cores left to each of `jobs` simulations run at
/// once.
fn kernel_threads(threads: Option<usize>, jobs: usize) -> usize {
    threads.unwrap_or_else(|| all_cores() / jobs.max(1)).max(1)
}

/// Most threads `--threads` accepts.
pub const MAX_THREADS: usize = 1024;

/// `--threads` checked: 1 to [`MAX_THREADS`].
pub fn check_threads(threads: Option<usize>) -> Result<Option<usize>> {
    match threads {
        Some(t) if t == 0 || t > MAX_THREADS => {
            bail!("--threads {t}: give 1 to {MAX_THREADS}")
        }
        t => Ok(t),
    }
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
    #[command(flatten)]
    pub limits: Limits,
    /// Threads that tick the SMs (default: all cores), as for `run`. The result is
    /// identical for any number.
    #[arg(long)]
    pub threads: Option<usize>,
}

/// `R5 = 0x40000000 (2.0)`: the bits and their f32 reading.
fn reg_text(v: u32) -> String {
    let f = f32::from_bits(v);
    if f.is_finite() && (f == 0.0 || (1e-6..1e9).contains(&f.abs())) {
        format!("{v:#010x} ({f:?})")
    } else {
        format!("{v:#010x} ({v})")
    }
}

pub fn microbench(a: MicrobenchArgs) -> Result<ExitCode> {
    let mb = sassim_sass::microbench::parse_file(&a.file).map_err(|e| anyhow!("{e}"))?;
    let mut ga = a.gpu.clone();
    if let (Some(g), "rtx-a6000") = (&mb.gpu, a.gpu.gpu.as_str()) {
        ga.gpu = g.clone();
    }
    let cfg = load_gpu(&ga)?;
    let mut fp = Footprint::of_config(&cfg);
    fp.extend(Footprint::of_microbench(&mb, &a.file.display().to_string()));
    a.limits.check(&fp)?;
    let opts = sassim_gpu::microbench::MicrobenchOptions {
        max_cycles: a.limits.max_cycles,
        deadline: a.limits.deadline(),
        threads: kernel_threads(check_threads(a.threads)?, 1),
    };
    let r = sassim_gpu::microbench::run_microbench_with(&mb, &cfg, parse_cf(&a.cf)?, &opts)
        .map_err(|e| anyhow!("{e}"))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!("gpu {}, {} cycles", r.gpu, r.total_cycles);
        for w in &r.warps {
            println!("warp {} (sub-core {}):", w.warp, w.subcore);
            for i in &w.issues {
                let rfc = w.rfc.iter().find(|x| x.pc == i.pc).map(|x| {
                    let hits: Vec<String> = x
                        .reads
                        .iter()
                        .filter(|r| r.hit)
                        .map(|r| format!("R{}", r.reg))
                        .collect();
                    if hits.is_empty() {
                        String::new()
                    } else {
                        format!("   RFC hit {}", hits.join(", "))
                    }
                });
                println!(
                    "  {:>6}  /*{:04x}*/ {}{}",
                    i.cycle,
                    i.pc,
                    i.op,
                    rfc.unwrap_or_default()
                );
            }
            if !w.clocks.is_empty() {
                let d: Vec<String> = w.clocks.windows(2).map(|p| (p[1] - p[0]).to_string()).collect();
                println!("  clocks {:?} (differences {})", w.clocks, d.join(", "));
            }
            // Registers in numeric order, lanes 0-3, as bits and as f32.
            let mut regs: Vec<(u32, &Vec<u32>)> = w
                .regs
                .iter()
                .map(|(k, v)| (k.trim_start_matches('R').parse().unwrap_or(u32::MAX), v))
                .collect();
            regs.sort_by_key(|r| r.0);
            for (n, v) in regs {
                let lanes: Vec<String> = v.iter().take(4).map(|&x| reg_text(x)).collect();
                println!(
                    "  R{n} = {}{}",
                    lanes.join(", "),
                    if v.len() > 4 { ", ..." } else { "" }
                );
            }
        }
    }
    if let Some(e) = &r.error {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(1));
    }
    if let Some(why) = &r.stopped {
        eprintln!("warning: {why}; partial results");
        return Ok(ExitCode::from(EXIT_STOPPED));
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
    if listing.kernels.iter().all(|k| k.instructions.is_empty()) {
        bail!(
            "{name}: no instructions (expected a cuobjdump -sass or nvdisasm listing, or a microbenchmark)"
        );
    }
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
    let presets = sassim_config::list_presets();
    let w = |f: &dyn Fn(&sassim_config::PresetInfo) -> usize, title: &str| {
        presets.iter().map(f).max().unwrap_or(0).max(title.len())
    };
    let wn = w(&|p| p.name.len(), "name");
    let wa = w(&|p| p.arch.len(), "arch");
    let wl = w(&|p| p.aliases.join(", ").len(), "aliases");
    println!(
        "{:<wn$}  {:<wa$}  {:<wl$}  description",
        "name", "arch", "aliases"
    );
    for p in &presets {
        println!(
            "{:<wn$}  {:<wa$}  {:<wl$}  {}",
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
    /// Convert Accel-Sim traces (text, .xz, .gz, .zst) to the compact binary format
    /// (docs/trace-format.md). INPUT is one kernel trace (OUTPUT: the .sbt file), or a
    /// trace directory or its kernelslist.g (OUTPUT: a new directory that gets one .sbt
    /// per kernel and a kernelslist.g naming them, for `sassim run --trace`).
    Convert {
        /// A kernel trace (.traceg, .traceg.xz/.gz/.zst), a trace directory or its kernelslist.g.
        input: PathBuf,
        /// The .sbt file (kernel trace input) or a new directory (directory input).
        output: PathBuf,
        /// Overwrite existing output files.
        #[arg(long)]
        force: bool,
        /// Kernels converted at once (directory input; default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Print a trace's header and counts: one kernel trace (any format), or every kernel of
    /// a trace directory or kernelslist.g (one line each, then totals).
    Info {
        /// A kernel trace (any format), a trace directory or its kernelslist.g.
        input: PathBuf,
    },
    /// Execute a built-in workload functionally and write it as an Accel-Sim trace
    /// (kernelslist.g + kernel-1.traceg, tracer version 4) into DIR.
    Record {
        /// Built-in workload name (`sassim run` lists them).
        workload: String,
        /// Directory that receives kernelslist.g and kernel-1.traceg (created if needed).
        dir: PathBuf,
        /// Listing architecture (sm_75, sm_86, sm_90).
        #[arg(long, default_value = "sm_86")]
        arch: String,
        /// Control-flow manager: hanoi or simt.
        #[arg(long, default_value = "hanoi")]
        cf: String,
        /// Overwrite existing kernelslist.g and kernel-1.traceg.
        #[arg(long)]
        force: bool,
    },
}

pub fn trace(t: TraceCmd) -> Result<ExitCode> {
    match t {
        TraceCmd::Convert {
            input,
            output,
            force,
            jobs,
        } => convert_traces(&input, &output, force, jobs)?,
        TraceCmd::Record {
            workload,
            dir,
            arch,
            cf,
            force,
        } => {
            let b = sassim_workload::builtin_named(&workload)
                .ok_or_else(|| anyhow!("unknown workload '{workload}'"))?;
            let (w, listing, _) = load_builtin(&b, &arch).map_err(|e| anyhow!(e))?;
            let cf = parse_cf(&cf)?;
            let (list, kernel) = (dir.join("kernelslist.g"), dir.join("kernel-1.traceg"));
            let mut plan = Plan::default();
            plan.add(&list, &[], force)?;
            plan.add(&kernel, &[], force)?;
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            // Recorded into a private directory beside the outputs, moved into place only
            // when complete: a failed recording (a deadlock) leaves nothing behind.
            let tmp = outputs::temp_beside(&dir.join("record"));
            std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
            let r = sassim_functional::tracer::write_workload_trace(&w, &listing, &arch, cf, &tmp, 1)
                .map_err(|e| anyhow!("{e}"))
                .and_then(|s| {
                    std::fs::rename(tmp.join("kernel-1.traceg"), &kernel)?;
                    std::fs::rename(tmp.join("kernelslist.g"), &list)?;
                    Ok(s)
                });
            let _ = std::fs::remove_dir_all(&tmp);
            let s = r?;
            println!(
                "wrote {} ({} warp instructions, {} thread blocks)",
                kernel.display(),
                s.counts.instructions,
                s.counts.blocks
            );
        }
        TraceCmd::Info { input } => trace_info(&input)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn convert_line(from: &str, to: &Path, s: &sassim_trace::ConvertStats) -> String {
    format!(
        "{from} -> {}: {} -> {} bytes ({:.0}x), {} thread blocks, {} warp instructions",
        to.display(),
        s.in_bytes,
        s.out_bytes,
        s.in_bytes as f64 / s.out_bytes.max(1) as f64,
        s.blocks,
        s.instrs
    )
}

/// The `kernelslist.g` that `input` names: the list itself, or the one in a trace
/// directory; `None` for a single kernel trace.
fn kernelslist_of(input: &Path) -> Option<PathBuf> {
    if input.is_dir() {
        Some(input.join("kernelslist.g"))
    } else if input.file_name().is_some_and(|n| n == "kernelslist.g") {
        Some(input.to_path_buf())
    } else {
        None
    }
}

/// Header fields and counts of one kernel trace.
struct KernelInfo {
    name: String,
    grid: [u32; 3],
    block: [u32; 3],
    format: String,
    blocks: u64,
    insts: u64,
}

fn kernel_info(path: &Path) -> Result<KernelInfo> {
    let mut r = sassim_trace::KernelTraceReader::open(path).map_err(|e| anyhow!("{e}"))?;
    let h = r.header().clone();
    let format = format!("{:?}", r.container()).to_lowercase();
    let (mut blocks, mut insts) = (0u64, 0u64);
    while let Some(b) = r.next_block().map_err(|e| anyhow!("{e}"))? {
        blocks += 1;
        insts += b.n_instrs();
    }
    Ok(KernelInfo {
        name: h.name,
        grid: h.grid,
        block: h.block,
        format,
        blocks,
        insts,
    })
}

/// `sassim trace info`: one kernel trace, or every kernel of a directory / kernelslist.g.
fn trace_info(input: &Path) -> Result<()> {
    let list = kernelslist_of(input);
    let Some(list) = list else {
        let k = kernel_info(input)?;
        println!("kernel {} grid {:?} block {:?}", k.name, k.grid, k.block);
        println!("{} thread blocks, {} warp instructions", k.blocks, k.insts);
        return Ok(());
    };
    let cmds = sassim_trace::read_kernelslist(&list).map_err(|e| anyhow!("{e}"))?;
    let (mut kernels, mut copies, mut tblocks, mut tinsts, mut bytes) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for c in &cmds {
        match c {
            sassim_trace::TraceCommand::MemcpyHtoD { bytes: b, .. } => {
                copies += 1;
                bytes += b;
            }
            sassim_trace::TraceCommand::Kernel { file, path } => {
                let k = kernel_info(path)?;
                println!(
                    "{file}: {} grid {:?} block {:?} ({}): {} thread blocks, {} warp instructions",
                    k.name, k.grid, k.block, k.format, k.blocks, k.insts
                );
                kernels += 1;
                tblocks += k.blocks;
                tinsts += k.insts;
            }
        }
    }
    println!(
        "{kernels} kernels, {tblocks} thread blocks, {tinsts} warp instructions; {copies} host-to-device copies ({bytes} bytes)"
    );
    Ok(())
}

/// `sassim trace convert`: one kernel trace, or a whole trace directory / kernelslist.g.
fn convert_traces(input: &Path, output: &Path, force: bool, jobs: Option<usize>) -> Result<()> {
    let list = kernelslist_of(input);
    let Some(list) = list else {
        Plan::default().add(output, &[input], force)?;
        let mut stats = None;
        outputs::write_with(output, |tmp| {
            stats = Some(sassim_trace::convert(input, tmp).map_err(|e| anyhow!("{e}"))?);
            Ok(())
        })?;
        if let Some(s) = stats {
            println!("{}", convert_line(&input.display().to_string(), output, &s));
        }
        return Ok(());
    };
    let cmds = sassim_trace::read_kernelslist(&list).map_err(|e| anyhow!("{e}"))?;
    let src_dir = list.parent().unwrap_or(Path::new("."));
    if output.exists() && output.canonicalize().ok() == src_dir.canonicalize().ok() {
        bail!(
            "{}: the output directory must differ from the trace directory (its kernelslist.g would be replaced)",
            output.display()
        );
    }
    // The new file of each kernel: its name without the trace extensions, plus `.sbt`.
    let mut kernels = Vec::new();
    let mut text = String::new();
    for c in &cmds {
        match c {
            sassim_trace::TraceCommand::MemcpyHtoD { dst, bytes } => {
                text.push_str(&format!("MemcpyHtoD,0x{dst:016x},{bytes}\n"));
            }
            sassim_trace::TraceCommand::Kernel { file, path } => {
                let base = [".traceg.xz", ".traceg.gz", ".traceg.zst", ".traceg", ".sbt"]
                    .iter()
                    .find_map(|e| file.strip_suffix(e))
                    .unwrap_or(file);
                let name = format!("{base}.sbt");
                text.push_str(&name);
                text.push('\n');
                kernels.push((file.clone(), path.clone(), output.join(&name)));
            }
        }
    }
    let mut names: Vec<&Path> = kernels.iter().map(|k| k.2.as_path()).collect();
    names.sort();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        bail!(
            "{}: two kernels of {} would be written there",
            w[0].display(),
            list.display()
        );
    }
    let list_out = output.join("kernelslist.g");
    let ins: Vec<&Path> = kernels
        .iter()
        .map(|k| k.1.as_path())
        .chain([list.as_path()])
        .collect();
    let mut plan = Plan::default();
    plan.add(&list_out, &ins, force)?;
    for (_, _, to) in &kernels {
        plan.add(to, &ins, force)?;
    }
    std::fs::create_dir_all(output).with_context(|| format!("creating {}", output.display()))?;
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| anyhow!("thread pool: {e}"))?;
    // Each kernel is an independent file: converting them in parallel gives the same bytes.
    let results: Vec<Result<sassim_trace::ConvertStats>> = pool.install(|| {
        use rayon::prelude::*;
        kernels
            .par_iter()
            .map(|(_, from, to)| {
                let mut st = None;
                outputs::write_with(to, |tmp| {
                    st = Some(sassim_trace::convert(from, tmp).map_err(|e| anyhow!("{e}"))?);
                    Ok(())
                })?;
                st.ok_or_else(|| anyhow!("{}: not converted", from.display()))
            })
            .collect()
    });
    let (mut tin, mut tout) = (0u64, 0u64);
    for ((file, _, to), r) in kernels.iter().zip(results) {
        let s = r?;
        tin += s.in_bytes;
        tout += s.out_bytes;
        println!("{}", convert_line(file, to, &s));
    }
    outputs::write_atomic(&list_out, text.as_bytes())?;
    println!(
        "{} kernels: {tin} -> {tout} bytes ({:.0}x); wrote {}",
        kernels.len(),
        tin as f64 / tout.max(1) as f64,
        list_out.display()
    );
    Ok(())
}

#[derive(Subcommand)]
pub enum CflowCmd {
    /// Compare two control-flow managers (hanoi, simt) on built-in workloads: Levenshtein
    /// distance of the per-warp (PC, mask) traces divided by trace length.
    Compare {
        /// First control-flow manager: hanoi or simt.
        a: String,
        /// Second control-flow manager: hanoi or simt.
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
            let names: Vec<&str> = sassim_workload::builtin().iter().map(|b| b.name).collect();
            if let Some(bad) = workload.iter().find(|w| !names.contains(&w.as_str())) {
                bail!(
                    "unknown workload '{bad}'; the built-in workloads are {}",
                    names.join(", ")
                );
            }
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
                let ra = sassim_functional::runner::run_workload_with(&w, &listing, &arch, ka, &opts);
                let rb = sassim_functional::runner::run_workload_with(&w, &listing, &arch, kb, &opts);
                let (ta, tb) = match (ra, rb) {
                    (Ok(ta), Ok(tb)) => (ta, tb),
                    (ra, rb) => {
                        // A control-flow manager that cannot run the kernel (e.g. the SIMT
                        // stack on the spinlock: SIMT-induced deadlock) has no trace to compare.
                        for (k, r) in [(&a, ra.err()), (&b, rb.err())] {
                            if let Some(e) = r {
                                println!("{:<12} {k} did not finish: {e}", w.name);
                            }
                        }
                        continue;
                    }
                };
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
    /// JSON files written by `sassim run --json`, then the hardware measurements (the last
    /// file): a `kernel,launch_id,cycles` CSV (or with a time column such as `nanoseconds`),
    /// an Nsight Compute `--csv` export, an `nsys stats` CSV (`cuda_gpu_trace`,
    /// `cuda_gpu_kern_sum`), an nvprof log/CSV, or Accel-Sim's hardware statistics (these
    /// tools' CSVs); docs/report.md. The simulated kernels of several JSON files are taken in
    /// file order, numbered 1, 2, … again.
    #[arg(required = true, num_args = 2.., value_name = "SIM.json… HW")]
    pub files: Vec<PathBuf>,
    /// Clock (MHz) at which measured times become cycles (default: the simulated GPU's core
    /// clock, from the first JSON's configuration).
    #[arg(long, value_name = "MHZ")]
    pub clock_mhz: Option<f64>,
    /// SMs of the measured GPU, for per-SM sums such as nvprof's `elapsed_cycles_sm`
    /// (default: the simulated GPU's SM count).
    #[arg(long, value_name = "N")]
    pub hw_sms: Option<u32>,
    /// Write the log-log scatter plot (SVG) here.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Overwrite an existing plot file.
    #[arg(long)]
    pub force: bool,
}

pub fn correlate(a: CorrelateArgs) -> Result<ExitCode> {
    let Some((hw_path, sims)) = a.files.split_last() else {
        bail!("give the simulated statistics (JSON) and the hardware measurements");
    };
    if let Some(p) = &a.plot {
        let inputs: Vec<&Path> = a.files.iter().map(PathBuf::as_path).collect();
        Plan::default().add(p, &inputs, a.force)?;
    }
    if let Some(c) = a.clock_mhz {
        if !(c.is_finite() && c > 0.0 && c <= 100_000.0) {
            bail!("--clock-mhz {c}: expected a clock above 0 and at most 100000 MHz");
        }
    }
    if let Some(n) = a.hw_sms {
        if !(1..=100_000).contains(&n) {
            bail!("--hw-sms {n}: expected 1 to 100000 SMs");
        }
    }
    let mut sim: Option<sassim_report::RunReport> = None;
    for p in sims {
        let r = sassim_report::read_json(p).map_err(|e| anyhow!("{}: {e}", p.display()))?;
        match &mut sim {
            None => sim = Some(r),
            Some(s) => s.kernels.extend(r.kernels),
        }
    }
    let Some(mut sim) = sim else {
        bail!("no simulated statistics given");
    };
    if sims.len() > 1 {
        for (i, k) in sim.kernels.iter_mut().enumerate() {
            k.launch_uid = i as u32 + 1;
        }
    }
    let gpu_num = |key: &str| {
        sim.config
            .get("gpu")
            .and_then(|g| g.get(key))
            .and_then(|v| v.as_f64())
    };
    let opts = sassim_report::HwOptions {
        clock_mhz: a.clock_mhz.or_else(|| gpu_num("core_clock_mhz")),
        sms: a.hw_sms.or_else(|| gpu_num("num_sms").map(|n| n as u32)),
    };
    let hw = sassim_report::read_hw(hw_path, &opts).map_err(|e| anyhow!("{e}"))?;
    println!(
        "{}: {} ({} kernels)",
        hw_path.display(),
        hw.format,
        hw.kernels.len()
    );
    for n in &hw.notes {
        println!("note: {n}");
    }
    let c = sassim_report::correlate(&sim, &hw.kernels);
    print!("{}", sassim_report::render_correlation(&c));
    if let Some(p) = &a.plot {
        outputs::write_with(p, |tmp| {
            sassim_report::plot_correlation(&c.points(), tmp).map_err(|e| anyhow!("{e}"))
        })?;
    }
    Ok(ExitCode::SUCCESS)
}
