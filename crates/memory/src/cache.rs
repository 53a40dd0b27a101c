//! Sectored set-associative tag array shared by L1D and L2 (their MSHR tables: `l1/mshr.rs`,
//! `way_mshr.rs`).

use crate::chain::{ChainIndex, Chained};
use crate::config::Hashing;
use crate::hash::set_index;

const INVALID: u64 = u64::MAX;
/// End of a per-set list.
const NIL: u32 = u32::MAX;

/// Tag array with per-sector valid / dirty / pending (fill outstanding) masks and LRU.
///
/// Replacement: an invalid way first (lowest index), else the least recently used way with
/// no fill outstanding. Each set keeps its ways holding a line in a doubly linked list in
/// recency order (`prev` / `next`, oldest at `head`), which is the order of their LRU stamps
/// (a touch gives the way the largest stamp and moves it to the tail), and a cursor
/// `first_ready`: the oldest way with no fill outstanding. Every way before the cursor has a
/// fill outstanding, so moving it only passes pending ways; a way before it that becomes
/// ready (compared by stamp) becomes the cursor. Touch, install, pending changes and victim
/// choice are O(1) apart from those passes.
///
/// A way's state is one 32-byte record ([`Way`], two per cache line): a fill, a touch or
/// an install reads one line for it instead of one per field.
#[derive(Debug, Clone)]
pub(crate) struct SectorCache {
    sets: u64,
    assoc: usize,
    hashing: Hashing,
    /// The ways' records; indexing it gives a way's valid sectors, which the L1 and the L2
    /// read and set directly (`cache.valid[w]`).
    pub valid: Ways,
    /// A line was made dirty since the last `invalidate_all` (it may since be clean).
    any_dirty: bool,
    stamp: u64,
    /// line -> way, for O(1) lookups (a line always maps to the same set): the ways
    /// holding a line, chained through [`Way::chain`].
    index: ChainIndex,
    /// Per set: ways at and above this index hold no line (ways only become free through
    /// `invalidate_all`, and are filled lowest first, so the free ways are a suffix).
    next_free: Vec<u32>,
    /// Per set: oldest and newest way of the recency list, and the oldest way with no fill
    /// outstanding (`NIL`: none).
    head: Vec<u32>,
    tail: Vec<u32>,
    first_ready: Vec<u32>,
}

/// One way's state.
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
pub(crate) struct Way {
    tag: u64,
    lru: u64,
    /// Neighbours in its set's recency list (global way indices, `NIL` at the ends).
    prev: u32,
    next: u32,
    valid: u8,
    /// Written through `mark_dirty` only, which keeps `any_dirty`.
    dirty: u8,
    /// Sectors with a fill outstanding; written through `add_pending` / `clear_pending`
    /// only, which keep `first_ready` in step.
    pending: u8,
    /// The next way of its bucket in `SectorCache::index` (in the record's spare bytes).
    chain: u32,
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Way>() == 32);

impl Chained for Way {
    #[inline]
    fn key(&self) -> u64 {
        self.tag
    }
    #[inline]
    fn chain(&self) -> u32 {
        self.chain
    }
    #[inline]
    fn set_chain(&mut self, next: u32) {
        self.chain = next;
    }
}

impl Way {
    const EMPTY: Way = Way {
        tag: INVALID,
        lru: 0,
        prev: NIL,
        next: NIL,
        valid: 0,
        dirty: 0,
        pending: 0,
        chain: NIL,
    };
}

/// The ways' records ([`SectorCache::valid`]); `[w]` is way `w`'s valid sectors.
#[derive(Debug, Clone)]
pub(crate) struct Ways(Vec<Way>);

impl std::ops::Index<usize> for Ways {
    type Output = u8;
    #[inline]
    fn index(&self, w: usize) -> &u8 {
        &self.0[w].valid
    }
}

