//! Which operands an instruction writes and reads, and how many registers each spans.
//!
//! SASS syntax lists destinations first, but their number depends on the opcode
//! (`ISETP P0, PT, ...` writes two predicates, `IADD3 R0, P0, ...` a register and a
//! carry). These rules are shared by the functional engine and the timing model.

// Per-opcode rules read best as one `match` arm per opcode with its own condition.
#![allow(clippy::collapsible_match)]

use crate::instruction::Instruction;
use crate::operand::{OperandKind, RegFile, PT};
use serde::{Deserialize, Serialize};

/// Opcodes that write no operand.
const NO_DEST: &[&str] = &[
    "STG",
    "STS",
    "STL",
    "ST",
    "RED",
    "LDGSTS",
    "BRA",
    "BRX",
    "JMP",
    "JMX",
    "EXIT",
    "RET",
    "CALL",
    "BSYNC",
    "BREAK",
    "WARPSYNC",
    "YIELD",
    "NOP",
    "DEPBAR",
    "ERRBAR",
    "MEMBAR",
    "CCTL",
    "LDGDEPBAR",
    "BPT",
    "KILL",
    "NANOSLEEP",
    "FENCE",
    "ARRIVES",
    "UCGABAR_ARV",
    "UCGABAR_WAIT",
    "REDUX_NONE",
];

/// Opcodes whose first two operands are predicate destinations.
const TWO_PRED_DEST: &[&str] = &[
    "ISETP", "FSETP", "DSETP", "HSETP2", "PSETP", "UISETP", "UPSETP", "PLOP3", "UPLOP3", "FCHK2",
];

/// Opcodes that may write carry-out predicates right after the first destination.
const CARRY_OUT: &[&str] = &[
    "IADD3", "UIADD3", "LEA", "ULEA", "IMAD", "UIMAD", "IADD", "IADD32I",
];

/// Number of leading operands that are destinations.
pub fn dest_count(ins: &Instruction) -> usize {
    let ops = &ins.operands;
    if ops.is_empty() {
        return 0;
    }
    let base = ins.opcode.base.as_str();
    let is_pred = |i: usize| matches!(ops.get(i).map(|o| &o.kind), Some(OperandKind::Pred(_)));
    let is_reg = |i: usize| matches!(ops.get(i).map(|o| &o.kind), Some(OperandKind::Reg(_)));
    if NO_DEST.contains(&base) {
        return 0;
    }
    if TWO_PRED_DEST.contains(&base) {
        return 2.min(ops.len());
    }
    match base {
        // BAR.SYNC 0x0 writes nothing; BAR.RED.POPC R0, ... writes R0.
        "BAR" => usize::from(is_reg(0)),
        // LOP3.LUT P0, R4, ... writes the predicate and the register.
        "LOP3" | "ULOP3" => 1 + usize::from(is_pred(0) && ops.len() > 2),
        // SHFL.DOWN PT, R3, R2, 0x1, 0x1f: predicate and register.
        "SHFL" => 1 + usize::from(is_pred(0)),
        // VOTE.ANY R0, PT, P1 (register and predicate) or VOTE.ALL P0, P1? / VOTEU likewise.
        "VOTE" | "VOTEU" => 1 + usize::from(ops.len() >= 3 && is_pred(1)),
        // ATOMG.E.ADD.STRONG.GPU PT, R2, [R2.64], R5; MATCH.ALL P0, R0, R2.
        "ATOMG" | "ATOM" | "ATOMS" | "MATCH" => 1 + usize::from(is_pred(0)),
        // ELECT P2, URZ, PT: the leader predicate and a uniform register.
        "ELECT" => 2.min(ops.len()),
        // Hopper's TMA and warpgroup bookkeeping write no operand (`UTMALDG.2D [UR8], [UR6]`,
        // `WARPGROUP.DEPBAR.LE gsb0, 0x0`).
        "UTMALDG" | "UTMASTG" | "UTMAPF" | "UTMACCTL" | "UTMACMDFLUSH" | "UBLKCP" | "WARPGROUP" => 0,
        _ if CARRY_OUT.contains(&base) => {
            let mut d = 1;
            while d < 3 && is_pred(d) && ops.len() > d + 1 {
                d += 1;
            }
            d
        }
        _ => 1,
    }
}

fn size_regs(mods: &[String]) -> u8 {
    for m in mods {
        match m.as_str() {
            "64" => return 2,
            "128" => return 4,
            _ => {}
        }
    }
    1
}

