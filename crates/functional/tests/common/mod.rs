//! Helpers shared by the integration tests: build kernels from SASS text, step warps.

#![allow(dead_code)]

use sassim_functional::{ControlFlowKind, ExecOptions, Issued, KernelExec, Launch, WarpId};
use sassim_isa::Kernel;
use std::sync::Arc;

/// A kernel from instruction bodies (PCs assigned 0x0, 0x10, ...), via the cuobjdump parser.
pub fn kernel(body: &[&str]) -> Arc<Kernel> {
    let mut s = String::from("\tcode for sm_86\n\t\tFunction : k\n\t.headerflags\t@\"EF_CUDA_SM86\"\n");
    for (i, l) in body.iter().enumerate() {
        s += &format!("        /*{:04x}*/                   {} ;\n", i * 16, l);
    }
    let listing = sassim_sass::parse_listing(&s, "test.sass").unwrap_or_else(|e| panic!("{e}\n{s}"));
    Arc::new(listing.kernels.into_iter().next().expect("one kernel"))
}

/// One CTA of `threads` threads with the given parameter bytes.
pub fn exec(k: Arc<Kernel>, threads: u32, cf: ControlFlowKind, opts: ExecOptions) -> KernelExec {
    KernelExec::new(
        k,
        "sm_86",
        Launch::new([1, 1, 1], [threads, 1, 1], Vec::new()),
        cf,
        opts,
    )
    .expect("launch")
}

/// Issue and commit one instruction.
pub fn step(ex: &mut KernelExec, w: WarpId) -> Issued {
    let is = ex.issue(w, 0).unwrap_or_else(|e| panic!("{e}"));
    let wr = is.writes;
    ex.commit(w, &wr);
    is
}

/// Run a single-warp kernel to completion and return R`reg` per lane.
pub fn run1(body: &[&str], threads: u32, reg: u8) -> [u32; 32] {
    let mut ex = exec(
        kernel(body),
        threads,
        ControlFlowKind::Hanoi,
        ExecOptions::default(),
    );
    let w = ex.start_cta(0)[0];
    let mut n = 0;
    while ex.next_pc(w).is_some() {
        step(&mut ex, w);
        n += 1;
        assert!(n < 100_000, "runaway");
    }
    ex.regs(w, sassim_isa::ArchReg::R(reg))
}
