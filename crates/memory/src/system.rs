//! Everything beyond the SMs: interconnect, L2 slices, DRAM channels, clock domains.

use crate::config::MemoryConfig;
use std::collections::VecDeque;

use crate::dram::DramStats;
use crate::hash::AddressMapping;
use crate::icnt::{Crossbar, DstEntry, IcntStats, PortSet, Ports, SrcEntry};
use crate::l2::{InReq, L2Stats};
use crate::partition::{Partition, PartitionStep};
use crate::types::Due;
use crate::types::{L2ReqKind, L2Request, L2Response};

mod halves;
pub use halves::BackHalf;

/// Fractional clock accumulator in kHz (integer arithmetic → deterministic).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Clock {
    khz: u64,
    acc: u64,
    cycle: u64,
}

impl Clock {
    fn new(mhz: f64) -> Self {
        Self {
            khz: (mhz * 1000.0).round().max(1.0) as u64,
            acc: 0,
            cycle: 0,
        }
    }
}

/// The cycles of each clock domain in one core cycle (both ends inclusive; none when
/// `first > last`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CycleClocks {
    pub icnt_first: u64,
    pub icnt_last: u64,
    pub l2_first: u64,
    pub l2_last: u64,
    pub dram_first: u64,
    pub dram_last: u64,
    /// Set by the back half of a quantum that may see the kernel end
    /// ([`BackHalf::cycle`]): nothing is left in the partitions after this cycle (no
    /// request, fill, response or DRAM access), apart from requests the front half lets
    /// in later.
    pub back_idle: bool,
    /// What the back half's idle cycles after this one change, to undo them
    /// ([`MemorySystem::rewind_back`]).
    mark: Option<BackMark>,
}

/// The state an idle back half changes in a core cycle: the clocks and the response
/// crossbar's cycle and round-robin start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct BackMark {
    clocks: Clocks,
    resp_net: (u64, usize),
}

/// The clock domains: core cycles and the interconnect's, L2's and DRAM command clock's
/// cycles that fall in them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Clocks {
    core_khz: u64,
    core_cycles: u64,
    icnt: Clock,
    l2: Clock,
    dram: Clock,
}

impl Clocks {
    /// One core cycle (fractional accumulation, integer kHz): the cycles of each domain
    /// that fall in it.
    fn advance(&mut self) -> CycleClocks {
        self.core_cycles += 1;
        let core = self.core_khz;
        let step = |c: &mut Clock| {
            let first = c.cycle + 1;
            c.acc += c.khz;
            while c.acc >= core {
                c.acc -= core;
                c.cycle += 1;
            }
            (first, c.cycle)
        };
        let (icnt_first, icnt_last) = step(&mut self.icnt);
        let (l2_first, l2_last) = step(&mut self.l2);
        let (dram_first, dram_last) = step(&mut self.dram);
        CycleClocks {
            icnt_first,
            icnt_last,
            l2_first,
            l2_last,
            dram_first,
            dram_last,
            back_idle: false,
            mark: None,
        }
    }
}

/// Aggregated statistics of the memory system.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemStats {
    pub l2: L2Stats,
    /// Requests processed per L2 slice.
    pub l2_slice_accesses: Vec<u64>,
    pub dram: DramStats,
    /// Read+write bursts per DRAM channel.
    pub dram_channel_accesses: Vec<u64>,
    pub icnt_requests: IcntStats,
    pub icnt_responses: IcntStats,
    pub core_cycles: u64,
    pub icnt_cycles: u64,
    pub l2_cycles: u64,
    pub dram_cycles: u64,
    /// DRAM data-bus utilisation: busy cycles / (cycles × channels).
    pub dram_bandwidth_utilization: f64,
    /// DRAM bytes moved per core cycle.
    pub dram_bytes_per_core_cycle: f64,
    /// L2 hit rate over reads: hits / (hits + misses + reads that waited for an earlier
    /// miss's fill, `hit_reserved`).
    pub l2_read_hit_rate: f64,
    /// Average DRAM read latency (scheduler-queue arrival → data), DRAM cycles.
    pub dram_avg_read_latency: f64,
}

