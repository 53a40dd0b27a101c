//! One SM: four sub-cores with front-end, issue, Control/Allocate, register file,
//! execution units and memory units, plus the SM-shared L1 I/C cache and memory
//! arbiter. The per-cycle order of work is described in docs/architecture.md.

use crate::config::{CoreConfig, DepMode};
use crate::exec::{Executor, Issued};
use crate::frontend::{StreamBuffer, TagCache};
use crate::inst::{StaticInst, DEP_COUNTERS};
use crate::mem::DataMemory;
use crate::regfile::{PortSchedule, Rfc};
use crate::state::{
    Event, SubCore, Warp, WarpIssue, WarpLog, CONST_LINE_TAG, HOT_DEP_WAIT, HOT_LIVE, HOT_NO_ROOM,
    MAX_SUBCORES, MAX_WARP_SLOTS, NO_HEAD,
};
use crate::stats::CoreStats;
use sassim_isa::ArchReg;
use std::collections::VecDeque;

/// A simulated SM. `repr(C)`: the fields every cycle reads of every SM come first, in a few
/// cache lines (on a loaded GPU the per-cycle work of the SMs is mostly cache misses); those
/// a tick reads before it knows whether anything can act (the masks, the events' and the
/// memory's next cycles, the warps in use, the staged counter increments) come first of all.
#[repr(C)]
pub struct Sm<W> {
    pub(crate) now: u64,
    /// Slots whose warp is live and not known to wait on its dependence counters (`go`),
    /// and live and known to wait (`waiting`): the `HOT_LIVE`/`HOT_DEP_WAIT` flags as bit
    /// masks, kept in step by [`Sm::sync_masks`], so the issue stage sees a sub-core with
    /// nothing to issue in one test. An SM has at most [`MAX_WARP_SLOTS`] slots.
    pub(crate) go: u64,
    pub(crate) waiting: u64,
    /// Slots whose instruction-buffer head is a memory instruction or unknown (or whose
    /// buffer is empty): while their sub-core's memory queue is full, such a warp cannot
    /// issue and its stall reason is `MemQueueFull` or a later one (`Sm::first_ready`).
    /// Kept by [`Sm::sync_head`].
    pub(crate) mem_head: u64,
    /// Slots whose warp is live and has room in its instruction buffer (`HOT_LIVE` and not
    /// `HOT_NO_ROOM`): the fetch stage's candidates.
    pub(crate) room: u64,
    /// Slots whose warp exited and is not retired yet (`exited`), and those of them with no
    /// memory or variable-latency operation in flight (`drained`: `Warp::inflight_ops` is 0),
    /// the ones retirement looks at (`Sm::retire_warps`) without reading their `Warp` records.
    pub(crate) exited: u64,
    pub(crate) drained: u64,
    /// The first cycle at which the data memory may complete an access
    /// ([`DataMemory::done_from`], kept here so that a cycle without completions does not
    /// touch the data memory); 0 after anything that may change it.
    pub(crate) mem_done_from: u64,
    pub(crate) events: crate::events::EventQueue,
    /// Warp slots in use (kept so that the per-cycle idle and occupancy queries do not
    /// scan every warp).
    pub(crate) used_warps: usize,
    /// Warps with counter increments staged this cycle.
    pub(crate) staged: Vec<usize>,
    pub(crate) arb_free: u64,
    /// Per sub-core, its memory-queue front when the memory found it rejected again, with
    /// the memory's token: the arbiter's next retries ask the memory with the token alone,
    /// without reading the sub-core's queue, the instruction or its record (cache misses
    /// every cycle on a loaded GPU). Cleared when the memory no longer rejects it.
    pub(crate) arb_front: [crate::mempipe::FrontRejection; MAX_SUBCORES],
    /// The cycle the SM's clock counter (SR_CLOCKLO) and its issue logs count from: when its
    /// first CTA started (`Sm::start_at`).
    pub(crate) clock_origin: u64,
    /// Units (`cfg.units` indices below 64) shared by the SM's sub-cores (`shared_by_sm`),
    /// as bits: the readiness check asks this of every warp's unit (see `Sm::unit_shared`).
    pub(crate) shared_units: u64,
    pub(crate) uses_control_bits: bool,
    /// Whether `clock_origin` was set.
    pub(crate) started: bool,
    pub record: bool,
    /// Per sub-core: its pipeline may hold work (Control, Allocate, the variable-latency and
    /// memory queues, fetches, I-cache requests or a constant-cache wait). False only when
    /// all are empty: then its per-cycle stages and the arbiters skip it without touching
    /// the `SubCore` record. Set where work enters (issue, fetch, a constant-cache miss),
    /// recomputed by `Sm::tick` after a busy sub-core's cycle (`SubCore::has_work`).
    pub(crate) sc_busy: [bool; MAX_SUBCORES],
    /// Bit `sc`: sub-core `sc`'s L1 I-cache request queue is not empty (`SubCore::l1_queue`),
    /// so the L1 I-cache arbiter reads only the sub-cores with requests (`fetch.rs`).
    pub(crate) l1i_queued: u32,
    /// Per sub-core: asleep until a cycle, or awake (`crate::sleep`).
    pub(crate) sleep: [crate::sleep::SubCoreSleep; MAX_SUBCORES],
    /// While a sub-core's cycle runs: the earliest cycle at which a readiness check found
    /// that its answer may change (`Sm::wake_by`).
    pub(crate) wake_at: u64,
    /// The stall reason the last sub-core cycle counted (`Sm::count_stall`).
    pub(crate) last_stall: crate::stats::StallReason,
    /// Per warp slot, its sub-core (`Warp::subcore`, kept here so that waking a warp's
    /// sub-core, `Sm::touch_slot`, does not read the warp's large record).
    pub(crate) slot_sc: [u8; MAX_WARP_SLOTS],
    /// Let sub-cores sleep through cycles in which nothing can change (`crate::sleep`;
    /// statistics are the same either way).
    pub skip_idle_subcores: bool,
    /// Sub-core cycles skipped asleep (`crate::sleep`).
    pub(crate) slept_cycles: u64,
    /// Cycles the engine did not tick because nothing could act (`Sm::skip_quiet_to`; in
    /// debug builds, the ticks it would have skipped).
    pub(crate) quiet_skipped: u64,
    pub(crate) l1i_rr: usize,
    pub(crate) arb_rr: usize,
    /// Per sub-core, the slots of its warps as bits (kept with `SubCore::warps`).
    pub(crate) sc_mask: [u64; MAX_SUBCORES],
    /// Per warp slot, its position in its sub-core's `SubCore::warps` (age order, oldest 0):
    /// the issue stage walks candidate warps by age as bits of this rank.
    pub(crate) age_rank: [u8; MAX_WARP_SLOTS],
    /// Per sub-core, the slot of its warp of each age rank (`SubCore::warps` as bytes, kept
    /// with it and `age_rank`: the issue stage's walk reads it, in the SM's own record).
    pub(crate) rank_slot: [[u8; MAX_WARP_SLOTS]; MAX_SUBCORES],
    /// Per warp slot, `HOT_*` flags: what the readiness check of every warp every cycle
    /// looks at first, kept apart from the large `Warp` records so that idle and waiting
    /// warps cost no cache miss.
    pub(crate) hot: [u8; MAX_WARP_SLOTS],
    pub(crate) subcores: Vec<SubCore>,
    /// Per warp slot, what the issue stage reads every cycle (see [`WarpIssue`]).
    pub(crate) iss: Vec<WarpIssue>,
    pub(crate) mem: Box<dyn DataMemory>,
    pub(crate) finished: Vec<u32>,
    /// Scratch list of the memory operations completed this cycle ([`DataMemory::completed`]),
    /// kept so that the per-cycle path does not allocate.
    done_scratch: Vec<u64>,
    /// The kernel's static code, shared by every SM of the launch (not copied per SM).
    pub(crate) code: std::sync::Arc<[StaticInst]>,
    /// The instructions of `code` sorted by pc, for code whose instruction i is not at pc
    /// 16·i (trace-built code holds only the executed pcs); empty otherwise.
    pub(crate) pc_sorted: Vec<PcIndex>,
    pub(crate) warps: Vec<Warp>,
    /// Readiness of a sub-core's warps, reused every cycle by the issue stage.
    pub(crate) ready_buf: Vec<usize>,
    /// The executor's records of instructions in flight (register results and memory
    /// access), written in place at issue and reused: indexed by `Stage::writes`,
    /// `PendingResult::slab` and the write-back events; `slab_live[i]` until committed.
    pub(crate) slab: Vec<Issued<W>>,
    pub(crate) slab_live: Vec<bool>,
    pub(crate) free_slab: Vec<usize>,
    pub(crate) event_seq: u64,
    /// Accesses the data memory completes later, by request id (ids are sequential: a
    /// fast integer hash, not the default SipHash).
    pub(crate) mem_pending: rustc_hash::FxHashMap<u64, crate::state::PendingMem>,
    pub(crate) next_mem_id: u64,
    pub(crate) next_age: u64,
    pub(crate) l1i: TagCache,
    /// Lines of the L1 I/C being fetched from L2 (`ready`: the cycle a line is in the L1).
    pub(crate) l1i_inflight: Vec<crate::frontend::LineFill>,
    pub(crate) shared_unit_free: Vec<u64>,
    /// The SM's shared-memory operand path of warpgroup MMAs is free from this time, in
    /// 1/`gmma_smem_bytes_per_cycle` cycles (bytes).
    pub(crate) gmma_smem_free: u64,
    /// The Tensor Memory Accelerator's copies in flight.
    pub tma: crate::tma::TmaUnit,
    pub(crate) code_base: u64,
    pub(crate) fp32_unit: Option<usize>,
    pub(crate) int_unit: Option<usize>,
    pub stats: CoreStats,
    pub cfg: CoreConfig,
}

