//! Tests of the DRAM channel: its scheduler against the FR-FCFS rule written directly, and
//! a bank's queue against a plain vector.

use super::*;
use crate::config::DramType;

impl DramChannel {
    /// The FR-FCFS rule written directly over the whole queue in age order: the oldest
    /// row hit that may issue; else, bank by bank in the order of their oldest request,
    /// the precharge or activate for that request when its bank has no row hits.
    fn reference(&self, now: u64, reads_blocked: bool) -> Command {
        let mut all: Vec<(usize, Queued)> = (self.queues.iter().enumerate())
            .flat_map(|(b, q)| q.iter().map(move |e| (b, *e)))
            .collect();
        all.sort_by_key(|(_, e)| e.seq);
        let (reads, writes) = self.col_times(reads_blocked);
        for &(b, e) in &all {
            let bank = &self.banks[b];
            let group = self.slots[e.slot as usize].bank_group as usize;
            let t = if e.write { writes } else { reads }
                .max(self.col_ready[b])
                .max(self.next_col_bg[group]);
            if bank.open == e.row && now >= t {
                return Command::Column(e.seq);
            }
        }
        let mut seen = [false; MAX_BANKS];
        for &(b, _) in &all {
            if std::mem::replace(&mut seen[b], true) {
                continue;
            }
            let bank = &self.banks[b];
            if all.iter().any(|&(b2, e2)| b2 == b && e2.row == bank.open) {
                continue;
            }
            if bank.open != CLOSED {
                if now >= bank.pre_ready {
                    return Command::Precharge(b);
                }
            } else if now >= bank.act_ready && now >= self.next_act_any {
                return Command::Activate(b);
            }
        }
        Command::None
    }
}

/// Every cycle (those the scheduler skips as quiet included) it issues what the rule
/// says, under random arrivals (bursts and lulls), reads, writes, few and many rows per
/// bank, and blocked reads.
#[test]
fn schedule_follows_fr_fcfs() {
    let mut rnd = crate::test_rng::xorshift(0x2545_f491_4f6c_dd1du64);
    for &(entries, banks, groups, rows) in &[(8u32, 4u32, 2u32, 2u64), (32, 16, 4, 3), (64, 16, 4, 16)] {
        let mut cfg = DramConfig::preset(DramType::Gddr6);
        cfg.sched_queue_entries = entries;
        cfg.banks = banks;
        cfg.bank_groups = groups;
        let mut ch = DramChannel::new(&cfg);
        let (mut columns, mut precharges, mut activates, mut quiet) = (0, 0, 0, 0);
        for now in 1..40_000u64 {
            let one_in = if now / 3000 % 2 == 0 { 2 } else { 12 };
            if ch.has_room() && rnd(one_in) == 0 {
                let bank = rnd(banks as u64) as u32;
                let group = bank / (banks / groups);
                let r = DramReq::new(
                    rnd(1 << 20),
                    0,
                    rnd(8) as u8,
                    rnd(4) == 0,
                    0,
                    bank,
                    group,
                    rnd(rows) as u32,
                );
                ch.enqueue(now, r);
            }
            let blocked = rnd(6) == 0;
            if !blocked {
                while ch.done_read(now).is_some() {
                    ch.pop_done();
                }
            }
            let want = ch.reference(now, blocked);
            let skipped = ch.len > 0 && now < ch.quiet_until && blocked == ch.quiet_blocked;
            let got = ch.schedule(now, blocked);
            assert_eq!(got, want, "cycle {now}, {banks} banks");
            // The incremental per-bank state (hit counts and ages, row times) matches
            // the queues.
            assert!(ch.counts_match(), "cycle {now}, {banks} banks");
            match got {
                Command::Column(_) => columns += 1,
                Command::Precharge(_) => precharges += 1,
                Command::Activate(_) => activates += 1,
                Command::None => quiet += u64::from(skipped),
            }
        }
        assert_eq!(ch.stats.reads + ch.stats.writes, columns);
        assert_eq!((ch.stats.precharges, ch.stats.activates), (precharges, activates));
        assert!(columns > 1000 && precharges > 100 && activates > 100 && quiet > 1000);
    }
}

/// Random pushes, removals (mostly of the head) and queries against a plain vector
/// (rows from a few, so that they share buckets and repeat, to many).
#[test]
fn bank_queue_matches_a_vector() {
    let mut rnd = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
    for &rows in &[2u64, 70, 1 << 20] {
        let mut q = BankQueue::with_capacity(16);
        let mut model: Vec<Queued> = Vec::new();
        let mut seq = 0;
        for _ in 0..50_000 {
            if model.len() < 40 && rnd(2) == 0 {
                let e = Queued {
                    seq,
                    row: rnd(rows) as u32,
                    slot: rnd(100) as u16,
                    write: rnd(3) == 0,
                };
                seq += 1 + rnd(3);
                q.push(e);
                model.push(e);
            } else if !model.is_empty() {
                let index = if rnd(4) == 0 {
                    rnd(model.len() as u64) as usize
                } else {
                    0
                };
                assert_eq!(q.index_of(model[index].seq), index);
                assert_eq!(q.remove(index), model.remove(index));
            }
            let row = match model.first() {
                Some(h) if rnd(2) == 0 => h.row,
                _ => rnd(rows) as u32,
            };
            let of = |write: bool| model.iter().filter(move |e| e.row == row && e.write == write);
            let first = |write: bool| of(write).next().map_or(u64::MAX, |e| e.seq);
            let want = RowHits {
                reads: of(false).count() as u32,
                writes: of(true).count() as u32,
                heads: HitHeads {
                    read: first(false),
                    write: first(true),
                },
            };
            assert_eq!(q.hits(row), want);
            let from = rnd(model.len() as u64 + 1) as usize;
            let write = rnd(2) == 0;
            let next = model[from..].iter().find(|e| e.row == row && e.write == write);
            assert_eq!(q.next_hit(from, row, write), next.map_or(u64::MAX, |e| e.seq));
            assert_eq!(q.len(), model.len());
            assert_eq!(q.front(), model.first());
            assert!(q.iter().eq(model.iter()));
            assert!(q.consistent());
        }
    }
}
