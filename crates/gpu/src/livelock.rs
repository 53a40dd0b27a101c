//! Livelock detection (docs/model.md "Deadlock detection"): warps that spin while their
//! registers keep changing (a pre-Volta SIMT spinlock writes the lock value and then the
//! vote mask into the same register) count as progress for the run loop's deadlock check,
//! so that check never fires. This watch looks only at the other progress — memory changes,
//! exits, barrier releases ([`crate::KernelSource::hard_progress`]) — and only every
//! `deadlock_cycles / LOOKS_PER_WINDOW` cycles: once there has been none for
//! `deadlock_cycles` cycles it turns the executor's livelock probes on, and it reports a
//! livelock when every running warp's state has recurred with still no such progress.
//! Any such progress turns the probes off again. Everything happens in the serial part of
//! the cycle, at cycles counted from the kernel's start: the outcome and its cycle do not
//! depend on the number of threads.

use crate::KernelSource;

/// Looks at the kernel's progress per `deadlock_cycles` cycles: how late after
/// `deadlock_cycles` cycles without progress the probes start, and how long after every
/// warp recurred the livelock is reported (a fraction of `deadlock_cycles`). Not a
/// microarchitectural number: it only spaces the looks of the simulator's own check.
const LOOKS_PER_WINDOW: u64 = 16;

/// The run loop's livelock watch over one kernel.
#[derive(Debug)]
pub struct LivelockWatch {
    /// `RunOptions::deadlock_cycles` (0: the watch never looks).
    window: u64,
    /// Cycles between two looks.
    every: u64,
    /// The cycle of the next look (`u64::MAX`: never).
    next: u64,
    /// The progress counter at the last look, and the cycle of the look that first saw it.
    seen: u64,
    since: u64,
    /// The probes are on (since the look at `since + window` or later).
    probing: bool,
}

impl LivelockWatch {
    /// The watch over a kernel started at cycle `start` whose source is `src`;
    /// `deadlock_cycles` as in [`crate::RunOptions`].
    pub fn new<S: KernelSource + ?Sized>(src: &S, start: u64, deadlock_cycles: u64) -> Self {
        let on = deadlock_cycles > 0 && src.hard_progress().is_some();
        let every = (deadlock_cycles / LOOKS_PER_WINDOW).max(1);
        LivelockWatch {
            window: deadlock_cycles,
            every,
            next: if on { start + every } else { u64::MAX },
            seen: src.hard_progress().unwrap_or(0),
            since: start,
            probing: false,
        }
    }

    /// Whether the run loop should call [`LivelockWatch::look`] at cycle `cycle`.
    #[inline]
    pub fn due(&self, cycle: u64) -> bool {
        cycle >= self.next
    }

    /// The look at cycle `cycle` (when [`LivelockWatch::due`]): `Some(cycles)` when every
    /// running warp repeats its state and nothing but registers changed for `cycles` cycles.
    pub fn look<S: KernelSource + ?Sized>(&mut self, src: &mut S, cycle: u64) -> Option<u64> {
        self.next = cycle + self.every;
        let Some(h) = src.hard_progress() else {
            self.next = u64::MAX;
            return None;
        };
        if h != self.seen {
            // Progress: states seen before it say nothing about the states after it.
            self.seen = h;
            self.since = cycle;
            if self.probing {
                self.probing = false;
                src.set_livelock_probes(false);
            }
            return None;
        }
        if !self.probing {
            if cycle - self.since >= self.window {
                // Every probe starts now, with memory as the warps will see it from now on
                // (unless the next looks see progress, which restarts all of this).
                self.probing = true;
                src.set_livelock_probes(true);
            }
            return None;
        }
        src.livelock_tally().livelocked().then_some(cycle - self.since)
    }
}
