//! Fits the `[launch]` parameters of a preset to measured kernel durations of an empty
//! kernel (docs/validation.md, "Kernel launch on the H100 PCIe"):
//!
//! ```text
//! cargo run --release -p sassim-gpu --example fit_launch [-- PRESET CSV [KEY=VALUE…]]
//!     (default: h100-pcie fixtures/hardware/h100-pcie/simtune.csv; KEY=VALUE changes the
//!     starting point, e.g. sm_cta_queue=1)
//! ```
//!
//! Simulating all 561 `emptykernel` configurations takes minutes, too long to search a
//! parameter space, so the fit uses a surrogate: the launch model's own dispatcher
//! (`sassim_gpu::launch::Dispatcher`) with the per-SM CTA start, warp launch and residency
//! rules of the run loop, and CTA execution times measured once with the simulator (a
//! CTA of each block size on a cold SM, and on a warm one). It minimises the mean absolute
//! percentage error over the `emptykernel` rows only, by coordinate descent from the
//! preset's values, and prints the `[launch]` section. `scripts/calibrate-h100-pcie.sh`
//! then checks the result with the full simulator.

use sassim_config::GpuConfig;
use sassim_functional::{ControlFlowKind, ExecOptions, KernelExec, Launch};
use sassim_gpu::launch::{Dispatch, Dispatcher, LaunchTiming};
use sassim_gpu::{Gpu, RunOptions};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

/// One measured configuration: threads per block, blocks, measured cycles.
struct Row {
    threads: u32,
    blocks: u32,
    cycles: f64,
}

/// Parameters searched (the `[launch]` keys).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Params {
    kernel_launch_latency: f64,
    kernel_min_cycles: f64,
    cta_dispatch_cycles: f64,
    cta_completion_cycles: f64,
    sm_cta_queue: f64,
    cta_launch_latency: f64,
    warp_launch_cycles: f64,
    cta_completion_latency: f64,
}

const NAMES: [&str; 8] = [
    "kernel_launch_latency",
    "kernel_min_cycles",
    "cta_dispatch_cycles",
    "cta_completion_cycles",
    "sm_cta_queue",
    "cta_launch_latency",
    "warp_launch_cycles",
    "cta_completion_latency",
];

impl Params {
    fn get(&self, i: usize) -> f64 {
        [
            self.kernel_launch_latency,
            self.kernel_min_cycles,
            self.cta_dispatch_cycles,
            self.cta_completion_cycles,
            self.sm_cta_queue,
            self.cta_launch_latency,
            self.warp_launch_cycles,
            self.cta_completion_latency,
        ][i]
    }
    fn set(&mut self, i: usize, v: f64) {
        let v = v.max(0.0);
        match i {
            0 => self.kernel_launch_latency = v.round(),
            1 => self.kernel_min_cycles = v.round(),
            2 => self.cta_dispatch_cycles = (v * 1024.0).round() / 1024.0,
            3 => self.cta_completion_cycles = (v * 1024.0).round() / 1024.0,
            4 => self.sm_cta_queue = v.round().min(4.0),
            5 => self.cta_launch_latency = v.round(),
            6 => self.warp_launch_cycles = (v * 64.0).round() / 64.0,
            _ => self.cta_completion_latency = v.round(),
        }
    }
    fn from_config(g: &GpuConfig) -> Self {
        let l = &g.launch;
        Params {
            kernel_launch_latency: l.kernel_launch_latency as f64,
            kernel_min_cycles: l.kernel_min_cycles as f64,
            cta_dispatch_cycles: l.cta_dispatch_cycles,
            cta_completion_cycles: l.cta_completion_cycles,
            sm_cta_queue: l.sm_cta_queue as f64,
            cta_launch_latency: l.cta_launch_latency as f64,
            warp_launch_cycles: l.warp_launch_cycles,
            cta_completion_latency: l.cta_completion_latency as f64,
        }
    }
    fn apply(&self, g: &GpuConfig) -> GpuConfig {
        let mut g = g.clone();
        let l = &mut g.launch;
        l.kernel_launch_latency = self.kernel_launch_latency as u32;
        l.kernel_min_cycles = self.kernel_min_cycles as u32;
        l.kernel_end_latency = 0;
        l.cta_dispatch_cycles = self.cta_dispatch_cycles;
        l.cta_completion_cycles = self.cta_completion_cycles;
        l.sm_cta_queue = self.sm_cta_queue as u32;
        l.cta_launch_latency = self.cta_launch_latency as u32;
        l.warp_launch_cycles = self.warp_launch_cycles;
        l.cta_completion_latency = self.cta_completion_latency as u32;
        g
    }
}

