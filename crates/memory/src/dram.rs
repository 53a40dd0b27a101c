//! DRAM channel: bank state machines with the usual timing constraints behind an FR-FCFS
//! scheduler (row hits first, then oldest), open-page policy, one command per cycle.

use std::collections::VecDeque;

/// Most banks of a channel (checked by the configuration), and of bank groups (at most the
/// banks). The per-bank arrays have this length, so that the scheduler's passes index them
/// with a bank number masked by `BANK_MASK` (no bounds checks).
const BANK_BITS: u32 = 6;
const MAX_BANKS: usize = 1 << BANK_BITS;
const BANK_MASK: usize = MAX_BANKS - 1;

use crate::config::DramConfig;
use crate::counters::counters;
use crate::types::Due;

/// One 32-byte burst request (an L2 sector) in the scheduler queue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DramReq {
    /// Line address (`addr >> line_shift`) in the L2 slice.
    pub line: u64,
    /// The L2 cache way holding the line (a read's line stays there until its fill).
    pub way: u32,
    pub sector: u8,
    pub write: bool,
    pub slice: u16,
    pub bank: u8,
    pub bank_group: u8,
    pub row: u32,
    /// DRAM cycle the request entered the scheduler queue.
    pub arrival: u64,
    caused_act: bool,
    caused_pre: bool,
}

impl DramReq {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        line: u64,
        way: usize,
        sector: u8,
        write: bool,
        slice: usize,
        bank: u32,
        bank_group: u32,
        row: u32,
    ) -> Self {
        Self {
            line,
            way: way as u32,
            sector,
            write,
            slice: slice as u16,
            bank: bank as u8,
            bank_group: bank_group as u8,
            row,
            arrival: 0,
            caused_act: false,
            caused_pre: false,
        }
    }
}

/// A completed read, on its way back to the L2 slice.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DramDone {
    pub line: u64,
    /// The L2 cache way holding the line ([`DramReq::way`]).
    pub way: u32,
    pub sectors: u8,
    pub slice: u16,
}

counters! {
    /// DRAM counters (summed over channels in [`crate::MemStats`]).
    #[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
    pub struct DramStats {
        pub reads: u64,
        pub writes: u64,
        /// Column commands to an already open row.
        pub row_hits: u64,
        /// Column commands that needed an activate of a closed bank.
        pub row_misses: u64,
        /// Column commands that needed a precharge of another row and an activate.
        pub row_conflicts: u64,
        pub activates: u64,
        pub precharges: u64,
        pub bytes: u64,
        /// Data-bus busy cycles (DRAM command clock).
        pub busy_cycles: u64,
        /// DRAM command-clock cycles simulated (per channel; summed over channels in
        /// [`crate::MemStats`]).
        pub cycles: u64,
        /// Sum over reads of (data end − arrival in the scheduler queue), DRAM cycles.
        pub read_latency_sum: u64,
        /// Cycles the scheduler queue was full when a request was waiting to enter.
        pub queue_full_cycles: u64,
        /// Cycles a completed read could not return (L2 return queue full).
        pub return_stall_cycles: u64,
    }
}

const CLOSED: u32 = u32::MAX;

// A bank's share of the scheduler queue ([`BankQueue`]), oldest first.
//
// Column commands nearly always take a bank's oldest request (FR-FCFS, and a bank's row
// commands open the row of its oldest request), so the queue is a ring buffer: taking the
// head moves nothing. An activate counts the bank's requests to the row it opened; in
// most queues that row is the oldest request's alone, which a count of the queued requests
// per row bucket shows without reading the queue.

/// Row buckets of [`BankQueue::row_bucket`] (a power of two: the bucket is the row's low
/// bits). More buckets make a row shared by chance with another queued request rarer; 64
/// keep the counts of a bank in two cache lines.
const ROW_BUCKETS: usize = 64;

/// A queued request as the scheduler reads it; the request itself waits in the channel's
/// `slots[slot]`. Small, so that scanning a bank's queue moves little memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Queued {
    /// Age: requests enter the channel with increasing numbers (oldest first across banks).
    seq: u64,
    row: u32,
    slot: u16,
    write: bool,
}

/// The ages of a bank's oldest queued read and oldest queued write to its open row
/// (`u64::MAX`: none). Every row hit of one kind in a bank may issue from the same cycle, so
/// the oldest issuable hit of the bank is one of these two. Kept as requests enter
/// ([`DramChannel::enqueue`]), issue (the next of its kind: [`BankQueue::next_hit`])
/// and the open row changes ([`BankQueue::hits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HitHeads {
    read: u64,
    write: u64,
}

