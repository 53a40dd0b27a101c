//! End-to-end tests of the memory hierarchy (timing, merging, conflicts, hashing, DRAM).

use sassim_memory::*;

/// Minimal driver: SMs + memory system, stepped one core cycle at a time.
struct Rig {
    sms: Vec<SmMemory>,
    mem: MemorySystem,
    now: u64,
}

impl Rig {
    fn new(cfg: &MemoryConfig, n: usize) -> Self {
        Self {
            sms: (0..n).map(|_| SmMemory::new(cfg)).collect(),
            mem: MemorySystem::new(cfg, n),
            now: 0,
        }
    }

    /// One core cycle; returns completions (sm, id, ready).
    fn step(&mut self, out: &mut Vec<(usize, u64, u64)>) {
        let now = self.now;
        for (i, sm) in self.sms.iter_mut().enumerate() {
            let mem = &mut self.mem;
            sm.tick(now, &mut |r| mem.push(now, i, r));
        }
        self.mem.tick(now);
        for (i, sm) in self.sms.iter_mut().enumerate() {
            while let Some(r) = self.mem.pop_response(i) {
                sm.fill(now, r);
            }
            // `next_completion` is the ready cycle of what pops next.
            loop {
                let next = sm.next_completion();
                let Some((id, at)) = sm.pop_completed(now) else {
                    assert!(next > now, "next completion at {next}, none popped at {now}");
                    break;
                };
                assert_eq!(at, next, "next completion");
                out.push((i, id, at));
            }
        }
        self.now += 1;
    }

    /// Issues `req` on SM 0 and runs until it completes; returns its latency.
    fn run_one(&mut self, req: &WarpMemRequest) -> u64 {
        let start = self.now;
        match self.sms[0].access(start, req) {
            AccessOutcome::Done { ready_at } => {
                return ready_at - start;
            }
            AccessOutcome::Rejected => panic!("rejected"),
            AccessOutcome::Pending => {}
        }
        let mut out = Vec::new();
        for _ in 0..20_000 {
            self.step(&mut out);
            if let Some(&(_, id, at)) = out.first() {
                assert_eq!(id, req.id);
                return at - start;
            }
        }
        panic!("request never completed");
    }

    fn drain(&mut self) {
        let mut out = Vec::new();
        for _ in 0..20_000 {
            if self.mem.is_idle() && self.sms.iter().all(|s| s.is_idle()) {
                return;
            }
            self.step(&mut out);
        }
        panic!("did not drain");
    }
}

fn warp(id: u64, space: MemSpace, kind: AccessKind, base: u64, stride: u64, bytes: u32) -> WarpMemRequest {
    let mut addrs = [0u64; 32];
    for (i, a) in addrs.iter_mut().enumerate() {
        *a = base + stride * i as u64;
    }
    WarpMemRequest {
        id,
        warp: 0,
        space,
        kind,
        addrs,
        active: u32::MAX,
        bytes_per_lane: bytes,
    }
}

fn load(id: u64, base: u64) -> WarpMemRequest {
    warp(id, MemSpace::Global, AccessKind::Load, base, 4, 4)
}

#[test]
fn t4_l1_hit_l2_hit_and_dram_latencies() {
    let cfg = MemoryConfig::t4_like();
    let mut rig = Rig::new(&cfg, 1);
    let cold = rig.run_one(&load(1, 0x10_0000));
    rig.drain();
    let l1_hit = rig.run_one(&load(2, 0x10_0000));
    rig.sms[0].invalidate();
    let l2_hit = rig.run_one(&load(3, 0x10_0000));
    eprintln!("T4: L1 hit {l1_hit}, L2 hit {l2_hit}, L2 miss (cold DRAM row) {cold}");
    assert_eq!(l1_hit, 32, "T4 L1 hit (T4 paper Fig. 3.5)");
    assert!((186..=190).contains(&l2_hit), "T4 L2 hit ≈ 188, got {l2_hit}");
    assert!((266..=326).contains(&cold), "T4 L2 miss ≈ 296 (±10%), got {cold}");
    let s = rig.sms[0].stats();
    assert_eq!((s.hits, s.misses), (1, 2));
    let m = rig.mem.stats();
    assert_eq!((m.l2.read_hits, m.l2.read_misses), (1, 1));
    assert_eq!(m.dram.reads, 4, "one 128 B line = 4 sector bursts");
}

