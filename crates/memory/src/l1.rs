//! Per-SM L1 data cache and shared memory.

mod load;
mod memo;
mod mshr;
mod shared;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::cache::{EvictedLine, SectorCache};
use crate::coalesce::{LineReq, MAX_LINES};
use crate::config::{MemoryConfig, WritePolicy};
use crate::counters::counters;
use crate::types::Due;
use crate::types::{
    data_access_kind, AccessOutcome, L2ReqKind, L2Request, L2Response, MemSpace, WarpMemRequest,
    ACCESS_OUTCOMES, ACCESS_TYPES, ACC_GLOBAL_R, OUT_HIT, OUT_MISS, OUT_RESERVATION_FAIL,
};
use load::LoadPlan;
use memo::LoadNeeds;
use mshr::L1Mshr;

counters! {
    /// Counters of one SM's L1D and shared memory.
    ///
    /// `repr(C, align(64))`: what a rejection counts (a rejected access is retried every cycle)
    /// comes first: the total, three of the causes and `by_kind`, whose global-read rejections
    /// (`by_kind[ACC_GLOBAL_R][OUT_RESERVATION_FAIL]`) end the first cache line.
    #[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
    #[repr(C, align(64))]
    pub struct L1Stats {
        /// Rejected accesses, total and by cause (`fail_pending_table` below).
        pub reservation_fails: u64,
        pub fail_mshr: u64,
        pub fail_no_victim: u64,
        pub fail_miss_queue: u64,
        /// Accel-Sim-style per-line counters: `by_kind[AccessType][AccessOutcome]`
        /// (see [`crate::types::ACCESS_TYPE_NAMES`], [`crate::types::ACCESS_OUTCOME_NAMES`]).
        pub by_kind: [[u64; ACCESS_OUTCOMES]; ACCESS_TYPES],
        pub fail_pending_table: u64,
        /// Warp accesses accepted (global/local/shared).
        pub accesses: u64,
        pub global_loads: u64,
        pub local_loads: u64,
        pub stores: u64,
        pub global_atomics: u64,
        /// Line (128 B) requests after coalescing, loads only.
        pub line_accesses: u64,
        /// Lines whose requested sectors were all present.
        pub hits: u64,
        /// Lines absent from the cache.
        pub misses: u64,
        /// Lines present with some requested sectors missing.
        pub sector_misses: u64,
        /// Lines whose missing sectors were all being fetched for an earlier miss: the request
        /// waits for that fill (Accel-Sim's HIT_RESERVED; not a miss).
        pub hit_reserved: u64,
        /// Requested sectors that missed (line or sector misses).
        pub sectors_missed: u64,
        /// Missing lines merged into an outstanding MSHR entry.
        pub mshr_merges: u64,
        /// Requests handed to the interconnect, by kind.
        pub l2_reads: u64,
        pub l2_writes: u64,
        pub l2_writebacks: u64,
        pub l2_atomics: u64,
        /// Cycles the miss queue head could not be sent (interconnect full).
        pub icnt_stall_cycles: u64,
        pub fills: u64,
        pub evictions: u64,
        pub dirty_evictions: u64,
        /// Stores that found the line (write hits) / wrote into a write-back line.
        pub write_hits: u64,
        pub write_misses: u64,
        /// Shared memory.
        pub shared_accesses: u64,
        pub shared_atomics: u64,
        /// Wavefronts (bank-array passes) executed.
        pub shared_wavefronts: u64,
        /// Extra cycles from bank conflicts (wavefronts beyond the first).
        pub bank_conflict_cycles: u64,
        /// Accesses with at least one bank conflict.
        pub bank_conflict_accesses: u64,
        /// Extra cycles from same-address shared atomics.
        pub shared_atomic_conflict_cycles: u64,
        /// Cycles shared accesses waited for an earlier atomic on the same words.
        pub shared_atomic_order_cycles: u64,
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    id: u64,
    remaining: u32,
    ready: u64,
    live: bool,
}

/// Coalesced requests remembered per SM (retries of rejected accesses).
const COALESCE_MEMO: usize = 8;
const _: () = assert!(COALESCE_MEMO <= 32, "SmMemory::rejected has a bit per memo entry");
const NO_TAG: u32 = u32::MAX;
/// A read request's tag names its MSHR entry (low bits) and its line's way plus one (high
/// bits, 0: no way), so that its fill finds both without a hash lookup ([`read_tag`]). Bit
/// 31 stays clear: the SM's L1 bypass (`sassim-gpu`) marks its own reads with it.
const READ_TAG_WAY_SHIFT: u32 = 16;
const READ_TAG_ENTRY_MASK: u32 = (1 << READ_TAG_WAY_SHIFT) - 1;
/// Ways plus one that fit a read tag's high bits (below bit 31).
const READ_TAG_WAYS: usize = 1 << (31 - READ_TAG_WAY_SHIFT);

/// The tag of a read request for MSHR entry `entry` and way `way` (`NO_TAG` when they do
/// not fit: the fill then looks both up).
#[inline]
fn read_tag(entry: u32, way: Option<usize>) -> u32 {
    let w = way.map_or(0, |w| w + 1);
    if entry > READ_TAG_ENTRY_MASK || w >= READ_TAG_WAYS {
        return NO_TAG;
    }
    entry | (w as u32) << READ_TAG_WAY_SHIFT
}

/// The MSHR entry and way a read response's tag names ([`read_tag`]); hints, checked by the
/// fill against the line.
#[inline]
fn read_tag_parts(tag: u32) -> Option<(u32, Option<usize>)> {
    if tag == NO_TAG {
        return None;
    }
    let w = (tag >> READ_TAG_WAY_SHIFT) as usize;
    Some((tag & READ_TAG_ENTRY_MASK, w.checked_sub(1)))
}

/// Why a global/local access was rejected (what its retry waits for). The counts are an
/// access's lines or miss-queue entries, the set an L1 set index (all far below `u32::MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fail {
    /// A missing line's MSHR entry has no room for another waiter.
    MshrMerge,
    /// The access needs this many new MSHR entries, more than are free.
    MshrCount(u32),
    /// A missing line's set (this one) has no way without a fill outstanding.
    NoVictim(u32),
    /// The access needs this many miss-queue entries, and they do not fit.
    MissQueue(u32),
    /// The same for a write-back store, whose need depends on whether its lines' sets have
    /// a victim (a line without one is written through).
    MissQueueWb(u32),
    /// No pending-request slot for an access that misses.
    PendingTable,
}

