//! Register file read ports and the register-file cache (RFC) of one sub-core
//! (modern-nvidia-gpu-cores §5.3, §5.3.1; MICRO'25 reference A8, rules 16–29).

/// Cycles ahead a port schedule holds reservations for (a power of two: the row of a cycle is
/// its low bits). Reads are reserved at most `read_window` cycles ahead, a few cycles.
const HORIZON: usize = 64;

/// Read-port reservations per bank over a window of future cycles.
#[derive(Debug, Clone)]
pub struct PortSchedule {
    banks: usize,
    ports: u8,
    /// used[(cycle % HORIZON) * banks + bank] for cycle in [base, base + HORIZON), valid
    /// only while the row's `row_cycle` is that cycle: a row left by a past cycle counts as
    /// free and is cleared when it is next reserved, so advancing the window touches
    /// nothing but `base` (clearing rows every cycle was a cache miss per sub-core cycle on
    /// a loaded GPU).
    used: Vec<u8>,
    /// The cycle whose reservations row r of `used` holds (`u64::MAX`: none).
    row_cycle: [u64; HORIZON],
    base: u64,
}

impl PortSchedule {
    pub fn new(banks: u32, ports: u32) -> Self {
        PortSchedule {
            banks: banks.max(1) as usize,
            ports: ports.clamp(1, 255) as u8,
            used: vec![0; HORIZON * banks.max(1) as usize],
            row_cycle: [u64::MAX; HORIZON],
            base: 0,
        }
    }

    pub fn banks(&self) -> u32 {
        self.banks as u32
    }

    /// Forget cycles before `now` (their rows count as free from now on).
    #[inline]
    pub fn advance(&mut self, now: u64) {
        self.base = self.base.max(now);
    }

    #[inline]
    fn row(cycle: u64) -> usize {
        cycle as usize & (HORIZON - 1)
    }

    /// Free read ports of `bank` in `cycle` (none outside the window).
    #[inline]
    pub fn free(&self, cycle: u64, bank: usize) -> u8 {
        match self.row_of(cycle) {
            None => 0,
            Some((_, false)) => self.ports,
            Some((r, true)) => self.ports - self.used[r * self.banks + bank],
        }
    }

    /// The row of `cycle` in `used` if it is in the window, and whether the row holds that
    /// cycle's reservations (else it is free).
    #[inline]
    fn row_of(&self, cycle: u64) -> Option<(usize, bool)> {
        if cycle < self.base || cycle - self.base >= HORIZON as u64 {
            return None;
        }
        let r = Self::row(cycle);
        Some((r, self.row_cycle[r] == cycle))
    }

    /// Whether `need[b]` reads of bank b fit in cycles [start, start+len).
    pub fn fits(&self, start: u64, len: u32, need: &[u8]) -> bool {
        need.iter().enumerate().all(|(b, &n)| {
            // (Most banks need nothing; the others stop at the first cycles that suffice.)
            let mut avail = 0u32;
            n == 0
                || (0..u64::from(len)).any(|k| {
                    avail += u32::from(self.free(start + k, b));
                    avail >= u32::from(n)
                })
        })
    }

    /// Reserve `need[b]` reads of bank b at the earliest free cycles of [start, start+len).
    pub fn reserve(&mut self, start: u64, len: u32, need: &[u8]) {
        let mut left = [0u8; 8];
        for (l, &n) in left.iter_mut().zip(need) {
            *l = n;
        }
        for c in start..start + u64::from(len) {
            if left.iter().all(|&n| n == 0) {
                break;
            }
            let Some((r, valid)) = self.row_of(c) else {
                continue;
            };
            let row = &mut self.used[r * self.banks..(r + 1) * self.banks];
            if !valid {
                // The row of a past cycle: now this cycle's, empty.
                self.row_cycle[r] = c;
                row.fill(0);
            }
            for (u, n) in row.iter_mut().zip(left.iter_mut()) {
                let take = (self.ports - *u).min(*n);
                *u += take;
                *n -= take;
            }
        }
    }
}

/// The register-file cache: one entry per bank, each with one value per source slot.
#[derive(Debug, Clone)]
pub struct Rfc {
    slots: usize,
    /// `entries[bank * slots + slot]`: the value cached there, if any.
    entries: Vec<Option<RfcValue>>,
}

/// Whose value an entry of the register-file cache holds: a warp's register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RfcValue {
    warp: u32,
    reg: u8,
}

impl Rfc {
    pub fn new(banks: u32, slots: u32) -> Self {
        Rfc {
            slots: slots as usize,
            entries: vec![None; (banks * slots) as usize],
        }
    }

    /// A read of `reg` (in `bank`) in source `slot` by `warp`: returns whether it hit.
    /// Any read of the same bank and slot makes the cached value unavailable unless
    /// this read sets reuse, in which case the value read is (re)cached (rule 27).
    pub fn read(&mut self, warp: u32, bank: u32, slot: usize, reg: u8, reuse: bool) -> bool {
        if slot >= self.slots {
            return false;
        }
        let i = bank as usize * self.slots + slot;
        let value = RfcValue { warp, reg };
        let hit = self.entries[i] == Some(value);
        self.entries[i] = reuse.then_some(value);
        hit
    }

