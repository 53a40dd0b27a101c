//! Register liveness per block and per instruction (all register files: R, UR, P, UP, B).
//!
//! A register is live at a point when some path from there reads it before a write that
//! kills it ([`crate::footprint::Footprint::kills`]: a guarded or part-register write does
//! not). Two views:
//!
//! * [`Mode::Thread`]: the classic per-thread liveness over the [`Cfg`]. It decides which
//!   values a thread still needs, and so which registers may share a number
//!   (register allocation, renumbering).
//! * [`Mode::Warp`]: what a *warp* still needs. A warp runs the two sides of a divergent
//!   branch one after the other, so a value the lanes of one side need later stays live
//!   while the warp executes the other side, although no thread of that side reads it. The
//!   graph gets, for every divergent branch (a conditional branch on a per-thread
//!   predicate, or an indirect branch), every block of one side (the blocks reachable
//!   from one successor before the branch's immediate post-dominator, the join) keeps
//!   live what the lanes of the other sides and the lanes waiting at the join will read
//!   (their thread-level live-in), whatever the side writes: its writes are masked to its
//!   own lanes. This is the view hardware that tracks liveness per warp
//!   needs: LTRF+'s dead-operand bits, or a register-file cache that drops dead values.
//!   A loop whose exit branch diverges is such a region too: lanes that left wait at the
//!   join with their values while the others iterate.

use crate::cfg::Cfg;
use crate::dom::DomTree;
use crate::footprint::Footprint;
use crate::regset::RegSet;
use sassim_isa::{Instruction, OperandKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Thread,
    Warp,
}

#[derive(Debug, Clone)]
pub struct Liveness {
    pub mode: Mode,
    live_in: Vec<RegSet>,
    live_out: Vec<RegSet>,
    after: Vec<RegSet>,
    before: Vec<RegSet>,
}

/// Whether the branch that ends a block may send the lanes of a warp different ways.
fn divergent(ins: &Instruction, nsuccs: usize) -> bool {
    if nsuccs < 2 {
        return false;
    }
    match ins.opcode.base.as_str() {
        "BRX" | "JMX" => true,
        _ => {
            let guard_thread = ins.guard.is_some_and(|g| !g.reg.uniform && !g.reg.is_true());
            let pred_thread = ins.operands.iter().any(|o| match &o.kind {
                OperandKind::Pred(p) => !p.uniform && !p.is_true(),
                _ => false,
            });
            guard_thread || pred_thread
        }
    }
}

/// A divergent branch and the blocks of each of its sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DivergentRegion {
    /// The block that ends with the branch.
    pub branch: usize,
    /// Its immediate post-dominator (where the lanes reconverge), if any.
    pub join: Option<usize>,
    /// Per side: the side's first block and the blocks reachable from it before the join.
    pub sides: Vec<(usize, Vec<usize>)>,
}

/// The divergent branches of a kernel and their sides.
pub fn divergent_regions(cfg: &Cfg, instructions: &[Instruction], post: &DomTree) -> Vec<DivergentRegion> {
    let n = cfg.len();
    let mut out = Vec::new();
    for b in 0..n {
        let succs: Vec<usize> = cfg.succs(b).collect();
        let last = &instructions[cfg.blocks[b].last()];
        if !divergent(last, succs.len()) {
            continue;
        }
        let join = post.idom[b];
        let sides = succs
            .iter()
            .copied()
            .filter(|&s| Some(s) != join)
            .map(|s| {
                let mut region = vec![false; n];
                let mut stack = vec![s];
                while let Some(x) = stack.pop() {
                    if region[x] || Some(x) == join {
                        continue;
                    }
                    region[x] = true;
                    stack.extend(cfg.succs(x).filter(|&y| !region[y] && Some(y) != join));
                }
                (s, (0..n).filter(|&x| region[x]).collect())
            })
            .collect();
        out.push(DivergentRegion {
            branch: b,
            join,
            sides,
        });
    }
    out
}

