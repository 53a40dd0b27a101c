//! How a step's elements are split among the threads: the threads worth using
//! ([`Threads::useful`], [`Threads::useful_for_partitions`]), the parts planned over the busy
//! elements ([`Threads::plan_step`], `part_bounds`), and the claims by which a thread done early
//! takes the elements of a part whose thread has not begun them ([`Claim`]).

use std::sync::atomic::{AtomicU64, Ordering};

use super::Threads;

/// Busy SMs per thread below which a step uses fewer threads. A fork-join of this pool
/// costs a few cache-line transfers (well under a µs: the post, each worker's start and end
/// marks); an SM-cycle of a busy SM is a few tenths of a µs (the BFS trace: ~0.35 µs per SM
/// and cycle, its 8 busy SMs ~2.8 µs a step besides the memory partitions), so 4 SMs are
/// worth a thread of their own.
pub const MIN_BUSY_SMS_PER_THREAD: usize = 4;

/// Busy memory partitions per thread below which their step uses fewer threads: a busy
/// partition's core cycle (two L2 slices, a DRAM channel) is well under a µs of work.
pub const MIN_BUSY_PARTITIONS_PER_THREAD: usize = 4;

/// A thread takes this fraction (1/`TAKE_DIV`, at least one element) of the elements left of
/// a step's part at a time ([`Claim`]): its first takes are large (few atomic operations on
/// a loaded GPU's 42 SMs a thread: about a dozen), its last are single SMs, so a thread done
/// early waits at most for one SM of another's.
pub const TAKE_DIV: u32 = 4;

/// Parts a thread done early takes elements from: the next ones, in a ring. A few suffice
/// (the last thread done with its own part would otherwise read every other part's claim,
/// a cache miss each, before its step ends: ~6 µs on 64 threads).
pub const VICTIMS: usize = 3;

/// The elements of one part of a step not yet taken (alone on its cache line): `front..back`,
/// the front in the low 32 bits. The part's own thread takes them from the front; a thread
/// done with its own part (and its share of the side job) takes them from the back
/// ([`Threads::run_parts`]), so an SM moves to another core only when its thread is late:
/// taking every SM from one shared counter moved them all the time and was slower
/// (docs/performance-log.md, eleventh session). Which thread steps an SM changes no result.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Claim {
    left: AtomicU64,
}

impl Claim {
    pub(super) fn set(&self, front: usize, back: usize) {
        self.left
            .store((back as u64) << 32 | front as u64, Ordering::Relaxed);
    }

    /// The first elements left, taken ([`TAKE_DIV`]); their range.
    #[inline]
    pub(super) fn take_front(&self) -> Option<(usize, usize)> {
        self.take(false)
    }

    /// The last elements left, taken ([`TAKE_DIV`]); their range.
    #[inline]
    pub(super) fn take_back(&self) -> Option<(usize, usize)> {
        self.take(true)
    }

    #[inline]
    fn take(&self, from_back: bool) -> Option<(usize, usize)> {
        let mut v = self.left.load(Ordering::Relaxed);
        loop {
            let (front, back) = (v as u32, (v >> 32) as u32);
            if front >= back {
                return None;
            }
            let n = ((back - front) / TAKE_DIV).max(1);
            let (next, got) = if from_back {
                (u64::from(back - n) << 32 | u64::from(front), (back - n, back))
            } else {
                (v + u64::from(n), (front, front + n))
            };
            match self
                .left
                .compare_exchange_weak(v, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return Some((got.0 as usize, got.1 as usize)),
                Err(now) => v = now,
            }
        }
    }
}

impl Threads {
    /// Threads worth using for a step over `busy` SMs: one per [`MIN_BUSY_SMS_PER_THREAD`]
    /// (a few SMs' cycle is shorter than a fork-join). Results do not depend on it.
    pub fn useful(&self, busy: usize) -> usize {
        (busy / MIN_BUSY_SMS_PER_THREAD).clamp(1, self.n)
    }

    /// Before a step ([`Threads::for_parts3`], [`Threads::for_parts4`]): which of its
    /// elements are busy, in order. The step's parts are then contiguous ranges with about as
    /// many busy elements each (the others cost little: a kernel of 8 CTAs keeps 8 SMs busy,
    /// next to each other, which equal-sized parts would give one thread). Returns the
    /// threads worth using ([`Threads::useful`]). Results do not depend on it.
    pub fn plan_step(&self, busy: impl Iterator<Item = bool> + Clone) -> usize {
        let (mut n, mut len) = (0, 0);
        for b in busy.clone() {
            n += usize::from(b);
            len += 1;
        }
        let useful = self.useful(n);
        // All busy (a loaded GPU) or one thread: equal-sized parts are the same.
        let planned = useful > 1 && n < len;
        if planned {
            let mut at = self.busy_at.borrow_mut();
            at.clear();
            at.extend(busy.enumerate().filter(|(_, b)| *b).map(|(i, _)| i));
        }
        self.planned.set(planned);
        useful
    }

    /// Threads worth using for a step over `busy` memory partitions: one per
    /// [`MIN_BUSY_PARTITIONS_PER_THREAD`]. Results do not depend on it.
    pub fn useful_for_partitions(&self, busy: usize) -> usize {
        (busy / MIN_BUSY_PARTITIONS_PER_THREAD).clamp(1, self.n)
    }
}

/// The boundaries of a step's `own` parts of `len` elements (part `k` is elements
/// `out[k]..out[k + 1]`): equal-sized, or planned over the `busy` elements (part `k` starts at
/// busy element `k * busy.len() / own`, the first part at 0).
pub(super) fn part_bounds(out: &mut Vec<usize>, own: usize, len: usize, busy: Option<&[usize]>) {
    out.clear();
    let size = len.div_ceil(own.max(1));
    out.extend((0..=own).map(|k| match busy {
        _ if k == own => len,
        Some(_) if k == 0 => 0,
        Some(busy) => busy.get(k * busy.len() / own).map_or(len, |&i| i.min(len)),
        None => len.min(k * size),
    }));
}