#[test]
fn sector_miss_fetches_only_missing_sectors() {
    let cfg = MemoryConfig::t4_like();
    let mut rig = Rig::new(&cfg, 1);
    // Lanes 0..7 → sector 0 only.
    let mut r = load(1, 0x2000);
    r.active = 0xff;
    rig.run_one(&r);
    rig.drain();
    let full = load(2, 0x2000);
    rig.run_one(&full);
    rig.drain();
    let s = rig.sms[0].stats();
    assert_eq!(s.sector_misses, 1);
    assert_eq!(s.sectors_missed, 1 + 3);
    assert_eq!(rig.mem.stats().dram.reads, 4);
}

#[test]
fn mshr_merging() {
    let cfg = MemoryConfig::t4_like();
    let mut rig = Rig::new(&cfg, 1);
    assert_eq!(rig.sms[0].access(0, &load(1, 0x4000)), AccessOutcome::Pending);
    assert_eq!(rig.sms[0].access(0, &load(2, 0x4000)), AccessOutcome::Pending);
    // Different sectors of the same line also merge into the entry.
    let mut half = load(3, 0x4000);
    half.active = 0xffff_0000;
    assert_eq!(rig.sms[0].access(1, &half), AccessOutcome::Pending);
    let mut out = Vec::new();
    while out.len() < 3 {
        rig.step(&mut out);
        assert!(rig.now < 5000);
    }
    let ids: Vec<u64> = out.iter().map(|o| o.1).collect();
    assert!(ids.contains(&1) && ids.contains(&2) && ids.contains(&3));
    let s = rig.sms[0].stats();
    assert_eq!(s.mshr_merges, 2);
    assert_eq!(s.l2_reads, 1, "merged requests send nothing to L2");
}

#[test]
fn mshr_full_rejects() {
    let mut cfg = MemoryConfig::t4_like();
    cfg.l1d.mshr_entries = 2;
    let mut sm = SmMemory::new(&cfg);
    assert_eq!(sm.access(0, &load(1, 0x0)), AccessOutcome::Pending);
    assert_eq!(sm.access(0, &load(2, 0x1000)), AccessOutcome::Pending);
    assert_eq!(sm.access(0, &load(3, 0x2000)), AccessOutcome::Rejected);
    assert_eq!(sm.stats().fail_mshr, 1);
    assert_eq!(sm.stats().reservation_fails, 1);
}

fn shared(id: u64, stride_words: u64) -> WarpMemRequest {
    warp(id, MemSpace::Shared, AccessKind::Load, 0, 4 * stride_words, 4)
}

#[test]
fn shared_memory_bank_conflicts() {
    let cfg = MemoryConfig::t4_like();
    let lat = cfg.shared.latency as u64;
    let mut sm = SmMemory::new(&cfg);
    let mut t = 0;
    let mut lat_of = |sm: &mut SmMemory, r: &WarpMemRequest| {
        t += 100;
        match sm.access(t, r) {
            AccessOutcome::Done { ready_at } => ready_at - t,
            o => panic!("{o:?}"),
        }
    };
    assert_eq!(lat_of(&mut sm, &shared(1, 1)), lat, "stride 1: no conflict");
    assert_eq!(sm.stats().bank_conflict_cycles, 0);
    assert_eq!(lat_of(&mut sm, &shared(2, 2)), lat + 1, "stride 2: 2-way");
    assert_eq!(sm.stats().bank_conflict_cycles, 1);
    assert_eq!(lat_of(&mut sm, &shared(3, 32)), lat + 31, "stride 32: 32-way");
    assert_eq!(sm.stats().bank_conflict_cycles, 32);
    assert_eq!(lat_of(&mut sm, &shared(4, 0)), lat, "broadcast: no conflict");
    assert_eq!(lat_of(&mut sm, &shared(5, 33)), lat, "stride 33: no conflict");
    assert_eq!(sm.stats().bank_conflict_cycles, 32);
    assert_eq!(sm.stats().bank_conflict_accesses, 2);
    // 64-bit accesses, stride 1: 256 B over 128 B of banks = 2 wavefronts.
    let r = warp(6, MemSpace::Shared, AccessKind::Load, 0, 8, 8);
    assert_eq!(lat_of(&mut sm, &r), lat + 1);
    // Back-to-back conflicting accesses queue on the banks.
    let a = sm.access(10_000, &shared(7, 32));
    let b = sm.access(10_000, &shared(8, 1));
    assert_eq!(
        a,
        AccessOutcome::Done {
            ready_at: 10_000 + lat + 31
        }
    );
    assert_eq!(
        b,
        AccessOutcome::Done {
            ready_at: 10_000 + 32 + lat
        }
    );
}

