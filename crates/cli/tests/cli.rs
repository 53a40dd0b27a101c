//! The `sassim` command line: presets, help, errors, the default run and its outputs.

mod common;
use common::scratch;
use std::process::{Command, Output};

fn sassim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sassim"))
        .args(args)
        .output()
        .expect("run sassim")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = scratch("cli");
    std::fs::create_dir_all(&d).expect("temp dir");
    d.join(name)
}

#[test]
fn gpus_lists_the_nine_presets() {
    let o = sassim(&["gpus"]);
    assert!(o.status.success());
    let (out, _) = text(&o);
    for p in [
        "rtx-a6000",
        "rtx-3080",
        "rtx-3080ti",
        "rtx-3090",
        "rtx-2070s",
        "rtx-2080ti",
        "t4",
        "rtx-5070ti",
        "h100",
        "h100-pcie",
    ] {
        assert!(
            out.lines().any(|l| l.split_whitespace().next() == Some(p)),
            "{p} missing:\n{out}"
        );
    }
    assert_eq!(out.lines().count(), 11, "header + ten presets:\n{out}");
}

#[test]
fn help_documents_every_subcommand() {
    let (top, _) = text(&sassim(&["--help"]));
    for sub in [
        "run",
        "microbench",
        "disasm",
        "gpus",
        "trace",
        "cflow",
        "correlate",
    ] {
        assert!(top.contains(sub), "{sub} not in --help");
        let o = sassim(&[sub, "--help"]);
        assert!(o.status.success(), "{sub} --help");
        assert!(text(&o).0.contains("Usage"), "{sub} --help has no usage");
    }
    let (run, _) = text(&sassim(&["run", "--help"]));
    for opt in ["--gpu", "--set", "--json", "--plot", "--functional", "--cf"] {
        assert!(run.contains(opt), "run --help lacks {opt}");
    }
}

#[test]
fn bad_set_values_name_the_key_and_range() {
    let o = sassim(&["run", "vecadd", "--set", "regfile.banks=9"]);
    assert!(!o.status.success());
    let (_, err) = text(&o);
    assert!(err.contains("regfile.banks") && err.contains("1..=8"), "{err}");
    let o = sassim(&["run", "vecadd", "--set", "regfile.bankz=2"]);
    let (_, err) = text(&o);
    assert!(!o.status.success() && err.contains("bankz"), "{err}");
    let o = sassim(&["run", "vecadd", "--gpu", "no-such-gpu"]);
    let (_, err) = text(&o);
    assert!(!o.status.success() && err.contains("no-such-gpu"), "{err}");
}

#[test]
fn bad_listing_error_names_file_line_column() {
    let p = tmp("bad.sass");
    std::fs::write(&p, "FADD R1, R2, R3 ;\nFFMA R300, R1, R1, R1 ;\n").expect("write");
    let o = sassim(&["disasm", p.to_str().expect("path")]);
    assert!(!o.status.success());
    let (_, err) = text(&o);
    assert!(err.contains("bad.sass:2:"), "{err}");
    assert!(err.contains("R300"), "{err}");
}

