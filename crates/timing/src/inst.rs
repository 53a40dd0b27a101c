//! Static instructions pre-decoded once per kernel for the per-cycle path.

use crate::config::CoreConfig;
use sassim_isa::{ControlBits, Instruction, OperandKind, RegFile};

/// How the opcode table classifies an instruction (filled from `sassim-config`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstClass {
    /// Execution unit name, one of `CoreConfig::units`.
    pub unit: String,
    /// Fixed latency (true) or variable latency (dependence counters).
    pub fixed: bool,
    /// Latency in cycles (issue → consumer issue for fixed-latency instructions).
    pub latency: u32,
    /// Input-latch occupancy override; `None` = derived from the unit's lanes.
    pub latch_cycles: Option<u32>,
    /// Cycles a variable-latency unit of the sub-core needs between two instructions
    /// (at least the latch cycles); `None` = the latch cycles.
    pub initiation: Option<u32>,
    /// Cycles after issue at which sources are read, beyond fixed-latency consumers.
    pub read_delay: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemSpace {
    Global,
    Shared,
    Local,
    Const,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemKind {
    Load,
    Store,
    Atomic,
    /// LDGSTS: global → shared without the register file.
    Ldgsts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemOp {
    pub space: MemSpace,
    pub kind: MemKind,
    /// Bits per thread transferred (32, 64, 128).
    pub bits: u32,
    /// Address computed from uniform registers / immediates only.
    pub uniform_addr: bool,
    /// LDC with a register offset.
    pub indexed_const: bool,
}

/// Dependence counters of a warp: SB0–SB5 of the control bits, and Hopper's warpgroup-MMA
/// group scoreboard `gsb0` (written by an `HGMMA … gsb0` that ends a commit group, waited on by
/// `WARPGROUP.DEPBAR.LE gsb0, n`; docs/validation/hopper-isa-facts.md §3.2).
pub const DEP_COUNTERS: usize = 7;
/// The counter index of `gsb0`.
pub const GMMA_GROUP_SB: u8 = 6;

/// What kind of special handling the issue stage needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    None,
    ClockRead,
    Depbar { sb: u8, le: u8, ids: u8 },
    Errbar,
    SelfBranch,
    Exit,
    Barrier,
}

/// One source operand slot as the register file sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SrcSlot {
    /// First regular register, `None` for non-regular operands (uniform, predicate, constant…).
    pub reg: Option<u8>,
    pub width: u8,
    pub reuse: bool,
}

/// LTRF: the register-interval an instruction belongs to and what its prefetch moves
/// (filled by `sassim-gpu` from `sassim_analysis::ltrf` when the register file is LTRF).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LtrfSlot {
    pub interval: u32,
    /// Registers of the interval's working set (LTRF fetches them all).
    pub fetch: u16,
    /// The part of it live on entry (LTRF+ fetches only these).
    pub live: u16,
    /// Main-register-file bank conflicts of fetching the working set / the live part.
    pub conflicts: u16,
    pub conflicts_live: u16,
}

/// A constant-bank address fixed in the instruction (an immediate bank, no register index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConstAddr {
    pub bank: u32,
    /// Byte offset in the bank.
    pub offset: u64,
}

