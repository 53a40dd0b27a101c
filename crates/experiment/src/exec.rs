//! Executing one run: a child `sassim` process writes its statistics to a JSON file. A crash,
//! a non-zero exit, a timeout or unreadable JSON is recorded as a failed run with the reason
//! and the end of the child's standard error; the sweep goes on.

use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::plan::{Plan, PlannedRun};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Done,
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Failed => "failed",
        }
    }
}

/// The result of one run, as stored in the database and in Slurm task files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub key: String,
    pub status: Status,
    /// Why it failed (with the end of the child's standard error).
    pub error: Option<String>,
    /// Exit code of the child (None when killed by a signal or not started).
    pub exit_code: Option<i32>,
    /// The `--json` statistics (also kept for a run whose outputs mismatched).
    pub report: Option<serde_json::Value>,
    /// Host facts: not part of the results proper.
    pub wall_seconds: f64,
    pub host: String,
}

/// Most bytes of a child's standard error kept in an error message.
const STDERR_TAIL: usize = 2000;

fn tail(path: &Path) -> String {
    let b = std::fs::read(path).unwrap_or_default();
    let start = b.len().saturating_sub(STDERR_TAIL);
    let mut s = String::from_utf8_lossy(&b[start..]).trim().to_string();
    if start > 0 {
        s.insert_str(0, "...");
    }
    s
}

/// This machine's name (for the executions table).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

/// Runs `run` of `plan` as a child process in a fresh temporary directory.
pub fn execute(plan: &Plan, run: &PlannedRun) -> Outcome {
    let t0 = Instant::now();
    let mut out = Outcome {
        key: run.key.clone(),
        status: Status::Failed,
        error: None,
        exit_code: None,
        report: None,
        wall_seconds: 0.0,
        host: hostname(),
    };
    let dir = match tempfile::Builder::new().prefix("sassim-run-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            out.error = Some(format!("cannot create a temporary directory: {e}"));
            return out;
        }
    };
    let json = dir.path().join("stats.json");
    let (so, se) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let files = (std::fs::File::create(&so), std::fs::File::create(&se));
    let (Ok(fo), Ok(fe)) = files else {
        out.error = Some("cannot create the output files in the temporary directory".into());
        return out;
    };
    let mut cmd = Command::new(&plan.sassim);
    cmd.args(plan.command(run, &json))
        .stdin(Stdio::null())
        .stdout(fo)
        .stderr(fe)
        .current_dir(dir.path());
    if matches!(
        plan.experiment.inputs[run.input].kind,
        crate::spec::InputKind::Program { .. }
    ) {
        // A program's relative arguments name files beside the experiment file.
        if let Some(d) = plan.experiment.file.parent() {
            cmd.current_dir(d);
        }
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(format!("cannot start {}: {e}", plan.sassim.display()));
            return out;
        }
    };
    let timeout = plan.experiment.run.timeout_seconds;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) => {}
            Err(e) => break Err(format!("waiting for the run: {e}")),
        }
        if timeout > 0.0 && t0.elapsed().as_secs_f64() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break Err(format!("timed out after {timeout} s"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    out.wall_seconds = t0.elapsed().as_secs_f64();
    let stderr = tail(&se);
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            out.error = Some(if stderr.is_empty() {
                e
            } else {
                format!("{e}; stderr: {stderr}")
            });
            return out;
        }
    };
    out.exit_code = status.code();
    let report = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .filter(|v| v.get("kernels").is_some_and(|k| k.is_array()));
    let why = match (status.code(), &report) {
        (Some(0), Some(_)) => None,
        (Some(0), None) => Some("the run wrote no readable statistics".to_string()),
        (Some(1), Some(_)) => Some("output mismatch".to_string()),
        (Some(c), _) => Some(format!("exit code {c}")),
        (None, _) => Some(signal_text(&status)),
    };
    out.report = report;
    match why {
        None => out.status = Status::Done,
        Some(w) => {
            out.error = Some(if stderr.is_empty() {
                w
            } else {
                format!("{w}: {stderr}")
            });
        }
    }
    out
}

#[cfg(unix)]
fn signal_text(s: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match s.signal() {
        Some(sig) => format!("killed by signal {sig}"),
        None => "ended without an exit code".into(),
    }
}

#[cfg(not(unix))]
fn signal_text(_: &std::process::ExitStatus) -> String {
    "ended without an exit code".into()
}