/// CTA execution times of one block size, from the simulator: on a cold SM (its first
/// CTA: instruction and constant lines come from L2) and on a warm one.
#[derive(Debug, Clone, Copy)]
struct Exec {
    cold: u64,
    warm: u64,
}

fn bare_cycles(cfg: &GpuConfig, kernel: &Arc<sassim_isa::Kernel>, grid: u32, block: u32) -> u64 {
    let launch = Launch::new([grid, 1, 1], [block, 1, 1], Vec::new());
    let mut exec = KernelExec::new(
        kernel.clone(),
        &cfg.gpu.arch,
        launch,
        ControlFlowKind::Hanoi,
        ExecOptions::default(),
    )
    .expect("kernel");
    let mut gpu = Gpu::new(cfg.clone());
    let opts = RunOptions {
        ipc_sample_interval: 0,
        ..RunOptions::default()
    };
    gpu.run_kernel(&mut exec, kernel, &opts, None)
        .expect("run")
        .bare_cycles
}

fn measure_exec(cfg: &GpuConfig, kernel: &Arc<sassim_isa::Kernel>, threads: u32) -> Exec {
    let zero = Params {
        kernel_launch_latency: 0.0,
        kernel_min_cycles: 0.0,
        cta_dispatch_cycles: 0.0,
        cta_completion_cycles: 0.0,
        sm_cta_queue: 0.0,
        cta_launch_latency: 0.0,
        warp_launch_cycles: 0.0,
        cta_completion_latency: 0.0,
    };
    let mut one = zero.apply(cfg);
    one.gpu.num_sms = 1;
    one.gpu.max_ctas_per_sm = 1;
    let c1 = bare_cycles(&one, kernel, 1, threads);
    let c3 = bare_cycles(&one, kernel, 3, threads);
    Exec {
        cold: c1,
        warm: c3.saturating_sub(c1) / 2,
    }
}

