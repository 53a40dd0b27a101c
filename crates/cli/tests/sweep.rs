//! End to end: a 105-run sweep runs locally, is killed and resumed without redoing finished runs;
//! the same sweep through a real single-node Slurm (scripts/slurm-local.sh: slurmctld, slurmd,
//! munge from Debian's packages) gives identical database contents; a corrupted and a deleted task
//! output are reported by `results collect` and never merged.
//!
//! The Slurm part needs root and apt (the script installs and starts the cluster). Without them
//! it fails loudly: it never skips.

use sassim_experiment::Db;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_sassim");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// 7 stream-buffer sizes x 3 schedulers = 21 configurations, x 5 small workloads = 105 runs.
const EXPERIMENT: &str = r#"
name = "e2e"
description = "end-to-end sweep test"
workloads = ["vecadd", "saxpy", "shfl_reduce", "reduce", "divergent"]
[sweep]
mode = "cartesian"
[[sweep.param]]
key = "frontend.stream_buffer_entries"
values = [0, 1, 2, 4, 8, 16, 32]
[[sweep.param]]
key = "issue.scheduler"
values = ["cggty", "gto", "lrr"]
"#;

fn write_experiment(dir: &Path) -> PathBuf {
    let p = dir.join("e2e.toml");
    std::fs::write(&p, EXPERIMENT).unwrap();
    p
}

fn sassim(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn done_runs(db: &Path) -> HashMap<String, (i64, f64)> {
    if !db.is_file() {
        return HashMap::new();
    }
    let db = Db::open(db).unwrap();
    let mut st = db
        .conn
        .prepare(
            "SELECT r.run_key, e.finished_at, e.wall_seconds FROM runs r JOIN executions e ON e.run_key = r.run_key
             WHERE r.status = 'done'",
        )
        .unwrap();
    st.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, (r.get::<_, i64>(1)?, r.get::<_, f64>(2)?)))
    })
    .unwrap()
    .map(|r| r.unwrap())
    .collect()
}

fn dump(db: &Path) -> BTreeMap<String, Vec<String>> {
    Db::open(db).unwrap().dump().unwrap()
}

fn local_sweep_interrupted_and_resumed(dir: &Path, exp: &Path) -> PathBuf {
    let db = dir.join("local.db");
    let dbs = db.to_str().unwrap();
    // Start the sweep in its own process group and kill the whole group (sweep and children)
    // once some runs are stored.
    let mut child = {
        use std::os::unix::process::CommandExt;
        Command::new(BIN)
            .args(["sweep", exp.to_str().unwrap(), "--db", dbs, "--jobs", "2"])
            .current_dir(dir)
            // The killed runs' temporary directories go into the test's own directory
            // (nothing is left to remove them).
            .env("TMPDIR", dir)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap()
    };
    let t0 = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        if done_runs(&db).len() >= 12 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before it was interrupted"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "the sweep stores no runs"
        );
    }
    let pid = child.id() as i32;
    let st = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .status()
        .unwrap();
    assert!(st.success());
    let _ = child.wait();
    let before = done_runs(&db);
    assert!(
        before.len() >= 12 && before.len() < 105,
        "{} runs stored before the interruption",
        before.len()
    );
    // Resume: exactly the missing runs execute; the stored ones are untouched.
    let out = sassim(&["sweep", exp.to_str().unwrap(), "--db", dbs, "--jobs", "2"], dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let want = format!(
        "e2e: 105 runs: {} done earlier (skipped), 0 failed earlier (skipped), {} run now (0 failed)",
        before.len(),
        105 - before.len()
    );
    assert!(err.contains(&want), "{err}");
    let after = done_runs(&db);
    assert_eq!(after.len(), 105);
    for (k, v) in &before {
        assert_eq!(after.get(k), Some(v), "run {k} was executed again");
    }
    // A third sweep has nothing to do.
    let out = sassim(&["sweep", exp.to_str().unwrap(), "--db", dbs], dir);
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("105 done earlier (skipped), 0 failed earlier (skipped), 0 run now"));
    db
}

fn start_slurm() {
    let script = root().join("scripts/slurm-local.sh");
    let out = Command::new("bash").arg(&script).arg("start").output().unwrap();
    assert!(
        out.status.success(),
        "{} start failed (needs root and apt-get): {}{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sweep_local_resume_slurm_identical_and_corruption_detected() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let exp = write_experiment(dir);
    let local_db = local_sweep_interrupted_and_resumed(dir, &exp);

    start_slurm();
    let slurm_db = dir.join("slurm.db");
    let work = dir.join("work");
    let (e, sdb, w) = (
        exp.to_str().unwrap(),
        slurm_db.to_str().unwrap(),
        work.to_str().unwrap(),
    );
    let out = sassim(
        &[
            "sweep",
            e,
            "--db",
            sdb,
            "--slurm",
            "--wait",
            "--work-dir",
            w,
            "--runs-per-task",
            "8",
            "--time",
            "10",
            "--mem",
            "500M",
        ],
        dir,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("105 runs in 14 tasks"), "{err}");
    assert!(
        err.contains("collected 105 runs (0 failed) from 14 tasks"),
        "{err}"
    );
    let a = dump(&local_db);
    let b = dump(&slurm_db);
    assert_eq!(a["runs"].len(), 105);
    assert!(a["stats"].len() > 105 * 50);
    for t in a.keys() {
        assert_eq!(
            a[t], b[t],
            "table {t} differs between the local and the Slurm sweep"
        );
    }
    let engines: Vec<String> = Db::open(&slurm_db)
        .unwrap()
        .conn
        .prepare("SELECT DISTINCT engine FROM executions")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(engines, ["slurm"]);

    // --status: every task done.
    let out = sassim(&["sweep", e, "--db", sdb, "--status", "--work-dir", w], dir);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("14 tasks (105 runs): 0 pending, 0 running, 14 done, 0 failed"),
        "{s}"
    );

    // Corrupt task 3 (one byte of its payload), delete task 5: collect reports both, merges the
    // other 12 tasks and none of their runs.
    let t3 = work.join("tasks/task-00003.json");
    let mut bytes = std::fs::read(&t3).unwrap();
    let n = bytes.len();
    bytes[n - 40] ^= 0x01;
    std::fs::write(&t3, bytes).unwrap();
    std::fs::remove_file(work.join("tasks/task-00005.json")).unwrap();
    let fresh = dir.join("fresh.db");
    let out = sassim(&["results", "collect", w, "--db", fresh.to_str().unwrap()], dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("task 3") && err.contains("corrupt: checksum mismatch"),
        "{err}"
    );
    assert!(err.contains("task 5") && err.contains("missing"), "{err}");
    assert!(
        err.contains("collected 89 runs (0 failed) from 14 tasks"),
        "{err}"
    );
    assert_eq!(done_runs(&fresh).len(), 105 - 16);
    let out = sassim(&["sweep", e, "--db", sdb, "--status", "--work-dir", w], dir);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("0 pending, 0 running, 12 done, 2 failed"), "{s}");
    assert!(
        s.contains("task 3: failed: corrupt: checksum mismatch") && s.contains("task 5: failed: missing"),
        "{s}"
    );
}

