//! The L2's MSHR table, found through the cache way of its line instead of a hash map.
//!
//! An L2 MSHR entry exists exactly while its line has sectors in flight from DRAM; those
//! sectors are the pending sectors of the line's cache way (the L2 sets and clears both
//! together), and a way with pending sectors is never chosen as a victim, so the line stays
//! in that way for the entry's whole life (the L2 never invalidates its tags). The entry of
//! a line is therefore `by_way[way of the line]`: one array read where a table keyed by
//! line (`MshrTable`, the tests' reference) probes a hash map (a cache miss per miss and per
//! fill, and a hash-map removal per release). Entries are taken and given back in the same order as
//! `MshrTable`'s (a stack of free entries), so the two hand out the same entry numbers.

/// No entry (in `by_way`).
const NIL: u32 = u32::MAX;

/// Rows of waiters (one waiter slot per entry each) a table starts with room for; it grows
/// by doubling up to `max_merge` rows ([`WayMshr`]).
const START_ROWS: usize = 4;

/// An MSHR entry: a line with outstanding sectors, and how many requests wait on it (the
/// waiters are in the table's `waiters`, [`WayMshr::waiter`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MshrEntry {
    pub line: u64,
    /// Sectors requested from the next level and not yet returned.
    pub pending: u8,
    /// Sectors returned so far (since allocation).
    pub arrived: u8,
    waiting: u32,
}

/// Fixed-capacity MSHR table keyed by cache way (see the module docs).
///
/// The waiters of all entries share one array: waiter `k` of entry `e` at
/// `k * entries + e`. It is written only as far as it is used: the first waiters of the
/// entries come first, and entries are taken lowest first (a stack of free entries), so a
/// waiter slot never used before lies at most a row (a slot per entry) past the written end,
/// which grows to it. The table starts with room for [`START_ROWS`] rows and doubles, up to
/// `max_merge` rows, when a row beyond is first needed: a few times per run at most, where a
/// waiter list per entry, allocated the first time it was taken, was a call to the allocator
/// per first miss of an entry (8.7 K in the first 5,000 cycles of the gather trace). Room
/// for all `max_merge` rows from the start (~295 KB a slice on the RTX A6000) costs nothing
/// with 4 KB pages, which are touched only as written, but with transparent huge pages the
/// reservation is memory zeroed: 14 MB of the vector add's 124 MB (twenty-sixth session).
#[derive(Debug, Clone)]
pub(crate) struct WayMshr<W> {
    entries: Vec<MshrEntry>,
    /// Per entry: the cache way of its line (valid while the entry is allocated).
    way_of: Vec<u32>,
    /// Free entries, the next one to allocate last.
    free: Vec<u32>,
    /// Per cache way: its line's entry, `NIL` if none.
    by_way: Vec<u32>,
    /// The entries' waiters (see the type's docs).
    waiters: Vec<W>,
    pub max_merge: usize,
}

impl<W: Copy> WayMshr<W> {
    /// A table of `entries` entries (at least one) for a cache of `ways` ways in all.
    pub fn new(entries: usize, max_merge: usize, ways: usize) -> Self {
        let entries = entries.max(1);
        let max_merge = max_merge.max(1);
        Self {
            entries: vec![
                MshrEntry {
                    line: 0,
                    pending: 0,
                    arrived: 0,
                    waiting: 0,
                };
                entries
            ],
            way_of: vec![NIL; entries],
            free: (0..entries as u32).rev().collect(),
            by_way: vec![NIL; ways],
            waiters: Vec::with_capacity(entries * max_merge.min(START_ROWS)),
            max_merge,
        }
    }

    pub fn free_entries(&self) -> usize {
        self.free.len()
    }

    /// The entry of the line held in cache way `way`, if any.
    #[inline]
    pub fn get(&self, way: usize) -> Option<u32> {
        match self.by_way[way] {
            NIL => None,
            e => Some(e),
        }
    }

    pub fn entry(&self, i: u32) -> &MshrEntry {
        &self.entries[i as usize]
    }

    pub fn entry_mut(&mut self, i: u32) -> &mut MshrEntry {
        &mut self.entries[i as usize]
    }

    /// The requests waiting on entry `i`.
    #[inline]
    pub fn waiting(&self, i: u32) -> usize {
        self.entries[i as usize].waiting as usize
    }

    /// The position of waiter `k` of entry `i` in `waiters`.
    #[inline]
    fn slot(&self, i: u32, k: usize) -> usize {
        k * self.entries.len() + i as usize
    }

    /// Waiter `k` (in arrival order) of entry `i`.
    #[inline(always)]
    pub fn waiter(&self, i: u32, k: usize) -> W {
        debug_assert!(k < self.waiting(i));
        self.waiters[self.slot(i, k)]
    }

