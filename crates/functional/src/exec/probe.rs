//! Livelock probes (docs/model.md "Deadlock detection").
//!
//! Deadlock detection counts a register write that changes a value as progress, so warps
//! that spin while rewriting a register with alternating values (a pre-Volta SIMT spinlock:
//! the lock value, then the vote mask) look busy forever. Once the kernel has gone long
//! without any other progress (no memory change, exit or barrier release), the run loop
//! turns the probes on ([`KernelExec::set_livelock_probes`]): at every control-flow
//! instruction a warp hashes its whole architectural state and runs Brent's cycle finding
//! ([`Probe`]) on the hashes. While memory does not change, a warp's next state is a
//! function of its state, so a warp whose state recurred repeats the same states forever.

use super::{KernelExec, Warp};
use std::hash::Hasher;

/// A small, fast and deterministic hasher of a warp's state (the same hashes on every run
/// and host, unlike the standard library's randomly keyed one).
#[derive(Debug, Clone, Copy)]
pub struct StateHasher(u64);

impl Default for StateHasher {
    fn default() -> Self {
        // Any odd constant: the empty state does not hash to 0.
        StateHasher(0x9e37_79b9_7f4a_7c15)
    }
}

impl Hasher for StateHasher {
    fn finish(&self) -> u64 {
        // A final mix: the last words' bits reach every bit of the hash.
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            // The length tells a short tail from zero bytes.
            self.write_u64(u64::from_le_bytes(w) ^ (rest.len() as u64) << 59);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
}

/// Counts of a kernel's warps for livelock detection ([`KernelExec::livelock_tally`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeTally {
    /// Warps whose state recurred.
    pub repeating: u32,
    /// Warps that may still do something new.
    pub moving: u32,
}

impl std::ops::Add for ProbeTally {
    type Output = ProbeTally;
    /// The tally of two parts of a kernel (its shards).
    fn add(self, o: ProbeTally) -> ProbeTally {
        ProbeTally {
            repeating: self.repeating + o.repeating,
            moving: self.moving + o.moving,
        }
    }
}

impl ProbeTally {
    /// Whether the kernel is in a livelock: some warps repeat their states and all others
    /// wait.
    pub fn livelocked(&self) -> bool {
        self.repeating > 0 && self.moving == 0
    }
}

/// Brent's cycle finding on the sequence of one warp's state hashes: the hash is kept at
/// observations 1, 2, 4, 8, … (each checkpoint twice as far from the last); a later hash
/// equal to the kept one means the state recurred. Any cycle of the sequence is found
/// within about twice its start plus its length in observations, with one word kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Probe {
    /// The hash at the last checkpoint (valid once `observed > 0`).
    saved: u64,
    /// Observations since the last checkpoint.
    since: u64,
    /// Observations from the last checkpoint to the next.
    power: u64,
    observed: u64,
    /// The state recurred since the probe was reset.
    recurred: bool,
    /// The warp read the clock since the probe was reset: its states depend on time, and a
    /// clock value compared and then overwritten leaves no trace in the registers.
    tainted: bool,
}

impl Probe {
    /// Forget everything observed.
    pub fn reset(&mut self) {
        *self = Probe::default();
    }

    /// The warp's state hashes to `h` now.
    pub fn observe(&mut self, h: u64) {
        if self.recurred {
            return;
        }
        self.observed += 1;
        if self.observed == 1 {
            self.saved = h;
            self.power = 1;
            return;
        }
        self.since += 1;
        if h == self.saved {
            self.recurred = true;
        } else if self.since == self.power {
            self.saved = h;
            self.power *= 2;
            self.since = 0;
        }
    }

    /// The warp read the clock (see `tainted`).
    #[inline]
    pub fn taint(&mut self) {
        self.tainted = true;
    }

    /// Whether the warp's state recurred (and did not depend on time) since the reset.
    pub fn recurred(&self) -> bool {
        self.recurred && !self.tainted
    }
}

impl KernelExec {
    /// Turn the livelock probes on (`true`) or off; either way every warp's probe starts
    /// afresh. The caller turns them on, or restarts them, only when the kernel's memory,
    /// exits and barriers are as they were when it last looked ([`KernelExec::progress_counter`]).
    pub fn set_livelock_probes(&mut self, on: bool) {
        self.probing = on;
        for w in &mut self.warps {
            w.probe.reset();
        }
    }

    /// What the probes saw since they were turned on: how many warps that have not exited
    /// repeat their states (their probe saw a state recur) and how many neither repeat nor
    /// wait (at a barrier, or for a reconvergence that needs other threads). While the probes
    /// are off or a bulk copy is in flight (its end changes memory without any warp
    /// issuing), every running warp counts as not repeating.
    pub fn livelock_tally(&self) -> ProbeTally {
        let mut t = ProbeTally::default();
        let trusted = self.probing && !self.bulk.any_pending();
        for w in self.warps.iter().filter(|w| !w.exited) {
            if trusted && w.probe.recurred() {
                t.repeating += 1;
            } else if !trusted || (w.at_barrier.is_none() && w.cur.is_some()) {
                t.moving += 1;
            }
        }
        t
    }

