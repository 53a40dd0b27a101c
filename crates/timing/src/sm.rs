//! One SM: four sub-cores with front-end, issue, Control/Allocate, register file,
//! execution units and memory units, plus the SM-shared L1 I/C cache and memory
//! arbiter. The per-cycle order of work is described in docs/architecture.md.

use crate::config::{CoreConfig, DepMode, SchedPolicy, StallExpiry};
use crate::exec::{Executor, Issued, MemAccess};
use crate::frontend::{StreamBuffer, TagCache};
use crate::inst::{MemKind, MemSpace, Special, StaticInst};
use crate::mem::{Access, DataMemory, MemReq};
use crate::regfile::{PortSchedule, Rfc};
use crate::stats::{CoreStats, StallReason};
use sassim_isa::ArchReg;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Per-warp records kept when `record` is on (microbenchmarks).
#[derive(Debug, Clone, Default)]
pub struct WarpLog {
    pub issues: Vec<(u64, u64, String)>,
    pub clocks: Vec<u64>,
    /// (pc, hit per source slot)
    pub rfc: Vec<(u64, Vec<bool>)>,
}

struct Warp<W> {
    used: bool,
    exec_id: u32,
    age: u64,
    subcore: usize,
    exited: bool,
    finished: bool,
    ib: VecDeque<(u64, u64)>,
    inflight_fetch: u32,
    epoch: u32,
    fetch_pc: u64,
    fetch_wait_line: Option<u64>,
    stall_until: u64,
    no_issue_at: u64,
    sb: [u8; 6],
    sb_staged: [u8; 6],
    depbar: Option<(u64, u8, u8, u8)>,
    /// (visible to fixed-latency consumers, visible to variable-latency consumers, writes)
    pending: Vec<(u64, u64, W)>,
    inflight_ops: u32,
    // Scoreboards (DepMode::Scoreboard): pending writes and in-flight consumers per register.
    sb_write: Vec<u8>,
    sb_read: Vec<u8>,
    log: WarpLog,
}

fn reg_index(r: &ArchReg) -> usize {
    match *r {
        ArchReg::R(i) => i as usize,
        ArchReg::UR(i) => 256 + i as usize,
        ArchReg::P(i) => 320 + i as usize,
        ArchReg::UP(i) => 328 + i as usize,
        ArchReg::B(i) => 336 + (i as usize & 15),
    }
}
const SB_REGS: usize = 352;

impl<W> Warp<W> {
    fn new() -> Self {
        Warp {
            used: false,
            exec_id: 0,
            age: 0,
            subcore: 0,
            exited: false,
            finished: false,
            ib: VecDeque::with_capacity(4),
            inflight_fetch: 0,
            epoch: 0,
            fetch_pc: 0,
            fetch_wait_line: None,
            stall_until: 0,
            no_issue_at: u64::MAX,
            sb: [0; 6],
            sb_staged: [0; 6],
            depbar: None,
            pending: Vec::with_capacity(8),
            inflight_ops: 0,
            sb_write: Vec::new(),
            sb_read: Vec::new(),
            log: WarpLog::default(),
        }
    }
    /// PC of the oldest instruction fetched or to be fetched.
    fn stream_head(&self, inflight: &VecDeque<Fetch>, slot: usize) -> u64 {
        if let Some(&(pc, _)) = self.ib.front() {
            return pc;
        }
        inflight
            .iter()
            .filter(|f| f.slot == slot && f.epoch == self.epoch)
            .map(|f| f.pc)
            .min()
            .unwrap_or(self.fetch_pc)
    }
}

#[derive(Debug, Clone, Copy)]
struct Fetch {
    slot: usize,
    pc: u64,
    epoch: u32,
    arrive: u64,
}

#[derive(Debug, Clone, Copy)]
struct Stage {
    slot: usize,
    sidx: usize,
    issue: u64,
    writes: usize,
    entered: u64,
}

#[derive(Debug, Clone)]
struct MemEntry {
    st: Stage,
    arrive: u64,
    /// Cycle at which it may go to the SM arbiter (after address calculation).
    arb_ready: Option<u64>,
    access: Option<MemAccess>,
}

struct SubCore {
    warps: Vec<usize>,
    last_issued: Option<usize>,
    last_issue_cycle: u64,
    l0i: TagCache,
    sbuf: StreamBuffer,
    /// Lines requested from the L1 I-cache: (line, prefetch)
    l1_queue: VecDeque<u64>,
    /// Demand lines in flight: (line, ready)
    demand: Vec<(u64, u64)>,
    fetches: VecDeque<Fetch>,
    control: Option<Stage>,
    allocate: Option<Stage>,
    ports: PortSchedule,
    rfc: Rfc,
    unit_free: Vec<u64>,
    mem_q: VecDeque<MemEntry>,
    mem_occupancy: u32,
    addr_free: u64,
    var_q: VecDeque<Stage>,
    const_wait: Option<(usize, u64, u64, u64)>,
    l0c: TagCache,
    last_clock_issue: Option<u64>,
    /// Banks written by fixed-latency results per cycle (ring of 64).
    fixed_wb: [u8; 64],
    fixed_wb_cycle: [u64; 64],
    two_level_pool: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// Write-back of a variable-latency or memory instruction.
    Writeback { slot: usize, sidx: usize, writes: usize },
    /// Sources of an instruction read: decrement its read counter.
    ReadDone { slot: usize, sidx: usize },
    /// A memory access issued to `DataMemory` completed.
    MemDone { slot: usize, sidx: usize, writes: usize },
    /// Fixed-latency write counter / scoreboard release.
    FixedDone { slot: usize, sidx: usize },
    /// I-cache line arrives at sub-core `sc`.
    ILine { sc: usize, line: u64 },
}

