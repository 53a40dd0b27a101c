//! LTRF's compiler side applied to a kernel before it runs (issue 14): the register-intervals
//! of `sassim_analysis::ltrf` and their prefetches, attached to the static code for the
//! timing model's register cache (`sassim_timing::ltrf`).

use sassim_analysis::ltrf::{analyze, bank_conflicts, labelled_heads, renumber, LtrfOptions};
use sassim_config::GpuConfig;
use sassim_isa::Kernel;
use sassim_timing::{LtrfSlot, StaticInst};

/// The pass's options for `g` (`[regfile.ltrf]`).
pub fn options(g: &GpuConfig) -> LtrfOptions {
    let l = &g.regfile.ltrf;
    LtrfOptions {
        registers_per_interval: l.registers_per_interval,
        banks: l.main_banks,
        ..LtrfOptions::default()
    }
}

/// Whether kernels run renumbered on `g` (LTRF with `[regfile.ltrf] renumber`).
pub fn renumbers(g: &GpuConfig) -> bool {
    g.regfile.ltrf.renumber && g.regfile.organisation != sassim_config::RegFileOrganisation::Baseline
}

/// The kernel as it runs on `g`: renumbered by the paper's pass when `g` asks for it and the
/// pass can (otherwise unchanged). Callers execute this kernel, functionally and in timing.
pub fn kernel_for(kernel: &Kernel, g: &GpuConfig) -> Option<Kernel> {
    if !renumbers(g) || !labelled_heads(kernel).is_empty() {
        return None;
    }
    renumber(kernel, &options(g)).ok().map(|r| r.kernel)
}

/// Give every instruction of `code` (decoded from `kernel`) its interval and the interval's
/// prefetch. With `[regfile.ltrf] renumber`, the prefetches are those of the renumbered
/// kernel (a kernel already renumbered — marked by `.LTRF_` labels — keeps its intervals).
pub fn annotate(kernel: &Kernel, g: &GpuConfig, code: &mut [StaticInst]) {
    let opts = options(g);
    let renumbered = kernel_for(kernel, g);
    let a = analyze(renumbered.as_ref().unwrap_or(kernel), &opts);
    let small = |v: usize| u16::try_from(v).unwrap_or(u16::MAX);
    for (i, si) in code.iter_mut().enumerate() {
        let Some(&k) = a.intervals.interval_of.get(i) else {
            continue;
        };
        let Some(p) = a.prefetches.get(k) else {
            continue;
        };
        si.ltrf = Some(LtrfSlot {
            interval: u32::try_from(k).unwrap_or(u32::MAX - 1),
            fetch: small(p.working_set.regular_len()),
            live: small(p.live.regular_len()),
            conflicts: small(p.bank_conflicts as usize),
            conflicts_live: small(bank_conflicts(&p.live, opts.banks) as usize),
        });
    }
}