#[test]
fn disasm_json_has_control_bits() {
    let f = common::root().join("fixtures/sass-samples/vec_add_sm86.cuobjdump-sass.txt");
    let o = sassim(&["disasm", f.to_str().expect("path"), "--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let a = v.as_array().expect("array");
    // /*0090*/ LDG.E R2, [R2.64] ; stall 1, write counter 2 (vec_add_sm86.control-bits.txt)
    let ldg = a.iter().find(|i| i["pc"] == 0x90).expect("pc 0x90");
    assert_eq!(ldg["opcode"], "LDG.E");
    assert_eq!(ldg["stall"], 1);
    assert_eq!(ldg["write_sb"], 2);
    assert_eq!(ldg["yield"], false);
}

#[test]
fn default_run_json_is_deterministic() {
    // Same statistics whatever the thread count.
    let (a, b) = (tmp("run1.json"), tmp("run2.json"));
    for (p, jobs) in [(&a, "1"), (&b, "2")] {
        let o = sassim(&[
            "run",
            "--json",
            p.to_str().expect("path"),
            "--force",
            "--jobs",
            jobs,
        ]);
        assert!(o.status.success(), "{}", text(&o).1);
        let (out, _) = text(&o);
        assert!(out.contains("warp-insts/s") && out.contains("cycles/s"), "{out}");
    }
    let (ja, jb) = (std::fs::read(&a).expect("a"), std::fs::read(&b).expect("b"));
    assert!(!ja.is_empty());
    assert_eq!(ja, jb, "two runs of the default suite differ");
    let v: serde_json::Value = serde_json::from_slice(&ja).expect("json");
    assert_eq!(v["kernels"].as_array().map(Vec::len), Some(8));
}

#[test]
fn json_output_is_not_overwritten_without_force() {
    let p = tmp("keep.json");
    std::fs::write(&p, "precious").expect("write");
    let o = sassim(&["run", "vecadd", "--json", p.to_str().expect("path")]);
    assert!(!o.status.success());
    assert_eq!(std::fs::read_to_string(&p).expect("read"), "precious");
}

/// The Accel-Sim lines parse with get_stats.py-style regular expressions and carry the
/// values of the JSON report.
#[test]
fn accelsim_lines_match_json() {
    let j = tmp("as.json");
    let o = sassim(&[
        "run",
        "vecadd",
        "reduce",
        "--accelsim",
        "--json",
        j.to_str().expect("path"),
        "--force",
    ]);
    assert!(o.status.success());
    let (out, _) = text(&o);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).expect("json")).expect("json");
    let grab = |re: &str| -> Vec<String> {
        let r = regex::Regex::new(re).expect("regex");
        r.captures_iter(&out).map(|c| c[1].trim().to_string()).collect()
    };
    let names = grab(r"kernel_name\s*=\s*(.*)");
    assert_eq!(names, vec!["vecadd", "reduce"]);
    let cycles = grab(r"gpu_sim_cycle\s*=\s*(.*)");
    let insn = grab(r"gpu_sim_insn\s*=\s*(.*)");
    for (k, kern) in v["kernels"].as_array().expect("kernels").iter().enumerate() {
        assert_eq!(cycles[k], kern["cycles"].to_string());
        assert_eq!(insn[k], kern["thread_insts"].to_string());
    }
    let tot = grab(r"gpu_tot_sim_cycle\s*=\s*(.*)");
    assert_eq!(tot.last().expect("tot"), &v["total"]["cycles"].to_string());
    let w = grab(r"gpgpu_n_tot_w_icount\s*=\s*(.*)");
    assert_eq!(w.last().expect("w"), &v["total"]["warp_insts"].to_string());
    assert!(!grab(r"gpu_tot_ipc\s*=\s*(.*)").is_empty());
    assert!(!grab(r"gpu_occupancy\s*=\s*(.*)%").is_empty());
    assert!(!grab(r"gpgpu_simulation_rate\s*=\s*(.*)\(inst/sec\)").is_empty());
    assert!(out.contains("GPGPU-Sim: *** exit detected ***"));
}

/// `correlate` on a CSV whose numbers are computed by hand against the JSON's cycles.
#[test]
fn correlate_against_hand_computed_csv() {
    let j = tmp("cor.json");
    let o = sassim(&[
        "run",
        "vecadd",
        "saxpy",
        "--json",
        j.to_str().expect("path"),
        "--force",
    ]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).expect("json")).expect("json");
    let c: Vec<f64> = v["kernels"]
        .as_array()
        .expect("k")
        .iter()
        .map(|k| k["cycles"].as_f64().expect("c"))
        .collect();
    // Measured = sim × 1.25 and sim × 0.8: APE = 20% and 25%, MAPE 22.5%.
    let csv = tmp("hw.csv");
    std::fs::write(
        &csv,
        format!(
            "kernel,launch_id,cycles\nvecadd,1,{}\nsaxpy,2,{}\n",
            c[0] * 1.25,
            c[1] * 0.8
        ),
    )
    .expect("csv");
    let o = sassim(&["correlate", j.to_str().expect("j"), csv.to_str().expect("csv")]);
    assert!(o.status.success(), "{}", text(&o).1);
    let (out, _) = text(&o);
    assert!(out.contains("22.5"), "MAPE 22.5% expected:\n{out}");
}

