//! One L2 slice (memory sub-partition): sectored write-back write-allocate cache,
//! MSHRs, atomic unit, queues to and from its DRAM channel.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use crate::cache::{EvictedLine, SectorCache};
use crate::config::MemoryConfig;
use crate::counters::counters;
use crate::dram::{DramDone, DramReq};
use crate::hash::{AddressMapping, DramLocation};
use crate::types::Due;
use crate::types::{L2ReqKind, L2Request, L2Response};
use crate::way_mshr::WayMshr;

counters! {
    /// L2 counters (summed over slices in [`crate::MemStats`]).
    #[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
    pub struct L2Stats {
        pub accesses: u64,
        pub read_hits: u64,
        pub read_misses: u64,
        /// Reads/atomics whose line was present but some sectors were not.
        pub sector_misses: u64,
        pub write_hits: u64,
        pub write_misses: u64,
        pub atomic_hits: u64,
        pub atomic_misses: u64,
        /// Misses merged into an outstanding MSHR entry.
        pub mshr_merges: u64,
        /// Reads/atomics whose missing sectors were all being fetched for an earlier miss: they
        /// wait for that fill (Accel-Sim's HIT_RESERVED; not counted as misses).
        pub hit_reserved: u64,
        /// Cycles the head request could not be processed (MSHR, way, DRAM queue, output).
        pub reservation_fails: u64,
        pub evictions: u64,
        pub dirty_evictions: u64,
        /// Sector reads / writes sent to DRAM.
        pub dram_read_sectors: u64,
        pub dram_write_sectors: u64,
        /// Responses sent to SMs.
        pub responses: u64,
        /// Read hits delayed behind an atomic on the same line (same-address ordering).
        pub reads_after_atomic: u64,
    }
}

#[derive(Debug, Clone, Copy)]
struct Waiter {
    sm: u16,
    tag: u32,
    kind: L2ReqKind,
    /// Sectors requested (returned in the response) and the subset that missed.
    sectors: u8,
    need: u8,
    atomic_max_same: u16,
    /// An atomic's data bytes (its lanes' operands on the line): what its response returns,
    /// as on a hit.
    bytes: u32,
}

/// An atomic the slice performed lately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RecentAtomic {
    line: u64,
    /// The cycle its result is in the data array.
    done: u64,
}

/// A head request that stalled for room in `to_dram`: the room it needs, its line and that
/// line's cache set.
#[derive(Debug, Clone, Copy)]
struct RoomStall {
    room: usize,
    line: u64,
    set: usize,
}

/// When a slice must be visited again ([`L2Slice::wake_after`]): from L2 cycle `l2_at` or
/// interconnect cycle `icnt_at` on, or as soon as its request queue is not empty
/// (`watch_in`) or its response queue has room (`watch_out`). Kept per partition in one
/// compact array, so that a cycle in which a slice cannot act reads this record only. The
/// DRAM side wakes a slice (`l2_at = 0`) when it fills it or takes from its `to_dram`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SliceWake {
    pub l2_at: u64,
    pub icnt_at: u64,
    /// The cycle the head of its `to_dram` is ready for the DRAM channel (`u64::MAX`: none).
    pub to_dram_ready: u64,
    pub watch_in: bool,
    pub watch_out: bool,
    /// While not visited, its head request's memoised stall counts in every L2 cycle.
    pub stall_counts: bool,
    /// It may hold requests, responses or fills (false: it is idle).
    pub busy: bool,
}

impl SliceWake {
    /// Visit at once.
    pub const AWAKE: SliceWake = SliceWake {
        l2_at: 0,
        icnt_at: u64::MAX,
        to_dram_ready: u64::MAX,
        watch_in: false,
        watch_out: false,
        stall_counts: false,
        busy: true,
    };
}

/// A request as it travels through the request network.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InReq {
    pub sm: u16,
    pub req: L2Request,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct OutResp {
    pub ready: u64,
    pub seq: u64,
    pub sm: u16,
    pub bytes: u32,
    pub resp: L2Response,
}

