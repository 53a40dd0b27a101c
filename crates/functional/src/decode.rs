//! Pre-decoding: every [`Instruction`] of a kernel is turned once into a compact [`DInst`]
//! (an [`Op`] with its parameters and decoded operands) so that execution does no string
//! matching and no allocation.
//!
//! Decoding never fails: an opcode or modifier the engine does not implement becomes
//! [`Op::Unsupported`] and is reported (opcode and PC) when a warp executes it.

use sassim_isa::{ConstBank, Imm, Instruction, OperandKind, RegFile};

mod inst;
pub use inst::*;

fn dec_addr(a: &sassim_isa::Address) -> Result<MemAddr, String> {
    let mut m = MemAddr {
        terms: [ATerm {
            uniform: false,
            idx: 255,
            wide: false,
            scale: 1,
        }; 3],
        n: 0,
        offset: a.offset,
    };
    for t in &a.regs {
        if t.reg.is_zero() {
            continue;
        }
        if m.n as usize >= 3 {
            return Err("address with more than 3 register terms".into());
        }
        if let Some(s) = &t.suffix {
            if s != "U32" {
                return Err(format!("address suffix .{s}"));
            }
        }
        m.terms[m.n as usize] = ATerm {
            uniform: t.reg.file == RegFile::UR,
            idx: t.reg.idx,
            wide: t.wide,
            scale: t.scale.max(1),
        };
        m.n += 1;
    }
    Ok(m)
}

fn dec_operand(o: &sassim_isa::Operand) -> Result<D, String> {
    let k = match &o.kind {
        OperandKind::Reg(r) => match r.file {
            RegFile::R => K::R(r.idx),
            RegFile::UR => K::UR(r.idx),
        },
        OperandKind::Pred(p) => {
            if p.uniform {
                K::UP(p.idx)
            } else {
                K::P(p.idx)
            }
        }
        OperandKind::BReg(b) => K::B(*b),
        OperandKind::Special(s) => K::SR(SReg::parse(s).ok_or_else(|| format!("special register {s}"))?),
        OperandKind::Imm(Imm::Int(v)) => K::Imm(*v),
        OperandKind::Imm(Imm::Float(v)) => K::ImmF(*v),
        OperandKind::Const(c) => match c.bank {
            ConstBank::Imm(b) => K::Const {
                bank: b,
                addr: dec_addr(&c.addr)?,
            },
            ConstBank::UReg(_) => K::Other,
        },
        OperandKind::Mem(a) => K::Mem(dec_addr(a)?),
        OperandKind::Target(t) => K::Target(t.addr().ok_or_else(|| format!("unresolved branch target {t}"))?),
        OperandKind::PredBits => K::PredBits,
        OperandKind::Sb(_) | OperandKind::SbSet(_) | OperandKind::Keyword(_) => K::Other,
        OperandKind::GmmaDesc(r) => K::Gdesc(*r),
    };
    let mut h = HSel::H1H0;
    for s in &o.suffixes {
        match s.as_str() {
            "H0_H0" => h = HSel::H0H0,
            "H1_H1" => h = HSel::H1H1,
            "F32" => h = HSel::F32,
            "H1_H0" => h = HSel::H1H0,
            // MMA operand layouts (`IMMA … R4.ROW, R8.COL`): the only ones the opcodes allow.
            "ROW" | "COL" => {}
            // Byte/half selectors of other instructions are rejected by their decoders.
            _ => return Err(format!("operand suffix .{s}")),
        }
    }
    Ok(D {
        k,
        neg: o.neg,
        abs: o.abs,
        not: o.not,
        h,
    })
}

fn parse_cmp(s: &str) -> Option<Cmp> {
    Some(match s {
        "F" => Cmp::F,
        "LT" => Cmp::Lt,
        "EQ" => Cmp::Eq,
        "LE" => Cmp::Le,
        "GT" => Cmp::Gt,
        "NE" => Cmp::Ne,
        "GE" => Cmp::Ge,
        "T" => Cmp::T,
        "NUM" => Cmp::Num,
        "NAN" => Cmp::Nan,
        "LTU" => Cmp::Ltu,
        "EQU" => Cmp::Equ,
        "LEU" => Cmp::Leu,
        "GTU" => Cmp::Gtu,
        "NEU" => Cmp::Neu,
        "GEU" => Cmp::Geu,
        _ => return None,
    })
}

