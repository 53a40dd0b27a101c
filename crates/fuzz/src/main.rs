//! `sassim-fuzz`: the fuzzing driver (docs/reliability.md).
//!
//! * `sassim-fuzz parse`: in-process fuzzing of the parsers and validators. A supervisor
//!   runs a worker process per input kind; the worker announces each input index before
//!   running it, so when it panics, aborts (allocation beyond `--mem-mb` included) or stops
//!   answering for `--hang-ms`, the supervisor rebuilds that input from (seed, index),
//!   saves it and starts a new worker after it.
//! * `sassim-fuzz sim`: whole simulator runs of the `sassim` binary on mutated inputs, each
//!   bounded in time (`--timeout`) and measured for peak RSS (`--rss-mb`).
//! * `sassim-fuzz replay`: one saved input through the parser of its kind.
//!
//! Every finding is written to `--save DIR/<kind>/`; copy it to
//! `crates/fuzz/regressions/<kind>/` (parser findings) or `crates/cli/tests/fuzz-regressions/
//! <kind>/` (simulator findings) so that the test suite replays it forever.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use sassim_fuzz::{Corpus, Kind};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The system allocator with a cap on live bytes: beyond it an allocation fails, which
/// aborts the worker like an out-of-memory would, but before the machine suffers.
struct Capped;

static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
static USED: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if USED.fetch_add(l.size(), Ordering::Relaxed) + l.size() > LIMIT.load(Ordering::Relaxed) {
            USED.fetch_sub(l.size(), Ordering::Relaxed);
            return std::ptr::null_mut();
        }
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        USED.fetch_sub(l.size(), Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if new > l.size() {
            let more = new - l.size();
            if USED.fetch_add(more, Ordering::Relaxed) + more > LIMIT.load(Ordering::Relaxed) {
                USED.fetch_sub(more, Ordering::Relaxed);
                return std::ptr::null_mut();
            }
        } else {
            USED.fetch_sub(l.size() - new, Ordering::Relaxed);
        }
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static ALLOC: Capped = Capped;

#[derive(Parser)]
#[command(
    name = "sassim-fuzz",
    about = "Structure-aware fuzzing of sassim's inputs (docs/reliability.md)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args, Clone)]
struct Budget {
    /// Input kinds (listing, microbench, spec, preset, set, trace-text, trace-compressed,
    /// trace-binary, kernelslist, correlate, cubin) or `all`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    kind: Vec<String>,
    /// Inputs per kind.
    #[arg(long, default_value_t = 10_000)]
    runs: u64,
    /// Time budget per kind in seconds (0: none); whichever of runs and seconds ends first.
    #[arg(long, default_value_t = 0)]
    seconds: u64,
    /// Seed of the run (inputs are a function of seed and index).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Directory for findings.
    #[arg(long, default_value = "fuzz-findings")]
    save: PathBuf,
}

#[derive(Subcommand)]
enum Cmd {
    /// In-process fuzzing of parsers and validators, supervised.
    Parse {
        #[command(flatten)]
        b: Budget,
        /// An input that runs longer than this is a finding (ms).
        #[arg(long, default_value_t = 2_000)]
        slow_ms: u64,
        /// A worker silent for this long is hung (ms).
        #[arg(long, default_value_t = 10_000)]
        hang_ms: u64,
        /// Live-memory cap of the worker (MiB).
        #[arg(long, default_value_t = 1024)]
        mem_mb: usize,
    },
    /// Whole simulator runs of the sassim binary.
    Sim {
        #[command(flatten)]
        b: Budget,
        /// The sassim binary.
        #[arg(long, default_value = "target/release/sassim")]
        sassim: PathBuf,
        /// A run longer than this (seconds) is a hang; runs get `--max-wall` one second less.
        #[arg(long, default_value_t = 10)]
        timeout: u64,
        /// Peak RSS above this (MiB) is a finding.
        #[arg(long, default_value_t = 1024)]
        rss_mb: u64,
        /// Runs at once.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Run only these input indices of the seed's sequence (e.g. to rerun findings).
        #[arg(long, value_delimiter = ',')]
        index: Vec<u64>,
    },
    /// Run one saved input through the parser of its kind.
    Replay {
        #[arg(long)]
        kind: String,
        file: PathBuf,
    },
    /// (internal) The worker of `parse`.
    #[command(hide = true)]
    Worker {
        #[arg(long)]
        kind: String,
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        start: u64,
        #[arg(long)]
        end: u64,
        #[arg(long)]
        deadline_ms: u64,
        #[arg(long)]
        slow_ms: u64,
        #[arg(long)]
        mem_mb: usize,
        #[arg(long)]
        scratch: PathBuf,
    },
}

fn kinds(names: &[String]) -> Result<Vec<Kind>> {
    if names.iter().any(|n| n == "all") {
        return Ok(Kind::ALL.to_vec());
    }
    names
        .iter()
        .map(|n| Kind::from_name(n).ok_or_else(|| anyhow!("unknown kind `{n}`")))
        .collect()
}

fn scratch_dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("sassim-fuzz-{}-{tag}", std::process::id()))
}

