//! The decoded instruction: opcode with its parameters ([`Op`]), operands ([`D`]), guard.

/// Special registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SReg {
    Tid(u8),
    Ctaid(u8),
    Ntid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    VirtId,
    SmId,
    ClockLo,
    ClockHi,
    GlobalTimerLo,
    GlobalTimerHi,
    CgaCtaId,
    LtMask,
    LeMask,
    EqMask,
    GtMask,
    GeMask,
    /// High / low word of the shared window's generic base.
    SwinHi,
    SwinLo,
    Zero,
}

impl SReg {
    pub(super) fn parse(s: &str) -> Option<SReg> {
        let dim = |c: &str| match c {
            "X" => Some(0u8),
            "Y" => Some(1),
            "Z" => Some(2),
            _ => None,
        };
        if let Some(d) = s.strip_prefix("SR_TID.") {
            return dim(d).map(SReg::Tid);
        }
        if let Some(d) = s.strip_prefix("SR_CTAID.") {
            return dim(d).map(SReg::Ctaid);
        }
        if let Some(d) = s.strip_prefix("SR_NTID.") {
            return dim(d).map(SReg::Ntid);
        }
        if let Some(d) = s.strip_prefix("SR_NCTAID.") {
            return dim(d).map(SReg::Nctaid);
        }
        Some(match s {
            "SR_LANEID" => SReg::LaneId,
            "SR_WARPID" => SReg::WarpId,
            "SR_VIRTID" => SReg::VirtId,
            "SR_SMID" => SReg::SmId,
            "SR_CLOCKLO" | "SR_CLOCK0" | "SR_CLOCK" => SReg::ClockLo,
            "SR_CLOCKHI" | "SR_CLOCK1" => SReg::ClockHi,
            "SR_GLOBALTIMERLO" | "SR_GLOBALTIMER" => SReg::GlobalTimerLo,
            "SR_GLOBALTIMERHI" => SReg::GlobalTimerHi,
            "SR_CgaCtaId" | "SR_CGACTAID" => SReg::CgaCtaId,
            "SR_LTMASK" => SReg::LtMask,
            "SR_LEMASK" => SReg::LeMask,
            "SR_EQMASK" => SReg::EqMask,
            "SR_GTMASK" => SReg::GtMask,
            "SR_GEMASK" => SReg::GeMask,
            "SR_SWINHI" => SReg::SwinHi,
            "SR_SWINLO" => SReg::SwinLo,
            "SRZ" => SReg::Zero,
            _ => return None,
        })
    }
    pub fn is_clock(self) -> bool {
        matches!(
            self,
            SReg::ClockLo | SReg::ClockHi | SReg::GlobalTimerLo | SReg::GlobalTimerHi
        )
    }

    /// Whether every lane of a warp reads the same value (a value of the warp, its CTA, the
    /// launch or the SM; not the thread index, lane id or lane masks).
    pub fn same_for_every_lane(self) -> bool {
        // Every variant named, so that a new one has to be decided here.
        match self {
            SReg::Tid(_)
            | SReg::LaneId
            | SReg::LtMask
            | SReg::LeMask
            | SReg::EqMask
            | SReg::GtMask
            | SReg::GeMask => false,
            SReg::Ctaid(_)
            | SReg::Ntid(_)
            | SReg::Nctaid(_)
            | SReg::WarpId
            | SReg::VirtId
            | SReg::SmId
            | SReg::ClockLo
            | SReg::ClockHi
            | SReg::GlobalTimerLo
            | SReg::GlobalTimerHi
            | SReg::CgaCtaId
            | SReg::SwinHi
            | SReg::SwinLo
            | SReg::Zero => true,
        }
    }
}

/// One register term of an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ATerm {
    pub uniform: bool,
    pub idx: u8,
    /// `.64` (a register pair).
    pub wide: bool,
    pub scale: u8,
}

/// A decoded address expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemAddr {
    pub terms: [ATerm; 3],
    pub n: u8,
    pub offset: i64,
}

/// Half-precision operand selector (`.H0_H0`, `.H1_H1`); `H1H0` = both halves as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HSel {
    H1H0,
    H0H0,
    H1H1,
    /// `.F32`: a single-precision value converted to both halves.
    F32,
}

