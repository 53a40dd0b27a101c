//! `sassim sweep` and `sassim results` (crate `sassim-experiment`; docs/experiments.md).

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use sassim_experiment::slurm::{self, SlurmOptions, TaskState};
use sassim_experiment::{local, results, Db, Experiment, Plan};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct SweepArgs {
    /// Experiment file (docs/experiments.md).
    #[arg(required_unless_present = "slurm_task")]
    pub experiment: Option<PathBuf>,
    /// Results database (SQLite; created if missing).
    #[arg(long, default_value = "sassim-results.db")]
    pub db: PathBuf,
    /// Concurrent runs (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Also rerun runs stored as failed (finished runs are always skipped).
    #[arg(long)]
    pub retry_failed: bool,
    /// Print the plan (configurations, inputs, runs to do) and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Submit the runs as a Slurm job array instead of running them here.
    #[arg(long)]
    pub slurm: bool,
    /// Slurm partition.
    #[arg(long, requires = "slurm")]
    pub partition: Option<String>,
    /// Slurm time limit per task (sbatch --time).
    #[arg(long, requires = "slurm")]
    pub time: Option<String>,
    /// Slurm memory per task (sbatch --mem).
    #[arg(long, requires = "slurm")]
    pub mem: Option<String>,
    /// Runs per array task.
    #[arg(long, default_value_t = 10)]
    pub runs_per_task: usize,
    /// Slurm work directory (plan, task results, logs; on a file system the nodes share).
    /// Default: <db>.slurm/<experiment name>.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// With --slurm: wait for the job, then collect its results into the database.
    #[arg(long)]
    pub wait: bool,
    /// Report the Slurm job's tasks: pending, running, done, failed.
    #[arg(long)]
    pub status: bool,
    /// Internal: run array task --task-id of the work directory given (from job.sh).
    #[arg(long, hide = true, value_name = "WORK_DIR")]
    pub slurm_task: Option<PathBuf>,
    #[arg(long, hide = true)]
    pub task_id: Option<usize>,
}

fn sassim_exe() -> Result<PathBuf> {
    let p = std::env::current_exe().context("locating the sassim executable")?;
    Ok(p.canonicalize().unwrap_or(p))
}

fn work_dir(a: &SweepArgs, name: &str) -> PathBuf {
    a.work_dir.clone().unwrap_or_else(|| {
        let mut s = a.db.clone().into_os_string();
        s.push(".slurm");
        PathBuf::from(s).join(name)
    })
}

