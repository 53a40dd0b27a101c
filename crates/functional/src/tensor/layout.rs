//! Register fragment layouts of the warp-level MMA instructions (PTX ISA 9.7.14.5,
//! "Matrix Fragments for mma.m16n8k*" / "mma.m8n8k*"): which matrix element each thread
//! holds in which register.
//!
//! Notation of the PTX ISA: `groupID = lane >> 2`, `threadID_in_group = lane % 4`. A thread's
//! fragment is a list of elements `e = 0, 1, …`; element `e` of a type of `b` bits sits in
//! register `e·b / 32` of the operand, at bit `(e·b) mod 32` (the lowest element in the lowest
//! bits, as `.f16x2` and packed `.s8`/`.s4` registers hold them). With `epr = 32 / b` elements
//! per register, `r = e / epr` and `i = e mod epr`:
//!
//! | operand | shape | row | column |
//! |---|---|---|---|
//! | A (row-major, m = 16) | all but f64 | `groupID + 8·(r mod 2)` | `threadID_in_group·epr + i + 4·epr·(r / 2)` |
//! | A (m = 8) | m8n8k16 s8, m8n8k32 s4 | `groupID` | `threadID_in_group·epr + i` |
//! | B (column-major) | all but f64 | `threadID_in_group·epr + i + 4·epr·r` | `groupID` |
//! | C, D (m = 16) | f32, s32, f16 | `groupID + 8·(e / 2)` | `2·threadID_in_group + e mod 2` |
//! | C, D (m = 8) | s32 | `groupID` | `2·threadID_in_group + e` |
//! | A (m8n8k4 f64) | | `groupID` | `threadID_in_group` |
//! | B (m8n8k4 f64) | | `threadID_in_group` | `groupID` |
//! | C, D (m8n8k4 f64) | | `groupID` | `2·threadID_in_group + e` |
//!
//! These reproduce every figure of the PTX ISA for the shapes ptxas emits as single SASS
//! instructions: m16n8k16 and m16n8k8 (f16, bf16: A elements a0,a1 / a2,a3 / a4,a5 / a6,a7 at
//! rows g, g+8, g, g+8), m16n8k8 and m16n8k4 tf32 (a0 (g, t), a1 (g+8, t), a2 (g, t+4),
//! a3 (g+8, t+4)), m16n8k32 / m16n8k16 s8 and u8, m16n8k64 / m16n8k32 s4 and u4, m8n8k16 s8,
//! m8n8k32 s4 and m8n8k4 f64; the A of a 2:4-sparse m16n8k32 is laid out as a dense m16n8k16 A.
//! Unit tests below pin the table against the PTX ISA figures element by element.

use sassim_isa::{MmaSpec, MmaType};

/// Which operand of `D = A·B + C`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    A,
    B,
    /// C and D share a layout.
    C,
}

/// Elements of one thread's fragment of `role`.
pub fn elements(spec: &MmaSpec, role: Role) -> u32 {
    let (regs, ty) = match role {
        Role::A => (spec.a_regs(), spec.a),
        Role::B => (spec.b_regs(), spec.b),
        Role::C => (spec.c_regs(), spec.acc),
    };
    regs as u32 * 32 / ty.bits()
}

/// (row, column) of element `e` of thread `lane`'s fragment of `role`.
pub fn coord(spec: &MmaSpec, role: Role, lane: u32, e: u32) -> (u32, u32) {
    let g = lane >> 2;
    let t = lane & 3;
    if spec.a == MmaType::F64 {
        return match role {
            Role::A => (g, t),
            Role::B => (t, g),
            Role::C => (g, 2 * t + e),
        };
    }
    match role {
        Role::A => {
            let epr = 32 / spec.a.bits();
            let (r, i) = (e / epr, e % epr);
            if spec.m == 8 {
                (g, t * epr + i + 4 * epr * r)
            } else {
                (g + 8 * (r % 2), t * epr + i + 4 * epr * (r / 2))
            }
        }
        Role::B => {
            let epr = 32 / spec.b.bits();
            let (r, i) = (e / epr, e % epr);
            (t * epr + i + 4 * epr * r, g)
        }
        Role::C => {
            if spec.m == 8 {
                (g, 2 * t + e)
            } else {
                (g + 8 * (e / 2), 2 * t + e % 2)
            }
        }
    }
}

