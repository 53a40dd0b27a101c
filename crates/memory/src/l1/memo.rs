//! The L1's memory of recent global and local accesses: each coalesced access is remembered
//! with its lines and its last rejection, so that a retry (a ticket) is not coalesced again, and
//! a retry while nothing it depends on changed is counted as rejected again without re-probing
//! (part of [`SmMemory`]).

use super::load::LoadPlan;
use super::{filter_bit, same_access, Coalesced, Fail, Rejection, SmMemory, Ticket, COALESCE_MEMO};
use crate::coalesce::{coalesce_lines, LineGeometry, LineReq, MAX_LINES};
use crate::types::{AccessKind, AccessOutcome, WarpMemRequest};

/// What a load's rejected check counted until it decided ([`SmMemory::load_check`]), kept
/// with its rejection: while the load's lines keep their state (ways, valid and pending
/// sectors, MSHR entries and their waiters), its decision follows from these and the L1's
/// free resources ([`SmMemory::decide_again`]) without looking at its lines again.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LoadNeeds {
    /// Whether the memo entry's rejection is a load's (else nothing here is known).
    pub load: bool,
    /// A bit per set (below 64) of the lines that take a victim, up to the line the check
    /// stopped at (a line it stops at for `NoVictim` aside).
    pub victim_sets: u64,
    /// The new MSHR entries and the miss-queue entries needed, the write-backs of dirty
    /// victims aside; `None` when the check stopped at a line (`MshrMerge`, `NoVictim`).
    pub counts: Option<NeededEntries>,
}

/// The entries a load's check found it needs ([`LoadNeeds::counts`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct NeededEntries {
    /// New MSHR entries (lines that miss with no entry yet).
    pub new_mshr: u32,
    /// Miss-queue entries (requests to the L2), the write-backs of dirty victims aside.
    pub miss_queue: u32,
}

impl SmMemory {
    /// The ticket of the last global or local access (its remembered coalescing).
    pub fn ticket(&self) -> Ticket {
        if self.cur < self.coalesced.len() {
            self.heads[self.cur].gen
        } else {
            Ticket::NONE
        }
    }

    /// The access of `ticket` again (with the caller's `id`), as [`SmMemory::access`] of the
    /// same request would do it; `None` when the ticket is stale (nothing done).
    pub fn retry(&mut self, now: u64, ticket: Ticket, id: u64) -> Option<AccessOutcome> {
        let i = ticket.idx();
        if !self.ticket_current(ticket) {
            return None;
        }
        self.cur = i;
        // The common case, kept small: rejected again for the remembered cause.
        if let Some(out) = self.memo_rejection() {
            return Some(out);
        }
        Some(self.access_cur(now, id))
    }

    /// The short path of [`SmMemory::retry`]: whether the access of `ticket` is rejected
    /// again for its remembered cause, which is then counted (as the retry would); `false`
    /// when the ticket is stale or the rejection may no longer hold (nothing counted: the
    /// caller retries in full).
    #[inline]
    pub fn rejected_again(&mut self, ticket: Ticket) -> bool {
        if !self.ticket_current(ticket) {
            return false;
        }
        self.cur = ticket.idx();
        self.memo_rejection().is_some()
    }

    /// Count `k` more [`SmMemory::rejected_again`] calls of `ticket` that answered true:
    /// the retries of cycles in which its SM was not ticked, whose caller knows the
    /// rejection held through them (nothing it depends on changed until, at the latest,
    /// the end of the last of those cycles). Not checked again here: a send at the end of
    /// that cycle may have ended it for the next one.
    pub fn count_rejected_again(&mut self, ticket: Ticket, k: u64) {
        if k == 0 || !self.ticket_current(ticket) {
            debug_assert!(k == 0, "skipped retries of a stale ticket");
            return;
        }
        self.cur = ticket.idx();
        match self.heads[self.cur].rej {
            Some(r) => self.count_rejections(r.kind as usize, r.fail, k),
            None => debug_assert!(false, "skipped retries of an access with no rejection"),
        }
    }

