//! Quanta: several core cycles per parallel step for trace-driven kernels (issue 15;
//! docs/performance-log.md "Eleventh session of 2026-11-27"; docs/model.md "Determinism").
//!
//! A quantum of `q` cycles `T .. T + q` runs in three parts, with the results of running
//! the cycles one by one:
//!
//! 1. **The memory system's back half** runs the `q` cycles first
//!    ([`crate::memsys::MemModel::quantum_back`]): clocks, the response crossbar, the L2
//!    slices' fills, responses and tag lookups, DRAM. Nothing the SMs send during the
//!    quantum can reach a tag lookup in it (the L2's ROP pipeline is at least `q` cycles
//!    long), and no SM's response queue can fill in it, so the responses of every cycle are
//!    known before the SMs step.
//! 2. **Each SM steps through the quantum on its own** ([`sm_quantum`]), on the GPU's
//!    threads: every cycle its L1 takes the responses due by then, it ticks, and its
//!    requests wait at its port with their cycle (staged). An SM stops early before a
//!    cycle in which its input queue could refuse a request (a push the cycle-by-cycle run
//!    might accept), and after a cycle in which a CTA on it may have completed (as many of
//!    its warps have finished as the fewest unfinished warps of one of its CTAs): CTA
//!    completions are serial, in cycle order. Warps finished before then are retired with
//!    them (nothing else depends on when).
//! 3. **Cycle by cycle**: the SMs that stopped early step alone (one cycle at a time, each
//!    at its port, on the GPU's threads when there are enough of them, as a cycle-by-cycle
//!    step does: [`KernelSource::tick_sms_alone`]), then serially finished warps are
//!    retired in SM order and the memory system's front half runs (staged requests join
//!    their input queues, the request crossbar, requests entering the ROP pipelines).
//!
//! Quanta end at the cycle limit, an IPC sample, a progress report or before a possible
//! deadlock, and cover the kernel launch latency. While CTAs are being sent, the SMs the
//! dispatcher may send one to (they have room, or a completion of theirs is on its way) and
//! those whose launcher has work step alone from the quantum's start ([`mark_alone`]); the
//! dispatcher's and the launchers' cycles run in the serial part. Any other SM can only
//! receive a CTA after finishing one, and it stops its own steps there. Quanta in which too
//! many of the busy SMs' cycles ran alone (a memory-bound load: full request queues) are
//! slower than cycle-by-cycle steps: after a window of such quanta the run loop steps cycle
//! by cycle for a while ([`QuantumBufs::note`]).
//!
//! The next quantum's back half runs beside this one's SM steps unless the kernel may end
//! in this one (a warp with `r` instructions left cannot finish within `r - 1` cycles, nor an
//! SM with `r` left within `r / sub-cores - 1`; while CTAs are being sent, it may end in any
//! quantum: the CTAs not sent yet are not known). In a quantum in which it may end, SMs
//! without warps step alone from its start, so that no SM steps past the
//! kernel's last cycle, the back half notes after each cycle whether the partitions are
//! idle, and the drain after the kernel starts with the cycles the back half has run
//! ([`drain_ahead`]), undoing those after the one that found everything idle.

use crate::parallel::{PortOf, SmNote};
use crate::{cta, launch, KernelSource, RunOptions};
use sassim_timing::Sm;

/// What the SMs' steps of a quantum need besides the SMs and their ports
/// ([`KernelSource::tick_sms_quantum`], [`sm_quantum`]).
#[derive(Debug, Clone, Copy)]
pub struct QuantumSteps<'a> {
    /// The quantum's first cycle.
    pub first: u64,
    /// Per cycle of the quantum, the interconnect cycle whose responses the SMs' step of
    /// that cycle takes ([`icnt_before`]).
    pub icnt_before: &'a [u64],
    /// The kernel may end in the quantum.
    pub may_end: bool,
    /// Per SM, how many of its warps may finish before one of its CTAs can have completed:
    /// the fewest unfinished warps of a CTA on it (`SerialPart::finish_budgets`). An SM
    /// stops its own steps after the cycle in which that many have finished.
    pub finish_budgets: &'a [u32],
}

