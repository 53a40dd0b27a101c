//! Simulator speed with the whole GPU busy (issue 15): simulated cycles/s, warp-instructions/s,
//! wall time per SM-cycle and peak RSS, execution-driven and trace-driven.
//!
//! `cargo bench -p sassim-gpu --bench loaded` runs:
//! * `vecadd-1344x256`: the built-in vecadd resized to 1,344 CTAs of 256 threads (344,064
//!   elements, every one of the RTX A6000's 84 SMs busy), execution-driven;
//! * `sgemm-1024`: the register-blocked SGEMM of `bench/sgemm-1024.toml` (1024 x 1024 x 64, its
//!   sm_86 SASS from `workloads/sgemm`), execution-driven;
//! * `gather-40k`: a generated memory-bound random-gather trace with every SM busy (1,344 CTAs
//!   of 8 warps, one 32-address gather each from a 256 MB table; `sassim_trace::synthetic`),
//!   its first 40,000 cycles;
//! * `compute-waves`: a generated compute-bound trace whose CTAs come in waves (2,688 CTAs of 8
//!   warps, each a coalesced load, 64 dependent FFMAs and a coalesced store;
//!   `sassim_trace::synthetic::ComputeTrace`), whole;
//! * `bfs-trace`: every kernel of the BFS Accel-Sim trace (`fixtures/traces/bfs-sm80-v3`);
//! * `matmul-1024`: the built-in shared-memory tiled matmul resized to 1024 x 1024 (4,096 CTAs;
//!   minutes of simulation), only when `SASSIM_BENCH_ONLY` names it;
//! * `fork-join` (with more than one thread): the synchronisation cost of one parallel step of
//!   the SM-ticking pool, which every simulated cycle pays.
//!
//! With more than one thread, each round of a benchmark also measures the round trip of a
//! cache line between two threads at that time (the `machine` line): every simulated cycle's
//! fork-join, and every line of state that one thread writes and another reads, pays it. On
//! the project's virtual machine it changes from minute to minute (50 ns to over 800 ns), and
//! the two-thread speed-ups follow it (docs/performance-log.md, eighteenth session).
//!
//! Each runs with one thread and with `SASSIM_BENCH_THREADS` threads ticking the SMs (default:
//! all cores; `--threads`), `SASSIM_BENCH_REPEAT` rounds (default 3) that alternate the thread
//! counts; the fastest run of each is reported with the median wall time and the speed-up.
//! `SASSIM_BENCH_ONLY=vecadd-1344x256,bfs-trace` chooses benchmarks.
//! Traces run with control bits inferred, as `sassim run --trace` does. Results and the method
//! are in docs/performance.md (`scripts/bench.sh` runs the same set through the `sassim`
//! binary).
//!
//! With more than one thread, each round also runs the benchmark on one thread in child
//! processes of this binary: one alone, then as many as the threads side by side (no more
//! than the machine's cores, and fewer if its free memory would not hold them). What those
//! independent copies get together, against the one alone, is the `side by side` line: a
//! ceiling for the speed-up of one run on that many threads, set by what the cores share
//! (caches, memory bandwidth; on the project's virtual machine two copies of the
//! memory-bound gather get only ~1.6× together, docs/performance-log.md, twentieth session).
//! `SASSIM_BENCH_SIDE=0` leaves it out. The children's memory is not in the `peak RSS` line.

use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_gpu::workload::{listing_arch_for, load_builtin, run_workload_timed};
use sassim_gpu::{Gpu, RunOptions};
use sassim_workload::Param;
use std::path::Path;
use std::time::Instant;

mod common;
use common::{env_number, peak_rss_mb};

/// What one benchmark simulated and how long it took.
struct Measured {
    cycles: u64,
    warp_insts: u64,
    sms: u64,
    wall: f64,
}

fn report(name: &str, m: &Measured) {
    println!(
        "{name:<18} {:>10} {:>12} {:>10.2} {:>12.0} {:>14.0} {:>12.3}",
        m.cycles,
        m.warp_insts,
        m.wall,
        m.cycles as f64 / m.wall,
        m.warp_insts as f64 / m.wall,
        m.wall * 1e6 / (m.cycles * m.sms).max(1) as f64
    );
}