impl PartialEq for OutResp {
    fn eq(&self, o: &Self) -> bool {
        (self.ready, self.seq) == (o.ready, o.seq)
    }
}
impl Eq for OutResp {}
impl PartialOrd for OutResp {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for OutResp {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.ready, self.seq).cmp(&(o.ready, o.seq))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct L2Slice {
    index: usize,
    line_shift: u32,
    sector_shift: u32,
    latency: u64,
    fill_latency: u64,
    hit_latency: u64,
    port_bytes: u32,
    header_bytes: u32,
    atomic_latency: u64,
    atomic_conflict: f64,
    dram_latency: u64,
    cache: SectorCache,
    /// MSHRs, found through the cache way of their line.
    mshr: WayMshr<Waiter>,
    port_free: u64,
    atomic_busy: u64,
    /// Atomics whose result is not yet in the data array, one per line: a read hit of the
    /// same line waits for the result, so that a load after an atomic sees it. Entries
    /// whose result is in are dropped when an atomic is noted.
    recent_atomics: Vec<RecentAtomic>,
    seq: u64,
    pub resp: BinaryHeap<Reverse<OutResp>>,
    resp_cap: usize,
    /// Sector requests to the DRAM channel, each with the L2 cycle it is ready for the
    /// channel (`dram.latency` after it was queued).
    pub to_dram: VecDeque<Due<DramReq>>,
    to_dram_cap: usize,
    /// The cycle the head of `to_dram` is ready for the DRAM channel (`u64::MAX`: empty).
    to_dram_ready: u64,
    pub from_dram: VecDeque<DramDone>,
    pub from_dram_cap: usize,
    /// ROP/tag pipeline: requests wait `latency` cycles before the tag lookup
    /// (GPGPU-Sim's `-gpgpu_l2_rop_latency` delay queue), so hits and misses both pay it.
    /// Each request with the L2 cycle it is due for its tag lookup.
    pub rop: VecDeque<Due<InReq>>,
    rop_cap: usize,
    /// The cycle the head of `rop` is due for its tag lookup (`u64::MAX`: `rop` is empty),
    /// kept here so that a cycle whose head is not due reads no queue entry.
    rop_due: u64,
    /// While the memory system runs its back half ahead of its front half (a quantum of
    /// several core cycles, [`crate::MemorySystem::back_cycle`]): the L2 cycles of the
    /// lookups that took a request out of `rop`, oldest first, so that a request entering
    /// at an earlier cycle sees the room `rop` had then ([`L2Slice::rop_room_at`]).
    rop_pops: VecDeque<u64>,
    recording_pops: bool,
    /// Counts the changes of the cache and MSHR state that can decide a stalled head
    /// request otherwise: a request processed, a DRAM fill applied (but see `room_stall`).
    changes: u64,
    /// `changes + 1` when the head request stalled (0: none): until `changes` moves, its
    /// tag lookup stalls again for the same reason, unless that reason was room in
    /// `to_dram` (`room_stall`; requests leaving `to_dram` change nothing else) and
    /// `to_dram` has the room by now.
    stalled: u64,
    room_stall: Option<RoomStall>,
    pub stats: L2Stats,
}

impl L2Slice {
    pub fn new(cfg: &MemoryConfig, index: usize) -> Self {
        let l2 = &cfg.l2;
        let slice_bytes = l2.size_kb as u64 * 1024 / cfg.l2_slices().max(1) as u64;
        let lines = (slice_bytes / l2.line_bytes as u64).max(1);
        let assoc = (l2.assoc as u64).clamp(1, lines);
        let sets = lines / assoc;
        let resp_cap = l2.queue_l2_to_icnt.max(1) as usize;
        let mshr_entries = l2.mshr_entries as usize;
        Self {
            index,
            line_shift: l2.line_bytes.trailing_zeros(),
            sector_shift: l2.sector_bytes.trailing_zeros(),
            latency: l2.latency as u64,
            fill_latency: l2.fill_latency as u64,
            hit_latency: l2.fill_latency as u64,
            port_bytes: l2.data_port_bytes.max(1),
            header_bytes: cfg.icnt.header_bytes,
            atomic_latency: l2.atomic_latency as u64,
            atomic_conflict: l2.atomic_conflict_cycles,
            dram_latency: cfg.dram.latency as u64,
            cache: SectorCache::new(sets, assoc as usize, l2.set_hashing),
            mshr: WayMshr::new(mshr_entries, l2.mshr_max_merge as usize, (sets * assoc) as usize),
            port_free: 0,
            atomic_busy: 0,
            recent_atomics: Vec::new(),
            seq: 0,
            resp: BinaryHeap::with_capacity(resp_cap + mshr_entries + 8),
            resp_cap,
            to_dram: VecDeque::with_capacity(l2.queue_l2_to_dram.max(1) as usize + 16),
            to_dram_cap: l2.queue_l2_to_dram.max(1) as usize,
            to_dram_ready: u64::MAX,
            from_dram: VecDeque::with_capacity(cfg.dram.return_queue_entries.max(1) as usize),
            from_dram_cap: cfg.dram.return_queue_entries.max(1) as usize,
            rop: VecDeque::with_capacity((l2.latency + l2.queue_icnt_to_l2.max(1)) as usize),
            rop_cap: (l2.latency + l2.queue_icnt_to_l2.max(1)) as usize,
            rop_due: u64::MAX,
            rop_pops: VecDeque::new(),
            recording_pops: false,
            changes: 0,
            stalled: 0,
            room_stall: None,
            stats: L2Stats::default(),
        }
    }