/// What one SM's steps of a quantum did.
#[derive(Debug, Clone, Copy, Default)]
pub struct QuantumAcc {
    /// The first cycle the SM did not step in the quantum's parallel part (from it on it
    /// steps alone, [`KernelSource::tick_sms_alone`]); `finished`: warps finished in its
    /// steps, which the serial part retires in the cycle before `until` (only in that one
    /// can a CTA have completed).
    pub until: u64,
    pub finished: bool,
    /// Sum over its cycles of the warps it held (occupancy), and the cycles it held any.
    pub occupancy: u64,
    pub busy_cycles: u64,
    /// Progress events, and the last cycle with one (`None`: none).
    pub progress: u64,
    pub last_progress: Option<u64>,
}

/// SM `s`'s (`sm`'s) steps of a quantum (`steps`), each by `tick` (one SM's step at its
/// port, [`crate::parallel::tick_sm_at`], with its progress events in `note.progress`);
/// none if it steps alone (`note.alone`, [`mark_alone`]). Stops early as the module docs
/// say; in a quantum in which the kernel may end, an SM without warps steps alone from the
/// start, so that no SM's steps go past the kernel's last cycle.
#[inline(always)]
pub fn sm_quantum<W>(
    s: usize,
    sm: &mut Sm<W>,
    mut tick: impl FnMut(&mut Sm<W>, u64, &mut SmNote, PortOf<'_>) -> Result<(), String>,
    steps: &QuantumSteps<'_>,
    note: &mut SmNote,
    port: &mut sassim_memory::SmPort,
    at: &sassim_memory::PortStep<'_>,
) -> Result<QuantumAcc, String> {
    let first = steps.first;
    let mut acc = QuantumAcc {
        until: first,
        ..QuantumAcc::default()
    };
    if note.alone || (steps.may_end && sm.active_warps() == 0) {
        return Ok(acc);
    }
    // Every warp finished before the quantum was retired (so the budget counts from 0).
    debug_assert!(!sm.has_finished(), "SM {s} starts a quantum with finished warps");
    let budget = steps.finish_budgets.get(s).map_or(0, |&b| b as usize);
    for (k, &icnt) in steps.icnt_before.iter().enumerate() {
        let cycle = first + k as u64;
        let at_c = at.in_quantum(cycle, icnt);
        // The first cycle's room is the cycle-by-cycle run's (nothing is staged yet).
        if k > 0 && port.room_at(&at_c) < sm.max_sends() {
            break;
        }
        note.inbox = port.has_response_at(&at_c);
        let p: PortOf<'_> = (&mut *port, &at_c, crate::cycle_before(cycle));
        tick(sm, cycle, note, p)?;
        acc.until = cycle + 1;
        acc.occupancy += u64::from(note.active);
        acc.busy_cycles += u64::from(note.active > 0);
        if note.progress > 0 {
            acc.progress += u64::from(note.progress);
            acc.last_progress = Some(cycle);
        }
        if note.finished {
            // Retired in the serial part at the last cycle of these steps: stop when a CTA
            // may have completed.
            acc.finished = true;
            if sm.finished_count() >= budget {
                break;
            }
        }
    }
    Ok(acc)
}

/// Into `out`, per cycle of a quantum whose clocks are `clocks`, the interconnect cycle whose
/// responses the SMs' step of that cycle takes: the one before the quantum (`first`), then
/// each cycle's last.
pub fn icnt_before(first: u64, clocks: &[sassim_memory::CycleClocks], out: &mut Vec<u64>) {
    out.clear();
    out.push(first);
    out.extend(clocks.iter().map(|k| k.icnt_last));
    out.pop();
}

/// An SM whose own steps of a quantum ended with finished warps, and the cycle its
/// warps are retired in (the last of those steps); ordered by cycle, then SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Retire {
    pub cycle: u64,
    pub sm: usize,
}