/// Number of registers spanned by operand `i` (1 for non-register operands).
pub fn operand_width(ins: &Instruction, i: usize) -> u8 {
    let base = ins.opcode.base.as_str();
    let mods = &ins.opcode.mods;
    let nd = dest_count(ins);
    let has = |m: &str| ins.opcode.has(m);
    let is_dest = i < nd;
    let src_slot = i.saturating_sub(nd);
    match base {
        "LDG" | "LDS" | "LDL" | "LD" | "LDC" | "ULDC" | "ULDC64" if is_dest => size_regs(mods),
        "STG" | "STS" | "STL" | "ST" => {
            // The data operand follows the address.
            if i + 1 == ins.operands.len() {
                size_regs(mods)
            } else {
                1
            }
        }
        "ATOMG" | "ATOM" | "ATOMS" | "RED" => {
            let w = if has("64") || has("F64") || has("U64") || has("S64") {
                2
            } else {
                1
            };
            match ins.operands.get(i).map(|o| &o.kind) {
                Some(OperandKind::Reg(_)) => w,
                _ => 1,
            }
        }
        "IMAD" | "UIMAD" if has("WIDE") => {
            if (is_dest && i == 0) || (!is_dest && src_slot == 2) {
                2
            } else {
                1
            }
        }
        "DADD" | "DMUL" | "DFMA" | "DMNMX" | "DSETP" => {
            if base == "DSETP" && is_dest {
                1
            } else {
                2
            }
        }
        "MOV" | "UMOV" | "CS2R" | "SEL" | "IMNMX" if has("64") => 2,
        "CS2R" if !has("32") => 2,
        // RET.REL.NODEC R2 and BRX/JMX R4: the target is a 64-bit register pair (R2, R3),
        // as the functional engine reads it.
        "RET" | "BRX" | "JMX" => 2,
        "F2F" | "F2I" | "I2F" | "F2FP" => {
            // Modifiers name destination type then source type (F2F.F64.F32).
            let ty: Vec<&str> = mods
                .iter()
                .map(String::as_str)
                .filter(|m| {
                    matches!(
                        *m,
                        "F64"
                            | "F32"
                            | "F16"
                            | "BF16"
                            | "S64"
                            | "U64"
                            | "S32"
                            | "U32"
                            | "S16"
                            | "U16"
                            | "S8"
                            | "U8"
                    )
                })
                .collect();
            let wide = |t: &str| matches!(t, "F64" | "S64" | "U64");
            let (dst_ty, src_ty) = match (base, ty.as_slice()) {
                (_, [d, s, ..]) => (*d, *s),
                ("F2I", [d]) => (*d, "F32"),
                ("I2F", [d]) => (*d, "S32"),
                ("F2F", [d]) => (*d, "F32"),
                _ => ("F32", "F32"),
            };
            let ty = if is_dest { dst_ty } else { src_ty };
            if matches!(ins.operands.get(i).map(|o| &o.kind), Some(OperandKind::Reg(_))) && wide(ty) {
                2
            } else {
                1
            }
        }
        "HMMA" | "IMMA" | "DMMA" => match crate::mma::MmaSpec::parse(&ins.opcode) {
            // D, A, B, C [, sparsity metadata, selector]: widths of the PTX fragments.
            Some(s) => match (is_dest, src_slot) {
                (true, _) | (false, 2) => s.c_regs(),
                (false, 0) => s.a_regs(),
                (false, 1) => s.b_regs(),
                _ => 1,
            },
            None if base == "DMMA" => 2,
            None => 1,
        },
        // SYNCS.EXCH.64 URZ, [UR6], UR4 (64-bit value); SYNCS.ARRIVE.TRANS64 R8, [UR6], RZ
        // returns the 64-bit barrier state.
        "SYNCS" if has("EXCH") || (has("ARRIVE") && is_dest) => 2,
        "LDSM" if is_dest => crate::mma::ldsm_matrices(&ins.opcode).map_or(1, |(n, _)| n),
        "HGMMA" | "IGMMA" | "QGMMA" => match crate::mma::GmmaSpec::parse(&ins.opcode) {
            // D, [A registers,] gdesc, C [, scale-d predicate] [, gsb0].
            Some(s) => {
                let rs = crate::mma::gmma_a_in_registers(ins);
                match (is_dest, src_slot, rs) {
                    (true, _, _) | (false, 1, false) | (false, 2, true) => s.d_regs(),
                    (false, 0, true) => s.a_regs(),
                    _ => 1,
                }
            }
            None => 1,
        },
        "BMMA" => {
            // D, A, B, C: 1-bit inputs, S32 accumulator (m8n8k128: 1, 1, 2 registers).
            match (is_dest, src_slot) {
                (true, _) | (false, 2) => 2,
                _ => 1,
            }
        }
        _ => 1,
    }
}

