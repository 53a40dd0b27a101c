//! Experiment files, run identities, run isolation, task files, the database.
//! A shell script stands in for `sassim` where a test needs a run that crashes or hangs.

use sassim_experiment::exec::Status;
use sassim_experiment::local::{run_local, LocalOptions};
use sassim_experiment::slurm::{decode_task, encode_task, TaskFile};
use sassim_experiment::{Db, Experiment, Plan};
use std::path::{Path, PathBuf};

fn parse(text: &str, dir: &Path) -> Result<Experiment, String> {
    Experiment::parse(text, &dir.join("exp.toml")).map_err(|e| e.to_string())
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

#[test]
fn configurations_expand_named_and_swept_cartesian_and_zipped() {
    let d = tempfile::tempdir().unwrap();
    let e = parse(
        r#"name = "x"
gpus = ["rtx-a6000", "t4"]
set = ["issue.yield_enabled=true"]
workloads = ["vecadd"]
[[config]]
name = "a"
[[config]]
name = "b"
set = ["regfile.rfc_enabled=false"]
[sweep]
[[sweep.param]]
key = "regfile.read_ports_per_bank"
values = [1, 2]
[[sweep.param]]
key = "issue.scheduler"
values = ["gto", "lrr", "cggty"]
"#,
        d.path(),
    )
    .unwrap();
    assert_eq!(e.configs.len(), 2 * 2 * 2 * 3);
    // Configuration-major: gpu 0, config b (index 1) of 2, last of 6 sweep combinations.
    let c = &e.configs[6 + 5];
    assert_eq!(c.label, "rtx-a6000/b/read_ports_per_bank=2,scheduler=cggty");
    assert_eq!(c.gpu, "rtx-a6000");
    assert_eq!(
        c.overrides,
        [
            "issue.yield_enabled=true",
            "regfile.rfc_enabled=false",
            "regfile.read_ports_per_bank=2",
            "issue.scheduler=cggty"
        ]
    );
    let z = parse(
        r#"name = "z"
workloads = ["vecadd", "saxpy"]
[sweep]
mode = "zip"
[[sweep.param]]
key = "regfile.read_ports_per_bank"
values = [1, 2]
[[sweep.param]]
key = "regfile.rfc_enabled"
values = [true, false]
"#,
        d.path(),
    )
    .unwrap();
    let labels: Vec<_> = z.configs.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "read_ports_per_bank=1,rfc_enabled=true",
            "read_ports_per_bank=2,rfc_enabled=false"
        ]
    );
    assert_eq!(z.run_count(), 4);
}

#[test]
fn bad_experiment_files_are_errors_naming_the_problem() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        ("name = \"x\"\nworkloads = [\"vecadd\"]\ncolour = 1\n", "unknown field `colour`"),
        ("name = \"x\"\n", "no inputs"),
        ("name = \"x\"\nworkloads = [\"nope\"]\n", "unknown built-in workload `nope`"),
        (
            "name = \"x\"\nworkloads = [\"vecadd\"]\n[[config]]\nname = \"a\"\nset = [\"regfile.banks=99\"]\n",
            "configuration `a`",
        ),
        (
            "name = \"x\"\nworkloads = [\"vecadd\"]\n[[config]]\nname = \"a\"\nset = [\"frontend.ib_entriez=3\"]\n",
            "ib_entriez",
        ),
        (
            "name = \"x\"\nworkloads = [\"vecadd\"]\n[sweep]\nmode = \"zip\"\n[[sweep.param]]\nkey = \"a.b\"\nvalues = [1, 2]\n[[sweep.param]]\nkey = \"c.d\"\nvalues = [1]\n",
            "zip sweep",
        ),
        ("name = \"x\"\nworkloads = [\"vecadd\", \"vecadd\"]\n", "two inputs are labelled `vecadd`"),
        ("name = \"bad name\"\nworkloads = [\"vecadd\"]\n", "experiment name"),
        ("name = \"x\"\n[[input]]\nspec = \"missing.toml\"\n", "does not exist"),
        ("name = \"x\"\n[[input]]\nworkload = \"vecadd\"\ntrace = \"t\"\n", "exactly one of"),
        ("name = \"x\"\nworkloads = [\"vecadd\"]\n[run]\ntimeout_seconds = nan\n", "timeout_seconds"),
        ("name = \"x\"\nworkloads = [\"vecadd\"]\nbaseline = \"zz\"\n", "baseline `zz`"),
    ];
    for (text, want) in cases {
        let e = parse(text, d.path()).unwrap_err();
        assert!(e.contains(want), "{text}\n-> {e}");
        assert!(
            e.starts_with(&d.path().join("exp.toml").display().to_string()),
            "{e}"
        );
    }
    // Identical configurations would share their runs.
    let e = parse(
        "name = \"x\"\nworkloads = [\"vecadd\"]\n[[config]]\nname = \"a\"\n[[config]]\nname = \"b\"\nset = []\n",
        d.path(),
    )
    .unwrap();
    let err = Plan::with_version(e, Path::new("/bin/true"), "v".into())
        .unwrap_err()
        .to_string();
    assert!(err.contains("`a` and `b` are the same"), "{err}");
}

