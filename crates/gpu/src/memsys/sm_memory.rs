//! One SM's data memory as the timing model sees it (`DataMemory`): `sassim-memory`'s L1D and
//! shared memory, the L0 VL constant cache of the shared memory unit (LDC), the TMA's bypass,
//! the retries of accesses the L1 rejected, and the SM's interconnect inbox and outbox.

use super::*;
use sassim_timing::mem::RetryToken;

#[derive(Debug, Clone, Copy)]
pub(super) struct ConstGeom {
    pub(super) sets: u32,
    pub(super) assoc: u32,
    pub(super) line_shift: u32,
    pub(super) miss_penalty: u64,
    pub(super) perfect: bool,
}

/// What [`DataMemory::completed`], called by every SM that ticks in every cycle, needs to
/// know that nothing completed, in the first cache line of [`SmDataMemory`] (the L1's
/// completion heap and the bypass's list are two or three other lines).
#[derive(Debug, Clone, Copy)]
struct DoneHint {
    /// No L1 completion is ready before this cycle (the earliest in the L1's heap; may be
    /// earlier than that, never later).
    l1_from: u64,
    /// The bypass may have completed loads to report.
    bypass: bool,
}

/// One SM's data memory: `sassim-memory`'s L1D + shared memory, and the L0 VL constant
/// cache of the shared memory unit (LDC).
/// `repr(C)`: what every cycle looks at first (the completion hint and the outbox in the
/// first cache line, then the retry entries' records and tickets, which the arbiter's token
/// check reads), then the L1.
#[repr(C)]
pub struct SmDataMemory {
    done_hint: DoneHint,
    /// Requests the L1 sent this cycle ([`after_tick`]), injected in SM order after the
    /// SMs ticked; `room`: how many the SM's interconnect input queue accepts.
    pub(super) outbox: Vec<mm::L2Request>,
    pub(super) room: usize,
    /// Accesses rejected by the L1 and not accepted since (a sub-core retries its head
    /// access every cycle): their records and L1 tickets (a retry skips building the
    /// request), two cache lines after the completion hint's; the rest of each entry's key
    /// is in `retry_keys`.
    retry_ids: RetryIds,
    pub l1: mm::SmMemory,
    lat: HitLatencies,
    consts: ConstGeom,
    /// L0 VL ways (sets × assoc): tag, LRU stamp, and the cycle the line's data is there
    /// (later than now while its fetch is in flight).
    ctags: Vec<ConstWay>,
    cstamp: u64,
    pub const_hits: u64,
    pub const_misses: u64,
    pub const_hit_reserved: u64,
    l1_latency: u64,
    sh_latency: u64,
    /// Bytes one L1 line holds, and one shared-memory wavefront (banks × bank width): a
    /// perfectly coalesced warp access of `b` bytes a lane takes `32·b` / that many data
    /// cycles (`outcome`).
    l1_line_bytes: u64,
    sh_row_bytes: u64,
    local_base: u64,
    local_bytes_per_thread: u64,
    threads_per_sm: u64,
    dsm_extra: u64,
    /// L2 responses that arrived at the end of cycle `inbox_cycle`, filled into the L1 at
    /// the start of the SM's next tick ([`before_tick`]; the SMs tick in parallel).
    pub(super) inbox: Vec<mm::L2Response>,
    pub(super) inbox_cycle: u64,
    /// The rest of each retry entry's key ([`Retry`]).
    retry_keys: [RetryKey; RETRY_ENTRIES],
    retry_next: usize,
    /// The TMA's loads, which do not go through the L1.
    pub(super) bypass: L1Bypass,
}

// The completion hint and the outbox share the first cache line; the retry ids the next two.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::offset_of!(SmDataMemory, retry_ids) == 64);

/// The L1's kind of an access.
#[inline]
fn mem_kind(k: MemKind) -> mm::AccessKind {
    match k {
        MemKind::Load | MemKind::Ldgsts => mm::AccessKind::Load,
        MemKind::Store => mm::AccessKind::Store,
        MemKind::Atomic => mm::AccessKind::Atomic,
    }
}

