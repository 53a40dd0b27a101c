//! Register-interval formation: the LTRF paper's Algorithms 1 and 2 (§3.3).
//!
//! A register-interval is a subgraph of the control-flow graph with a single entry (its
//! head) whose instructions access at most N regular registers (the working set, which the
//! prefetch at the head brings into the warp's register-cache partition).
//!
//! **Pass 1** (Algorithm 1) grows an interval from its head block by block: a block joins
//! the interval when all its predecessors belong to it; the instructions of a block are
//! added one by one, and when the next one would take the working set past N the block is
//! cut there, the rest becoming the head of a new interval. When no block can join, every
//! successor block outside the interval becomes the head of a new interval. Blocks are
//! visited in instruction order (the paper leaves the order open).
//!
//! **Pass 2** (Algorithm 2) merges whole intervals the same way (an interval joins when all
//! its predecessor intervals belong to the merged one and the union of the working sets
//! fits), and is repeated until nothing merges. Each repetition can fold one level of a
//! loop nest into its enclosing interval (the paper's Figure 5).
//!
//! Choices where the paper is silent or loose (docs/model.md):
//! * the working set bound applies to the **whole interval** (the union over all its
//!   blocks): the prefetch at the head loads every register any path of the interval may
//!   access, and they must all fit the partition. The paper's Algorithm 1 tests the union
//!   of the predecessors' output lists, which bounds each path separately;
//! * subroutine entries (`CALL.REL` targets) and return sites always start an interval
//!   ("each function call becomes a separate register-interval");
//! * an instruction that alone accesses more than N registers (a tensor-core instruction
//!   with N = 8) gets an interval of its own, reported as oversized;
//! * unreachable code forms intervals of its own.

use crate::cfg::Cfg;
use crate::footprint::Footprint;
use crate::regset::RegSet;
use std::collections::VecDeque;

/// One register-interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interval {
    /// The head: the first instruction executed on entry (where the prefetch goes).
    pub head: usize,
    /// Instruction ranges `start..end` of the interval, ascending.
    pub ranges: Vec<(usize, usize)>,
    /// Regular registers the interval's instructions read or write.
    pub working_set: RegSet,
    /// Intervals control may come from (other than itself).
    pub preds: Vec<usize>,
    /// Intervals control may go to (other than itself).
    pub succs: Vec<usize>,
}

impl Interval {
    /// Number of static instructions.
    pub fn len(&self) -> usize {
        self.ranges.iter().map(|(a, b)| b - a).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

/// The intervals of a kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intervals {
    pub intervals: Vec<Interval>,
    /// Interval of every instruction.
    pub interval_of: Vec<usize>,
    /// Intervals after pass 1, and repetitions of pass 2 that merged something.
    pub pass1_intervals: usize,
    pub pass2_rounds: usize,
    /// Intervals whose working set exceeds N (a single instruction that alone does).
    pub oversized: Vec<usize>,
}

/// The regular registers instruction `i` accesses.
pub(crate) fn regs_of(fp: &Footprint) -> RegSet {
    fp.uses.or(&fp.defs).regular()
}

/// Pieces: basic blocks cut further at interval boundaries. A piece is named by its first
/// instruction; `cut[i]` marks piece starts.
struct Pieces<'a> {
    cfg: &'a Cfg,
    cut: Vec<bool>,
}

impl Pieces<'_> {
    fn end(&self, p: usize) -> usize {
        let bend = self.cfg.blocks[self.cfg.block_of[p]].end;
        (p + 1..bend).find(|&k| self.cut[k]).unwrap_or(bend)
    }
    fn start_of(&self, i: usize) -> usize {
        (0..=i).rev().find(|&k| self.cut[k]).unwrap_or(0)
    }
    fn succs(&self, p: usize) -> Vec<usize> {
        let e = self.end(p);
        let b = self.cfg.block_of[p];
        if e < self.cfg.blocks[b].end {
            vec![e]
        } else {
            self.cfg.succs(b).map(|s| self.cfg.blocks[s].start).collect()
        }
    }
    fn preds(&self, p: usize) -> Vec<usize> {
        let b = self.cfg.block_of[p];
        if p != self.cfg.blocks[b].start {
            vec![self.start_of(p - 1)]
        } else {
            self.cfg.blocks[b]
                .preds
                .iter()
                .map(|&q| self.start_of(self.cfg.blocks[q].last()))
                .collect()
        }
    }
    fn starts(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.cut.len()).filter(|&k| self.cut[k])
    }
}