/// A rejection remembered with the access, and the state counters it was decided under.
/// It holds, without recomputation, while none of what could change it happened (see
/// [`SmMemory::still_rejected`]).
/// 24 bytes, so that a [`MemoHead`] is 32.
#[derive(Debug, Clone, Copy)]
struct Rejection {
    epoch: u64,
    /// Wraps: it is compared only while `epoch` is unchanged, and an L1 receives fewer read
    /// fills than that between two accepted accesses (only accepted accesses send reads).
    fill_epoch: u32,
    fail: Fail,
    /// The access kind counted (`by_kind`'s first index).
    kind: u8,
}

/// Words of a coalesced access's line filter (4096 bits; [`SmMemory::memo_filters`]): an
/// access of 32 lines sets under 1% of them, so that a fill of another line rarely clears
/// its rejection, and another access of 32 lines is told apart from it 78% of the time
/// ([`SmMemory::carry_rejections`]; 512 bits told them apart 13% of the time, and the
/// gather trace's loads were checked again 2.1 times as often).
const FILTER_WORDS: usize = 64;

/// A remembered coalescing: the access and its lines (the filter of its lines is in
/// [`SmMemory::memo_filters`], its generation and last rejection in [`SmMemory::heads`]).
#[derive(Debug, Clone)]
struct Coalesced {
    req: WarpMemRequest,
    n: usize,
    lines: [LineReq; MAX_LINES],
}

/// What a retry of a memo entry's access looks at first, kept apart from the entry (about
/// 2 KB: a cache miss or two every cycle a sub-core's rejected access is retried); 32 bytes,
/// half a cache line.
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
struct MemoHead {
    /// The ticket of the entry's access; changes whenever the entry is given to another
    /// access ([`Ticket`]; `Ticket::NONE`'s key never matches).
    gen: Ticket,
    /// The access's last rejection.
    rej: Option<Rejection>,
}

