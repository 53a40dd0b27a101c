//! The L1's MSHR table: entries found through a map keyed by line, each entry one 64-byte
//! record holding its line, sectors and first waiters, so that a fill reads one cache line
//! for the entry and its waiters (a `Vec` of waiters per entry would be a second miss). Waiters beyond the record's room go to the entry's overflow
//! slots, one table grown the first time an entry needs them (up to that entry's slots:
//! entries are taken lowest first). A `Vec` per entry made the allocator touch all of them
//! (2.6 K page faults of a loaded vector add's 24 K); a zeroed table allocated with the MSHRs
//! was touched all the same whenever the allocator reused memory, which it zeroes itself
//! (1.4 K of the BFS trace's 5.7 K faults, 16 kernels).

use crate::chain::{ChainIndex, Chained, NIL};

/// A load waiting on an MSHR entry: its pending-request slot and the sectors it needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct L1Waiter {
    pub slot: u32,
    pub need: u8,
}

impl L1Waiter {
    /// As an overflow slot holds it.
    #[inline]
    fn pack(self) -> u64 {
        u64::from(self.slot) | u64::from(self.need) << 32
    }

    #[inline]
    fn unpack(v: u64) -> Self {
        L1Waiter {
            slot: v as u32,
            need: (v >> 32) as u8,
        }
    }
}

/// Waiters held in an entry's record.
const INLINE: usize = 6;

/// One entry: a line with outstanding sectors and the loads waiting on it, in the order a
/// `Vec` would hold them (`inline` first, then `more`).
#[derive(Debug, Clone)]
#[repr(C, align(64))]
struct Entry {
    line: u64,
    /// Sectors requested from the L2 and not yet returned (non-zero while the entry is
    /// taken: it is released when none are left).
    pending: u8,
    /// Sectors returned since the entry was taken.
    arrived: u8,
    /// Waiters.
    n: u16,
    inline: [L1Waiter; INLINE],
    /// The next entry of its bucket in `L1Mshr::index` (in the record's spare bytes).
    chain: u32,
}