/// The L1's space of an access (a constant access never reaches the L1).
#[inline]
fn l1_space(s: MemSpace) -> mm::MemSpace {
    match s {
        MemSpace::Shared => mm::MemSpace::Shared,
        MemSpace::Local => mm::MemSpace::Local,
        _ => mm::MemSpace::Global,
    }
}

/// Rejected accesses remembered per SM (one per sub-core is the common case).
const RETRY_ENTRIES: usize = 8;

/// A rejected access: the address of the SM's access record it was read from (the record
/// lives, unchanged, until the access is accepted) and a few of its fields as a check. Kept
/// in two parts: the record's address with the L1 ticket ([`RetryId`]) and the rest
/// ([`RetryKey`]).
#[derive(Debug, Clone, Copy)]
struct Retry {
    rec: u64,
    key: RetryKey,
}

/// The fields of a rejected access besides its record's address ([`Retry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RetryKey {
    active: u32,
    warp: u32,
    first: u64,
    kind: MemKind,
}

impl RetryKey {
    const NONE: RetryKey = RetryKey {
        active: 0,
        warp: 0,
        first: 0,
        kind: MemKind::Load,
    };
}

/// A retry entry's record address (`0`: free; the token's id) and its access's L1 ticket.
#[derive(Debug, Clone, Copy)]
struct RetryId {
    rec: u64,
    ticket: mm::Ticket,
}

impl RetryId {
    const NONE: RetryId = RetryId {
        rec: 0,
        ticket: mm::Ticket::NONE,
    };
}

/// The retry entries' [`RetryId`]s, on cache lines of their own.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct RetryIds([RetryId; RETRY_ENTRIES]);

impl Retry {
    fn of(a: &MemAccess, req: &MemReq) -> Retry {
        Retry::key(a, req.warp, req.kind)
    }

    fn key(a: &MemAccess, warp: u32, kind: MemKind) -> Retry {
        Retry {
            rec: a as *const MemAccess as usize as u64,
            key: RetryKey {
                active: a.active,
                warp,
                first: a.addrs[(a.active.trailing_zeros() & 31) as usize],
                kind,
            },
        }
    }

    /// The arbiter's token of this access in entry `i` ([`DataMemory::rejected_again_token`]).
    fn token(&self, i: usize) -> RetryToken {
        RetryToken {
            entry: i as u32,
            id: self.rec,
        }
    }
}

impl SmDataMemory {
    pub(super) fn new(h: &Hierarchy, sm: usize) -> Self {
        let n = (h.consts.sets * h.consts.assoc) as usize;
        // Local memory: one region per SM, words of the threads interleaved
        // (GPGPU-Sim's local address translation) so a warp's same-offset access coalesces.
        let region = (h.local_bytes_per_thread * h.threads_per_sm).next_power_of_two();
        SmDataMemory {
            done_hint: DoneHint {
                l1_from: u64::MAX,
                bypass: false,
            },
            retry_ids: RetryIds([RetryId::NONE; RETRY_ENTRIES]),
            l1: mm::SmMemory::new(&h.cfg),
            lat: h.lat,
            consts: h.consts,
            ctags: vec![
                ConstWay {
                    line: u64::MAX,
                    stamp: 0,
                    ready: 0,
                };
                n
            ],
            cstamp: 0,
            const_hits: 0,
            const_misses: 0,
            const_hit_reserved: 0,
            l1_latency: h.cfg.l1d.latency as u64,
            sh_latency: h.cfg.shared.latency as u64,
            l1_line_bytes: u64::from(h.cfg.l1d.line_bytes.max(1)),
            sh_row_bytes: (u64::from(h.cfg.shared.banks) * u64::from(h.cfg.shared.bank_width_bytes)).max(1),
            local_base: (1u64 << 44) + sm as u64 * region,
            local_bytes_per_thread: h.local_bytes_per_thread,
            threads_per_sm: h.threads_per_sm,
            dsm_extra: h.dsm_extra,
            // Sized once: a cycle sends at most the input queue's room and takes at most
            // what the SM's ejection buffer held.
            inbox: Vec::with_capacity(h.cfg.icnt.dest_queue_entries.max(1) as usize),
            inbox_cycle: 0,
            outbox: Vec::with_capacity(h.cfg.icnt.input_queue_entries.max(1) as usize),
            room: 0,
            retry_keys: [RetryKey::NONE; RETRY_ENTRIES],
            retry_next: 0,
            bypass: L1Bypass::new(h.cfg.l1d.line_bytes, h.cfg.l1d.sector_bytes),
        }
    }