/// Save a finding: the input and a note of what happened.
fn save(
    dir: &Path,
    kind: Kind,
    class: &str,
    seed: u64,
    index: u64,
    input: &[u8],
    note: &str,
) -> Result<PathBuf> {
    let d = dir.join(kind.name());
    std::fs::create_dir_all(&d)?;
    let p = d.join(format!("{class}-s{seed}-i{index}.{}", kind.ext()));
    std::fs::write(&p, input)?;
    std::fs::write(p.with_extension(format!("{}.note", kind.ext())), note)?;
    Ok(p)
}

#[derive(Default)]
struct Tally {
    runs: u64,
    clean_errors: u64,
    findings: Vec<String>,
    seconds: f64,
    peak_rss_mb: u64,
    slowest_ms: u64,
}

fn print_table(mode: &str, rows: &[(Kind, Tally)]) {
    println!("{mode}: kind, runs, seconds, accepted, rejected with an error, findings, slowest (ms), peak RSS (MiB)");
    for (k, t) in rows {
        println!(
            "{:<17} {:>9} {:>8.1} {:>9} {:>9} {:>3} {:>6} {:>5}",
            k.name(),
            t.runs,
            t.seconds,
            t.runs - t.clean_errors,
            t.clean_errors,
            t.findings.len(),
            t.slowest_ms,
            t.peak_rss_mb
        );
        for f in &t.findings {
            println!("    {f}");
        }
    }
}

fn parse_mode(b: &Budget, slow_ms: u64, hang_ms: u64, mem_mb: usize) -> Result<bool> {
    let exe = std::env::current_exe()?;
    let root = sassim_fuzz::repo_root();
    let mut rows = Vec::new();
    for kind in kinds(&b.kind)? {
        let mut t = Tally::default();
        if !kind.available() {
            println!("{}: skipped (needs the sassim-cubin crate)", kind.name());
            continue;
        }
        let t0 = Instant::now();
        let deadline = (b.seconds > 0).then(|| t0 + Duration::from_secs(b.seconds));
        let scratch = scratch_dir(kind.name());
        sassim_fuzz::prepare_scratch(kind, &root, &scratch)?;
        let corpus = Corpus::load(kind, &root, &scratch)?;
        let mut start = 0u64;
        while start < b.runs && deadline.is_none_or(|d| Instant::now() < d) {
            let left_ms = deadline.map_or(u64::MAX / 2, |d| {
                d.saturating_duration_since(Instant::now()).as_millis() as u64
            });
            let mut child = Command::new(&exe)
                .env("RUST_BACKTRACE", "0")
                .args(["worker", "--kind", kind.name()])
                .args(["--seed", &b.seed.to_string(), "--start", &start.to_string()])
                .args([
                    "--end",
                    &b.runs.to_string(),
                    "--deadline-ms",
                    &left_ms.to_string(),
                ])
                .args(["--slow-ms", &slow_ms.to_string(), "--mem-mb", &mem_mb.to_string()])
                .arg("--scratch")
                .arg(&scratch)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()?;
            let out = child.stdout.take().context("worker stdout")?;
            let err = child.stderr.take().context("worker stderr")?;
            let err_thread = std::thread::spawn(move || {
                let mut s = String::new();
                let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(err), &mut s);
                s
            });
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(l).is_err() {
                        break;
                    }
                }
            });
            let mut current: Option<u64> = None;
            let mut finished = false;
            loop {
                match rx.recv_timeout(Duration::from_millis(hang_ms)) {
                    Ok(l) => {
                        let mut it = l.splitn(3, ' ');
                        let (tag, i) = (it.next().unwrap_or(""), it.next().and_then(|x| x.parse().ok()));
                        let rest = it.next().unwrap_or("");
                        match (tag, i) {
                            ("S", Some(i)) => current = Some(i),
                            ("R", Some(_)) => {
                                t.runs += 1;
                                if rest.starts_with('1') {
                                    t.clean_errors += 1;
                                }
                                let ms: u64 = rest.get(2..).and_then(|m| m.parse().ok()).unwrap_or(0);
                                t.slowest_ms = t.slowest_ms.max(ms);
                                current = None;
                            }
                            ("P", Some(i)) | ("T", Some(i)) => {
                                let class = if tag == "P" { "panic" } else { "slow" };
                                let (_, input) = corpus.input(b.seed, i, &scratch);
                                let p = save(&b.save, kind, class, b.seed, i, &input, rest)?;
                                t.findings
                                    .push(format!("{class} at input {i}: {rest} ({})", p.display()));
                            }
                            ("D", _) => finished = true,
                            _ => {}
                        }
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        let _ = child.kill();
                        let i = current.unwrap_or(start);
                        let (_, input) = corpus.input(b.seed, i, &scratch);
                        let p = save(&b.save, kind, "hang", b.seed, i, &input, "no answer")?;
                        t.runs += 1;
                        t.findings
                            .push(format!("hang at input {i} (> {hang_ms} ms) ({})", p.display()));
                        current = Some(i);
                        break;
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
            let status = child.wait()?;
            let stderr = err_thread.join().unwrap_or_default();
            if !finished {
                if let (Some(i), false) = (current, status.success()) {
                    if !t
                        .findings
                        .iter()
                        .any(|f| f.starts_with(&format!("hang at input {i} ")))
                    {
                        let class = if stderr.contains("memory allocation of") {
                            "memory"
                        } else {
                            "crash"
                        };
                        let tail: String = stderr.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
                        let (_, input) = corpus.input(b.seed, i, &scratch);
                        let p = save(&b.save, kind, class, b.seed, i, &input, &tail)?;
                        t.runs += 1;
                        t.findings.push(format!(
                            "{class} at input {i}: {status}: {tail} ({})",
                            p.display()
                        ));
                    }
                }
            }
            match current {
                Some(i) if !finished => start = i + 1,
                _ => break,
            }
        }
        t.seconds = t0.elapsed().as_secs_f64();
        std::fs::remove_dir_all(&scratch).ok();
        rows.push((kind, t));
    }
    print_table("parse", &rows);
    Ok(rows.iter().all(|(_, t)| t.findings.is_empty()))
}

