//! Statistics of the core model.

use serde::{Deserialize, Serialize};

/// Why a sub-core issued nothing in a cycle (the reason of the warp closest to issuing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StallReason {
    /// Control/Allocate stages full (register-file port conflict upstream pressure).
    AllocatePortConflict,
    /// Execution unit's input latch busy.
    ExecUnitLatch,
    /// Memory queue of the sub-core full.
    MemQueueFull,
    /// L0 fixed-latency constant cache miss.
    ConstCacheMiss,
    /// Waiting for dependence counters (or a DEPBAR, or the scoreboard).
    DependenceCounters,
    /// Yield set in the previous cycle.
    Yield,
    /// Stall counter not zero.
    StallCounter,
    /// Waiting at a barrier.
    Barrier,
    /// LTRF: the warp's register-cache prefetch has not completed.
    RegisterPrefetch,
    /// No instruction in the instruction buffer.
    NoInstruction,
    /// No warp assigned.
    Idle,
}

impl StallReason {
    pub const ALL: [StallReason; 11] = [
        StallReason::AllocatePortConflict,
        StallReason::ExecUnitLatch,
        StallReason::MemQueueFull,
        StallReason::ConstCacheMiss,
        StallReason::DependenceCounters,
        StallReason::Yield,
        StallReason::StallCounter,
        StallReason::Barrier,
        StallReason::RegisterPrefetch,
        StallReason::NoInstruction,
        StallReason::Idle,
    ];
    pub fn name(&self) -> &'static str {
        match self {
            StallReason::AllocatePortConflict => "allocate_port_conflict",
            StallReason::ExecUnitLatch => "exec_unit_latch",
            StallReason::MemQueueFull => "mem_queue_full",
            StallReason::ConstCacheMiss => "const_cache_miss",
            StallReason::DependenceCounters => "dependence_counters",
            StallReason::Yield => "yield",
            StallReason::StallCounter => "stall_counter",
            StallReason::Barrier => "barrier",
            StallReason::RegisterPrefetch => "register_prefetch",
            StallReason::NoInstruction => "no_instruction",
            StallReason::Idle => "idle",
        }
    }
}

/// Stale reads kept as examples per SM and per kernel.
pub const STALE_EXAMPLES: usize = 8;

/// A stale read ([`CoreStats::stale_reads`]): an instruction that read a register before
/// its fixed-latency producer's result was visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaleRead {
    /// The cycle of the read.
    pub cycle: u64,
    /// The reading instruction's PC.
    pub consumer_pc: u64,
    /// The PC of the instruction whose result it read too early.
    pub producer_pc: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreStats {
    pub cycles: u64,
    pub warp_insts: u64,
    pub thread_insts: u64,
    /// Issue slots (sub-core cycles) that issued an instruction.
    pub issue_slots_used: u64,
    /// Issue slots lost, by reason (index = StallReason as usize).
    pub stall_slots: [u64; 11],
    pub rfc_reads: u64,
    pub rfc_hits: u64,
    pub rf_bank_reads: u64,
    pub allocate_stall_cycles: u64,
    pub l0i_hits: u64,
    pub l0i_misses: u64,
    /// L0 I-cache lookups that found their line in flight (a demand miss or a prefetch not
    /// yet back): they wait for it (Accel-Sim's HIT_RESERVED).
    pub l0i_hit_reserved: u64,
    pub stream_buffer_hits: u64,
    pub l1i_requests: u64,
    /// The SM's L1 instruction/constant cache: instruction and constant lines, by outcome
    /// (`HIT_RESERVED`: the line was being fetched from L2; the request waits for it).
    pub l1i_hits: u64,
    pub l1i_misses: u64,
    pub l1i_hit_reserved: u64,
    pub l1c_hits: u64,
    pub l1c_misses: u64,
    pub l1c_hit_reserved: u64,
    pub l0c_hits: u64,
    pub l0c_misses: u64,
    pub mem_insts: u64,
    pub ib_flushes: u64,
    pub load_wb_conflicts: u64,
    /// Instructions that read a register whose fixed-latency producer's result was not
    /// visible yet (too-short stall counts, or a model slower than the compiler assumed).
    pub stale_reads: u64,
    /// The first stale reads.
    pub stale_read_examples: Vec<StaleRead>,
    /// LTRF (docs/ltrf.md): prefetches at register-interval entries (including refetches
    /// after a deactivation), the registers they moved, their main-register-file bank
    /// conflicts, and the cycles from their start to the warp's register cache being ready.
    pub ltrf_prefetches: u64,
    pub ltrf_prefetch_regs: u64,
    pub ltrf_prefetch_conflicts: u64,
    pub ltrf_prefetch_cycles: u64,
    /// Warps that lost their register-cache partition (left the two-level scheduler's active
    /// set) and the registers they wrote back.
    pub ltrf_deactivations: u64,
    pub ltrf_writeback_regs: u64,
    /// Operand reads served by the register cache.
    pub ltrf_cache_reads: u64,
}