/// The buffers a run's quanta reuse, and the quantum whose back half has run ahead.
#[derive(Debug, Default)]
pub struct QuantumBufs {
    /// Per cycle of the current quantum: its clocks, and the interconnect cycle whose
    /// responses the SMs' step takes.
    pub clocks: Vec<sassim_memory::CycleClocks>,
    pub icnt_before: Vec<u64>,
    /// The clocks of the next quantum, whose back half ran during this one's steps (empty:
    /// none is committed).
    pub next_clocks: Vec<sassim_memory::CycleClocks>,
    /// SMs that stepped alone in a cycle of the serial part and pushed requests.
    pub pushed: Vec<usize>,
    /// Per SM, whether it steps alone in the serial part's current cycle.
    pub stepping: Vec<bool>,
    /// The SMs whose own steps of the current quantum ended with finished warps, by the
    /// cycle they are retired in (the last of those steps), then SM.
    pub retire_at: Vec<Retire>,
    pub accs: Vec<QuantumAcc>,
    /// [`QuantumSteps::finish_budgets`] of the current quantum.
    pub finish_budgets: Vec<u32>,
    /// The first cycle in which the kernel could end, as last worked out
    /// ([`KernelSource::quantum_horizon`]), and the cycle it was.
    pub horizon: u64,
    pub horizon_checked: u64,
    /// The kernel's first cycle, and the most instructions an SM issues a cycle.
    pub start: u64,
    pub issue_per_cycle: u64,
    /// The kernel may end in the current quantum (its clocks note whether the memory
    /// system is idle, and SMs without warps step alone).
    pub may_end: bool,
    /// The first cycle of the quantum in which the kernel ended ([`drain_ahead`]).
    pub ended_first: u64,
    /// Whether quanta pay for the load ([`QuantumBufs::note`]).
    pub payoff: Payoff,
}

/// Quanta are judged in windows of this many ([`QuantumBufs::note`]).
pub const CHECK_QUANTA: u32 = 16;
/// The share of the busy SMs' cycles (numerator, denominator) that must run in the
/// parallel part for a window of quanta to pay: 3/5, on any number of threads. An SM that
/// stops early steps alone, one cycle and one fork-join at a time (on one thread when few
/// do). On one thread quanta pay when most SMs run through them (each SM's state stays
/// cached through its cycles) but not when about half stop early: the memory-bound gather's
/// windows run 50–60 % of their busy SM-cycles in the parallel part, and with a bar of one
/// half its quanta cost 8 % more host instructions than single-cycle steps (20,000 cycles:
/// 1,580 M against 1,464 M without quanta); with 3/5 it runs 1,495.9 M and ~8 % less wall
/// time (40,000 cycles, five alternated runs: medians 0.405 → 0.372 s), while the
/// compute-bound waves trace (0.620 → 0.617 s) and BFS keep their quanta (nineteenth
/// session, docs/performance-log.md). On two threads the bar was 3/4 (1 − 1/(2 threads))
/// until the twenty-fourth session: the waves trace ran then 38–39 % of its SM-ticks
/// outside quanta (406 K of 1.05 M, against 107 K on one thread), each ~2–3 times as
/// costly as a tick inside one, and two threads gave it 1.56–1.59×; with 3/5, 1.74–1.81× in
/// five alternated close rounds, the gather unchanged (1.56–1.68× both ways) and one half or
/// no bar slower on the gather (docs/performance-log.md, "Twenty-fourth session"). More
/// than two threads could not be measured here; there a single-cycle step's fork-join costs
/// more, which favours quanta, not a higher bar. Only which cycles run in quanta depends on
/// it, never a result.
pub const PAYING_SHARE: (u64, u64) = (3, 5);
/// Cycles stepped one by one after a window of quanta that did not pay, doubled after each
/// further such window in a row, up to [`MAX_PAUSE_CYCLES`].
pub const PAUSE_CYCLES: u64 = 4_096;
pub const MAX_PAUSE_CYCLES: u64 = 65_536;
/// At most one SM in this many may step alone from a quantum's start (CTAs being sent to
/// them, [`mark_alone`]) for the quantum to run: more do not pay.
pub const ALONE_SHARE: usize = 4;

/// Whether quanta pay for the load being simulated: the busy SMs' cycles of the current
/// window of quanta in the parallel part and alone, and the pause of quanta.
#[derive(Debug, Default)]
pub struct Payoff {
    quanta: u32,
    parallel: u64,
    alone: u64,
    /// No quantum starts before this cycle; the next pause's length.
    paused_until: u64,
    pause: u64,
    /// [`QuantumBufs::set_busy_bound`].
    busy_bound: u64,
}