impl HitHeads {
    const NONE: HitHeads = HitHeads {
        read: u64::MAX,
        write: u64::MAX,
    };

    #[inline]
    fn kind(&mut self, write: bool) -> &mut u64 {
        if write {
            &mut self.write
        } else {
            &mut self.read
        }
    }
}

/// The queued reads and writes to one row, and the oldest of each ([`BankQueue::hits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RowHits {
    reads: u32,
    writes: u32,
    heads: HitHeads,
}

impl RowHits {
    #[inline]
    fn add(&mut self, e: &Queued) {
        let (count, head) = if e.write {
            (&mut self.writes, &mut self.heads.write)
        } else {
            (&mut self.reads, &mut self.heads.read)
        };
        *count += 1;
        *head = (*head).min(e.seq);
    }
}

/// A bank's queued requests in age order (see the comment above [`ROW_BUCKETS`]).
#[derive(Debug, Clone)]
struct BankQueue {
    entries: VecDeque<Queued>,
    /// Per row bucket: the queued requests whose row falls in it.
    in_bucket: Box<[u16; ROW_BUCKETS]>,
}

impl BankQueue {
    fn with_capacity(cap: usize) -> Self {
        BankQueue {
            entries: VecDeque::with_capacity(cap),
            in_bucket: Box::new([0; ROW_BUCKETS]),
        }
    }

    #[inline]
    fn row_bucket(row: u32) -> usize {
        row as usize & (ROW_BUCKETS - 1)
    }

    #[inline]
    fn len(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[inline]
    fn front(&self) -> Option<&Queued> {
        self.entries.front()
    }

    fn iter(&self) -> impl Iterator<Item = &Queued> {
        self.entries.iter()
    }

    /// Adds the youngest request (its age is above every queued one's).
    #[inline]
    fn push(&mut self, e: Queued) {
        debug_assert!(self.entries.back().is_none_or(|b| b.seq < e.seq));
        self.in_bucket[Self::row_bucket(e.row)] += 1;
        self.entries.push_back(e);
    }

    /// The position of the queued request of age `seq` (nearly always the head).
    #[inline]
    fn index_of(&self, seq: u64) -> usize {
        match self.entries.front() {
            Some(h) if h.seq == seq => 0,
            _ => self.entries.partition_point(|e| e.seq < seq),
        }
    }

    /// Removes the request at `index` (the head: nothing moves).
    #[inline]
    fn remove(&mut self, index: usize) -> Queued {
        let e = if index == 0 {
            self.entries.pop_front()
        } else {
            self.entries.remove(index)
        }
        .expect("a queued request");
        self.in_bucket[Self::row_bucket(e.row)] -= 1;
        e
    }

    /// The age of the oldest request from `index` on to `row` that is a write (`write`) or
    /// a read (`u64::MAX`: none).
    #[inline]
    fn next_hit(&self, index: usize, row: u32, write: bool) -> u64 {
        self.entries
            .range(index..)
            .find(|x| x.row == row && x.write == write)
            .map_or(u64::MAX, |x| x.seq)
    }

    /// The queued requests to `row`: none if no request is in its bucket, the head alone if
    /// it is the only one there and for that row, else those a scan of the queue finds.
    fn hits(&self, row: u32) -> RowHits {
        let mut hits = RowHits {
            reads: 0,
            writes: 0,
            heads: HitHeads::NONE,
        };
        match self.in_bucket[Self::row_bucket(row)] {
            0 => {}
            1 if self.entries.front().is_some_and(|h| h.row == row) => hits.add(&self.entries[0]),
            _ => (self.entries.iter())
                .filter(|e| e.row == row)
                .for_each(|e| hits.add(e)),
        }
        hits
    }

    /// Whether the row bucket counts match the queue and the queue is in age order (debug
    /// check).
    fn consistent(&self) -> bool {
        let mut counts = [0u16; ROW_BUCKETS];
        for e in &self.entries {
            counts[Self::row_bucket(e.row)] += 1;
        }
        counts == *self.in_bucket
            && self
                .entries
                .iter()
                .zip(self.entries.iter().skip(1))
                .all(|(a, b)| a.seq < b.seq)
    }
}

/// A bank's state that only its own commands read (the scheduler's passes over the banks
/// read the compact per-bank arrays of [`DramChannel`]: `col_ready`, `group`, `rows`).
#[derive(Debug, Clone, Copy)]
struct Bank {
    open: u32,
    act_ready: u64,
    pre_ready: u64,
    /// The row of its oldest queued request, and whether a precharge or an activate was
    /// issued for that request (row commands are issued for a bank's oldest request, which
    /// stays the oldest until its column command).
    head_row: u32,
    head_pre: bool,
    head_act: bool,
    /// Queued reads and writes to the bank's open row (row hits; the scans compare rows, so
    /// a request whose row is `CLOSED`'s value counts on a closed bank).
    read_hits: u32,
    write_hits: u32,
}

impl Bank {
    /// The time a row command's condition reads: `pre_ready` if the bank is open (for a
    /// precharge), else `act_ready` (for an activate).
    #[inline]
    fn row_ready(&self) -> u64 {
        if self.open != CLOSED {
            self.pre_ready
        } else {
            self.act_ready
        }
    }
}

/// What the activate/precharge pass reads of a bank ([`Bank::row_ready`], and its oldest
/// queued request as the pass compares them, [`head_key`]; `u64::MAX`: none).
#[derive(Debug, Clone, Copy)]
struct RowState {
    ready: u64,
    head_key: u64,
}

/// A bank's oldest request as the activate/precharge pass orders them: its age, then the
/// bank (ages differ; kept ready-made, so that the pass over the banks only compares).
#[inline]
fn head_key(seq: u64, b: usize) -> u64 {
    seq << BANK_BITS | b as u64
}

/// The activate/precharge pass of [`DramChannel::evaluate`] so far: the oldest request
/// whose row command may issue now, as `age << BANK_BITS | bank` (ages differ), and the
/// banks whose row command may issue now.
struct RowPass {
    oldest: u64,
    issuable: u64,
}

impl RowPass {
    /// Looks at banks `bits` whose row command may issue from `rows[b].ready` on; `next`:
    /// the earliest of those times not reached yet.
    #[inline(always)]
    fn scan(&mut self, rows: &[RowState; MAX_BANKS], now: u64, mut bits: u64, next: &mut u64) {
        while bits != 0 {
            let b = bits.trailing_zeros() as usize & BANK_MASK;
            bits &= bits - 1;
            let RowState { ready, head_key } = rows[b];
            if now < ready {
                *next = (*next).min(ready);
            } else {
                self.oldest = self.oldest.min(head_key);
                self.issuable |= 1 << b;
            }
        }
    }
}

/// The command a scheduler cycle issued ([`DramChannel::schedule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    None,
    /// A column read or write of the request with this age.
    Column(u64),
    Precharge(usize),
    Activate(usize),
}

