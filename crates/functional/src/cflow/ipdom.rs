//! Immediate post-dominators of a kernel's instruction-level control-flow graph, for the
//! SIMT-stack baseline.
//!
//! Nodes are instructions plus a virtual exit. Edges: fall-through; BRA/JMP to their target
//! (and fall-through when predicated or conditional); EXIT and RET to the exit (and
//! fall-through when predicated); CALL falls through (the callee returns there) and its
//! target is analysed as an extra root. Instructions that cannot reach the exit (e.g. the
//! `BRA self` padding after the last EXIT) have no post-dominator.

use crate::decode::{DInst, Op, K};

/// `ipdom[i]`: index of the immediate post-dominator of instruction i (None: the exit or unknown).
#[derive(Debug, Clone, Default)]
pub struct Ipdom {
    pub ipdom: Vec<Option<usize>>,
    /// PC of each instruction index.
    pub pcs: Vec<u64>,
}

impl Ipdom {
    pub fn compute(code: &[DInst], index_of: impl Fn(u64) -> Option<usize>) -> Ipdom {
        let n = code.len();
        let exit = n;
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
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
        // Post-dominators = dominators of the reverse graph rooted at the exit.
        let mut rpred: Vec<Vec<usize>> = vec![Vec::new(); n + 1]; // reverse-graph successors
        for (u, ss) in succ.iter().enumerate() {
            for &v in ss {
                rpred[v].push(u);
            }
        }
        // Post-order of the reverse graph from the exit (iterative DFS).
        let mut po_num = vec![usize::MAX; n + 1];
        let mut order = Vec::with_capacity(n + 1);
        let mut seen = vec![false; n + 1];
        let mut stack: Vec<(usize, usize)> = vec![(exit, 0)];
        seen[exit] = true;
        while let Some(&mut (v, ref mut k)) = stack.last_mut() {
            if *k < rpred[v].len() {
                let w = rpred[v][*k];
                *k += 1;
                if !seen[w] {
                    seen[w] = true;
                    stack.push((w, 0));
                }
            } else {
                po_num[v] = order.len();
                order.push(v);
                stack.pop();
            }
        }
        let mut idom: Vec<Option<usize>> = vec![None; n + 1];
        idom[exit] = Some(exit);
        let mut changed = true;
        while changed {
            changed = false;
            for &v in order.iter().rev() {
                if v == exit {
                    continue;
                }
                // Predecessors in the reverse graph = successors in the CFG.
                let mut new: Option<usize> = None;
                for &s in &succ[v] {
                    if idom[s].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => s,
                        Some(cur) => {
                            let (mut a, mut b) = (cur, s);
                            while a != b {
                                while po_num[a] < po_num[b] {
                                    a = idom[a].expect("processed");
                                }
                                while po_num[b] < po_num[a] {
                                    b = idom[b].expect("processed");
                                }
                            }
                            a
                        }
                    });
                }
                if new.is_some() && idom[v] != new {
                    idom[v] = new;
                    changed = true;
                }
            }
        }
        Ipdom {
            ipdom: (0..n).map(|i| idom[i].filter(|&d| d != exit)).collect(),
            pcs: code.iter().map(|d| d.pc).collect(),
        }
    }

    /// Reconvergence PC of the branch at instruction index `i`.
    pub fn rpc(&self, i: usize) -> Option<u64> {
        self.ipdom.get(i).copied().flatten().map(|j| self.pcs[j])
    }
}