impl QuantumBufs {
    /// A quantum that `done` describes ended before cycle `end`: at the end of a window of
    /// [`CHECK_QUANTA`] quanta (not counting those without busy SMs), one whose busy SMs ran
    /// less than [`PAYING_SHARE`] of their cycles in the parallel part pauses quanta (for
    /// [`PAUSE_CYCLES`], twice as long after each further such window in a row). A window
    /// ends as soon as it must fail: when it would even if each of its quanta left ran
    /// `busy_bound` busy SM-cycles ([`QuantumBufs::set_busy_bound`]), all in the parallel
    /// part. Only which cycles run in quanta depends on it, never a result.
    pub fn note(&mut self, done: &QuantumDone, end: u64) {
        let p = &mut self.payoff;
        if done.parallel_busy + done.alone_busy == 0 {
            return;
        }
        p.quanta += 1;
        p.parallel += done.parallel_busy;
        p.alone += done.alone_busy;
        let (num, den) = PAYING_SHARE;
        // The most parallel busy SM-cycles the rest of the window can add.
        let rest = u64::from(CHECK_QUANTA.saturating_sub(p.quanta)).saturating_mul(p.busy_bound);
        let best = p.parallel.saturating_add(rest);
        let alone = u128::from(p.alone);
        let fails = |parallel: u64| {
            let parallel = u128::from(parallel);
            parallel * u128::from(den) < (parallel + alone) * u128::from(num)
        };
        let certain = p.busy_bound > 0 && fails(best);
        if p.quanta < CHECK_QUANTA && !certain {
            return;
        }
        if fails(p.parallel) {
            let pause = p.pause.max(PAUSE_CYCLES);
            p.paused_until = end + pause;
            p.pause = (pause * 2).min(MAX_PAUSE_CYCLES);
        } else {
            p.pause = PAUSE_CYCLES;
        }
        p.quanta = 0;
        p.parallel = 0;
        p.alone = 0;
    }

    /// The most busy SM-cycles one quantum can have (the longest quantum times the SMs): a
    /// window of quanta ends as soon as it must fail ([`QuantumBufs::note`]; 0: only at its
    /// end).
    pub fn set_busy_bound(&mut self, bound: u64) {
        self.payoff.busy_bound = bound;
    }

    /// Quanta are paused at `cycle` ([`QuantumBufs::note`]).
    pub fn paused(&self, cycle: u64) -> bool {
        cycle < self.payoff.paused_until
    }

    /// The length of the quantum whose back half has run ahead (0: none): the next cycles
    /// must be that quantum.
    pub fn committed(&self) -> u64 {
        self.next_clocks.len() as u64
    }
}

/// The next quantum's back half, run alongside this quantum's SM steps.
struct Ahead<'a> {
    back: sassim_memory::BackHalf<'a>,
    cycles: u64,
    clocks: &'a mut Vec<sassim_memory::CycleClocks>,
}

/// What the run loop does between the SMs' steps of a cycle and the memory system's front
/// half, for a quantum's serial part ([`run`]).
pub trait SerialPart<S: KernelSource> {
    /// The start of `cycle`, before the SMs that step alone in it (`alone`) do: the CTA
    /// dispatcher's and the SMs' launchers' cycles (CTAs go only to SMs that step alone).
    fn cycle_start(
        &mut self,
        cycle: u64,
        sms: &mut [Sm<S::Writes>],
        notes: &mut [SmNote],
        src: &mut S,
        alone: &dyn Fn(usize) -> bool,
    ) -> Result<(), String>;
    /// Into `out`, per SM: how many of its warps may finish before a CTA on it can have
    /// completed ([`QuantumSteps::finish_budgets`]).
    fn finish_budgets(&self, out: &mut Vec<u32>);
    /// SM `s` finished warps in `cycle` (or before, in its own steps of the quantum): their
    /// CTAs' bookkeeping.
    fn retire(&mut self, s: usize, cycle: u64, sm: &mut Sm<S::Writes>, src: &mut S);
    /// Every CTA of the kernel has finished.
    fn ended(&self) -> bool;
}

