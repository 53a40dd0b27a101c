//! The registers one instruction reads and writes, as dataflow analyses need them.
//!
//! Built on `sassim_isa::dataflow` (destinations, operand widths), with what dataflow
//! analyses need beyond it:
//!
//! * **partial writes**: a write under a guard predicate (`@P0 MOV R5, …`), or to part of a
//!   register (a destination with a suffix such as `.H0`), leaves the old value in some
//!   lanes or bits. It is a definition that does not *kill* the register, and the old value
//!   is also *used* (it flows through), so liveness and reaching definitions stay sound.
//! * **widths the opcode rules of `sassim-isa` do not give**, as the functional engine
//!   executes them: the register of `BRX`/`JMX`/`RET`/`JMP` and of an external
//!   `CALL.ABS` holds a 64-bit address (a pair), `LEPC` writes a pair, `LDSM .x2/.x4` write 2 or 4
//!   registers, `FRND.F64` and `MATCH.U64` operate on pairs, `REDG` (like `RED`) writes no
//!   register and its data is a pair with `.64`.
//! * **external calls** (`CALL.ABS` without a target: device `printf`, `assert`, `malloc`)
//!   read the argument registers R4–R13 and write the result R4:R5 (the ABI ptxas uses,
//!   `crates/functional/src/exec/syscall.rs`); their register numbers are fixed by that ABI.
//! * whether the footprint is **exact** (every register the instruction may touch is
//!   listed): only for opcodes whose register semantics are known (the opcodes of the
//!   project's workloads and programs, listed in [`KNOWN_OPCODES`]). A transformation that
//!   renames registers must refuse code with an inexact footprint.

use crate::regset::RegSet;
use sassim_isa::operand::RZ;
use sassim_isa::{dest_count, ArchReg, ConstBank, Instruction, OperandKind, RegFile};

/// Where a register operand sits in the instruction, for rewriting it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegSlot {
    /// `operands[i]` is a register.
    Operand(usize),
    /// Address term `k` of the memory or constant operand `operands[i]`.
    AddrTerm(usize, usize),
    /// The `desc[URx]` descriptor of memory operand `operands[i]` (a uniform pair).
    Desc(usize),
    /// The `cx[URx]` bank register of constant operand `operands[i]`.
    ConstBank(usize),
}

/// One occurrence of a register (or an aligned run of consecutive registers) in an
/// instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegOperand {
    pub slot: RegSlot,
    pub file: RegFile,
    /// First register.
    pub base: u8,
    /// Consecutive registers (1, 2, 3 or 4).
    pub width: u8,
    /// A destination (written) rather than a source.
    pub def: bool,
}

impl RegOperand {
    /// The registers this occurrence spans.
    pub fn regs(&self) -> impl Iterator<Item = ArchReg> + '_ {
        let mk = match self.file {
            RegFile::R => ArchReg::R,
            RegFile::UR => ArchReg::UR,
        };
        let zero = match self.file {
            RegFile::R => RZ,
            RegFile::UR => sassim_isa::operand::URZ,
        };
        (0..self.width)
            .map(move |k| self.base.saturating_add(k))
            .filter(move |&r| r != zero && self.base != zero)
            .map(mk)
    }
}

/// The registers an instruction reads and writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Registers read: sources, address terms, the guard predicate, and the old value of
    /// every register written partially.
    pub uses: RegSet,
    /// Registers written.
    pub defs: RegSet,
    /// Registers written completely in every lane the instruction executes for (no guard,
    /// no part-register destination): a definition that ends the previous value's life.
    pub kills: RegSet,
    /// The regular and uniform register occurrences, in operand order.
    pub operands: Vec<RegOperand>,
    /// Registers whose numbers an ABI fixes (external calls).
    pub abi: RegSet,
    /// Whether every register the instruction may touch is listed.
    pub exact: bool,
}

