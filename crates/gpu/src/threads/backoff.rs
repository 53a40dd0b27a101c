//! Whether a step runs on several threads or on the calling thread alone: the busy-machine
//! back-off ([`Threads::note_step`]: steps that waited for a descheduled worker send the pool
//! alone for a while) and the measure of whether parallel steps pay ([`StepTiming`]). Neither
//! changes a result.

use std::cell::Cell;

use super::Threads;

/// A wait for a worker this long beyond the spinning rounds marks a step as slow
/// ([`Threads::note_step`]): the worker was not running (a Linux scheduler's time slice is
/// 0.75–6 ms), whereas a running worker keeps the calling thread waiting only as long as
/// its part is longer (a few µs; a step is ~3–100 µs of work). Whether a worker merely
/// started late says nothing: it does whenever the calling thread's own part is shorter
/// than the time a store takes to reach the other core, which sent half of the two-thread
/// runs of the vector add alone for 4,096 steps (docs/performance-log.md, twelfth session).
pub const SLOW_WAIT_NS: u64 = 100_000;

impl Threads {
    /// [`Threads::note_step`] for a step whose calling thread waited `yielded` for the
    /// workers after its spinning rounds (`None`: it did not yield); `woke`: the step woke a
    /// parked worker.
    pub(super) fn note_wait(&self, woke: bool, yielded: Option<std::time::Duration>) {
        let slow = !woke && yielded.is_some_and(|d| d.as_nanos() >= u128::from(SLOW_WAIT_NS));
        self.note_step(slow);
    }

    /// Count a parallel step (`slow`: the calling thread, done with its own part, waited for
    /// a worker [`SLOW_WAIT_NS`] or more after its spinning rounds; a step that woke a
    /// parked worker is not slow for that). When the cores are taken by other work, the
    /// threads of a step take turns on one core and every step costs context switches: if more than a quarter of
    /// [`CHECK_STEPS`] steps were slow, the next steps run on the calling thread alone,
    /// [`ALONE_STEPS`] after the first such check, twice as many after each further one in
    /// a row (up to [`MAX_ALONE_STEPS`]): on a machine that stays busy, the checks
    /// themselves, steps that wait for a descheduled thread, become rare.
    fn note_step(&self, slow: bool) {
        self.steps.set(self.steps.get() + 1);
        self.slow.set(self.slow.get() + u32::from(slow));
        if self.steps.get() >= CHECK_STEPS {
            if self.slow.get() * 4 > CHECK_STEPS {
                let span = self.alone_span.get().max(ALONE_STEPS);
                self.alone.set(span);
                self.alone_span.set(span.saturating_mul(2).min(MAX_ALONE_STEPS));
            } else {
                self.alone_span.set(ALONE_STEPS);
            }
            self.steps.set(0);
            self.slow.set(0);
        }
    }
}

/// Whether steps on several threads pay, measured on the steps themselves. A fork-join costs
/// a few cache-line transfers, and the SMs' state moves between the cores (the serial part
/// of a cycle reads the SMs' queues): ~0.1 µs a transfer between cores that share a cache,
/// but ~0.4 µs between the virtual cores of some machines (measured: a round trip of one
/// line took 0.8 µs at times, 0.2 µs at others on the same virtual machine), against a few
/// µs of work in a step over a few busy SMs. So a probe runs blocks of [`PROBE_BLOCK`]
/// steps on several threads and alone in turn (both ways see the same phases of the run),
/// timing each step from its start to the next step's (the step and the serial work after
/// it) except the first [`WARMUP_STEPS`] of a block, until [`PROBE_STEPS`] are timed each
/// way; then the faster way is kept for [`DECIDED_STEPS`] steps, and measured again. Only
/// which threads run a step depends on it, never a result.
#[derive(Default)]
pub(super) struct StepTiming {
    /// The start of the last step if it was timed, and whether it ran on several threads.
    pub(super) last: Cell<Option<(std::time::Instant, bool)>>,
    /// Nanoseconds and steps timed in this probe, on several threads [1] and alone [0].
    ns: [Cell<u64>; 2],
    pub(super) n: [Cell<u32>; 2],
    /// Steps run in this probe.
    probe_i: Cell<u32>,
    /// Steps left to run the decided way, and that way (`true`: several threads).
    pub(super) decided: Cell<u32>,
    pub(super) parallel: Cell<bool>,
}