/// What a quantum did, for the run loop's counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct QuantumDone {
    /// Sum over the quantum's cycles of the warps on each SM (occupancy).
    pub occupancy: u64,
    /// The last cycle with progress (`None`: none).
    pub last_progress: Option<u64>,
    /// The kernel's last CTA finished in this cycle of the quantum (the quantum ended there).
    pub ended_at: Option<u64>,
    /// SM-cycles of SMs with warps in the parallel part, and alone in the serial part.
    pub parallel_busy: u64,
    pub alone_busy: u64,
}

/// A quantum of `q` cycles from `first` (module docs): `src`'s SMs `sms`, their `notes`,
/// the memory model `mem`; `serial` gets the serial part's events in cycle order. If the
/// back half of these cycles has run ahead ([`QuantumBufs::committed`]), `q` is that
/// quantum's length. The back half of the next quantum, of at most `next` cycles (the run
/// loop's bounds from `first + q` on) and what the memory system allows, runs alongside
/// the SMs' steps, which commits it.
#[allow(clippy::too_many_arguments)]
pub fn run<S: KernelSource>(
    q: u64,
    first: u64,
    next: u64,
    src: &mut S,
    sms: &mut [Sm<S::Writes>],
    notes: &mut [SmNote],
    mem: &mut crate::memsys::MemModel,
    threads: &crate::parallel::Threads,
    bufs: &mut QuantumBufs,
    serial: &mut dyn SerialPart<S>,
) -> Result<QuantumDone, String> {
    const NO_PORTS: &str = "a quantum needs the SMs' interconnect ports";
    if bufs.committed() > 0 {
        debug_assert_eq!(bufs.committed(), q, "the committed quantum");
        // This quantum's back half ran during the last one's steps.
        let last = bufs.clocks.last().map_or(0, |k| k.icnt_last);
        std::mem::swap(&mut bufs.clocks, &mut bufs.next_clocks);
        bufs.next_clocks.clear();
        icnt_before(last, &bufs.clocks, &mut bufs.icnt_before);
    } else {
        mem.quantum_back(q, bufs.may_end, &mut bufs.clocks, &mut bufs.icnt_before);
    }
    let next = next.min(mem.quantum_merge(q));
    serial.finish_budgets(&mut bufs.finish_budgets);
    // (A quantum in which the kernel may end commits no next one.)
    debug_assert!(
        next <= 1 || !bufs.may_end,
        "a quantum that may end commits the next"
    );
    let steps = QuantumSteps {
        first,
        icnt_before: &bufs.icnt_before,
        may_end: bufs.may_end,
        finish_budgets: &bufs.finish_budgets,
    };
    if next > 1 {
        let (ports, back) = mem.quantum_split().ok_or(NO_PORTS)?;
        // The calling thread runs the back half beside its part of the SMs.
        let mut side = [Ahead {
            back,
            cycles: next,
            clocks: &mut bufs.next_clocks,
        }];
        // As many threads as the SMs' step uses: a step over one busy SM (or none, during
        // the kernel launch latency) wakes no worker.
        let useful = crate::parallel::useful_threads(threads, notes);
        threads.with_side(
            useful,
            &mut side,
            &|share: &mut [Ahead<'_>]| {
                for a in share {
                    for _ in 0..a.cycles {
                        let k = a.back.cycle(false);
                        a.clocks.push(k);
                    }
                }
            },
            || src.tick_sms_quantum(sms, notes, ports, threads, &steps),
        )?;
    } else {
        let ports = mem.quantum_ports().ok_or(NO_PORTS)?;
        src.tick_sms_quantum(sms, notes, ports, threads, &steps)?;
    }
    let n = sms.len();
    bufs.accs.clear();
    bufs.accs.extend((0..n).map(|s| src.quantum_acc(s)));
    let mut done = QuantumDone {
        ended_at: None,
        occupancy: bufs.accs.iter().map(|a| a.occupancy).sum(),
        last_progress: bufs.accs.iter().filter_map(|a| a.last_progress).max(),
        parallel_busy: bufs.accs.iter().map(|a| a.busy_cycles).sum(),
        alone_busy: 0,
    };
    // Until the first cycle in which an SM steps alone, a cycle's serial part retires only
    // the SMs whose own steps ended in it with finished warps (`retire_at`, in SM order); from
    // it on, every SM is looked at in every cycle.
    let alone_from = bufs.accs.iter().map(|a| a.until).min().unwrap_or(u64::MAX);
    bufs.retire_at.clear();
    bufs.retire_at.extend(
        bufs.accs
            .iter()
            .enumerate()
            .filter(|(_, a)| a.finished && a.until > first)
            .map(|(s, a)| Retire {
                cycle: a.until - 1,
                sm: s,
            }),
    );
    bufs.retire_at.sort_unstable();
    let mut retire_next = 0;
    for k in 0..bufs.clocks.len() {
        let cycle = first + k as u64;
        let accs = &bufs.accs;
        serial.cycle_start(cycle, sms, notes, src, &|s| accs[s].until <= cycle)?;
        bufs.pushed.clear();
        if cycle < alone_from {
            while let Some(&Retire { cycle: c, sm: s }) = bufs.retire_at.get(retire_next) {
                if c != cycle {
                    break;
                }
                retire_next += 1;
                if let Some(sm) = sms.get_mut(s) {
                    serial.retire(s, cycle, sm, src);
                }
            }
        } else {
            // The SMs whose own steps stopped before this cycle step alone (on the threads, one
            // cycle at a time: each at its own port, as in a cycle-by-cycle step), then count in
            // SM order.
            bufs.stepping.clear();
            bufs.stepping.extend(bufs.accs.iter().map(|a| a.until <= cycle));
            if bufs.stepping.contains(&true) {
                let ports = mem.quantum_ports().ok_or(NO_PORTS)?;
                let at = ports.at.at_icnt(bufs.icnt_before[k]);
                src.tick_sms_alone(sms, notes, ports.ports, &at, threads, cycle, &bufs.stepping)?;
                for (s, note) in notes.iter().enumerate() {
                    if !bufs.stepping[s] {
                        continue;
                    }
                    done.occupancy += u64::from(note.active);
                    done.alone_busy += u64::from(note.active > 0);
                    if note.progress > 0 {
                        done.last_progress = Some(cycle);
                    }
                    if note.outbox {
                        bufs.pushed.push(s);
                    }
                }
            }
            // Warps that finished in this cycle, in SM order.
            for (s, sm) in sms.iter_mut().enumerate() {
                let a = &bufs.accs[s];
                let finished = if a.until <= cycle {
                    notes[s].finished
                } else {
                    a.until == cycle + 1 && a.finished
                };
                if finished {
                    serial.retire(s, cycle, sm, src);
                }
            }
        }
        mem.quantum_front(cycle, &bufs.clocks[k], &bufs.pushed);
        if serial.ended() {
            debug_assert!(
                bufs.accs.iter().all(|a| a.until <= cycle + 1),
                "an SM stepped past the kernel's last cycle {cycle} (may_end {}): {:?}",
                bufs.may_end,
                bufs.accs.iter().map(|a| a.until).collect::<Vec<_>>()
            );
            // The back half has run the quantum's later cycles: the drain after the kernel
            // starts from them ([`drain_ahead`]).
            done.ended_at = Some(cycle);
            bufs.ended_first = first;
            return Ok(done);
        }
    }
    if bufs.committed() == 0 {
        mem.quantum_end(first + q - 1, notes);
    } else {
        mem.quantum_continue(first + q - 1);
    }
    Ok(done)
}

