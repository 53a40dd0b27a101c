//! Control bits for code without them (issue 13, point 5): stall counts, dependence-counter
//! assignments and wait masks derived the way the compiler derives them, from each opcode's
//! latency class, for traces recorded without the kernel's binary.
//!
//! The rules (MICRO'25 §4; the model's own rules in `docs/model.md`):
//! * a **fixed-latency** result is visible `latency` cycles after its producer issues; a
//!   consumer may issue then (a memory instruction, which reads its sources one cycle later
//!   than fixed-latency consumers, waits `extra_for_late_readers` cycles longer). The stall
//!   count of each instruction is the distance to the next one's earliest issue, 1–15 (a
//!   longer distance cannot be expressed; the consumer then reads early, which the timing
//!   model reports as a stale read).
//! * a **variable-latency** result (memory, MUFU, …) gets a dependence counter (SB0–SB5,
//!   round robin); every later reader or writer of its registers waits on that counter.
//!   A memory instruction's register sources get a counter too (released when they are read),
//!   and a later writer of such a register waits on it (WAR).
//! * **blocks**: the code is laid out in address order; a block entered from a branch starts
//!   with every fixed-latency result visible (the branch's stall count covers them), and the
//!   counters pending at the end of the code are waited for again at loop heads (the pass runs
//!   twice, the second time from the first pass's final counters).
//!
//! The pass never sets yield bits, reuse flags or DEPBARs (the counters are waited for with
//! wait masks).

use crate::cfg::{Cfg, EdgeKind};
use sassim_isa::dataflow::{regs_read, regs_written, ArchReg};
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
}

impl Default for InferOptions {
    fn default() -> Self {
        InferOptions {
            max_stall: 15,
            counters: 6,
            extra_for_late_readers: 1,
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
    let reads: Vec<Vec<ArchReg>> = kernel.instructions[..n].iter().map(regs_read).collect();
    let writes: Vec<Vec<ArchReg>> = kernel.instructions[..n].iter().map(regs_written).collect();
    let (first, end) = one_pass(n, timing, &reads, &writes, &depbar, &branch_target, None, opts);
    if !back_target.iter().any(|&b| b) {
        return first;
    }
    let carried = Carried {
        at: &back_target,
        counters: end,
    };
    one_pass(
        n,
        timing,
        &reads,
        &writes,
        &depbar,
        &branch_target,
        Some(&carried),
        opts,
    )
    .0
}

/// Counters pending at the end of the code, merged in at loop heads.
struct Carried<'a> {
    at: &'a [bool],
    counters: Counters,
}

#[allow(clippy::too_many_arguments)]
fn one_pass(
    n: usize,
    timing: &[InstTiming],
    reads: &[Vec<ArchReg>],
    writes: &[Vec<ArchReg>],
    is_depbar: &[bool],
    branch_target: &[bool],
    carried: Option<&Carried>,
    opts: &InferOptions,
) -> (Vec<ControlBits>, Counters) {
    let mut sb = Counters::default();
    // Stall 1, no yield, no counters, no reuse.
    let mut bits = vec![ControlBits::default(); n];
    // Cycle at which each register's fixed-latency result is visible (virtual time).
    let mut ready: BTreeMap<ArchReg, u64> = BTreeMap::new();
    let mut t: u64 = 0;
    // Issue time of the last instruction that incremented each counter.
    let mut set_at: [Option<u64>; 8] = [None; 8];
    for i in 0..n {
        let ti = timing[i];
        // Earliest issue for this instruction's dependences on fixed-latency results.
        let mut need = if i > 0 { t + 1 } else { t };
        let extra = if ti.reads_late {
            u64::from(opts.extra_for_late_readers)
        } else {
            0
        };
        for r in &reads[i] {
            if let Some(&v) = ready.get(r) {
                need = need.max(v + extra);
            }
        }
        for r in &writes[i] {
            if let Some(&v) = ready.get(r) {
                // WAW: the new value must land after the old one.
                need = need.max(v.saturating_sub(u64::from(ti.latency)) + 1);
            }
        }
        if let Some(c) = carried.filter(|c| c.at[i]) {
            for (r, k) in &c.counters.write {
                sb.write.entry(*r).or_insert(*k);
            }
            for (r, k) in &c.counters.read {
                sb.read.entry(*r).or_insert(*k);
            }
        }
        // Wait mask: counters of pending writes of registers read or written (RAW/WAW) and of
        // pending reads of registers written (WAR).
        let mut mask = 0u8;
        for r in reads[i].iter().chain(writes[i].iter()) {
            if let Some(&c) = sb.write.get(r) {
                mask |= 1 << c;
            }
        }
        for r in &writes[i] {
            if let Some(&c) = sb.read.get(r) {
                mask |= 1 << c;
            }
        }
        // `DEPBAR.LE SBx, N` names the compiler's counters, which the inference does not
        // reproduce: it waits for every pending counter instead (conservative, never early).
        if is_depbar[i] {
            for c in sb.write.values().chain(sb.read.values()) {
                mask |= 1 << c;
            }
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
        if branch_target[i] {
            if let Some(&v) = ready.values().max() {
                need = need.max(v);
            }
            ready.clear();
        }
        if i > 0 {
            let gap = need.saturating_sub(t).max(1);
            let stall = gap.min(u64::from(opts.max_stall.max(1)));
            bits[i - 1].stall = stall as u8;
            t += stall;
        }
        bits[i].wait_mask = mask;
        sb.release(mask);
        // What this instruction leaves pending.
        if ti.fixed {
            for r in &writes[i] {
                ready.insert(*r, t + u64::from(ti.latency));
                sb.write.remove(r);
            }
        } else if !writes[i].is_empty() {
            let c = sb.take(opts.counters);
            bits[i].write_sb = Some(c);
            set_at[c as usize] = Some(t);
            for r in &writes[i] {
                sb.write.insert(*r, c);
                ready.remove(r);
            }
        }
        if ti.reads_late && !ti.fixed {
            let srcs: Vec<ArchReg> = reads[i]
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
    if let Some(last) = bits.last_mut() {
        last.stall = last.stall.max(1);
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
        }
        a
    }

    pub fn add(&mut self, o: &Agreement) {
        self.instructions += o.instructions;
        self.stall_exact += o.stall_exact;
        self.stall_within_1 += o.stall_within_1;
        self.wait_exact += o.wait_exact;
        self.wait_presence += o.wait_presence;
    }

    /// Percent of `part` over the instructions.
    pub fn pct(&self, part: u64) -> f64 {
        100.0 * part as f64 / self.instructions.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(src: &str) -> Kernel {
        sassim_sass::microbench::parse(src, "t.sass")
            .expect("parse")
            .kernel
    }

    const FFMA: InstTiming = InstTiming {
        fixed: true,
        latency: 4,
        reads_late: false,
    };
    const LDG: InstTiming = InstTiming {
        fixed: false,
        latency: 0,
        reads_late: true,
    };
    const STG: InstTiming = InstTiming {
        fixed: false,
        latency: 0,
        reads_late: true,
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
