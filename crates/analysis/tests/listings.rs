//! The analyses on every SASS listing the project ships (workloads and the program suite):
//! structural invariants of the graph, the liveness and the intervals, and renumbering.

use sassim_analysis::footprint::footprints;
use sassim_analysis::ltrf::{analyze, bank_conflicts, renumber, LtrfOptions};
use sassim_analysis::{Cfg, DomTree, Liveness, Loops, Mode};
use std::path::{Path, PathBuf};

fn listings() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut v = Vec::new();
    let mut dirs = vec![root.join("workloads")];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if name.ends_with(".cuobjdump-sass.txt") || name.contains(".nvdisasm-hex") {
                    v.push(p);
                }
            }
        }
    }
    v.sort();
    v
}

#[test]
fn invariants_on_every_shipped_kernel() {
    let files = listings();
    assert!(files.len() > 80, "found {} listings", files.len());
    let mut kernels = 0;
    let mut renumbered = 0;
    let mut refused = Vec::new();
    let (mut before0, mut after0, mut total) = (0usize, 0usize, 0usize);
    for f in &files {
        let text = std::fs::read_to_string(f).expect("reads");
        let Ok(listing) = sassim_sass::parse_listing(&text, &f.display().to_string()) else {
            continue; // e.g. kernel-less device-link stubs (workloads/programs/OPCODES.md)
        };
        for k in &listing.kernels {
            if k.instructions.is_empty() {
                continue;
            }
            kernels += 1;
            let what = format!("{} {}", f.display(), k.name);
            let cfg = Cfg::build(k);
            let fps = footprints(&k.instructions);
            // Blocks partition the instructions.
            let covered: usize = cfg.blocks.iter().map(|b| b.len()).sum();
            assert_eq!(covered, k.instructions.len(), "{what}");
            let dom = DomTree::dominators(&cfg);
            let pdom = DomTree::post_dominators(&cfg);
            for b in 0..cfg.len() {
                if let Some(d) = dom.idom[b] {
                    assert!(dom.dominates(d, b) && d != b, "{what}");
                }
                if let Some(p) = pdom.idom[b] {
                    assert!(pdom.dominates(p, b), "{what}");
                }
            }
            let _ = Loops::find(&cfg, &dom);
            let t = Liveness::compute(&cfg, &k.instructions, &fps, Mode::Thread);
            let w = Liveness::compute(&cfg, &k.instructions, &fps, Mode::Warp);
            for i in 0..k.instructions.len() {
                // The warp view keeps at least what a thread needs.
                assert_eq!(t.live_after(i).minus(&w.live_after(i)).len(), 0, "{what} @{i}");
            }
            for n in [8u32, 16, 32] {
                let opts = LtrfOptions {
                    registers_per_interval: n,
                    ..LtrfOptions::default()
                };
                let l = analyze(k, &opts);
                let iv = &l.intervals;
                let heads: Vec<usize> = iv.intervals.iter().map(|x| x.head).collect();
                // Single entry: control enters an interval only at its head.
                for b in 0..cfg.len() {
                    let blk = &cfg.blocks[b];
                    for i in blk.start + 1..blk.end {
                        if iv.interval_of[i] != iv.interval_of[i - 1] {
                            assert!(heads.contains(&i), "{what}: enters interval mid-block at {i}");
                        }
                    }
                    for s in cfg.succs(b) {
                        let to = cfg.blocks[s].start;
                        if iv.interval_of[to] != iv.interval_of[blk.last()] {
                            assert_eq!(heads[iv.interval_of[to]], to, "{what}: second entry at {to}");
                        }
                    }
                }
                for (x, ivl) in iv.intervals.iter().enumerate() {
                    let size = ivl.working_set.regular_len();
                    assert!(
                        size <= n as usize || (iv.oversized.contains(&x) && ivl.len() == 1),
                        "{what}: interval {x} has {size} registers"
                    );
                }
            }
            let opts = LtrfOptions::default();
            match renumber(k, &opts) {
                Ok(r) => {
                    renumbered += 1;
                    let orig = analyze(k, &opts);
                    assert_eq!(
                        r.intervals.intervals.len(),
                        orig.intervals.intervals.len(),
                        "{what}"
                    );
                    for (a, b) in r.intervals.intervals.iter().zip(orig.intervals.intervals.iter()) {
                        assert_eq!(a.head, b.head, "{what}");
                        assert!(
                            a.working_set.regular_len() <= b.working_set.regular_len(),
                            "{what}"
                        );
                        total += 1;
                        before0 += (bank_conflicts(&b.working_set, 16) == 0) as usize;
                        after0 += (bank_conflicts(&a.working_set, 16) == 0) as usize;
                    }
                    assert_eq!(r.kernel.instructions.len(), k.instructions.len());
                }
                Err(why) => refused.push(format!("{what}: {why}")),
            }
        }
    }
    eprintln!(
        "{kernels} kernels, {renumbered} renumbered; conflict-free intervals (N=16, 16 banks): {before0}/{total} before, {after0}/{total} after"
    );
    for r in &refused {
        eprintln!("not renumbered: {r}");
    }
    assert!(after0 >= before0);
    // Renumbering keeps a kernel within its original register count; the greedy colouring
    // still finds no register for some live ranges, and tensor-core operands are not yet known
    // exactly (138 of 214 kernels renumbered on 2026-11-24; 144 of 239 on 2026-11-26, when
    // the sparse-MMA program added 15 kernels, 53 of all being refused for a footprint not
    // known exactly — tensor-core instructions, IDP — and 42 for the colouring; the refused
    // ones are listed above). Issue 14 wants every shipped kernel: this guards against
    // regressions until then, among the kernels whose footprint is known and in number.
    let inexact = refused
        .iter()
        .filter(|r| r.contains("does not know exactly"))
        .count();
    assert!(
        renumbered * 100 >= (kernels - inexact) * 75,
        "{renumbered} of {} kernels with an exact footprint renumbered",
        kernels - inexact
    );
    assert!(renumbered >= 144, "{renumbered} of {kernels} renumbered");
}
