//! Everything beyond the SMs: interconnect, L2 slices, DRAM channels, clock domains.

use crate::config::MemoryConfig;
use crate::dram::{DramChannel, DramStats};
use crate::hash::AddressMapping;
use crate::icnt::{Crossbar, IcntStats};
use crate::l2::{InReq, L2Slice, L2Stats, OutResp};
use crate::types::{L2ReqKind, L2Request, L2Response};

/// Fractional clock accumulator in kHz (integer arithmetic → deterministic).
#[derive(Debug, Clone)]
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
    /// L2 hit rate over reads (hits / (hits + misses)).
    pub l2_read_hit_rate: f64,
    /// Average DRAM read latency (scheduler-queue arrival → data), DRAM cycles.
    pub dram_avg_read_latency: f64,
}

/// The memory system below the SMs.
#[derive(Debug, Clone)]
pub struct MemorySystem {
    cfg: MemoryConfig,
    map: AddressMapping,
    num_sms: usize,
    header_bytes: u32,
    req_net: Crossbar<InReq>,
    resp_net: Crossbar<L2Response>,
    slices: Vec<L2Slice>,
    channels: Vec<DramChannel>,
    /// Slices feeding each channel and the round-robin pointer.
    chan_slices: Vec<Vec<usize>>,
    chan_rr: Vec<usize>,
    core_khz: u64,
    core_cycles: u64,
    /// `core_cycles` when the statistics were last reset.
    stats_epoch: u64,
    icnt: Clock,
    l2: Clock,
    dram: Clock,
}

