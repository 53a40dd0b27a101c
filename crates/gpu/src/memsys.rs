//! The memory model behind the SMs' memory arbiters: fixed hit latencies (the SM
//! pipeline alone) or the L1/shared + interconnect + L2 + DRAM hierarchy of
//! `sassim-memory` (docs/memory.md, "Wiring into the GPU").
//!
//! Latency convention: the SM model (`sassim-timing`) charges the sub-core stages (queue,
//! address calculation, arbiter) before `DataMemory::access` and the transfer to the
//! register file after the data is ready. The hierarchy's latencies therefore start at
//! the arbiter grant: the L1 hit latency is `mem_pipeline.l1_hit_path` and the shared
//! latency `mem_pipeline.shared_path` (not the preset's `l1d.latency` /
//! `l1d.shmem_latency` array components), so MICRO'25 Table 2 holds with the hierarchy.
//! The L1's one-cycle-per-line (shared: per-wavefront) data return of a perfectly
//! coalesced access is the same data movement as the SM's write-back transfer
//! (512 b/cycle) and is not charged twice; extra lines from divergence and extra
//! wavefronts from bank conflicts are.

use crate::l1_bypass::L1Bypass;
use sassim_config::GpuConfig;
use sassim_memory as mm;
use sassim_timing::config::hit_latencies;
use sassim_timing::exec::MemAccess;
use sassim_timing::inst::{MemKind, MemSpace};
use sassim_timing::mem::{Access, MemReq};
use sassim_timing::{DataMemory, FixedLatencyMemory, HitLatencies, Sm};
use std::collections::BTreeMap;

mod report;
mod sm_memory;
pub use report::*;
use sm_memory::ConstGeom;
pub use sm_memory::SmDataMemory;

pub enum MemModel {
    Fixed(HitLatencies),
    Hierarchy(Box<Hierarchy>),
}

/// The shared part of the hierarchy (interconnect, L2, DRAM) and what the per-SM
/// adapters are built from.
pub struct Hierarchy {
    pub cfg: mm::MemoryConfig,
    pub sys: mm::MemorySystem,
    lat: HitLatencies,
    consts: ConstGeom,
    local_bytes_per_thread: u64,
    threads_per_sm: u64,
    /// Extra cycles of a distributed-shared-memory access (`mem_pipeline.dsm_extra`).
    dsm_extra: u64,
    /// Per simulated SM: the room of its interconnect input queue as the SM counts it
    /// (`tick_beyond_sms`, when the SMs do not tick at their ports).
    room: Vec<usize>,
    /// The SMs (`MemorySystem`'s slots, in simulated-SM order) `tick_beyond_sms` visits
    /// (`MemorySystem::watched_sms`; kept to reuse).
    watched: Vec<usize>,
    /// The partitions' share of the last core cycle has not run yet
    /// ([`MemModel::with_partitions`]).
    parts_due: bool,
    /// This kernel's SMs take their responses from and push their requests into their
    /// interconnect ports in their own step ([`SmPorts`]) instead of the serial part's
    /// inboxes and outboxes.
    at_ports: bool,
    /// The core cycle whose interconnect cycles delivered the responses waiting at the
    /// ports (the last `tick_beyond_sms` or `collect`): their fill cycle.
    delivered_at: u64,
    /// The kernel's SMs (the first slots of the memory system's ports, `collect`).
    slots: usize,
}

/// The SMs' interconnect ports during their step, by simulated SM
/// ([`MemModel::with_partitions`]): each SM's step takes its responses
/// ([`before_tick_at`]) and pushes its requests ([`after_tick_at`]) at its own port, so the
/// serial part of the cycle touches neither the SM's records nor its queues (docs/model.md
/// "Determinism": the ports change only in the SM's own step and in the serial part).
pub struct SmPorts<'a> {
    pub ports: &'a mut [mm::SmPort],
    pub at: mm::PortStep<'a>,
    /// The fill cycle of the responses waiting at the ports.
    pub delivered_at: u64,
}

