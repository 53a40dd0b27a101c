//! Tensor-core instructions: what a warp-level MMA opcode (`HMMA`, `IMMA`, `DMMA`) computes
//! and how many registers each of its operands spans, and the register counts of `LDSM`
//! (`ldmatrix`) and `MOVM` (`movmatrix`).
//!
//! The shapes and types are those of PTX `mma.sync` (PTX ISA, "Warp-level matrix multiply-
//! accumulate instructions"); ptxas 13.5 prints them as `HMMA.16816.F32.BF16`
//! (m16 n8 k16, FP32 accumulator, BF16 inputs), `IMMA.16832.S8.U8.SAT` (A signed 8-bit, B
//! unsigned 8-bit, saturating), `DMMA.884` / `DMMA.8x8x4`. A fragment of an m×k matrix of
//! b-bit elements spread over the 32 threads of a warp takes m·k·b / 1024 registers per
//! thread (half of that for the compressed A of a 2:4-sparse MMA). Shared by the functional
//! engine (which computes the product) and the timing model (operand widths, register-file
//! reads).

use crate::instruction::{Instruction, Opcode};
use crate::operand::OperandKind;

/// Which tensor-core instruction family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmaFamily {
    /// Floating-point inputs of 16 or 19 bits (`HMMA`).
    H,
    /// Integer inputs (`IMMA`).
    I,
    /// FP64 (`DMMA`).
    D,
}

/// Element type of an MMA operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmaType {
    F16,
    Bf16,
    /// TF32: an FP32 register whose low 13 mantissa bits are ignored.
    Tf32,
    F32,
    F64,
    S8,
    U8,
    S4,
    U4,
    S32,
}

impl MmaType {
    /// Bits one element takes in a register.
    pub fn bits(self) -> u32 {
        match self {
            MmaType::S4 | MmaType::U4 => 4,
            MmaType::S8 | MmaType::U8 => 8,
            MmaType::F16 | MmaType::Bf16 => 16,
            MmaType::Tf32 | MmaType::F32 | MmaType::S32 => 32,
            MmaType::F64 => 64,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            MmaType::F16 => "F16",
            MmaType::Bf16 => "BF16",
            MmaType::Tf32 => "TF32",
            MmaType::F32 => "F32",
            MmaType::F64 => "F64",
            MmaType::S8 => "S8",
            MmaType::U8 => "U8",
            MmaType::S4 => "S4",
            MmaType::U4 => "U4",
            MmaType::S32 => "S32",
        }
    }
}

/// A decoded warp-level MMA: D (m×n) = A (m×k) · B (k×n) + C (m×n).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MmaSpec {
    pub family: MmaFamily,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub a: MmaType,
    pub b: MmaType,
    /// Type of C and D.
    pub acc: MmaType,
    /// `.SAT` (integer: clamp to the S32 range instead of wrapping).
    pub sat: bool,
    /// `.SP`: 2:4 structured-sparse A (compressed to k/2 columns, with metadata).
    pub sparse: bool,
}

/// Shapes ptxas prints without separators (`16816`) or with `x` (`8x8x4`, sm_90 DMMA).
fn parse_shape(s: &str) -> Option<(u32, u32, u32)> {
    if s.contains('x') {
        let v: Vec<u32> = s.split('x').map(|p| p.parse().ok()).collect::<Option<_>>()?;
        return match v.as_slice() {
            [m, n, k] => Some((*m, *n, *k)),
            _ => None,
        };
    }
    Some(match s {
        "884" => (8, 8, 4),
        "8816" => (8, 8, 16),
        "8832" => (8, 8, 32),
        "88128" => (8, 8, 128),
        "1684" => (16, 8, 4),
        "1688" => (16, 8, 8),
        "16816" => (16, 8, 16),
        "16832" => (16, 8, 32),
        "16864" => (16, 8, 64),
        "168128" => (16, 8, 128),
        "168256" => (16, 8, 256),
        _ => return None,
    })
}