    /// Adds a waiter to entry `i` (the caller checked that it has fewer than `max_merge`).
    pub fn push_waiter(&mut self, i: u32, w: W) {
        let k = self.waiting(i);
        debug_assert!(k < self.max_merge, "MSHR entry full");
        let at = self.slot(i, k);
        if at < self.waiters.len() {
            self.waiters[at] = w;
        } else {
            if at >= self.waiters.capacity() {
                self.grow(at + 1);
            }
            // (The slots before it, never used, are filled with it: within the capacity.)
            self.waiters.resize(at + 1, w);
        }
        self.entries[i as usize].waiting += 1;
    }

    /// Room for at least `need` waiter slots: twice the rows there were, within the
    /// `max_merge` rows the table may use.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, need: usize) {
        let full = self.entries.len() * self.max_merge;
        let want = (2 * self.waiters.capacity()).max(need).min(full);
        self.waiters.reserve_exact(want - self.waiters.len());
    }

    /// Removes waiter `k` of entry `i`; the later ones move up.
    pub fn remove_waiter(&mut self, i: u32, k: usize) {
        let n = self.waiting(i);
        debug_assert!(k < n);
        for j in k + 1..n {
            let (from, to) = (self.slot(i, j), self.slot(i, j - 1));
            self.waiters[to] = self.waiters[from];
        }
        self.entries[i as usize].waiting -= 1;
    }

    /// Allocates an entry for `line`, held in cache way `way` (caller checked
    /// `free_entries() > 0` and that the way has no entry).
    pub fn alloc(&mut self, way: usize, line: u64) -> u32 {
        debug_assert_eq!(self.by_way[way], NIL, "one MSHR entry per way");
        let i = self.free.pop().expect("MSHR table full");
        self.entries[i as usize] = MshrEntry {
            line,
            pending: 0,
            arrived: 0,
            waiting: 0,
        };
        self.way_of[i as usize] = way as u32;
        self.by_way[way] = i;
        i
    }

    pub fn release(&mut self, i: u32) {
        let way = std::mem::replace(&mut self.way_of[i as usize], NIL);
        self.by_way[way as usize] = NIL;
        self.entries[i as usize].waiting = 0;
        self.free.push(i);
    }

    pub fn is_empty(&self) -> bool {
        self.free.len() == self.entries.len()
    }

    /// The allocated entry of `line` found by searching every entry (debug checks).
    pub fn find_slow(&self, line: u64) -> Option<u32> {
        (0..self.entries.len())
            .find(|&i| self.way_of[i] != NIL && self.entries[i].line == line)
            .map(|i| i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashMap;

    /// An entry of the reference table, its waiters in a `Vec` of their own.
    #[derive(Debug, Clone)]
    struct LineEntry<W> {
        line: u64,
        waiters: Vec<W>,
    }

    /// The reference: a fixed-capacity MSHR table whose entries are found through a map
    /// keyed by line, entries in a slab (what the L2 used before entries were found by way).
    struct MshrTable<W> {
        entries: Vec<LineEntry<W>>,
        free: Vec<u32>,
        index: FxHashMap<u64, u32>,
    }

    impl<W> MshrTable<W> {
        pub fn new(entries: usize, max_merge: usize) -> Self {
            let entries = entries.max(1);
            let max_merge = max_merge.max(1);
            Self {
                entries: (0..entries)
                    .map(|_| LineEntry {
                        line: 0,
                        waiters: Vec::with_capacity(max_merge),
                    })
                    .collect(),
                free: (0..entries as u32).rev().collect(),
                index: FxHashMap::with_capacity_and_hasher(entries * 2, Default::default()),
            }
        }

        pub fn free_entries(&self) -> usize {
            self.free.len()
        }

        pub fn get(&self, line: u64) -> Option<u32> {
            self.index.get(&line).copied()
        }

        pub fn entry(&self, i: u32) -> &LineEntry<W> {
            &self.entries[i as usize]
        }

        pub fn entry_mut(&mut self, i: u32) -> &mut LineEntry<W> {
            &mut self.entries[i as usize]
        }

        /// Allocates an entry for `line` (caller checked `free_entries() > 0`).
        pub fn alloc(&mut self, line: u64) -> u32 {
            let i = self.free.pop().expect("MSHR table full");
            self.entries[i as usize].line = line;
            self.entries[i as usize].waiters.clear();
            self.index.insert(line, i);
            i
        }

        pub fn release(&mut self, i: u32) {
            let line = self.entries[i as usize].line;
            self.index.remove(&line);
            self.entries[i as usize].waiters.clear();
            self.free.push(i);
        }

        pub fn is_empty(&self) -> bool {
            self.index.is_empty()
        }
    }

    /// An entry that takes `max_merge` waiters makes the waiters' array grow by doubling from
    /// `START_ROWS` rows, never past `max_merge` rows, and every waiter reads back.
    #[test]
    fn waiters_grow_by_doubling_up_to_max_merge_rows() {
        let (entries, max_merge) = (3usize, 10usize);
        let mut t: WayMshr<u32> = WayMshr::new(entries, max_merge, 8);
        assert_eq!(t.waiters.capacity(), entries * START_ROWS);
        let e = t.alloc(5, 0x40);
        let mut capacities = vec![t.waiters.capacity()];
        for k in 0..max_merge as u32 {
            t.push_waiter(e, 100 + k);
            if t.waiters.capacity() != *capacities.last().unwrap() {
                capacities.push(t.waiters.capacity());
            }
        }
        // 12 slots (4 rows), then 24 (8 rows), then the 30 of all 10 rows.
        assert_eq!(capacities, [12, 24, 30]);
        let back: Vec<u32> = (0..max_merge).map(|k| t.waiter(e, k)).collect();
        assert_eq!(back, (100..110).collect::<Vec<u32>>());
    }

    /// Lines come and go in the ways of a small cache, with misses allocating entries and
    /// fills releasing them as the L2 does; the table found through the ways answers as the
    /// hash-map table found through the lines does, entry numbers included.
    #[test]
    fn matches_the_table_keyed_by_line() {
        let mut rnd = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        // (`max_merge` 3 fits the first rows; 40 makes the waiters' array grow.)
        for &(ways, entries, max_merge) in &[(4usize, 2usize, 3usize), (16, 5, 3), (64, 64, 3), (16, 5, 40)] {
            let mut by_way: WayMshr<u32> = WayMshr::new(entries, max_merge, ways);
            let mut by_line: MshrTable<u32> = MshrTable::new(entries, max_merge);
            let (mut capacity, mut growths) = (by_way.waiters.capacity(), 0);
            // The line each way holds (a line is in at most one way), u64::MAX: none.
            let mut held = vec![u64::MAX; ways];
            for step in 0..50_000u32 {
                let w = rnd(ways as u64) as usize;
                match rnd(3) {
                    // A miss on the way's line, or a new line replacing a way without an
                    // entry (a way with an entry has fills pending: never a victim).
                    0 | 1 => {
                        if by_way.get(w).is_none() && rnd(2) == 0 {
                            let line = loop {
                                let l = rnd(4 * ways as u64);
                                if !held.contains(&l) {
                                    break l;
                                }
                            };
                            held[w] = line;
                        }
                        let line = held[w];
                        if line == u64::MAX {
                            continue;
                        }
                        let e = by_way.get(w);
                        assert_eq!(e, by_line.get(line), "step {step}");
                        match e {
                            // A waiter served (by a fill of some of its sectors).
                            Some(e) if by_way.waiting(e) > 0 && rnd(4) == 0 => {
                                let k = rnd(by_way.waiting(e) as u64) as usize;
                                by_way.remove_waiter(e, k);
                                by_line.entry_mut(e).waiters.remove(k);
                            }
                            Some(e) => {
                                if by_way.waiting(e) < by_way.max_merge {
                                    by_way.push_waiter(e, step);
                                    by_line.entry_mut(e).waiters.push(step);
                                }
                            }
                            None => {
                                assert_eq!(by_way.free_entries(), by_line.free_entries());
                                if by_way.free_entries() > 0 {
                                    let a = by_way.alloc(w, line);
                                    assert_eq!(a, by_line.alloc(line), "step {step}");
                                    by_way.push_waiter(a, step);
                                    by_line.entry_mut(a).waiters.push(step);
                                }
                            }
                        }
                    }
                    // The fill of the way's line releases its entry.
                    _ => {
                        if let Some(e) = by_way.get(w) {
                            assert_eq!(Some(e), by_line.get(held[w]), "step {step}");
                            let waiters: Vec<u32> =
                                (0..by_way.waiting(e)).map(|k| by_way.waiter(e, k)).collect();
                            assert_eq!(waiters, by_line.entry(e).waiters, "step {step}");
                            if by_way.waiters.capacity() != capacity {
                                capacity = by_way.waiters.capacity();
                                growths += 1;
                            }
                            by_way.release(e);
                            by_line.release(e);
                        }
                    }
                }
                assert_eq!(by_way.is_empty(), by_line.is_empty(), "step {step}");
                for (way, &line) in held.iter().enumerate() {
                    let e = by_way.get(way);
                    if line != u64::MAX {
                        assert_eq!(e, by_line.get(line), "step {step}, way {way}");
                        assert_eq!(e, by_way.find_slow(line), "step {step}, way {way}");
                    } else {
                        assert_eq!(e, None);
                    }
                }
            }
            // The array grew by doubling (at most 4 → 8 → 16 → 32 → 40 rows), never past
            // `max_merge` rows.
            assert!(capacity <= entries * max_merge, "{capacity} slots");
            let most = if max_merge <= START_ROWS { 0 } else { 4 };
            assert!(growths <= most, "{growths} reallocations");
            if max_merge == 40 {
                assert!(growths > 0, "the test never needed a fifth row");
            }
        }
    }
}