/// Instruction indices that must start an interval: the kernel entry, subroutine entries
/// and return sites.
pub(crate) fn forced_heads(cfg: &Cfg) -> Vec<bool> {
    let n = cfg.block_of.len();
    let mut f = vec![false; n];
    if n > 0 {
        f[0] = true;
    }
    for &b in cfg.callees.iter().chain(cfg.return_sites.iter()) {
        f[cfg.blocks[b].start] = true;
    }
    f
}

/// Forms the register-intervals of a kernel with at most `n` registers each.
/// `merge`: run pass 2 (Algorithm 2) after pass 1.
pub fn form(cfg: &Cfg, fps: &[Footprint], n: usize, merge: bool) -> Intervals {
    let ninst = fps.len();
    if ninst == 0 || cfg.is_empty() {
        return Intervals {
            intervals: Vec::new(),
            interval_of: Vec::new(),
            pass1_intervals: 0,
            pass2_rounds: 0,
            oversized: Vec::new(),
        };
    }
    let regs: Vec<RegSet> = fps.iter().map(regs_of).collect();
    let forced = forced_heads(cfg);
    let mut pieces = Pieces {
        cfg,
        cut: vec![false; ninst],
    };
    for b in &cfg.blocks {
        pieces.cut[b.start] = true;
    }
    // ---- Pass 1 (Algorithm 1) ----
    let mut of: Vec<Option<usize>> = vec![None; ninst]; // interval of each piece start
    let mut ws: Vec<RegSet> = Vec::new();
    let mut heads: Vec<usize> = Vec::new();
    let mut work: VecDeque<usize> = VecDeque::new();
    let new_interval =
        |p: usize, of: &mut Vec<Option<usize>>, ws: &mut Vec<RegSet>, heads: &mut Vec<usize>| {
            of[p] = Some(ws.len());
            ws.push(RegSet::EMPTY);
            heads.push(p);
        };
    new_interval(0, &mut of, &mut ws, &mut heads);
    work.push_back(0);
    loop {
        while let Some(p) = work.pop_front() {
            let i = of[p].unwrap_or(0);
            traverse(
                p,
                i,
                &mut pieces,
                &regs,
                n,
                &mut of,
                &mut ws,
                &mut heads,
                &mut work,
            );
            // Grow the interval.
            loop {
                let cand = pieces.starts().find(|&h| {
                    of[h].is_none()
                        && !forced[h]
                        && {
                            let ps = pieces.preds(h);
                            !ps.is_empty() && ps.iter().all(|&q| of[q] == Some(i))
                        }
                        && ws[i].or(&regs[h]).regular_len() <= n
                });
                let Some(h) = cand else { break };
                of[h] = Some(i);
                traverse(
                    h,
                    i,
                    &mut pieces,
                    &regs,
                    n,
                    &mut of,
                    &mut ws,
                    &mut heads,
                    &mut work,
                );
            }
            // Successors outside the interval start new intervals.
            let members: Vec<usize> = pieces.starts().filter(|&q| of[q] == Some(i)).collect();
            for q in members {
                for s in pieces.succs(q) {
                    if of[s].is_none() {
                        new_interval(s, &mut of, &mut ws, &mut heads);
                        work.push_back(s);
                    }
                }
            }
        }
        // Unreachable pieces start intervals of their own.
        match pieces.starts().find(|&q| of[q].is_none()) {
            Some(q) => {
                new_interval(q, &mut of, &mut ws, &mut heads);
                work.push_back(q);
            }
            None => break,
        }
    }
    let pass1 = heads.len();
    // Interval of each instruction.
    let mut inst_of = vec![0usize; ninst];
    for p in pieces.starts().collect::<Vec<_>>() {
        let e = pieces.end(p);
        for x in inst_of.iter_mut().take(e).skip(p) {
            *x = of[p].unwrap_or(0);
        }
    }
    // ---- Pass 2 (Algorithm 2), repeated until nothing merges ----
    let mut rounds = 0;
    if merge {
        loop {
            let (preds, succs) = interval_graph(&pieces, &inst_of, heads.len());
            let k = heads.len();
            let mut sup: Vec<Option<usize>> = vec![None; k];
            let mut sws: Vec<RegSet> = Vec::new();
            let mut shead: Vec<usize> = Vec::new();
            let mut work: VecDeque<usize> = VecDeque::new();
            let entry = inst_of[0];
            let start_super =
                |i: usize, sup: &mut Vec<Option<usize>>, sws: &mut Vec<RegSet>, shead: &mut Vec<usize>| {
                    sup[i] = Some(sws.len());
                    sws.push(ws[i]);
                    shead.push(heads[i]);
                };
            start_super(entry, &mut sup, &mut sws, &mut shead);
            work.push_back(entry);
            loop {
                while let Some(i) = work.pop_front() {
                    let ii = sup[i].unwrap_or(0);
                    loop {
                        let cand = (0..k).find(|&h| {
                            sup[h].is_none()
                                && !forced[heads[h]]
                                && !preds[h].is_empty()
                                && preds[h].iter().all(|&q| sup[q] == Some(ii))
                                && sws[ii].or(&ws[h]).regular_len() <= n
                        });
                        let Some(h) = cand else { break };
                        sup[h] = Some(ii);
                        let u = sws[ii].or(&ws[h]);
                        sws[ii] = u;
                    }
                    let members: Vec<usize> = (0..k).filter(|&q| sup[q] == Some(ii)).collect();
                    for q in members {
                        for &s in &succs[q] {
                            if sup[s].is_none() {
                                start_super(s, &mut sup, &mut sws, &mut shead);
                                work.push_back(s);
                            }
                        }
                    }
                }
                match (0..k).find(|&q| sup[q].is_none()) {
                    Some(q) => {
                        start_super(q, &mut sup, &mut sws, &mut shead);
                        work.push_back(q);
                    }
                    None => break,
                }
            }
            if sws.len() == k {
                break;
            }
            rounds += 1;
            for x in inst_of.iter_mut() {
                *x = sup[*x].unwrap_or(0);
            }
            ws = sws;
            heads = shead;
        }
    }
    finish(&pieces, &inst_of, &heads, &regs, n, pass1, rounds)
}

