//! One lane's access to memory in its state space: global memory (and the constant window
//! of the generic space; a shard's view and store log), the shared memory of a CTA or of
//! another CTA of its cluster, and a warp's local memory; generic addresses resolved, faults
//! reported, accesses recorded for the timing model. Also the whole-warp fast paths'
//! checks: a global load's one allocation, a shared load's offsets in the CTA's own memory.

use super::*;
use crate::memory::Generic;

fn space_of(space: MemSpace) -> Space {
    match space {
        MemSpace::Global | MemSpace::Generic => Space::Global,
        MemSpace::Shared => Space::Shared,
        MemSpace::Local => Space::Local,
    }
}

impl KernelExec {
    /// Read global memory, or the read-only constant-bank window of the generic address space
    /// (`memory::CONST_WINDOW`: a kernel's parameters by address). False if not mapped.
    pub(in crate::exec) fn read_global(&self, addr: u64, out: &mut [u8]) -> bool {
        self.read_global_in(&self.global, addr, out)
    }

    /// [`KernelExec::read_global`] of global memory `global`.
    pub(in crate::exec) fn read_global_in(&self, global: &GlobalMemory, addr: u64, out: &mut [u8]) -> bool {
        match crate::memory::const_window(addr) {
            Some(off) => match self.cbank.get(off as usize..).and_then(|b| b.get(..out.len())) {
                Some(b) => {
                    out.copy_from_slice(b);
                    true
                }
                None => false,
            },
            None => global.read_into(addr, out),
        }
    }
}