fn parse_bop(s: &str) -> Option<BoolOp> {
    Some(match s {
        "AND" => BoolOp::And,
        "OR" => BoolOp::Or,
        "XOR" => BoolOp::Xor,
        _ => return None,
    })
}

fn parse_round(s: &str) -> Option<Round> {
    Some(match s {
        "RN" => Round::Rn,
        "RZ" => Round::Rz,
        "RM" => Round::Rm,
        "RP" => Round::Rp,
        _ => return None,
    })
}

/// Cache / ordering / scope hints that do not change the functional result.
fn is_hint(m: &str) -> bool {
    matches!(
        m,
        "E" | "CONSTANT"
            | "STRONG"
            | "WEAK"
            | "GPU"
            | "SYS"
            | "CTA"
            | "SM"
            | "VC"
            | "EF"
            | "EL"
            | "LU"
            | "EU"
            | "NA"
            | "CG"
            | "CS"
            | "CI"
            | "LTC64B"
            | "LTC128B"
            | "LTC256B"
            | "PRIVATE"
            | "MMIO"
            | "ZFILL"
            | "BYPASS"
            | "ACCESS"
            | "SC"
    )
}

fn msize(mods: &[&str], unknown: &mut Vec<String>) -> MSize {
    let mut s = MSize {
        bytes: 4,
        signed: false,
    };
    for m in mods {
        match *m {
            "U8" => {
                s = MSize {
                    bytes: 1,
                    signed: false,
                }
            }
            "S8" => {
                s = MSize {
                    bytes: 1,
                    signed: true,
                }
            }
            "U16" => {
                s = MSize {
                    bytes: 2,
                    signed: false,
                }
            }
            "S16" => {
                s = MSize {
                    bytes: 2,
                    signed: true,
                }
            }
            "32" => s.bytes = 4,
            "64" => s.bytes = 8,
            "128" => s.bytes = 16,
            "U" => {} // LDS.U: uniform-address hint
            m if is_hint(m) => {}
            m => unknown.push(m.to_string()),
        }
    }
    s
}

/// Decode one instruction.
pub fn decode(ins: &Instruction) -> DInst {
    let name = ins.opcode.to_string();
    let mut guard = None;
    if let Some(g) = &ins.guard {
        if g.reg.idx != 7 || g.neg {
            guard = Some((g.reg.idx, g.neg, g.reg.uniform));
        }
    }
    let mut o = Vec::with_capacity(ins.operands.len());
    let mut bad = None;
    for op in &ins.operands {
        match dec_operand(op) {
            Ok(d) => o.push(d),
            Err(e) => {
                bad = Some(e);
                o.push(D {
                    k: K::Other,
                    neg: false,
                    abs: false,
                    not: false,
                    h: HSel::H1H0,
                });
            }
        }
    }
    let base = ins.opcode.base.as_str();
    let uniform = base.starts_with('U') || base == "S2UR" || base == "R2UR" || base == "VOTEU";
    let op = match bad {
        Some(e) => Op::Unsupported(format!("{name}: {e}")),
        None => decode_op(ins, &o).unwrap_or_else(|e| Op::Unsupported(e.unwrap_or_else(|| name.clone()))),
    };
    DInst {
        pc: ins.pc,
        next_pc: ins.pc.wrapping_add(sassim_isa::INSTRUCTION_BYTES),
        op,
        guard,
        plain: inst::plain_regs(&o),
        rows: inst::operand_rows(&o),
        o,
        uniform,
        name,
        e64: ins.opcode.has("E"),
    }
}

/// Every instruction of `kernel` decoded, each with the PC of the instruction after it.
pub fn decode_kernel(kernel: &sassim_isa::Kernel) -> Vec<DInst> {
    let mut code: Vec<DInst> = kernel.instructions.iter().map(decode).collect();
    for i in 1..code.len() {
        code[i - 1].next_pc = code[i].pc;
    }
    code
}

/// Err(None): unsupported modifier combination (reported as the full opcode).
type R = Result<Op, Option<String>>;

