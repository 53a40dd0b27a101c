//! One memory partition: its L2 slices (sub-partitions), its DRAM channels, and the
//! crossbar queues of its slices. A partition only talks to itself and, through those
//! queues, to the crossbars, so the partitions of a core cycle can tick in any order, or
//! in parallel ([`crate::MemorySystem::tick_begin`]).

use std::cmp::Reverse;
use std::collections::VecDeque;

use crate::config::MemoryConfig;
use crate::dram::DramChannel;
use crate::hash::AddressMapping;
use crate::icnt::{DstEntry, SrcEntry};
use crate::l2::{InReq, L2Slice, OutResp, SliceWake};
use crate::types::Due;
use crate::types::L2Response;

/// What the partitions do in one core cycle (decided by the serial part, the same for
/// every partition): their L2 cycles, then their DRAM cycles.
#[derive(Debug, Clone, Copy, Default)]
pub struct PartitionStep {
    /// The L2 clock's cycles `l2_first ..= l2_last` (none when `l2_first > l2_last`; then
    /// `l2_last` is the L2 clock's cycle all the same, which the DRAM cycles see).
    pub(crate) l2_first: u64,
    pub(crate) l2_last: u64,
    /// The DRAM command clock's cycles `dram_first ..= dram_last`.
    pub(crate) dram_first: u64,
    pub(crate) dram_last: u64,
    /// The interconnect's cycle (requests that arrived by then may enter an L2 slice).
    pub(crate) icnt_now: u64,
    /// Room of a slice's response queue into the response crossbar.
    pub(crate) resp_cap: usize,
}

/// A memory partition (see the module docs).
#[derive(Debug, Clone)]
pub struct Partition {
    /// Index of its first slice (slices of partition `p`: `p * spp ..`).
    first_slice: usize,
    pub(crate) slices: Vec<L2Slice>,
    /// Per slice: when it must be visited again (see [`SliceWake`]).
    wake: Vec<SliceWake>,
    pub(crate) channels: Vec<DramChannel>,
    /// Per slice: requests that crossed (or are crossing) the request crossbar.
    pub(crate) req_in: Vec<VecDeque<DstEntry<InReq>>>,
    /// Per slice: responses waiting for the response crossbar.
    pub(crate) resp_out: Vec<VecDeque<SrcEntry<L2Response>>>,
    /// Whether anything may happen in the partition (a request arrived and it has not
    /// been idle since); an inactive partition's cycles change nothing.
    pub(crate) active: bool,
    /// A response went into `resp_out` since the last [`crate::MemorySystem::tick_end`],
    /// which then tells the response crossbar (only the crossbar takes them out, and it
    /// notes itself when a source's queue runs empty).
    pub(crate) resp_pushed: bool,
    /// The next [`Partition::tick`] runs its DRAM cycles even if no channel acts in them
    /// ([`Partition::dram_waits`]; set by [`Partition::wake_all`]).
    run_dram: bool,
}

impl Partition {
    pub(crate) fn new(cfg: &MemoryConfig, p: usize, resp_cap: usize, req_cap: usize) -> Self {
        let spp = cfg.l2.sub_partitions_per_partition as usize;
        let cpp = cfg.dram.channels_per_partition.max(1) as usize;
        let first_slice = p * spp;
        Partition {
            first_slice,
            slices: (first_slice..first_slice + spp)
                .map(|i| L2Slice::new(cfg, i))
                .collect(),
            wake: vec![SliceWake::AWAKE; spp],
            channels: (0..cpp).map(|_| DramChannel::new(&cfg.dram)).collect(),
            req_in: (0..spp).map(|_| VecDeque::with_capacity(req_cap)).collect(),
            resp_out: (0..spp).map(|_| VecDeque::with_capacity(resp_cap)).collect(),
            active: false,
            resp_pushed: false,
            run_dram: false,
        }
    }

