//! Execution of Hopper's instructions (`crate::hopper`): warpgroup MMA, TMA, transaction
//! barriers (mbarrier), cluster barriers and `ELECT`.
//!
//! Choices where the hardware is undocumented (docs/model.md "Hopper"):
//! - A warpgroup MMA is computed and its accumulators written when each warp issues it (its
//!   warp's 16 rows); programs only read them after `WARPGROUP.DEPBAR`, which the timing model
//!   makes wait. Arithmetic as the warp-level MMAs (`crate::tensor`): exact products, summed in
//!   FP64 in k order after C, rounded once.
//! - mbarrier word: the layout ptxas's `mbarrier.init` and `pending_count` code implies —
//!   bit 63 phase parity, bits 62–43 `2^20 − pending arrivals`, bits 20–1 `2^20 − expected
//!   arrivals` — plus sassim's choice for the undocumented transaction count: a signed 22-bit
//!   field in bits 42–21.
//! - TMA copies the whole box when the instruction issues and completes the transaction bytes
//!   on the mbarrier at once.

use super::*;
use crate::hopper::{ArriveKind, BulkDir, GmmaOp, HopperOp};
use crate::tma::{swizzle, Swizzle, TensorMap, TENSOR_MAP_BYTES};
use sassim_isa::{GmmaType, MmaType};
use std::collections::HashMap;

/// An mbarrier's 64-bit state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mbarrier {
    phase: bool,
    pending: i64,
    expected: i64,
    tx: i64,
}

const COUNT_LIMIT: i64 = 1 << 20;
const TX_BITS: u32 = 22;

impl Mbarrier {
    fn decode(v: u64) -> Mbarrier {
        let tx_raw = (v >> 21) & ((1 << TX_BITS) - 1);
        let tx = ((tx_raw << (64 - TX_BITS)) as i64) >> (64 - TX_BITS);
        Mbarrier {
            phase: v >> 63 == 1,
            // 2^20 − pending, modulo 2^20: 0 is "no arrival pending" (a phase waiting
            // only for transaction bytes).
            pending: (COUNT_LIMIT - ((v >> 43) & 0xF_FFFF) as i64) % COUNT_LIMIT,
            expected: COUNT_LIMIT - ((v >> 1) & 0xF_FFFF) as i64,
            tx,
        }
    }

    fn encode(&self) -> u64 {
        let field = |x: i64| ((COUNT_LIMIT - x) as u64) & 0xF_FFFF;
        (u64::from(self.phase) << 63)
            | field(self.pending) << 43
            | ((self.tx as u64) & ((1 << TX_BITS) - 1)) << 21
            | field(self.expected) << 1
    }

    /// Arrivals and transaction changes; the phase completes when no arrival and no
    /// transaction byte is pending (PTX ISA, "mbarrier": phase completion). `Err` on an
    /// arrival count or transaction count outside the documented ranges.
    fn apply(&mut self, arrivals: i64, tx: i64, drop: bool) -> Result<(), String> {
        self.tx += tx;
        if self.tx.abs() >= COUNT_LIMIT {
            return Err(format!(
                "mbarrier transaction count {} is outside ±(2^20 − 1)",
                self.tx
            ));
        }
        if arrivals > self.pending {
            return Err(format!(
                "{arrivals} arrivals on an mbarrier with {} pending (of {} expected)",
                self.pending, self.expected
            ));
        }
        self.pending -= arrivals;
        if drop {
            self.expected -= arrivals;
        }
        if self.pending == 0 && self.tx == 0 {
            self.phase = !self.phase;
            self.pending = self.expected;
        }
        Ok(())
    }
}

/// FP8 E4M3 (no infinities, NaN = S.1111.111) and E5M2 (IEEE-like) to f64.
fn fp8(v: u8, e5m2: bool) -> f64 {
    let sign = if v & 0x80 != 0 { -1.0 } else { 1.0 };
    let (ebits, mbits, bias) = if e5m2 { (5, 2, 15) } else { (4, 3, 7) };
    let e = ((v >> mbits) & ((1 << ebits) - 1)) as i32;
    let m = (v & ((1 << mbits) - 1)) as f64;
    let emax = (1 << ebits) - 1;
    if e5m2 && e == emax {
        return if m == 0.0 { sign * f64::INFINITY } else { f64::NAN };
    }
    if !e5m2 && e == emax && m as u8 == 7 {
        return f64::NAN;
    }
    let scale = (1u64 << mbits) as f64;
    if e == 0 {
        sign * (m / scale) * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + m / scale) * 2f64.powi(e - bias)
    }
}