/// Map a GPU preset onto `sassim-memory`'s configuration (docs/memory.md, mapping table).
pub fn memory_config(g: &GpuConfig) -> mm::MemoryConfig {
    let mp = &g.mem_pipeline;
    let l1 = &g.l1d;
    let l2 = &g.l2;
    let ic = &g.icnt;
    let d = &g.dram;
    // Adaptive carve-out (GPGPU-Sim `-gpgpu_shmem_option`): the smallest option that holds
    // the default per-CTA shared-memory limit. The kernel's real need is not known here.
    let carveout = l1
        .shmem_carveout_options_kb
        .iter()
        .copied()
        .filter(|&o| o >= l1.shmem_per_cta_default_kb)
        .min()
        .unwrap_or(l1.shmem_per_cta_default_kb)
        .min(l1.size_kb / 2);
    let l1_sets = (l1.size_kb * 1024 / l1.line_bytes.max(1) / l1.assoc.max(1)).max(1);
    // One packet of the largest kind: header + a full line of data.
    let max_packet_flits = (ic.header_bytes + l1.line_bytes)
        .div_ceil(ic.flit_bytes.max(1))
        .max(1);
    let mut dram = mm::DramConfig::preset(d.dram_type);
    dram.data_rate_mtps = d.clock_mhz * d.data_rate_multiplier as f64;
    dram.transfers_per_cmd_cycle = d.command_ratio.max(1);
    dram.channels_per_partition = d.channels_per_partition.max(1);
    dram.bus_width_bits = d.bus_width_bytes * 8;
    dram.burst_length = d.burst_length;
    dram.banks = d.banks;
    dram.bank_groups = d.bank_groups;
    dram.row_bytes = d.row_bytes;
    dram.sched_queue_entries = d.sched_queue_entries;
    dram.return_queue_entries = d.return_queue_entries;
    dram.latency = d.latency;
    dram.timing = mm::DramTiming::from(&d.timing);
    mm::MemoryConfig {
        l1d: mm::L1dConfig {
            unified_kb: l1.size_kb,
            line_bytes: l1.line_bytes,
            sector_bytes: l1.sector_bytes,
            sets: l1_sets,
            // From the arbiter grant (see the module comment), not the array latency.
            latency: mp.l1_hit_path,
            mshr_entries: l1.mshr_entries,
            mshr_max_merge: l1.mshr_max_merge,
            miss_queue_entries: l1.miss_queue_entries,
            write_policy: l1.write_policy,
            write_allocate: l1.write_allocate,
            hashing: l1.hashing,
            max_pending_requests: mp.max_outstanding_requests,
            fill_latency: l1.fill_latency,
            miss_latency: l1.miss_latency,
            requests_per_cycle: l1.miss_requests_per_cycle,
        },
        shared: mm::SharedMemConfig {
            carveout_kb: carveout,
            banks: l1.shmem_banks,
            bank_width_bytes: l1.shmem_bank_width_bytes,
            latency: mp.shared_path,
            atomic_latency: l1.shmem_atomic_latency,
            atomic_conflict_cycles: l1.shmem_atomic_conflict_cycles,
        },
        l2: mm::L2Config {
            size_kb: l2.size_kb,
            partitions: l2.partitions,
            sub_partitions_per_partition: l2.sub_partitions_per_partition,
            // sassim-memory needs equal L1/L2 lines (T4's L2 has 64 B lines: sectors of
            // 32 B are what moves, so only the tag granularity differs).
            line_bytes: l1.line_bytes,
            sector_bytes: l1.sector_bytes,
            assoc: if l2.line_bytes == l1.line_bytes {
                l2.assoc
            } else {
                (l2.assoc * l2.line_bytes / l1.line_bytes.max(1)).max(1)
            },
            latency: l2.rop_latency.unwrap_or(l2.latency),
            hashing: l2.hashing,
            set_hashing: l2.hashing,
            write_policy: l2.write_policy,
            write_allocate: l2.write_allocate,
            mshr_entries: l2.mshr_entries,
            mshr_max_merge: l2.mshr_max_merge,
            data_port_bytes: l2.data_port_bytes,
            queue_icnt_to_l2: l2.queue_icnt_to_l2,
            queue_l2_to_dram: l2.queue_l2_to_dram,
            queue_dram_to_l2: l2.queue_dram_to_l2,
            queue_l2_to_icnt: l2.queue_l2_to_icnt,
            atomic_latency: l2.atomic_latency,
            atomic_conflict_cycles: l2.atomic_conflict_cycles,
            fill_latency: l2.fill_latency,
            interleave_bytes: l2.interleave_bytes,
        },
        icnt: mm::IcntConfig {
            latency: ic.latency,
            flit_bytes: ic.flit_bytes,
            flits_per_cycle: ic.flits_per_cycle,
            input_queue_entries: (ic.input_buffer_flits / max_packet_flits).max(1),
            output_queue_entries: (ic.output_buffer_flits / max_packet_flits).max(1),
            dest_queue_entries: ic.ejection_buffer_entries.max(1),
            header_bytes: ic.header_bytes,
        },
        dram,
        clocks: mm::ClockConfig {
            core_mhz: g.gpu.core_clock_mhz,
            icnt_mhz: g.gpu.icnt_clock_mhz,
            l2_mhz: g.gpu.l2_clock_mhz,
        },
    }
}

