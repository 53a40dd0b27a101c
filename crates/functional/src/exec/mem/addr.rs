//! The addresses of a memory instruction's lanes: a memory operand's register, uniform and
//! immediate terms, lane by lane or for the whole warp a term at a time, and the test for a
//! coalesced access (consecutive lanes at consecutive addresses).

use super::*;

impl Ex<'_> {
    /// Per-lane address of a memory operand.
    pub(in crate::exec) fn address(&self, m: &MemAddr, lane: usize, space: MemSpace) -> u64 {
        let global = matches!(space, MemSpace::Global | MemSpace::Generic);
        let mut a: u64 = m.offset as u64;
        for t in &m.terms[..m.n as usize] {
            let pair = global && (t.wide || self.d.e64);
            let v: u64 = if t.uniform {
                self.uniform_term(t, pair)
            } else if t.idx == 255 {
                0
            } else if pair {
                self.reg(t.idx, lane) as u64 | (self.reg(t.idx + 1, lane) as u64) << 32
            } else {
                self.reg(t.idx, lane) as u64
            };
            a = a.wrapping_add(v.wrapping_mul(t.scale as u64));
        }
        if global {
            a
        } else {
            a & 0xffff_ffff
        }
    }

    /// The value of a uniform address term (`pair`: with the next uniform register as the
    /// high word; URZ reads 0).
    fn uniform_term(&self, t: &crate::decode::ATerm, pair: bool) -> u64 {
        if t.idx >= 63 {
            0
        } else if pair {
            self.ureg(t.idx) as u64 | (self.ureg(t.idx + 1) as u64) << 32
        } else {
            self.ureg(t.idx) as u64
        }
    }

    /// [`Ex::address`] of every lane of `lm` (into `out`; other lanes untouched), a term at a
    /// time over the warp's register rows.
    pub(in crate::exec) fn addresses(&self, m: &MemAddr, lm: u32, space: MemSpace, out: &mut [u64; 32]) {
        const ZERO: [u32; 32] = [0; 32];
        let global = matches!(space, MemSpace::Global | MemSpace::Generic);
        let mut a = [m.offset as u64; 32];
        // A register past the warp's rows (or RZ, also as the pair's second) reads 0, as in
        // `Ex::reg`.
        let row = |idx: u8| -> &[u32; 32] {
            let i = idx as usize * 32;
            match idx {
                255 => &ZERO,
                _ => self
                    .w()
                    .regs
                    .get(i..i + 32)
                    .and_then(|r| r.try_into().ok())
                    .unwrap_or(&ZERO),
            }
        };
        for t in &m.terms[..m.n as usize] {
            let pair = global && (t.wide || self.d.e64);
            let scale = t.scale as u64;
            if t.uniform {
                let add = self.uniform_term(t, pair).wrapping_mul(scale);
                a.iter_mut().for_each(|x| *x = x.wrapping_add(add));
                continue;
            }
            if t.idx == 255 {
                continue;
            }
            let lo = row(t.idx);
            let hi = if pair { row(t.idx.wrapping_add(1)) } else { &ZERO };
            add_rows(&mut a, lo, hi, scale);
        }
        let keep = if global { u64::MAX } else { 0xffff_ffff };
        if lm == u32::MAX {
            for (o, x) in out.iter_mut().zip(a) {
                *o = x & keep;
            }
        } else {
            for l in lanes(lm) {
                out[l] = a[l] & keep;
            }
        }
        debug_assert!(lanes(lm).all(|l| out[l] == self.address(m, l, space)));
    }

    pub(in crate::exec) fn mem_operand(&self, i: usize) -> Res<MemAddr> {
        match &self.op(i)?.k {
            K::Mem(m) => Ok(*m),
            _ => Err(self.unsup(&format!("operand {} is not an address", i + 1))),
        }
    }
}

/// The first lane's address when the lanes of `lm` are the whole warp and lane `l` accesses
/// the `nb` bytes at `a0 + l * nb` (a coalesced access: one range of `32 * nb` bytes that
/// does not wrap around; `nb` a power of two, else None).
pub(super) fn contiguous_run(addrs: &[u64; 32], lm: u32, nb: u64) -> Option<u64> {
    let a0 = addrs[0];
    if lm != u32::MAX || !nb.is_power_of_two() || a0.checked_add(32 * nb).is_none() {
        return None;
    }
    // One pass without a branch per lane (three instructions a lane).
    let (mut want, mut diff) = (a0, 0u64);
    for &a in addrs {
        diff |= a ^ want;
        want = want.wrapping_add(nb);
    }
    (diff == 0).then_some(a0)
}

/// `a[l] += (hi[l]:lo[l]) * scale` for every lane (a register term of an address; a
/// function of its own so that the compiler sees three whole rows and vectorises the pass).
#[inline(never)]
fn add_rows(a: &mut [u64; 32], lo: &[u32; 32], hi: &[u32; 32], scale: u64) {
    if scale == 1 {
        for ((x, &lo), &hi) in a.iter_mut().zip(lo).zip(hi) {
            *x = x.wrapping_add(lo as u64 | (hi as u64) << 32);
        }
    } else {
        for ((x, &lo), &hi) in a.iter_mut().zip(lo).zip(hi) {
            *x = x.wrapping_add((lo as u64 | (hi as u64) << 32).wrapping_mul(scale));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{add_rows, contiguous_run};

    /// A coalesced run is found exactly when every lane is at `l * nb` from the first, the
    /// whole warp accesses and the range does not wrap.
    #[test]
    fn contiguous_run_is_lane_by_lane() {
        let base = 0x7f00_0000_0100u64;
        for nb in [1u64, 2, 4, 8, 16] {
            let addrs: [u64; 32] = std::array::from_fn(|l| base + l as u64 * nb);
            assert_eq!(contiguous_run(&addrs, u32::MAX, nb), Some(base));
            assert_eq!(contiguous_run(&addrs, u32::MAX >> 1, nb), None);
            let mut other = addrs;
            other[17] += 1;
            assert_eq!(contiguous_run(&other, u32::MAX, nb), None);
            let wraps: [u64; 32] = std::array::from_fn(|l| (u64::MAX - 8).wrapping_add(l as u64 * nb));
            assert_eq!(contiguous_run(&wraps, u32::MAX, nb), None);
        }
        let same = [base; 32];
        assert_eq!(contiguous_run(&same, u32::MAX, 4), None);
        assert_eq!(contiguous_run(&same, u32::MAX, 3), None);
    }

    /// The whole-warp address term is the lane-by-lane one.
    #[test]
    fn add_rows_is_lane_by_lane() {
        let lo: [u32; 32] = std::array::from_fn(|l| (l as u32).wrapping_mul(0x9e37_79b9));
        let hi: [u32; 32] = std::array::from_fn(|l| l as u32 * 3);
        for scale in [1u64, 4, 0x1_0000_0001] {
            let mut a: [u64; 32] = std::array::from_fn(|l| u64::MAX - l as u64);
            let want: [u64; 32] = std::array::from_fn(|l| {
                a[l].wrapping_add((lo[l] as u64 | (hi[l] as u64) << 32).wrapping_mul(scale))
            });
            add_rows(&mut a, &lo, &hi, scale);
            assert_eq!(a, want);
        }
    }
}
