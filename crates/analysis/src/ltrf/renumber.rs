//! Register renumbering (LTRF paper §4.2): renames registers so that the working set of
//! every register-interval spreads over the main register file's banks, and a prefetch
//! reads its registers in parallel instead of one after another.
//!
//! The four phases of the paper's Figure 7:
//!
//! 1. **Register-live-ranges**: the webs of the regular registers ([`crate::reaching`]),
//!    grouped into *nodes* that must move together: the registers of a 64/128-bit operand
//!    (a pair or quad stays consecutive and aligned), and the live ranges of one register
//!    that appear in the same interval (so that renaming never makes a working set larger
//!    than it was). A node reading a value the kernel never wrote (the entry value) keeps
//!    its register.
//! 2. **Interval conflict graph** (ICG): an edge between two nodes that appear in a common
//!    interval.
//! 3. **Colouring** the ICG with one colour per bank: Chaitin's simplify/select order; each
//!    node takes the bank (for a wide node: the run of banks) that the fewest of its
//!    coloured neighbours use, ties to the least used bank overall (the balance the paper
//!    asks of the heuristic).
//! 4. **Renumbering**: each node gets a free register of its bank — one no interfering
//!    node holds (the interference of live ranges, computed from thread-level liveness) —
//!    within the registers the kernel already used (so occupancy does not change); when
//!    its bank has none, the register of the least-conflicting other bank (counted as a
//!    fallback). Every occurrence is rewritten; the kernel gets `.LTRF_<k>` labels at the
//!    interval heads.
//!
//! Refused (the kernel is returned as it was, with the reason): instructions whose register
//! footprint is not known exactly (texture, tensor-core, external calls), and indirect
//! branches whose targets are unknown in a listing without labels.

use super::intervals::{self, Intervals};
use super::{bank_conflicts, LtrfOptions, LTRF_LABEL_PREFIX};
use crate::cfg::{Cfg, CfgOptions};
use crate::footprint::{footprints, RegSlot};
use crate::liveness::{Liveness, Mode};
use crate::reaching::{DefUse, Webs};
use crate::regset::RegSet;
use sassim_isa::{ArchReg, Instruction, Kernel, OperandKind, RegFile};
use std::collections::{BTreeSet, HashSet};

/// What renumbering did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenumberReport {
    /// Live ranges (webs) of regular registers.
    pub live_ranges: usize,
    /// Nodes of the interval conflict graph (live ranges that move together).
    pub nodes: usize,
    pub icg_edges: usize,
    pub interference_edges: usize,
    /// Nodes that keep their register (entry values).
    pub fixed_nodes: usize,
    /// Nodes placed outside the bank their colour asked for.
    pub bank_fallbacks: usize,
    /// Nodes whose register changed.
    pub moved_nodes: usize,
    /// Registers the kernel uses (R0..R{budget-1}).
    pub budget: u32,
    /// Bank conflicts of each interval's prefetch before and after.
    pub conflicts_before: Vec<u32>,
    pub conflicts_after: Vec<u32>,
}

/// A renumbered kernel.
#[derive(Debug, Clone)]
pub struct Renumbered {
    pub kernel: Kernel,
    /// The intervals the renumbering was made for (marked by the labels).
    pub intervals: Intervals,
    pub report: RenumberReport,
}

struct Uf(Vec<usize>);
impl Uf {
    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.0[hi] = lo;
        }
    }
}

/// A node: live ranges that move together, at fixed offsets from the node's base.
#[derive(Debug, Clone)]
struct Node {
    /// Lowest original register of the members.
    base: u8,
    /// Distinct offsets (original register - base) of the members.
    offsets: Vec<u8>,
    /// The new base must equal the old one modulo this (a power of two).
    modulo: u32,
    fixed: bool,
}

/// Renumbers the regular registers of `kernel` (see the module documentation). Returns
/// why not when the kernel cannot be renumbered safely.
pub fn renumber(kernel: &Kernel, opts: &LtrfOptions) -> Result<Renumbered, String> {
    renumber_with(kernel, opts, &CfgOptions::default())
}