impl CoreStats {
    /// Add another SM's (or kernel's) statistics: counters are summed, `cycles` is the
    /// longer run, and the stale-read examples are kept up to `STALE_EXAMPLES`. The
    /// exhaustive pattern makes a new field a compile error here until it is added.
    pub fn add(&mut self, o: &CoreStats) {
        let CoreStats {
            cycles,
            stall_slots,
            stale_read_examples,
            warp_insts,
            thread_insts,
            issue_slots_used,
            rfc_reads,
            rfc_hits,
            rf_bank_reads,
            allocate_stall_cycles,
            l0i_hits,
            l0i_misses,
            l0i_hit_reserved,
            stream_buffer_hits,
            l1i_requests,
            l1i_hits,
            l1i_misses,
            l1i_hit_reserved,
            l1c_hits,
            l1c_misses,
            l1c_hit_reserved,
            l0c_hits,
            l0c_misses,
            mem_insts,
            ib_flushes,
            load_wb_conflicts,
            stale_reads,
            ltrf_prefetches,
            ltrf_prefetch_regs,
            ltrf_prefetch_conflicts,
            ltrf_prefetch_cycles,
            ltrf_deactivations,
            ltrf_writeback_regs,
            ltrf_cache_reads,
        } = o;
        self.cycles = self.cycles.max(*cycles);
        for (a, b) in self.stall_slots.iter_mut().zip(stall_slots) {
            *a += b;
        }
        self.warp_insts += warp_insts;
        self.thread_insts += thread_insts;
        self.issue_slots_used += issue_slots_used;
        self.rfc_reads += rfc_reads;
        self.rfc_hits += rfc_hits;
        self.rf_bank_reads += rf_bank_reads;
        self.allocate_stall_cycles += allocate_stall_cycles;
        self.l0i_hits += l0i_hits;
        self.l0i_misses += l0i_misses;
        self.l0i_hit_reserved += l0i_hit_reserved;
        self.stream_buffer_hits += stream_buffer_hits;
        self.l1i_requests += l1i_requests;
        self.l1i_hits += l1i_hits;
        self.l1i_misses += l1i_misses;
        self.l1i_hit_reserved += l1i_hit_reserved;
        self.l1c_hits += l1c_hits;
        self.l1c_misses += l1c_misses;
        self.l1c_hit_reserved += l1c_hit_reserved;
        self.l0c_hits += l0c_hits;
        self.l0c_misses += l0c_misses;
        self.mem_insts += mem_insts;
        self.ib_flushes += ib_flushes;
        self.load_wb_conflicts += load_wb_conflicts;
        self.stale_reads += stale_reads;
        self.ltrf_prefetches += ltrf_prefetches;
        self.ltrf_prefetch_regs += ltrf_prefetch_regs;
        self.ltrf_prefetch_conflicts += ltrf_prefetch_conflicts;
        self.ltrf_prefetch_cycles += ltrf_prefetch_cycles;
        self.ltrf_deactivations += ltrf_deactivations;
        self.ltrf_writeback_regs += ltrf_writeback_regs;
        self.ltrf_cache_reads += ltrf_cache_reads;
        let room = STALE_EXAMPLES.saturating_sub(self.stale_read_examples.len());
        self.stale_read_examples
            .extend(stale_read_examples.iter().take(room));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every counter of `CoreStats` set to `v` (through its serialised form, so a new field
    /// is covered without being named here), with `n` stale-read examples.
    fn every_counter(v: u64, n: usize) -> CoreStats {
        let mut j = serde_json::to_value(CoreStats::default()).expect("serialise");
        for (_, x) in j.as_object_mut().expect("a map").iter_mut() {
            match x {
                serde_json::Value::Number(_) => *x = v.into(),
                serde_json::Value::Array(a) if a.iter().all(|e| e.is_number()) => {
                    a.iter_mut().for_each(|e| *e = v.into())
                }
                _ => {}
            }
        }
        let mut s: CoreStats = serde_json::from_value(j).expect("deserialise");
        s.stale_read_examples = (0..n as u64)
            .map(|k| StaleRead {
                cycle: k,
                consumer_pc: 16 * k,
                producer_pc: 0,
            })
            .collect();
        s
    }

    #[test]
    fn add_sums_every_counter_keeps_the_longer_run_and_caps_the_examples() {
        let mut a = every_counter(3, 5);
        a.add(&every_counter(4, 6));
        let j = serde_json::to_value(&a).expect("serialise");
        for (name, x) in j.as_object().expect("a map") {
            let want = if name == "cycles" { 4 } else { 7 };
            match x {
                serde_json::Value::Number(n) => assert_eq!(n.as_u64(), Some(want), "{name}"),
                serde_json::Value::Array(v) if name == "stall_slots" => {
                    assert!(v.iter().all(|e| e.as_u64() == Some(want)), "{name}: {v:?}")
                }
                _ => {}
            }
        }
        assert_eq!(a.stale_read_examples.len(), STALE_EXAMPLES);
        // Its own five first, then the first three of the other's.
        let cycles: Vec<u64> = a.stale_read_examples.iter().map(|e| e.cycle).collect();
        assert_eq!(cycles, [0, 1, 2, 3, 4, 0, 1, 2]);
    }
}