/// One SM's end of the crossbars: its request queue (a source of the request crossbar)
/// and its response queue (a destination of the response crossbar). Handed to the SM's
/// step by [`MemorySystem::step_parts`]; the crossbars use it only in
/// [`MemorySystem::tick_begin`].
#[derive(Debug, Clone)]
pub struct SmPort {
    /// The SM's interconnect port (its physical SM).
    port: u16,
    req: VecDeque<SrcEntry<InReq>>,
    resp: VecDeque<DstEntry<L2Response>>,
    /// Requests pushed during a quantum ([`PortStep::in_quantum`]), each due at the core
    /// cycle of its push: they join `req` when the front half reaches that cycle
    /// ([`MemorySystem::front_cycle`]).
    staged: VecDeque<Due<SrcEntry<InReq>>>,
}

/// What an SM needs to use its [`SmPort`] during a step (unchanged by the step).
#[derive(Debug, Clone, Copy)]
pub struct PortStep<'a> {
    map: &'a AddressMapping,
    header_bytes: u32,
    src_cap: usize,
    /// The interconnect's last cycle: responses due by then are delivered.
    icnt_now: u64,
    /// In a quantum: the core cycle of the step; pushes wait in the port's staging queue
    /// until the front half reaches that cycle (`None`: they go into the input queue).
    stage_at: Option<u64>,
}

impl PortStep<'_> {
    /// The same for core cycle `cycle` of a quantum, whose responses due by interconnect
    /// cycle `icnt_now` are delivered ([`MemorySystem::back_cycle`]).
    #[inline]
    pub fn in_quantum(&self, cycle: u64, icnt_now: u64) -> Self {
        PortStep {
            icnt_now,
            stage_at: Some(cycle),
            ..*self
        }
    }

    /// The same outside a quantum, at interconnect cycle `icnt_now`.
    #[inline]
    pub fn at_icnt(&self, icnt_now: u64) -> Self {
        PortStep {
            icnt_now,
            stage_at: None,
            ..*self
        }
    }
}

impl SmPort {
    /// Injects a request; false = the input queue is full ([`MemorySystem::push`]).
    #[inline]
    pub fn push(&mut self, at: &PortStep, req: L2Request) -> bool {
        if self.req.len() + self.staged.len() >= at.src_cap {
            return false;
        }
        let dst = at.map.slice(req.addr);
        let bytes = at.header_bytes
            + match req.kind {
                L2ReqKind::Read => 0,
                _ => req.bytes,
            };
        let e = SrcEntry {
            dst,
            bytes,
            packet: InReq { sm: self.port, req },
        };
        match at.stage_at {
            None => self.req.push_back(e),
            Some(c) => self.staged.push_back(Due { at: c, item: e }),
        }
        true
    }

    /// Requests the SM can still push ([`SmPort::push`]) before its input queue is full,
    /// counting those staged in a quantum.
    #[inline]
    pub fn room_at(&self, at: &PortStep) -> usize {
        at.src_cap.saturating_sub(self.req.len() + self.staged.len())
    }

    /// Whether a response is due by `at`'s interconnect cycle.
    #[inline]
    pub fn has_response_at(&self, at: &PortStep) -> bool {
        self.has_response(at.icnt_now)
    }

    /// Next response delivered to the SM by `at`'s interconnect cycle.
    #[inline]
    pub fn pop_response(&mut self, at: &PortStep) -> Option<L2Response> {
        self.pop_response_at(at.icnt_now)
    }

    #[inline]
    fn pop_response_at(&mut self, icnt_now: u64) -> Option<L2Response> {
        if self.has_response(icnt_now) {
            self.resp.pop_front().map(|e| e.item)
        } else {
            None
        }
    }

    #[inline]
    fn has_response(&self, icnt_now: u64) -> bool {
        self.resp.front().is_some_and(|e| e.at <= icnt_now)
    }

    #[inline]
    fn room(&self, src_cap: usize) -> usize {
        src_cap.saturating_sub(self.req.len())
    }
}

/// [`MemorySystem::step_parts`]: the partitions with their step and the address mapping,
/// and the SMs' ports by slot with what they need.
pub struct StepParts<'a> {
    pub parts: &'a mut [Partition],
    pub step: &'a PartitionStep,
    pub map: &'a AddressMapping,
    pub ports: &'a mut [SmPort],
    pub at: PortStep<'a>,
}

/// How [`MemorySystem::new_with`] makes the partitions: `(count, make)` to `make(0), …`.
pub type MakeParts<'a> = dyn Fn(usize, &(dyn Fn(usize) -> Partition + Sync)) -> Vec<Partition> + 'a;

