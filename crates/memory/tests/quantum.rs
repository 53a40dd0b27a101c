//! A quantum of several core cycles (issue 15; docs/performance-log.md "Eleventh session of
//! 2026-11-27: an exact quantum for traces"): the memory system's back half (clocks, response crossbar, L2 lookups, DRAM)
//! runs the quantum's cycles first, then the SMs take their responses and stage their
//! requests for every cycle, then the front half (request crossbar, requests entering the
//! ROP pipelines) runs the same cycles. Within `MemorySystem::max_quantum` this gives the
//! responses of running every core cycle in turn, cycle by cycle, and the same statistics.

mod common;

use sassim_memory::*;

/// The cramped memory system of `sleep.rs` (heads stall, ROP pipelines fill, requests wait in
/// the crossbar) with 4-entry request queues at the slices and 8-entry response queues at
/// the SMs, so that they bound the quantum and fill (then cycles run one by one).
fn cramped() -> MemoryConfig {
    let mut cfg = common::cramped();
    cfg.l2.queue_icnt_to_l2 = 4;
    cfg.icnt.dest_queue_entries = 8;
    // Room for every request the SMs send (a full input queue would refuse a push that
    // the cycle-by-cycle run accepts: the runner ends an SM's quantum before that).
    cfg.icnt.input_queue_entries = 4096;
    cfg
}

/// The request SM `sm` sends in core cycle `now`, if any (the same in every mode: a hash of
/// the two, not a generator's sequence).
fn request(now: u64, sm: usize) -> Option<L2Request> {
    let mut r = now.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (sm as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    r ^= r >> 29;
    r = r.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    r ^= r >> 32;
    // Bursts and lulls; within a burst two SMs in three send.
    if now / 700 % 3 == 2 || r.is_multiple_of(3) {
        return None;
    }
    Some(common::request(r, common::hot_or_wide(r)))
}

/// Whether SM `sm` takes its responses in core cycle `now`: half the SMs take none for 150
/// cycles in every 400, so that their response queues fill and quanta must shrink or stop.
fn takes(now: u64, sm: usize) -> bool {
    sm % 2 == 1 || now % 1000 < 300
}

/// Responses (cycle, SM, address, tag), statistics at the end, and the core cycles run in
/// quanta.
type Run = (Vec<(u64, usize, u64, u32)>, MemStats, u64);

/// One SM's step of core cycle `now` at its port: the responses due by the interconnect
/// cycle `at` names, then its request.
fn sm_step(port: &mut SmPort, at: &PortStep, now: u64, sm: usize, out: &mut Vec<(u64, usize, u64, u32)>) {
    if takes(now, sm) {
        while let Some(r) = port.pop_response(at) {
            out.push((now, sm, r.addr, r.tag));
        }
    }
    if let Some(req) = request(now, sm) {
        assert!(port.push(at, req), "SM {sm}: no room at cycle {now}");
    }
}

/// `cycles` core cycles of `sms` SMs; quanta of at most `quantum` cycles (1: none).
fn run(cfg: &MemoryConfig, sms: usize, cycles: u64, quantum: u64) -> Run {
    let mut mem = MemorySystem::new(cfg, sms);
    let mut out = Vec::new();
    let mut in_quanta = 0;
    let mut now = 0;
    while now < cycles {
        let q = mem.max_quantum().min(quantum).min(cycles - now);
        if q <= 1 {
            let sp = mem.step_parts();
            let at = sp.at;
            for (sm, port) in sp.ports.iter_mut().enumerate() {
                sm_step(port, &at, now, sm, &mut out);
            }
            for sm in 0..sms {
                mem.pushed(sm);
            }
            mem.tick(now);
            now += 1;
            continue;
        }
        mem.begin_quantum();
        let first_icnt = mem.icnt_cycle_now();
        let clocks: Vec<CycleClocks> = (0..q).map(|_| mem.back_cycle(false)).collect();
        mem.merge_ahead();
        // SM by SM, each through the whole quantum (as the threads do).
        let mut steps = Vec::new();
        let sp = mem.step_parts();
        for (sm, port) in sp.ports.iter_mut().enumerate() {
            for k in 0..q {
                let icnt = if k == 0 {
                    first_icnt
                } else {
                    clocks[k as usize - 1].icnt_last
                };
                sm_step(port, &sp.at.in_quantum(now + k, icnt), now + k, sm, &mut steps);
            }
        }
        steps.sort_by_key(|&(c, sm, _, _)| (c, sm));
        out.extend(steps);
        for (k, c) in clocks.iter().enumerate() {
            mem.front_cycle(now + k as u64, c, sms);
        }
        mem.end_quantum();
        in_quanta += q;
        now += q;
    }
    (out, mem.stats(), in_quanta)
}

#[test]
fn quanta_give_the_cycle_by_cycle_responses_and_statistics() {
    // The response queues bound the quantum (8 entries), or the ROP pipeline (4 cycles).
    for (latency, dest) in [(211, 8), (4, 32)] {
        let mut cfg = cramped();
        cfg.l2.latency = latency;
        cfg.icnt.dest_queue_entries = dest;
        let (ra, sa, none) = run(&cfg, 12, 8_000, 1);
        assert_eq!(none, 0);
        assert!(ra.len() > 1_000, "{} responses", ra.len());
        assert!(sa.l2.reservation_fails > 1_000, "{:?}", sa.l2);
        assert!(sa.icnt_requests.blocked > 100, "{:?}", sa.icnt_requests);
        assert!(sa.icnt_responses.blocked > 100, "{:?}", sa.icnt_responses);
        for quantum in [2, 7, 32, 300] {
            let (rb, sb, some) = run(&cfg, 12, 8_000, quantum);
            // Most cycles ran in quanta; with 8-entry response queues some could not.
            assert!(
                some > 2_000 && (some < 8_000 || dest > 8),
                "latency {latency}, quantum {quantum}: {some} cycles in quanta"
            );
            assert_eq!(ra.len(), rb.len(), "latency {latency}, quantum {quantum}");
            for (i, (a, b)) in ra.iter().zip(&rb).enumerate() {
                assert_eq!(a, b, "latency {latency}, quantum {quantum}: response {i}");
            }
            assert_eq!(sa, sb, "latency {latency}, quantum {quantum}");
        }
    }
}

/// The bound itself: a quantum longer than the ROP pipeline's latency would let a request
/// reach its lookup before the front half put it there.
#[test]
fn the_quantum_is_bounded_by_the_rop_latency_and_the_response_queues() {
    let mut cfg = cramped();
    cfg.l2.latency = 5;
    let mem = MemorySystem::new(&cfg, 4);
    assert_eq!(mem.max_quantum(), 5);
    cfg.l2.latency = 211;
    let mem = MemorySystem::new(&cfg, 4);
    assert_eq!(mem.max_quantum(), 8);
}
