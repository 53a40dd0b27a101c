//! Control bits for code without them (issue 13, point 5): stall counts, yield bits,
//! dependence-counter assignments and wait masks derived the way the compiler derives them,
//! from each opcode's latency class, for traces recorded without the kernel's binary.
//!
//! The rules (MICRO'25 §4; the compiler's conventions measured on the ptxas 13.5 listings the
//! repository ships, `docs/validation.md`; the model's own rules in `docs/model.md`):
//! * a **fixed-latency** result is visible `latency` cycles after its producer issues; a
//!   consumer may issue then (a memory instruction, which reads its sources one cycle later
//!   than fixed-latency consumers, waits `extra_for_late_readers` cycles longer). The stall
//!   count of each instruction is the distance to the next one's earliest issue, 1–15 (a
//!   longer distance cannot be expressed; the consumer then reads early, which the timing
//!   model reports as a stale read).
//! * a predicate written by a fixed-latency instruction and used as the **guard** of a later
//!   one is read `guard_predicate_latency` cycles after its producer issued (ptxas: 12 on
//!   sm_75, 13 on sm_86/sm_90, before every such consumer), not at the producer's latency
//!   (4, as when the predicate is an operand);
//! * **memory instructions** issue at least `memory_issue_interval` cycles apart: the
//!   sub-core's address calculation takes one instruction every 4 cycles (MICRO'25 §5.4),
//!   and ptxas spaces consecutive loads and stores by that much (`@!PT` padding excepted);
//! * a **control-flow instruction** (branch, exit, call, return, BSYNC, WARPSYNC) and a
//!   memory barrier or cache control (MEMBAR, CCTL) stall at least `control_min_stall` cycles
//!   (ptxas: S05 or more on every one of the shipped listings);
//! * `ERRBAR` is encoded with stall 0 and yield, as ptxas always does (the issue stage then
//!   waits `[issue] errbar_stall_cycles`);
//! * the **yield** bit is set on an instruction whose successor waits `yield_min_stall` or
//!   more cycles for a fixed-latency result (the warp cannot issue; let another go);
//! * a **variable-latency** result (memory, MUFU, …) gets a dependence counter (SB0–SB5,
//!   round robin); every later reader or writer of its registers waits on that counter.
//!   A memory instruction's register sources get a counter too (released when they are read),
//!   and a later writer of such a register waits on it (WAR).
//! * **blocks**: the code is laid out in address order; a block entered from a branch starts
//!   with every fixed-latency result visible (the branch's stall count covers them), and the
//!   counters pending at the end of the code are waited for again at loop heads (the pass runs
//!   twice, the second time from the first pass's final counters).
//!
//! The pass never sets reuse flags or DEPBARs (the counters are waited for with wait masks).

use crate::cfg::{Cfg, EdgeKind};
use sassim_isa::dataflow::{guard_reg, never_executes, regs_read, regs_written, ArchReg};
use sassim_isa::{ControlBits, Kernel};
use std::collections::BTreeMap;

/// What the pass needs to know about one instruction's timing (from an opcode table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstTiming {
    /// Fixed latency (true) or a dependence counter (false).
    pub fixed: bool,
    /// Cycles from issue until a fixed-latency result is visible to consumers.
    pub latency: u32,
    /// Reads its register sources later than fixed-latency consumers (memory instructions):
    /// needs a read counter for WAR, and waits `extra_for_late_readers` longer for a
    /// fixed-latency producer.
    pub reads_late: bool,
    /// Goes through the sub-core's memory pipeline (address calculation): consecutive ones
    /// issue `InferOptions::memory_issue_interval` apart.
    pub memory: bool,
    /// A control-flow instruction: stalls at least `InferOptions::control_min_stall`.
    pub control: bool,
    /// The execution unit whose input latch the instruction occupies (an index of the
    /// timing model's units), and a second unit it may use instead when that one's latch
    /// is free first (Ampere's FP32 instructions in the INT/FP32 pipe).
    pub unit: u8,
    pub alt_unit: Option<u8>,
    /// Cycles the instruction occupies its unit's latch (0: none).
    pub latch: u32,
    /// A late reader whose sources are read this many cycles after issue, always: later
    /// writers of them keep that distance instead of waiting on a read counter (shared
    /// loads, MICRO'25 Table 2).
    pub fixed_read: Option<u32>,
}