/// SMs per thread below which a step's threads are chosen by [`StepTiming`]; a step over
/// more always runs on its threads (an SM-cycle of a loaded SM is ~1 µs: 8 of them are
/// well above the cost of a fork-join even between far cores, and the probes' alone steps
/// would cost a short run of a loaded GPU ~10 %).
pub const MEASURED_BELOW_SMS_PER_THREAD: usize = 8;

/// Steps timed each way in a probe ([`StepTiming`]).
pub const PROBE_STEPS: u32 = 256;
/// Steps of a probe's block run one way ([`StepTiming`]).
pub const PROBE_BLOCK: u32 = 64;
/// Steps of a probe's block not timed ([`StepTiming`]): waking a parked worker (a futex
/// wake, up to ~0.1 ms on a virtual machine) and moving the SMs' state to the other core
/// would otherwise be charged to the block's first steps.
pub const WARMUP_STEPS: u32 = 16;
/// Steps run the faster way after a probe ([`StepTiming`]).
pub const DECIDED_STEPS: u32 = 16_384;
/// Longest interval between two steps counted as a step's time (longer: something else ran
/// between them, e.g. the next kernel's setup).
pub(super) const MAX_STEP_NS: u64 = 1_000_000;

impl StepTiming {
    /// Whether a step that could run on several threads (`wanted`) does.
    pub(super) fn choose(&self, wanted: bool) -> bool {
        self.choose_at(wanted, std::time::Instant::now)
    }

    /// [`StepTiming::choose`] with the clock `now` (read only while probing).
    pub(super) fn choose_at(&self, wanted: bool, now: impl Fn() -> std::time::Instant) -> bool {
        if !wanted {
            self.last.set(None);
            return false;
        }
        if self.decided.get() > 0 {
            self.decided.set(self.decided.get() - 1);
            return self.parallel.get();
        }
        let now = now();
        if let Some((t, par)) = self.last.take() {
            let dt = now.saturating_duration_since(t).as_nanos();
            if dt < u128::from(MAX_STEP_NS) {
                let k = usize::from(par);
                self.ns[k].set(self.ns[k].get() + dt as u64);
                self.n[k].set(self.n[k].get() + 1);
            }
        }
        if self.n[0].get() >= PROBE_STEPS && self.n[1].get() >= PROBE_STEPS {
            // Mean step times compared as ns[1]/n[1] < ns[0]/n[0].
            let faster = u128::from(self.ns[1].get()) * u128::from(self.n[0].get())
                < u128::from(self.ns[0].get()) * u128::from(self.n[1].get());
            self.parallel.set(faster);
            self.decided.set(DECIDED_STEPS);
            for k in 0..2 {
                self.ns[k].set(0);
                self.n[k].set(0);
            }
            self.probe_i.set(0);
            return faster;
        }
        let i = self.probe_i.get();
        self.probe_i.set(i + 1);
        let par = (i / PROBE_BLOCK).is_multiple_of(2);
        if i % PROBE_BLOCK >= WARMUP_STEPS && self.n[usize::from(par)].get() < PROBE_STEPS {
            self.last.set(Some((now, par)));
        }
        par
    }
}

/// Parallel steps between two checks of how many had to wait (see [`Threads::note_step`]).
pub const CHECK_STEPS: u32 = 64;
/// Steps run on the calling thread alone after a check found the machine busy.
pub const ALONE_STEPS: u32 = 4_096;
/// Most steps run alone after checks in a row found the machine busy (a few seconds of a
/// loaded GPU's steps).
pub const MAX_ALONE_STEPS: u32 = 1 << 20;
