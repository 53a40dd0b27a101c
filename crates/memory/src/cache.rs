//! Sectored set-associative tag array and MSHR table shared by L1D and L2.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::config::Hashing;
use crate::hash::set_index;

const INVALID: u64 = u64::MAX;

/// Tag array with per-sector valid / dirty / pending (fill outstanding) masks and LRU.
#[derive(Debug, Clone)]
pub(crate) struct SectorCache {
    sets: u64,
    assoc: usize,
    hashing: Hashing,
    tags: Vec<u64>,
    pub valid: Vec<u8>,
    pub dirty: Vec<u8>,
    /// Sectors with a fill outstanding; written through `add_pending` / `clear_pending`
    /// only, which keep `ready` in step.
    pending: Vec<u8>,
    lru: Vec<u64>,
    stamp: u64,
    /// line -> way, for O(1) lookups (a line always maps to the same set).
    index: FxHashMap<u64, usize>,
    /// Per set: ways at and above this index hold no line (ways only become free through
    /// `invalidate_all`, and are filled lowest first, so the free ways are a suffix).
    next_free: Vec<u32>,
    /// Per set: the ways holding a line, by LRU stamp (oldest first).
    order: Vec<BTreeMap<u64, usize>>,
    /// Per set: the ways of `order` with no fill outstanding (the victim candidates), by
    /// LRU stamp: the victim is the first, without scanning past pending ways.
    ready: Vec<BTreeMap<u64, usize>>,
}

/// Remove `way`'s entry (LRU stamp `stamp`) from a per-set LRU map, if it is there.
fn unlink(map: &mut BTreeMap<u64, usize>, stamp: u64, way: usize) {
    if map.get(&stamp) == Some(&way) {
        map.remove(&stamp);
    }
}

/// A victim chosen for allocation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Victim {
    pub way: usize,
    /// Line evicted (if valid) and its dirty sectors.
    pub evicted: Option<(u64, u8)>,
}

impl SectorCache {
    pub fn new(sets: u64, assoc: usize, hashing: Hashing) -> Self {
        let (sets, assoc) = (sets.max(1), assoc.max(1));
        let n = sets as usize * assoc;
        Self {
            sets,
            assoc,
            hashing,
            tags: vec![INVALID; n],
            valid: vec![0; n],
            dirty: vec![0; n],
            pending: vec![0; n],
            lru: vec![0; n],
            stamp: 0,
            index: FxHashMap::default(),
            next_free: vec![0; sets as usize],
            order: vec![BTreeMap::new(); sets as usize],
            ready: vec![BTreeMap::new(); sets as usize],
        }
    }

    fn set_base(&self, set_line: u64) -> usize {
        set_index(set_line, self.sets, self.hashing) as usize * self.assoc
    }

    /// Way index of `line` (a line address, used as tag) whose set is chosen from
    /// `set_line` (the line index used for set selection).
    /// (`set_line` chose the set when the line was installed; a line lives in one set only.)
    pub fn find(&self, line: u64, _set_line: u64) -> Option<usize> {
        self.index.get(&line).copied()
    }

    pub fn touch(&mut self, way: usize) {
        self.stamp += 1;
        let set = way / self.assoc;
        if self.tags[way] != INVALID {
            unlink(&mut self.order[set], self.lru[way], way);
            self.order[set].insert(self.stamp, way);
            if self.pending[way] == 0 {
                unlink(&mut self.ready[set], self.lru[way], way);
                self.ready[set].insert(self.stamp, way);
            }
        }
        self.lru[way] = self.stamp;
    }

    /// Sectors of `way` with a fill outstanding.
    pub fn pending(&self, way: usize) -> u8 {
        self.pending[way]
    }

    /// Mark `sectors` of `way` as having a fill outstanding.
    pub fn add_pending(&mut self, way: usize, sectors: u8) {
        let was = self.pending[way];
        self.pending[way] |= sectors;
        if was == 0 && self.pending[way] != 0 && self.tags[way] != INVALID {
            let set = way / self.assoc;
            unlink(&mut self.ready[set], self.lru[way], way);
        }
    }

