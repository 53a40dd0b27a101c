//! DRAM channel: bank state machines with the usual timing constraints behind an FR-FCFS
//! scheduler (row hits first, then oldest), open-page policy, one command per cycle.

use std::collections::VecDeque;

/// Most banks of a channel (checked by the configuration).
const MAX_BANKS: usize = 64;

use crate::config::DramConfig;

/// One 32-byte burst request (an L2 sector) in the scheduler queue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DramReq {
    /// Line address (`addr >> line_shift`) and set-selection line of the L2 slice.
    pub line: u64,
    pub set_line: u64,
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
        set_line: u64,
        sector: u8,
        write: bool,
        slice: usize,
        bank: u32,
        bank_group: u32,
        row: u32,
    ) -> Self {
        Self {
            line,
            set_line,
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
    pub set_line: u64,
    pub sectors: u8,
    pub slice: u16,
}

/// DRAM counters (summed over channels in [`crate::MemStats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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

const CLOSED: u32 = u32::MAX;

/// A queued request as the scheduler's scans read it; the request itself waits in
/// `slots[slot]`. Small, so that scanning the queue and removing from its middle move
/// little memory.
#[derive(Debug, Clone, Copy)]
struct Queued {
    row: u32,
    slot: u16,
    bank: u8,
    bank_group: u8,
    write: bool,
}

#[derive(Debug, Clone, Copy)]
struct Bank {
    open: u32,
    act_ready: u64,
    col_ready: u64,
    pre_ready: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct DramChannel {
    t_ccd: u64,
    t_ccdl: u64,
    t_rrd: u64,
    t_rcd: u64,
    t_ras: u64,
    t_rp: u64,
    t_rc: u64,
    t_cl: u64,
    t_wl: u64,
    t_wtr: u64,
    t_wr: u64,
    t_rtw: u64,
    t_rtp: u64,
    burst: u64,
    burst_bytes: u64,
    cap: usize,
    /// The scheduler queue, oldest first; the requests are in `slots`, the free slots in
    /// `free`.
    queue: Vec<Queued>,
    slots: Vec<DramReq>,
    free: Vec<u16>,
    banks: Vec<Bank>,
    /// Per bank: queued requests, and those to its open row (row hits); `hits`: their sum.
    /// They let the scheduler's scans stop once every hit, or every bank, has been seen.
    bank_reqs: [u32; MAX_BANKS],
    bank_hits: [u32; MAX_BANKS],
    hits: usize,
    /// Banks with queued requests.
    busy_banks: usize,
    /// Queued requests whose row is `CLOSED`'s value (a hit on a closed bank, as the scans
    /// compare rows; normally none).
    closed_rows: usize,
    next_act_any: u64,
    next_col_any: u64,
    next_col_bg: Vec<u64>,
    next_rd: u64,
    next_wr: u64,
    bus_free: u64,
    /// The scheduler found nothing to issue, and nothing can issue before this cycle while
    /// the queue and `quiet_blocked` stay as they are (every command's condition is a time
    /// being reached): `schedule` only counts the cycle until then. 0: evaluate.
    quiet_until: u64,
    quiet_blocked: bool,
    pub inflight: VecDeque<(u64, DramDone)>,
    pub stats: DramStats,
}

impl DramChannel {
    pub fn new(cfg: &DramConfig) -> Self {
        let t = &cfg.timing;
        let cap = cfg.sched_queue_entries.max(1) as usize;
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
            queue: Vec::with_capacity(cap),
            slots: Vec::with_capacity(cap),
            free: Vec::with_capacity(cap),
            banks: vec![
                Bank {
                    open: CLOSED,
                    act_ready: 0,
                    col_ready: 0,
                    pre_ready: 0
                };
                cfg.banks as usize
            ],
            bank_reqs: [0; MAX_BANKS],
            bank_hits: [0; MAX_BANKS],
            hits: 0,
            busy_banks: 0,
            closed_rows: 0,
            next_act_any: 0,
            next_col_any: 0,
            next_col_bg: vec![0; cfg.bank_groups.max(1) as usize],
            next_rd: 0,
            next_wr: 0,
            bus_free: 0,
            quiet_until: 0,
            quiet_blocked: false,
            inflight: VecDeque::with_capacity(cap + 8),
            stats: DramStats::default(),
        }
    }

    pub fn has_room(&self) -> bool {
        self.queue.len() < self.cap
    }

    pub fn enqueue(&mut self, now: u64, mut r: DramReq) {
        r.arrival = now;
        let b = r.bank as usize;
        if self.bank_reqs[b] == 0 {
            self.busy_banks += 1;
        }
        self.bank_reqs[b] += 1;
        self.closed_rows += usize::from(r.row == CLOSED);
        if self.banks[b].open == r.row {
            self.bank_hits[b] += 1;
            self.hits += 1;
        }
        let q = Queued {
            row: r.row,
            slot: 0,
            bank: r.bank,
            bank_group: r.bank_group,
            write: r.write,
        };
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
        self.queue.push(Queued { slot, ..q });
        self.quiet_until = 0;
    }

    /// Counts again the hits of bank `b` (its open row changed).
    fn recount_hits(&mut self, b: usize) {
        let open = self.banks[b].open;
        let n = if open == CLOSED && self.closed_rows == 0 {
            0
        } else {
            self.queue
                .iter()
                .filter(|q| q.bank as usize == b && q.row == open)
                .count()
        };
        self.hits = self.hits - self.bank_hits[b] as usize + n;
        self.bank_hits[b] = n as u32;
    }

    /// Whether the per-bank counts match the queue (debug check).
    fn counts_match(&self) -> bool {
        let mut reqs = [0u32; MAX_BANKS];
        let mut hits = [0u32; MAX_BANKS];
        for q in &self.queue {
            reqs[q.bank as usize] += 1;
            hits[q.bank as usize] += u32::from(self.banks[q.bank as usize].open == q.row);
        }
        reqs == self.bank_reqs
            && hits == self.bank_hits
            && self.hits == hits.iter().map(|&h| h as usize).sum::<usize>()
            && self.busy_banks == reqs.iter().filter(|&&r| r > 0).count()
            && self.closed_rows == self.queue.iter().filter(|q| q.row == CLOSED).count()
    }

    /// Removes the request at `i` (a row hit, about to issue).
    fn take(&mut self, i: usize) -> DramReq {
        let q = self.queue.remove(i);
        self.free.push(q.slot);
        let r = self.slots[q.slot as usize];
        let b = r.bank as usize;
        debug_assert_eq!(self.banks[b].open, r.row);
        self.bank_reqs[b] -= 1;
        if self.bank_reqs[b] == 0 {
            self.busy_banks -= 1;
        }
        self.bank_hits[b] -= 1;
        self.hits -= 1;
        self.closed_rows -= usize::from(r.row == CLOSED);
        r
    }

    pub fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.inflight.is_empty()
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

    /// Issues at most one command at DRAM cycle `now`. `reads_blocked`: the oldest completed
    /// read cannot enter its L2 slice's return queue (full), so no column read issues (its
    /// data would have nowhere to go); writes, activates and precharges go on.
    pub fn schedule(&mut self, now: u64, reads_blocked: bool) {
        if self.queue.is_empty() {
            return;
        }
        if now < self.quiet_until && reads_blocked == self.quiet_blocked {
            return;
        }
        debug_assert!(self.counts_match());
        // Set again below when nothing issues (a command changes the state it was for).
        self.quiet_until = 0;
        // The earliest cycle at which a command found not issuable now could issue.
        let mut next = u64::MAX;
        let mut has_hit = [false; MAX_BANKS];
        let mut pick = None;
        let (reads, writes) = self.col_times(reads_blocked);
        // Row hits in age order; none after the last one.
        let mut hits_left = self.hits;
        for (i, r) in self.queue.iter().enumerate() {
            if hits_left == 0 {
                break;
            }
            let b = &self.banks[r.bank as usize];
            if b.open == r.row {
                hits_left -= 1;
                // A column command for this row hit may issue from cycle `t`.
                let t = if r.write { writes } else { reads }
                    .max(b.col_ready)
                    .max(self.next_col_bg[r.bank_group as usize]);
                if now >= t {
                    // The oldest issuable row hit (`has_hit` is not needed then).
                    pick = Some(i);
                    break;
                }
                has_hit[r.bank as usize] = true;
                next = next.min(t);
            }
        }
        if let Some(i) = pick {
            let r = self.take(i);
            self.issue_column(r, now);
            return;
        }
        // No issuable row hit: open the row of the oldest request of each bank that has no
        // pending hits on its open row (`has_hit` marks every bank with a hit now); none
        // is left once every bank with requests has been seen.
        let mut tried = [false; MAX_BANKS];
        let mut banks_left = self.busy_banks;
        for i in 0..self.queue.len() {
            if banks_left == 0 {
                break;
            }
            let (bi, row) = (self.queue[i].bank as usize, self.queue[i].row);
            if tried[bi] {
                continue;
            }
            tried[bi] = true;
            banks_left -= 1;
            if has_hit[bi] {
                continue;
            }
            let b = self.banks[bi];
            if b.open != CLOSED {
                if now >= b.pre_ready {
                    let b = &mut self.banks[bi];
                    b.open = CLOSED;
                    b.act_ready = b.act_ready.max(now + self.t_rp);
                    self.recount_hits(bi);
                    self.slots[self.queue[i].slot as usize].caused_pre = true;
                    self.stats.precharges += 1;
                    return;
                }
                next = next.min(b.pre_ready);
            } else if now >= b.act_ready && now >= self.next_act_any {
                let b = &mut self.banks[bi];
                b.open = row;
                b.col_ready = now + self.t_rcd;
                b.pre_ready = b.pre_ready.max(now + self.t_ras);
                b.act_ready = now + self.t_rc;
                self.next_act_any = now + self.t_rrd;
                self.slots[self.queue[i].slot as usize].caused_act = true;
                self.recount_hits(bi);
                self.stats.activates += 1;
                return;
            } else {
                next = next.min(b.act_ready.max(self.next_act_any));
            }
        }
        // Nothing issued: every condition above is a cycle being reached, and only a
        // command, a new request or a change of `reads_blocked` changes them.
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
        let bank = &mut self.banks[r.bank as usize];
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
            self.inflight.push_back((
                end,
                DramDone {
                    line: r.line,
                    set_line: r.set_line,
                    sectors: 1 << r.sector,
                    slice: r.slice,
                },
            ));
        }
    }
}