    /// What [`SmMemory::rejected_again`] would answer, without counting anything.
    pub fn rejection_holds(&self, ticket: Ticket) -> bool {
        self.ticket_current(ticket)
            && self.heads[ticket.idx()]
                .rej
                .is_some_and(|r| self.still_rejected(&r))
    }

    /// The current access's remembered rejection, counted again, if it still holds.
    #[inline]
    pub(super) fn memo_rejection(&mut self) -> Option<AccessOutcome> {
        let r = self.heads[self.cur].rej?;
        if !self.still_rejected(&r) {
            return self.decided_again();
        }
        debug_assert_eq!(self.check(self.cur).err(), Some(r.fail), "memoised rejection");
        self.count_rejections(r.kind as usize, r.fail, 1);
        Some(AccessOutcome::Rejected)
    }

    /// The current access's rejection no longer holds, but the epoch is the one it was
    /// decided in: its lines are as they were then (a fill of one of them would have cleared
    /// it) and its victim sets still have a victim (within an epoch victims appear, never
    /// vanish), so a load is decided again from what its check counted (the gather trace's
    /// loads rejected for `MshrCount` until fills free entries, then for `MissQueue`). The
    /// new rejection counted and remembered, or `None` (the full check decides).
    #[cold]
    #[inline(never)]
    fn decided_again(&mut self) -> Option<AccessOutcome> {
        let r = self.heads[self.cur].rej?;
        if r.epoch != self.epoch {
            return None;
        }
        let fail = self.decide_again(&self.needs[self.cur])?;
        debug_assert_eq!(self.check(self.cur).err(), Some(fail), "load decided again");
        Some(self.reject(r.kind as usize, fail))
    }

    /// The rejection `load_check` would give a load whose lines kept their state since its
    /// check counted `needs` and whose victim sets have a victim: `MshrCount` if the new
    /// entries are more than are free, else `MissQueue` if the miss-queue entries do not fit
    /// (known only while no line is dirty: a dirty victim adds a write-back); `None` when
    /// that is not known or the load passes those checks.
    #[inline]
    fn decide_again(&self, needs: &LoadNeeds) -> Option<Fail> {
        let NeededEntries {
            new_mshr,
            miss_queue: mq,
        } = needs.counts?;
        if new_mshr as usize > self.mshr.free_entries() {
            return Some(Fail::MshrCount(new_mshr));
        }
        if !self.cache.any_dirty() && !self.mq_fits(mq as usize) {
            return Some(Fail::MissQueue(mq));
        }
        None
    }

    /// Whether `ticket` still names a remembered access ([`SmMemory::retry`] would use it).
    pub fn ticket_current(&self, ticket: Ticket) -> bool {
        // An entry not made yet has key 0, which no ticket has.
        let current = self.heads[ticket.idx()].gen == ticket;
        debug_assert!(!current || ticket.idx() < self.coalesced.len());
        current
    }

    /// Whether `ticket` names the access `req` (a caller's check).
    pub fn ticket_holds(&self, ticket: Ticket, req: &WarpMemRequest) -> bool {
        self.ticket_current(ticket) && same_access(&self.coalesced[ticket.idx()].req, req)
    }

    /// [`SmMemory::access`] of the current memo entry's access, with the caller's `id`.
    #[inline(never)]
    pub(super) fn access_cur(&mut self, now: u64, id: u64) -> AccessOutcome {
        // An access retried while nothing it depends on changed is rejected again, for the
        // same cause: count it as such without re-probing.
        if let Some(out) = self.memo_rejection() {
            return out;
        }
        // The memo is moved out while the access reads its lines and changes the L1.
        let memo = std::mem::take(&mut self.coalesced);
        let c = &memo[self.cur];
        let (req, lines) = (&c.req, &c.lines[..c.n]);
        let out = match req.kind {
            AccessKind::Load => self.load(now, id, req, lines),
            AccessKind::Store => self.store(now, req, lines),
            AccessKind::Atomic => self.atomic(now, id, req, lines),
        };
        self.coalesced = memo;
        match out {
            Ok(out) => {
                self.epoch += 1;
                self.carry_rejections();
                out
            }
            Err((kind, fail)) => self.reject(kind, fail),
        }
    }