impl MemoHead {
    const NONE: MemoHead = MemoHead {
        gen: Ticket { key: 0 },
        rej: None,
    };
}

/// Word and bit of `line` in a line filter ([`SmMemory::memo_filters`]).
#[inline]
fn filter_bit(line: u64) -> (usize, u64) {
    const BITS: u32 = (FILTER_WORDS * 64).trailing_zeros();
    let h = line.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - BITS);
    ((h >> 6) as usize, 1u64 << (h & 63))
}

/// The same access (the caller's id and warp aside: neither changes the coalescing or
/// the L1's decision).
#[inline]
fn same_access(a: &WarpMemRequest, b: &WarpMemRequest) -> bool {
    a.addrs[0] == b.addrs[0]
        && a.active == b.active
        && a.bytes_per_lane == b.bytes_per_lane
        && a.kind == b.kind
        && a.space == b.space
        && a.addrs == b.addrs
}

/// Names the remembered coalescing of a global or local access ([`SmMemory::ticket`]), so
/// that a caller retrying the same access can skip building and comparing it
/// ([`SmMemory::retry`]). It goes stale when the entry is reused for another access.
/// One word: the generation the entry got with the access, times `COALESCE_MEMO`, plus the
/// entry's index ([`MemoHead::gen`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    key: u64,
}

impl Ticket {
    /// A ticket of no access (always stale).
    pub const NONE: Ticket = Ticket { key: u64::MAX };

    /// The ticket of memo entry `idx` given to an access with generation `gen`.
    #[inline]
    fn of(gen: u64, idx: usize) -> Ticket {
        Ticket {
            key: gen * COALESCE_MEMO as u64 + idx as u64,
        }
    }

    /// The memo entry the ticket names.
    #[inline]
    fn idx(self) -> usize {
        (self.key % COALESCE_MEMO as u64) as usize
    }
}

/// A missed access that completed: ordered by its ready cycle, then by completion order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Completed {
    /// The cycle its data is ready for the SM (`l1d.fill_latency` after its last line).
    ready: u64,
    /// Completion order (ties of `ready`).
    seq: u64,
    /// The caller's id of the access ([`crate::WarpMemRequest::id`]).
    id: u64,
}

/// A load the L1 can never accept: it needs more new MSHR entries than the L1 has at all
/// ([`SmMemory::never_admitted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeverAdmitted {
    /// The new MSHR entries the load needed.
    pub needed: u32,
    /// The MSHR entries the L1 has in all (`l1d.mshr_entries`).
    pub capacity: u32,
}

/// L1 data cache + shared memory of one SM.

