//! Coding of one instruction, its mask and its addresses, and of block and warp headers:
//! the functions the encoder and the decoder both run.

use std::io;

use super::coder::Coder;
use super::model::{
    lanes_of, scale, scale_abs, tracer_mode, Model, StaticKey, Trans, ALIGN_UNSET, PAT_AFFINE, PAT_GATHER,
    PAT_GDELTA, PAT_RING0, PAT_STATIC, PAT_STRIDE, STATIC_FLAGS,
};
use super::primitives::{bitlen, code_raw, code_res, code_s, code_tree, code_u, flag, unzz, zz};
use super::{MAX_NAME, MAX_STATICS, MAX_VALUES, NONE, RING, TRANS_BITS, TRANS_CAP, TRANS_LIST, TRANS_TABLES};
use crate::record::{
    flags, AddrMode, Reg, RegKind, ThreadBlockTrace, TraceInstr, MAX_DST, MAX_SRC, WARP_SIZE,
};

/// Coding failure: I/O (including a truncated stream) or a field whose
/// decoded value is inconsistent with the model (corrupt data).
pub(super) enum CErr {
    Io(io::Error),
    Bad(&'static str),
}

impl From<io::Error> for CErr {
    fn from(e: io::Error) -> Self {
        CErr::Io(e)
    }
}

pub(super) type CResult<T> = std::result::Result<T, CErr>;

/// One instruction in transit: the encoder fills it from the trace, the
/// decoder from the stream.
pub(super) struct Io {
    pub(super) ins: TraceInstr,
    /// File opcode id, and its name when it is defined by this instruction.
    pub(super) op: u32,
    pub(super) name: Vec<u8>,
    pub(super) lanes: [u64; WARP_SIZE],
    /// v6 values: per operand a count, then the values.
    pub(super) vals: Vec<u64>,
}

impl Io {
    pub(super) fn new() -> Self {
        Io {
            ins: TraceInstr::default(),
            op: 0,
            name: Vec::new(),
            lanes: [0; WARP_SIZE],
            vals: Vec::new(),
        }
    }