#[derive(Debug, Clone)]
pub struct StaticInst {
    pub pc: u64,
    pub op: String,
    pub ctrl: ControlBits,
    pub unit: usize,
    pub fixed: bool,
    pub latency: u32,
    pub latch_cycles: u32,
    /// A variable-latency unit of the sub-core accepts the next instruction this many cycles
    /// after this one started (≥ `latch_cycles`).
    pub initiation: u32,
    pub mem: Option<MemOp>,
    pub special: Special,
    /// Up to 4 source slots (reuse bit k = slot k).
    pub srcs: Vec<SrcSlot>,
    /// Constant operand of a fixed-latency instruction: looked up in the L0 fixed-latency
    /// constant cache at issue (M25 rule 13).
    pub const_operand: Option<ConstAddr>,
    /// LDC's constant address when it has no register index: looked up in the L0
    /// variable-latency constant cache (M25 rule 41).
    pub ldc_const: Option<ConstAddr>,
    /// Registers written (for scoreboards).
    pub writes: Vec<sassim_isa::ArchReg>,
    /// Registers read (for scoreboards).
    pub reads: Vec<sassim_isa::ArchReg>,
    /// Writes only uniform registers/predicates (the uniform datapath): memory
    /// instructions read them without the extra cycle of rule 24 (docs/model.md).
    pub uniform_dest: bool,
    /// Cycles after issue at which the sources are read beyond fixed-latency consumers
    /// (the opcode table's `read_delay`, e.g. sm_90 IMAD.WIDE's high addend word).
    pub read_delay: u32,
    /// Cycles a variable-latency tensor-core instruction occupies its sub-core's tensor unit
    /// once its operands are read (its initiation interval); 0 for every other instruction.
    pub unit_ii: u32,
    /// Bytes of shared-memory operands one warp of a warpgroup MMA reads (its 16 rows of A
    /// unless A is in registers, and a quarter of B); 0 for every other instruction.
    pub smem_operand_bytes: u32,
    /// Starts an asynchronous bulk copy (`UTMALDG`, `UTMASTG`): the executor describes it
    /// after issue ([`crate::exec::Executor::take_bulk`]).
    pub bulk: bool,
    /// LTRF register-interval (None unless the register file is LTRF).
    pub ltrf: Option<LtrfSlot>,
}

impl StaticInst {
    /// Reads its sources outside the in-order fixed-latency pipeline (memory and other
    /// variable-latency instructions): a later writer of a source must wait for the read.
    pub fn reads_outside_fixed_pipeline(&self) -> bool {
        !self.fixed || self.mem.is_some()
    }

    /// Whether the instruction reads its source registers one cycle after fixed-latency
    /// consumers would (M25 rule 24, Listing 3): the load/store instructions of the memory
    /// pipeline. LDC is not one of them: ptxas 13.5 places an indexed `LDC R6, c[0x3][R10]`
    /// four cycles after the `LOP3` producing R10 on sm_86 (`workloads/programs/consttab`),
    /// the fixed-latency distance (docs/model.md).
    pub fn reads_late(&self) -> bool {
        self.mem.is_some_and(|m| m.space != MemSpace::Const)
    }

    /// Number of regular-register reads of 32-bit words per bank (`banks` entries).
    pub fn bank_reads(&self, banks: u32) -> impl Iterator<Item = (usize, u32, u8)> + '_ {
        // (slot, bank, register) for every regular register the slots span.
        self.srcs.iter().enumerate().flat_map(move |(k, s)| {
            let r = s.reg;
            (0..s.width).filter_map(move |i| r.map(|r| (k, bank_of(r as u32 + i as u32, banks), r + i)))
        })
    }
}

/// The bank of register `r` among `banks` (r mod banks, M25 §5.3): a mask for the power-of-two
/// bank counts of every preset (a division per operand read was measurable on a loaded GPU).
#[inline]
pub fn bank_of(r: u32, banks: u32) -> u32 {
    if banks.is_power_of_two() {
        r & (banks - 1)
    } else {
        r % banks
    }
}

fn mem_op(ins: &Instruction) -> Option<MemOp> {
    let base = ins.opcode.base.as_str();
    let (space, kind) = match base {
        "LDG" | "LD" => (MemSpace::Global, MemKind::Load),
        "STG" | "ST" => (MemSpace::Global, MemKind::Store),
        "LDS" | "LDSM" => (MemSpace::Shared, MemKind::Load),
        "STS" => (MemSpace::Shared, MemKind::Store),
        "LDL" => (MemSpace::Local, MemKind::Load),
        "STL" => (MemSpace::Local, MemKind::Store),
        "LDC" => (MemSpace::Const, MemKind::Load),
        "ATOMG" | "ATOM" | "RED" => (MemSpace::Global, MemKind::Atomic),
        "ATOMS" => (MemSpace::Shared, MemKind::Atomic),
        "LDGSTS" => (MemSpace::Global, MemKind::Ldgsts),
        _ => return None,
    };
    let bits = if ins.opcode.has("128") {
        128
    } else if ins.opcode.has("64") {
        64
    } else {
        32
    };
    let mut uniform_addr = true;
    let mut indexed_const = false;
    for o in &ins.operands {
        match &o.kind {
            OperandKind::Mem(a) if !a.is_uniform() => uniform_addr = false,
            OperandKind::Const(c) if base == "LDC" && c.addr.regs.iter().any(|r| !r.reg.is_zero()) => {
                indexed_const = true;
                uniform_addr &= c.addr.is_uniform();
            }
            _ => {}
        }
    }
    Some(MemOp {
        space,
        kind,
        bits,
        uniform_addr,
        indexed_const,
    })
}