#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct SmMemory {
    // `repr(C)`: what the per-cycle calls read comes first. The first cache line: the miss
    // queue (`tick`) and what a retry of a rejected access compares (`still_rejected`).
    /// Requests to the L2, each with the core cycle it is ready to be sent (`l1d.miss_latency`
    /// after it was queued).
    miss_queue: VecDeque<Due<L2Request>>,
    /// A rejected access is decided without changing state, so its retry gives the same
    /// rejection until the state it depends on changes. `epoch` changes with any global or
    /// local access accepted (and an invalidation), `fill_epoch` with every read fill
    /// (wrapping; see [`Rejection::fill_epoch`]).
    epoch: u64,
    fill_epoch: u32,
    /// Bit `i`: `coalesced[i]` holds a rejection (what a read fill looks at, so that it does
    /// not read the filters of the entries without one: an entry is ~2 KB, a cache miss each).
    rejected: u32,
    /// The memo entry of the current access.
    cur: usize,
    /// The miss queue's capacity and how many requests `tick` sends per cycle.
    miss_queue_cap: u32,
    requests_per_cycle: u32,
    /// Per memo entry, its ticket and last rejection ([`MemoHead`]): the next four lines.
    heads: [MemoHead; COALESCE_MEMO],
    /// What the rejection checks of some causes read, and what a fill and `pop_completed`
    /// change.
    mshr: L1Mshr,
    free_slots: Vec<u32>,
    /// Missed accesses completed, earliest first.
    completed: BinaryHeap<Reverse<Completed>>,
    line_shift: u32,
    seq: u64,
    fill_latency: u64,
    /// Counters; what a rejection counts is in their first cache line.
    stats: L1Stats,
    /// The first load rejected for needing more new MSHR entries than the L1 has at all
    /// ([`NeverAdmitted`]): admission is all-or-nothing per warp access, so it is never
    /// accepted ([`SmMemory::never_admitted`]; docs/memory.md).
    never_admitted: Option<NeverAdmitted>,
    sector_shift: u32,
    latency: u64,
    miss_latency: u64,
    write_policy: WritePolicy,
    cache: SectorCache,
    slots: Vec<Slot>,
    /// Per memo entry, a filter of its lines (for "does a fill touch this access?", false
    /// positives allowed), word-major: a fill reads one word of every entry, one cache line.
    memo_filters: [[u64; COALESCE_MEMO]; FILTER_WORDS],
    // Shared memory.
    sh_banks: u32,
    sh_width: u64,
    sh_latency: u64,
    sh_atomic_latency: u64,
    sh_atomic_conflict: f64,
    sh_busy_until: u64,
    /// Words (sorted, distinct) of the last shared atomic and the cycle its results are
    /// back in the banks: a later access to one of them waits (same-address ordering).
    sh_atomic_words: Vec<u64>,
    sh_atomic_until: u64,
    /// The last coalesced accesses (a rejected access is retried unchanged), looked up by
    /// comparing the access, with their rejections.
    coalesced: Vec<Coalesced>,
    coalesced_next: usize,
    /// Generations handed out to memo entries ([`Ticket`]).
    memo_gen: u64,
    /// Per memo entry, what its load's rejected check counted ([`LoadNeeds`]: what carries
    /// the rejection over accepted accesses, [`SmMemory::carry_rejections`]).
    needs: [LoadNeeds; COALESCE_MEMO],
    /// The plan of the current load (reused: [`LoadPlan`]).
    plan: LoadPlan,
    /// A filter (as `memo_filters`' columns) of the lines that lost their way during the
    /// current access (cleared after each accepted access).
    displaced: [u64; FILTER_WORDS],
    /// Those lines (at most one per line of the access).
    displaced_lines: Vec<u64>,
    /// Whether rejections may be carried over accepted accesses (the sets fit
    /// [`LoadNeeds::victim_sets`]' bits).
    carry: bool,
}

// The layout the comments above describe (on 64-bit hosts): a memo head is half a cache
// line, the heads start at the second line of the L1, and a global read's rejection counts
// fall in the first line of the counters.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<MemoHead>() == 32);
    assert!(std::mem::offset_of!(SmMemory, heads) == 64);
    assert!(std::mem::offset_of!(L1Stats, fail_miss_queue) < 64);
    assert!(
        std::mem::offset_of!(L1Stats, by_kind)
            + (ACC_GLOBAL_R * ACCESS_OUTCOMES + OUT_RESERVATION_FAIL + 1) * 8
            <= 64
    );
};

/// One line of the access in pending-request slot `slot` arrived at `now`: after its last,
/// the access completes (its ready cycle at least `fill_latency` later) and frees the slot.
/// (A function of the fields it changes, so that a fill can call it while it walks an MSHR
/// entry's waiters.)
fn finish_slot(
    slots: &mut [Slot],
    completed: &mut BinaryHeap<Reverse<Completed>>,
    free_slots: &mut Vec<u32>,
    seq: &mut u64,
    fill_latency: u64,
    slot: u32,
    now: u64,
) {
    let s = &mut slots[slot as usize];
    debug_assert!(s.live && s.remaining > 0);
    s.remaining -= 1;
    if s.remaining == 0 {
        let ready = s.ready.max(now + fill_latency);
        let id = s.id;
        s.live = false;
        *seq += 1;
        completed.push(Reverse(Completed { ready, seq: *seq, id }));
        free_slots.push(slot);
    }
}