#[test]
fn results_commands_on_a_small_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let exp = dir.join("small.toml");
    std::fs::write(
        &exp,
        r#"name = "small"
baseline = "base"
workloads = ["vecadd", "shfl_reduce"]
[[input]]
name = "vadd-spec"
spec = "SPEC"
[[config]]
name = "base"
[[config]]
name = "nosb"
set = ["frontend.stream_buffer_entries=0"]
[[config]]
name = "gto"
set = ["issue.scheduler=gto"]
"#
        .replace(
            "SPEC",
            root().join("workloads/vecadd/vecadd.toml").to_str().unwrap(),
        ),
    )
    .unwrap();
    let db = dir.join("r.db");
    let dbs = db.to_str().unwrap();
    let out = sassim(&["sweep", exp.to_str().unwrap(), "--db", dbs, "--jobs", "2"], dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = sassim(&["results", "list", "--db", dbs], dir);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.lines()
            .any(|l| l.starts_with("small") && l.contains(" 3      3      9      9      0")),
        "{s}"
    );
    // The launch spec input and the built-in workload of the same kernel give the same cycles.
    let out = sassim(&["results", "show", "small", "--db", dbs], dir);
    let s = String::from_utf8_lossy(&out.stdout);
    let cyc = |input: &str| -> String {
        s.lines()
            .find(|l| l.starts_with("base ") && l.split_whitespace().nth(1) == Some(input))
            .unwrap_or_else(|| panic!("{s}"))
            .split_whitespace()
            .nth(3)
            .unwrap()
            .to_string()
    };
    assert_eq!(cyc("vecadd"), cyc("vadd-spec"));
    // compare: speed-up = base cycles / config cycles, geometric mean; identical configs give 1.
    let out = sassim(
        &[
            "results",
            "compare",
            "small",
            "--db",
            dbs,
            "--against",
            "gto",
            "--svg",
            "c.svg",
        ],
        dir,
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{s}");
    let db_ = Db::open(&db).unwrap();
    let c = sassim_experiment::results::compare(&db_, "small", None, &["nosb".to_string()]).unwrap();
    let rows = sassim_experiment::results::runs(&db_, "small").unwrap();
    let cycles = |cfg: &str, i: &str| {
        rows.iter()
            .find(|r| r.config == cfg && r.input == i)
            .unwrap()
            .cycles
            .unwrap() as f64
    };
    assert_eq!(
        c.speedup[0][0],
        Some(cycles("base", "vecadd") / cycles("nosb", "vecadd"))
    );
    let gm = (c.speedup[0].iter().map(|v| v.unwrap().ln()).sum::<f64>() / 3.0).exp();
    assert!((c.geomean[0].unwrap() - gm).abs() < 1e-12);
    let svg = std::fs::read_to_string(dir.join("c.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("geomean — gto"));
    // Export: CSV lines = 1 header + every stat row; JSON has the 9 runs with reports.
    let out = sassim(
        &["results", "export", "small", "--db", dbs, "--format", "csv"],
        dir,
    );
    let csv = String::from_utf8_lossy(&out.stdout);
    let n: i64 = db_
        .conn
        .query_row("SELECT COUNT(*) FROM stats", [], |r| r.get(0))
        .unwrap();
    assert_eq!(csv.lines().count() as i64, n + 1);
    assert!(csv.contains("small,base,vecadd,"));
    let out = sassim(
        &["results", "export", "small", "--db", dbs, "--format", "json"],
        dir,
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["runs"].as_array().unwrap().len(), 9);
    assert!(j["runs"][0]["report"]["kernels"][0]["cycles"].as_u64().unwrap() > 0);
    // show KEY: every statistic of one run.
    let key = &rows[0].run_key[..10];
    let out = sassim(&["results", "show", key, "--db", dbs], dir);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("stall_breakdown.issued"), "{s}");
    // Unknown experiment and an existing output file are errors.
    let out = sassim(&["results", "compare", "nope", "--db", dbs], dir);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no experiment `nope`"));
    let out = sassim(
        &["results", "compare", "small", "--db", dbs, "--svg", "c.svg"],
        dir,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists; pass --force"));
}