impl std::ops::IndexMut<usize> for Ways {
    #[inline]
    fn index_mut(&mut self, w: usize) -> &mut u8 {
        &mut self.0[w].valid
    }
}

/// A victim chosen for allocation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Victim {
    pub way: usize,
    /// The line the way holds, evicted if the way is taken (`None`: it holds no valid line).
    pub evicted: Option<EvictedLine>,
}

/// The valid line a [`Victim`] way holds: what allocating the way evicts (and writes back,
/// if dirty).
#[derive(Debug, Clone, Copy)]
pub(crate) struct EvictedLine {
    /// Its line address (address >> line bits).
    pub line: u64,
    /// Its dirty sectors (bit per sector; 0: clean, nothing to write back).
    pub dirty: u8,
}

impl SectorCache {
    pub fn new(sets: u64, assoc: usize, hashing: Hashing) -> Self {
        let (sets, assoc) = (sets.max(1), assoc.max(1));
        let n = sets as usize * assoc;
        Self {
            sets,
            assoc,
            hashing,
            valid: Ways(vec![Way::EMPTY; n]),
            any_dirty: false,
            stamp: 0,
            index: ChainIndex::new(n),
            next_free: vec![0; sets as usize],
            head: vec![NIL; sets as usize],
            tail: vec![NIL; sets as usize],
            first_ready: vec![NIL; sets as usize],
        }
    }

    #[inline]
    fn w(&self, way: usize) -> &Way {
        &self.valid.0[way]
    }

    #[inline]
    fn w_mut(&mut self, way: usize) -> &mut Way {
        &mut self.valid.0[way]
    }

    /// Set of a line (`set_line`: the line index used for set selection).
    #[inline]
    pub fn set_of(&self, set_line: u64) -> usize {
        set_index(set_line, self.sets, self.hashing) as usize
    }

    /// Way index of `line` (a line address, used as tag) whose set is chosen from
    /// `set_line` (the line index used for set selection).
    /// (`set_line` chose the set when the line was installed; a line lives in one set only.)
    #[inline]
    pub fn find(&self, line: u64, _set_line: u64) -> Option<usize> {
        self.index.find(&self.valid.0, line)
    }

    /// The way of `line`, which is expected in way `way` (looked up when not; the lookup
    /// needs no set, [`Self::find`]).
    #[inline]
    pub fn find_at(&self, way: usize, line: u64) -> Option<usize> {
        if self.valid.0.get(way).is_some_and(|w| w.tag == line) {
            Some(way)
        } else {
            self.index.find(&self.valid.0, line)
        }
    }

    /// The set of way `way` (a set's ways are consecutive): that of the line it holds,
    /// [`Self::set_of`] of the line's set-selection line, without hashing it.
    #[inline]
    pub fn set_of_way(&self, way: usize) -> usize {
        way / self.assoc
    }

    /// Removes way `w` of `set` from the recency list.
    #[inline]
    fn unlink(&mut self, set: usize, w: usize) {
        let (p, n) = (self.w(w).prev, self.w(w).next);
        if p == NIL {
            self.head[set] = n;
        } else {
            self.w_mut(p as usize).next = n;
        }
        if n == NIL {
            self.tail[set] = p;
        } else {
            self.w_mut(n as usize).prev = p;
        }
    }

    /// Appends way `w` of `set` to the recency list (newest).
    #[inline]
    fn push_tail(&mut self, set: usize, w: usize) {
        let t = self.tail[set];
        let r = self.w_mut(w);
        r.prev = t;
        r.next = NIL;
        if t == NIL {
            self.head[set] = w as u32;
        } else {
            self.w_mut(t as usize).next = w as u32;
        }
        self.tail[set] = w as u32;
    }

    /// Sets `first_ready` of `set` to the first way with no fill outstanding at or after
    /// `from` in the recency list (the ways before `from` are all pending).
    #[inline]
    fn advance(&mut self, set: usize, mut from: u32) {
        while from != NIL && self.w(from as usize).pending != 0 {
            from = self.w(from as usize).next;
        }
        self.first_ready[set] = from;
    }

