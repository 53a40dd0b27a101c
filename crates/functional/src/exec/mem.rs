//! Memory instructions: LDG/STG/LDS/STS/LDL/STL, atomics and reductions, LDGSTS. This file
//! holds the instructions (`Ex::mem_op`, stores, atomics and the value an atomic leaves)
//! and the packing of the lanes' words; the lanes' addresses are in `mem/addr.rs`, one
//! lane's access to global, shared and local memory in `mem/access.rs`.

use super::*;

mod access;
mod addr;

use addr::contiguous_run;

impl Ex<'_> {
    pub(super) fn mem_op(&mut self, op: &Op) -> Res<()> {
        let lm = self.g;
        match *op {
            Op::Ld { space, size } => {
                if self.d.o.len() != 2 {
                    return Err(self.unsup("operands"));
                }
                let m = self.mem_operand(1)?;
                let mut addrs = [0u64; 32];
                let nb = size.bytes as usize;
                // Per destination register, the lanes' values (written for the whole warp
                // once every lane has loaded).
                let mut words = [[0u32; 32]; 4];
                let put = |words: &mut [[u32; 32]; 4], l: usize, src: &[u8]| {
                    if nb < 4 {
                        let mut b4 = [0u8; 4];
                        b4[..nb].copy_from_slice(&src[..nb]);
                        let raw = u32::from_le_bytes(b4) as u64;
                        let v = if size.signed {
                            alu::sext(raw, 8 * nb as u32)
                        } else {
                            raw
                        };
                        words[0][l] = v as u32;
                    } else {
                        for (k, w) in words.iter_mut().enumerate().take(nb / 4) {
                            w[l] = u32::from_le_bytes(src[4 * k..4 * k + 4].try_into().expect("4"));
                        }
                    }
                };
                let mut loaded = false;
                if lm != 0 && matches!(space, MemSpace::Global | MemSpace::Shared) {
                    self.addresses(&m, lm, space, &mut addrs);
                }
                // A global load whose lanes all read one allocation: one lookup for the warp
                // (and one copy of the bytes when the lanes read consecutive words).
                if space == MemSpace::Global && lm != 0 {
                    let run = contiguous_run(&addrs, lm, nb as u64);
                    if let Some((start, bytes)) = self.global_span(&addrs, lm, nb as u64, run) {
                        match run {
                            Some(a0) if nb >= 4 => {
                                let o = (a0 - start) as usize;
                                split_words(&bytes[o..o + 32 * nb], nb, &mut words);
                            }
                            _ => {
                                for l in lanes(lm) {
                                    let o = (addrs[l] - start) as usize;
                                    put(&mut words, l, &bytes[o..o + nb]);
                                }
                            }
                        }
                        loaded = true;
                    }
                }
                // A shared load: each lane in its CTA's memory directly when aligned and in
                // range, else through `load` (which reports the fault).
                if space == MemSpace::Shared && lm == u32::MAX && self.shared_words(&addrs, nb, &mut words) {
                    loaded = true;
                }
                if space == MemSpace::Shared && !loaded {
                    for l in lanes(lm) {
                        match self.own_shared(addrs[l], nb) {
                            Some(o) => put(&mut words, l, &self.k.ctas[self.cta].shared.bytes()[o..o + nb]),
                            None => {
                                let mut buf = [0u8; 16];
                                self.load(space, l, addrs[l], &mut buf[..nb])?;
                                put(&mut words, l, &buf);
                            }
                        }
                    }
                    loaded = true;
                }
                if !loaded {
                    for l in lanes(lm) {
                        let a = self.address(&m, l, space);
                        addrs[l] = a;
                        let mut buf = [0u8; 16];
                        self.load(space, l, a, &mut buf[..nb])?;
                        put(&mut words, l, &buf);
                    }
                }
                if nb < 4 {
                    self.wr_lanes(0, lm, &words[0])?;
                } else {
                    self.wrn_lanes(0, lm, &words[..nb / 4])?;
                }
                self.record(space, MemKind::Load, size.bytes, &addrs);
            }
            Op::St { space, size } => self.store_op(space, size.bytes)?,
            Op::Atom { space, op, ty, ret } => self.atomic(space, op, ty, ret)?,
            Op::Ldgsts { bytes } => {
                if self.d.o.len() != 2 {
                    return Err(self.unsup("operands"));
                }
                let sm = self.mem_operand(0)?;
                let gm = self.mem_operand(1)?;
                let mut addrs = [0u64; 32];
                for l in lanes(lm) {
                    let ga = self.address(&gm, l, MemSpace::Global);
                    let sa = self.address(&sm, l, MemSpace::Shared);
                    addrs[l] = ga;
                    let mut buf = [0u8; 16];
                    self.load(MemSpace::Global, l, ga, &mut buf[..bytes as usize])?;
                    self.store(MemSpace::Shared, l, sa, &buf[..bytes as usize])?;
                }
                self.record(MemSpace::Global, MemKind::Ldgsts, bytes, &addrs);
            }
            _ => return Err(self.unsup("not a memory instruction")),
        }
        Ok(())
    }

    /// ST/STG/STS/STL of `nb` bytes per lane: the source read for the whole warp, then each
    /// lane stored in lane order (a later lane's bytes win where lanes overlap). A shared::cta
    /// lane that is aligned and in range is written directly; a shard's global store whose
    /// lanes all lie in one allocation is logged a run of consecutive lanes at a time (the
    /// log joins consecutive stores anyway, see `ShardLog`); any other lane goes through
    /// [`Ex::store`], which reports the fault.
    fn store_op(&mut self, space: MemSpace, nb: u32) -> Res<()> {
        if self.d.o.len() != 2 {
            return Err(self.unsup("operands"));
        }
        let lm = self.g;
        let m = self.mem_operand(0)?;
        let src = self.op(1)?;
        let mut addrs = [0u64; 32];
        let nb = nb as usize;
        if lm == 0 {
            self.record(space, MemKind::Store, nb as u32, &addrs);
            return Ok(());
        }
        self.addresses(&m, lm, space, &mut addrs);
        // The stored words per lane (bytes 4k..4k+4 in words[k]).
        let mut words = [[0u32; 32]; 4];
        match src.k {
            _ if nb <= 4 => self.raw_into(src, lm, &mut words[0])?,
            K::R(r) if r != 255 => {
                for (k, w) in words.iter_mut().enumerate().take(nb / 4) {
                    self.reg_into(r + k as u8, lm, w);
                }
            }
            _ => {
                for l in lanes(lm) {
                    let v = self.raw64(src, l)?;
                    words[0][l] = v as u32;
                    words[1][l] = (v >> 32) as u32;
                }
            }
        }
        // A shard's global store whose lanes all write one allocation (aligned, outside
        // the constant window): every lane's store is mapped, checked once.
        let sharded = space == MemSpace::Global && self.gmem.is_some() && self.k.shard.is_some();
        let run = if sharded {
            contiguous_run(&addrs, lm, nb as u64)
        } else {
            None
        };
        let logged = sharded && self.global_span(&addrs, lm, nb as u64, run).is_some();
        let lane_bytes = |l: usize| {
            let mut buf = [0u8; 16];
            for (k, w) in words.iter().enumerate().take(nb.div_ceil(4)) {
                buf[4 * k..4 * k + 4].copy_from_slice(&w[l].to_le_bytes());
            }
            buf
        };
        if let (true, Some(a0), true) = (logged, run, nb >= 4) {
            // Consecutive lanes: the run the lane loop below would build, in one pass.
            let mut buf = [0u8; 32 * 16];
            join_words(&words, nb, &mut buf[..32 * nb]);
            self.k.log_store(a0, &buf[..32 * nb]);
        } else if logged {
            let mut run = StoreRun::default();
            for l in lanes(lm) {
                let buf = lane_bytes(l);
                if !run.extend(addrs[l], &buf[..nb]) {
                    self.k.log_store(run.addr, run.bytes());
                    run.start(addrs[l], &buf[..nb]);
                }
            }
            self.k.log_store(run.addr, run.bytes());
        } else {
            for l in lanes(lm) {
                let (a, buf) = (addrs[l], lane_bytes(l));
                let data = &buf[..nb];
                match self.own_shared_if(space, a, nb) {
                    Some(o) => {
                        let mem = &mut self.k.ctas[self.cta].shared.bytes_mut()[o..o + nb];
                        if mem != data {
                            mem.copy_from_slice(data);
                            self.k.progress += 1;
                        }
                    }
                    None => self.store(space, l, a, data)?,
                }
            }
        }
        self.record(space, MemKind::Store, nb as u32, &addrs);
        Ok(())
    }

    fn atomic(&mut self, space: MemSpace, op: AtomOp, ty: AtomTy, ret: bool) -> Res<()> {
        // Layouts: ATOMG [Pd,] Rd, [a], b [, c] ; ATOMS Rd, [a], b [, c] ; RED [a], b.
        let mut i = 0;
        if ret && self.op(0)?.is_pred() {
            if !self.op(0)?.is_pt() {
                return Err(self.unsup("atomic with a predicate result"));
            }
            i = 1;
        }
        let rd = if ret {
            i += 1;
            Some(i - 1)
        } else {
            None
        };
        let m = self.mem_operand(i)?;
        let bi = i + 1;
        let wide = matches!(ty, AtomTy::U64 | AtomTy::S64 | AtomTy::F64);
        let nb: u32 = if wide { 8 } else { 4 };
        let need_b = op != AtomOp::PopcInc;
        let n = self.d.o.len();
        let expected = bi + usize::from(need_b) + usize::from(op == AtomOp::Cas);
        if n != expected {
            return Err(self.unsup("operands"));
        }
        let get = |s: &mut Self, k: usize, l: usize| -> Res<u64> {
            let o = s.op(k)?;
            if wide {
                s.raw64(o, l)
            } else {
                Ok(s.raw(o, l)? as u64)
            }
        };
        let mut addrs = [0u64; 32];
        for l in lanes(self.g) {
            let a = self.address(&m, l, space);
            addrs[l] = a;
            let b = if need_b { get(self, bi, l)? } else { 1 };
            let c = if op == AtomOp::Cas {
                get(self, bi + 1, l)?
            } else {
                0
            };
            if let Some(gm) = self.gmem {
                if let (MemSpace::Global, g) = Self::resolve(space, a) {
                    // A shard: performed at the end of the cycle, in SM order.
                    if g & (u64::from(nb) - 1) != 0 {
                        return Err(self.fault(l, g, nb, MemSpace::Global, true));
                    }
                    if !gm.is_mapped(g, u64::from(nb)) {
                        return Err(self.fault(l, g, nb, MemSpace::Global, false));
                    }
                    let reg = match rd {
                        None => None,
                        Some(r) => match self.op(r)?.k {
                            K::R(255) => None,
                            K::R(r) => Some(r),
                            _ => return Err(self.unsup("atomic result is not a register")),
                        },
                    };
                    if let Some(rd) = rd {
                        // Placeholder values, replaced at commit by the returned ones.
                        if wide {
                            self.wr64(rd, l, 0)?;
                        } else {
                            self.wr(rd, l, 0)?;
                        }
                    }
                    let ticket = self.out.writes.ticket;
                    self.out.writes.ticket = self.k.log_atomic(ticket, reg, wide, l, g, op, ty, b, c);
                    continue;
                }
            }
            let mut buf = [0u8; 8];
            self.load(space, l, a, &mut buf[..nb as usize])?;
            let old = u64::from_le_bytes(buf);
            let new = atomic_result(op, ty, old, b, c);
            if new != old {
                self.store(space, l, a, &new.to_le_bytes()[..nb as usize])?;
            }
            if let Some(rd) = rd {
                if wide {
                    self.wr64(rd, l, old)?;
                } else {
                    self.wr(rd, l, old as u32)?;
                }
            }
        }
        self.record(space, MemKind::Atomic, nb, &addrs);
        Ok(())
    }
}

