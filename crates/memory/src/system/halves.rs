//! A core cycle split at the L2 slices' ROP pipelines into a back half and a front half, so
//! that the back half can run a quantum's core cycles before the SMs' steps and the front
//! half after them (docs/memory.md "Back and front halves"; the GPU's `quantum.rs`).

use std::collections::VecDeque;

use super::{
    end_cycle, for_busy, partition_step, BackMark, Clocks, CycleClocks, MemorySystem, PortStep, RespOut,
    StepParts,
};
use crate::hash::AddressMapping;
use crate::icnt::{Crossbar, DstEntry, PortSet, Ports};
use crate::partition::Partition;
use crate::types::Due;
use crate::types::L2Response;

/// The SMs' side of the response crossbar when the back half runs ahead of the SMs' steps
/// ([`BackHalf`]): per slot, the responses delivered ahead.
struct RespAhead<'a> {
    queues: &'a mut [VecDeque<DstEntry<L2Response>>],
    slot_of: &'a [u32],
    watch: &'a mut PortSet,
}

impl Ports<DstEntry<L2Response>> for RespAhead<'_> {
    #[inline]
    fn queue(&mut self, i: usize) -> &mut VecDeque<DstEntry<L2Response>> {
        &mut self.queues[self.slot_of[i] as usize]
    }

    #[inline]
    fn arrived(&mut self, i: usize) {
        self.watch.insert(self.slot_of[i] as usize);
    }
}

/// The memory system's back half (clocks, response crossbar, the partitions' L2 lookups and
/// DRAM), borrowed apart from the SMs' ports, so that it can run a quantum's core cycles
/// while the SMs step through the previous quantum ([`MemorySystem::split_ahead`]). The
/// responses it delivers wait per slot until [`MemorySystem::merge_ahead`].
pub struct BackHalf<'a> {
    clocks: &'a mut Clocks,
    parts: &'a mut [Partition],
    busy_parts: &'a mut PortSet,
    resp_net: &'a mut Crossbar,
    ahead: &'a mut [VecDeque<DstEntry<L2Response>>],
    slot_of: &'a [u32],
    sm_watch: &'a mut PortSet,
    map: &'a AddressMapping,
    spp: usize,
}

impl BackHalf<'_> {
    /// The back half of the next core cycle of a quantum: the clocks, the response
    /// crossbar's cycles, every busy partition's L2 and DRAM cycles but for requests
    /// entering the ROP pipelines ([`Partition::tick_back`]), the end of the cycle
    /// ([`MemorySystem::tick_end`]). Returns the cycle's clocks for
    /// [`MemorySystem::front_cycle`], with what undoes the cycles after it
    /// ([`MemorySystem::rewind_back`]) and, when `note_idle` (the kernel may end in the
    /// quantum), whether the partitions are idle after it (`back_idle`:
    /// [`MemorySystem::drained_ahead`]).
    pub fn cycle(&mut self, note_idle: bool) -> CycleClocks {
        let mut k = self.clocks.advance();
        let mut c = k.icnt_first;
        while c <= k.icnt_last {
            self.resp_net.cycle(
                c,
                &mut RespOut {
                    parts: self.parts,
                    spp: self.spp,
                },
                &mut RespAhead {
                    queues: self.ahead,
                    slot_of: self.slot_of,
                    watch: self.sm_watch,
                },
            );
            c += 1;
        }
        let step = partition_step(&k, self.resp_net.src_cap);
        let map = self.map;
        for_busy(self.parts, self.busy_parts, |p| p.tick_back(&step, map));
        end_cycle(self.parts, self.busy_parts, self.resp_net, self.spp);
        if note_idle {
            k.back_idle = self
                .parts
                .iter()
                .all(|p| p.is_idle() && p.resp_out.iter().all(|q| q.is_empty()));
        }
        k.mark = Some(BackMark {
            clocks: *self.clocks,
            resp_net: self.resp_net.clock(),
        });
        k
    }
}

impl MemorySystem {
    /// The most core cycles a quantum may run the back half ahead of the SMs and the
    /// front half (docs/memory.md "Back and front halves"): no request that enters an L2
    /// slice's ROP pipeline during them can
    /// reach its tag lookup before they end (the pipeline's latency), and no SM's response
    /// queue can fill during them, so that the response crossbar's room checks pass as
    /// they would with the SMs' pops in between (a queue takes at most one packet per
    /// interconnect cycle).
    pub fn max_quantum(&self) -> u64 {
        self.max_quantum_after(0)
    }

    /// [`MemorySystem::max_quantum`] for a quantum that follows one of `ahead` core cycles
    /// whose back half has run (its responses count in the response queues): the two
    /// together must fit in the ROP pipeline's latency.
    pub fn max_quantum_after(&self, ahead: u64) -> u64 {
        let per_core = |khz: u64| khz.div_ceil(self.clocks.core_khz).max(1);
        let l2 = self.cfg.l2.latency as u64 / per_core(self.clocks.l2.khz);
        let cap = self.resp_net.dst_cap() as u64;
        let fullest = self
            .ports
            .iter()
            .zip(&self.ahead)
            .map(|(p, a)| (p.resp.len() + a.len()) as u64)
            .max()
            .unwrap_or(0);
        let resp = cap.saturating_sub(fullest) / per_core(self.clocks.icnt.khz);
        l2.saturating_sub(ahead).min(resp)
    }