/// One input element (`bytes` little-endian bytes) as an f64 (floats) or an integer value.
fn gmma_value(ty: GmmaType, raw: u32) -> f64 {
    match ty {
        GmmaType::F16 => half::f16::from_bits(raw as u16).to_f64(),
        GmmaType::Bf16 => f32::from_bits(raw << 16) as f64,
        GmmaType::Tf32 => f32::from_bits(raw & 0xffff_e000) as f64,
        GmmaType::E4m3 => fp8(raw as u8, false),
        GmmaType::E5m2 => fp8(raw as u8, true),
        GmmaType::S8 => raw as u8 as i8 as f64,
        GmmaType::U8 => raw as u8 as f64,
    }
}

/// A 64-bit wgmma shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format").
#[derive(Debug, Clone, Copy)]
struct MatrixDesc {
    start: u64,
    lbo: u64,
    sbo: u64,
    swizzle: Swizzle,
}

impl MatrixDesc {
    fn decode(v: u64) -> Result<MatrixDesc, String> {
        let f = |lo: u32| ((v >> lo) & 0x3fff) << 4;
        let swizzle = match v >> 62 {
            0 => Swizzle::None,
            1 => Swizzle::B128,
            2 => Swizzle::B64,
            _ => Swizzle::B32,
        };
        if (v >> 49) & 7 != 0 {
            return Err("matrix descriptor with a non-zero base offset (its meaning is undocumented)".into());
        }
        Ok(MatrixDesc {
            start: f(0),
            lbo: f(16),
            sbo: f(32),
            swizzle,
        })
    }

    /// Byte address of element (`mn`, `k`) of an operand of `e`-byte elements, K-major or
    /// (`mn_major`) MN-major (docs/validation/hopper-isa-facts.md §1.4).
    fn addr(&self, mn: u64, k: u64, e: u64, mn_major: bool) -> u64 {
        let t = 16 / e;
        let w = self.swizzle.span().max(16) / 16;
        let pre = match (mn_major, self.swizzle) {
            (false, Swizzle::None) => {
                self.start + (mn / 8) * self.sbo + (mn % 8) * 16 + (k / t) * self.lbo + (k % t) * e
            }
            (false, _) => self.start + (mn / 8) * self.sbo + (mn % 8) * 16 * w + (k / t) * 16 + (k % t) * e,
            (true, Swizzle::None) => {
                self.start + (mn / t) * self.sbo + (k % 8) * 16 + (k / 8) * self.lbo + (mn % t) * e
            }
            (true, _) => {
                let mc = mn / t;
                self.start
                    + (mc / w) * self.lbo
                    + (mc % w) * 16
                    + (k % 8) * 16 * w
                    + (k / 8) * self.sbo
                    + (mn % t) * e
            }
        };
        swizzle(pre, self.swizzle)
    }
}

