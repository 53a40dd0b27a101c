//! Slurm as the engine: the runs still to do are grouped into the tasks of one job array; each
//! task runs its runs as child processes and writes one result file of its own, atomically
//! (temporary file, fsync, rename) and with a checksum, so concurrent tasks on a shared file
//! system never write the same file and a torn or altered file is detected. `collect` merges
//! valid task files into the database and reports missing, corrupt and incomplete ones; their
//! runs are never merged silently.
//!
//! Work directory:
//! ```text
//! WORK/plan.json              the plan and the runs of every task
//! WORK/job.sh                 the sbatch script (array job)
//! WORK/job-id                 Slurm's job id
//! WORK/tasks/task-00007.json  results of task 7 ("sassim-task-v1 <sha256> <bytes>" line, then JSON)
//! WORK/logs/task-7.out        the task's standard output and error
//! ```

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::db::Db;
use crate::exec::{Outcome, Status};
use crate::hash::sha256_hex;
use crate::local::{execute_all, pending_runs};
use crate::plan::Plan;
use crate::{Error, Result};

/// First word of a task file.
pub const TASK_MAGIC: &str = "sassim-task-v1";

/// sbatch options.
#[derive(Debug, Clone, Default)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    pub time: Option<String>,
    pub mem: Option<String>,
    /// Runs per array task.
    pub runs_per_task: usize,
    /// CPUs per task (runs of a task execute this many at a time).
    pub cpus_per_task: usize,
    pub retry_failed: bool,
}

/// `plan.json`: the whole plan (for the database) and what each task runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SlurmPlan {
    pub plan_id: String,
    pub plan: Plan,
    /// `tasks[t]` = indices into `plan.runs`.
    pub tasks: Vec<Vec<usize>>,
    pub job_id: Option<String>,
}

/// A task's result file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TaskFile {
    pub plan_id: String,
    pub task: usize,
    /// All the task's runs are in `outcomes`.
    pub complete: bool,
    pub outcomes: Vec<Outcome>,
}

/// What is wrong with a task's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskProblem {
    Missing,
    Corrupt(String),
    /// The file is valid but holds fewer runs than the task had.
    Incomplete {
        have: usize,
        want: usize,
    },
}

impl std::fmt::Display for TaskProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskProblem::Missing => write!(
                f,
                "missing (the task did not write its results, or they were deleted)"
            ),
            TaskProblem::Corrupt(why) => write!(f, "corrupt: {why}"),
            TaskProblem::Incomplete { have, want } => write!(f, "incomplete: {have} of {want} runs"),
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

pub fn task_path(work: &Path, task: usize) -> PathBuf {
    work.join("tasks").join(format!("task-{task:05}.json"))
}

fn plan_path(work: &Path) -> PathBuf {
    work.join("plan.json")
}

/// Writes `bytes` to `path` atomically: a uniquely named temporary file in the same directory,
/// fsync, rename over `path`, fsync of the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        path.file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        crate::exec::hostname(),
        std::process::id()
    ));
    {
        let mut f = std::fs::File::create(&tmp).map_err(io(&tmp))?;
        f.write_all(bytes).map_err(io(&tmp))?;
        f.sync_all().map_err(io(&tmp))?;
    }
    std::fs::rename(&tmp, path).map_err(io(path))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The bytes of a task file: header line with the payload's SHA-256 and length, then the JSON.
pub fn encode_task(t: &TaskFile) -> Vec<u8> {
    let payload = serde_json::to_vec(t).unwrap_or_default();
    let mut out = format!("{TASK_MAGIC} {} {}\n", sha256_hex(&payload), payload.len()).into_bytes();
    out.extend(payload);
    out
}