/// The memory system below the SMs.
#[derive(Debug, Clone)]
pub struct MemorySystem {
    cfg: MemoryConfig,
    map: AddressMapping,
    num_sms: usize,
    header_bytes: u32,
    /// Sub-partitions (L2 slices) per partition.
    spp: usize,
    req_net: Crossbar,
    resp_net: Crossbar,
    /// The SMs' ends of the crossbars (request queues: sources; response queues:
    /// destinations), by slot: slot `i` holds port `order[i]` of the last
    /// [`MemorySystem::set_port_order`] (the GPU's simulated SM `i`), so that the SMs' step
    /// can take contiguous shares of them ([`MemorySystem::step_parts`]).
    ports: Vec<SmPort>,
    /// The slot of each port (the crossbars number the SMs by port).
    slot_of: Vec<u32>,
    /// Slots whose request queue took a request or whose response queue received one since
    /// [`MemorySystem::watched_sms`] last listed them, and those whose queues held entries
    /// then: every SM whose room may have changed or that may have a response is a member.
    sm_watch: PortSet,
    /// Whether the watch also covers slots whose request queue changed (their SM's room,
    /// which an SM stepping at its port reads there itself: [`MemorySystem::set_watch_room`]).
    watch_room: bool,
    parts: Vec<Partition>,
    /// Partitions with `active` set (a request arrived and they have not been idle since).
    busy_parts: PortSet,
    /// Partitions a request arrived at since the front half last found their request queues
    /// empty (a superset of those with requests waiting: [`MemorySystem::front_cycle`]).
    req_waiting: PortSet,
    /// The partitions' share of the current core cycle ([`MemorySystem::tick_begin`]).
    step: PartitionStep,
    clocks: Clocks,
    /// `core_cycles` and the DRAM clock's cycle when the statistics were last reset.
    stats_epoch: u64,
    dram_epoch: u64,
    /// Per slot: responses the back half delivered ahead of the SMs' steps of a quantum
    /// ([`MemorySystem::back_cycle`]), which join the SMs' response queues before those
    /// steps ([`MemorySystem::merge_ahead`]).
    ahead: Vec<VecDeque<DstEntry<L2Response>>>,
}

/// The partitions' side of the request crossbar: slice `i` is slice `i % spp` of partition
/// `i / spp`; a partition that receives a request becomes active.
struct ReqIn<'a> {
    parts: &'a mut [Partition],
    busy: &'a mut PortSet,
    waiting: &'a mut PortSet,
    spp: usize,
}

impl Ports<DstEntry<InReq>> for ReqIn<'_> {
    #[inline]
    fn queue(&mut self, i: usize) -> &mut VecDeque<DstEntry<InReq>> {
        &mut self.parts[i / self.spp].req_in[i % self.spp]
    }

    #[inline]
    fn arrived(&mut self, i: usize) {
        let p = i / self.spp;
        self.parts[p].active = true;
        self.busy.insert(p);
        self.waiting.insert(p);
    }
}

/// The SMs' side of the request crossbar (port `i`: the request queue of its slot).
struct ReqOut<'a> {
    ports: &'a mut [SmPort],
    slot_of: &'a [u32],
}

impl Ports<SrcEntry<InReq>> for ReqOut<'_> {
    #[inline]
    fn queue(&mut self, i: usize) -> &mut VecDeque<SrcEntry<InReq>> {
        &mut self.ports[self.slot_of[i] as usize].req
    }
}

/// The SMs' side of the response crossbar: an SM that receives a response is watched.
struct RespIn<'a> {
    ports: &'a mut [SmPort],
    slot_of: &'a [u32],
    watch: &'a mut PortSet,
}

impl Ports<DstEntry<L2Response>> for RespIn<'_> {
    #[inline]
    fn queue(&mut self, i: usize) -> &mut VecDeque<DstEntry<L2Response>> {
        &mut self.ports[self.slot_of[i] as usize].resp
    }

    #[inline]
    fn arrived(&mut self, i: usize) {
        self.watch.insert(self.slot_of[i] as usize);
    }
}

