//! Dominators and post-dominators of the blocks of a [`Cfg`] (the iterative algorithm of
//! Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm", 2001).
//!
//! Post-dominators are the dominators of the reversed graph with a virtual exit that every
//! block without successors leads to. A block from which no exit is reachable (an endless
//! loop) has no immediate post-dominator.
//!
//! The algorithm works on any graph given as successor lists
//! ([`DomTree::post_dominators_of`]): the functional engine's SIMT stack takes its
//! reconvergence points from the post-dominators of the instruction-level graph.

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

/// Dominators over nodes `0..n` from `root`, given each node's successors and predecessors
/// (nodes `>= n` in them are ignored).
fn dominators<'a>(
    n: usize,
    root: usize,
    succs: impl Fn(usize) -> &'a [usize],
    preds: impl Fn(usize) -> &'a [usize],
) -> DomTree {
    if root >= n {
        return DomTree {
            idom: vec![None; n],
            depth: vec![usize::MAX; n],
        };
    }
    // Reverse post-order from root (iterative DFS: node, next successor index).
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
    seen[root] = true;
    while let Some(&mut (b, ref mut k)) = stack.last_mut() {
        if let Some(&s) = succs(b).get(*k) {
            *k += 1;
            if s < n && !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
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
            for &p in preds(b) {
                if p >= n || idom[p].is_none() {
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
    DomTree { idom, depth }
}

impl DomTree {
    /// The dominator tree of `cfg` (root: the entry block).
    pub fn dominators(cfg: &Cfg) -> DomTree {
        let succs: Vec<Vec<usize>> = (0..cfg.len()).map(|b| cfg.succs(b).collect()).collect();
        dominators(cfg.len(), 0, |b| &succs[b], |b| &cfg.blocks[b].preds)
    }

    /// The post-dominator tree of `cfg`. `idom[b]` is the immediate post-dominator; `None`
    /// for exit blocks whose only post-dominator is the virtual exit, and for blocks that
    /// reach no exit.
    pub fn post_dominators(cfg: &Cfg) -> DomTree {
        let exit = cfg.len();
        let succs: Vec<Vec<usize>> = (0..cfg.len())
            .map(|b| match cfg.succs(b).collect::<Vec<usize>>() {
                v if v.is_empty() => vec![exit],
                v => v,
            })
            .collect();
        DomTree::post_dominators_of(&succs)
    }

    /// The post-dominator tree of the graph over nodes `0..n`, `n = succs.len()`, where
    /// `succs[v]` lists the successors of `v` and the successor `n` stands for a virtual
    /// exit (successors above `n` are ignored). `idom[v]` is the immediate post-dominator
    /// of `v`; `None` when it is the virtual exit, and for nodes that cannot reach the exit.
    /// The tree is that of the reversed graph rooted at the exit, as for
    /// [`DomTree::post_dominators`].
    pub fn post_dominators_of(succs: &[Vec<usize>]) -> DomTree {
        let exit = succs.len();
        // The reversed graph: its successors are the predecessors, the exit's being the
        // nodes that lead to it; its predecessors are the successors.
        let mut rsuccs: Vec<Vec<usize>> = vec![Vec::new(); exit + 1];
        for (v, ss) in succs.iter().enumerate() {
            for &s in ss {
                if let Some(r) = rsuccs.get_mut(s) {
                    r.push(v);
                }
            }
        }
        let mut t = dominators(
            exit + 1,
            exit,
            |v| &rsuccs[v],
            |v| succs.get(v).map_or(&[], Vec::as_slice),
        );
        for d in t.idom.iter_mut() {
            if *d == Some(exit) {
                *d = None;
            }
        }
        t.idom.pop();
        t.depth.pop();
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kernels::{kernel, DIAMOND_LOOP};

    #[test]
    fn diamond_loop_dominators() {
        let g = Cfg::build(&kernel(DIAMOND_LOOP));
        let d = DomTree::dominators(&g);
        assert_eq!(d.idom, vec![None, Some(0), Some(0), Some(0), Some(3)]);
        assert!(d.dominates(0, 4) && d.dominates(3, 4) && !d.dominates(1, 3));
        let p = DomTree::post_dominators(&g);
        assert_eq!(p.idom, vec![Some(3), Some(3), Some(3), Some(4), None]);
        assert!(p.dominates(3, 1) && !p.dominates(1, 0));
    }

    /// [`DomTree::post_dominators_of`] against the definition on small pseudo-random graphs
    /// (self-loops, nodes that reach no exit, successors beyond the exit): following `idom`
    /// from `v` visits exactly the strict post-dominators of `v`, the nodes every path from
    /// `v` to the exit passes.
    #[test]
    fn post_dominators_of_graphs_by_definition() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for _ in 0..500 {
            let n = 1 + rand(10);
            let succs: Vec<Vec<usize>> = (0..n)
                .map(|_| (0..rand(4)).map(|_| rand(n + 2)).collect())
                .collect();
            let t = DomTree::post_dominators_of(&succs);
            // Whether `v` reaches the exit (successor n) without passing `cut`.
            let reaches = |v: usize, cut: Option<usize>| {
                let mut seen = vec![false; n];
                let mut stack = vec![v];
                while let Some(x) = stack.pop() {
                    if Some(x) == cut || std::mem::replace(&mut seen[x], true) {
                        continue;
                    }
                    for &s in &succs[x] {
                        match s.cmp(&n) {
                            std::cmp::Ordering::Equal => return true,
                            std::cmp::Ordering::Less => stack.push(s),
                            std::cmp::Ordering::Greater => {}
                        }
                    }
                }
                false
            };
            for v in 0..n {
                let strict: Vec<usize> = (0..n)
                    .filter(|&d| d != v && reaches(v, None) && !reaches(v, Some(d)))
                    .collect();
                let mut chain = Vec::new();
                let mut x = v;
                while let Some(d) = t.idom[x] {
                    assert!(chain.len() < n, "{succs:?}: idom cycle");
                    chain.push(d);
                    x = d;
                }
                chain.sort_unstable();
                assert_eq!(chain, strict, "{succs:?} @{v}");
                assert!(strict.iter().all(|&d| t.dominates(d, v)), "{succs:?} @{v}");
                assert_eq!(t.contains(v), reaches(v, None), "{succs:?} @{v}");
            }
        }
    }
}
