//! Parallel ticking of one kernel's SMs (issue 15): every statistic is the same for 1, 2 and
//! 4 threads, on kernels whose blocks talk through global memory — a spinlock (atomic
//! exchange, stores, spinning loads), a histogram (global and shared atomics), a vector add
//! on every SM — and the kernels still compute their reference outputs.

mod common;

use sassim_gpu::parallel::Threads;
use sassim_gpu::RunOptions;

/// Everything a run reports, as text (statistics, memory counters, cycles, occupancy).
fn run_text(name: &str, grid: Option<u32>, threads: usize) -> String {
    let opts = RunOptions {
        threads,
        ..RunOptions::default()
    };
    let what = format!("{name} with {threads} threads");
    let r = common::run_builtin_a6000(name, grid, &opts, &what);
    assert!(r.check.is_ok(), "{what}: {:?}", r.check);
    common::kernel_run_text(&r.run)
}

fn same_for_1_2_4_threads(name: &str, grid: Option<u32>) {
    let one = run_text(name, grid, 1);
    for t in [2, 4] {
        let other = run_text(name, grid, t);
        assert!(
            one == other,
            "{name}: {t} threads differ from 1:\n{one}\n---\n{other}"
        );
    }
}

#[test]
fn spinlock_statistics_do_not_depend_on_threads() {
    // Two blocks on two SMs take turns through a lock in global memory (the reference
    // output is the spec's grid's).
    same_for_1_2_4_threads("spinlock", None);
}

#[test]
fn histogram_statistics_do_not_depend_on_threads() {
    // Global atomicAdd from 64 blocks on 64 SMs, same bins in the same cycles.
    same_for_1_2_4_threads("histogram", Some(64));
}

#[test]
fn vector_add_on_every_sm_does_not_depend_on_threads() {
    same_for_1_2_4_threads("vecadd", Some(84));
}