impl Ex<'_> {
    /// Read global memory (or the constant window): the kernel's own, or a shard's view.
    #[inline]
    pub(in crate::exec) fn read_global(&self, addr: u64, out: &mut [u8]) -> bool {
        self.k
            .read_global_in(self.gmem.unwrap_or(&self.k.global), addr, out)
    }

    /// Write global memory; a shard logs the write for the end of the cycle
    /// (`exec/shard.rs`). False if the range is not mapped.
    #[inline]
    pub(in crate::exec) fn write_global(&mut self, addr: u64, data: &[u8]) -> bool {
        match self.gmem {
            None => self.k.global.write(addr, data),
            Some(g) => g.is_mapped(addr, data.len() as u64) && self.k.log_store(addr, data),
        }
    }

    /// Where the lanes of `lm` load `nb` bytes each at `addrs` (global addresses) when every
    /// access is aligned and all lie in one allocation outside the constant window: that
    /// allocation's start and bytes, which give each lane what [`Ex::load`] gives it. None
    /// otherwise (the lanes are then loaded one by one, which reports any fault). `run`:
    /// [`contiguous_run`] of the lanes, whose bounds need no pass over them.
    pub(super) fn global_span(
        &self,
        addrs: &[u64; 32],
        lm: u32,
        nb: u64,
        run: Option<u64>,
    ) -> Option<(u64, &[u8])> {
        let (lo, hi, misaligned) = match run {
            // The lowest and highest lanes' addresses; `nb` is a power of two, so every
            // lane is aligned as the first is.
            Some(a0) => (a0, a0 + 31 * nb, a0 & (nb - 1)),
            None => {
                // Over the whole warp, the lanes outside `lm` neutral (no branch per lane).
                let (mut lo, mut hi, mut misaligned) = (u64::MAX, 0u64, 0u64);
                for (l, &a) in addrs.iter().enumerate() {
                    let on = lm >> l & 1 == 1;
                    lo = lo.min(if on { a } else { u64::MAX });
                    hi = hi.max(if on { a } else { 0 });
                    misaligned |= if on { a & (nb - 1) } else { 0 };
                }
                (lo, hi, misaligned)
            }
        };
        let hi = hi.checked_add(nb)?;
        let window = crate::memory::CONST_WINDOW..crate::memory::CONST_WINDOW + crate::memory::WINDOW_BYTES;
        if misaligned != 0 || lm == 0 || (lo < window.end && hi > window.start) {
            return None;
        }
        self.gmem.unwrap_or(&self.k.global).span(lo, hi)
    }

    /// The state space and address a (possibly generic) address refers to.
    pub(super) fn resolve(space: MemSpace, addr: u64) -> (MemSpace, u64) {
        if space != MemSpace::Generic {
            return (space, addr);
        }
        match crate::memory::resolve_generic(addr) {
            Generic::Global(a) => (MemSpace::Global, a),
            Generic::Shared(a) => (MemSpace::Shared, a),
            Generic::Local(a) => (MemSpace::Local, a),
        }
    }

    pub(in crate::exec) fn fault(
        &self,
        lane: usize,
        addr: u64,
        bytes: u32,
        space: MemSpace,
        misaligned: bool,
    ) -> ExecError {
        let space = space_of(space);
        let (warp, lane, pc) = (self.wi as u32, lane as u32, self.d.pc);
        if misaligned {
            ExecError::Misaligned {
                warp,
                lane,
                pc,
                addr,
                bytes,
                space,
            }
        } else {
            ExecError::IllegalAddress {
                warp,
                lane,
                pc,
                addr,
                bytes,
                space,
            }
        }
    }

    /// The CTA and offset of a shared-memory access. A generic address in the shared window
    /// is a shared::cluster address (bits 31–24 name the CTA's rank in its cluster, 0 outside
    /// clusters); a shared::cta address (LDS/STS) is the CTA's own memory, also when it
    /// carries the CTA's own rank (`(SR_CgaCtaId << 24) + offset`).
    pub(in crate::exec) fn smem_target(&self, addr: u64, generic: bool) -> Option<(usize, u64)> {
        let own = self.k.ctas[self.cta].rank;
        if generic || (addr >> cluster::RANK_SHIFT) as u32 == own {
            self.k.cluster_smem(self.cta, addr)
        } else {
            Some((self.cta, addr))
        }
    }

    /// The offset in the CTA's own shared memory of a shared::cta access (LDS/STS) of `nb`
    /// bytes at `addr` when it is aligned and in range: where [`Ex::load`] and [`Ex::store`]
    /// would access it (see [`Ex::smem_target`]). None: let them report the fault.
    #[inline]
    pub(super) fn own_shared(&self, addr: u64, nb: usize) -> Option<usize> {
        let c = &self.k.ctas[self.cta];
        own_shared_at(addr, nb, c.rank, c.shared.len())
    }

    /// A shared load of `nb` bytes (4, 8 or 16) by every lane at `addrs`, each lane aligned
    /// and in range of its CTA's own memory ([`Ex::own_shared`]): the lanes' words into
    /// `words` (as the lane loop of `mem_op` puts them), the CTA looked up once and the
    /// offsets checked for the whole warp. False, and nothing read, in any other case.
    #[inline]
    pub(super) fn shared_words(&self, addrs: &[u64; 32], nb: usize, words: &mut [[u32; 32]; 4]) -> bool {
        let c = &self.k.ctas[self.cta];
        let sh = c.shared.bytes();
        let Some(offs) = own_shared_offsets(addrs, nb as u64, c.rank, sh.len() as u64) else {
            return false;
        };
        match nb {
            4 => gather_words::<4>(sh, &offs, words),
            8 => gather_words::<8>(sh, &offs, words),
            16 => gather_words::<16>(sh, &offs, words),
            _ => return false,
        }
        true
    }

    /// [`Ex::own_shared`] of a shared::cta access; None for other spaces.
    #[inline]
    pub(super) fn own_shared_if(&self, space: MemSpace, addr: u64, nb: usize) -> Option<usize> {
        if space == MemSpace::Shared {
            self.own_shared(addr, nb)
        } else {
            None
        }
    }

    pub(in crate::exec) fn load(
        &mut self,
        space: MemSpace,
        lane: usize,
        addr: u64,
        out: &mut [u8],
    ) -> Res<()> {
        let generic = space == MemSpace::Generic;
        let (space, addr) = Self::resolve(space, addr);
        let n = out.len() as u32;
        if addr & (n as u64 - 1) != 0 {
            return Err(self.fault(lane, addr, n, space, true));
        }
        let ok = match space {
            MemSpace::Global | MemSpace::Generic => self.read_global(addr, out),
            MemSpace::Shared => match self.smem_target(addr, generic) {
                Some((c, a)) => self.k.ctas[c].shared.read_into(a, out),
                None => false,
            },
            MemSpace::Local => {
                let lb = self.k.opts.local_bytes as u64;
                if addr + n as u64 > lb {
                    false
                } else {
                    let w = &self.k.warps[self.wi];
                    if w.local.is_empty() {
                        out.fill(0);
                    } else {
                        let base = (lane as u64 * lb + addr) as usize;
                        out.copy_from_slice(&w.local[base..base + n as usize]);
                    }
                    true
                }
            }
        };
        if ok {
            Ok(())
        } else {
            Err(self.fault(lane, addr, n, space, false))
        }
    }

    pub(super) fn store(&mut self, space: MemSpace, lane: usize, addr: u64, data: &[u8]) -> Res<()> {
        let generic = space == MemSpace::Generic;
        let (space, addr) = Self::resolve(space, addr);
        let n = data.len() as u32;
        if addr & (n as u64 - 1) != 0 {
            return Err(self.fault(lane, addr, n, space, true));
        }
        let ok = match space {
            MemSpace::Global | MemSpace::Generic => self.write_global(addr, data),
            MemSpace::Shared => match self.smem_target(addr, generic) {
                Some((c, a)) => match self.k.ctas[c].shared.write(a, data) {
                    Some(changed) => {
                        if changed {
                            self.k.progress += 1;
                        }
                        true
                    }
                    None => false,
                },
                None => false,
            },
            MemSpace::Local => {
                let lb = self.k.opts.local_bytes as u64;
                if addr + n as u64 > lb {
                    false
                } else {
                    let w = &mut self.k.warps[self.wi];
                    if w.local.is_empty() {
                        w.local = vec![0; 32 * lb as usize];
                    }
                    let base = (lane as u64 * lb + addr) as usize;
                    let slot = &mut w.local[base..base + n as usize];
                    if *slot != *data {
                        slot.copy_from_slice(data);
                        w.local_changes += 1;
                    }
                    true
                }
            }
        };
        if ok {
            Ok(())
        } else {
            Err(self.fault(lane, addr, n, space, false))
        }
    }

    /// Record the access for the timing model. A generic access is recorded in the space
    /// of its first lane's address (a warp whose lanes point into different spaces is
    /// timed as that space; the functional result is exact either way).
    pub(in crate::exec) fn record(&mut self, space: MemSpace, kind: MemKind, bytes: u32, addrs: &[u64; 32]) {
        let generic = space == MemSpace::Generic;
        let (mut space, mut remote) = (space, false);
        if generic {
            let first = if self.g == 0 {
                0
            } else {
                self.g.trailing_zeros() as usize
            };
            let (sp, a) = Self::resolve(MemSpace::Generic, addrs[first]);
            space = sp;
            remote =
                sp == MemSpace::Shared && (a >> cluster::RANK_SHIFT) as u32 != self.k.ctas[self.cta].rank;
        }
        let g = self.g;
        // The addresses are copied once, into the record itself.
        let m = self.out.mem.insert(MemAccess {
            space: space_of(space),
            kind,
            bytes_per_lane: bytes,
            addrs: *addrs,
            remote,
        });
        if generic {
            for l in lanes(g) {
                let (sp, a) = Self::resolve(MemSpace::Generic, m.addrs[l]);
                if sp == space {
                    m.addrs[l] = a;
                }
            }
        }
    }
}