/// Cycles between two looks at how long the running kernel must still last
/// ([`KernelSource::quantum_horizon`]) when the last look ruled quanta out.
const HORIZON_RECHECK: u64 = 16;

/// The most cycles a quantum from cycle `from` may cover by the run's own bounds, worked
/// out at cycle `now`: it ends at the next IPC sample or progress report, the cycle limit,
/// before a deadlock could be reported (as if nothing progressed until then), before the
/// dispatcher may send a CTA (`disp`) and, unless `through_end`, before the kernel could end
/// ([`KernelSource::quantum_horizon`], worked out again when needed; not before every CTA
/// has been sent). The memory system's bound is not included.
#[allow(clippy::too_many_arguments)]
pub(crate) fn room<S: KernelSource>(
    opts: &RunOptions,
    now: u64,
    from: u64,
    last_progress: u64,
    src: &S,
    disp: &launch::Dispatcher,
    through_end: bool,
    bufs: &mut QuantumBufs,
) -> u64 {
    let elapsed = from - bufs.start;
    let mut q = opts.trace_quantum.min(disp.sends_from().saturating_sub(from));
    let progress_every = if opts.progress.is_some() {
        opts.progress_interval
    } else {
        0
    };
    for every in [opts.ipc_sample_interval, progress_every] {
        if every > 0 {
            q = q.min(every - elapsed % every);
        }
    }
    if opts.max_cycles > 0 {
        q = q.min(opts.max_cycles.saturating_sub(elapsed));
    }
    if opts.deadlock_cycles > 0 {
        q = q.min((last_progress + opts.deadlock_cycles).saturating_sub(from));
    }
    if !disp.all_dispatched() {
        // Some CTA has not been sent: the kernel cannot end before it is.
        return q;
    }
    if q > 1 && from + q > bufs.horizon && now >= bufs.horizon_checked + HORIZON_RECHECK {
        bufs.horizon = src.quantum_horizon(now, bufs.issue_per_cycle).unwrap_or(0);
        bufs.horizon_checked = now;
    }
    if through_end {
        q
    } else {
        q.min(bufs.horizon.saturating_sub(from))
    }
}