    /// Nothing queued or in flight in the partition's slices and channels, and no request
    /// for its slices in the request crossbar.
    pub(crate) fn is_idle(&self) -> bool {
        self.req_in.iter().all(|q| q.is_empty())
            && self.slices.iter().all(|s| s.is_idle())
            && self.channels.iter().all(|c| c.is_idle())
    }

    /// Whether the partition may have work ([`Partition::tick`] does nothing otherwise).
    #[inline]
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Makes the next [`Partition::tick`] visit every slice, as if none could sleep (the
    /// slices' records are worked out again by those visits), and run its DRAM cycles. A
    /// visit to a slice that cannot act changes nothing, nor do DRAM cycles in which no
    /// channel acts, so ticks after `wake_all` must give the results of ticks without it
    /// (`tests/sleep.rs` compares them).
    pub fn wake_all(&mut self) {
        for w in &mut self.wake {
            w.l2_at = 0;
        }
        self.run_dram = true;
    }

    /// The partition's share of a core cycle (`step`); afterwards `active` says whether it
    /// is still busy.
    pub fn tick(&mut self, step: &PartitionStep, map: &AddressMapping) {
        self.tick_with(step, map, Self::l2_cycle);
    }

    /// A core cycle's share with `l2_cycle` for each of its L2 cycles, then its DRAM cycles.
    #[inline(always)]
    fn tick_with(
        &mut self,
        step: &PartitionStep,
        map: &AddressMapping,
        l2_cycle: impl Fn(&mut Self, u64, &PartitionStep, &AddressMapping),
    ) {
        if !self.active {
            return;
        }
        // (`while` loops: cheaper than inclusive ranges.)
        let mut now = step.l2_first;
        while now <= step.l2_last {
            l2_cycle(self, now, step, map);
            now += 1;
        }
        // The flags are written only when they change: the serial part reads them every
        // cycle (`MemorySystem::tick_end`), and a line written here every cycle would move
        // between the cores twice a cycle when another thread ticks this partition.
        let run_dram = self.run_dram;
        if run_dram {
            self.run_dram = false;
        }
        if run_dram || !self.dram_waits(step) {
            self.dram_cycles(step);
        }
        // (A busy slice keeps the partition active without reading anything else.)
        let active = self.wake.iter().any(|w| w.busy) || !self.is_idle();
        if active != self.active {
            self.active = active;
        }
    }

    fn l2_cycle(&mut self, now: u64, step: &PartitionStep, map: &AddressMapping) {
        let mut pushed = false;
        // (Zipped: indexing the per-slice vectors costs bounds checks for every slice in
        // every cycle, asleep or not.)
        let slices = (self.slices.iter_mut())
            .zip(&mut self.req_in)
            .zip(&mut self.resp_out)
            .zip(&mut self.wake);
        for (j, (((s, req_in), out), w)) in slices.enumerate() {
            // A slice that cannot act this cycle is not visited (an idle slice with nothing
            // arriving among them); its head request's memoised stall still counts.
            if now < w.l2_at
                && step.icnt_now < w.icnt_at
                && (!w.watch_in || req_in.is_empty())
                && (!w.watch_out || out.len() >= step.resp_cap)
            {
                debug_assert_eq!(
                    s.would_act(
                        now,
                        out.len() < step.resp_cap,
                        req_in.front().is_some_and(|e| e.at <= step.icnt_now)
                    ),
                    (false, w.stall_counts),
                    "slice {j} asleep at L2 cycle {now}"
                );
                if w.stall_counts {
                    s.count_stall();
                }
                continue;
            }
            pushed |= slice_back(s, out, now, step, map);
            // 3b. One new request into the ROP pipeline.
            admit_one(s, req_in, now, step.icnt_now);
            *w = s.wake_after(now, out.len() < step.resp_cap, req_in.front().map(|f| f.at));
        }
        if pushed {
            self.resp_pushed = true;
        }
    }

    /// The back half of the partition's share of a core cycle: [`Partition::tick`] without
    /// requests entering the ROP pipelines ([`Partition::admit`] does that later, for the
    /// same cycles). Exact when every request a lookup of these cycles takes entered its
    /// pipeline before them: the pipeline's latency is at least the cycles run ahead
    /// ([`crate::MemorySystem::max_quantum`]).
    pub fn tick_back(&mut self, step: &PartitionStep, map: &AddressMapping) {
        self.tick_with(step, map, Self::l2_cycle_back);
    }

    fn l2_cycle_back(&mut self, now: u64, step: &PartitionStep, map: &AddressMapping) {
        let mut pushed = false;
        let slices = (self.slices.iter_mut())
            .zip(&mut self.resp_out)
            .zip(&mut self.wake);
        for (j, ((s, out), w)) in slices.enumerate() {
            // Requests entering are not this half's business (`watch_in`, `icnt_at`).
            if now < w.l2_at && (!w.watch_out || out.len() >= step.resp_cap) {
                debug_assert_eq!(
                    s.would_act(now, out.len() < step.resp_cap, false),
                    (false, w.stall_counts),
                    "slice {j} asleep at L2 cycle {now} (back half)"
                );
                if w.stall_counts {
                    s.count_stall();
                }
                continue;
            }
            pushed |= slice_back(s, out, now, step, map);
            *w = s.wake_after(now, out.len() < step.resp_cap, None);
        }
        if pushed {
            self.resp_pushed = true;
        }
    }

    /// The front half of the partition's share of a core cycle (after
    /// [`Partition::tick_back`] ran it and later ones): in each of `step`'s L2 cycles, one
    /// request that crossed the request crossbar by `step.icnt_now` enters each slice's ROP
    /// pipeline if it had room then ([`L2Slice::rop_room_at`]). A slice that took one is
    /// visited by the next back half.
    pub fn admit(&mut self, step: &PartitionStep) {
        let slices = (self.slices.iter_mut()).zip(&mut self.req_in).zip(&mut self.wake);
        for ((s, req_in), w) in slices {
            let mut now = step.l2_first;
            while now <= step.l2_last && !req_in.is_empty() {
                if admit_one(s, req_in, now, step.icnt_now) {
                    w.l2_at = 0;
                    w.busy = true;
                    self.active = true;
                }
                now += 1;
            }
        }
    }

    /// Whether any slice's request queue holds requests (for [`Partition::admit`]).
    #[inline]
    pub fn has_requests_in(&self) -> bool {
        self.req_in.iter().any(|q| !q.is_empty())
    }

    /// Starts or ends running the back half ahead ([`L2Slice::record_rop_pops`]).
    pub(crate) fn record_rop_pops(&mut self, yes: bool) {
        for s in &mut self.slices {
            s.record_rop_pops(yes);
        }
    }

    /// Whether no channel acts in the DRAM cycles of `step`: each has no read completing
    /// and a quiet scheduler until the last of them ([`DramChannel::is_quiet`] holds up to a
    /// cycle), and none takes a request (no slice has one ready, or its queue is full).
    /// Then nothing changes in them (a slice's requests for DRAM only change when one enters
    /// a channel) but the full queues' counts, which this adds as [`Self::dram_cycle`]
    /// would, one per cycle in which a request waits; the cycles need not be run.
    #[inline(always)]
    fn dram_waits(&mut self, step: &PartitionStep) -> bool {
        let waiting = self.wake.iter().any(|w| w.to_dram_ready <= step.l2_last);
        let last = step.dram_last;
        if !(self.channels.iter()).all(|ch| ch.is_quiet(last) && !(waiting && ch.has_room())) {
            return false;
        }
        if waiting {
            let cycles = (last + 1).saturating_sub(step.dram_first);
            for ch in &mut self.channels {
                ch.stats.queue_full_cycles += cycles;
            }
        }
        true
    }

    /// The DRAM cycles of `step` (one function for all of them: its set-up is paid once per
    /// core cycle, not once per DRAM cycle).
    fn dram_cycles(&mut self, step: &PartitionStep) {
        let mut now = step.dram_first;
        while now <= step.dram_last {
            self.dram_cycle(now, step.l2_last);
            now += 1;
        }
    }

    #[inline(always)]
    fn dram_cycle(&mut self, now: u64, l2_now: u64) {
        let n = self.slices.len();
        for ch in self.channels.iter_mut() {
            // A channel with no completed read and a quiet scheduler does nothing when no
            // request is ready to enter (an idle channel whose slices have nothing for it
            // among them; its cycles are counted by the memory system), or when its queue
            // is full: then the cycle only counts as one with a full queue, as below.
            if ch.is_quiet(now) {
                let waiting = self.wake.iter().any(|w| w.to_dram_ready <= l2_now);
                if !waiting || !ch.has_room() {
                    ch.stats.queue_full_cycles += u64::from(waiting);
                    continue;
                }
            }
            // Completed reads back to their slices. A full return queue stalls the channel's
            // reads (the back-pressure reaches the scheduler, as Accel-Sim's returnq does).
            let mut reads_blocked = false;
            if let Some(d) = ch.done_read(now) {
                let k = d.slice as usize - self.first_slice;
                let s = &mut self.slices[k];
                if s.from_dram.len() < s.from_dram_cap {
                    s.from_dram.push_back(d);
                    ch.pop_done();
                    let w = &mut self.wake[k];
                    w.l2_at = 0;
                    w.busy = true;
                } else {
                    ch.stats.return_stall_cycles += 1;
                    reads_blocked = true;
                }
            }
            // One request from the channel's slices into the scheduler queue.
            let mut j = ch.rr;
            for _ in 0..n {
                let k = j;
                j = if j + 1 == n { 0 } else { j + 1 };
                if self.wake[k].to_dram_ready > l2_now {
                    continue;
                }
                if !ch.has_room() {
                    ch.stats.queue_full_cycles += 1;
                    break;
                }
                let s = &mut self.slices[k];
                if let Some(&Due { item: r, .. }) = s.to_dram.front() {
                    ch.enqueue(now, r);
                    let w = &mut self.wake[k];
                    if s.pop_to_dram() {
                        w.l2_at = 0;
                    }
                    w.to_dram_ready = s.to_dram_ready();
                }
                // The slice after this one goes first next time.
                ch.rr = j;
                break;
            }
            ch.schedule(now, reads_blocked);
        }
    }
}

/// A visited slice's L2 cycle `now` but for requests entering its ROP pipeline: one DRAM
/// fill, one ready response into the response crossbar's queue `out`, one tag lookup.
/// Whether a response went into `out`.
#[inline(always)]
fn slice_back(
    s: &mut L2Slice,
    out: &mut VecDeque<SrcEntry<L2Response>>,
    now: u64,
    step: &PartitionStep,
    map: &AddressMapping,
) -> bool {
    let mut pushed = false;
    // 1. One DRAM fill.
    s.fill(now);
    // 2. One ready response into the response network.
    if matches!(s.resp.peek(), Some(Reverse(top)) if top.ready <= now) && out.len() < step.resp_cap {
        if let Some(Reverse(OutResp { sm, bytes, resp, .. })) = s.resp.pop() {
            out.push_back(SrcEntry {
                dst: sm as usize,
                bytes,
                packet: resp,
            });
            pushed = true;
        }
    }
    // 3. One tag lookup.
    s.lookup(now, map);
    pushed
}

/// One request that crossed the request crossbar by interconnect cycle `icnt_now` enters the
/// slice's ROP pipeline in L2 cycle `now`, if the pipeline had room then
/// ([`L2Slice::rop_room_at`]). Whether one entered.
#[inline(always)]
fn admit_one(s: &mut L2Slice, req_in: &mut VecDeque<DstEntry<InReq>>, now: u64, icnt_now: u64) -> bool {
    match req_in.front() {
        Some(&DstEntry { at, item: r }) if at <= icnt_now && s.rop_room_at(now) => {
            req_in.pop_front();
            s.rop_push(now, r);
            true
        }
        _ => false,
    }
}