    fn key(&self) -> StaticKey {
        let i = &self.ins;
        let mut k = StaticKey {
            pc: i.pc,
            line: i.line,
            op: self.op,
            imm: i.imm,
            n_dst: i.n_dst,
            n_src: i.n_src,
            dst: i.dst,
            src: i.src,
            mem_width: i.mem_width,
            flags: i.flags & STATIC_FLAGS,
        };
        // Canonicalize unused register slots so equal records share a key.
        for r in k.dst.iter_mut().skip(usize::from(i.n_dst)) {
            *r = Reg::default();
        }
        for r in k.src.iter_mut().skip(usize::from(i.n_src)) {
            *r = Reg::default();
        }
        k
    }
}

/// Parameters of a GATHER / GDELTA pattern chosen by the encoder.
#[derive(Default, Clone, Copy)]
struct Gather {
    w: u32,
    align: u8,
    lo: u64,
    new_lo: bool,
}

impl Model {
    /// Code one instruction (not its end-of-warp flag); returns its static id.
    pub(super) fn code_instr<C: Coder>(
        &mut self,
        c: &mut C,
        x: &mut Io,
        prev: u32,
        prev_mask: u32,
        tid0: u64,
    ) -> CResult<u32> {
        // -- static instruction
        let (pred, alt) = self.succ_of(prev);
        let (mut sid, mut is_new) = (NONE, false);
        if C::ENC {
            match self.map.get(&x.key()) {
                Some(&s) => sid = s,
                None => is_new = true,
            }
        }
        let hit = pred != NONE && flag(c, &mut self.prev_ctx(prev).succ, !is_new && sid == pred)?;
        if hit {
            sid = pred;
        } else {
            let hit =
                alt != NONE && alt != pred && flag(c, &mut self.prev_ctx(prev).alt, !is_new && sid == alt)?;
            if hit {
                sid = alt;
            } else if flag(c, &mut self.g.sid_new, is_new)? {
                sid = self.code_def(c, x)?;
            } else {
                let v = code_u(c, &mut self.g.sid, u64::from(sid))?;
                if v >= self.statics.len() as u64 {
                    return Err(CErr::Bad("static id"));
                }
                sid = v as u32;
            }
        }
        self.set_succ(prev, sid);
        let s = sid as usize;
        let k = self.statics[s].key;
        let i = &mut x.ins;
        i.pc = k.pc;
        i.line = k.line;
        i.imm = k.imm;
        i.n_dst = k.n_dst;
        i.n_src = k.n_src;
        i.dst = k.dst;
        i.src = k.src;
        i.mem_width = k.mem_width;
        x.op = k.op;

        // -- mask
        let mask = self.code_mask(c, s, x.ins.mask, prev_mask)?;
        x.ins.mask = mask;

        // -- values flag
        let st = &mut self.statics[s];
        let has_vals = flag(c, &mut st.ctx.vals, x.ins.has_values())?;
        x.ins.flags = k.flags | if has_vals { flags::HAS_VALUES } else { 0 };
        st.last_mask = mask;

        // -- addresses
        if k.mem_width > 0 {
            if mask != 0 {
                self.code_addrs(c, s, mask, &mut x.lanes, tid0)?;
            }
            let lanes = x.lanes;
            self.update_mem(sid, mask, &lanes);
        }

        // -- addr_mode, predicted by the tracer's rule once the trace
        // has shown that it compresses addresses
        let st = &mut self.statics[s];
        let pm = if k.mem_width > 0 && st.last_mode != 0 {
            tracer_mode(mask, &x.lanes)
        } else {
            st.last_mode
        };
        let mode = x.ins.addr_mode as u8;
        let mode = if flag(c, &mut st.ctx.mode, mode == pm)? {
            pm
        } else {
            code_tree(c, &mut self.g.mode, 2, u32::from(mode))? as u8
        };
        x.ins.addr_mode = AddrMode::from_u8(mode).ok_or(CErr::Bad("addr_mode"))?;
        st.last_mode = mode;

        // -- v6 values
        if has_vals {
            let mut p = 0usize;
            for _ in 0..usize::from(k.n_dst) + usize::from(k.n_src) {
                let n = code_u(c, &mut self.g.val_n, x.vals.get(p).copied().unwrap_or(0))?;
                if n > MAX_VALUES {
                    return Err(CErr::Bad("value count"));
                }
                if !C::ENC {
                    x.vals.push(n);
                }
                p += 1;
                for _ in 0..n {
                    let v = code_u(c, &mut self.g.val, x.vals.get(p).copied().unwrap_or(0))?;
                    if !C::ENC {
                        x.vals.push(v);
                    }
                    p += 1;
                }
            }
        }
        Ok(sid)
    }

    /// A new static instruction's definition.
    fn code_def<C: Coder>(&mut self, c: &mut C, x: &mut Io) -> CResult<u32> {
        let mut key = x.key();
        let g = &mut self.g;
        let base = self.last_def_pc.wrapping_add(16);
        key.pc = base.wrapping_add(code_s(c, &mut g.pc, i64::from(key.pc.wrapping_sub(base) as i32))? as u32);
        self.last_def_pc = key.pc;
        key.line =
            u32::try_from(code_u(c, &mut g.line, u64::from(key.line))?).map_err(|_| CErr::Bad("line"))?;
        let op = code_u(c, &mut g.op, u64::from(key.op))?;
        if op > u64::from(self.n_ops) {
            return Err(CErr::Bad("opcode"));
        }
        key.op = op as u32;
        if op == u64::from(self.n_ops) {
            let n = code_u(c, &mut g.name_len, x.name.len() as u64)?;
            if n == 0 || n > MAX_NAME {
                return Err(CErr::Bad("opcode"));
            }
            c.name(&mut x.name, n as usize)?;
            self.n_ops += 1;
        }
        for v in key.imm.iter_mut() {
            *v = code_s(c, &mut g.imm, *v)?;
        }
        let nn = code_tree(c, &mut g.nn, 8, u32::from(key.n_dst | key.n_src << 4))? as u8;
        let (n_dst, n_src) = (nn & 15, nn >> 4);
        if usize::from(n_dst) > MAX_DST || usize::from(n_src) > MAX_SRC {
            return Err(CErr::Bad("register count"));
        }
        key.n_dst = n_dst;
        key.n_src = n_src;
        for j in 0..usize::from(n_dst + n_src) {
            let r = if j < usize::from(n_dst) {
                &mut key.dst[j]
            } else {
                &mut key.src[j - usize::from(n_dst)]
            };
            let kind = code_tree(c, &mut g.reg_kind, 2, r.kind as u32)? as u8;
            r.kind = RegKind::from_u8(kind).ok_or(CErr::Bad("register"))?;
            r.num = code_tree(c, &mut g.reg_num, 8, u32::from(r.num))? as u8;
        }
        key.mem_width = u8::try_from(code_u(c, &mut g.mem_width, u64::from(key.mem_width))?)
            .map_err(|_| CErr::Bad("mem_width"))?;
        key.flags = code_tree(c, &mut g.sflags, 8, u32::from(key.flags))? as u8;
        if key.flags & !STATIC_FLAGS != 0 {
            return Err(CErr::Bad("flags"));
        }
        if !C::ENC && self.map.contains_key(&key) {
            return Err(CErr::Bad("static definition"));
        }
        if self.statics.len() >= MAX_STATICS {
            return Err(CErr::Bad("static instruction count"));
        }
        Ok(self.add_static(key))
    }