/// A simulated SM.
pub struct Sm<W> {
    pub cfg: CoreConfig,
    code: Vec<StaticInst>,
    code_base: u64,
    warps: Vec<Warp<W>>,
    subcores: Vec<SubCore>,
    slab: Vec<Option<W>>,
    /// Memory accesses of in-flight instructions, indexed like `slab`.
    accesses: Vec<Option<MemAccess>>,
    free_slab: Vec<usize>,
    events: BinaryHeap<Reverse<(u64, u64, Event)>>,
    event_seq: u64,
    l1i: TagCache,
    l1i_rr: usize,
    shared_unit_free: Vec<u64>,
    arb_free: u64,
    arb_rr: usize,
    mem: Box<dyn DataMemory>,
    mem_pending: Vec<(u64, usize, usize, usize)>,
    next_mem_id: u64,
    next_age: u64,
    pub stats: CoreStats,
    pub record: bool,
    finished: Vec<u32>,
    uses_control_bits: bool,
    now: u64,
    fp32_unit: Option<usize>,
    int_unit: Option<usize>,
}

impl<W> Sm<W> {
    pub fn new(cfg: CoreConfig, mem: Box<dyn DataMemory>) -> Self {
        let subcores = (0..cfg.subcores as usize)
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
                mem_q: VecDeque::new(),
                mem_occupancy: 0,
                addr_free: 0,
                var_q: VecDeque::new(),
                const_wait: None,
                l0c: TagCache::new(&cfg.l0c_fl),
                last_clock_issue: None,
                fixed_wb: [0; 64],
                fixed_wb_cycle: [u64::MAX; 64],
                two_level_pool: Vec::new(),
            })
            .collect();
        let warps = (0..cfg.max_warps).map(|_| Warp::new()).collect();
        let fp32_unit = cfg.units.iter().position(|u| u.name == "fp32");
        let int_unit = cfg.units.iter().position(|u| u.name == "int");
        Sm {
            l1i: TagCache::new(&cfg.l1i),
            shared_unit_free: vec![0; cfg.units.len()],
            cfg,
            code: Vec::new(),
            code_base: 0,
            warps,
            subcores,
            slab: Vec::new(),
            accesses: Vec::new(),
            free_slab: Vec::new(),
            events: BinaryHeap::new(),
            event_seq: 0,
            l1i_rr: 0,
            arb_free: 0,
            arb_rr: 0,
            mem,
            mem_pending: Vec::new(),
            next_mem_id: 0,
            next_age: 0,
            stats: CoreStats::default(),
            record: false,
            finished: Vec::new(),
            uses_control_bits: true,
            now: 0,
            fp32_unit,
            int_unit,
        }
    }

    /// Install the code of the kernel that runs next. `code_base` is the kernel's
    /// instruction address (every kernel has its own address range).
    /// `has_control_bits`: false for kernels without SASS (hybrid mode).
    pub fn set_kernel(&mut self, code: Vec<StaticInst>, code_base: u64, has_control_bits: bool) {
        self.code = code;
        self.code_base = code_base;
        self.uses_control_bits = match self.cfg.dependence {
            DepMode::ControlBits => true,
            DepMode::Scoreboard => false,
            DepMode::Hybrid => has_control_bits,
        };
    }

    pub fn now(&self) -> u64 {
        self.now
    }

    pub fn free_warp_slots(&self) -> usize {
        self.warps.iter().filter(|w| !w.used).count()
    }

    /// Place a warp of a newly launched CTA. Returns its slot, or None when full.
    /// Warps are spread over sub-cores by slot (sub-core = slot % 4).
    pub fn add_warp(&mut self, exec_id: u32, start_pc: u64) -> Option<usize> {
        let slot = self.warps.iter().position(|w| !w.used)?;
        let sc = slot % self.subcores.len();
        let mut w = Warp::new();
        w.used = true;
        w.exec_id = exec_id;
        w.age = self.next_age;
        self.next_age += 1;
        w.subcore = sc;
        w.fetch_pc = start_pc;
        if !self.uses_control_bits {
            w.sb_write = vec![0; SB_REGS];
            w.sb_read = vec![0; SB_REGS];
        }
        self.warps[slot] = w;
        self.subcores[sc].warps.push(slot);
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
    pub fn take_finished(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.finished)
    }

    pub fn is_idle(&self) -> bool {
        self.warps.iter().all(|w| !w.used) && self.events.is_empty()
    }

    pub fn active_warps(&self) -> usize {
        self.warps.iter().filter(|w| w.used).count()
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

    fn store(&mut self, w: W) -> usize {
        if let Some(i) = self.free_slab.pop() {
            self.slab[i] = Some(w);
            i
        } else {
            self.slab.push(Some(w));
            self.accesses.push(None);
            self.slab.len() - 1
        }
    }

    fn take(&mut self, i: usize) -> Option<W> {
        let w = self.slab.get_mut(i).and_then(Option::take);
        if w.is_some() {
            self.free_slab.push(i);
        }
        w
    }

    fn schedule(&mut self, at: u64, e: Event) {
        self.event_seq += 1;
        self.events.push(Reverse((at, self.event_seq, e)));
    }

    fn sb_dec(&mut self, slot: usize, sb: Option<u8>) {
        if let Some(s) = sb {
            let c = &mut self.warps[slot].sb[s as usize % 6];
            *c = c.saturating_sub(1);
        }
    }

    /// Advance the SM by one core cycle.
    pub fn tick<E: Executor<Writes = W>>(&mut self, ex: &mut E) -> Result<(), String> {
        let now = self.now;
        self.process_events(ex, now);
        self.mem.tick(now);
        let mut done = Vec::new();
        self.mem.completed(now, &mut done);
        for id in done {
            if let Some(p) = self.mem_pending.iter().position(|m| m.0 == id) {
                let (_, slot, sidx, writes) = self.mem_pending.swap_remove(p);
                self.finish_mem(slot, sidx, writes, now);
            }
        }
        for sc in 0..self.subcores.len() {
            self.subcores[sc].ports.advance(now);
            self.allocate_stage(sc, now);
            self.var_read_stage(sc, now);
            self.mem_addr_stage(sc, now);
            self.control_stage(sc, now);
            self.decode_stage(sc, now);
            self.issue_stage(ex, sc, now)?;
            self.fetch_stage(ex, sc, now);
        }
        self.mem_arbiter(now);
        self.l1i_arbiter(now);
        for w in self.warps.iter_mut().filter(|w| w.used) {
            for k in 0..6 {
                w.sb[k] = w.sb[k].saturating_add(w.sb_staged[k]);
                w.sb_staged[k] = 0;
            }
        }
        self.retire_warps(ex);
        self.now += 1;
        self.stats.cycles = self.now;
        Ok(())
    }

    fn process_events<E: Executor<Writes = W>>(&mut self, ex: &mut E, now: u64) {
        while let Some(Reverse((at, _, e))) = self.events.peek().copied() {
            if at > now {
                break;
            }
            self.events.pop();
            match e {
                Event::ReadDone { slot, sidx } => {
                    let rs = self.code[sidx].ctrl.read_sb;
                    if self.uses_control_bits {
                        self.sb_dec(slot, rs);
                    } else {
                        let reads = self.code[sidx].reads.clone();
                        let w = &mut self.warps[slot];
                        for r in &reads {
                            let c = &mut w.sb_read[reg_index(r)];
                            *c = c.saturating_sub(1);
                        }
                    }
                }
                Event::FixedDone { slot, sidx } => self.release_write(slot, sidx),
                Event::MemDone { slot, sidx, writes } => self.finish_mem(slot, sidx, writes, now),
                Event::Writeback { slot, sidx, writes } => {
                    // A load colliding with a fixed-latency result in the same bank waits.
                    let sc = self.warps[slot].subcore;
                    let bank = self.code[sidx].writes.iter().find_map(|r| match r {
                        ArchReg::R(i) => Some(*i as u32 % self.cfg.rf_banks),
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
                    if let Some(w) = self.take(writes) {
                        ex.commit(self.warps[slot].exec_id, w);
                    }
                    self.release_write(slot, sidx);
                    if self.code[sidx].mem.is_some_and(|m| m.indexed_const) {
                        self.schedule(now, Event::ReadDone { slot, sidx });
                    }
                    let w = &mut self.warps[slot];
                    w.inflight_ops = w.inflight_ops.saturating_sub(1);
                }
                Event::ILine { sc, line } => {
                    let s = &mut self.subcores[sc];
                    if let Some(p) = s.sbuf.find(line) {
                        s.sbuf.lines[p].1 = now;
                    }
                    s.demand.retain(|d| d.0 != line || d.1 > now);
                    if s.sbuf.find(line).is_none() {
                        s.l0i.fill(line);
                    }
                    for &slot in &s.warps {
                        if self.warps[slot].fetch_wait_line == Some(line) {
                            self.warps[slot].fetch_wait_line = None;
                        }
                    }
                }
            }
        }
    }

    fn release_write(&mut self, slot: usize, sidx: usize) {
        if self.uses_control_bits {
            let ws = self.code[sidx].ctrl.write_sb;
            self.sb_dec(slot, ws);
        } else {
            let writes = self.code[sidx].writes.clone();
            let w = &mut self.warps[slot];
            for r in &writes {
                let c = &mut w.sb_write[reg_index(r)];
                *c = c.saturating_sub(1);
            }
        }
    }

    fn finish_mem(&mut self, slot: usize, sidx: usize, writes: usize, ready: u64) {
        let st = &self.code[sidx];
        let m = match st.mem {
            Some(m) => m,
            None => return,
        };
        let mp = &self.cfg.mem;
        let bits = m.bits * self.cfg.warp_size;
        let wb_cycles = match (m.kind, m.space) {
            (MemKind::Store, _) => 0,
            (MemKind::Ldgsts, _) => mp.ldgsts_smem_fill as u64,
            (_, MemSpace::Shared | MemSpace::Const) => {
                (bits.div_ceil(mp.shared_to_rf_bits_per_cycle.max(1))).max(mp.wb_min_cycles) as u64
            }
            _ => (bits.div_ceil(mp.mem_to_rf_bits_per_cycle.max(1))).max(mp.wb_min_cycles) as u64,
        };
        self.schedule(ready + wb_cycles, Event::Writeback { slot, sidx, writes });
    }

    fn allocate_stage(&mut self, sc: usize, now: u64) {
        let Some(st) = self.subcores[sc].allocate else {
            return;
        };
        if st.entered >= now {
            return;
        }
        let sidx = st.sidx;
        let banks = self.cfg.rf_banks;
        let warp = self.warps[st.slot].exec_id;
        let read_cycles = self.cfg.rf_read_cycles;
        let mut need = [0u8; 8];
        let inst = &self.code[sidx];
        // Peek the RFC without changing it: which reads need a port.
        let s = &mut self.subcores[sc];
        if !self.cfg.rf_ideal {
            let mut probe = s.rfc.clone();
            for (k, b, r) in inst.bank_reads(banks) {
                let reuse = inst.srcs[k].reuse;
                let hit = self.cfg.rfc_enabled && probe.read(warp, b, k, r, reuse);
                if !hit {
                    need[b as usize] += 1;
                }
            }
            // An operand costs warp-width / port-width port-cycles; the reads take at least
            // `read_cycles` and longer when one bank needs more port-cycles than that.
            let per_op = (self.cfg.warp_size * 32).div_ceil(self.cfg.rf_port_width_bits.max(32)) as u8;
            let ports = self.cfg.rf_read_ports_per_bank.max(1);
            let mut window = read_cycles;
            for n in need.iter_mut().take(banks as usize) {
                *n = n.saturating_mul(per_op);
                window = window.max((*n as u32).div_ceil(ports));
            }
            if !s.ports.fits(now + 1, window, &need[..banks as usize]) {
                self.stats.allocate_stall_cycles += 1;
                return;
            }
            s.ports.reserve(now + 1, window, &need[..banks as usize]);
        }
        let mut hits = Vec::new();
        for (k, b, r) in inst.bank_reads(banks) {
            let reuse = inst.srcs[k].reuse;
            let hit = self.cfg.rfc_enabled && s.rfc.read(warp, b, k, r, reuse);
            self.stats.rfc_reads += 1;
            if hit {
                self.stats.rfc_hits += 1;
            } else {
                self.stats.rf_bank_reads += 1;
            }
            if self.record {
                if hits.len() <= k {
                    hits.resize(k + 1, false);
                }
                hits[k] = hits[k] || hit;
            }
        }
        s.allocate = None;
        let delay = now.saturating_sub(st.issue + 2);
        let lat = inst.latency as u64;
        let vis_fixed = st.issue + lat + delay;
        let vis_var = vis_fixed + self.cfg.var_consumer_extra_cycles as u64;
        // Bank of the destination for load write-back arbitration.
        for r in &inst.writes {
            if let ArchReg::R(i) = r {
                let ring = (vis_fixed % 64) as usize;
                if s.fixed_wb_cycle[ring] != vis_fixed {
                    s.fixed_wb_cycle[ring] = vis_fixed;
                    s.fixed_wb[ring] = 0;
                }
                s.fixed_wb[ring] |= 1 << (*i as u32 % banks).min(7);
            }
        }
        let has_read_sb = inst.ctrl.read_sb.is_some() || !self.uses_control_bits;
        let has_write = inst.ctrl.write_sb.is_some() || !self.uses_control_bits;
        let pc = inst.pc;
        if self.record {
            let n = inst.srcs.len();
            hits.resize(n, false);
            self.warps[st.slot].log.rfc.push((pc, hits));
        }
        if has_read_sb {
            self.schedule(now + read_cycles as u64, Event::ReadDone { slot: st.slot, sidx });
        }
        if has_write {
            self.schedule(vis_fixed, Event::FixedDone { slot: st.slot, sidx });
        }
        if let Some(w) = self.take(st.writes) {
            self.warps[st.slot].pending.push((vis_fixed, vis_var, w));
        }
    }

    fn var_read_stage(&mut self, sc: usize, now: u64) {
        let Some(st) = self.subcores[sc].var_q.front().copied() else {
            return;
        };
        if st.entered > now {
            return;
        }
        let banks = self.cfg.rf_banks;
        let read_cycles = self.cfg.rf_read_cycles;
        let inst = &self.code[st.sidx];
        let mut need = [0u8; 8];
        for (_, b, _) in inst.bank_reads(banks) {
            need[b as usize] += 1;
        }
        let s = &mut self.subcores[sc];
        if !self.cfg.rf_ideal {
            if !s.ports.fits(now, read_cycles, &need[..banks as usize]) {
                return;
            }
            s.ports.reserve(now, read_cycles, &need[..banks as usize]);
        }
        s.var_q.pop_front();
        let unit = inst.unit;
        let lat = inst.latency as u64;
        let mut start = now + read_cycles as u64;
        if self.cfg.units.get(unit).is_some_and(|u| u.shared_by_sm) {
            start = start.max(self.shared_unit_free[unit]);
            self.shared_unit_free[unit] = start + self.cfg.units[unit].initiation_interval.max(1) as u64;
        }
        self.schedule(
            now + read_cycles as u64 - 1,
            Event::ReadDone {
                slot: st.slot,
                sidx: st.sidx,
            },
        );
        self.schedule(
            start + lat,
            Event::Writeback {
                slot: st.slot,
                sidx: st.sidx,
                writes: st.writes,
            },
        );
    }

    fn mem_addr_stage(&mut self, sc: usize, now: u64) {
        let mp = self.cfg.mem.clone();
        let idx = {
            let s = &self.subcores[sc];
            if now < s.addr_free {
                return;
            }
            match s.mem_q.iter().position(|e| e.arb_ready.is_none()) {
                Some(i) if s.mem_q[i].arrive <= now => i,
                _ => return,
            }
        };
        let sidx = self.subcores[sc].mem_q[idx].st.sidx;
        let slot = self.subcores[sc].mem_q[idx].st.slot;
        let m = self.code[sidx].mem.unwrap_or(crate::inst::MemOp {
            space: MemSpace::Global,
            kind: MemKind::Load,
            bits: 32,
            uniform_addr: true,
            indexed_const: false,
        });
        // Cycles from arrival in the queue (two cycles after issue) to the sources
        // being read (WAR release) and to the request being ready for the arbiter.
        let base = mp.src_release_base.saturating_sub(2) as u64;
        let bits = (m.bits * self.cfg.warp_size) as u64;
        let link = |b: u64| b.div_ceil(mp.store_link_bits_per_cycle.max(1) as u64);
        let regular_extra = if m.uniform_addr {
            0
        } else {
            mp.global_addr_calc_regular_extra as u64
        };
        let coalesce = if m.uniform_addr {
            0
        } else {
            mp.regular_addr_coalesce_extra as u64
        };
        let (src, arb) = match (m.space, m.kind) {
            (MemSpace::Const, _) if m.indexed_const => (base, base + mp.ldc_indexed_extra as u64),
            (MemSpace::Const, _) => (base + mp.ldc_imm_war_extra as u64, base),
            (MemSpace::Shared, MemKind::Store | MemKind::Atomic) => {
                (base + link(bits), base + link(bits) + coalesce)
            }
            (MemSpace::Shared, _) => (base, base + coalesce),
            (_, MemKind::Store | MemKind::Atomic) => {
                let s = base + regular_extra + link(bits);
                (s, s + coalesce)
            }
            // LDGSTS also reads the shared-memory address through the link.
            (_, MemKind::Ldgsts) => {
                let s = base + regular_extra + link(self.cfg.warp_size as u64 * 32);
                (s, s + coalesce)
            }
            _ => (base + regular_extra, base + regular_extra + coalesce),
        };
        let src_done = now + src;
        let extra = 0;
        let arb_at = now + arb;
        let s = &mut self.subcores[sc];
        s.mem_q[idx].arb_ready = Some(arb_at + extra);
        s.addr_free = now
            + if m.uniform_addr {
                mp.addr_calc_interval_uniform
            } else {
                mp.addr_calc_interval
            } as u64;
        // A register-indexed LDC releases its sources only at write-back (Table 2: WAR 29).
        if !m.indexed_const {
            self.schedule(src_done, Event::ReadDone { slot, sidx });
        }
    }

    fn mem_arbiter(&mut self, now: u64) {
        if now < self.arb_free {
            return;
        }
        let n = self.subcores.len();
        for k in 0..n {
            let sc = (self.arb_rr + k) % n;
            let ready = self.subcores[sc]
                .mem_q
                .front()
                .is_some_and(|e| e.arb_ready.is_some_and(|r| r <= now));
            if !ready {
                continue;
            }
            let e = match self.subcores[sc].mem_q.front() {
                Some(e) => e.clone(),
                None => continue,
            };
            let m = match self.code[e.st.sidx].mem {
                Some(m) => m,
                None => continue,
            };
            let id = self.next_mem_id;
            let req = MemReq {
                id,
                space: m.space,
                kind: m.kind,
                bits: m.bits,
                access: e.access.clone(),
            };
            match self.mem.access(now, &req) {
                Access::Retry => continue,
                Access::ReadyAt(r) => self.schedule(
                    r,
                    Event::MemDone {
                        slot: e.st.slot,
                        sidx: e.st.sidx,
                        writes: e.st.writes,
                    },
                ),
                Access::Pending => self.mem_pending.push((id, e.st.slot, e.st.sidx, e.st.writes)),
            }
            self.next_mem_id += 1;
            let s = &mut self.subcores[sc];
            s.mem_q.pop_front();
            s.mem_occupancy = s.mem_occupancy.saturating_sub(1);
            self.arb_free = now + self.cfg.mem.shared_accept_interval.max(1) as u64;
            self.arb_rr = (sc + 1) % n;
            return;
        }
    }

    fn control_stage(&mut self, sc: usize, now: u64) {
        let Some(st) = self.subcores[sc].control else {
            return;
        };
        if st.entered >= now {
            return;
        }
        let inst = &self.code[st.sidx];
        let (fixed, is_mem) = (inst.fixed, inst.mem.is_some());
        let w = &mut self.warps[st.slot];
        if st.entered + 1 == now && self.uses_control_bits {
            // Dependence counters are incremented in Control, visible next cycle (rule 9).
            if let Some(s) = inst.ctrl.write_sb {
                w.sb_staged[s as usize % 6] += 1;
            }
            if let Some(s) = inst.ctrl.read_sb {
                w.sb_staged[s as usize % 6] += 1;
            }
        }
        let access = if is_mem {
            self.accesses[st.writes].take()
        } else {
            None
        };
        let s = &mut self.subcores[sc];
        let moved = if is_mem {
            let e = MemEntry {
                st: Stage { entered: now, ..st },
                arrive: now + 1,
                arb_ready: None,
                access,
            };
            s.mem_q.push_back(e);
            true
        } else if fixed {
            if s.allocate.is_none() {
                s.allocate = Some(Stage { entered: now, ..st });
                true
            } else {
                false
            }
        } else {
            s.var_q.push_back(Stage {
                entered: now + 1,
                ..st
            });
            true
        };
        if moved {
            s.control = None;
        }
    }

    /// Readiness of one warp at `now`: Ok(()) or the reason it cannot issue.
    fn ready<E: Executor<Writes = W>>(
        &mut self,
        ex: &E,
        sc: usize,
        slot: usize,
        now: u64,
    ) -> Result<(), StallReason> {
        let w = &self.warps[slot];
        if !w.used || w.exited {
            return Err(StallReason::Idle);
        }
        if ex.blocked(w.exec_id) {
            return Err(StallReason::Barrier);
        }
        let Some(&(pc, ready_at)) = w.ib.front() else {
            return Err(StallReason::NoInstruction);
        };
        if ready_at > now {
            return Err(StallReason::NoInstruction);
        }
        let Some(sidx) = self.index_of(pc) else {
            return Err(StallReason::NoInstruction);
        };
        let inst = &self.code[sidx];
        if now < w.stall_until {
            return Err(StallReason::StallCounter);
        }
        if w.no_issue_at == now {
            return Err(StallReason::Yield);
        }
        if self.uses_control_bits {
            if (0..6).any(|k| inst.ctrl.waits_on(k) && w.sb[k] != 0) {
                return Err(StallReason::DependenceCounters);
            }
            if let Some((from, sb, le, ids)) = w.depbar {
                if now >= from {
                    let ok =
                        w.sb[sb as usize % 6] <= le && (0..6).all(|k| ids & (1 << k) == 0 || w.sb[k] == 0);
                    if !ok {
                        return Err(StallReason::DependenceCounters);
                    }
                }
            }
        } else {
            let max = self.cfg.scoreboard_max_consumers;
            let raw = inst
                .reads
                .iter()
                .chain(inst.writes.iter())
                .any(|r| w.sb_write[reg_index(r)] > 0);
            let war = inst.writes.iter().any(|r| w.sb_read[reg_index(r)] > 0);
            let full = max > 0 && inst.reads.iter().any(|r| w.sb_read[reg_index(r)] as u32 >= max);
            if raw || war || full {
                return Err(StallReason::DependenceCounters);
            }
        }
        let s = &self.subcores[sc];
        let min_gap = self.cfg.clock_read_min_interval as u64;
        if inst.special == Special::ClockRead && s.last_clock_issue.is_some_and(|c| now < c + min_gap) {
            return Err(StallReason::StallCounter);
        }
        if let Some(m) = inst.mem {
            let _ = m;
            if s.mem_occupancy >= self.cfg.mem.queue_entries + self.cfg.mem.dispatch_latch {
                return Err(StallReason::MemQueueFull);
            }
        } else if inst.fixed {
            let unit = self.latch_unit(sc, inst.unit);
            let shared = self.cfg.units.get(unit).is_some_and(|u| u.shared_by_sm);
            let free = if shared {
                self.shared_unit_free[unit]
            } else {
                self.subcores[sc].unit_free[unit]
            };
            if free > now {
                return Err(StallReason::ExecUnitLatch);
            }
        }
        Ok(())
    }

    /// The execution unit whose input latch an instruction of `unit` would use at `now`:
    /// FP32 instructions may take the INT/FP32 pipe when its latch is free first.
    fn latch_unit(&self, sc: usize, unit: usize) -> usize {
        if self.cfg.fp32_in_int_pipe && self.fp32_unit == Some(unit) {
            if let Some(alt) = self.int_unit {
                let s = &self.subcores[sc];
                if s.unit_free[alt] < s.unit_free[unit] {
                    return alt;
                }
            }
        }
        unit
    }

    fn index_of(&self, pc: u64) -> Option<usize> {
        let i = (pc / 16) as usize;
        match self.code.get(i) {
            Some(s) if s.pc == pc => Some(i),
            _ => self.code.iter().position(|s| s.pc == pc),
        }
    }

    fn pick(&self, sc: usize, now: u64, ready: &[(usize, bool)], exclude: Option<usize>) -> Option<usize> {
        let s = &self.subcores[sc];
        let ok = |slot: usize| ready.iter().any(|&(x, r)| x == slot && r) && Some(slot) != exclude;
        let youngest = || {
            ready
                .iter()
                .filter(|&&(x, r)| r && Some(x) != exclude)
                .max_by_key(|&&(x, _)| self.warps[x].age)
                .map(|&(x, _)| x)
        };
        let oldest = || {
            ready
                .iter()
                .filter(|&&(x, r)| r && Some(x) != exclude)
                .min_by_key(|&&(x, _)| self.warps[x].age)
                .map(|&(x, _)| x)
        };
        let rr = |pool: &[usize]| {
            let n = pool.len();
            let start = s
                .last_issued
                .and_then(|l| pool.iter().position(|&x| x == l))
                .map_or(0, |p| p + 1);
            (0..n).map(|k| pool[(start + k) % n]).find(|&x| ok(x))
        };
        // Greedy: the warp that issued in the previous cycle (MICRO'25 A5.3).
        let greedy = s
            .last_issued
            .filter(|&l| ok(l) && s.last_issue_cycle.wrapping_add(1) == now);
        match self.cfg.scheduler {
            SchedPolicy::Cggty => greedy.or_else(youngest),
            SchedPolicy::Gto => greedy.or_else(oldest),
            SchedPolicy::Lrr => rr(&s.warps),
            SchedPolicy::TwoLevel => rr(&s.two_level_pool),
        }
    }

    fn update_two_level_pool(&mut self, sc: usize, now: u64) {
        if self.cfg.scheduler != SchedPolicy::TwoLevel {
            return;
        }
        let n = self.cfg.two_level_active_warps.max(1) as usize;
        let warps = &self.warps;
        let code = &self.code;
        let s = &mut self.subcores[sc];
        // Demote warps waiting on a long-latency dependence; promote the oldest others.
        let long_wait = |slot: usize| -> bool {
            let w = &warps[slot];
            if !w.used || w.exited {
                return true;
            }
            match w.ib.front() {
                Some(&(pc, _)) => {
                    let i = (pc / 16) as usize;
                    code.get(i)
                        .is_some_and(|inst| (0..6).any(|k| inst.ctrl.waits_on(k) && w.sb[k] != 0))
                }
                None => false,
            }
        };
        s.two_level_pool.retain(|&x| !long_wait(x));
        let mut cands: Vec<usize> = s
            .warps
            .iter()
            .copied()
            .filter(|x| !s.two_level_pool.contains(x) && !long_wait(*x))
            .collect();
        cands.sort_by_key(|&x| warps[x].age);
        for x in cands {
            if s.two_level_pool.len() >= n {
                break;
            }
            s.two_level_pool.push(x);
        }
        let _ = now;
    }

    fn issue_stage<E: Executor<Writes = W>>(
        &mut self,
        ex: &mut E,
        sc: usize,
        now: u64,
    ) -> Result<(), String> {
        if self.subcores[sc].warps.is_empty() {
            self.stats.stall_slots[StallReason::Idle as usize] += 1;
            return Ok(());
        }
        if self.subcores[sc].control.is_some() {
            self.stats.stall_slots[StallReason::AllocatePortConflict as usize] += 1;
            return Ok(());
        }
        self.update_two_level_pool(sc, now);
        let slots = self.subcores[sc].warps.clone();
        let mut ready = Vec::with_capacity(slots.len());
        let mut best = StallReason::Idle;
        for &slot in &slots {
            self.redirect_if_needed(ex, slot);
            match self.ready(ex, sc, slot, now) {
                Ok(()) => ready.push((slot, true)),
                Err(r) => {
                    best = best.min(r);
                    ready.push((slot, false));
                }
            }
        }
        // L0 fixed-latency constant cache: a miss blocks issue (rule 13).
        let mut exclude = None;
        if let Some((wslot, since, line, ready_at)) = self.subcores[sc].const_wait {
            if now >= ready_at {
                self.subcores[sc].l0c.fill(line);
                self.subcores[sc].const_wait = None;
            } else if now - since < self.cfg.const_miss_switch_cycles as u64 {
                self.stats.stall_slots[StallReason::ConstCacheMiss as usize] += 1;
                return Ok(());
            } else {
                exclude = Some(wslot);
            }
        }
        let chosen = if exclude.is_some() {
            // Switch to the youngest ready warp.
            ready
                .iter()
                .filter(|&&(x, r)| r && Some(x) != exclude)
                .max_by_key(|&&(x, _)| self.warps[x].age)
                .map(|&(x, _)| x)
        } else {
            self.pick(sc, now, &ready, None)
        };
        let Some(slot) = chosen else {
            let reason = if exclude.is_some() {
                StallReason::ConstCacheMiss
            } else {
                best
            };
            self.stats.stall_slots[reason as usize] += 1;
            return Ok(());
        };
        let pc = self.warps[slot].ib.front().map(|x| x.0).unwrap_or_default();
        let sidx = self
            .index_of(pc)
            .ok_or_else(|| format!("no instruction at pc {pc:#x}"))?;
        if self.code[sidx].fixed && !self.cfg.perfect_const_cache {
            if let Some((bank, off)) = self.code[sidx].const_operand {
                let line = ((bank as u64) << 32 | off) / self.cfg.l0c_fl.line_bytes.max(1) as u64;
                if self.subcores[sc].l0c.probe(line) {
                    self.stats.l0c_hits += 1;
                } else if exclude.is_none() {
                    self.stats.l0c_misses += 1;
                    let lat = self.cfg.l0c_fl_miss_latency as u64;
                    self.subcores[sc].const_wait = Some((slot, now, line, now + lat));
                    self.stats.stall_slots[StallReason::ConstCacheMiss as usize] += 1;
                    return Ok(());
                } else {
                    self.stats.stall_slots[StallReason::ConstCacheMiss as usize] += 1;
                    return Ok(());
                }
            }
        }
        self.do_issue(ex, sc, slot, sidx, now)
    }

    /// Flush the instruction buffer when the engine's next PC is not what was fetched.
    fn redirect_if_needed<E: Executor<Writes = W>>(&mut self, ex: &E, slot: usize) {
        let w = &self.warps[slot];
        if !w.used || w.exited {
            return;
        }
        let Some(next) = ex.next_pc(w.exec_id) else {
            return;
        };
        let sc = w.subcore;
        let head = w.stream_head(&self.subcores[sc].fetches, slot);
        if head != next {
            let w = &mut self.warps[slot];
            w.ib.clear();
            w.epoch = w.epoch.wrapping_add(1);
            w.inflight_fetch = 0;
            w.fetch_pc = next;
            w.fetch_wait_line = None;
            self.stats.ib_flushes += 1;
        }
    }

    fn do_issue<E: Executor<Writes = W>>(
        &mut self,
        ex: &mut E,
        sc: usize,
        slot: usize,
        sidx: usize,
        now: u64,
    ) -> Result<(), String> {
        // Results reach fixed-latency consumers through the result queue's bypass; memory
        // instructions read the register file one cycle later (M25 rule 24, Listing 3).
        // Other variable-latency instructions (MUFU, conversions) read like fixed-latency
        // ones: the compiler places FFMA → F2I at stall 4 (docs/model.md).
        let fixed = self.code[sidx].mem.is_none();
        // Commit results that are visible to this consumer.
        {
            let id = self.warps[slot].exec_id;
            let w = &mut self.warps[slot];
            let mut i = 0;
            while i < w.pending.len() {
                let vis = if fixed { w.pending[i].0 } else { w.pending[i].1 };
                if vis <= now {
                    let (_, _, wr) = w.pending.remove(i);
                    ex.commit(id, wr);
                } else {
                    i += 1;
                }
            }
        }
        let clock = now + self.cfg.control_stage_cycles as u64;
        let id = self.warps[slot].exec_id;
        let issued: Issued<W> = ex.issue(id, clock)?;
        let inst = &self.code[sidx];
        let ctrl = inst.ctrl;
        let special = inst.special;
        let unit = inst.unit;
        let latch = inst.latch_cycles as u64;
        let is_mem = inst.mem.is_some();
        let is_fixed = inst.fixed;
        self.stats.warp_insts += 1;
        self.stats.thread_insts += issued.active_mask.count_ones() as u64;
        self.stats.issue_slots_used += 1;
        if is_mem {
            self.stats.mem_insts += 1;
        }
        if self.record {
            let op = inst.op.clone();
            let w = &mut self.warps[slot];
            w.log.issues.push((now, issued.pc, op));
            if special == Special::ClockRead {
                w.log.clocks.push(clock);
            }
        }
        let cbits = self.uses_control_bits;
        let reads = if cbits { Vec::new() } else { inst.reads.clone() };
        let writes_regs = if cbits { Vec::new() } else { inst.writes.clone() };
        let unit = if is_fixed && !is_mem {
            self.latch_unit(sc, unit)
        } else {
            unit
        };
        let s = &mut self.subcores[sc];
        s.last_issued = Some(slot);
        s.last_issue_cycle = now;
        if special == Special::ClockRead {
            s.last_clock_issue = Some(now);
        }
        if is_fixed && !is_mem {
            let shared = self.cfg.units.get(unit).is_some_and(|u| u.shared_by_sm);
            if shared {
                let ii = self.cfg.units[unit].initiation_interval.max(1) as u64;
                self.shared_unit_free[unit] = now + latch.max(ii);
            } else {
                s.unit_free[unit] = now + latch;
            }
        }
        if is_mem {
            s.mem_occupancy += 1;
        }
        let wslot = self.store(issued.writes);
        let stage = Stage {
            slot,
            sidx,
            issue: now,
            writes: wslot,
            entered: now,
        };
        let s = &mut self.subcores[sc];
        s.control = Some(stage);
        self.accesses[wslot] = issued.mem;
        let cfg_expiry = self.cfg.stall_expiry;
        let gt11 = self.cfg.stall_gt11_without_yield_cycles as u64;
        let special_threshold = self.cfg.stall_special_threshold as u64;
        let errbar = self.cfg.errbar_stall_cycles as u64;
        let depbar_delay = self.cfg.depbar_effect_delay as u64;
        let w = &mut self.warps[slot];
        w.ib.pop_front();
        if !is_fixed || is_mem {
            w.inflight_ops += 1;
        }
        if cbits {
            let stall = ctrl.stall as u64;
            let mut until = match cfg_expiry {
                StallExpiry::Listing2 => now + stall.max(1),
                StallExpiry::Figure4 => now + stall + 1,
            };
            if stall > special_threshold && !ctrl.yield_ {
                until = now + gt11;
            }
            if (special == Special::Errbar || special == Special::SelfBranch) && stall == 0 && ctrl.yield_ {
                until = now + errbar;
            }
            w.stall_until = until;
            if ctrl.yield_ {
                w.no_issue_at = now + 1;
            }
            if let Special::Depbar { sb, le, ids } = special {
                w.depbar = Some((now + depbar_delay, sb, le, ids));
            }
        } else {
            w.stall_until = now + 1;
            for r in &writes_regs {
                w.sb_write[reg_index(r)] += 1;
            }
            for r in &reads {
                let c = &mut w.sb_read[reg_index(r)];
                *c = c.saturating_add(1);
            }
            if is_fixed && !is_mem && reads.is_empty() {
                // nothing to release
            }
        }
        if issued.exited {
            w.exited = true;
        }
        Ok(())
    }

    /// Decode → instruction buffer: instructions fetched `fetch_to_issue_stages` cycles
    /// ago become issuable this cycle.
    fn decode_stage(&mut self, sc: usize, now: u64) {
        loop {
            let Some(f) = self.subcores[sc].fetches.front().copied() else {
                break;
            };
            if f.arrive > now {
                break;
            }
            self.subcores[sc].fetches.pop_front();
            let w = &mut self.warps[f.slot];
            if w.used && f.epoch == w.epoch {
                w.inflight_fetch = w.inflight_fetch.saturating_sub(1);
                w.ib.push_back((f.pc, f.arrive));
            }
        }
    }

    fn fetch_stage<E: Executor<Writes = W>>(&mut self, ex: &E, sc: usize, now: u64) {
        // Choose the warp to fetch for: the last issued unless its buffer is full,
        // else the youngest warp with room (rule 33).
        let cap = self.cfg.ib_entries;
        let has_room = |w: &Warp<W>| {
            w.used && !w.exited && w.fetch_wait_line.is_none() && (w.ib.len() as u32 + w.inflight_fetch) < cap
        };
        let s = &self.subcores[sc];
        let chosen = s.last_issued.filter(|&l| has_room(&self.warps[l])).or_else(|| {
            s.warps
                .iter()
                .copied()
                .filter(|&x| has_room(&self.warps[x]))
                .max_by_key(|&x| self.warps[x].age)
        });
        let Some(slot) = chosen else {
            return;
        };
        let _ = ex;
        let pc = self.warps[slot].fetch_pc;
        if self.index_of(pc).is_none() {
            return;
        }
        let addr = self.code_base + pc;
        let line = self.subcores[sc].l0i.line_of(addr);
        let hit = self.cfg.perfect_icache || self.subcores[sc].l0i.probe(line);
        if !hit {
            // Stream buffer: a ready line moves into the L0.
            let s = &mut self.subcores[sc];
            match s.sbuf.find(line) {
                Some(p) if s.sbuf.lines[p].1 <= now => {
                    for _ in 0..=p {
                        s.sbuf.lines.pop_front();
                    }
                    s.l0i.fill(line);
                    self.stats.stream_buffer_hits += 1;
                    // Keep the buffer streaming ahead.
                    let last = s.sbuf.lines.back().map_or(line, |l| l.0);
                    for k in 1..=(p as u64 + 1) {
                        if s.sbuf.lines.len() < s.sbuf.entries {
                            s.sbuf.lines.push_back((last + k, u64::MAX));
                            s.l1_queue.push_back(last + k);
                        }
                    }
                    self.warps[slot].fetch_wait_line = Some(line);
                    self.schedule(now + 1, Event::ILine { sc, line });
                    return;
                }
                Some(_) => {
                    self.warps[slot].fetch_wait_line = Some(line);
                    return;
                }
                None => {
                    self.stats.l0i_misses += 1;
                    if !s.demand.iter().any(|d| d.0 == line) {
                        s.demand.push((line, u64::MAX));
                        s.l1_queue.push_front(line);
                        // Restart the stream buffer after the missing line.
                        s.sbuf.lines.clear();
                        s.l1_queue.retain(|&l| l == line);
                        for k in 1..=s.sbuf.entries as u64 {
                            s.sbuf.lines.push_back((line + k, u64::MAX));
                            s.l1_queue.push_back(line + k);
                        }
                    }
                    self.warps[slot].fetch_wait_line = Some(line);
                    return;
                }
            }
        }
        self.stats.l0i_hits += 1;
        let stages = self.cfg.fetch_to_issue_stages as u64;
        let w = &mut self.warps[slot];
        w.inflight_fetch += 1;
        w.fetch_pc = pc + 16;
        let f = Fetch {
            slot,
            pc,
            epoch: w.epoch,
            arrive: now + stages,
        };
        self.subcores[sc].fetches.push_back(f);
    }

    fn l1i_arbiter(&mut self, now: u64) {
        let n = self.subcores.len();
        let mut granted = 0;
        for k in 0..n {
            if granted >= self.cfg.l1i_requests_per_cycle {
                break;
            }
            let sc = (self.l1i_rr + k) % n;
            let Some(line) = self.subcores[sc].l1_queue.pop_front() else {
                continue;
            };
            granted += 1;
            self.stats.l1i_requests += 1;
            let lat = if self.l1i.probe(line) {
                self.cfg.l1i_latency
            } else {
                self.l1i.fill(line);
                self.cfg.l1i_miss_latency
            } as u64;
            let s = &mut self.subcores[sc];
            for d in s.demand.iter_mut().filter(|d| d.0 == line) {
                d.1 = now + lat;
            }
            self.schedule(now + lat, Event::ILine { sc, line });
            self.l1i_rr = (sc + 1) % n;
        }
    }

    fn retire_warps<E: Executor<Writes = W>>(&mut self, ex: &mut E) {
        for slot in 0..self.warps.len() {
            let w = &self.warps[slot];
            if !w.used || !w.exited || w.finished || w.inflight_ops > 0 {
                continue;
            }
            let sc = w.subcore;
            let s = &self.subcores[sc];
            if s.control.is_some_and(|c| c.slot == slot) || s.allocate.is_some_and(|c| c.slot == slot) {
                continue;
            }
            let id = w.exec_id;
            let w = &mut self.warps[slot];
            let pend: Vec<_> = w.pending.drain(..).collect();
            for (_, _, wr) in pend {
                ex.commit(id, wr);
            }
            w.finished = true;
            w.used = false;
            self.subcores[sc].warps.retain(|&x| x != slot);
            self.subcores[sc].two_level_pool.retain(|&x| x != slot);
            if self.subcores[sc].last_issued == Some(slot) {
                self.subcores[sc].last_issued = None;
            }
            self.finished.push(id);
        }
    }
}