fn parse_type(s: &str) -> Option<MmaType> {
    Some(match s {
        "F16" => MmaType::F16,
        "BF16" => MmaType::Bf16,
        "TF32" => MmaType::Tf32,
        "F32" => MmaType::F32,
        "F64" => MmaType::F64,
        "S8" => MmaType::S8,
        "U8" => MmaType::U8,
        "S4" => MmaType::S4,
        "U4" => MmaType::U4,
        _ => return None,
    })
}

impl MmaSpec {
    /// The MMA an opcode names, or `None` for anything else (and for forms this model does
    /// not know, such as Volta's `HMMA.884.F32.F32.STEPn` quarter-MMAs of sm_75).
    pub fn parse(op: &Opcode) -> Option<MmaSpec> {
        let family = match op.base.as_str() {
            "HMMA" => MmaFamily::H,
            "IMMA" => MmaFamily::I,
            "DMMA" => MmaFamily::D,
            _ => return None,
        };
        let mut shape = None;
        let mut types = Vec::new();
        let mut sat = false;
        let mut sparse = false;
        for m in &op.mods {
            match m.as_str() {
                "SAT" => sat = true,
                "SP" => sparse = true,
                s => {
                    if let Some(t) = parse_type(s) {
                        types.push(t);
                    } else if shape.is_none() {
                        shape = Some(parse_shape(s)?);
                    } else {
                        return None;
                    }
                }
            }
        }
        let (m, n, k) = shape?;
        let (a, b, acc) = match (family, types.as_slice()) {
            // HMMA.<shape>.<acc>[.<input>]: inputs FP16 unless BF16 or TF32 is named.
            (MmaFamily::H, [acc]) if matches!(acc, MmaType::F16 | MmaType::F32) => {
                (MmaType::F16, MmaType::F16, *acc)
            }
            (MmaFamily::H, [MmaType::F32, t]) if matches!(t, MmaType::Bf16 | MmaType::Tf32) => {
                (*t, *t, MmaType::F32)
            }
            (MmaFamily::I, [a, b]) if a.bits() <= 8 && b.bits() == a.bits() => (*a, *b, MmaType::S32),
            (MmaFamily::D, []) | (MmaFamily::D, [MmaType::F64]) => (MmaType::F64, MmaType::F64, MmaType::F64),
            _ => return None,
        };
        if sat && family != MmaFamily::I {
            return None;
        }
        let spec = MmaSpec {
            family,
            m,
            n,
            k,
            a,
            b,
            acc,
            sat,
            sparse,
        };
        // Every fragment must fill whole registers.
        let whole = |rows: u32, cols: u32, bits: u32| {
            (rows * cols * bits).is_multiple_of(1024) && rows * cols * bits > 0
        };
        let a_cols = if sparse { k / 2 } else { k };
        if !whole(m, a_cols, a.bits()) || !whole(k, n, b.bits()) || !whole(m, n, acc.bits()) {
            return None;
        }
        Some(spec)
    }

    /// Columns of A as stored in registers (k, or k/2 when sparse).
    pub fn a_cols(&self) -> u32 {
        if self.sparse {
            self.k / 2
        } else {
            self.k
        }
    }
    /// Registers per thread of the A fragment.
    pub fn a_regs(&self) -> u8 {
        (self.m * self.a_cols() * self.a.bits() / 1024) as u8
    }
    /// Registers per thread of the B fragment.
    pub fn b_regs(&self) -> u8 {
        (self.k * self.n * self.b.bits() / 1024) as u8
    }
    /// Registers per thread of the C and D fragments.
    pub fn c_regs(&self) -> u8 {
        (self.m * self.n * self.acc.bits() / 1024) as u8
    }
    /// Multiply-adds of one instruction (m·n·k, dense-equivalent for sparse MMAs).
    pub fn macs(&self) -> u64 {
        self.m as u64 * self.n as u64 * self.k as u64
    }
    /// The shape as ptxas prints it (`16816`).
    pub fn shape_name(&self) -> String {
        format!("{}{}{}", self.m, self.n, self.k)
    }
}