    /// Whether a read would hit, without changing the cache.
    pub fn peek(&self, warp: u32, bank: u32, slot: usize, reg: u8) -> bool {
        slot < self.slots && self.entries[bank as usize * self.slots + slot] == Some(RfcValue { warp, reg })
    }

    pub fn clear(&mut self) {
        self.entries.fill(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_fit_window() {
        let mut p = PortSchedule::new(2, 1);
        p.advance(10);
        p.reserve(11, 3, &[3, 0]);
        assert!(!p.fits(12, 3, &[2, 0]));
        assert!(p.fits(13, 3, &[2, 0]));
        assert!(p.fits(12, 3, &[1, 3]));
    }

    /// Reservations leave the window as it advances, one cycle at a time or all at once,
    /// and advancing clears nothing (a past cycle's row is free).
    #[test]
    fn ports_free_again_after_the_window_passes() {
        let mut p = PortSchedule::new(2, 1);
        p.advance(5);
        p.reserve(5, 4, &[2, 2]);
        assert_eq!((p.free(5, 0), p.free(6, 0), p.free(7, 0)), (0, 0, 1));
        p.advance(6);
        assert_eq!((p.free(6, 0), p.free(6, 1)), (0, 0));
        p.advance(7);
        assert_eq!((p.free(7, 0), p.free(7, 1)), (1, 1));
        p.reserve(8, 1, &[1, 0]);
        assert_eq!((p.free(8, 0), p.free(8, 1)), (0, 1));
        p.advance(500);
        assert_eq!((p.free(500, 0), p.base), (1, 500));
        // 520 ≡ 8 (mod 64): the row of cycle 8 is free again.
        assert_eq!((p.free(520, 0), p.free(520, 1)), (1, 1));
        p.advance(501);
        p.reserve(560, 1, &[0, 1]);
        assert_eq!((p.free(560, 1), p.free(560 + 64, 1)), (0, 0));
        p.advance(561);
        assert_eq!((p.free(561, 1), p.free(600, 1)), (1, 1));
    }

    /// The windowed schedule against a plain map of (cycle, bank) → reads: the same answers
    /// and the same reservations for any sequence of advances, checks and reservations.
    #[test]
    fn ports_match_a_plain_map() {
        use proptest::prelude::*;
        use std::collections::HashMap;
        let op = (0u64..3, 0u64..70, 1u32..5, proptest::collection::vec(0u8..5, 3));
        proptest!(|(banks in 1u32..4, ports in 1u32..3, ops in proptest::collection::vec(op, 1..60))| {
            let mut p = PortSchedule::new(banks, ports);
            let mut plain: HashMap<(u64, usize), u8> = HashMap::new();
            let mut base = 0u64;
            let plain_free = |plain: &HashMap<(u64, usize), u8>, base: u64, c: u64, b: usize| {
                if c < base || c >= base + HORIZON as u64 {
                    0
                } else {
                    ports as u8 - plain.get(&(c, b)).copied().unwrap_or(0)
                }
            };
            for (kind, at, len, need) in ops {
                let need = &need[..banks as usize];
                match kind {
                    0 => {
                        base = base.max(base + at / 8);
                        p.advance(base);
                    }
                    _ => {
                        let start = base + at % 8;
                        let fits = need.iter().enumerate().all(|(b, &n)| {
                            (start..start + u64::from(len)).map(|c| u32::from(plain_free(&plain, base, c, b))).sum::<u32>() >= u32::from(n)
                        });
                        prop_assert_eq!(p.fits(start, len, need), fits);
                        if kind == 2 && fits {
                            p.reserve(start, len, need);
                            for (b, &n) in need.iter().enumerate() {
                                let mut left = n;
                                for c in start..start + u64::from(len) {
                                    let take = plain_free(&plain, base, c, b).min(left);
                                    *plain.entry((c, b)).or_insert(0) += take;
                                    left -= take;
                                }
                            }
                        }
                    }
                }
                for c in base..base + HORIZON as u64 {
                    for b in 0..banks as usize {
                        prop_assert_eq!(p.free(c, b), plain_free(&plain, base, c, b), "cycle {} bank {}", c, b);
                    }
                }
            }
        });
    }

    /// MICRO'25 Listing 4, example 3: a read in another slot leaves R2 cached.
    #[test]
    fn rfc_slot_semantics() {
        let mut r = Rfc::new(2, 3);
        assert!(!r.read(0, 0, 0, 2, true));
        assert!(!r.read(0, 1, 0, 7, false));
        assert!(!r.read(0, 0, 1, 2, false));
        assert!(r.read(0, 0, 0, 2, false));
        assert!(!r.read(0, 0, 0, 2, false));
    }
}