impl Ex<'_> {
    pub(super) fn hopper_op(&mut self, h: HopperOp) -> Res<()> {
        match h {
            HopperOp::Elect => self.elect(),
            HopperOp::SyncsExch => self.syncs(None),
            HopperOp::SyncsArrive(k) => self.syncs(Some(k)),
            HopperOp::SyncsPhaseChk => self.phase_check(),
            HopperOp::SyncsNop
            | HopperOp::WarpgroupArrive
            | HopperOp::WarpgroupDepbar
            | HopperOp::BulkNop => Ok(()),
            HopperOp::BulkCopy { dir, multicast } => {
                if self.g == 0 {
                    return Ok(());
                }
                self.bulk_copy(dir, multicast)
            }
            HopperOp::Tma {
                load,
                dims,
                multicast,
            } => {
                if self.g == 0 {
                    return Ok(());
                }
                self.tma(load, dims, multicast)
            }
            HopperOp::ClusterBarrier { wait } => {
                if self.g != 0 {
                    if wait {
                        self.k.cluster_wait(self.wi);
                    } else {
                        self.k.cluster_arrive(self.wi);
                    }
                }
                Ok(())
            }
            HopperOp::Gmma(g) => self.gmma(&g),
        }
    }

    /// `ELECT Pd, URd, Pg`: the lowest lane among the active lanes whose `Pg` holds is the
    /// leader: `Pd` is true in that lane only, `URd` receives its lane number (PTX
    /// `elect.sync`).
    fn elect(&mut self) -> Res<()> {
        let mut cand = 0u32;
        for l in lanes(self.g) {
            if self.pred_op(2, l)? {
                cand |= 1 << l;
            }
        }
        let leader = (cand != 0).then(|| cand.trailing_zeros() as usize);
        for l in lanes(self.g) {
            self.wp(0, l, Some(l) == leader)?;
        }
        if let Some(l) = leader {
            self.wr(1, l, l as u32)?;
        }
        Ok(())
    }

    /// The CTA record and offset of the mbarrier operand `[addr]` of `lane`.
    fn barrier_word(&self, lane: usize) -> Res<(usize, u64)> {
        let m = self.mem_operand(1)?;
        let a = self.address(&m, lane, MemSpace::Shared);
        if !a.is_multiple_of(8) {
            return Err(self.fault(lane, a, 8, MemSpace::Shared, true));
        }
        self.k
            .cluster_smem(self.cta, a)
            .ok_or_else(|| self.fault(lane, a, 8, MemSpace::Shared, false))
    }

    fn read_word(&self, lane: usize, (c, off): (usize, u64)) -> Res<u64> {
        let mut b = [0u8; 8];
        if !self.k.ctas[c].shared.read_into(off, &mut b) {
            return Err(self.fault(lane, off, 8, MemSpace::Shared, false));
        }
        Ok(u64::from_le_bytes(b))
    }

    fn write_word(&mut self, (c, off): (usize, u64), v: u64) {
        if self.k.ctas[c].shared.write(off, &v.to_le_bytes()) == Some(true) {
            self.k.progress += 1;
        }
    }

    /// `SYNCS.EXCH.64` (`kind == None`) and `SYNCS.ARRIVE.TRANS64`: per active lane, in lane
    /// order (the PTX operations are per thread), returning the old 64-bit state.
    fn syncs(&mut self, kind: Option<ArriveKind>) -> Res<()> {
        let src = self.op(2)?;
        for l in lanes(self.g) {
            let at = self.barrier_word(l)?;
            let old = self.read_word(l, at)?;
            let new = match kind {
                None => self.raw64(src, l)?,
                Some(k) => {
                    let r = i64::from(self.raw(src, l)?);
                    let arrivals = k.arrivals.map_or(r, i64::from);
                    let tx = match k.tx_sign {
                        1 => r,
                        -1 => -r,
                        _ => 0,
                    };
                    let mut b = Mbarrier::decode(old);
                    b.apply(arrivals, tx, k.drop).map_err(|e| self.unsup(&e))?;
                    b.encode()
                }
            };
            self.write_word(at, new);
            self.wr64(0, l, old)?;
        }
        Ok(())
    }

    /// `SYNCS.PHASECHK.TRANS64[.TRYWAIT] Pd, [addr], Rs`: true iff the barrier's phase parity
    /// (bit 63) differs from bit 31 of `Rs`, i.e. the phase `Rs` names has completed.
    fn phase_check(&mut self) -> Res<()> {
        let src = self.op(2)?;
        for l in lanes(self.g) {
            let at = self.barrier_word(l)?;
            let v = self.read_word(l, at)?;
            let want = self.raw(src, l)? >> 31 & 1 == 1;
            self.wp(0, l, (v >> 63 == 1) != want)?;
        }
        Ok(())
    }

    /// Complete `bytes` transaction bytes on the mbarrier at shared::cluster address `bar`.
    fn complete_tx(&mut self, bar: u64, bytes: u64) -> Res<()> {
        let l = self.g.trailing_zeros() as usize;
        let (c, off) = self
            .k
            .cluster_smem(self.cta, bar)
            .ok_or_else(|| self.fault(l, bar, 8, MemSpace::Shared, false))?;
        match self.k.complete_tx_at(c, off, bytes) {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.fault(l, off, 8, MemSpace::Shared, false)),
            Err(e) => Err(self.unsup(&e)),
        }
    }

    /// The first uniform register of address operand `i` (`[UR8]`).
    fn ur_block(&self, i: usize) -> Res<u8> {
        let m = self.mem_operand(i)?;
        match m.terms[..m.n as usize] {
            [t] if t.uniform && m.offset == 0 => Ok(t.idx),
            _ => Err(self.unsup(&format!("operand {} is not a uniform register block", i + 1))),
        }
    }

    /// `UTMALDG.nD [URa], [URb][, URm]` / `UTMASTG.nD [URa], [URb]`.
    fn tma(&mut self, load: bool, dims: u8, multicast: bool) -> Res<()> {
        let a = self.ur_block(0)?;
        let b = self.ur_block(1)?;
        if a as usize + 2 + dims as usize > 63 || b >= 62 {
            return Err(self.unsup("register block beyond UR62"));
        }
        let lane = self.g.trailing_zeros() as usize;
        let map_addr = u64::from(self.ureg(b)) | u64::from(self.ureg(b + 1)) << 32;
        let mut raw = [0u8; TENSOR_MAP_BYTES];
        if !self.k.read_global(map_addr, &mut raw) {
            return Err(self.fault(lane, map_addr, TENSOR_MAP_BYTES as u32, MemSpace::Global, false));
        }
        let map = TensorMap::decode(&raw).ok_or_else(|| {
            self.unsup(&format!(
                "the tensor map at {map_addr:#x} was not written by sassim's cuTensorMapEncodeTiled"
            ))
        })?;
        if map.rank != dims as usize {
            return Err(self.unsup(&format!("{dims}-D copy with a rank-{} tensor map", map.rank)));
        }
        // The box lands in (or comes from) one CTA's shared memory: a larger one is a fault,
        // found before anything is allocated for it.
        let smem_bytes = self.k.ctas[self.cta].shared.len() as u64;
        if map.box_bytes() > smem_bytes {
            return Err(self.unsup(&format!(
                "a TMA box of {} bytes is larger than the CTA's {smem_bytes} bytes of shared memory",
                map.box_bytes()
            )));
        }
        let smem = u64::from(self.ureg(a));
        let first_coord = if load { a + 2 } else { a + 1 };
        let coords: Vec<i64> = (0..dims)
            .map(|d| i64::from(self.ureg(first_coord + d) as i32))
            .collect();
        let es = map.dtype.bytes() as usize;
        if !load {
            let (c, base) = self
                .k
                .cluster_smem(self.cta, smem)
                .ok_or_else(|| self.fault(lane, smem, 16, MemSpace::Shared, false))?;
            let mut err = None;
            let mut writes = Vec::new();
            map.for_each_element(&coords, |off, g| {
                let mut v = [0u8; 8];
                if !self.k.ctas[c]
                    .shared
                    .read_into(swizzle(base + off, map.swizzle), &mut v[..es])
                {
                    err.get_or_insert(base + off);
                }
                if let Some(g) = g {
                    writes.push((g, v));
                }
            });
            if let Some(o) = err {
                return Err(self.fault(lane, o, es as u32, MemSpace::Shared, false));
            }
            let written: Vec<u64> = writes.iter().map(|&(g, _)| g).collect();
            for (g, v) in writes {
                if !self.k.global.write(g, &v[..es]) {
                    return Err(self.fault(lane, g, es as u32, MemSpace::Global, false));
                }
            }
            self.k.progress += 1;
            self.k.bulk.started(Vec::new(), 0, chunks_of(&written, es), true);
            return Ok(());
        }
        let bar = u64::from(self.ureg(a + 1));
        // Multicast: the same CTA-relative offsets in every CTA of the mask (PTX ISA,
        // `.multicast::cluster`).
        let ranks: Vec<u64> = if multicast {
            let m = match self.op(2)?.k {
                K::UR(r) => self.ureg(r) & 0xffff,
                _ => return Err(self.unsup("multicast mask is not a uniform register")),
            };
            (0..16).filter(|r| m >> r & 1 == 1).collect()
        } else {
            vec![smem >> cluster::RANK_SHIFT]
        };
        // Read the box once.
        let mut data = vec![0u8; map.box_bytes() as usize];
        let fill = map.oob_fill().to_le_bytes();
        let mut err = None;
        let mut read = Vec::new();
        map.for_each_element(&coords, |off, g| {
            let dst = &mut data[off as usize..off as usize + es];
            match g {
                Some(g) => {
                    read.push(g);
                    if !self.k.global.read_into(g, dst) {
                        err.get_or_insert(g);
                    }
                }
                None => dst.copy_from_slice(&fill[..es]),
            }
        });
        if let Some(g) = err {
            return Err(self.fault(lane, g, es as u32, MemSpace::Global, false));
        }
        let off_mask = (1u64 << cluster::RANK_SHIFT) - 1;
        let mut bars = Vec::new();
        for r in ranks {
            let dst = (r << cluster::RANK_SHIFT) | (smem & off_mask);
            let (c, base) = self
                .k
                .cluster_smem(self.cta, dst)
                .ok_or_else(|| self.fault(lane, dst, 16, MemSpace::Shared, false))?;
            for (i, chunk) in data.chunks(es).enumerate() {
                let at = swizzle(base + (i * es) as u64, map.swizzle);
                if self.k.ctas[c].shared.write(at, chunk).is_none() {
                    return Err(self.fault(lane, at, es as u32, MemSpace::Shared, false));
                }
            }
            self.k.progress += 1;
            let b = (r << cluster::RANK_SHIFT) | (bar & off_mask);
            if self.k.bulk.defer {
                let at = self
                    .k
                    .cluster_smem(self.cta, b)
                    .ok_or_else(|| self.fault(lane, b, 8, MemSpace::Shared, false))?;
                bars.push((at.0, self.k.ctas[at.0].linear, at.1));
            } else {
                self.complete_tx(b, data.len() as u64)?;
            }
        }
        if self.k.bulk.defer {
            self.k
                .bulk
                .started(bars, data.len() as u64, chunks_of(&read, es), false);
        }
        Ok(())
    }

    /// `UBLKCP` (PTX `cp.async.bulk`): `size` bytes (a multiple of 16, both addresses 16-byte
    /// aligned) copied when the instruction issues. Into shared memory: the bytes complete on
    /// the mbarrier in the register after the destination (at once in a functional run, when
    /// the timing model has moved them otherwise), in every CTA of the multicast mask.
    fn bulk_copy(&mut self, dir: BulkDir, multicast: bool) -> Res<()> {
        let a = self.ur_block(0)?;
        let b = self.ur_block(1)?;
        if a >= 62 || b >= 62 {
            return Err(self.unsup("register block beyond UR62"));
        }
        let lane = self.g.trailing_zeros() as usize;
        let size_reg = match self.op(2)?.k {
            K::UR(r) => self.ureg(r),
            _ => return Err(self.unsup("size is not a uniform register")),
        };
        let bytes = u64::from(size_reg & 0xffff) * 16;
        let wide = |ex: &Self, r: u8| u64::from(ex.ureg(r)) | u64::from(ex.ureg(r + 1)) << 32;
        let (dst, src) = match dir {
            BulkDir::SharedFromGlobal => (u64::from(self.ureg(a)), wide(self, b)),
            BulkDir::SharedFromShared => (u64::from(self.ureg(a)), u64::from(self.ureg(b))),
            BulkDir::GlobalFromShared => (wide(self, a), u64::from(self.ureg(b))),
        };
        for (addr, space) in [
            (dst, dir == BulkDir::GlobalFromShared),
            (src, dir == BulkDir::SharedFromGlobal),
        ] {
            if !addr.is_multiple_of(16) {
                let sp = if space { MemSpace::Global } else { MemSpace::Shared };
                return Err(self.fault(lane, addr, 16, sp, true));
            }
        }
        let mut data = vec![0u8; bytes as usize];
        if dir == BulkDir::SharedFromGlobal {
            if !self.read_global(src, &mut data) {
                return Err(self.fault(lane, src, bytes as u32, MemSpace::Global, false));
            }
        } else {
            let (c, off) = self
                .k
                .cluster_smem(self.cta, src)
                .ok_or_else(|| self.fault(lane, src, 16, MemSpace::Shared, false))?;
            if !self.k.ctas[c].shared.read_into(off, &mut data) {
                return Err(self.fault(lane, src, bytes as u32, MemSpace::Shared, false));
            }
        }
        if dir == BulkDir::GlobalFromShared {
            if !self.k.global.write(dst, &data) {
                return Err(self.fault(lane, dst, bytes as u32, MemSpace::Global, false));
            }
            self.k.progress += 1;
            let chunks = (0..bytes / 16).map(|i| dst + 16 * i).collect();
            self.k.bulk.started(Vec::new(), 0, chunks, true);
            return Ok(());
        }
        let bar = u64::from(self.ureg(a + 1));
        let off_mask = (1u64 << cluster::RANK_SHIFT) - 1;
        let ranks: Vec<u64> = if multicast {
            (0..16).filter(|r| size_reg >> (16 + r) & 1 == 1).collect()
        } else {
            vec![dst >> cluster::RANK_SHIFT]
        };
        let mut bars = Vec::new();
        for r in ranks {
            let to = (r << cluster::RANK_SHIFT) | (dst & off_mask);
            let (c, base) = self
                .k
                .cluster_smem(self.cta, to)
                .ok_or_else(|| self.fault(lane, to, 16, MemSpace::Shared, false))?;
            if self.k.ctas[c].shared.write(base, &data).is_none() {
                return Err(self.fault(lane, to, bytes as u32, MemSpace::Shared, false));
            }
            self.k.progress += 1;
            let at = (r << cluster::RANK_SHIFT) | (bar & off_mask);
            if self.k.bulk.defer {
                let (c, off) = self
                    .k
                    .cluster_smem(self.cta, at)
                    .ok_or_else(|| self.fault(lane, at, 8, MemSpace::Shared, false))?;
                bars.push((c, self.k.ctas[c].linear, off));
            } else {
                self.complete_tx(at, bytes)?;
            }
        }
        // A shared-to-shared copy moves no global memory: the timing model completes it
        // without memory requests.
        let chunks = if dir == BulkDir::SharedFromGlobal {
            (0..bytes / 16).map(|i| src + 16 * i).collect()
        } else {
            Vec::new()
        };
        self.k.bulk.started(bars, bytes, chunks, false);
        Ok(())
    }

    /// A 64-bit descriptor from uniform registers `r`, `r + 1`.
    fn desc(&self, r: u8) -> Res<MatrixDesc> {
        let v = u64::from(self.ureg(r)) | u64::from(self.ureg(r + 1)) << 32;
        MatrixDesc::decode(v).map_err(|e| self.unsup(&e))
    }

    /// One element of a shared-memory operand of this CTA.
    fn smem_elem(&self, addr: u64, bytes: usize) -> Res<u32> {
        let mut b = [0u8; 4];
        if !self.k.ctas[self.cta].shared.read_into(addr, &mut b[..bytes]) {
            return Err(self.fault(0, addr, bytes as u32, MemSpace::Shared, false));
        }
        Ok(u32::from_le_bytes(b))
    }

    /// `HGMMA`/`IGMMA`/`QGMMA`: this warp's 16 rows of D = A·B (+ C).
    fn gmma(&mut self, g: &GmmaOp) -> Res<()> {
        if self.g == 0 {
            return Ok(());
        }
        if self.g != u32::MAX {
            return Err(self.unsup("warpgroup MMA executed by a partial warp"));
        }
        let s = g.spec;
        let (n, k) = (s.n as usize, s.k as usize);
        let di = 1 + usize::from(g.a_regs);
        let gd = match self.op(di)?.k {
            K::Gdesc(r) if r <= 59 => r,
            _ => return Err(self.unsup("descriptor operand")),
        };
        let d0 = match self.op(0)?.k {
            K::R(r) => r,
            _ => return Err(self.unsup("destination is not a register")),
        };
        let nd = s.d_regs() as usize;
        if d0 as usize + nd > 255 {
            return Err(self.unsup("accumulators beyond R254"));
        }
        let c_reg = match self.op(di + 1)?.k {
            K::R(r) => r,
            _ => return Err(self.unsup("C operand is not a register")),
        };
        // scale-d: the uniform predicate after C (absent = accumulate).
        let scale_d = match self.d.o.get(di + 2) {
            Some(o) if matches!(o.k, K::UP(_)) => self.pred(o, 0),
            _ => true,
        } && c_reg != 255;
        let w = (self.w().in_cta % 4) as usize;
        let ab = s.a.bytes() as u64;
        // A: this warp's 16 rows × K, B: K × N (row-major matrices of values).
        let mut a = vec![0f64; 16 * k];
        if g.a_regs {
            let ar = match self.op(1)?.k {
                K::R(r) if r as usize + 4 <= 255 => r,
                _ => return Err(self.unsup("A operand")),
            };
            for lane in 0..32usize {
                let (gr, q) = (lane / 4, lane % 4);
                let per_reg = (4 / ab) as usize;
                for i in 0..4 * per_reg {
                    let (row, kk) = match s.a {
                        GmmaType::F16 | GmmaType::Bf16 => {
                            (gr + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * q + (i & 1))
                        }
                        GmmaType::Tf32 => (gr + 8 * (i & 1), q + 4 * (i >> 1)),
                        _ => (gr + 8 * ((i >> 2) & 1), 16 * (i >> 3) + 4 * q + (i & 3)),
                    };
                    let word = self.reg(ar + (i / per_reg) as u8, lane);
                    let bits = 8 * ab as usize * (i % per_reg);
                    let raw = if ab == 4 {
                        word
                    } else {
                        (word >> bits) & ((1 << (8 * ab)) - 1)
                    };
                    a[row * k + kk] = gmma_value(s.a, raw);
                }
            }
        } else {
            let da = self.desc(gd)?;
            for row in 0..16 {
                for kk in 0..k {
                    let at = da.addr((16 * w + row) as u64, kk as u64, ab, g.trans_a);
                    a[row * k + kk] = gmma_value(s.a, self.smem_elem(at, ab as usize)?);
                }
            }
        }
        let db = self.desc(gd + 2)?;
        let bb = s.b.bytes() as u64;
        let mut b = vec![0f64; k * n];
        for col in 0..n {
            for kk in 0..k {
                let at = db.addr(col as u64, kk as u64, bb, g.trans_b);
                b[kk * n + col] = gmma_value(s.b, self.smem_elem(at, bb as usize)?);
            }
        }
        if g.neg_a {
            a.iter_mut().for_each(|x| *x = -*x);
        }
        if g.neg_b {
            b.iter_mut().for_each(|x| *x = -*x);
        }
        // D element i of lane l: row g + 8·((i >> 1) & 1), column 8·(i >> 2) + 2q + (i & 1)
        // (PTX ISA wgmma D fragment; CUTLASS CLayout_64xN).
        let elems = n / 2;
        let mut out = vec![[0u32; 32]; nd];
        #[allow(clippy::needless_range_loop)] // `lane` indexes registers and the layout
        for lane in 0..32usize {
            let (gr, q) = (lane / 4, lane % 4);
            for i in 0..elems {
                let row = gr + 8 * ((i >> 1) & 1);
                let col = 8 * (i >> 2) + 2 * q + (i & 1);
                let (r, half) = if s.acc == MmaType::F16 {
                    (i / 2, i % 2)
                } else {
                    (i, 0)
                };
                let c_word = self.reg(c_reg.saturating_add(r as u8), lane);
                let v = if s.acc == MmaType::S32 {
                    let mut acc = if scale_d { i64::from(c_word as i32) } else { 0 };
                    for kk in 0..k {
                        acc += a[row * k + kk] as i64 * b[kk * n + col] as i64;
                    }
                    if s.sat {
                        acc.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
                    } else {
                        acc as i32 as u32
                    }
                } else {
                    let c = if !scale_d {
                        0.0
                    } else if s.acc == MmaType::F16 {
                        half::f16::from_bits((c_word >> (16 * half)) as u16).to_f64()
                    } else {
                        f32::from_bits(c_word) as f64
                    };
                    let mut acc = c;
                    for kk in 0..k {
                        acc += a[row * k + kk] * b[kk * n + col];
                    }
                    if s.acc == MmaType::F16 {
                        let h = if acc.is_nan() {
                            0x7fff
                        } else {
                            half::f16::from_f64(acc).to_bits()
                        };
                        (out[r][lane] & !(0xffff << (16 * half))) | u32::from(h) << (16 * half)
                    } else if acc.is_nan() {
                        0x7fff_ffff
                    } else {
                        (acc as f32).to_bits()
                    }
                };
                out[r][lane] = v;
            }
        }
        // Written when the warp issues it: the accumulators are read only after
        // WARPGROUP.DEPBAR (module comment).
        let base = d0 as usize * 32;
        if self.k.warps[self.wi].regs.len() < base + 32 * nd {
            return Err(self.unsup("accumulators beyond the kernel's registers"));
        }
        let regs = &mut self.k.warps[self.wi].regs;
        for (r, vals) in out.iter().enumerate() {
            regs[base + r * 32..base + r * 32 + 32].copy_from_slice(vals);
        }
        Ok(())
    }
}

