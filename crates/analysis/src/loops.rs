//! Natural loops: for every back edge `latch → header` (the header dominates the latch),
//! the blocks that reach the latch without passing through the header. Loops with the
//! same header are one loop. A retreating edge whose target does not dominate its source
//! makes the graph irreducible (a loop with several entries); such edges form no loop.

use crate::cfg::Cfg;
use crate::dom::DomTree;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    pub header: usize,
    /// Blocks of the loop (the header included), ascending.
    pub body: Vec<usize>,
    /// Sources of the back edges.
    pub latches: Vec<usize>,
    /// The innermost loop that contains this one.
    pub parent: Option<usize>,
    /// Nesting depth (outermost = 1).
    pub depth: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loops {
    pub loops: Vec<Loop>,
    /// Innermost loop of each block.
    pub innermost: Vec<Option<usize>>,
    /// The graph has a retreating edge that is not a back edge.
    pub irreducible: bool,
}

impl Loops {
    pub fn find(cfg: &Cfg, dom: &DomTree) -> Loops {
        let n = cfg.len();
        let mut by_header: std::collections::BTreeMap<usize, (Vec<bool>, Vec<usize>)> = Default::default();
        for t in 0..n {
            if !dom.contains(t) {
                continue;
            }
            for h in cfg.succs(t) {
                if dom.dominates(h, t) {
                    let e = by_header.entry(h).or_insert_with(|| (vec![false; n], Vec::new()));
                    if !e.1.contains(&t) {
                        e.1.push(t);
                    }
                    // Blocks reaching t without passing h.
                    let body = &mut e.0;
                    body[h] = true;
                    let mut stack = vec![t];
                    while let Some(x) = stack.pop() {
                        if body[x] {
                            continue;
                        }
                        body[x] = true;
                        for &p in &cfg.blocks[x].preds {
                            if !body[p] && dom.contains(p) {
                                stack.push(p);
                            }
                        }
                    }
                }
            }
        }
        let mut loops: Vec<Loop> = by_header
            .into_iter()
            .map(|(header, (body, mut latches))| {
                latches.sort_unstable();
                Loop {
                    header,
                    body: (0..n).filter(|&b| body[b]).collect(),
                    latches,
                    parent: None,
                    depth: 1,
                }
            })
            .collect();
        // Parents: the smallest other loop whose body contains this header.
        for i in 0..loops.len() {
            let h = loops[i].header;
            let size = loops[i].body.len();
            let parent = (0..loops.len())
                .filter(|&j| j != i && loops[j].body.binary_search(&h).is_ok() && loops[j].body.len() >= size)
                .filter(|&j| loops[j].body.len() > size || loops[j].header != h)
                .min_by_key(|&j| loops[j].body.len());
            loops[i].parent = parent;
        }
        for i in 0..loops.len() {
            let mut d = 1;
            let mut p = loops[i].parent;
            while let Some(j) = p {
                d += 1;
                p = loops[j].parent;
                if d > loops.len() as u32 {
                    break;
                }
            }
            loops[i].depth = d;
        }
        let mut innermost = vec![None; n];
        for b in 0..n {
            innermost[b] = (0..loops.len())
                .filter(|&i| loops[i].body.binary_search(&b).is_ok())
                .min_by_key(|&i| loops[i].body.len());
        }
        // Irreducibility: a DFS retreating edge (to a block on the stack) that is not a back edge.
        let mut irreducible = false;
        if n > 0 {
            let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
            let mut stack = vec![(0usize, 0usize)];
            state[0] = 1;
            while let Some(&mut (b, ref mut k)) = stack.last_mut() {
                if let Some(e) = cfg.blocks[b].succs.get(*k) {
                    *k += 1;
                    match state[e.to] {
                        0 => {
                            state[e.to] = 1;
                            stack.push((e.to, 0));
                        }
                        1 if !dom.dominates(e.to, b) => irreducible = true,
                        _ => {}
                    }
                } else {
                    state[b] = 2;
                    stack.pop();
                }
            }
        }
        Loops {
            loops,
            innermost,
            irreducible,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kernels::kernel;

    #[test]
    fn nested_loops() {
        // Figure 5 of the LTRF paper: A -> B, B -> C, C -> B (inner), C -> A (outer).
        let k = kernel(
            "MOV R0, RZ ;\n\
             a: IADD3 R0, R0, 0x1, RZ ;\n\
             b: IADD3 R1, R1, 0x1, RZ ;\n\
             ISETP.NE.AND P0, PT, R1, 0x8, PT ;\n\
             @P0 BRA b ;\n\
             ISETP.NE.AND P1, PT, R0, 0x4, PT ;\n\
             @P1 BRA a ;\n\
             EXIT ;",
        );
        let g = Cfg::build(&k);
        let d = DomTree::dominators(&g);
        let l = Loops::find(&g, &d);
        assert!(!l.irreducible);
        assert_eq!(l.loops.len(), 2);
        let outer = l
            .loops
            .iter()
            .position(|x| x.header == g.block_of[1])
            .expect("outer");
        let inner = l
            .loops
            .iter()
            .position(|x| x.header == g.block_of[2])
            .expect("inner");
        assert_eq!(l.loops[inner].parent, Some(outer));
        assert_eq!(l.loops[inner].depth, 2);
        assert_eq!(l.loops[outer].body, vec![1, 2, 3]);
        assert_eq!(l.loops[inner].body, vec![2]);
        assert_eq!(l.innermost[g.block_of[3]], Some(inner));
    }
}