/// The surrogate: the duration of `blocks` CTAs of `threads` threads.
fn surrogate(p: &Params, g: &GpuConfig, exec: &[Exec], threads: u32, blocks: u32, per_sm: u32) -> u64 {
    let warps = threads.div_ceil(32);
    let e = exec[warps as usize];
    let e1 = exec[1];
    let t = LaunchTiming::from_config(&p.apply(g).launch);
    let sms = (g.gpu.num_sms as usize).min(blocks as usize);
    let mut disp = Dispatcher::new(t, sms, per_sm, blocks, 0);
    struct Sm {
        queue: VecDeque<u64>,
        resident: u32,
        launcher_free: f64,
        cold_end: Option<u64>,
    }
    let mut s: Vec<Sm> = (0..sms)
        .map(|_| Sm {
            queue: VecDeque::new(),
            resident: 0,
            launcher_free: 0.0,
            cold_end: None,
        })
        .collect();
    // (cycle, sm, is_finish)
    let mut events: BinaryHeap<Reverse<(u64, usize, bool)>> = BinaryHeap::new();
    let mut sent: Vec<Dispatch> = Vec::new();
    let mut finished = 0u32;
    let mut now = 0u64;
    let wl = p.warp_launch_cycles;
    while finished < blocks {
        sent.clear();
        disp.step(now, &mut sent);
        for d in &sent {
            let ready = d.arrive + t.cta_launch_latency;
            s[d.sm].queue.push_back(ready);
            events.push(Reverse((ready, d.sm, false)));
        }
        while let Some(&Reverse((at, sm, fin))) = events.peek() {
            if at > now {
                break;
            }
            events.pop();
            let m = &mut s[sm];
            if fin {
                m.resident -= 1;
                finished += 1;
                disp.cta_finished(at, sm);
                // A waiting CTA may start in the next cycle.
                events.push(Reverse((at, sm, false)));
                continue;
            }
            while m.queue.front().is_some_and(|&r| r <= now) && m.resident < per_sm {
                m.queue.pop_front();
                m.resident += 1;
                let first = m.launcher_free.max(now as f64);
                let last = first + wl * (warps - 1) as f64;
                m.launcher_free = last + wl;
                let (f, l) = (first.ceil() as u64, last.ceil() as u64);
                let mut end = (f + e.warm).max(l + e1.warm);
                match m.cold_end {
                    None => {
                        let c = f + e.cold;
                        m.cold_end = Some(c);
                        end = end.max(c);
                    }
                    Some(c) if f < c => end = end.max(c),
                    _ => {}
                }
                events.push(Reverse((end, sm, true)));
            }
        }
        now += 1;
        if now > 50_000_000 {
            break;
        }
    }
    disp.finish(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let preset = args.first().map_or("h100-pcie", String::as_str);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let csv = args
        .get(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("fixtures/hardware/h100-pcie/simtune.csv"));
    let g = GpuConfig::preset(preset).expect("preset");
    let clock = g.gpu.core_clock_mhz;
    let text = std::fs::read_to_string(&csv).expect("measurements");
    let mut rows = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 4 || f[0] != "emptykernel" {
            continue;
        }
        let ns: f64 = f[3].parse().expect("nanoseconds");
        rows.push(Row {
            threads: f[1].parse().expect("threads"),
            blocks: f[2].parse().expect("blocks"),
            cycles: ns * clock / 1000.0,
        });
    }
    eprintln!("{} emptykernel rows at {clock} MHz", rows.len());
    let listing = sassim_sass::parse_listing_file(
        &root.join("workloads/calibration/emptykernel/emptykernel_sm90.cuobjdump-sass.txt"),
    )
    .expect("listing");
    let kernel = Arc::new(listing.kernel("emptykernel").expect("kernel").clone());
    let mut exec = vec![Exec { cold: 0, warm: 0 }; 33];
    for w in 1..=32u32 {
        exec[w as usize] = measure_exec(&g, &kernel, w * 32);
    }
    eprintln!(
        "CTA execution (cold, warm): 1 warp {:?}, 16 warps {:?}, 32 warps {:?}",
        exec[1], exec[16], exec[32]
    );
    let gpu = Gpu::new(g.clone());
    let regs = sassim_gpu::prepare(&kernel, &g, &gpu.core).regs_per_thread;
    let per_sm: Vec<u32> = (0..=32u32)
        .map(|w| gpu.ctas_per_sm(w.max(1), (w * 32).max(1), regs, 0))
        .collect();
    let loss = |p: &Params| -> f64 {
        let mut sum = 0.0;
        for r in &rows {
            let w = r.threads.div_ceil(32) as usize;
            let sim = surrogate(p, &g, &exec, r.threads, r.blocks, per_sm[w]) as f64;
            sum += (sim - r.cycles).abs() / r.cycles;
        }
        100.0 * sum / rows.len() as f64
    };
    let mut p = Params::from_config(&g);
    for kv in args.iter().skip(2) {
        let (k, v) = kv.split_once('=').expect("KEY=VALUE");
        let i = NAMES.iter().position(|n| *n == k).expect("a [launch] key");
        p.set(i, v.parse().expect("a number"));
    }
    let mut best = loss(&p);
    eprintln!("start: MAPE {best:.3} % {p:?}");
    let mut step = [200.0, 200.0, 0.1, 0.1, 1.0, 50.0, 1.0, 50.0];
    for round in 0..40 {
        let mut improved = false;
        for (i, &st) in step.iter().enumerate() {
            for dir in [-1.0, 1.0] {
                loop {
                    let mut q = p;
                    q.set(i, p.get(i) + dir * st);
                    if q == p {
                        break;
                    }
                    let l = loss(&q);
                    if l + 1e-9 < best {
                        best = l;
                        p = q;
                        improved = true;
                    } else {
                        break;
                    }
                }
            }
        }
        eprintln!("round {round}: MAPE {best:.3} % {p:?}");
        if !improved {
            let mut any = false;
            for (i, s) in step.iter_mut().enumerate() {
                let min = [1.0, 1.0, 1.0 / 1024.0, 1.0 / 1024.0, 1.0, 1.0, 1.0 / 64.0, 1.0][i];
                if *s > min {
                    *s = (*s / 2.0).max(min);
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
    }
    println!(
        "# surrogate MAPE over {} emptykernel rows: {best:.3} %",
        rows.len()
    );
    println!("[launch]");
    for (i, n) in NAMES.iter().enumerate() {
        println!("{n} = {}", p.get(i));
    }
}