/// Decoded operand kind.
#[derive(Debug, Clone, PartialEq)]
pub enum K {
    R(u8),
    UR(u8),
    P(u8),
    UP(u8),
    B(u8),
    /// Integer immediate: its 32-bit pattern (and full value for 64-bit uses).
    Imm(i64),
    /// Float immediate as written (decimal).
    ImmF(f64),
    /// `c[bank][...]`.
    Const {
        bank: u32,
        addr: MemAddr,
    },
    SR(SReg),
    Mem(MemAddr),
    Target(u64),
    PredBits,
    /// `gdesc[URx]`: warpgroup-MMA descriptors in URx..URx+3.
    Gdesc(u8),
    /// Something the engine does not interpret (dependence counters, `cx[UR]` banks...).
    Other,
}

/// A decoded operand with its modifiers.
#[derive(Debug, Clone, PartialEq)]
pub struct D {
    pub k: K,
    pub neg: bool,
    pub abs: bool,
    pub not: bool,
    pub h: HSel,
}

impl D {
    pub fn is_pred(&self) -> bool {
        matches!(self.k, K::P(_) | K::UP(_))
    }
    pub fn is_reg(&self) -> bool {
        matches!(self.k, K::R(_) | K::UR(_))
    }
    /// A predicate operand that is the constant PT (not negated).
    pub fn is_pt(&self) -> bool {
        matches!(self.k, K::P(7) | K::UP(7)) && !self.not
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    F,
    Lt,
    Eq,
    Le,
    Gt,
    Ne,
    Ge,
    T,
    // Float-only unordered/ordered variants.
    Num,
    Nan,
    Ltu,
    Equ,
    Leu,
    Gtu,
    Neu,
    Geu,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImadKind {
    /// `a*b + c` (also `.MOV`, `.SHL`, `.IADD`, `.U32`).
    Lo,
    Wide,
    Hi,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShfTy {
    U32,
    S32,
    U64,
    S64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Round {
    Rn,
    Rz,
    Rm,
    Rp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mufu {
    Rcp,
    Rsq,
    Sqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    Rcp64h,
    Rsq64h,
}

/// Numeric types of conversions and memory accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    U8,
    S8,
    U16,
    S16,
    U32,
    S32,
    U64,
    S64,
    F16,
    F32,
    F64,
}

impl Ty {
    pub(super) fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "U8" => Ty::U8,
            "S8" => Ty::S8,
            "U16" => Ty::U16,
            "S16" => Ty::S16,
            "U32" => Ty::U32,
            "S32" => Ty::S32,
            "U64" => Ty::U64,
            "S64" => Ty::S64,
            "F16" => Ty::F16,
            "F32" => Ty::F32,
            "F64" => Ty::F64,
            _ => return None,
        })
    }
    pub fn bits(self) -> u32 {
        match self {
            Ty::U8 | Ty::S8 => 8,
            Ty::U16 | Ty::S16 | Ty::F16 => 16,
            Ty::U32 | Ty::S32 | Ty::F32 => 32,
            Ty::U64 | Ty::S64 | Ty::F64 => 64,
        }
    }
    pub fn signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }
}

