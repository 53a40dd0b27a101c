//! The sub-core memory unit (queue, address calculation) and the SM-shared arbiter into
//! the data memories (M25 A9, Table 2, rules 34–43; docs/model.md).

use crate::inst::{ConstAddr, MemKind, MemSpace};
use crate::mem::{Access, MemReq, RetryToken};
use crate::sleep::{ACTED, NEVER};
use crate::sm::Sm;
use crate::state::{wrap, Event};

impl<W> Sm<W> {
    /// Returns when it could act next (`crate::sleep`).
    pub(crate) fn mem_addr_stage(&mut self, sc: usize, now: u64) -> u64 {
        let idx = {
            let s = &self.subcores[sc];
            if s.addr_waiting == 0 {
                return NEVER;
            }
            if now < s.addr_free {
                return s.addr_free;
            }
            debug_assert_eq!(
                s.addr_waiting as usize,
                s.mem_q.iter().filter(|e| e.arb_ready.is_none()).count()
            );
            match s.mem_q.iter().position(|e| e.arb_ready.is_none()) {
                Some(i) if s.mem_q[i].arrive <= now => i,
                Some(i) => return s.mem_q[i].arrive,
                None => return NEVER,
            }
        };
        let mp = self.cfg.mem.clone();
        let sidx = self.subcores[sc].mem_q[idx].st.sidx;
        let slot = self.subcores[sc].mem_q[idx].st.slot;
        let m = self.code[sidx].mem.unwrap_or(crate::inst::MemOp {
            space: MemSpace::Global,
            kind: MemKind::Load,
            bits: 32,
            uniform_addr: true,
            indexed_const: false,
        });
        // Cycles from arrival in the queue (two cycles after issue) to the sources
        // being read (WAR release) and to the request being ready for the arbiter.
        let base = mp.src_release_base.saturating_sub(2) as u64;
        let bits = (m.bits * self.cfg.warp_size) as u64;
        let link = |b: u64| b.div_ceil(mp.store_link_bits_per_cycle.max(1) as u64);
        let regular_extra = if m.uniform_addr {
            0
        } else {
            mp.global_addr_calc_regular_extra as u64
        };
        let coalesce = if m.uniform_addr {
            0
        } else {
            mp.regular_addr_coalesce_extra as u64
        };
        // Stores: the data crosses the link, its first cycle overlapping the address read
        // (`link − 1`); a per-thread address register adds its own 32-bit transfer. Fits
        // Table 2 exactly: STS 10/12/16 (uniform) and 12/14/18 (regular), STG 10/12/16
        // and 14/16/20 (docs/memory.md).
        let store_src = |extra: u64| {
            let addr_link = if m.uniform_addr {
                0
            } else {
                link(self.cfg.warp_size as u64 * 32)
            };
            base + extra + link(bits).saturating_sub(1) + addr_link
        };
        let (src, arb) = match (m.space, m.kind) {
            (MemSpace::Const, _) if m.indexed_const => (base, base + mp.ldc_indexed_extra as u64),
            (MemSpace::Const, _) => (base + mp.ldc_imm_war_extra as u64, base),
            (MemSpace::Shared, MemKind::Store | MemKind::Atomic) => {
                (store_src(0), base + link(bits) + coalesce)
            }
            (MemSpace::Shared, _) => (base, base + coalesce),
            (_, MemKind::Store | MemKind::Atomic) => {
                let s = base + regular_extra + link(bits);
                (store_src(regular_extra), s + coalesce)
            }
            // LDGSTS also reads the shared-memory address through the link.
            (_, MemKind::Ldgsts) => {
                let s = base + regular_extra + link(self.cfg.warp_size as u64 * 32);
                (s, s + coalesce)
            }
            _ => (base + regular_extra, base + regular_extra + coalesce),
        };
        let src_done = now + src;
        let s = &mut self.subcores[sc];
        s.mem_q[idx].arb_ready = Some(now + arb);
        s.addr_waiting -= 1;
        s.addr_free = now
            + if m.uniform_addr {
                mp.addr_calc_interval_uniform
            } else {
                mp.addr_calc_interval
            } as u64;
        // A register-indexed LDC releases its sources only at write-back (Table 2: WAR 29).
        if !m.indexed_const {
            self.schedule(src_done, Event::ReadDone { slot, sidx });
        }
        ACTED
    }
    pub(crate) fn mem_arbiter(&mut self, now: u64) {
        if now < self.arb_free {
            return;
        }
        // Idle sub-cores have empty memory queues.
        if !self.sc_busy.contains(&true) {
            return;
        }
        let n = self.subcores.len();
        for k in 0..n {
            // (arb_rr + k) mod n, without a division: arb_rr < n.
            let sc = wrap(self.arb_rr + k, n);
            // An idle sub-core's memory queue is empty.
            if !self.sc_busy[sc] {
                continue;
            }
            // A front the memory rejected again: asked about with its token alone.
            let front = self.arb_front[sc];
            if front.live {
                #[cfg(debug_assertions)]
                self.check_front_rejection(sc, front, now);
                if self.mem.rejected_again_token(front.token) {
                    continue;
                }
                self.arb_front[sc].live = false;
            }
            let ready = self.subcores[sc]
                .mem_q
                .front()
                .is_some_and(|e| e.arb_ready.is_some_and(|r| r <= now));
            if !ready {
                continue;
            }
            let Some(e) = self.subcores[sc].mem_q.front() else {
                continue;
            };
            let st = e.st;
            let m = match self.code[st.sidx].mem {
                Some(m) => m,
                None => continue,
            };
            // A global or local access rejected before is, most cycles, rejected again: the
            // memory says so (and counts it) before any request is built.
            if m.space != MemSpace::Const {
                let rec = self.slab[st.writes].mem.as_ref();
                if let Some(token) = rec.and_then(|a| self.mem.rejected_again(a, st.slot as u32, m.kind)) {
                    self.arb_front[sc] = FrontRejection {
                        token,
                        writes: st.writes,
                        live: true,
                    };
                    continue;
                }
            }
            // LDC: the static address, else the first active lane's (bank 0).
            let const_addr = self.code[st.sidx]
                .ldc_const
                .map(|ConstAddr { bank, offset }| ((bank as u64) << 32) | (offset & 0xffff_ffff))
                .or_else(|| {
                    let a = self.slab[st.writes]
                        .mem
                        .as_ref()
                        .filter(|a| a.space == MemSpace::Const)?;
                    (a.active != 0).then(|| a.addrs[a.active.trailing_zeros() as usize] & 0xffff_ffff)
                });
            // An LDC that misses the L0 VL cache fetches its line from the shared L1
            // instruction/constant cache, which backs both L0 constant caches (a later
            // fixed-latency read of it then hits there); an L1 miss, or a fetch of the line
            // already in flight, adds to the VL miss penalty.
            let mut const_l1_extra = 0;
            if let Some(a) = const_addr.filter(|&a| self.mem.const_line_absent(a)) {
                let line = self.const_l1_line((a >> 32) as u32, a & 0xffff_ffff);
                let reply = self.cfg.l1i_reply_latency as u64;
                let at = now + (self.cfg.l1i_latency as u64).saturating_sub(reply);
                const_l1_extra = self.l1ic_lookup(at, line) - at;
            }
            let id = self.next_mem_id;
            // The request borrows the issued instruction's addresses from its slab record
            // (no copy; the record lives until the write-back commits it).
            debug_assert!(self.slab_live[st.writes], "memory access of a freed record");
            let req = MemReq {
                id,
                space: m.space,
                kind: m.kind,
                bits: m.bits,
                access: self.slab[st.writes].mem.as_ref(),
                warp: st.slot as u32,
                const_addr,
                const_l1_extra,
            };
            match self.mem.access(now, &req) {
                Access::Retry => continue,
                Access::ReadyAt(r) => self.schedule(
                    r,
                    Event::MemDone {
                        slot: st.slot,
                        sidx: st.sidx,
                        writes: st.writes,
                    },
                ),
                Access::Pending => {
                    self.mem_pending.insert(
                        id,
                        crate::state::PendingMem {
                            slot: st.slot,
                            sidx: st.sidx,
                            writes: st.writes,
                        },
                    );
                }
            }
            self.next_mem_id += 1;
            self.touch_sc(sc);
            let s = &mut self.subcores[sc];
            s.mem_q.pop_front();
            self.arb_front[sc].live = false;
            s.mem_occupancy = s.mem_occupancy.saturating_sub(1);
            self.arb_free = now + self.cfg.mem.shared_accept_interval.max(1) as u64;
            self.arb_rr = wrap(sc + 1, n);
            return;
        }
    }
    /// The first cycle at which the memory arbiter may grant a request, as the sub-cores'
    /// memory queues and the memory stand (`u64::MAX`: none is waiting for it; the next
    /// cycle when it must retry in full). A front the memory rejected does not count while
    /// the memory would reject it again: it is rejected, and counted, every cycle from
    /// `arb_free` until the memory changes ([`Sm::count_skipped_retries`]).
    pub(crate) fn arbiter_next(&self) -> u64 {
        let mut next = u64::MAX;
        for sc in 0..self.subcores.len() {
            if !self.sc_busy[sc] {
                continue;
            }
            let front = self.arb_front[sc];
            if front.live {
                if !self.mem.would_reject_token(front.token) {
                    // Its next retry is a full one (a stale token, or the cause is gone).
                    return self.arb_free;
                }
                continue;
            }
            let ready = self.subcores[sc].mem_q.front().and_then(|e| e.arb_ready);
            if let Some(r) = ready {
                next = next.min(r.max(self.arb_free));
            }
        }
        next
    }