    /// The L1's outcome as the SM sees it.
    fn outcome(&self, now: u64, space: mm::MemSpace, bytes: u32, o: mm::AccessOutcome) -> Access {
        match o {
            mm::AccessOutcome::Done { ready_at } => {
                // A perfectly coalesced access of this width needs this many lines
                // (shared: wavefronts); their data cycles are the SM's RF transfer.
                let (base, row) = if space == mm::MemSpace::Shared {
                    (self.sh_latency, self.sh_row_bytes)
                } else {
                    (self.l1_latency, self.l1_line_bytes)
                };
                let natural = (sassim_trace::WARP_SIZE as u64 * bytes as u64 / row).max(1);
                let extra = ready_at.saturating_sub(now + base);
                Access::ReadyAt(ready_at - extra.min(natural - 1))
            }
            mm::AccessOutcome::Pending => Access::Pending,
            mm::AccessOutcome::Rejected => Access::Retry,
        }
    }

    /// The L0 VL ways of the set of `line`.
    fn const_set(&self, line: u64) -> std::ops::Range<usize> {
        let a = self.consts.assoc as usize;
        let set = (line % self.consts.sets as u64) as usize;
        set * a..(set + 1) * a
    }

    /// L0 VL constant cache lookup at `now` of an LDC whose data would be ready at `hit`
    /// on a hit; a miss fills the line, whose data then arrives at `miss`. Returns when the
    /// data is there: a line still in flight is waited for (HIT_RESERVED), not a hit.
    fn const_lookup(&mut self, addr: u64, hit: u64, miss: u64) -> u64 {
        if self.consts.perfect {
            self.const_hits += 1;
            return hit;
        }
        let line = addr >> self.consts.line_shift;
        let r = self.const_set(line);
        self.cstamp += 1;
        let stamp = self.cstamp;
        let ways = &mut self.ctags[r];
        if let Some(w) = ways.iter_mut().find(|w| w.line == line) {
            w.stamp = stamp;
            return if w.ready > hit {
                self.const_hit_reserved += 1;
                w.ready
            } else {
                self.const_hits += 1;
                hit
            };
        }
        let victim = ways.iter_mut().min_by_key(|w| w.stamp).expect("assoc >= 1");
        *victim = ConstWay {
            line,
            stamp,
            ready: miss,
        };
        self.const_misses += 1;
        miss
    }

    fn local_addr(&self, warp: u32, lane: usize, off: u64, gran: u64) -> u64 {
        let tid = (warp as u64 * 32 + lane as u64) % self.threads_per_sm.max(1);
        let off = off % self.local_bytes_per_thread.max(1);
        self.local_base + (off / gran) * (self.threads_per_sm * gran) + tid * gran + off % gran
    }
}

impl DataMemory for SmDataMemory {
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    /// The L1's `requests_per_cycle`, the bypass's queued reads and one more warp-wide
    /// bypassing load, at most one read per lane ([`crate::l1_bypass::L1Bypass::load`]).
    fn max_sends_per_cycle(&self) -> usize {
        self.l1.requests_per_cycle() + self.bypass.queued() + sassim_trace::WARP_SIZE
    }

