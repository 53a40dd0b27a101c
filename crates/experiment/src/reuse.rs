//! The share of static instructions with at least one operand reuse bit set, as Table 6 of
//! MICRO'25 reports per program (MaxFlops 1.32 %, Cutlass sgemm 37.91 % with CUDA 12.8).
//!
//! Counted over the kernel's code up to its last instruction that is not padding: the `NOP`s
//! and the `BRA` to itself that ptxas appends after the final `EXIT` are not program code.

use sassim_isa::Kernel;

/// (instructions with a reuse bit, instructions) of a kernel.
pub fn reuse_counts(k: &Kernel) -> (usize, usize) {
    use sassim_isa::operand::Target;
    let is_pad = |i: &sassim_isa::Instruction| {
        let self_branch = match i.target() {
            Some(Target::Addr(a)) => *a == i.pc,
            Some(Target::Label { addr, .. }) => *addr == Some(i.pc),
            _ => false,
        };
        i.opcode.base == "NOP" || (i.opcode.base == "BRA" && self_branch)
    };
    let mut n = k.instructions.len();
    while n > 0 && is_pad(&k.instructions[n - 1]) {
        n -= 1;
    }
    let code = &k.instructions[..n];
    (code.iter().filter(|i| i.ctrl.reuse != 0).count(), code.len())
}

/// Percentage of a built-in workload's static instructions with a reuse bit, for `arch`.
pub fn builtin_reuse_percent(workload: &str, arch: &str) -> Option<f64> {
    let b = sassim_workload::builtin_named(workload)?;
    let text = b.listing(arch)?;
    let listing = sassim_sass::parse_listing(text, workload).ok()?;
    let k = listing.kernels.iter().find(|k| k.name == workload)?;
    let (r, n) = reuse_counts(k);
    (n > 0).then(|| 100.0 * r as f64 / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgemm_sets_reuse_bits_on_a_large_share_and_flops_on_none() {
        // Table 6: reuse on 35.9-37.9 % of Cutlass sgemm's static instructions, 0.3-1.3 % of
        // MaxFlops'. Our register-blocked sgemm: ptxas 13.5 sets them on about half.
        let s = builtin_reuse_percent("sgemm", "sm_86").unwrap();
        assert!((45.0..60.0).contains(&s), "{s}");
        let f = builtin_reuse_percent("flops", "sm_86").unwrap();
        assert!(f < 1.5, "{f}");
    }
}
