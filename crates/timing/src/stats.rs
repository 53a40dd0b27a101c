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
    pub fn add(&mut self, o: &CoreStats) {
        self.cycles = self.cycles.max(o.cycles);
        self.warp_insts += o.warp_insts;
        self.thread_insts += o.thread_insts;
        self.issue_slots_used += o.issue_slots_used;
        for (a, b) in self.stall_slots.iter_mut().zip(o.stall_slots.iter()) {
            *a += b;
        }
        self.rfc_reads += o.rfc_reads;
        self.rfc_hits += o.rfc_hits;
        self.rf_bank_reads += o.rf_bank_reads;
        self.allocate_stall_cycles += o.allocate_stall_cycles;
        self.l0i_hits += o.l0i_hits;
        self.l0i_misses += o.l0i_misses;
        self.l0i_hit_reserved += o.l0i_hit_reserved;
        self.stream_buffer_hits += o.stream_buffer_hits;
        self.l1i_requests += o.l1i_requests;
        self.l1i_hits += o.l1i_hits;
        self.l1i_misses += o.l1i_misses;
        self.l1i_hit_reserved += o.l1i_hit_reserved;
        self.l1c_hits += o.l1c_hits;
        self.l1c_misses += o.l1c_misses;
        self.l1c_hit_reserved += o.l1c_hit_reserved;
        self.l0c_hits += o.l0c_hits;
        self.l0c_misses += o.l0c_misses;
        self.mem_insts += o.mem_insts;
        self.ib_flushes += o.ib_flushes;
        self.load_wb_conflicts += o.load_wb_conflicts;
        self.stale_reads += o.stale_reads;
        self.ltrf_prefetches += o.ltrf_prefetches;
        self.ltrf_prefetch_regs += o.ltrf_prefetch_regs;
        self.ltrf_prefetch_conflicts += o.ltrf_prefetch_conflicts;
        self.ltrf_prefetch_cycles += o.ltrf_prefetch_cycles;
        self.ltrf_deactivations += o.ltrf_deactivations;
        self.ltrf_writeback_regs += o.ltrf_writeback_regs;
        self.ltrf_cache_reads += o.ltrf_cache_reads;
        for e in &o.stale_read_examples {
            if self.stale_read_examples.len() < STALE_EXAMPLES {
                self.stale_read_examples.push(*e);
            }
        }
    }
}
