//! Crossbar interconnect: one instance per direction (SM→L2 requests, L2→SM responses).
//!
//! Every source has an input queue; each icnt cycle, sources are visited round-robin and
//! the head packet is sent if the source port and the destination port are free and the
//! destination has a credit. A packet of `b` bytes occupies both ports for
//! `ceil(ceil(b / flit) / flits_per_cycle)` cycles and arrives `latency + that − 1`
//! cycles later; per destination, arrivals are in send order.
//!
//! A source whose head packet is blocked is not visited again until it may go: until the
//! later of its port's and the destination port's busy ends (on a timing wheel), or, when
//! only the destination's queue is full, until that queue has room (checked once per
//! destination and cycle). Its blocked source-cycles are counted in bulk, so
//! [`IcntStats::blocked`] is the same as if every source were visited every cycle.
//!
//! The crossbar holds the arbitration state; the queues are held by their ends (the SMs'
//! side by [`crate::MemorySystem`], the L2 slices' side by their memory partitions, which
//! tick in parallel) and reached through [`Ports`].

use std::collections::VecDeque;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IcntStats {
    pub packets: u64,
    pub bytes: u64,
    pub flits: u64,
    /// Source-cycles where a head packet could not go (port busy or no credit).
    pub blocked: u64,
}

/// A packet waiting at its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SrcEntry<T> {
    /// Its destination port.
    pub(crate) dst: usize,
    /// Its size in bytes, header included (its flits follow from it).
    pub(crate) bytes: u32,
    pub(crate) packet: T,
}

/// A packet at (or travelling to) its destination: `at` is the interconnect cycle it
/// arrives, `item` the packet.
pub(crate) type DstEntry<T> = crate::types::Due<T>;

/// The queues of one side of a crossbar, by port.
pub(crate) trait Ports<E> {
    fn queue(&mut self, i: usize) -> &mut VecDeque<E>;
    /// A packet was put into queue `i`.
    fn arrived(&mut self, _i: usize) {}
}

impl<E> Ports<E> for [VecDeque<E>] {
    #[inline]
    fn queue(&mut self, i: usize) -> &mut VecDeque<E> {
        &mut self[i]
    }
}

/// A set of port indices (one bit each).
#[derive(Debug, Clone, Default)]
pub(crate) struct PortSet(Vec<u64>);

impl PortSet {
    pub fn new(n: usize) -> Self {
        PortSet(vec![0; n.div_ceil(64)])
    }

    #[inline]
    pub fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    #[inline]
    pub fn remove(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }

    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    /// Visits the members in increasing order and removes those `keep` returns false for
    /// (`keep` may not add members).
    #[inline]
    pub fn retain(&mut self, mut keep: impl FnMut(usize) -> bool) {
        for w in 0..self.0.len() {
            let mut bits = self.0[w];
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if !keep(i) {
                    self.0[w] &= !(1 << (i % 64));
                }
            }
        }
    }

    /// Moves every member into `to` and out of `out_of`; the set is then empty.
    #[inline]
    pub fn drain_into(&mut self, to: &mut PortSet, out_of: &mut PortSet) {
        for (w, bits) in self.0.iter_mut().enumerate() {
            to.0[w] |= *bits;
            out_of.0[w] &= !*bits;
            *bits = 0;
        }
    }

    /// Words of the set (64 members each).
    #[inline]
    pub fn words(&self) -> usize {
        self.0.len()
    }

    /// The members among `w * 64 .. w * 64 + 63` that are in `lo..hi`, as bits. A loop
    /// over the words, then over the bits of a copy, visits the members in increasing order
    /// while the set may change.
    #[inline]
    pub fn word_in(&self, w: usize, lo: usize, hi: usize) -> u64 {
        let base = w * 64;
        let mut bits = self.0[w];
        if lo > base {
            bits &= !0u64 << (lo - base);
        }
        if hi < base + 64 {
            bits &= (1u64 << (hi - base)) - 1;
        }
        bits
    }
}

/// Cycles ahead a blocked source can be put to sleep on the timing wheel (a power of two).
/// A source blocked for longer wakes early, is visited (and counted) as usual, and sleeps
/// again; this is a bound of the data structure, not of the modelled hardware.
const WHEEL: usize = 64;

/// The sources that wake at one cycle of the timing wheel.
#[derive(Debug, Clone)]
struct WakeSlot {
    sources: PortSet,
    /// How many sources, and the sum of the first cycles they sleep (blocked, uncounted).
    count: u64,
    from_sum: u64,
}

