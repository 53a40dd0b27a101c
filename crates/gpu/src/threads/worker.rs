//! The workers' side of the pool: a worker waits for the next step (spinning, yielding, then
//! parked), runs its part unless the calling thread took it, and between steps runs errands
//! ([`Threads::errand`]), taking its part of the steps posted meanwhile at their interleave
//! points ([`step_from_errand`]).

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{pause, Job, Shared, Slot, Threads, PARK_ROUNDS, SPIN_ROUNDS};

/// Work a worker does while no step is posted ([`Threads::errand`]).
pub type Errand = Box<dyn FnOnce() + Send + 'static>;

impl Threads {
    /// Give `e` to a worker to run while no step is posted (the steps posted meanwhile
    /// run their parts on the other threads: a worker on an errand only takes part in the
    /// steps after it, or at the errand's interleave points, [`step_from_errand`]). Errands
    /// start in the order given, each on one worker (with several workers, several run at
    /// once); those not started when the pool is dropped do not run, and dropping the pool
    /// waits for those running, so an errand must never wait for the calling thread. Returns
    /// `e` back if the pool has no worker. Nothing an errand does may change a result, only
    /// when something is ready (trace kernels opened before their turn:
    /// `trace_exec/open_ahead.rs`).
    pub fn errand(&self, e: Errand) -> Result<(), Errand> {
        if self.workers.is_empty() {
            return Err(e);
        }
        let sh = &*self.shared;
        {
            let mut q = sh.errands.lock().unwrap_or_else(|p| p.into_inner());
            q.push_back(e);
            sh.errands_waiting.store(q.len(), Ordering::SeqCst);
        }
        let _g = sh.lock.lock().unwrap_or_else(|p| p.into_inner());
        sh.wake.notify_all();
        Ok(())
    }
}

pub(super) fn worker(sh: &Shared, k: usize) {
    let slot = &sh.slots[k - 1];
    let mut seen = 0u64;
    // Long parses on this thread take part in the steps posted meanwhile (errands).
    sassim_trace::interleave::set_hook(Some(step_from_errand));
    loop {
        let mut rounds = 0u32;
        loop {
            let e = sh.post.epoch.load(Ordering::Acquire);
            if e != seen {
                seen = e;
                break;
            }
            rounds += 1;
            // Idle for a few µs: an errand may run (this worker takes its part of the steps
            // posted meanwhile at the errand's interleave points, or the calling thread runs
            // it).
            if rounds >= SPIN_ROUNDS && run_errand(sh, k, &mut seen) {
                rounds = 0;
                continue;
            }
            if rounds < PARK_ROUNDS {
                pause(rounds);
                continue;
            }
            // Park: registered before the epoch is checked again, under the lock the
            // poster takes to notify, so no wake-up is lost.
            let mut g = sh.lock.lock().unwrap_or_else(|p| p.into_inner());
            sh.parked.fetch_add(1, Ordering::SeqCst);
            while sh.post.epoch.load(Ordering::SeqCst) == seen
                && sh.errands_waiting.load(Ordering::SeqCst) == 0
            {
                g = sh.wake.wait(g).unwrap_or_else(|p| p.into_inner());
            }
            sh.parked.fetch_sub(1, Ordering::SeqCst);
            rounds = 0;
        }
        if sh.quit.load(Ordering::Acquire) {
            return;
        }
        run_own_part(sh, slot, k, seen);
    }
}

/// Worker `k`'s part (its slot `slot`) of epoch `e`, which the worker has seen: run, unless
/// the calling thread took it in its place (`Slot::turn`), and `done` stored then (also if
/// the part unwinds: the calling thread waits for it).
fn run_own_part(sh: &Shared, slot: &Slot, k: usize, e: u64) {
    if slot.turn.fetch_max(e, Ordering::AcqRel) >= e {
        return;
    }
    let _done = DoneAt(&slot.done, e);
    let job = sh.post.job.load(Ordering::Relaxed) as *const &'static Job<'static>;
    // SAFETY: the poster stored `job` before epoch `e`, which this thread acquired, and, as
    // this thread took its part of `e` (`turn` above), keeps it alive until this thread's
    // `done` reaches `e` (`run_parts`).
    if let Some(j) = unsafe { job.as_ref() } {
        j(k);
    }
}