    /// Debug builds: whether every rejected front would be rejected again now (what the
    /// retries counted for skipped cycles assume, [`Sm::count_skipped_retries`]).
    #[cfg(debug_assertions)]
    pub fn rejected_fronts_hold(&self) -> bool {
        (0..self.subcores.len()).all(|sc| {
            !self.sc_busy[sc]
                || !self.arb_front[sc].live
                || self.mem.would_reject_token(self.arb_front[sc].token)
        })
    }

    /// Whether a sub-core's memory-queue front is one the memory rejected (retried every
    /// cycle: an SM skipping cycles must tick again once its L1 changes).
    pub fn has_rejected_front(&self) -> bool {
        (0..self.subcores.len()).any(|sc| self.sc_busy[sc] && self.arb_front[sc].live)
    }

    /// The retries of the rejected fronts in the cycles `from..to` the SM skipped, counted
    /// as the arbiter would have made them (each front once a cycle from `arb_free` on, in
    /// the arbiter's order).
    pub(crate) fn count_skipped_retries(&mut self, from: u64, to: u64) {
        let k = to.saturating_sub(from.max(self.arb_free));
        if k == 0 {
            return;
        }
        let n = self.subcores.len();
        for i in 0..n {
            let sc = wrap(self.arb_rr + i, n);
            if self.sc_busy[sc] && self.arb_front[sc].live {
                self.mem.count_rejected_again(self.arb_front[sc].token, k);
            }
        }
    }

