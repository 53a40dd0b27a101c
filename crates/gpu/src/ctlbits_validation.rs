//! Control bits inferred against ptxas's own (issue 13, point 5): strip the control bits of
//! every listing the repository ships — the built-in workloads (sm_75 on `t4`, sm_86 on
//! `rtx-a6000`, sm_90 on `h100`) and the program suite's cached SASS — infer them, and
//! measure the agreement and, for the workloads, the cycles with inferred versus real bits.
//! Used by `cargo run --release -p sassim-gpu --example ctlbits` (docs/validation.md) and by
//! the tests that keep the figures from regressing.

use crate::ctlbits::{infer_options, timings, with_inferred_control_bits};
use crate::workload::{load_builtin, run_workload_timed};
use crate::{Gpu, RunOptions};
use sassim_analysis::control_bits::{infer, Agreement};
use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_isa::{Kernel, Listing};
use std::path::Path;

/// The architectures compared and the preset each is timed on.
pub const ARCHS: [(&str, &str); 3] = [("sm_75", "t4"), ("sm_86", "rtx-a6000"), ("sm_90", "h100")];

/// Agreement over one architecture's listings of one source ("workloads" or "programs").
#[derive(Debug, Clone)]
pub struct AgreementRow {
    pub arch: &'static str,
    pub source: &'static str,
    pub agreement: Agreement,
}

/// One workload run with the compiler's and with inferred control bits.
#[derive(Debug, Clone)]
pub struct CycleRow {
    pub preset: &'static str,
    pub workload: &'static str,
    pub listing_cycles: u64,
    pub inferred_cycles: u64,
    /// The outputs of the run with inferred bits are correct.
    pub correct: bool,
    pub stale_reads: u64,
}

impl CycleRow {
    /// Relative difference of the inferred run's cycles, in percent.
    pub fn difference_pct(&self) -> f64 {
        (self.inferred_cycles as f64 - self.listing_cycles as f64) / self.listing_cycles.max(1) as f64 * 100.0
    }
}

/// The agreement of the inference with the compiler's bits on `kernels`, on `cfg`.
pub fn agreement(kernels: &[Kernel], cfg: &GpuConfig) -> Agreement {
    let core = Gpu::new(cfg.clone()).core;
    let opts = infer_options(cfg);
    let mut a = Agreement::default();
    for k in kernels {
        a.add(&Agreement::of_kernel(
            k,
            &infer(k, &timings(k, cfg, &core), &opts),
        ));
    }
    a
}

/// The kernels of the built-in workloads' `arch` listings.
pub fn workload_kernels(arch: &str) -> Vec<Kernel> {
    sassim_workload::builtin()
        .iter()
        .filter_map(|b| load_builtin(b, arch).ok())
        .flat_map(|(_, l, _)| l.kernels)
        .collect()
}

/// The kernels of the program suite's cached `arch` SASS (`dir` holds `INDEX.txt` and the
/// `.nvdisasm-hex` listings, `workloads/programs/sass`).
pub fn program_kernels(dir: &Path, arch: &str) -> Vec<Kernel> {
    let index = std::fs::read_to_string(dir.join("INDEX.txt")).unwrap_or_default();
    index
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            (f.len() >= 4 && f[1] == arch && f[3] != "-").then(|| f[2].to_string())
        })
        .filter_map(|name| sassim_sass::parse_listing_file(&dir.join(format!("{name}.nvdisasm-hex"))).ok())
        .flat_map(|l| l.kernels)
        .collect()
}

/// `listing` with every kernel's control bits inferred for `cfg`.
pub fn inferred_listing(listing: &Listing, cfg: &GpuConfig) -> Listing {
    let core = Gpu::new(cfg.clone()).core;
    let mut out = listing.clone();
    for k in out.kernels.iter_mut() {
        *k = with_inferred_control_bits(k, cfg, &core);
    }
    out
}

/// Every built-in workload with an `arch` listing, run on `preset` with the compiler's and
/// with inferred control bits (workloads that do not run are left out).
pub fn cycle_rows(arch: &str, preset: &'static str) -> Vec<CycleRow> {
    let Ok(cfg) = GpuConfig::preset(preset) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for b in sassim_workload::builtin() {
        let Ok((w, listing, smem)) = load_builtin(&b, arch) else {
            continue;
        };
        let inferred = inferred_listing(&listing, &cfg);
        let run = |l: &Listing| {
            let mut g = Gpu::new(cfg.clone());
            run_workload_timed(
                &mut g,
                &w,
                l,
                arch,
                smem,
                ControlFlowKind::Hanoi,
                &RunOptions::default(),
            )
        };
        if let (Ok(real), Ok(inf)) = (run(&listing), run(&inferred)) {
            rows.push(CycleRow {
                preset,
                workload: b.name,
                listing_cycles: real.run.cycles,
                inferred_cycles: inf.run.cycles,
                correct: inf.check.is_ok(),
                stale_reads: inf.run.stats.stale_reads,
            });
        }
    }
    rows
}