/// A spec input is identified by the contents of the files it reads, not their names.
#[test]
fn run_keys_follow_file_contents_configuration_and_version() {
    let d = tempfile::tempdir().unwrap();
    let src = root().join("workloads/saxpy");
    let w = d.path().join("w");
    std::fs::create_dir(&w).unwrap();
    for f in ["saxpy.toml", "saxpy_sm86.cuobjdump-sass.txt", "saxpy.ptxas-v.txt"] {
        std::fs::copy(src.join(f), w.join(f)).unwrap();
    }
    let text = "name = \"k\"\n[[input]]\nspec = \"w/saxpy.toml\"\n";
    let key = |v: &str| {
        let e = parse(text, d.path()).unwrap();
        Plan::with_version(e, Path::new("/bin/true"), v.into())
            .unwrap()
            .runs[0]
            .key
            .clone()
    };
    let k0 = key("v1");
    assert_eq!(key("v1"), k0, "deterministic");
    assert_ne!(key("v2"), k0, "simulator version");
    // Touching a file without changing it keeps the key; changing one byte of the listing does not.
    let l = w.join("saxpy_sm86.cuobjdump-sass.txt");
    let orig = std::fs::read(&l).unwrap();
    std::fs::write(&l, &orig).unwrap();
    assert_eq!(key("v1"), k0);
    let mut changed = orig.clone();
    let i = changed.iter().position(|&b| b == b'F').unwrap();
    changed[i] = b'G';
    std::fs::write(&l, &changed).unwrap();
    assert_ne!(key("v1"), k0, "listing contents");
    std::fs::write(&l, &orig).unwrap();
    assert_eq!(key("v1"), k0);
    // Moving the whole directory keeps the key (names relative to the spec).
    std::fs::rename(&w, d.path().join("moved")).unwrap();
    let e = parse("name = \"k\"\n[[input]]\nspec = \"moved/saxpy.toml\"\n", d.path()).unwrap();
    assert_eq!(
        Plan::with_version(e, Path::new("/bin/true"), "v1".into())
            .unwrap()
            .runs[0]
            .key,
        k0
    );
    // A configuration change changes the key.
    let e = parse(
        "name = \"k\"\nset = [\"issue.scheduler=gto\"]\n[[input]]\nspec = \"moved/saxpy.toml\"\n",
        d.path(),
    )
    .unwrap();
    assert_ne!(
        Plan::with_version(e, Path::new("/bin/true"), "v1".into())
            .unwrap()
            .runs[0]
            .key,
        k0
    );
}

#[test]
fn command_lines_of_every_input_kind() {
    let d = tempfile::tempdir().unwrap();
    let prog = d.path().join("app");
    std::fs::write(&prog, "x").unwrap();
    let data = d.path().join("in.dat");
    std::fs::write(&data, "1").unwrap();
    let traces = root().join("fixtures/traces/vectoradd-sm80-v5");
    let text = format!(
        "name = \"k\"\nset = [\"issue.scheduler=gto\"]\nworkloads = [\"vecadd\"]\n[run]\nmax_cycles = 5000\ncf = \"simt\"\n\
         [[input]]\ntrace = \"{}\"\n[[input]]\nprogram = {{ path = \"app\", args = [\"-n\", \"in.dat\"] }}\n",
        traces.display()
    );
    let e = parse(&text, d.path()).unwrap();
    let p = Plan::with_version(e, Path::new("/x/sassim"), "v".into()).unwrap();
    let cmd = |i: usize| -> Vec<String> {
        p.command(&p.runs[i], Path::new("/t/s.json"))
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect()
    };
    let common = [
        "--gpu",
        "rtx-a6000",
        "--set",
        "issue.scheduler=gto",
        "--json",
        "/t/s.json",
    ];
    let opts = ["--force", "--jobs", "1", "--max-cycles", "5000", "--cf", "simt"];
    let want: Vec<String> = ["run", "vecadd"]
        .iter()
        .chain(&common)
        .chain(&opts)
        .map(|s| s.to_string())
        .collect();
    assert_eq!(cmd(0), want);
    let t = cmd(1);
    assert_eq!(
        &t[..3],
        [
            "run",
            "--trace",
            &traces.join("kernelslist.g").display().to_string()
        ]
    );
    // `sassim exec -- PROGRAM ARGS` with the same --gpu/--set/--json options.
    let x = cmd(2);
    let mut want: Vec<String> = ["exec"].iter().chain(&common).map(|s| s.to_string()).collect();
    want.extend([
        "--force".into(),
        "--".into(),
        prog.canonicalize().unwrap().display().to_string(),
        "-n".into(),
        "in.dat".into(),
    ]);
    assert_eq!(x, want);
    // The program's identity covers the executable and the files its arguments name.
    let id0 = p.input_ids[2].clone();
    std::fs::write(&data, "2").unwrap();
    let e = parse(&text, d.path()).unwrap();
    let p2 = Plan::with_version(e, Path::new("/x/sassim"), "v".into()).unwrap();
    assert_ne!(p2.input_ids[2], id0);
    assert_eq!(p2.input_ids[0], p.input_ids[0]);
}