#[allow(clippy::too_many_arguments)]
fn traverse(
    p: usize,
    i: usize,
    pieces: &mut Pieces<'_>,
    regs: &[RegSet],
    n: usize,
    of: &mut [Option<usize>],
    ws: &mut Vec<RegSet>,
    heads: &mut Vec<usize>,
    work: &mut VecDeque<usize>,
) {
    let end = pieces.end(p);
    for k in p..end {
        let u = ws[i].or(&regs[k]);
        if u.regular_len() > n && k > p {
            // Cut: the rest of the piece becomes the head of a new interval.
            pieces.cut[k] = true;
            of[k] = Some(ws.len());
            ws.push(RegSet::EMPTY);
            heads.push(k);
            work.push_back(k);
            return;
        }
        // (k == p: the first instruction of a piece always fits a joining piece, which was
        // checked; only a head may be oversized.)
        ws[i] = u;
    }
}

/// Predecessor and successor intervals of each interval (self edges left out).
fn interval_graph(pieces: &Pieces<'_>, inst_of: &[usize], k: usize) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
    let mut preds = vec![Vec::new(); k];
    let mut succs = vec![Vec::new(); k];
    for p in pieces.starts() {
        let a = inst_of[p];
        for s in pieces.succs(p) {
            let b = inst_of[s];
            if a != b {
                if !succs[a].contains(&b) {
                    succs[a].push(b);
                }
                if !preds[b].contains(&a) {
                    preds[b].push(a);
                }
            }
        }
    }
    for v in preds.iter_mut().chain(succs.iter_mut()) {
        v.sort_unstable();
    }
    (preds, succs)
}

