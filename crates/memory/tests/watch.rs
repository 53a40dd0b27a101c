//! `MemorySystem::watched_sms` lists every SM whose input-queue room changed or that has a
//! response since the last call: visiting only those (as the GPU's serial part of a cycle
//! does) loses nothing.

use sassim_memory::*;

#[test]
fn unwatched_sms_have_no_news() {
    let cfg = MemoryConfig::a6000_like();
    let sms = 16;
    let mut mem = MemorySystem::new(&cfg, sms);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // The room of each SM's queue as last seen.
    let mut room: Vec<usize> = (0..sms).map(|s| mem.port_room(s)).collect();
    let mut watched = Vec::new();
    let (mut responses, mut skipped, mut pushed) = (0u64, 0u64, 0u64);
    let cycles = 4_000;
    for now in 0..cycles + 2_000 {
        // Bursts from a few SMs at a time (the others idle), stopping after `cycles`.
        for sm in 0..sms {
            let r = rand();
            if now >= cycles || !(now / 200 + sm as u64).is_multiple_of(4) || r % 3 == 0 {
                continue;
            }
            let req = L2Request {
                addr: ((r >> 16) % (1 << 14)) << 7,
                sectors: ((r >> 40) as u8) | 1,
                kind: if r % 5 == 0 {
                    L2ReqKind::Write
                } else {
                    L2ReqKind::Read
                },
                bytes: if r % 5 == 0 { 32 } else { 0 },
                atomic_lanes: 1,
                atomic_max_same: 1,
                tag: (r >> 48) as u32,
            };
            if mem.push(now, sm, req) {
                pushed += 1;
            }
        }
        mem.tick(now);
        mem.watched_sms(&mut watched);
        assert!(watched.windows(2).all(|w| w[0] < w[1]), "{watched:?}");
        for (s, seen) in room.iter_mut().enumerate() {
            if watched.contains(&s) {
                *seen = mem.port_room(s);
                while mem.pop_response(s).is_some() {
                    responses += 1;
                }
            } else {
                skipped += 1;
                assert_eq!(mem.port_room(s), *seen, "SM {s} at cycle {now}");
                assert!(!mem.has_response(s), "SM {s} at cycle {now}");
            }
        }
    }
    assert!(
        pushed > 5_000 && responses > 4_000,
        "{pushed} requests, {responses} responses"
    );
    // Many visits are saved (idle SMs, and busy ones between bursts); once everything
    // drained, no SM is watched.
    assert!(skipped > (cycles + 2_000) * sms as u64 / 4, "{skipped} skipped");
    assert!(mem.is_idle());
    mem.watched_sms(&mut watched);
    assert!(watched.is_empty(), "{watched:?}");
}
