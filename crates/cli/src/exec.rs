//! `sassim exec -- PROGRAM ARGS...`: run an unmodified CUDA program on the CPU with sassim's
//! CUDA runtime (`libcudart.so.12/13` from the `sassim-cudart` crate) in place of NVIDIA's;
//! every kernel it launches runs on the simulated GPU. See `docs/exec.md`.

use crate::commands::load_gpu;
use crate::GpuArgs;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use sassim_cubin::RuntimeLink;
use sassim_cudart::{Event, ExecConfig, CONFIG_ENV};
use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

#[derive(Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Functional execution only (no timing model): fast, same program output.
    #[arg(long)]
    pub functional: bool,
    /// Write the statistics of every kernel launch as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write Accel-Sim-compatible `name = value` lines (one block per launch) to this file.
    #[arg(long, value_name = "FILE")]
    pub accelsim: Option<PathBuf>,
    /// Threads that tick the SMs of a kernel (default: all cores; statistics are identical
    /// for any number). `--jobs` is an older name.
    #[arg(long, alias = "jobs")]
    pub threads: Option<usize>,
    /// Directory of cached SASS listings (`<sha256 of cubin>.nvdisasm-hex`); repeatable.
    #[arg(long = "sass-cache", value_name = "DIR")]
    pub sass_cache: Vec<PathBuf>,
    /// Stop a kernel after this many cycles (0 = no limit).
    #[arg(long, default_value_t = 0)]
    pub max_cycles: u64,
    /// Report a deadlock after this many cycles without progress (0 = never).
    #[arg(long, default_value_t = 1_000_000)]
    pub deadlock_cycles: u64,
    /// Stop after this many seconds of wall-clock time (0 = no limit, as for `run` and
    /// `microbench`): the running kernel ends with partial statistics, the program gets
    /// cudaErrorLaunchTimeout, and `sassim exec` exits 3 (the program is killed if it does not
    /// end within a further second).
    #[arg(long, value_name = "SECONDS")]
    pub max_wall: Option<f64>,
    /// Do not print the summary table.
    #[arg(long, short)]
    pub quiet: bool,
    /// Overwrite existing output files.
    #[arg(long)]
    pub force: bool,
    /// The program and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM ARGS"
    )]
    pub program: Vec<String>,
}

/// Where a command name resolves (a path, or the first match on `PATH`).
fn resolve_program(p: &str) -> Result<PathBuf> {
    if p.contains('/') {
        let path = PathBuf::from(p);
        if !path.is_file() {
            bail!("{p}: no such program");
        }
        return Ok(path);
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&paths) {
            let c = d.join(p);
            if c.is_file() {
                return Ok(c);
            }
        }
    }
    bail!("{p}: not found (give a path, e.g. ./{p})")
}

/// sassim's runtime library for `soname` (`libcudart.so.13`), built beside the sassim
/// executable by cargo (`target/release/libsassim_cudart13.so`).
fn runtime_library(major: &str) -> Result<PathBuf> {
    let name = format!("libsassim_cudart{major}.so");
    let exe = std::env::current_exe().context("locating the sassim executable")?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    // `deps/` first: cargo updates it whenever the sassim binary is built.
    for c in [
        dir.join("deps").join(&name),
        dir.join(&name),
        dir.join("../lib/sassim").join(&name),
    ] {
        if c.is_file() {
            return Ok(c);
        }
    }
    bail!(
        "sassim's CUDA runtime ({name}) was not found beside {}; build it with `cargo build --release --workspace`",
        exe.display()
    )
}

/// Default places for cached SASS: the user's cache, and a `sass/` directory beside the
/// program or its parent (the layout of `workloads/programs/`).
fn sass_dirs(a: &ExecArgs, program: &Path) -> (Vec<PathBuf>, Option<PathBuf>) {
    let mut dirs = a.sass_cache.clone();
    if let Some(v) = std::env::var_os("SASSIM_SASS_CACHE") {
        dirs.extend(std::env::split_paths(&v));
    }
    let user = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|c| c.join("sassim/sass"));
    if let Some(u) = &user {
        dirs.push(u.clone());
    }
    if let Some(pd) = program.parent() {
        dirs.push(pd.join("sass"));
        if let Some(pp) = pd.parent() {
            dirs.push(pp.join("sass"));
        }
    }
    (dirs, user)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

