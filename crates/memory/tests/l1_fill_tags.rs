//! An L1 read's response tag names the way and MSHR entry it was requested for, as hints a
//! fill checks against the line (`l1.rs`, `read_tag`): a way given to another line after an
//! invalidation, or a response without the tag, must not change what the fill does.

use sassim_memory::*;

/// A one-lane 4-byte global load of `addr`.
fn load(id: u64, addr: u64) -> WarpMemRequest {
    let mut addrs = [0u64; 32];
    addrs[0] = addr;
    WarpMemRequest {
        id,
        warp: 0,
        space: MemSpace::Global,
        kind: AccessKind::Load,
        addrs,
        active: 1,
        bytes_per_lane: 4,
    }
}

/// The requests the L1 sends by cycle `now`.
fn sent(l1: &mut SmMemory, now: u64) -> Vec<L2Request> {
    let mut out = Vec::new();
    for t in 0..=now {
        l1.tick(t, &mut |r| {
            out.push(r);
            true
        });
    }
    out
}

/// The L2's response to `r` (the tag echoed, or replaced by `tag`).
fn response(r: &L2Request, tag: Option<u32>) -> L2Response {
    L2Response {
        addr: r.addr,
        sectors: r.sectors,
        kind: r.kind,
        tag: tag.unwrap_or(r.tag),
    }
}

/// The ids completed by cycle `now`.
fn completed(l1: &mut SmMemory, now: u64) -> Vec<u64> {
    std::iter::from_fn(|| l1.pop_completed(now).map(|(id, _)| id)).collect()
}

#[test]
fn a_fill_checks_the_way_its_tag_names() {
    let mut cfg = MemoryConfig::a6000_like();
    // One set: after an invalidation, the next line takes the same (first) way.
    cfg.l1d.sets = 1;
    let mut l1 = SmMemory::new(&cfg);
    let (a, b) = (0x10_0000u64, 0x20_0000u64);
    assert_eq!(l1.access(0, &load(1, a)), AccessOutcome::Pending);
    let ra = sent(&mut l1, 100);
    assert_eq!(ra.len(), 1);
    // The kernel ends; line `b` now holds the way `a` was requested for.
    l1.invalidate();
    assert_eq!(l1.access(200, &load(2, b)), AccessOutcome::Pending);
    let rb = sent(&mut l1, 300);
    assert_eq!(rb.len(), 1);
    // `a`'s data arrives: its load completes, `b`'s way stays pending (its sectors are not
    // valid), so another load of `b` waits for `b`'s fill (hit-reserved), not a hit.
    l1.fill(400, response(&ra[0], None));
    assert_eq!(completed(&mut l1, 10_000), vec![1]);
    let hits = l1.stats().hits;
    assert_eq!(l1.access(500, &load(3, b)), AccessOutcome::Pending);
    assert_eq!(l1.stats().hit_reserved, 1);
    assert_eq!(l1.stats().hits, hits);
    // `b`'s response without its tag: the fill looks its line up and completes both.
    l1.fill(600, response(&rb[0], Some(u32::MAX)));
    let mut done = completed(&mut l1, 10_000);
    done.sort_unstable();
    assert_eq!(done, vec![2, 3]);
    assert!(l1.is_idle());
    // `b` is cached; `a` was fetched into no way (its way went to `b`) and misses again.
    assert!(matches!(l1.access(700, &load(4, b)), AccessOutcome::Done { .. }));
    assert_eq!(l1.stats().hits, hits + 1);
    let misses = l1.stats().misses;
    assert_eq!(l1.access(800, &load(5, a)), AccessOutcome::Pending);
    assert_eq!(l1.stats().misses, misses + 1);
}