    pub fn is_idle(&self) -> bool {
        self.rop.is_empty()
            && self.resp.is_empty()
            && self.to_dram.is_empty()
            && self.from_dram.is_empty()
            && self.mshr.is_empty()
    }

    /// Whether a request may enter the ROP pipeline this cycle.
    pub fn rop_has_room(&self) -> bool {
        self.rop.len() < self.rop_cap
    }

    /// Starts (`true`) or ends recording the cycles of the lookups' pops from `rop`
    /// ([`L2Slice::rop_room_at`]); ending forgets them.
    pub(crate) fn record_rop_pops(&mut self, yes: bool) {
        self.recording_pops = yes;
        self.rop_pops.clear();
    }

    /// Whether a request may enter the ROP pipeline at L2 cycle `now`, when the lookups of
    /// later cycles have already run (their pops are recorded): `rop` held the requests it
    /// holds now plus those the later lookups took.
    pub fn rop_room_at(&mut self, now: u64) -> bool {
        let p = &mut self.rop_pops;
        while p.front().is_some_and(|&c| c <= now) {
            p.pop_front();
        }
        self.rop.len() + p.len() < self.rop_cap
    }

    pub fn rop_push(&mut self, now: u64, r: InReq) {
        if self.rop.is_empty() {
            self.rop_due = now + self.latency;
        }
        self.rop.push_back(Due {
            at: now + self.latency,
            item: r,
        });
    }

    /// Tag lookup of the ROP pipeline's head, if it is due and the port is free. (Inlined
    /// into the slice's cycle: most calls find nothing due or a memoised stall, and only
    /// a lookup that processes the head calls out, [`Self::lookup_head`].)
    #[inline(always)]
    pub fn lookup(&mut self, now: u64, map: &AddressMapping) {
        if self.rop_due > now || self.port_free > now || self.resp.len() >= self.resp_cap {
            return;
        }
        debug_assert_eq!(self.rop.front().map_or(u64::MAX, |f| f.at), self.rop_due);
        // A memoised stall reads no queue entry.
        if self.stall_holds() {
            debug_assert!(
                self.rop
                    .front()
                    .is_some_and(|&Due { item: r, .. }| !self.clone().process(now, &r, map)),
                "memoised L2 stall"
            );
            self.stats.reservation_fails += 1;
            return;
        }
        self.lookup_head(now, map);
    }

    /// Whether the head request stalls again for the reason it stalled last time. A stall
    /// depends on the cache, MSHR and `to_dram` state only (not on the time), which only
    /// the changes counted in `changes` alter, and requests leaving `to_dram`, which only
    /// add room.
    #[inline]
    pub fn stall_holds(&self) -> bool {
        self.stalled == self.changes + 1 && self.room_stall.is_none_or(|s| self.dram_room() < s.room)
    }

