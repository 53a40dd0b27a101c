//! A global or local load in the L1: pass 1 checks its resources without changing anything
//! ([`SmMemory::load_check`]), pass 2 applies it (part of [`SmMemory`]).

use super::memo::{LoadNeeds, NeededEntries};
use super::mshr::L1Waiter;
use super::{filter_bit, read_tag, Fail, Slot, SmMemory, NO_TAG};
use crate::coalesce::{LineReq, MAX_LINES};
use crate::types::{
    data_access_kind, AccessOutcome, L2ReqKind, WarpMemRequest, ACC_LOCAL_R, OUT_HIT, OUT_HIT_RESERVED,
    OUT_MISS, OUT_SECTOR_MISS,
};

/// A line with no way in a [`LoadPlan`].
const NO_WAY: u32 = u32::MAX;
/// A missing line with no MSHR entry in a [`LoadPlan`].
const NO_ENTRY: u32 = u32::MAX;

/// What pass 1 of a load found: per line, its way (`NO_WAY`: absent) and, if it has missing
/// sectors, its MSHR entry (`NO_ENTRY`: none; other lines': unset); how many lines miss. Kept
/// in the L1 with room for `MAX_LINES` lines and written over by each load (made per load,
/// its arrays were cleared and copied every time: 4 M instructions of the vector add, whose
/// loads are one line each).
#[derive(Debug, Clone, Default)]
pub(super) struct LoadPlan {
    /// Per line of the load, in its order: where pass 1 found it.
    lines: Vec<LinePlan>,
    /// How many lines miss (have missing sectors).
    misses: usize,
    /// The sets of the lines that take a victim, when a victim may be dirty (with no dirty
    /// line, none is); room for `MAX_LINES`, used by `load_check` only.
    victim_sets: Vec<u32>,
}

/// What pass 1 of a load found for one of its lines ([`LoadPlan`]).
#[derive(Debug, Clone, Copy)]
struct LinePlan {
    /// Its cache way (`NO_WAY`: not in the cache).
    way: u32,
    /// If it has missing sectors, its MSHR entry (`NO_ENTRY`: none); unset for a line with
    /// none missing.
    entry: u32,
}

impl LoadPlan {
    pub(super) fn new() -> Self {
        LoadPlan {
            lines: vec![
                LinePlan {
                    way: NO_WAY,
                    entry: NO_ENTRY
                };
                MAX_LINES
            ],
            misses: 0,
            victim_sets: vec![0; MAX_LINES],
        }
    }
}

impl SmMemory {
    /// Pass 1 of a load: its resources, no state change, written to `plan`. The ways and MSHR
    /// entries found stay valid through pass 2 (the lines are distinct, pass 2 never evicts
    /// one of them and releases no MSHR entry; a line's entry is taken only for that line).
    /// The victims' dirtiness only matters once the MSHRs suffice, so it is looked at after
    /// that check (the rejections and their causes are those of checking it line by line).
    /// `needs` gets what the check counted until it decided (kept with a rejection: see
    /// [`LoadNeeds`]).
    pub(super) fn load_check(
        &self,
        lines: &[LineReq],
        plan: &mut LoadPlan,
        needs: &mut LoadNeeds,
    ) -> Result<(), Fail> {
        debug_assert!(plan.lines.len() >= lines.len(), "a plan made by LoadPlan::new");
        let dirty = self.cache.any_dirty();
        // Counted in locals (registers), the plan's counts written once at the end.
        let (mut misses, mut nv) = (0usize, 0usize);
        let (mut new_mshr, mut mq) = (0usize, 0usize);
        let mut set_bits = 0u64;
        let mut stopped = None;
        for (l, plan_line) in lines.iter().zip(plan.lines.iter_mut()) {
            let way = self.cache.find(l.line, l.line);
            let plan_way = way.map_or(NO_WAY, |w| w as u32);
            let valid = way.map_or(0, |w| self.cache.valid[w]);
            let missing = l.sectors & !valid;
            if missing == 0 {
                *plan_line = LinePlan {
                    way: plan_way,
                    entry: NO_ENTRY,
                };
                continue;
            }
            misses += 1;
            let entry = self.mshr.get(l.line);
            *plan_line = LinePlan {
                way: plan_way,
                entry: entry.unwrap_or(NO_ENTRY),
            };
            match entry {
                Some(e) => {
                    if self.mshr.waiters(e) >= self.mshr.max_merge {
                        stopped = Some(Fail::MshrMerge);
                        break;
                    }
                    if missing & !self.mshr.pending(e) != 0 {
                        mq += 1;
                    }
                }
                None => {
                    new_mshr += 1;
                    mq += 1;
                    if way.is_none() {
                        if !self.cache.has_victim_in(l.set as usize) {
                            stopped = Some(Fail::NoVictim(l.set));
                            break;
                        }
                        set_bits |= 1 << (l.set & 63);
                        if dirty {
                            plan.victim_sets[nv] = l.set;
                            nv += 1;
                        }
                    }
                }
            }
        }
        plan.misses = misses;
        *needs = LoadNeeds {
            load: true,
            victim_sets: set_bits,
            counts: if stopped.is_none() {
                Some(NeededEntries {
                    new_mshr: new_mshr as u32,
                    miss_queue: mq as u32,
                })
            } else {
                None
            },
        };
        if let Some(fail) = stopped {
            return Err(fail);
        }
        if new_mshr > self.mshr.free_entries() {
            return Err(Fail::MshrCount(new_mshr as u32));
        }
        for &set in &plan.victim_sets[..nv] {
            let v = self.cache.pick_victim_in(set as usize);
            if v.is_some_and(|v| v.evicted.is_some_and(|e| e.dirty != 0)) {
                mq += 1;
            }
        }
        if !self.mq_fits(mq) {
            return Err(Fail::MissQueue(mq as u32));
        }
        if misses > 0 && self.free_slots.is_empty() {
            return Err(Fail::PendingTable);
        }
        Ok(())
    }