/// Reads and checks a task file.
pub fn decode_task(bytes: &[u8]) -> std::result::Result<TaskFile, String> {
    let nl = bytes.iter().position(|&b| b == b'\n').ok_or("no header line")?;
    let header = std::str::from_utf8(&bytes[..nl]).map_err(|_| "header is not text")?;
    let parts: Vec<&str> = header.split(' ').collect();
    if parts.len() != 3 || parts[0] != TASK_MAGIC {
        return Err(format!(
            "header `{}` is not `{TASK_MAGIC} <sha256> <bytes>`",
            header.chars().take(80).collect::<String>()
        ));
    }
    let payload = &bytes[nl + 1..];
    let len: usize = parts[2].parse().map_err(|_| "bad length in the header")?;
    if payload.len() != len {
        return Err(format!("{} payload bytes, the header says {len}", payload.len()));
    }
    if sha256_hex(payload) != parts[1] {
        return Err("checksum mismatch".into());
    }
    serde_json::from_slice(payload).map_err(|e| format!("payload: {e}"))
}

fn load_slurm_plan(work: &Path) -> Result<SlurmPlan> {
    let p = plan_path(work);
    let text = std::fs::read(&p).map_err(io(&p))?;
    serde_json::from_slice(&text).map_err(|e| Error::Slurm(format!("{}: {e}", p.display())))
}

fn save_slurm_plan(work: &Path, sp: &SlurmPlan) -> Result<()> {
    write_atomic(&plan_path(work), &serde_json::to_vec(sp).unwrap_or_default())
}

/// Quotes a string for a POSIX shell.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Array tasks of `job` that Slurm still lists, with their state (PENDING, RUNNING, ...).
/// An unknown job (finished and purged) lists nothing.
pub fn queue_states(job: &str) -> Result<Vec<(usize, String)>> {
    let out = Command::new("squeue")
        .args(["-h", "-r", "-j", job, "-o", "%K|%T"])
        .output()
        .map_err(|e| Error::Slurm(format!("cannot run squeue: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("Invalid job id") {
            return Ok(Vec::new());
        }
        return Err(Error::Slurm(format!("squeue failed: {}", err.trim())));
    }
    let mut v = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some((k, st)) = line.trim().split_once('|') {
            if let Ok(k) = k.parse() {
                v.push((k, st.to_string()));
            }
        }
    }
    Ok(v)
}

/// What `submit` did.
#[derive(Debug, Clone)]
pub struct Submitted {
    pub job_id: Option<String>,
    pub tasks: usize,
    pub runs: usize,
    pub skipped_done: usize,
}