/// `LDSM.16.M88[.2|.4]` / `LDSM.16.MT88[.n]` (`ldmatrix.m8n8.xN[.trans].b16`): the number of
/// 8×8 matrices (= destination registers) and whether they are transposed.
pub fn ldsm_matrices(op: &Opcode) -> Option<(u8, bool)> {
    if op.base != "LDSM" {
        return None;
    }
    let mut n = 1;
    let mut trans = None;
    let mut b16 = false;
    for m in &op.mods {
        match m.as_str() {
            "16" => b16 = true,
            "M88" => trans = Some(false),
            "MT88" => trans = Some(true),
            "2" => n = 2,
            "4" => n = 4,
            _ => return None,
        }
    }
    if !b16 {
        return None;
    }
    Some((n, trans?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> Option<MmaSpec> {
        MmaSpec::parse(&Opcode::parse(s))
    }

    #[test]
    fn register_counts_follow_the_ptx_fragments() {
        // (opcode, A, B, C) registers per thread, from the PTX ISA fragment figures and the
        // operands ptxas 13.5 gives these instructions.
        for (op, a, b, c) in [
            ("HMMA.16816.F32", 4, 2, 4),
            ("HMMA.16816.F16", 4, 2, 2),
            ("HMMA.1688.F32", 2, 1, 4),
            ("HMMA.1688.F16", 2, 1, 2),
            ("HMMA.16816.F32.BF16", 4, 2, 4),
            ("HMMA.1688.F32.BF16", 2, 1, 4),
            ("HMMA.1688.F32.TF32", 4, 2, 4),
            ("HMMA.1684.F32.TF32", 2, 1, 4),
            ("HMMA.SP.16832.F32", 4, 4, 4),
            ("IMMA.16832.S8.S8", 4, 2, 4),
            ("IMMA.16816.U8.S8", 2, 1, 4),
            ("IMMA.16832.S8.U8.SAT", 4, 2, 4),
            ("IMMA.16864.S4.S4", 4, 2, 4),
            ("IMMA.16832.U4.U4", 2, 1, 4),
            ("IMMA.8816.S8.S8", 1, 1, 2),
            ("IMMA.8832.S4.S4", 1, 1, 2),
            ("DMMA.884", 2, 2, 4),
            ("DMMA.8x8x4", 2, 2, 4),
        ] {
            let s = spec(op).unwrap_or_else(|| panic!("{op} not parsed"));
            assert_eq!((s.a_regs(), s.b_regs(), s.c_regs()), (a, b, c), "{op}");
        }
        let s = spec("IMMA.16832.S8.U8.SAT").expect("parsed");
        assert_eq!((s.a, s.b, s.sat), (MmaType::S8, MmaType::U8, true));
        assert_eq!(spec("HMMA.16816.F32.BF16").expect("parsed").a, MmaType::Bf16);
    }

    #[test]
    fn unknown_forms_are_not_guessed() {
        assert!(spec("HMMA.884.F32.F32.STEP0").is_none());
        assert!(spec("HMMA.16816.F32.S8").is_none());
        assert!(spec("IMMA.16832.S8.S4").is_none());
        assert!(spec("FFMA").is_none());
        assert_eq!(ldsm_matrices(&Opcode::parse("LDSM.16.M88.4")), Some((4, false)));
        assert_eq!(ldsm_matrices(&Opcode::parse("LDSM.16.MT88.2")), Some((2, true)));
        assert_eq!(ldsm_matrices(&Opcode::parse("LDSM.16.M88")), Some((1, false)));
        assert_eq!(ldsm_matrices(&Opcode::parse("LDSM.U8.M816.4")), None);
    }
}

/// A Hopper warpgroup MMA (`HGMMA`/`IGMMA`/`QGMMA`, PTX `wgmma.mma_async`): D (64×N) =
/// A (64×K) · B (K×N) + C, computed by the four warps of a warpgroup, warp `w` owning rows
/// `16w .. 16w + 16`. SASS: `HGMMA.64x128x16.F32[.BF16|.TF32] Rd, [Ra,] gdesc[URx], Rc[, UPp][, gsb0]`
/// (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"; SASS forms in
/// docs/validation/hopper-isa-facts.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GmmaSpec {
    pub n: u32,
    pub k: u32,
    pub a: GmmaType,
    pub b: GmmaType,
    /// `F32`, `F16` or `S32`.
    pub acc: MmaType,
    /// `.SAT` (integer).
    pub sat: bool,
}

/// Input element types of a warpgroup MMA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GmmaType {
    F16,
    Bf16,
    Tf32,
    E4m3,
    E5m2,
    S8,
    U8,
}

