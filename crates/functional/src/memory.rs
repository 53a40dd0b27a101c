//! Memories: sparse 64-bit global memory with explicit allocations, per-CTA shared memory,
//! per-thread local memory.

use std::collections::BTreeMap;

/// First address handed out by [`GlobalMemory::alloc`] (looks like a CUDA device pointer).
pub const GLOBAL_BASE: u64 = 0x7f00_0000_0000;
/// Unmapped bytes left between two allocations so that small overflows are caught.
pub const GUARD_BYTES: u64 = 0x100;
/// Base of the shared-memory window of the generic address space (4 GiB aligned: its high
/// word is what `SR_SWINHI` reads). A generic address `SHARED_WINDOW + off` is shared
/// offset `off` of the issuing thread's CTA. The windows lie above 2^48, where no host
/// (user-space) address and no allocation of [`GlobalMemory`] can be, so a host pointer
/// mapped into device memory (managed memory) never falls into a window. The values are
/// sassim's choice (the driver's are not documented); programs only see them through
/// `cvta` / `c[0x0][0x18]` / `c[0x0][0x20]` / `SR_SWINHI`.
pub const SHARED_WINDOW: u64 = 0x0001_0000_0000_0000;
/// Base of the local-memory window (`c[0x0][0x20]`): `LOCAL_WINDOW + off` is local offset
/// `off` of the issuing thread.
pub const LOCAL_WINDOW: u64 = 0x0001_0001_0000_0000;
/// Size of each window.
pub const WINDOW_BYTES: u64 = 1 << 32;
/// Base of the constant-bank-0 window (sm_90+): `c[0x0][0x198]` holds `CONST_WINDOW` plus the
/// parameter offset, the generic address of the kernel's parameter block, through which a
/// kernel reads a `__grid_constant__` parameter by address (e.g. a TMA tensor map). sassim's
/// choice, like the other windows; read-only.
pub const CONST_WINDOW: u64 = 0x0001_0002_0000_0000;

/// The offset in constant bank 0 of a generic address in [`CONST_WINDOW`].
pub fn const_window(addr: u64) -> Option<u64> {
    (CONST_WINDOW..CONST_WINDOW + WINDOW_BYTES)
        .contains(&addr)
        .then(|| addr - CONST_WINDOW)
}

/// Where a generic address points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generic {
    Global(u64),
    Shared(u64),
    Local(u64),
}

/// Resolve a generic address to a state space and an address within it.
pub fn resolve_generic(addr: u64) -> Generic {
    if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_BYTES).contains(&addr) {
        Generic::Shared(addr - SHARED_WINDOW)
    } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_BYTES).contains(&addr) {
        Generic::Local(addr - LOCAL_WINDOW)
    } else {
        Generic::Global(addr)
    }
}

/// Sparse byte-addressed global memory. Only allocated regions are accessible; any access
/// that is not entirely inside one region is an illegal address.
#[derive(Debug, Clone, Default)]
pub struct GlobalMemory {
    regions: BTreeMap<u64, Vec<u8>>,
    next: u64,
    /// Bumped on every write that changes a byte (used for deadlock detection).
    pub(crate) changes: u64,
}

impl GlobalMemory {
    pub fn new() -> GlobalMemory {
        Self::with_base(GLOBAL_BASE)
    }

    /// A memory whose allocations start at `base` (the CUDA runtime puts device memory above
    /// every host address, so that host pointers mapped into it cannot collide).
    pub fn with_base(base: u64) -> GlobalMemory {
        GlobalMemory {
            regions: BTreeMap::new(),
            next: base,
            changes: 0,
        }
    }

    /// Bytes allocated (sum of region sizes).
    pub fn allocated_bytes(&self) -> u64 {
        self.regions.values().map(|v| v.len() as u64).sum()
    }

    /// Allocate `size` zeroed bytes aligned to `align` (a power of two; at least 256 is used).
    pub fn alloc(&mut self, size: u64, align: u64) -> u64 {
        let addr = self.place(size.max(1), align);
        self.regions.insert(addr, vec![0; size.max(1) as usize]);
        addr
    }

    /// Allocate `size` bytes (at least `data.len()`) aligned as [`GlobalMemory::alloc`] does,
    /// holding `data` followed by zeros: the same memory as `alloc` and then `write(data)`
    /// (a change if a byte of `data` is not zero), but the bytes are copied once, with no
    /// zeroing or comparing first.
    pub fn alloc_with(&mut self, data: &[u8], size: u64, align: u64) -> u64 {
        let len = size.max(data.len() as u64).max(1) as usize;
        let mut bytes = Vec::with_capacity(len);
        bytes.extend_from_slice(data);
        bytes.resize(len, 0);
        let addr = self.place(len as u64, align);
        self.regions.insert(addr, bytes);
        // Looked at 64 bytes at a time (the inner OR vectorizes): a buffer of values
        // usually stops at the first block, a zeroed one is read once.
        if data.chunks(64).any(|c| c.iter().fold(0, |a, &b| a | b) != 0) {
            self.changes += 1;
        }
        addr
    }

    /// The address of a new allocation of `len` (>= 1) bytes aligned to `align` (at least
    /// 256), with `GUARD_BYTES` after it.
    fn place(&mut self, len: u64, align: u64) -> u64 {
        let align = align.max(256).next_power_of_two();
        if self.next == 0 {
            self.next = GLOBAL_BASE;
        }
        let addr = self.next.div_ceil(align) * align;
        self.next = addr + len + GUARD_BYTES;
        addr
    }

