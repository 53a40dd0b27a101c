//! The prediction model the encoder and the decoder keep identical: static instructions,
//! successors, mask history, address references and their contexts, and lane helpers.

use std::collections::HashMap;

use cabac::vp8::VP8Context as Ctx;

use super::primitives::IntCtx;
use super::{NONE, RING, TRANS_BITS};
use crate::header::KernelHeader;
use crate::record::{flags, Reg, MAX_DST, MAX_SRC, WARP_SIZE};

#[inline]
pub(super) fn lanes_of(mask: u32) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

/// The address mode the Accel-Sim tracer picks when it compresses
/// addresses: base+stride (1) for no lane or one contiguous run of two or
/// more lanes with a constant 32-bit stride, else base+delta (2).
pub(super) fn tracer_mode(mask: u32, lanes: &[u64; WARP_SIZE]) -> u8 {
    if mask == 0 {
        return 1;
    }
    let run = mask >> mask.trailing_zeros();
    if mask.count_ones() < 2 || run & run.wrapping_add(1) != 0 {
        return 2;
    }
    let l0 = mask.trailing_zeros() as usize;
    let d = lanes[l0 + 1].wrapping_sub(lanes[l0]) as i64;
    let ok = i32::try_from(d).is_ok()
        && lanes_of(mask)
            .skip(1)
            .all(|l| lanes[l].wrapping_sub(lanes[l - 1]) as i64 == d);
    if ok {
        1
    } else {
        2
    }
}

pub(super) fn scale(e: i64, s: i32) -> i64 {
    if s >= 0 {
        e.wrapping_shl(s as u32)
    } else {
        e >> (-s) as u32
    }
}