/// Run one waiting errand, if there is one ([`Threads::errand`]), on worker `k`, whose last
/// epoch seen is `seen` (the errand may take its part in later ones: [`step_from_errand`]);
/// whether one ran.
fn run_errand(sh: &Shared, k: usize, seen: &mut u64) -> bool {
    if sh.errands_waiting.load(Ordering::Relaxed) == 0 || sh.quit.load(Ordering::Acquire) {
        return false;
    }
    let e = {
        let mut q = sh.errands.lock().unwrap_or_else(|p| p.into_inner());
        let e = q.pop_front();
        sh.errands_waiting.store(q.len(), Ordering::SeqCst);
        e
    };
    let Some(e) = e else {
        return false;
    };
    ERRAND.with(|c| c.set(Some(OnErrand { sh, k, seen: *seen })));
    let slot = sh.slots.get(k - 1);
    slot.inspect(|s| s.on_errand.store(true, Ordering::Relaxed));
    // An errand reports its own failures; a panic must not end the worker.
    let _ = catch_unwind(AssertUnwindSafe(e));
    slot.inspect(|s| s.on_errand.store(false, Ordering::Relaxed));
    if let Some(on) = ERRAND.with(|c| c.take()) {
        *seen = on.seen;
    }
    true
}

/// A worker running an errand: its pool, its index and the last epoch it has seen.
#[derive(Clone, Copy)]
struct OnErrand {
    sh: *const Shared,
    k: usize,
    seen: u64,
}

thread_local! {
    /// Set while this thread, a worker, runs an errand ([`run_errand`]).
    static ERRAND: Cell<Option<OnErrand>> = const { Cell::new(None) };
}

/// At a point of an errand's work (`sassim_trace::interleave`): if a step was posted since
/// the worker last looked and the calling thread has not taken the worker's part of it
/// (`Slot::turn`), the worker runs its part now, then goes back to the errand. So an errand
/// that reaches such points often (a trace kernel's parse: every few µs) keeps the worker
/// in most steps.
fn step_from_errand() {
    let Some(mut on) = ERRAND.with(Cell::get) else {
        return;
    };
    // SAFETY: `on.sh` is the worker's pool, which outlives the worker (and so the errand
    // this runs in: `run_errand` clears `ERRAND` after it).
    let sh = unsafe { &*on.sh };
    let e = sh.post.epoch.load(Ordering::Acquire);
    // (A pool being dropped: the worker's loop sees the epoch after the errand and ends.)
    if e == on.seen || sh.quit.load(Ordering::Acquire) {
        return;
    }
    on.seen = e;
    let Some(slot) = sh.slots.get(on.k - 1) else {
        return;
    };
    // Not while running the part (which may parse: a kernel opened on every thread); the
    // errand is resumed, with the epoch seen, even if the part unwinds.
    ERRAND.with(|c| c.set(None));
    let _resume = ResumeErrand(on);
    run_own_part(sh, slot, on.k, e);
}

/// Stores its epoch in a worker's `done` when dropped (after the worker's part, or while
/// the part unwinds: the calling thread waits for it).
struct DoneAt<'a>(&'a AtomicU64, u64);

impl Drop for DoneAt<'_> {
    fn drop(&mut self) {
        self.0.store(self.1, Ordering::Release);
    }
}

/// Puts a worker's errand back in `ERRAND` when dropped ([`step_from_errand`]).
struct ResumeErrand(OnErrand);

impl Drop for ResumeErrand {
    fn drop(&mut self) {
        ERRAND.with(|c| c.set(Some(self.0)));
    }
}