#[allow(clippy::too_many_arguments)]
fn finish(
    pieces: &Pieces<'_>,
    inst_of: &[usize],
    heads: &[usize],
    regs: &[RegSet],
    n: usize,
    pass1: usize,
    rounds: usize,
) -> Intervals {
    // Renumber intervals by head position.
    let mut order: Vec<usize> = (0..heads.len()).collect();
    order.sort_by_key(|&i| heads[i]);
    let mut new_id = vec![0usize; heads.len()];
    for (k, &i) in order.iter().enumerate() {
        new_id[i] = k;
    }
    let interval_of: Vec<usize> = inst_of.iter().map(|&i| new_id[i]).collect();
    let (preds, succs) = interval_graph(pieces, &interval_of, heads.len());
    let mut intervals: Vec<Interval> = order
        .iter()
        .map(|&i| Interval {
            head: heads[i],
            ranges: Vec::new(),
            working_set: RegSet::EMPTY,
            preds: Vec::new(),
            succs: Vec::new(),
        })
        .collect();
    for (k, iv) in intervals.iter_mut().enumerate() {
        iv.preds = preds[k].clone();
        iv.succs = succs[k].clone();
    }
    let mut i = 0;
    while i < interval_of.len() {
        let k = interval_of[i];
        let mut j = i + 1;
        while j < interval_of.len() && interval_of[j] == k {
            j += 1;
        }
        intervals[k].ranges.push((i, j));
        i = j;
    }
    for (x, &k) in interval_of.iter().enumerate() {
        let r = regs[x];
        intervals[k].working_set.union_with(&r);
    }
    let oversized = (0..intervals.len())
        .filter(|&k| intervals[k].working_set.regular_len() > n)
        .collect();
    Intervals {
        intervals,
        interval_of,
        pass1_intervals: pass1,
        pass2_rounds: rounds,
        oversized,
    }
}

/// The intervals whose heads are `heads` (instruction indices; the entry is always one):
/// each instruction belongs to the head it is reached from without passing another head.
/// This recovers the intervals of a kernel whose heads were marked when it was compiled
/// (the renumbered kernels carry them as labels, see [`super::LTRF_LABEL_PREFIX`]).
/// Instructions no head reaches form intervals of their own.
pub fn from_heads(cfg: &Cfg, fps: &[Footprint], heads: &[usize], n: usize) -> Intervals {
    let ninst = fps.len();
    let regs: Vec<RegSet> = fps.iter().map(regs_of).collect();
    let mut pieces = Pieces {
        cfg,
        cut: vec![false; ninst],
    };
    for b in &cfg.blocks {
        pieces.cut[b.start] = true;
    }
    let mut hs: Vec<usize> = heads.iter().copied().filter(|&h| h < ninst).collect();
    if ninst > 0 {
        hs.push(0);
    }
    hs.sort_unstable();
    hs.dedup();
    for &h in &hs {
        pieces.cut[h] = true;
    }
    let mut of: Vec<Option<usize>> = vec![None; ninst];
    let mut head_list: Vec<usize> = Vec::new();
    let mut is_head = vec![false; ninst];
    for &h in &hs {
        is_head[h] = true;
    }
    let mut pending: Vec<usize> = hs.clone();
    let mut k = 0;
    loop {
        while k < pending.len() {
            let h = pending[k];
            k += 1;
            if of[h].is_some() {
                continue;
            }
            let id = head_list.len();
            head_list.push(h);
            let mut stack = vec![h];
            of[h] = Some(id);
            while let Some(p) = stack.pop() {
                for s in pieces.succs(p) {
                    if of[s].is_none() && !is_head[s] {
                        of[s] = Some(id);
                        stack.push(s);
                    }
                }
            }
        }
        match pieces.starts().find(|&q| of[q].is_none()) {
            Some(q) => {
                is_head[q] = true;
                pending.push(q);
            }
            None => break,
        }
    }
    let mut inst_of = vec![0usize; ninst];
    for p in pieces.starts().collect::<Vec<_>>() {
        let e = pieces.end(p);
        for x in inst_of.iter_mut().take(e).skip(p) {
            *x = of[p].unwrap_or(0);
        }
    }
    let count = head_list.len();
    finish(&pieces, &inst_of, &head_list, &regs, n, count, 0)
}
