//! A global or local load in the L1: pass 1 checks its resources without changing anything
//! ([`SmMemory::load_check`]), pass 2 applies it (part of [`SmMemory`]).

use super::mshr::L1Waiter;
use super::{read_tag, Fail, Slot, SmMemory, NO_TAG};
use crate::coalesce::{LineReq, MAX_LINES};
use crate::types::{
    AccessOutcome, L2ReqKind, MemSpace, WarpMemRequest, ACC_GLOBAL_R, ACC_LOCAL_R, OUT_HIT, OUT_HIT_RESERVED,
    OUT_MISS, OUT_SECTOR_MISS,
};

/// A line with no way in a [`LoadPlan`].
const NO_WAY: u32 = u32::MAX;

/// What pass 1 of a load found: the lines' ways, the MSHR entries of the missing lines and
/// how many lines miss.
pub(super) struct LoadPlan {
    /// Way of each line, `NO_WAY` if absent (a small array: the plan is made per access).
    ways: [u32; MAX_LINES],
    /// MSHR entry of each line with missing sectors, `NO_ENTRY` if none (other lines':
    /// unset).
    entries: [u32; MAX_LINES],
    misses: usize,
}

/// A missing line with no MSHR entry in a [`LoadPlan`].
const NO_ENTRY: u32 = u32::MAX;

impl SmMemory {
    /// Pass 1 of a load: its resources, no state change. The ways and MSHR entries found
    /// stay valid through pass 2 (the lines are distinct, pass 2 never evicts one of them
    /// and releases no MSHR entry; a line's entry is taken only for that line). The victims'
    /// dirtiness only matters once the MSHRs suffice, so it is looked at after that check
    /// (the rejections and their causes are those of checking it line by line).
    /// `victim_sets` gets a bit per set of the lines that take a victim (sets below 64).
    pub(super) fn load_check(&self, lines: &[LineReq], victim_sets_out: &mut u64) -> Result<LoadPlan, Fail> {
        let mut plan = LoadPlan {
            ways: [NO_WAY; MAX_LINES],
            entries: [NO_ENTRY; MAX_LINES],
            misses: 0,
        };
        // The sets of the lines that take a victim, when a victim may be dirty (with no dirty
        // line, none is).
        let mut victim_sets = [0u32; MAX_LINES];
        let mut nv = 0usize;
        let dirty = self.cache.any_dirty();
        let (mut new_mshr, mut mq) = (0usize, 0usize);
        let mut set_bits = 0u64;
        let plan_lines = plan.ways.iter_mut().zip(plan.entries.iter_mut());
        for (l, (plan_way, plan_entry)) in lines.iter().zip(plan_lines) {
            let way = self.cache.find(l.line, l.line);
            *plan_way = way.map_or(NO_WAY, |w| w as u32);
            let valid = way.map_or(0, |w| self.cache.valid[w]);
            let missing = l.sectors & !valid;
            if missing == 0 {
                continue;
            }
            plan.misses += 1;
            let entry = self.mshr.get(l.line);
            *plan_entry = entry.unwrap_or(NO_ENTRY);
            match entry {
                Some(e) => {
                    if self.mshr.waiters(e) >= self.mshr.max_merge {
                        return Err(Fail::MshrMerge);
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
                            return Err(Fail::NoVictim(l.set));
                        }
                        set_bits |= 1 << (l.set & 63);
                        if dirty {
                            victim_sets[nv] = l.set;
                            nv += 1;
                        }
                    }
                }
            }
        }
        if new_mshr > self.mshr.free_entries() {
            *victim_sets_out = set_bits;
            return Err(Fail::MshrCount(new_mshr as u32));
        }
        for &set in &victim_sets[..nv] {
            let v = self.cache.pick_victim_in(set as usize);
            if v.is_some_and(|v| v.evicted.is_some_and(|(_, d)| d != 0)) {
                mq += 1;
            }
        }
        if !self.mq_fits(mq) {
            return Err(Fail::MissQueue(mq as u32));
        }
        if plan.misses > 0 && self.free_slots.is_empty() {
            return Err(Fail::PendingTable);
        }
        Ok(plan)
    }

    /// A global or local load of the coalesced `lines`; `Err`: rejected (access kind, cause).
    pub(super) fn load(
        &mut self,
        now: u64,
        id: u64,
        req: &WarpMemRequest,
        lines: &[LineReq],
    ) -> Result<AccessOutcome, (usize, Fail)> {
        let kind = if req.space == MemSpace::Local {
            ACC_LOCAL_R
        } else {
            ACC_GLOBAL_R
        };
        let n = lines.len();
        let mut victim_sets = 0;
        let plan = self.load_check(lines, &mut victim_sets);
        let LoadPlan {
            ways,
            entries,
            misses,
        } = plan.map_err(|f| {
            self.victim_sets[self.cur] = victim_sets;
            (kind, f)
        })?;
        // Pass 2: apply.
        self.stats.accesses += 1;
        match req.space {
            MemSpace::Local => self.stats.local_loads += 1,
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
        for (i, l) in lines.iter().enumerate() {
            self.stats.line_accesses += 1;
            let mut way = (ways[i] != NO_WAY).then_some(ways[i] as usize);
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
            let entry = (entries[i] != NO_ENTRY).then_some(entries[i]);
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
                        // entry nobody reserved. The line is then fetched without a way.
                        let own = |v: &crate::cache::Victim| {
                            v.evicted.is_some_and(|(t, _)| lines.iter().any(|o| o.line == t))
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
        Ok(if misses == 0 {
            AccessOutcome::Done { ready_at: ready_hit }
        } else {
            AccessOutcome::Pending
        })
    }
}
