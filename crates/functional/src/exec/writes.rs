//! What an issued instruction produces: its register results (applied at commit) and its
//! memory access.

use super::*;

/// Maximum number of architectural registers one instruction writes.
pub const MAX_WRITES: usize = 6;

/// One register write produced at issue and applied at commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegWrite {
    pub reg: ArchReg,
    /// Lanes written (all-ones for uniform registers).
    pub mask: u32,
    /// Per-lane values (predicates: 0/1; uniform registers: `vals[0]`).
    pub vals: [u32; 32],
}

/// The register results of one instruction (fixed size, no heap). Only the first `len`
/// entries are meaningful: [`PendingWrites::clear`] leaves the others as they were, and
/// equality and `Debug` look at the used entries only. Laid out in field order, the count
/// and ticket first: a commit reads them and then the first entries, from one cache line
/// (the record is usually cold by then), where the compiler's order put them 0.8 KB apart.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct PendingWrites {
    pub(super) len: u8,
    /// A global atomic whose returned values are written when its shard's memory effects
    /// are applied (parallel ticking, `exec/shard.rs`): 0 = none.
    pub(crate) ticket: u32,
    pub(super) w: [RegWrite; MAX_WRITES],
}

impl PendingWrites {
    /// Hint the CPU to bring the part of this record that holds `n` writes into its caches,
    /// without reading it ([`sassim_isa::cpu_hint`]).
    #[inline]
    pub fn prefetch(&self, n: usize) {
        let bytes =
            std::mem::offset_of!(PendingWrites, w) + n.min(MAX_WRITES) * std::mem::size_of::<RegWrite>();
        sassim_isa::cpu_hint::prefetch_bytes(std::ptr::from_ref(self).cast(), bytes);
    }
}

impl PartialEq for PendingWrites {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for PendingWrites {}

impl std::fmt::Debug for PendingWrites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl Default for PendingWrites {
    fn default() -> Self {
        PendingWrites {
            len: 0,
            ticket: 0,
            w: [RegWrite {
                reg: ArchReg::R(0),
                mask: 0,
                vals: [0; 32],
            }; MAX_WRITES],
        }
    }
}

impl PendingWrites {
    #[inline]
    pub fn as_slice(&self) -> &[RegWrite] {
        &self.w[..self.len as usize]
    }
    /// No writes (the entries' storage is kept, not cleared).
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
        self.ticket = 0;
    }
    /// Make `self` hold the writes of `other`, copying only the used entries (a record
    /// reused for every issue, without copying the whole fixed-size array).
    #[inline]
    pub fn copy_from(&mut self, other: &PendingWrites) {
        let n = other.len as usize;
        self.w[..n].copy_from_slice(&other.w[..n]);
        self.len = other.len;
        self.ticket = other.ticket;
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The registers written.
    pub fn regs(&self) -> impl Iterator<Item = ArchReg> + '_ {
        self.as_slice().iter().map(|w| w.reg)
    }
    /// The entry of `reg` if the instruction already wrote it.
    #[inline]
    pub(super) fn written_at(&self, reg: ArchReg) -> Option<usize> {
        self.as_slice().iter().position(|w| w.reg == reg)
    }
    #[inline]
    pub(super) fn slot(&mut self, reg: ArchReg) -> &mut RegWrite {
        if let Some(i) = self.written_at(reg) {
            return &mut self.w[i];
        }
        let s = self.push(reg, 0);
        s.vals = [0; 32];
        s
    }
    /// A new entry for `reg` (not written yet) with `mask`, its values left for the caller
    /// to set.
    #[inline(always)]
    pub(super) fn push(&mut self, reg: ArchReg, mask: u32) -> &mut RegWrite {
        let n = self.len as usize;
        assert!(n < MAX_WRITES, "too many register writes in one instruction");
        self.len += 1;
        let s = &mut self.w[n];
        s.reg = reg;
        s.mask = mask;
        s
    }
    #[inline]
    pub(super) fn set(&mut self, reg: ArchReg, lane: usize, v: u32) {
        let s = self.slot(reg);
        s.mask |= 1 << lane;
        s.vals[lane] = v;
    }
    /// Write regular register `idx` (RZ ignored).
    #[inline]
    pub(crate) fn r(&mut self, idx: u8, lane: usize, v: u32) {
        if idx != 255 {
            self.set(ArchReg::R(idx), lane, v);
        }
    }
    pub(crate) fn ur(&mut self, idx: u8, v: u32) {
        if idx != 63 {
            let s = self.slot(ArchReg::UR(idx));
            s.mask = u32::MAX;
            s.vals[0] = v;
        }
    }
    pub(crate) fn p(&mut self, idx: u8, lane: usize, v: bool) {
        if idx != 7 {
            self.set(ArchReg::P(idx), lane, v as u32);
        }
    }
    pub(crate) fn up(&mut self, idx: u8, v: bool) {
        if idx != 7 {
            let s = self.slot(ArchReg::UP(idx));
            s.mask = u32::MAX;
            s.vals[0] = v as u32;
        }
    }
}

/// Kind of memory access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum MemKind {
    Load,
    Store,
    Atomic,
    Ldgsts,
}

/// The memory access of one instruction (for the timing/memory model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemAccess {
    pub space: Space,
    pub kind: MemKind,
    pub bytes_per_lane: u32,
    /// Per-lane addresses, valid for the lanes of `Issued::active_mask` (LDGSTS: the global
    /// source addresses).
    pub addrs: [u64; 32],
    /// A shared-memory access to another CTA of the thread-block cluster (distributed shared
    /// memory, sm_90+), as the first active lane's address says.
    pub remote: bool,
}

/// What one issued instruction did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Issued {
    pub pc: u64,
    /// Index into `kernel.instructions`.
    pub index: usize,
    /// Threads of the path that issued (before the guard).
    pub path_mask: u32,
    /// Lanes that executed (guard true).
    pub active_mask: u32,
    pub mem: Option<MemAccess>,
    pub writes: PendingWrites,
    /// The warp finished (all its threads exited) with this instruction.
    pub exited: bool,
    /// The warp arrived at CTA barrier `id` (BAR.SYNC/BAR.ARV).
    pub barrier: Option<u32>,
    /// The instruction read a clock special register.
    pub clock_read: bool,
}