    pub fn touch(&mut self, way: usize) {
        self.stamp += 1;
        let stamp = self.stamp;
        let r = self.w_mut(way);
        r.lru = stamp;
        if r.tag == INVALID {
            return;
        }
        let nx = r.next;
        let set = way / self.assoc;
        if self.tail[set] == way as u32 {
            return; // already the newest; the cursor stays valid
        }
        self.unlink(set, way);
        self.push_tail(set, way);
        if self.first_ready[set] == way as u32 {
            // The ways between the old position and `nx` were pending; `way` itself, now
            // at the tail, is ready, so the search ends at it at the latest.
            self.advance(set, nx);
        }
    }

    /// Marks `sectors` of `way` dirty.
    #[inline]
    pub fn mark_dirty(&mut self, way: usize, sectors: u8) {
        self.w_mut(way).dirty |= sectors;
        self.any_dirty |= sectors != 0;
    }

    /// False when no line has been dirty since the last `invalidate_all` (every victim
    /// is clean).
    #[inline]
    pub fn any_dirty(&self) -> bool {
        self.any_dirty
    }

    /// Sectors of `way` with a fill outstanding.
    pub fn pending(&self, way: usize) -> u8 {
        self.w(way).pending
    }

    /// Mark `sectors` of `way` as having a fill outstanding.
    pub fn add_pending(&mut self, way: usize, sectors: u8) {
        let r = self.w_mut(way);
        let was = r.pending;
        r.pending |= sectors;
        if was == 0 && r.pending != 0 && r.tag != INVALID {
            let nx = r.next;
            let set = way / self.assoc;
            if self.first_ready[set] == way as u32 {
                self.advance(set, nx);
            }
        }
    }

    /// The fill of `sectors` of `way` arrived.
    pub fn clear_pending(&mut self, way: usize, sectors: u8) {
        let r = self.w_mut(way);
        let was = r.pending;
        r.pending &= !sectors;
        if was != 0 && r.pending == 0 && r.tag != INVALID {
            let lru = r.lru;
            let set = way / self.assoc;
            let fr = self.first_ready[set];
            if fr == NIL || lru < self.w(fr as usize).lru {
                self.first_ready[set] = way as u32;
            }
        }
    }

    /// Chooses a way for `line` without changing anything: an invalid way first, else the
    /// least recently used way with no fill outstanding. `None` if all ways are pending.
    #[inline]
    pub fn pick_victim(&self, set_line: u64) -> Option<Victim> {
        self.pick_victim_in(self.set_of(set_line))
    }

    /// [`Self::pick_victim`] in a set given by its index ([`Self::set_of`]).
    #[inline]
    pub fn pick_victim_in(&self, set: usize) -> Option<Victim> {
        if (self.next_free[set] as usize) < self.assoc {
            return Some(Victim {
                way: set * self.assoc + self.next_free[set] as usize,
                evicted: None,
            });
        }
        let w = self.first_ready[set];
        if w == NIL {
            return None;
        }
        let w = w as usize;
        let r = self.w(w);
        Some(Victim {
            way: w,
            evicted: if r.valid != 0 {
                Some(EvictedLine {
                    line: r.tag,
                    dirty: r.dirty,
                })
            } else {
                None
            },
        })
    }

    /// Whether [`Self::pick_victim_in`] finds a way in `set`.
    #[inline]
    pub fn has_victim_in(&self, set: usize) -> bool {
        (self.next_free[set] as usize) < self.assoc || self.first_ready[set] != NIL
    }