/// What the partitions do in the core cycle of clocks `k` (`resp_cap`: room of a slice's
/// queue into the response crossbar).
fn partition_step(k: &CycleClocks, resp_cap: usize) -> PartitionStep {
    PartitionStep {
        l2_first: k.l2_first,
        l2_last: k.l2_last,
        dram_first: k.dram_first,
        dram_last: k.dram_last,
        icnt_now: k.icnt_last,
        resp_cap,
    }
}

/// `f` for each partition of `busy`, in order.
#[inline(always)]
fn for_busy(parts: &mut [Partition], busy: &PortSet, mut f: impl FnMut(&mut Partition)) {
    for w in 0..busy.words() {
        let mut bits = busy.word_in(w, 0, usize::MAX);
        while bits != 0 {
            let p = w * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            f(&mut parts[p]);
        }
    }
}

/// The end of a core cycle ([`MemorySystem::tick_end`]).
fn end_cycle(parts: &mut [Partition], busy_parts: &mut PortSet, resp_net: &mut Crossbar, spp: usize) {
    busy_parts.retain(|p| {
        let part = &mut parts[p];
        if part.resp_pushed {
            part.resp_pushed = false;
            for (j, q) in part.resp_out.iter().enumerate() {
                resp_net.has_packets(p * spp + j, !q.is_empty());
            }
        }
        part.active
    });
}

/// The partitions' side of the response crossbar.
struct RespOut<'a> {
    parts: &'a mut [Partition],
    spp: usize,
}

impl Ports<SrcEntry<L2Response>> for RespOut<'_> {
    #[inline]
    fn queue(&mut self, i: usize) -> &mut VecDeque<SrcEntry<L2Response>> {
        &mut self.parts[i / self.spp].resp_out[i % self.spp]
    }
}

impl MemorySystem {
    /// Panics if `cfg` fails [`MemoryConfig::validate`].
    pub fn new(cfg: &MemoryConfig, num_sms: usize) -> Self {
        Self::new_with(cfg, num_sms, &|n, make| (0..n).map(make).collect())
    }

    /// [`MemorySystem::new`] with the partitions made by `make_parts`: `make_parts(n, make)` returns
    /// `make(0), …, make(n - 1)`, in order (on several threads, say: a partition's caches and
    /// queues are most of the memory system's first-touched memory, ~2 ms on the RTX A6000).
    pub fn new_with(cfg: &MemoryConfig, num_sms: usize, make_parts: &MakeParts<'_>) -> Self {
        if let Err(e) = cfg.validate() {
            panic!("{e}");
        }
        let slices = cfg.l2_slices();
        let ic = &cfg.icnt;
        let map = AddressMapping::new(cfg);
        let spp = (cfg.l2.sub_partitions_per_partition as usize).max(1);
        let nparts = cfg.l2.partitions as usize;
        let req_net = Crossbar::new(
            num_sms,
            slices,
            ic.latency,
            ic.flit_bytes,
            ic.flits_per_cycle,
            ic.input_queue_entries as usize,
            cfg.l2.queue_icnt_to_l2 as usize,
        );
        let resp_net = Crossbar::new(
            slices,
            num_sms,
            ic.latency,
            ic.flit_bytes,
            ic.flits_per_cycle,
            ic.output_queue_entries as usize,
            ic.dest_queue_entries as usize,
        );
        let (src_cap, queue) = (resp_net.src_cap, cfg.l2.queue_icnt_to_l2.max(1) as usize);
        let parts = make_parts(nparts, &|p| Partition::new(cfg, p, src_cap, queue));
        assert_eq!(parts.len(), nparts, "make_parts made every partition");
        Self {
            map,
            num_sms,
            header_bytes: ic.header_bytes,
            spp,
            ports: (0..num_sms)
                .map(|p| SmPort {
                    port: p as u16,
                    req: VecDeque::with_capacity(req_net.src_cap),
                    resp: VecDeque::with_capacity(ic.dest_queue_entries.max(1) as usize),
                    staged: VecDeque::new(),
                })
                .collect(),
            slot_of: (0..num_sms as u32).collect(),
            sm_watch: PortSet::new(num_sms),
            watch_room: true,
            req_net,
            resp_net,
            parts,
            busy_parts: PortSet::new(nparts),
            req_waiting: PortSet::new(nparts),
            step: PartitionStep::default(),
            clocks: Clocks {
                core_khz: Clock::new(cfg.clocks.core_mhz).khz,
                core_cycles: 0,
                icnt: Clock::new(cfg.clocks.icnt_mhz),
                l2: Clock::new(cfg.clocks.l2_mhz),
                dram: Clock::new(cfg.dram.cmd_clock_mhz()),
            },
            stats_epoch: 0,
            dram_epoch: 0,
            ahead: (0..num_sms).map(|_| VecDeque::new()).collect(),
            cfg: cfg.clone(),
        }
    }