#[allow(clippy::too_many_arguments)]
fn worker(
    kind: &str,
    seed: u64,
    start: u64,
    end: u64,
    deadline_ms: u64,
    slow_ms: u64,
    mem_mb: usize,
    scratch: &Path,
) -> Result<()> {
    let kind = Kind::from_name(kind).ok_or_else(|| anyhow!("unknown kind"))?;
    let root = sassim_fuzz::repo_root();
    let corpus = Corpus::load(kind, &root, scratch)?;
    LIMIT.store(USED.load(Ordering::Relaxed) + (mem_mb << 20), Ordering::Relaxed);
    let panic_msg = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let pm = panic_msg.clone();
    std::panic::set_hook(Box::new(move |info| {
        let loc = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        if let Ok(mut m) = pm.lock() {
            *m = format!("{loc}: {msg}").replace('\n', " ");
        }
    }));
    let t0 = Instant::now();
    let out = std::io::stdout();
    let mut out = out.lock();
    for i in start..end {
        if t0.elapsed().as_millis() as u64 >= deadline_ms {
            break;
        }
        let (_, input) = corpus.input(seed, i, scratch);
        writeln!(out, "S {i}")?;
        out.flush()?;
        let t = Instant::now();
        let r = std::panic::catch_unwind(|| sassim_fuzz::parse(kind, &input, scratch));
        let ms = t.elapsed().as_millis() as u64;
        match r {
            Ok(r) => writeln!(out, "R {i} {} {ms}", u8::from(r.is_err()))?,
            Err(_) => {
                let m = panic_msg.lock().map(|m| m.clone()).unwrap_or_default();
                writeln!(out, "P {i} {m}")?;
                writeln!(out, "R {i} 1 {ms}")?;
            }
        }
        if ms > slow_ms {
            writeln!(out, "T {i} {ms} ms")?;
        }
    }
    writeln!(out, "D")?;
    out.flush()?;
    Ok(())
}