/// (`repr(C)`, aligned to a cache line: the fields that a cycle with nothing to do reads
/// come first and share one line, those of the scheduler's column times the next.)
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub(crate) struct DramChannel {
    /// Requests queued (in `queues`) and room for them.
    len: usize,
    cap: usize,
    /// Nothing can issue before this cycle while `quiet_blocked` stays as it is (set when
    /// the scheduler found nothing to issue, or after a command; every command's
    /// condition is a time being reached, and a new request lowers it to its own first
    /// cycle): `schedule` does nothing until then. 0: evaluate.
    quiet_until: u64,
    /// The cycle the head of `inflight` completes (`u64::MAX`: none).
    inflight_due: u64,
    /// The round-robin pointer over the partition's slices (the slice whose request is
    /// looked at first; kept by [`crate::partition::Partition`]).
    pub rr: usize,
    /// Bit `b`: bank `b` has queued requests (`busy_banks`), queued reads and writes to its
    /// open row (`read_hit_banks`, `write_hit_banks`), an open row (`open_banks`).
    busy_banks: u64,
    read_hit_banks: u64,
    quiet_blocked: bool,
    write_hit_banks: u64,
    open_banks: u64,
    next_act_any: u64,
    next_col_any: u64,
    next_rd: u64,
    next_wr: u64,
    bus_free: u64,
    t_cl: u64,
    t_wl: u64,
    t_ccd: u64,
    t_ccdl: u64,
    t_rrd: u64,
    t_rcd: u64,
    t_ras: u64,
    t_rp: u64,
    t_rc: u64,
    t_wtr: u64,
    t_wr: u64,
    t_rtw: u64,
    t_rtp: u64,
    burst: u64,
    burst_bytes: u64,
    /// The scheduler queue, per bank (oldest first in each); the requests are in `slots`,
    /// the free slots in `free`; `next_seq`: age of the next request.
    queues: Vec<BankQueue>,
    slots: Vec<DramReq>,
    free: Vec<u16>,
    /// Queued requests whose row is `CLOSED`'s value (row hits on a closed bank; none with
    /// the usual row counts, so a precharge need not count the bank's hits again).
    closed_rows: usize,
    next_seq: u64,
    banks: Vec<Bank>,
    /// Per bank: the first cycle of a column command as far as the bank goes, its bank
    /// group (that of its requests: the address mapping derives the bank from its group),
    /// and what the activate/precharge pass reads.
    col_ready: Box<[u64; MAX_BANKS]>,
    group: Box<[u8; MAX_BANKS]>,
    rows: Box<[RowState; MAX_BANKS]>,
    /// Per bank group (`MAX_BANKS` of them, the first `bank_groups` used).
    next_col_bg: Box<[u64; MAX_BANKS]>,
    /// Per bank: the ages of its oldest queued read and write to its open row
    /// ([`HitHeads`]), so that the row-hit pass need not scan the bank's queue.
    hit_heads: Box<[HitHeads; MAX_BANKS]>,
    /// Reads whose data is on its way, oldest first, each with the DRAM cycle it completes.
    inflight: VecDeque<Due<DramDone>>,
    pub stats: DramStats,
}

