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

/// The SMs' ports handed out by `step_parts` (in a permuted slot order, as the GPU orders
/// them by simulated SM) behave as the system's own `push` and `pop_response` by port: two
/// systems under the same traffic, one driven each way, deliver the same responses in the
/// same cycles, refuse the same requests and end with the same statistics.
#[test]
fn ports_by_slot_behave_as_the_system_by_port() {
    let cfg = MemoryConfig::a6000_like();
    let sms = 12;
    // Slot i holds port order[i]; ports 10 and 11 are not named (they follow, in order).
    let order = [7usize, 2, 9, 0, 5, 3, 8, 1, 6, 4];
    let mut by_port = MemorySystem::new(&cfg, sms);
    let mut by_slot = MemorySystem::new(&cfg, sms);
    by_slot.set_port_order(&order);
    let slot_of = |p: usize| order.iter().position(|&o| o == p).unwrap_or(p);
    for (slot, &p) in order.iter().enumerate() {
        assert_eq!(by_slot.port_of_slot(slot), p);
    }
    assert_eq!(by_slot.port_of_slot(11), 11);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut delivered, mut refused) = (0u64, 0u64);
    for now in 0..60_000u64 {
        if now > 4_000 && by_port.is_idle() && by_slot.is_idle() {
            break;
        }
        // This cycle's requests, by port (a burst per port now and then).
        let mut reqs: Vec<Vec<L2Request>> = vec![Vec::new(); sms];
        for (p, rs) in reqs.iter_mut().enumerate() {
            let r = rand();
            if now >= 4_000 || !(now / 150 + p as u64).is_multiple_of(3) {
                continue;
            }
            for k in 0..(r % 4) {
                rs.push(L2Request {
                    addr: (((r >> 16) + k * 977) % (1 << 14)) << 7,
                    sectors: ((r >> 40) as u8) | 1,
                    kind: if (r + k) % 5 == 0 {
                        L2ReqKind::Write
                    } else {
                        L2ReqKind::Read
                    },
                    bytes: if (r + k) % 5 == 0 { 32 } else { 0 },
                    atomic_lanes: 1,
                    atomic_max_same: 1,
                    tag: (r >> 48) as u32 + k as u32,
                });
            }
        }
        // The step: each SM takes its responses, then pushes at its port.
        let mut got_port: Vec<Vec<L2Response>> = vec![Vec::new(); sms];
        let mut got_slot: Vec<Vec<L2Response>> = vec![Vec::new(); sms];
        let mut ok_port = Vec::new();
        let mut ok_slot = Vec::new();
        for p in 0..sms {
            while let Some(r) = by_port.pop_response(p) {
                got_port[p].push(r);
            }
            for r in &reqs[p] {
                ok_port.push(by_port.push(now, p, *r));
            }
        }
        let mut pushed = Vec::new();
        {
            let sp = by_slot.step_parts();
            for p in 0..sms {
                let port = &mut sp.ports[slot_of(p)];
                while let Some(r) = port.pop_response(&sp.at) {
                    got_slot[p].push(r);
                }
                let mut any = false;
                for r in &reqs[p] {
                    let ok = port.push(&sp.at, *r);
                    any |= ok;
                    ok_slot.push(ok);
                }
                if any {
                    pushed.push(slot_of(p));
                }
            }
        }
        for s in pushed {
            by_slot.pushed(s);
        }
        assert_eq!(got_port, got_slot, "cycle {now}");
        assert_eq!(ok_port, ok_slot, "cycle {now}");
        delivered += got_port.iter().map(|g| g.len() as u64).sum::<u64>();
        refused += ok_port.iter().filter(|&&ok| !ok).count() as u64;
        for p in 0..sms {
            assert_eq!(
                by_port.port_room(p),
                by_slot.port_room(p),
                "port {p}, cycle {now}"
            );
        }
        by_port.tick(now);
        by_slot.tick(now);
    }
    assert!(
        delivered > 3_000 && refused > 50,
        "{delivered} delivered, {refused} refused"
    );
    // The last cycle's responses.
    {
        let sp = by_slot.step_parts();
        for p in 0..sms {
            let port = &mut sp.ports[slot_of(p)];
            while let Some(r) = port.pop_response(&sp.at) {
                assert_eq!(by_port.pop_response(p), Some(r));
            }
            assert_eq!(by_port.pop_response(p), None);
        }
    }
    assert!(by_port.is_idle() && by_slot.is_idle());
    assert_eq!(by_port.stats(), by_slot.stats());
}
