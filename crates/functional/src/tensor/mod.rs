//! Tensor-core semantics: warp-level MMA (`HMMA`, `IMMA`, `DMMA`), `LDSM` (`ldmatrix`) and
//! `MOVM` (`movmatrix`). The fragment layouts are in [`layout`]; this module decodes the
//! opcodes and computes `D = A·B + C` for a whole warp from its registers. The engine's
//! per-instruction execution (register reads, shared-memory reads, writes) is in
//! `exec/mma.rs`.
//!
//! Arithmetic (NVIDIA documents no rounding behaviour of the tensor cores; the choices are
//! stated in `docs/model.md`, "Tensor cores"):
//! * FP16, BF16 and TF32 products are exact (an FP64 holds them: at most 11 × 11 significand
//!   bits); TF32 inputs use the top 19 bits of their register (the low 13 mantissa bits are
//!   ignored, i.e. truncated). Each element of D is `C + Σ_k A·B` summed in FP64 in the order
//!   C, k = 0, 1, … and rounded once, to nearest even, to the accumulator type (FP32 or FP16).
//!   A NaN result is the canonical NaN (`0x7fffffff`, `0x7fff`).
//! * FP64 (`DMMA`): a chain of IEEE fused multiply-adds in k order, `d = fma(a_k, b_k, d)`
//!   starting from `d = C`, each rounded to nearest even.
//! * Integer (`IMMA`): exact; the S32 result wraps modulo 2^32, or with `.SAT` is clamped to
//!   the S32 range (PTX `.satfinite`).
//!
//! 2:4-sparse MMAs (`HMMA.SP`, `IMMA.SP`, PTX `mma.sp`) are expanded to the dense product
//! first: [`sparse`] places each stored element of the compressed A at the column its
//! metadata names, and the dense arithmetic above does the rest.

pub mod layout;
pub mod sparse;

use layout::{coord, elements, slot, Role};
use sassim_isa::{ldsm_matrices, Imm, Instruction, MmaFamily, MmaSpec, MmaType, OperandKind};

/// A tensor-core instruction, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorOp {
    /// `HMMA`/`IMMA`/`DMMA Rd, Ra, Rb, Rc`.
    Mma(MmaSpec),
    /// `HMMA.SP`/`IMMA.SP Rd, Ra, Rb, Rc, Re, selector`: A is 2:4 compressed, `Re` holds the
    /// metadata of the threads the sparsity selector names (see [`sparse`]).
    SparseMma { spec: MmaSpec, selector: u8 },
    /// `LDSM.16.M88[.n] Rd, [addr]` / `.MT88` (transposed): `matrices` 8×8 b16 matrices whose
    /// row addresses come from threads 0–7, 8–15, …
    Ldsm { matrices: u8, trans: bool },
    /// `MOVM.16.MT88 Rd, Ra`: transpose an 8×8 b16 matrix held in the fragment layout.
    Movm,
}

/// Decode a tensor-core opcode; `None` for forms the engine does not implement (reported as
/// unsupported with the opcode): Turing's `HMMA.884…STEPn`, `BMMA`, `MOVM` other than
/// `.16.MT88`, and a sparse MMA whose selector is out of its shape's range.
pub fn decode(ins: &Instruction) -> Option<TensorOp> {
    match ins.opcode.base.as_str() {
        "HMMA" | "IMMA" | "DMMA" => {
            let s = MmaSpec::parse(&ins.opcode)?;
            if s.sparse {
                if ins.operands.len() != 6 {
                    return None;
                }
                let selector = match ins.operands[5].kind {
                    OperandKind::Imm(Imm::Int(v)) => u8::try_from(v).ok()?,
                    _ => return None,
                };
                sparse::check(&s, selector)?;
                return Some(TensorOp::SparseMma { spec: s, selector });
            }
            if ins.operands.len() != 4 {
                return None;
            }
            Some(TensorOp::Mma(s))
        }
        "LDSM" => {
            let (matrices, trans) = ldsm_matrices(&ins.opcode)?;
            Some(TensorOp::Ldsm { matrices, trans })
        }
        "MOVM" => (ins.opcode.mods == ["16", "MT88"]).then_some(TensorOp::Movm),
        _ => None,
    }
}

/// Largest fragment of one operand in registers (A of m16n8k64, C of m16n8 FP64…).
pub const MAX_FRAG_REGS: usize = 4;

/// Registers of one operand for the whole warp: `[register][lane]`.
pub type Frag = [[u32; 32]; MAX_FRAG_REGS];

fn element(ty: MmaType, regs: &Frag, lane: usize, e: u32) -> f64 {
    let (r, bit) = slot(ty.bits(), e);
    let r = r as usize;
    let w = regs[r][lane];
    match ty {
        MmaType::F16 => half::f16::from_bits((w >> bit) as u16).to_f64(),
        MmaType::Bf16 => f32::from_bits((w >> bit) << 16) as f64,
        MmaType::Tf32 => f32::from_bits(w & 0xffff_e000) as f64,
        MmaType::F32 => f32::from_bits(w) as f64,
        MmaType::F64 => f64::from_bits(w as u64 | (regs[r + 1][lane] as u64) << 32),
        // Integers: exact in an f64 (|value| < 2^31).
        MmaType::S8 => (w >> bit) as u8 as i8 as f64,
        MmaType::U8 => (w >> bit) as u8 as f64,
        MmaType::S4 => ((((w >> bit) & 0xf) as i32) << 28 >> 28) as f64,
        MmaType::U4 => ((w >> bit) & 0xf) as f64,
        MmaType::S32 => w as i32 as f64,
    }
}

