//! A hash index of line records kept in a fixed array (the cache's ways, the L1's MSHR
//! entries): each bucket holds its first record and each record the next one of its bucket
//! (intrusive chaining), so that a lookup reads one bucket word and the records of its chain,
//! which the caller reads next anyway. A line absent from the index, which is what most
//! lookups of a loaded L1 ask about (a miss probes the tags and the MSHRs), usually costs a
//! multiply and one load: about a quarter of a `FxHashMap` probe (`SmMemory::load_check`
//! made two such probes per missing line).
//!
//! Lookups only: the index is never iterated, so which bucket a line falls in changes
//! nothing outside it.

/// End of a chain, an empty bucket.
pub(crate) const NIL: u32 = u32::MAX;

/// A record of a [`ChainIndex`]: its line (the key, fixed while it is in the index) and the
/// next record of its bucket.
pub(crate) trait Chained {
    fn key(&self) -> u64;
    fn chain(&self) -> u32;
    fn set_chain(&mut self, next: u32);
}

/// Buckets of an index of up to `records` records (at least twice as many buckets, a power
/// of two: most buckets of a full index are empty).
#[derive(Debug, Clone)]
pub(crate) struct ChainIndex {
    heads: Vec<u32>,
    /// 64 minus the bucket bits: a line's bucket is the top bits of its Fibonacci hash.
    shift: u32,
}

impl ChainIndex {
    pub fn new(records: usize) -> Self {
        let buckets = (4 * records.max(1)).next_power_of_two();
        Self {
            heads: vec![NIL; buckets],
            shift: 64 - buckets.trailing_zeros(),
        }
    }

    #[inline]
    fn bucket(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// The record of `key` in `recs`, if it is in the index.
    #[inline]
    pub fn find<T: Chained>(&self, recs: &[T], key: u64) -> Option<usize> {
        let mut i = self.heads[self.bucket(key)];
        while i != NIL {
            let r = &recs[i as usize];
            if r.key() == key {
                return Some(i as usize);
            }
            i = r.chain();
        }
        None
    }

    /// Adds record `i` (its key set, not in the index yet; no other record has its key).
    #[inline]
    pub fn insert<T: Chained>(&mut self, recs: &mut [T], i: usize) {
        let key = recs[i].key();
        debug_assert_eq!(self.find(recs, key), None, "line {key:#x} indexed twice");
        let b = self.bucket(key);
        recs[i].set_chain(self.heads[b]);
        self.heads[b] = i as u32;
    }

    /// Removes record `i` (in the index, its key unchanged since it was added).
    #[inline]
    pub fn remove<T: Chained>(&mut self, recs: &mut [T], i: usize) {
        let b = self.bucket(recs[i].key());
        let next = recs[i].chain();
        let mut p = self.heads[b];
        if p == i as u32 {
            self.heads[b] = next;
            return;
        }
        loop {
            assert_ne!(p, NIL, "record {i} is not in the index");
            let n = recs[p as usize].chain();
            if n == i as u32 {
                recs[p as usize].set_chain(next);
                return;
            }
            p = n;
        }
    }

    /// Empties the index (the records' chains are left as they are).
    pub fn clear(&mut self) {
        self.heads.fill(NIL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[derive(Debug, Clone, Copy)]
    struct Rec {
        key: u64,
        next: u32,
    }

    impl Chained for Rec {
        fn key(&self) -> u64 {
            self.key
        }
        fn chain(&self) -> u32 {
            self.next
        }
        fn set_chain(&mut self, next: u32) {
            self.next = next;
        }
    }

    /// The index answers as a map from key to record does, through inserts, removals
    /// (heads and middles of chains: few buckets, many records) and clears.
    #[test]
    fn follows_a_map() {
        let mut rnd = crate::test_rng::xorshift(0x1234_5678_9abc_def1u64);
        for &(n, keys) in &[(1usize, 4u64), (3, 8), (40, 64), (300, 5000)] {
            let mut recs = vec![Rec { key: 0, next: NIL }; n];
            let mut idx = ChainIndex::new(n);
            let mut map: HashMap<u64, usize> = HashMap::new();
            for step in 0..30_000 {
                let key = rnd(keys) << (rnd(3) * 20);
                match (map.get(&key).copied(), rnd(200)) {
                    (_, 0) => {
                        idx.clear();
                        map.clear();
                    }
                    (Some(i), _) => {
                        idx.remove(&mut recs, i);
                        map.remove(&key);
                    }
                    (None, _) => {
                        let i = rnd(n as u64) as usize;
                        if let Some(old) = map.iter().find(|&(_, &r)| r == i).map(|(&k, _)| k) {
                            idx.remove(&mut recs, i);
                            map.remove(&old);
                        }
                        recs[i].key = key;
                        idx.insert(&mut recs, i);
                        map.insert(key, i);
                    }
                }
                let probe = rnd(keys) << (rnd(3) * 20);
                assert_eq!(idx.find(&recs, probe), map.get(&probe).copied(), "step {step}");
                assert_eq!(idx.find(&recs, key), map.get(&key).copied(), "step {step}");
            }
        }
    }
}