impl MemModel {
    /// The memory model of `cfg`; an error when the preset maps onto a memory hierarchy
    /// `sassim-memory` cannot build (its cross-checks, e.g. DRAM burst = L2 sector).
    pub fn new(cfg: &GpuConfig, num_sms: usize, hierarchy: bool) -> Result<Self, String> {
        Self::new_on(cfg, num_sms, hierarchy, &crate::threads::Threads::new(1))
    }

    /// [`MemModel::new`] with the memory partitions made on `threads`.
    pub fn new_on(
        cfg: &GpuConfig,
        num_sms: usize,
        hierarchy: bool,
        threads: &crate::threads::Threads,
    ) -> Result<Self, String> {
        if !hierarchy {
            return Ok(MemModel::Fixed(hit_latencies(cfg)));
        }
        let mcfg = memory_config(cfg);
        mcfg.validate()
            .map_err(|e| format!("{}: the memory hierarchy cannot be built: {e}", cfg.gpu.name))?;
        // (A panic in a partition's making is the only error: made again here, it panics as
        // `MemorySystem::new` would.)
        let map = |n: usize, make: &(dyn Fn(usize) -> mm::Partition + Sync)| {
            threads
                .map(n, make)
                .unwrap_or_else(|_| (0..n).map(make).collect())
        };
        let sys = mm::MemorySystem::new_with(&mcfg, num_sms.max(1), &map);
        let c = &cfg.const_cache;
        Ok(MemModel::Hierarchy(Box::new(Hierarchy {
            sys,
            cfg: mcfg,
            lat: hit_latencies(cfg),
            consts: ConstGeom {
                sets: (c.l0_vl.size_bytes / c.l0_vl.line_bytes.max(1) / c.l0_vl.assoc.max(1)).max(1),
                assoc: c.l0_vl.assoc.max(1),
                line_shift: c.l0_vl.line_bytes.max(1).trailing_zeros(),
                miss_penalty: c.vl_miss_penalty as u64,
                perfect: c.perfect,
            },
            local_bytes_per_thread: sassim_functional::LOCAL_BYTES as u64,
            threads_per_sm: cfg.gpu.max_warps_per_sm as u64 * cfg.gpu.warp_size as u64,
            dsm_extra: cfg.mem_pipeline.dsm_extra.unwrap_or(0) as u64,
            room: Vec::new(),
            watched: Vec::new(),
            parts_due: false,
            at_ports: false,
            delivered_at: 0,
            slots: 0,
        })))
    }

    pub fn is_hierarchy(&self) -> bool {
        matches!(self, MemModel::Hierarchy(_))
    }

    /// Start a kernel: the L2, DRAM and interconnect keep their state from the kernels
    /// before (their statistics restart); each SM gets a fresh (invalidated) L1.
    pub fn begin_kernel(&mut self) {
        self.finish_partitions();
        if let MemModel::Hierarchy(h) = self {
            h.sys.reset_stats();
        }
    }

    /// The data memory of SM `sm`.
    pub fn sm_memory(&self, sm: usize) -> Box<dyn DataMemory> {
        match self {
            MemModel::Fixed(lat) => Box::new(FixedLatencyMemory { lat: *lat }),
            MemModel::Hierarchy(h) => Box::new(SmDataMemory::new(h, sm)),
        }
    }

    /// The SMs' side of a cycle is done ([`before_tick`], `Sm::tick`, [`after_tick`] for
    /// every SM, possibly in parallel): inject the L1s' requests into the interconnect in SM
    /// order, advance the interconnect by one core cycle, and leave each SM's responses in
    /// its inbox (filled at the start of its next tick) with its input queue's room. The
    /// L2 and DRAM cycles of this core cycle are left to [`MemModel::with_partitions`] (or
    /// [`MemModel::finish_partitions`]). The same order of events as [`MemModel::tick`].
    pub fn tick_beyond_sms<W>(
        &mut self,
        cycle: u64,
        sms: &mut [Sm<W>],
        notes: &mut [crate::parallel::SmNote],
        phys: &[usize],
    ) -> Result<(), String> {
        self.finish_partitions();
        let MemModel::Hierarchy(h) = self else {
            return Ok(());
        };
        let sys = &mut h.sys;
        if h.at_ports {
            // The SMs pushed their requests at their ports (slot = simulated SM).
            for (i, n) in notes.iter().enumerate() {
                if n.outbox {
                    sys.pushed(i);
                }
            }
        } else {
            for (i, sm) in sms.iter_mut().enumerate() {
                if !notes[i].outbox {
                    continue;
                }
                // Taking the sent requests out changes nothing the SM's memory completes
                // (a skipping SM's `quiet_until` stays true).
                if let Some(m) = adapter_to_send(sm) {
                    for r in m.outbox.drain(..) {
                        if !sys.push(cycle, phys[i], r) {
                            return Err(format!(
                                "SM {i}: the interconnect refused a request it had room for"
                            ));
                        }
                        // The SM counted it against its room.
                        h.room[i] = h.room[i].saturating_sub(1);
                    }
                }
            }
        }
        // The interconnect's cycles; the memory partitions' share of this core cycle (their
        // L2 slices and DRAM channels) runs during the SMs' next step
        // ([`MemModel::with_partitions`]) or at [`MemModel::finish_partitions`]. The
        // responses delivered now came through the response crossbar in `tick_begin`.
        sys.tick_begin(cycle);
        h.parts_due = true;
        h.delivered_at = cycle;
        // Only the SMs whose room or responses may have changed (the others' records are
        // up to date): the same effects as visiting all of them.
        let mut watched = std::mem::take(&mut h.watched);
        h.sys.watched_sms(&mut watched);
        for &i in &watched {
            if i >= sms.len() {
                break;
            }
            if h.at_ports {
                // The SM's step takes them (its room it reads at its port).
                notes[i].inbox = h.sys.slot_has_response(i);
            } else {
                h.deliver_to(i, phys[i], cycle, &mut sms[i], &mut notes[i]);
            }
        }
        h.watched = watched;
        Ok(())
    }

