//! Issue 18: every case a new user met ends within seconds with an error that names the key,
//! file or line and the allowed range, or with a correct result; outputs are never lost or
//! half-written; warnings are printed once and reach the JSON.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sassim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sassim"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run sassim")
}

/// (stdout, stderr, exit code); asserts the run took less than `secs`.
fn run_within(secs: u64, args: &[&str]) -> (String, String, i32) {
    let t = Instant::now();
    let o = sassim(args);
    assert!(
        t.elapsed() < Duration::from_secs(secs),
        "{args:?} took {:?}",
        t.elapsed()
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        err,
        o.status.code().unwrap_or(-1),
    )
}

fn tmp(name: &str) -> PathBuf {
    let d = scratch(&format!("robust-{name}"));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn bad_settings_are_refused_by_key_and_range() {
    for (set, want) in [
        ("icnt.input_buffer_flits=2147483648", "1..=65536"),
        ("l2.mshr_entries=4294967295", "1..=4096"),
        ("dram.bus_width_bytes=3", "dram.burst_length"),
        ("dram.row_bytes=3", "64..=65536"),
        ("l2.line_bytes=2147483648", "32..=1024"),
        ("gpu.core_clock_mhz=nan", "1..=10000"),
        ("l1d.shmem_atomic_conflict_cycles=nan", "0..=100"),
        ("regfile.read_ports_per_bank=-1", "1..=4"),
        ("foo=1", "unknown configuration key `foo`"),
    ] {
        let key = set.split('=').next().unwrap();
        let (out, err, code) = run_within(10, &["run", "vecadd", "--set", set]);
        assert_eq!(code, 2, "{set}: {err}");
        assert!(out.is_empty(), "{set}: nothing simulated");
        assert!(
            err.contains(want) && (err.contains(key) || key == "dram.bus_width_bytes"),
            "{set}: {err}"
        );
    }
}

#[test]
fn launch_spec_buffer_counts_are_bounded() {
    let d = tmp("spec");
    for f in std::fs::read_dir(root().join("workloads/vecadd"))
        .unwrap()
        .flatten()
    {
        std::fs::copy(f.path(), d.join(f.file_name())).unwrap();
    }
    let spec = std::fs::read_to_string(d.join("vecadd.toml")).unwrap();
    for count in ["1099511627776", "9223372036854775807"] {
        std::fs::write(
            d.join("vecadd.toml"),
            spec.replacen("count = 1024", &format!("count = {count}"), 1),
        )
        .unwrap();
        let (_, err, code) = run_within(10, &["run", s(&d.join("vecadd.toml"))]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("buffer `a`: `count`") && err.contains("allowed 1..="),
            "{err}"
        );
    }
    // Within the per-buffer limit, but beyond --max-memory: refused before it is built,
    // naming the buffer.
    std::fs::write(
        d.join("vecadd.toml"),
        spec.replacen("count = 1024", "count = 268435456", 1),
    )
    .unwrap();
    let (_, err, code) = run_within(10, &["run", s(&d.join("vecadd.toml")), "--max-memory", "512M"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("more than the limit of 512.0 MiB") && err.contains("[[buffer]] a count"),
        "{err}"
    );
    // The configuration alone: the largest part and its key.
    let (_, err, code) = run_within(10, &["run", "vecadd", "--max-memory", "64M"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("from `") && err.contains("--max-memory 64M"),
        "{err}"
    );
    // A spec copied without its ptxas-v.txt: the warning says what is missing.
    std::fs::write(d.join("vecadd.toml"), &spec).unwrap();
    std::fs::copy(root().join("workloads/reduce/reduce.toml"), d.join("reduce.toml")).unwrap();
    std::fs::copy(
        root().join("workloads/reduce/reduce_sm86.cuobjdump-sass.txt"),
        d.join("reduce_sm86.cuobjdump-sass.txt"),
    )
    .unwrap();
    let (_, err, _) = run_within(20, &["run", s(&d.join("reduce.toml"))]);
    assert!(err.contains("reduce.ptxas-v.txt not found"), "{err}");
}

#[test]
fn microbenchmark_grids() {
    let d = tmp("mb");
    let body = "[B------:R-:W-:-:S01] FADD R1, RZ, 1 ;\n[B------:R-:W-:-:S05] EXIT ;\n";
    std::fs::write(d.join("big.sass"), format!(".grid 300000\n.block 32\n{body}")).unwrap();
    let (_, err, code) = run_within(10, &["microbench", s(&d.join("big.sass"))]);
    assert_eq!(code, 2);
    assert!(err.contains("big.sass:1") && err.contains("1..=8192"), "{err}");
    // 1000 CTAs of one warp: more than the SMs; reported a false deadlock before.
    std::fs::write(d.join("k.sass"), format!(".grid 1000\n.block 32\n{body}")).unwrap();
    let (out, err, code) = run_within(20, &["microbench", s(&d.join("k.sass")), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // Warps are reported by SM slot (the last CTA of each SM): 84 SMs, one warp each.
    assert!(v["total_cycles"].as_u64().unwrap() > 0);
    assert_eq!(v["warps"][0]["regs"]["R1"][0], 0x3f80_0000);
}

#[test]
fn mutated_listing_with_a_repeated_address_is_an_error_at_its_line() {
    let d = tmp("listing");
    let l = std::fs::read_to_string(root().join("workloads/vecadd/vecadd_sm86.cuobjdump-sass.txt")).unwrap();
    let line = l.lines().position(|x| x.contains("/*0090*/")).unwrap() + 1;
    std::fs::write(d.join("l.txt"), l.replacen("/*0090*/", "/*0000*/", 1)).unwrap();
    let spec = root().join("workloads/vecadd/vecadd.toml");
    let (_, err, code) = run_within(10, &["run", s(&spec), "--listing", s(&d.join("l.txt"))]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("l.txt:{line}:")) && err.contains("expected 0x0090"),
        "{err}"
    );
}

#[test]
fn convert_refuses_to_overwrite_its_input() {
    let d = tmp("convert");
    let k = d.join("K.traceg");
    std::fs::copy(
        root().join("fixtures/traces/vectoradd-sm61-v4-gtx1080/kernel-1.traceg"),
        &k,
    )
    .unwrap();
    let before = std::fs::read(&k).unwrap();
    let (_, err, code) = run_within(10, &["trace", "convert", s(&k), s(&k), "--force"]);
    assert_eq!(code, 2);
    assert!(err.contains("also an input"), "{err}");
    assert_eq!(std::fs::read(&k).unwrap(), before, "the input is intact");
    // A real conversion leaves no temporary file beside its output.
    let out = d.join("K.sbt");
    let (_, err, code) = run_within(10, &["trace", "convert", s(&k), s(&out)]);
    assert_eq!(code, 0, "{err}");
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn failed_record_leaves_nothing_and_lists_need_kernels() {
    let d = tmp("record");
    let (_, err, code) = run_within(60, &["trace", "record", "spinlock", s(&d), "--cf", "simt"]);
    assert_ne!(code, 0, "the SIMT stack deadlocks on the spinlock: {err}");
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        0,
        "nothing left in {}",
        d.display()
    );
    // An empty kernelslist.g is an error for info, convert and run alike.
    std::fs::write(d.join("kernelslist.g"), "").unwrap();
    for args in [
        vec!["trace", "info", s(&d)],
        vec!["trace", "convert", s(&d), "/nonexistent-out"],
        vec!["run", "--trace", s(&d)],
    ] {
        let (_, err, code) = run_within(10, &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("names no kernel"), "{args:?}: {err}");
    }
}

#[test]
fn trace_directory_runs_and_warns_once_into_the_json() {
    let d = tmp("trace");
    let j = d.join("r.json");
    let dir = root().join("fixtures/traces/bfs-sm80-v3");
    let (_, err, code) = run_within(60, &["run", "--trace", s(&dir), "--json", s(&j)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.matches("trace recorded for sm_80").count(), 1, "{err}");
    assert!(err.contains("16 kernels"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    let w = v["warnings"].to_string();
    assert!(
        w.contains("trace recorded for sm_80") && !w.contains("closest"),
        "{w}"
    );
}

#[test]
fn architecture_notes_reach_the_json() {
    let d = tmp("arch");
    let j = d.join("r.json");
    let (_, err, code) = run_within(30, &["run", "vecadd", "--gpu", "rtx-5070ti", "--json", s(&j)]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    assert!(v["warnings"].to_string().contains("sm_120"), "{}", v["warnings"]);
    // An sm_75 listing on the sm_86 default preset.
    let spec = root().join("workloads/vecadd/vecadd.toml");
    let l75 = root().join("workloads/vecadd/vecadd_sm75.cuobjdump-sass.txt");
    let (_, err, _) = run_within(
        30,
        &["run", s(&spec), "--listing", s(&l75), "--json", s(&j), "--force"],
    );
    assert_eq!(err.matches("a listing for sm_75").count(), 1, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    assert!(
        v["warnings"].to_string().contains("a listing for sm_75"),
        "{}",
        v["warnings"]
    );
    // A listing whose header names an architecture that does not exist.
    let l86 =
        std::fs::read_to_string(root().join("workloads/vecadd/vecadd_sm86.cuobjdump-sass.txt")).unwrap();
    let l999 = d.join("vecadd_sm999.txt");
    std::fs::write(&l999, l86.replace("sm_86", "sm_999").replace("SM86", "SM999")).unwrap();
    let (_, err, _) = run_within(
        30,
        &["run", s(&spec), "--listing", s(&l999), "--json", s(&j), "--force"],
    );
    assert_eq!(err.matches("a listing for sm_999").count(), 1, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    assert!(
        v["warnings"].to_string().contains("a listing for sm_999"),
        "{}",
        v["warnings"]
    );
}

#[test]
fn output_conflicts_are_found_before_simulating() {
    let d = tmp("plot");
    std::fs::write(d.join("stalls.svg"), "mine").unwrap();
    let (out, err, code) = run_within(10, &["run", "vecadd", "--plot", s(&d)]);
    assert_eq!(code, 2);
    assert!(out.is_empty(), "nothing simulated: {out}");
    assert!(err.contains("stalls.svg exists"), "{err}");
    assert_eq!(std::fs::read_to_string(d.join("stalls.svg")).unwrap(), "mine");
    // --functional has no timing statistics: refused, nothing written.
    let j = d.join("f.json");
    let (_, err, code) = run_within(10, &["run", "vecadd", "--functional", "--json", s(&j)]);
    assert_eq!(code, 2, "{err}");
    assert!(!j.exists());
    // The JSON output equal to an input.
    let spec = d.join("vecadd.toml");
    std::fs::copy(root().join("workloads/vecadd/vecadd.toml"), &spec).unwrap();
    std::fs::copy(
        root().join("workloads/vecadd/vecadd_sm86.cuobjdump-sass.txt"),
        d.join("vecadd_sm86.cuobjdump-sass.txt"),
    )
    .unwrap();
    let (_, err, code) = run_within(10, &["run", s(&spec), "--json", s(&spec), "--force"]);
    assert_eq!(code, 2);
    assert!(err.contains("also an input"), "{err}");
    // correlate checks its plot before reading anything.
    let (_, err, code) = run_within(
        10,
        &[
            "correlate",
            "/nonexistent.json",
            "/nonexistent.csv",
            "--plot",
            s(&d.join("stalls.svg")),
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("stalls.svg exists"), "{err}");
}

#[test]
fn limits_end_runs_with_partial_statistics() {
    // (3000 cycles: past rtx-a6000's kernel launch latency, so warps have run.)
    let d = tmp("limits");
    let j = d.join("r.json");
    let (out, err, code) = run_within(20, &["run", "matmul", "--max-cycles", "3000", "--json", s(&j)]);
    assert_eq!(code, 3, "{err}");
    assert!(out.contains("matmul") && out.contains("3000"), "{out}");
    assert!(
        err.contains("cycle limit of 3000") && err.contains("partial statistics"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    assert_eq!(v["kernels"][0]["cycles"], 3000);
    assert!(v["kernels"][0]["warp_insts"].as_u64().unwrap() > 0);
    // --deadlock-cycles 0 turns detection off (it reported a deadlock at cycle 1).
    let (_, err, code) = run_within(20, &["run", "vecadd", "--deadlock-cycles", "0"]);
    assert_eq!(code, 0, "{err}");
    // A window shorter than the first constant-cache misses after the launch reports them
    // (the warps' first instruction reads a constant bank): the report says what the warps
    // wait for.
    let (_, err, code) = run_within(20, &["run", "vecadd", "--deadlock-cycles", "500"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("deadlock") && err.contains("constant-cache miss since cycle"),
        "{err}"
    );
    // A real deadlock is reported quickly, with the waiting warps and their PCs.
    let (_, err, code) = run_within(10, &["run", "spinlock", "--cf", "simt"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("deadlock") && err.contains("warp 0: running at pc 0x"),
        "{err}"
    );
    // Wall-clock limit.
    let (_, err, code) = run_within(
        20,
        &[
            "run",
            "spinlock",
            "--cf",
            "simt",
            "--deadlock-cycles",
            "0",
            "--max-wall",
            "0.5",
        ],
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("wall-clock limit"), "{err}");
}

#[test]
fn small_rough_edges() {
    let d = tmp("edges");
    // disasm of an empty file.
    std::fs::write(d.join("empty.txt"), "").unwrap();
    let (_, err, code) = run_within(10, &["disasm", s(&d.join("empty.txt"))]);
    assert_eq!(code, 2, "{err}");
    // cflow compare with an unknown workload.
    let (_, err, code) = run_within(10, &["cflow", "compare", "hanoi", "simt", "--workload", "nosuch"]);
    assert_eq!(code, 2);
    assert!(err.contains("nosuch"), "{err}");
    // One name for the SIMT stack.
    let (out, _, _) = run_within(20, &["run", "vecadd", "--functional", "--cf", "simt"]);
    assert!(out.contains("simt)") && !out.contains("SimtStack"), "{out}");
    // `sassim gpus` columns line up.
    let (out, _, _) = run_within(10, &["gpus"]);
    let col = |l: &str| l.find("sm_").unwrap_or(0);
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert!(lines.iter().all(|l| col(l) == col(lines[0])), "{out}");
    // Microbenchmark registers: numeric order, bits and f32.
    let mb = root().join("fixtures/sass-samples/microbench/listing2_stall_s4.sass");
    let (out, _, _) = run_within(10, &["microbench", s(&mb)]);
    let regs: Vec<u32> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix('R'))
        .filter_map(|l| l.split(' ').next()?.parse().ok())
        .collect();
    let mut sorted = regs.clone();
    sorted.sort();
    assert!(regs.len() > 2 && regs == sorted, "{out}");
    assert!(out.contains("(6.0)"), "R5 = 6.0 shown as a float: {out}");
    // RFC hits in the text output too (they were only in the JSON).
    let mb = root().join("fixtures/sass-samples/microbench/listing4_rfc_ex1.sass");
    let (out, _, _) = run_within(10, &["microbench", s(&mb)]);
    assert!(out.contains("FFMA   RFC hit R2"), "{out}");
    // Accel-Sim lines: the L1I counts the instruction-cache lookups.
    let (out, _, _) = run_within(20, &["run", "vecadd", "--accelsim"]);
    let l1i: u64 = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("L1I_total_cache_accesses = "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(l1i > 0, "{out}");
    assert!(out.contains("sassim_simulation_seconds = "), "{out}");
    // Positional arguments have help.
    for (cmd, want) in [
        (&["trace", "convert", "--help"][..], "A kernel trace"),
        (&["trace", "info", "--help"][..], "A kernel trace"),
        (&["trace", "record", "--help"][..], "Built-in workload name"),
        (&["cflow", "compare", "--help"][..], "First control-flow manager"),
    ] {
        let o = sassim(cmd);
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(help.contains(want), "{cmd:?}: {help}");
    }
}

/// `--threads` (threads ticking the SMs of a kernel) is a count from the user: 0 and counts
/// beyond 1024 are refused before any thread is spawned, on `run` and on `exec`.
#[test]
fn thread_counts_are_bounded() {
    for args in [
        &["run", "--threads", "0", "vecadd"][..],
        &["run", "--threads", "5000", "vecadd"][..],
        &["exec", "--threads", "0", "--", "/bin/true"][..],
        &["exec", "--threads", "4294967296", "--", "/bin/true"][..],
    ] {
        let o = sassim(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} accepted");
        assert!(
            err.contains("--threads") || err.contains("threads"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// `sassim microbench --threads N` as on `run`: 2 is accepted and gives the result of 1;
/// 0, -1, a word and counts beyond 1024 are refused with a message, without a panic.
#[test]
fn microbench_takes_a_thread_count() {
    let mb = root().join("fixtures/sass-samples/microbench/listing2_stall_s4.sass");
    let json = |t: &str| {
        let o = sassim(&["microbench", s(&mb), "--json", "--threads", t]);
        assert!(
            o.status.success(),
            "--threads {t}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let one = json("1");
    assert!(one.contains("\"R5\""), "{one}");
    assert_eq!(json("2"), one);
    for bad in ["0", "-1", "abc", "5000", ""] {
        let o = sassim(&["microbench", s(&mb), "--threads", bad]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "--threads {bad:?} accepted");
        assert!(
            err.contains("threads") || err.contains("-1"),
            "--threads {bad:?}: {err}"
        );
        assert!(!err.contains("panicked"), "--threads {bad:?}: {err}");
    }
}