/// Settings of the pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InferOptions {
    /// Largest stall count (4 bits: 15).
    pub max_stall: u8,
    /// Dependence counters per warp (6).
    pub counters: u8,
    /// Extra cycles a late reader waits for a fixed-latency result (MICRO'25 rule 24: 1).
    pub extra_for_late_readers: u32,
    /// Cycles from a fixed-latency predicate producer's issue to a consumer guarded by it.
    pub guard_predicate_latency: u32,
    /// Cycles between two memory instructions' issue.
    pub memory_issue_interval: u32,
    /// Smallest stall count of a control-flow instruction.
    pub control_min_stall: u8,
    /// Smallest wait for a fixed-latency result that sets the producer side's yield bit
    /// (0: never set yield).
    pub yield_min_stall: u8,
    /// A late reader gets a read counter only when a source is overwritten within this
    /// many instructions of its block.
    pub read_counter_window: u32,
}

impl Default for InferOptions {
    /// The ptxas 13.5 conventions for sm_86/sm_90 (the presets' `[compiler]` sections).
    fn default() -> Self {
        InferOptions {
            max_stall: 15,
            counters: 6,
            extra_for_late_readers: 1,
            guard_predicate_latency: 13,
            memory_issue_interval: 4,
            control_min_stall: 5,
            yield_min_stall: 3,
            read_counter_window: 8,
        }
    }
}

/// State of the counters between instructions.
#[derive(Debug, Clone, Default)]
struct Counters {
    /// Register → counter of its pending variable-latency write.
    write: BTreeMap<ArchReg, u8>,
    /// Register → counter of its pending late read.
    read: BTreeMap<ArchReg, u8>,
    /// Counters in flight for instructions whose completion matters beyond their registers
    /// (atomics into `RZ`).
    pending: u8,
    next: u8,
}

impl Counters {
    fn take(&mut self, n: u8) -> u8 {
        let c = self.next % n.max(1);
        self.next = (c + 1) % n.max(1);
        // A reused counter is waited for by whoever waits on it; earlier registers mapped to
        // it stay mapped (waiting for the counter covers them too).
        c
    }

    /// Forget every register mapped to a counter in `mask` (waited for).
    fn release(&mut self, mask: u8) {
        self.write.retain(|_, c| mask & (1 << *c) == 0);
        self.read.retain(|_, c| mask & (1 << *c) == 0);
        self.pending &= !mask;
    }

    /// Every counter something is waiting to be released.
    fn all(&self) -> u8 {
        self.write
            .values()
            .chain(self.read.values())
            .fold(self.pending, |m, c| m | (1 << c))
    }
}

