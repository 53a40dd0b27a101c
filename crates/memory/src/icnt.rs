//! Crossbar interconnect: one instance per direction (SM→L2 requests, L2→SM responses).
//!
//! Every source has an input queue; each icnt cycle, sources are visited round-robin and
//! the head packet is sent if the source port and the destination port are free and the
//! destination has a credit. A packet of `b` bytes occupies both ports for
//! `ceil(ceil(b / flit) / flits_per_cycle)` cycles and arrives `latency + that − 1`
//! cycles later; per destination, arrivals are in send order.
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

/// A packet waiting at its source: (destination, bytes, packet).
pub(crate) type SrcEntry<T> = (usize, u32, T);
/// A packet at (or travelling to) its destination: (icnt cycle it arrives, packet).
pub(crate) type DstEntry<T> = (u64, T);

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
    pub fn set(&mut self, i: usize, on: bool) {
        if on {
            self.insert(i);
        } else {
            self.remove(i);
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
    /// [`Crossbar::has_packets`]); the others are not visited.
    active: PortSet,
    rr: usize,
    pub stats: IcntStats,
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
            rr: 0,
            stats: IcntStats::default(),
        }
    }

    /// Source `src`'s queue holds a packet (`true`) or is empty.
    #[inline]
    pub fn has_packets(&mut self, src: usize, yes: bool) {
        self.active.set(src, yes);
    }

    /// One icnt cycle: the sources with packets, round-robin from this cycle's first.
    pub fn cycle<T: Copy, S, D>(&mut self, now: u64, src: &mut S, dst: &mut D)
    where
        S: Ports<SrcEntry<T>> + ?Sized,
        D: Ports<DstEntry<T>> + ?Sized,
    {
        let n = self.src_busy.len();
        if n == 0 {
            return;
        }
        let rr = self.rr;
        for (lo, hi) in [(rr, n), (0, rr)] {
            let mut w = lo / 64;
            while w * 64 < hi {
                let mut bits = self.active.word_in(w, lo, hi);
                while bits != 0 {
                    let s = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if !self.send(now, s, src, dst) {
                        self.active.remove(s);
                    }
                }
                w += 1;
            }
        }
        self.rr = (rr + 1) % n;
    }

    /// Source `s` sends its head packet if it can; false when its queue is (then) empty.
    #[inline]
    fn send<T: Copy, S, D>(&mut self, now: u64, s: usize, src: &mut S, dst: &mut D) -> bool
    where
        S: Ports<SrcEntry<T>> + ?Sized,
        D: Ports<DstEntry<T>> + ?Sized,
    {
        let Some(&(d, bytes, t)) = src.queue(s).front() else {
            return false;
        };
        if self.src_busy[s] > now || self.dst_busy[d] > now || dst.queue(d).len() >= self.dst_cap {
            self.stats.blocked += 1;
            return true;
        }
        let flits = bytes.div_ceil(self.flit_bytes).max(1);
        let ser = flits.div_ceil(self.flits_per_cycle) as u64;
        self.src_busy[s] = now + ser;
        self.dst_busy[d] = now + ser;
        dst.queue(d).push_back((now + self.latency + ser - 1, t));
        dst.arrived(d);
        let q = src.queue(s);
        q.pop_front();
        let more = !q.is_empty();
        self.stats.packets += 1;
        self.stats.bytes += bytes as u64;
        self.stats.flits += flits as u64;
        more
    }
}