impl DramChannel {
    pub fn new(cfg: &DramConfig) -> Self {
        let t = &cfg.timing;
        let cap = cfg.sched_queue_entries.max(1) as usize;
        let nbanks = (cfg.banks as usize).clamp(1, MAX_BANKS);
        Self {
            t_ccd: t.t_ccd as u64,
            t_ccdl: t.t_ccdl as u64,
            t_rrd: t.t_rrd as u64,
            t_rcd: t.t_rcd as u64,
            t_ras: t.t_ras as u64,
            t_rp: t.t_rp as u64,
            t_rc: t.t_rc as u64,
            t_cl: t.t_cl as u64,
            t_wl: t.t_wl as u64,
            t_wtr: t.t_wtr as u64,
            t_wr: t.t_wr as u64,
            t_rtw: t.t_rtw as u64,
            t_rtp: t.t_rtp as u64,
            burst: cfg.burst_cycles() as u64,
            burst_bytes: cfg.burst_bytes() as u64,
            cap,
            queues: (0..nbanks).map(|_| BankQueue::with_capacity(cap)).collect(),
            slots: Vec::with_capacity(cap),
            free: Vec::with_capacity(cap),
            len: 0,
            closed_rows: 0,
            next_seq: 0,
            banks: vec![
                Bank {
                    open: CLOSED,
                    act_ready: 0,
                    pre_ready: 0,
                    head_row: 0,
                    head_pre: false,
                    head_act: false,
                    read_hits: 0,
                    write_hits: 0,
                };
                nbanks
            ],
            col_ready: Box::new([0; MAX_BANKS]),
            group: Box::new([0; MAX_BANKS]),
            rows: Box::new(
                [RowState {
                    ready: 0,
                    head_key: u64::MAX,
                }; MAX_BANKS],
            ),
            busy_banks: 0,
            read_hit_banks: 0,
            write_hit_banks: 0,
            open_banks: 0,
            next_act_any: 0,
            next_col_any: 0,
            next_col_bg: Box::new([0; MAX_BANKS]),
            hit_heads: Box::new([HitHeads::NONE; MAX_BANKS]),
            next_rd: 0,
            next_wr: 0,
            bus_free: 0,
            quiet_until: 0,
            quiet_blocked: false,
            inflight_due: u64::MAX,
            rr: 0,
            inflight: VecDeque::with_capacity(cap + 8),
            stats: DramStats::default(),
        }
    }

    pub fn has_room(&self) -> bool {
        self.len < self.cap
    }

    pub fn enqueue(&mut self, now: u64, mut r: DramReq) {
        r.arrival = now;
        let b = r.bank as usize;
        let hit = self.banks[b].open == r.row;
        debug_assert!(
            self.queues[b].is_empty() || self.group[b] == r.bank_group,
            "a bank's requests share its bank group"
        );
        // Nothing could issue before `quiet_until`; the new request adds its own command,
        // which needs the state before it enters.
        if self.quiet_until != 0 {
            let t = self.new_request_time(b, hit, &r);
            self.quiet_until = self.quiet_until.min(t);
        }
        let slot = match self.free.pop() {
            Some(k) => {
                self.slots[k as usize] = r;
                k
            }
            None => {
                self.slots.push(r);
                (self.slots.len() - 1) as u16
            }
        };
        let bank = &mut self.banks[b];
        self.group[b] = r.bank_group;
        if self.rows[b].head_key == u64::MAX {
            self.rows[b].head_key = head_key(self.next_seq, b);
            bank.head_row = r.row;
        }
        self.queues[b].push(Queued {
            seq: self.next_seq,
            row: r.row,
            slot,
            write: r.write,
        });
        if hit {
            if r.write {
                bank.write_hits += 1;
                self.write_hit_banks |= 1 << b;
            } else {
                bank.read_hits += 1;
                self.read_hit_banks |= 1 << b;
            }
            // The youngest request: the oldest of its kind only if the first.
            let head = self.hit_heads[b].kind(r.write);
            *head = (*head).min(self.next_seq);
        }
        self.busy_banks |= 1 << b;
        self.next_seq += 1;
        self.len += 1;
        self.closed_rows += usize::from(r.row == CLOSED);
    }