/// The value an atomic leaves in memory: `op` of type `ty` applied to the `old` value with
/// operands `b` (and `c` for a compare-and-swap).
pub(super) fn atomic_result(op: AtomOp, ty: AtomTy, old: u64, b: u64, c: u64) -> u64 {
    let wide = matches!(ty, AtomTy::U64 | AtomTy::S64 | AtomTy::F64);
    let mask = if wide { u64::MAX } else { 0xffff_ffff };
    let signed = matches!(ty, AtomTy::S32 | AtomTy::S64);
    let sx = |v: u64| if wide { v as i64 } else { v as u32 as i32 as i64 };
    (match op {
        AtomOp::Add => match ty {
            AtomTy::F32 => (f32::from_bits(old as u32) + f32::from_bits(b as u32)).to_bits() as u64,
            AtomTy::F64 => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
            _ => old.wrapping_add(b) & mask,
        },
        AtomOp::Min => {
            if signed {
                if sx(b) < sx(old) {
                    b
                } else {
                    old
                }
            } else {
                old.min(b)
            }
        }
        AtomOp::Max => {
            if signed {
                if sx(b) > sx(old) {
                    b
                } else {
                    old
                }
            } else {
                old.max(b)
            }
        }
        AtomOp::Inc => {
            if old >= b {
                0
            } else {
                old + 1
            }
        }
        AtomOp::Dec => {
            if old == 0 || old > b {
                b
            } else {
                old - 1
            }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if old == b {
                c
            } else {
                old
            }
        }
        AtomOp::PopcInc => old.wrapping_add(1) & mask,
    }) & mask
}