    fn code_mask<C: Coder>(&mut self, c: &mut C, s: usize, m: u32, prev: u32) -> CResult<u32> {
        let last = self.statics[s].last_mask;
        let sc = &mut self.statics[s].ctx;
        if flag(c, &mut sc.m[0], m == prev)? {
            return Ok(prev);
        }
        if flag(c, &mut sc.m[1], m == last)? {
            return Ok(last);
        }
        // the mask before the previous one (a divergent body rejoining)
        let h1 = if self.hist.n >= 2 { self.hist.h[1] } else { prev };
        if flag(c, &mut sc.m[6], m == h1)? {
            return Ok(h1);
        }
        if flag(c, &mut sc.m[2], m == u32::MAX)? {
            return Ok(u32::MAX);
        }
        if flag(c, &mut sc.m[3], m == 0)? {
            return Ok(0);
        }
        let (sp, sl) = (m & !prev == 0, m & !last == 0);
        if flag(c, &mut sc.m[4], sp || sl)? {
            let use_last = if sp && sl {
                last.count_ones() < prev.count_ones()
            } else {
                sl
            };
            let use_last = flag(c, &mut sc.m[5], use_last)?;
            let (base, other) = if use_last { (last, prev) } else { (prev, last) };
            let mut r = 0u32;
            for l in lanes_of(base) {
                let cx = &mut sc.lane[2 * usize::from(use_last) + (other >> l & 1) as usize];
                if flag(c, cx, m >> l & 1 == 1)? {
                    r |= 1 << l;
                }
            }
            return Ok(r);
        }
        // history of the warp's recent masks
        let h = &self.hist;
        let mut sel = 0xffu32;
        if C::ENC {
            if let Some(x) = (0..0xc0).find(|&x| h.op(x) == Some(m)) {
                sel = x;
            } else if let Some(i) = (0..h.n)
                .filter(|&i| m & !h.h[i] == 0 && h.h[i].count_ones() < 24)
                .min_by_key(|&i| h.h[i].count_ones())
            {
                sel = 0xc0 | (i as u32) << 3;
            }
        }
        let g = &mut self.g;
        let sel = code_tree(c, &mut g.hist_sel, 8, sel)?;
        if sel == 0xff {
            let mut r = 0u32;
            for l in 0..32 {
                if flag(c, &mut g.raw_lane[l], m >> l & 1 == 1)? {
                    r |= 1 << l;
                }
            }
            return Ok(r);
        }
        if sel >> 6 == 3 {
            let i = (sel >> 3 & 7) as usize;
            if i >= h.n || sel & 7 != 0 {
                return Err(CErr::Bad("mask"));
            }
            let base = h.h[i];
            let mut r = 0u32;
            for l in lanes_of(base) {
                if flag(c, &mut g.hist_lane[0], m >> l & 1 == 1)? {
                    r |= 1 << l;
                }
            }
            return Ok(r);
        }
        h.op(sel).ok_or(CErr::Bad("mask"))
    }

