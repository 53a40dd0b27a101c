//! Fetch and decode: one instruction per cycle per sub-core into the warps' instruction
//! buffers, the L0 I-cache with its stream buffer, and the SM's L1 I-cache arbiter
//! (M25 A6, rules 30–33).

use crate::exec::Executor;
use crate::frontend::LineFill;
use crate::sleep::{ACTED, NEVER};
use crate::sm::Sm;
use crate::state::{wrap, Event, Fetch, IbEntry, Warp, HOT_LIVE, HOT_NO_ROOM};

impl<W> Sm<W> {
    /// Decode → instruction buffer: instructions fetched `fetch_to_issue_stages` cycles
    /// ago become issuable this cycle.
    /// Returns when it could act next (`crate::sleep`).
    pub(crate) fn decode_stage(&mut self, sc: usize, now: u64) -> u64 {
        let mut wake = NEVER;
        while let Some(f) = self.subcores[sc].fetches.front().copied() {
            if f.arrive > now {
                wake = wake.min(f.arrive);
                break;
            }
            wake = ACTED;
            self.subcores[sc].fetches.pop_front();
            let w = &mut self.warps[f.slot];
            if w.used && f.epoch == w.epoch {
                w.inflight_fetch = w.inflight_fetch.saturating_sub(1);
                w.ib.push_back(IbEntry {
                    pc: f.pc,
                    ready: f.arrive,
                });
                if w.ib.len() == 1 {
                    self.sync_head(f.slot);
                }
                self.sync_room(f.slot);
            }
        }
        wake
    }
    /// Returns when it could act next (`crate::sleep`): `ACTED` when it fetched or sent a
    /// request; `NEVER` when no warp has room or the chosen warp's next pc holds no
    /// instruction (it ran past the kernel's code: which warp is chosen and its pc change
    /// only when a warp issues or its room changes).
    pub(crate) fn fetch_stage(&mut self, sc: usize, now: u64) -> u64 {
        if self.fetch_for_a_warp(sc, now) {
            ACTED
        } else {
            NEVER
        }
    }