/// A latch's results slot after its results were committed early (`issue.rs`): committing
/// it again does nothing.
pub(crate) const COMMITTED: usize = usize::MAX;

/// Initial capacity of an SM's in-flight instruction records (`Sm::slab`): four per warp
/// slot. The vector add keeps 129 to 255 records in flight per SM (its loads wait hundreds
/// of cycles): starting at two per slot, each SM's slab grew once, moving ~140 KB of records
/// (12 M instructions of `memcpy` in the whole run). Only the records used are touched.
const SLAB_START: usize = 4 * MAX_WARP_SLOTS;

/// An instruction of an SM's code by pc (`Sm::pc_sorted`), ordered by pc, then index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct PcIndex {
    pub(crate) pc: u64,
    /// Its index in the code.
    pub(crate) index: u32,
}

impl<W> Sm<W> {
    pub fn new(cfg: CoreConfig, mem: Box<dyn DataMemory>) -> Self {
        let max_warps = cfg.max_warps as usize;
        // The warp-slot masks have one bit per slot; presets allow at most 64 warps per SM
        // (`gpu.max_warps_per_sm`, config/src/limits.rs), so this holds for any loaded config.
        assert!(
            max_warps <= MAX_WARP_SLOTS,
            "{max_warps} warp slots per SM: at most {MAX_WARP_SLOTS}"
        );
        assert!(
            (cfg.subcores as usize) <= MAX_SUBCORES,
            "{} sub-cores per SM: at most {MAX_SUBCORES}",
            cfg.subcores
        );
        let subcores: Vec<SubCore> = (0..cfg.subcores as usize)
            .map(|_| SubCore {
                warps: Vec::new(),
                last_issued: None,
                last_issue_cycle: u64::MAX,
                l0i: TagCache::new(&cfg.l0i),
                sbuf: StreamBuffer::new(cfg.stream_buffer_entries),
                l1_queue: VecDeque::new(),
                demand: Vec::new(),
                fetches: VecDeque::new(),
                control: None,
                allocate: None,
                ports: PortSchedule::new(cfg.rf_banks, cfg.rf_read_ports_per_bank),
                rfc: Rfc::new(cfg.rf_banks, cfg.rfc_slots),
                unit_free: vec![0; cfg.units.len()],
                var_unit_free: vec![0; cfg.units.len()],
                mem_q: VecDeque::new(),
                addr_waiting: 0,
                mem_occupancy: 0,
                addr_free: 0,
                mem_wb_free: 0,
                var_q: VecDeque::new(),
                const_wait: None,
                l0c: TagCache::new(&cfg.l0c_fl),
                last_clock_issue: None,
                fixed_wb: [0; 64],
                fixed_wb_cycle: [u64::MAX; 64],
                two_level_pool: Vec::new(),
                rc_fill_free: 0,
            })
            .collect();
        let warps = (0..cfg.max_warps).map(|_| Warp::new()).collect();
        let shared_units = cfg
            .units
            .iter()
            .take(64)
            .enumerate()
            .filter(|(_, u)| u.shared_by_sm)
            .fold(0u64, |m, (i, _)| m | 1 << i);
        let fp32_unit = cfg.units.iter().position(|u| u.name == "fp32");
        let int_unit = cfg.units.iter().position(|u| u.name == "int");
        Sm {
            l1i: TagCache::new(&cfg.l1i),
            l1i_inflight: Vec::with_capacity(16),
            shared_unit_free: vec![0; cfg.units.len()],
            gmma_smem_free: 0,
            tma: crate::tma::TmaUnit::default(),
            cfg,
            code: std::sync::Arc::from(Vec::new()),
            pc_sorted: Vec::new(),
            code_base: 0,
            warps,
            iss: vec![WarpIssue::new(0); max_warps],
            sc_mask: [0; MAX_SUBCORES],
            age_rank: [0; MAX_WARP_SLOTS],
            rank_slot: [[0; MAX_WARP_SLOTS]; MAX_SUBCORES],
            sc_busy: [false; MAX_SUBCORES],
            l1i_queued: 0,
            sleep: [crate::sleep::SubCoreSleep::AWAKE; MAX_SUBCORES],
            wake_at: crate::sleep::NEVER,
            last_stall: crate::stats::StallReason::Idle,
            slot_sc: [0; MAX_WARP_SLOTS],
            skip_idle_subcores: true,
            slept_cycles: 0,
            quiet_skipped: 0,
            subcores,
            // Room for the instructions in flight of a loaded SM without regrowing (a record
            // holds a warp's addresses and results: copying them on growth was 1 % of a
            // loaded run).
            slab: Vec::with_capacity(SLAB_START),
            slab_live: Vec::with_capacity(SLAB_START),
            free_slab: Vec::with_capacity(SLAB_START),
            events: crate::events::EventQueue::default(),
            event_seq: 0,
            l1i_rr: 0,
            arb_free: 0,
            arb_front: [crate::mempipe::FrontRejection::NONE; MAX_SUBCORES],
            arb_rr: 0,
            mem,
            mem_pending: rustc_hash::FxHashMap::default(),
            next_mem_id: 0,
            next_age: 0,
            stats: CoreStats::default(),
            record: false,
            finished: Vec::new(),
            done_scratch: Vec::new(),
            mem_done_from: 0,
            uses_control_bits: true,
            now: 0,
            clock_origin: 0,
            started: false,
            staged: Vec::with_capacity(8),
            ready_buf: Vec::with_capacity(64),
            exited: 0,
            drained: 0,
            hot: [0; MAX_WARP_SLOTS],
            go: 0,
            waiting: 0,
            mem_head: 0,
            room: 0,
            used_warps: 0,
            fp32_unit,
            int_unit,
            shared_units,
        }
    }

