//! SASS operands.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Index of RZ (regular zero register).
pub const RZ: u8 = 255;
/// Index of URZ (uniform zero register).
pub const URZ: u8 = 63;
/// Index of PT / UPT (the always-true predicate).
pub const PT: u8 = 7;

/// Register files that hold 32-bit values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RegFile {
    /// Regular (per-thread) registers R0–R254, RZ = 255.
    R,
    /// Uniform (per-warp) registers UR0–UR62, URZ = 63.
    UR,
}

/// A regular or uniform register operand.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Reg {
    pub file: RegFile,
    /// Register index; `RZ`/`URZ` for the zero registers.
    pub idx: u8,
    /// Number of consecutive 32-bit registers the operand spans (1, 2, 3 or 4).
    /// Not part of the syntax: inferred from the opcode by [`crate::dataflow`].
    pub width: u8,
}

impl Reg {
    pub fn r(idx: u8) -> Reg {
        Reg {
            file: RegFile::R,
            idx,
            width: 1,
        }
    }
    pub fn ur(idx: u8) -> Reg {
        Reg {
            file: RegFile::UR,
            idx,
            width: 1,
        }
    }
    /// Whether this is RZ or URZ.
    pub fn is_zero(&self) -> bool {
        match self.file {
            RegFile::R => self.idx == RZ,
            RegFile::UR => self.idx == URZ,
        }
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.file, self.is_zero()) {
            (RegFile::R, true) => f.write_str("RZ"),
            (RegFile::UR, true) => f.write_str("URZ"),
            (RegFile::R, false) => write!(f, "R{}", self.idx),
            (RegFile::UR, false) => write!(f, "UR{}", self.idx),
        }
    }
}

/// A predicate register: P0–P6/PT or UP0–UP6/UPT (index 7 = true).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PredReg {
    pub uniform: bool,
    pub idx: u8,
}

impl PredReg {
    pub const PT: PredReg = PredReg {
        uniform: false,
        idx: PT,
    };
    pub fn is_true(&self) -> bool {
        self.idx == PT
    }
}

impl fmt::Display for PredReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let u = if self.uniform { "U" } else { "" };
        if self.idx == PT {
            write!(f, "{u}PT")
        } else {
            write!(f, "{u}P{}", self.idx)
        }
    }
}

/// A guard or predicate source: `P0`, `!P1`, `UPT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Pred {
    pub reg: PredReg,
    pub neg: bool,
}

impl fmt::Display for Pred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.neg {
            f.write_str("!")?;
        }
        write!(f, "{}", self.reg)
    }
}

/// Constant-bank selector.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConstBank {
    /// `c[0x0]`
    Imm(u32),
    /// `cx[UR4]`: bank number taken from a uniform register.
    UReg(u8),
}

/// One term of an address expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AddrReg {
    pub reg: Reg,
    /// `.64`: the register pair holds a 64-bit address.
    pub wide: bool,
    /// `.X4`, `.X8`, `.X16`: the register is scaled by this factor (1 = none).
    pub scale: u8,
    /// `.U32` and similar suffixes kept verbatim (without the dot).
    pub suffix: Option<String>,
}

impl fmt::Display for AddrReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.reg)?;
        if self.wide {
            f.write_str(".64")?;
        }
        if self.scale > 1 {
            write!(f, ".X{}", self.scale)?;
        }
        if let Some(s) = &self.suffix {
            write!(f, ".{s}")?;
        }
        Ok(())
    }
}

/// An address: `[R2.64+0x10]`, `[UR4+0x8]`, `[R1+UR4-0x4]`, `desc[UR4][R2.64]`, `[0x20]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Address {
    /// `desc[URx]`: a memory descriptor held in a uniform register pair.
    pub desc: Option<u8>,
    /// Register terms in written order (regular and/or uniform).
    pub regs: Vec<AddrReg>,
    /// Immediate offset.
    pub offset: i64,
}

