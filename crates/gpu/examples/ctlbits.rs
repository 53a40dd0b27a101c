//! Control-bit inference against ptxas (issue 13, point 5): strips the control bits of the
//! built-in workloads' listings (sm_75 on t4, sm_86 on rtx-a6000, sm_90 on h100) and of the
//! program suite's cached SASS, infers them, and reports the agreement (exact stall count,
//! within ±1, identical wait masks, whether a wait is present) and, for the workloads, the
//! cycles with inferred versus real control bits.
//!
//! `cargo run --release -p sassim-gpu --example ctlbits [-- --show WORKLOAD ARCH]`

use sassim_analysis::control_bits::{infer, Agreement, InferOptions};
use sassim_config::GpuConfig;
use sassim_functional::ControlFlowKind;
use sassim_gpu::ctlbits::{timings, with_inferred_control_bits};
use sassim_gpu::workload::{load_builtin, run_workload_timed};
use sassim_gpu::{Gpu, RunOptions};
use std::path::Path;

const ARCHS: [(&str, &str); 3] = [("sm_75", "t4"), ("sm_86", "rtx-a6000"), ("sm_90", "h100")];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let show = args
        .iter()
        .position(|a| a == "--show")
        .map(|i| (args[i + 1].clone(), args[i + 2].clone()));
    println!("| arch | source | instructions | stall exact | stall ±1 | wait mask exact | wait presence |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    let mut cycles = Vec::new();
    let mut total = Agreement::default();
    for (arch, preset) in ARCHS {
        let cfg = GpuConfig::preset(preset).expect("preset");
        let gpu = Gpu::new(cfg.clone());
        let mut agg = Agreement::default();
        for b in sassim_workload::builtin() {
            let Ok((w, listing, smem)) = load_builtin(&b, arch) else {
                continue;
            };
            for k in &listing.kernels {
                let t = timings(k, &cfg, &gpu.core);
                let bits = infer(k, &t, &InferOptions::default());
                let real: Vec<_> = k.instructions.iter().map(|i| i.ctrl).collect();
                agg.add(&Agreement::of_kernel(k, &bits));
                if show.as_ref().is_some_and(|(n, a)| *n == b.name && a == arch) {
                    for (i, ins) in k.instructions.iter().enumerate() {
                        println!(
                            "{:#06x} {:<40} real S{:02} W{:06b} wr{:?} rd{:?} | inferred S{:02} W{:06b} wr{:?} rd{:?} ({:?})",
                            ins.pc, ins.opcode.to_string(), real[i].stall, real[i].wait_mask, real[i].write_sb,
                            real[i].read_sb, bits[i].stall, bits[i].wait_mask, bits[i].write_sb, bits[i].read_sb, t[i]
                        );
                    }
                }
            }
            let mut inferred = listing.clone();
            for k in inferred.kernels.iter_mut() {
                *k = with_inferred_control_bits(k, &cfg, &gpu.core);
            }
            let run = |l: &sassim_isa::Listing| {
                let mut g = Gpu::new(cfg.clone());
                run_workload_timed(
                    &mut g,
                    &w,
                    l,
                    arch,
                    smem,
                    ControlFlowKind::Hanoi,
                    &RunOptions::default(),
                )
                .map(|r| (r.run.cycles, r.check.is_ok(), r.run.stats.stale_reads))
            };
            if let (Ok(a), Ok(b2)) = (run(&listing), run(&inferred)) {
                cycles.push((preset, b.name, a, b2));
            }
        }
        println!(
            "| {arch} | workloads | {} | {:.1} % | {:.1} % | {:.1} % | {:.1} % |",
            agg.instructions,
            agg.pct(agg.stall_exact),
            agg.pct(agg.stall_within_1),
            agg.pct(agg.wait_exact),
            agg.pct(agg.wait_presence)
        );
        total.add(&agg);
        // The program suite's SASS for this architecture.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/programs/sass");
        let index = std::fs::read_to_string(dir.join("INDEX.txt")).unwrap_or_default();
        let mut pagg = Agreement::default();
        for line in index.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 4 || f[1] != arch || f[3] == "-" {
                continue;
            }
            let p = dir.join(format!("{}.nvdisasm-hex", f[2]));
            let Ok(l) = sassim_sass::parse_listing_file(&p) else {
                continue;
            };
            for k in &l.kernels {
                let t = timings(k, &cfg, &gpu.core);
                let bits = infer(k, &t, &InferOptions::default());
                pagg.add(&Agreement::of_kernel(k, &bits));
            }
        }
        println!(
            "| {arch} | programs | {} | {:.1} % | {:.1} % | {:.1} % | {:.1} % |",
            pagg.instructions,
            pagg.pct(pagg.stall_exact),
            pagg.pct(pagg.stall_within_1),
            pagg.pct(pagg.wait_exact),
            pagg.pct(pagg.wait_presence)
        );
        total.add(&pagg);
    }
    println!(
        "| all | | {} | {:.1} % | {:.1} % | {:.1} % | {:.1} % |",
        total.instructions,
        total.pct(total.stall_exact),
        total.pct(total.stall_within_1),
        total.pct(total.wait_exact),
        total.pct(total.wait_presence)
    );
    println!();
    println!(
        "| preset | workload | cycles (listing) | cycles (inferred) | difference | outputs | stale reads |"
    );
    println!("|---|---|---:|---:|---:|---|---:|");
    for (p, n, a, b) in cycles {
        println!(
            "| {p} | {n} | {} | {} | {:+.1} % | {} | {} |",
            a.0,
            b.0,
            (b.0 as f64 - a.0 as f64) / a.0 as f64 * 100.0,
            if b.1 { "correct" } else { "WRONG" },
            b.2
        );
    }
}