    fn access(&mut self, now: u64, req: &MemReq) -> Access {
        let acc = match (&req.access, req.space) {
            (_, MemSpace::Const) => {
                let hit = now + self.lat.constant as u64;
                return Access::ReadyAt(match req.const_addr {
                    Some(a) => self.const_lookup(a, hit, hit + self.consts.miss_penalty + req.const_l1_extra),
                    None => {
                        self.const_hits += 1;
                        hit
                    }
                });
            }
            (Some(a), _) if a.space != MemSpace::Const => a,
            // No addresses (trace without them): hit latencies.
            _ => return FixedLatencyMemory { lat: self.lat }.access(now, req),
        };
        if acc.remote && acc.space == MemSpace::Shared {
            // Another SM's shared memory, over the GPC's SM-to-SM network: its own banks are
            // not this SM's; a fixed latency (docs/model.md "Hopper").
            return Access::ReadyAt(now + self.sh_latency + self.dsm_extra);
        }
        let space = l1_space(acc.space);
        let bytes = acc.bytes_per_lane.clamp(1, 16);
        // A retry of a rejected access: the L1 has its coalescing (the ticket), unless it
        // gave the entry to another access meanwhile.
        let key = Retry::of(acc, req);
        let found = self.retry_slot(&key, acc);
        let slot = found.map(|(i, _)| i);
        if let Some((_, t)) = found {
            match self.l1.retry(now, t, req.id) {
                // Rejected again: the entry and its ticket stay as they are.
                Some(mm::AccessOutcome::Rejected) => return Access::Retry,
                Some(o) => return self.remember(slot, key, space, bytes, now, o),
                None => {}
            }
        }
        let w = self.request(req, acc, space, mem_kind(req.kind), bytes);
        let o = self.l1.access(now, &w);
        self.remember(slot, key, space, bytes, now, o)
    }

    fn rejected_again(&mut self, acc: &MemAccess, warp: u32, kind: MemKind) -> Option<RetryToken> {
        let (token, t) = self.rejected_before(acc, warp, kind)?;
        self.l1.rejected_again(t).then_some(token)
    }

    fn rejected_again_token(&mut self, token: RetryToken) -> bool {
        self.token_ticket(token)
            .is_some_and(|t| self.l1.rejected_again(t))
    }

    fn count_rejected_again(&mut self, token: RetryToken, k: u64) {
        if let Some(t) = self.token_ticket(token) {
            self.l1.count_rejected_again(t, k);
        } else {
            debug_assert!(k == 0, "skipped retries of a stale token");
        }
    }

    fn would_reject_token(&self, token: RetryToken) -> bool {
        self.token_ticket(token)
            .is_some_and(|t| self.l1.rejection_holds(t))
    }

    fn would_reject_again(&self, acc: &MemAccess, warp: u32, kind: MemKind) -> Option<RetryToken> {
        let (token, t) = self.rejected_before(acc, warp, kind)?;
        self.l1.rejection_holds(t).then_some(token)
    }

    #[inline]
    fn completed(&mut self, now: u64, out: &mut Vec<u64>) {
        if self.done_hint.l1_from > now && !self.done_hint.bypass {
            debug_assert!(
                self.l1.next_completion() > now && !self.bypass.has_done(),
                "completion hint"
            );
            return;
        }
        while let Some((id, _)) = self.l1.pop_completed(now) {
            out.push(id);
        }
        self.bypass.completed(out);
        self.done_hint = DoneHint {
            l1_from: self.l1.next_completion(),
            bypass: false,
        };
    }

    #[inline]
    fn done_from(&self) -> u64 {
        if self.done_hint.bypass {
            0
        } else {
            self.done_hint.l1_from
        }
    }

    fn access_bypassing_l1(&mut self, now: u64, req: &MemReq) -> Access {
        match req.access {
            Some(a) if a.space == MemSpace::Global && req.kind == MemKind::Load => {
                self.bypass.load(req.id, a);
                // A load without lines is done at once.
                self.done_hint.bypass = true;
                Access::Pending
            }
            _ => self.access(now, req),
        }
    }

    fn const_line_absent(&self, addr: u64) -> bool {
        self.const_absent(addr)
    }
}

impl SmDataMemory {
    /// Responses of the interconnect that arrived at `now`: into the L1, or the bypass for
    /// its own reads.
    pub(super) fn take_responses(&mut self, now: u64, rs: impl Iterator<Item = mm::L2Response>) {
        let mut any = false;
        for r in rs {
            any = true;
            if L1Bypass::owns(r.tag) {
                self.bypass.fill(r);
                self.done_hint.bypass = true;
            } else {
                self.l1.fill(now, r);
            }
        }
        if any {
            self.done_hint.l1_from = self.l1.next_completion();
        }
    }

    /// The responses left in the inbox ([`before_tick`]).
    pub(super) fn take_inbox(&mut self) {
        let mut inbox = std::mem::take(&mut self.inbox);
        self.take_responses(self.inbox_cycle, inbox.drain(..));
        self.inbox = inbox;
    }