/// Submits the runs of `plan` that are not in `db` as a job array. Refuses a work directory
/// whose previous job still has tasks in the queue.
pub fn submit(db: &mut Db, plan: &Plan, work: &Path, opts: &SlurmOptions) -> Result<Submitted> {
    if plan_path(work).is_file() {
        if let Ok(old) = load_slurm_plan(work) {
            if let Some(j) = &old.job_id {
                if !queue_states(j)?.is_empty() {
                    return Err(Error::Slurm(format!(
                        "{}: job {j} still has tasks in the queue; wait for it (sassim sweep --status) or scancel it",
                        work.display()
                    )));
                }
            }
        }
    }
    db.record_plan(plan)?;
    let (todo, summary) = pending_runs(db, plan, opts.retry_failed)?;
    let index: std::collections::HashMap<&str, usize> = plan
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.key.as_str(), i))
        .collect();
    let per = opts.runs_per_task.max(1);
    let tasks: Vec<Vec<usize>> = todo
        .chunks(per)
        .map(|c| c.iter().map(|r| index[r.key.as_str()]).collect())
        .collect();
    // A fresh work directory: old task files belong to an older plan.
    let tdir = work.join("tasks");
    if tdir.is_dir() {
        std::fs::remove_dir_all(&tdir).map_err(io(&tdir))?;
    }
    for d in [work.to_path_buf(), tdir, work.join("logs")] {
        std::fs::create_dir_all(&d).map_err(io(&d))?;
    }
    let mut sp = SlurmPlan {
        plan_id: plan.plan_id(),
        plan: plan.clone(),
        tasks,
        job_id: None,
    };
    save_slurm_plan(work, &sp)?;
    if sp.tasks.is_empty() {
        return Ok(Submitted {
            job_id: None,
            tasks: 0,
            runs: 0,
            skipped_done: summary.skipped_done,
        });
    }
    let work_abs = work.canonicalize().map_err(io(work))?;
    let mut script = String::from("#!/bin/sh\n");
    script.push_str(&format!("#SBATCH --job-name=sassim-{}\n", plan.experiment.name));
    script.push_str(&format!("#SBATCH --array=0-{}\n", sp.tasks.len() - 1));
    script.push_str(&format!(
        "#SBATCH --output={}/logs/task-%a.out\n",
        work_abs.display()
    ));
    script.push_str(&format!(
        "#SBATCH --cpus-per-task={}\n",
        opts.cpus_per_task.max(1)
    ));
    if let Some(p) = &opts.partition {
        script.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    if let Some(t) = &opts.time {
        script.push_str(&format!("#SBATCH --time={t}\n"));
    }
    if let Some(m) = &opts.mem {
        script.push_str(&format!("#SBATCH --mem={m}\n"));
    }
    script.push_str(&format!(
        "exec {} sweep --slurm-task {} --task-id \"$SLURM_ARRAY_TASK_ID\" --jobs {}\n",
        sh_quote(&plan.sassim.display().to_string()),
        sh_quote(&work_abs.display().to_string()),
        opts.cpus_per_task.max(1)
    ));
    let job_sh = work.join("job.sh");
    write_atomic(&job_sh, script.as_bytes())?;
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(&job_sh)
        .output()
        .map_err(|e| Error::Slurm(format!("cannot run sbatch: {e}")))?;
    if !out.status.success() {
        return Err(Error::Slurm(format!(
            "sbatch failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let id = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap_or("")
        .to_string();
    if id.is_empty() {
        return Err(Error::Slurm("sbatch printed no job id".into()));
    }
    std::fs::write(work.join("job-id"), format!("{id}\n")).map_err(io(work))?;
    sp.job_id = Some(id.clone());
    save_slurm_plan(work, &sp)?;
    Ok(Submitted {
        job_id: Some(id),
        tasks: sp.tasks.len(),
        runs: todo.len(),
        skipped_done: summary.skipped_done,
    })
}

/// Body of one array task: runs its runs, rewriting its task file after each one (so a task
/// stopped by its time limit keeps what it finished).
pub fn run_task(work: &Path, task: usize, jobs: usize) -> Result<TaskFile> {
    let sp = load_slurm_plan(work)?;
    let idx = sp.tasks.get(task).ok_or_else(|| {
        Error::Slurm(format!(
            "task {task} is not in {} ({} tasks)",
            work.display(),
            sp.tasks.len()
        ))
    })?;
    let runs: Vec<_> = idx.iter().filter_map(|&i| sp.plan.runs.get(i).cloned()).collect();
    let path = task_path(work, task);
    let mut tf = TaskFile {
        plan_id: sp.plan_id.clone(),
        task,
        complete: runs.is_empty(),
        outcomes: Vec::new(),
    };
    let want = runs.len();
    execute_all(&sp.plan, &runs, jobs, |r, o| {
        eprintln!(
            "task {task}: {} / {}: {}",
            sp.plan.experiment.configs[r.config].label,
            sp.plan.experiment.inputs[r.input].label,
            match o.status {
                Status::Done => "done".to_string(),
                Status::Failed => format!("FAILED: {}", o.error.as_deref().unwrap_or("")),
            }
        );
        tf.outcomes.push(o);
        tf.complete = tf.outcomes.len() == want;
        write_atomic(&path, &encode_task(&tf))
    })?;
    if runs.is_empty() {
        write_atomic(&path, &encode_task(&tf))?;
    }
    Ok(tf)
}

/// Reads task `t` of `sp` and checks it against the plan.
pub fn check_task(work: &Path, sp: &SlurmPlan, t: usize) -> (Option<TaskFile>, Option<TaskProblem>) {
    let p = task_path(work, t);
    let bytes = match std::fs::read(&p) {
        Ok(b) => b,
        Err(_) => return (None, Some(TaskProblem::Missing)),
    };
    let tf = match decode_task(&bytes) {
        Ok(tf) => tf,
        Err(e) => return (None, Some(TaskProblem::Corrupt(e))),
    };
    if tf.plan_id != sp.plan_id || tf.task != t {
        return (
            None,
            Some(TaskProblem::Corrupt(format!(
                "written for plan {} task {}",
                tf.plan_id, tf.task
            ))),
        );
    }
    let want: std::collections::HashSet<&str> = sp.tasks[t]
        .iter()
        .map(|&i| sp.plan.runs[i].key.as_str())
        .collect();
    if let Some(o) = tf.outcomes.iter().find(|o| !want.contains(o.key.as_str())) {
        return (
            None,
            Some(TaskProblem::Corrupt(format!(
                "run {} does not belong to this task",
                o.key
            ))),
        );
    }
    let have: std::collections::HashSet<&str> = tf.outcomes.iter().map(|o| o.key.as_str()).collect();
    if have.len() != tf.outcomes.len() {
        return (None, Some(TaskProblem::Corrupt("a run appears twice".into())));
    }
    if have.len() < want.len() {
        let p = TaskProblem::Incomplete {
            have: have.len(),
            want: want.len(),
        };
        return (Some(tf), Some(p));
    }
    (Some(tf), None)
}

/// What `collect` did.
#[derive(Debug, Clone, Default)]
pub struct CollectReport {
    pub tasks: usize,
    pub merged_runs: usize,
    pub failed_runs: usize,
    pub problems: Vec<(usize, TaskProblem)>,
}

/// Merges every valid task file of `work` into `db` (idempotent). Runs of missing or corrupt
/// task files are not merged; incomplete files merge the runs they hold. Every problem is
/// returned.
pub fn collect(db: &mut Db, work: &Path) -> Result<CollectReport> {
    let sp = load_slurm_plan(work)?;
    db.record_plan(&sp.plan)?;
    let mut rep = CollectReport {
        tasks: sp.tasks.len(),
        ..Default::default()
    };
    for t in 0..sp.tasks.len() {
        let (tf, problem) = check_task(work, &sp, t);
        if let Some(tf) = tf {
            for o in &tf.outcomes {
                db.store(&sp.plan, o, "slurm")?;
                rep.merged_runs += 1;
                if o.status == Status::Failed {
                    rep.failed_runs += 1;
                }
            }
        }
        if let Some(p) = problem {
            rep.problems.push((t, p));
        }
    }
    Ok(rep)
}

/// State of one task for `--status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskState {
    Pending,
    Running,
    Done { failed_runs: usize },
    Failed(String),
}

/// `sassim sweep --status`: per task, from the queue and the task files.
#[derive(Debug, Clone, Default)]
pub struct StatusReport {
    pub job_id: Option<String>,
    pub states: Vec<TaskState>,
    pub runs: usize,
}

impl StatusReport {
    pub fn count(&self) -> (usize, usize, usize, usize) {
        let mut c = (0, 0, 0, 0);
        for s in &self.states {
            match s {
                TaskState::Pending => c.0 += 1,
                TaskState::Running => c.1 += 1,
                TaskState::Done { .. } => c.2 += 1,
                TaskState::Failed(_) => c.3 += 1,
            }
        }
        c
    }

    /// No task is pending or running.
    pub fn finished(&self) -> bool {
        let (p, r, _, _) = self.count();
        p == 0 && r == 0
    }
}

pub fn status(work: &Path) -> Result<StatusReport> {
    let sp = load_slurm_plan(work)?;
    let queued = match &sp.job_id {
        Some(j) => queue_states(j)?,
        None => Vec::new(),
    };
    let mut rep = StatusReport {
        job_id: sp.job_id.clone(),
        runs: sp.tasks.iter().map(Vec::len).sum(),
        ..Default::default()
    };
    for t in 0..sp.tasks.len() {
        let q = queued.iter().find(|(k, _)| *k == t).map(|(_, s)| s.as_str());
        let st = match q {
            Some("PENDING") | Some("CONFIGURING") | Some("REQUEUED") | Some("SUSPENDED") => {
                TaskState::Pending
            }
            Some(_) => TaskState::Running,
            None => match check_task(work, &sp, t) {
                (Some(tf), None) => TaskState::Done {
                    failed_runs: tf.outcomes.iter().filter(|o| o.status == Status::Failed).count(),
                },
                (_, Some(p)) => TaskState::Failed(p.to_string()),
                (None, None) => TaskState::Failed("unreadable".into()),
            },
        };
        rep.states.push(st);
    }
    Ok(rep)
}