    /// The first cycle a command for request `r` of bank `b` could issue if it entered the
    /// queue now (`hit`: to the open row), `u64::MAX` if it adds no command: a request
    /// behind others of its bank that is not a row hit waits for their commands.
    fn new_request_time(&self, b: usize, hit: bool, r: &DramReq) -> u64 {
        if hit {
            let (reads, writes) = self.col_times(self.quiet_blocked);
            if r.write { writes } else { reads }
                .max(self.col_ready[b])
                .max(self.next_col_bg[r.bank_group as usize])
        } else if self.rows[b].head_key == u64::MAX {
            self.row_command_time(b)
        } else {
            u64::MAX
        }
    }

    /// Counts again the hits of bank `b` (its open row changed), and finds the oldest.
    fn recount_hits(&mut self, b: usize) {
        let bank = &mut self.banks[b];
        let hits = self.queues[b].hits(bank.open);
        bank.read_hits = hits.reads;
        bank.write_hits = hits.writes;
        self.hit_heads[b] = hits.heads;
        self.set_hit_bit(b);
    }

    #[inline]
    fn set_hit_bit(&mut self, b: usize) {
        let bank = &self.banks[b];
        let bit = 1u64 << b;
        self.read_hit_banks = (self.read_hit_banks & !bit) | if bank.read_hits > 0 { bit } else { 0 };
        self.write_hit_banks = (self.write_hit_banks & !bit) | if bank.write_hits > 0 { bit } else { 0 };
    }

    /// The first cycle of a column command of bank `b` as far as the bank and its bank group
    /// go.
    #[inline]
    fn col_ready_of(&self, b: usize) -> u64 {
        let b = b & BANK_MASK;
        self.col_ready[b].max(self.next_col_bg[self.group[b] as usize & BANK_MASK])
    }

    /// The first cycle a command for bank `b` may issue as far as its own state goes:
    /// its first row hit's column command if it has hits (`reads`, `writes`:
    /// [`Self::col_times`]), else the row command for its oldest request (`u64::MAX`: no
    /// request).
    fn bank_time(&self, b: usize, reads: u64, writes: u64) -> u64 {
        let bit = 1u64 << b;
        if self.hit_banks() & bit != 0 {
            let ready = self.col_ready_of(b);
            let of = |hits: u64, t: u64| if hits & bit != 0 { t.max(ready) } else { u64::MAX };
            of(self.read_hit_banks, reads).min(of(self.write_hit_banks, writes))
        } else if self.busy_banks & bit != 0 {
            self.row_command_time(b)
        } else {
            u64::MAX
        }
    }

    /// Banks with row hits.
    #[inline]
    fn hit_banks(&self) -> u64 {
        self.read_hit_banks | self.write_hit_banks
    }

    /// The first cycle a precharge (open bank) or an activate (closed bank) may issue for
    /// bank `b`, as far as the bank and `next_act_any` go.
    #[inline]
    fn row_command_time(&self, b: usize) -> u64 {
        let ready = self.rows[b & BANK_MASK].ready;
        if self.open_banks >> b & 1 == 1 {
            ready
        } else {
            ready.max(self.next_act_any)
        }
    }

    /// Bank `b`'s open row or its times for a row command changed.
    #[inline]
    fn sync_row(&mut self, b: usize) {
        let bank = &self.banks[b];
        self.rows[b].ready = bank.row_ready();
        let bit = 1u64 << b;
        self.open_banks = (self.open_banks & !bit) | if bank.open != CLOSED { bit } else { 0 };
    }