/// [`renumber`] with indirect-branch targets.
pub fn renumber_with(
    kernel: &Kernel,
    opts: &LtrfOptions,
    cfg_opts: &CfgOptions,
) -> Result<Renumbered, String> {
    let ins = &kernel.instructions;
    let fps = footprints(ins);
    if let Some((i, x)) = ins.iter().enumerate().find(|(i, _)| !fps[*i].exact) {
        return Err(format!(
            "{} at {:#x} has a register footprint sassim does not know exactly",
            x.opcode, ins[i].pc
        ));
    }
    let cfg = Cfg::build_with(kernel, cfg_opts);
    if cfg.indirect_unresolved {
        return Err("an indirect branch has unknown targets (a listing without labels)".into());
    }
    if !cfg.bad_targets.is_empty() {
        return Err(format!("branch targets outside the code: {:?}", cfg.bad_targets));
    }
    let n = opts.registers_per_interval.max(1) as usize;
    let banks = opts.banks.max(1);
    let ivs = if super::labelled_heads(kernel).is_empty() {
        intervals::form(&cfg, &fps, n, opts.merge)
    } else {
        intervals::from_heads(&cfg, &fps, &super::labelled_heads(kernel), n)
    };
    let du = DefUse::compute(&cfg, &fps);
    let webs = Webs::compute(&du);
    let nw = webs.webs.len();
    let is_r = |w: usize| matches!(webs.webs[w].reg, ArchReg::R(_));
    let reg_of = |w: usize| match webs.webs[w].reg {
        ArchReg::R(r) => r,
        _ => 0,
    };
    let def_web = |i: usize, r: ArchReg| du.def_at(i, r).map(|d| webs.web_of_def[d]);
    let use_web = |i: usize, r: ArchReg| du.use_at(i, r).map(|u| webs.web_of_use[u]);
    let mut budget = 0u32;
    for f in &fps {
        for r in f.uses.or(&f.defs).regular_indices() {
            budget = budget.max(r as u32 + 1);
        }
    }
    // ---- Phase 1: live ranges and nodes ----
    let mut uf = Uf((0..nw).collect());
    let mut align = vec![1u32; nw];
    for (i, f) in fps.iter().enumerate() {
        for op in f.operands.iter().filter(|o| o.file == RegFile::R) {
            let ws: Vec<usize> = op
                .regs()
                .filter_map(|r| if op.def { def_web(i, r) } else { use_web(i, r) })
                .filter(|&w| w != usize::MAX)
                .collect();
            let a = (op.width as u32).next_power_of_two();
            for &w in &ws {
                align[w] = align[w].max(a);
            }
            for pair in ws.windows(2) {
                uf.union(pair[0], pair[1]);
            }
        }
    }
    // Live ranges of one register in one interval move together.
    let webs_in = |i: usize| -> Vec<usize> {
        let f = &fps[i];
        let mut v: Vec<usize> = f
            .defs
            .regular()
            .iter()
            .filter_map(|r| def_web(i, r))
            .chain(f.uses.regular().iter().filter_map(|r| use_web(i, r)))
            .filter(|&w| w != usize::MAX)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    for iv in &ivs.intervals {
        let mut first: [usize; 256] = [usize::MAX; 256];
        for &(a, b) in &iv.ranges {
            for i in a..b {
                for w in webs_in(i) {
                    let r = reg_of(w) as usize;
                    if first[r] == usize::MAX {
                        first[r] = w;
                    } else {
                        uf.union(first[r], w);
                    }
                }
            }
        }
    }
    let mut node_of = vec![usize::MAX; nw];
    let mut nodes: Vec<Node> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for w in 0..nw {
        if !is_r(w) {
            continue;
        }
        let root = uf.find(w);
        if node_of[root] == usize::MAX {
            node_of[root] = nodes.len();
            nodes.push(Node {
                base: u8::MAX,
                offsets: Vec::new(),
                modulo: 1,
                fixed: false,
            });
            members.push(Vec::new());
        }
        let k = node_of[root];
        node_of[w] = k;
        members[k].push(w);
    }
    let keep = opts.keep_modulo.max(1).next_power_of_two();
    for (k, node) in nodes.iter_mut().enumerate() {
        node.base = members[k].iter().map(|&w| reg_of(w)).min().unwrap_or(0);
        let mut offs: Vec<u8> = members[k].iter().map(|&w| reg_of(w) - node.base).collect();
        offs.sort_unstable();
        offs.dedup();
        node.offsets = offs;
        node.modulo = members[k].iter().map(|&w| align[w]).max().unwrap_or(1).max(keep);
        node.fixed = members[k].iter().any(|&w| webs.webs[w].from_entry);
    }
    let nn = nodes.len();
    // ---- Interference between nodes (thread-level liveness) ----
    let live = Liveness::compute(&cfg, ins, &fps, Mode::Thread);
    let mut interf: HashSet<(usize, usize)> = HashSet::new();
    let add = |a: usize, b: usize, set: &mut HashSet<(usize, usize)>| {
        if a != b && a != usize::MAX && b != usize::MAX {
            set.insert((a.min(b), a.max(b)));
        }
    };
    let mut defs_of_reg: Vec<Vec<usize>> = vec![Vec::new(); 256];
    for (d, def) in du.defs.iter().enumerate() {
        if let ArchReg::R(r) = def.reg {
            defs_of_reg[r as usize].push(d);
        }
    }
    for b in 0..cfg.len() {
        let mut cur = [usize::MAX; 256];
        for r in live.live_in(b).regular_indices() {
            if let Some(&d) = defs_of_reg[r as usize].iter().find(|&&d| du.reaches_block(d, b)) {
                cur[r as usize] = webs.web_of_def[d];
            }
        }
        for i in cfg.blocks[b].start..cfg.blocks[b].end {
            let defs: Vec<usize> = fps[i]
                .defs
                .regular()
                .iter()
                .filter_map(|r| def_web(i, r))
                .collect();
            for r in fps[i].defs.regular().iter() {
                if let (ArchReg::R(x), Some(w)) = (r, def_web(i, r)) {
                    cur[x as usize] = w;
                }
            }
            let after = live.live_after(i);
            for &d in &defs {
                for r in after.regular_indices() {
                    let w = cur[r as usize];
                    if w != usize::MAX {
                        add(node_of[d], node_of[w], &mut interf);
                    }
                }
                for &d2 in &defs {
                    add(node_of[d], node_of[d2], &mut interf);
                }
            }
        }
    }
    let mut iadj: Vec<Vec<usize>> = vec![Vec::new(); nn];
    for &(a, b) in &interf {
        iadj[a].push(b);
        iadj[b].push(a);
    }
    // ---- Phase 2: the interval conflict graph ----
    let mut icg: BTreeSet<(usize, usize)> = BTreeSet::new();
    for iv in &ivs.intervals {
        let mut ns: Vec<usize> = Vec::new();
        for &(a, b) in &iv.ranges {
            for i in a..b {
                ns.extend(
                    webs_in(i)
                        .into_iter()
                        .map(|w| node_of[w])
                        .filter(|&x| x != usize::MAX),
                );
            }
        }
        ns.sort_unstable();
        ns.dedup();
        for x in 0..ns.len() {
            for y in x + 1..ns.len() {
                icg.insert((ns[x], ns[y]));
            }
        }
    }
    let mut cadj: Vec<Vec<usize>> = vec![Vec::new(); nn];
    for &(a, b) in &icg {
        cadj[a].push(b);
        cadj[b].push(a);
    }
    // ---- Phase 3: colour the ICG with one colour per bank ----
    let bank_of = |base: u32, off: u8| (base + off as u32) % banks;
    let mut colour: Vec<Option<u32>> = vec![None; nn];
    let mut usage = vec![0u64; banks as usize];
    for k in 0..nn {
        if nodes[k].fixed {
            colour[k] = Some(nodes[k].base as u32 % banks);
            for &o in &nodes[k].offsets {
                usage[bank_of(nodes[k].base as u32, o) as usize] += 1;
            }
        }
    }
    // Simplify: remove nodes of degree < banks first (lowest degree, then lowest id);
    // when none is left, the highest degree (it may end up conflicting).
    let mut removed = vec![false; nn];
    let mut degree: Vec<usize> = (0..nn).map(|k| cadj[k].len()).collect();
    let mut stack = Vec::with_capacity(nn);
    let free: Vec<usize> = (0..nn).filter(|&k| !nodes[k].fixed).collect();
    for _ in 0..free.len() {
        let low = free
            .iter()
            .copied()
            .filter(|&k| !removed[k] && degree[k] < banks as usize)
            .min_by_key(|&k| (degree[k], k));
        let pick = low.or_else(|| {
            free.iter()
                .copied()
                .filter(|&k| !removed[k])
                .max_by_key(|&k| (degree[k], usize::MAX - k))
        });
        let Some(k) = pick else { break };
        removed[k] = true;
        stack.push(k);
        for &m in &cadj[k] {
            degree[m] = degree[m].saturating_sub(1);
        }
    }
    let order: Vec<usize> = stack.iter().rev().copied().collect();
    for &k in &order {
        let node = &nodes[k];
        let mut best: Option<(u64, u64, u32)> = None;
        for c in 0..banks {
            // new base ≡ old base (mod modulo) fixes the bank modulo gcd(modulo, banks).
            let g = node.modulo.min(banks);
            if c % g != node.base as u32 % g {
                continue;
            }
            let mut clash = 0u64;
            for &m in &cadj[k] {
                if let Some(cm) = colour[m] {
                    for &o in &node.offsets {
                        for &om in &nodes[m].offsets {
                            if bank_of(c, o) == bank_of(cm, om) {
                                clash += 1;
                            }
                        }
                    }
                }
            }
            let load: u64 = node.offsets.iter().map(|&o| usage[bank_of(c, o) as usize]).sum();
            let key = (clash, load, c);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        let c = best.map_or(node.base as u32 % banks, |b| b.2);
        colour[k] = Some(c);
        for &o in &node.offsets {
            usage[bank_of(c, o) as usize] += 1;
        }
    }
    // ---- Phase 4: registers ----
    let mut newbase: Vec<Option<u32>> = vec![None; nn];
    let mut holders: Vec<Vec<usize>> = vec![Vec::new(); 256];
    let place = |k: usize, b: u32, newbase: &mut Vec<Option<u32>>, holders: &mut Vec<Vec<usize>>| {
        newbase[k] = Some(b);
        for &o in &nodes[k].offsets {
            holders[(b + o as u32) as usize].push(k);
        }
    };
    for k in 0..nn {
        if nodes[k].fixed {
            place(k, nodes[k].base as u32, &mut newbase, &mut holders);
        }
    }
    let mut fallbacks = 0;
    let interferes = |a: usize, b: usize| interf.contains(&(a.min(b), a.max(b)));
    for &k in &order {
        let node = &nodes[k];
        let span = node.offsets.last().copied().unwrap_or(0) as u32;
        let want = colour[k].unwrap_or(0);
        let mut best: Option<(bool, u64, u32)> = None;
        let mut b = node.base as u32 % node.modulo;
        while b + span < budget {
            let ok = node.offsets.iter().all(|&o| {
                let r = b + o as u32;
                r != 255 && holders[r as usize].iter().all(|&h| !interferes(h, k))
            });
            if ok {
                let in_bank = b % banks == want;
                let clash: u64 = cadj[k]
                    .iter()
                    .filter_map(|&m| newbase[m].map(|nb| (m, nb)))
                    .map(|(m, nb)| {
                        let mut c = 0;
                        for &o in &node.offsets {
                            for &om in &nodes[m].offsets {
                                if (b + o as u32) % banks == (nb + om as u32) % banks {
                                    c += 1;
                                }
                            }
                        }
                        c
                    })
                    .sum();
                let key = (!in_bank, clash, b);
                if best.is_none_or(|x| key < x) {
                    best = Some(key);
                }
            }
            b += node.modulo;
        }
        let Some((outside, _, b)) = best else {
            return Err(format!(
                "no free register for the live range of R{} within R0..R{}",
                node.base,
                budget.saturating_sub(1)
            ));
        };
        if outside {
            fallbacks += 1;
        }
        place(k, b, &mut newbase, &mut holders);
    }
    // ---- Rewrite ----
    let mut out = kernel.clone();
    for (i, f) in fps.iter().enumerate() {
        let mut changed = false;
        for op in f.operands.iter().filter(|o| o.file == RegFile::R) {
            let r = ArchReg::R(op.base);
            let w = if op.def { def_web(i, r) } else { use_web(i, r) };
            let Some(w) = w.filter(|&w| w != usize::MAX) else {
                continue;
            };
            let k = node_of[w];
            let Some(nb) = newbase[k] else { continue };
            let new = nb + (op.base - nodes[k].base) as u32;
            if new != op.base as u32 {
                set_reg(&mut out.instructions[i], op.slot, new as u8);
                changed = true;
            }
        }
        if changed {
            out.instructions[i].encoding = None;
        }
    }
    for (k, iv) in ivs.intervals.iter().enumerate() {
        out.labels
            .insert(format!("{LTRF_LABEL_PREFIX}{k}"), kernel.instructions[iv.head].pc);
    }
    // Check: no working set grew; report the conflicts.
    let nfps = footprints(&out.instructions);
    let mut before = Vec::new();
    let mut after = Vec::new();
    for (k, iv) in ivs.intervals.iter().enumerate() {
        let mut ws = RegSet::EMPTY;
        for &(a, b) in &iv.ranges {
            for f in &nfps[a..b] {
                ws.union_with(&f.uses.or(&f.defs).regular());
            }
        }
        if ws.regular_len() > iv.working_set.regular_len() {
            return Err(format!(
                "internal: the working set of interval {k} grew from {} to {} registers",
                iv.working_set.regular_len(),
                ws.regular_len()
            ));
        }
        before.push(bank_conflicts(&iv.working_set, banks));
        after.push(bank_conflicts(&ws, banks));
    }
    let moved = (0..nn)
        .filter(|&k| newbase[k] != Some(nodes[k].base as u32))
        .count();
    let report = RenumberReport {
        live_ranges: (0..nw).filter(|&w| is_r(w)).count(),
        nodes: nn,
        icg_edges: icg.len(),
        interference_edges: interf.len(),
        fixed_nodes: nodes.iter().filter(|x| x.fixed).count(),
        bank_fallbacks: fallbacks,
        moved_nodes: moved,
        budget,
        conflicts_before: before,
        conflicts_after: after,
    };
    // The intervals of the new kernel, with the new working sets.
    let ncfg = Cfg::build_with(&out, cfg_opts);
    let heads: Vec<usize> = ivs.intervals.iter().map(|iv| iv.head).collect();
    let nivs = intervals::from_heads(&ncfg, &nfps, &heads, n);
    Ok(Renumbered {
        kernel: out,
        intervals: nivs,
        report,
    })
}

/// Sets the register at `slot` of `ins` to `idx`.
fn set_reg(ins: &mut Instruction, slot: RegSlot, idx: u8) {
    match slot {
        RegSlot::Operand(i) => {
            if let Some(OperandKind::Reg(r)) = ins.operands.get_mut(i).map(|o| &mut o.kind) {
                r.idx = idx;
            }
        }
        RegSlot::AddrTerm(i, k) => match ins.operands.get_mut(i).map(|o| &mut o.kind) {
            Some(OperandKind::Mem(a)) => {
                if let Some(t) = a.regs.get_mut(k) {
                    t.reg.idx = idx;
                }
            }
            Some(OperandKind::Const(c)) => {
                if let Some(t) = c.addr.regs.get_mut(k) {
                    t.reg.idx = idx;
                }
            }
            _ => {}
        },
        RegSlot::Desc(_) | RegSlot::ConstBank(_) => {}
    }
}