    /// The tag lookup of the ROP pipeline's head (due, and its stall not memoised).
    #[inline(never)]
    fn lookup_head(&mut self, now: u64, map: &AddressMapping) {
        let Some(&Due { item: r, .. }) = self.rop.front() else {
            return;
        };
        self.room_stall = None;
        if self.process(now, &r, map) {
            self.rop.pop_front();
            if self.recording_pops {
                self.rop_pops.push_back(now);
            }
            self.rop_due = self.rop.front().map_or(u64::MAX, |f| f.at);
            self.changes += 1;
        } else {
            self.stalled = self.changes + 1;
        }
    }

    /// The head of `to_dram` left for its DRAM channel. Returns whether that may change
    /// what the slice does next ([`SliceWake`]): a stall for room in `to_dram` may end, and
    /// the slice may have become idle.
    pub fn pop_to_dram(&mut self) -> bool {
        self.to_dram.pop_front();
        self.to_dram_ready = self.to_dram.front().map_or(u64::MAX, |f| f.at);
        self.room_stall.is_some() || self.to_dram.is_empty()
    }

    /// The cycle the head of `to_dram` is ready for the DRAM channel (`u64::MAX`: empty).
    #[inline]
    pub fn to_dram_ready(&self) -> u64 {
        self.to_dram_ready
    }

    /// Counts a cycle in which the head request's memoised stall held while the slice was
    /// not visited ([`SliceWake::stall_counts`]).
    #[inline]
    pub fn count_stall(&mut self) {
        self.stats.reservation_fails += 1;
    }

    /// What the slice can do in the L2 cycles after `now` (when its cycle `now` is over),
    /// as long as nothing outside it changes (`out_room`: its response queue to the
    /// crossbar has room; `req_head`: the interconnect cycle from which the head of its
    /// request queue may enter, `None`: that queue is empty).
    pub fn wake_after(&self, now: u64, out_room: bool, req_head: Option<u64>) -> SliceWake {
        let next = now + 1;
        let mut w = SliceWake {
            l2_at: u64::MAX,
            icnt_at: u64::MAX,
            to_dram_ready: self.to_dram_ready,
            watch_in: false,
            watch_out: false,
            stall_counts: false,
            busy: !self.is_idle(),
        };
        // Until the slice acts again, `resp` stays as it is.
        let resp_room = self.resp.len() < self.resp_cap;
        // 1. A fill (new ones come from the DRAM channel, which wakes the slice).
        if !self.from_dram.is_empty() && resp_room {
            w.l2_at = next;
        }
        // 2. A response: when it is ready, if the response queue has room; only the
        // crossbar changes that queue (it takes from it), so wait for room if it is full.
        if let Some(Reverse(top)) = self.resp.peek() {
            if out_room {
                w.l2_at = w.l2_at.min(top.ready.max(next));
            } else {
                w.watch_out = true;
            }
        }
        // 3. A tag lookup: the head's memoised stall counts every cycle until something
        // that can end it (a fill, a request leaving `to_dram`) wakes the slice.
        if !self.rop.is_empty() && resp_room {
            let t = self.rop_due.max(self.port_free);
            if t <= next && self.stall_holds() {
                w.stall_counts = true;
            } else {
                w.l2_at = w.l2_at.min(t.max(next));
            }
        }
        // 4. A request into the ROP pipeline (only the slice's lookups make room in it).
        if self.rop_has_room() {
            match req_head {
                Some(at) => w.icnt_at = at,
                None => w.watch_in = true,
            }
        }
        w
    }

    /// Whether the slice's L2 cycle `now` would do anything but count a memoised stall
    /// (`out_room`, `req_ready`: its response queue has room, the head of its request queue
    /// may enter), and whether it would count one (debug check of [`SliceWake`]).
    pub fn would_act(&self, now: u64, out_room: bool, req_ready: bool) -> (bool, bool) {
        let resp_room = self.resp.len() < self.resp_cap;
        let lookup = self.rop_due <= now && self.port_free <= now && resp_room;
        let act = (!self.from_dram.is_empty() && resp_room)
            || (matches!(self.resp.peek(), Some(Reverse(t)) if t.ready <= now) && out_room)
            || (lookup && !self.stall_holds())
            || (self.rop_has_room() && req_ready);
        (act, lookup && self.stall_holds())
    }