    /// Whether a rejection still holds. Any accepted global or local access may change
    /// anything; a read fill of one of the access's lines clears the rejection (in
    /// `fill`). Otherwise, the state only changed through fills of other lines (MSHR
    /// entries freed, ways made ready: victims appear, never vanish, and may change), the
    /// miss queue draining and slots freeing. So the lines' own state (ways, valid and
    /// pending sectors, MSHR entries and their waiters) is as it was: a full MSHR entry is
    /// still full, the new entries needed are as many, a set without a victim is re-checked
    /// alone, and the miss-queue entries needed are as many unless a fill changed a victim
    /// and some line may be dirty (a dirty victim adds a write-back).
    #[inline]
    pub(super) fn still_rejected(&self, r: &Rejection) -> bool {
        let victims_same = || r.fill_epoch == self.fill_epoch || !self.cache.any_dirty();
        r.epoch == self.epoch
            && match r.fail {
                Fail::MshrMerge => true,
                Fail::MshrCount(k) => k as usize > self.mshr.free_entries(),
                Fail::NoVictim(set) => !self.cache.has_victim_in(set as usize),
                Fail::MissQueue(m) => !self.mq_fits(m as usize) && victims_same(),
                Fail::MissQueueWb(m) => !self.mq_fits(m as usize) && r.fill_epoch == self.fill_epoch,
                Fail::PendingTable => self.free_slots.is_empty() && victims_same(),
            }
    }

    /// After the current access was accepted (a new epoch): the rejections of the other
    /// remembered loads that it left as they were are carried into the new epoch. A load's
    /// rejection depends on its lines' own state (ways, valid sectors, MSHR entries and their
    /// waiters), on the sets of the lines that take a victim having one (else it is
    /// `NoVictim`), on the free MSHR entries, the miss queue and, with a dirty line, on which
    /// ways are the victims. An accepted access changes the state of its own lines and of
    /// those it displaces from their ways only; it takes victims, MSHR entries and miss-queue
    /// entries. So when neither its lines nor the displaced ones are in the rejected load's
    /// line filter and each of its victim sets still has a victim, the loop of `load_check`
    /// stops at the same line for the same cause (`MshrMerge`; `NoVictim`, if that set still
    /// has none) or counts the same needs, and the load's rejection is decided from them
    /// ([`SmMemory::decide_again`]). The gather trace's loads, each waiting for an empty
    /// miss queue, were checked again in full after every accepted access. The carried
    /// rejection holds as long as `still_rejected` says. (Checked in debug builds here and by
    /// `memo_rejection`.)
    fn carry_rejections(&mut self) {
        let live = self.rejected & !(1 << self.cur);
        if self.carry && live != 0 {
            self.carry_live(live);
        }
        for &line in &self.displaced_lines {
            self.displaced[filter_bit(line).0] = 0;
        }
        self.displaced_lines.clear();
    }

    /// [`SmMemory::carry_rejections`] of the memo entries in `live` (bit per entry).
    fn carry_live(&mut self, mut live: u32) {
        let cur = self.cur;
        while live != 0 {
            let i = live.trailing_zeros() as usize;
            live &= live - 1;
            let Some(r) = self.heads[i].rej else { continue };
            let needs = self.needs[i];
            if r.epoch + 1 != self.epoch || !needs.load {
                continue;
            }
            let touched = |(f, d): (&[u64; COALESCE_MEMO], &u64)| f[i] & (f[cur] | d) != 0;
            if self.memo_filters.iter().zip(&self.displaced).any(touched) && self.lines_touched(i) {
                continue;
            }
            let mut sets = needs.victim_sets;
            let mut victims = true;
            while sets != 0 && victims {
                victims = self.cache.has_victim_in(sets.trailing_zeros() as usize);
                sets &= sets - 1;
            }
            if !victims {
                continue;
            }
            let fail = match r.fail {
                Fail::MshrMerge => Some(r.fail),
                Fail::NoVictim(set) => (!self.cache.has_victim_in(set as usize)).then_some(r.fail),
                _ => self.decide_again(&needs),
            };
            let Some(fail) = fail else { continue };
            debug_assert_eq!(self.check(i).err(), Some(fail), "carried rejection");
            self.heads[i].rej = Some(Rejection {
                epoch: self.epoch,
                fill_epoch: self.fill_epoch,
                fail,
                kind: r.kind,
            });
        }
    }

