//! Kernels for the unit tests, in the microbenchmark dialect (`docs/microbench.md`).

use sassim_isa::Kernel;

/// An if/else on the thread id, then a loop. Blocks: 0 [0,3) 1 [3,5) 2 [5,6) 3 [6,9)
/// 4 [9,10); edges 0 → 1, 2; 1, 2 → 3; 3 → 3, 4.
pub(crate) const DIAMOND_LOOP: &str = "S2R R0, SR_TID.X ;\n\
     ISETP.GE.AND P0, PT, R0, 0x10, PT ;\n\
     @P0 BRA else ;\n\
     IADD3 R1, R0, 0x1, RZ ;\n\
     BRA join ;\n\
     else: IADD3 R1, R0, 0x2, RZ ;\n\
     join: IADD3 R1, R1, -0x1, RZ ;\n\
     ISETP.NE.AND P1, PT, R1, RZ, PT ;\n\
     @P1 BRA join ;\n\
     EXIT ;";

/// The kernel of a test's text.
pub(crate) fn kernel(text: &str) -> Kernel {
    sassim_sass::microbench::parse(text, "t.sass")
        .expect("parses")
        .kernel
}
