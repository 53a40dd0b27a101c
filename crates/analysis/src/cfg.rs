//! Basic blocks and the control-flow graph of a kernel, as the threads see it.
//!
//! Instructions are indexed by their position in `Kernel::instructions` (not by PC).
//! Block boundaries: the first instruction, every branch target, and the instruction after
//! every control transfer (`BRA`, `BRX`, `JMP`, `JMX`, `CALL`, `RET`, `EXIT`, `KILL`).
//!
//! Edges (thread-level control flow; a warp executing divergent paths one after another
//! still follows these edges lane by lane, see [`crate::liveness::Mode::Warp`] for the
//! warp-level view):
//!
//! * `BRA`/`JMP` to a target: a [`EdgeKind::Branch`] edge, and a fall-through edge when
//!   the branch is conditional (a guard other than `PT`, or a predicate operand as in
//!   `BRA !P1, L`). `@!PT BRA` never branches.
//! * `BRX`/`JMX` (indirect, through a register): edges to the targets given in
//!   [`CfgOptions::indirect_targets`]; without them the targets are unknown statically and
//!   every labelled instruction is taken as a possible target (nvdisasm labels every jump
//!   table entry: a sound over-approximation), or, for a listing without labels, every
//!   block start ([`Cfg::indirect_unresolved`] says so: the graph may then miss targets
//!   inside blocks).
//! * `CALL.REL` to a target: a [`EdgeKind::Call`] edge to the callee; `RET` gets
//!   [`EdgeKind::Return`] edges to the instruction after every `CALL.REL` of the kernel
//!   (the return address is data, so every return site is possible). `CALL.ABS` through a
//!   register (an external function: printf, assert, malloc) returns to the next
//!   instruction like any other instruction.
//! * `EXIT`/`KILL`: no successor, unless guarded (fall-through).
//! * `BSSY`, `BSYNC`, `BREAK`, `WARPSYNC`, `BMOV`: fall through. Convergence is a warp-level
//!   matter: the thread-level flow continues at the next instruction.

use sassim_isa::{Instruction, Kernel, OperandKind};
use std::collections::BTreeMap;

/// Why control goes from one block to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeKind {
    /// To the next instruction.
    Fallthrough,
    /// A direct branch's target.
    Branch,
    /// An indirect branch's possible target.
    Indirect,
    /// A call to a subroutine of the kernel.
    Call,
    /// A return to a call's return site.
    Return,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Edge {
    pub to: usize,
    pub kind: EdgeKind,
}

/// A maximal straight-line run of instructions `start..end` (indices).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub start: usize,
    pub end: usize,
    pub succs: Vec<Edge>,
    pub preds: Vec<usize>,
}

impl Block {
    pub fn len(&self) -> usize {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
    /// Index of the block's last instruction.
    pub fn last(&self) -> usize {
        self.end.saturating_sub(1)
    }
}

/// What the caller knows beyond the listing.
#[derive(Debug, Clone, Default)]
pub struct CfgOptions {
    /// Targets of indirect branches: PC of the `BRX`/`JMX` → PCs it may jump to.
    pub indirect_targets: BTreeMap<u64, Vec<u64>>,
}

/// The control-flow graph of one kernel.
#[derive(Debug, Clone)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    /// Block of each instruction.
    pub block_of: Vec<usize>,
    /// Entry blocks of subroutines (`CALL.REL` targets).
    pub callees: Vec<usize>,
    /// Return sites (the blocks after a `CALL.REL`).
    pub return_sites: Vec<usize>,
    /// Some indirect branch's targets were taken as every labelled instruction (sound for
    /// nvdisasm listings) or every block start.
    pub indirect_approximated: bool,
    /// Some indirect branch had no known targets and the listing no labels: targets inside
    /// blocks may be missing, so analyses built on the graph may be unsound.
    pub indirect_unresolved: bool,
    /// Branch targets outside the kernel's code (ignored).
    pub bad_targets: Vec<u64>,
}