/// Infer the control bits of every instruction of `kernel` (one per instruction, in order).
/// `timing[i]` describes `kernel.instructions[i]`.
pub fn infer(kernel: &Kernel, timing: &[InstTiming], opts: &InferOptions) -> Vec<ControlBits> {
    let cfg = Cfg::build(kernel);
    let n = kernel.instructions.len().min(timing.len());
    // Instructions entered from a branch (or a call/return) rather than only by falling
    // through: every fixed-latency result must be visible there.
    let mut branch_target = vec![false; n];
    // Targets of backward edges (loop heads): counters pending at the end of the code may
    // still be pending there.
    let mut back_target = vec![false; n];
    for b in &cfg.blocks {
        for e in &b.succs {
            if e.kind != EdgeKind::Fallthrough {
                if let Some(t) = cfg.blocks.get(e.to).map(|x| x.start) {
                    if t < n {
                        branch_target[t] = true;
                        back_target[t] |= t <= b.last();
                    }
                }
            }
        }
    }
    let depbar: Vec<bool> = kernel.instructions[..n]
        .iter()
        .map(|ins| matches!(ins.opcode.base.as_str(), "DEPBAR" | "LDGDEPBAR"))
        .collect();
    let writes: Vec<Vec<ArchReg>> = kernel.instructions[..n].iter().map(regs_written).collect();
    let reads: Vec<Vec<ArchReg>> = kernel.instructions[..n].iter().map(regs_read).collect();
    // A late reader needs a read counter only when one of its sources is overwritten soon:
    // within `read_counter_window` instructions in its block (ptxas assigns none when the
    // read is long done by then).
    let war_in_block: Vec<bool> = (0..n)
        .map(|i| {
            let end = cfg
                .block_of
                .get(i)
                .and_then(|&b| cfg.blocks.get(b))
                .map_or(i, |b| b.last().min(n - 1));
            let end = end.min(i + opts.read_counter_window as usize);
            ((i + 1)..=end).any(|j| writes[j].iter().any(|w| reads[i].contains(w)))
        })
        .collect();
    let code = Code {
        timing,
        war_in_block,
        reads,
        writes,
        guard: kernel.instructions[..n].iter().map(guard_reg).collect(),
        never: kernel.instructions[..n].iter().map(never_executes).collect(),
        errbar: kernel.instructions[..n]
            .iter()
            .map(|ins| ins.opcode.base == "ERRBAR")
            .collect(),
        call: kernel.instructions[..n]
            .iter()
            .map(|ins| ins.opcode.base == "CALL")
            .collect(),
        global_atomic: kernel.instructions[..n]
            .iter()
            .map(|ins| matches!(ins.opcode.base.as_str(), "ATOMG" | "ATOM"))
            .collect(),
        is_depbar: depbar,
        branch_target,
    };
    let (first, end) = one_pass(&code, None, opts);
    if !back_target.iter().any(|&b| b) {
        return first;
    }
    let carried = Carried {
        at: &back_target,
        counters: end,
    };
    one_pass(&code, Some(&carried), opts).0
}

/// What the pass knows of each instruction.
struct Code<'a> {
    timing: &'a [InstTiming],
    /// A source register is overwritten later in the instruction's block.
    war_in_block: Vec<bool>,
    reads: Vec<Vec<ArchReg>>,
    writes: Vec<Vec<ArchReg>>,
    /// Guard predicate register.
    guard: Vec<Option<ArchReg>>,
    /// `@!PT`: never executes.
    never: Vec<bool>,
    /// `ERRBAR`: waits for outstanding memory errors, encoded with stall 0 and yield.
    errbar: Vec<bool>,
    /// `CALL`: the callee does not know the caller's counters; every pending one is waited for.
    call: Vec<bool>,
    /// A global atomic: gets a write counter even when its result goes to `RZ`/`PT`, so that
    /// a later wait covers its completion.
    global_atomic: Vec<bool>,
    is_depbar: Vec<bool>,
    /// Entered from a branch (or a call/return) rather than only by falling through.
    branch_target: Vec<bool>,
}

/// Counters pending at the end of the code, merged in at loop heads.
struct Carried<'a> {
    at: &'a [bool],
    counters: Counters,
}

