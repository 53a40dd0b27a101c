//! Validates workload specs and prints what a simulator would launch.
//!
//! `cargo run -p sassim-workload --example check_spec -- workloads/vecadd/vecadd.toml ...`
//! With no arguments, checks every embedded built-in workload.

use sassim_workload::{builtin, Workload};

fn summary(w: &Workload) {
    println!(
        "{}: kernel {} grid {:?} block {:?} dyn-smem {} params {} bytes",
        w.name,
        w.kernel(),
        w.grid,
        w.block,
        w.shared_mem_bytes(),
        w.param_bytes(|_| 0).len()
    );
    for b in w.buffers() {
        println!("  buffer {:<8} {} x {}", b.name, b.elem, b.count());
    }
    for e in w.expected() {
        println!(
            "  output {:<8} abs_tol {} rel_tol {}",
            e.buffer, e.abs_tol, e.rel_tol
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut failed = false;
    let results: Vec<_> = if args.is_empty() {
        builtin().iter().map(|b| b.load()).collect()
    } else {
        args.iter().map(Workload::load).collect()
    };
    for r in results {
        match r {
            Ok(w) => summary(&w),
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