    /// Encoder: the pattern of a multi-lane access.
    fn choose_pat(&self, s: usize, mask: u32, lanes: &[u64; WARP_SIZE]) -> (u8, Gather) {
        let st = &self.statics[s];
        let l0 = mask.trailing_zeros() as usize;
        let pred = self.pred(s, l0);
        let res = lanes[l0].wrapping_sub(pred);
        let rel = |l: usize| lanes[l].wrapping_sub(lanes[l0]);
        let same = st.last_valid & mask == mask
            && lanes_of(mask).all(|l| st.last[l].wrapping_sub(st.last[l0]) == rel(l));
        if same && res == 0 {
            return (PAT_STATIC, Gather::default());
        }
        let l1 = (mask & (mask - 1)).trailing_zeros() as usize;
        let d1 = rel(l1) as i64;
        let k1 = (l1 - l0) as i64;
        let affine = d1 % k1 == 0 && {
            let sd = d1 / k1;
            lanes_of(mask).all(|l| rel(l) as i64 == sd.wrapping_mul((l - l0) as i64))
        };
        if affine && (d1 / k1) as u64 == st.lane_stride {
            return (PAT_AFFINE, Gather::default());
        }
        if let Some(code) = self.find_ring(mask, lanes) {
            let (r, sh) = (usize::from(code / 17), i32::from(code % 17) - 8);
            let ref_l0 = self.ring_get(r).map_or(0, |e| e.0[l0]);
            let k = scale_abs(ref_l0, sh);
            let rres = lanes[l0].wrapping_sub(k.wrapping_add(st.ring_k));
            if !same || rres == 0 {
                return (PAT_RING0 + code, Gather::default());
            }
        }
        if same {
            return (PAT_STATIC, Gather::default());
        }
        let mut buf = [0u64; WARP_SIZE];
        let mut n = 0;
        for l in lanes_of(mask) {
            buf[n] = lanes[l];
            n += 1;
        }
        let a = &buf[..n];
        let stride = a.windows(2).all(|p| p[1].wrapping_sub(p[0]) == d1 as u64);
        // Elias-gamma cost of a stride and a residual (about twice the bit
        // length of each), against the raw bits of a gather below.
        let eg = |v: i64| 2 * u64::from(bitlen(zz(v))) + 1;
        let lin_cost = if affine {
            Some((PAT_AFFINE, eg(d1 / k1) + eg(res as i64)))
        } else if stride {
            Some((PAT_STRIDE, eg(d1) + eg(res as i64)))
        } else {
            None
        };
        // region-relative lanes, or zigzag consecutive deltas
        let mn = a.iter().copied().min().unwrap_or(0);
        let new_lo = !st.region_ok || a.iter().any(|&x| x.wrapping_sub(st.region_lo) >= 1 << 48);
        // A new region starts at the minimum rounded down to a power of two
        // of the span: the array base when the array is aligned to its size,
        // so that later lanes below this minimum still fall inside.
        let lo = if new_lo {
            let mx = a.iter().copied().max().unwrap_or(mn);
            let k = bitlen(mx - mn).min(40);
            mn & !((1u64 << k) - 1)
        } else {
            st.region_lo
        };
        let tz = a
            .iter()
            .map(|&x| x.wrapping_sub(lo))
            .filter(|&v| v != 0)
            .map(|v| v.trailing_zeros())
            .min()
            .unwrap_or(u32::from(st.align.min(16)))
            .min(16) as u8;
        let ga = if st.align != ALIGN_UNSET && tz >= st.align {
            st.align
        } else {
            tz
        };
        let gw = a
            .iter()
            .map(|&x| bitlen(x.wrapping_sub(lo) >> ga))
            .max()
            .unwrap_or(0);
        let gcost = if gw > 63 {
            u64::MAX
        } else {
            u64::from(gw) * a.len() as u64
        };
        let ds = || a.windows(2).map(|p| p[1].wrapping_sub(p[0]) as i64);
        let dtz = ds()
            .filter(|&d| d != 0)
            .map(|d| d.trailing_zeros())
            .min()
            .unwrap_or(0)
            .min(16) as u8;
        let da = if st.align != ALIGN_UNSET && dtz >= st.align {
            st.align
        } else {
            dtz
        };
        let dw = ds().map(|d| bitlen(zz(d >> da))).max().unwrap_or(0);
        let dcost = 2 * u64::from(bitlen(zz(res as i64))) + u64::from(dw) * (a.len() as u64 - 1);
        let gcost = gcost.saturating_add(if new_lo { 24 } else { 4 });
        if let Some((pat, cost)) = lin_cost {
            if cost <= gcost.min(dcost) {
                return (pat, Gather::default());
            }
        }
        if gcost <= dcost {
            (
                PAT_GATHER,
                Gather {
                    w: gw,
                    align: ga,
                    lo,
                    new_lo,
                },
            )
        } else {
            (
                PAT_GDELTA,
                Gather {
                    w: dw,
                    align: da,
                    lo: 0,
                    new_lo: false,
                },
            )
        }
    }