#[test]
fn shared_atomics_serialize_on_same_address() {
    let cfg = MemoryConfig::t4_like();
    let mut sm = SmMemory::new(&cfg);
    let distinct = warp(1, MemSpace::Shared, AccessKind::Atomic, 0, 4, 4);
    let same = warp(2, MemSpace::Shared, AccessKind::Atomic, 0, 0, 4);
    let AccessOutcome::Done { ready_at: a } = sm.access(0, &distinct) else {
        panic!()
    };
    let AccessOutcome::Done { ready_at: b } = sm.access(1000, &same) else {
        panic!()
    };
    let base = (cfg.shared.latency + cfg.shared.atomic_latency) as u64;
    assert_eq!(a, base);
    assert_eq!(
        b - 1000,
        base + 62,
        "31 extra lanes × 2 cycles (T4 Table 4.2: 8 → 69)"
    );
}

#[test]
fn global_atomics_are_performed_at_l2() {
    let cfg = MemoryConfig::t4_like();
    let mut rig = Rig::new(&cfg, 1);
    let a = warp(1, MemSpace::Global, AccessKind::Atomic, 0x8000, 4, 4);
    let cold = rig.run_one(&a);
    let warm = rig.run_one(&warp(2, MemSpace::Global, AccessKind::Atomic, 0x8000, 4, 4));
    let contended = rig.run_one(&warp(3, MemSpace::Global, AccessKind::Atomic, 0x8000, 0, 4));
    eprintln!("global atomic: cold {cold}, warm {warm}, 32 lanes same address {contended}");
    assert!(warm < cold);
    assert!(contended > warm + 30);
    let m = rig.mem.stats();
    assert_eq!(m.l2.atomic_misses, 1);
    assert_eq!(m.l2.atomic_hits, 2);
}

#[test]
fn stores_write_through_global_and_back_local() {
    let cfg = MemoryConfig::t4_like();
    let mut rig = Rig::new(&cfg, 1);
    let st = warp(1, MemSpace::Global, AccessKind::Store, 0x9000, 4, 4);
    assert!(matches!(rig.sms[0].access(0, &st), AccessOutcome::Done { .. }));
    let lst = warp(2, MemSpace::Local, AccessKind::Store, 0xa000, 4, 4);
    assert!(matches!(rig.sms[0].access(0, &lst), AccessOutcome::Done { .. }));
    rig.drain();
    assert_eq!(rig.sms[0].stats().l2_writes, 1, "global store written through");
    // Local store allocated dirty in L1: a local load hits.
    let ll = warp(3, MemSpace::Local, AccessKind::Load, 0xa000, 4, 4);
    assert_eq!(rig.run_one(&ll), cfg.l1d.latency as u64);
    // Global store did not allocate in L1 (no-allocate): the load misses.
    assert!(rig.run_one(&load(4, 0x9000)) > 100);
    let m = rig.mem.stats();
    assert_eq!(m.l2.write_misses, 1);
    assert_eq!(m.l2.read_hits, 1, "the L2 allocated the written line");
}