/// The BFS trace (Accel-Sim tracer v3, 16 kernels): trace-driven SMs tick in parallel too.
#[test]
fn bfs_trace_statistics_do_not_depend_on_threads() {
    let run = |threads: usize| {
        common::bfs_trace_text(&RunOptions {
            threads,
            ..RunOptions::default()
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(4));
}

#[test]
fn parts_cover_the_slices_and_report_the_lowest_error() {
    let t = Threads::new(4);
    assert_eq!(t.count(), 4);
    let mut a: Vec<usize> = (0..10).collect();
    let mut b = vec![usize::MAX; 10];
    let ok = t.for_parts(&mut a, &mut b, &|first, pa, pb| {
        for (x, f) in pa.iter_mut().zip(pb.iter_mut()) {
            *x *= 2;
            *f = first;
        }
        Ok(())
    });
    assert!(ok.is_ok());
    assert_eq!(a, (0..10).map(|x| x * 2).collect::<Vec<_>>());
    // Ten elements in four parts of three (the last of one); a call covers elements of one
    // part (a thread done early takes what another has not begun, so calls may be smaller).
    for (i, &first) in b.iter().enumerate() {
        assert!(
            i / 3 * 3 <= first && first <= i,
            "element {i} in a call from {first}"
        );
    }
    // Errors from several parts: the lowest index wins, whichever thread finished first.
    let err = t.for_parts(&mut a, &mut b, &|first, _, _| {
        if first >= 3 {
            Err((first, format!("part at {first}")))
        } else {
            Ok(())
        }
    });
    assert_eq!(err, Err("part at 3".to_string()));
    // One thread: one part.
    let one = Threads::new(1);
    assert_eq!(one.count(), 1);
    one.for_parts(&mut a, &mut b, &|first, pa, pb| {
        assert_eq!((first, pa.len(), pb.len()), (0, 10, 10));
        Ok(())
    })
    .expect("one part");
}

/// Whatever the plan, the threads and their timing, a step visits every element once: a
/// thread done with its part takes elements of parts not yet begun.
#[test]
fn every_element_is_stepped_once_whoever_takes_it() {
    let t = Threads::new(4);
    let n = 84;
    let mut seen = vec![0u32; n];
    let (mut b, mut c) = (vec![(); n], vec![(); n]);
    let busy = |sms: &[usize]| (0..n).map(move |i| sms.contains(&i)).collect::<Vec<_>>();
    let spread = [3, 10, 20, 30, 40, 50, 60, 70, 80, 81, 82, 83];
    for round in 0..40u64 {
        let threads = match round % 3 {
            0 => t.plan_step(busy(&[0, 1, 2, 3, 4, 5, 6, 7]).into_iter()),
            1 => t.plan_step(busy(&spread).into_iter()),
            _ => 4,
        };
        // Some elements are slow (another thread may take what follows them).
        t.for_parts3(threads, &mut seen, &mut b, &mut c, &|first, p, _, _| {
            for (i, x) in p.iter_mut().enumerate() {
                if (first + i) as u64 % 7 == round % 7 {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
                *x += 1;
            }
            Ok(())
        })
        .expect("step");
        assert!(
            seen.iter().all(|&x| x == round as u32 + 1),
            "round {round}: {seen:?}"
        );
    }
}

/// A step on more threads than its plan has busy elements (the plan said two threads for
/// eight busy SMs; the step asks for sixteen): every element still runs once.
#[test]
fn a_plan_with_fewer_busy_elements_than_threads_covers_every_element() {
    let t = Threads::new(16);
    if t.count() < 16 {
        return; // the system refused threads: nothing to check
    }
    let n = 84;
    let mut seen = vec![0u32; n];
    let (mut b, mut c) = (vec![(); n], vec![(); n]);
    for round in 1..=20 {
        let useful = t.plan_step((0..n).map(|i| (10..18).contains(&i)));
        assert_eq!(useful, 2);
        t.for_parts3(16, &mut seen, &mut b, &mut c, &|_, p, _, _| {
            p.iter_mut().for_each(|x| *x += 1);
            Ok(())
        })
        .expect("step");
        assert!(seen.iter().all(|&x| x == round), "round {round}: {seen:?}");
    }
}

/// A thread that is late to a step (here: a long share of the side job) finds its part
/// taken by the thread that was done first.
#[test]
fn a_late_thread_s_part_is_taken_by_the_others() {
    let t = Threads::new(2);
    if t.count() < 2 {
        return; // the system refused a thread: nothing to check
    }
    let n = 84;
    let mut ran_on = vec![None; n];
    let mut side = vec![0u8; 2];
    let me = std::thread::current().id();
    t.with_side(
        2,
        &mut side,
        &|share: &mut [u8]| {
            if std::thread::current().id() != me {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            share.iter_mut().for_each(|x| *x += 1);
        },
        || step_noting_threads(&t, &mut ran_on),
    );
    assert_eq!(side, [1, 1]);
    assert!(ran_on.iter().all(|x| *x == Some(me)), "{ran_on:?}");
}

#[test]
fn side_work_covers_its_slice_once_in_the_next_step() {
    use std::sync::Mutex;
    let t = Threads::new(4);
    let mut sms = vec![0u32; 10];
    let mut none = vec![(); 10];
    let mut none2 = vec![(); 10];
    // (side threads wanted, threads of the body's step, steps the body runs)
    for (want, step_threads, steps) in [(4, 1, 1), (1, 4, 1), (3, 2, 1), (4, 4, 2), (4, 4, 0)] {
        let mut side = vec![0u32; 8];
        let ids = Mutex::new(Vec::new());
        let mut body_calls = 0;
        t.with_side(
            want,
            &mut side,
            &|part: &mut [u32]| {
                ids.lock().expect("ids").push(std::thread::current().id());
                part.iter_mut().for_each(|x| *x += 1);
            },
            || {
                for _ in 0..steps {
                    t.for_parts3(step_threads, &mut sms, &mut none, &mut none2, &|_, p, _, _| {
                        p.iter_mut().for_each(|x| *x += 1);
                        Ok(())
                    })
                    .expect("step");
                    body_calls += 1;
                }
            },
        );
        assert_eq!(body_calls, steps);
        assert_eq!(
            side, [1; 8],
            "want {want}, step threads {step_threads}, steps {steps}"
        );
        let mut ids = ids.into_inner().expect("ids");
        ids.sort_by_key(|i| format!("{i:?}"));
        ids.dedup();
        // The shares ran on at most as many threads as wanted when the body ran a step
        // (each part of a step runs on its own thread, or on the calling thread when its
        // worker had not begun it by the time the calling thread was done with its own), on
        // this thread alone when it ran none.
        let most = if steps == 0 { 1 } else { want.max(step_threads) };
        assert!(
            (1..=most).contains(&ids.len()),
            "want {want}, step threads {step_threads}, steps {steps}: {} threads",
            ids.len()
        );
        if steps == 0 {
            assert_eq!(ids, [std::thread::current().id()]);
        }
    }
    assert_eq!(sms, [5; 10]);
    // No side work is left for a later step.
    let mut side = vec![0u32; 4];
    t.with_side(
        4,
        &mut side,
        &|p: &mut [u32]| p.iter_mut().for_each(|x| *x += 1),
        || (),
    );
    t.for_parts3(4, &mut sms, &mut none, &mut none2, &|_, _, _, _| Ok(()))
        .expect("step");
    assert_eq!(side, [1; 4]);
}

/// A step over `ran_on` on two threads of `t` noting, per element, the thread that ran it.
fn step_noting_threads(t: &Threads, ran_on: &mut [Option<std::thread::ThreadId>]) {
    let n = ran_on.len();
    let (mut b, mut c) = (vec![(); n], vec![(); n]);
    t.for_parts3(2, ran_on, &mut b, &mut c, &|_, p, _, _| {
        p.iter_mut().for_each(|x| *x = Some(std::thread::current().id()));
        Ok(())
    })
    .expect("step");
}

/// A worker on an errand (here one that waits to be released) takes part in no step: the
/// steps posted meanwhile run every part on the calling thread, each element once, without
/// waiting for it (before errands, the calling thread waited for every worker to finish
/// its part, here until the errand's 30 s were up). Once back, the worker steps again.
#[test]
fn steps_do_not_wait_for_a_worker_on_an_errand() {
    use std::sync::mpsc;
    use std::time::{Duration, Instant};
    let t = Threads::new(2);
    if t.count() < 2 {
        return; // the system refused a thread: nothing to check
    }
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    t.errand(Box::new(move || {
        let _ = started_tx.send(std::thread::current().id());
        let _ = release_rx.recv_timeout(Duration::from_secs(30));
    }))
    .map_err(|_| "no worker")
    .expect("a pool of two threads has a worker");
    let me = std::thread::current().id();
    let on_errand = started_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the errand runs");
    assert_ne!(on_errand, me, "errands run on a worker");
    let n = 84;
    let mut ran_on = vec![None; n];
    let (mut b, mut c) = (vec![(); n], vec![(); n]);
    let mut side = vec![0u8; 2];
    let t0 = Instant::now();
    for _ in 0..100 {
        step_noting_threads(&t, &mut ran_on);
        assert!(ran_on.iter().all(|x| *x == Some(me)), "{ran_on:?}");
        ran_on.iter_mut().for_each(|x| *x = None);
    }
    // A step with side work: the worker's share runs here too.
    t.with_side(
        2,
        &mut side,
        &|share: &mut [u8]| share.iter_mut().for_each(|x| *x += 1),
        || step_noting_threads(&t, &mut ran_on),
    );
    assert_eq!(side, [1, 1]);
    assert!(ran_on.iter().all(|x| *x == Some(me)), "{ran_on:?}");
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "the steps waited for the errand: {:?}",
        t0.elapsed()
    );
    release_tx.send(()).expect("release");
    // Back from its errand, the worker takes elements again (each takes 1 ms here, so that
    // the calling thread cannot take all of them before the worker starts).
    let mut worker_stepped = false;
    for _ in 0..50 {
        t.for_parts3(2, &mut ran_on, &mut b, &mut c, &|_, p, _, _| {
            for x in p.iter_mut() {
                std::thread::sleep(Duration::from_millis(1));
                *x = Some(std::thread::current().id());
            }
            Ok(())
        })
        .expect("step");
        assert!(ran_on.iter().all(Option::is_some));
        if ran_on.iter().any(|x| *x != Some(me)) {
            worker_stepped = true;
            break;
        }
    }
    assert!(worker_stepped, "the worker steps again after its errand");
}

/// Errands run in the order given, on a worker, also when the worker had parked; a pool
/// without workers gives the errand back.
#[test]
fn errands_run_in_order_on_a_worker_even_a_parked_one() {
    use std::sync::mpsc;
    use std::time::Duration;
    assert!(Threads::new(1).errand(Box::new(|| {})).is_err(), "no worker");
    let t = Threads::new(2);
    if t.count() < 2 {
        return;
    }
    // Long enough for the worker to park (it has seen no step).
    std::thread::sleep(Duration::from_millis(200));
    let (tx, rx) = mpsc::channel();
    for k in 0..5 {
        let tx = tx.clone();
        t.errand(Box::new(move || {
            let _ = tx.send((k, std::thread::current().id()));
        }))
        .map_err(|_| "no worker")
        .expect("a worker");
    }
    let me = std::thread::current().id();
    for k in 0..5 {
        let (got, on) = rx.recv_timeout(Duration::from_secs(30)).expect("the errand runs");
        assert_eq!(got, k);
        assert_ne!(on, me);
    }
}

/// A worker on an errand that reaches interleave points (`sassim_trace::interleave`, as a
/// trace parse does every 32 lines) takes its part of the steps posted meanwhile: every
/// element of every step runs once, and some run on the worker while its errand is still
/// running (without the interleave hook, none would: the calling thread runs the part of a
/// worker that has not begun it).
#[test]
fn a_worker_on_an_errand_steps_at_its_interleave_points() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc};
    use std::time::Duration;
    let t = Threads::new(2);
    if t.count() < 2 {
        return;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let until = Arc::clone(&stop);
    t.errand(Box::new(move || {
        let _ = tx.send(std::thread::current().id());
        let start = std::time::Instant::now();
        while !until.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(30) {
            sassim_trace::interleave::point();
            std::hint::spin_loop();
        }
    }))
    .map_err(|_| "no worker")
    .expect("a worker");
    let worker = rx.recv_timeout(Duration::from_secs(30)).expect("the errand runs");
    let n = 84;
    let mut ran_on = vec![None; n];
    let (mut b, mut c) = (vec![(); n], vec![(); n]);
    let mut on_worker = 0;
    // (Steps until the worker has taken part in one, for at most 10 s: a loaded machine may
    // deschedule it for a while.)
    let start = std::time::Instant::now();
    for step in 0.. {
        if step >= 200 && (on_worker > 0 || start.elapsed() > Duration::from_secs(10)) {
            break;
        }
        ran_on.iter_mut().for_each(|x| *x = None);
        t.for_parts3(2, &mut ran_on, &mut b, &mut c, &|_, p, _, _| {
            for x in p.iter_mut() {
                // About a µs of work an element, so that the worker's part is worth taking.
                for _ in 0..200 {
                    std::hint::spin_loop();
                }
                *x = Some(std::thread::current().id());
            }
            Ok(())
        })
        .expect("step");
        assert!(ran_on.iter().all(Option::is_some));
        on_worker += ran_on.iter().filter(|x| **x == Some(worker)).count();
    }
    stop.store(true, Ordering::Release);
    assert!(on_worker > 0, "the worker took no part of a step from its errand");
}

/// Built-in workload `name` (with `grid` CTAs if given) on `sms` SMs of the A6000 preset and
/// 2 threads, set up as `run_workload_timed` does, its CTAs' records made at their SMs' steps
/// (no `on_cta` hook) or at their launch (a hook that does nothing): everything the run
/// reports, every buffer afterwards, and with `keep_cta_state` every warp's registers.
fn run_with_hook(name: &str, grid: Option<u32>, sms: u32, keep: bool, hook: bool) -> String {
    use sassim_functional::{ControlFlowKind, KernelExec, WarpId};
    use std::fmt::Write;
    let b = sassim_workload::builtin_named(name).expect("built-in workload");
    let (mut w, listing, smem) = sassim_gpu::workload::load_builtin(&b, "sm_86").expect("load");
    if let Some(g) = grid {
        w.grid = [g, 1, 1];
    }
    let mut cfg = sassim_config::GpuConfig::preset("rtx-a6000").expect("preset");
    cfg.gpu.num_sms = sms;
    let mut gpu = sassim_gpu::Gpu::new(cfg);
    let opts = RunOptions {
        threads: 2,
        keep_cta_state: keep,
        ..RunOptions::default()
    };
    let mut p = sassim_gpu::workload::prepare_workload(
        &gpu,
        &w,
        &listing,
        "sm_86",
        smem,
        ControlFlowKind::Hanoi,
        &opts,
    )
    .expect("set-up");
    let mut nothing = |_: &mut KernelExec, _: &[WarpId]| {};
    let on_cta: sassim_gpu::OnCta<'_> = if hook { Some(&mut nothing) } else { None };
    let run = gpu
        .run_kernel(&mut p.exec, &p.kernel, &p.opts, on_cta)
        .expect("run");
    let mut text = common::kernel_run_text(&run);
    for buf in w.buffers() {
        let bytes = p.exec.memory_ref().bytes_at(p.addrs[&buf.name], buf.bytes.len());
        let _ = write!(text, "\n{}: {bytes:?}", buf.name);
    }
    if keep {
        let warps = w.grid.iter().product::<u32>() * w.block.iter().product::<u32>().div_ceil(32);
        assert_eq!(p.exec.num_warps() as u32, warps, "{name}: every warp kept");
        for i in 0..warps {
            for r in 0..16 {
                let _ = write!(
                    text,
                    "\nwarp {i} R{r}: {:?}",
                    p.exec.regs(WarpId(i), sassim_isa::ArchReg::R(r))
                );
            }
        }
    }
    text
}

/// A CTA's functional records are made at its SM's next step when no `on_cta` hook needs
/// them at its launch (docs/model.md "Determinism"): the same statistics, outputs and
/// registers either way, with many CTAs reusing the records of a few SMs' retired ones.
#[test]
fn cta_records_made_at_the_step_match_those_made_at_the_launch() {
    // (The vector add with 300 CTAs of 8 warps: bounds-checked beyond its 1,000 elements.)
    for (name, grid, sms) in [
        ("vecadd", Some(300), 3),
        ("reduce", None, 3),
        ("matmul", None, 5),
        ("histogram", None, 2),
    ] {
        for keep in [false, true] {
            let now = run_with_hook(name, grid, sms, keep, true);
            let later = run_with_hook(name, grid, sms, keep, false);
            assert!(
                now == later,
                "{name} (keep {keep}): the hook changed the run:\n{now}\n---\n{later}"
            );
        }
    }
}