fn jobs(j: Option<usize>) -> usize {
    j.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

pub fn sweep(a: SweepArgs) -> Result<ExitCode> {
    if let Some(work) = &a.slurm_task {
        let task = a.task_id.ok_or_else(|| anyhow!("--slurm-task needs --task-id"))?;
        let tf = slurm::run_task(work, task, jobs(a.jobs.or(Some(1))))?;
        let failed = tf
            .outcomes
            .iter()
            .filter(|o| o.status == sassim_experiment::exec::Status::Failed)
            .count();
        eprintln!("task {task}: {} runs, {failed} failed", tf.outcomes.len());
        return Ok(ExitCode::SUCCESS);
    }
    let file = a
        .experiment
        .as_ref()
        .ok_or_else(|| anyhow!("give an experiment file"))?;
    let exp = Experiment::load(file)?;
    if a.status {
        return status(&work_dir(&a, &exp.name));
    }
    let plan = Plan::new(exp, &sassim_exe()?)?;
    let mut db = Db::open(&a.db)?;
    if a.dry_run {
        let (todo, s) = local::pending_runs(&db, &plan, a.retry_failed)?;
        println!(
            "{}: {} configurations x {} inputs = {} runs; {} done, {} failed earlier, {} to run (simulator {})",
            plan.experiment.name,
            plan.experiment.configs.len(),
            plan.experiment.inputs.len(),
            s.total,
            s.skipped_done,
            s.skipped_failed,
            todo.len(),
            plan.sim_version
        );
        for c in &plan.experiment.configs {
            println!(
                "  config {}: --gpu {} {}",
                c.label,
                c.gpu,
                c.overrides
                    .iter()
                    .map(|o| format!("--set {o}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        for i in &plan.experiment.inputs {
            println!(
                "  input {} ({}): {}",
                i.label,
                i.kind.kind_name(),
                i.kind.location()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    if a.slurm {
        let work = work_dir(&a, &plan.experiment.name);
        let opts = SlurmOptions {
            partition: a.partition.clone(),
            time: a.time.clone(),
            mem: a.mem.clone(),
            runs_per_task: a.runs_per_task,
            cpus_per_task: 1,
            retry_failed: a.retry_failed,
        };
        let s = slurm::submit(&mut db, &plan, &work, &opts)?;
        match &s.job_id {
            Some(j) => eprintln!(
                "{}: submitted job {j}: {} runs in {} tasks ({} done earlier); work directory {}",
                plan.experiment.name,
                s.runs,
                s.tasks,
                s.skipped_done,
                work.display()
            ),
            None => {
                eprintln!(
                    "{}: nothing to run ({} runs done)",
                    plan.experiment.name, s.skipped_done
                );
                return Ok(ExitCode::SUCCESS);
            }
        }
        if !a.wait {
            eprintln!(
                "follow it with `sassim sweep {} --status`, then `sassim results collect {} --db {}`",
                file.display(),
                work.display(),
                a.db.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        loop {
            let st = slurm::status(&work)?;
            if st.finished() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_secs(2));
        }
        return collect_into(&mut db, &work);
    }
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let opts = local::LocalOptions {
        jobs: jobs(a.jobs),
        retry_failed: a.retry_failed,
        progress: tty,
        quiet: false,
    };
    let s = local::run_local(&mut db, &plan, &opts)?;
    eprintln!(
        "{}: {} runs: {} done earlier (skipped), {} failed earlier (skipped), {} run now ({} failed)",
        plan.experiment.name, s.total, s.skipped_done, s.skipped_failed, s.ran, s.failed_now
    );
    Ok(if s.failed_now > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn status(work: &Path) -> Result<ExitCode> {
    let st = slurm::status(work).with_context(|| format!("no Slurm submission in {}", work.display()))?;
    let (p, r, d, f) = st.count();
    println!(
        "job {}: {} tasks ({} runs): {p} pending, {r} running, {d} done, {f} failed",
        st.job_id.as_deref().unwrap_or("-"),
        st.states.len(),
        st.runs
    );
    for (t, s) in st.states.iter().enumerate() {
        match s {
            TaskState::Failed(why) => println!("  task {t}: failed: {why}"),
            TaskState::Done { failed_runs } if *failed_runs > 0 => {
                println!("  task {t}: done, {failed_runs} runs failed")
            }
            _ => {}
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn collect_into(db: &mut Db, work: &Path) -> Result<ExitCode> {
    let rep = slurm::collect(db, work)?;
    eprintln!(
        "collected {} runs ({} failed) from {} tasks of {}",
        rep.merged_runs,
        rep.failed_runs,
        rep.tasks,
        work.display()
    );
    for (t, p) in &rep.problems {
        eprintln!("error: task {t} ({}): {p}", slurm::task_path(work, *t).display());
    }
    Ok(if rep.problems.is_empty() && rep.failed_runs == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[derive(Subcommand)]
pub enum ResultsCmd {
    /// List the experiments in the database with their run counts.
    List(DbArg),
    /// Runs of an experiment (cycles, IPC, status), or every statistic of one run (by key).
    Show {
        /// Experiment name, or a run key (prefix of 4+ hex digits).
        what: String,
        #[command(flatten)]
        db: DbArg,
    },
    /// Export an experiment's results: CSV (one line per statistic) or JSON (full reports).
    Export {
        experiment: String,
        #[arg(long, default_value = "csv")]
        format: String,
        /// Output file (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Per-input speed-up of configurations over a base configuration, with the geometric mean.
    Compare {
        experiment: String,
        /// Base configuration (default: the experiment's `baseline`, else its first).
        #[arg(long)]
        base: Option<String>,
        /// Configurations to compare (repeatable; default: all others).
        #[arg(long)]
        against: Vec<String>,
        /// Print a Markdown table instead of plain text.
        #[arg(long)]
        markdown: bool,
        /// Write a grouped bar chart (SVG) here.
        #[arg(long)]
        svg: Option<PathBuf>,
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Merge the task results of a Slurm work directory into the database; missing or corrupt
    /// task outputs are reported (exit code 1) and never merged.
    Collect {
        work_dir: PathBuf,
        #[command(flatten)]
        db: DbArg,
    },
    /// The dependence-management area model (MICRO'25 Table 7) for every preset, as Markdown.
    Area,
}

#[derive(Args)]
pub struct DbArg {
    /// Results database.
    #[arg(long, default_value = "sassim-results.db")]
    pub db: PathBuf,
}

fn open_existing(p: &Path) -> Result<Db> {
    if !p.is_file() {
        bail!(
            "{}: no such results database (run `sassim sweep` first, or give --db)",
            p.display()
        );
    }
    Ok(Db::open(p)?)
}

fn write_out(p: &Path, text: &str, force: bool) -> Result<()> {
    if p.exists() && !force {
        bail!("{} exists; pass --force to overwrite it", p.display());
    }
    std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map_or("-".to_string(), |x| x.to_string())
}

pub fn results(c: ResultsCmd) -> Result<ExitCode> {
    match c {
        ResultsCmd::List(d) => {
            let db = open_existing(&d.db)?;
            println!(
                "{:<24} {:>7} {:>6} {:>6} {:>6} {:>6}  description",
                "experiment", "configs", "inputs", "runs", "done", "failed"
            );
            for e in results::list(&db)? {
                println!(
                    "{:<24} {:>7} {:>6} {:>6} {:>6} {:>6}  {}",
                    e.name, e.configs, e.inputs, e.runs, e.done, e.failed, e.description
                );
            }
        }
        ResultsCmd::Show { what, db } => {
            let db = open_existing(&db.db)?;
            let is_key = what.len() >= 4 && what.chars().all(|c| c.is_ascii_hexdigit());
            let exists = results::list(&db)?.iter().any(|e| e.name == what);
            if is_key && !exists {
                let (key, stats) = results::run_stats(&db, &what)?;
                println!("run {key}");
                for (k, kname, name, v) in stats {
                    println!("{k:>3} {kname:<16} {name:<48} {v}");
                }
            } else {
                println!(
                    "{:<28} {:<16} {:>7} {:>12} {:>10} {:>10}  key",
                    "config", "input", "status", "cycles", "warp insts", "IPC"
                );
                for r in results::runs(&db, &what)? {
                    println!(
                        "{:<28} {:<16} {:>7} {:>12} {:>10} {:>10}  {}",
                        r.config,
                        r.input,
                        r.status,
                        opt(&r.cycles),
                        opt(&r.warp_insts),
                        r.ipc.map_or("-".into(), |x| format!("{x:.3}")),
                        &r.run_key[..12.min(r.run_key.len())]
                    );
                    if let Some(e) = &r.error {
                        println!("    error: {}", e.lines().next().unwrap_or(""));
                    }
                }
            }
        }
        ResultsCmd::Export {
            experiment,
            format,
            output,
            force,
            db,
        } => {
            let db = open_existing(&db.db)?;
            let text = match format.as_str() {
                "csv" => {
                    let mut v = Vec::new();
                    results::export_csv(&db, &experiment, &mut v)?;
                    String::from_utf8_lossy(&v).into_owned()
                }
                "json" => serde_json::to_string_pretty(&results::export_json(&db, &experiment)?)? + "\n",
                f => bail!("unknown format `{f}`: use csv or json"),
            };
            match output {
                Some(p) => write_out(&p, &text, force)?,
                None => {
                    // A closed pipe (`| head`) ends the output quietly.
                    use std::io::Write;
                    let _ = std::io::stdout().lock().write_all(text.as_bytes());
                }
            }
        }
        ResultsCmd::Compare {
            experiment,
            base,
            against,
            markdown,
            svg,
            force,
            db,
        } => {
            let db = open_existing(&db.db)?;
            let c = results::compare(&db, &experiment, base.as_deref(), &against)?;
            print!("{}", if markdown { c.markdown() } else { c.table() });
            if let Some(p) = svg {
                write_out(&p, &c.svg(), force)?;
            }
        }
        ResultsCmd::Collect { work_dir, db } => {
            let mut db = Db::open(&db.db)?;
            return collect_into(&mut db, &work_dir);
        }
        ResultsCmd::Area => print!("{}", sassim_experiment::area::markdown_table()),
    }
    Ok(ExitCode::SUCCESS)
}