    /// Run `body` (the SMs' step of the next cycle) with the memory partitions' share of
    /// the last cycle (`tick_beyond_sms`) alongside it, on the same threads
    /// ([`crate::threads::Threads::with_side`]), then end that cycle
    /// (`MemorySystem::tick_end`). `body` gets the SMs' interconnect ports when this
    /// kernel's SMs tick at them ([`MemModel::collect`]). Neither touches what the other
    /// uses: the SMs' step reads and writes the SMs (their L1s, inboxes and outboxes), their
    /// ports and their kernel parts; a partition's tick only its L2 slices, DRAM channels
    /// and their crossbar queues (docs/model.md "Determinism").
    pub fn with_partitions<R>(
        &mut self,
        threads: &crate::threads::Threads,
        body: impl FnOnce(Option<SmPorts<'_>>) -> R,
    ) -> R {
        let MemModel::Hierarchy(h) = self else {
            return body(None);
        };
        let due = h.parts_due;
        let useful = if due {
            threads.useful_for_partitions(h.sys.busy_partitions())
        } else {
            0
        };
        let sp = h.sys.step_parts();
        let ports = h.at_ports.then_some(SmPorts {
            ports: sp.ports,
            at: sp.at,
            delivered_at: h.delivered_at,
        });
        if !due {
            return body(ports);
        }
        let (step, map) = (sp.step, sp.map);
        let r = threads.with_side(
            useful,
            sp.parts,
            &|ps: &mut [mm::Partition]| {
                // (Idle partitions are skipped here: a call per partition and cycle costs
                // more than the check.)
                for p in ps.iter_mut().filter(|p| p.is_active()) {
                    p.tick(step, map);
                }
            },
            || body(ports),
        );
        h.sys.tick_end();
        h.parts_due = false;
        r
    }

    /// The memory partitions' share of the last cycle, if it has not run
    /// ([`MemModel::with_partitions`]), on this thread: before anything reads the
    /// partitions (draining, statistics) or the memory system ticks again.
    pub fn finish_partitions(&mut self) {
        let MemModel::Hierarchy(h) = self else { return };
        if h.parts_due {
            h.sys.tick_partitions();
            h.sys.tick_end();
            h.parts_due = false;
        }
    }

    /// Before the first cycle of a kernel whose simulated SM `i` is port `phys[i]`: with
    /// `at_ports`, the SMs' steps take their responses and push their requests at their
    /// ports ([`SmPorts`]), and `notes` of the SMs with responses waiting are marked;
    /// without, each SM's responses move into its inbox (marking `notes`) and its input
    /// queue's room is noted.
    pub fn collect<W>(
        &mut self,
        cycle: u64,
        sms: &mut [Sm<W>],
        phys: &[usize],
        notes: &mut [crate::parallel::SmNote],
        at_ports: bool,
    ) {
        let MemModel::Hierarchy(h) = self else { return };
        h.sys.set_port_order(phys);
        // SMs stepping at their ports read their room there: only responses are watched.
        h.sys.set_watch_room(!at_ports);
        h.at_ports = at_ports;
        h.delivered_at = cycle;
        h.slots = sms.len();
        // No room is known yet: every SM's is written.
        h.room.clear();
        h.room.resize(sms.len(), usize::MAX);
        for (i, (sm, note)) in sms.iter_mut().zip(notes.iter_mut()).enumerate() {
            if at_ports {
                note.inbox = h.sys.slot_has_response(i);
            } else {
                h.deliver_to(i, phys[i], cycle, sm, note);
            }
        }
    }

    /// The most core cycles a quantum may cover now (`MemorySystem::max_quantum`; 0 unless
    /// this kernel's SMs tick at their ports). docs/memory.md "Back and front halves".
    pub fn max_quantum(&self) -> u64 {
        match self {
            MemModel::Hierarchy(h) if h.at_ports => h.sys.max_quantum(),
            _ => 0,
        }
    }

    /// The first part of a quantum of `q` core cycles: the partitions' share of the last
    /// cycle if it has not run, then the memory system's back half of the `q` cycles
    /// (`MemorySystem::back_cycle`). `clocks` gets each cycle's clocks, `icnt_before[k]` the
    /// interconnect cycle whose responses the SMs' step of the quantum's cycle `k` takes.
    /// With `may_end` (the kernel may end in the quantum) each cycle's clocks also say
    /// whether the partitions are idle after it (`MemorySystem::back_cycle`).
    pub fn quantum_back(
        &mut self,
        q: u64,
        may_end: bool,
        clocks: &mut Vec<mm::CycleClocks>,
        icnt_before: &mut Vec<u64>,
    ) {
        self.finish_partitions();
        clocks.clear();
        icnt_before.clear();
        let MemModel::Hierarchy(h) = self else { return };
        h.sys.begin_quantum();
        let first = h.sys.icnt_cycle_now();
        for _ in 0..q {
            clocks.push(h.sys.back_cycle(may_end));
        }
        crate::quantum::icnt_before(first, clocks, icnt_before);
        h.sys.merge_ahead();
    }

    /// The SMs' ports and the memory system's back half, apart: the back half of the next
    /// quantum runs while the SMs step through this one (`MemorySystem::split_ahead`).
    pub fn quantum_split(&mut self) -> Option<(SmPorts<'_>, mm::BackHalf<'_>)> {
        let MemModel::Hierarchy(h) = self else { return None };
        let delivered_at = h.delivered_at;
        let (sp, back) = h.sys.split_ahead();
        Some((
            SmPorts {
                ports: sp.ports,
                at: sp.at,
                delivered_at,
            },
            back,
        ))
    }

    /// The responses the back half delivered ahead join the SMs' response queues, and the
    /// most core cycles the quantum after the next `ahead` ones may cover
    /// (`MemorySystem::max_quantum_after`).
    pub fn quantum_merge(&mut self, ahead: u64) -> u64 {
        let MemModel::Hierarchy(h) = self else { return 0 };
        h.sys.merge_ahead();
        h.sys.max_quantum_after(ahead)
    }

    /// After a quantum in which the kernel ended in core cycle `cycle - 1`, whose clocks were
    /// `before`, with the memory system's back half further on: whether every request of the
    /// SMs has left the hierarchy, as [`MemModel::drained`] would answer had the back half
    /// stopped there too (`MemorySystem::drained_ahead`).
    pub fn drained_ahead<W>(&self, sms: &mut [Sm<W>], before: &mm::CycleClocks) -> bool {
        let MemModel::Hierarchy(h) = self else { return true };
        h.sys.drained_ahead(before) && l1s_idle(sms)
    }

    /// The back half's cycles after the one of clocks `to` found everything idle: undone,
    /// and the quanta end there (`MemorySystem::rewind_back`).
    pub fn rewind_back(&mut self, to: &mm::CycleClocks, last: u64, notes: &mut [crate::parallel::SmNote]) {
        if let MemModel::Hierarchy(h) = self {
            h.sys.rewind_back(to);
        }
        self.quantum_end(last, notes);
    }

    /// One cycle of the drain after a kernel for SMs stepping at their ports whose memory
    /// system's back half has run it (`cycle`, clocks `k`): the L1s send their queued
    /// requests in SM order, the front half runs, and the L1s take the responses due by the
    /// cycle's end ([`MemModel::tick`]'s order).
    pub fn drain_cycle_ahead<W>(
        &mut self,
        cycle: u64,
        k: &mm::CycleClocks,
        sms: &mut [Sm<W>],
        pushed: &mut Vec<usize>,
    ) {
        pushed.clear();
        if let Some(ports) = self.quantum_ports() {
            let at = ports.at.at_icnt(k.icnt_last);
            for (i, (sm, port)) in sms.iter_mut().zip(ports.ports.iter_mut()).enumerate() {
                if after_tick_at(sm, cycle, port, &at).any {
                    pushed.push(i);
                }
            }
        }
        self.quantum_front(cycle, k, pushed);
        self.take_due(sms, k.icnt_last, cycle);
    }

    /// Each SM's L1 takes the responses due by interconnect cycle `icnt` at its port, filled
    /// in core cycle `cycle` ([`MemModel::fill_delivered`] at a given cycle).
    pub fn take_due<W>(&mut self, sms: &mut [Sm<W>], icnt: u64, cycle: u64) {
        if let Some(ports) = self.quantum_ports() {
            let at = ports.at.at_icnt(icnt);
            for (sm, port) in sms.iter_mut().zip(ports.ports.iter_mut()) {
                before_tick_at(sm, port, &at, cycle);
            }
        }
    }

    /// The SMs' ports, for their steps in a quantum ([`MemModel::quantum_back`] ran).
    pub fn quantum_ports(&mut self) -> Option<SmPorts<'_>> {
        self.quantum_split().map(|(ports, _)| ports)
    }