    /// Debug check of the arbiter's shortcut: the remembered rejection is of sub-core
    /// `sc`'s ready memory-queue front, and the memory's full check of it gives the same
    /// token and answer as the token alone.
    #[cfg(debug_assertions)]
    fn check_front_rejection(&self, sc: usize, front: FrontRejection, now: u64) {
        let e = self.subcores[sc]
            .mem_q
            .front()
            .expect("remembered rejection of an empty queue");
        assert_eq!(e.st.writes, front.writes, "remembered rejection of another front");
        assert!(
            e.arb_ready.is_some_and(|r| r <= now),
            "remembered rejection of an unready front"
        );
        let m = self.code[e.st.sidx].mem.expect("memory instruction");
        let full = self.slab[e.st.writes]
            .mem
            .as_ref()
            .and_then(|a| self.mem.would_reject_again(a, e.st.slot as u32, m.kind));
        assert!(
            full.is_none_or(|t| t == front.token),
            "the memory's token of a remembered rejection changed"
        );
        assert_eq!(
            full.is_some(),
            self.mem.would_reject_token(front.token),
            "the arbiter's shortcut disagrees with the full check"
        );
    }
    pub(crate) fn finish_mem(&mut self, slot: usize, sidx: usize, writes: usize, ready: u64) {
        let st = &self.code[sidx];
        let m = match st.mem {
            Some(m) => m,
            None => return,
        };
        let mp = &self.cfg.mem;
        let bits = m.bits * self.cfg.warp_size;
        let wb_cycles = match (m.kind, m.space) {
            (MemKind::Store, _) => 0,
            (MemKind::Ldgsts, _) => mp.ldgsts_smem_fill as u64,
            (_, MemSpace::Shared | MemSpace::Const) => {
                (bits.div_ceil(mp.shared_to_rf_bits_per_cycle.max(1))).max(mp.wb_min_cycles) as u64
            }
            _ => (bits.div_ceil(mp.mem_to_rf_bits_per_cycle.max(1))).max(mp.wb_min_cycles) as u64,
        };
        // Results going to the register file share the sub-core's memory write-back latch:
        // whichever structure (L1, shared memory, constant cache) returns, one transfer at a
        // time, in arrival order (M25 §5.4, A9). LDGSTS writes shared memory, not the RF.
        let start = if m.kind == MemKind::Ldgsts || wb_cycles == 0 {
            ready
        } else {
            let sc = self.warps[slot].subcore;
            let s = &mut self.subcores[sc];
            let start = ready.max(s.mem_wb_free);
            s.mem_wb_free = start + wb_cycles;
            start
        };
        self.schedule(start + wb_cycles, Event::Writeback { slot, sidx, writes });
    }
}

/// A sub-core's memory-queue front that the memory found rejected again ([`Sm::arb_front`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FrontRejection {
    token: RetryToken,
    /// The front's slab record (what the debug check compares).
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    writes: usize,
    live: bool,
}

impl FrontRejection {
    pub(crate) const NONE: FrontRejection = FrontRejection {
        token: RetryToken { entry: 0, id: 0 },
        writes: 0,
        live: false,
    };
}