    pub fn config(&self) -> &MemoryConfig {
        &self.cfg
    }

    pub fn mapping(&self) -> &AddressMapping {
        &self.map
    }

    pub fn num_sms(&self) -> usize {
        self.num_sms
    }

    /// Peak DRAM bandwidth in bytes per core cycle.
    pub fn theoretical_bandwidth_bytes_per_core_cycle(&self) -> f64 {
        self.cfg.theoretical_bandwidth_bytes_per_core_cycle()
    }

    /// Injects a request from SM `sm` (its port); false = the SM's interconnect input queue
    /// is full.
    pub fn push(&mut self, _now: u64, sm: usize, req: L2Request) -> bool {
        let slot = self.slot_of[sm] as usize;
        let at = PortStep {
            map: &self.map,
            header_bytes: self.header_bytes,
            src_cap: self.req_net.src_cap,
            icnt_now: self.clocks.icnt.cycle,
            stage_at: None,
        };
        if !self.ports[slot].push(&at, req) {
            return false;
        }
        self.pushed(slot);
        true
    }

    /// Slot `slot`'s SM pushed requests through its [`SmPort`] (a step of
    /// [`MemorySystem::step_parts`]): the request crossbar visits it and it is watched.
    #[inline]
    pub fn pushed(&mut self, slot: usize) {
        self.req_net.has_packets(self.ports[slot].port as usize, true);
        if self.watch_room {
            self.sm_watch.insert(slot);
        }
    }

    /// Whether [`MemorySystem::watched_sms`] lists the slots whose room may have changed
    /// (`true`, the default) or only those that may have a response: SMs that step at their
    /// ports ([`MemorySystem::step_parts`]) read their room there. Every slot is watched once
    /// after a change.
    pub fn set_watch_room(&mut self, yes: bool) {
        if self.watch_room != yes {
            self.watch_room = yes;
            for s in 0..self.ports.len() {
                self.sm_watch.insert(s);
            }
        }
    }

    /// Requests SM `sm` (a port) can inject before its interconnect input queue is full.
    pub fn port_room(&self, sm: usize) -> usize {
        self.ports[self.slot_of[sm] as usize].room(self.req_net.src_cap)
    }

    /// Whether a response for SM `sm` (a port) is waiting ([`MemorySystem::pop_response`]).
    pub fn has_response(&self, sm: usize) -> bool {
        self.ports[self.slot_of[sm] as usize].has_response(self.clocks.icnt.cycle)
    }

    /// Next response delivered to SM `sm` (a port).
    pub fn pop_response(&mut self, sm: usize) -> Option<L2Response> {
        let now = self.clocks.icnt.cycle;
        self.ports[self.slot_of[sm] as usize].pop_response_at(now)
    }

    /// Puts port `order[i]` in slot `i` ([`MemorySystem::step_parts`] hands the SMs' ports
    /// out by slot); the ports not named follow in increasing order. Queues move with their
    /// ports; every slot is watched once after a change. Ports out of range or named twice
    /// are ignored.
    pub fn set_port_order(&mut self, order: &[usize]) {
        debug_assert!(self.ahead.iter().all(|q| q.is_empty()), "responses ahead");
        let n = self.ports.len();
        let mut new: Vec<usize> = Vec::with_capacity(n);
        let mut taken = vec![false; n];
        for p in order.iter().copied().chain(0..n) {
            if p < n && !taken[p] {
                taken[p] = true;
                new.push(p);
            }
        }
        if new
            .iter()
            .enumerate()
            .all(|(i, &p)| self.ports[i].port as usize == p)
        {
            return;
        }
        let mut old: Vec<Option<SmPort>> = std::mem::take(&mut self.ports).into_iter().map(Some).collect();
        for (slot, &p) in new.iter().enumerate() {
            let Some(port) = old[self.slot_of[p] as usize].take() else {
                continue;
            };
            self.ports.push(port);
            self.slot_of[p] = slot as u32;
        }
        for s in 0..n {
            self.sm_watch.insert(s);
        }
    }

