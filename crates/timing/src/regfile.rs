//! Register file read ports and the register-file cache (RFC) of one sub-core
//! (modern-nvidia-gpu-cores §5.3, §5.3.1; MICRO'25 reference A8, rules 16–29).

/// Read-port reservations per bank over a window of future cycles.
#[derive(Debug, Clone)]
pub struct PortSchedule {
    banks: usize,
    ports: u8,
    horizon: usize,
    /// used[(cycle % horizon) * banks + bank] for cycle in [base, base + horizon), valid
    /// only while the row's `row_cycle` is that cycle: a row left by a past cycle counts as
    /// free and is cleared when it is next reserved, so advancing the window touches
    /// nothing but `base` (clearing rows every cycle was a cache miss per sub-core cycle on
    /// a loaded GPU).
    used: Vec<u8>,
    /// The cycle whose reservations row r of `used` holds (`u64::MAX`: none).
    row_cycle: Vec<u64>,
    base: u64,
}

impl PortSchedule {
    pub fn new(banks: u32, ports: u32) -> Self {
        let horizon = 64;
        PortSchedule {
            banks: banks.max(1) as usize,
            ports: ports.clamp(1, 255) as u8,
            horizon,
            used: vec![0; horizon * banks.max(1) as usize],
            row_cycle: vec![u64::MAX; horizon],
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

    fn slot(&self, cycle: u64, bank: usize) -> usize {
        (cycle as usize % self.horizon) * self.banks + bank
    }

    pub fn free(&self, cycle: u64, bank: usize) -> u8 {
        if cycle < self.base || cycle >= self.base + self.horizon as u64 {
            return 0;
        }
        if self.row_cycle[cycle as usize % self.horizon] != cycle {
            return self.ports;
        }
        self.ports - self.used[self.slot(cycle, bank)]
    }

    /// Whether `need[b]` reads of bank b fit in cycles [start, start+len).
    pub fn fits(&self, start: u64, len: u32, need: &[u8]) -> bool {
        need.iter().enumerate().all(|(b, &n)| {
            let avail: u32 = (0..len as u64).map(|k| self.free(start + k, b) as u32).sum();
            avail >= n as u32
        })
    }

    /// Reserve `need[b]` reads of bank b at the earliest free cycles of [start, start+len).
    pub fn reserve(&mut self, start: u64, len: u32, need: &[u8]) {
        for (b, &n) in need.iter().enumerate() {
            let mut left = n;
            for k in 0..len as u64 {
                while left > 0 && self.free(start + k, b) > 0 {
                    let c = start + k;
                    let r = c as usize % self.horizon;
                    if self.row_cycle[r] != c {
                        // The row of a past cycle: now this cycle's, empty.
                        self.row_cycle[r] = c;
                        self.used[r * self.banks..(r + 1) * self.banks].fill(0);
                    }
                    let s = self.slot(c, b);
                    self.used[s] += 1;
                    left -= 1;
                }
            }
        }
    }
}

/// The register-file cache: one entry per bank, each with one value per source slot.
#[derive(Debug, Clone)]
pub struct Rfc {
    slots: usize,
    /// entries[bank * slots + slot] = Some((warp, register)).
    entries: Vec<Option<(u32, u8)>>,
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
        let hit = self.entries[i] == Some((warp, reg));
        self.entries[i] = if reuse { Some((warp, reg)) } else { None };
        hit
    }

    /// Whether a read would hit, without changing the cache.
    pub fn peek(&self, warp: u32, bank: u32, slot: usize, reg: u8) -> bool {
        slot < self.slots && self.entries[bank as usize * self.slots + slot] == Some((warp, reg))
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