    /// The front half of core cycle `cycle` of a quantum (clocks `k`), after every SM's
    /// step of that cycle: the SMs of `pushed` pushed requests straight into their input
    /// queues (they stepped alone, outside the quantum's parallel part).
    pub fn quantum_front(&mut self, cycle: u64, k: &mm::CycleClocks, pushed: &[usize]) {
        let MemModel::Hierarchy(h) = self else { return };
        for &s in pushed {
            h.sys.pushed(s);
        }
        h.sys.front_cycle(cycle, k, h.slots);
    }

    /// The end of a quantum whose last core cycle was `last`, followed by one whose back half
    /// has run: the next steps' responses are where the quantum's steps take them.
    pub fn quantum_continue(&mut self, last: u64) {
        if let MemModel::Hierarchy(h) = self {
            h.delivered_at = last;
        }
    }

    /// The end of a quantum whose last core cycle was `last`: what `tick_beyond_sms` leaves
    /// for the next cycle's step (the SMs with responses waiting are marked in `notes`).
    pub fn quantum_end(&mut self, last: u64, notes: &mut [crate::parallel::SmNote]) {
        let MemModel::Hierarchy(h) = self else { return };
        h.sys.end_quantum();
        h.parts_due = false;
        h.delivered_at = last;
        let mut watched = std::mem::take(&mut h.watched);
        h.sys.watched_sms(&mut watched);
        for &i in &watched {
            if i >= notes.len() {
                break;
            }
            notes[i].inbox = h.sys.slot_has_response(i);
        }
        h.watched = watched;
    }