/// Shared address `addr` as an offset in the memory of the CTA of cluster rank `rank` when
/// it is in that CTA's window of the cluster's address space; otherwise as it is.
#[inline(always)]
fn own_offset(addr: u64, rank: u32) -> u64 {
    if (addr >> cluster::RANK_SHIFT) as u32 == rank {
        addr & ((1 << cluster::RANK_SHIFT) - 1)
    } else {
        addr
    }
}

/// [`Ex::own_shared`] in a CTA's own shared memory of `len` bytes and cluster rank `rank`.
#[inline]
fn own_shared_at(addr: u64, nb: usize, rank: u32, len: usize) -> Option<usize> {
    if addr & (nb as u64 - 1) != 0 {
        return None;
    }
    let a = usize::try_from(own_offset(addr, rank)).ok()?;
    (a.checked_add(nb)? <= len).then_some(a)
}

/// The offsets of the accesses of `nb` bytes (a power of two) at `addrs`, all 32 lanes, in a
/// CTA's own shared memory of `len` bytes and cluster rank `rank`, when every lane's access
/// is aligned and in range: what [`Ex::own_shared`] gives lane by lane, without a branch per
/// lane. None when some lane's is not.
#[inline]
fn own_shared_offsets(addrs: &[u64; 32], nb: u64, rank: u32, len: u64) -> Option<[u64; 32]> {
    // The highest offset an access may start at (None: no access of `nb` bytes fits).
    let limit = len.checked_sub(nb)?;
    let mut offs = [0u64; 32];
    // The lanes' addresses OR-ed (alignment) and, OR-ed too, a word whose top bit is set when
    // some lane's offset is past `limit` (`limit - a` wraps, or `a` is that large itself;
    // `limit` is a memory's size, below 2^63), checked once: no branch or comparison per
    // lane, whole-vector operations.
    let (mut any, mut past) = (0u64, 0u64);
    for (o, &addr) in offs.iter_mut().zip(addrs) {
        let a = own_offset_flat(addr, rank);
        any |= addr;
        past |= limit.wrapping_sub(a) | a;
        *o = a;
    }
    (any & (nb - 1) == 0 && past >> 63 == 0).then_some(offs)
}