    /// Whether a response for the SM in slot `slot` is waiting.
    pub fn slot_has_response(&self, slot: usize) -> bool {
        self.ports[slot].has_response(self.clocks.icnt.cycle)
    }

    /// The port (physical SM) in slot `slot`.
    pub fn port_of_slot(&self, slot: usize) -> usize {
        self.ports[slot].port as usize
    }

    /// Into `out` (cleared first), in increasing order, the slots whose SM's
    /// [`MemorySystem::port_room`] may have changed (unless [`MemorySystem::set_watch_room`]
    /// turned that off) or that may have a response ([`MemorySystem::has_response`]) since
    /// the last call: the others have neither (their queues stayed empty). Slots whose
    /// queues are empty leave the watch.
    pub fn watched_sms(&mut self, out: &mut Vec<usize>) {
        out.clear();
        let room = self.watch_room;
        let (ports, ahead) = (&self.ports, &self.ahead);
        self.sm_watch.retain(|s| {
            out.push(s);
            let p = &ports[s];
            !((!room || p.req.is_empty()) && p.resp.is_empty() && ahead[s].is_empty())
        });
    }

    /// True when no request or response is anywhere in the system.
    pub fn is_idle(&self) -> bool {
        self.ports
            .iter()
            .all(|p| p.req.is_empty() && p.resp.is_empty() && p.staged.is_empty())
            && self.ahead.iter().all(|q| q.is_empty())
            && self
                .parts
                .iter()
                .all(|p| p.is_idle() && p.resp_out.iter().all(|q| q.is_empty()))
    }

    /// Advances one core cycle: the interconnect, L2 and DRAM clock domains each run the
    /// number of their own cycles that fit (fractional accumulation, integer kHz). The same
    /// as [`MemorySystem::tick_begin`], [`Partition::tick`] for every partition and
    /// [`MemorySystem::tick_end`].
    pub fn tick(&mut self, now_core_cycle: u64) {
        self.tick_begin(now_core_cycle);
        self.tick_partitions();
        self.tick_end();
    }

    /// [`Partition::tick`] for the busy partitions, in order, on this thread.
    pub fn tick_partitions(&mut self) {
        let (step, map) = (&self.step, &self.map);
        for_busy(&mut self.parts, &self.busy_parts, |p| p.tick(step, map));
    }

    /// The serial first part of a core cycle: the clocks advance and the interconnect runs
    /// its cycles. Then every partition ticks ([`MemorySystem::partitions`], in any order or
    /// in parallel), then [`MemorySystem::tick_end`]. Within a core cycle, the interconnect
    /// cycles come first, then the L2 cycles, then the DRAM cycles (the order of the
    /// clock domains); a partition's L2 and DRAM cycles only touch the partition and its
    /// slices' crossbar queues, which the interconnect does not use meanwhile.
    pub fn tick_begin(&mut self, now_core_cycle: u64) {
        let _ = now_core_cycle;
        let k = self.clocks.advance();
        let mut c = k.icnt_first;
        while c <= k.icnt_last {
            self.req_icnt_cycle(c);
            self.resp_icnt_cycle(c);
            c += 1;
        }
        self.step = partition_step(&k, self.resp_net.src_cap);
    }

    /// The interconnect's cycle now (responses due by then are delivered).
    pub fn icnt_cycle_now(&self) -> u64 {
        self.clocks.icnt.cycle
    }

    /// The partitions, the step they take this core cycle and the address mapping.
    pub fn partitions(&mut self) -> (&mut [Partition], &PartitionStep, &AddressMapping) {
        (&mut self.parts, &self.step, &self.map)
    }

