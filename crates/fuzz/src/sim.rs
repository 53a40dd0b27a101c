//! One whole simulator run: the `sassim` binary on files written by [`crate::sim_args`],
//! bounded in time, measured for peak RSS, and classified.

use anyhow::Result;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a run ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Exit status (`-1` when killed by a signal).
    pub code: i32,
    pub signaled: bool,
    pub timed_out: bool,
    pub ms: u64,
    pub peak_rss_mb: u64,
    pub stderr: String,
}

impl Outcome {
    /// `None` for a result or a clean error (exit 0-3 without a panic, in time, within
    /// `rss_mb`), else what went wrong.
    pub fn finding(&self, rss_mb: u64) -> Option<&'static str> {
        if self.timed_out {
            Some("hang")
        } else if self.signaled {
            Some("crash")
        } else if self.stderr.contains("panicked at") {
            Some("panic")
        } else if !(0..=3).contains(&self.code) {
            Some("exit")
        } else if self.peak_rss_mb > rss_mb {
            Some("memory")
        } else {
            None
        }
    }
}

/// Wait for `child` at most `timeout` (then kill it); (wait status, peak RSS KiB, killed).
fn wait_bounded(child: &mut std::process::Child, timeout: Duration) -> (i32, u64, bool) {
    let pid = child.id() as libc::pid_t;
    let t0 = Instant::now();
    let mut killed = false;
    loop {
        let mut st: libc::c_int = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let flags = if killed { 0 } else { libc::WNOHANG };
        // SAFETY: `pid` is our child and std's `Child` never waits for it, so it is reaped
        // exactly once, here.
        let r = unsafe { libc::wait4(pid, &mut st, flags, &mut ru) };
        if r == pid {
            return (st, ru.ru_maxrss.max(0) as u64, killed);
        }
        if r < 0 {
            return (0, 0, killed);
        }
        if !killed && t0.elapsed() > timeout {
            let _ = child.kill();
            killed = true;
            continue;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Run `sassim args` in `dir` (stderr kept in `dir/stderr.txt`). Mutated programs of the
/// `cubin` kind find the suite's SASS cache (`SASSIM_SASS_CACHE`, unless set) for the cubins
/// a mutation left intact; the listings the disassembler makes of the others go to a cache
/// in `dir` (`XDG_CACHE_HOME`), not the user's.
pub fn run_sassim(sassim: &Path, args: &[String], dir: &Path, timeout: Duration) -> Result<Outcome> {
    let errf = dir.join("stderr.txt");
    let start = Instant::now();
    let mut cmd = Command::new(sassim);
    if std::env::var_os("SASSIM_SASS_CACHE").is_none() {
        cmd.env(
            "SASSIM_SASS_CACHE",
            crate::repo_root().join("workloads/programs/sass"),
        );
    }
    let mut child = cmd
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("RUST_BACKTRACE", "0")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&errf)?)
        .spawn()?;
    let (st, rss_kb, timed_out) = wait_bounded(&mut child, timeout);
    let signaled = libc::WIFSIGNALED(st);
    Ok(Outcome {
        code: if libc::WIFEXITED(st) {
            libc::WEXITSTATUS(st)
        } else {
            -1
        },
        signaled,
        timed_out,
        ms: start.elapsed().as_millis() as u64,
        peak_rss_mb: rss_kb / 1024,
        stderr: std::fs::read_to_string(&errf).unwrap_or_default(),
    })
}