impl Chained for Entry {
    #[inline]
    fn key(&self) -> u64 {
        self.line
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

#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Entry>() == 64);

/// Fixed-capacity MSHR table; lookups through an index of the taken entries by line.
#[derive(Debug, Clone)]
pub(super) struct L1Mshr {
    entries: Vec<Entry>,
    /// Entry i's waiters beyond `INLINE`: slots `i * stride..`, packed
    /// ([`L1Waiter::pack`]); as long as the highest entry that needed them.
    more: Vec<u64>,
    stride: usize,
    free: Vec<u32>,
    index: ChainIndex,
    pub max_merge: usize,
}

impl L1Mshr {
    pub fn new(entries: usize, max_merge: usize) -> Self {
        let entries = entries.max(1);
        let max_merge = max_merge.max(1);
        Self {
            entries: vec![
                Entry {
                    line: 0,
                    pending: 0,
                    arrived: 0,
                    n: 0,
                    inline: [L1Waiter::default(); INLINE],
                    chain: NIL,
                };
                entries
            ],
            more: Vec::new(),
            stride: max_merge.saturating_sub(INLINE),
            free: (0..entries as u32).rev().collect(),
            index: ChainIndex::new(entries),
            max_merge,
        }
    }

    pub fn free_entries(&self) -> usize {
        self.free.len()
    }

    /// Entries in all (free or not).
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.free.len() == self.entries.len()
    }

    #[inline]
    pub fn get(&self, line: u64) -> Option<u32> {
        self.index.find(&self.entries, line).map(|i| i as u32)
    }

    /// [`Self::get`] of `line`, which is expected in entry `i` (looked up when not). A taken
    /// entry has sectors pending, a free one none.
    #[inline]
    pub fn get_at(&self, i: u32, line: u64) -> Option<u32> {
        let at = self
            .entries
            .get(i as usize)
            .is_some_and(|e| e.line == line && e.pending != 0);
        let found = if at { Some(i) } else { self.get(line) };
        debug_assert_eq!(found, self.get(line), "MSHR entry hint");
        found
    }

    /// Takes a free entry for `line` (the caller checked `free_entries() > 0`).
    pub fn alloc(&mut self, line: u64) -> u32 {
        let i = self.free.pop().expect("MSHR table full");
        let e = &mut self.entries[i as usize];
        e.line = line;
        e.pending = 0;
        e.arrived = 0;
        e.n = 0;
        self.index.insert(&mut self.entries, i as usize);
        i
    }

    /// Frees entry `i` (its sectors have all arrived).
    pub fn release(&mut self, i: u32) {
        self.index.remove(&mut self.entries, i as usize);
        let e = &mut self.entries[i as usize];
        e.pending = 0;
        e.n = 0;
        self.free.push(i);
    }

    pub fn pending(&self, i: u32) -> u8 {
        self.entries[i as usize].pending
    }

    pub fn waiters(&self, i: u32) -> usize {
        self.entries[i as usize].n as usize
    }

    /// Requests `sectors` more for entry `i`; returns those not already requested.
    pub fn request(&mut self, i: u32, sectors: u8) -> u8 {
        let e = &mut self.entries[i as usize];
        let new = sectors & !e.pending;
        e.pending |= new;
        e.arrived &= !new;
        new
    }

    /// Adds a waiter to entry `i` (the caller checked it has fewer than `max_merge`).
    pub fn push(&mut self, i: u32, w: L1Waiter) {
        let e = &mut self.entries[i as usize];
        let n = e.n as usize;
        if n < INLINE {
            e.inline[n] = w;
        } else {
            // The caller's check keeps an entry within its own slots (a `Vec` would have
            // grown; a slot past them would belong to the next entry).
            assert!(n < self.max_merge, "MSHR entry {i} has {n} waiters already");
            let end = (i as usize + 1) * self.stride;
            if self.more.len() < end {
                // Once per entry that first needs them (the table only grows).
                self.more.resize(end, 0);
            }
            self.more[i as usize * self.stride + n - INLINE] = w.pack();
        }
        e.n += 1;
    }

    /// `sectors` of entry `i` arrived; `done` gets each waiter whose sectors have all
    /// arrived, which leaves the list (the last waiter taking its place, as
    /// `Vec::swap_remove` does). Returns whether the entry has nothing pending left.
    pub fn arrive(&mut self, i: u32, sectors: u8, mut done: impl FnMut(L1Waiter)) -> bool {
        let iu = i as usize;
        let e = &mut self.entries[iu];
        e.pending &= !sectors;
        e.arrived |= sectors;
        let arrived = e.arrived;
        // An entry with more than `INLINE` waiters has its slots (`push`).
        let more = self
            .more
            .get_mut(iu * self.stride..(iu + 1) * self.stride)
            .unwrap_or_default();
        let mut k = 0;
        while k < e.n as usize {
            let w = if k < INLINE {
                e.inline[k]
            } else {
                L1Waiter::unpack(more[k - INLINE])
            };
            if w.need & !arrived == 0 {
                // swap_remove(k)
                let last = e.n as usize - 1;
                let lw = if last < INLINE {
                    e.inline[last]
                } else {
                    L1Waiter::unpack(more[last - INLINE])
                };
                if k < last {
                    if k < INLINE {
                        e.inline[k] = lw;
                    } else {
                        more[k - INLINE] = lw.pack();
                    }
                }
                e.n -= 1;
                done(w);
            } else {
                k += 1;
            }
        }
        e.pending == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A taken entry as a `Vec` of waiters would hold it.
    #[derive(Debug, Clone)]
    struct Model {
        line: u64,
        pending: u8,
        arrived: u8,
        waiters: Vec<L1Waiter>,
    }

    /// A new table holds no overflow slots (allocated up front they were zeroed, so touched,
    /// whenever the allocator reused memory: 129 KB per SM and kernel on the RTX A6000), and
    /// an entry's first overflow grows the table to that entry's slots only.
    #[test]
    fn overflow_slots_are_made_when_an_entry_first_needs_them() {
        let mut t = L1Mshr::new(384, 48);
        assert!(t.more.is_empty());
        let (a, b) = (t.alloc(10), t.alloc(20));
        assert_eq!(t.request(b, 3), 3);
        for k in 0..INLINE as u32 {
            t.push(a, L1Waiter { slot: k, need: 1 });
            t.push(b, L1Waiter { slot: k, need: 1 });
        }
        assert!(
            t.more.is_empty(),
            "{} slots for waiters within the records",
            t.more.len()
        );
        t.push(b, L1Waiter { slot: 99, need: 2 });
        assert_eq!(t.more.len(), (b as usize + 1) * t.stride);
        t.push(a, L1Waiter { slot: 98, need: 2 });
        assert_eq!(
            t.more.len(),
            (b as usize + 1) * t.stride,
            "entry {a} is below entry {b}"
        );
        let mut got = Vec::new();
        assert!(!t.arrive(b, 1, |w| got.push(w.slot)));
        assert_eq!(got.len(), INLINE);
        assert!(t.arrive(b, 2, |w| got.push(w.slot)));
        assert_eq!(got.last(), Some(&99));
    }

    /// The table's waiter lists follow a `Vec` with `push` and `swap_remove` step by step,
    /// across the record's room, with entries taken and released.
    #[test]
    fn waiters_follow_a_vec() {
        let mut rnd = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut t = L1Mshr::new(4, 20);
        let mut model: Vec<Option<Model>> = vec![None; 4];
        let mut most = 0;
        for step in 0..50_000 {
            let line = rnd(8);
            match t.get(line) {
                None => {
                    if t.free_entries() > 0 {
                        let i = t.alloc(line);
                        let s = 1 << rnd(4);
                        assert_eq!(t.request(i, s), s);
                        model[i as usize] = Some(Model {
                            line,
                            pending: s,
                            arrived: 0,
                            waiters: Vec::new(),
                        });
                    }
                }
                Some(i) => {
                    let m = model[i as usize].as_mut().expect("taken");
                    assert_eq!(m.line, line);
                    assert_eq!(t.get_at(i, line), Some(i));
                    if rnd(3) == 0 && t.waiters(i) < t.max_merge {
                        let w = L1Waiter {
                            slot: rnd(1000) as u32,
                            need: (rnd(15) + 1) as u8,
                        };
                        t.push(i, w);
                        m.waiters.push(w);
                        let more = rnd(16) as u8;
                        let new = more & !m.pending;
                        assert_eq!(t.request(i, more), new);
                        m.pending |= new;
                        m.arrived &= !new;
                    } else {
                        let s = m.pending & (rnd(16) as u8 | 1 << m.pending.trailing_zeros());
                        let mut got = Vec::new();
                        let empty = t.arrive(i, s, |w| got.push(w));
                        m.pending &= !s;
                        m.arrived |= s;
                        let mut want = Vec::new();
                        let mut k = 0;
                        while k < m.waiters.len() {
                            if m.waiters[k].need & !m.arrived == 0 {
                                want.push(m.waiters.swap_remove(k));
                            } else {
                                k += 1;
                            }
                        }
                        assert_eq!(got, want, "step {step}");
                        assert_eq!(empty, m.pending == 0);
                        if empty {
                            t.release(i);
                            model[i as usize] = None;
                            assert_eq!(t.get(line), None);
                            assert_eq!(t.get_at(i, line), None);
                            continue;
                        }
                    }
                    assert_eq!(t.waiters(i), m.waiters.len());
                    assert_eq!(t.pending(i), m.pending);
                    most = most.max(m.waiters.len());
                }
            }
        }
        assert!(most > INLINE, "lists longer than the record's room: {most}");
    }
}