/// A built-in workload with `n` elements per buffer, `grid` and the size parameter `n`.
fn resized(cfg: &GpuConfig, name: &str, grid: Vec<u32>, elems: usize, size: u32, threads: usize) -> Measured {
    let arch = listing_arch_for(&cfg.gpu.arch);
    let b = sassim_workload::builtin_named(name).expect("built-in workload");
    let (w, listing, smem) = load_builtin(&b, arch).expect("workload");
    let mut spec = w.spec.clone();
    spec.grid = grid;
    for buf in &mut spec.buffers {
        buf.count = elems;
    }
    for p in &mut spec.params {
        if let Param::U32(v) = p {
            *v = size;
        }
    }
    let w = sassim_workload::Workload::from_spec(spec, &format!("{name} (resized)"), Some(name), None)
        .expect("resized spec");
    execution_driven(cfg, &w, &listing, arch, smem, threads)
}

/// Workload `w` with its code in `listing` (for `arch`) and `smem` bytes of static shared
/// memory per CTA, timed; its outputs must match the reference.
fn execution_driven(
    cfg: &GpuConfig,
    w: &sassim_workload::Workload,
    listing: &sassim_isa::Listing,
    arch: &str,
    smem: u32,
    threads: usize,
) -> Measured {
    let mut gpu = Gpu::new(cfg.clone());
    let opts = RunOptions {
        threads,
        ..RunOptions::default()
    };
    let t = Instant::now();
    let r = run_workload_timed(&mut gpu, w, listing, arch, smem, ControlFlowKind::Hanoi, &opts).expect("run");
    let wall = t.elapsed().as_secs_f64();
    if let Err(e) = &r.check {
        panic!("{}: outputs differ from the reference: {e}", w.name);
    }
    Measured {
        cycles: r.run.cycles,
        warp_insts: r.run.stats.warp_insts,
        sms: u64::from(r.run.sms_used),
        wall,
    }
}

/// The SGEMM benchmark spec (`bench/sgemm-1024.toml`) with its sm_86 listing, as `sassim run
/// bench/sgemm-1024.toml --listing workloads/sgemm/sgemm_sm86.cuobjdump-sass.txt` runs it.
fn sgemm(cfg: &GpuConfig, threads: usize) -> Measured {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let w = sassim_workload::Workload::load_checked(repo.join("bench/sgemm-1024.toml"), |s| {
        s.check_sizes().map(|_| ())
    })
    .expect("bench/sgemm-1024.toml");
    let listing =
        sassim_sass::parse_listing_file(&repo.join("workloads/sgemm/sgemm_sm86.cuobjdump-sass.txt"))
            .expect("SGEMM listing");
    let ptxas = std::fs::read_to_string(repo.join("bench/sgemm-1024.ptxas-v.txt")).expect("ptxas -v output");
    let smem = sassim_gpu::workload::ptxas_usage(&ptxas, w.kernel(), "sm_86").map_or(0, |u| u.1);
    execution_driven(cfg, &w, &listing, "sm_86", smem, threads)
}

/// The first `cycles` cycles (0: all) of a generated trace (`list`).
fn generated(cfg: &GpuConfig, list: &Path, cycles: u64, threads: usize) -> Measured {
    let mut gpu = Gpu::new(cfg.clone());
    let opts = RunOptions {
        threads,
        infer_control_bits: true,
        max_cycles: cycles,
        ..RunOptions::default()
    };
    let t = Instant::now();
    let runs = sassim_gpu::trace_exec::run_kernelslist(&mut gpu, list, &[], &opts).expect("generated trace");
    let wall = t.elapsed().as_secs_f64();
    let r = &runs[0].run;
    Measured {
        cycles: r.cycles,
        warp_insts: r.stats.warp_insts,
        sms: u64::from(r.sms_used),
        wall,
    }
}

fn bfs_trace(cfg: &GpuConfig, threads: usize) -> Measured {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/traces/bfs-sm80-v3");
    let mut gpu = Gpu::new(cfg.clone());
    let mut m = Measured {
        cycles: 0,
        warp_insts: 0,
        sms: u64::from(cfg.gpu.num_sms),
        wall: 0.0,
    };
    let mut sm_cycles = 0u64;
    let opts = RunOptions {
        threads,
        infer_control_bits: true,
        ..RunOptions::default()
    };
    // The whole list, as `sassim run --trace` runs it (small kernels open ahead, together).
    let t = Instant::now();
    let runs = sassim_gpu::trace_exec::run_kernelslist(&mut gpu, &dir.join("kernelslist.g"), &[], &opts)
        .expect("trace kernels");
    m.wall = t.elapsed().as_secs_f64();
    for r in &runs {
        m.cycles += r.run.cycles;
        m.warp_insts += r.run.stats.warp_insts;
        sm_cycles += r.run.cycles * u64::from(r.run.sms_used);
    }
    // Average SMs busy over the kernels (weighted by cycles).
    m.sms = sm_cycles / m.cycles.max(1);
    m
}