    /// Install the code of the kernel that runs next. `code_base` is the kernel's
    /// instruction address (every kernel has its own address range).
    /// `has_control_bits`: false for kernels without SASS (hybrid mode).
    pub fn set_kernel(
        &mut self,
        code: impl Into<std::sync::Arc<[StaticInst]>>,
        code_base: u64,
        has_control_bits: bool,
    ) {
        self.code = code.into();
        self.pc_sorted.clear();
        if self
            .code
            .iter()
            .enumerate()
            .any(|(i, s)| s.pc != sassim_isa::INSTRUCTION_BYTES * i as u64)
        {
            self.pc_sorted
                .extend(self.code.iter().enumerate().map(|(i, s)| PcIndex {
                    pc: s.pc,
                    index: i as u32,
                }));
            self.pc_sorted.sort_unstable();
        }
        self.code_base = code_base;
        // A kernel without real control bits (a trace without its SASS) can only run with
        // scoreboards, whatever the mode says (the hybrid mode of MICRO'25 §6).
        self.uses_control_bits = match self.cfg.dependence {
            DepMode::Scoreboard => false,
            DepMode::ControlBits | DepMode::Hybrid => has_control_bits,
        };
    }

    pub fn now(&self) -> u64 {
        self.now
    }

    /// Sub-core cycles skipped asleep so far (`crate::sleep`; not a statistic of the model).
    pub fn slept_cycles(&self) -> u64 {
        self.slept_cycles
    }

