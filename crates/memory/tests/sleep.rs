//! Slices and DRAM channels that cannot act are not visited (`Partition::tick`), and the
//! stalls a stalled slice would have counted in those cycles are counted all the same: a
//! memory system whose slices are all visited in every cycle (`Partition::wake_all`) gives
//! the same responses, cycle by cycle, and the same statistics, read at any cycle.

mod common;

use sassim_memory::*;

/// Responses (cycle, SM, address, tag) and the statistics read every 250 cycles.
type Run = (Vec<(u64, usize, u64, u32)>, Vec<MemStats>);

/// A pseudo-random mix of reads, writes and atomics from `sms` SMs, in bursts and lulls,
/// for `cycles` core cycles; `all_awake`: every slice is visited in every cycle.
fn run(cfg: &MemoryConfig, sms: usize, cycles: u64, all_awake: bool) -> Run {
    let mut mem = MemorySystem::new(cfg, sms);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut out, mut stats) = (Vec::new(), Vec::new());
    for now in 0..cycles {
        let busy = now / 700 % 3 != 2;
        for sm in 0..sms {
            let r = rand();
            if !busy || r % 3 == 0 {
                continue;
            }
            mem.push(now, sm, common::request(r, common::hot_or_wide(r)));
        }
        mem.tick_begin(now);
        let (parts, step, map) = mem.partitions();
        for p in parts.iter_mut() {
            if all_awake {
                p.wake_all();
            }
            p.tick(step, map);
        }
        mem.tick_end();
        for sm in 0..sms {
            // Half the SMs take no responses for 200 cycles in every 400: the response
            // crossbar backs up into the slices, whose fills then wait.
            if sm % 2 == 0 && now % 400 >= 200 {
                continue;
            }
            while let Some(r) = mem.pop_response(sm) {
                out.push((now, sm, r.addr, r.tag));
            }
        }
        if now % 250 == 249 {
            stats.push(mem.stats());
        }
    }
    (out, stats)
}

#[test]
fn sleeping_slices_and_channels_change_nothing() {
    let cfg = common::cramped();
    let (ra, sa) = run(&cfg, 12, 12_000, false);
    let (rb, sb) = run(&cfg, 12, 12_000, true);
    let last = sa.last().expect("statistics");
    // The run has what the sleeping must get right: stalled heads, a full DRAM queue, a
    // full return queue, many responses.
    assert!(ra.len() > 1_500, "{} responses", ra.len());
    assert!(last.l2.reservation_fails > 10_000, "{:?}", last.l2);
    assert!(last.dram.queue_full_cycles > 1_000, "{:?}", last.dram);
    assert!(last.dram.return_stall_cycles > 100, "{:?}", last.dram);
    assert!(
        last.l2.dirty_evictions > 100 && last.l2.mshr_merges > 10,
        "{:?}",
        last.l2
    );
    assert_eq!(ra, rb);
    for (i, (a, b)) in sa.iter().zip(&sb).enumerate() {
        assert_eq!(a, b, "statistics at cycle {}", 250 * i + 249);
    }
}

/// The same with two DRAM channels per partition, which take requests from the same slices:
/// a core cycle's DRAM cycles are skipped only when neither channel acts in them.
#[test]
fn sleeping_channels_change_nothing_with_two_channels_per_partition() {
    let mut cfg = common::cramped();
    cfg.dram.channels_per_partition = 2;
    let (ra, sa) = run(&cfg, 12, 12_000, false);
    let (rb, sb) = run(&cfg, 12, 12_000, true);
    let last = sa.last().expect("statistics");
    assert!(ra.len() > 1_500, "{} responses", ra.len());
    assert!(last.dram.queue_full_cycles > 1_000, "{:?}", last.dram);
    assert_eq!(ra, rb);
    for (i, (a, b)) in sa.iter().zip(&sb).enumerate() {
        assert_eq!(a, b, "statistics at cycle {}", 250 * i + 249);
    }
}
