//! The SM's event queue: a binary heap of events keyed by (cycle, sequence number), with
//! the cycle of its earliest event kept beside it. `Sm::tick` asks it for due events every
//! cycle; with the earliest cycle kept in the SM's first cache lines, a cycle without due
//! events costs one comparison instead of a read of the heap's storage (a cache miss per SM
//! and cycle on a loaded GPU). A time wheel (a bucket per cycle, 256 cycles ahead) was tried
//! instead of the heap: 0.9 % fewer instructions on the vector add but no faster, its
//! buckets spread over more cache lines than the heap's one array.

use crate::state::Event;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// An event with its cycle and sequence number (the order key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Timed {
    pub(crate) at: u64,
    pub(crate) seq: u64,
    pub(crate) event: Event,
}

#[derive(Debug)]
pub(crate) struct EventQueue {
    /// The cycle of the earliest queued event (`u64::MAX`: none), or a cycle not after it
    /// while a drain is under way (`EventQueue::pop_due`).
    next_at: u64,
    heap: BinaryHeap<Reverse<Timed>>,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            next_at: u64::MAX,
            heap: BinaryHeap::new(),
        }
    }
}

impl EventQueue {
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// A cycle not after the earliest queued event's (`u64::MAX`: none queued): no event
    /// is due before it.
    #[inline]
    pub(crate) fn next_at(&self) -> u64 {
        self.next_at
    }

    /// Queue `event` for cycle `at` with sequence number `seq` (larger than any queued).
    pub(crate) fn push(&mut self, at: u64, seq: u64, event: Event) {
        self.next_at = self.next_at.min(at);
        self.heap.push(Reverse(Timed { at, seq, event }));
    }

    /// The next event due at `now` (its cycle at most `now`): earliest cycle, then lowest
    /// sequence number first.
    #[inline]
    pub(crate) fn pop_due(&mut self, now: u64) -> Option<Event> {
        if self.next_at > now {
            return None;
        }
        self.pop_due_slow(now)
    }

    fn pop_due_slow(&mut self, now: u64) -> Option<Event> {
        match self.heap.peek() {
            Some(Reverse(t)) if t.at <= now => self.heap.pop().map(|Reverse(t)| t.event),
            Some(Reverse(t)) => {
                self.next_at = t.at;
                None
            }
            None => {
                self.next_at = u64::MAX;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reference: the `BinaryHeap` of (cycle, sequence, event) the queue replaces.
    struct Reference(BinaryHeap<Reverse<(u64, u64, Event)>>);

    impl Reference {
        fn pop_due(&mut self, now: u64) -> Option<Event> {
            let &Reverse((at, _, e)) = self.0.peek()?;
            (at <= now).then(|| {
                self.0.pop();
                e
            })
        }
    }

    fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// Random schedules (delays of 0 to hundreds of cycles, some for past cycles, some
    /// pushed while a cycle drains, idle stretches): the events come out in the order and
    /// the cycles of a plain heap's.
    #[test]
    fn same_order_as_binary_heap() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..40 {
            let mut q = EventQueue::default();
            let mut r = Reference(BinaryHeap::new());
            let mut seq = 0u64;
            let mut popped = 0usize;
            for now in 0..3_000u64 {
                // Drain the cycle, sometimes pushing more events while draining.
                loop {
                    let (a, b) = (q.pop_due(now), r.pop_due(now));
                    assert_eq!(a, b, "round {round}, cycle {now}");
                    let Some(e) = a else { break };
                    popped += 1;
                    if xorshift(&mut rng).is_multiple_of(4) {
                        let at = now + xorshift(&mut rng) % 3;
                        seq += 1;
                        q.push(at, seq, e);
                        r.0.push(Reverse((at, seq, e)));
                    }
                }
                assert_eq!(q.len(), r.0.len());
                // New events for later cycles (none for a stretch now and then).
                let n = if (now / 500) % 3 == 2 {
                    0
                } else {
                    xorshift(&mut rng) % 4
                };
                for _ in 0..n {
                    let x = xorshift(&mut rng);
                    let at = match x % 10 {
                        0 => now.saturating_sub(x % 5),
                        1 => now + 255 + x % 3,
                        2..=3 => now + (x >> 8) % 800,
                        _ => now + (x >> 8) % 40,
                    };
                    seq += 1;
                    let e = Event::Writeback {
                        slot: (x % 64) as usize,
                        sidx: (seq % 1000) as usize,
                        writes: round,
                    };
                    q.push(at, seq, e);
                    r.0.push(Reverse((at, seq, e)));
                }
            }
            assert!(popped > 1_000, "round {round}: {popped} events");
        }
    }

    #[test]
    fn equal_cycles_keep_schedule_order() {
        let mut q = EventQueue::default();
        let ev = |sc| Event::ILine { sc, line: 0 };
        q.push(300, 1, ev(1));
        q.push(300, 2, ev(2));
        assert_eq!(q.pop_due(299), None);
        // Scheduled after the earliest was looked up, for a cycle already past.
        q.push(5, 3, ev(3));
        assert_eq!(q.pop_due(100), Some(ev(3)));
        assert_eq!(q.pop_due(100), None);
        assert_eq!(q.pop_due(299), None);
        assert_eq!(q.pop_due(300), Some(ev(1)));
        assert_eq!(q.pop_due(300), Some(ev(2)));
        assert_eq!(q.pop_due(300), None);
        assert!(q.is_empty());
    }
}