    /// The fill of `sectors` of `way` arrived.
    pub fn clear_pending(&mut self, way: usize, sectors: u8) {
        let was = self.pending[way];
        self.pending[way] &= !sectors;
        if was != 0 && self.pending[way] == 0 && self.tags[way] != INVALID {
            let set = way / self.assoc;
            self.ready[set].insert(self.lru[way], way);
        }
    }

    /// Chooses a way for `line` without changing anything: an invalid way first, else the
    /// least recently used way with no fill outstanding. `None` if all ways are pending.
    pub fn pick_victim(&self, set_line: u64) -> Option<Victim> {
        let set = self.set_base(set_line) / self.assoc;
        if (self.next_free[set] as usize) < self.assoc {
            return Some(Victim {
                way: set * self.assoc + self.next_free[set] as usize,
                evicted: None,
            });
        }
        let w = self.ready[set].values().next().copied()?;
        debug_assert_eq!(
            Some(w),
            self.order[set].values().copied().find(|&w| self.pending[w] == 0)
        );
        Some(Victim {
            way: w,
            evicted: if self.valid[w] != 0 {
                Some((self.tags[w], self.dirty[w]))
            } else {
                None
            },
        })
    }

    /// Installs `line` in `way` (after `pick_victim`), clearing its state.
    pub fn install(&mut self, way: usize, line: u64) {
        let set = way / self.assoc;
        let old = self.tags[way];
        if old == INVALID {
            self.next_free[set] += 1;
        } else {
            self.index.remove(&old);
            self.order[set].remove(&self.lru[way]);
            unlink(&mut self.ready[set], self.lru[way], way);
        }
        self.tags[way] = line;
        self.index.insert(line, way);
        self.valid[way] = 0;
        self.dirty[way] = 0;
        self.pending[way] = 0;
        self.touch(way);
    }

    pub fn invalidate_all(&mut self) {
        self.tags.fill(INVALID);
        self.valid.fill(0);
        self.dirty.fill(0);
        self.pending.fill(0);
        self.index.clear();
        self.next_free.fill(0);
        for o in self.order.iter_mut().chain(self.ready.iter_mut()) {
            o.clear();
        }
    }
}

/// One MSHR entry: a line with outstanding sectors and the requests waiting on it.
#[derive(Debug, Clone)]
pub(crate) struct MshrEntry<W> {
    pub line: u64,
    /// Sectors requested from the next level and not yet returned.
    pub pending: u8,
    /// Sectors returned so far (since allocation).
    pub arrived: u8,
    pub waiters: Vec<W>,
}

/// Fixed-capacity MSHR table; lookups through a map (never iterated), entries in a slab.
#[derive(Debug, Clone)]
pub(crate) struct MshrTable<W> {
    entries: Vec<MshrEntry<W>>,
    free: Vec<u32>,
    index: FxHashMap<u64, u32>,
    pub max_merge: usize,
}

impl<W> MshrTable<W> {
    pub fn new(entries: usize, max_merge: usize) -> Self {
        let entries = entries.max(1);
        let max_merge = max_merge.max(1);
        Self {
            entries: (0..entries)
                .map(|_| MshrEntry {
                    line: 0,
                    pending: 0,
                    arrived: 0,
                    waiters: Vec::with_capacity(max_merge),
                })
                .collect(),
            free: (0..entries as u32).rev().collect(),
            index: FxHashMap::with_capacity_and_hasher(entries * 2, Default::default()),
            max_merge,
        }
    }

    pub fn free_entries(&self) -> usize {
        self.free.len()
    }

    pub fn get(&self, line: u64) -> Option<u32> {
        self.index.get(&line).copied()
    }

    pub fn entry(&self, i: u32) -> &MshrEntry<W> {
        &self.entries[i as usize]
    }

    pub fn entry_mut(&mut self, i: u32) -> &mut MshrEntry<W> {
        &mut self.entries[i as usize]
    }

    /// Allocates an entry for `line` (caller checked `free_entries() > 0`).
    pub fn alloc(&mut self, line: u64) -> u32 {
        let i = self.free.pop().expect("MSHR table full");
        let e = &mut self.entries[i as usize];
        e.line = line;
        e.pending = 0;
        e.arrived = 0;
        e.waiters.clear();
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