pub fn exec(mut a: ExecArgs) -> Result<ExitCode> {
    if let Some(w) = a.max_wall {
        if !(w.is_finite() && (0.0..=1e7).contains(&w)) {
            bail!("--max-wall {w}: expected seconds in [0, 10000000] (0 = no limit)");
        }
    }
    a.max_wall = a.max_wall.filter(|&w| w > 0.0);
    let cfg = load_gpu(&a.gpu)?;
    let program = resolve_program(&a.program[0])?;
    let program = program.canonicalize().unwrap_or(program);
    for out in [&a.json, &a.accelsim].into_iter().flatten() {
        if same_file(out, &program) {
            bail!("{}: the output file is the program itself", out.display());
        }
        if out.exists() && !a.force {
            bail!("{} exists; pass --force to overwrite it", out.display());
        }
    }
    let bytes = std::fs::read(&program).with_context(|| format!("reading {}", program.display()))?;
    let runtime = if bytes.starts_with(b"#!") {
        // A script: the CUDA programs it starts inherit sassim's runtime.
        eprintln!(
            "note: {} is a script; the CUDA programs it runs use sassim's runtime",
            program.display()
        );
        RuntimeLink::Shared(String::new())
    } else {
        sassim_cubin::inspect(&bytes, &program.display().to_string())
            .map_err(|e| anyhow!("{e}"))?
            .runtime
    };
    match &runtime {
        RuntimeLink::Static => bail!(
            "{} links NVIDIA's CUDA runtime statically (nvcc's default), which sassim cannot replace; \
             rebuild it with `nvcc -cudart shared ...`",
            program.display()
        ),
        RuntimeLink::None => eprintln!(
            "note: {} does not use the CUDA runtime; it runs without simulating anything",
            program.display()
        ),
        RuntimeLink::Shared(_) => {}
    }
    let tmp = tempfile::Builder::new()
        .prefix("sassim-exec-")
        .tempdir()
        .context("creating a temporary directory")?;
    for major in ["12", "13"] {
        let lib = runtime_library(major)?;
        std::os::unix::fs::symlink(&lib, tmp.path().join(format!("libcudart.so.{major}")))
            .with_context(|| format!("linking {}", lib.display()))?;
    }
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf));
    let (cache_dirs, user_cache) = sass_dirs(&a, &program);
    let results = tmp.path().join("results.jsonl");
    let (mut reader, writer) = std::io::pipe().context("creating the progress pipe")?;
    let wfd = std::os::fd::AsRawFd::as_raw_fd(&writer);
    // The child inherits the write end: clear close-on-exec on it.
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let fl = libc::fcntl(wfd, libc::F_GETFD);
        if fl >= 0 {
            libc::fcntl(wfd, libc::F_SETFD, fl & !libc::FD_CLOEXEC);
        }
    }
    let ec = ExecConfig {
        gpu: a.gpu.gpu.clone(),
        sets: a.gpu.set.clone(),
        functional: a.functional,
        results: Some(results.clone()),
        progress_fd: Some(wfd),
        sass_cache: cache_dirs,
        nvdisasm: sassim_cubin::find_nvdisasm(exe_dir.as_deref()),
        write_cache: user_cache,
        threads: crate::commands::check_threads(a.threads)?
            .unwrap_or_else(crate::commands::all_cores)
            .max(1),
        max_cycles: a.max_cycles,
        deadlock_cycles: a.deadlock_cycles,
        max_wall_seconds: a.max_wall.unwrap_or(0.0),
    };
    let cfg_path = tmp.path().join("config.json");
    std::fs::write(&cfg_path, serde_json::to_vec(&ec)?).context("writing the runtime configuration")?;
    let mut ld = tmp.path().display().to_string();
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        ld.push(':');
        ld.push_str(&old.to_string_lossy());
    }
    let t0 = std::time::Instant::now();
    let mut child = Command::new(&program)
        .args(&a.program[1..])
        .env("LD_LIBRARY_PATH", ld)
        .env(CONFIG_ENV, &cfg_path)
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    drop(writer);
    let tty = std::io::stderr().is_terminal() && !a.quiet;
    let progress = std::thread::spawn(move || {
        let bar = if tty {
            let pb = indicatif::ProgressBar::new(100);
            let style =
                indicatif::ProgressStyle::with_template("{prefix:>16} [{bar:30}] {pos}/{len} blocks {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> ");
            pb.set_style(style);
            pb
        } else {
            indicatif::ProgressBar::hidden()
        };
        let mut line = String::new();
        let mut r = std::io::BufReader::new(&mut reader);
        while r.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if let [name, cycle, done, total, _insts] = f.as_slice() {
                bar.set_prefix(name.chars().take(16).collect::<String>());
                bar.set_length(total.parse().unwrap_or(1));
                bar.set_position(done.parse().unwrap_or(0));
                bar.set_message(format!("cycle {cycle}"));
            }
            line.clear();
        }
        bar.finish_and_clear();
    });
    // The runtime stops simulating at the deadline; a program that then does not end
    // (its host code spinning) is killed a second later.
    let kill_at = a
        .max_wall
        .map(|w| t0 + std::time::Duration::from_secs_f64(w + 1.0));
    let mut killed = false;
    let status = loop {
        if let Some(s) = child.try_wait().context("waiting for the program")? {
            break s;
        }
        if kill_at.is_some_and(|k| std::time::Instant::now() >= k) && !killed {
            let _ = child.kill();
            killed = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(if killed { 1 } else { 20 }));
    };
    let _ = progress.join();
    let wall = t0.elapsed().as_secs_f64();
    // Results.
    let text = std::fs::read_to_string(&results).unwrap_or_default();
    let mut kernels = Vec::new();
    let mut errors = Vec::new();
    let mut stopped = killed.then(|| format!("{} was killed at the --max-wall deadline", program.display()));
    let mut config = serde_json::Value::Null;
    for (i, l) in text.lines().enumerate() {
        let ev: Event =
            serde_json::from_str(l).map_err(|e| anyhow!("{}: line {}: {e}", results.display(), i + 1))?;
        match ev {
            Event::Device { config: c, .. } => config = c,
            Event::Kernel { report, .. } => kernels.push(*report),
            Event::Error { call, message } => errors.push(format!("{call}: {message}")),
            Event::Warning { message } => eprintln!("warning: {message}"),
            Event::Stopped { message } => stopped = stopped.or(Some(message)),
        }
    }
    let report = sassim_gpu::report::run_report(&cfg.gpu.name, config, kernels);
    let mut host = sassim_report::HostStats::new(&report, wall);
    host.threads = ec.threads as u32;
    if !a.quiet && !report.kernels.is_empty() {
        eprint!("{}", sassim_report::table(&report, &host));
    }
    if let Some(j) = &a.json {
        write_atomic(j, sassim_report::to_json(&report).as_bytes())?;
    }
    if let Some(f) = &a.accelsim {
        write_atomic(f, sassim_report::accelsim_lines(&report, &host).as_bytes())?;
    }
    if let Some(why) = stopped {
        eprintln!("stopped: {why}; the statistics cover the cycles simulated");
        return Ok(ExitCode::from(3));
    }
    if !errors.is_empty() {
        eprintln!(
            "error: sassim could not simulate {} faithfully ({} error(s), first: {})",
            program.display(),
            errors.len(),
            errors[0]
        );
        return Ok(ExitCode::from(2));
    }
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(c.clamp(1, 255) as u8),
        None => {
            use std::os::unix::process::ExitStatusExt;
            eprintln!(
                "error: {} was killed by signal {}",
                program.display(),
                status.signal().unwrap_or(0)
            );
            ExitCode::from(128u8.saturating_add(status.signal().unwrap_or(0).clamp(0, 127) as u8))
        }
    })
}

/// Write a file through a temporary name and a rename, so no half-written file remains.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}