/// Register (offset within the operand) and bit position of element `e` of an operand of
/// `bits`-bit elements.
pub fn slot(bits: u32, e: u32) -> (u32, u32) {
    let at = e * bits;
    (at / 32, at % 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sassim_isa::Opcode;

    fn spec(s: &str) -> MmaSpec {
        MmaSpec::parse(&Opcode::parse(s)).expect("known MMA")
    }

    /// Every element of every matrix is held by exactly one (thread, element).
    fn covers_once(s: &MmaSpec, role: Role, rows: u32, cols: u32) {
        let mut seen = vec![0u32; (rows * cols) as usize];
        for lane in 0..32 {
            for e in 0..elements(s, role) {
                let (r, c) = coord(s, role, lane, e);
                assert!(
                    r < rows && c < cols,
                    "{s:?} {role:?} lane {lane} e {e}: ({r}, {c})"
                );
                seen[(r * cols + c) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{s:?} {role:?} not a bijection");
    }

    #[test]
    fn every_layout_is_a_bijection() {
        for op in [
            "HMMA.16816.F32",
            "HMMA.1688.F16",
            "HMMA.16816.F32.BF16",
            "HMMA.1688.F32.TF32",
            "HMMA.1684.F32.TF32",
            "IMMA.16832.S8.S8",
            "IMMA.16816.U8.S8",
            "IMMA.16864.S4.S4",
            "IMMA.16832.U4.U4",
            "IMMA.8816.S8.S8",
            "IMMA.8832.S4.S4",
            "DMMA.884",
        ] {
            let s = spec(op);
            covers_once(&s, Role::A, s.m, s.a_cols());
            covers_once(&s, Role::B, s.k, s.n);
            covers_once(&s, Role::C, s.m, s.n);
        }
    }

    #[test]
    fn layouts_match_the_ptx_isa_figures() {
        // m16n8k16 .f16 A: lane 5 (groupID 1, threadID_in_group 1): a0,a1 = (1, 2), (1, 3);
        // a2,a3 = (9, 2), (9, 3); a4,a5 = (1, 10), (1, 11); a6,a7 = (9, 10), (9, 11).
        let s = spec("HMMA.16816.F32");
        let a: Vec<_> = (0..8).map(|e| coord(&s, Role::A, 5, e)).collect();
        assert_eq!(
            a,
            [(1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (1, 11), (9, 10), (9, 11)]
        );
        // B: b0,b1 = (2, 1), (3, 1); b2,b3 = (10, 1), (11, 1).
        let b: Vec<_> = (0..4).map(|e| coord(&s, Role::B, 5, e)).collect();
        assert_eq!(b, [(2, 1), (3, 1), (10, 1), (11, 1)]);
        // C: c0,c1 = (1, 2), (1, 3); c2,c3 = (9, 2), (9, 3).
        let c: Vec<_> = (0..4).map(|e| coord(&s, Role::C, 5, e)).collect();
        assert_eq!(c, [(1, 2), (1, 3), (9, 2), (9, 3)]);
        // m16n8k8 .tf32 A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); B: b0 (t, g), b1 (t+4, g).
        let s = spec("HMMA.1688.F32.TF32");
        let a: Vec<_> = (0..4).map(|e| coord(&s, Role::A, 6, e)).collect();
        assert_eq!(a, [(1, 2), (9, 2), (1, 6), (9, 6)]);
        let b: Vec<_> = (0..2).map(|e| coord(&s, Role::B, 6, e)).collect();
        assert_eq!(b, [(2, 1), (6, 1)]);
        // m16n8k32 .s8 A: a0..a3 (g, 4t..4t+3), a4..a7 (g+8, ...), a8..a11 (g, 4t+16...).
        let s = spec("IMMA.16832.S8.S8");
        assert_eq!(coord(&s, Role::A, 7, 0), (1, 12));
        assert_eq!(coord(&s, Role::A, 7, 5), (9, 13));
        assert_eq!(coord(&s, Role::A, 7, 10), (1, 30));
        assert_eq!(coord(&s, Role::B, 7, 6), (30, 1));
        // m8n8k16 .s8: A a_i (g, 4t+i), B b_i (4t+i, g), C c_i (g, 2t+i).
        let s = spec("IMMA.8816.S8.S8");
        assert_eq!(coord(&s, Role::A, 9, 3), (2, 7));
        assert_eq!(coord(&s, Role::B, 9, 3), (7, 2));
        assert_eq!(coord(&s, Role::C, 9, 1), (2, 3));
        // m16n8k64 .s4 A: a0..a7 (g, 8t..8t+7), a8..a15 (g+8, ...), a16..a23 (g, 8t+32...).
        let s = spec("IMMA.16864.S4.S4");
        assert_eq!(coord(&s, Role::A, 3, 17), (0, 57));
        assert_eq!(coord(&s, Role::B, 3, 9), (57, 0));
        // m8n8k4 .f64: A (g, t), B (t, g), C (g, 2t + i).
        let s = spec("DMMA.884");
        assert_eq!(coord(&s, Role::A, 13, 0), (3, 1));
        assert_eq!(coord(&s, Role::B, 13, 0), (1, 3));
        assert_eq!(coord(&s, Role::C, 13, 1), (3, 3));
    }
}