fn one_pass(code: &Code, carried: Option<&Carried>, opts: &InferOptions) -> (Vec<ControlBits>, Counters) {
    let n = code.reads.len();
    let mut sb = Counters::default();
    // Stall 1, no yield, no counters, no reuse.
    let mut bits = vec![ControlBits::default(); n];
    // Cycle at which each register's fixed-latency result is visible (virtual time).
    let mut ready: BTreeMap<ArchReg, u64> = BTreeMap::new();
    // Issue cycle of the fixed-latency producer of each predicate (for guards).
    let mut pred_issue: BTreeMap<ArchReg, u64> = BTreeMap::new();
    let mut t: u64 = 0;
    // Issue time of the last instruction that incremented each counter.
    let mut set_at: [Option<u64>; 8] = [None; 8];
    // Cycle from which each register a fixed-time late reader reads may be overwritten.
    let mut war_ready: BTreeMap<ArchReg, u64> = BTreeMap::new();
    // Issue time of the last memory instruction.
    let mut last_mem: Option<u64> = None;
    // Cycle from which each unit's input latch is free.
    let mut latch_free = [0u64; 256];
    for i in 0..n {
        let ti = code.timing[i];
        // Earliest issue for everything but data dependences on fixed-latency results…
        let mut need = if i > 0 { t + 1 } else { t };
        if i > 0 && code.timing[i - 1].control {
            need = need.max(t + u64::from(opts.control_min_stall));
        }
        // …and for those.
        let mut dep = 0u64;
        let extra = if ti.reads_late {
            u64::from(opts.extra_for_late_readers)
        } else {
            0
        };
        for r in &code.reads[i] {
            if let Some(&v) = ready.get(r) {
                dep = dep.max(v + extra);
            }
        }
        if let Some(at) = code.guard[i].and_then(|g| pred_issue.get(&g)) {
            dep = dep.max(at + u64::from(opts.guard_predicate_latency));
        }
        for r in &code.writes[i] {
            if let Some(&v) = ready.get(r) {
                // WAW: the new value must land after the old one.
                dep = dep.max(v.saturating_sub(u64::from(ti.latency)) + 1);
            }
            if let Some(&v) = war_ready.get(r) {
                dep = dep.max(v);
            }
        }
        let memory = ti.memory && !code.never[i];
        if let Some(at) = last_mem.filter(|_| memory) {
            need = need.max(at + u64::from(opts.memory_issue_interval));
        }
        // The unit's input latch (the compiler spaces instructions of one datapath by its
        // issue rate): the unit, or its alternative when that one is free first.
        let unit = match ti.alt_unit {
            Some(a) if latch_free[usize::from(a)] < latch_free[usize::from(ti.unit)] => a,
            _ => ti.unit,
        };
        if ti.latch > 0 && !code.never[i] {
            need = need.max(latch_free[usize::from(unit)]);
        }
        if let Some(c) = carried.filter(|c| c.at[i]) {
            for (r, k) in &c.counters.write {
                sb.write.entry(*r).or_insert(*k);
            }
            for (r, k) in &c.counters.read {
                sb.read.entry(*r).or_insert(*k);
            }
            sb.pending |= c.counters.pending;
        }
        // Wait mask: counters of pending writes of registers read or written (RAW/WAW) and of
        // pending reads of registers written (WAR).
        let mut mask = 0u8;
        for r in code.reads[i].iter().chain(code.writes[i].iter()) {
            if let Some(&c) = sb.write.get(r) {
                mask |= 1 << c;
            }
        }
        for r in &code.writes[i] {
            if let Some(&c) = sb.read.get(r) {
                mask |= 1 << c;
            }
        }
        // `DEPBAR.LE SBx, N` names the compiler's counters, which the inference does not
        // reproduce: it waits for every pending counter instead (conservative, never early).
        // A CALL does the same (ptxas: every pending counter in the call's wait mask).
        if code.is_depbar[i] || code.call[i] {
            mask |= sb.all();
        }
        // A counter incremented by an instruction is visible from the cycle after its Control
        // stage (MICRO'25 rule 9): a waiting instruction issues at least 2 cycles after it.
        for c in 0..8u8 {
            if mask & (1 << c) != 0 {
                if let Some(at) = set_at[c as usize] {
                    need = need.max(at + 2);
                }
            }
        }
        if code.branch_target[i] {
            if let Some(&v) = ready.values().max() {
                need = need.max(v);
            }
            ready.clear();
            pred_issue.clear();
            war_ready.clear();
        }
        if i > 0 {
            let gap = need.max(dep).saturating_sub(t).max(1);
            let stall = gap.min(u64::from(opts.max_stall.max(1)));
            bits[i - 1].stall = stall as u8;
            // Waiting for a result: let another warp issue.
            bits[i - 1].yield_ =
                opts.yield_min_stall > 0 && dep >= need && gap >= u64::from(opts.yield_min_stall);
            t += stall;
        }
        bits[i].wait_mask = mask;
        sb.release(mask);
        if memory {
            last_mem = Some(t);
        }
        if ti.latch > 0 && !code.never[i] {
            latch_free[usize::from(unit)] = t + u64::from(ti.latch);
        }
        // What this instruction leaves pending. A fixed-latency result later than the largest
        // stall count (tensor-core MMAs: 24 cycles) gets a counter instead: a trace may put its
        // consumer right after it, where ptxas would have spread the wait over instructions.
        let long = ti.fixed && ti.latency > u32::from(opts.max_stall);
        if ti.fixed && !long {
            for r in &code.writes[i] {
                ready.insert(*r, t + u64::from(ti.latency));
                sb.write.remove(r);
                if matches!(r, ArchReg::P(_) | ArchReg::UP(_)) {
                    pred_issue.insert(*r, t);
                }
            }
        } else if !code.writes[i].is_empty() || code.global_atomic[i] {
            let c = sb.take(opts.counters);
            bits[i].write_sb = Some(c);
            set_at[c as usize] = Some(t);
            for r in &code.writes[i] {
                sb.write.insert(*r, c);
                ready.remove(r);
                pred_issue.remove(r);
            }
            if code.global_atomic[i] {
                sb.pending |= 1 << c;
            }
        }
        if let Some(d) = ti.fixed_read.filter(|_| !ti.fixed) {
            for r in &code.reads[i] {
                war_ready.insert(*r, t + u64::from(d));
            }
        } else if ti.reads_late && !ti.fixed && code.war_in_block[i] {
            let srcs: Vec<ArchReg> = code.reads[i]
                .iter()
                .filter(|r| matches!(r, ArchReg::R(_) | ArchReg::UR(_)))
                .copied()
                .collect();
            if !srcs.is_empty() {
                let c = sb.take(opts.counters);
                bits[i].read_sb = Some(c);
                set_at[c as usize] = Some(t);
                for r in srcs {
                    sb.read.insert(r, c);
                }
            }
        }
    }
    // ptxas encodes every ERRBAR as `S00` with yield (the issue stage then waits for it:
    // MICRO'25 §4, `[issue] errbar_stall_cycles`).
    for (b, _) in bits.iter_mut().zip(&code.errbar).filter(|(_, e)| **e) {
        b.stall = 0;
        b.yield_ = true;
    }
    if let Some(i) = n.checked_sub(1).filter(|&i| !code.errbar[i]) {
        let min = if code.timing[i].control {
            opts.control_min_stall
        } else {
            1
        };
        bits[i].stall = bits[i].stall.max(min).max(1);
    }
    (bits, sb)
}