    /// The hook at each control-flow instruction warp `wi` (of CTA slot `cta`) issues while
    /// the probes are on: hash the warp's state and let its probe look at it.
    #[cold]
    #[inline(never)]
    pub(super) fn probe_warp(&mut self, wi: usize, cta: usize) {
        let mut h = StateHasher::default();
        let wp = &self.warps[wi];
        hash_warp(wp, &mut h);
        // Barrier arrivals counted without a release are not progress: the counts are part
        // of the state (a warp looping over BAR.ARV does not repeat).
        let c = &self.ctas[cta];
        c.arrived
            .iter()
            .chain(c.expected.iter())
            .for_each(|&v| h.write_u32(v));
        if self.launch.cluster_size() > 1 {
            self.clusters.hash_barrier(c.cluster, &mut h);
        }
        let hash = h.finish();
        self.warps[wi].probe.observe(hash);
    }
}

/// Hash warp `wp`'s architectural state into `h`: its path and control-flow manager, the
/// registers and predicates of its live lanes, its uniform registers and predicates, how
/// often its local memory changed and its cluster-barrier arrival.
fn hash_warp(wp: &Warp, h: &mut StateHasher) {
    match wp.cur {
        Some(c) => {
            h.write_u64(c.pc);
            h.write_u32(c.mask);
        }
        None => h.write_u64(u64::MAX),
    }
    wp.cf.state_hash(h);
    let live = wp.cf.live();
    // Exited lanes' registers are never read again.
    let keep: [u32; 32] = std::array::from_fn(|l| if live >> l & 1 == 1 { u32::MAX } else { 0 });
    for row in wp.regs.chunks_exact(32) {
        for (v, k) in row.iter().zip(keep.iter()) {
            h.write_u32(v & k);
        }
    }
    wp.p.iter().for_each(|&m| h.write_u32(m & live));
    h.write_u8(wp.up);
    wp.ur.iter().for_each(|&v| h.write_u32(v));
    h.write_u64(wp.local_changes);
    h.write_u32(wp.cga_arrived);
}

#[cfg(test)]
mod tests {
    use super::{Probe, StateHasher};
    use std::hash::Hasher;

    /// Feed `seq` to a fresh probe; the observation at which it saw a recurrence.
    fn found_at(seq: impl Iterator<Item = u64>) -> Option<usize> {
        let mut p = Probe::default();
        for (i, h) in seq.enumerate() {
            p.observe(h);
            if p.recurred() {
                return Some(i);
            }
        }
        None
    }

    #[test]
    fn brent_finds_cycles_after_a_prefix() {
        // A period of 1 (a spin loop with one branch) is seen at the second observation.
        assert_eq!(found_at([7u64; 5].into_iter()), Some(1));
        // A prefix of `mu` states, then a cycle of `lam`: found within 2(mu+lam) + lam.
        for mu in 0..20u64 {
            for lam in 1..20u64 {
                let seq = (0..1000u64).map(|i| if i < mu { 1000 + i } else { (i - mu) % lam });
                let at = found_at(seq).expect("a cycle is found") as u64;
                assert!(
                    at >= mu + lam,
                    "not before the state recurred (mu {mu} lam {lam})"
                );
                assert!(at <= 2 * (mu + lam) + lam, "found late (mu {mu} lam {lam}: {at})");
            }
        }
    }

    #[test]
    fn brent_never_reports_distinct_states() {
        // A counter never repeats: no recurrence, however long.
        assert_eq!(found_at(0..100_000u64), None);
    }

    #[test]
    fn taint_and_reset() {
        let mut p = Probe::default();
        p.observe(3);
        p.taint();
        p.observe(3);
        assert!(!p.recurred(), "a warp that read the clock is not reported");
        p.reset();
        p.observe(3);
        p.observe(3);
        assert!(p.recurred());
    }

    #[test]
    fn hasher_is_deterministic_and_sees_every_word() {
        let hash = |ws: &[u32]| {
            let mut h = StateHasher::default();
            ws.iter().for_each(|&w| h.write_u32(w));
            h.finish()
        };
        assert_eq!(hash(&[1, 2, 3]), hash(&[1, 2, 3]));
        assert_ne!(hash(&[1, 2, 3]), hash(&[1, 2, 4]));
        assert_ne!(hash(&[1, 2, 3]), hash(&[2, 1, 3]));
        assert_ne!(hash(&[0]), hash(&[0, 0]));
    }
}