    /// After the last cycle of a kernel's loop: the responses the serial part left for
    /// the SMs' next step (in their inboxes, or at their ports) go into their L1s, as at
    /// the start of a step.
    pub fn fill_delivered<W>(&mut self, sms: &mut [Sm<W>]) {
        match self {
            MemModel::Hierarchy(h) if h.at_ports => {
                let (icnt, at) = (h.sys.icnt_cycle_now(), h.delivered_at);
                self.take_due(sms, icnt, at);
            }
            _ => {
                for sm in sms.iter_mut() {
                    before_tick(sm);
                }
            }
        }
    }
}

impl Hierarchy {
    /// Simulated SM `i`'s (port `s`'s) responses into its inbox (filled at its next tick;
    /// `note.inbox` marks that it has some), and the room of its interconnect input queue,
    /// written to the SM's record only when it differs from what the SM counts (the
    /// records belong to the threads that tick the SMs).
    fn deliver_to<W>(
        &mut self,
        i: usize,
        s: usize,
        cycle: u64,
        sm: &mut Sm<W>,
        note: &mut crate::parallel::SmNote,
    ) {
        let room = self.sys.port_room(s);
        let responses = self.sys.has_response(s);
        if room == self.room[i] && !responses {
            return;
        }
        // Only responses change what the SM's memory completes: a new room alone leaves a
        // skipping SM's `quiet_until` true (the room only lets the L1 send).
        let m = if responses {
            adapter(sm)
        } else {
            adapter_to_send(sm)
        };
        if let Some(m) = m {
            while let Some(r) = self.sys.pop_response(s) {
                m.inbox.push(r);
            }
            m.inbox_cycle = cycle;
            m.room = room;
            if !m.inbox.is_empty() {
                note.inbox = true;
            }
        }
        self.room[i] = room;
    }
}