/// The environment variable that makes this binary a child of the `side by side`
/// measurement: the benchmark to run once on one thread (its generated trace's list in
/// [`CHILD_LIST`]).
const CHILD: &str = "SASSIM_BENCH_CHILD";
/// A child's generated trace (`kernelslist.g`), for the benchmarks that have one.
const CHILD_LIST: &str = "SASSIM_BENCH_CHILD_LIST";

/// One run of benchmark `name` on `threads` threads (`list`: its generated trace, for
/// `gather-40k` and `compute-waves`).
fn run_named(name: &str, cfg: &GpuConfig, list: Option<&Path>, threads: usize) -> Measured {
    let list = || list.unwrap_or_else(|| panic!("{name}: no generated trace"));
    match name {
        "vecadd-1344x256" => resized(cfg, "vecadd", vec![1344], 1344 * 256, 1344 * 256, threads),
        "sgemm-1024" => sgemm(cfg, threads),
        "gather-40k" => generated(cfg, list(), 40_000, threads),
        "compute-waves" => generated(cfg, list(), 0, threads),
        // The trace was recorded on an sm_80 GPU; the A6000 (sm_86) runs it as Accel-Sim would.
        "bfs-trace" => bfs_trace(cfg, threads),
        "matmul-1024" => resized(cfg, "matmul", vec![64, 64], 1024 * 1024, 1024, threads),
        _ => panic!("no benchmark named {name}"),
    }
}

/// A child's run: benchmark `name` once on one thread; prints its wall time (s) and peak RSS
/// (MiB) for the parent ([`side_by_side`]).
fn child(name: &str) {
    let a6000 = GpuConfig::preset("rtx-a6000").expect("preset");
    let list = std::env::var_os(CHILD_LIST).map(std::path::PathBuf::from);
    let m = run_named(name, &a6000, list.as_deref(), 1);
    println!("{} {}", m.wall, peak_rss_mb());
}

/// A child process running benchmark `name` once on one thread ([`child`]).
fn spawn_child(name: &str, list: Option<&Path>) -> std::process::Child {
    let exe = std::env::current_exe().expect("this benchmark's executable");
    let mut c = std::process::Command::new(exe);
    c.env(CHILD, name).stdout(std::process::Stdio::piped());
    if let Some(l) = list {
        c.env(CHILD_LIST, l);
    }
    c.spawn().expect("a child run of the benchmark")
}