    fn respond(&mut self, ready: u64, sm: u16, resp: L2Response, bytes: u32) {
        self.seq += 1;
        self.stats.responses += 1;
        self.resp.push(Reverse(OutResp {
            ready,
            seq: self.seq,
            sm,
            bytes: self.header_bytes + bytes,
            resp,
        }));
    }

    fn atomic_ready(&mut self, base: u64, max_same: u16) -> u64 {
        let occ = 1 + ((max_same.max(1) - 1) as f64 * self.atomic_conflict).round() as u64;
        let start = base.max(self.atomic_busy);
        self.atomic_busy = start + occ;
        start + self.atomic_latency + occ - 1
    }

    /// An atomic on `line` performed in L2 cycle `now` has its result in at `done`. (An
    /// entry whose result is in by `now` can delay no read from now on: a read's ready
    /// cycle is at least its lookup cycle.)
    fn note_atomic(&mut self, now: u64, line: u64, done: u64) {
        self.recent_atomics.retain(|a| a.done > now);
        if let Some(a) = self.recent_atomics.iter_mut().find(|a| a.line == line) {
            a.done = a.done.max(done);
            return;
        }
        self.recent_atomics.push(RecentAtomic { line, done });
    }

    fn dram_req(&self, line: u64, way: usize, sector: u8, write: bool, loc: &DramLocation) -> DramReq {
        DramReq::new(
            line,
            way,
            sector,
            write,
            self.index,
            loc.bank,
            loc.bank_group,
            loc.row,
        )
    }

    /// Sends the sectors `mask` of `line`, held in cache way `way` (a write-back's: the way
    /// it leaves), to DRAM.
    fn push_dram(&mut self, now: u64, map: &AddressMapping, line: u64, way: usize, mask: u8, write: bool) {
        // The sectors of a line differ only in their DRAM column (a line lies in one
        // interleaving chunk, and its sectors are consecutive columns of one row): bank,
        // bank group and row, all a request keeps, are those of the line's address. The
        // line is this slice's (the address need not be hashed for its slice again).
        let addr = line << self.line_shift;
        debug_assert_eq!(map.slice(addr), self.index, "a line of another slice");
        let loc = map.dram_location(addr, self.index);
        for s in 0..8u8 {
            if mask & (1 << s) != 0 {
                let r = self.dram_req(line, way, s, write, &loc);
                if self.to_dram.is_empty() {
                    self.to_dram_ready = now + self.dram_latency;
                }
                self.to_dram.push_back(Due {
                    at: now + self.dram_latency,
                    item: r,
                });
                if write {
                    self.stats.dram_write_sectors += 1;
                } else {
                    self.stats.dram_read_sectors += 1;
                }
            }
        }
    }

    /// The request of `line` (`set_line`) stalls for want of `room` entries in `to_dram`.
    fn note_room_stall(&mut self, room: usize, line: u64, set_line: u64) {
        self.room_stall = Some(RoomStall {
            room,
            line,
            set: self.cache.set_of(set_line),
        });
    }

    fn dram_room(&self) -> usize {
        self.to_dram_cap.saturating_sub(self.to_dram.len())
    }