/// [`own_offset`] without a branch or comparison (vectorised over a warp's lanes): the rank
/// bits cleared when they are `rank`'s.
#[inline]
fn own_offset_flat(addr: u64, rank: u32) -> u64 {
    // The rank bits as `own_offset` compares them (32 bits) against `rank`: 0 when equal.
    let other = ((addr >> cluster::RANK_SHIFT) & 0xffff_ffff) ^ u64::from(rank);
    // All ones when they differ (`other` < 2^32: OR-ed with its negation, the top bit is set
    // unless it is 0).
    let keep = 0u64.wrapping_sub((other | other.wrapping_neg()) >> 63);
    addr & (keep | ((1 << cluster::RANK_SHIFT) - 1))
}

/// The words of `NB` bytes (4, 8 or 16) at offset `offs[l]` of `sh` for every lane `l`:
/// bytes `4k..4k+4` into `words[k][l]` (each range in `sh`, as [`own_shared_offsets`] checks).
#[inline]
fn gather_words<const NB: usize>(sh: &[u8], offs: &[u64; 32], words: &mut [[u32; 32]; 4]) {
    for (l, &o) in offs.iter().enumerate() {
        let o = o as usize;
        if let Some(src) = sh.get(o..o + NB) {
            put_lane_words(words, l, src);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{gather_words, own_offset, own_offset_flat, own_shared_at, own_shared_offsets};

    /// The branch-free own offset is `own_offset`, for addresses in and out of the rank's
    /// window, rank bits past 32 bits and the extremes.
    #[test]
    fn own_offset_flat_is_own_offset() {
        let shift = super::cluster::RANK_SHIFT;
        for rank in [0u32, 1, 7, u32::MAX] {
            let mine = u64::from(rank) << shift;
            for addr in [
                0,
                16,
                mine,
                mine + 0x40,
                mine + (1 << shift) - 1,
                mine + (1 << shift),
                (1u64 << (shift + 32)) | mine | 8,
                (3u64 << shift) + 4,
                u64::MAX,
                u64::MAX - 15,
            ] {
                assert_eq!(
                    own_offset_flat(addr, rank),
                    own_offset(addr, rank),
                    "{addr:#x} rank {rank}"
                );
            }
        }
    }

    /// The whole-warp shared offsets are the lane-by-lane ones when every lane's access is
    /// aligned and in range, and None as soon as one lane's is not (misaligned, past the
    /// end, wrapping, another rank's window); the gathered words are the lanes' bytes.
    #[test]
    fn shared_offsets_and_words_are_lane_by_lane() {
        let len = 4096usize;
        let rank = 1u32;
        let mine = (rank as u64) << super::cluster::RANK_SHIFT;
        let sh: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
        for nb in [4usize, 8, 16] {
            let n = nb as u64;
            let cases: Vec<[u64; 32]> = vec![
                std::array::from_fn(|l| l as u64 * n),
                std::array::from_fn(|l| mine + 64 + ((l * 7) % 32) as u64 * n),
                std::array::from_fn(|l| (len - nb) as u64 - (l as u64 % 3) * n),
                std::array::from_fn(|l| if l == 9 { 3 } else { l as u64 * n }),
                std::array::from_fn(|l| if l == 30 { len as u64 } else { 0 }),
                std::array::from_fn(|l| if l == 2 { u64::MAX - (n - 1) } else { 0 }),
                std::array::from_fn(|l| {
                    if l == 5 {
                        (2u64 << super::cluster::RANK_SHIFT) + 16
                    } else {
                        16
                    }
                }),
                std::array::from_fn(|l| if l == 31 { (len - nb + 4) as u64 } else { 0 }),
            ];
            for addrs in cases {
                let each: Vec<Option<usize>> =
                    addrs.iter().map(|&a| own_shared_at(a, nb, rank, len)).collect();
                let whole = own_shared_offsets(&addrs, n, rank, len as u64);
                if each.iter().all(Option::is_some) {
                    let offs = whole.expect("every lane in range");
                    for l in 0..32 {
                        assert_eq!(Some(offs[l] as usize), each[l]);
                    }
                    let mut words = [[0u32; 32]; 4];
                    match nb {
                        4 => gather_words::<4>(&sh, &offs, &mut words),
                        8 => gather_words::<8>(&sh, &offs, &mut words),
                        _ => gather_words::<16>(&sh, &offs, &mut words),
                    }
                    for l in 0..32 {
                        let o = offs[l] as usize;
                        for (k, row) in words.iter().enumerate().take(nb / 4) {
                            let b = &sh[o + 4 * k..o + 4 * k + 4];
                            assert_eq!(row[l], u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                        }
                    }
                } else {
                    assert_eq!(whole, None, "nb {nb} addrs {addrs:?}");
                }
            }
        }
    }
}