/// A child's wall time (s) and peak RSS (MiB), from the last line it printed; an error
/// message if it failed.
fn child_result(name: &str, c: std::process::Child) -> Result<(f64, u64), String> {
    let out = c
        .wait_with_output()
        .map_err(|e| format!("{name}: a child run of the benchmark: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut f = text.lines().last().unwrap_or("").split_whitespace();
    match (
        out.status.success(),
        f.next().and_then(|w| w.parse::<f64>().ok()),
        f.next().and_then(|r| r.parse::<u64>().ok()),
    ) {
        (true, Some(w), Some(r)) if w.is_finite() && w > 0.0 => Ok((w, r)),
        _ => Err(format!("{name}: a child run failed ({}): {text}", out.status)),
    }
}

/// The median of `x`, which is sorted and not empty.
fn median(x: &[f64]) -> f64 {
    (x[(x.len() - 1) / 2] + x[x.len() / 2]) / 2.0
}

/// One round of the `side by side` measurement: benchmark `name` on one thread in a child
/// process alone, then in up to `copies` children at once (as many as half the free memory
/// holds, by the lone child's peak RSS). Returns the copies run together and their speed
/// together against the lone child's, counted as if all had taken as long as the slowest
/// (`copies × alone / slowest wall`), or None if fewer than two fit. Each child times its
/// own run, so the copies' timed windows do not quite overlap (their set-up differs), and a
/// copy that ends first leaves the others alone for their last moments: summing each copy's
/// own speed would overstate the ceiling. Every child is waited for before a failure is
/// reported.
fn side_by_side(name: &str, list: Option<&Path>, copies: usize) -> Option<(usize, f64)> {
    if copies < 2 {
        return None;
    }
    let (alone, rss) = child_result(name, spawn_child(name, list)).unwrap_or_else(|e| panic!("{e}"));
    let fit = sassim_gpu::footprint::available_memory()
        .map_or(copies, |free| (free / (1 << 20) / 2 / rss.max(1)) as usize);
    let k = copies.min(fit);
    if k < 2 {
        return None;
    }
    let children: Vec<_> = (0..k).map(|_| spawn_child(name, list)).collect();
    let walls: Vec<Result<(f64, u64), String>> =
        children.into_iter().map(|c| child_result(name, c)).collect();
    let mut slowest: f64 = 0.0;
    for w in walls {
        slowest = slowest.max(w.unwrap_or_else(|e| panic!("{e}")).0);
    }
    Some((k, k as f64 * alone / slowest))
}

fn main() {
    if let Ok(name) = std::env::var(CHILD) {
        child(&name);
        return;
    }
    let only = std::env::var("SASSIM_BENCH_ONLY").ok();
    let named = |n: &str| only.as_deref().is_some_and(|o| o.split(',').any(|x| x == n));
    let want = |n: &str| only.is_none() || named(n);
    // Settings first: a bad one exits before anything is written.
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = env_number("SASSIM_BENCH_THREADS", all, 1, 1024);
    let repeat = env_number("SASSIM_BENCH_REPEAT", 3, 1, 100);
    // (Read even on one thread, so that a bad value is always an error.)
    let side = env_number("SASSIM_BENCH_SIDE", 1, 0, 1) == 1 && n > 1;
    // The generated traces (the gather about 20 MB of text, the compute-bound one 60 MB),
    // written once into a fresh directory that is removed when the benchmark ends (also by a
    // panic).
    let gen_dir = tempfile::tempdir().expect("temporary directory");
    let gather_list = want("gather-40k").then(|| {
        sassim_trace::synthetic::GatherTrace {
            ctas: 1344,
            gathers: 1,
            table_bytes: 256 << 20,
            seed: 15,
        }
        .write(gen_dir.path())
        .expect("gather trace")
    });
    let compute_list = want("compute-waves").then(|| {
        sassim_trace::synthetic::ComputeTrace { ctas: 2688, ffma: 64 }
            .write(&gen_dir.path().join("compute"))
            .expect("compute trace")
    });
    let a6000 = GpuConfig::preset("rtx-a6000").expect("preset");
    let mut counts = vec![1];
    if n > 1 {
        counts.push(n);
    }
    println!(
        "{:<18} {:>10} {:>12} {:>10} {:>12} {:>14} {:>12}",
        "benchmark", "cycles", "warp insts", "wall s", "cycles/s", "warp-insts/s", "us/SM-cycle"
    );
    // Each benchmark runs `repeat` rounds, each round once per thread count, so that every
    // thread count sees the same phases of a machine whose speed drifts; the fastest run of
    // each is reported, with the median wall time and the speed-up.
    let bench = |name: &str, list: Option<&Path>| {
        let mut runs: Vec<Vec<Measured>> = counts.iter().map(|_| Vec::new()).collect();
        let mut machine = Vec::new();
        let mut sides = Vec::new();
        for _ in 0..repeat {
            if n > 1 {
                machine.push(round_trip_ns());
            }
            for (k, &t) in counts.iter().enumerate() {
                runs[k].push(run_named(name, &a6000, list, t));
            }
            if side {
                sides.extend(side_by_side(name, list, n.min(all)));
            }
        }
        let mut best_wall = Vec::new();
        for (k, &t) in counts.iter().enumerate() {
            let r = &mut runs[k];
            r.sort_by(|a, b| a.wall.total_cmp(&b.wall));
            report(&format!("{name}/{t}t"), &r[0]);
            best_wall.push(r[0].wall);
            if repeat > 1 {
                let walls: Vec<f64> = r.iter().map(|m| m.wall).collect();
                println!("{:<18} median wall {:.3} s of {repeat} runs", "", median(&walls));
            }
        }
        if let [one, many] = best_wall[..] {
            println!("{:<18} {n} threads: {:.2}x", "", one / many);
        }
        // (Rounds that ran fewer copies, for want of free memory, are left out.)
        let k = sides.iter().map(|s| s.0).max().unwrap_or(0);
        sides.retain(|s| s.0 == k);
        if !sides.is_empty() {
            let mut x: Vec<f64> = sides.iter().map(|s| s.1).collect();
            x.sort_by(f64::total_cmp);
            println!(
                "{:<18} side by side: {k} one-thread runs (child processes) together {:.2}x one alone \
                 (median of {}, {:.2}-{:.2}x): the machine's ceiling for {k} threads",
                "",
                median(&x),
                x.len(),
                x[0],
                x[x.len() - 1]
            );
        }
        if !machine.is_empty() {
            let lo = machine.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = machine.iter().copied().fold(0.0, f64::max);
            println!(
                "{:<18} machine, same rounds: cache-line round trip {lo:.0}-{hi:.0} ns",
                ""
            );
        }
    };
    // (In the order of the earlier sessions' logs.)
    let set: [(&str, Option<&Path>, bool); 6] = [
        ("vecadd-1344x256", None, want("vecadd-1344x256")),
        ("sgemm-1024", None, want("sgemm-1024")),
        ("gather-40k", gather_list.as_deref(), gather_list.is_some()),
        ("compute-waves", compute_list.as_deref(), compute_list.is_some()),
        ("bfs-trace", None, want("bfs-trace")),
        ("matmul-1024", None, named("matmul-1024")),
    ];
    for (name, list, chosen) in set {
        if chosen {
            bench(name, list);
        }
    }
    if n > 1 && want("fork-join") {
        fork_join(n);
    }
    println!("peak RSS {} MB", peak_rss_mb());
}

/// The cost of one parallel step of the SM-ticking pool (the synchronisation each simulated
/// cycle pays; docs/performance.md "Many cores"): steps over 84 elements (the A6000's SMs) with
/// about 4 µs of work in all, timed alone and on `threads` threads (`Threads::for_parts`,
/// which does not choose by timing; on a machine whose cores are busy the pool still runs
/// steps alone, and the figure then says little). The cost is the difference between the
/// parallel step and its share of the work.
fn fork_join(threads: usize) {
    use sassim_gpu::threads::Threads;
    const STEPS: u32 = 50_000;
    let work = |_: usize, p: &mut [u64], _: &mut [()]| {
        for x in p.iter_mut() {
            let mut v = *x;
            for _ in 0..64 {
                v = std::hint::black_box(v.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
            }
            *x = v;
        }
        Ok(())
    };
    let time = |pool: &Threads| {
        let (mut a, mut b) = (vec![0u64; 84], vec![(); 84]);
        for _ in 0..STEPS / 10 {
            pool.for_parts(&mut a, &mut b, &work).expect("step");
        }
        let start = Instant::now();
        for _ in 0..STEPS {
            pool.for_parts(&mut a, &mut b, &work).expect("step");
        }
        start.elapsed().as_nanos() as f64 / f64::from(STEPS)
    };
    let one = time(&Threads::new(1));
    let pool = Threads::new(threads);
    let n = pool.count();
    let many = time(&pool);
    println!(
        "step of ~{:.1} us of work: {one:.0} ns alone, {many:.0} ns on {n} threads: \
         synchronisation ~{:.0} ns a step",
        one / 1000.0,
        many - one / n as f64
    );
}

/// The round trip of a cache line between two threads now, in ns: two threads pass a counter
/// back and forth. On the project's virtual machine it tells whether the two virtual cores
/// are close (~50 ns) or far (~450 ns) at that time, which decides more of a two-thread run's
/// speed-up than independent work on each core does (docs/performance-log.md, eighteenth session).
fn round_trip_ns() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    const ROUND_TRIPS: u64 = 20_000;
    let ball = AtomicU64::new(0);
    let pass = |mine: u64| {
        let mut i = mine;
        while i < 2 * ROUND_TRIPS {
            while ball.load(Ordering::Acquire) != i {
                std::hint::spin_loop();
            }
            ball.store(i + 1, Ordering::Release);
            i += 2;
        }
    };
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| pass(1));
        pass(0);
    });
    start.elapsed().as_nanos() as f64 / ROUND_TRIPS as f64
}
