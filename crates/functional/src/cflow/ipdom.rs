//! Immediate post-dominators of a kernel's instruction-level control-flow graph, for the
//! SIMT-stack baseline.
//!
//! Nodes are instructions plus a virtual exit. Edges: fall-through; BRA/JMP to their target
//! (and fall-through when predicated or conditional); EXIT and RET to the exit (and
//! fall-through when predicated); CALL falls through (the callee returns there) and its
//! target is analysed as an extra root (no edge leads there: the callee reaches the exit
//! through its RET). Instructions that cannot reach the exit (e.g. the
//! `BRA self` padding after the last EXIT) have no post-dominator.

use crate::decode::{DInst, Op, K};
use sassim_analysis::DomTree;

/// `ipdom[i]`: index of the immediate post-dominator of instruction i (None: the exit or unknown).
#[derive(Debug, Clone, Default)]
pub struct Ipdom {
    pub ipdom: Vec<Option<usize>>,
    /// PC of each instruction index.
    pub pcs: Vec<u64>,
}

impl Ipdom {
    pub fn compute(code: &[DInst], index_of: impl Fn(u64) -> Option<usize>) -> Ipdom {
        // Post-dominators = dominators of the reverse graph rooted at the exit (the analysis
        // crate's algorithm, the same as for the blocks of its CFG).
        let pdom = DomTree::post_dominators_of(&successors(code, index_of));
        Ipdom {
            ipdom: pdom.idom,
            pcs: code.iter().map(|d| d.pc).collect(),
        }
    }

    /// Reconvergence PC of the branch at instruction index `i`.
    pub fn rpc(&self, i: usize) -> Option<u64> {
        self.ipdom.get(i).copied().flatten().map(|j| self.pcs[j])
    }
}

/// Successors of every instruction (the edges above); successor `code.len()` is the virtual
/// exit.
fn successors(code: &[DInst], index_of: impl Fn(u64) -> Option<usize>) -> Vec<Vec<usize>> {
    let n = code.len();
    let exit = n;
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, d) in code.iter().enumerate() {
        let next = if i + 1 < n { i + 1 } else { exit };
        let target = d.o.iter().find_map(|o| match o.k {
            K::Target(t) => index_of(t),
            _ => None,
        });
        let conditional = d.guard.is_some() || d.o.iter().any(|o| o.is_pred() && !o.is_pt());
        match &d.op {
            Op::Bra { conv, .. } => {
                if let Some(t) = target {
                    succ[i].push(t);
                }
                if conditional || conv.is_some() || target.is_none() {
                    succ[i].push(next);
                }
            }
            Op::Jmp => {
                if let Some(t) = target {
                    succ[i].push(t);
                }
                if conditional {
                    succ[i].push(next);
                }
            }
            // Indirect branches (jump tables): targets unknown here; reconverge at the
            // exit (correct, if less precise than the real post-dominator).
            Op::Exit | Op::Ret | Op::Brx { .. } => {
                succ[i].push(exit);
                if conditional {
                    succ[i].push(next);
                }
            }
            _ => succ[i].push(next),
        }
    }
    succ
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_kernel;

    fn ipdom(text: &str) -> Ipdom {
        let k = sassim_sass::microbench::parse(text, "t.sass")
            .expect("parses")
            .kernel;
        Ipdom::compute(&decode_kernel(&k), |pc| k.index_of(pc))
    }

    /// An if/else on the lane id: the branch and both arms reconverge at the join; the
    /// `BRA self` padding after the EXIT never reaches the exit and has no post-dominator.
    #[test]
    fn if_else_reconverges_at_the_join() {
        let p = ipdom(
            "S2R R0, SR_LANEID ;\n\
             ISETP.GT.U32.AND P0, PT, R0, 0x3, PT ;\n\
             @!P0 BRA small ;\n\
             MOV R2, 0x1 ;\n\
             BRA join ;\n\
             small: MOV R2, 0x2 ;\n\
             join: STG.E [R4.64], R2 ;\n\
             EXIT ;\n\
             pad: BRA pad ;",
        );
        assert_eq!(
            p.ipdom,
            vec![
                Some(1),
                Some(2),
                Some(6),
                Some(4),
                Some(6),
                Some(6),
                Some(7),
                None,
                None
            ]
        );
        assert_eq!(p.rpc(2), Some(0x60));
        assert_eq!(p.rpc(7), None);
        assert_eq!(p.rpc(99), None);
    }

    /// A loop with a `break`: the back edge and the break both reconverge after the loop.
    #[test]
    fn loop_with_break_reconverges_after_the_loop() {
        let p = ipdom(
            "MOV R0, RZ ;\n\
             loop: IADD3 R0, R0, 0x1, RZ ;\n\
             ISETP.GT.AND P1, PT, R0, R2, PT ;\n\
             @P1 BRA done ;\n\
             ISETP.NE.AND P0, PT, R0, 0x8, PT ;\n\
             @P0 BRA loop ;\n\
             done: EXIT ;",
        );
        assert_eq!(
            p.ipdom,
            vec![Some(1), Some(2), Some(3), Some(6), Some(5), Some(6), None]
        );
    }

    /// A predicated EXIT and an indirect branch lead to the exit; CALL falls through to its
    /// return site; the callee (an extra root) reaches the exit through its RET.
    #[test]
    fn exits_calls_and_indirect_branches() {
        let p = ipdom(
            "@P0 EXIT ;\n\
             CALL.REL.NOINC f ;\n\
             BRX R10 -0x20 ;\n\
             EXIT ;\n\
             f: MOV R4, R10 ;\n\
             RET.REL.NODEC R4 0x0 ;",
        );
        assert_eq!(p.ipdom, vec![None, Some(2), None, None, Some(5), None]);
    }
}