#[test]
fn l2_hashing_spreads_linear_stream() {
    for cfg in [MemoryConfig::t4_like(), MemoryConfig::a6000_like()] {
        let map = AddressMapping::new(&cfg);
        let n = cfg.l2_slices();
        for hashing in [Hashing::Ipoly, Hashing::Xor, Hashing::Linear] {
            let mut c = cfg.clone();
            c.l2.hashing = hashing;
            let m = AddressMapping::new(&c);
            let mut count = vec![0u64; n];
            for i in 0..(n as u64 * 1000) {
                count[m.slice(i * 128)] += 1;
            }
            let (mn, mx) = (count.iter().min().unwrap(), count.iter().max().unwrap());
            assert!(
                *mx as f64 <= *mn as f64 * 1.02,
                "{hashing:?} {n} slices: {mn}..{mx}"
            );
        }
        // A power-of-two stride (4 KB) camps on few slices with linear indexing but is
        // spread by IPOLY.
        let mut count = vec![0u64; n];
        for i in 0..(n as u64 * 64) {
            count[map.slice(i * 4096)] += 1;
        }
        let used = count.iter().filter(|&&c| c > 0).count();
        assert!(used * 4 >= n * 3, "IPOLY 4 KB stride uses {used}/{n} slices");
    }
}

/// Finds addresses in one channel and bank: two in the same row, one in another row.
fn same_bank_addrs(m: &AddressMapping) -> (u64, u64, u64) {
    let a = 0x40_0000u64;
    let la = m.locate(a);
    let mut same_row = None;
    let mut other_row = None;
    let mut x = a + 128;
    while same_row.is_none() || other_row.is_none() {
        let l = m.locate(x);
        if l.channel == la.channel && l.bank == la.bank {
            if l.row == la.row && same_row.is_none() {
                same_row = Some(x);
            } else if l.row != la.row && other_row.is_none() {
                other_row = Some(x);
            }
        }
        x += 128;
    }
    (a, same_row.unwrap(), other_row.unwrap())
}

fn mem_read_latency(mem: &mut MemorySystem, now: &mut u64, addr: u64) -> u64 {
    let r = L2Request {
        addr,
        sectors: 0xf,
        kind: L2ReqKind::Read,
        bytes: 0,
        atomic_lanes: 0,
        atomic_max_same: 0,
        tag: 0,
    };
    let start = *now;
    assert!(mem.push(start, 0, r));
    loop {
        mem.tick(*now);
        *now += 1;
        if mem.pop_response(0).is_some() {
            return *now - 1 - start;
        }
        assert!(*now - start < 10_000);
    }
}

#[test]
fn dram_row_hit_vs_miss_vs_conflict() {
    let cfg = MemoryConfig::a6000_like();
    let mut mem = MemorySystem::new(&cfg, 1);
    let (a, same, other) = same_bank_addrs(mem.mapping());
    let mut now = 0;
    let miss = mem_read_latency(&mut mem, &mut now, a);
    let hit = mem_read_latency(&mut mem, &mut now, same);
    let conflict = mem_read_latency(&mut mem, &mut now, other);
    eprintln!("A6000 L2 miss latency: row closed {miss}, row hit {hit}, row conflict {conflict}");
    let d = mem.stats().dram;
    assert_eq!((d.row_misses, d.row_hits, d.row_conflicts), (1, 10, 1), "{d:?}");
    // tRCD = 24 DRAM cycles at 4 GHz ≈ 11 core cycles; tRP adds as much again.
    assert!(miss >= hit + 9, "miss {miss} vs hit {hit}");
    assert!(conflict >= miss + 9, "conflict {conflict} vs miss {miss}");
}

/// Streams sequential 128 B line reads from `sms` SMs as fast as they are accepted.
fn stream(cfg: &MemoryConfig, sms: usize, cycles: u64, warmup: u64) -> (MemStats, f64) {
    stream_with(cfg, sms, cycles, warmup, true)
}

/// [`stream`], the SMs taking their responses or not (`drain`).
fn stream_with(cfg: &MemoryConfig, sms: usize, cycles: u64, warmup: u64, drain: bool) -> (MemStats, f64) {
    let mut mem = MemorySystem::new(cfg, sms);
    let mut next = vec![0u64; sms];
    let mut bytes_at_warmup = 0;
    for now in 0..cycles {
        if now == warmup {
            bytes_at_warmup = mem.stats().dram.bytes;
        }
        for (sm, n) in next.iter_mut().enumerate() {
            // SM `sm` streams its own 64 MB region, line by line.
            let addr = ((sm as u64) << 26) + (*n << 7);
            let r = L2Request {
                addr,
                sectors: 0xf,
                kind: L2ReqKind::Read,
                bytes: 0,
                atomic_lanes: 0,
                atomic_max_same: 0,
                tag: 0,
            };
            if mem.push(now, sm, r) {
                *n += 1;
            }
        }
        mem.tick(now);
        if drain {
            for sm in 0..sms {
                while mem.pop_response(sm).is_some() {}
            }
        }
    }
    let s = mem.stats();
    let achieved = (s.dram.bytes - bytes_at_warmup) as f64 / (cycles - warmup) as f64;
    (s, achieved / cfg.theoretical_bandwidth_bytes_per_core_cycle())
}