/// A fake `sassim`: writes a statistics file for `vecadd`, crashes (SIGSEGV) for `saxpy`, exits 2
/// with a message for `reduce`, hangs for `spinlock`, and reports an output mismatch for `matmul`.
fn fake_sassim(dir: &Path) -> PathBuf {
    let p = dir.join("fake-sassim");
    let script = r#"#!/bin/sh
w=$2
json=""
prev=""
for a in "$@"; do
  if [ "$prev" = "--json" ]; then json=$a; fi
  prev=$a
done
case "$w" in
  vecadd) printf '{"gpu":"g","sim_version":"0","config":{"issue":{"scheduler":"cggty"}},"kernels":[{"name":"vecadd","cycles":100,"warp_insts":10,"ipc":3.2,"mode":"m","stall_breakdown":{"issued":10}}],"total":{"cycles":100,"warp_insts":10,"ipc":3.2},"warnings":[]}' > "$json" ;;
  saxpy) kill -SEGV $$ ;;
  reduce) echo "error: reduce: something broke" >&2; exit 2 ;;
  spinlock) sleep 30 ;;
  matmul) printf '{"kernels":[],"total":{"cycles":5}}' > "$json"; echo "error: matmul: output mismatch: C[3]" >&2; exit 1 ;;
esac
"#;
    std::fs::write(&p, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn a_crashing_run_is_recorded_and_the_others_go_on() {
    let d = tempfile::tempdir().unwrap();
    let e = parse(
        "name = \"iso\"\nworkloads = [\"vecadd\", \"saxpy\", \"reduce\", \"spinlock\", \"matmul\"]\n[run]\ntimeout_seconds = 1.5\n",
        d.path(),
    )
    .unwrap();
    let plan = Plan::with_version(e, &fake_sassim(d.path()), "v".into()).unwrap();
    let mut db = Db::open(&d.path().join("r.db")).unwrap();
    let opts = LocalOptions {
        jobs: 2,
        retry_failed: false,
        progress: false,
        quiet: true,
    };
    let s = run_local(&mut db, &plan, &opts).unwrap();
    assert_eq!((s.ran, s.failed_now), (5, 4));
    let rows = sassim_experiment::results::runs(&db, "iso").unwrap();
    let get = |i: &str| rows.iter().find(|r| r.input == i).unwrap();
    assert_eq!(get("vecadd").status, "done");
    assert_eq!(get("vecadd").cycles, Some(100));
    let err = |i: &str| get(i).error.clone().unwrap_or_default();
    assert_eq!(get("saxpy").status, "failed");
    assert_eq!(err("saxpy"), "killed by signal 11");
    assert_eq!(err("reduce"), "exit code 2: error: reduce: something broke");
    assert!(
        err("spinlock").starts_with("timed out after 1.5 s"),
        "{}",
        err("spinlock")
    );
    assert_eq!(
        err("matmul"),
        "output mismatch: error: matmul: output mismatch: C[3]"
    );
    // The stored statistics and the resolved configuration are queryable.
    let v: i64 = db
        .conn
        .query_row(
            "SELECT value FROM stats WHERE kernel = 1 AND name = 'stall_breakdown.issued'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(v, 10);
    let sched: String = db
        .conn
        .query_row(
            "SELECT value FROM config_values WHERE key = 'issue.scheduler'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sched, "cggty");
    // Rerun: nothing to do; with retry_failed the four failed runs run again.
    let s = run_local(&mut db, &plan, &opts).unwrap();
    assert_eq!((s.skipped_done, s.skipped_failed, s.ran), (1, 4, 0));
    let s = run_local(
        &mut db,
        &plan,
        &LocalOptions {
            retry_failed: true,
            ..opts
        },
    )
    .unwrap();
    assert_eq!((s.skipped_done, s.ran, s.failed_now), (1, 4, 4));
    assert_eq!(db.keys_with_status(Status::Failed).unwrap().len(), 4);
}

#[test]
fn task_files_detect_any_change() {
    let tf = TaskFile {
        plan_id: "p".into(),
        task: 3,
        complete: true,
        outcomes: Vec::new(),
    };
    let bytes = encode_task(&tf);
    assert!(bytes.starts_with(b"sassim-task-v1 "));
    assert_eq!(decode_task(&bytes).unwrap(), tf);
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x20;
        assert!(decode_task(&b).is_err(), "flipping byte {i} went unnoticed");
    }
    assert!(decode_task(&bytes[..bytes.len() - 1])
        .unwrap_err()
        .contains("payload bytes"));
    assert!(decode_task(b"").is_err());
}