/// Agreement of inferred control bits with the compiler's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Agreement {
    pub instructions: u64,
    pub stall_exact: u64,
    pub stall_within_1: u64,
    /// Wait masks equal as sets of counters.
    pub wait_exact: u64,
    /// Both wait on some counter, or both on none.
    pub wait_presence: u64,
    /// Yield bits equal.
    pub yield_exact: u64,
}

impl Agreement {
    /// Compare the control bits inferred for `kernel` with its own (the compiler's), over the
    /// instructions control can reach (not the padding after the last `EXIT`).
    pub fn of_kernel(kernel: &Kernel, inferred: &[ControlBits]) -> Agreement {
        let cfg = Cfg::build(kernel);
        let reach = cfg.reachable();
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for (i, (ins, b)) in kernel.instructions.iter().zip(inferred).enumerate() {
            if cfg
                .block_of
                .get(i)
                .is_some_and(|&blk| reach.get(blk) == Some(&true))
            {
                x.push(*b);
                y.push(ins.ctrl);
            }
        }
        Agreement::of(&x, &y)
    }

    /// Compare `inferred` with `real`, instruction by instruction.
    pub fn of(inferred: &[ControlBits], real: &[ControlBits]) -> Agreement {
        let mut a = Agreement::default();
        for (x, y) in inferred.iter().zip(real) {
            a.instructions += 1;
            a.stall_exact += u64::from(x.stall == y.stall);
            a.stall_within_1 += u64::from(x.stall.abs_diff(y.stall) <= 1);
            a.wait_exact += u64::from(x.wait_mask == y.wait_mask);
            a.wait_presence += u64::from((x.wait_mask == 0) == (y.wait_mask == 0));
            a.yield_exact += u64::from(x.yield_ == y.yield_);
        }
        a
    }

