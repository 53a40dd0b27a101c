//! A set of architectural registers as fixed-size bit vectors: regular registers R0–R254,
//! uniform registers UR0–UR62, predicates P0–P6, uniform predicates UP0–UP6 and
//! convergence-barrier registers B0–B15. The zero registers (RZ, URZ) and the true
//! predicates (PT, UPT) are never members: they hold no state.

use sassim_isa::ArchReg;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A set of [`ArchReg`]s (48 bytes, `Copy`, no allocation).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct RegSet {
    r: [u64; 4],
    ur: u64,
    p: u8,
    up: u8,
    b: u16,
}

/// The 256-bit mask of regular registers (bit `i` = R`i`), as the hardware's bit-vectors
/// (LTRF's prefetch and liveness bit-vectors) hold it.
pub type RMask = [u64; 4];

impl RegSet {
    pub const EMPTY: RegSet = RegSet {
        r: [0; 4],
        ur: 0,
        p: 0,
        up: 0,
        b: 0,
    };

    /// Every register that can hold state.
    pub fn all() -> RegSet {
        RegSet {
            r: [u64::MAX, u64::MAX, u64::MAX, u64::MAX >> 1],
            ur: u64::MAX >> 1,
            p: 0x7f,
            up: 0x7f,
            b: u16::MAX,
        }
    }

    /// Every regular register R0..R(n-1) (n at most 255).
    pub fn regular_below(n: u32) -> RegSet {
        let mut s = RegSet::EMPTY;
        for i in 0..n.min(255) {
            s.r[i as usize / 64] |= 1 << (i % 64);
        }
        s
    }

    /// A set of regular registers from a 256-bit mask (bit 255, RZ, is ignored).
    pub fn from_rmask(m: RMask) -> RegSet {
        let mut s = RegSet {
            r: m,
            ..RegSet::EMPTY
        };
        s.r[3] &= u64::MAX >> 1;
        s
    }

    fn slot(&self, r: ArchReg) -> Option<(u8, u64)> {
        // (word index 0..=3 for R, 4 UR, 5 P, 6 UP, 7 B; bit)
        match r {
            ArchReg::R(i) if i != 255 => Some((i / 64, 1 << (i % 64))),
            ArchReg::UR(i) if i < 63 => Some((4, 1 << i)),
            ArchReg::P(i) if i < 7 => Some((5, 1 << i)),
            ArchReg::UP(i) if i < 7 => Some((6, 1 << i)),
            ArchReg::B(i) if i < 16 => Some((7, 1 << i)),
            _ => None,
        }
    }