/// How an instruction transfers control.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Flow {
    Next,
    /// Direct branch to `target` (an instruction index); `cond` = may also fall through.
    Branch {
        target: Option<usize>,
        cond: bool,
    },
    Indirect {
        cond: bool,
    },
    Call {
        target: Option<usize>,
        cond: bool,
    },
    Return {
        cond: bool,
    },
    Exit {
        cond: bool,
    },
}

/// Whether the instruction's guard may be false (and, for branches, whether a predicate
/// operand makes it conditional). `None`: the guard is `!PT` (never executes).
fn conditional(ins: &Instruction) -> Option<bool> {
    let mut cond = false;
    if let Some(g) = &ins.guard {
        if g.reg.is_true() {
            if g.neg {
                return None;
            }
        } else {
            cond = true;
        }
    }
    for o in &ins.operands {
        if let OperandKind::Pred(p) = &o.kind {
            if !p.is_true() || o.not {
                cond = true;
            }
        }
    }
    Some(cond)
}

fn flow(ins: &Instruction, index_of: &dyn Fn(u64) -> Option<usize>, bad: &mut Vec<u64>) -> Flow {
    let base = ins.opcode.base.as_str();
    let mut target = || {
        ins.target().and_then(|t| t.addr()).and_then(|a| {
            let i = index_of(a);
            if i.is_none() {
                bad.push(a);
            }
            i
        })
    };
    let guard_cond = match &ins.guard {
        Some(g) if g.reg.is_true() && g.neg => return Flow::Next,
        Some(g) => !g.reg.is_true(),
        None => false,
    };
    match base {
        "BRA" | "JMP" => match conditional(ins) {
            None => Flow::Next,
            Some(cond) => Flow::Branch {
                target: target(),
                cond,
            },
        },
        "BRX" | "JMX" => Flow::Indirect { cond: guard_cond },
        "CALL" if ins.target().is_some() => Flow::Call {
            target: target(),
            cond: guard_cond,
        },
        "RET" => Flow::Return { cond: guard_cond },
        "EXIT" | "KILL" => Flow::Exit { cond: guard_cond },
        _ => Flow::Next,
    }
}

impl Cfg {
    /// The graph of `kernel` without extra knowledge.
    pub fn build(kernel: &Kernel) -> Cfg {
        Cfg::build_with(kernel, &CfgOptions::default())
    }

