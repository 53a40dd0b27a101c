//! 2:4 structured-sparse MMA (`HMMA.SP`, `IMMA.SP`; PTX `mma.sp` / `mma.sp::ordered_metadata`,
//! PTX ISA 9.7.14.6 "Matrix multiply-accumulate operation using mma.sp instruction with
//! sparse matrix A").
//!
//! A (m×k) is stored compressed as m×k/2: each row keeps half of its elements, in order, in
//! the fragment layout of a dense A of k/2 columns (PTX ISA 9.7.14.6.2; for f16 m16n8k32 the
//! dense m16n8k16 A layout). The metadata says where each stored element came from.
//!
//! The model here, in *units*: 16-bit units for `HMMA` (an f16/bf16 element is one unit, a tf32
//! element two: its metadata pair is 0b0100 or 0b1110, "1:2" sparsity), 8-bit units for `IMMA`
//! (an s8/u8 element is one unit, two s4/u4 elements share one: "4:8" sparsity on nibbles).
//! Every chunk of 4 consecutive units of a row keeps 2; the row's stored units `u = 0, 1, …`
//! each have a 2-bit index, the position of the unit in its chunk `u / 2`, so stored unit `u`
//! goes to dense unit `4·(u / 2) + index`.
//!
//! Which thread holds which index (the metadata operand `Re`): a row with `U` stored units has
//! `2U` bits of metadata; rows `g` and `g + 8` (`g` = groupID = lane / 4) are described by
//! `T = U / 8` threads of the quad `4g … 4g + 3`, namely threads `T·selector + j`, j < T
//! (the sparsity selector picks which; its range is 0 … 4/T − 1). Thread `j` holds the
//! indices of stored units `8j … 8j + 7`: row `g`'s in bits 0–15 (unit `u` at bits
//! `2(u mod 8)`), row `g + 8`'s in bits 16–31. T = 1 for f16 m16n8k16 and tf32 m16n8k8
//! (selector 0–3), 2 for f16/bf16 m16n8k32, tf32 m16n8k16, s8 m16n8k32, s4 m16n8k64
//! (selector 0–1), 4 for s8 m16n8k64 and s4 m16n8k128 (selector 0): the selector ranges of
//! the PTX ISA. The layout for T = 1 and T = 2 is the PTX ISA's metadata figures for f16 as
//! production compilers use them (XLA's sparse-dot lowering loads, for m16n8k32 selector 0,
//! row g's 16-bit word of K-columns 16j … 16j + 15 into the low half of thread j's register
//! and row g + 8's into the high half); T = 4 extends the same rule (docs/model.md).
//!
//! Invalid metadata (two indices equal in a chunk, PTX "undefined behavior"): the later stored
//! element overwrites the earlier one.

use sassim_isa::{MmaFamily, MmaSpec};

/// Bits of one metadata unit.
fn unit_bits(spec: &MmaSpec) -> u32 {
    if spec.family == MmaFamily::I {
        8
    } else {
        16
    }
}

/// Stored units per row of the compressed A.
fn stored_units(spec: &MmaSpec) -> u32 {
    spec.a_cols() * spec.a.bits() / unit_bits(spec)
}

/// Metadata threads per quad (T), or `None` if the shape has no sparse form.
fn meta_threads(spec: &MmaSpec) -> Option<u32> {
    let u = stored_units(spec);
    let t = u / 8;
    (spec.sparse
        && spec.m == 16
        && spec.family != MmaFamily::D
        && u.is_multiple_of(8)
        && matches!(t, 1 | 2 | 4))
    .then_some(t)
}

/// `Some(())` if the sparse MMA `spec` takes sparsity selector `selector`.
pub fn check(spec: &MmaSpec, selector: u8) -> Option<()> {
    let t = meta_threads(spec)?;
    (u32::from(selector) < 4 / t).then_some(())
}

/// Dense column of the element stored at (row `r`, compressed column `c`) of A.
/// `meta`: every lane's metadata register. `spec` must have passed [`check`].
pub fn dense_col(spec: &MmaSpec, meta: &[u32; 32], selector: u8, r: u32, c: u32) -> u32 {
    let t = meta_threads(spec).unwrap_or(1);
    let (bits, unit) = (spec.a.bits(), unit_bits(spec));
    let at = c * bits;
    let (u, within) = (at / unit, at % unit);
    let (g, half) = (r % 8, r / 8);
    let lane = 4 * g + t * u32::from(selector) + u / 8;
    let index = (meta[lane as usize & 31] >> (2 * (u % 8) + 16 * half)) & 3;
    ((4 * (u / 2) + index) * unit + within) / bits
}