pub(super) fn scale_abs(a: u64, s: i32) -> u64 {
    if s >= 0 {
        a.wrapping_shl(s as u32)
    } else {
        a >> (-s) as u32
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct StaticKey {
    pub(super) pc: u32,
    pub(super) line: u32,
    pub(super) op: u32,
    pub(super) imm: [i64; 2],
    pub(super) n_dst: u8,
    pub(super) n_src: u8,
    pub(super) dst: [Reg; MAX_DST],
    pub(super) src: [Reg; MAX_SRC],
    pub(super) mem_width: u8,
    pub(super) flags: u8,
}

pub(super) const STATIC_FLAGS: u8 = flags::GMMA_COMMIT | flags::HAS_GMMA_FIELD;
pub(super) const ALIGN_UNSET: u8 = 0xff;

/// Adaptive contexts owned by one static instruction (or by the warp
/// start, for the first instruction of a warp).
#[derive(Clone, Default)]
pub(super) struct SCtx {
    /// successor: predicted, alternate
    pub(super) succ: Ctx,
    pub(super) alt: Ctx,
    /// last instruction of its warp
    pub(super) end: Ctx,
    /// mask chain flags, in coding order: [0] = previous, [1] = last,
    /// [6] = the mask before the previous one, [2] all, [3] none,
    /// [4] subset, [5] of the last (else of the previous)
    pub(super) m: [Ctx; 7],
    /// subset lane bits, by (reference, lane set in the other reference)
    pub(super) lane: [Ctx; 4],
    pub(super) mode: Ctx,
    pub(super) vals: Ctx,
    pub(super) pat: Ctx,
    pub(super) res0: Ctx,
    pub(super) stride: Ctx,
    /// a single lane sent as raw bits in the gather region
    pub(super) region1: Ctx,
    /// gather lane found in the transpose table
    pub(super) trans: Ctx,
}

pub(super) struct Static {
    pub(super) key: StaticKey,
    succ: u32,
    alt: u32,
    pub(super) last_mask: u32,
    pub(super) last_mode: u8,
    pub(super) last_pat: u8,
    /// First-lane address of the last execution.
    last_base: u64,
    /// Last first-lane step, and the confirmed (seen twice in a row) step.
    last_delta: u64,
    stride: u64,
    /// Lane stride of the last AFFINE / STRIDE pattern.
    pub(super) lane_stride: u64,
    /// First-lane address minus the scaled ring reference, last time.
    pub(super) ring_k: u64,
    /// Gather region origin and alignment.
    pub(super) region_lo: u64,
    pub(super) region_ok: bool,
    pub(super) align: u8,
    /// lane width of the last GATHER
    pub(super) gw: u32,
    pub(super) trans: Option<Box<Trans>>,
    pub(super) last_valid: u32,
    pub(super) last: [u64; WARP_SIZE],
    pub(super) ctx: SCtx,
}

/// Transpose table of one gather instruction: for each element `e` of its
/// region, the threads whose lane read `e`, most recent first. A thread
/// `t` whose lane reads element `u` where thread `u` read element `t` (an
/// undirected graph's reverse edge, a symmetric matrix's transposed entry)
/// finds `u` in the list of element `t`.
pub(super) struct Trans {
    /// element → first node
    heads: Vec<u32>,
    /// (thread, next node)
    pub(super) nodes: Vec<(u64, u32)>,
}

impl Trans {
    pub(super) fn new() -> Self {
        Trans {
            heads: vec![NONE; 1 << TRANS_BITS],
            nodes: Vec::new(),
        }
    }

    /// Record that thread `t` read element `e`; false when `e` is outside the table.
    pub(super) fn insert(&mut self, e: u64, t: u64) -> bool {
        let Some(h) = self.heads.get_mut(e as usize) else {
            return false;
        };
        self.nodes.push((t, *h));
        *h = (self.nodes.len() - 1) as u32;
        true
    }

    pub(super) fn list(&self, e: u64) -> impl Iterator<Item = u64> + '_ {
        let mut p = self.heads.get(e as usize).copied().unwrap_or(NONE);
        std::iter::from_fn(move || {
            let (t, next) = *self.nodes.get(p as usize)?;
            p = next;
            Some(t)
        })
    }

    pub(super) fn clear(&mut self) {
        self.heads.fill(NONE);
        // release the memory too: the budget counts all tables together
        self.nodes = Vec::new();
    }
}

/// Contexts not tied to a static instruction.
#[derive(Clone)]
pub(super) struct GCtx {
    pub(super) more_blocks: Ctx,
    pub(super) block_pred: Ctx,
    pub(super) cluster: Ctx,
    pub(super) more_warps: Ctx,
    pub(super) warp_next: Ctx,
    pub(super) warp_empty: Ctx,
    pub(super) sid_new: Ctx,
    pub(super) sid: IntCtx,
    pub(super) pc: IntCtx,
    pub(super) line: IntCtx,
    pub(super) op: IntCtx,
    pub(super) name_len: IntCtx,
    pub(super) imm: IntCtx,
    pub(super) nn: [Ctx; 256],
    pub(super) reg_kind: [Ctx; 4],
    pub(super) reg_num: [Ctx; 256],
    pub(super) mem_width: IntCtx,
    pub(super) sflags: [Ctx; 256],
    pub(super) mode: [Ctx; 4],
    pub(super) hist_sel: [Ctx; 256],
    pub(super) hist_lane: [Ctx; 2],
    pub(super) raw_lane: [Ctx; 32],
    pub(super) pat: [Ctx; 256],
    pub(super) res: [IntCtx; 4],
    pub(super) stride: IntCtx,
    pub(super) gw: [Ctx; 128],
    pub(super) galign: [Ctx; 32],
    pub(super) gflag: [Ctx; 2],
    pub(super) region: IntCtx,
    pub(super) trans_pos: IntCtx,
    pub(super) val_n: IntCtx,
    pub(super) val: IntCtx,
    pub(super) block: IntCtx,
    pub(super) total: IntCtx,
}

impl Default for GCtx {
    fn default() -> Self {
        let c = Ctx::default();
        let i = IntCtx::default();
        GCtx {
            more_blocks: c,
            block_pred: c,
            cluster: c,
            more_warps: c,
            warp_next: c,
            warp_empty: c,
            sid_new: c,
            sid: i.clone(),
            pc: i.clone(),
            line: i.clone(),
            op: i.clone(),
            name_len: i.clone(),
            imm: i.clone(),
            nn: [c; 256],
            reg_kind: [c; 4],
            reg_num: [c; 256],
            mem_width: i.clone(),
            sflags: [c; 256],
            mode: [c; 4],
            hist_sel: [c; 256],
            hist_lane: [c; 2],
            raw_lane: [c; 32],
            pat: [c; 256],
            res: [i.clone(), i.clone(), i.clone(), i.clone()],
            stride: i.clone(),
            gw: [c; 128],
            galign: [c; 32],
            gflag: [c; 2],
            region: i.clone(),
            trans_pos: i.clone(),
            val_n: i.clone(),
            val: i.clone(),
            block: i.clone(),
            total: i,
        }
    }
}

/// Everything the encoder and the decoder keep identical.
pub(super) struct Model {
    pub(super) statics: Vec<Static>,
    pub(super) map: HashMap<StaticKey, u32>,
    /// Successor prediction for the first instruction of a warp.
    start_succ: u32,
    start_alt: u32,
    start_ctx: SCtx,
    ring: Vec<([u64; WARP_SIZE], u32)>,
    ring_head: usize,
    pub(super) hist: MaskHist,
    pub(super) g: Box<GCtx>,
    /// opcode names in order of first use (file opcode ids)
    pub(super) n_ops: u32,
    /// pc of the last static definition
    pub(super) last_def_pc: u32,
    /// entries of all transpose tables, and the number of tables
    pub(super) trans_entries: usize,
    pub(super) trans_tables: usize,
    /// grid dimensions and threads per block: block order, thread ids
    pub(super) grid: [u64; 3],
    pub(super) tpb: u64,
}

impl Model {
    pub(super) fn new(h: &KernelHeader) -> Self {
        let d = |v: u32| u64::from(v.max(1));
        Model {
            statics: Vec::new(),
            map: HashMap::new(),
            start_succ: NONE,
            start_alt: NONE,
            start_ctx: SCtx::default(),
            ring: Vec::new(),
            ring_head: 0,
            hist: MaskHist::default(),
            g: Box::default(),
            n_ops: 0,
            last_def_pc: 0,
            trans_entries: 0,
            trans_tables: 0,
            grid: [d(h.grid[0]), d(h.grid[1]), d(h.grid[2])],
            tpb: d(h.block[0]) * d(h.block[1]) * d(h.block[2]),
        }
    }

    /// Predicted address of lane `l0`: the lane-0 origin of the last
    /// execution, plus the confirmed step, plus `l0` lane strides.
    pub(super) fn pred(&self, s: usize, l0: usize) -> u64 {
        let st = &self.statics[s];
        st.last_base
            .wrapping_add(st.stride)
            .wrapping_add(st.lane_stride.wrapping_mul(l0 as u64))
    }

    /// Address of lane `l0` predicted from the static's last ring reference.
    pub(super) fn ring_pred(&self, s: usize, l0: usize) -> Option<u64> {
        let st = &self.statics[s];
        let p = st.last_pat.checked_sub(PAT_RING0)?;
        let (r, sh) = (usize::from(p / 17), i32::from(p % 17) - 8);
        let (ref_l, ref_m) = self.ring_get(r)?;
        if ref_m >> l0 & 1 == 0 {
            return None;
        }
        Some(scale_abs(ref_l[l0], sh).wrapping_add(st.ring_k))
    }

    pub(super) fn add_static(&mut self, key: StaticKey) -> u32 {
        let id = self.statics.len() as u32;
        self.statics.push(Static {
            key,
            succ: NONE,
            alt: NONE,
            last_mask: u32::MAX,
            last_mode: 0,
            last_pat: 0,
            last_base: 0,
            last_delta: 0,
            stride: 0,
            lane_stride: 0,
            ring_k: 0,
            region_lo: 0,
            region_ok: false,
            align: ALIGN_UNSET,
            gw: 0,
            trans: None,
            last_valid: 0,
            last: [0; WARP_SIZE],
            ctx: SCtx::default(),
        });
        self.map.insert(key, id);
        id
    }

    /// (predicted, alternate) successor of `prev` (`NONE` = warp start).
    pub(super) fn succ_of(&self, prev: u32) -> (u32, u32) {
        if prev == NONE {
            (self.start_succ, self.start_alt)
        } else {
            let s = &self.statics[prev as usize];
            (s.succ, s.alt)
        }
    }

    pub(super) fn set_succ(&mut self, prev: u32, cur: u32) {
        let (s, a) = if prev == NONE {
            (&mut self.start_succ, &mut self.start_alt)
        } else {
            let st = &mut self.statics[prev as usize];
            (&mut st.succ, &mut st.alt)
        };
        if *s != cur {
            *a = *s;
            *s = cur;
        }
    }

    pub(super) fn prev_ctx(&mut self, prev: u32) -> &mut SCtx {
        if prev == NONE {
            &mut self.start_ctx
        } else {
            &mut self.statics[prev as usize].ctx
        }
    }

    /// Record a memory instruction's lane addresses.
    pub(super) fn update_mem(&mut self, sid: u32, mask: u32, lanes: &[u64; WARP_SIZE]) {
        let st = &mut self.statics[sid as usize];
        if mask != 0 {
            let l0 = mask.trailing_zeros() as usize;
            let a0 = lanes[l0].wrapping_sub(st.lane_stride.wrapping_mul(l0 as u64));
            let d = a0.wrapping_sub(st.last_base);
            if d == st.last_delta {
                st.stride = d;
            }
            st.last_delta = d;
            st.last_base = a0;
        }
        st.last = *lanes;
        st.last_valid = mask;
        if mask != 0 {
            if self.ring.len() < RING {
                self.ring.push((*lanes, mask));
                self.ring_head = self.ring.len() % RING;
            } else {
                self.ring[self.ring_head] = (*lanes, mask);
                self.ring_head = (self.ring_head + 1) % RING;
            }
        }
    }

    /// Ring entry `r` (0 = most recent).
    pub(super) fn ring_get(&self, r: usize) -> Option<&([u64; WARP_SIZE], u32)> {
        if r >= self.ring.len() {
            return None;
        }
        let n = self.ring.len();
        let head = if n < RING { n } else { self.ring_head };
        Some(&self.ring[(head + n - 1 - r) % n])
    }

    /// First ring entry whose lane offsets, scaled by a power of two, give
    /// these offsets (pattern code minus `PAT_RING0`).
    pub(super) fn find_ring(&self, mask: u32, lanes: &[u64; 32]) -> Option<u8> {
        let l0 = mask.trailing_zeros() as usize;
        let rel = |l: usize| lanes[l].wrapping_sub(lanes[l0]) as i64;
        for r in 0..RING {
            let (ref_l, ref_m) = self.ring_get(r)?;
            if ref_m & mask != mask {
                continue;
            }
            let e = |l: usize| ref_l[l].wrapping_sub(ref_l[l0]) as i64;
            let mut shift: Option<i32> = None;
            let mut ok = true;
            for l in lanes_of(mask) {
                let (d, ev) = (rel(l), e(l));
                if d == 0 && ev == 0 {
                    continue;
                }
                if d == 0 || ev == 0 {
                    ok = false;
                    break;
                }
                shift = Some(d.trailing_zeros() as i32 - ev.trailing_zeros() as i32);
                break;
            }
            if !ok {
                continue;
            }
            let sh = shift.unwrap_or(0);
            if !(-8..=8).contains(&sh) {
                continue;
            }
            if lanes_of(mask).all(|l| scale(e(l), sh) == rel(l)) {
                return Some((r as u8) * 17 + (sh + 8) as u8);
            }
        }
        None
    }
}

/// Address pattern codes.
pub(super) const PAT_STATIC: u8 = 0;
pub(super) const PAT_STRIDE: u8 = 1;
pub(super) const PAT_GATHER: u8 = 2;
pub(super) const PAT_GDELTA: u8 = 3;
pub(super) const PAT_AFFINE: u8 = 4;
pub(super) const PAT_RING0: u8 = 8; // + r*17 + (shift+8)

/// Per-warp history of recent distinct masks (most recent first).
#[derive(Default)]
pub(super) struct MaskHist {
    pub(super) h: [u32; 8],
    pub(super) n: usize,
}

impl MaskHist {
    pub(super) fn reset(&mut self) {
        self.n = 0;
    }

    pub(super) fn push(&mut self, m: u32) {
        let pos = self.h[..self.n].iter().position(|&x| x == m);
        let end = match pos {
            Some(p) => p,
            None => {
                if self.n < 8 {
                    self.n += 1;
                }
                self.n - 1
            }
        };
        self.h.copy_within(0..end, 1);
        self.h[0] = m;
    }

    /// Selector `op<<6 | i<<3 | j`: op 0 `h[i] & !h[j]`, 1 `h[i] ^ h[j]`,
    /// 2 `h[i] | h[j]`.
    pub(super) fn op(&self, sel: u32) -> Option<u32> {
        let (op, i, j) = (sel >> 6, (sel >> 3 & 7) as usize, (sel & 7) as usize);
        if i >= self.n || j >= self.n {
            return None;
        }
        let (a, b) = (self.h[i], self.h[j]);
        Some(match op {
            0 => a & !b,
            1 => a ^ b,
            2 => a | b,
            _ => return None,
        })
    }
}
