//! `sassim microbench` (a microbenchmark-dialect file run on the timing model: issue cycles,
//! register-cache hits, clocks and registers per warp) and `sassim disasm` (a SASS listing
//! or microbenchmark printed as text or JSON).

use super::{check_threads, kernel_threads, load_gpu, parse_cf, EXIT_STOPPED};
use crate::limits::Limits;
use crate::GpuArgs;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use sassim_gpu::footprint::Footprint;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
