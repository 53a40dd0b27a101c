//! The opcode tables' fixed latencies must agree with the compiler: in every shipped
//! listing, a fixed-latency producer's result is read by a later instruction no sooner
//! than the stall counters between them allow (M25 §4: stall = latency − intervening
//! instructions), one cycle later for memory instructions (M25 rule 24, Listing 3) unless
//! the producer is a uniform-datapath instruction or the consumer an LDC, and `read_delay`
//! cycles earlier for consumers that read sources late (sm_90 IMAD.WIDE; docs/model.md).
//! The listings are the built-in workloads', the SASS samples' and every cubin of the CUDA
//! program suite (`workloads/programs/sass/`).

use sassim_config::GpuConfig;
use sassim_gpu::prepare;
use sassim_isa::{regs_read, regs_written, ArchReg};
use sassim_timing::CoreConfig;
use std::path::PathBuf;

fn listings(sm: &str) -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut v = Vec::new();
    for dir in ["workloads", "fixtures/sass-samples"] {
        let walk = walk(&root.join(dir));
        v.extend(walk.into_iter().filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(&format!("_{sm}.cuobjdump-sass.txt")))
        }));
    }
    // The program suite's cached listings (one file per cubin, any architecture).
    if let Ok(rd) = std::fs::read_dir(root.join("workloads/programs/sass")) {
        let target = format!(".target\tsm_{}", &sm[2..]);
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "nvdisasm-hex")
                && std::fs::read_to_string(&p).is_ok_and(|t| t.contains(&target) && t.contains(".text."))
            {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

fn walk(d: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(d) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

fn check(preset: &str, sm: &str) -> Vec<String> {
    let g = GpuConfig::preset(preset).expect("preset");
    let core = CoreConfig::from_gpu(&g);
    let mut bad = Vec::new();
    let files = listings(sm);
    assert!(!files.is_empty(), "no {sm} listings");
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read listing");
        let listing = sassim_sass::parse_listing(&text, &f.display().to_string()).expect("parse");
        for k in &listing.kernels {
            let p = prepare(k, &g, &core);
            let targets: Vec<u64> = k
                .instructions
                .iter()
                .filter_map(|i| i.target().and_then(|t| t.addr()))
                .collect();
            for (i, ins) in k.instructions.iter().enumerate() {
                let si = &p.code[i];
                if !si.fixed || si.mem.is_some() || ins.ctrl.write_sb.is_some() {
                    continue;
                }
                let written = regs_written(ins);
                if written.is_empty() {
                    continue;
                }
                let mut dist = 0u32;
                for j in i + 1..(i + 6).min(k.instructions.len()) {
                    dist += k.instructions[j - 1].ctrl.stall.max(1) as u32;
                    let c = &k.instructions[j];
                    if targets.contains(&c.pc) {
                        break;
                    }
                    let reads = regs_read(c);
                    if written.iter().any(|r| reads.contains(r)) {
                        let extra = u32::from(p.code[j].reads_late() && !si.uniform_dest);
                        if si.latency + extra > dist + p.code[j].read_delay {
                            bad.push(format!(
                                "{}: {} (latency {}) then {} after {dist} cycles",
                                f.file_name().unwrap().to_string_lossy(),
                                ins.body(),
                                si.latency,
                                c.body()
                            ));
                        }
                        break;
                    }
                    let rewritten = regs_written(c);
                    if written
                        .iter()
                        .all(|r| rewritten.contains(r) || matches!(r, ArchReg::B(_)))
                    {
                        break;
                    }
                    if c.target().is_some() || c.opcode.base == "EXIT" {
                        break;
                    }
                }
            }
        }
    }
    bad
}

#[test]
fn turing_latencies_match_compiler_stalls() {
    let bad = check("t4", "sm75");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn ampere_latencies_match_compiler_stalls() {
    let bad = check("rtx-a6000", "sm86");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn hopper_latencies_match_compiler_stalls() {
    let bad = check("h100", "sm90");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