impl GmmaType {
    pub fn bytes(self) -> u32 {
        match self {
            GmmaType::F16 | GmmaType::Bf16 => 2,
            GmmaType::Tf32 => 4,
            _ => 1,
        }
    }
}

impl GmmaSpec {
    /// The warpgroup MMA an opcode names (`None` for other opcodes, sparse and binary forms).
    pub fn parse(op: &Opcode) -> Option<GmmaSpec> {
        let base = op.base.as_str();
        if !matches!(base, "HGMMA" | "IGMMA" | "QGMMA") {
            return None;
        }
        let mut shape = None;
        let mut types = Vec::new();
        let mut sat = false;
        for m in &op.mods {
            match m.as_str() {
                "SAT" => sat = true,
                "F16" | "F32" | "BF16" | "TF32" | "E4M3" | "E5M2" | "S8" | "U8" => types.push(m.as_str()),
                s => {
                    if shape.is_some() {
                        return None;
                    }
                    shape = Some(parse_shape(s)?);
                }
            }
        }
        let (m, n, k) = shape?;
        let ty = |s: &str| {
            Some(match s {
                "F16" => GmmaType::F16,
                "BF16" => GmmaType::Bf16,
                "TF32" => GmmaType::Tf32,
                "E4M3" => GmmaType::E4m3,
                "E5M2" => GmmaType::E5m2,
                "S8" => GmmaType::S8,
                "U8" => GmmaType::U8,
                _ => return None,
            })
        };
        let acc_of = |s: &str| match s {
            "F16" => Some(MmaType::F16),
            "F32" => Some(MmaType::F32),
            _ => None,
        };
        let (a, b, acc) = match (base, types.as_slice()) {
            ("HGMMA", [acc]) => (GmmaType::F16, GmmaType::F16, acc_of(acc)?),
            ("HGMMA", ["F32", t]) if matches!(*t, "BF16" | "TF32") => (ty(t)?, ty(t)?, MmaType::F32),
            ("QGMMA", [acc, a, b]) => (ty(a)?, ty(b)?, acc_of(acc)?),
            ("IGMMA", [a, b]) => (ty(a)?, ty(b)?, MmaType::S32),
            _ => return None,
        };
        if sat != (sat && base == "IGMMA") {
            return None;
        }
        let want_k = 32 / a.bytes();
        if m != 64 || k != want_k || n == 0 || n > 256 || n % 8 != 0 {
            return None;
        }
        Some(GmmaSpec { n, k, a, b, acc, sat })
    }

    /// Accumulator registers per thread (N/2 for 32-bit, N/4 for FP16 accumulators).
    pub fn d_regs(&self) -> u8 {
        if self.acc == MmaType::F16 {
            (self.n / 4) as u8
        } else {
            (self.n / 2) as u8
        }
    }

    /// Registers per thread of A from registers (the RS form): 16 rows × K of one warp.
    pub fn a_regs(&self) -> u8 {
        4
    }
}

/// Whether a warpgroup MMA takes A from registers (the RS form `HGMMA … Rd, Ra, gdesc[..], …`)
/// rather than from shared memory (`HGMMA … Rd, gdesc[..], …`).
pub fn gmma_a_in_registers(ins: &Instruction) -> bool {
    matches!(ins.operands.get(1).map(|o| &o.kind), Some(OperandKind::Reg(_)))
}

/// Whether an instruction names the warpgroup-MMA group scoreboard `gsb0` (an MMA that ends a
/// commit group, or `WARPGROUP.DEPBAR.LE gsb0, n`).
pub fn names_gmma_group(ins: &Instruction) -> bool {
    ins.operands
        .iter()
        .any(|o| matches!(&o.kind, OperandKind::Keyword(k) if k == "gsb0"))
}
