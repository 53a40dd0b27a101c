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

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// An error of one element of a part: (its index, the message).
pub type PartError = (usize, String);

/// How [`Threads`] runs a step's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StepKind {
    /// [`Threads::for_parts`] (batches of trace blocks to parse, kernels to open): equal
    /// parts, never measured, outside the busy-machine back-off ([`Threads::note_step`]).
    Plain,
    /// An SM step of one cycle: the planned parts ([`Threads::plan_step`]); whether several
    /// threads pay is measured when there are few SMs per thread.
    Measured,
    /// A quantum of several cycles: the planned parts on every thread asked for (an SM keeps
    /// its thread from one quantum to the next while the busy SMs stay the same: taking SMs
    /// one at a time moved their state between the cores and was slower here).
    Long,
}

/// Work on one part: (index of its first element, its elements of both slices).
pub type PartFn<'f, A, B> = dyn Fn(usize, &mut [A], &mut [B]) -> Result<(), PartError> + Sync + 'f;

/// Work on one part of three slices.
pub type PartFn3<'f, A, B, C> =
    dyn Fn(usize, &mut [A], &mut [B], &mut [C]) -> Result<(), PartError> + Sync + 'f;

/// Work on one part of four slices.
pub type PartFn4<'f, A, B, C, D> =
    dyn Fn(usize, &mut [A], &mut [B], &mut [C], &mut [D]) -> Result<(), PartError> + Sync + 'f;

/// Most threads a pool starts (more are not used).
pub const MAX_THREADS: usize = 1024;

/// Idle rounds a waiting thread spins (`spin_loop` hints, a few µs) before it yields the
/// core at each round (so that a busy machine's other work, or the thread it waits for,
/// can run).
pub const SPIN_ROUNDS: u32 = 256;
/// A wait for a worker this long beyond the spinning rounds marks a step as slow
/// ([`Threads::note_step`]): the worker was not running (a Linux scheduler's time slice is
/// 0.75–6 ms), whereas a running worker keeps the calling thread waiting only as long as
/// its part is longer (a few µs; a step is ~3–100 µs of work). Whether a worker merely
/// started late says nothing: it does whenever the calling thread's own part is shorter
/// than the time a store takes to reach the other core, which sent half of the two-thread
/// runs of the vector add alone for 4,096 steps (docs/performance.md, twelfth session).
pub const SLOW_WAIT_NS: u64 = 100_000;

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

/// One step's work: called with the part index (1.. for the workers).
type Job<'a> = dyn Fn(usize) + Sync + 'a;

/// Work a worker does while no step is posted ([`Threads::errand`]).
pub type Errand = Box<dyn FnOnce() + Send + 'static>;

/// Work that runs alongside the SMs of the next step ([`Threads::with_side`]): called with
/// (share, shares) once for every share of `0..shares`.
type Side<'a> = dyn Fn(usize, usize) + Sync + 'a;

/// A [`Side`] job waiting for the next step, and the threads it is worth.
#[derive(Clone, Copy)]
struct SideJob {
    job: &'static Side<'static>,
    want: usize,
}

/// Clears the waiting side job when [`Threads::with_side`] returns or unwinds.
struct ClearSide<'t>(&'t Cell<Option<SideJob>>);

impl Drop for ClearSide<'_> {
    fn drop(&mut self) {
        self.0.set(None);
    }
}

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

/// The elements of one part of a step not yet taken (alone on its cache line): `front..back`,
/// the front in the low 32 bits. The part's own thread takes them from the front; a thread
/// done with its own part (and its share of the side job) takes them from the back
/// ([`Threads::run_parts`]), so an SM moves to another core only when its thread is late:
/// taking every SM from one shared counter moved them all the time and was slower
/// (docs/performance.md, eleventh session). Which thread steps an SM changes no result.
#[repr(align(128))]
#[derive(Default)]
struct Claim {
    left: AtomicU64,
}

impl Claim {
    fn set(&self, front: usize, back: usize) {
        self.left
            .store((back as u64) << 32 | front as u64, Ordering::Relaxed);
    }

