//! Trace-driven mode, one SM's part: the warps of the CTAs on that SM and their barrier
//! state. The SMs of a kernel tick in parallel, each with its own part
//! ([`crate::parallel`]); a trace has no state shared between SMs while they tick (the
//! trace reader is used when a CTA starts, between cycles).

use crate::trace_exec::PcMap;
use sassim_isa::cpu_hint::prefetch_val;
use sassim_timing::exec::{Executor, Issued, MemAccess};
use sassim_timing::inst::MemSpace;
use sassim_trace::TraceInstr;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Hashes the warp and CTA ids of a part's maps: small integers, looked up several times
/// per warp and cycle (`next_pc`, `blocked`), for which std's SipHash cost ~4 % of a trace
/// run. One multiplication by an odd constant (2^64 / golden ratio) spreads consecutive
/// ids over the low bits and mixes the high ones. Nothing iterates these maps, so the
/// hash does not change results.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

/// The multiplier of [`IdHasher`].
const ID_HASH_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(ID_HASH_MUL);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = (self.0 ^ u64::from(v)).wrapping_mul(ID_HASH_MUL);
    }
}

/// A map keyed by warp or CTA id.
pub(crate) type IdMap<V> = HashMap<u32, V, BuildHasherDefault<IdHasher>>;

/// One warp of a CTA in flight.
#[derive(Debug)]
pub(crate) struct TWarp {
    pub cta: u32,
    pub instrs: Vec<TraceInstr>,
    pub addrs: Vec<u64>,
    pub pos: usize,
    /// Barriers issued (BAR, including BAR.ARV).
    pub bars: u32,
    /// The last barrier issued waits for the others (not BAR.ARV).
    pub waits: bool,
}

impl TWarp {
    pub fn done(&self) -> bool {
        self.pos >= self.instrs.len()
    }

    /// Hint the CPU to bring `records` of the warp's instruction records from the next one
    /// on, and the next one's addresses, into its caches ([`sassim_isa::cpu_hint`]: a loaded
    /// GPU's records, 90 MB for the compute-bound waves trace, are far past the host's
    /// caches, and a warp reads its next one every few cycles).
    #[inline]
    fn prefetch_next(&self, records: usize) {
        let Some(next) = self.instrs.get(self.pos..) else {
            return;
        };
        if let Some(r) = next.get(..records.min(next.len())) {
            prefetch_val(r);
        }
        if let Some(i) = next.first().filter(|i| i.is_mem()) {
            let s = i.addr_start as usize;
            if let Some(a) = self.addrs.get(s..s + i.n_addrs()) {
                prefetch_val(a);
            }
        }
    }
}

/// Instruction records a warp that issued asks the CPU for ([`TWarp::prefetch_next`]): the
/// next (its PC is read at once, to check that fetch follows it) and the one after, which
/// the warp's next issue reads.
const PREFETCH_AT_ISSUE: usize = 2;

/// What issuing reads of a kernel trace (read-only while SMs tick).
#[derive(Debug)]
pub(crate) struct TraceCode {
    pub pc_map: PcMap,
    /// Per static index: memory space of a memory instruction (set by `prepare`).
    pub mem_space: Vec<Option<MemSpace>>,
    /// Per static index: 0 = no barrier, 1 = BAR (waits), 2 = BAR.ARV (arrives).
    pub barrier: Vec<u8>,
    /// Warps per CTA (warp id = CTA × this + warp index).
    pub wpc: u32,
}

/// The warps in flight on one SM.
#[derive(Debug, Default)]
pub(crate) struct TracePart {
    pub warps: IdMap<TWarp>,
    /// Per CTA in flight: the fewest barriers issued by a warp that has not exited.
    pub cta_min_bars: IdMap<u32>,
    pub issued: u64,
    /// What the SM's steps of the last quantum did.
    pub quantum: crate::quantum::QuantumAcc,
}

impl TracePart {
    /// Hint the CPU to bring each warp's next instruction record into its caches: before
    /// the SM's steps of a quantum (no SM's records stay cached through the other SMs'
    /// steps).
    pub fn prefetch_warps(&self) {
        for w in self.warps.values() {
            w.prefetch_next(1);
        }
    }