/// Lane `l`'s bytes `src` (a multiple of 4) as its words: bytes `4k..4k+4` into `words[k][l]`.
#[inline(always)]
fn put_lane_words(words: &mut [[u32; 32]; 4], l: usize, src: &[u8]) {
    for (row, b) in words.iter_mut().zip(src.chunks_exact(4)) {
        row[l] = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
}

/// The lanes' words of a contiguous range of `32 * nb` bytes (`nb` a multiple of 4, lane `l`
/// at `l * nb`): bytes `4k..4k+4` of lane `l` into `words[k][l]`.
fn split_words(bytes: &[u8], nb: usize, words: &mut [[u32; 32]; 4]) {
    if nb == 4 {
        for (w, b) in words[0].iter_mut().zip(bytes.chunks_exact(4)) {
            *w = u32::from_le_bytes(b.try_into().expect("4 bytes"));
        }
        return;
    }
    for (l, lane) in bytes.chunks_exact(nb).enumerate().take(32) {
        put_lane_words(words, l, lane);
    }
}

/// The inverse of [`split_words`]: `words[k][l]` into bytes `l * nb + 4k..` of `bytes`.
fn join_words(words: &[[u32; 32]; 4], nb: usize, bytes: &mut [u8]) {
    if nb == 4 {
        for (b, w) in bytes.chunks_exact_mut(4).zip(&words[0]) {
            b.copy_from_slice(&w.to_le_bytes());
        }
        return;
    }
    for (l, lane) in bytes.chunks_exact_mut(nb).enumerate().take(32) {
        for (b, w) in lane.chunks_exact_mut(4).zip(words) {
            b.copy_from_slice(&w[l].to_le_bytes());
        }
    }
}

/// Consecutive lanes' bytes of one store instruction that form one contiguous range, logged
/// as one store (what logging them lane by lane gives, see `KernelExec::log_store`).
struct StoreRun {
    addr: u64,
    len: usize,
    buf: [u8; 32 * 16],
}

impl Default for StoreRun {
    fn default() -> Self {
        StoreRun {
            addr: 0,
            len: 0,
            buf: [0; 32 * 16],
        }
    }
}

impl StoreRun {
    /// Append `data` stored at `addr` if it continues the run (an empty run takes it);
    /// false if it does not.
    #[inline]
    fn extend(&mut self, addr: u64, data: &[u8]) -> bool {
        if self.len > 0 && self.addr.checked_add(self.len as u64) != Some(addr) {
            return false;
        }
        if self.len == 0 {
            self.addr = addr;
        }
        self.buf[self.len..self.len + data.len()].copy_from_slice(data);
        self.len += data.len();
        true
    }
    /// Start a new run with `data` at `addr`.
    #[inline]
    fn start(&mut self, addr: u64, data: &[u8]) {
        self.len = 0;
        self.extend(addr, data);
    }
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::{join_words, split_words};

    /// Splitting a run's bytes into the lanes' words and joining them back are inverse, and
    /// lane `l`'s word `k` is bytes `l * nb + 4k..` little-endian.
    #[test]
    fn split_and_join_words() {
        for nb in [4usize, 8, 16] {
            let bytes: Vec<u8> = (0..32 * nb).map(|i| (i * 7 + 3) as u8).collect();
            let mut words = [[0u32; 32]; 4];
            split_words(&bytes, nb, &mut words);
            for (k, row) in words.iter().enumerate().take(nb / 4) {
                for (l, &w) in row.iter().enumerate() {
                    let o = l * nb + 4 * k;
                    let want = u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
                    assert_eq!(w, want, "nb {nb} lane {l} word {k}");
                }
            }
            let mut back = vec![0u8; 32 * nb];
            join_words(&words, nb, &mut back);
            assert_eq!(back, bytes);
        }
    }
}