fn int_element(ty: MmaType, regs: &Frag, lane: usize, e: u32) -> i64 {
    let (r, bit) = slot(ty.bits(), e);
    let w = regs[r as usize][lane];
    match ty {
        MmaType::S8 => (w >> bit) as u8 as i8 as i64,
        MmaType::U8 => (w >> bit) as u8 as i64,
        MmaType::S4 => ((((w >> bit) & 0xf) as i32) << 28 >> 28) as i64,
        MmaType::U4 => ((w >> bit) & 0xf) as i64,
        _ => w as i32 as i64,
    }
}

/// Largest matrix of one operand (the dense A of a sparse m16n8k128: 16 × 128 elements).
const MAX_ELEMS: usize = 2048;

/// `D = A·B + C` for a whole warp. `c` is all zeros for `RZ`. Returns D's registers.
/// `meta`: for a sparse MMA, the metadata register of every lane and the sparsity selector.
pub fn mma(spec: &MmaSpec, a: &Frag, b: &Frag, c: &Frag, meta: Option<(&[u32; 32], u8)>) -> Frag {
    let (n, k) = (spec.n as usize, spec.k as usize);
    let mut out: Frag = [[0; 32]; MAX_FRAG_REGS];
    if spec.family == MmaFamily::I {
        let mut am = [0i64; MAX_ELEMS];
        let mut bm = [0i64; MAX_ELEMS];
        let mut cm = [0i64; 128];
        gather_a(spec, meta, &mut am, |l, e| int_element(spec.a, a, l, e));
        gather(spec, Role::B, n, &mut bm, |l, e| int_element(spec.b, b, l, e));
        gather(spec, Role::C, n, &mut cm, |l, e| {
            int_element(MmaType::S32, c, l, e)
        });
        for lane in 0..32u32 {
            for e in 0..elements(spec, Role::C) {
                let (i, j) = coord(spec, Role::C, lane, e);
                let (i, j) = (i as usize, j as usize);
                let mut s = cm[i * n + j];
                for kk in 0..k {
                    s += am[i * k + kk] * bm[kk * n + j];
                }
                let v = if spec.sat {
                    s.clamp(i32::MIN as i64, i32::MAX as i64) as i32
                } else {
                    s as i32
                };
                out[e as usize][lane as usize] = v as u32;
            }
        }
        return out;
    }
    let mut am = [0f64; MAX_ELEMS];
    let mut bm = [0f64; MAX_ELEMS];
    let mut cm = [0f64; 128];
    gather_a(spec, meta, &mut am, |l, e| element(spec.a, a, l, e));
    gather(spec, Role::B, n, &mut bm, |l, e| element(spec.b, b, l, e));
    gather(spec, Role::C, n, &mut cm, |l, e| element(spec.acc, c, l, e));
    for lane in 0..32u32 {
        for e in 0..elements(spec, Role::C) {
            let (i, j) = coord(spec, Role::C, lane, e);
            let (i, j) = (i as usize, j as usize);
            let mut s = cm[i * n + j];
            if spec.family == MmaFamily::D {
                for kk in 0..k {
                    s = am[i * k + kk].mul_add(bm[kk * n + j], s);
                }
            } else {
                for kk in 0..k {
                    s += am[i * k + kk] * bm[kk * n + j];
                }
            }
            let l = lane as usize;
            match spec.acc {
                MmaType::F64 => {
                    let bits = s.to_bits();
                    out[2 * e as usize][l] = bits as u32;
                    out[2 * e as usize + 1][l] = (bits >> 32) as u32;
                }
                MmaType::F16 => {
                    let h = if s.is_nan() {
                        0x7fff
                    } else {
                        half::f16::from_f64(s).to_bits()
                    };
                    let (r, bit) = slot(16, e);
                    out[r as usize][l] |= (h as u32) << bit;
                }
                _ => {
                    out[e as usize][l] = if s.is_nan() {
                        0x7fff_ffff
                    } else {
                        (s as f32).to_bits()
                    };
                }
            }
        }
    }
    out
}

/// Spread a fragment into a row-major matrix of `cols` columns.
fn gather<T: Copy>(spec: &MmaSpec, role: Role, cols: usize, dst: &mut [T], get: impl Fn(usize, u32) -> T) {
    for lane in 0..32u32 {
        for e in 0..elements(spec, role) {
            let (r, c) = coord(spec, role, lane, e);
            dst[r as usize * cols + c as usize] = get(lane as usize, e);
        }
    }
}

/// Spread the A fragment into the dense row-major m×k matrix (`dst` zeroed): a dense A as is,
/// a compressed (sparse) A's stored elements at the columns their metadata names, zeros
/// elsewhere.
fn gather_a<T: Copy>(
    spec: &MmaSpec,
    meta: Option<(&[u32; 32], u8)>,
    dst: &mut [T],
    get: impl Fn(usize, u32) -> T,
) {
    let k = spec.k as usize;
    for lane in 0..32u32 {
        for e in 0..elements(spec, Role::A) {
            let (r, c) = coord(spec, Role::A, lane, e);
            let col = match meta {
                Some((m, sel)) => sparse::dense_col(spec, m, sel, r, c),
                None => c,
            };
            dst[r as usize * k + col as usize] = get(lane as usize, e);
        }
    }
}

#[cfg(test)]
mod tests;