impl MemModel {
    /// Advance everything beyond the SMs by one core cycle, after the SMs ticked:
    /// L1 miss queues → interconnect (SM order), interconnect/L2/DRAM, responses → L1s.
    /// `phys[i]` is the physical SM (interconnect port) of `sms[i]`.
    pub fn tick<W>(&mut self, cycle: u64, sms: &mut [Sm<W>], phys: &[usize]) {
        self.finish_partitions();
        let MemModel::Hierarchy(h) = self else { return };
        let sys = &mut h.sys;
        for (i, sm) in sms.iter_mut().enumerate() {
            let s = phys[i];
            if let Some(m) = adapter(sm) {
                m.l1.tick(cycle, &mut |r| sys.push(cycle, s, r));
                if m.bypass.has_queued() {
                    m.bypass.send(&mut |r| sys.push(cycle, s, r));
                }
            }
        }
        sys.tick(cycle);
        for (i, sm) in sms.iter_mut().enumerate() {
            let s = phys[i];
            if let Some(m) = adapter(sm) {
                m.take_responses(cycle, std::iter::from_fn(|| sys.pop_response(s)));
            }
        }
    }

    /// True when no memory request of the SMs is anywhere in the hierarchy (L1 miss
    /// queues, MSHRs, interconnect, L2, DRAM): the kernel's stores have been performed.
    pub fn drained<W>(&self, sms: &mut [Sm<W>]) -> bool {
        let MemModel::Hierarchy(h) = self else { return true };
        debug_assert!(!h.parts_due, "the partitions' step has not run");
        h.sys.is_idle() && l1s_idle(sms)
    }

    pub fn report<W>(&mut self, sms: &mut [Sm<W>]) -> Option<MemReport> {
        self.finish_partitions();
        let MemModel::Hierarchy(h) = self else { return None };
        let mut r = MemReport::default();
        for sm in sms.iter_mut() {
            if let Some(m) = adapter(sm) {
                let st = m.l1.stats();
                let k = &st.by_kind;
                let reads_writes = [0usize, 1, 4, 5];
                let sum = |o: usize| reads_writes.iter().map(|&i| k[i][o]).sum::<u64>();
                r.l1d_per_sm.push([
                    st.line_accesses + st.write_hits + st.write_misses,
                    st.misses + st.sector_misses + st.write_misses,
                    sum(mm::types::OUT_HIT_RESERVED),
                    st.reservation_fails,
                ]);
                r.l1d += st;
                r.const_hits += m.const_hits;
                r.const_misses += m.const_misses;
                r.const_hit_reserved += m.const_hit_reserved;
            }
        }
        for (k, name) in mm::ACCESS_TYPE_NAMES.iter().enumerate() {
            let mut row: BTreeMap<String, u64> = BTreeMap::new();
            for (o, oname) in mm::ACCESS_OUTCOME_NAMES.iter().enumerate() {
                let v = r.l1d.by_kind[k][o];
                if v > 0 {
                    row.insert(oname.to_string(), v);
                }
            }
            if *name == "CONST_ACC_R" {
                if r.const_hits > 0 {
                    row.insert("HIT".into(), r.const_hits);
                }
                if r.const_misses > 0 {
                    row.insert("MISS".into(), r.const_misses);
                }
                if r.const_hit_reserved > 0 {
                    row.insert("HIT_RESERVED".into(), r.const_hit_reserved);
                }
            }
            if !row.is_empty() {
                r.l1d_by_kind.insert(name.to_string(), row);
            }
        }
        let ms = h.sys.stats();
        let s2 = &ms.l2;
        let mut l2k = Breakdown::new();
        let mut put = |k: &str, o: &str, v: u64| {
            if v > 0 {
                *l2k.entry(k.into()).or_default().entry(o.into()).or_default() += v;
            }
        };
        put("GLOBAL_ACC_R", "HIT", s2.read_hits + s2.atomic_hits);
        put(
            "GLOBAL_ACC_R",
            "MISS",
            (s2.read_misses + s2.atomic_misses).saturating_sub(s2.sector_misses),
        );
        put("GLOBAL_ACC_R", "SECTOR_MISS", s2.sector_misses);
        put("GLOBAL_ACC_R", "HIT_RESERVED", s2.hit_reserved);
        put("GLOBAL_ACC_R", "MSHR_HIT", s2.mshr_merges);
        put("GLOBAL_ACC_R", "RESERVATION_FAIL", s2.reservation_fails);
        put("GLOBAL_ACC_W", "HIT", s2.write_hits);
        put("GLOBAL_ACC_W", "MISS", s2.write_misses);
        r.l2 = ms.l2.clone();
        r.l2_by_kind = l2k;
        r.l2_read_hit_rate = ms.l2_read_hit_rate;
        r.dram = ms.dram.clone();
        r.dram_bandwidth_utilization = ms.dram_bandwidth_utilization;
        r.dram_bytes_per_core_cycle = ms.dram_bytes_per_core_cycle;
        r.dram_theoretical_bytes_per_core_cycle = h.sys.theoretical_bandwidth_bytes_per_core_cycle();
        r.dram_avg_read_latency = ms.dram_avg_read_latency;
        r.icnt_request_packets = ms.icnt_requests.packets;
        r.icnt_response_packets = ms.icnt_responses.packets;
        r.icnt_request_blocked = ms.icnt_requests.blocked;
        r.icnt_response_blocked = ms.icnt_responses.blocked;
        r.core_cycles = ms.core_cycles;
        Some(r)
    }
}

