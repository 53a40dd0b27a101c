//! `IDP` (PTX `dp4a` / `dp2a`): integer dot products accumulated into 32 bits.
//!
//! PTX ISA, "dp4a": `d = c + Σ_{i<4} ext(a.byte[i]) · ext(b.byte[i])`; "dp2a.lo/.hi":
//! `d = c + Σ_{i<2} ext(a.half[i]) · ext(b.byte[2·hi + i])`, each operand sign- or
//! zero-extended by its type, the sum wrapping modulo 2^32. SASS as ptxas 13.5 prints it
//! (sm_75/86/90): `IDP.4A.<a>.<b> Rd, Ra, Rb, Rc` with `<a>`, `<b>` ∈ {S8, U8} (`dp4a.s32.u32` →
//! `IDP.4A.S8.U8`), `IDP.2A.{LO,HI}.<a>.<b>` with `<a>` ∈ {S16, U16}, `<b>` ∈ {S8, U8}.

/// A decoded `IDP`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Idp {
    /// `2A` (16-bit × 8-bit pairs) rather than `4A`.
    pub two: bool,
    /// `2A.HI`: B's upper two bytes.
    pub hi: bool,
    pub a_signed: bool,
    pub b_signed: bool,
}

/// Decode the modifiers of `IDP`; `None` for forms ptxas does not print.
pub fn decode(mods: &[&str]) -> Option<Idp> {
    let (two, hi, types) = match mods {
        ["4A", t @ ..] => (false, false, t),
        ["2A", "LO", t @ ..] => (true, false, t),
        ["2A", "HI", t @ ..] => (true, true, t),
        _ => return None,
    };
    let signed = |t: &str, bits: &str| match t.strip_suffix(bits)? {
        "S" => Some(true),
        "U" => Some(false),
        _ => None,
    };
    let [a, b] = types else { return None };
    Some(Idp {
        two,
        hi,
        a_signed: signed(a, if two { "16" } else { "8" })?,
        b_signed: signed(b, "8")?,
    })
}

impl Idp {
    /// `c + a · b` of the instruction, modulo 2^32.
    pub fn dot(self, a: u32, b: u32, c: u32) -> u32 {
        let byte = |v: u32, i: u32, s: bool| {
            let x = (v >> (8 * i)) & 0xff;
            if s {
                x as u8 as i8 as i32
            } else {
                x as i32
            }
        };
        let mut acc = c as i32;
        if self.two {
            for i in 0..2 {
                let h = (a >> (16 * i)) & 0xffff;
                let x = if self.a_signed {
                    h as u16 as i16 as i32
                } else {
                    h as i32
                };
                let y = byte(b, 2 * u32::from(self.hi) + i, self.b_signed);
                acc = acc.wrapping_add(x.wrapping_mul(y));
            }
        } else {
            for i in 0..4 {
                let p = byte(a, i, self.a_signed).wrapping_mul(byte(b, i, self.b_signed));
                acc = acc.wrapping_add(p);
            }
        }
        acc as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_ptxas_prints_decode() {
        let d = |s: &str| decode(&s.split('.').collect::<Vec<_>>());
        assert_eq!(
            d("4A.S8.U8"),
            Some(Idp {
                two: false,
                hi: false,
                a_signed: true,
                b_signed: false
            })
        );
        assert_eq!(
            d("2A.HI.U16.U8").map(|i| (i.two, i.hi, i.a_signed)),
            Some((true, true, false))
        );
        assert_eq!(d("2A.LO.S16.S8").map(|i| (i.hi, i.b_signed)), Some((false, true)));
        assert_eq!(d("4A.S16.S8"), None);
        assert_eq!(d("4A.S8"), None);
        assert_eq!(d("2A.S16.S8"), None);
    }

    /// Against a host evaluation of the PTX definition, over sign and wrap corner cases.
    #[test]
    fn dot_products_follow_the_ptx_definition() {
        let s8 = decode(&["4A", "S8", "S8"]).unwrap();
        // (-1)·(-1) + 127·(-128) + 0 + (-128)·(-128) + 5 = 1 − 16256 + 16384 + 5.
        let a = u32::from_le_bytes([0xff, 0x7f, 0x00, 0x80]);
        let b = u32::from_le_bytes([0xff, 0x80, 0x33, 0x80]);
        assert_eq!(s8.dot(a, b, 5) as i32, 1 - 16256 + 16384 + 5);
        let u8s = decode(&["4A", "U8", "U8"]).unwrap();
        assert_eq!(u8s.dot(a, b, 0), 255 * 255 + 127 * 128 + 128 * 128);
        let su = decode(&["4A", "S8", "U8"]).unwrap();
        assert_eq!(su.dot(a, b, 0) as i32, -255 + 127 * 128 - 128 * 128);
        // Wraps modulo 2^32.
        assert_eq!(
            u8s.dot(u32::MAX, u32::MAX, u32::MAX - 10),
            (u32::MAX - 10).wrapping_add(4 * 255 * 255)
        );
        let lo = decode(&["2A", "LO", "S16", "S8"]).unwrap();
        let hi = decode(&["2A", "HI", "S16", "S8"]).unwrap();
        let a2 = 0x8000_0003u32; // halves 3, -32768
        let b2 = u32::from_le_bytes([2, 0xff, 0xfe, 1]); // bytes 2, -1, -2, 1
        assert_eq!(lo.dot(a2, b2, 7) as i32, 7 + 3 * 2 + 32768);
        assert_eq!(hi.dot(a2, b2, 7) as i32, 7 + 3 * -2 - 32768);
        let hu = decode(&["2A", "HI", "U16", "U8"]).unwrap();
        assert_eq!(hu.dot(a2, b2, 0), 3 * 254 + 32768);
    }
}