/// Memory access size and extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MSize {
    pub bytes: u32,
    pub signed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
    /// `.POPC.INC`: +1 per lane.
    PopcInc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomTy {
    U32,
    S32,
    U64,
    S64,
    F32,
    F64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemSpace {
    Global,
    Shared,
    Local,
    /// Generic address (LD/ST/ATOM): global, or the shared or local window.
    Generic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShflMode {
    Idx,
    Up,
    Down,
    Bfly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduxOp {
    Sum,
    Min,
    Max,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Eq,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HOp {
    Add,
    Mul,
    Fma,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DOp {
    Add,
    Mul,
    Fma,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FOp {
    Add,
    Mul,
    Fma,
}

/// Decoded operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    // ---- integer ----
    Iadd3 {
        x: bool,
    },
    Viadd,
    Imad {
        kind: ImadKind,
        signed: bool,
        x: bool,
    },
    Lea {
        hi: bool,
        x: bool,
        sx32: bool,
    },
    Lop3,
    Lop {
        op: BoolOp,
    },
    Plop3,
    Shf {
        left: bool,
        ty: ShfTy,
        hi: bool,
        wrap: bool,
    },
    Shl,
    Shr {
        signed: bool,
    },
    Isetp {
        cmp: Cmp,
        signed: bool,
        bop: BoolOp,
        ex: bool,
    },
    Iabs,
    Imnmx {
        signed: bool,
    },
    /// `VIADDMNMX Rd, Ra, Rb, Rc, P`: min (P) or max (!P) of `Ra + Rb` and `Rc`.
    Viaddmnmx {
        signed: bool,
    },
    Popc,
    Flo {
        signed: bool,
        sh: bool,
    },
    Brev,
    Sel,
    Prmt {
        mode: u8,
    },
    Mov,
    S2R,
    Cs2r {
        bits64: bool,
    },
    R2ur,
    /// `LEPC Rd`: the 64-bit address of this instruction (function-relative PCs: the
    /// engine places every kernel at address 0).
    Lepc,
    Ldc {
        size: MSize,
    },
    P2r {
        byte: u8,
    },
    R2p {
        byte: u8,
    },
    // ---- float ----
    F {
        op: FOp,
        ftz: bool,
        sat: bool,
        rnd: Round,
    },
    Fsetp {
        cmp: Cmp,
        bop: BoolOp,
        ftz: bool,
    },
    Fsel,
    /// `FCHK P, a, b`: whether `a / b` needs the slow (exact) path.
    Fchk,
    /// `F2FP.PACK_AB`: two singles to a half2 / bfloat162.
    F2fp {
        bf16: bool,
    },
    Fmnmx {
        ftz: bool,
    },
    Mufu {
        f: Mufu,
    },
    I2f {
        dst: Ty,
        src: Ty,
        rnd: Round,
    },
    F2i {
        dst: Ty,
        src: Ty,
        rnd: Round,
        ftz: bool,
    },
    F2f {
        dst: Ty,
        src: Ty,
        rnd: Round,
        int_round: bool,
        ftz: bool,
    },
    H {
        op: HOp,
        ftz: bool,
        f32_out: bool,
    },
    Dop {
        op: DOp,
        rnd: Round,
    },
    Dsetp {
        cmp: Cmp,
        bop: BoolOp,
    },
    // ---- memory ----
    Ld {
        space: MemSpace,
        size: MSize,
    },
    St {
        space: MemSpace,
        size: MSize,
    },
    Atom {
        space: MemSpace,
        op: AtomOp,
        ty: AtomTy,
        ret: bool,
    },
    Ldgsts {
        bytes: u32,
    },
    // ---- warp ----
    Shfl {
        mode: ShflMode,
    },
    Vote {
        mode: VoteMode,
    },
    Match {
        all: bool,
        wide: bool,
    },
    /// `REDUX.op URd, Ra`: reduction of `Ra` over the active threads (sm_80+).
    Redux {
        op: ReduxOp,
        signed: bool,
    },
    // ---- barriers / no-ops ----
    Bar {
        arrive_only: bool,
    },
    Nop,
    // ---- control flow ----
    Bra {
        conv: Option<bool>,
        /// `BRA.U.ANY`: the whole path branches if the guard holds in any of its lanes
        /// (ptxas's loop around a per-thread uniform-datapath instruction, e.g. TMA).
        any: bool,
    },
    Jmp,
    /// `BRX Ra imm` (target `Ra + imm + next pc`, the function-relative offsets of a jump
    /// table in a constant bank) and `JMX Ra imm` (target `Ra + imm`).
    Brx {
        absolute: bool,
    },
    Call,
    Ret,
    Exit,
    Bssy,
    Bsync,
    Break,
    Bmov {
        clear: bool,
    },
    Warpsync,
    Yield,
    /// Tensor cores: MMA, LDSM, MOVM (`crate::tensor`).
    Tensor(crate::tensor::TensorOp),
    /// Hopper: warpgroup MMA, TMA, transaction and cluster barriers, ELECT (`crate::hopper`).
    Hopper(crate::hopper::HopperOp),
    /// `IDP.4A` / `IDP.2A` (`dp4a`, `dp2a`: `crate::idp`).
    Idp(crate::idp::Idp),
    Unsupported(String),
}

impl Op {
    /// Whether the operation may change the warp's control flow.
    pub fn is_control(&self) -> bool {
        matches!(
            self,
            Op::Bra { .. }
                | Op::Jmp
                | Op::Brx { .. }
                | Op::Call
                | Op::Ret
                | Op::Exit
                | Op::Bssy
                | Op::Bsync
                | Op::Break
                | Op::Bmov { .. }
                | Op::Warpsync
                | Op::Yield
        )
    }
}

/// A pre-decoded instruction.
#[derive(Debug, Clone)]
pub struct DInst {
    pub pc: u64,
    /// The PC of the next instruction of the kernel (this one's PC plus 16 for the last;
    /// [`decode_kernel`] sets it, [`decode`] alone assumes the next 16 bytes).
    pub next_pc: u64,
    pub op: Op,
    /// Guard predicate (index, negated, uniform); `None` when absent or `@PT`.
    pub guard: Option<(u8, bool, bool)>,
    pub o: Vec<D>,
    /// Operands 0 to 3 as registers, for the whole-warp fast paths (computed once by
    /// [`plain_regs`] instead of matching the operands at every execution): the destination
    /// `plain[0]` = r when operand 0 is `R r`; a source `plain[i]` (1 to 3) = r when operand
    /// i is `R r` read as it is (no `-`, `|.|` or `~`); 255 (RZ's index, which the fast paths
    /// refuse) for RZ, any other operand and a missing one.
    pub plain: [u8; 4],
    /// The registers of the first four operands that are regular registers other than RZ
    /// (`R r`, in operand order), then 255: the rows hinted into the caches before the
    /// instruction issues (computed once by [`operand_rows`], not by matching the operands
    /// at every issue).
    pub rows: [u8; 4],
    /// Uniform-datapath instruction (writes UR/UP, executes once per warp).
    pub uniform: bool,
    /// Opcode text for error messages.
    pub name: String,
    /// `.E`: global addresses are 64-bit register pairs.
    pub e64: bool,
}

/// [`DInst::plain`] of the operands `o`.
pub fn plain_regs(o: &[D]) -> [u8; 4] {
    std::array::from_fn(|i| match o.get(i) {
        Some(D { k: K::R(r), .. }) if i == 0 => *r,
        Some(D {
            k: K::R(r),
            neg: false,
            abs: false,
            not: false,
            ..
        }) => *r,
        _ => 255,
    })
}

/// [`DInst::rows`] of the operands `o`.
pub fn operand_rows(o: &[D]) -> [u8; 4] {
    let mut rows = [255u8; 4];
    let regs = o.iter().filter_map(|d| match d.k {
        K::R(r) if r != 255 => Some(r),
        _ => None,
    });
    for (slot, r) in rows.iter_mut().zip(regs) {
        *slot = r;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `plain_regs` gives what the fast paths matched at every execution before: a source
    /// (1 to 3) is a register when it is `R r`, not RZ, without `-`, `|.|` or `~`; the
    /// destination is a register when it is `R r` (RZ and anything else refused, as
    /// `fresh_row` refuses RZ); everything else, and a missing operand, is 255.
    #[test]
    fn plain_regs_as_matched() {
        let kinds = [
            K::R(0),
            K::R(7),
            K::R(254),
            K::R(255),
            K::UR(3),
            K::P(1),
            K::Imm(5),
            K::ImmF(1.5),
            K::Other,
        ];
        let mut ops = Vec::new();
        for k in &kinds {
            for m in 0..8u8 {
                ops.push(D {
                    k: k.clone(),
                    neg: m & 1 != 0,
                    abs: m & 2 != 0,
                    not: m & 4 != 0,
                    h: HSel::H1H0,
                });
            }
        }
        // Old matches: the source's register (plain_row_of), the destination's (None = refused).
        let src = |o: Option<&D>| match o {
            Some(o) => match o.k {
                K::R(r) if r != 255 && !(o.not || o.neg || o.abs) => Some(r),
                _ => None,
            },
            None => None,
        };
        let dst = |o: Option<&D>| match o.map(|o| &o.k) {
            Some(&K::R(r)) if r != 255 => Some(r),
            _ => None,
        };
        let as_opt = |r: u8| (r != 255).then_some(r);
        for len in 0..=5usize {
            for k in 0..ops.len() * 4 {
                // Operand `k % len`... varied over the positions, the others cycling through.
                let o: Vec<D> = (0..len).map(|i| ops[(k + i * 37) % ops.len()].clone()).collect();
                let p = plain_regs(&o);
                assert_eq!(as_opt(p[0]), dst(o.first()), "{o:?}");
                for (i, &r) in p.iter().enumerate().skip(1) {
                    assert_eq!(as_opt(r), src(o.get(i)), "{o:?}");
                }
            }
        }
    }
}