    /// Bring an idle SM to GPU cycle `cycle` before warps are added to it (an idle SM is not
    /// ticked, so its clock stays behind). The first call also fixes the origin of the SM's
    /// clock counter and issue logs: the cycle its first CTA started. Returns false (and does
    /// nothing) when the SM is busy or already past `cycle`.
    pub fn start_at(&mut self, cycle: u64) -> bool {
        if !self.is_idle() || cycle < self.now {
            return cycle == self.now && self.started;
        }
        self.now = cycle;
        if !self.started {
            self.started = true;
            self.clock_origin = cycle;
        }
        true
    }

    /// The cycle the SM's clock counter counts from (see [`Sm::start_at`]).
    pub fn clock_origin(&self) -> u64 {
        self.clock_origin
    }

    /// The most requests the SM's data memory sends in its next cycle
    /// ([`DataMemory::max_sends_per_cycle`]).
    pub fn max_sends(&self) -> usize {
        self.mem.max_sends_per_cycle()
    }

    /// The SM's data memories (L1/shared), for the GPU-level memory system (which may
    /// change what completes when: the SM asks the memory again at its next cycle).
    pub fn data_memory(&mut self) -> &mut dyn DataMemory {
        self.mem_done_from = 0;
        self.mem.as_mut()
    }

    /// [`Sm::data_memory`] for sending the memory's queued requests only, which changes
    /// nothing [`DataMemory::completed`] returns (debug builds check it at the next cycle).
    pub fn data_memory_to_send(&mut self) -> &mut dyn DataMemory {
        self.mem.as_mut()
    }

    pub fn free_warp_slots(&self) -> usize {
        self.warps.len() - self.used_warps
    }

    /// Place a warp of a newly launched CTA. Returns its slot, or None when full.
    /// Warps are spread over sub-cores by slot (sub-core = slot % 4).
    pub fn add_warp(&mut self, exec_id: u32, start_pc: u64) -> Option<usize> {
        let slot = self.warps.iter().position(|w| !w.used)?;
        let sc = slot % self.subcores.len();
        // The slot's record is reset in place (its vectors keep their storage).
        self.warps[slot].restart(exec_id, sc, start_pc, !self.uses_control_bits);
        self.iss[slot] = WarpIssue::new(self.next_age);
        self.next_age += 1;
        self.slot_sc[slot] = sc as u8;
        self.hot[slot] = HOT_LIVE;
        self.sync_masks(slot);
        self.used_warps += 1;
        let rank = self.subcores[sc].warps.len();
        self.age_rank[slot] = rank as u8;
        self.rank_slot[sc][rank] = slot as u8;
        self.subcores[sc].warps.push(slot);
        self.sc_mask[sc] |= 1 << slot;
        Some(slot)
    }

    /// Place a warp into a specific slot (microbenchmarks' `.active_warps`).
    pub fn add_warp_at(&mut self, slot: usize, exec_id: u32, start_pc: u64) -> bool {
        if slot >= self.warps.len() || self.warps[slot].used {
            return false;
        }
        // Temporarily mark lower free slots used so add_warp picks `slot`.
        let holes: Vec<usize> = (0..slot).filter(|&i| !self.warps[i].used).collect();
        for &i in &holes {
            self.warps[i].used = true;
        }
        let r = self.add_warp(exec_id, start_pc);
        for &i in &holes {
            self.warps[i].used = false;
        }
        r == Some(slot)
    }

