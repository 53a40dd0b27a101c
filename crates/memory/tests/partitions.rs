//! The memory partitions of a core cycle are independent: ticking them in another order (as
//! threads do) gives the same responses, cycle by cycle, and the same statistics as
//! `MemorySystem::tick`.

mod common;

use sassim_memory::*;

/// How the partitions of a cycle are ticked.
#[derive(Clone, Copy)]
enum Order {
    /// `MemorySystem::tick` (the busy partitions, in order).
    Tick,
    /// Every partition, last to first.
    Reversed,
}

/// A pseudo-random mix of reads, writes and atomics from `sms` SMs for `cycles` core cycles;
/// returns every response (cycle, SM, address, kind, tag) and the statistics.
fn run(cfg: &MemoryConfig, sms: usize, cycles: u64, order: Order) -> (Vec<(u64, usize, u64, u32)>, MemStats) {
    let mut mem = MemorySystem::new(cfg, sms);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut out = Vec::new();
    for now in 0..cycles {
        for sm in 0..sms {
            let r = rand();
            // About one request per SM every other cycle, over 4 MB (L2 misses, then hits).
            if r % 2 == 0 {
                continue;
            }
            mem.push(now, sm, common::request(r, ((r >> 16) % (1 << 15)) << 7));
        }
        match order {
            Order::Tick => mem.tick(now),
            Order::Reversed => {
                mem.tick_begin(now);
                let (parts, step, map) = mem.partitions();
                for p in parts.iter_mut().rev() {
                    p.tick(step, map);
                }
                mem.tick_end();
            }
        }
        for sm in 0..sms {
            while let Some(r) = mem.pop_response(sm) {
                out.push((now, sm, r.addr, r.tag));
            }
        }
    }
    (out, mem.stats())
}

#[test]
fn partition_order_does_not_change_results() {
    let cfg = MemoryConfig::a6000_like();
    let (ra, sa) = run(&cfg, 16, 6_000, Order::Tick);
    let (rb, sb) = run(&cfg, 16, 6_000, Order::Reversed);
    assert!(ra.len() > 10_000, "{} responses", ra.len());
    assert!(sa.dram.reads > 1_000 && sa.l2.read_hits > 100, "{sa:?}");
    assert_eq!(ra, rb);
    assert_eq!(sa, sb);
}