    /// The graph of `kernel`, with indirect-branch targets from `opts`.
    pub fn build_with(kernel: &Kernel, opts: &CfgOptions) -> Cfg {
        let ins = &kernel.instructions;
        let n = ins.len();
        let index_of = |pc: u64| kernel.index_of(pc);
        let mut bad = Vec::new();
        let flows: Vec<Flow> = ins.iter().map(|i| flow(i, &index_of, &mut bad)).collect();
        // Leaders.
        let mut leader = vec![false; n + 1];
        if n > 0 {
            leader[0] = true;
        }
        let label_targets: Vec<usize> = kernel
            .labels
            .iter()
            .filter(|(name, _)| !crate::ltrf::is_ltrf_label(name))
            .filter_map(|(_, &pc)| index_of(pc))
            .collect();
        let mut indirect: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut approximated = false;
        let mut unresolved = false;
        for (i, f) in flows.iter().enumerate() {
            match f {
                Flow::Next => {}
                Flow::Branch { target, .. } | Flow::Call { target, .. } => {
                    if let Some(t) = target {
                        leader[*t] = true;
                    }
                    leader[i + 1] = true;
                }
                Flow::Indirect { .. } => {
                    leader[i + 1] = true;
                    let known = opts.indirect_targets.get(&ins[i].pc).map(|v| {
                        v.iter()
                            .filter_map(|&pc| {
                                let t = index_of(pc);
                                if t.is_none() {
                                    bad.push(pc);
                                }
                                t
                            })
                            .collect::<Vec<_>>()
                    });
                    let ts = match known {
                        Some(ts) => ts,
                        None => {
                            approximated = true;
                            if label_targets.is_empty() {
                                unresolved = true;
                            }
                            label_targets.clone()
                        }
                    };
                    for &t in &ts {
                        leader[t] = true;
                    }
                    indirect.insert(i, ts);
                }
                Flow::Return { .. } | Flow::Exit { .. } => leader[i + 1] = true,
            }
        }
        let mut blocks = Vec::new();
        let mut block_of = vec![0usize; n];
        let mut start = 0;
        for i in 1..=n {
            if i == n || leader[i] {
                if start < i {
                    for b in block_of.iter_mut().take(i).skip(start) {
                        *b = blocks.len();
                    }
                    blocks.push(Block {
                        start,
                        end: i,
                        succs: Vec::new(),
                        preds: Vec::new(),
                    });
                }
                start = i;
            }
        }
        let call_sites: Vec<usize> = flows
            .iter()
            .enumerate()
            .filter(|(_, f)| matches!(f, Flow::Call { target: Some(_), .. }))
            .map(|(i, _)| i)
            .collect();
        let return_sites: Vec<usize> = call_sites
            .iter()
            .filter(|&&i| i + 1 < n)
            .map(|&i| block_of[i + 1])
            .collect();
        let callees: Vec<usize> = flows
            .iter()
            .filter_map(|f| match f {
                Flow::Call { target: Some(t), .. } => Some(block_of[*t]),
                _ => None,
            })
            .collect();
        let all_starts: Vec<usize> = (0..blocks.len()).collect();
        for b in 0..blocks.len() {
            let last = blocks[b].last();
            let next = (last + 1 < n).then(|| block_of[last + 1]);
            let mut succs = Vec::new();
            let fall = |succs: &mut Vec<Edge>| {
                if let Some(nb) = next {
                    succs.push(Edge {
                        to: nb,
                        kind: EdgeKind::Fallthrough,
                    });
                }
            };
            match &flows[last] {
                Flow::Next => fall(&mut succs),
                Flow::Branch { target, cond } => {
                    if let Some(t) = target {
                        succs.push(Edge {
                            to: block_of[*t],
                            kind: EdgeKind::Branch,
                        });
                    }
                    if *cond || target.is_none() {
                        fall(&mut succs);
                    }
                }
                Flow::Indirect { cond } => {
                    let ts: Vec<usize> = if unresolved && !opts.indirect_targets.contains_key(&ins[last].pc) {
                        all_starts.clone()
                    } else {
                        indirect
                            .get(&last)
                            .map(|v| v.iter().map(|&t| block_of[t]).collect())
                            .unwrap_or_default()
                    };
                    for t in ts {
                        succs.push(Edge {
                            to: t,
                            kind: EdgeKind::Indirect,
                        });
                    }
                    if *cond {
                        fall(&mut succs);
                    }
                }
                Flow::Call { target, cond } => {
                    if let Some(t) = target {
                        succs.push(Edge {
                            to: block_of[*t],
                            kind: EdgeKind::Call,
                        });
                    } else {
                        fall(&mut succs);
                    }
                    if *cond {
                        fall(&mut succs);
                    }
                }
                Flow::Return { cond } => {
                    for &r in &return_sites {
                        succs.push(Edge {
                            to: r,
                            kind: EdgeKind::Return,
                        });
                    }
                    if *cond {
                        fall(&mut succs);
                    }
                }
                Flow::Exit { cond } => {
                    if *cond {
                        fall(&mut succs);
                    }
                }
            }
            // One edge per (target, kind), in a stable order.
            succs.sort_by_key(|e| (e.to, e.kind));
            succs.dedup();
            blocks[b].succs = succs;
        }
        for b in 0..blocks.len() {
            let succs: Vec<usize> = blocks[b].succs.iter().map(|e| e.to).collect();
            for s in succs {
                if !blocks[s].preds.contains(&b) {
                    blocks[s].preds.push(b);
                }
            }
        }
        for b in &mut blocks {
            b.preds.sort_unstable();
        }
        let mut callees = callees;
        callees.sort_unstable();
        callees.dedup();
        let mut return_sites = return_sites;
        return_sites.sort_unstable();
        return_sites.dedup();
        bad.sort_unstable();
        bad.dedup();
        Cfg {
            blocks,
            block_of,
            callees,
            return_sites,
            indirect_approximated: approximated,
            indirect_unresolved: unresolved,
            bad_targets: bad,
        }
    }

    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The entry block (block 0), if the kernel has instructions.
    pub fn entry(&self) -> Option<usize> {
        (!self.blocks.is_empty()).then_some(0)
    }