impl Address {
    /// Whether every register term is uniform (or there is none): one address per warp.
    pub fn is_uniform(&self) -> bool {
        self.regs
            .iter()
            .all(|r| r.reg.file == RegFile::UR || r.reg.is_zero())
    }
}

fn write_offset(f: &mut fmt::Formatter<'_>, offset: i64, first: bool) -> fmt::Result {
    if offset < 0 {
        write!(f, "-{:#x}", offset.unsigned_abs())
    } else if first {
        write!(f, "{offset:#x}")
    } else {
        write!(f, "+{offset:#x}")
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(d) = self.desc {
            write!(f, "desc[{}]", Reg::ur(d))?;
        }
        f.write_str("[")?;
        for (i, r) in self.regs.iter().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            write!(f, "{r}")?;
        }
        if self.regs.is_empty() || self.offset != 0 {
            write_offset(f, self.offset, self.regs.is_empty())?;
        }
        f.write_str("]")
    }
}

/// A constant-memory operand: `c[0x0][0x160]`, `c[0x3][R2+0x10]`, `cx[UR4][R0]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ConstRef {
    pub bank: ConstBank,
    pub addr: Address,
}

impl fmt::Display for ConstRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.bank {
            ConstBank::Imm(b) => write!(f, "c[{b:#x}]")?,
            ConstBank::UReg(u) => write!(f, "cx[{}]", Reg::ur(*u))?,
        }
        write!(f, "{}", self.addr)
    }
}

/// An immediate value as written.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub enum Imm {
    /// Written in hex (or as a signed hex) — cuobjdump prints integer immediates this way.
    Int(i64),
    /// Written in decimal, with an exponent, or as INF/NAN — cuobjdump prints float
    /// immediates this way. An integer instruction given a decimal immediate uses its
    /// integer value (microbenchmark convenience; documented in docs/microbench.md).
    Float(f64),
}

impl PartialEq for Imm {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Imm::Int(a), Imm::Int(b)) => a == b,
            (Imm::Float(a), Imm::Float(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}
impl Eq for Imm {}
impl std::hash::Hash for Imm {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            Imm::Int(v) => v.hash(state),
            Imm::Float(v) => v.to_bits().hash(state),
        }
    }
}

impl Imm {
    /// The 32-bit pattern an integer instruction sees.
    pub fn as_u32(&self) -> u32 {
        match *self {
            Imm::Int(v) => v as u32,
            Imm::Float(v) => v as i64 as u32,
        }
    }
    /// The single-precision value a float instruction sees.
    pub fn as_f32(&self) -> f32 {
        match *self {
            Imm::Int(v) => f32::from_bits(v as u32),
            Imm::Float(v) => v as f32,
        }
    }
}

impl fmt::Display for Imm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Imm::Int(v) if v < 0 => write!(f, "-{:#x}", v.unsigned_abs()),
            Imm::Int(v) => write!(f, "{v:#x}"),
            Imm::Float(v) if v.is_nan() => f.write_str(if v.is_sign_negative() { "-QNAN" } else { "QNAN" }),
            Imm::Float(v) if v.is_infinite() => f.write_str(if v < 0.0 { "-INF" } else { "+INF" }),
            Imm::Float(v) => {
                // Shortest representation that parses back to the same value; keep it
                // recognisably decimal (never hex) so it is read back as a float.
                let s = format!("{v:?}");
                f.write_str(s.strip_suffix(".0").unwrap_or(&s))
            }
        }
    }
}

/// A branch target.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Target {
    /// An absolute offset within the function (cuobjdump: `BRA 0x70`).
    Addr(u64),
    /// A label; `backtick` for nvdisasm's `` `(.L_x_0) `` form. `addr` is resolved after parsing.
    Label {
        name: String,
        backtick: bool,
        addr: Option<u64>,
    },
}