/// Marks the SMs that step alone through a quantum from now on (`SmNote::alone`): those the
/// dispatcher may send a CTA to ([`launch::Dispatcher::may_send_to`]) and those whose
/// launcher has work. Any other SM receives a CTA only after it has finished one, which
/// stops its own steps. Returns how many.
pub(crate) fn mark_alone(
    disp: &launch::Dispatcher,
    launchers: &cta::Launchers,
    notes: &mut [SmNote],
) -> usize {
    let mut n = 0;
    for (s, note) in notes.iter_mut().enumerate() {
        note.alone = launchers.has_work(s) || disp.may_send_to(s);
        n += usize::from(note.alone);
    }
    n
}

/// The run loop's part of a quantum's serial part ([`SerialPart`]).
pub(crate) struct LoopSerial<'a> {
    pub disp: &'a mut launch::Dispatcher,
    pub cs: &'a mut cta::CtaSched,
    pub launchers: &'a mut cta::Launchers,
    pub done_ctas: &'a mut u32,
    pub num_ctas: u32,
}

impl<S: KernelSource> SerialPart<S> for LoopSerial<'_> {
    fn cycle_start(
        &mut self,
        cycle: u64,
        sms: &mut [Sm<S::Writes>],
        notes: &mut [SmNote],
        src: &mut S,
        alone: &dyn Fn(usize) -> bool,
    ) -> Result<(), String> {
        self.launchers
            .cycle(cycle, self.disp, self.cs, sms, notes, src, alone)
            .map_err(|e| e.to_string())
    }

    fn ended(&self) -> bool {
        *self.done_ctas >= self.num_ctas
    }

    fn finish_budgets(&self, out: &mut Vec<u32>) {
        self.cs.finish_budgets(out);
    }

    fn retire(&mut self, s: usize, cycle: u64, sm: &mut Sm<S::Writes>, src: &mut S) {
        *self.done_ctas += self.cs.retire_finished(s, cycle, sm, src, self.disp);
    }
}

