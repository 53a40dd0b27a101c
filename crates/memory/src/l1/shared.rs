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
        let banks = self.sh_banks.clamp(1, 64) as u64;
        let mut start = now.max(self.sh_busy_until);
        // The words sorted are needed by an atomic and by the check against the words of an
        // atomic still in flight; otherwise the distinct words per bank are counted without
        // sorting them (a sort of up to 128 words was 8 % of an SGEMM's instructions).
        let sorted = req.kind == AccessKind::Atomic || self.sh_atomic_until > start;
        let wavefronts = match (sorted, distinct_per_bank(words, banks)) {
            (false, Some(w)) => w,
            _ => {
                words.sort_unstable();
                wavefronts_sorted(words, banks)
            }
        };
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

/// Bank of word `w` among `banks` (at most 64).
#[inline]
fn bank(w: u64, banks: u64) -> usize {
    (if banks.is_power_of_two() {
        w & (banks - 1)
    } else {
        w % banks
    }) as usize
}

/// The most of the `distinct` words (each given once) in one bank, at least 1: the
/// wavefronts of an access (a word read by several lanes is read once, a broadcast).
#[inline(always)]
fn most_per_bank(distinct: impl Iterator<Item = u64>, banks: u64) -> u32 {
    let mut per_bank = [0u32; 64];
    let mut wavefronts = 1u32;
    for w in distinct {
        let b = bank(w, banks);
        per_bank[b] += 1;
        wavefronts = wavefronts.max(per_bank[b]);
    }
    wavefronts
}

/// Wavefronts of an access to `words` (sorted: a repeated word follows itself).
fn wavefronts_sorted(words: &[u64], banks: u64) -> u32 {
    let mut prev = u64::MAX;
    most_per_bank(
        words
            .iter()
            .copied()
            .filter(|&w| std::mem::replace(&mut prev, w) != w),
        banks,
    )
}

/// Span of words, from the lowest, within which [`distinct_per_bank`] marks the words seen
/// in a bitmap (an access of one warp spans at most 128 words unless its lanes scatter).
const SPAN_WORDS: u64 = 4096;

/// [`wavefronts_sorted`] of `words` in any order, when they lie within [`SPAN_WORDS`] of the
/// lowest (None otherwise): the distinct words are marked in a bitmap instead of sorted.
fn distinct_per_bank(words: &[u64], banks: u64) -> Option<u32> {
    let lo = words.iter().copied().min()?;
    if words.iter().any(|&w| w - lo >= SPAN_WORDS) {
        return None;
    }
    let mut seen = [0u64; (SPAN_WORDS / 64) as usize];
    let mut first_time = |w: u64| {
        let o = (w - lo) as usize;
        let (word, bit) = (o / 64, 1u64 << (o % 64));
        let new = seen[word] & bit == 0;
        seen[word] |= bit;
        new
    };
    Some(most_per_bank(
        words.iter().copied().filter(|&w| first_time(w)),
        banks,
    ))
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

#[cfg(test)]
mod tests {
    use super::{distinct_per_bank, wavefronts_sorted, SPAN_WORDS};

    /// Counting distinct words per bank with a bitmap gives the wavefronts of the sorted
    /// count, for broadcasts, strides, conflicts and scattered words; words spread beyond
    /// the bitmap's span are left to the sort.
    #[test]
    fn distinct_words_per_bank_as_sorted() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for case in 0..4000 {
            let n = 1 + (next() % 128) as usize;
            let base = next() % (1 << 40);
            let stride = [0u64, 1, 2, 4, 32, 33, 64][case % 7];
            let words: Vec<u64> = (0..n)
                .map(|i| match case % 3 {
                    0 => base + i as u64 * stride,
                    1 => base + next() % 300,
                    _ => base + (next() % 8) * 32,
                })
                .collect();
            for banks in [1u64, 16, 32, 24, 64] {
                let mut sorted = words.clone();
                sorted.sort_unstable();
                let want = wavefronts_sorted(&sorted, banks);
                let span = words.iter().max().unwrap() - words.iter().min().unwrap();
                let got = distinct_per_bank(&words, banks);
                if span < SPAN_WORDS {
                    assert_eq!(got, Some(want), "case {case} banks {banks} words {words:?}");
                } else {
                    assert_eq!(got, None);
                }
            }
        }
        assert_eq!(distinct_per_bank(&[5, 5 + SPAN_WORDS], 32), None);
        assert_eq!(distinct_per_bank(&[], 32), None);
    }
}