/// The sources waiting for a credit (queue room) at one destination.
#[derive(Debug, Clone)]
struct CreditWait {
    sources: PortSet,
    count: u64,
}

/// The arbitration state of a crossbar.
#[derive(Debug, Clone)]
pub(crate) struct Crossbar {
    latency: u64,
    flit_bytes: u32,
    flits_per_cycle: u32,
    pub src_cap: usize,
    dst_cap: usize,
    src_busy: Vec<u64>,
    dst_busy: Vec<u64>,
    /// Sources whose queue may hold a packet (kept by the queues' owners through
    /// [`Crossbar::has_packets`]); only those not parked are visited.
    active: PortSet,
    /// Sources asleep on the wheel or waiting for a credit; their queues hold packets.
    parked: PortSet,
    /// Slot `c % WHEEL`: the sources that wake at cycle `c`.
    wheel: Vec<WakeSlot>,
    /// Sums over the wheel's slots (for the blocked cycles not yet counted).
    asleep: u64,
    asleep_from_sum: u64,
    /// Per destination, the sources waiting for room in its queue.
    credit: Vec<CreditWait>,
    /// Destinations with sources waiting for room.
    full: PortSet,
    /// The last cycle run.
    now: u64,
    rr: usize,
    stats: IcntStats,
}

/// What a visited source did.
enum Visit {
    Sent {
        more: bool,
    },
    Empty,
    /// The head packet, for destination `d`, could not go.
    Blocked {
        d: usize,
    },
}