/// Alias kept for callers that think of it as the L1.
pub type L1Cache = SmMemory;

impl SmMemory {
    pub fn new(cfg: &MemoryConfig) -> Self {
        let l1 = &cfg.l1d;
        let lines = (cfg.l1d_bytes() / l1.line_bytes as u64).max(1);
        let sets = (l1.sets as u64).clamp(1, lines);
        let assoc = (lines / sets).max(1) as usize;
        let slots = l1.max_pending_requests.max(1) as usize;
        let mq = l1.miss_queue_entries.max(1) as usize;
        Self {
            line_shift: l1.line_bytes.trailing_zeros(),
            sector_shift: l1.sector_bytes.trailing_zeros(),
            latency: l1.latency as u64,
            fill_latency: l1.fill_latency as u64,
            miss_latency: l1.miss_latency as u64,
            requests_per_cycle: l1.requests_per_cycle.max(1),
            write_policy: l1.write_policy,
            miss_queue_cap: mq as u32,
            cache: SectorCache::new(sets, assoc, l1.hashing),
            mshr: L1Mshr::new(l1.mshr_entries as usize, l1.mshr_max_merge as usize),
            miss_queue: VecDeque::with_capacity(mq + 2 * MAX_LINES),
            slots: vec![Slot::default(); slots],
            free_slots: (0..slots as u32).rev().collect(),
            completed: BinaryHeap::with_capacity(slots),
            seq: 0,
            sh_banks: cfg.shared.banks,
            sh_width: cfg.shared.bank_width_bytes as u64,
            sh_latency: cfg.shared.latency as u64,
            sh_atomic_latency: cfg.shared.atomic_latency as u64,
            sh_atomic_conflict: cfg.shared.atomic_conflict_cycles,
            sh_busy_until: 0,
            sh_atomic_words: Vec::with_capacity(128),
            sh_atomic_until: 0,
            stats: L1Stats::default(),
            never_admitted: None,
            epoch: 0,
            fill_epoch: 0,
            coalesced: Vec::with_capacity(COALESCE_MEMO),
            coalesced_next: 0,
            rejected: 0,
            memo_filters: [[0; COALESCE_MEMO]; FILTER_WORDS],
            cur: 0,
            heads: [MemoHead::NONE; COALESCE_MEMO],
            memo_gen: 0,
            needs: [LoadNeeds::default(); COALESCE_MEMO],
            plan: LoadPlan::new(),
            displaced: [0; FILTER_WORDS],
            displaced_lines: Vec::with_capacity(MAX_LINES),
            carry: sets <= 64,
        }
    }

    /// The first load this L1 rejected that it can never accept. Named in deadlock reports.
    pub fn never_admitted(&self) -> Option<NeverAdmitted> {
        self.never_admitted
    }

    pub fn stats(&self) -> &L1Stats {
        &self.stats
    }

    /// True when nothing is outstanding (no MSHR, queued request or completion).
    pub fn is_idle(&self) -> bool {
        self.mshr.is_empty()
            && self.miss_queue.is_empty()
            && self.completed.is_empty()
            && self.free_slots.len() == self.slots.len()
    }

    /// Invalidates the L1 (kernel boundary, `-gpgpu_flush_l1_cache 1`); dirty data is
    /// dropped (local memory does not outlive a kernel).
    pub fn invalidate(&mut self) {
        self.cache.invalidate_all();
        self.epoch += 1;
    }

    /// A coalesced warp access arriving at the SM's shared structures at `now`.
    pub fn access(&mut self, now: u64, req: &WarpMemRequest) -> AccessOutcome {
        if req.active == 0 {
            self.stats.accesses += 1;
            return AccessOutcome::Done { ready_at: now + 1 };
        }
        // Shared memory never rejects and changes nothing a global access depends on.
        if req.space == MemSpace::Shared {
            return self.shared_access(now, req);
        }
        self.cur = self.coalesce_memo(req);
        self.access_cur(now, req.id)
    }

    fn mq_fits(&self, needed: usize) -> bool {
        needed == 0
            || self.miss_queue.is_empty()
            || self.miss_queue.len() + needed <= self.miss_queue_cap as usize
    }