    /// Starts a quantum: the back half of the memory system ([`MemorySystem::back_cycle`])
    /// runs its core cycles before the SMs' and the front half's
    /// ([`MemorySystem::front_cycle`]).
    pub fn begin_quantum(&mut self) {
        for p in &mut self.parts {
            p.record_rop_pops(true);
        }
    }

    /// Ends a quantum: every core cycle ran both halves. Each slice is visited at its next
    /// L2 cycle (its sleep was worked out by the back half alone).
    pub fn end_quantum(&mut self) {
        debug_assert!(self.ahead.iter().all(|q| q.is_empty()), "responses ahead");
        debug_assert!(self.ports.iter().all(|p| p.staged.is_empty()));
        for p in &mut self.parts {
            p.record_rop_pops(false);
            p.wake_all();
        }
    }

    /// The back half of the next core cycle of a quantum ([`BackHalf::cycle`]); the
    /// responses it delivers wait for [`MemorySystem::merge_ahead`].
    pub fn back_cycle(&mut self, note_idle: bool) -> CycleClocks {
        self.split_ahead().1.cycle(note_idle)
    }

    /// The SMs' ports by slot (as [`MemorySystem::step_parts`] hands them out, without the
    /// partitions) and the back half, borrowed apart: the back half may run core cycles
    /// ahead while the SMs step.
    pub fn split_ahead(&mut self) -> (StepParts<'_>, BackHalf<'_>) {
        let MemorySystem {
            ports,
            parts,
            busy_parts,
            resp_net,
            req_net,
            ahead,
            slot_of,
            sm_watch,
            map,
            clocks,
            step,
            spp,
            header_bytes,
            ..
        } = self;
        let sp = StepParts {
            parts: &mut [],
            step,
            map,
            ports,
            at: PortStep {
                map,
                header_bytes: *header_bytes,
                src_cap: req_net.src_cap,
                icnt_now: clocks.icnt.cycle,
                stage_at: None,
            },
        };
        let back = BackHalf {
            clocks,
            parts,
            busy_parts,
            resp_net,
            ahead,
            slot_of,
            sm_watch,
            map,
            spp: *spp,
        };
        (sp, back)
    }

    /// The responses the back half delivered ahead join the SMs' response queues (every
    /// slot's: responses to a kernel stopped by a limit may still arrive at ports the current
    /// kernel does not use).
    pub fn merge_ahead(&mut self) {
        for (p, q) in self.ports.iter_mut().zip(self.ahead.iter_mut()) {
            if !q.is_empty() {
                p.resp.extend(q.drain(..));
            }
        }
    }

    /// The front half of core cycle `cycle` of a quantum, whose clocks `k` the back half
    /// returned, after the SMs' steps of that cycle: the requests the SMs of the first
    /// `slots` slots staged by then join their input queues, the request crossbar runs its cycles, and the requests that
    /// crossed enter the ROP pipelines ([`Partition::admit`]).
    pub fn front_cycle(&mut self, cycle: u64, k: &CycleClocks, slots: usize) {
        for slot in 0..slots.min(self.ports.len()) {
            let p = &mut self.ports[slot];
            if p.staged.front().is_none_or(|s| s.at > cycle) {
                continue;
            }
            while let Some(&Due { at: c, item: e }) = p.staged.front() {
                if c > cycle {
                    break;
                }
                p.staged.pop_front();
                p.req.push_back(e);
            }
            self.pushed(slot);
        }
        let mut c = k.icnt_first;
        while c <= k.icnt_last {
            self.req_icnt_cycle(c);
            c += 1;
        }
        let step = partition_step(k, self.resp_net.src_cap);
        // Only partitions a request arrived at can have one waiting (in index order, as
        // over every busy partition: the others admit nothing).
        debug_assert!(
            self.parts
                .iter()
                .enumerate()
                .all(|(i, p)| !p.has_requests_in() || self.req_waiting.contains(i)),
            "a partition with requests waiting is not in the set"
        );
        let parts = &mut self.parts;
        self.req_waiting.retain(|i| {
            let p = &mut parts[i];
            if p.has_requests_in() {
                p.admit(&step);
            }
            p.has_requests_in()
        });
    }

    /// After a quantum in which the kernel ended, with the front half at the core cycle of
    /// clocks `before` (noted by [`MemorySystem::back_cycle`]) and the back half
    /// further: whether nothing is left anywhere, as [`MemorySystem::is_idle`] would answer
    /// had the back half stopped there too. Then the back half's later cycles changed only the
    /// clocks and the response crossbar's cycle and round robin, which
    /// [`MemorySystem::rewind_back`] undoes.
    pub fn drained_ahead(&self, before: &CycleClocks) -> bool {
        // (With the partitions idle after that cycle in the back half's run, which saw none
        // of the quanta's requests, a request in a ROP pipeline entered it in a front half.)
        before.back_idle
            && self
                .parts
                .iter()
                .all(|p| p.req_in.iter().all(|q| q.is_empty()) && p.slices.iter().all(|s| s.rop.is_empty()))
            && self
                .ports
                .iter()
                .zip(&self.ahead)
                .all(|(p, a)| p.req.is_empty() && p.staged.is_empty() && p.resp.is_empty() && a.is_empty())
    }

    /// Undoes the back half's cycles after the one whose clocks are `to` (they found the
    /// memory system idle: [`MemorySystem::drained_ahead`]).
    pub fn rewind_back(&mut self, to: &CycleClocks) {
        if let Some(m) = to.mark {
            self.clocks = m.clocks;
            self.resp_net.set_clock(m.resp_net);
        }
    }
}