    /// A global or local load of the coalesced `lines`; `Err`: rejected (access kind, cause).
    pub(super) fn load(
        &mut self,
        now: u64,
        id: u64,
        req: &WarpMemRequest,
        lines: &[LineReq],
    ) -> Result<AccessOutcome, (usize, Fail)> {
        let kind = data_access_kind(req.space, false);
        // The plan is moved out while pass 2 changes the L1.
        let mut plan = std::mem::take(&mut self.plan);
        let mut needs = LoadNeeds::default();
        let out = match self.load_check(lines, &mut plan, &mut needs) {
            Ok(()) => Ok(self.load_apply(now, id, kind, lines, &plan)),
            Err(f) => {
                self.needs[self.cur] = needs;
                Err((kind, f))
            }
        };
        self.plan = plan;
        out
    }

    /// Pass 2 of a load of `kind` (`by_kind`'s first index): applies `plan`.
    fn load_apply(
        &mut self,
        now: u64,
        id: u64,
        kind: usize,
        lines: &[LineReq],
        plan: &LoadPlan,
    ) -> AccessOutcome {
        let n = lines.len();
        let misses = plan.misses;
        // Pass 2: apply.
        self.stats.accesses += 1;
        match kind {
            ACC_LOCAL_R => self.stats.local_loads += 1,
            _ => self.stats.global_loads += 1,
        }
        let ready_hit = now + self.latency + n.saturating_sub(1) as u64;
        let slot = if misses > 0 {
            let s = self.free_slots.pop().expect("checked");
            self.slots[s as usize] = Slot {
                id,
                remaining: 0,
                ready: ready_hit,
                live: true,
            };
            s
        } else {
            NO_TAG
        };
        for (l, &found) in lines.iter().zip(&plan.lines) {
            let LinePlan {
                way: plan_way,
                entry: plan_entry,
            } = found;
            self.stats.line_accesses += 1;
            let mut way = (plan_way != NO_WAY).then_some(plan_way as usize);
            debug_assert_eq!(way, self.cache.find(l.line, l.line));
            let valid = way.map_or(0, |w| self.cache.valid[w]);
            let missing = l.sectors & !valid;
            if let Some(w) = way {
                self.cache.touch(w);
            }
            if missing == 0 {
                self.stats.hits += 1;
                self.stats.by_kind[kind][OUT_HIT] += 1;
                continue;
            }
            let entry = (plan_entry != NO_ENTRY).then_some(plan_entry);
            debug_assert_eq!(entry, self.mshr.get(l.line));
            let reserved = entry.is_some_and(|e| missing & !self.mshr.pending(e) == 0);
            if reserved {
                self.stats.hit_reserved += 1;
            } else if way.is_some() {
                self.stats.sector_misses += 1;
            } else {
                self.stats.misses += 1;
            }
            let out = if reserved {
                OUT_HIT_RESERVED
            } else if way.is_some() {
                OUT_SECTOR_MISS
            } else {
                OUT_MISS
            };
            self.stats.by_kind[kind][out] += 1;
            self.stats.sectors_missed += missing.count_ones() as u64;
            self.slots[slot as usize].remaining += 1;
            let e = match entry {
                Some(e) => {
                    self.stats.mshr_merges += 1;
                    e
                }
                None => {
                    if way.is_none() {
                        // A request never evicts a line it needs itself: pass 1 counted that
                        // line as present (no MSHR), so evicting it here would need an MSHR
                        // entry nobody reserved. The line is then fetched without a way. (The
                        // access's line filter rules most lines out without a search.)
                        let filter = &self.memo_filters;
                        let cur = self.cur;
                        let own = |v: &crate::cache::Victim| {
                            v.evicted.is_some_and(|e| {
                                let (w, b) = filter_bit(e.line);
                                filter[w][cur] & b != 0 && lines.iter().any(|o| o.line == e.line)
                            })
                        };
                        if let Some(v) = self.cache.pick_victim_in(l.set as usize).filter(|v| !own(v)) {
                            self.evict_writeback(now, v.evicted);
                            self.install(v.way, l.line);
                            way = Some(v.way);
                        }
                    }
                    self.mshr.alloc(l.line)
                }
            };
            let new = self.mshr.request(e, missing);
            self.mshr.push(e, L1Waiter { slot, need: missing });
            if let Some(w) = way {
                self.cache.add_pending(w, new);
            }
            if new != 0 {
                let r = self.l2req(l.line, new, L2ReqKind::Read, 0, read_tag(e, way));
                self.enqueue(now, r);
            }
        }
        if misses == 0 {
            AccessOutcome::Done { ready_at: ready_hit }
        } else {
            AccessOutcome::Pending
        }
    }
}