    /// The arbiter's token and the L1 ticket of a global or local access the L1 rejected
    /// before (its retry entry), for the counting and the non-counting check alike.
    #[inline(always)]
    fn rejected_before(&self, acc: &MemAccess, warp: u32, kind: MemKind) -> Option<(RetryToken, mm::Ticket)> {
        if acc.space == MemSpace::Const {
            return None;
        }
        let key = Retry::key(acc, warp, kind);
        let (i, t) = self.retry_slot(&key, acc)?;
        Some((key.token(i), t))
    }

    /// The L1 ticket of the access a token names, while its retry entry still holds
    /// it. The token is the entry and the address of the access's record, which the entry
    /// holds until the access is accepted or the entry is given to another access (a live
    /// record is not reused, so an entry with its address is the access's own).
    #[inline(always)]
    fn token_ticket(&self, token: RetryToken) -> Option<mm::Ticket> {
        self.retry_ids
            .0
            .get(token.entry as usize)
            .filter(|r| r.rec == token.id)
            .map(|r| r.ticket)
    }

    /// The L1's request of an access (local addresses translated).
    /// The retry entry that remembers the access `key` (of `acc`), if it was rejected
    /// before. Debug builds check that the entry's L1 ticket, while current, still names this
    /// access (its record is unchanged until it is accepted). Returns the entry's index and
    /// ticket.
    #[inline(always)]
    fn retry_slot(&self, key: &Retry, acc: &MemAccess) -> Option<(usize, mm::Ticket)> {
        let i = (0..RETRY_ENTRIES)
            .find(|&i| self.retry_ids.0[i].rec == key.rec && self.retry_keys[i] == key.key)?;
        let t = self.retry_ids.0[i].ticket;
        debug_assert!(
            {
                !self.l1.ticket_current(t) || {
                    let req = MemReq {
                        id: 0,
                        space: acc.space,
                        kind: key.key.kind,
                        bits: 0,
                        access: Some(acc),
                        warp: key.key.warp,
                        const_addr: None,
                        const_l1_extra: 0,
                    };
                    let bytes = acc.bytes_per_lane.clamp(1, 16);
                    let w = self.request(&req, acc, l1_space(acc.space), mem_kind(key.key.kind), bytes);
                    self.l1.ticket_holds(t, &w)
                }
            },
            "a retried access changed"
        );
        Some((i, t))
    }

    fn request(
        &self,
        req: &MemReq,
        acc: &MemAccess,
        space: mm::MemSpace,
        kind: mm::AccessKind,
        bytes: u32,
    ) -> mm::WarpMemRequest {
        let mut w = mm::WarpMemRequest {
            id: req.id,
            warp: req.warp,
            space,
            kind,
            addrs: acc.addrs,
            active: acc.active,
            bytes_per_lane: bytes,
        };
        if space == mm::MemSpace::Local {
            let gran = (bytes as u64).max(4);
            for lane in 0..32 {
                if w.active & (1 << lane) != 0 {
                    w.addrs[lane] = self.local_addr(req.warp, lane, acc.addrs[lane], gran);
                }
            }
        }
        w
    }

    /// Note the outcome `o` of the access `key` (its entry `slot` if it had one): a
    /// rejection keeps (or gets) an entry with the L1's ticket, an accepted access frees its
    /// entry (its record may then be reused for another access).
    fn remember(
        &mut self,
        slot: Option<usize>,
        key: Retry,
        space: mm::MemSpace,
        bytes: u32,
        now: u64,
        o: mm::AccessOutcome,
    ) -> Access {
        if o == mm::AccessOutcome::Rejected {
            let i = slot.unwrap_or_else(|| {
                let i = self.retry_next;
                self.retry_next = (i + 1) % RETRY_ENTRIES;
                i
            });
            self.retry_ids.0[i] = RetryId {
                rec: key.rec,
                ticket: self.l1.ticket(),
            };
            self.retry_keys[i] = key.key;
        } else if let Some(i) = slot {
            self.retry_ids.0[i] = RetryId::NONE;
        }
        self.outcome(now, space, bytes, o)
    }