    pub fn update_cta_min(&mut self, wpc: u32, cta: u32) {
        let first = cta as u64 * wpc as u64;
        let m = (first..first + wpc as u64)
            .filter_map(|id| self.warps.get(&(id as u32)))
            .filter(|w| !w.done())
            .map(|w| w.bars)
            .min();
        self.cta_min_bars.insert(cta, m.unwrap_or(u32::MAX));
    }

    /// Drop the warps of CTA `cta`.
    pub fn retire(&mut self, wpc: u32, cta: u32) {
        let first = cta as u64 * wpc as u64;
        for id in first..first + wpc as u64 {
            self.warps.remove(&(id as u32));
        }
        self.cta_min_bars.remove(&cta);
    }

    /// The warp waits at a barrier that another warp of its CTA has not reached.
    pub fn blocked(&self, warp: u32) -> bool {
        match self.warps.get(&warp) {
            Some(w) if w.waits && w.bars > 0 => self.cta_min_bars.get(&w.cta).is_some_and(|&m| m < w.bars),
            _ => false,
        }
    }
}

/// One SM's part as the timing model's executor.
pub(crate) struct PartExec<'a> {
    pub code: &'a TraceCode,
    pub p: &'a mut TracePart,
}

impl Executor for PartExec<'_> {
    type Writes = ();

    fn next_pc(&self, warp: u32) -> Option<u64> {
        let w = self.p.warps.get(&warp)?;
        let i = w.instrs.get(w.pos)?;
        self.code.pc_map.map(u64::from(i.pc))
    }

    fn blocked(&self, warp: u32) -> bool {
        self.p.blocked(warp)
    }

    fn issue(&mut self, warp: u32, _clock: u64, out: &mut Issued<()>) -> Result<(), String> {
        let code = self.code;
        let w = self
            .p
            .warps
            .get_mut(&warp)
            .ok_or_else(|| format!("trace warp {warp} is not in flight"))?;
        let i = *w
            .instrs
            .get(w.pos)
            .ok_or_else(|| format!("trace warp {warp} has no instruction left"))?;
        let pc = code
            .pc_map
            .map(u64::from(i.pc))
            .ok_or_else(|| format!("pc {:#x} is not an instruction slot", i.pc))?;
        let index = (pc / sassim_isa::INSTRUCTION_BYTES) as usize;
        match code.mem_space.get(index).copied().flatten() {
            None => out.mem = None,
            Some(space) => {
                // Written in place into the timing model's record.
                let m = out.mem.get_or_insert_with(|| MemAccess::blank(space));
                let a = if i.is_mem() {
                    let s = i.addr_start as usize;
                    w.addrs.get(s..s + i.n_addrs()).unwrap_or(&[])
                } else {
                    &[]
                };
                let mut it = a.iter();
                for (lane, slot) in m.addrs.iter_mut().enumerate() {
                    *slot = 0;
                    if i.mask >> lane & 1 == 1 {
                        if let Some(&x) = it.next() {
                            *slot = x;
                        }
                    }
                }
                m.space = space;
                // Lanes without an address (a trace without addresses) do not access.
                m.active = if a.len() == i.mask.count_ones() as usize {
                    i.mask
                } else {
                    0
                };
                m.bytes_per_lane = if i.mem_width > 0 {
                    u32::from(i.mem_width)
                } else {
                    4
                };
            }
        }
        let bar = code.barrier.get(index).copied().unwrap_or(0);
        w.pos += 1;
        w.prefetch_next(PREFETCH_AT_ISSUE);
        let exited = w.done();
        if bar != 0 {
            w.bars += 1;
            w.waits = bar == 1;
        }
        let cta = w.cta;
        if bar != 0 || exited {
            self.p.update_cta_min(code.wpc, cta);
        }
        self.p.issued += 1;
        out.pc = pc;
        out.index = index;
        out.active_mask = i.mask;
        out.exited = exited;
        Ok(())
    }

    fn commit(&mut self, _warp: u32, _writes: &()) {}
}