    /// Whether it did something.
    fn fetch_for_a_warp(&mut self, sc: usize, now: u64) -> bool {
        // Choose the warp to fetch for: the last issued unless its buffer is full,
        // else the youngest warp with room (rule 33).
        let cap = self.cfg.ib_entries;
        let has_room = |slot: usize| {
            let h = self.hot[slot];
            let room = h & HOT_LIVE != 0 && h & HOT_NO_ROOM == 0;
            debug_assert_eq!(room, {
                let w: &Warp = &self.warps[slot];
                w.used
                    && !w.exited
                    && w.fetch_wait_line.is_none()
                    && (w.ib.len() as u32 + w.inflight_fetch) < cap
            });
            room
        };
        // The sub-core's warps with room, as bits of the SM's `room` mask.
        let mut bits = self.room & self.sc_mask[sc];
        if bits == 0 {
            return false;
        }
        let s = &self.subcores[sc];
        debug_assert!(s.warps.iter().all(|&x| has_room(x) == (bits >> x & 1 == 1)));
        let chosen = s.last_issued.filter(|&l| bits >> l & 1 == 1).or_else(|| {
            // The youngest of them (ages are unique).
            let mut best: Option<(u64, usize)> = None;
            while bits != 0 {
                let x = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let age = self.iss[x].age;
                if best.is_none_or(|(a, _)| age > a) {
                    best = Some((age, x));
                }
            }
            best.map(|(_, x)| x)
        });
        let Some(slot) = chosen else {
            return false;
        };
        let pc = self.warps[slot].fetch_pc;
        if self.index_of(pc).is_none() {
            return false;
        }
        // What follows queues a fetch or I-cache requests.
        self.sc_busy[sc] = true;
        let addr = self.code_base + pc;
        let line = self.subcores[sc].l0i.line_of(addr);
        let hit = self.cfg.perfect_icache || self.subcores[sc].l0i.probe(line);
        if !hit {
            // Stream buffer: a ready line moves into the L0.
            let s = &mut self.subcores[sc];
            match s.sbuf.find(line) {
                Some(p) if s.sbuf.lines[p].ready <= now => {
                    for _ in 0..=p {
                        s.sbuf.lines.pop_front();
                    }
                    s.l0i.fill(line);
                    self.stats.stream_buffer_hits += 1;
                    // Keep the buffer streaming ahead.
                    let last = s.sbuf.lines.back().map_or(line, |l| l.line);
                    for k in 1..=(p as u64 + 1) {
                        if s.sbuf.lines.len() < s.sbuf.entries {
                            s.sbuf.lines.push_back(LineFill::waiting(last + k));
                            s.l1_queue.push_back(last + k);
                        }
                    }
                    self.sync_l1i_queued(sc);
                    self.warps[slot].fetch_wait_line = Some(line);
                    self.sync_room(slot);
                    self.schedule(now + 1, Event::ILine { sc, line });
                    return true;
                }
                Some(_) => {
                    // The prefetch of the line is in flight: wait for it.
                    self.stats.l0i_hit_reserved += 1;
                    self.warps[slot].fetch_wait_line = Some(line);
                    self.sync_room(slot);
                    return true;
                }
                None => {
                    if s.demand.iter().any(|d| d.line == line) {
                        // Another warp's miss of this line is in flight: wait for it.
                        self.stats.l0i_hit_reserved += 1;
                    } else {
                        self.stats.l0i_misses += 1;
                        s.demand.push(LineFill::waiting(line));
                        s.l1_queue.push_front(line);
                        // Restart the stream buffer after the missing line.
                        s.sbuf.lines.clear();
                        // (Prefetches not sent yet are dropped; demand misses of other
                        // warps that wait for the arbiter stay queued.)
                        let demand = &s.demand;
                        s.l1_queue
                            .retain(|&l| demand.iter().any(|d| *d == LineFill::waiting(l)));
                        for k in 1..=s.sbuf.entries as u64 {
                            s.sbuf.lines.push_back(LineFill::waiting(line + k));
                            s.l1_queue.push_back(line + k);
                        }
                        self.sync_l1i_queued(sc);
                    }
                    self.warps[slot].fetch_wait_line = Some(line);
                    self.sync_room(slot);
                    return true;
                }
            }
        }
        self.stats.l0i_hits += 1;
        let stages = self.cfg.fetch_to_issue_stages as u64;
        let w = &mut self.warps[slot];
        w.inflight_fetch += 1;
        w.fetch_pc = pc + sassim_isa::INSTRUCTION_BYTES;
        let f = Fetch {
            slot,
            pc,
            epoch: w.epoch,
            arrive: now + stages,
        };
        self.subcores[sc].fetches.push_back(f);
        self.sync_room(slot);
        true
    }
    /// Keeps bit `sc` of `Sm::l1i_queued` equal to "sub-core `sc`'s L1 I-cache queue holds a
    /// request"; called wherever that queue changes.
    #[inline]
    pub(crate) fn sync_l1i_queued(&mut self, sc: usize) {
        if self.subcores[sc].l1_queue.is_empty() {
            self.l1i_queued &= !(1 << sc);
        } else {
            self.l1i_queued |= 1 << sc;
        }
    }
    pub(crate) fn l1i_arbiter(&mut self, now: u64) {
        // Idle sub-cores have no I-cache request.
        if !self.sc_busy.contains(&true) {
            return;
        }
        debug_assert!(
            (0..self.subcores.len())
                .all(|sc| (self.l1i_queued >> sc & 1 == 1) != self.subcores[sc].l1_queue.is_empty()),
            "l1i_queued mirrors the sub-cores' L1 I-cache queues"
        );
        if self.l1i_queued == 0 {
            return;
        }
        let n = self.subcores.len();
        let mut granted = 0;
        for k in 0..n {
            if granted >= self.cfg.l1i_requests_per_cycle {
                break;
            }
            // (l1i_rr + k) mod n, without a division: l1i_rr < n.
            let sc = wrap(self.l1i_rr + k, n);
            // An idle sub-core has no I-cache request; a sub-core whose queue is empty is
            // not read.
            if !self.sc_busy[sc] || self.l1i_queued >> sc & 1 == 0 {
                continue;
            }
            let Some(line) = self.subcores[sc].l1_queue.pop_front() else {
                continue;
            };
            self.sync_l1i_queued(sc);
            self.touch_sc(sc);
            granted += 1;
            self.stats.l1i_requests += 1;
            let reply = self.cfg.l1i_reply_latency as u64;
            let request = (self.cfg.l1i_latency as u64).saturating_sub(reply);
            let ready = self.l1ic_lookup(now + request, line) + reply;
            let s = &mut self.subcores[sc];
            for d in s.demand.iter_mut().filter(|d| d.line == line) {
                d.ready = ready;
            }
            self.schedule(ready, Event::ILine { sc, line });
            self.l1i_rr = wrap(sc + 1, n);
        }
    }
    /// The SM's shared L1 instruction/constant cache: a request for `line` (an instruction
    /// line, or a constant line with `CONST_LINE_TAG`) reaches it at cycle `at`; returns the
    /// cycle its data is there. A hit has it at once; a miss fetches it from L2 (the L2
    /// latency of `l1i_miss_latency`); a line still being fetched for an earlier miss is not
    /// a hit: the request waits for the fill (Accel-Sim's HIT_RESERVED).
    pub(crate) fn l1ic_lookup(&mut self, at: u64, line: u64) -> u64 {
        let is_const = line & crate::state::CONST_LINE_TAG != 0;
        self.l1i_inflight.retain(|f| f.ready > at);
        if let Some(&LineFill { ready: fill, .. }) = self.l1i_inflight.iter().find(|f| f.line == line) {
            if is_const {
                self.stats.l1c_hit_reserved += 1;
            } else {
                self.stats.l1i_hit_reserved += 1;
            }
            self.l1i.probe(line);
            return fill;
        }
        if self.l1i.probe(line) {
            if is_const {
                self.stats.l1c_hits += 1;
            } else {
                self.stats.l1i_hits += 1;
            }
            return at;
        }
        if is_const {
            self.stats.l1c_misses += 1;
        } else {
            self.stats.l1i_misses += 1;
        }
        // The tag is reserved now; the data arrives after the L2 round trip.
        self.l1i.fill(line);
        let fill = at + self.cfg.l1i_miss_latency.saturating_sub(self.cfg.l1i_latency) as u64;
        self.l1i_inflight.push(LineFill { line, ready: fill });
        fill
    }

    /// Flush the instruction buffer when the engine's next PC is not what was fetched.
    pub(crate) fn redirect_if_needed<E: Executor<Writes = W>>(&mut self, ex: &E, slot: usize) {
        let w = &self.warps[slot];
        if !w.used || w.exited {
            return;
        }
        let Some(next) = ex.next_pc(w.exec_id) else {
            return;
        };
        let sc = w.subcore;
        let head = w.stream_head(&self.subcores[sc].fetches, slot);
        if head != next {
            let w = &mut self.warps[slot];
            w.ib.clear();
            w.epoch = w.epoch.wrapping_add(1);
            self.sync_head(slot);
            let w = &mut self.warps[slot];
            w.inflight_fetch = 0;
            w.fetch_pc = next;
            w.fetch_wait_line = None;
            self.hot[slot] &= !(crate::state::HOT_DEP_WAIT | crate::state::HOT_SB_CLEAR);
            self.sync_masks(slot);
            self.sync_room(slot);
            self.stats.ib_flushes += 1;
        }
    }
}