impl Crossbar {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        sources: usize,
        dests: usize,
        latency: u32,
        flit_bytes: u32,
        flits_per_cycle: u32,
        src_cap: usize,
        dst_cap: usize,
    ) -> Self {
        Self {
            latency: latency as u64,
            flit_bytes: flit_bytes.max(1),
            flits_per_cycle: flits_per_cycle.max(1),
            src_cap: src_cap.max(1),
            dst_cap: dst_cap.max(1),
            src_busy: vec![0; sources],
            dst_busy: vec![0; dests],
            active: PortSet::new(sources),
            parked: PortSet::new(sources),
            wheel: (0..WHEEL)
                .map(|_| WakeSlot {
                    sources: PortSet::new(sources),
                    count: 0,
                    from_sum: 0,
                })
                .collect(),
            asleep: 0,
            asleep_from_sum: 0,
            credit: (0..dests)
                .map(|_| CreditWait {
                    sources: PortSet::new(sources),
                    count: 0,
                })
                .collect(),
            full: PortSet::new(dests),
            now: 0,
            rr: 0,
            stats: IcntStats::default(),
        }
    }

    /// Source `src`'s queue holds a packet (`true`) or is empty. A parked source's queue
    /// keeps its head packet (only [`Crossbar::cycle`] pops it), so it stays parked: the
    /// visits skip parked sources whether or not they are marked active.
    #[inline]
    pub fn has_packets(&mut self, src: usize, yes: bool) {
        let (w, bit) = (src / 64, 1u64 << (src % 64));
        if yes {
            self.active.0[w] |= bit;
        } else {
            self.active.0[w] &= !bit;
        }
    }

    /// The last cycle run and the first source of the next cycle's round robin: all that
    /// a cycle without packets changes ([`Crossbar::set_clock`]).
    pub fn clock(&self) -> (u64, usize) {
        (self.now, self.rr)
    }

    /// Back to [`Crossbar::clock`]'s answer after cycles without packets.
    pub fn set_clock(&mut self, (now, rr): (u64, usize)) {
        self.now = now;
        self.rr = rr;
    }

    /// Packets a destination queue holds before it blocks the crossbar.
    #[inline]
    pub fn dst_cap(&self) -> usize {
        self.dst_cap
    }

    /// The counters, with the blocked cycles of the sleeping sources up to the last cycle.
    pub fn stats(&self) -> IcntStats {
        let mut s = self.stats.clone();
        s.blocked += self.asleep * (self.now + 1) - self.asleep_from_sum;
        s
    }

    /// Zero the counters (sleeping sources count from the next cycle).
    pub fn reset_stats(&mut self) {
        self.stats = IcntStats::default();
        let next = self.now + 1;
        for slot in &mut self.wheel {
            slot.from_sum = slot.count * next;
        }
        self.asleep_from_sum = self.asleep * next;
    }

    /// One icnt cycle (`now` is one more than the last call's): the sources that wake or
    /// whose destination has room again join the sources with packets, which are visited
    /// round-robin from this cycle's first.
    pub fn cycle<T: Copy, S, D>(&mut self, now: u64, src: &mut S, dst: &mut D)
    where
        S: Ports<SrcEntry<T>> + ?Sized,
        D: Ports<DstEntry<T>> + ?Sized,
    {
        let n = self.src_busy.len();
        if n == 0 {
            return;
        }
        debug_assert!(now == self.now + 1 || self.now == 0);
        self.now = now;
        let slot = &mut self.wheel[now as usize % WHEEL];
        if slot.count > 0 {
            // Asleep from `from` to `now - 1`, blocked every one of those cycles.
            self.stats.blocked += slot.count * now - slot.from_sum;
            self.asleep -= slot.count;
            self.asleep_from_sum -= slot.from_sum;
            slot.count = 0;
            slot.from_sum = 0;
            slot.sources.drain_into(&mut self.active, &mut self.parked);
        }
        for w in 0..self.full.words() {
            let mut bits = self.full.word_in(w, 0, usize::MAX);
            while bits != 0 {
                let d = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if dst.queue(d).len() >= self.dst_cap {
                    self.stats.blocked += self.credit[d].count;
                } else {
                    self.credit_to(d, now);
                }
            }
        }
        let rr = self.rr;
        // The next cycle's round robin starts one source further (a compare, not a division).
        self.rr = if rr + 1 >= n { 0 } else { rr + 1 };
        // No source with a packet that may go: nothing to visit (most cycles of a kernel
        // whose SMs send little).
        if (0..self.active.words()).all(|w| self.active.0[w] & !self.parked.0[w] == 0) {
            return;
        }
        for (lo, hi) in [(rr, n), (0, rr)] {
            let mut w = lo / 64;
            while w * 64 < hi {
                let mut bits = self.active.word_in(w, lo, hi) & !self.parked.0[w];
                while bits != 0 {
                    let s = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    match self.send(now, s, src, dst) {
                        Visit::Sent { more: true } => {}
                        Visit::Sent { more: false } | Visit::Empty => self.active.remove(s),
                        Visit::Blocked { d } => self.park(now, s, d),
                    }
                }
                w += 1;
            }
        }
    }

    /// Destination `d`'s queue has room at `now`: the sources waiting for it may go. At most
    /// one packet enters a destination a cycle (its port is then busy), so only the first
    /// waiting source in this cycle's round-robin order is visited: a source visited before
    /// it that was not waiting may still take the room (the one woken is then blocked and
    /// parked as usual). The others are blocked this cycle as they would be if visited, and
    /// keep waiting; they are counted here. (A source waits for room only when its port was
    /// free, and it sends nothing while it waits.) While the destination's port is busy
    /// (another source sent to it since), none can go: all wake, and each sleeps on the wheel
    /// until the port is free.
    #[inline]
    fn credit_to(&mut self, d: usize, now: u64) {
        let wait = &mut self.credit[d];
        if self.dst_busy[d] > now {
            wait.count = 0;
            wait.sources.drain_into(&mut self.active, &mut self.parked);
            self.full.remove(d);
            return;
        }
        let n = self.src_busy.len();
        let in_range = |lo: usize, hi: usize| {
            (lo / 64..hi.div_ceil(64)).find_map(|w| {
                let bits = wait.sources.word_in(w, lo, hi);
                (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
            })
        };
        let Some(s) = in_range(self.rr, n).or_else(|| in_range(0, self.rr)) else {
            return;
        };
        debug_assert!(self.src_busy[s] <= now, "a waiting source sent");
        wait.sources.remove(s);
        wait.count -= 1;
        self.stats.blocked += wait.count;
        self.parked.remove(s);
        self.active.insert(s);
        if wait.count == 0 {
            self.full.remove(d);
        }
    }

    /// Source `s`, blocked (and counted) at `now`, sleeps until its head packet may go:
    /// on the wheel while a port is busy, at the destination while only its queue is full.
    #[inline]
    fn park(&mut self, now: u64, s: usize, d: usize) {
        let until = self.src_busy[s].max(self.dst_busy[d]);
        if until > now {
            if until == now + 1 {
                return; // visited again next cycle anyway
            }
            let wake = until.min(now + WHEEL as u64 - 1);
            let slot = &mut self.wheel[wake as usize % WHEEL];
            slot.sources.insert(s);
            slot.count += 1;
            slot.from_sum += now + 1;
            self.asleep += 1;
            self.asleep_from_sum += now + 1;
        } else {
            let wait = &mut self.credit[d];
            wait.sources.insert(s);
            wait.count += 1;
            self.full.insert(d);
        }
        self.active.remove(s);
        self.parked.insert(s);
    }

    /// Source `s` sends its head packet if it can.
    #[inline]
    fn send<T: Copy, S, D>(&mut self, now: u64, s: usize, src: &mut S, dst: &mut D) -> Visit
    where
        S: Ports<SrcEntry<T>> + ?Sized,
        D: Ports<DstEntry<T>> + ?Sized,
    {
        let Some(&SrcEntry {
            dst: d,
            bytes,
            packet,
        }) = src.queue(s).front()
        else {
            return Visit::Empty;
        };
        if self.src_busy[s] > now || self.dst_busy[d] > now || dst.queue(d).len() >= self.dst_cap {
            self.stats.blocked += 1;
            return Visit::Blocked { d };
        }
        let flits = bytes.div_ceil(self.flit_bytes).max(1);
        let ser = flits.div_ceil(self.flits_per_cycle) as u64;
        self.src_busy[s] = now + ser;
        self.dst_busy[d] = now + ser;
        dst.queue(d).push_back(DstEntry {
            at: now + self.latency + ser - 1,
            item: packet,
        });
        dst.arrived(d);
        let q = src.queue(s);
        q.pop_front();
        let more = !q.is_empty();
        self.stats.packets += 1;
        self.stats.bytes += bytes as u64;
        self.stats.flits += flits as u64;
        Visit::Sent { more }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain rule: every cycle, every source with a packet, round-robin; no skipping.
    struct Reference {
        latency: u64,
        flit_bytes: u32,
        flits_per_cycle: u32,
        dst_cap: usize,
        src_busy: Vec<u64>,
        dst_busy: Vec<u64>,
        rr: usize,
        stats: IcntStats,
    }

    impl Reference {
        fn cycle(
            &mut self,
            now: u64,
            src: &mut [VecDeque<SrcEntry<u32>>],
            dst: &mut [VecDeque<DstEntry<u32>>],
        ) {
            let n = src.len();
            for k in 0..n {
                let s = (self.rr + k) % n;
                let Some(&SrcEntry {
                    dst: d,
                    bytes,
                    packet,
                }) = src[s].front()
                else {
                    continue;
                };
                if self.src_busy[s] > now || self.dst_busy[d] > now || dst[d].len() >= self.dst_cap {
                    self.stats.blocked += 1;
                    continue;
                }
                let flits = bytes.div_ceil(self.flit_bytes).max(1);
                let ser = flits.div_ceil(self.flits_per_cycle) as u64;
                self.src_busy[s] = now + ser;
                self.dst_busy[d] = now + ser;
                dst[d].push_back(DstEntry {
                    at: now + self.latency + ser - 1,
                    item: packet,
                });
                src[s].pop_front();
                self.stats.packets += 1;
                self.stats.bytes += bytes as u64;
                self.stats.flits += flits as u64;
            }
            self.rr = (self.rr + 1) % n;
        }
    }

    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// Random traffic (pushes, one or two crossbar cycles, then pops of arrived packets, as
    /// between core cycles) into the crossbar and the reference: after every cycle the
    /// queues and the counters, `blocked` included, are the same.
    fn compare(
        seed: u64,
        sources: usize,
        dests: usize,
        push_per_mille: u64,
        pop_per_mille: u64,
    ) -> IcntStats {
        compare_with(
            seed,
            sources,
            dests,
            push_per_mille,
            pop_per_mille,
            (3, 32, 1, 4, 2),
        )
    }

    /// [`compare`] for a crossbar of (latency, flit bytes, flits per cycle, source queue
    /// capacity, destination queue capacity).
    fn compare_with(
        seed: u64,
        sources: usize,
        dests: usize,
        push_per_mille: u64,
        pop_per_mille: u64,
        (latency, flit, fpc, src_cap, dst_cap): (u32, u32, u32, usize, usize),
    ) -> IcntStats {
        let mut x = Crossbar::new(sources, dests, latency, flit, fpc, src_cap, dst_cap);
        let mut r = Reference {
            latency: latency as u64,
            flit_bytes: flit,
            flits_per_cycle: fpc,
            dst_cap,
            src_busy: vec![0; sources],
            dst_busy: vec![0; dests],
            rr: 0,
            stats: IcntStats::default(),
        };
        let mut xs: Vec<VecDeque<SrcEntry<u32>>> = vec![VecDeque::new(); sources];
        let mut xd: Vec<VecDeque<DstEntry<u32>>> = vec![VecDeque::new(); dests];
        let (mut rs, mut rd) = (xs.clone(), xd.clone());
        let mut rng = Rng(seed);
        let mut total = IcntStats::default();
        let (mut now, mut id) = (0u64, 0u32);
        // Serialisations of 1, 2, 3 and 5 cycles, and one longer than the wake wheel.
        let sizes = [8, 40, 72, 136, 32 * (WHEEL as u32 + 9)];
        while now < 4000 {
            for s in 0..sources {
                if xs[s].len() < src_cap && rng.below(1000) < push_per_mille {
                    let d = rng.below(dests as u64) as usize;
                    let k = rng.below(100);
                    let bytes = sizes[if k == 0 { 4 } else { (k % 4) as usize }];
                    let e = SrcEntry {
                        dst: d,
                        bytes,
                        packet: id,
                    };
                    xs[s].push_back(e);
                    rs[s].push_back(e);
                    x.has_packets(s, true);
                    id += 1;
                }
            }
            for _ in 0..1 + rng.below(2) {
                now += 1;
                x.cycle(now, &mut xs[..], &mut xd[..]);
                r.cycle(now, &mut rs, &mut rd);
                assert_eq!(x.stats(), r.stats, "cycle {now}");
                assert_eq!(xd, rd, "cycle {now}");
                assert_eq!(xs, rs, "cycle {now}");
            }
            for d in 0..dests {
                if xd[d].front().is_some_and(|e| e.at <= now) && rng.below(1000) < pop_per_mille {
                    xd[d].pop_front();
                    rd[d].pop_front();
                }
            }
            if now % 1500 < 2 {
                total.blocked += r.stats.blocked;
                total.packets += r.stats.packets;
                x.reset_stats();
                r.stats = IcntStats::default();
            }
        }
        total.blocked += r.stats.blocked;
        total.packets += r.stats.packets;
        total
    }

    #[test]
    fn skipping_blocked_sources_matches_the_plain_rule() {
        // More than 64 sources (two words of a port set); heavy, medium and light load,
        // slow and fast draining destinations.
        for (seed, sources, dests, push, pop) in [
            (0x9e37_79b9_7f4a_7c15, 70, 9, 300, 150),
            (0x2545_f491_4f6c_dd1d, 70, 9, 60, 900),
            (0x1234_5678_9abc_def1, 5, 3, 500, 200),
            (0x0bad_cafe_f00d_1234, 130, 40, 20, 500),
        ] {
            let t = compare(seed, sources, dests, push, pop);
            assert!(t.packets > 1000 && t.blocked > 1000, "too little traffic: {t:?}");
        }
    }

    /// Many sources on one to three destinations with one to three queue entries each, slow
    /// draining, latencies 0-5 and one or two flits a cycle: sources wait for room most
    /// cycles, several for each destination, and ports stay busy across the wake-ups.
    #[test]
    fn heavy_contention_matches_the_plain_rule() {
        let mut pick = Rng(0x5851_f42d_4c95_7f2d);
        let (mut waits, mut packets) = (0, 0);
        for seed in 0..200 {
            let sources = [3, 64, 70, 130][seed % 4] + pick.below(8) as usize;
            let dests = 1 + pick.below(3) as usize;
            let shape = (
                pick.below(6) as u32,
                [8, 16, 32][pick.below(3) as usize],
                1 + pick.below(2) as u32,
                1 + pick.below(6) as usize,
                1 + pick.below(3) as usize,
            );
            let push = 100 + pick.below(800);
            let pop = 50 + pick.below(400);
            let t = compare_with(0x9e37_79b9 ^ seed as u64, sources, dests, push, pop, shape);
            packets += t.packets;
            waits += t.blocked;
        }
        assert!(
            packets > 100_000 && waits > 10 * packets,
            "{packets} packets, {waits} blocked"
        );
    }
}