#[cfg(test)]
mod tests {
    use super::*;
    use sassim_isa::Opcode;

    fn spec(s: &str) -> MmaSpec {
        MmaSpec::parse(&Opcode::parse(s)).expect("known MMA")
    }

    #[test]
    fn selector_ranges_follow_the_ptx_isa() {
        for (op, max) in [
            ("HMMA.SP.16816.F32", 3),
            ("HMMA.SP.16832.F32", 1),
            ("HMMA.SP.16832.F16", 1),
            ("HMMA.SP.16832.F32.BF16", 1),
            ("HMMA.SP.1688.F32.TF32", 3),
            ("HMMA.SP.16816.F32.TF32", 1),
            ("IMMA.SP.16832.S8.S8", 1),
            ("IMMA.SP.16864.S8.U8", 0),
            ("IMMA.SP.16864.S4.S4", 1),
            ("IMMA.SP.168128.U4.U4", 0),
        ] {
            let s = spec(op);
            assert!(check(&s, max).is_some(), "{op} selector {max}");
            assert!(check(&s, max + 1).is_none(), "{op} selector {}", max + 1);
        }
        assert!(check(&spec("HMMA.16816.F32"), 0).is_none());
    }

    #[test]
    fn metadata_places_elements_as_the_ptx_isa_figures() {
        // f16 m16n8k16, selector 2: thread 4g + 2 holds row g (bits 0-15) and row g + 8
        // (bits 16-31). Row 1 chunk 0 keeps columns 1 and 3 (0b11_01), chunk 3 keeps 0 and 2
        // (0b10_00 at bits 12-15); row 9 chunk 1 keeps 2 and 3 (0b11_10 at bits 20-23).
        let s = spec("HMMA.SP.16816.F32");
        let mut meta = [0u32; 32];
        meta[4 + 2] = 0b1101 | 0b1000 << 12 | 0b1110 << 20;
        assert_eq!(dense_col(&s, &meta, 2, 1, 0), 1);
        assert_eq!(dense_col(&s, &meta, 2, 1, 1), 3);
        assert_eq!(dense_col(&s, &meta, 2, 1, 6), 12);
        assert_eq!(dense_col(&s, &meta, 2, 1, 7), 14);
        assert_eq!(dense_col(&s, &meta, 2, 9, 2), 6);
        assert_eq!(dense_col(&s, &meta, 2, 9, 3), 7);
        // f16 m16n8k32, selector 1: threads 4g + 2 (K 0-15) and 4g + 3 (K 16-31).
        let s = spec("HMMA.SP.16832.F32");
        let mut meta = [0u32; 32];
        meta[3 * 4 + 3] = 0b1001 << 16; // row 11, stored units 8, 9: chunk 4 keeps 1 and 2
        assert_eq!(dense_col(&s, &meta, 1, 11, 8), 17);
        assert_eq!(dense_col(&s, &meta, 1, 11, 9), 18);
        // tf32 m16n8k8: 0b0100 keeps element 0 of a pair, 0b1110 element 1.
        let s = spec("HMMA.SP.1688.F32.TF32");
        let mut meta = [0u32; 32];
        meta[0] = 0b0100 | 0b1110 << 4;
        assert_eq!(dense_col(&s, &meta, 0, 0, 0), 0);
        assert_eq!(dense_col(&s, &meta, 0, 0, 1), 3);
        // s4 m16n8k64: nibble pairs move together (unit = byte).
        let s = spec("IMMA.SP.16864.S4.S4");
        let mut meta = [0u32; 32];
        meta[0] = 0b1110; // row 0, stored bytes 0, 1 = dense bytes 2, 3
        assert_eq!(dense_col(&s, &meta, 0, 0, 0), 4);
        assert_eq!(dense_col(&s, &meta, 0, 0, 1), 5);
        assert_eq!(dense_col(&s, &meta, 0, 0, 3), 7);
    }
}