/// The 16-byte chunks (ascending, distinct) holding elements at `addrs` of `es` bytes.
fn chunks_of(addrs: &[u64], es: usize) -> Vec<u64> {
    let mut c: Vec<u64> = addrs
        .iter()
        .flat_map(|&a| [a & !15, (a + es as u64 - 1) & !15])
        .collect();
    c.sort_unstable();
    c.dedup();
    c
}

/// One TMA copy whose mbarrier completion waits for the timing model.
#[derive(Debug)]
struct PendingBulk {
    /// (CTA record, its linear id, offset) of every mbarrier to complete `bytes` on.
    bars: Vec<(usize, u32, u64)>,
    bytes: u64,
}

/// TMA copies handed to the timing model: when `defer` is set (a timing run), a load's
/// transaction bytes complete on its mbarrier when the timing model reports the copy done
/// ([`KernelExec::bulk_done`]), not when it issues.
#[derive(Debug, Default)]
pub(super) struct BulkCopies {
    defer: bool,
    pending: HashMap<u32, PendingBulk>,
    next_id: u32,
    /// The copy the last issued instruction started: (id, chunks, store).
    last: Option<(u32, Vec<u64>, bool)>,
}

impl BulkCopies {
    fn started(&mut self, bars: Vec<(usize, u32, u64)>, bytes: u64, chunks: Vec<u64>, store: bool) {
        if !self.defer {
            return;
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        if !bars.is_empty() {
            self.pending.insert(id, PendingBulk { bars, bytes });
        }
        self.last = Some((id, chunks, store));
    }

    /// Whether a copy's completion on its mbarriers is still to come (livelock probes: it
    /// changes memory without any warp issuing).
    pub(super) fn any_pending(&self) -> bool {
        !self.pending.is_empty()
    }
}

impl KernelExec {
    /// Timing runs: complete TMA loads on their mbarriers when [`bulk_done`](Self::bulk_done)
    /// is called for them rather than at issue.
    pub fn set_defer_bulk(&mut self, on: bool) {
        self.bulk.defer = on;
    }