    /// Executor ids of warps that finished since the last call.
    /// What the warp with executor id `exec_id` waits for, in the timing model (deadlock
    /// reports): its next instruction, stall counter, dependence counters, in-flight work.
    pub fn describe_warp(&self, exec_id: u32) -> Option<String> {
        let (slot, w) = self
            .warps
            .iter()
            .enumerate()
            .find(|(_, w)| w.used && w.exec_id == exec_id)?;
        let head = match w.ib.front().map(|h| h.pc) {
            Some(pc) => match self.index_of(pc) {
                Some(i) => format!("{} at pc {:#x} ({})", self.code[i].op, pc, self.code[i].ctrl),
                None => format!("pc {pc:#x}"),
            },
            None => format!("fetching pc {:#x}", w.fetch_pc),
        };
        let v = &self.iss[slot];
        let sbs: Vec<String> = (0..DEP_COUNTERS)
            .filter(|&k| v.sb[k] != 0)
            .map(|k| format!("SB{k}={}", v.sb[k]))
            .collect();
        let sc = &self.subcores[w.subcore];
        // A sub-core whose warp waits for a constant line issues nothing for
        // `const_miss_switch_cycles`, then only other warps.
        let constant = match sc.const_wait {
            Some(crate::state::ConstWait {
                slot: ws,
                since,
                ready_at: ready,
                ..
            }) => {
                let whose = if ws == slot {
                    "this warp's".to_string()
                } else {
                    format!("warp slot {ws}'s")
                };
                let state = if ready == u64::MAX {
                    "not arrived".to_string()
                } else {
                    format!("arrived at cycle {ready}")
                };
                format!("; the sub-core waits for {whose} constant-cache miss since cycle {since} ({state})")
            }
            None => String::new(),
        };
        Some(format!(
            "SM slot {slot}: next {head}; counters [{}]; stall until {}; {} in flight; memory queue {} of sub-core {}{constant}",
            sbs.join(" "),
            v.stall_until,
            w.inflight_ops,
            sc.mem_occupancy,
            w.subcore
        ))
    }

