//! Reaching definitions, def-use chains and webs.
//!
//! * A **definition** is a write of one register by one instruction, or the value a
//!   register holds when the kernel starts (an *entry* definition, for every register the
//!   code reads). A write that does not kill the register (guarded, part-register) lets the
//!   earlier definitions reach on.
//! * A **use** is a read of one register by one instruction (including the old value of a
//!   partially written register).
//! * **Def-use chains**: the definitions that reach each use, and the uses each
//!   definition reaches.
//! * **Webs** (live ranges): the classes of definitions and uses connected by def-use
//!   chains. Renaming every occurrence of one web to another register, consistently,
//!   preserves the program's meaning, provided the new register is not live elsewhere at
//!   the same time (interference).

use crate::cfg::Cfg;
use crate::footprint::Footprint;
use sassim_isa::ArchReg;
use std::collections::HashMap;

pub type DefId = usize;
pub type UseId = usize;

/// Number of distinct registers [`reg_index`] maps.
pub const NUM_REGS: usize = 352;

/// A dense index of a register: R 0–255, UR 256–319, P 320–327, UP 328–335, B 336–351.
pub fn reg_index(r: ArchReg) -> usize {
    match r {
        ArchReg::R(i) => i as usize,
        ArchReg::UR(i) => 256 + (i as usize & 63),
        ArchReg::P(i) => 320 + (i as usize & 7),
        ArchReg::UP(i) => 328 + (i as usize & 7),
        ArchReg::B(i) => 336 + (i as usize & 15),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Def {
    /// The writing instruction; `None` for the value on entry to the kernel.
    pub inst: Option<usize>,
    pub reg: ArchReg,
    /// The write replaces the value in every lane (see `Footprint::kills`).
    pub kills: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Use {
    pub inst: usize,
    pub reg: ArchReg,
}

/// Reaching definitions with def-use chains.
#[derive(Debug, Clone)]
pub struct DefUse {
    pub defs: Vec<Def>,
    pub uses: Vec<Use>,
    pub defs_of_use: Vec<Vec<DefId>>,
    pub uses_of_def: Vec<Vec<UseId>>,
    def_at: HashMap<(usize, ArchReg), DefId>,
    use_at: HashMap<(usize, ArchReg), UseId>,
    entry_def: HashMap<ArchReg, DefId>,
    /// Definitions reaching the start of each block (bit set over `defs`).
    block_in: Vec<Vec<u64>>,
}

fn set_bit(v: &mut [u64], i: usize) {
    v[i / 64] |= 1 << (i % 64);
}
fn get_bit(v: &[u64], i: usize) -> bool {
    v[i / 64] >> (i % 64) & 1 == 1
}

impl DefUse {
    pub fn compute(cfg: &Cfg, fps: &[Footprint]) -> DefUse {
        let mut defs = Vec::new();
        let mut def_at = HashMap::new();
        let mut defs_of_reg: Vec<Vec<DefId>> = vec![Vec::new(); NUM_REGS];
        // Entry definitions: every register read somewhere.
        let mut read = crate::regset::RegSet::EMPTY;
        for f in fps {
            read.union_with(&f.uses);
        }
        let mut entry_def = HashMap::new();
        for r in read.iter() {
            let d = defs.len();
            defs.push(Def {
                inst: None,
                reg: r,
                kills: true,
            });
            defs_of_reg[reg_index(r)].push(d);
            entry_def.insert(r, d);
        }
        for (i, f) in fps.iter().enumerate() {
            for r in f.defs.iter() {
                let d = defs.len();
                defs.push(Def {
                    inst: Some(i),
                    reg: r,
                    kills: f.kills.contains(r),
                });
                defs_of_reg[reg_index(r)].push(d);
                def_at.insert((i, r), d);
            }
        }
        let nd = defs.len();
        let words = nd.div_ceil(64).max(1);
        let nb = cfg.len();
        // gen / kill per block.
        let mut gen = vec![vec![0u64; words]; nb];
        let mut kill = vec![vec![0u64; words]; nb];
        for b in 0..nb {
            let blk = &cfg.blocks[b];
            for i in blk.start..blk.end {
                for r in fps[i].defs.iter() {
                    let d = def_at[&(i, r)];
                    if defs[d].kills {
                        for &o in &defs_of_reg[reg_index(r)] {
                            gen[b][o / 64] &= !(1 << (o % 64));
                            set_bit(&mut kill[b], o);
                        }
                    }
                    set_bit(&mut gen[b], d);
                }
            }
            for w in 0..words {
                kill[b][w] &= !gen[b][w];
            }
        }
        let mut block_in = vec![vec![0u64; words]; nb];
        let mut out = vec![vec![0u64; words]; nb];
        let rpo = cfg.reverse_postorder();
        let mut order = rpo.clone();
        let mut seen = vec![false; nb];
        for &b in &rpo {
            seen[b] = true;
        }
        order.extend((0..nb).filter(|&b| !seen[b]));
        let mut entry_bits = vec![0u64; words];
        for &d in entry_def.values() {
            set_bit(&mut entry_bits, d);
        }
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &order {
                let mut inn = if b == 0 {
                    entry_bits.clone()
                } else {
                    vec![0u64; words]
                };
                for &p in &cfg.blocks[b].preds {
                    for w in 0..words {
                        inn[w] |= out[p][w];
                    }
                }
                let mut o = vec![0u64; words];
                for w in 0..words {
                    o[w] = gen[b][w] | (inn[w] & !kill[b][w]);
                }
                block_in[b] = inn;
                if o != out[b] {
                    out[b] = o;
                    changed = true;
                }
            }
        }
        // Walk every block to link uses to their reaching definitions.
        let mut uses = Vec::new();
        let mut use_at = HashMap::new();
        let mut defs_of_use: Vec<Vec<DefId>> = Vec::new();
        let mut uses_of_def: Vec<Vec<UseId>> = vec![Vec::new(); nd];
        let mut cur: Vec<Vec<DefId>> = vec![Vec::new(); NUM_REGS];
        for b in 0..nb {
            for c in cur.iter_mut() {
                c.clear();
            }
            for d in 0..nd {
                if get_bit(&block_in[b], d) {
                    cur[reg_index(defs[d].reg)].push(d);
                }
            }
            let blk = &cfg.blocks[b];
            for i in blk.start..blk.end {
                for r in fps[i].uses.iter() {
                    let u = uses.len();
                    uses.push(Use { inst: i, reg: r });
                    use_at.insert((i, r), u);
                    let ds = cur[reg_index(r)].clone();
                    for &d in &ds {
                        uses_of_def[d].push(u);
                    }
                    defs_of_use.push(ds);
                }
                for r in fps[i].defs.iter() {
                    let d = def_at[&(i, r)];
                    let c = &mut cur[reg_index(r)];
                    if defs[d].kills {
                        c.clear();
                    }
                    c.push(d);
                }
            }
        }
        DefUse {
            defs,
            uses,
            defs_of_use,
            uses_of_def,
            def_at,
            use_at,
            entry_def,
            block_in,
        }
    }

    /// The definition of `reg` by instruction `inst`.
    pub fn def_at(&self, inst: usize, reg: ArchReg) -> Option<DefId> {
        self.def_at.get(&(inst, reg)).copied()
    }
    /// The use of `reg` by instruction `inst`.
    pub fn use_at(&self, inst: usize, reg: ArchReg) -> Option<UseId> {
        self.use_at.get(&(inst, reg)).copied()
    }
    /// The entry definition of `reg` (present when the code reads `reg`).
    pub fn entry_def(&self, reg: ArchReg) -> Option<DefId> {
        self.entry_def.get(&reg).copied()
    }
    /// Whether definition `d` reaches the start of block `b`.
    pub fn reaches_block(&self, d: DefId, b: usize) -> bool {
        get_bit(&self.block_in[b], d)
    }
    /// Uses that the kernel's entry value reaches (reads of registers nothing wrote).
    pub fn upward_exposed(&self) -> Vec<UseId> {
        let mut v: Vec<UseId> = self
            .entry_def
            .values()
            .flat_map(|&d| self.uses_of_def[d].iter().copied())
            .collect();
        v.sort_unstable();
        v
    }
}

/// One web: a register's definitions and uses connected by def-use chains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Web {
    pub reg: ArchReg,
    pub defs: Vec<DefId>,
    pub uses: Vec<UseId>,
    /// The entry value is one of its definitions (a read of a register nothing wrote).
    pub from_entry: bool,
}

#[derive(Debug, Clone)]
pub struct Webs {
    pub webs: Vec<Web>,
    pub web_of_def: Vec<usize>,
    pub web_of_use: Vec<usize>,
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

impl Webs {
    /// The webs of `du`. A non-killing write joins the web of the value it partly keeps.
    /// Entry definitions that reach no use form no web.
    pub fn compute(du: &DefUse) -> Webs {
        let nd = du.defs.len();
        let mut parent: Vec<usize> = (0..nd).collect();
        let union = |p: &mut Vec<usize>, a: usize, b: usize| {
            let (ra, rb) = (find(p, a), find(p, b));
            if ra != rb {
                let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
                p[hi] = lo;
            }
        };
        for ds in &du.defs_of_use {
            for w in ds.windows(2) {
                union(&mut parent, w[0], w[1]);
            }
        }
        for (d, def) in du.defs.iter().enumerate() {
            if let (Some(i), false) = (def.inst, def.kills) {
                if let Some(u) = du.use_at(i, def.reg) {
                    for &o in &du.defs_of_use[u] {
                        union(&mut parent, d, o);
                    }
                }
            }
        }
        let mut web_id: HashMap<usize, usize> = HashMap::new();
        let mut webs: Vec<Web> = Vec::new();
        let mut web_of_def = vec![usize::MAX; nd];
        for d in 0..nd {
            if du.defs[d].inst.is_none() && du.uses_of_def[d].is_empty() {
                continue;
            }
            let root = find(&mut parent, d);
            let w = *web_id.entry(root).or_insert_with(|| {
                webs.push(Web {
                    reg: du.defs[d].reg,
                    defs: Vec::new(),
                    uses: Vec::new(),
                    from_entry: false,
                });
                webs.len() - 1
            });
            webs[w].defs.push(d);
            webs[w].from_entry |= du.defs[d].inst.is_none();
            web_of_def[d] = w;
        }
        let mut web_of_use = vec![usize::MAX; du.uses.len()];
        for (u, ds) in du.defs_of_use.iter().enumerate() {
            if let Some(&d) = ds.first() {
                let w = web_of_def[d];
                web_of_use[u] = w;
                if w != usize::MAX {
                    webs[w].uses.push(u);
                }
            }
        }
        Webs {
            webs,
            web_of_def,
            web_of_use,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::footprint::footprints;
    use crate::test_kernels::kernel;

    #[test]
    fn chains_and_webs() {
        let k = kernel(
            "MOV R1, 0x1 ;\n\
             @P0 BRA skip ;\n\
             MOV R1, 0x2 ;\n\
             skip: IADD3 R2, R1, 0x1, RZ ;\n\
             MOV R1, 0x7 ;\n\
             @P1 MOV R1, 0x8 ;\n\
             STG.E [R4.64], R1 ;\n\
             EXIT ;",
        );
        let g = Cfg::build(&k);
        let f = footprints(&k.instructions);
        let du = DefUse::compute(&g, &f);
        let r1 = ArchReg::R(1);
        let u3 = du.use_at(3, r1).expect("use");
        let mut ds: Vec<Option<usize>> = du.defs_of_use[u3].iter().map(|&d| du.defs[d].inst).collect();
        ds.sort();
        assert_eq!(ds, vec![Some(0), Some(2)]);
        let u6 = du.use_at(6, r1).expect("use");
        let mut ds: Vec<Option<usize>> = du.defs_of_use[u6].iter().map(|&d| du.defs[d].inst).collect();
        ds.sort();
        assert_eq!(
            ds,
            vec![Some(4), Some(5)],
            "the guarded write keeps the MOV at 4 alive"
        );
        let w = Webs::compute(&du);
        let web = |i: usize| w.web_of_def[du.def_at(i, r1).expect("def")];
        assert_eq!(web(0), web(2));
        assert_eq!(web(4), web(5));
        assert_ne!(web(0), web(4));
        // R4/R5 and P0/P1 are read without a write: entry webs.
        let r4 = w.web_of_use[du.use_at(6, ArchReg::R(4)).expect("use")];
        assert!(w.webs[r4].from_entry);
    }
}
