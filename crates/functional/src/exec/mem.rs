//! Memory instructions: LDG/STG/LDS/STS/LDL/STL, atomics and reductions, LDGSTS.

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
    pub(super) fn read_global(&self, addr: u64, out: &mut [u8]) -> bool {
        self.read_global_in(&self.global, addr, out)
    }

    /// [`KernelExec::read_global`] of global memory `global`.
    pub(super) fn read_global_in(&self, global: &GlobalMemory, addr: u64, out: &mut [u8]) -> bool {
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
    pub(super) fn read_global(&self, addr: u64, out: &mut [u8]) -> bool {
        self.k
            .read_global_in(self.gmem.unwrap_or(&self.k.global), addr, out)
    }

    /// Write global memory; a shard logs the write for the end of the cycle
    /// (`exec/shard.rs`). False if the range is not mapped.
    #[inline]
    pub(super) fn write_global(&mut self, addr: u64, data: &[u8]) -> bool {
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
    fn global_span(&self, addrs: &[u64; 32], lm: u32, nb: u64, run: Option<u64>) -> Option<(u64, &[u8])> {
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

    /// Per-lane address of a memory operand.
    pub(super) fn address(&self, m: &MemAddr, lane: usize, space: MemSpace) -> u64 {
        let global = matches!(space, MemSpace::Global | MemSpace::Generic);
        let mut a: u64 = m.offset as u64;
        for t in &m.terms[..m.n as usize] {
            let pair = global && (t.wide || self.d.e64);
            let v: u64 = if t.uniform {
                self.uniform_term(t, pair)
            } else if t.idx == 255 {
                0
            } else if pair {
                self.reg(t.idx, lane) as u64 | (self.reg(t.idx + 1, lane) as u64) << 32
            } else {
                self.reg(t.idx, lane) as u64
            };
            a = a.wrapping_add(v.wrapping_mul(t.scale as u64));
        }
        if global {
            a
        } else {
            a & 0xffff_ffff
        }
    }

    /// The value of a uniform address term (`pair`: with the next uniform register as the
    /// high word; URZ reads 0).
    fn uniform_term(&self, t: &crate::decode::ATerm, pair: bool) -> u64 {
        if t.idx >= 63 {
            0
        } else if pair {
            self.ureg(t.idx) as u64 | (self.ureg(t.idx + 1) as u64) << 32
        } else {
            self.ureg(t.idx) as u64
        }
    }

    /// [`Ex::address`] of every lane of `lm` (into `out`; other lanes untouched), a term at a
    /// time over the warp's register rows.
    pub(super) fn addresses(&self, m: &MemAddr, lm: u32, space: MemSpace, out: &mut [u64; 32]) {
        const ZERO: [u32; 32] = [0; 32];
        let global = matches!(space, MemSpace::Global | MemSpace::Generic);
        let mut a = [m.offset as u64; 32];
        // A register past the warp's rows (or RZ, also as the pair's second) reads 0, as in
        // `Ex::reg`.
        let row = |idx: u8| -> &[u32; 32] {
            let i = idx as usize * 32;
            match idx {
                255 => &ZERO,
                _ => self
                    .w()
                    .regs
                    .get(i..i + 32)
                    .and_then(|r| r.try_into().ok())
                    .unwrap_or(&ZERO),
            }
        };
        for t in &m.terms[..m.n as usize] {
            let pair = global && (t.wide || self.d.e64);
            let scale = t.scale as u64;
            if t.uniform {
                let add = self.uniform_term(t, pair).wrapping_mul(scale);
                a.iter_mut().for_each(|x| *x = x.wrapping_add(add));
                continue;
            }
            if t.idx == 255 {
                continue;
            }
            let lo = row(t.idx);
            let hi = if pair { row(t.idx.wrapping_add(1)) } else { &ZERO };
            add_rows(&mut a, lo, hi, scale);
        }
        let keep = if global { u64::MAX } else { 0xffff_ffff };
        if lm == u32::MAX {
            for (o, x) in out.iter_mut().zip(a) {
                *o = x & keep;
            }
        } else {
            for l in lanes(lm) {
                out[l] = a[l] & keep;
            }
        }
        debug_assert!(lanes(lm).all(|l| out[l] == self.address(m, l, space)));
    }

    pub(super) fn mem_operand(&self, i: usize) -> Res<MemAddr> {
        match &self.op(i)?.k {
            K::Mem(m) => Ok(*m),
            _ => Err(self.unsup(&format!("operand {} is not an address", i + 1))),
        }
    }

    /// The state space and address a (possibly generic) address refers to.
    fn resolve(space: MemSpace, addr: u64) -> (MemSpace, u64) {
        if space != MemSpace::Generic {
            return (space, addr);
        }
        match crate::memory::resolve_generic(addr) {
            Generic::Global(a) => (MemSpace::Global, a),
            Generic::Shared(a) => (MemSpace::Shared, a),
            Generic::Local(a) => (MemSpace::Local, a),
        }
    }

    pub(super) fn fault(
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
    pub(super) fn smem_target(&self, addr: u64, generic: bool) -> Option<(usize, u64)> {
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
    fn own_shared(&self, addr: u64, nb: usize) -> Option<usize> {
        let c = &self.k.ctas[self.cta];
        own_shared_at(addr, nb, c.rank, c.shared.len())
    }

    /// A shared load of `nb` bytes (4, 8 or 16) by every lane at `addrs`, each lane aligned
    /// and in range of its CTA's own memory ([`Ex::own_shared`]): the lanes' words into
    /// `words` (as the lane loop of `mem_op` puts them), the CTA looked up once and the
    /// offsets checked for the whole warp. False, and nothing read, in any other case.
    #[inline]
    fn shared_words(&self, addrs: &[u64; 32], nb: usize, words: &mut [[u32; 32]; 4]) -> bool {
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
    fn own_shared_if(&self, space: MemSpace, addr: u64, nb: usize) -> Option<usize> {
        if space == MemSpace::Shared {
            self.own_shared(addr, nb)
        } else {
            None
        }
    }

    pub(super) fn load(&mut self, space: MemSpace, lane: usize, addr: u64, out: &mut [u8]) -> Res<()> {
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

    fn store(&mut self, space: MemSpace, lane: usize, addr: u64, data: &[u8]) -> Res<()> {
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
    pub(super) fn record(&mut self, space: MemSpace, kind: MemKind, bytes: u32, addrs: &[u64; 32]) {
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

/// The first lane's address when the lanes of `lm` are the whole warp and lane `l` accesses
/// the `nb` bytes at `a0 + l * nb` (a coalesced access: one range of `32 * nb` bytes that
/// does not wrap around; `nb` a power of two, else None).
fn contiguous_run(addrs: &[u64; 32], lm: u32, nb: u64) -> Option<u64> {
    let a0 = addrs[0];
    if lm != u32::MAX || !nb.is_power_of_two() || a0.checked_add(32 * nb).is_none() {
        return None;
    }
    // One pass without a branch per lane (three instructions a lane).
    let (mut want, mut diff) = (a0, 0u64);
    for &a in addrs {
        diff |= a ^ want;
        want = want.wrapping_add(nb);
    }
    (diff == 0).then_some(a0)
}

/// `a[l] += (hi[l]:lo[l]) * scale` for every lane (a register term of an address; a
/// function of its own so that the compiler sees three whole rows and vectorises the pass).
#[inline(never)]
fn add_rows(a: &mut [u64; 32], lo: &[u32; 32], hi: &[u32; 32], scale: u64) {
    if scale == 1 {
        for ((x, &lo), &hi) in a.iter_mut().zip(lo).zip(hi) {
            *x = x.wrapping_add(lo as u64 | (hi as u64) << 32);
        }
    } else {
        for ((x, &lo), &hi) in a.iter_mut().zip(lo).zip(hi) {
            *x = x.wrapping_add((lo as u64 | (hi as u64) << 32).wrapping_mul(scale));
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
    let mut offs = [0u64; 32];
    // The lanes' addresses OR-ed (alignment) and their greatest offset (range), checked once.
    let (mut any, mut top) = (0u64, 0u64);
    for (o, &addr) in offs.iter_mut().zip(addrs) {
        let a = own_offset(addr, rank);
        any |= addr;
        top = top.max(a);
        *o = a;
    }
    (any & (nb - 1) == 0 && top <= len && len - top >= nb).then_some(offs)
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
    use super::{
        add_rows, contiguous_run, gather_words, join_words, own_shared_at, own_shared_offsets, split_words,
    };

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

    /// A coalesced run is found exactly when every lane is at `l * nb` from the first, the
    /// whole warp accesses and the range does not wrap.
    #[test]
    fn contiguous_run_is_lane_by_lane() {
        let base = 0x7f00_0000_0100u64;
        for nb in [1u64, 2, 4, 8, 16] {
            let addrs: [u64; 32] = std::array::from_fn(|l| base + l as u64 * nb);
            assert_eq!(contiguous_run(&addrs, u32::MAX, nb), Some(base));
            assert_eq!(contiguous_run(&addrs, u32::MAX >> 1, nb), None);
            let mut other = addrs;
            other[17] += 1;
            assert_eq!(contiguous_run(&other, u32::MAX, nb), None);
            let wraps: [u64; 32] = std::array::from_fn(|l| (u64::MAX - 8).wrapping_add(l as u64 * nb));
            assert_eq!(contiguous_run(&wraps, u32::MAX, nb), None);
        }
        let same = [base; 32];
        assert_eq!(contiguous_run(&same, u32::MAX, 4), None);
        assert_eq!(contiguous_run(&same, u32::MAX, 3), None);
    }

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

    /// The whole-warp address term is the lane-by-lane one.
    #[test]
    fn add_rows_is_lane_by_lane() {
        let lo: [u32; 32] = std::array::from_fn(|l| (l as u32).wrapping_mul(0x9e37_79b9));
        let hi: [u32; 32] = std::array::from_fn(|l| l as u32 * 3);
        for scale in [1u64, 4, 0x1_0000_0001] {
            let mut a: [u64; 32] = std::array::from_fn(|l| u64::MAX - l as u64);
            let want: [u64; 32] = std::array::from_fn(|l| {
                a[l].wrapping_add((lo[l] as u64 | (hi[l] as u64) << 32).wrapping_mul(scale))
            });
            add_rows(&mut a, &lo, &hi, scale);
            assert_eq!(a, want);
        }
    }
}
