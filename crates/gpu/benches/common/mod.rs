//! What the benchmarks share: the `sassim` binary's allocator (so that their figures are the
//! binary's), their peak RSS and their settings from the environment.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The process's peak resident set so far, in MiB (0 where `/proc` does not tell).
pub fn peak_rss_mb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        })
        .unwrap_or(0)
        / 1024
}

/// Environment variable `name` as a whole number in `lo..=hi` (`default` when unset); any
/// other value is an error message and exit status 2.
pub fn env_number(name: &str, default: usize, lo: usize, hi: usize) -> usize {
    match std::env::var(name) {
        Err(_) => default,
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(x) if (lo..=hi).contains(&x) => x,
            _ => {
                eprintln!("{name}={v}: expected a whole number from {lo} to {hi}");
                std::process::exit(2);
            }
        },
    }
}