    /// The warps finished since the last call, in the order they finished; the list keeps
    /// its storage for the next ones (no allocation per finished warp).
    pub fn drain_finished(&mut self) -> std::vec::Drain<'_, u32> {
        self.finished.drain(..)
    }

    /// Whether warps finished since the last [`Sm::drain_finished`].
    pub fn has_finished(&self) -> bool {
        !self.finished.is_empty()
    }

    /// How many warps finished since the last [`Sm::drain_finished`].
    pub fn finished_count(&self) -> usize {
        self.finished.len()
    }

    pub fn is_idle(&self) -> bool {
        self.used_warps == 0 && self.events.is_empty() && self.tma.is_empty()
    }

    pub fn active_warps(&self) -> usize {
        debug_assert_eq!(self.used_warps, self.warps.iter().filter(|w| w.used).count());
        self.used_warps
    }

    pub fn warp_log(&self, slot: usize) -> Option<&WarpLog> {
        self.warps.get(slot).map(|w| &w.log)
    }

    /// Issue logs of the warps (slot, log), when `record` is on.
    pub fn take_logs(&mut self) -> Vec<(usize, WarpLog)> {
        self.take_logs_with_ids()
            .into_iter()
            .map(|(s, _, l)| (s, l))
            .collect()
    }

    /// Issue logs with the executor warp id of each slot: (slot, warp id, log).
    pub fn take_logs_with_ids(&mut self) -> Vec<(usize, u32, WarpLog)> {
        self.warps
            .iter_mut()
            .enumerate()
            .filter(|(_, w)| !w.log.issues.is_empty())
            .map(|(i, w)| (i, w.exec_id, std::mem::take(&mut w.log)))
            .collect()
    }

    /// A free slab record for the executor to write an issued instruction into (its
    /// previous contents are left for the executor to overwrite).
    pub(crate) fn alloc_slab<E: Executor<Writes = W>>(&mut self) -> usize {
        let i = if let Some(i) = self.free_slab.pop() {
            i
        } else {
            self.slab.push(E::blank_record());
            self.slab_live.push(false);
            self.slab.len() - 1
        };
        self.slab_live[i] = true;
        i
    }

    /// Free slab record `i` without committing it.
    pub(crate) fn free_slab_record(&mut self, i: usize) {
        if self.slab_live.get(i).copied().unwrap_or(false) {
            self.slab_live[i] = false;
            self.free_slab.push(i);
        }
    }

    /// Commit the results stored in slab slot `i` (borrowed, not moved) and free the slot
    /// (nothing for [`COMMITTED`]).
    pub(crate) fn commit_slot<E: Executor<Writes = W>>(&mut self, ex: &mut E, id: u32, i: usize) {
        if self.slab_live.get(i).copied().unwrap_or(false) {
            ex.commit(id, &self.slab[i].writes);
            self.slab_live[i] = false;
            self.free_slab.push(i);
        }
    }

    pub(crate) fn schedule(&mut self, at: u64, e: Event) {
        self.event_seq += 1;
        self.events.push(at, self.event_seq, e);
    }

    pub(crate) fn sb_dec(&mut self, slot: usize, sb: Option<u8>) {
        if let Some(s) = sb {
            let v = &mut self.iss[slot];
            v.sb[s as usize % DEP_COUNTERS] = v.sb[s as usize % DEP_COUNTERS].saturating_sub(1);
            self.hot[slot] &= !HOT_DEP_WAIT;
            self.sync_masks(slot);
        }
    }

    /// Slab record `writes` of instruction `sidx` will be committed to executor warp `id`
    /// soon ([`Executor::prefetch_commit`]; nothing for an index without a record, such as
    /// [`COMMITTED`]).
    #[inline]
    pub(crate) fn prefetch_commit_of<E: Executor<Writes = W>>(
        &self,
        ex: &E,
        id: u32,
        sidx: usize,
        writes: usize,
    ) {
        if let (Some(rec), Some(st)) = (self.slab.get(writes), self.code.get(sidx)) {
            ex.prefetch_commit(id, &rec.writes, &st.writes);
        }
    }

    /// The memory instruction `sidx` of warp slot `slot`, whose record is `writes`, has its
    /// data: its write-back commits the record a few cycles on.
    #[inline]
    fn prefetch_mem_result<E: Executor<Writes = W>>(&self, ex: &E, slot: usize, sidx: usize, writes: usize) {
        self.prefetch_commit_of(ex, self.warps[slot].exec_id, sidx, writes);
    }

    /// Advance the SM by one core cycle.
    pub fn tick<E: Executor<Writes = W>>(&mut self, ex: &mut E) -> Result<(), String> {
        let now = self.now;
        self.process_events(ex, now);
        if now >= self.mem_done_from {
            let mut done = std::mem::take(&mut self.done_scratch);
            self.mem.completed(now, &mut done);
            self.mem_done_from = self.mem.done_from();
            for &id in &done {
                if !self.tma.is_empty() && self.tma.completed(id) {
                    continue;
                }
                if let Some(p) = self.mem_pending.remove(&id) {
                    self.touch_slot(p.slot);
                    self.prefetch_mem_result(ex, p.slot, p.sidx, p.writes);
                    self.finish_mem(p.slot, p.sidx, p.writes, now);
                }
            }
            done.clear();
            self.done_scratch = done;
        } else {
            debug_assert!(
                self.mem.done_from() > now,
                "memory completion hint kept by the SM"
            );
        }
        if self.quiet() {
            // Nothing can move this cycle: the issue stage of each sub-core finds what its
            // fast path finds (no warp that is live and not waiting), and every other stage,
            // the arbiters and retirement have nothing to do (see `quiet`). The engines skip
            // runs of such cycles without calling `tick` (`Sm::quiet_until`).
            self.quiet_cycles(1);
            return Ok(());
        }
        for sc in 0..self.subcores.len() {
            self.subcore_cycle(ex, sc, now)?;
        }
        self.mem_arbiter(now);
        if !self.tma.is_empty() {
            self.tma_stage(ex, now)?;
            self.touch_all();
        }
        self.l1i_arbiter(now);
        // Counter increments made in Control become visible from the next cycle (rule 9).
        for i in 0..self.staged.len() {
            let slot = self.staged[i];
            self.touch_slot(slot);
            let (w, v) = (&mut self.warps[slot], &mut self.iss[slot]);
            for k in 0..DEP_COUNTERS {
                v.sb[k] = v.sb[k].saturating_add(w.sb_staged[k]);
                w.sb_staged[k] = 0;
            }
        }
        self.staged.clear();
        if self.drained != 0 {
            self.retire_warps(ex);
        }
        self.advance_clock(1);
        Ok(())
    }

    /// Whether no warp of sub-core `sc` is live and not waiting on its dependence counters,
    /// and none can fetch. With an empty pipeline (`sc_busy` false), its issue stage then
    /// only counts the stall of [`Sm::count_blocked`] (its fast path; the two-level
    /// scheduler updates its pool first, so it never is blocked) and its fetch stage does
    /// nothing.
    #[inline]
    pub(crate) fn blocked(&self, sc: usize) -> bool {
        let m = self.sc_mask[sc];
        (self.go | self.room) & m == 0 && self.cfg.scheduler != crate::config::SchedPolicy::TwoLevel
    }

    /// The stall a blocked sub-core's issue stage counts: its warps wait on their dependence
    /// counters, or it has no live warp.
    #[inline]
    pub(crate) fn count_blocked(&mut self, sc: usize) {
        let reason = self.blocked_reason(sc);
        self.count_stall(reason);
    }

    /// What [`Sm::count_blocked`] counts for sub-core `sc`.
    #[inline]
    pub(crate) fn blocked_reason(&self, sc: usize) -> crate::stats::StallReason {
        if self.waiting & self.sc_mask[sc] != 0 {
            crate::stats::StallReason::DependenceCounters
        } else {
            crate::stats::StallReason::Idle
        }
    }

    /// Whether nothing in the SM can move in the rest of this cycle (asked after its due
    /// events and memory completions): no warp is live and not waiting on its dependence
    /// counters (`go`), none can fetch (`room`), no sub-core's pipeline holds work
    /// (`sc_busy`: then the pipeline stages and both arbiters skip it), no TMA copy, no
    /// counter increment staged, no exited warp that can retire (one whose memory operations
    /// are all back: with every pipeline empty, nothing else holds it, `retire_warps`). The
    /// two-level scheduler updates its pool every cycle, so it never is. On a loaded GPU most
    /// SM cycles are such cycles (every warp waits for memory, or has exited and waits for its
    /// stores).
    #[inline]
    pub(crate) fn quiet(&self) -> bool {
        self.go == 0
            && self.room == 0
            && !self.sc_busy.contains(&true)
            && self.tma.is_empty()
            && self.staged.is_empty()
            && self.cfg.scheduler != crate::config::SchedPolicy::TwoLevel
            && self.drained == 0
    }

    /// Debug check of the `exited` and `drained` masks against the warp records.
    fn assert_exit_masks(&self) {
        for (slot, w) in self.warps.iter().enumerate() {
            let b = 1u64 << slot;
            let exited = w.used && w.exited && !w.finished;
            debug_assert_eq!(self.exited & b != 0, exited, "slot {slot}: stale exited bit");
            debug_assert_eq!(
                self.drained & b != 0,
                exited && w.inflight_ops == 0,
                "slot {slot}: stale drained bit"
            );
        }
    }

    fn process_events<E: Executor<Writes = W>>(&mut self, ex: &mut E, now: u64) {
        while let Some(e) = self.events.pop_due(now) {
            match e {
                Event::ILine { sc, .. } => self.touch_sc(sc),
                Event::Writeback { slot, .. }
                | Event::ReadDone { slot, .. }
                | Event::MemDone { slot, .. }
                | Event::FixedDone { slot, .. } => self.touch_slot(slot),
            }
            match e {
                Event::ReadDone { slot, sidx } => {
                    let rs = self.code[sidx].ctrl.read_sb;
                    if self.uses_control_bits {
                        self.sb_dec(slot, rs);
                    } else {
                        self.scoreboard_read_done(slot, sidx);
                    }
                }
                Event::FixedDone { slot, sidx } => self.release_write(slot, sidx),
                Event::MemDone { slot, sidx, writes } => {
                    self.prefetch_mem_result(ex, slot, sidx, writes);
                    self.finish_mem(slot, sidx, writes, now)
                }
                Event::Writeback { slot, sidx, writes } => {
                    // A load colliding with a fixed-latency result in the same bank waits.
                    let sc = self.slot_sc[slot] as usize;
                    let bank = self.code[sidx].writes.iter().find_map(|r| match r {
                        ArchReg::R(i) => Some(crate::inst::bank_of(u32::from(*i), self.cfg.rf_banks)),
                        _ => None,
                    });
                    let ring = (now % 64) as usize;
                    let s = &self.subcores[sc];
                    if let Some(b) = bank {
                        if s.fixed_wb_cycle[ring] == now && s.fixed_wb[ring] & (1 << b) != 0 {
                            self.stats.load_wb_conflicts += 1;
                            let d = self.cfg.load_wb_conflict_delay.max(1) as u64;
                            self.schedule(now + d, e);
                            continue;
                        }
                    }
                    // Fixed-latency results already written back precede this one in the
                    // register file (they are otherwise committed lazily at the next issue).
                    let id = self.warps[slot].exec_id;
                    let mut i = 0;
                    while i < self.warps[slot].pending.len() {
                        let p = self.warps[slot].pending[i];
                        if p.visible_fixed <= now {
                            self.warps[slot].pending.remove(i);
                            self.commit_slot(ex, id, p.slab);
                        } else {
                            i += 1;
                        }
                    }
                    self.commit_slot(ex, id, writes);
                    self.release_write(slot, sidx);
                    if self.code[sidx].mem.is_some_and(|m| m.indexed_const) {
                        self.schedule(now, Event::ReadDone { slot, sidx });
                    }
                    let w = &mut self.warps[slot];
                    w.inflight_ops = w.inflight_ops.saturating_sub(1);
                    if w.inflight_ops == 0 {
                        self.drained |= self.exited & 1 << slot;
                    }
                }
                Event::ILine { sc, line } if line & CONST_LINE_TAG != 0 => {
                    // A constant line for the sub-core's L0 FL cache: the waiting warp may
                    // issue from now on.
                    if let Some(cw) = &mut self.subcores[sc].const_wait {
                        if cw.ready_at == u64::MAX {
                            cw.ready_at = now;
                        }
                    }
                }
                Event::ILine { sc, line } => self.instruction_line_arrived(sc, line, now),
            }
        }
    }

    /// An instruction line reached sub-core `sc` (from the L1 I-cache): into its stream
    /// buffer or L0 I-cache, and the warps waiting for it may fetch. Out of line: a few
    /// times per warp, against the events of every instruction.
    #[inline(never)]
    fn instruction_line_arrived(&mut self, sc: usize, line: u64, now: u64) {
        let s = &mut self.subcores[sc];
        if let Some(p) = s.sbuf.find(line) {
            s.sbuf.lines[p].ready = now;
        }
        s.demand.retain(|d| d.line != line || d.ready > now);
        if s.sbuf.find(line).is_none() {
            s.l0i.fill(line);
        }
        for k in 0..s.warps.len() {
            let slot = self.subcores[sc].warps[k];
            if self.warps[slot].fetch_wait_line == Some(line) {
                self.warps[slot].fetch_wait_line = None;
                self.sync_room(slot);
            }
        }
    }

    /// Whether execution unit `unit` is shared by the SM's sub-cores (`shared_by_sm`; false
    /// for an index that is no unit).
    #[inline]
    pub(crate) fn unit_shared(&self, unit: usize) -> bool {
        if unit < 64 {
            self.shared_units >> unit & 1 != 0
        } else {
            self.cfg.units.get(unit).is_some_and(|u| u.shared_by_sm)
        }
    }

    pub(crate) fn release_write(&mut self, slot: usize, sidx: usize) {
        if self.uses_control_bits {
            let ws = self.code[sidx].ctrl.write_sb;
            self.sb_dec(slot, ws);
        } else {
            self.scoreboard_write_done(slot, sidx);
        }
    }

    /// Recompute the `go`/`waiting`/`room` bits of `slot` from its `HOT_*` flags (after any
    /// change of `HOT_LIVE`, `HOT_DEP_WAIT` or `HOT_NO_ROOM`).
    #[inline]
    pub(crate) fn sync_masks(&mut self, slot: usize) {
        self.touch_slot(slot);
        let h = self.hot[slot];
        let b = 1u64 << slot;
        let live = h & HOT_LIVE != 0;
        let waits = h & HOT_DEP_WAIT != 0;
        if live && !waits {
            self.go |= b;
        } else {
            self.go &= !b;
        }
        if live && waits {
            self.waiting |= b;
        } else {
            self.waiting &= !b;
        }
        if live && h & HOT_NO_ROOM == 0 {
            self.room |= b;
        } else {
            self.room &= !b;
        }
    }

    /// Copy the head of `slot`'s instruction buffer into its [`WarpIssue`] (after any
    /// change of the buffer), with its static instruction: looked up only when the head's
    /// pc differs from the last head's (`head_idx` is `index_of(head_pc)` unless `NO_HEAD`).
    #[inline]
    pub(crate) fn sync_head(&mut self, slot: usize) {
        self.touch_slot(slot);
        let Some(&crate::state::IbEntry { pc, ready }) = self.warps[slot].ib.front() else {
            self.iss[slot].head_ready = u64::MAX;
            return;
        };
        let v = &self.iss[slot];
        let idx = if pc == v.head_pc && v.head_idx != NO_HEAD {
            v.head_idx
        } else {
            self.index_of(pc).map_or(NO_HEAD, |i| i as u32)
        };
        let v = &mut self.iss[slot];
        v.head_pc = pc;
        v.head_ready = ready;
        v.head_idx = idx;
        let mem = idx == NO_HEAD || self.code[idx as usize].mem.is_some();
        self.mem_head = self.mem_head & !(1u64 << slot) | u64::from(mem) << slot;
    }

    /// Recompute `HOT_NO_ROOM` of `slot` after its instruction buffer, fetches in flight or
    /// I-cache wait changed.
    pub(crate) fn sync_room(&mut self, slot: usize) {
        let w = &self.warps[slot];
        let full = w.fetch_wait_line.is_some() || w.ib.len() as u32 + w.inflight_fetch >= self.cfg.ib_entries;
        if full {
            self.hot[slot] |= HOT_NO_ROOM;
        } else {
            self.hot[slot] &= !HOT_NO_ROOM;
        }
        self.sync_masks(slot);
    }

    /// The line of constant `bank`/`off` in the shared L1 instruction/constant cache.
    pub(crate) fn const_l1_line(&self, bank: u32, off: u64) -> u64 {
        CONST_LINE_TAG | (((bank as u64) << 32 | (off & 0xffff_ffff)) / self.cfg.l1i.line_bytes.max(1) as u64)
    }

    pub(crate) fn index_of(&self, pc: u64) -> Option<usize> {
        let i = (pc / sassim_isa::INSTRUCTION_BYTES) as usize;
        match self.code.get(i) {
            Some(s) if s.pc == pc => Some(i),
            _ => {
                // the first entry with this pc, as the linear search it replaces
                let k = self.pc_sorted.partition_point(|e| e.pc < pc);
                match self.pc_sorted.get(k) {
                    Some(e) if e.pc == pc => Some(e.index as usize),
                    _ => None,
                }
            }
        }
    }

    /// Retire the exited warps with nothing in flight (`drained`), in slot order: those not
    /// held in their sub-core's Control or Allocate latch.
    fn retire_warps<E: Executor<Writes = W>>(&mut self, ex: &mut E) {
        if cfg!(debug_assertions) {
            self.assert_exit_masks();
        }
        let mut bits = self.drained;
        while bits != 0 {
            let slot = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let sc = self.slot_sc[slot] as usize;
            let s = &self.subcores[sc];
            if s.control.is_some_and(|c| c.slot == slot) || s.allocate.is_some_and(|c| c.slot == slot) {
                continue;
            }
            let id = self.warps[slot].exec_id;
            while let Some(p) = self.warps[slot].pending.pop() {
                self.commit_slot(ex, id, p.slab);
            }
            self.exited &= !(1 << slot);
            self.drained &= !(1 << slot);
            let w = &mut self.warps[slot];
            w.finished = true;
            w.used = false;
            self.hot[slot] = 0;
            self.sync_masks(slot);
            self.used_warps -= 1;
            self.subcores[sc].warps.retain(|&x| x != slot);
            for (rank, &w) in self.subcores[sc].warps.iter().enumerate() {
                self.age_rank[w] = rank as u8;
                self.rank_slot[sc][rank] = w as u8;
            }
            self.sc_mask[sc] &= !(1 << slot);
            self.subcores[sc].two_level_pool.retain(|&x| x != slot);
            if self.subcores[sc].last_issued == Some(slot) {
                self.subcores[sc].last_issued = None;
            }
            self.finished.push(id);
        }
    }
}