    /// Whether the per-bank counts and masks match the queues (debug check).
    fn counts_match(&self) -> bool {
        let mut len = 0;
        for (b, q) in self.queues.iter().enumerate() {
            let bank = &self.banks[b];
            let hits = |w: bool| q.iter().filter(|e| e.row == bank.open && e.write == w).count() as u32;
            len += q.len();
            if hits(false) != bank.read_hits
                || hits(true) != bank.write_hits
                || (self.read_hit_banks >> b & 1 == 1) != (bank.read_hits > 0)
                || (self.write_hit_banks >> b & 1 == 1) != (bank.write_hits > 0)
                || (self.busy_banks >> b & 1 == 1) == q.is_empty()
                || (self.open_banks >> b & 1 == 1) != (bank.open != CLOSED)
                || self.rows[b].ready != bank.row_ready()
                || self.hit_heads[b] != q.hits(bank.open).heads
                || !q.consistent()
                || self.rows[b].head_key != q.front().map_or(u64::MAX, |e| head_key(e.seq, b))
                || q.front().is_some_and(|e| e.row != bank.head_row)
                || (q.is_empty() && (bank.head_pre || bank.head_act))
            {
                return false;
            }
        }
        len == self.len
            && self.closed_rows
                == (self.queues.iter())
                    .map(|q| q.iter().filter(|e| e.row == CLOSED).count())
                    .sum::<usize>()
    }

    /// Removes request `index` of bank `b` (a row hit, about to issue), with the row
    /// commands issued for it.
    fn take(&mut self, b: usize, index: usize) -> DramReq {
        let q = &mut self.queues[b];
        let e = q.remove(index);
        let bank = &mut self.banks[b];
        debug_assert_eq!(bank.open, e.row);
        let hits = if e.write {
            bank.write_hits -= 1;
            bank.write_hits
        } else {
            bank.read_hits -= 1;
            bank.read_hits
        };
        // The request was the oldest of its kind; the next one is younger.
        let head = self.hit_heads[b].kind(e.write);
        debug_assert_eq!(*head, e.seq, "a bank's row hits issue oldest first by kind");
        *head = if hits == 0 {
            u64::MAX
        } else {
            q.next_hit(index, bank.open, e.write)
        };
        let mut r = self.slots[e.slot as usize];
        if index == 0 {
            r.caused_pre = std::mem::take(&mut bank.head_pre);
            r.caused_act = std::mem::take(&mut bank.head_act);
            match q.front() {
                Some(h) => {
                    self.rows[b].head_key = head_key(h.seq, b);
                    bank.head_row = h.row;
                }
                None => self.rows[b].head_key = u64::MAX,
            }
        }
        if q.is_empty() {
            self.busy_banks &= !(1 << b);
        }
        self.set_hit_bit(b);
        self.len -= 1;
        self.closed_rows -= usize::from(e.row == CLOSED);
        self.free.push(e.slot);
        r
    }

    pub fn is_idle(&self) -> bool {
        self.len == 0 && self.inflight.is_empty()
    }

    /// The oldest completed read, if it is done by `now`.
    #[inline]
    pub fn done_read(&self, now: u64) -> Option<DramDone> {
        if self.inflight_due > now {
            return None;
        }
        self.inflight.front().map(|&Due { item: d, .. }| d)
    }

    /// The oldest completed read ([`Self::done_read`]) left for its L2 slice.
    pub fn pop_done(&mut self) {
        self.inflight.pop_front();
        self.inflight_due = self.inflight.front().map_or(u64::MAX, |f| f.at);
    }

    /// Whether DRAM cycle `now` of the channel does nothing when no request waits to enter
    /// it: no read completes by then, and [`Self::schedule`] would find the scheduler empty
    /// or quiet.
    #[inline]
    pub fn is_quiet(&self, now: u64) -> bool {
        self.inflight_due > now && (self.len == 0 || (now < self.quiet_until && !self.quiet_blocked))
    }

    /// The first cycles from which a column read and a column write may issue as far as
    /// the channel-wide constraints go (a read at `now` needs `now >= reads`, and so on),
    /// `u64::MAX` for reads while they are blocked.
    #[inline]
    fn col_times(&self, reads_blocked: bool) -> (u64, u64) {
        // `bus_free <= now + t_cl` is `now >= bus_free - t_cl` (always, when bus_free < t_cl).
        let reads = if reads_blocked {
            u64::MAX
        } else {
            self.next_col_any
                .max(self.next_rd)
                .max(self.bus_free.saturating_sub(self.t_cl))
        };
        let writes = self
            .next_col_any
            .max(self.next_wr)
            .max(self.bus_free.saturating_sub(self.t_wl));
        (reads, writes)
    }