    /// Whether one of memo entry `i`'s lines is one of the current access's or was displaced
    /// during it: the exact answer where the line filters say maybe (for two accesses of 32
    /// lines each and the 32 lines one displaced, about two times in five).
    fn lines_touched(&self, i: usize) -> bool {
        let (c, cur) = (&self.coalesced[i], &self.coalesced[self.cur]);
        let cur_lines = &cur.lines[..cur.n];
        c.lines[..c.n].iter().any(|l| {
            let (w, b) = filter_bit(l.line);
            (self.memo_filters[w][self.cur] | self.displaced[w]) & b != 0
                && (cur_lines.iter().any(|o| o.line == l.line) || self.displaced_lines.contains(&l.line))
        })
    }

    /// The decision on the resources of memo entry `i`'s access, without changing anything
    /// (the debug check of a memoised rejection).
    pub(super) fn check(&self, i: usize) -> Result<(), Fail> {
        let c = &self.coalesced[i];
        let (req, lines) = (&c.req, &c.lines[..c.n]);
        match req.kind {
            AccessKind::Load => self.load_check(lines, &mut LoadPlan::new(), &mut LoadNeeds::default()),
            AccessKind::Store => self.store_check(lines, self.write_back(req.space)),
            AccessKind::Atomic => self.atomic_check(lines.len()),
        }
    }

    // ---------------------------------------------------------------- global / local

    /// The memo entry of `req`'s coalescing ([`Self::coalesce`]), made if needed (the
    /// last `COALESCE_MEMO` accesses are remembered).
    pub(super) fn coalesce_memo(&mut self, req: &WarpMemRequest) -> usize {
        if let Some(i) = self.coalesced.iter().position(|c| same_access(&c.req, req)) {
            return i;
        }
        // Written in place (the memo is moved out meanwhile): an entry is about 2 KB.
        let mut memo = std::mem::take(&mut self.coalesced);
        let i = if memo.len() < COALESCE_MEMO {
            memo.push(Coalesced {
                req: req.clone(),
                n: 0,
                lines: [LineReq::default(); MAX_LINES],
            });
            memo.len() - 1
        } else {
            let i = self.coalesced_next;
            self.coalesced_next = (i + 1) % COALESCE_MEMO;
            i
        };
        let e = &mut memo[i];
        // The entry's filter holds the bits of its lines only (zero for a new entry).
        for l in &e.lines[..e.n] {
            let (w, b) = filter_bit(l.line);
            self.memo_filters[w][i] &= !b;
        }
        debug_assert!(self.memo_filters.iter().all(|f| f[i] == 0));
        e.req.clone_from(req);
        self.memo_gen += 1;
        self.heads[i].gen = Ticket::of(self.memo_gen, i);
        e.n = self.coalesce(req, &mut e.lines);
        for l in &e.lines[..e.n] {
            let (w, b) = filter_bit(l.line);
            self.memo_filters[w][i] |= b;
        }
        self.heads[i].rej = None;
        self.needs[i] = LoadNeeds::default();
        self.rejected &= !(1 << i);
        self.coalesced = memo;
        i
    }

    pub(super) fn coalesce(&self, req: &WarpMemRequest, out: &mut [LineReq; MAX_LINES]) -> usize {
        let g = LineGeometry {
            line_shift: self.line_shift,
            sector_shift: self.sector_shift,
        };
        coalesce_lines(&req.addrs, req.active, req.bytes_per_lane, g, out, |line| {
            self.cache.set_of(line) as u32
        })
    }
}