fn sim_mode(
    b: &Budget,
    sassim: &Path,
    timeout: u64,
    rss_mb: u64,
    jobs: usize,
    index: &[u64],
) -> Result<bool> {
    let root = sassim_fuzz::repo_root();
    if !sassim.is_file() {
        bail!(
            "{}: no sassim binary (build it: cargo build --release)",
            sassim.display()
        );
    }
    let sassim = &sassim.canonicalize()?;
    let mut rows = Vec::new();
    for kind in kinds(&b.kind)? {
        if !kind.available() {
            println!("{}: skipped (needs the sassim-cubin crate)", kind.name());
            continue;
        }
        if kind == Kind::Cubin && sassim_cubin::find_nvdisasm(sassim.parent()).is_none() {
            println!(
                "cubin: NVIDIA's nvdisasm was not found (set SASSIM_NVDISASM or run scripts/install-cuda-tools.sh): \
                 mutated cubins cannot be disassembled and most runs will end in that error"
            );
        }
        let t0 = Instant::now();
        let deadline = (b.seconds > 0).then(|| t0 + Duration::from_secs(b.seconds));
        let base = scratch_dir(&format!("sim-{}", kind.name()));
        std::fs::create_dir_all(&base)?;
        let corpus = Corpus::load(kind, &root, &base)?;
        // Inputs 0.. (or the given ones); runner j takes every jobs-th of them.
        let todo: Vec<u64> = if index.is_empty() {
            (0..b.runs).collect()
        } else {
            index.to_vec()
        };
        let tallies: Vec<Tally> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..jobs.max(1))
                .map(|j| {
                    let (corpus, base, root, todo) = (&corpus, &base, &root, &todo);
                    s.spawn(move || -> Result<Tally> {
                        let mut t = Tally::default();
                        let enc = base.join(format!("enc-{j}"));
                        std::fs::create_dir_all(&enc)?;
                        for &i in todo.iter().skip(j).step_by(jobs.max(1)) {
                            if deadline.is_some_and(|d| Instant::now() >= d) {
                                break;
                            }
                            let (which, input) = corpus.input(b.seed, i, &enc);
                            let dir = base.join(format!("run-{j}"));
                            std::fs::remove_dir_all(&dir).ok();
                            let args = sassim_fuzz::sim_args(
                                kind,
                                &corpus.seeds[which].0,
                                &input,
                                root,
                                &dir,
                                timeout.saturating_sub(1).max(1),
                            )?;
                            let o = sassim_fuzz::sim::run_sassim(sassim, &args, &dir, Duration::from_secs(timeout))?;
                            t.runs += 1;
                            t.peak_rss_mb = t.peak_rss_mb.max(o.peak_rss_mb);
                            t.slowest_ms = t.slowest_ms.max(o.ms);
                            if o.code != 0 {
                                t.clean_errors += 1;
                            }
                            if let Some(class) = o.finding(rss_mb) {
                                let tail: String = o
                                    .stderr
                                    .lines()
                                    .filter(|l| !l.starts_with("  "))
                                    .take(4)
                                    .collect::<Vec<_>>()
                                    .join(" | ");
                                let note = format!(
                                    "{class}: exit {} (signal: {}), {} ms, peak RSS {} MiB; seed {}; sassim {}\n{tail}\n",
                                    o.code,
                                    o.signaled,
                                    o.ms,
                                    o.peak_rss_mb,
                                    corpus.seeds[which].0,
                                    args.join(" ")
                                );
                                let p = save(&b.save, kind, class, b.seed, i, &input, &note)?;
                                t.findings.push(format!(
                                    "{class} at input {i} ({} ms, {} MiB): {tail} ({})",
                                    o.ms,
                                    o.peak_rss_mb,
                                    p.display()
                                ));
                            }
                        }
                        Ok(t)
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().expect("sim thread"))
                .collect::<Result<Vec<_>>>()
        })?;
        let mut t = Tally::default();
        for x in tallies {
            t.runs += x.runs;
            t.clean_errors += x.clean_errors;
            t.findings.extend(x.findings);
            t.peak_rss_mb = t.peak_rss_mb.max(x.peak_rss_mb);
            t.slowest_ms = t.slowest_ms.max(x.slowest_ms);
        }
        t.seconds = t0.elapsed().as_secs_f64();
        std::fs::remove_dir_all(&base).ok();
        rows.push((kind, t));
    }
    print_table("sim", &rows);
    Ok(rows.iter().all(|(_, t)| t.findings.is_empty()))
}

fn main() -> Result<std::process::ExitCode> {
    let cli = Cli::parse();
    let ok = match cli.cmd {
        Cmd::Parse {
            b,
            slow_ms,
            hang_ms,
            mem_mb,
        } => parse_mode(&b, slow_ms, hang_ms, mem_mb)?,
        Cmd::Sim {
            b,
            sassim,
            timeout,
            rss_mb,
            jobs,
            index,
        } => sim_mode(&b, &sassim, timeout, rss_mb, jobs, &index)?,
        Cmd::Replay { kind, file } => {
            let kind = Kind::from_name(&kind).ok_or_else(|| anyhow!("unknown kind `{kind}`"))?;
            let scratch = scratch_dir("replay");
            sassim_fuzz::prepare_scratch(kind, &sassim_fuzz::repo_root(), &scratch)?;
            let input = std::fs::read(&file)?;
            let r = sassim_fuzz::parse(kind, &input, &scratch);
            std::fs::remove_dir_all(&scratch).ok();
            println!("{}", r.err().unwrap_or_else(|| "accepted".into()));
            true
        }
        Cmd::Worker {
            kind,
            seed,
            start,
            end,
            deadline_ms,
            slow_ms,
            mem_mb,
            scratch,
        } => {
            worker(&kind, seed, start, end, deadline_ms, slow_ms, mem_mb, &scratch)?;
            true
        }
    };
    Ok(if ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    })
}