    /// Issues at most one command at DRAM cycle `now` (FR-FCFS: the oldest row hit that
    /// may issue; else, for the oldest request of each bank with no row hits, oldest first,
    /// the precharge or activate that opens its row) and returns it. `reads_blocked`: the
    /// oldest completed read cannot enter its L2 slice's return queue (full), so no column
    /// read issues (its data would have nowhere to go); writes, activates and precharges
    /// go on.
    #[inline]
    pub fn schedule(&mut self, now: u64, reads_blocked: bool) -> Command {
        if self.len == 0 || (now < self.quiet_until && reads_blocked == self.quiet_blocked) {
            debug_assert!(
                self.len == 0 || self.clone().evaluate(now, reads_blocked) == Command::None,
                "DRAM scheduler quiet at cycle {now}"
            );
            return Command::None;
        }
        self.evaluate(now, reads_blocked)
    }

    /// [`Self::schedule`] when the queue holds requests and the scheduler is not quiet.
    /// (Not inlined: [`crate::partition::Partition`]'s DRAM cycle, which checks first
    /// whether the scheduler is quiet, stays small.)
    #[inline(never)]
    fn evaluate(&mut self, now: u64, reads_blocked: bool) -> Command {
        debug_assert!(self.counts_match());
        // Set again below when nothing or a column command issues (a command changes the
        // state it was for).
        self.quiet_until = 0;
        // The earliest cycle at which a command found not issuable now could issue.
        let mut next = u64::MAX;
        let (reads, writes) = self.col_times(reads_blocked);
        // Row hits: every hit of a bank may issue from the same cycle for reads, and for
        // writes, so the oldest issuable hit is the oldest of each bank's first issuable
        // read hit and write hit (`hit_heads`).
        let oldest = (self.oldest_hit(self.read_hit_banks, false, reads, now, &mut next))
            .min(self.oldest_hit(self.write_hit_banks, true, writes, now, &mut next));
        let (pick_seq, pick_bank) = (oldest >> BANK_BITS, oldest as usize & BANK_MASK);
        if oldest != u64::MAX {
            let index = self.queues[pick_bank].index_of(pick_seq);
            let r = self.take(pick_bank, index);
            self.issue_column(r, now);
            self.quiet_after_column(now, reads_blocked);
            return Command::Column(pick_seq);
        }
        // No issuable row hit: the oldest request of each bank with no hits on its open row
        // opens its row (a precharge first if another row is open); the oldest such request
        // whose command may issue goes first.
        let open = self.open_banks;
        let waiting = self.busy_banks & !self.hit_banks();
        let mut pass = RowPass {
            oldest: u64::MAX,
            issuable: 0,
        };
        pass.scan(&self.rows, now, waiting & open, &mut next);
        // A closed bank's activate also waits for `next_act_any` ([`Self::row_command_time`]):
        // from then on its time is its own; before, none may issue. `closed_next`: the
        // earliest own time of those that cannot issue now (the first of them may issue at
        // its later with `next_act_any`, which an activate below moves), as far as it
        // matters for the earliest next command.
        let mut closed_next = u64::MAX;
        let closed = waiting & !open;
        if now < self.next_act_any {
            // (Only a precharge may issue, which leaves `next_act_any`: the closed banks'
            // bound is at least `next_act_any`, and it counts only if later than `next`;
            // the search stops once it is no later than `next_act_any`.)
            let mut bits = if next > self.next_act_any { closed } else { 0 };
            while bits != 0 && closed_next > self.next_act_any {
                let b = bits.trailing_zeros() as usize & BANK_MASK;
                bits &= bits - 1;
                closed_next = closed_next.min(self.rows[b].ready);
            }
        } else {
            pass.scan(&self.rows, now, closed, &mut closed_next);
        }
        let RowPass { oldest, issuable } = pass;
        self.quiet_blocked = reads_blocked;
        if issuable == 0 {
            // Nothing issued: every condition above is a cycle being reached, and only a
            // command, a new request or a change of `reads_blocked` changes them.
            self.quiet_until = next.min(closed_next.max(self.next_act_any));
            return Command::None;
        }
        let bi = oldest as usize & BANK_MASK;
        let b = &mut self.banks[bi];
        let command = if b.open != CLOSED {
            b.open = CLOSED;
            b.act_ready = b.act_ready.max(now + self.t_rp);
            b.head_pre = true;
            self.sync_row(bi);
            // The bank had no row hits; on the closed bank, only requests for row `CLOSED`
            // are.
            if self.closed_rows > 0 {
                self.recount_hits(bi);
            }
            self.stats.precharges += 1;
            Command::Precharge(bi)
        } else {
            b.open = b.head_row;
            b.pre_ready = b.pre_ready.max(now + self.t_ras);
            b.act_ready = now + self.t_rc;
            b.head_act = true;
            self.col_ready[bi] = now + self.t_rcd;
            self.sync_row(bi);
            self.next_act_any = now + self.t_rrd;
            self.recount_hits(bi);
            self.stats.activates += 1;
            Command::Activate(bi)
        };
        // Quiet until the next command may issue: the command changed bank `bi` only (and,
        // an activate, `next_act_any`, which only delays activates), so the other banks'
        // times found above stand, those of closed banks with `next_act_any` as it is now.
        // The other banks whose command could issue now can next cycle, or, closed ones
        // after an activate, when `next_act_any` allows.
        let mut until = next
            .min(closed_next.max(self.next_act_any))
            .min(self.bank_time(bi, reads, writes));
        let others = issuable & !(1 << bi);
        if others != 0 {
            let activated = matches!(command, Command::Activate(_));
            until = until.min(if others & open != 0 || !activated {
                now + 1
            } else {
                self.next_act_any
            });
        }
        self.quiet_until = until;
        command
    }

