//! The subcommands. Each has a file of its own: `run` (`commands/run.rs`), `trace`
//! (`commands/trace.rs`), `microbench` and `disasm` (`commands/sass.rs`), `cflow` and
//! `correlate` (`commands/compare.rs`); this file holds `gpus` and what they share: the
//! GPU configuration, `--cf`, `--threads` and the exit status of a stopped run.

mod compare;
mod run;
mod sass;
mod trace;

pub use compare::{cflow, correlate, CflowCmd, CorrelateArgs};
pub use run::{run, RunArgs};
pub use sass::{disasm, microbench, MicrobenchArgs};
pub use trace::{trace, TraceCmd};

use crate::GpuArgs;
use anyhow::{anyhow, bail, Result};
use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use std::process::ExitCode;

pub fn load_gpu(a: &GpuArgs) -> Result<GpuConfig> {
    GpuConfig::load(&a.gpu, &a.set).map_err(|e| anyhow!("{e}"))
}

fn parse_cf(s: &str) -> Result<ControlFlowKind> {
    s.parse::<ControlFlowKind>().map_err(|e| anyhow!("{e}"))
}

/// Exit status of a run stopped by --max-cycles or --max-wall (partial statistics).
pub const EXIT_STOPPED: u8 = 3;

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
