//! Global loads that do not go through the SM's L1: the Tensor Memory Accelerator's reads
//! (Hopper's TMA bypasses the L1, NVIDIA Hopper tuning guide; Luo et al. measured its copies
//! "≈170 cycles higher [than a regular access], despite bypassing L1", arXiv:2501.12084).
//!
//! A warp-wide request is split into one L2 read per 128-byte line (the sectors its lanes
//! touch), sent to the interconnect beside the L1's own misses, and completes when the last
//! line's data has arrived. Nothing is allocated in the L1. docs/model.md "Hopper".

use sassim_memory as mm;
use sassim_memory::coalesce::lane_pieces;
use sassim_timing::exec::MemAccess;
use std::collections::VecDeque;

/// Tags of bypassing reads have this bit set (the L1's own tags are pending-table slots,
/// far below it, or `u32::MAX` for requests without a response).
const TAG_BIT: u32 = 1 << 31;

/// One warp-wide load in flight.
#[derive(Debug, Clone, Copy)]
struct Load {
    id: u64,
    /// Lines whose data has not arrived.
    remaining: u32,
    tag: u32,
}

/// One SM's loads that bypass its L1.
#[derive(Debug)]
pub struct L1Bypass {
    /// The L2's request granularity, log2: 128-byte lines of 32-byte sectors (the L1's).
    line_shift: u32,
    sector_shift: u32,
    /// Reads to send to the interconnect, in order.
    queue: VecDeque<mm::L2Request>,
    loads: Vec<Load>,
    /// Completed load ids.
    done: Vec<u64>,
    next_tag: u32,
}

impl L1Bypass {
    /// `line_bytes` and `sector_bytes` are powers of two (`MemoryConfig::validate`).
    pub fn new(line_bytes: u32, sector_bytes: u32) -> Self {
        L1Bypass {
            line_shift: line_bytes.max(1).trailing_zeros(),
            sector_shift: sector_bytes.max(1).trailing_zeros(),
            queue: VecDeque::new(),
            loads: Vec::new(),
            done: Vec::new(),
            next_tag: 0,
        }
    }

    /// Whether `tag` belongs to a bypassing read.
    pub fn owns(tag: u32) -> bool {
        tag != u32::MAX && tag & TAG_BIT != 0
    }

    pub fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.loads.is_empty()
    }

    /// Queue the reads of load `id` (its lanes' addresses, `bytes` each).
    pub fn load(&mut self, id: u64, acc: &MemAccess) {
        let tag = TAG_BIT | self.next_tag;
        self.next_tag = (self.next_tag + 1) & !TAG_BIT;
        let first = self.queue.len();
        let (line_shift, queue) = (self.line_shift, &mut self.queue);
        lane_pieces(
            &acc.addrs,
            acc.active,
            acc.bytes_per_lane,
            line_shift,
            self.sector_shift,
            |line, mask, _| {
                let addr = line << line_shift;
                match queue.range_mut(first..).find(|r| r.addr == addr) {
                    Some(r) => r.sectors |= mask,
                    None => queue.push_back(mm::L2Request {
                        addr,
                        sectors: mask,
                        kind: mm::L2ReqKind::Read,
                        bytes: 0,
                        atomic_lanes: 0,
                        atomic_max_same: 0,
                        tag,
                    }),
                }
            },
        );
        let remaining = (self.queue.len() - first) as u32;
        if remaining == 0 {
            self.done.push(id);
        } else {
            self.loads.push(Load { id, remaining, tag });
        }
    }

    /// Reads waiting to be sent.
    #[inline]
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Whether reads wait to be sent.
    #[inline]
    pub fn has_queued(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Send queued reads while `send` accepts them.
    #[cold]
    pub fn send(&mut self, send: &mut dyn FnMut(mm::L2Request) -> bool) {
        while let Some(&r) = self.queue.front() {
            if !send(r) {
                return;
            }
            self.queue.pop_front();
        }
    }

    /// A response to one of the reads (`owns(resp.tag)`).
    #[cold]
    pub fn fill(&mut self, resp: mm::L2Response) {
        if let Some(k) = self.loads.iter().position(|l| l.tag == resp.tag) {
            let l = &mut self.loads[k];
            l.remaining -= 1;
            if l.remaining == 0 {
                self.done.push(l.id);
                self.loads.remove(k);
            }
        }
    }

    /// Whether loads completed that [`L1Bypass::completed`] has not reported.
    pub fn has_done(&self) -> bool {
        !self.done.is_empty()
    }

    /// Ids of the loads that completed.
    #[inline]
    pub fn completed(&mut self, out: &mut Vec<u64>) {
        if !self.done.is_empty() {
            out.append(&mut self.done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sassim_timing::inst::MemSpace;

    #[test]
    fn a_load_reads_each_line_once_and_completes_with_its_last_line() {
        let mut acc = MemAccess::blank(MemSpace::Global);
        acc.bytes_per_lane = 16;
        // Lanes 0-7: one 128-byte line; lane 8: the next line's sector 1.
        for lane in 0..9 {
            acc.addrs[lane] = 0x1000 + 16 * lane as u64;
            acc.active |= 1 << lane;
        }
        acc.addrs[8] = 0x10a0;
        let mut b = L1Bypass::new(128, 32);
        b.load(7, &acc);
        let mut sent = Vec::new();
        b.send(&mut |r| {
            sent.push(r);
            true
        });
        assert_eq!(sent.len(), 2);
        assert_eq!((sent[0].addr, sent[0].sectors), (0x1000, 0b1111));
        assert_eq!((sent[1].addr, sent[1].sectors), (0x1080, 0b0010));
        assert!(L1Bypass::owns(sent[0].tag) && !L1Bypass::owns(u32::MAX) && !L1Bypass::owns(3));
        let mut done = Vec::new();
        let resp = |r: &mm::L2Request| mm::L2Response {
            addr: r.addr,
            sectors: r.sectors,
            kind: r.kind,
            tag: r.tag,
        };
        b.fill(resp(&sent[0]));
        b.completed(&mut done);
        assert!(done.is_empty() && !b.is_idle());
        b.fill(resp(&sent[1]));
        b.completed(&mut done);
        assert_eq!(done, vec![7]);
        assert!(b.is_idle());
    }
}