    /// Free the allocation starting at `addr`. False if no allocation starts there.
    pub fn free(&mut self, addr: u64) -> bool {
        self.regions.remove(&addr).is_some()
    }

    /// Map a region at a fixed address (for microbenchmarks with given addresses).
    /// Returns false if it overlaps an existing region.
    pub fn map_at(&mut self, addr: u64, size: u64) -> bool {
        let end = addr + size;
        if let Some((s, v)) = self.regions.range(..end).next_back() {
            if s + v.len() as u64 > addr {
                return false;
            }
        }
        self.regions.insert(addr, vec![0; size as usize]);
        self.next = self.next.max(end + GUARD_BYTES);
        true
    }

    /// The allocated regions as (start, size).
    pub fn regions(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.regions.iter().map(|(a, v)| (*a, v.len() as u64))
    }

    /// The allocation that holds all of `[lo, hi)`, as its start and bytes (one lookup for
    /// the accesses of a warp that all fall in it).
    pub fn span(&self, lo: u64, hi: u64) -> Option<(u64, &[u8])> {
        let (start, v) = self.regions.range(..=lo).next_back()?;
        (hi >= lo && hi - start <= v.len() as u64).then_some((*start, v.as_slice()))
    }

    fn locate(&self, addr: u64, len: u64) -> Option<(u64, usize)> {
        let (start, v) = self.regions.range(..=addr).next_back()?;
        let off = addr - start;
        (off + len <= v.len() as u64).then_some((*start, off as usize))
    }

    /// Whether `[addr, addr+len)` lies inside one allocation.
    pub fn is_mapped(&self, addr: u64, len: u64) -> bool {
        self.locate(addr, len).is_some()
    }

    /// Copy bytes in. Returns false (and writes nothing) if the range is not mapped.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        match self.locate(addr, data.len() as u64) {
            Some((s, off)) => {
                let v = self.regions.get_mut(&s).expect("region");
                if v[off..off + data.len()] != *data {
                    v[off..off + data.len()].copy_from_slice(data);
                    self.changes += 1;
                }
                true
            }
            None => false,
        }
    }

    /// [`GlobalMemory::write`] of bytes that may run on into the next allocation (the
    /// coalesced stores of a shard's log, each checked to be mapped when logged). False if
    /// a byte is not mapped (the bytes before it are written).
    pub fn write_run(&mut self, addr: u64, data: &[u8]) -> bool {
        if self.write(addr, data) {
            return true;
        }
        let (mut a, mut rest) = (addr, data);
        while !rest.is_empty() {
            let Some((s, v)) = self.regions.range(..=a).next_back() else {
                return false;
            };
            let end = s.saturating_add(v.len() as u64);
            if a >= end {
                return false;
            }
            let n = rest.len().min((end - a) as usize);
            self.write(a, &rest[..n]);
            a += n as u64;
            rest = &rest[n..];
        }
        true
    }

    /// The `len` bytes at `addr` in place, or None if the range is not mapped (within one
    /// allocation).
    pub fn bytes_at(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let (s, off) = self.locate(addr, len as u64)?;
        Some(&self.regions[&s][off..off + len])
    }

    /// Copy bytes out, or None if the range is not mapped.
    pub fn read(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        self.bytes_at(addr, len).map(<[u8]>::to_vec)
    }

    /// Read into a buffer (no allocation). False if not mapped.
    pub fn read_into(&self, addr: u64, out: &mut [u8]) -> bool {
        match self.bytes_at(addr, out.len()) {
            Some(b) => {
                out.copy_from_slice(b);
                true
            }
            None => false,
        }
    }
}

/// A flat byte array with bounds-checked little-endian accessors (a CTA's shared memory).
/// It remembers whether it was ever written, so that a cleared copy is reused without
/// zeroing bytes that are still zero ([`FlatMemory::reset`]).
#[derive(Debug, Clone, Default)]
pub struct FlatMemory {
    bytes: Vec<u8>,
    /// Some byte may be non-zero (set by every mutable access).
    written: bool,
}

impl FlatMemory {
    pub fn new(size: usize) -> FlatMemory {
        FlatMemory {
            bytes: vec![0; size],
            written: false,
        }
    }
    /// Make the memory `size` zero bytes, reusing its storage (only written bytes cleared).
    pub fn reset(&mut self, size: usize) {
        if self.written {
            self.bytes.fill(0);
            self.written = false;
        }
        self.bytes.resize(size, 0);
    }
    pub fn len(&self) -> usize {
        self.bytes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    /// The bytes, to be written.
    #[inline]
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.written = true;
        &mut self.bytes
    }
    pub fn read_into(&self, addr: u64, out: &mut [u8]) -> bool {
        let a = addr as usize;
        if addr > usize::MAX as u64 || a.checked_add(out.len()).is_none_or(|e| e > self.bytes.len()) {
            return false;
        }
        out.copy_from_slice(&self.bytes[a..a + out.len()]);
        true
    }
    /// Returns None if out of range, Some(changed) otherwise.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Option<bool> {
        let a = addr as usize;
        if addr > usize::MAX as u64 || a.checked_add(data.len()).is_none_or(|e| e > self.bytes.len()) {
            return None;
        }
        let changed = self.bytes[a..a + data.len()] != *data;
        if changed {
            self.written = true;
        }
        self.bytes[a..a + data.len()].copy_from_slice(data);
        Some(changed)
    }
}