    /// The oldest row hit of kind `write` in banks `bits` (those with such hits) that may
    /// issue at `now`, as [`head_key`] of its age and bank (`u64::MAX`: none), and in
    /// `next` the earliest time of the others: such a hit may issue from `col` (the
    /// channel-wide time of its kind, [`Self::col_times`]) and its bank's time.
    #[inline(always)]
    fn oldest_hit(&self, mut bits: u64, write: bool, col: u64, now: u64, next: &mut u64) -> u64 {
        let mut oldest = u64::MAX;
        while bits != 0 {
            let b = bits.trailing_zeros() as usize & BANK_MASK;
            bits &= bits - 1;
            let t = col.max(self.col_ready_of(b));
            if now < t {
                *next = (*next).min(t);
            } else {
                let heads = self.hit_heads[b];
                oldest = oldest.min(head_key(if write { heads.write } else { heads.read }, b));
            }
        }
        oldest
    }

    /// After a column command: no column command issues before the channel-wide column
    /// times allow one (every row hit's time is later or equal), nor a precharge or an
    /// activate before the first row command time of a bank with no row hits. The
    /// scheduler is quiet until the earlier of the two (a lower bound of the next command;
    /// it evaluates again then; the search stops at the next cycle, `now + 1`).
    fn quiet_after_column(&mut self, now: u64, reads_blocked: bool) {
        let (reads, writes) = self.col_times(reads_blocked);
        let mut next = reads.min(writes);
        let mut bits = self.busy_banks & !self.hit_banks();
        while bits != 0 && next > now + 1 {
            let b = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            next = next.min(self.row_command_time(b));
        }
        self.quiet_until = next;
        self.quiet_blocked = reads_blocked;
    }

    fn issue_column(&mut self, r: DramReq, now: u64) {
        if r.caused_pre {
            self.stats.row_conflicts += 1;
        } else if r.caused_act {
            self.stats.row_misses += 1;
        } else {
            self.stats.row_hits += 1;
        }
        self.next_col_any = now + self.t_ccd;
        self.next_col_bg[r.bank_group as usize] = now + self.t_ccdl;
        self.stats.busy_cycles += self.burst;
        self.stats.bytes += self.burst_bytes;
        let b = r.bank as usize;
        let bank = &mut self.banks[b];
        if r.write {
            let end = now + self.t_wl + self.burst;
            self.bus_free = end;
            self.next_rd = self.next_rd.max(end + self.t_wtr);
            bank.pre_ready = bank.pre_ready.max(end + self.t_wr);
            self.stats.writes += 1;
        } else {
            let end = now + self.t_cl + self.burst;
            self.bus_free = end;
            self.next_wr = self.next_wr.max(now + self.t_rtw);
            bank.pre_ready = bank.pre_ready.max(now + self.t_rtp);
            self.stats.reads += 1;
            self.stats.read_latency_sum += end - r.arrival;
            if self.inflight.is_empty() {
                self.inflight_due = end;
            }
            self.inflight.push_back(Due {
                at: end,
                item: DramDone {
                    line: r.line,
                    way: r.way,
                    sectors: 1 << r.sector,
                    slice: r.slice,
                },
            });
        }
        self.sync_row(b);
    }
}

#[cfg(test)]
mod tests;