    /// Addresses of a memory instruction with a non-empty mask.
    fn code_addrs<C: Coder>(
        &mut self,
        c: &mut C,
        s: usize,
        mask: u32,
        lanes: &mut [u64; WARP_SIZE],
        tid0: u64,
    ) -> CResult<()> {
        let l0 = mask.trailing_zeros() as usize;
        let (pred, last_pat) = (self.pred(s, l0), self.statics[s].last_pat);
        if mask.count_ones() == 1 {
            // a ring reference of this static's multi-lane executions, else the
            // static's own history
            let rp = self.ring_pred(s, l0);
            let p1 = rp.unwrap_or(pred);
            let st = &mut self.statics[s];
            // a lane of a gather static: raw bits in its region, when cheaper
            if st.region_ok && st.gw > 0 && st.align <= 16 {
                let (lo, al, gw) = (st.region_lo, u32::from(st.align), st.gw);
                let off = lanes[l0].wrapping_sub(lo);
                let fits = off & ((1u64 << al) - 1) == 0 && (off >> al).checked_shr(gw).unwrap_or(0) == 0;
                let res = lanes[l0].wrapping_sub(p1) as i64;
                let cheaper = res != 0 && 2 * bitlen(zz(res)) + 1 > gw;
                if flag(c, &mut st.ctx.region1, fits && cheaper)? {
                    let v = code_raw(c, gw, off >> al)?;
                    lanes[l0] = lo.wrapping_add(v << al);
                    if let Some(rp) = rp {
                        st.ring_k = st.ring_k.wrapping_add(lanes[l0].wrapping_sub(rp));
                    }
                    return Ok(());
                }
            }
            let r = code_res(
                c,
                &mut st.ctx.res0,
                &mut self.g.res[0],
                lanes[l0].wrapping_sub(p1) as i64,
            )?;
            lanes[l0] = p1.wrapping_add(r as u64);
            if let Some(rp) = rp {
                st.ring_k = st.ring_k.wrapping_add(lanes[l0].wrapping_sub(rp));
            }
            return Ok(());
        }
        let (mut pat, mut ga) = (0u8, Gather::default());
        if C::ENC {
            (pat, ga) = self.choose_pat(s, mask, lanes);
        }
        let g = &mut self.g;
        let st = &mut self.statics[s];
        if !flag(c, &mut st.ctx.pat, pat == last_pat)? {
            pat = code_tree(c, &mut g.pat, 8, u32::from(pat))? as u8;
        } else {
            pat = last_pat;
        }
        st.last_pat = pat;
        match pat {
            PAT_STATIC => {
                if st.last_valid & mask != mask {
                    return Err(CErr::Bad("address pattern"));
                }
                let a0 = pred.wrapping_add(code_res(
                    c,
                    &mut st.ctx.res0,
                    &mut g.res[1],
                    lanes[l0].wrapping_sub(pred) as i64,
                )? as u64);
                let b = st.last[l0];
                for l in lanes_of(mask) {
                    lanes[l] = a0.wrapping_add(st.last[l].wrapping_sub(b));
                }
            }
            PAT_AFFINE | PAT_STRIDE => {
                let l1 = (mask & (mask - 1)).trailing_zeros() as usize;
                let mut sd = lanes[l1].wrapping_sub(lanes[l0]);
                if pat == PAT_AFFINE {
                    sd = (sd as i64 / (l1 - l0) as i64) as u64;
                }
                if !flag(c, &mut st.ctx.stride, sd == st.lane_stride)? {
                    sd = code_s(c, &mut g.stride, sd as i64)? as u64;
                } else {
                    sd = st.lane_stride;
                }
                st.lane_stride = sd;
                let a0 = pred.wrapping_add(code_res(
                    c,
                    &mut st.ctx.res0,
                    &mut g.res[2],
                    lanes[l0].wrapping_sub(pred) as i64,
                )? as u64);
                for (i, l) in lanes_of(mask).enumerate() {
                    let k = if pat == PAT_AFFINE { l - l0 } else { i };
                    lanes[l] = a0.wrapping_add(sd.wrapping_mul(k as u64));
                }
            }
            PAT_GATHER => self.code_gather(c, s, mask, lanes, tid0, ga)?,
            PAT_GDELTA => {
                let w = code_tree(c, &mut g.gw, 7, ga.w)?;
                let da = if flag(c, &mut g.gflag[1], ga.align != st.align)? {
                    code_tree(c, &mut g.galign, 5, u32::from(ga.align))? as u8
                } else {
                    st.align
                };
                if da > 16 || w > 64 {
                    return Err(CErr::Bad("gather code"));
                }
                let mut a = pred.wrapping_add(code_res(
                    c,
                    &mut st.ctx.res0,
                    &mut g.res[3],
                    lanes[l0].wrapping_sub(pred) as i64,
                )? as u64);
                let mut prev = lanes[l0];
                lanes[l0] = a;
                for l in lanes_of(mask).skip(1) {
                    let d = lanes[l].wrapping_sub(prev) as i64;
                    prev = lanes[l];
                    let v = unzz(code_raw(c, w, zz(d >> da))?);
                    a = a.wrapping_add(v.wrapping_shl(u32::from(da)) as u64);
                    lanes[l] = a;
                }
                st.align = da;
            }
            p => {
                let p = p.checked_sub(PAT_RING0).ok_or(CErr::Bad("address pattern"))?;
                let (r, sh) = (usize::from(p / 17), i32::from(p % 17) - 8);
                if r >= RING {
                    return Err(CErr::Bad("address pattern"));
                }
                let ring_k = self.statics[s].ring_k;
                let (ref_l, ref_m) = *self.ring_get(r).ok_or(CErr::Bad("address pattern"))?;
                if ref_m & mask != mask {
                    return Err(CErr::Bad("address pattern"));
                }
                let k = scale_abs(ref_l[l0], sh);
                let base = k.wrapping_add(ring_k);
                let st = &mut self.statics[s];
                let a0 = base.wrapping_add(code_res(
                    c,
                    &mut st.ctx.res0,
                    &mut self.g.res[2],
                    lanes[l0].wrapping_sub(base) as i64,
                )? as u64);
                for l in lanes_of(mask) {
                    let e = ref_l[l].wrapping_sub(ref_l[l0]) as i64;
                    lanes[l] = a0.wrapping_add(scale(e, sh) as u64);
                }
                st.ring_k = a0.wrapping_sub(k);
            }
        }
        Ok(())
    }