#[test]
fn a6000_streaming_bandwidth() {
    let cfg = MemoryConfig::a6000_like();
    let peak = cfg.theoretical_bandwidth_bytes_per_core_cycle();
    assert!(
        (peak - 768e9 / 1.8e9).abs() < 1e-6,
        "768 GB/s at 1.8 GHz, got {peak}"
    );
    let (s, frac) = stream(&cfg, 84, 12_000, 4_000);
    eprintln!(
        "A6000 stream: {:.1}% of peak ({:.1} of {:.1} B/cycle), bus util {:.1}%, row hits {} misses {} conflicts {}, avg DRAM read latency {:.0} DRAM cycles, L2 fails {}",
        frac * 100.0,
        frac * peak,
        peak,
        s.dram_bandwidth_utilization * 100.0,
        s.dram.row_hits,
        s.dram.row_misses,
        s.dram.row_conflicts,
        s.dram_avg_read_latency,
        s.l2.reservation_fails
    );
    assert!(
        (0.60..=0.92).contains(&frac),
        "achieved {:.1}% of peak",
        frac * 100.0
    );
    // Every channel carried a similar share.
    let (mn, mx) = (
        *s.dram_channel_accesses.iter().min().unwrap(),
        *s.dram_channel_accesses.iter().max().unwrap(),
    );
    assert!(mx as f64 <= mn as f64 * 1.25, "channel imbalance {mn}..{mx}");
}

