//! `sassim`: a cycle-level simulator of modern NVIDIA GPU cores.

mod commands;
mod exec;
mod limits;
mod ltrf;
mod outputs;
mod sweep;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

// mimalloc rather than the system allocator: on the loaded vector add it is 7-17 % faster
// than glibc's (fewer page faults and cheaper malloc/free; docs/performance-log.md, tenth
// session). It asks the kernel for transparent huge pages: 2 MB pages cover the per-warp state
// that a loaded GPU touches across tens of MB, where 4 KB pages miss the TLB and fault
// 17 K times (twenty-sixth session; `MIMALLOC_ALLOW_THP=0` turns them off). Results do not
// depend on the allocator.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "sassim",
    version,
    about = "Cycle-level simulator of modern NVIDIA GPUs (SASS, control bits, sub-cores)",
    long_about = "sassim simulates NVIDIA GPUs at the cycle level, following the SM revealed by recent \
reverse-engineering work: compiler control bits, the CGGTY issue scheduler, L0 I-caches with stream \
buffers, a two-bank register file with a register-file cache, and the sub-core memory pipeline.\n\n\
Without arguments, `sassim run` simulates the built-in workload suite on the default GPU (rtx-a6000)."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// GPU selection shared by the simulating commands.
#[derive(clap::Args, Clone, Debug)]
pub struct GpuArgs {
    /// GPU preset name (case-insensitive, aliases accepted; see `sassim gpus`) or a TOML file.
    #[arg(long, default_value = "rtx-a6000")]
    pub gpu: String,
    /// Override a preset field, e.g. `--set regfile.read_ports_per_bank=2` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate workloads (default: the built-in suite) on a GPU and print a summary.
    Run(commands::RunArgs),
    /// Run a microbenchmark-dialect file through functional execution and the timing model.
    Microbench(commands::MicrobenchArgs),
    /// Print the parsed instructions of a listing or microbenchmark with decoded control bits.
    Disasm {
        /// cuobjdump -sass, nvdisasm -hex listing, or microbenchmark file.
        file: PathBuf,
        /// One JSON object per instruction.
        #[arg(long)]
        json: bool,
    },
    /// List the GPU presets.
    Gpus,
    /// Accel-Sim trace tools.
    #[command(subcommand)]
    Trace(commands::TraceCmd),
    /// Control-flow traces: compare control-flow managers (Hanoi paper's discrepancy).
    #[command(subcommand)]
    Cflow(commands::CflowCmd),
    /// LTRF (latency-tolerant register file): register-intervals, prefetches and renumbering.
    #[command(subcommand)]
    Ltrf(ltrf::LtrfCmd),
    /// Compare simulated cycles (JSON from `run --json`) with hardware measurements (CSV).
    Correlate(commands::CorrelateArgs),
    /// Run an unmodified CUDA program (built with `nvcc -cudart shared`); every kernel it
    /// launches is simulated: `sassim exec [OPTIONS] -- PROGRAM ARGS...`.
    Exec(exec::ExecArgs),
    /// Run an experiment file: every configuration x input, locally in parallel or on Slurm.
    Sweep(sweep::SweepArgs),
    /// The results database: list, show, export, compare, collect Slurm results.
    #[command(subcommand)]
    Results(sweep::ResultsCmd),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Run(a) => commands::run(a),
        Cmd::Microbench(a) => commands::microbench(a),
        Cmd::Disasm { file, json } => commands::disasm(&file, json),
        Cmd::Gpus => commands::gpus(),
        Cmd::Trace(t) => commands::trace(t),
        Cmd::Cflow(c) => commands::cflow(c),
        Cmd::Ltrf(c) => ltrf::ltrf(c),
        Cmd::Correlate(a) => commands::correlate(a),
        Cmd::Exec(a) => exec::exec(a),
        Cmd::Sweep(a) => sweep::sweep(a),
        Cmd::Results(c) => sweep::results(c),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