    /// GATHER: lanes relative to the static's region, `w` raw bits each.
    fn code_gather<C: Coder>(
        &mut self,
        c: &mut C,
        s: usize,
        mask: u32,
        lanes: &mut [u64; WARP_SIZE],
        tid0: u64,
        ga: Gather,
    ) -> CResult<()> {
        let g = &mut self.g;
        let st = &mut self.statics[s];
        let w = code_tree(c, &mut g.gw, 7, ga.w)?;
        let new_lo = flag(c, &mut g.gflag[0], ga.new_lo)?;
        let align = if flag(c, &mut g.gflag[1], ga.align != st.align)? {
            code_tree(c, &mut g.galign, 5, u32::from(ga.align))? as u8
        } else {
            st.align
        };
        if align > 16 || w > 64 {
            return Err(CErr::Bad("gather code"));
        }
        let lo = if new_lo {
            st.region_lo
                .wrapping_add(code_s(c, &mut g.region, ga.lo.wrapping_sub(st.region_lo) as i64)? as u64)
        } else if st.region_ok {
            st.region_lo
        } else {
            return Err(CErr::Bad("gather region"));
        };
        st.region_lo = lo;
        st.region_ok = true;
        st.align = align;
        // a new region starts a new transpose table (elements beyond
        // 2^TRANS_BITS are not tracked)
        if new_lo {
            if let Some(t) = st.trans.take() {
                self.trans_entries -= t.nodes.len();
                self.trans_tables -= 1;
            }
        }
        let st = &mut self.statics[s];
        st.gw = w;
        if st.trans.is_none() && w <= TRANS_BITS && self.trans_tables < TRANS_TABLES {
            st.trans = Some(Box::new(Trans::new()));
            self.trans_tables += 1;
        }
        let mut got = [0u64; WARP_SIZE];
        for l in lanes_of(mask) {
            let t = tid0.wrapping_add(l as u64);
            let v = lanes[l].wrapping_sub(lo) >> align;
            let st = &mut self.statics[s];
            let (mut n, mut pos) = (0u64, None);
            if let Some(tr) = &st.trans {
                for (i, u) in tr.list(t).take(TRANS_LIST).enumerate() {
                    if C::ENC && pos.is_none() && u == v {
                        pos = Some(i as u64);
                    }
                    n += 1;
                }
            }
            let v = if n > 0 && flag(c, &mut st.ctx.trans, pos.is_some())? {
                let k = code_u(c, &mut self.g.trans_pos, pos.unwrap_or(0))?;
                let tr = st.trans.as_ref().ok_or(CErr::Bad("gather lane"))?;
                tr.list(t).nth(k as usize).ok_or(CErr::Bad("gather lane"))?
            } else {
                code_raw(c, w, v)?
            };
            got[l] = v;
            lanes[l] = lo.wrapping_add(v.wrapping_shl(u32::from(align)));
        }
        if self.statics[s].trans.is_some() {
            if self.trans_entries + WARP_SIZE > TRANS_CAP {
                for t in self.statics.iter_mut().filter_map(|st| st.trans.as_mut()) {
                    t.clear();
                }
                self.trans_entries = 0;
            }
            if let Some(tr) = &mut self.statics[s].trans {
                for l in lanes_of(mask) {
                    if tr.insert(got[l], tid0.wrapping_add(l as u64)) {
                        self.trans_entries += 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// Global id of thread lane 0 of warp `warp_id` of block `b`.
    pub(super) fn tid0(&self, b: [u32; 3], warp_id: u32) -> u64 {
        let [x, y, z] = b.map(u64::from);
        let lin = x.wrapping_add(self.grid[0].wrapping_mul(y.wrapping_add(self.grid[1].wrapping_mul(z))));
        lin.wrapping_mul(self.tpb)
            .wrapping_add(u64::from(warp_id).wrapping_mul(WARP_SIZE as u64))
    }

    /// The block expected after `prev` (x fastest), `[0; 3]` first.
    fn next_block(&self, prev: Option<[u32; 3]>) -> [u32; 3] {
        let Some([x, y, z]) = prev else { return [0; 3] };
        let [gx, gy, _] = self.grid;
        if u64::from(x) + 1 < gx {
            [x + 1, y, z]
        } else if u64::from(y) + 1 < gy {
            [0, y + 1, z]
        } else {
            [0, 0, z.wrapping_add(1)]
        }
    }

    /// Block header: position (predicted) and cluster.
    pub(super) fn code_block_head<C: Coder>(
        &mut self,
        c: &mut C,
        tb: &mut ThreadBlockTrace,
        prev: Option<[u32; 3]>,
    ) -> CResult<()> {
        let p = self.next_block(prev);
        let g = &mut self.g;
        if flag(c, &mut g.block_pred, tb.block == p)? {
            tb.block = p;
        } else {
            for d in tb.block.iter_mut() {
                *d =
                    u32::try_from(code_u(c, &mut g.block, u64::from(*d))?).map_err(|_| CErr::Bad("block"))?;
            }
        }
        let has = flag(c, &mut g.cluster, tb.cluster.is_some())?;
        if has {
            let mut ci = tb.cluster.unwrap_or_default();
            for d in ci
                .id
                .iter_mut()
                .chain(ci.cta.iter_mut())
                .chain(std::iter::once(&mut ci.rank))
            {
                *d = u32::try_from(code_u(c, &mut g.block, u64::from(*d))?)
                    .map_err(|_| CErr::Bad("cluster"))?;
            }
            tb.cluster = Some(ci);
        }
        Ok(())
    }

    /// Warp header: id (predicted: previous + 1) and whether it is empty.
    pub(super) fn code_warp_head<C: Coder>(
        &mut self,
        c: &mut C,
        id: u32,
        prev: Option<u32>,
        empty: bool,
    ) -> CResult<(u32, bool)> {
        let p = prev.map_or(0, |x| x.wrapping_add(1));
        let g = &mut self.g;
        let id = if flag(c, &mut g.warp_next, id == p)? {
            p
        } else {
            u32::try_from(code_u(c, &mut g.block, u64::from(id))?).map_err(|_| CErr::Bad("warp id"))?
        };
        Ok((id, flag(c, &mut g.warp_empty, empty)?))
    }
}