/// The drain after a kernel that ended in a quantum, in core cycle `end`: the memory
/// system's back half has run the quantum's later cycles. Returns the cycle the drain has
/// reached: the one that found everything idle (as the cycle-by-cycle drain finds it,
/// [`crate::memsys::MemModel::drained`]), or the one after the back half's last. For each
/// cycle the back half has run, the
/// test of that drain (from what the back half noted), then the cycle's front half with the
/// L1s' sends and fills (`MemModel::drain_cycle_ahead`). Found idle, the back half's later
/// (idle) cycles are undone. The cycle-by-cycle drain goes on from the cycle returned.
pub fn drain_ahead<W>(
    end: u64,
    mem: &mut crate::memsys::MemModel,
    sms: &mut [Sm<W>],
    notes: &mut [SmNote],
    bufs: &mut QuantumBufs,
) -> u64 {
    let first = bufs.ended_first;
    let k_end = (end - first) as usize;
    // The responses of the kernel's last cycle (`MemModel::fill_delivered`).
    mem.take_due(sms, bufs.clocks[k_end].icnt_last, end);
    let mut pushed = std::mem::take(&mut bufs.pushed);
    let mut reached = None;
    for k in k_end + 1..bufs.clocks.len() {
        let cycle = first + k as u64;
        let before = bufs.clocks[k - 1];
        if mem.drained_ahead(sms, &before) {
            mem.rewind_back(&before, cycle - 1, notes);
            reached = Some(cycle);
            break;
        }
        let clocks = bufs.clocks[k];
        mem.drain_cycle_ahead(cycle, &clocks, sms, &mut pushed);
    }
    bufs.pushed = pushed;
    let last = first + bufs.clocks.len() as u64 - 1;
    reached.unwrap_or_else(|| {
        mem.quantum_end(last, notes);
        last + 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quantum(parallel: u64, alone: u64) -> QuantumDone {
        QuantumDone {
            parallel_busy: parallel,
            alone_busy: alone,
            ..Default::default()
        }
    }

    /// Quanta of 32 cycles on 84 SMs (the bar: 3/5 of the busy SM-cycles in the parallel
    /// part), as the memory-bound gather ran them on two threads (84 of 2,688 busy SM-cycles
    /// in the parallel part): the window must fail after seven, and quanta pause from there.
    #[test]
    fn a_window_of_quanta_that_must_fail_ends_early() {
        let bound = 32 * 84;
        let mut b = QuantumBufs::default();
        b.set_busy_bound(bound);
        let mut end = 1_000;
        let mut ended_after = None;
        for k in 1..=CHECK_QUANTA {
            b.note(&quantum(84, 2_604), end);
            if b.paused(end) {
                ended_after = Some(k);
                break;
            }
            end += 32;
        }
        // After k quanta: 84 k + (16 - k) 2,688 parallel at best, against 3/2 × 2,604 k
        // (parallel × 5 < (parallel + alone) × 3): 6 quanta can still pay, 7 cannot.
        assert_eq!(ended_after, Some(7));
        assert!(b.paused(end + PAUSE_CYCLES - 1) && !b.paused(end + PAUSE_CYCLES));
        // Without the bound only the whole window decides.
        let mut b = QuantumBufs::default();
        for k in 1..=CHECK_QUANTA {
            b.note(&quantum(84, 2_604), 1_000 + 32 * k as u64);
            assert_eq!(b.paused(0), k == CHECK_QUANTA, "after {k} quanta");
        }
    }

    /// The bar: a window of quanta pays from 3/5 of its busy SM-cycles in the parallel part
    /// (the gather's windows, 50–60 %, pause; the waves trace's, 75–100 %, do not).
    #[test]
    fn the_bar_is_three_fifths() {
        for (share, pause) in [(59, true), (60, false), (75, false)] {
            let mut b = QuantumBufs::default();
            for k in 1..=u64::from(CHECK_QUANTA) {
                b.note(&quantum(share, 100 - share), 1_000 + 32 * k);
            }
            assert_eq!(b.paused(0), pause, "{share} % in parallel");
        }
    }

    /// A window ends early only when it must fail: over windows of random quanta (each at
    /// most the bound), quanta pause with the bound exactly when they pause without it at
    /// the window's end.
    #[test]
    fn a_window_ends_early_only_when_it_must_fail() {
        let bound = 32 * 84;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (mut early, mut paused) = (0, 0);
        for _ in 0..2_000 {
            let (mut with, mut without) = (QuantumBufs::default(), QuantumBufs::default());
            with.set_busy_bound(bound);
            // Windows that lean parallel or alone, so that both outcomes occur.
            let lean = 500 + next(501);
            let mut ended = None;
            for k in 1..=CHECK_QUANTA {
                let busy = 1 + next(bound);
                let p = busy * (lean + next(201)).saturating_sub(100).min(1_000) / 1_000;
                let q = quantum(p, busy - p);
                if ended.is_none() {
                    with.note(&q, 100);
                    if with.paused(100) {
                        ended = Some(k);
                    }
                }
                without.note(&q, 100);
            }
            assert_eq!(ended.is_some(), without.paused(100));
            early += usize::from(ended.is_some_and(|k| k < CHECK_QUANTA));
            paused += usize::from(ended.is_some());
        }
        assert!(
            early > 100 && paused > early && paused < 1_900,
            "{early} ended early, {paused} paused"
        );
    }
}