    pub fn add(&mut self, o: &Agreement) {
        self.instructions += o.instructions;
        self.stall_exact += o.stall_exact;
        self.stall_within_1 += o.stall_within_1;
        self.wait_exact += o.wait_exact;
        self.wait_presence += o.wait_presence;
        self.yield_exact += o.yield_exact;
    }

    /// Percent of `part` over the instructions.
    pub fn pct(&self, part: u64) -> f64 {
        100.0 * part as f64 / self.instructions.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kernels::kernel;

    const FFMA: InstTiming = InstTiming {
        fixed: true,
        latency: 4,
        reads_late: false,
        memory: false,
        control: false,
        unit: 0,
        alt_unit: None,
        latch: 1,
        fixed_read: None,
    };
    const LDG: InstTiming = InstTiming {
        fixed: false,
        latency: 0,
        reads_late: true,
        memory: true,
        control: false,
        unit: 1,
        alt_unit: None,
        latch: 0,
        fixed_read: None,
    };
    const STG: InstTiming = InstTiming {
        fixed: false,
        latency: 0,
        reads_late: true,
        memory: true,
        control: false,
        unit: 1,
        alt_unit: None,
        latch: 0,
        fixed_read: None,
    };

    /// A dependent FFMA chain: each FFMA stalls the latency (4), as ptxas's `S04`.
    #[test]
    fn dependent_fixed_latency_chain_stalls_the_latency() {
        let k = kernel("FFMA R0, R1, R2, R0 ;\nFFMA R0, R1, R2, R0 ;\nFFMA R4, R0, R2, R3 ;\nEXIT ;");
        let t = [FFMA, FFMA, FFMA, FFMA];
        let b = infer(&k, &t, &InferOptions::default());
        assert_eq!(b.iter().map(|x| x.stall).collect::<Vec<_>>(), vec![4, 4, 1, 1]);
        assert!(b.iter().all(|x| x.wait_mask == 0 && x.write_sb.is_none()));
    }

    /// A load's consumer waits on the load's counter; a later store that overwrites nothing
    /// does not; a writer of the load's address register waits for the address to be read.
    #[test]
    fn loads_get_counters_and_consumers_wait() {
        let k = kernel(
            "LDG.E R4, [R2.64] ;\nFFMA R6, R4, R4, R4 ;\nIADD3 R2, R2, 0x4, RZ ;\nSTG.E [R2.64], R6 ;\nEXIT ;",
        );
        let t = [LDG, FFMA, FFMA, STG, FFMA];
        let b = infer(&k, &t, &InferOptions::default());
        let w = b[0].write_sb.expect("load counter");
        let r = b[0].read_sb.expect("address read counter");
        assert_ne!(w, r);
        assert_eq!(b[1].wait_mask, 1 << w, "FFMA waits for the load");
        assert_eq!(
            b[2].wait_mask,
            1 << r,
            "IADD3 overwrites R2: waits for the load to read it"
        );
        // The store reads R6 (FFMA, latency 4, late reader + 1) and R2 (IADD3, 4 + 1).
        assert_eq!(b[2].stall, 5);
    }

    /// An integer instruction on a 16-lane pipe (2 cycles per warp instruction).
    const IADD3: InstTiming = InstTiming {
        unit: 2,
        latch: 2,
        ..FFMA
    };
    const BRA: InstTiming = InstTiming {
        control: true,
        unit: 3,
        ..FFMA
    };
    const LDS: InstTiming = InstTiming {
        fixed_read: Some(9),
        ..LDG
    };

    fn stalls(b: &[ControlBits]) -> Vec<u8> {
        b.iter().map(|x| x.stall).collect()
    }

    /// ptxas's `ISETP.NE.AND P0, …` `[Y:S13]` right before `@P0 BRA` `[S05]` (sm_86; every
    /// guarded consumer of a fixed-latency predicate in the shipped listings): the guard is
    /// read 13 cycles after its producer, a predicate operand at the producer's latency (4);
    /// the branch stalls 5; the wait sets the producer's yield bit.
    #[test]
    fn guard_predicates_and_branches_follow_ptxas() {
        let k = kernel(
            "ISETP.NE.AND P0, PT, R1, RZ, PT ;
@P0 BRA 0x40 ;
ISETP.NE.AND P1, PT, R1, RZ, PT ;
SEL R2, R1, R3, P1 ;
EXIT ;",
        );
        let t = [IADD3, BRA, IADD3, IADD3, BRA];
        let b = infer(&k, &t, &InferOptions::default());
        // (The SEL stalls 4: the branch's target, the EXIT, must see every result.)
        assert_eq!(stalls(&b), vec![13, 5, 4, 4, 5]);
        assert!(b[0].yield_ && b[2].yield_, "waits of 13 and 4 cycles yield");
        assert!(!b[1].yield_ && !b[3].yield_);
        let turing = InferOptions {
            guard_predicate_latency: 12,
            ..InferOptions::default()
        };
        assert_eq!(infer(&k, &t, &turing)[0].stall, 12);
    }

    /// Consecutive loads and stores issue 4 cycles apart (MICRO'25 §5.4: one address
    /// calculation per 4 cycles; ptxas's `S04` between them), independent instructions of a
    /// 16-lane pipe 2 apart, FP32 instructions that may also use the INT pipe 1 apart.
    #[test]
    fn memory_instructions_and_datapaths_are_spaced_by_their_issue_rate() {
        let k = kernel(
            "LDG.E R4, [R2.64] ;
LDG.E R5, [R8.64] ;
IADD3 R10, R11, 0x1, RZ ;
IADD3 R12, R11, 0x2, RZ ;
FFMA R13, R14, R14, R14 ;
FFMA R15, R14, R14, R14 ;
FFMA R16, R14, R14, R14 ;
EXIT ;",
        );
        // 16 FP32 lanes (2 cycles), and the INT pipe when that is free first (Ampere).
        let fp = InstTiming {
            alt_unit: Some(2),
            latch: 2,
            ..FFMA
        };
        let t = [LDG, LDG, IADD3, IADD3, fp, fp, fp, BRA];
        let b = infer(&k, &t, &InferOptions::default());
        assert_eq!(stalls(&b), vec![4, 1, 2, 1, 1, 1, 1, 5]);
        let turing = [LDG, LDG, IADD3, IADD3, InstTiming { latch: 2, ..FFMA }];
        let b = infer(
            &k,
            &[&turing[..], &[FFMA, FFMA, BRA]].concat(),
            &InferOptions::default(),
        );
        assert_eq!(b[4].stall, 2, "without the INT pipe: 2 cycles");
    }

    /// A load reading a fixed-latency result waits the latency plus `memory_read_extra` (1 on
    /// sm_86, MICRO'25 rule 24; ptxas uses 4 on sm_75).
    #[test]
    fn loads_read_fixed_latency_results_late() {
        let k = kernel(
            "IADD3 R2, R2, 0x4, RZ ;
LDG.E R4, [R2.64] ;
EXIT ;",
        );
        let t = [IADD3, LDG, BRA];
        assert_eq!(infer(&k, &t, &InferOptions::default())[0].stall, 5);
        let turing = InferOptions {
            extra_for_late_readers: 4,
            ..InferOptions::default()
        };
        assert_eq!(infer(&k, &t, &turing)[0].stall, 8);
    }

    /// `ERRBAR` is `S00` with yield; a CALL waits for every pending counter, including a
    /// global atomic's whose result goes to `RZ`.
    #[test]
    fn errbar_and_calls_follow_ptxas() {
        let k = kernel(
            "ATOMG.E.EXCH.STRONG.GPU PT, RZ, [R2.64], RZ ;
LDG.E R4, [R6.64] ;
MEMBAR.SC.GPU ;
ERRBAR ;
CALL.REL.NOINC 0x60 ;
EXIT ;
RET.REL.NODEC R20 0x0 ;",
        );
        let t = [LDG, LDG, BRA, FFMA, BRA, BRA, BRA];
        let b = infer(&k, &t, &InferOptions::default());
        let atom = b[0].write_sb.expect("the atomic gets a write counter");
        let load = b[1].write_sb.expect("load counter");
        assert_eq!((b[3].stall, b[3].yield_), (0, true));
        assert_eq!(b[2].stall, 5, "MEMBAR stalls as a control instruction");
        assert_eq!(b[4].wait_mask & (1 << atom | 1 << load), 1 << atom | 1 << load);
    }

    /// A load whose address register is overwritten soon after gets a read counter; one
    /// whose address is overwritten only `read_counter_window` or more instructions later
    /// gets none; a shared load never does (its sources are read 9 cycles after issue: the
    /// writer keeps that distance).
    #[test]
    fn read_counters_only_where_a_source_is_overwritten_soon() {
        let mut src = String::from(
            "LDG.E R4, [R2.64] ;
IADD3 R2, R2, 0x4, RZ ;
LDG.E R5, [R8.64] ;
",
        );
        let mut t = vec![LDG, IADD3, LDG];
        for i in 0..8 {
            src += &format!(
                "FFMA R{}, R14, R14, R14 ;
",
                20 + i
            );
            t.push(FFMA);
        }
        src += "IADD3 R8, R8, 0x4, RZ ;
LDS R6, [R10] ;
IADD3 R10, R10, 0x4, RZ ;
EXIT ;";
        t.extend([IADD3, LDS, IADD3, BRA]);
        let k = kernel(&src);
        let b = infer(&k, &t, &InferOptions::default());
        assert!(b[0].read_sb.is_some(), "R2 overwritten by the next instruction");
        assert!(b[2].read_sb.is_none(), "R8 overwritten 9 instructions later");
        let lds = 12;
        assert!(b[lds].read_sb.is_none());
        // LDS issues at T; the IADD3 writing R10 waits until T + 9.
        assert_eq!(b[lds].stall, 9);
    }

    /// A fixed latency longer than the largest stall count (an MMA's 24 cycles) cannot be
    /// covered by the stall of the instruction before its consumer: the producer gets a
    /// counter and the consumer waits on it.
    #[test]
    fn results_later_than_the_largest_stall_get_a_counter() {
        let k = kernel("HMMA.16816.F32 R24, R4, R12, R24 ;\nHMMA.16816.F32 R24, R4, R12, R24 ;\nEXIT ;");
        let mma = InstTiming {
            latency: 24,
            unit: 4,
            latch: 16,
            ..FFMA
        };
        let b = infer(&k, &[mma, mma, BRA], &InferOptions::default());
        let c = b[0].write_sb.expect("counter for a 24-cycle result");
        assert_eq!(b[1].wait_mask, 1 << c);
        assert_eq!(
            b[0].stall, 15,
            "the tensor unit's latch (16), clipped to the largest stall"
        );
    }

    #[test]
    fn agreement_counts() {
        let mk = |s: u8, m: u8| ControlBits {
            stall: s,
            wait_mask: m,
            ..ControlBits::default()
        };
        let a = Agreement::of(&[mk(4, 0), mk(2, 1), mk(6, 0)], &[mk(4, 0), mk(3, 2), mk(1, 0)]);
        assert_eq!(
            (
                a.instructions,
                a.stall_exact,
                a.stall_within_1,
                a.wait_exact,
                a.wait_presence
            ),
            (3, 1, 2, 2, 3)
        );
    }
}