/// Fill in [`crate::operand::Reg::width`] for every register operand (also inside addresses).
pub fn infer_widths(ins: &mut Instruction) {
    let extended = ins.opcode.has("E")
        && matches!(
            ins.opcode.base.as_str(),
            "LDG" | "STG" | "LD" | "ST" | "ATOMG" | "ATOM" | "RED" | "REDG" | "LDGSTS"
        );
    for i in 0..ins.operands.len() {
        let w = operand_width(ins, i);
        match &mut ins.operands[i].kind {
            OperandKind::Reg(r) => r.width = if r.is_zero() { 1 } else { w },
            OperandKind::Mem(a) if tma_block(ins_base(&ins.opcode), &ins.opcode, i).is_some() => {
                // UTMALDG.2D [UR8], [UR6]: a block of uniform registers (destination, mbarrier,
                // coordinates) and the 64-bit tensor-map address.
                let w = tma_block(ins_base(&ins.opcode), &ins.opcode, i).unwrap_or(1);
                for t in a.regs.iter_mut() {
                    t.reg.width = if t.reg.is_zero() { 1 } else { w };
                }
            }
            OperandKind::Mem(a) => {
                // With `.E` a global address register is a 64-bit pair even when written
                // without `.64` (the MICRO'25 listings write `LDG.E R36, [R40]`).
                let e64 = extended && a.desc.is_none();
                for (k, t) in a.regs.iter_mut().enumerate() {
                    let pair = t.wide || (e64 && k == 0 && t.reg.file == RegFile::R);
                    t.reg.width = if pair && !t.reg.is_zero() { 2 } else { 1 };
                }
            }
            OperandKind::Const(c) => {
                for t in &mut c.addr.regs {
                    t.reg.width = 1;
                }
            }
            _ => {}
        }
    }
}

/// A single architectural register, as the dependence logic sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ArchReg {
    R(u8),
    UR(u8),
    P(u8),
    UP(u8),
    B(u8),
}

fn push_reg(out: &mut Vec<ArchReg>, file: RegFile, idx: u8, width: u8) {
    let (zero, mk): (u8, fn(u8) -> ArchReg) = match file {
        RegFile::R => (crate::operand::RZ, ArchReg::R),
        RegFile::UR => (crate::operand::URZ, ArchReg::UR),
    };
    if idx == zero {
        return;
    }
    for k in 0..width.max(1) {
        let r = idx.saturating_add(k);
        if r != zero {
            out.push(mk(r));
        }
    }
}

fn push_operand_regs(out: &mut Vec<ArchReg>, kind: &OperandKind) {
    match kind {
        OperandKind::Reg(r) => push_reg(out, r.file, r.idx, r.width),
        OperandKind::Pred(p) if p.idx != PT => out.push(if p.uniform {
            ArchReg::UP(p.idx)
        } else {
            ArchReg::P(p.idx)
        }),
        OperandKind::BReg(b) => out.push(ArchReg::B(*b)),
        OperandKind::GmmaDesc(d) => push_reg(out, RegFile::UR, *d, 4),
        OperandKind::Mem(a) => {
            if let Some(d) = a.desc {
                push_reg(out, RegFile::UR, d, 2);
            }
            for t in &a.regs {
                push_reg(out, t.reg.file, t.reg.idx, t.reg.width);
            }
        }
        OperandKind::Const(c) => {
            if let crate::operand::ConstBank::UReg(u) = c.bank {
                push_reg(out, RegFile::UR, u, 1);
            }
            for t in &c.addr.regs {
                push_reg(out, t.reg.file, t.reg.idx, t.reg.width);
            }
        }
        _ => {}
    }
}

fn ins_base(op: &crate::instruction::Opcode) -> &str {
    op.base.as_str()
}

/// Registers spanned by the uniform register of address operand `i` of a TMA instruction:
/// `UTMALDG.nD [URa], [URb]`: URa.. = shared destination, mbarrier, n coordinates; URb:URb+1
/// the tensor-map address. `UTMASTG.nD [URa], [URb]`: shared source and n coordinates.
/// (ptxas 13.5, docs/validation/hopper-isa-facts.md §5.3.)
///
/// `UBLKCP.dst.src [URa], [URb], URc`: a shared::cluster destination is followed by its
/// mbarrier and a global address is 64-bit (two registers); a shared source is one register.
/// `UBLKPF.L2 [URa], URb`: a 64-bit global address.
fn tma_block(base: &str, op: &crate::instruction::Opcode, i: usize) -> Option<u8> {
    match base {
        "UBLKCP" => {
            let side = op.mods.get(i)?;
            return match (side.as_str(), i) {
                ("S", 0) | ("G", _) => Some(2),
                ("S", 1) => Some(1),
                _ => None,
            };
        }
        "UBLKPF" => return (i == 0).then_some(2),
        _ => {}
    }
    let dims = op.mods.iter().find_map(|m| match m.as_str() {
        "1D" => Some(1u8),
        "2D" => Some(2),
        "3D" => Some(3),
        "4D" => Some(4),
        "5D" => Some(5),
        _ => None,
    })?;
    match (base, i) {
        ("UTMALDG", 0) => Some(2 + dims),
        ("UTMASTG", 0) => Some(1 + dims),
        ("UTMALDG" | "UTMASTG", 1) => Some(2),
        _ => None,
    }
}

