//! Local execution: the runs not yet in the database run as child processes on a pool of
//! worker threads; the main thread stores each result as it arrives (one transaction per run),
//! so an interrupted sweep keeps everything that finished and a rerun does only the rest.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::db::Db;
use crate::exec::{execute, Outcome, Status};
use crate::plan::{Plan, PlannedRun};
use crate::Result;

/// Options of a local sweep.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Concurrent runs.
    pub jobs: usize,
    /// Also rerun runs stored as failed.
    pub retry_failed: bool,
    /// Draw a progress bar with an ETA (otherwise one line per finished run on stderr).
    pub progress: bool,
    /// Print nothing per run.
    pub quiet: bool,
}

/// What a sweep did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepSummary {
    pub total: usize,
    /// Stored before this sweep and not rerun.
    pub skipped_done: usize,
    pub skipped_failed: usize,
    /// Run now.
    pub ran: usize,
    pub failed_now: usize,
}

/// Runs of `plan` still to do: not stored, or stored as failed with `retry_failed`.
pub fn pending_runs(db: &Db, plan: &Plan, retry_failed: bool) -> Result<(Vec<PlannedRun>, SweepSummary)> {
    let done = db.keys_with_status(Status::Done)?;
    let failed = db.keys_with_status(Status::Failed)?;
    let mut s = SweepSummary {
        total: plan.runs.len(),
        ..Default::default()
    };
    let mut todo = Vec::new();
    for r in &plan.runs {
        if done.contains(&r.key) {
            s.skipped_done += 1;
        } else if failed.contains(&r.key) && !retry_failed {
            s.skipped_failed += 1;
        } else {
            todo.push(r.clone());
        }
    }
    Ok((todo, s))
}

fn label(plan: &Plan, r: &PlannedRun) -> String {
    format!(
        "{} / {}",
        plan.experiment.configs[r.config].label, plan.experiment.inputs[r.input].label
    )
}

/// Executes `runs` with `jobs` workers; `sink` receives every outcome on the calling thread.
pub fn execute_all(
    plan: &Plan,
    runs: &[PlannedRun],
    jobs: usize,
    mut sink: impl FnMut(&PlannedRun, Outcome) -> Result<()>,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Outcome)>();
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..jobs.max(1).min(runs.len().max(1)) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(r) = runs.get(i) else { break };
                if tx.send((i, execute(plan, r))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut result = Ok(());
        for (i, o) in rx {
            if result.is_ok() {
                result = sink(&runs[i], o);
                if result.is_err() {
                    // Stop handing out work; running children finish.
                    next.store(runs.len(), Ordering::Relaxed);
                }
            }
        }
        result
    })
}

/// Runs what is left of `plan` locally and stores the results in `db`.
pub fn run_local(db: &mut Db, plan: &Plan, opts: &LocalOptions) -> Result<SweepSummary> {
    db.record_plan(plan)?;
    let (todo, mut summary) = pending_runs(db, plan, opts.retry_failed)?;
    let bar = if opts.progress && !todo.is_empty() {
        let pb = indicatif::ProgressBar::new(todo.len() as u64);
        let style = indicatif::ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} runs, {elapsed} elapsed, eta {eta} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> ");
        pb.set_style(style);
        pb.set_prefix(plan.experiment.name.clone());
        Some(pb)
    } else {
        None
    };
    let n = todo.len();
    let mut k = 0usize;
    execute_all(plan, &todo, opts.jobs, |r, o| {
        k += 1;
        summary.ran += 1;
        if o.status == Status::Failed {
            summary.failed_now += 1;
        }
        let line = match o.status {
            Status::Done => format!(
                "[{k}/{n}] {}: {} cycles ({:.2} s)",
                label(plan, r),
                o.report
                    .as_ref()
                    .and_then(|v| v.get("total"))
                    .and_then(|t| t.get("cycles"))
                    .and_then(|c| c.as_u64())
                    .unwrap_or(0),
                o.wall_seconds
            ),
            Status::Failed => format!(
                "[{k}/{n}] {}: FAILED: {}",
                label(plan, r),
                o.error.as_deref().unwrap_or("").lines().next().unwrap_or("")
            ),
        };
        db.store(plan, &o, "local")?;
        match &bar {
            Some(pb) => {
                if o.status == Status::Failed {
                    pb.println(&line);
                }
                pb.set_message(format!("{} failed", summary.failed_now));
                pb.inc(1);
            }
            None if !opts.quiet => eprintln!("{line}"),
            None => {}
        }
        Ok(())
    })?;
    if let Some(pb) = bar {
        pb.finish_and_clear();
    }
    Ok(summary)
}