impl Target {
    /// The resolved byte offset, if known.
    pub fn addr(&self) -> Option<u64> {
        match self {
            Target::Addr(a) => Some(*a),
            Target::Label { addr, .. } => *addr,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Addr(a) => write!(f, "{a:#x}"),
            Target::Label {
                name, backtick: true, ..
            } => write!(f, "`({name})"),
            Target::Label { name, .. } => f.write_str(name),
        }
    }
}

/// What an operand refers to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OperandKind {
    Reg(Reg),
    Pred(PredReg),
    /// Convergence-barrier register B0–B15.
    BReg(u8),
    /// Dependence counter SB0–SB5 (DEPBAR).
    Sb(u8),
    /// A set of dependence counters `{4,3,2}` (DEPBAR).
    SbSet(Vec<u8>),
    /// Special register by name, e.g. `SR_TID.X`, `SR_CLOCKLO`, `SRZ`.
    Special(String),
    /// `PR`: all predicates as a bit field (P2R/R2P).
    PredBits,
    Const(ConstRef),
    Imm(Imm),
    Mem(Address),
    Target(Target),
    /// A word operand the simulator does not interpret, e.g. a texture shape `2D`.
    Keyword(String),
    /// Hopper warpgroup-MMA descriptors `gdesc[URx]`: the A descriptor in URx:URx+1 and the B
    /// descriptor in URx+2:URx+3 (64 bits each).
    GmmaDesc(u8),
}

/// One operand with its modifiers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Operand {
    pub kind: OperandKind,
    /// `-x`
    pub neg: bool,
    /// `|x|`
    pub abs: bool,
    /// `!P0` for predicates, `~R2` for registers.
    pub not: bool,
    /// `.reuse`
    pub reuse: bool,
    /// Other suffixes in written order, without dots (e.g. `H0_H0`, `B1`, `F32`).
    pub suffixes: Vec<String>,
}

impl Operand {
    pub fn new(kind: OperandKind) -> Operand {
        Operand {
            kind,
            neg: false,
            abs: false,
            not: false,
            reuse: false,
            suffixes: Vec::new(),
        }
    }
    pub fn reg(&self) -> Option<&Reg> {
        match &self.kind {
            OperandKind::Reg(r) => Some(r),
            _ => None,
        }
    }
    pub fn pred(&self) -> Option<Pred> {
        match &self.kind {
            OperandKind::Pred(p) => Some(Pred {
                reg: *p,
                neg: self.not,
            }),
            _ => None,
        }
    }
    pub fn has_suffix(&self, s: &str) -> bool {
        self.suffixes.iter().any(|x| x == s)
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.not {
            f.write_str(if matches!(self.kind, OperandKind::Pred(_)) {
                "!"
            } else {
                "~"
            })?;
        }
        if self.neg {
            f.write_str("-")?;
        }
        if self.abs {
            f.write_str("|")?;
        }
        match &self.kind {
            OperandKind::Reg(r) => write!(f, "{r}")?,
            OperandKind::Pred(p) => write!(f, "{p}")?,
            OperandKind::BReg(b) => write!(f, "B{b}")?,
            OperandKind::Sb(s) => write!(f, "SB{s}")?,
            OperandKind::SbSet(v) => {
                f.write_str("{")?;
                for (i, s) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{s}")?;
                }
                f.write_str("}")?;
            }
            OperandKind::Special(s) | OperandKind::Keyword(s) => f.write_str(s)?,
            OperandKind::GmmaDesc(r) => write!(f, "gdesc[UR{r}]")?,
            OperandKind::PredBits => f.write_str("PR")?,
            OperandKind::Const(c) => write!(f, "{c}")?,
            OperandKind::Imm(i) => write!(f, "{i}")?,
            OperandKind::Mem(a) => write!(f, "{a}")?,
            OperandKind::Target(t) => write!(f, "{t}")?,
        }
        for s in &self.suffixes {
            write!(f, ".{s}")?;
        }
        if self.abs {
            f.write_str("|")?;
        }
        if self.reuse {
            f.write_str(".reuse")?;
        }
        Ok(())
    }
}