    /// Counts a rejection of the current access and remembers it with the access.
    fn reject(&mut self, kind: usize, fail: Fail) -> AccessOutcome {
        self.heads[self.cur].rej = Some(Rejection {
            epoch: self.epoch,
            fill_epoch: self.fill_epoch,
            fail,
            kind: kind as u8,
        });
        self.rejected |= 1 << self.cur;
        self.count_rejections(kind, fail, 1);
        if let Fail::MshrCount(n) = fail {
            let have = self.mshr.capacity() as u32;
            if n > have && self.never_admitted.is_none() {
                self.never_admitted = Some(NeverAdmitted {
                    needed: n,
                    capacity: have,
                });
            }
        }
        AccessOutcome::Rejected
    }

    /// Counts `k` rejections of an access of `kind` (`by_kind`'s first index) for `fail`: the
    /// counters only. A remembered rejection that still holds is counted so, not written
    /// again ([`SmMemory::still_rejected`] gives the same answer with it as it was: in its
    /// epoch, the fill count it holds only matters while a line is dirty, for causes that
    /// then require it unchanged).
    #[inline]
    fn count_rejections(&mut self, kind: usize, fail: Fail, k: u64) {
        self.stats.reservation_fails += k;
        self.stats.by_kind[kind][OUT_RESERVATION_FAIL] += k;
        match fail {
            Fail::MshrMerge | Fail::MshrCount(_) => self.stats.fail_mshr += k,
            Fail::NoVictim(_) => self.stats.fail_no_victim += k,
            Fail::MissQueue(_) | Fail::MissQueueWb(_) => self.stats.fail_miss_queue += k,
            Fail::PendingTable => self.stats.fail_pending_table += k,
        }
    }

    fn enqueue(&mut self, now: u64, r: L2Request) {
        self.miss_queue.push_back(Due {
            at: now + self.miss_latency,
            item: r,
        });
    }

    fn l2req(&self, line: u64, sectors: u8, kind: L2ReqKind, bytes: u32, tag: u32) -> L2Request {
        L2Request {
            addr: line << self.line_shift,
            sectors,
            kind,
            bytes,
            atomic_lanes: 0,
            atomic_max_same: 0,
            tag,
        }
    }

    fn evict_writeback(&mut self, now: u64, evicted: Option<EvictedLine>) {
        if let Some(EvictedLine { line, dirty }) = evicted {
            self.stats.evictions += 1;
            if dirty != 0 {
                self.stats.dirty_evictions += 1;
                let bytes = dirty.count_ones() << self.sector_shift;
                let r = self.l2req(line, dirty, L2ReqKind::WriteBack, bytes, NO_TAG);
                self.enqueue(now, r);
            }
        }
    }

    /// Installs `line` in `way`, noting the line it displaces ([`SmMemory::displaced`]).
    fn install(&mut self, way: usize, line: u64) {
        if let Some(old) = self.cache.install(way, line) {
            let (w, b) = filter_bit(old);
            self.displaced[w] |= b;
            self.displaced_lines.push(old);
        }
    }

    fn write_back(&self, space: MemSpace) -> bool {
        match self.write_policy {
            WritePolicy::WriteBack => true,
            WritePolicy::WriteThrough => false,
            WritePolicy::LocalWbGlobalWt => space == MemSpace::Local,
        }
    }

    fn store_check(&self, lines: &[LineReq], write_back: bool) -> Result<(), Fail> {
        let mut mq = 0usize;
        for l in lines {
            if !write_back {
                mq += 1;
            } else if self.cache.find(l.line, l.line).is_none() {
                match self.cache.pick_victim_in(l.set as usize) {
                    None => mq += 1, // written through instead
                    Some(v) => mq += v.evicted.is_some_and(|e| e.dirty != 0) as usize,
                }
            }
        }
        if !self.mq_fits(mq) {
            return Err(if write_back {
                Fail::MissQueueWb(mq as u32)
            } else {
                Fail::MissQueue(mq as u32)
            });
        }
        Ok(())
    }

