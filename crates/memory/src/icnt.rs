//! Crossbar interconnect: one instance per direction (SM→L2 requests, L2→SM responses).
//!
//! Every source has an input queue; each icnt cycle, sources are visited round-robin and
//! the head packet is sent if the source port and the destination port are free and the
//! destination has a credit. A packet of `b` bytes occupies both ports for
//! `ceil(ceil(b / flit) / flits_per_cycle)` cycles and arrives `latency + that − 1`
//! cycles later; per destination, arrivals are in send order.

use std::collections::VecDeque;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IcntStats {
    pub packets: u64,
    pub bytes: u64,
    pub flits: u64,
    /// Source-cycles where a head packet could not go (port busy or no credit).
    pub blocked: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct Crossbar<T> {
    latency: u64,
    flit_bytes: u32,
    flits_per_cycle: u32,
    src_cap: usize,
    dst_cap: usize,
    src_q: Vec<VecDeque<(usize, u32, T)>>,
    src_busy: Vec<u64>,
    dst_busy: Vec<u64>,
    dst_q: Vec<VecDeque<(u64, T)>>,
    rr: usize,
    /// Packets in the source queues and in the destination queues (O(1) emptiness checks).
    in_src: usize,
    in_dst: usize,
    pub stats: IcntStats,
}

impl<T: Copy> Crossbar<T> {
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
        let src_cap = src_cap.max(1);
        let dst_cap = dst_cap.max(1);
        Self {
            latency: latency as u64,
            flit_bytes: flit_bytes.max(1),
            flits_per_cycle: flits_per_cycle.max(1),
            src_cap,
            dst_cap,
            src_q: (0..sources).map(|_| VecDeque::with_capacity(src_cap)).collect(),
            src_busy: vec![0; sources],
            dst_busy: vec![0; dests],
            dst_q: (0..dests).map(|_| VecDeque::with_capacity(dst_cap)).collect(),
            rr: 0,
            in_src: 0,
            in_dst: 0,
            stats: IcntStats::default(),
        }
    }

    /// Requests source `src` can still push before its queue is full.
    pub fn room(&self, src: usize) -> usize {
        self.src_cap.saturating_sub(self.src_q[src].len())
    }

    pub fn can_push(&self, src: usize) -> bool {
        self.src_q[src].len() < self.src_cap
    }

    pub fn push(&mut self, src: usize, dst: usize, bytes: u32, t: T) -> bool {
        if !self.can_push(src) {
            return false;
        }
        self.src_q[src].push_back((dst, bytes, t));
        self.in_src += 1;
        true
    }

    /// One icnt cycle.
    pub fn cycle(&mut self, now: u64) {
        let n = self.src_q.len();
        if self.in_src == 0 {
            // Nothing to send: only the round-robin pointer moves.
            if n > 0 {
                self.rr = (self.rr + 1) % n;
            }
            return;
        }
        for k in 0..n {
            let s = (self.rr + k) % n;
            let Some(&(d, bytes, t)) = self.src_q[s].front() else {
                continue;
            };
            if self.src_busy[s] > now || self.dst_busy[d] > now || self.dst_q[d].len() >= self.dst_cap {
                self.stats.blocked += 1;
                continue;
            }
            let flits = bytes.div_ceil(self.flit_bytes).max(1);
            let ser = flits.div_ceil(self.flits_per_cycle) as u64;
            self.src_busy[s] = now + ser;
            self.dst_busy[d] = now + ser;
            self.dst_q[d].push_back((now + self.latency + ser - 1, t));
            self.src_q[s].pop_front();
            self.in_src -= 1;
            self.in_dst += 1;
            self.stats.packets += 1;
            self.stats.bytes += bytes as u64;
            self.stats.flits += flits as u64;
        }
        if n > 0 {
            self.rr = (self.rr + 1) % n;
        }
    }

    /// Head packet delivered at `dst` by icnt cycle `now`.
    /// Whether [`Crossbar::pop`] would return an element.
    pub fn has_ready(&self, dst: usize, now: u64) -> bool {
        matches!(self.dst_q[dst].front(), Some((at, _)) if *at <= now)
    }

    pub fn pop(&mut self, dst: usize, now: u64) -> Option<T> {
        match self.dst_q[dst].front() {
            Some((at, _)) if *at <= now => {
                self.in_dst -= 1;
                self.dst_q[dst].pop_front().map(|(_, t)| t)
            }
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.in_src == 0 && self.in_dst == 0
    }

    /// Whether nothing waits for or travels to destination `dst`.
    pub fn dst_idle(&self, dst: usize) -> bool {
        self.in_src == 0 && self.dst_q[dst].is_empty()
    }
}