impl Liveness {
    /// Liveness of the kernel whose graph is `cfg` and footprints `fps`.
    pub fn compute(cfg: &Cfg, instructions: &[Instruction], fps: &[Footprint], mode: Mode) -> Liveness {
        let n = cfg.len();
        let mut extra = vec![RegSet::EMPTY; n];
        if mode == Mode::Warp {
            // While a warp runs one side of a divergent branch, the lanes of the other sides
            // and the lanes waiting at the join keep their values: the registers those lanes
            // read (thread-level live-in of the other sides and of the join) stay live in
            // every block of the side, whatever the side writes (its writes are masked).
            let thread = Liveness::compute(cfg, instructions, fps, Mode::Thread);
            let post = DomTree::post_dominators(cfg);
            for d in divergent_regions(cfg, instructions, &post) {
                for (i, (_, blocks)) in d.sides.iter().enumerate() {
                    let mut need = d.join.map_or(RegSet::EMPTY, |j| thread.live_in[j]);
                    for (j, (t, _)) in d.sides.iter().enumerate() {
                        if i != j {
                            need.union_with(&thread.live_in[*t]);
                        }
                    }
                    for &x in blocks {
                        extra[x].union_with(&need);
                    }
                }
            }
        }
        let transfer = |b: usize, out: &RegSet| -> RegSet {
            let mut live = out.or(&extra[b]);
            for i in (cfg.blocks[b].start..cfg.blocks[b].end).rev() {
                live = live.minus(&fps[i].kills);
                live.union_with(&fps[i].uses);
                live.union_with(&extra[b]);
            }
            live
        };
        let mut live_in = vec![RegSet::EMPTY; n];
        let mut live_out = vec![RegSet::EMPTY; n];
        // Post-order of the reachable part first, then the rest, iterated to a fixed point.
        let mut order: Vec<usize> = cfg.reverse_postorder();
        order.reverse();
        let mut seen = vec![false; n];
        for &b in &order {
            seen[b] = true;
        }
        order.extend((0..n).filter(|&b| !seen[b]));
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &order {
                let mut out = RegSet::EMPTY;
                for s in cfg.succs(b) {
                    out.union_with(&live_in[s]);
                }
                live_out[b] = out;
                let inn = transfer(b, &out);
                if inn != live_in[b] {
                    live_in[b] = inn;
                    changed = true;
                }
            }
        }
        let m = fps.len();
        let mut after = vec![RegSet::EMPTY; m];
        let mut before = vec![RegSet::EMPTY; m];
        for b in 0..n {
            let mut live = live_out[b].or(&extra[b]);
            for i in (cfg.blocks[b].start..cfg.blocks[b].end).rev() {
                after[i] = live;
                live = live.minus(&fps[i].kills);
                live.union_with(&fps[i].uses);
                live.union_with(&extra[b]);
                before[i] = live;
            }
        }
        Liveness {
            mode,
            live_in,
            live_out,
            after,
            before,
        }
    }

    pub fn live_in(&self, block: usize) -> RegSet {
        self.live_in[block]
    }
    pub fn live_out(&self, block: usize) -> RegSet {
        self.live_out[block]
    }
    /// Registers live just after instruction `i`.
    pub fn live_after(&self, i: usize) -> RegSet {
        self.after[i]
    }
    /// Registers live just before instruction `i`.
    pub fn live_before(&self, i: usize) -> RegSet {
        self.before[i]
    }
    /// Registers `i` reads whose value is dead after it (and that it does not write): the
    /// dead-operand bits of Gebhart et al. (ISCA 2011) that LTRF+ uses.
    pub fn dead_after(&self, i: usize, fp: &Footprint) -> RegSet {
        fp.uses.minus(&self.after[i]).minus(&fp.defs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::footprint::footprints;
    use crate::test_kernels::kernel;

    fn setup(text: &str) -> (sassim_isa::Kernel, Cfg, Vec<Footprint>) {
        let k = kernel(text);
        let g = Cfg::build(&k);
        let f = footprints(&k.instructions);
        (k, g, f)
    }

    #[test]
    fn loop_carried_and_dead_values() {
        let (k, g, f) = setup(
            "MOV R0, RZ ;\n\
             MOV R2, 0x4 ;\n\
             loop: IADD3 R0, R0, R2, RZ ;\n\
             ISETP.NE.AND P0, PT, R0, 0x40, PT ;\n\
             @P0 BRA loop ;\n\
             STG.E [R4.64], R0 ;\n\
             EXIT ;",
        );
        let l = Liveness::compute(&g, &k.instructions, &f, Mode::Thread);
        assert_eq!(l.live_in(0).to_string(), "{R4, R5}");
        assert_eq!(l.live_before(2).to_string(), "{R0, R2, R4, R5}");
        assert_eq!(l.live_after(4).to_string(), "{R0, R2, R4, R5}");
        assert_eq!(l.dead_after(5, &f[5]).to_string(), "{R0, R4, R5}");
        assert_eq!(l.dead_after(3, &f[3]).to_string(), "{}");
        assert_eq!(l.dead_after(4, &f[4]).to_string(), "{P0}");
    }

    #[test]
    fn warp_liveness_keeps_the_other_side_alive() {
        // R7 is read only on the `else` side. A thread on the `then` side never needs it,
        // but the warp runs `then` first and `else` after: R7 is live for the warp there.
        let (k, g, f) = setup(
            "S2R R0, SR_TID.X ;\n\
             MOV R7, 0x5 ;\n\
             ISETP.GE.AND P0, PT, R0, 0x10, PT ;\n\
             @P0 BRA else ;\n\
             IADD3 R1, R0, 0x1, RZ ;\n\
             BRA join ;\n\
             else: IADD3 R1, R0, R7, RZ ;\n\
             join: STG.E [R4.64], R1 ;\n\
             EXIT ;",
        );
        let t = Liveness::compute(&g, &k.instructions, &f, Mode::Thread);
        let w = Liveness::compute(&g, &k.instructions, &f, Mode::Warp);
        assert!(!t.live_before(4).contains(sassim_isa::ArchReg::R(7)));
        assert!(w.live_before(4).contains(sassim_isa::ArchReg::R(7)));
        assert!(w.live_after(5).contains(sassim_isa::ArchReg::R(7)));
        // The read on the else side is the last one for the warp too.
        assert!(w.dead_after(6, &f[6]).contains(sassim_isa::ArchReg::R(7)));
    }

    #[test]
    fn warp_liveness_of_a_divergent_loop() {
        // Lanes leave the loop at different iterations with their R7; the others overwrite
        // their own R7 at the top: for the warp, R7 is live there, for a thread not.
        let (k, g, f) = setup(
            "S2R R0, SR_TID.X ;\n\
             loop: IADD3 R7, R0, 0x1, RZ ;\n\
             IADD3 R0, R0, 0x1, RZ ;\n\
             ISETP.NE.AND P0, PT, R7, 0x20, PT ;\n\
             @P0 BRA loop ;\n\
             STG.E [R2.64], R7 ;\n\
             EXIT ;",
        );
        let t = Liveness::compute(&g, &k.instructions, &f, Mode::Thread);
        let w = Liveness::compute(&g, &k.instructions, &f, Mode::Warp);
        let r7 = sassim_isa::ArchReg::R(7);
        assert!(!t.live_before(1).contains(r7));
        assert!(w.live_before(1).contains(r7));
        assert!(w.live_in(0).contains(r7), "live into the loop from the entry");
    }
}