    /// Processes the request at the head of the input queue; false = stall (retry).
    fn process(&mut self, now: u64, inr: &InReq, map: &AddressMapping) -> bool {
        let req = &inr.req;
        let line = req.addr >> self.line_shift;
        let set_line = map.slice_line(req.addr);
        let way = self.cache.find(line, set_line);
        let nsec = req.sectors.count_ones().max(1);
        let occupancy = ((nsec << self.sector_shift).div_ceil(self.port_bytes)).max(1) as u64;
        match req.kind {
            L2ReqKind::Read | L2ReqKind::Atomic => {
                let is_atomic = req.kind == L2ReqKind::Atomic;
                let valid = way.map_or(0, |w| self.cache.valid[w]);
                let missing = req.sectors & !valid;
                if missing == 0 {
                    let w = way.expect("hit");
                    self.cache.touch(w);
                    let mut ready = now + self.hit_latency;
                    let bytes = if is_atomic {
                        self.cache.mark_dirty(w, req.sectors);
                        ready = self.atomic_ready(ready, req.atomic_max_same);
                        self.note_atomic(now, line, ready);
                        self.stats.atomic_hits += 1;
                        req.bytes
                    } else {
                        self.stats.read_hits += 1;
                        if let Some(&RecentAtomic { done, .. }) =
                            self.recent_atomics.iter().find(|a| a.line == line)
                        {
                            if done > ready {
                                self.stats.reads_after_atomic += 1;
                                ready = done;
                            }
                        }
                        nsec << self.sector_shift
                    };
                    let resp = L2Response {
                        addr: req.addr,
                        sectors: req.sectors,
                        kind: req.kind,
                        tag: req.tag,
                    };
                    self.respond(ready, inr.sm, resp, bytes);
                } else {
                    // Miss: check resources first. (A line with an MSHR entry is in the
                    // cache: its way has the entry's sectors pending, so it is no victim.)
                    let entry = way.and_then(|w| self.mshr.get(w));
                    debug_assert_eq!(entry, self.mshr.find_slow(line), "MSHR entry of the line's way");
                    let (new, victim) = match entry {
                        Some(e) => {
                            if self.mshr.waiting(e) >= self.mshr.max_merge {
                                self.stats.reservation_fails += 1;
                                return false;
                            }
                            (missing & !self.mshr.entry(e).pending, None)
                        }
                        None => {
                            if self.mshr.free_entries() == 0 {
                                self.stats.reservation_fails += 1;
                                return false;
                            }
                            let v = if way.is_none() {
                                match self.cache.pick_victim(set_line) {
                                    Some(v) => Some(v),
                                    None => {
                                        self.stats.reservation_fails += 1;
                                        return false;
                                    }
                                }
                            } else {
                                None
                            };
                            (missing, v)
                        }
                    };
                    let wb = victim.and_then(|v| v.evicted).map_or(0, |e| e.dirty.count_ones());
                    let room = (new.count_ones() + wb) as usize;
                    if room > self.dram_room() {
                        self.note_room_stall(room, line, set_line);
                        self.stats.reservation_fails += 1;
                        return false;
                    }
                    // Commit. A request whose sectors are all in flight already is a
                    // reserved hit: it waits for the fill of the earlier miss.
                    if entry.is_some() && new == 0 {
                        self.stats.hit_reserved += 1;
                    } else {
                        if way.is_some() {
                            self.stats.sector_misses += 1;
                        }
                        if is_atomic {
                            self.stats.atomic_misses += 1;
                        } else {
                            self.stats.read_misses += 1;
                        }
                    }
                    let w = match (way, victim) {
                        (Some(w), _) => w,
                        (None, Some(v)) => {
                            self.evict(now, map, v.way, v.evicted);
                            self.cache.install(v.way, line);
                            v.way
                        }
                        (None, None) => unreachable!("victim checked"),
                    };
                    self.cache.touch(w);
                    let e = match entry {
                        Some(e) => {
                            self.stats.mshr_merges += 1;
                            e
                        }
                        None => self.mshr.alloc(w, line),
                    };
                    let en = self.mshr.entry_mut(e);
                    en.pending |= new;
                    en.arrived &= !new;
                    self.mshr.push_waiter(
                        e,
                        Waiter {
                            sm: inr.sm,
                            tag: req.tag,
                            kind: req.kind,
                            sectors: req.sectors,
                            need: missing,
                            atomic_max_same: req.atomic_max_same,
                            bytes: req.bytes,
                        },
                    );
                    self.cache.add_pending(w, new);
                    if new != 0 {
                        self.push_dram(now, map, line, w, new, false);
                    }
                }
            }
            L2ReqKind::Write | L2ReqKind::WriteBack => {
                let w = match way {
                    Some(w) => {
                        self.stats.write_hits += 1;
                        w
                    }
                    None => {
                        let Some(v) = self.cache.pick_victim(set_line) else {
                            self.stats.reservation_fails += 1;
                            return false;
                        };
                        let wb = v.evicted.map_or(0, |e| e.dirty.count_ones());
                        if wb as usize > self.dram_room() {
                            self.note_room_stall(wb as usize, line, set_line);
                            self.stats.reservation_fails += 1;
                            return false;
                        }
                        self.stats.write_misses += 1;
                        self.evict(now, map, v.way, v.evicted);
                        self.cache.install(v.way, line);
                        v.way
                    }
                };
                // Write-allocate without fetch: written sectors become valid and dirty.
                self.cache.valid[w] |= req.sectors;
                self.cache.mark_dirty(w, req.sectors);
                self.cache.touch(w);
                if req.kind == L2ReqKind::Write {
                    let resp = L2Response {
                        addr: req.addr,
                        sectors: req.sectors,
                        kind: req.kind,
                        tag: req.tag,
                    };
                    self.respond(now + self.hit_latency, inr.sm, resp, 0);
                }
            }
        }
        self.stats.accesses += 1;
        self.port_free = now + occupancy;
        true
    }

