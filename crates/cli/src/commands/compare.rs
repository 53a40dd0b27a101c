//! The comparisons: `sassim cflow compare` (two control-flow managers' per-warp traces on
//! the built-in workloads) and `sassim correlate` (simulated cycles against hardware
//! measurements).

use super::parse_cf;
use crate::outputs::{self, Plan};
use anyhow::{anyhow, bail, Result};
use clap::{Args, Subcommand};
use sassim_gpu::workload::load_builtin;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