    /// Successor block indices of `b`.
    pub fn succs(&self, b: usize) -> impl Iterator<Item = usize> + '_ {
        self.blocks[b].succs.iter().map(|e| e.to)
    }

    /// Blocks reachable from the entry, in reverse post-order.
    pub fn reverse_postorder(&self) -> Vec<usize> {
        let n = self.blocks.len();
        let mut seen = vec![false; n];
        let mut post = Vec::with_capacity(n);
        if n == 0 {
            return post;
        }
        // Iterative DFS: (block, next successor index).
        let mut stack = vec![(0usize, 0usize)];
        seen[0] = true;
        while let Some(&mut (b, ref mut k)) = stack.last_mut() {
            if let Some(e) = self.blocks[b].succs.get(*k) {
                *k += 1;
                if !seen[e.to] {
                    seen[e.to] = true;
                    stack.push((e.to, 0));
                }
            } else {
                post.push(b);
                stack.pop();
            }
        }
        post.reverse();
        post
    }

    /// Whether each block is reachable from the entry.
    pub fn reachable(&self) -> Vec<bool> {
        let mut r = vec![false; self.blocks.len()];
        for b in self.reverse_postorder() {
            r[b] = true;
        }
        r
    }

    /// Blocks without successors (exits, returns of a kernel without calls).
    pub fn exit_blocks(&self) -> Vec<usize> {
        (0..self.blocks.len())
            .filter(|&b| self.blocks[b].succs.is_empty())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kernels::{kernel, DIAMOND_LOOP};

    #[test]
    fn diamond_and_loop() {
        let g = Cfg::build(&kernel(DIAMOND_LOOP));
        let spans: Vec<(usize, usize)> = g.blocks.iter().map(|b| (b.start, b.end)).collect();
        assert_eq!(spans, vec![(0, 3), (3, 5), (5, 6), (6, 9), (9, 10)]);
        let succ = |b: usize| g.succs(b).collect::<Vec<_>>();
        assert_eq!(succ(0), vec![1, 2]);
        assert_eq!(succ(1), vec![3]);
        assert_eq!(succ(2), vec![3]);
        assert_eq!(succ(3), vec![3, 4]);
        assert!(succ(4).is_empty());
        assert_eq!(g.blocks[3].preds, vec![1, 2, 3]);
        assert_eq!(g.reverse_postorder()[0], 0);
    }

    #[test]
    fn calls_returns_and_indirect_branches() {
        let k = kernel(
            "MOV R10, 0x30 ;\n\
             CALL.REL.NOINC f ;\n\
             BRX R10 -0x30 ;\n\
             a: EXIT ;\n\
             b: EXIT ;\n\
             f: MOV R4, R10 ;\n\
             RET.REL.NODEC R4 0x0 ;",
        );
        let g = Cfg::build(&k);
        let b_of = |i: usize| g.block_of[i];
        assert_eq!(g.callees, vec![b_of(5)]);
        assert_eq!(g.return_sites, vec![b_of(2)]);
        // CALL -> callee; RET -> the return site.
        assert_eq!(g.succs(b_of(1)).collect::<Vec<_>>(), vec![b_of(5)]);
        assert_eq!(g.succs(b_of(6)).collect::<Vec<_>>(), vec![b_of(2)]);
        // BRX without known targets: every label (a, b, f) is a possible target.
        assert!(g.indirect_approximated && !g.indirect_unresolved);
        assert_eq!(
            g.succs(b_of(2)).collect::<Vec<_>>(),
            vec![b_of(3), b_of(4), b_of(5)]
        );
        let mut opts = CfgOptions::default();
        opts.indirect_targets.insert(0x20, vec![0x40]);
        let g = Cfg::build_with(&k, &opts);
        assert!(!g.indirect_approximated);
        assert_eq!(g.succs(g.block_of[2]).collect::<Vec<_>>(), vec![g.block_of[4]]);
    }
}