fn special(ins: &Instruction) -> Special {
    let base = ins.opcode.base.as_str();
    let reads_clock = ins.operands.iter().any(|o| {
        matches!(&o.kind, OperandKind::Special(s) if s.starts_with("SR_CLOCK") || s.starts_with("SR_GLOBALTIMER"))
    });
    if reads_clock {
        return Special::ClockRead;
    }
    match base {
        // WARPGROUP.DEPBAR.LE gsb0, n: at most n committed warpgroup-MMA groups in flight.
        "DEPBAR" | "WARPGROUP" if base == "DEPBAR" || ins.opcode.has("DEPBAR") => {
            let mut sb = 0u8;
            let mut le = 0u8;
            let mut ids = 0u8;
            for o in &ins.operands {
                match &o.kind {
                    OperandKind::Sb(s) => sb = *s,
                    OperandKind::Keyword(k) if k == "gsb0" => sb = GMMA_GROUP_SB,
                    OperandKind::Imm(i) => le = i.as_u32().min(63) as u8,
                    OperandKind::SbSet(v) => {
                        for s in v {
                            ids |= 1 << (*s as u32 % 6);
                        }
                    }
                    _ => {}
                }
            }
            Special::Depbar { sb, le, ids }
        }
        "ERRBAR" => Special::Errbar,
        "EXIT" => Special::Exit,
        "BAR" => Special::Barrier,
        "BRA" if ins.guard.is_none() && ins.target().and_then(|t| t.addr()) == Some(ins.pc) => {
            Special::SelfBranch
        }
        _ => Special::None,
    }
}

/// The control bits, with a warpgroup MMA that ends a commit group (`HGMMA … gsb0`) writing
/// the `gsb0` counter: it counts from issue to the MMA's completion (the hardware keeps the
/// general write scoreboard of HGMMA unused, field 7: hopper-isa-facts.md §3.1).
fn gmma_group_ctrl(ins: &Instruction) -> sassim_isa::ControlBits {
    let mut c = ins.ctrl;
    if matches!(ins.opcode.base.as_str(), "HGMMA" | "IGMMA" | "QGMMA" | "BGMMA")
        && sassim_isa::names_gmma_group(ins)
    {
        c.write_sb = Some(GMMA_GROUP_SB);
    }
    c
}

/// Shared-memory operand bytes of one warp's share of a warpgroup MMA: A (64 × K) is read by
/// rows, 16 per warp, unless it comes from registers; B (K × N) is read once for the
/// warpgroup, a quarter charged to each warp. K × element size is 32 bytes for every dense
/// type (PTX ISA wgmma shapes).
fn gmma_smem_bytes(ins: &Instruction) -> u32 {
    let Some(s) = sassim_isa::GmmaSpec::parse(&ins.opcode) else {
        return 0;
    };
    let row = s.k * s.a.bytes();
    let a = if sassim_isa::gmma_a_in_registers(ins) {
        0
    } else {
        16 * row
    };
    a + s.n * s.k * s.b.bytes() / 4
}

