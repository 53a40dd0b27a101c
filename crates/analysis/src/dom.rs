//! Dominators and post-dominators of the blocks of a [`Cfg`] (the iterative algorithm of
//! Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm", 2001).
//!
//! Post-dominators are the dominators of the reversed graph with a virtual exit that every
//! block without successors leads to. A block from which no exit is reachable (an endless
//! loop) has no immediate post-dominator.

use crate::cfg::Cfg;

/// A dominator tree: the immediate dominator of every block (`None` for the root and for
/// blocks the root does not reach).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomTree {
    pub idom: Vec<Option<usize>>,
    /// Depth in the tree (root = 0; unreachable blocks: `usize::MAX`).
    depth: Vec<usize>,
}

impl DomTree {
    /// Whether `a` dominates `b` (every block dominates itself; unreachable blocks are
    /// dominated by nothing).
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        if self.depth[b] == usize::MAX || self.depth[a] == usize::MAX {
            return false;
        }
        let mut x = b;
        while self.depth[x] > self.depth[a] {
            match self.idom[x] {
                Some(p) => x = p,
                None => return false,
            }
        }
        x == a
    }

    /// Whether `b` is in the tree (reachable from its root).
    pub fn contains(&self, b: usize) -> bool {
        self.depth[b] != usize::MAX
    }
}

/// Dominators over nodes `0..n` from `root`, with successor and predecessor functions.
fn dominators(
    n: usize,
    root: usize,
    succs: &dyn Fn(usize) -> Vec<usize>,
    preds: &dyn Fn(usize) -> Vec<usize>,
) -> (Vec<Option<usize>>, Vec<usize>) {
    // Reverse post-order from root.
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    let mut stack: Vec<(usize, Vec<usize>, usize)> = vec![(root, succs(root), 0)];
    seen[root] = true;
    while let Some((b, ss, k)) = stack.last_mut() {
        if let Some(&s) = ss.get(*k) {
            *k += 1;
            if !seen[s] {
                seen[s] = true;
                let next = succs(s);
                stack.push((s, next, 0));
            }
        } else {
            post.push(*b);
            stack.pop();
        }
    }
    let mut order = vec![usize::MAX; n];
    for (i, &b) in post.iter().enumerate() {
        order[b] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[root] = Some(root);
    let rpo: Vec<usize> = post.iter().rev().copied().collect();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new: Option<usize> = None;
            for p in preds(b) {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(x) => {
                        // intersect
                        let (mut f1, mut f2) = (p, x);
                        while f1 != f2 {
                            while order[f1] < order[f2] {
                                f1 = idom[f1].unwrap_or(root);
                            }
                            while order[f2] < order[f1] {
                                f2 = idom[f2].unwrap_or(root);
                            }
                        }
                        f1
                    }
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    // Depths.
    let mut depth = vec![usize::MAX; n];
    depth[root] = 0;
    for &b in &rpo {
        if b != root {
            if let Some(p) = idom[b] {
                depth[b] = depth[p].saturating_add(1);
            }
        }
    }
    idom[root] = None;
    (idom, depth)
}

impl DomTree {
    /// The dominator tree of `cfg` (root: the entry block).
    pub fn dominators(cfg: &Cfg) -> DomTree {
        let n = cfg.len();
        if n == 0 {
            return DomTree {
                idom: Vec::new(),
                depth: Vec::new(),
            };
        }
        let (idom, depth) = dominators(n, 0, &|b| cfg.succs(b).collect(), &|b| {
            cfg.blocks[b].preds.clone()
        });
        DomTree { idom, depth }
    }

    /// The post-dominator tree of `cfg`. `idom[b]` is the immediate post-dominator; `None`
    /// for exit blocks whose only post-dominator is the virtual exit, and for blocks that
    /// reach no exit.
    pub fn post_dominators(cfg: &Cfg) -> DomTree {
        let n = cfg.len();
        if n == 0 {
            return DomTree {
                idom: Vec::new(),
                depth: Vec::new(),
            };
        }
        let exit = n;
        let exits = cfg.exit_blocks();
        let exits2 = exits.clone();
        let (mut idom, mut depth) = dominators(
            n + 1,
            exit,
            &move |b| {
                if b == exit {
                    exits.clone()
                } else {
                    cfg.blocks[b].preds.clone()
                }
            },
            &move |b| {
                if b == exit {
                    Vec::new()
                } else {
                    let mut v: Vec<usize> = cfg.succs(b).collect();
                    if exits2.contains(&b) {
                        v.push(exit);
                    }
                    v
                }
            },
        );
        for d in idom.iter_mut() {
            if *d == Some(exit) {
                *d = None;
            }
        }
        idom.pop();
        depth.pop();
        DomTree { idom, depth }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diamond_loop_dominators() {
        let k = sassim_sass::microbench::parse(
            "ISETP.GE.AND P0, PT, R0, 0x10, PT ;\n\
             @P0 BRA else ;\n\
             IADD3 R1, R0, 0x1, RZ ;\n\
             BRA join ;\n\
             else: IADD3 R1, R0, 0x2, RZ ;\n\
             join: IADD3 R1, R1, -0x1, RZ ;\n\
             ISETP.NE.AND P1, PT, R1, RZ, PT ;\n\
             @P1 BRA join ;\n\
             EXIT ;",
            "t.sass",
        )
        .expect("parses")
        .kernel;
        let g = Cfg::build(&k);
        // blocks: 0 [0,2) 1 [2,4) 2 [4,5) 3 [5,8) 4 [8,9)
        let d = DomTree::dominators(&g);
        assert_eq!(d.idom, vec![None, Some(0), Some(0), Some(0), Some(3)]);
        assert!(d.dominates(0, 4) && d.dominates(3, 4) && !d.dominates(1, 3));
        let p = DomTree::post_dominators(&g);
        assert_eq!(p.idom, vec![Some(3), Some(3), Some(3), Some(4), None]);
        assert!(p.dominates(3, 1) && !p.dominates(1, 0));
    }
}
