//! Tests of the pool: the busy-machine back-off, steps while a worker is on an errand, long
//! steps, planned parts, claims, and the measure of whether parallel steps pay.

use super::backoff::MAX_STEP_NS;
use super::parts::part_bounds;
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
