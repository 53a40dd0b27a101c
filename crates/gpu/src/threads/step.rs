//! A step of the pool: its parts run on the threads ([`Threads::for_parts`], [`Threads::map`],
//! [`Threads::for_parts3`], [`Threads::for_parts4`], [`Threads::for_parts4_long`]), with the side
//! job of [`Threads::with_side`]; how `run_parts` posts a step, runs the calling thread's part,
//! takes the parts of workers that have not begun theirs and waits for the others.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use super::backoff::MEASURED_BELOW_SMS_PER_THREAD;
use super::parts::{part_bounds, VICTIMS};
use super::{pause, Job, Threads, SPIN_ROUNDS};

// Named in the docs of `for_parts3` only.
#[cfg(doc)]
use super::{backoff::StepTiming, parts::Claim};

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

/// Work that runs alongside the SMs of the next step ([`Threads::with_side`]): called with
/// (share, shares) once for every share of `0..shares`.
type Side<'a> = dyn Fn(usize, usize) + Sync + 'a;

/// A [`Side`] job waiting for the next step, and the threads it is worth.
#[derive(Clone, Copy)]
pub(super) struct SideJob {
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

/// A panic's message, if it has one.
fn panic_text(p: &(dyn std::any::Any + Send)) -> &str {
    p.downcast_ref::<&str>()
        .copied()
        .or_else(|| p.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