    fn const_absent(&self, addr: u64) -> bool {
        if self.consts.perfect {
            return false;
        }
        let line = addr >> self.consts.line_shift;
        !self.ctags[self.const_set(line)].iter().any(|w| w.line == line)
    }
}

/// One way of the L0 VL constant cache.
#[derive(Debug, Clone, Copy)]
struct ConstWay {
    line: u64,
    stamp: u64,
    /// The cycle the line's data is there (its fetch may still be in flight).
    ready: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use sassim_config::GpuConfig;

    /// A global load of 32 lanes on 32 distinct lines from `base`.
    fn scattered(base: u64) -> MemAccess {
        let mut a = MemAccess::blank(MemSpace::Global);
        for (lane, x) in a.addrs.iter_mut().enumerate() {
            *x = base + lane as u64 * 4096;
        }
        a.active = u32::MAX;
        a.bytes_per_lane = 4;
        a
    }

    fn load<'a>(id: u64, warp: u32, a: &'a MemAccess) -> MemReq<'a> {
        MemReq {
            id,
            space: MemSpace::Global,
            kind: MemKind::Load,
            bits: 32,
            access: Some(a),
            warp,
            const_addr: None,
            const_l1_extra: 0,
        }
    }

    fn fails(m: &mut SmDataMemory) -> u64 {
        m.l1.stats().reservation_fails
    }

    /// The arbiter's token answers as the full check does, counting the same: while the
    /// rejection holds, and after its retry entry went to other accesses or the L1's state
    /// changed (then neither counts anything).
    #[test]
    fn retry_token_agrees_with_the_full_check() {
        let cfg = GpuConfig::preset("rtx-a6000").expect("preset");
        let model = MemModel::new(&cfg, 1, true).expect("memory model");
        let mut boxed = model.sm_memory(0);
        let m = boxed
            .as_any_mut()
            .downcast_mut::<SmDataMemory>()
            .expect("the hierarchy's memory");
        // Loads (never ticked: nothing drains) until the L1 rejects one.
        let recs: Vec<MemAccess> = (0..4096u64).map(|i| scattered(i * 128)).collect();
        let rej = (0..recs.len())
            .find(|&i| m.access(0, &load(i as u64, 0, &recs[i])) == Access::Retry)
            .expect("the L1 rejects an access at last");
        let a = &recs[rej];
        // Held: the full check and the token agree, and each counts one rejection.
        let before = fails(m);
        let t = m.rejected_again(a, 0, MemKind::Load).expect("rejected again");
        assert_eq!(fails(m), before + 1);
        assert_eq!(m.would_reject_again(a, 0, MemKind::Load), Some(t));
        assert!(m.would_reject_token(t));
        assert!(m.rejected_again_token(t));
        assert_eq!(fails(m), before + 2);
        // The same access by another warp is another entry: its token does not name it.
        assert_eq!(m.would_reject_again(a, 1, MemKind::Load), None);
        // Other rejected accesses take every retry entry: the full check no longer knows
        // the access, and neither does the token (nothing counted).
        for (k, r) in recs[rej + 1..rej + 1 + RETRY_ENTRIES].iter().enumerate() {
            assert_eq!(m.access(1, &load(10_000 + k as u64, 2, r)), Access::Retry);
        }
        let before = fails(m);
        assert_eq!(m.would_reject_again(a, 0, MemKind::Load), None);
        assert!(!m.would_reject_token(t));
        assert!(
            !m.rejected_again_token(t),
            "a token of an entry given to another access"
        );
        assert_eq!(fails(m), before);
        // Rejected again through the full access: a new token, valid until the L1's state
        // changes (an invalidation), after which neither path counts.
        assert_eq!(m.access(2, &load(20_000, 0, a)), Access::Retry);
        let t = m.rejected_again(a, 0, MemKind::Load).expect("rejected again");
        m.l1.invalidate();
        let before = fails(m);
        assert_eq!(m.would_reject_again(a, 0, MemKind::Load), None);
        assert!(
            !m.rejected_again_token(t),
            "a token of a rejection that no longer holds"
        );
        assert_eq!(fails(m), before);
    }
}