/// Before SM `sm` ticks: fill the L1 with the responses of the previous cycle.
#[inline]
pub fn before_tick<W>(sm: &mut Sm<W>) {
    if let Some(m) = adapter(sm) {
        m.take_inbox();
    }
}

/// What an SM's L1 did in [`after_tick`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Sent {
    /// It put requests in its outbox.
    pub any: bool,
    /// It (or its bypass) still has requests queued.
    pub queued: bool,
}

/// After SM `sm` ticked in cycle `cycle`: the L1 sends its due requests into its outbox, as
/// many as its interconnect input queue has room for.
#[inline]
pub fn after_tick<W>(sm: &mut Sm<W>, cycle: u64) -> Sent {
    match adapter_to_send(sm) {
        Some(m) => {
            let SmDataMemory {
                l1,
                outbox,
                room,
                bypass,
                ..
            } = m;
            let mut send = |r| {
                if *room == 0 {
                    return false;
                }
                *room -= 1;
                outbox.push(r);
                true
            };
            let queued = send_due(l1, bypass, cycle, &mut send);
            Sent {
                any: !outbox.is_empty(),
                queued,
            }
        }
        None => Sent::default(),
    }
}

/// Before SM `sm` ticks: fill the L1 with the responses waiting at its interconnect port
/// (delivered by the interconnect's cycles of core cycle `delivered_at`).
#[inline]
pub fn before_tick_at<W>(sm: &mut Sm<W>, port: &mut mm::SmPort, at: &mm::PortStep, delivered_at: u64) {
    if let Some(m) = adapter(sm) {
        m.take_responses(delivered_at, std::iter::from_fn(|| port.pop_response(at)));
    }
}

/// [`after_tick`] with the requests pushed at the SM's interconnect port, as many as its
/// input queue has room for (`Sent::any`: some were; then `MemorySystem::pushed`).
#[inline]
pub fn after_tick_at<W>(sm: &mut Sm<W>, cycle: u64, port: &mut mm::SmPort, at: &mm::PortStep) -> Sent {
    match adapter_to_send(sm) {
        Some(m) => {
            let SmDataMemory { l1, bypass, .. } = m;
            let mut any = false;
            let mut send = |r| {
                let ok = port.push(at, r);
                any |= ok;
                ok
            };
            let queued = send_due(l1, bypass, cycle, &mut send);
            Sent { any, queued }
        }
        None => Sent::default(),
    }
}

/// The L1's due requests, then the bypass's queued ones, through `send` (false: no room), in
/// the order [`after_tick`] and [`after_tick_at`] share; whether either still has requests
/// queued.
#[inline(always)]
fn send_due(
    l1: &mut mm::SmMemory,
    bypass: &mut crate::l1_bypass::L1Bypass,
    cycle: u64,
    send: &mut dyn FnMut(mm::L2Request) -> bool,
) -> bool {
    l1.tick(cycle, send);
    if bypass.has_queued() {
        bypass.send(send);
    }
    l1.has_queued() || bypass.has_queued()
}

/// The first SM (its index in `sms`) whose L1 rejected a load that it can never accept, and
/// that load's needs (deadlock reports).
pub fn never_admitted<W>(sms: &mut [Sm<W>]) -> Option<(usize, mm::NeverAdmitted)> {
    sms.iter_mut()
        .enumerate()
        .find_map(|(i, sm)| Some((i, adapter_to_send(sm)?.l1.never_admitted()?)))
}

/// No SM's L1 or bypass holds a request (queued or waiting for its response).
fn l1s_idle<W>(sms: &mut [Sm<W>]) -> bool {
    sms.iter_mut()
        .all(|sm| adapter(sm).is_none_or(|m| m.l1.is_idle() && m.bypass.is_idle()))
}

fn adapter<W>(sm: &mut Sm<W>) -> Option<&mut SmDataMemory> {
    sm.data_memory().as_any_mut().downcast_mut::<SmDataMemory>()
}

/// [`adapter`] for sending the L1's and the bypass's queued requests only
/// ([`Sm::data_memory_to_send`]).
fn adapter_to_send<W>(sm: &mut Sm<W>) -> Option<&mut SmDataMemory> {
    sm.data_memory_to_send()
        .as_any_mut()
        .downcast_mut::<SmDataMemory>()
}
