//! Control-bit inference against ptxas (issue 13, point 5): strips the control bits of the
//! built-in workloads' listings (sm_75 on t4, sm_86 on rtx-a6000, sm_90 on h100) and of the
//! program suite's cached SASS, infers them, and prints the agreement (exact stall count,
//! within ±1, identical wait masks, whether a wait is present, yield bits) and, for the
//! workloads, the cycles with inferred versus real control bits (docs/validation.md).
//!
//! `cargo run --release -p sassim-gpu --example ctlbits [-- --show WORKLOAD ARCH]`

use sassim_analysis::control_bits::{infer, Agreement};
use sassim_config::GpuConfig;
use sassim_gpu::ctlbits::{infer_options, timings};
use sassim_gpu::ctlbits_validation::{agreement, cycle_rows, program_kernels, workload_kernels, ARCHS};
use sassim_gpu::workload::load_builtin;
use sassim_gpu::Gpu;
use std::path::Path;

fn row(arch: &str, source: &str, a: &Agreement) {
    println!(
        "| {arch} | {source} | {} | {:.1} % | {:.1} % | {:.1} % | {:.1} % | {:.1} % |",
        a.instructions,
        a.pct(a.stall_exact),
        a.pct(a.stall_within_1),
        a.pct(a.wait_exact),
        a.pct(a.wait_presence),
        a.pct(a.yield_exact)
    );
}

/// Every instruction of one workload's kernels, real and inferred bits side by side.
fn show(name: &str, arch: &str, preset: &str) {
    let Some(b) = sassim_workload::builtin().into_iter().find(|b| b.name == name) else {
        eprintln!("no workload {name}");
        return;
    };
    let (Ok(cfg), Ok((_, listing, _))) = (GpuConfig::preset(preset), load_builtin(&b, arch)) else {
        eprintln!("no {arch} listing of {name}");
        return;
    };
    let core = Gpu::new(cfg.clone()).core;
    for k in &listing.kernels {
        let t = timings(k, &cfg, &core);
        let bits = infer(k, &t, &infer_options(&cfg));
        for (ins, x) in k.instructions.iter().zip(&bits) {
            let y = ins.ctrl;
            println!(
                "{:#06x} {:<40} real S{:02} Y{} W{:06b} wr{:?} rd{:?} | inferred S{:02} Y{} W{:06b} wr{:?} rd{:?}",
                ins.pc,
                ins.opcode.to_string(),
                y.stall,
                u8::from(y.yield_),
                y.wait_mask,
                y.write_sb,
                y.read_sb,
                x.stall,
                u8::from(x.yield_),
                x.wait_mask,
                x.write_sb,
                x.read_sb
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--show") {
        let (Some(name), Some(arch)) = (args.get(i + 1), args.get(i + 2)) else {
            eprintln!("usage: --show WORKLOAD ARCH");
            return;
        };
        let preset = ARCHS.iter().find(|(a, _)| a == arch).map_or("rtx-a6000", |x| x.1);
        show(name, arch, preset);
        return;
    }
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/programs/sass");
    println!("| arch | source | instructions | stall exact | stall ±1 | wait mask exact | wait presence | yield exact |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let mut total = Agreement::default();
    for (arch, preset) in ARCHS {
        let Ok(cfg) = GpuConfig::preset(preset) else {
            continue;
        };
        for (source, kernels) in [
            ("workloads", workload_kernels(arch)),
            ("programs", program_kernels(&programs, arch)),
        ] {
            let a = agreement(&kernels, &cfg);
            row(arch, source, &a);
            total.add(&a);
        }
    }
    row("all", "", &total);
    println!();
    println!(
        "| preset | workload | cycles (listing) | cycles (inferred) | difference | outputs | stale reads |"
    );
    println!("|---|---|---:|---:|---:|---|---:|");
    for (arch, preset) in ARCHS {
        for r in cycle_rows(arch, preset) {
            println!(
                "| {} | {} | {} | {} | {:+.1} % | {} | {} |",
                r.preset,
                r.workload,
                r.listing_cycles,
                r.inferred_cycles,
                r.difference_pct(),
                if r.correct { "correct" } else { "WRONG" },
                r.stale_reads
            );
        }
    }
}
