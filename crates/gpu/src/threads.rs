//! The threads that tick SMs (`--threads`): a fork-join pool made for one short parallel
//! step per simulated cycle.
//!
//! A cycle of a loaded GPU is ~100 µs of work; a general-purpose pool (rayon) puts its
//! workers to sleep between two steps, and waking them costs about as much as the step
//! they would share (measured: two rayon threads ran the 84-SM vector add no faster than
//! one). Here workers wait for the next step on an epoch counter, spinning a few µs, then
//! yielding the core, and park only after [`PARK_ROUNDS`] idle rounds (between kernels,
//! during long serial phases). On a machine whose cores are busy with other work, steps
//! that keep waiting for a worker make the pool run on the calling thread alone for a while
//! ([`Threads::note_step`]). A worker that has not begun its part of a step by the time the
//! calling thread is done with its own (late, parked, or on an errand: work given with
//! [`Threads::errand`] that an idle worker does between steps) does not take part in that
//! step: the calling thread runs the part. None of this changes results.

mod backoff;
mod parts;
mod step;
mod worker;

#[cfg(test)]
mod tests;

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use backoff::StepTiming;
use parts::Claim;
use step::SideJob;
use worker::worker;

pub use backoff::{
    ALONE_STEPS, CHECK_STEPS, DECIDED_STEPS, MAX_ALONE_STEPS, MEASURED_BELOW_SMS_PER_THREAD, PROBE_BLOCK,
    PROBE_STEPS, SLOW_WAIT_NS, WARMUP_STEPS,
};
pub use parts::{MIN_BUSY_PARTITIONS_PER_THREAD, MIN_BUSY_SMS_PER_THREAD, TAKE_DIV, VICTIMS};
pub use step::{PartError, PartFn, PartFn3, PartFn4};
pub use worker::Errand;

/// Most threads a pool starts (more are not used).
pub const MAX_THREADS: usize = 1024;

/// Idle rounds a waiting thread spins (`spin_loop` hints, a few µs) before it yields the
/// core at each round (so that a busy machine's other work, or the thread it waits for,
/// can run).
pub const SPIN_ROUNDS: u32 = 256;

/// Idle rounds (spinning, then yielding) after which a worker parks until the next step.
pub const PARK_ROUNDS: u32 = 2_000;

/// One round of waiting: a spin hint for the first [`SPIN_ROUNDS`], then a yield.
#[inline]
fn pause(round: u32) {
    if round < SPIN_ROUNDS {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

/// One step's work: called with the part index (1.. for the workers).
type Job<'a> = dyn Fn(usize) + Sync + 'a;

/// What one worker writes (alone on its cache line, so that posting a step and polling
/// the workers do not move each other's lines).
#[repr(align(128))]
#[derive(Default)]
struct Slot {
    /// The last epoch whose work this worker has finished.
    done: AtomicU64,
    /// The last epoch whose part someone has begun: the worker, or the calling thread in
    /// its place when the worker had not begun it by the time the calling thread was done
    /// with its own (the worker was on an errand, parked or late). Raised with `fetch_max`
    /// by both, so exactly one of them runs the part.
    turn: AtomicU64,
    /// The worker is running an errand ([`Threads::errand`]).
    on_errand: AtomicBool,
}

/// What the calling thread writes to post a step (one cache line).
#[repr(align(128))]
struct Post {
    /// Bumped when a step is posted (and to stop the workers).
    epoch: AtomicU64,
    /// The step's work: points to a `&'static Job` on the poster's stack, valid from the
    /// epoch bump until every worker's `done` has reached that epoch.
    job: AtomicPtr<()>,
}

struct Shared {
    post: Post,
    slots: Vec<Slot>,
    /// Errands waiting for an idle worker, and how many ([`Threads::errand`]).
    errands: Mutex<std::collections::VecDeque<Errand>>,
    errands_waiting: AtomicUsize,
    quit: AtomicBool,
    parked: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

/// The threads that tick SMs: the calling thread and `count() - 1` workers.
pub struct Threads {
    n: usize,
    /// The count asked for ([`Threads::new`]; more than were started if the system refused
    /// threads, or more than [`MAX_THREADS`]).
    asked: usize,
    /// Back-off on a busy machine ([`Threads::note_step`]): steps run since the last check,
    /// how many of them waited for a worker that was not running, and steps left to run on this
    /// thread alone.
    steps: Cell<u32>,
    slow: Cell<u32>,
    alone: Cell<u32>,
    /// Steps the next busy check sends the pool alone for.
    alone_span: Cell<u32>,
    /// Work for the next step besides its own ([`Threads::with_side`]).
    side: Cell<Option<SideJob>>,
    /// Whether parallel steps pay on this machine, measured.
    pays: StepTiming,
    /// The busy elements of the next step, by index ([`Threads::plan_step`]), and whether
    /// they were given for it.
    busy_at: RefCell<Vec<usize>>,
    planned: Cell<bool>,
    /// The next step's part boundaries (reused: no allocation per step).
    bounds: RefCell<Vec<usize>>,
    /// Each part's elements not yet taken in the step under way ([`Claim`]).
    claims: Box<[Claim]>,
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl Threads {
    /// `n` threads (the calling thread is one of them; at most [`MAX_THREADS`]); 0 or 1: the
    /// calling thread alone. If the operating system refuses a thread, fewer are used (same
    /// results).
    pub fn new(n: usize) -> Threads {
        let want = n.clamp(1, MAX_THREADS);
        let shared = Arc::new(Shared {
            post: Post {
                epoch: AtomicU64::new(0),
                job: AtomicPtr::new(std::ptr::null_mut()),
            },
            slots: (1..want).map(|_| Slot::default()).collect(),
            errands: Mutex::new(std::collections::VecDeque::new()),
            errands_waiting: AtomicUsize::new(0),
            quit: AtomicBool::new(false),
            parked: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        });
        let mut workers = Vec::new();
        for k in 1..want {
            let sh = shared.clone();
            match std::thread::Builder::new()
                .name(format!("sassim-sm-{k}"))
                .spawn(move || worker(&sh, k))
            {
                Ok(h) => workers.push(h),
                Err(_) => break,
            }
        }
        Threads {
            n: workers.len() + 1,
            asked: n.max(1),
            steps: Cell::new(0),
            slow: Cell::new(0),
            alone: Cell::new(0),
            alone_span: Cell::new(ALONE_STEPS),
            side: Cell::new(None),
            pays: StepTiming::default(),
            busy_at: RefCell::new(Vec::new()),
            planned: Cell::new(false),
            bounds: RefCell::new(Vec::new()),
            claims: (0..=workers.len()).map(|_| Claim::default()).collect(),
            shared,
            workers,
        }
    }

    pub fn count(&self) -> usize {
        self.n
    }

    /// The thread count this pool was made for ([`Threads::new`]'s `n`, at least 1): a pool
    /// can be reused for that count even if it has fewer threads.
    pub fn asked(&self) -> usize {
        self.asked
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        let sh = &*self.shared;
        sh.quit.store(true, Ordering::SeqCst);
        // Errands not started do not run (those running are waited for below).
        sh.errands.lock().unwrap_or_else(|p| p.into_inner()).clear();
        sh.errands_waiting.store(0, Ordering::SeqCst);
        sh.post.job.store(std::ptr::null_mut(), Ordering::Relaxed);
        sh.post.epoch.fetch_add(1, Ordering::SeqCst);
        {
            let _g = sh.lock.lock().unwrap_or_else(|p| p.into_inner());
            sh.wake.notify_all();
        }
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
    }
}