/// Opcodes whose register footprint this module gives exactly (all the opcodes in the
/// project's workload and program listings, except texture and tensor-core instructions,
/// and the uniform and immediate-operand variants of the same operations).
pub const KNOWN_OPCODES: &[&str] = &[
    "ATOM",
    "ATOMG",
    "ATOMS",
    "BAR",
    "BMOV",
    "BPT",
    "BRA",
    "BREAK",
    "BREV",
    "BRX",
    "BSSY",
    "BSYNC",
    "CALL",
    "CCTL",
    "CGAERRBAR",
    "CS2R",
    "DADD",
    "DEPBAR",
    "DFMA",
    "DMNMX",
    "DMUL",
    "DSETP",
    "ERRBAR",
    "EXIT",
    "F2F",
    "F2FP",
    "F2I",
    "FADD",
    "FADD32I",
    "FCHK",
    "FFMA",
    "FFMA32I",
    "FLO",
    "FMNMX",
    "FMUL",
    "FMUL32I",
    "FRND",
    "FSEL",
    "FSETP",
    "HADD2",
    "HFMA2",
    "HMUL2",
    "I2F",
    "I2FP",
    "IABS",
    "IADD",
    "IADD3",
    "IADD32I",
    "IMAD",
    "IMAD32I",
    "IMNMX",
    "IMUL32I",
    "ISETP",
    "JMP",
    "JMX",
    "KILL",
    "LD",
    "LDC",
    "LDG",
    "LDL",
    "LDS",
    "LDSM",
    "LEA",
    "LEPC",
    "LOP",
    "LOP3",
    "LOP32I",
    "MATCH",
    "MEMBAR",
    "MOV",
    "MOV32I",
    "MUFU",
    "NANOSLEEP",
    "NOP",
    "P2R",
    "PLOP3",
    "PMTRIG",
    "POPC",
    "PRMT",
    "R2P",
    "R2UR",
    "RED",
    "REDG",
    "REDUX",
    "RET",
    "S2R",
    "S2UR",
    "SEL",
    "SGXT",
    "SHF",
    "SHFL",
    "ST",
    "STG",
    "STL",
    "STS",
    "UFLO",
    "UIADD3",
    "UIMAD",
    "UISETP",
    "ULDC",
    "ULEA",
    "ULOP3",
    "UMOV",
    "UPLOP3",
    "UPRMT",
    "USEL",
    "USHF",
    "VIADD",
    "VIADDMNMX",
    "VIMNMX",
    "VOTE",
    "VOTEU",
    "WARPSYNC",
    "YIELD",
];

/// Whether `ins` is an external call (`CALL.ABS` through a register, no target).
pub fn is_external_call(ins: &Instruction) -> bool {
    ins.opcode.base == "CALL" && ins.target().is_none()
}

/// Width of the register operand `operands[i]` where the engine's semantics differ from
/// (or go beyond) `sassim_isa::operand_width`.
fn corrected_width(ins: &Instruction, i: usize, isa_width: u8, is_def: bool) -> u8 {
    let base = ins.opcode.base.as_str();
    let has = |m: &str| ins.opcode.has(m);
    match base {
        // 64-bit code addresses (raw64 in crates/functional/src/exec/control.rs).
        "BRX" | "JMX" | "RET" | "JMP" => 2,
        "CALL" if ins.target().is_none() => 2,
        "LEPC" if is_def => 2,
        "LDSM" if is_def => {
            if has("4") {
                4
            } else if has("2") {
                2
            } else {
                1
            }
        }
        "FRND" if has("F64") => 2,
        "MATCH" if !is_def && has("U64") => 2,
        "REDG" if i + 1 == ins.operands.len() && (has("64") || has("F64") || has("U64") || has("S64")) => 2,
        _ => isa_width.max(1),
    }
}

/// Number of leading destination operands, with the corrections of this module.
fn dests(ins: &Instruction) -> usize {
    match ins.opcode.base.as_str() {
        "REDG" => 0,
        _ => dest_count(ins),
    }
}