/// Pre-decode a kernel. `classify` maps an instruction to its opcode-table class.
pub fn decode_kernel(
    instructions: &[Instruction],
    cfg: &CoreConfig,
    classify: &mut dyn FnMut(&Instruction) -> InstClass,
) -> Vec<StaticInst> {
    instructions
        .iter()
        .map(|ins| {
            let class = classify(ins);
            let unit = cfg.units.iter().position(|u| u.name == class.unit).unwrap_or(0);
            let lanes = cfg.units.get(unit).map_or(cfg.warp_size, |u| u.lanes.max(1));
            let latch_cycles = class.latch_cycles.unwrap_or(cfg.warp_size.div_ceil(lanes).min(2));
            // A warpgroup MMA updates its accumulators in place when it completes (a
            // read-modify-write of the register file, hopper-isa-facts.md §3.2): the C operand
            // (the register after `gdesc`) is not read through the operand ports at issue.
            let gmma_c = matches!(ins.opcode.base.as_str(), "HGMMA" | "IGMMA" | "QGMMA" | "BGMMA")
                .then(|| {
                    ins.source_operands()
                        .iter()
                        .position(|o| matches!(o.kind, OperandKind::GmmaDesc(_)))
                        .map(|p| p + 1)
                })
                .flatten();
            let srcs = ins
                .source_operands()
                .iter()
                .enumerate()
                .map(|(k, o)| {
                    let reuse = o.reuse || (ins.ctrl.reuse >> k) & 1 == 1;
                    match &o.kind {
                        OperandKind::Reg(_) if Some(k) == gmma_c => SrcSlot {
                            reg: None,
                            width: 1,
                            reuse,
                        },
                        OperandKind::Reg(r) if r.file == RegFile::R && !r.is_zero() => SrcSlot {
                            reg: Some(r.idx),
                            width: r.width.max(1),
                            reuse,
                        },
                        OperandKind::Mem(a) => {
                            let r = a
                                .regs
                                .iter()
                                .find(|t| t.reg.file == RegFile::R && !t.reg.is_zero());
                            SrcSlot {
                                reg: r.map(|t| t.reg.idx),
                                width: r.map_or(1, |t| t.reg.width.max(1)),
                                reuse,
                            }
                        }
                        _ => SrcSlot {
                            reg: None,
                            width: 1,
                            reuse,
                        },
                    }
                })
                .collect();
            // The first constant operand with an immediate bank and no register index, of
            // an LDC (`ldc`) or of any other instruction.
            let static_const = |ldc: bool| {
                ins.operands.iter().find_map(|o| match &o.kind {
                    OperandKind::Const(c) if (ins.opcode.base == "LDC") == ldc => match c.bank {
                        sassim_isa::ConstBank::Imm(b) if c.addr.regs.iter().all(|r| r.reg.is_zero()) => {
                            Some(ConstAddr {
                                bank: b,
                                offset: c.addr.offset as u64,
                            })
                        }
                        _ => None,
                    },
                    _ => None,
                })
            };
            let const_operand = static_const(false);
            let ldc_const = static_const(true);
            StaticInst {
                pc: ins.pc,
                op: ins.opcode.to_string(),
                ctrl: gmma_group_ctrl(ins),
                unit,
                fixed: class.fixed,
                latency: class.latency.max(1),
                latch_cycles: latch_cycles.max(1),
                initiation: class.initiation.unwrap_or(latch_cycles).max(latch_cycles).max(1),
                mem: mem_op(ins),
                special: special(ins),
                srcs,
                const_operand,
                ldc_const,
                read_delay: class.read_delay,
                ltrf: None,
                unit_ii: if class.unit == "tensor" && !class.fixed {
                    latch_cycles.max(1)
                } else {
                    0
                },
                smem_operand_bytes: gmma_smem_bytes(ins),
                bulk: matches!(ins.opcode.base.as_str(), "UTMALDG" | "UTMASTG" | "UBLKCP"),
                uniform_dest: {
                    let w = sassim_isa::regs_written(ins);
                    !w.is_empty()
                        && w.iter()
                            .all(|r| matches!(r, sassim_isa::ArchReg::UR(_) | sassim_isa::ArchReg::UP(_)))
                },
                writes: sassim_isa::regs_written(ins),
                reads: sassim_isa::regs_read(ins),
            }
        })
        .collect()
}