    /// What the parallel step between [`MemorySystem::tick_begin`] and
    /// [`MemorySystem::tick_end`] may change: the partitions (their share of the core
    /// cycle), and the SMs' ports by slot, from which each SM takes its responses and into
    /// which it pushes its requests ([`SmPort`]; then [`MemorySystem::pushed`]). Neither
    /// touches the other, nor what the serial part of a cycle reads meanwhile.
    pub fn step_parts(&mut self) -> StepParts<'_> {
        StepParts {
            parts: &mut self.parts,
            step: &self.step,
            map: &self.map,
            ports: &mut self.ports,
            at: PortStep {
                map: &self.map,
                header_bytes: self.header_bytes,
                src_cap: self.req_net.src_cap,
                icnt_now: self.clocks.icnt.cycle,
                stage_at: None,
            },
        }
    }

    /// Partitions that may have work this cycle ([`Partition::tick`] skips the others).
    pub fn busy_partitions(&self) -> usize {
        (0..self.busy_parts.words())
            .map(|w| self.busy_parts.word_in(w, 0, usize::MAX).count_ones() as usize)
            .sum()
    }

    /// The end of a core cycle, after every partition ticked: the response crossbar learns
    /// which slices have responses, and partitions that went idle leave the busy set. Only
    /// partitions that queued responses this cycle are looked at: a slice's queue that ran
    /// empty was emptied by the crossbar, which noted it, and the mark of a parked source
    /// with packets does not matter (visits skip it, and waking it sets the mark).
    pub fn tick_end(&mut self) {
        end_cycle(
            &mut self.parts,
            &mut self.busy_parts,
            &mut self.resp_net,
            self.spp,
        );
    }

    fn req_icnt_cycle(&mut self, c: u64) {
        self.req_net.cycle(
            c,
            &mut ReqOut {
                ports: &mut self.ports,
                slot_of: &self.slot_of,
            },
            &mut ReqIn {
                parts: &mut self.parts,
                busy: &mut self.busy_parts,
                waiting: &mut self.req_waiting,
                spp: self.spp,
            },
        );
    }

    fn resp_icnt_cycle(&mut self, c: u64) {
        self.resp_net.cycle(
            c,
            &mut RespOut {
                parts: &mut self.parts,
                spp: self.spp,
            },
            &mut RespIn {
                ports: &mut self.ports,
                slot_of: &self.slot_of,
                watch: &mut self.sm_watch,
            },
        );
    }

    /// Zero every counter and keep the state (cache contents, open rows, queues): the
    /// statistics of the next kernel start from here.
    pub fn reset_stats(&mut self) {
        for p in &mut self.parts {
            for s in &mut p.slices {
                s.stats = Default::default();
            }
            for c in &mut p.channels {
                c.stats = Default::default();
            }
        }
        self.req_net.reset_stats();
        self.resp_net.reset_stats();
        self.stats_epoch = self.clocks.core_cycles;
        self.dram_epoch = self.clocks.dram.cycle;
    }

    /// Snapshot of all counters (since the last `reset_stats`).
    pub fn stats(&self) -> MemStats {
        let mut m = MemStats {
            core_cycles: self.clocks.core_cycles - self.stats_epoch,
            icnt_cycles: self.clocks.icnt.cycle,
            l2_cycles: self.clocks.l2.cycle,
            dram_cycles: self.clocks.dram.cycle,
            icnt_requests: self.req_net.stats(),
            icnt_responses: self.resp_net.stats(),
            ..MemStats::default()
        };
        for s in self.parts.iter().flat_map(|p| p.slices.iter()) {
            m.l2 += &s.stats;
            m.l2_slice_accesses.push(s.stats.accesses);
        }
        // Every channel counts every DRAM cycle (busy or not); a channel's own `cycles` is
        // not counted (it stays 0), the system's DRAM clock is.
        let dram_cycles = self.clocks.dram.cycle - self.dram_epoch;
        for c in self.parts.iter().flat_map(|p| p.channels.iter()) {
            m.dram += &c.stats;
            m.dram.cycles += dram_cycles;
            m.dram_channel_accesses.push(c.stats.reads + c.stats.writes);
        }
        if m.dram.cycles > 0 {
            m.dram_bandwidth_utilization = m.dram.busy_cycles as f64 / m.dram.cycles as f64;
        }
        if m.core_cycles > 0 {
            m.dram_bytes_per_core_cycle = m.dram.bytes as f64 / m.core_cycles as f64;
        }
        let reads = m.l2.read_hits + m.l2.read_misses + m.l2.hit_reserved;
        if reads > 0 {
            m.l2_read_hit_rate = m.l2.read_hits as f64 / reads as f64;
        }
        if m.dram.reads > 0 {
            m.dram_avg_read_latency = m.dram.read_latency_sum as f64 / m.dram.reads as f64;
        }
        m
    }
}