#[test]
fn deterministic() {
    let cfg = MemoryConfig::a6000_like();
    let (a, fa) = stream(&cfg, 16, 3000, 1000);
    let (b, fb) = stream(&cfg, 16, 3000, 1000);
    assert_eq!(a, b);
    assert_eq!(fa, fb);
    // Full path with L1s, mixed kinds.
    let run = || {
        let cfg = MemoryConfig::t4_like();
        let mut rig = Rig::new(&cfg, 4);
        let mut out = Vec::new();
        let mut id = 0;
        for round in 0..200u64 {
            for sm in 0..4 {
                id += 1;
                let base = (round * 7919 + sm as u64 * 104_729) % (1 << 22) * 4;
                let kind = match round % 5 {
                    0 => AccessKind::Store,
                    1 => AccessKind::Atomic,
                    _ => AccessKind::Load,
                };
                let r = warp(id, MemSpace::Global, kind, base, 4 * (1 + round % 3), 4);
                let now = rig.now;
                let _ = rig.sms[sm].access(now, &r);
            }
            for _ in 0..3 {
                rig.step(&mut out);
            }
        }
        rig.drain();
        (
            out,
            rig.mem.stats(),
            rig.sms.iter().map(|s| s.stats().clone()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(run(), run());
}

#[test]
fn config_from_partial_toml() {
    let cfg: MemoryConfig = toml::from_str(
        r#"
        [l2]
        partitions = 24
        hashing = "xor"
        [dram]
        type = "hbm3"
        [dram.timing]
        t_rcd = 30
        "#,
    )
    .unwrap();
    assert_eq!(cfg.l2.partitions, 24);
    assert_eq!(cfg.l2.hashing, Hashing::Xor);
    assert_eq!(cfg.dram.timing.t_rcd, 30);
    assert_eq!(cfg.l1d.latency, 32);
    for t in [
        DramType::Gddr6,
        DramType::Gddr6x,
        DramType::Gddr7,
        DramType::Hbm2e,
        DramType::Hbm3,
    ] {
        let mut c = MemoryConfig::a6000_like();
        c.dram = DramConfig::preset(t);
        c.validate().unwrap();
        assert_eq!(c.dram.burst_bytes(), 32, "{t:?}");
    }
}

/// Streams line reads from 84 SMs that never take their responses, for `cycles`: the
/// response network and the L2 slices' output queues fill, the slices stop applying DRAM
/// fills, and the DRAM data waits in the return queues.
fn stream_unanswered(return_queue_entries: u32, cycles: u64) -> MemStats {
    let mut cfg = MemoryConfig::a6000_like();
    cfg.l2.queue_l2_to_icnt = 1;
    cfg.dram.return_queue_entries = return_queue_entries;
    stream_with(&cfg, 84, cycles, 0, false).0
}

/// A full return queue stalls the channel's reads (docs/memory.md, "DRAM channels"; the
/// back-pressure of Accel-Sim's `returnq`): with one entry per slice the channels read at
/// least a fifth less than with 192 in the same time (measured 22,340 vs 31,184 reads; when
/// the data of a blocked read waited in an unbounded list instead, 43,608 vs 31,200).
#[test]
fn full_return_queue_stalls_dram_reads() {
    let small = stream_unanswered(1, 6_000);
    let large = stream_unanswered(192, 6_000);
    assert!(
        small.dram.return_stall_cycles > 0,
        "no return stall: {:?}",
        small.dram
    );
    assert!(
        small.dram.reads * 5 < large.dram.reads * 4,
        "reads with a one-entry return queue {} vs 192 entries {}",
        small.dram.reads,
        large.dram.reads
    );
}

#[test]
fn an_atomics_response_returns_its_lanes_data_whether_it_hit_or_missed() {
    // 32 lanes × 4 B on one line: the response returns the 32 old values (128 B) after an
    // L2 miss as after a hit (the miss path returned 4 B per sector before).
    let cfg = MemoryConfig::t4_like();
    let mut rig = Rig::new(&cfg, 1);
    let header = u64::from(cfg.icnt.header_bytes);
    let mut response_bytes = Vec::new();
    for id in [1, 2] {
        let before = rig.mem.stats().icnt_responses.bytes;
        rig.run_one(&warp(id, MemSpace::Global, AccessKind::Atomic, 0x8000, 4, 4));
        rig.drain();
        response_bytes.push(rig.mem.stats().icnt_responses.bytes - before);
    }
    let m = rig.mem.stats();
    assert_eq!((m.l2.atomic_misses, m.l2.atomic_hits), (1, 1));
    assert_eq!(response_bytes, [header + 128, header + 128]);
}

#[test]
fn a_load_after_atomics_on_many_lines_of_a_slice_waits_for_each_result() {
    // Six lines of one L2 slice, warm in the L2; one contended atomic on each (32 lanes on
    // one address: the atomic unit is busy ~41 cycles for each), then a load of the first
    // line. The load hits in the L2 and must wait for that line's atomic result, however
    // many other lines had atomics since (a ring of the last four forgot it before).
    let cfg = MemoryConfig::t4_like();
    let map = AddressMapping::new(&cfg);
    let slice = map.slice(0x40_0000);
    let lines: Vec<u64> = (0..4096u64)
        .map(|i| 0x40_0000 + i * 128)
        .filter(|&a| map.slice(a) == slice)
        .take(6)
        .collect();
    assert_eq!(lines.len(), 6);
    let mut rig = Rig::new(&cfg, 1);
    for (i, &a) in lines.iter().enumerate() {
        rig.run_one(&load(100 + i as u64, a));
    }
    rig.drain();
    let now = rig.now;
    for (i, &a) in lines.iter().enumerate() {
        let atomic = warp(1 + i as u64, MemSpace::Global, AccessKind::Atomic, a, 0, 4);
        assert!(matches!(rig.sms[0].access(now, &atomic), AccessOutcome::Pending));
    }
    assert!(matches!(
        rig.sms[0].access(now, &load(7, lines[0])),
        AccessOutcome::Pending
    ));
    let mut done = Vec::new();
    while done.len() < 7 {
        rig.step(&mut done);
        assert!(rig.now < now + 20_000, "did not complete");
    }
    let at = |id: u64| done.iter().find(|d| d.1 == id).map(|d| d.2).expect("completed");
    assert!(
        at(7) >= at(1),
        "the load of the first line completed at {} before its atomic's result at {}",
        at(7),
        at(1)
    );
    assert_eq!(rig.mem.stats().l2.reads_after_atomic, 1);
}
