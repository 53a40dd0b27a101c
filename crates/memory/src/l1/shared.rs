//! Shared memory of an SM: bank conflicts, broadcasts and atomics (part of [`SmMemory`]).

use super::SmMemory;
use crate::types::{AccessKind, AccessOutcome, WarpMemRequest};

impl SmMemory {
    pub(super) fn shared_access(&mut self, now: u64, req: &WarpMemRequest) -> AccessOutcome {
        let width = self.sh_width.max(1);
        let words_per_lane = (req.bytes_per_lane as u64).div_ceil(width).clamp(1, 4);
        let mut words = [0u64; 128];
        let mut addrs = [0u64; 32];
        let (mut nw, mut na) = (0usize, 0usize);
        for lane in 0..32 {
            if req.active & (1 << lane) == 0 {
                continue;
            }
            let a = req.addrs[lane];
            addrs[na] = a;
            na += 1;
            let w0 = a / width;
            for k in 0..words_per_lane {
                words[nw] = w0 + k;
                nw += 1;
            }
        }
        let words = &mut words[..nw];
        words.sort_unstable();
        let mut per_bank = [0u32; 64];
        let banks = self.sh_banks.clamp(1, 64) as u64;
        let mut prev = u64::MAX;
        let mut wavefronts = 1u32;
        for &w in words.iter() {
            if w == prev {
                continue; // same word: broadcast
            }
            prev = w;
            let b = (w % banks) as usize;
            per_bank[b] += 1;
            wavefronts = wavefronts.max(per_bank[b]);
        }
        let mut start = now.max(self.sh_busy_until);
        if self.sh_atomic_until > start && sorted_overlap(words, &self.sh_atomic_words) {
            self.stats.shared_atomic_order_cycles += self.sh_atomic_until - start;
            start = self.sh_atomic_until;
        }
        self.sh_busy_until = start + wavefronts as u64;
        let mut ready = start + self.sh_latency + wavefronts as u64 - 1;
        self.stats.accesses += 1;
        self.stats.shared_accesses += 1;
        self.stats.shared_wavefronts += wavefronts as u64;
        self.stats.bank_conflict_cycles += wavefronts as u64 - 1;
        if wavefronts > 1 {
            self.stats.bank_conflict_accesses += 1;
        }
        if req.kind == AccessKind::Atomic {
            let addrs = &mut addrs[..na];
            addrs.sort_unstable();
            let max_same = max_run(addrs);
            let extra = ((max_same - 1) as f64 * self.sh_atomic_conflict).round() as u64;
            ready += self.sh_atomic_latency + extra;
            self.sh_busy_until += extra;
            // Read-modify-write: the new values are in the banks when the atomic unit
            // is done; later accesses to these words wait for them.
            self.sh_atomic_until = start + wavefronts as u64 + self.sh_atomic_latency + extra;
            self.sh_atomic_words.clear();
            let mut prev = u64::MAX;
            for &w in words.iter() {
                if w != prev {
                    self.sh_atomic_words.push(w);
                    prev = w;
                }
            }
            self.stats.shared_atomics += 1;
            self.stats.shared_atomic_conflict_cycles += extra;
        }
        AccessOutcome::Done { ready_at: ready }
    }
}

/// Whether two sorted slices share an element.
fn sorted_overlap(a: &[u64], b: &[u64]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

fn max_run(sorted: &[u64]) -> u32 {
    let (mut best, mut run, mut prev) = (1u32, 0u32, u64::MAX);
    for &a in sorted {
        run = if a == prev { run + 1 } else { 1 };
        prev = a;
        best = best.max(run);
    }
    best
}