impl MemorySystem {
    /// Panics if `cfg` fails [`MemoryConfig::validate`].
    pub fn new(cfg: &MemoryConfig, num_sms: usize) -> Self {
        if let Err(e) = cfg.validate() {
            panic!("{e}");
        }
        let slices = cfg.l2_slices();
        let nch = cfg.dram_channels();
        let ic = &cfg.icnt;
        let map = AddressMapping::new(cfg);
        // Channel of each slice's traffic: slices of partition p feed its channels.
        let mut chan_slices = vec![Vec::new(); nch];
        let cpp = cfg.dram.channels_per_partition.max(1) as usize;
        let spp = cfg.l2.sub_partitions_per_partition as usize;
        for s in 0..slices {
            for c in 0..cpp {
                chan_slices[(s / spp) * cpp + c].push(s);
            }
        }
        Self {
            map,
            num_sms,
            header_bytes: ic.header_bytes,
            req_net: Crossbar::new(
                num_sms,
                slices,
                ic.latency,
                ic.flit_bytes,
                ic.flits_per_cycle,
                ic.input_queue_entries as usize,
                cfg.l2.queue_icnt_to_l2 as usize,
            ),
            resp_net: Crossbar::new(
                slices,
                num_sms,
                ic.latency,
                ic.flit_bytes,
                ic.flits_per_cycle,
                ic.output_queue_entries as usize,
                ic.dest_queue_entries as usize,
            ),
            slices: (0..slices).map(|i| L2Slice::new(cfg, i)).collect(),
            channels: (0..nch).map(|_| DramChannel::new(&cfg.dram)).collect(),
            chan_rr: vec![0; nch],
            chan_slices,
            core_khz: Clock::new(cfg.clocks.core_mhz).khz,
            core_cycles: 0,
            stats_epoch: 0,
            icnt: Clock::new(cfg.clocks.icnt_mhz),
            l2: Clock::new(cfg.clocks.l2_mhz),
            dram: Clock::new(cfg.dram.cmd_clock_mhz()),
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

    /// Injects a request from SM `sm`; false = the SM's interconnect input queue is full.
    pub fn push(&mut self, _now: u64, sm: usize, req: L2Request) -> bool {
        let dst = self.map.slice(req.addr);
        let bytes = self.header_bytes
            + match req.kind {
                L2ReqKind::Read => 0,
                _ => req.bytes,
            };
        self.req_net.push(sm, dst, bytes, InReq { sm: sm as u16, req })
    }

    /// Requests SM `sm` can inject before its interconnect input queue is full.
    pub fn port_room(&self, sm: usize) -> usize {
        self.req_net.room(sm)
    }

    /// Whether a response for SM `sm` is waiting ([`MemorySystem::pop_response`]).
    pub fn has_response(&self, sm: usize) -> bool {
        self.resp_net.has_ready(sm, self.icnt.cycle)
    }

    /// Next response delivered to SM `sm`.
    pub fn pop_response(&mut self, sm: usize) -> Option<L2Response> {
        self.resp_net.pop(sm, self.icnt.cycle)
    }

    /// True when no request or response is anywhere in the system.
    pub fn is_idle(&self) -> bool {
        self.req_net.is_empty()
            && self.resp_net.is_empty()
            && self.slices.iter().all(|s| s.is_idle())
            && self.channels.iter().all(|c| c.is_idle())
    }

    /// Advances one core cycle: the interconnect, L2 and DRAM clock domains each run the
    /// number of their own cycles that fit (fractional accumulation, integer kHz).
    pub fn tick(&mut self, now_core_cycle: u64) {
        let _ = now_core_cycle;
        self.core_cycles += 1;
        self.icnt.acc += self.icnt.khz;
        while self.icnt.acc >= self.core_khz {
            self.icnt.acc -= self.core_khz;
            self.icnt_cycle();
        }
        self.l2.acc += self.l2.khz;
        while self.l2.acc >= self.core_khz {
            self.l2.acc -= self.core_khz;
            self.l2_cycle();
        }
        self.dram.acc += self.dram.khz;
        while self.dram.acc >= self.core_khz {
            self.dram.acc -= self.core_khz;
            self.dram_cycle();
        }
    }

    fn icnt_cycle(&mut self) {
        self.icnt.cycle += 1;
        let c = self.icnt.cycle;
        self.req_net.cycle(c);
        self.resp_net.cycle(c);
    }

    fn l2_cycle(&mut self) {
        self.l2.cycle += 1;
        let now = self.l2.cycle;
        let icnt_now = self.icnt.cycle;
        for (i, s) in self.slices.iter_mut().enumerate() {
            // An idle slice with nothing arriving does nothing this cycle.
            if s.is_idle() && self.req_net.dst_idle(i) {
                continue;
            }
            // 1. One DRAM fill.
            s.fill(now);
            // 2. One ready response into the response network.
            if let Some(std::cmp::Reverse(top)) = s.resp.peek() {
                let OutResp {
                    ready,
                    sm,
                    bytes,
                    resp,
                    ..
                } = *top;
                if ready <= now && self.resp_net.can_push(i) {
                    self.resp_net.push(i, sm as usize, bytes, resp);
                    s.resp.pop();
                }
            }
            // 3. One tag lookup, then one new request into the ROP pipeline.
            s.lookup(now, &self.map);
            if s.rop_has_room() {
                if let Some(r) = self.req_net.pop(i, icnt_now) {
                    s.rop_push(now, r);
                }
            }
        }
    }

    fn dram_cycle(&mut self) {
        self.dram.cycle += 1;
        let now = self.dram.cycle;
        let l2_now = self.l2.cycle;
        for (c, ch) in self.channels.iter_mut().enumerate() {
            // An idle channel whose slices have nothing for it only counts the cycle.
            if ch.is_idle()
                && self.chan_slices[c]
                    .iter()
                    .all(|&si| self.slices[si].to_dram.is_empty())
            {
                ch.stats.cycles += 1;
                continue;
            }
            // Completed reads back to their slices. A full return queue stalls the channel's
            // reads (the back-pressure reaches the scheduler, as Accel-Sim's returnq does).
            let mut reads_blocked = false;
            if let Some(&(done, d)) = ch.inflight.front() {
                if done <= now {
                    let s = &mut self.slices[d.slice as usize];
                    if s.from_dram.len() < s.from_dram_cap {
                        s.from_dram.push_back(d);
                        ch.inflight.pop_front();
                    } else {
                        ch.stats.return_stall_cycles += 1;
                        reads_blocked = true;
                    }
                }
            }
            // One request from the channel's slices into the scheduler queue.
            let feeders = &self.chan_slices[c];
            let n = feeders.len();
            for k in 0..n {
                let si = feeders[(self.chan_rr[c] + k) % n];
                let s = &mut self.slices[si];
                if let Some(&(ready, r)) = s.to_dram.front() {
                    if ready > l2_now {
                        continue;
                    }
                    if !ch.has_room() {
                        ch.stats.queue_full_cycles += 1;
                        break;
                    }
                    ch.enqueue(now, r);
                    s.to_dram.pop_front();
                    self.chan_rr[c] = (self.chan_rr[c] + k + 1) % n;
                    break;
                }
            }
            ch.schedule(now, reads_blocked);
        }
    }

    /// Zero every counter and keep the state (cache contents, open rows, queues): the
    /// statistics of the next kernel start from here.
    pub fn reset_stats(&mut self) {
        for s in &mut self.slices {
            s.stats = Default::default();
        }
        for c in &mut self.channels {
            c.stats = Default::default();
        }
        self.req_net.stats = Default::default();
        self.resp_net.stats = Default::default();
        self.stats_epoch = self.core_cycles;
    }

    /// Snapshot of all counters (since the last `reset_stats`).
    pub fn stats(&self) -> MemStats {
        let mut m = MemStats {
            core_cycles: self.core_cycles - self.stats_epoch,
            icnt_cycles: self.icnt.cycle,
            l2_cycles: self.l2.cycle,
            dram_cycles: self.dram.cycle,
            icnt_requests: self.req_net.stats.clone(),
            icnt_responses: self.resp_net.stats.clone(),
            ..MemStats::default()
        };
        for s in &self.slices {
            let a = &s.stats;
            let l = &mut m.l2;
            l.accesses += a.accesses;
            l.read_hits += a.read_hits;
            l.read_misses += a.read_misses;
            l.sector_misses += a.sector_misses;
            l.write_hits += a.write_hits;
            l.write_misses += a.write_misses;
            l.atomic_hits += a.atomic_hits;
            l.atomic_misses += a.atomic_misses;
            l.mshr_merges += a.mshr_merges;
            l.hit_reserved += a.hit_reserved;
            l.reservation_fails += a.reservation_fails;
            l.evictions += a.evictions;
            l.dirty_evictions += a.dirty_evictions;
            l.dram_read_sectors += a.dram_read_sectors;
            l.dram_write_sectors += a.dram_write_sectors;
            l.responses += a.responses;
            m.l2_slice_accesses.push(a.accesses);
        }
        for c in &self.channels {
            let a = &c.stats;
            let d = &mut m.dram;
            d.reads += a.reads;
            d.writes += a.writes;
            d.row_hits += a.row_hits;
            d.row_misses += a.row_misses;
            d.row_conflicts += a.row_conflicts;
            d.activates += a.activates;
            d.precharges += a.precharges;
            d.bytes += a.bytes;
            d.busy_cycles += a.busy_cycles;
            d.cycles += a.cycles;
            d.read_latency_sum += a.read_latency_sum;
            d.queue_full_cycles += a.queue_full_cycles;
            d.return_stall_cycles += a.return_stall_cycles;
            m.dram_channel_accesses.push(a.reads + a.writes);
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