    fn store(
        &mut self,
        now: u64,
        req: &WarpMemRequest,
        lines: &[LineReq],
    ) -> Result<AccessOutcome, (usize, Fail)> {
        let kind = data_access_kind(req.space, true);
        let write_back = self.write_back(req.space);
        self.store_check(lines, write_back).map_err(|f| (kind, f))?;
        self.stats.accesses += 1;
        self.stats.stores += 1;
        for l in lines {
            let way = self.cache.find(l.line, l.line);
            if way.is_some() {
                self.stats.write_hits += 1;
                self.stats.by_kind[kind][OUT_HIT] += 1;
            } else {
                self.stats.write_misses += 1;
                self.stats.by_kind[kind][OUT_MISS] += 1;
            }
            if write_back {
                let w = match way {
                    Some(w) => Some(w),
                    None => self.cache.pick_victim_in(l.set as usize).map(|v| {
                        self.evict_writeback(now, v.evicted);
                        self.install(v.way, l.line);
                        v.way
                    }),
                };
                if let Some(w) = w {
                    self.cache.valid[w] |= l.sectors;
                    self.cache.mark_dirty(w, l.sectors);
                    self.cache.touch(w);
                    continue;
                }
            }
            // Write-through, no allocate: the L1 copy (if any) is updated in place.
            if let Some(w) = way {
                self.cache.touch(w);
            }
            let r = self.l2req(l.line, l.sectors, L2ReqKind::Write, l.bytes, NO_TAG);
            self.enqueue(now, r);
        }
        Ok(AccessOutcome::Done {
            ready_at: now + self.latency,
        })
    }

    fn atomic_check(&self, n: usize) -> Result<(), Fail> {
        if !self.mq_fits(n) {
            return Err(Fail::MissQueue(n as u32));
        }
        if self.free_slots.is_empty() {
            return Err(Fail::PendingTable);
        }
        Ok(())
    }

    fn atomic(
        &mut self,
        now: u64,
        id: u64,
        req: &WarpMemRequest,
        lines: &[LineReq],
    ) -> Result<AccessOutcome, (usize, Fail)> {
        let n = lines.len();
        self.atomic_check(n).map_err(|f| (ACC_GLOBAL_R, f))?;
        // Largest number of lanes on one address, per line.
        let mut sorted = [0u64; 32];
        let mut na = 0;
        for lane in 0..32 {
            if req.active & (1 << lane) != 0 {
                sorted[na] = req.addrs[lane];
                na += 1;
            }
        }
        let sorted = &mut sorted[..na];
        sorted.sort_unstable();
        self.stats.accesses += 1;
        self.stats.global_atomics += 1;
        let s = self.free_slots.pop().expect("checked");
        self.slots[s as usize] = Slot {
            id,
            remaining: n as u32,
            ready: now + self.latency,
            live: true,
        };
        for l in lines {
            // The atomic is performed at L2; drop any stale L1 copy of the sectors.
            if let Some(w) = self.cache.find(l.line, l.line) {
                self.cache.valid[w] &= !l.sectors;
            }
            let mut max_same = 1u16;
            let mut run = 0u16;
            let mut prev = u64::MAX;
            for &a in sorted.iter().filter(|&&a| a >> self.line_shift == l.line) {
                run = if a == prev { run + 1 } else { 1 };
                prev = a;
                max_same = max_same.max(run);
            }
            let mut r = self.l2req(l.line, l.sectors, L2ReqKind::Atomic, l.bytes, s);
            r.atomic_lanes = l.lanes;
            r.atomic_max_same = max_same;
            self.enqueue(now, r);
        }
        Ok(AccessOutcome::Pending)
    }

    /// Whether requests wait in the miss queue (for [`SmMemory::tick`] to send).
    #[inline]
    pub fn has_queued(&self) -> bool {
        !self.miss_queue.is_empty()
    }

    /// Sends up to `requests_per_cycle` queued misses to the interconnect through `l2`,
    /// which returns false when the interconnect cannot accept.
    #[inline]
    pub fn tick(&mut self, now: u64, l2: &mut dyn FnMut(L2Request) -> bool) {
        // Most cycles nothing is queued: checked here, in the caller.
        if !self.miss_queue.is_empty() {
            self.send_queued(now, l2);
        }
    }