    /// The first elements left, taken ([`TAKE_DIV`]); their range.
    #[inline]
    fn take_front(&self) -> Option<(usize, usize)> {
        self.take(false)
    }

    /// The last elements left, taken ([`TAKE_DIV`]); their range.
    #[inline]
    fn take_back(&self) -> Option<(usize, usize)> {
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

/// A raw slice pointer handed to a worker (the caller waits for the worker before it
/// touches the slice again).
struct RawSlice<T>(*mut T, usize);
unsafe impl<T: Send> Sync for RawSlice<T> {}
unsafe impl<T: Send> Send for RawSlice<T> {}

impl<T> RawSlice<T> {
    /// Elements `start..end` (within the slice).
    ///
    /// # Safety
    /// No other reference to those elements may be alive while the result is.
    #[allow(clippy::mut_from_ref)]
    unsafe fn range(&self, start: usize, end: usize) -> &mut [T] {
        debug_assert!(start <= end && end <= self.1);
        // SAFETY: in bounds (above); exclusivity is the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), end - start) }
    }
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

    pub fn count(&self) -> usize {
        self.n
    }

    /// `make(0), …, make(n - 1)`, in order, made on the threads ([`Threads::for_parts`]: an
    /// error if a call panicked).
    pub fn map<T: Send>(&self, n: usize, make: &(dyn Fn(usize) -> T + Sync)) -> Result<Vec<T>, String> {
        let mut which: Vec<usize> = (0..n).collect();
        let mut made: Vec<Option<T>> = (0..n).map(|_| None).collect();
        self.for_parts(
            &mut which,
            &mut made,
            &|_, which: &mut [usize], out: &mut [Option<T>]| {
                for (&i, o) in which.iter().zip(out.iter_mut()) {
                    *o = Some(make(i));
                }
                Ok(())
            },
        )?;
        made.into_iter()
            .enumerate()
            .map(|(i, m)| m.ok_or_else(|| format!("element {i} of {n} was not made")))
            .collect()
    }

    /// The thread count this pool was made for ([`Threads::new`]'s `n`, at least 1): a pool
    /// can be reused for that count even if it has fewer threads.
    pub fn asked(&self) -> usize {
        self.asked
    }

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

    /// Call `f(first, a_part, b_part)` on `a` and `b` split into up to `count()` contiguous
    /// parts of equal size (never planned: [`Threads::plan_step`] is for steps) (`first`:
    /// index of the part's first element), one part per thread (a thread done with its part
    /// takes elements of another's that it has not begun, so `f` may see smaller parts), and
    /// wait for all. Returns the error with the lowest index any call returned (a panic, in
    /// any thread, is returned after every such error, with its message).
    pub fn for_parts<A: Send, B: Send>(
        &self,
        a: &mut [A],
        b: &mut [B],
        f: &PartFn<'_, A, B>,
    ) -> Result<(), String> {
        let len = a.len().min(b.len());
        let (mut n3, mut n4) = (vec![(); len], vec![(); len]);
        self.run_parts(
            self.n,
            a,
            b,
            &mut n3,
            &mut n4,
            &|first, pa, pb, _, _| f(first, pa, pb),
            StepKind::Plain,
        )
    }

    /// Run `body` with `g` applied to all of `a` alongside it: the first step `body` runs
    /// ([`Threads::for_parts3`]) uses at least `threads` threads (as far as it has them) and
    /// gives each of its threads one contiguous share of `a` besides its own part; if `body`
    /// runs no step, `g` runs on all of `a` on this thread after it. `g` must not depend on what `body` does, nor the
    /// reverse (the order of the two is not fixed).
    pub fn with_side<A: Send, R>(
        &self,
        threads: usize,
        a: &mut [A],
        g: &(dyn Fn(&mut [A]) + Sync),
        body: impl FnOnce() -> R,
    ) -> R {
        let len = a.len();
        let raw = RawSlice(a.as_mut_ptr(), len);
        let share = move |k: usize, n: usize| {
            let size = len.div_ceil(n.max(1));
            let start = len.min(k * size);
            let end = len.min(start + size);
            if start < end {
                // SAFETY: the shares of one call of `n` are disjoint ranges of `a`, each given
                // out once (`for_parts3` or below), while `a` is borrowed by this function.
                g(unsafe { raw.range(start, end) });
            }
        };
        let job: &Side<'_> = &share;
        // SAFETY: the job is reachable only through `self.side`, which `ClearSide` empties
        // before this function returns or unwinds; `for_parts3` calls it only during its
        // step, which ends before it returns.
        let job: &'static Side<'static> =
            unsafe { std::mem::transmute::<&Side<'_>, &'static Side<'static>>(job) };
        self.side.set(Some(SideJob {
            job,
            want: threads.max(1),
        }));
        let clear = ClearSide(&self.side);
        let r = body();
        if let Some(s) = self.side.take() {
            (s.job)(0, 1);
        }
        drop(clear);
        r
    }

    /// [`Threads::for_parts`] over three slices, on at most `threads` threads (and the side
    /// job of [`Threads::with_side`], if one waits, in the same step). For steps that come
    /// one after the other (the SMs' cycles): whether several threads pay for a step over
    /// few SMs a thread is measured as it goes ([`StepTiming`]). `f` may be called on any
    /// contiguous ranges that cover the slices once: a thread done with its part (and its
    /// share of the side job) takes the elements of a part whose thread has not begun them
    /// ([`Claim`]).
    pub fn for_parts3<A: Send, B: Send, C: Send>(
        &self,
        threads: usize,
        a: &mut [A],
        b: &mut [B],
        c: &mut [C],
        f: &PartFn3<'_, A, B, C>,
    ) -> Result<(), String> {
        let mut none = vec![(); a.len().min(b.len()).min(c.len())];
        self.run_parts(
            threads,
            a,
            b,
            c,
            &mut none,
            &|first, pa, pb, pc, _| f(first, pa, pb, pc),
            StepKind::Measured,
        )
    }

    /// [`Threads::for_parts3`] over four slices.
    pub fn for_parts4<A: Send, B: Send, C: Send, D: Send>(
        &self,
        threads: usize,
        a: &mut [A],
        b: &mut [B],
        c: &mut [C],
        d: &mut [D],
        f: &PartFn4<'_, A, B, C, D>,
    ) -> Result<(), String> {
        self.run_parts(threads, a, b, c, d, f, StepKind::Measured)
    }

    /// [`Threads::for_parts4`] for a step long enough to pay on any machine (a quantum of
    /// several cycles): the threads are not measured against one.
    pub fn for_parts4_long<A: Send, B: Send, C: Send, D: Send>(
        &self,
        threads: usize,
        a: &mut [A],
        b: &mut [B],
        c: &mut [C],
        d: &mut [D],
        f: &PartFn4<'_, A, B, C, D>,
    ) -> Result<(), String> {
        self.run_parts(threads, a, b, c, d, f, StepKind::Long)
    }

    #[allow(clippy::too_many_arguments)]
    fn run_parts<A: Send, B: Send, C: Send, D: Send>(
        &self,
        threads: usize,
        a: &mut [A],
        b: &mut [B],
        c: &mut [C],
        d: &mut [D],
        f: &PartFn4<'_, A, B, C, D>,
        kind: StepKind,
    ) -> Result<(), String> {
        let adaptive = kind == StepKind::Measured;
        let len = a.len().min(b.len()).min(c.len()).min(d.len());
        let side = self.side.take();
        // A plan is for the next step (`for_parts3`/`for_parts4`), never for `for_parts`.
        let planned = self.planned.replace(false) && kind != StepKind::Plain;
        let mut own = self.n.min(threads).min(len).max(1);
        let mut parts = own.max(side.map_or(1, |s| s.want.min(self.n)));
        // The busy-machine back-off is for steps of one cycle, which a late worker costs
        // more than it saves; a quantum's step, or a batch of trace blocks to parse, is long
        // enough to pay even so (and a worker that parked while the serial part ran between
        // kernels is late at every kernel's first steps).
        if self.alone.get() > 0 && kind == StepKind::Measured {
            self.alone.set(self.alone.get() - 1);
            own = 1;
            parts = 1;
        }
        if adaptive {
            // Steps over many SMs a thread pay on any machine; smaller ones are measured.
            let small = len < MEASURED_BELOW_SMS_PER_THREAD * own;
            if !self.pays.choose(small && parts > 1) && small {
                own = 1;
                parts = 1;
            }
        }
        if parts == 1 {
            let r = f(0, &mut a[..len], &mut b[..len], &mut c[..len], &mut d[..len]).map_err(|e| e.1);
            if let Some(s) = side {
                (s.job)(0, 1);
            }
            return r;
        }
        // Part k is elements bounds[k]..bounds[k + 1].
        let mut bounds = self.bounds.borrow_mut();
        let busy = self.busy_at.borrow();
        let planned = planned && !busy.is_empty();
        part_bounds(&mut bounds, own, len, planned.then_some(&busy[..]));
        // A thread done early takes the elements others have not begun (`Claim`): SMs, trace
        // blocks to parse (the BFS trace's blocks differ in length by up to 10 times), kernels
        // to open.
        let steal = u32::try_from(len).is_ok();
        let bounds: &[usize] = &bounds;
        // Planned parts are claimed by their busy elements (part `k` has busy elements
        // `k * n / own..(k + 1) * n / own` of `n`; its idle ones go with the chunk before).
        // (Only when every part has a busy element: a part without one would claim nothing,
        // and its idle elements would run on no thread.)
        let by_busy = planned && busy.len() >= own;
        let nb = busy.len();
        if steal {
            for (k, claim) in self.claims[..own].iter().enumerate() {
                if by_busy {
                    claim.set(k * nb / own, (k + 1) * nb / own);
                } else {
                    claim.set(bounds[k], bounds[k + 1]);
                }
            }
        }
        let busy: &[usize] = &busy;
        // Elements `from..to` of part `k`'s claims as a range of elements.
        let elements = |k: usize, from: usize, to: usize| {
            if !by_busy {
                return (from, to);
            }
            let at = |j: usize| {
                if j == k * nb / own {
                    bounds[k]
                } else if j == (k + 1) * nb / own {
                    bounds[k + 1]
                } else {
                    busy[j].min(bounds[k + 1])
                }
            };
            (at(from), at(to))
        };
        let claims = &self.claims[..own];
        let first_err: Mutex<Option<PartError>> = Mutex::new(None);
        // The error with the lowest index; among equal indices (panics: `len`), the first
        // message in byte order, so that what is reported does not depend on timing.
        let note = |e: PartError| {
            let mut g = first_err.lock().unwrap_or_else(|p| p.into_inner());
            if g.as_ref().is_none_or(|(i, m)| (e.0, &e.1) < (*i, m)) {
                *g = Some(e);
            }
        };
        let (pa, pb, pc, pd) = (
            RawSlice(a.as_mut_ptr(), len),
            RawSlice(b.as_mut_ptr(), len),
            RawSlice(c.as_mut_ptr(), len),
            RawSlice(d.as_mut_ptr(), len),
        );
        let run = |start: usize, end: usize| {
            if start >= end {
                return;
            }
            // SAFETY: parts, and the chunks of parts, are disjoint ranges of `a`, `b`, `c` and
            // `d`, each given out once (a chunk is taken once: `Claim`), which this function
            // borrows mutably and does not touch until every part has finished.
            let (ca, cb, cc, cd) = unsafe {
                (
                    pa.range(start, end),
                    pb.range(start, end),
                    pc.range(start, end),
                    pd.range(start, end),
                )
            };
            match catch_unwind(AssertUnwindSafe(|| f(start, ca, cb, cc, cd))) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => note(e),
                // Where a thread's share begins depends on timing (elements are taken), so a
                // panic is reported after every error and names no element.
                Err(p) => note((
                    len,
                    format!("a thread of a parallel step panicked: {}", panic_text(&p)),
                )),
            }
        };
        let part = |k: usize| {
            if k >= parts {
                return;
            }
            if let Some(s) = side {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| (s.job)(k, parts))) {
                    note((
                        len,
                        format!(
                            "a thread's share of the step's side work panicked: {}",
                            panic_text(&p)
                        ),
                    ));
                }
            }
            if steal {
                if let Some(mine) = claims.get(k) {
                    while let Some((i, e)) = mine.take_front() {
                        let (i, e) = elements(k, i, e);
                        run(i, e);
                    }
                }
                for j in 1..=own.min(VICTIMS + 1) {
                    let v = (k + j) % own;
                    if v == k {
                        continue;
                    }
                    let other = &claims[v];
                    while let Some((i, e)) = other.take_back() {
                        let (i, e) = elements(v, i, e);
                        run(i, e);
                    }
                }
                return;
            }
            if k >= own {
                return;
            }
            run(bounds[k], bounds[k + 1]);
        };
        let job: &Job<'_> = &part;
        // SAFETY: a worker uses `job` only after taking its part of the epoch bumped below
        // (`Slot::turn`) and before its `done` store of that epoch; this function waits for
        // the `done` of every worker that took its part (it runs the others' parts itself)
        // before `part` (and what it borrows, and `job` itself) goes out of scope.
        let job: &'static Job<'static> =
            unsafe { std::mem::transmute::<&Job<'_>, &'static Job<'static>>(job) };
        let sh = &*self.shared;
        let workers = &sh.slots[..self.workers.len()];
        let epoch = sh.post.epoch.load(Ordering::Relaxed) + 1;
        sh.post
            .job
            .store(&job as *const &'static Job<'static> as *mut (), Ordering::Relaxed);
        // SeqCst: ordered with the `parked` load below (a parking worker registers, then
        // reads the epoch, both SeqCst), so no worker sleeps through this step.
        sh.post.epoch.store(epoch, Ordering::SeqCst);
        // A parked worker is woken (it is late to this step for that reason alone).
        let woke = sh.parked.load(Ordering::SeqCst) > 0;
        if woke {
            let _g = sh.lock.lock().unwrap_or_else(|p| p.into_inner());
            sh.wake.notify_all();
        }
        part(0);
        // The wait for the workers: spinning, then yielding; the time spent yielding is
        // measured (the clock is read only then, which a step on a machine with idle cores
        // seldom reaches). A worker that has not begun its part by now (on an errand,
        // parked, or late) does not: this thread runs it (`Slot::turn`).
        let mut yielding_since: Option<std::time::Instant> = None;
        let mut errand_in_step = false;
        for (i, w) in workers.iter().enumerate() {
            if w.turn.load(Ordering::Acquire) < epoch && w.turn.fetch_max(epoch, Ordering::AcqRel) < epoch {
                errand_in_step |= w.on_errand.load(Ordering::Relaxed);
                part(i + 1);
                continue;
            }
            let mut round = 0u32;
            while w.done.load(Ordering::Acquire) != epoch {
                if round == SPIN_ROUNDS && yielding_since.is_none() {
                    yielding_since = Some(std::time::Instant::now());
                }
                pause(round);
                round = round.saturating_add(1);
            }
        }
        // Only steps of one cycle tell whether the machine is busy: a longer step's worker
        // may finish 100 µs after the calling thread while running all along (a batch of
        // trace blocks to parse takes ~0.3 ms a thread; counting them sent the parsing of
        // the waves trace, and the first 4,096 cycles after it, to one thread in most runs).
        if kind == StepKind::Measured {
            self.note_wait(woke, yielding_since.map(|t| t.elapsed()));
            // A worker on an errand says nothing of whether parallel steps pay here.
            if errand_in_step {
                self.pays.last.set(None);
            }
        }
        match first_err.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }
}

impl Threads {
    /// [`Threads::note_step`] for a step whose calling thread waited `yielded` for the
    /// workers after its spinning rounds (`None`: it did not yield); `woke`: the step woke a
    /// parked worker.
    fn note_wait(&self, woke: bool, yielded: Option<std::time::Duration>) {
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
struct StepTiming {
    /// The start of the last step if it was timed, and whether it ran on several threads.
    last: Cell<Option<(std::time::Instant, bool)>>,
    /// Nanoseconds and steps timed in this probe, on several threads [1] and alone [0].
    ns: [Cell<u64>; 2],
    n: [Cell<u32>; 2],
    /// Steps run in this probe.
    probe_i: Cell<u32>,
    /// Steps left to run the decided way, and that way (`true`: several threads).
    decided: Cell<u32>,
    parallel: Cell<bool>,
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
const MAX_STEP_NS: u64 = 1_000_000;

impl StepTiming {
    /// Whether a step that could run on several threads (`wanted`) does.
    fn choose(&self, wanted: bool) -> bool {
        self.choose_at(wanted, std::time::Instant::now)
    }

    /// [`StepTiming::choose`] with the clock `now` (read only while probing).
    fn choose_at(&self, wanted: bool, now: impl Fn() -> std::time::Instant) -> bool {
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

/// The boundaries of a step's `own` parts of `len` elements (part `k` is elements
/// `out[k]..out[k + 1]`): equal-sized, or planned over the `busy` elements (part `k` starts at
/// busy element `k * busy.len() / own`, the first part at 0).
fn part_bounds(out: &mut Vec<usize>, own: usize, len: usize, busy: Option<&[usize]>) {
    out.clear();
    let size = len.div_ceil(own.max(1));
    out.extend((0..=own).map(|k| match busy {
        _ if k == own => len,
        Some(_) if k == 0 => 0,
        Some(busy) => busy.get(k * busy.len() / own).map_or(len, |&i| i.min(len)),
        None => len.min(k * size),
    }));
}

/// A panic's message, if it has one.
fn panic_text(p: &(dyn std::any::Any + Send)) -> &str {
    p.downcast_ref::<&str>()
        .copied()
        .or_else(|| p.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

fn worker(sh: &Shared, k: usize) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Runs steps that could all be parallel, each taking `par_ns` on several threads and
    /// `alone_ns` alone, until a probe decides; returns (steps, how many ran parallel).
    fn probe(t: &StepTiming, clock: &Cell<Instant>, par_ns: u64, alone_ns: u64) -> (u32, u32) {
        let (mut steps, mut parallel) = (0, 0);
        while t.decided.get() == 0 {
            assert!(steps < 100 * PROBE_STEPS, "a probe ends");
            let p = t.choose_at(true, || clock.get());
            steps += 1;
            parallel += u32::from(p);
            let ns = if p { par_ns } else { alone_ns };
            clock.set(clock.get() + Duration::from_nanos(ns));
        }
        (steps, parallel)
    }

    /// The next `DECIDED_STEPS` steps all run the same way: which.
    fn decided_way(t: &StepTiming) -> bool {
        let way = t.choose_at(true, || panic!("no clock read once decided"));
        for _ in 1..DECIDED_STEPS {
            assert_eq!(t.choose_at(true, || panic!("no clock read once decided")), way);
        }
        way
    }

    /// The busy-machine back-off: waits of a running worker (a calling thread whose part was
    /// shorter than the worker's, or than a store's way to the other core) never send the
    /// pool alone, however many; waits of a worker that was not running do, and for twice
    /// as long when the next check finds the machine still busy.
    #[test]
    fn only_waits_for_a_descheduled_worker_send_the_pool_alone() {
        let t = Threads::new(2);
        let short = Some(Duration::from_nanos(SLOW_WAIT_NS / 2));
        let long = Some(Duration::from_nanos(SLOW_WAIT_NS));
        for _ in 0..4 * CHECK_STEPS {
            t.note_wait(false, short);
            t.note_wait(false, None);
        }
        assert_eq!(t.alone.get(), 0, "short waits are not a busy machine");
        // Woken from its park, a worker is late for that alone.
        for _ in 0..CHECK_STEPS {
            t.note_wait(true, Some(Duration::from_millis(5)));
        }
        assert_eq!(t.alone.get(), 0, "waking a parked worker is not a busy machine");
        // A quarter of a check's steps are not enough; one more is.
        let quarter = CHECK_STEPS / 4;
        for k in 0..CHECK_STEPS {
            t.note_wait(false, if k < quarter { long } else { short });
        }
        assert_eq!(t.alone.get(), 0, "{quarter} slow steps of {CHECK_STEPS}");
        for k in 0..CHECK_STEPS {
            t.note_wait(false, if k <= quarter { long } else { None });
        }
        assert_eq!(t.alone.get(), ALONE_STEPS);
        // Still busy at the next check: twice as long.
        t.alone.set(0);
        for _ in 0..CHECK_STEPS {
            t.note_wait(false, long);
        }
        assert_eq!(t.alone.get(), 2 * ALONE_STEPS);
    }

    /// Steps whose worker is on an errand (its part run by the calling thread) are not
    /// timed by the probe of whether parallel steps pay: they say nothing about the machine,
    /// and counting them kept small steps alone for 16,384 steps after the errand.
    #[test]
    fn steps_while_a_worker_is_on_an_errand_are_not_timed() {
        use std::sync::mpsc;
        let t = Threads::new(2);
        if t.count() < 2 {
            return;
        }
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        t.errand(Box::new(move || {
            let _ = started_tx.send(());
            let _ = release_rx.recv_timeout(Duration::from_secs(30));
        }))
        .map_err(|_| "no worker")
        .expect("a worker");
        started_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the errand runs");
        // Steps over 4 elements on 2 threads: small, so probed.
        let (mut a, mut b, mut c) = (vec![0u32; 4], vec![(); 4], vec![(); 4]);
        for _ in 0..4 * PROBE_STEPS + 16 * PROBE_BLOCK {
            t.for_parts3(2, &mut a, &mut b, &mut c, &|_, p, _, _| {
                p.iter_mut().for_each(|x| *x += 1);
                Ok(())
            })
            .expect("step");
        }
        assert!(a.iter().all(|&x| x == 4 * PROBE_STEPS + 16 * PROBE_BLOCK));
        assert_eq!(t.pays.n[1].get(), 0, "a parallel step was timed");
        assert_eq!(t.pays.decided.get(), 0, "the probe decided on such steps");
        release_tx.send(()).expect("release");
    }

    /// A batch of trace blocks to parse (`for_parts`) whose worker finishes well after the
    /// calling thread neither counts as a slow step nor runs alone during a back-off: only
    /// steps of one cycle say whether the machine is busy. (Counting them sent the parsing of
    /// the waves trace to one thread in most runs.)
    #[test]
    fn long_steps_leave_the_busy_machine_back_off_alone() {
        let t = Threads::new(2);
        if t.count() < 2 {
            return; // the system refused a thread: nothing to check
        }
        let (mut a, mut b) = (vec![0u8; 2], vec![0u8; 2]);
        let late_worker = |first: usize, _: &mut [u8], _: &mut [u8]| {
            if first > 0 {
                std::thread::sleep(Duration::from_nanos(3 * SLOW_WAIT_NS));
            }
            Ok(())
        };
        for _ in 0..2 * CHECK_STEPS {
            t.for_parts(&mut a, &mut b, &late_worker).expect("step");
        }
        assert_eq!((t.alone.get(), t.steps.get()), (0, 0), "long steps counted");
        // During a back-off they still run on every thread.
        t.alone.set(ALONE_STEPS);
        let on_worker = std::sync::atomic::AtomicBool::new(false);
        t.for_parts(&mut a, &mut b, &|first, _, _| {
            if first > 0 {
                on_worker.store(true, Ordering::Relaxed);
            }
            Ok(())
        })
        .expect("step");
        assert!(on_worker.load(Ordering::Relaxed), "a long step ran alone");
        assert_eq!(t.alone.get(), ALONE_STEPS);
    }

    /// A kernel of 8 CTAs keeps SMs 0..8 busy: equal-sized parts would give them all to the
    /// first thread; planned, each of two threads gets four.
    #[test]
    fn planned_parts_give_each_thread_as_many_busy_elements() {
        let mut b = Vec::new();
        part_bounds(&mut b, 2, 84, Some(&[0, 1, 2, 3, 4, 5, 6, 7]));
        assert_eq!(b, [0, 4, 84]);
        // Busy elements spread out: the second part starts at the fifth.
        let spread = [3, 10, 20, 30, 40, 50, 60, 70, 80, 81, 82, 83];
        part_bounds(&mut b, 3, 84, Some(&spread));
        assert_eq!(b, [0, 40, 80, 84]);
        part_bounds(&mut b, 2, 84, None);
        assert_eq!(b, [0, 42, 84]);
        part_bounds(&mut b, 4, 10, None);
        assert_eq!(b, [0, 3, 6, 9, 10]);
    }

    /// A part's elements are taken a quarter at a time from either end, each once.
    #[test]
    fn claims_give_each_element_once() {
        let c = Claim::default();
        c.set(10, 50);
        assert_eq!(c.take_front(), Some((10, 20)));
        assert_eq!(c.take_back(), Some((43, 50)));
        let mut seen = [0u32; 50];
        for r in [(10, 20), (43, 50)] {
            (r.0..r.1).for_each(|i| seen[i] += 1);
        }
        let mut k = 0;
        while let Some((a, b)) = if k % 2 == 0 { c.take_front() } else { c.take_back() } {
            assert!(a < b);
            (a..b).for_each(|i| seen[i] += 1);
            k += 1;
        }
        assert!(k > 10, "the last takes are small: {k}");
        assert_eq!(&seen[..10], &[0; 10]);
        assert_eq!(&seen[10..], &[1; 40]);
        c.set(5, 5);
        assert_eq!((c.take_front(), c.take_back()), (None, None));
    }

    #[test]
    fn steps_run_the_way_measured_faster() {
        let clock = Cell::new(Instant::now());
        // Parallel steps twice as fast: a probe, about half of it parallel, then all are.
        let t = StepTiming::default();
        let (steps, parallel) = probe(&t, &clock, 1_000, 2_000);
        let timed = PROBE_BLOCK - WARMUP_STEPS;
        assert!(steps >= 2 * PROBE_STEPS / timed * PROBE_BLOCK, "{steps}");
        assert!(
            parallel.abs_diff(steps - parallel) <= PROBE_BLOCK,
            "{parallel} of {steps}"
        );
        assert!(t.parallel.get());
        assert!(decided_way(&t));
        // Parallel steps slower (cores that share no cache): alone after the probe.
        let t = StepTiming::default();
        probe(&t, &clock, 3_000, 2_000);
        assert!(!decided_way(&t));
        // The machine changes: the next probe finds it out.
        probe(&t, &clock, 1_000, 2_000);
        assert!(decided_way(&t));
        // Steps that could not run parallel are not timed and run alone.
        let t = StepTiming::default();
        assert!(!t.choose_at(false, || panic!("no clock read for a serial step")));
        // Work that grows along the run (each block of steps twice as heavy as the one
        // before, up to 8 times) is seen by both ways alike: parallel steps at 0.8 of the
        // time win although the alone blocks come later.
        let t = StepTiming::default();
        let mut k = 0u32;
        while t.decided.get() == 0 {
            let scale = 1u64 << (k / PROBE_BLOCK).min(3);
            let p = t.choose_at(true, || clock.get());
            let ns = if p { 800 } else { 1_000 } * scale;
            clock.set(clock.get() + Duration::from_nanos(ns));
            k += 1;
        }
        assert!(t.parallel.get(), "parallel was faster");
        // A long gap (another kernel's setup) is not a step's time.
        let t = StepTiming::default();
        for k in 0..2 * PROBE_BLOCK {
            t.choose_at(true, || clock.get());
            let gap = if k == WARMUP_STEPS + 10 {
                MAX_STEP_NS * 10
            } else {
                1_000
            };
            clock.set(clock.get() + Duration::from_nanos(gap));
        }
        assert_eq!(
            t.n[1].get(),
            PROBE_BLOCK - WARMUP_STEPS - 1,
            "the gap is not counted"
        );
        assert_eq!(t.n[0].get(), PROBE_BLOCK - WARMUP_STEPS - 1);
    }
}