/// The footprint of one instruction.
pub fn footprint(ins: &Instruction) -> Footprint {
    let mut f = Footprint {
        exact: KNOWN_OPCODES.contains(&ins.opcode.base.as_str()) && !is_external_call(ins),
        ..Footprint::default()
    };
    let guarded = ins.guard.is_some_and(|g| !g.reg.is_true() || g.neg);
    if let Some(g) = &ins.guard {
        if !g.reg.is_true() {
            f.uses.insert(pred_reg(g.reg.uniform, g.reg.idx));
        }
    }
    let nd = dests(ins).min(ins.operands.len());
    for (i, o) in ins.operands.iter().enumerate() {
        let def = i < nd;
        match &o.kind {
            OperandKind::Reg(r) => {
                if r.is_zero() {
                    continue;
                }
                let w = corrected_width(ins, i, r.width, def);
                let op = RegOperand {
                    slot: RegSlot::Operand(i),
                    file: r.file,
                    base: r.idx,
                    width: w,
                    def,
                };
                let partial = def && (guarded || !o.suffixes.is_empty());
                for reg in op.regs() {
                    if def {
                        f.defs.insert(reg);
                        if partial {
                            f.uses.insert(reg);
                        } else {
                            f.kills.insert(reg);
                        }
                    } else {
                        f.uses.insert(reg);
                    }
                }
                f.operands.push(op);
            }
            OperandKind::Pred(p) if !p.is_true() => {
                let reg = pred_reg(p.uniform, p.idx);
                if def {
                    f.defs.insert(reg);
                    if guarded {
                        f.uses.insert(reg);
                    } else {
                        f.kills.insert(reg);
                    }
                } else {
                    f.uses.insert(reg);
                }
            }
            OperandKind::BReg(b) => {
                let reg = ArchReg::B(*b);
                if def {
                    f.defs.insert(reg);
                    if guarded {
                        f.uses.insert(reg);
                    } else {
                        f.kills.insert(reg);
                    }
                } else {
                    f.uses.insert(reg);
                }
            }
            OperandKind::PredBits => {
                // P2R reads all predicates; R2P writes those its mask selects (a partial write).
                for k in 0..7 {
                    f.uses.insert(ArchReg::P(k));
                    if def {
                        f.defs.insert(ArchReg::P(k));
                    }
                }
            }
            OperandKind::Mem(a) => {
                if let Some(d) = a.desc {
                    push_use(&mut f, RegSlot::Desc(i), RegFile::UR, d, 2);
                }
                for (k, t) in a.regs.iter().enumerate() {
                    if !t.reg.is_zero() {
                        push_use(
                            &mut f,
                            RegSlot::AddrTerm(i, k),
                            t.reg.file,
                            t.reg.idx,
                            t.reg.width.max(1),
                        );
                    }
                }
            }
            OperandKind::Const(c) => {
                if let ConstBank::UReg(u) = c.bank {
                    push_use(&mut f, RegSlot::ConstBank(i), RegFile::UR, u, 1);
                }
                for (k, t) in c.addr.regs.iter().enumerate() {
                    if !t.reg.is_zero() {
                        push_use(&mut f, RegSlot::AddrTerm(i, k), t.reg.file, t.reg.idx, 1);
                    }
                }
            }
            _ => {}
        }
    }
    if is_external_call(ins) {
        // Arguments R4:R5, R6:R7, R8, R10:R11, R12 (read as R4..R13); result in R4:R5.
        for r in 4..=13u8 {
            f.uses.insert(ArchReg::R(r));
            f.abi.insert(ArchReg::R(r));
        }
        for r in [4u8, 5] {
            f.defs.insert(ArchReg::R(r));
        }
    }
    f
}

fn pred_reg(uniform: bool, idx: u8) -> ArchReg {
    if uniform {
        ArchReg::UP(idx)
    } else {
        ArchReg::P(idx)
    }
}

fn push_use(f: &mut Footprint, slot: RegSlot, file: RegFile, base: u8, width: u8) {
    let op = RegOperand {
        slot,
        file,
        base,
        width,
        def: false,
    };
    for reg in op.regs() {
        f.uses.insert(reg);
    }
    f.operands.push(op);
}

/// The footprints of every instruction of a kernel.
pub fn footprints(instructions: &[Instruction]) -> Vec<Footprint> {
    instructions.iter().map(footprint).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kernels::kernel;

    fn one(text: &str) -> Instruction {
        kernel(text).instructions[0].clone()
    }

    #[test]
    fn guarded_write_uses_the_old_value() {
        let f = footprint(&one("@P0 MOV R5, R6 ;"));
        assert_eq!(f.defs.to_string(), "{R5}");
        assert!(f.kills.is_empty());
        assert_eq!(f.uses.to_string(), "{R5, R6, P0}");
        let f = footprint(&one("MOV R5, R6 ;"));
        assert_eq!(f.kills.to_string(), "{R5}");
        assert_eq!(f.uses.to_string(), "{R6}");
    }

    #[test]
    fn wide_operands_and_corrections() {
        let f = footprint(&one("IMAD.WIDE R2, R5, 0x4, R2 ;"));
        assert_eq!(f.kills.to_string(), "{R2, R3}");
        assert_eq!(f.uses.to_string(), "{R2, R3, R5}");
        let f = footprint(&one("RET.REL.NODEC R4 0x0 ;"));
        assert_eq!(
            f.uses.to_string(),
            "{R4, R5}",
            "RET reads a 64-bit return address"
        );
        let f = footprint(&one("LDG.E.128 R8, [R2.64] ;"));
        assert_eq!(f.kills.to_string(), "{R8, R9, R10, R11}");
        assert_eq!(f.uses.to_string(), "{R2, R3}");
        let f = footprint(&one("STG.E.64 [R2.64+0x8], R6 ;"));
        assert_eq!(f.uses.to_string(), "{R2, R3, R6, R7}");
        assert!(f.defs.is_empty());
        let f = footprint(&one("ISETP.GE.AND P0, PT, R0, 0x10, PT ;"));
        assert_eq!(f.kills.to_string(), "{P0}");
        assert!(f.exact);
        let f = footprint(&one("TEX.LL R0, R2, R4, 0x0, 2D ;"));
        assert!(!f.exact);
    }
}
