//! `sassim trace`: Accel-Sim traces converted to the compact binary format (one kernel or a
//! whole trace directory, kernels in parallel), summarised (`info`), and recorded from a
//! built-in workload's functional execution (`record`).

use super::parse_cf;
use crate::outputs::{self, Plan};
use anyhow::{anyhow, bail, Context, Result};
use clap::Subcommand;
use sassim_gpu::workload::load_builtin;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