#[test]
fn functional_mode_verifies_outputs() {
    let o = sassim(&["run", "--functional", "vecadd", "spinlock"]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(text(&o).0.matches("outputs verified").count(), 2);
}

#[test]
fn cflow_compare_hanoi_vs_simt() {
    let o = sassim(&["cflow", "compare", "hanoi", "simt", "--workload", "divergent"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let (out, _) = text(&o);
    let d: f64 = out
        .split("discrepancy ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .expect("discrepancy");
    assert!(d > 0.0 && d < 1.0, "{out}");
}

/// `trace record` writes an Accel-Sim trace that `trace info` reads back with the same
/// instruction count as the functional run.
#[test]
fn trace_record_then_info() {
    let dir = tmp("trace-rec");
    let o = sassim(&["trace", "record", "reduce", dir.to_str().expect("dir"), "--force"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let (out, _) = text(&o);
    assert!(out.contains("6440 warp instructions"), "{out}");
    let o = sassim(&[
        "trace",
        "info",
        dir.join("kernel-1.traceg").to_str().expect("path"),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(text(&o).0.contains("6440 warp instructions"));
    let bin = dir.join("k.sbt");
    let o = sassim(&[
        "trace",
        "convert",
        dir.join("kernel-1.traceg").to_str().expect("p"),
        bin.to_str().expect("b"),
        "--force",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = sassim(&["trace", "info", bin.to_str().expect("b")]);
    assert!(text(&o).0.contains("6440 warp instructions"));
}

/// Hanoi paper §VI-C: the spinlock finishes thanks to the compiler's YIELD; with YIELD
/// turned into a NOP it deadlocks, and both the functional and the timing runs stop with a
/// report instead of hanging.
#[test]
fn spinlock_deadlocks_without_yield() {
    let o = sassim(&["run", "spinlock"]);
    assert!(o.status.success(), "{}", text(&o).1);
    for extra in [&["--functional"][..], &["--deadlock-cycles", "50000"][..]] {
        let mut args = vec!["run", "spinlock", "--set", "issue.yield_enabled=false"];
        args.extend_from_slice(extra);
        let o = sassim(&args);
        assert!(!o.status.success());
        let (_, err) = text(&o);
        assert!(
            err.contains("deadlock") && err.contains("running") && err.contains("pc 0x"),
            "{err}"
        );
    }
}

/// Memory-hierarchy statistics reach the JSON report (issue 6): L1D, L2, DRAM and
/// shared-memory counters of a kernel that uses them.
#[test]
fn memory_statistics_in_json() {
    let j = tmp("mem.json");
    let o = sassim(&["run", "reduce", "--json", j.to_str().expect("path"), "--force"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).expect("json")).expect("json");
    let k = &v["kernels"][0];
    assert!(k["l1d"]["accesses"].as_u64().unwrap_or(0) > 0, "{}", k["l1d"]);
    assert!(k["l2"]["accesses"].as_u64().unwrap_or(0) > 0, "{}", k["l2"]);
    assert!(k["dram_reads"].as_u64().unwrap_or(0) > 0);
    assert!(k["dram_row_hits"].as_u64().unwrap_or(0) > 0);
    assert!(
        k["shared_accesses"].as_u64().unwrap_or(0) > 0,
        "reduce uses shared memory"
    );
}

/// The whole suite runs through the timing model with verified outputs on Turing (sm_75
/// listings) and Hopper (sm_90 listings) presets too.
#[test]
fn suite_on_turing_and_hopper() {
    for gpu in ["t4", "h100"] {
        let o = sassim(&["run", "--gpu", gpu]);
        assert!(o.status.success(), "{gpu}: {}", text(&o).1);
        let (out, err) = text(&o);
        assert!(!err.contains("mismatch"), "{gpu}: {err}");
        assert_eq!(
            out.lines()
                .filter(|l| l.trim_start().starts_with(char::is_numeric))
                .count(),
            8,
            "{out}"
        );
    }
}

/// A user's launch spec runs from its file: the listing beside it (or `--listing`), and a
/// missing listing is an error that says what to do.
#[test]
fn run_user_spec_file() {
    let spec = common::root().join("workloads/saxpy/saxpy.toml");
    let o = sassim(&["run", spec.to_str().expect("p"), "--jobs", "1"]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(text(&o).0.contains("saxpy"));
    let o = sassim(&["run", "--functional", spec.to_str().expect("p")]);
    assert!(o.status.success() && text(&o).0.contains("outputs verified"));
    let lonely = tmp("lonely.toml");
    std::fs::copy(&spec, &lonely).expect("copy");
    let o = sassim(&["run", lonely.to_str().expect("p")]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("--listing"), "{}", text(&o).1);
    let listing = common::root().join("workloads/saxpy/saxpy_sm86.cuobjdump-sass.txt");
    let o = sassim(&[
        "run",
        lonely.to_str().expect("p"),
        "--listing",
        listing.to_str().expect("l"),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
}

/// An empty microbenchmark and code that runs past its end stop at once with an error that
/// says so (not after the deadlock detector's timeout).
#[test]
fn empty_or_unterminated_microbench_errors() {
    let empty = tmp("empty.sass");
    std::fs::write(&empty, "# nothing\n").expect("write");
    let o = sassim(&["microbench", empty.to_str().expect("p")]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("no instructions"), "{}", text(&o).1);
    let noexit = tmp("noexit.sass");
    std::fs::write(&noexit, "FADD R1, R2, R3\n").expect("write");
    let o = sassim(&["microbench", noexit.to_str().expect("p")]);
    assert!(!o.status.success());
    let (_, err) = text(&o);
    assert!(
        err.contains("past the kernel's code") && err.contains("0x10"),
        "{err}"
    );
}

/// `trace convert` on a trace directory writes one .sbt per kernel and a kernelslist.g
/// naming them; `run --trace` on it gives the same statistics as on the text traces
/// (issue 7: "read transparently by sassim run"). The output directory may not be the
/// input directory, and nothing is overwritten without --force.
#[test]
fn trace_directory_convert_runs_identically() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/traces/bfs-sm80-v3");
    let out = tmp("bfs-sbt");
    let _ = std::fs::remove_dir_all(&out);
    let o = sassim(&[
        "trace",
        "convert",
        src.to_str().expect("src"),
        out.to_str().expect("out"),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(text(&o).0.contains("16 kernels:"), "{}", text(&o).0);
    let list = std::fs::read_to_string(out.join("kernelslist.g")).expect("kernelslist");
    let orig = std::fs::read_to_string(src.join("kernelslist.g")).expect("orig");
    // Same commands, kernel files renamed.
    let renamed: Vec<String> = orig
        .lines()
        .map(|l| l.trim().replace(".traceg", ".sbt"))
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(list.lines().collect::<Vec<_>>(), renamed);
    let again = sassim(&[
        "trace",
        "convert",
        src.to_str().expect("src"),
        out.to_str().expect("out"),
    ]);
    assert!(!again.status.success() && text(&again).1.contains("--force"));
    let same = sassim(&[
        "trace",
        "convert",
        src.to_str().expect("src"),
        src.to_str().expect("src"),
    ]);
    assert!(!same.status.success() && text(&same).1.contains("must differ"));

    // `trace info` on both directories: one line per kernel, the same totals.
    let info = |d: &std::path::Path| {
        let o = sassim(&["trace", "info", d.to_str().expect("dir")]);
        assert!(o.status.success(), "{}", text(&o).1);
        text(&o).0.lines().last().unwrap_or_default().to_string()
    };
    let total = info(&src);
    assert_eq!(
        total,
        "16 kernels, 128 thread blocks, 159509 warp instructions; 14 host-to-device copies (159752 bytes)"
    );
    assert_eq!(info(&out), total);

    let run = |list: &std::path::Path, json: &std::path::Path| {
        let o = sassim(&[
            "run",
            "--trace",
            list.to_str().expect("list"),
            "--json",
            json.to_str().expect("json"),
            "--force",
        ]);
        assert!(o.status.success(), "{}", text(&o).1);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(json).expect("json")).expect("parse");
        (v["kernels"].clone(), v["total"].clone())
    };
    let (kt, tt) = run(&src.join("kernelslist.g"), &tmp("bfs-text.json"));
    let (kb, tb) = run(&out.join("kernelslist.g"), &tmp("bfs-bin.json"));
    assert_eq!(kt.as_array().map(Vec::len), Some(16));
    assert_eq!(kt, kb);
    assert_eq!(tt, tb);
}

/// An L1 with fewer MSHR entries than one warp load misses in never accepts that load (the
/// model admits a warp access whole, docs/memory.md): the run ends with a deadlock report
/// that names the cause, and the same trace runs with enough entries.
#[test]
fn a_load_the_l1_can_never_accept_is_named_in_the_deadlock_report() {
    let trace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/traces/bfs-sm80-v3");
    let t = trace.to_str().expect("utf-8 path");
    let run = |entries: &str| {
        sassim(&[
            "run",
            "--trace",
            t,
            "--jobs",
            "1",
            "--threads",
            "2",
            "--deadlock-cycles",
            "20000",
            "--set",
            &format!("l1d.mshr_entries={entries}"),
        ])
    };
    let o = run("8");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("deadlock")
            && err.contains("can never accept a warp load that misses in")
            && err.contains("8 MSHR entries (l1d.mshr_entries)"),
        "{err}"
    );
    let o = run("16");
    assert!(o.status.success(), "{}", text(&o).1);
}