    fn word_mut(&mut self, w: u8) -> WordMut<'_> {
        match w {
            0..=3 => WordMut::W64(&mut self.r[w as usize]),
            4 => WordMut::W64(&mut self.ur),
            5 => WordMut::W8(&mut self.p),
            6 => WordMut::W8(&mut self.up),
            _ => WordMut::W16(&mut self.b),
        }
    }

    fn word(&self, w: u8) -> u64 {
        match w {
            0..=3 => self.r[w as usize],
            4 => self.ur,
            5 => self.p as u64,
            6 => self.up as u64,
            _ => self.b as u64,
        }
    }

    /// Adds `r`; returns whether it was new. Registers without state are ignored.
    pub fn insert(&mut self, r: ArchReg) -> bool {
        let Some((w, bit)) = self.slot(r) else {
            return false;
        };
        let new = self.word(w) & bit == 0;
        match self.word_mut(w) {
            WordMut::W64(x) => *x |= bit,
            WordMut::W8(x) => *x |= bit as u8,
            WordMut::W16(x) => *x |= bit as u16,
        }
        new
    }

    pub fn remove(&mut self, r: ArchReg) {
        let Some((w, bit)) = self.slot(r) else { return };
        match self.word_mut(w) {
            WordMut::W64(x) => *x &= !bit,
            WordMut::W8(x) => *x &= !(bit as u8),
            WordMut::W16(x) => *x &= !(bit as u16),
        }
    }

    pub fn contains(&self, r: ArchReg) -> bool {
        self.slot(r).is_some_and(|(w, bit)| self.word(w) & bit != 0)
    }

    /// `self ∪= o`; returns whether `self` changed.
    pub fn union_with(&mut self, o: &RegSet) -> bool {
        let before = *self;
        for k in 0..4 {
            self.r[k] |= o.r[k];
        }
        self.ur |= o.ur;
        self.p |= o.p;
        self.up |= o.up;
        self.b |= o.b;
        *self != before
    }

    /// `self \ o`.
    pub fn minus(&self, o: &RegSet) -> RegSet {
        let mut s = *self;
        for k in 0..4 {
            s.r[k] &= !o.r[k];
        }
        s.ur &= !o.ur;
        s.p &= !o.p;
        s.up &= !o.up;
        s.b &= !o.b;
        s
    }

    /// `self ∩ o`.
    pub fn and(&self, o: &RegSet) -> RegSet {
        let mut s = *self;
        for k in 0..4 {
            s.r[k] &= o.r[k];
        }
        s.ur &= o.ur;
        s.p &= o.p;
        s.up &= o.up;
        s.b &= o.b;
        s
    }

    /// `self ∪ o`.
    pub fn or(&self, o: &RegSet) -> RegSet {
        let mut s = *self;
        s.union_with(o);
        s
    }

    pub fn is_empty(&self) -> bool {
        *self == RegSet::EMPTY
    }

    /// Number of registers in the set.
    pub fn len(&self) -> usize {
        (self.r.iter().map(|w| w.count_ones()).sum::<u32>()
            + self.ur.count_ones()
            + self.p.count_ones()
            + self.up.count_ones()
            + self.b.count_ones()) as usize
    }

    /// Number of regular (R) registers in the set.
    pub fn regular_len(&self) -> usize {
        self.r.iter().map(|w| w.count_ones()).sum::<u32>() as usize
    }

    /// The regular registers only.
    pub fn regular(&self) -> RegSet {
        RegSet {
            r: self.r,
            ..RegSet::EMPTY
        }
    }

    /// The 256-bit mask of the regular registers.
    pub fn rmask(&self) -> RMask {
        self.r
    }

    /// Indices of the regular registers, ascending.
    pub fn regular_indices(&self) -> impl Iterator<Item = u8> + '_ {
        (0..4usize).flat_map(move |w| {
            let mut bits = self.r[w];
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                Some((w as u32 * 64 + b) as u8)
            })
        })
    }

    /// Every register in the set: R, UR, P, UP, B, each ascending.
    pub fn iter(&self) -> impl Iterator<Item = ArchReg> + '_ {
        let bits = |v: u64, n: u32| (0..n).filter(move |i| v >> i & 1 == 1).map(|i| i as u8);
        self.regular_indices()
            .map(ArchReg::R)
            .chain(bits(self.ur, 63).map(ArchReg::UR))
            .chain(bits(self.p as u64, 7).map(ArchReg::P))
            .chain(bits(self.up as u64, 7).map(ArchReg::UP))
            .chain(bits(self.b as u64, 16).map(ArchReg::B))
    }
}

enum WordMut<'a> {
    W64(&'a mut u64),
    W8(&'a mut u8),
    W16(&'a mut u16),
}

impl FromIterator<ArchReg> for RegSet {
    fn from_iter<T: IntoIterator<Item = ArchReg>>(iter: T) -> Self {
        let mut s = RegSet::EMPTY;
        for r in iter {
            s.insert(r);
        }
        s
    }
}

/// `{R0, R4, P0}`
impl fmt::Display for RegSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (k, r) in self.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", reg_name(r))?;
        }
        f.write_str("}")
    }
}

impl fmt::Debug for RegSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `R4`, `UR2`, `P0`, `UP1`, `B3`.
pub fn reg_name(r: ArchReg) -> String {
    match r {
        ArchReg::R(i) => format!("R{i}"),
        ArchReg::UR(i) => format!("UR{i}"),
        ArchReg::P(i) => format!("P{i}"),
        ArchReg::UP(i) => format!("UP{i}"),
        ArchReg::B(i) => format!("B{i}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let mut a: RegSet = [ArchReg::R(0), ArchReg::R(200), ArchReg::P(3), ArchReg::B(15)]
            .into_iter()
            .collect();
        assert!(!a.insert(ArchReg::R(0)));
        assert!(!a.insert(ArchReg::R(255)), "RZ holds no state");
        assert!(!a.insert(ArchReg::P(7)), "PT holds no state");
        assert_eq!(a.len(), 4);
        assert_eq!(a.regular_len(), 2);
        assert_eq!(a.to_string(), "{R0, R200, P3, B15}");
        let b: RegSet = [ArchReg::R(200), ArchReg::UR(5)].into_iter().collect();
        assert_eq!(a.and(&b).to_string(), "{R200}");
        assert_eq!(a.minus(&b).to_string(), "{R0, P3, B15}");
        assert!(a.union_with(&b));
        assert!(!a.union_with(&b));
        a.remove(ArchReg::R(0));
        assert!(!a.contains(ArchReg::R(0)));
        assert_eq!(RegSet::all().regular_len(), 255);
        assert_eq!(RegSet::regular_below(10).regular_indices().last(), Some(9));
        assert_eq!(RegSet::from_rmask([0, 0, 0, u64::MAX]).regular_len(), 63);
    }
}