    /// Installs `line` in `way` (after `pick_victim`), clearing its state. Returns the line
    /// it displaced, if the way held one.
    pub fn install(&mut self, way: usize, line: u64) -> Option<u64> {
        let set = way / self.assoc;
        let old = self.w(way).tag;
        if old == INVALID {
            self.next_free[set] += 1;
        } else {
            self.index.remove(&mut self.valid.0, way);
            let nx = self.w(way).next;
            self.unlink(set, way);
            if self.first_ready[set] == way as u32 {
                self.advance(set, nx);
            }
        }
        self.stamp += 1;
        let stamp = self.stamp;
        let r = self.w_mut(way);
        r.tag = line;
        r.valid = 0;
        r.dirty = 0;
        r.pending = 0;
        r.lru = stamp;
        self.index.insert(&mut self.valid.0, way);
        self.push_tail(set, way);
        if self.first_ready[set] == NIL {
            self.first_ready[set] = way as u32;
        }
        (old != INVALID).then_some(old)
    }

    pub fn invalidate_all(&mut self) {
        for r in &mut self.valid.0 {
            r.tag = INVALID;
            r.valid = 0;
            r.dirty = 0;
            r.pending = 0;
        }
        self.any_dirty = false;
        self.index.clear();
        self.next_free.fill(0);
        self.head.fill(NIL);
        self.tail.fill(NIL);
        self.first_ready.fill(NIL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The replacement rule written directly: an invalid way first (lowest), else the way
    /// with the smallest LRU stamp among those holding a line with no fill outstanding.
    fn reference_victim(c: &SectorCache, set: usize) -> Option<usize> {
        let ways = set * c.assoc..(set + 1) * c.assoc;
        if let Some(w) = ways.clone().find(|&w| c.w(w).tag == INVALID) {
            return Some(w);
        }
        ways.filter(|&w| c.w(w).pending == 0).min_by_key(|&w| c.w(w).lru)
    }

    #[test]
    fn victims_follow_the_lru_rule() {
        let mut rnd = crate::test_rng::xorshift(0x2545_f491_4f6c_dd1du64);
        // Linear and hashed set indices.
        for &(sets, assoc, hashing) in &[
            (1u64, 1usize, Hashing::Linear),
            (1, 4, Hashing::Linear),
            (4, 8, Hashing::Linear),
            (16, 16, Hashing::Ipoly),
            (2, 32, Hashing::Linear),
            (16, 64, Hashing::Xor),
        ] {
            let mut c = SectorCache::new(sets, assoc, hashing);
            for step in 0..40_000 {
                let line = rnd(sets * assoc as u64 * 3);
                match rnd(10) {
                    0..=3 => match c.find(line, line) {
                        Some(w) => c.touch(w),
                        None => {
                            let set = c.set_of(line);
                            let v = c.pick_victim(line).map(|v| v.way);
                            assert_eq!(v, reference_victim(&c, set), "step {step}");
                            if let Some(w) = v {
                                c.install(w, line);
                                c.touch(w);
                            }
                        }
                    },
                    4..=5 => {
                        if let Some(w) = c.find(line, line) {
                            c.add_pending(w, 1 << rnd(4));
                        }
                    }
                    6..=8 => {
                        if let Some(w) = c.find(line, line) {
                            c.clear_pending(w, 1 << rnd(4));
                        }
                    }
                    _ => {
                        if rnd(500) == 0 {
                            c.invalidate_all();
                        }
                    }
                }
                let held = c.valid.0.iter().position(|r| r.tag == line);
                assert_eq!(c.find(line, line), held, "step {step}: find");
                assert_eq!(c.find_at(rnd(c.valid.0.len() as u64) as usize, line), held);
                if let Some(w) = held {
                    assert_eq!(c.find_at(w, line), held);
                    assert_eq!(c.set_of_way(w), c.set_of(line), "step {step}: set of the way");
                }
                for set in 0..sets as usize {
                    let v = c.pick_victim_in(set).map(|v| v.way);
                    assert_eq!(v, reference_victim(&c, set), "step {step}, set {set}");
                    assert_eq!(c.has_victim_in(set), v.is_some());
                }
            }
        }
    }
}