    /// The copy the last issued instruction started, if any: (id, 16-byte chunks of global
    /// memory, whether it writes them).
    pub fn take_bulk(&mut self) -> Option<(u32, Vec<u64>, bool)> {
        self.bulk.last.take()
    }

    /// The timing model has moved every byte of copy `id`: its bytes complete on its
    /// mbarriers (of CTAs still running).
    pub fn bulk_done(&mut self, id: u32) -> Result<(), ExecError> {
        let Some(p) = self.bulk.pending.remove(&id) else {
            return Ok(());
        };
        for (c, linear, off) in p.bars {
            let live = self.ctas.get(c).is_some_and(|x| x.linear == linear && !x.retired);
            if !live {
                continue;
            }
            self.complete_tx_at(c, off, p.bytes)
                .map_err(|e| ExecError::unsupported(format!("TMA completion: {e}"), 0))?;
        }
        Ok(())
    }

    /// complete-tx of `bytes` on the mbarrier word at offset `off` of CTA record `c` (PTX
    /// `mbarrier.complete_tx`, what a TMA load does when its bytes have arrived). `Ok(false)`:
    /// the word is outside the CTA's shared memory.
    fn complete_tx_at(&mut self, c: usize, off: u64, bytes: u64) -> Result<bool, String> {
        let mut w = [0u8; 8];
        if !self.ctas[c].shared.read_into(off, &mut w) {
            return Ok(false);
        }
        let mut b = Mbarrier::decode(u64::from_le_bytes(w));
        b.apply(0, -(bytes as i64), false)?;
        if self.ctas[c].shared.write(off, &b.encode().to_le_bytes()) == Some(true) {
            self.progress += 1;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mbarrier_word_matches_ptxas_init_and_completes_phases() {
        // mbarrier.init with count 1 stores 0x7FFFF800_001FFFFE (ptxas 13.5, SASS-NOTES.md).
        let init = 0x7FFF_F800_001F_FFFEu64;
        let b = Mbarrier::decode(init);
        assert_eq!((b.phase, b.pending, b.expected, b.tx), (false, 1, 1, 0));
        assert_eq!(b.encode(), init);
        // arrive.expect_tx(8192): pending 0 but 8192 bytes outstanding: phase still 0.
        let mut b = b;
        b.apply(1, 8192, false).unwrap();
        assert!(!b.phase);
        // The TMA completes the bytes: phase 1, pending reloaded.
        b.apply(0, -8192, false).unwrap();
        assert!(b.phase);
        assert_eq!((b.pending, b.tx), (1, 0));
        // pending_count(token) = 2^20 − ((token >> 43) & 0xFFFFF) (ptxas's lowering).
        assert_eq!((1 << 20) - ((b.encode() >> 43) & 0xF_FFFF) as i64, 1);
        // Bytes arriving before the expect: negative count, phase waits for the arrival.
        let mut c = Mbarrier::decode(init);
        c.apply(0, -100, false).unwrap();
        assert_eq!(Mbarrier::decode(c.encode()).tx, -100);
        c.apply(1, 100, false).unwrap();
        assert!(c.phase);
        // Too many arrivals are refused.
        assert!(Mbarrier::decode(init).apply(2, 0, false).is_err());
    }

    #[test]
    fn fp8_values() {
        assert_eq!(fp8(0x38, false), 1.0); // E4M3: 0.0111.000 = 2^0
        assert_eq!(fp8(0x7e, false), 448.0); // largest E4M3
        assert!(fp8(0x7f, false).is_nan());
        assert_eq!(fp8(0x3c, true), 1.0); // E5M2: 0.01111.00
        assert_eq!(fp8(0x7c, true), f64::INFINITY);
        assert_eq!(fp8(0x01, true), 2f64.powi(-16)); // smallest E5M2 subnormal
    }

    #[test]
    fn descriptor_addresses_follow_the_ptx_layouts() {
        // K-major, 128-byte swizzle, f16, SBO = 1024 (8 rows × 128 B), start 0x400.
        let v = (0x400u64 >> 4) | (1 << 16) | ((1024 >> 4) << 32) | (1 << 62);
        let d = MatrixDesc::decode(v).unwrap();
        // Row 0, k 0..7: chunk 0 of row 0.
        assert_eq!(d.addr(0, 0, 2, false), 0x400);
        // Row 1, k 8 (chunk 1): pre = 0x400 + 128 + 16 → chunk 1 ^ 1 = 0.
        assert_eq!(d.addr(1, 8, 2, false), 0x400 + 128);
        // Row 9 = second 8-row group, row 1 in it.
        assert_eq!(d.addr(9, 0, 2, false), 0x400 + 1024 + 128 + 16);
        // No swizzle, K-major: core matrices 8 × 16 B, LBO between K chunks.
        let v: u64 = ((256 >> 4) << 16) | ((128 >> 4) << 32);
        let d = MatrixDesc::decode(v).unwrap();
        assert_eq!(d.addr(3, 9, 2, false), 3 * 16 + 256 + 2);
        assert_eq!(d.addr(8, 0, 2, false), 128);
    }
}