    /// Writes back the dirty sectors of the line `evicted` leaving cache way `way`.
    fn evict(&mut self, now: u64, map: &AddressMapping, way: usize, evicted: Option<EvictedLine>) {
        if let Some(EvictedLine { line: vline, dirty }) = evicted {
            self.stats.evictions += 1;
            if dirty != 0 {
                self.stats.dirty_evictions += 1;
                self.push_dram(now, map, vline, way, dirty, true);
            }
        }
    }

    /// Applies one DRAM read completion (head of `from_dram`); false = none, or output full.
    #[inline]
    pub fn fill(&mut self, now: u64) -> bool {
        if self.from_dram.is_empty() || self.resp.len() >= self.resp_cap {
            return false;
        }
        self.fill_head(now);
        true
    }

    fn fill_head(&mut self, now: u64) {
        let Some(d) = self.from_dram.pop_front() else {
            return;
        };
        // The line is still in the way it was sent from: its sectors stayed pending.
        let found = self.cache.find_at(d.way as usize, d.line);
        // A fill changes the cache and MSHR state of its own line (and, through the pending
        // and dirty sectors, the victim choice of its set, that of the line's way): a head
        // request stalled for room in `to_dram`, whose line is another and in another set,
        // stays so (more free MSHR entries do not matter then: it had the entry it needed).
        // (A line not found, which cannot be, ends the stall: the lookup tries again.)
        let stays = self.stalled == self.changes + 1
            && self.room_stall.is_some_and(|s| {
                s.line != d.line && found.is_some_and(|w| s.set != self.cache.set_of_way(w))
            });
        if !stays {
            self.changes += 1;
        }
        let Some(way) = found else {
            debug_assert!(
                self.mshr.find_slow(d.line).is_none(),
                "MSHR entry of a line not cached"
            );
            return;
        };
        self.cache.valid[way] |= d.sectors & self.cache.pending(way);
        self.cache.clear_pending(way, d.sectors);
        let e = self.mshr.get(way);
        debug_assert_eq!(e, self.mshr.find_slow(d.line), "MSHR entry of the line's way");
        let Some(e) = e else {
            return;
        };
        let en = self.mshr.entry_mut(e);
        en.pending &= !d.sectors;
        en.arrived |= d.sectors;
        let arrived = en.arrived;
        let addr = d.line << self.line_shift;
        let (mut i, mut waiting) = (0, self.mshr.waiting(e));
        while i < waiting {
            let w = self.mshr.waiter(e, i);
            if w.need & !arrived != 0 {
                i += 1;
                continue;
            }
            self.mshr.remove_waiter(e, i);
            waiting -= 1;
            let mut ready = now + self.fill_latency;
            let nsec = w.sectors.count_ones();
            let bytes = if w.kind == L2ReqKind::Atomic {
                ready = self.atomic_ready(ready, w.atomic_max_same);
                self.note_atomic(now, d.line, ready);
                self.cache.mark_dirty(way, w.sectors);
                w.bytes
            } else {
                nsec << self.sector_shift
            };
            // The response carries every sector the request asked for (hits included).
            let resp = L2Response {
                addr,
                sectors: w.sectors,
                kind: w.kind,
                tag: w.tag,
            };
            self.respond(ready, w.sm, resp, bytes);
        }
        if self.mshr.entry(e).pending == 0 {
            self.mshr.release(e);
        }
    }
}