fn decode_op(ins: &Instruction, o: &[D]) -> R {
    let full = ins.opcode.to_string();
    let base = ins.opcode.base.as_str();
    let mods: Vec<&str> = ins.opcode.mods.iter().map(String::as_str).collect();
    let has = |m: &str| mods.contains(&m);
    // Every modifier must be understood: `allow` lists the accepted ones.
    let only = |allowed: &[&str]| -> Result<(), Option<String>> {
        for m in &mods {
            if !allowed.contains(m) {
                return Err(Some(full.clone()));
            }
        }
        Ok(())
    };
    let stripped = base.strip_prefix('U').filter(|_| {
        matches!(
            base,
            "UIADD3"
                | "UIMAD"
                | "ULEA"
                | "ULOP3"
                | "ULOP"
                | "UPLOP3"
                | "USHF"
                | "USHL"
                | "USHR"
                | "UISETP"
                | "USEL"
                | "UMOV"
                | "UPOPC"
                | "UFLO"
                | "UBREV"
                | "UPRMT"
                | "UIABS"
                | "UIMNMX"
                | "UP2UR"
                | "ULDC"
        )
    });
    let b = stripped.unwrap_or(base);
    Ok(match b {
        "IADD3" => {
            only(&["X"])?;
            Op::Iadd3 { x: has("X") }
        }
        "VIADD" | "IADD32I" | "IADD" => {
            only(&[])?;
            Op::Viadd
        }
        "IMAD" | "IMAD32I" => {
            only(&["WIDE", "HI", "MOV", "SHL", "IADD", "U32", "S32", "X"])?;
            let kind = if has("WIDE") {
                ImadKind::Wide
            } else if has("HI") {
                ImadKind::Hi
            } else {
                ImadKind::Lo
            };
            // IMAD with a carry-out predicate is not implemented.
            if o.len() > 1 && o[1].is_pred() && !(has("X")) {
                return Err(Some(format!("{full} with carry-out predicate")));
            }
            Op::Imad {
                kind,
                signed: !has("U32"),
                x: has("X"),
            }
        }
        "LEA" => {
            only(&["HI", "X", "SX32"])?;
            Op::Lea {
                hi: has("HI"),
                x: has("X"),
                sx32: has("SX32"),
            }
        }
        "LOP3" => {
            only(&["LUT"])?;
            Op::Lop3
        }
        "LOP" | "LOP32I" => {
            let op = mods
                .iter()
                .find_map(|m| parse_bop(m))
                .ok_or_else(|| Some(full.clone()))?;
            only(&["AND", "OR", "XOR"])?;
            Op::Lop { op }
        }
        "PLOP3" => {
            only(&["LUT"])?;
            Op::Plop3
        }
        "SHF" => {
            only(&["L", "R", "U32", "S32", "U64", "S64", "HI", "W"])?;
            let ty = if has("S64") {
                ShfTy::S64
            } else if has("U64") {
                ShfTy::U64
            } else if has("S32") {
                ShfTy::S32
            } else {
                ShfTy::U32
            };
            if has("L") == has("R") {
                return Err(Some(full));
            }
            Op::Shf {
                left: has("L"),
                ty,
                hi: has("HI"),
                wrap: has("W"),
            }
        }
        "SHL" => {
            only(&[])?;
            Op::Shl
        }
        "SHR" => {
            only(&["U32", "S32"])?;
            Op::Shr { signed: !has("U32") }
        }
        "ISETP" => {
            let mut cmp = None;
            let mut bop = None;
            for m in &mods {
                if let Some(c) = parse_cmp(m).filter(|c| {
                    matches!(
                        c,
                        Cmp::F | Cmp::Lt | Cmp::Eq | Cmp::Le | Cmp::Gt | Cmp::Ne | Cmp::Ge | Cmp::T
                    )
                }) {
                    cmp = Some(c);
                } else if let Some(x) = parse_bop(m) {
                    bop = Some(x);
                } else if !matches!(*m, "U32" | "S32" | "EX") {
                    return Err(Some(full));
                }
            }
            Op::Isetp {
                cmp: cmp.ok_or_else(|| Some(full.clone()))?,
                signed: !has("U32"),
                bop: bop.unwrap_or(BoolOp::And),
                ex: has("EX"),
            }
        }
        "IABS" => {
            only(&[])?;
            Op::Iabs
        }
        "IMNMX" | "VIMNMX" => {
            only(&["U32", "S32"])?;
            Op::Imnmx { signed: !has("U32") }
        }
        "VIADDMNMX" => {
            only(&["U32", "S32"])?;
            Op::Viaddmnmx { signed: !has("U32") }
        }
        "POPC" => {
            only(&[])?;
            Op::Popc
        }
        "IDP" => Op::Idp(crate::idp::decode(&mods).ok_or(Some(full))?),
        "FLO" => {
            only(&["U32", "S32", "SH"])?;
            Op::Flo {
                signed: !has("U32"),
                sh: has("SH"),
            }
        }
        "BREV" => {
            only(&[])?;
            Op::Brev
        }
        "SEL" => {
            only(&[])?;
            Op::Sel
        }
        "FSEL" => {
            only(&[])?;
            Op::Fsel
        }
        "PRMT" => {
            let mode = match mods.as_slice() {
                [] => 0,
                ["F4E"] => 1,
                ["B4E"] => 2,
                ["RC8"] => 3,
                ["ECL"] => 4,
                ["ECR"] => 5,
                ["RC16"] => 6,
                _ => return Err(Some(full)),
            };
            Op::Prmt { mode }
        }
        "MOV" | "MOV32I" => {
            only(&["64"])?;
            if has("64") {
                return Err(Some(full));
            }
            Op::Mov
        }
        "S2R" | "S2UR" => {
            only(&[])?;
            Op::S2R
        }
        "CS2R" => {
            only(&["32"])?;
            Op::Cs2r { bits64: !has("32") }
        }
        "R2UR" => {
            only(&[])?;
            Op::R2ur
        }
        "LEPC" => {
            only(&[])?;
            Op::Lepc
        }
        "LDC" => {
            let mut unk = Vec::new();
            let size = msize(&mods, &mut unk);
            if !unk.is_empty() || size.bytes > 8 {
                return Err(Some(full));
            }
            Op::Ldc { size }
        }
        "P2R" => {
            let byte = match mods.as_slice() {
                [] | ["B0"] => 0,
                ["B1"] => 1,
                ["B2"] => 2,
                ["B3"] => 3,
                _ => return Err(Some(full)),
            };
            Op::P2r { byte }
        }
        "R2P" => {
            let byte = match mods.as_slice() {
                [] | ["B0"] => 0,
                ["B1"] => 1,
                ["B2"] => 2,
                ["B3"] => 3,
                _ => return Err(Some(full)),
            };
            Op::R2p { byte }
        }
        // ---------------- float ----------------
        "FADD" | "FMUL" | "FFMA" | "FADD32I" | "FMUL32I" | "FFMA32I" => {
            let op = match b.trim_end_matches("32I") {
                "FADD" => FOp::Add,
                "FMUL" => FOp::Mul,
                _ => FOp::Fma,
            };
            let mut rnd = Round::Rn;
            for m in &mods {
                if let Some(r) = parse_round(m) {
                    rnd = r;
                } else if !matches!(*m, "FTZ" | "SAT" | "FMZ") {
                    return Err(Some(full));
                }
            }
            if has("FMZ") {
                return Err(Some(full));
            }
            Op::F {
                op,
                ftz: has("FTZ"),
                sat: has("SAT"),
                rnd,
            }
        }
        "FCHK" => {
            only(&["DIVIDE"])?;
            Op::Fchk
        }
        "F2FP" => {
            // F2FP[.F16.F32|.BF16(.F32)].PACK_AB[.RN]: two singles rounded to halves, packed
            // (operand 1 in the high half, operand 2 in the low half).
            let bf16 = has("BF16");
            for m in &mods {
                if !matches!(*m, "F16" | "BF16" | "F32" | "PACK_AB" | "RN") {
                    return Err(Some(full));
                }
            }
            if !has("PACK_AB") {
                return Err(Some(full));
            }
            Op::F2fp { bf16 }
        }
        "FSETP" => {
            let mut cmp = None;
            let mut bop = None;
            for m in &mods {
                if let Some(c) = parse_cmp(m) {
                    cmp = Some(c);
                } else if let Some(x) = parse_bop(m) {
                    bop = Some(x);
                } else if *m != "FTZ" {
                    return Err(Some(full));
                }
            }
            Op::Fsetp {
                cmp: cmp.ok_or_else(|| Some(full.clone()))?,
                bop: bop.unwrap_or(BoolOp::And),
                ftz: has("FTZ"),
            }
        }
        "FMNMX" => {
            only(&["FTZ"])?;
            Op::Fmnmx { ftz: has("FTZ") }
        }
        "MUFU" => {
            let f = match mods.as_slice() {
                ["RCP"] => Mufu::Rcp,
                ["RSQ"] => Mufu::Rsq,
                ["SQRT"] => Mufu::Sqrt,
                ["EX2"] => Mufu::Ex2,
                ["LG2"] => Mufu::Lg2,
                ["SIN"] => Mufu::Sin,
                ["COS"] => Mufu::Cos,
                ["TANH"] => Mufu::Tanh,
                ["RCP64H"] => Mufu::Rcp64h,
                ["RSQ64H"] => Mufu::Rsq64h,
                _ => return Err(Some(full)),
            };
            Op::Mufu { f }
        }
        "I2F" | "I2FP" | "F2I" | "F2F" | "FRND" => {
            let mut tys = Vec::new();
            let mut rnd = Round::Rn;
            let mut int_round = b == "FRND";
            let mut ftz = false;
            for m in &mods {
                if let Some(t) = Ty::parse(m) {
                    tys.push(t);
                } else if let Some(r) = parse_round(m) {
                    rnd = r;
                } else {
                    match *m {
                        "TRUNC" => {
                            rnd = Round::Rz;
                            int_round = true
                        }
                        "FLOOR" => {
                            rnd = Round::Rm;
                            int_round = true
                        }
                        "CEIL" => {
                            rnd = Round::Rp;
                            int_round = true
                        }
                        "ROUND" => {
                            rnd = Round::Rn;
                            int_round = true
                        }
                        "NTZ" => {}
                        "FTZ" => ftz = true,
                        _ => return Err(Some(full)),
                    }
                }
            }
            match b {
                "I2F" | "I2FP" => {
                    let (dst, src) = match tys.as_slice() {
                        [] => (Ty::F32, Ty::S32),
                        [d] if matches!(d, Ty::F32 | Ty::F64 | Ty::F16) => (*d, Ty::S32),
                        [s] => (Ty::F32, *s),
                        [d, s] => (*d, *s),
                        _ => return Err(Some(full)),
                    };
                    if !matches!(dst, Ty::F32 | Ty::F64) || matches!(src, Ty::F16 | Ty::F32 | Ty::F64) {
                        return Err(Some(full));
                    }
                    Op::I2f { dst, src, rnd }
                }
                "F2I" => {
                    let (dst, src) = match tys.as_slice() {
                        [] => (Ty::S32, Ty::F32),
                        [d] if !matches!(d, Ty::F32 | Ty::F64 | Ty::F16) => (*d, Ty::F32),
                        [s] => (Ty::S32, *s),
                        [d, s] => (*d, *s),
                        _ => return Err(Some(full)),
                    };
                    if matches!(dst, Ty::F16 | Ty::F32 | Ty::F64) || !matches!(src, Ty::F32 | Ty::F64) {
                        return Err(Some(full));
                    }
                    Op::F2i { dst, src, rnd, ftz }
                }
                _ => {
                    let (dst, src) = match tys.as_slice() {
                        [] => (Ty::F32, Ty::F32),
                        [d] => (*d, Ty::F32),
                        [d, s] => (*d, *s),
                        _ => return Err(Some(full)),
                    };
                    if !matches!(dst, Ty::F16 | Ty::F32 | Ty::F64)
                        || !matches!(src, Ty::F16 | Ty::F32 | Ty::F64)
                    {
                        return Err(Some(full));
                    }
                    if int_round && dst != src {
                        return Err(Some(full));
                    }
                    Op::F2f {
                        dst,
                        src,
                        rnd,
                        int_round,
                        ftz,
                    }
                }
            }
        }
        "HADD2" | "HMUL2" | "HFMA2" => {
            only(&["MMA", "FTZ", "F32"])?;
            let op = match b {
                "HADD2" => HOp::Add,
                "HMUL2" => HOp::Mul,
                _ => HOp::Fma,
            };
            Op::H {
                op,
                ftz: has("FTZ"),
                f32_out: has("F32"),
            }
        }
        "DADD" | "DMUL" | "DFMA" => {
            let mut rnd = Round::Rn;
            for m in &mods {
                match parse_round(m) {
                    Some(r) => rnd = r,
                    None => return Err(Some(full)),
                }
            }
            let op = match b {
                "DADD" => DOp::Add,
                "DMUL" => DOp::Mul,
                _ => DOp::Fma,
            };
            Op::Dop { op, rnd }
        }
        "DSETP" => {
            let mut cmp = None;
            let mut bop = None;
            for m in &mods {
                if let Some(c) = parse_cmp(m) {
                    cmp = Some(c);
                } else if let Some(x) = parse_bop(m) {
                    bop = Some(x);
                } else {
                    return Err(Some(full));
                }
            }
            Op::Dsetp {
                cmp: cmp.ok_or_else(|| Some(full.clone()))?,
                bop: bop.unwrap_or(BoolOp::And),
            }
        }
        // ---------------- memory ----------------
        "LDG" | "LDS" | "LDL" | "STG" | "STS" | "STL" | "LD" | "ST" => {
            let mut unk = Vec::new();
            let size = msize(&mods, &mut unk);
            if !unk.is_empty() {
                return Err(Some(full));
            }
            let space = match &b[2..] {
                "G" => MemSpace::Global,
                "S" => MemSpace::Shared,
                "L" => MemSpace::Local,
                _ => MemSpace::Generic,
            };
            if b.starts_with("LD") {
                Op::Ld { space, size }
            } else {
                Op::St { space, size }
            }
        }
        "ATOMG" | "ATOMS" | "ATOM" | "RED" | "REDG" | "REDS" => {
            let space = match b {
                "ATOMS" | "REDS" => MemSpace::Shared,
                "ATOM" | "RED" => MemSpace::Generic,
                _ => MemSpace::Global,
            };
            let mut op = None;
            let mut ty = AtomTy::U32;
            let mut popc = false;
            for m in &mods {
                match *m {
                    "ADD" => op = Some(AtomOp::Add),
                    "MIN" => op = Some(AtomOp::Min),
                    "MAX" => op = Some(AtomOp::Max),
                    "INC" => op = Some(AtomOp::Inc),
                    "DEC" => op = Some(AtomOp::Dec),
                    "AND" => op = Some(AtomOp::And),
                    "OR" => op = Some(AtomOp::Or),
                    "XOR" => op = Some(AtomOp::Xor),
                    "EXCH" => op = Some(AtomOp::Exch),
                    "CAS" => op = Some(AtomOp::Cas),
                    "POPC" => popc = true,
                    "U32" | "32" => ty = AtomTy::U32,
                    "S32" => ty = AtomTy::S32,
                    "64" | "U64" => ty = AtomTy::U64,
                    "S64" => ty = AtomTy::S64,
                    "F32" => ty = AtomTy::F32,
                    "F64" => ty = AtomTy::F64,
                    "FTZ" | "RN" => {}
                    m if is_hint(m) => {}
                    _ => return Err(Some(full)),
                }
            }
            let mut op = op.ok_or_else(|| Some(full.clone()))?;
            if popc {
                if op != AtomOp::Inc {
                    return Err(Some(full));
                }
                op = AtomOp::PopcInc;
            }
            if matches!(ty, AtomTy::F32 | AtomTy::F64) && op != AtomOp::Add {
                return Err(Some(full));
            }
            Op::Atom {
                space,
                op,
                ty,
                ret: b.starts_with("ATOM"),
            }
        }
        "LDGSTS" => {
            let mut unk = Vec::new();
            let size = msize(&mods, &mut unk);
            if !unk.is_empty() {
                return Err(Some(full));
            }
            Op::Ldgsts { bytes: size.bytes }
        }
        "LDGDEPBAR" | "DEPBAR" | "MEMBAR" | "ERRBAR" | "CGAERRBAR" | "CCTL" | "FENCE" | "NOP"
        | "NANOSLEEP" | "CCTLL" | "PMTRIG" => Op::Nop,
        // ---------------- warp ----------------
        "SHFL" => {
            let mode = match mods.as_slice() {
                ["IDX"] => ShflMode::Idx,
                ["UP"] => ShflMode::Up,
                ["DOWN"] => ShflMode::Down,
                ["BFLY"] => ShflMode::Bfly,
                _ => return Err(Some(full)),
            };
            Op::Shfl { mode }
        }
        "VOTE" | "VOTEU" => {
            let mode = match mods.as_slice() {
                ["ALL"] => VoteMode::All,
                ["ANY"] => VoteMode::Any,
                ["EQ"] => VoteMode::Eq,
                _ => return Err(Some(full)),
            };
            Op::Vote { mode }
        }
        "REDUX" => {
            // The operation nvdisasm does not print is AND (`__reduce_and_sync` → `REDUX`).
            let mut op = ReduxOp::And;
            let mut signed = false;
            for m in &mods {
                match *m {
                    "SUM" => op = ReduxOp::Sum,
                    "MIN" => op = ReduxOp::Min,
                    "MAX" => op = ReduxOp::Max,
                    "AND" => op = ReduxOp::And,
                    "OR" => op = ReduxOp::Or,
                    "XOR" => op = ReduxOp::Xor,
                    "S32" => signed = true,
                    "U32" => signed = false,
                    _ => return Err(Some(full)),
                }
            }
            Op::Redux { op, signed }
        }
        "MATCH" => {
            only(&["ANY", "ALL", "U32", "U64"])?;
            if has("ANY") == has("ALL") {
                return Err(Some(full));
            }
            Op::Match {
                all: has("ALL"),
                wide: has("U64"),
            }
        }
        "BAR" => {
            only(&["SYNC", "ARV", "DEFER_BLOCKING"])?;
            if has("SYNC") == has("ARV") {
                return Err(Some(full));
            }
            Op::Bar {
                arrive_only: has("ARV"),
            }
        }
        // ---------------- control ----------------
        "BRA" => {
            only(&["U", "CONV", "DIV", "INC", "DEC", "ANY"])?;
            if has("INC") || has("DEC") {
                return Err(Some(full));
            }
            Op::Bra {
                any: has("ANY"),
                conv: if has("CONV") {
                    Some(true)
                } else if has("DIV") {
                    Some(false)
                } else {
                    None
                },
            }
        }
        "JMP" => {
            only(&["U"])?;
            Op::Jmp
        }
        "BRX" | "JMX" => {
            only(&["U"])?;
            Op::Brx { absolute: b == "JMX" }
        }
        "CALL" => {
            only(&["REL", "ABS", "NOINC"])?;
            Op::Call
        }
        "RET" => {
            only(&["REL", "ABS", "NODEC"])?;
            Op::Ret
        }
        "EXIT" => {
            only(&["KEEPREFCOUNT"])?;
            Op::Exit
        }
        "BSSY" => {
            only(&["RECONVERGENT"])?;
            Op::Bssy
        }
        "BSYNC" => {
            only(&["RECONVERGENT"])?;
            Op::Bsync
        }
        "BREAK" => {
            only(&[])?;
            Op::Break
        }
        "BMOV" => {
            only(&["32", "CLEAR"])?;
            Op::Bmov { clear: has("CLEAR") }
        }
        "WARPSYNC" => {
            // .EXCLUSIVE (before REDUX/MATCH of a `__*_sync` intrinsic): the named threads
            // synchronise like a plain WARPSYNC; the engine runs converged threads together.
            only(&["ALL", "EXCLUSIVE", "COLLECTIVE"])?;
            if has("COLLECTIVE") {
                return Err(Some(full));
            }
            Op::Warpsync
        }
        "YIELD" => {
            only(&[])?;
            Op::Yield
        }
        "HMMA" | "IMMA" | "DMMA" | "LDSM" | "MOVM" => {
            Op::Tensor(crate::tensor::decode(ins).ok_or(Some(full))?)
        }
        "ELECT" | "SYNCS" | "UTMALDG" | "UTMASTG" | "UBLKCP" | "UBLKPF" | "UTMACMDFLUSH" | "UCGABAR_ARV"
        | "UCGABAR_WAIT" | "WARPGROUP" | "HGMMA" | "IGMMA" | "QGMMA" => {
            Op::Hopper(crate::hopper::decode(ins).ok_or(Some(full))?)
        }
        _ => return Err(Some(full)),
    })
}