    /// The most requests [`SmMemory::tick`] sends in one cycle.
    #[inline]
    pub fn requests_per_cycle(&self) -> usize {
        self.requests_per_cycle as usize
    }

    #[inline(never)]
    fn send_queued(&mut self, now: u64, l2: &mut dyn FnMut(L2Request) -> bool) {
        for _ in 0..self.requests_per_cycle {
            let Some(&Due { at: ready, item: r }) = self.miss_queue.front() else {
                return;
            };
            if ready > now {
                return;
            }
            if !l2(r) {
                self.stats.icnt_stall_cycles += 1;
                return;
            }
            self.miss_queue.pop_front();
            match r.kind {
                L2ReqKind::Read => self.stats.l2_reads += 1,
                L2ReqKind::Write => self.stats.l2_writes += 1,
                L2ReqKind::WriteBack => self.stats.l2_writebacks += 1,
                L2ReqKind::Atomic => self.stats.l2_atomics += 1,
            }
        }
    }

    fn finish_one(&mut self, slot: u32, now: u64) {
        finish_slot(
            &mut self.slots,
            &mut self.completed,
            &mut self.free_slots,
            &mut self.seq,
            self.fill_latency,
            slot,
            now,
        );
    }

    /// An L2 response arriving at the SM at `now`.
    pub fn fill(&mut self, now: u64, resp: L2Response) {
        match resp.kind {
            L2ReqKind::Write | L2ReqKind::WriteBack => {}
            L2ReqKind::Atomic => {
                self.stats.fills += 1;
                if resp.tag != NO_TAG {
                    self.finish_one(resp.tag, now);
                }
            }
            L2ReqKind::Read => {
                self.stats.fills += 1;
                let line = resp.addr >> self.line_shift;
                self.fill_epoch = self.fill_epoch.wrapping_add(1);
                let (fw, fb) = filter_bit(line);
                let mut live = self.rejected;
                while live != 0 {
                    let i = live.trailing_zeros() as usize;
                    live &= live - 1;
                    if self.memo_filters[fw][i] & fb != 0 {
                        self.heads[i].rej = None;
                        self.rejected &= !(1 << i);
                    }
                }
                // The tag names the way and MSHR entry the request was sent for (each checked
                // against the line: an invalidation may have given the way to another line).
                let hint = read_tag_parts(resp.tag);
                let way = match hint {
                    Some((_, Some(w))) => self.cache.find_at(w, line),
                    _ => self.cache.find(line, line),
                };
                if let Some(w) = way {
                    let arrived = resp.sectors & self.cache.pending(w);
                    self.cache.valid[w] |= arrived;
                    self.cache.clear_pending(w, resp.sectors);
                }
                let e = match hint {
                    Some((e, _)) => self.mshr.get_at(e, line),
                    None => self.mshr.get(line),
                };
                let Some(e) = e else { return };
                let Self {
                    mshr,
                    slots,
                    completed,
                    free_slots,
                    seq,
                    fill_latency,
                    ..
                } = self;
                let empty = mshr.arrive(e, resp.sectors, |w| {
                    finish_slot(slots, completed, free_slots, seq, *fill_latency, w.slot, now)
                });
                if empty {
                    debug_assert_eq!(mshr.waiters(e), 0);
                    mshr.release(e);
                }
            }
        }
    }

    /// The ready cycle of the earliest completed missed access (`u64::MAX`: none).
    #[inline]
    pub fn next_completion(&self) -> u64 {
        self.completed.peek().map_or(u64::MAX, |Reverse(c)| c.ready)
    }

    /// Next completed missed access (`id`, ready cycle) with ready cycle ≤ `now`.
    #[inline]
    pub fn pop_completed(&mut self, now: u64) -> Option<(u64, u64)> {
        match self.completed.peek() {
            Some(Reverse(c)) if c.ready <= now => {
                let Reverse(Completed { ready, id, .. }) = self.completed.pop().expect("peeked");
                Some((id, ready))
            }
            _ => None,
        }
    }
}