/// Registers written by the instruction.
pub fn regs_written(ins: &Instruction) -> Vec<ArchReg> {
    let mut out = Vec::new();
    for o in ins.dest_operands() {
        push_operand_regs(&mut out, &o.kind);
    }
    out
}

/// The guard predicate register (`@P0`, `@!UP1`); `None` without a guard or with `@PT`/`@!PT`.
pub fn guard_reg(ins: &Instruction) -> Option<ArchReg> {
    let mut out = Vec::new();
    push_operand_regs(&mut out, &OperandKind::Pred(ins.guard?.reg));
    out.pop()
}

/// Whether the instruction can never execute (`@!PT`, `@!UPT`: ptxas's padding).
pub fn never_executes(ins: &Instruction) -> bool {
    ins.guard.is_some_and(|g| g.neg && g.reg.is_true())
}

/// Registers read by the instruction, including the guard predicate and address registers.
pub fn regs_read(ins: &Instruction) -> Vec<ArchReg> {
    let mut out = Vec::new();
    if let Some(g) = &ins.guard {
        push_operand_regs(&mut out, &OperandKind::Pred(g.reg));
    }
    for o in ins.source_operands() {
        push_operand_regs(&mut out, &o.kind);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operand::*;
    use crate::{ControlBits, Opcode};

    fn ins(op: &str, operands: Vec<OperandKind>) -> Instruction {
        let mut i = Instruction {
            pc: 0,
            guard: None,
            opcode: Opcode::parse(op),
            operands: operands.into_iter().map(Operand::new).collect(),
            ctrl: ControlBits::default(),
            encoding: None,
        };
        infer_widths(&mut i);
        i
    }

    #[test]
    fn lop3_with_predicate_output_writes_both() {
        let p0 = OperandKind::Pred(PredReg {
            uniform: false,
            idx: 0,
        });
        let i = ins(
            "LOP3.LUT",
            vec![
                p0,
                OperandKind::Reg(Reg::r(4)),
                OperandKind::Reg(Reg::r(2)),
                OperandKind::Reg(Reg::r(3)),
                OperandKind::Reg(Reg::r(RZ)),
                OperandKind::Imm(Imm::Int(0xc0)),
            ],
        );
        assert_eq!(regs_written(&i), vec![ArchReg::P(0), ArchReg::R(4)]);
        assert_eq!(regs_read(&i), vec![ArchReg::R(2), ArchReg::R(3)]);
    }

    #[test]
    fn extended_global_address_is_a_pair() {
        let addr = |wide| {
            OperandKind::Mem(Address {
                desc: None,
                regs: vec![AddrReg {
                    reg: Reg::r(40),
                    wide,
                    scale: 1,
                    suffix: None,
                }],
                offset: 0,
            })
        };
        let i = ins("LDG.E", vec![OperandKind::Reg(Reg::r(36)), addr(false)]);
        assert_eq!(regs_read(&i), vec![ArchReg::R(40), ArchReg::R(41)]);
        let i = ins("LDS", vec![OperandKind::Reg(Reg::r(36)), addr(false)]);
        assert_eq!(regs_read(&i), vec![ArchReg::R(40)]);
        let i = ins("STG.E.64", vec![addr(true), OperandKind::Reg(Reg::r(6))]);
        assert_eq!(
            regs_read(&i),
            vec![ArchReg::R(40), ArchReg::R(41), ArchReg::R(6), ArchReg::R(7)]
        );
    }

    /// `RET.REL.NODEC R2 0x0` returns to the 64-bit address in R2:R3 (spinlock's `__syncwarp`
    /// call writes R3 right before it): scoreboards must see both registers read.
    #[test]
    fn return_and_indirect_branch_targets_are_pairs() {
        let i = ins(
            "RET.REL.NODEC",
            vec![OperandKind::Reg(Reg::r(2)), OperandKind::Imm(Imm::Int(0))],
        );
        assert_eq!(regs_read(&i), vec![ArchReg::R(2), ArchReg::R(3)]);
        let i = ins(
            "BRX",
            vec![OperandKind::Reg(Reg::r(4)), OperandKind::Imm(Imm::Int(-0x40))],
        );
        assert_eq!(regs_read(&i), vec![ArchReg::R(4), ArchReg::R(5)]);
    }
}
