//! What `sassim exec` tells the runtime library (a JSON file named by the environment
//! variable [`CONFIG_ENV`]); without it, the library simulates the default preset and
//! reports nothing but errors.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Environment variable naming the configuration file.
pub const CONFIG_ENV: &str = "SASSIM_EXEC_CONFIG";

/// The configuration of one program run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExecConfig {
    /// GPU preset name or file.
    pub gpu: String,
    /// `--set key=value` overrides.
    pub sets: Vec<String>,
    /// Functional execution only (no timing model).
    pub functional: bool,
    /// File the library appends one JSON line per event to (kernel results, errors).
    pub results: Option<PathBuf>,
    /// File descriptor for progress lines (`cycle ctas_done ctas_total warp_insts`).
    pub progress_fd: Option<i32>,
    /// Directories of cached `nvdisasm -hex` listings, by cubin SHA-256.
    pub sass_cache: Vec<PathBuf>,
    /// NVIDIA's disassembler, when found.
    pub nvdisasm: Option<PathBuf>,
    /// Cache listings made by the disassembler here.
    pub write_cache: Option<PathBuf>,
    /// Threads the simulation of one kernel may use.
    pub threads: usize,
    /// Stop a kernel after this many cycles (0 = no limit).
    pub max_cycles: u64,
    /// Stop simulating when this many seconds of wall-clock time have passed since the
    /// program started (0 = no limit).
    pub max_wall_seconds: f64,
    /// Report a deadlock after this many cycles without progress.
    pub deadlock_cycles: u64,
}

impl Default for ExecConfig {
    fn default() -> Self {
        ExecConfig {
            gpu: sassim_config::DEFAULT_PRESET.to_string(),
            sets: Vec::new(),
            functional: false,
            results: None,
            progress_fd: None,
            sass_cache: Vec::new(),
            nvdisasm: None,
            write_cache: None,
            threads: 1,
            max_cycles: 0,
            max_wall_seconds: 0.0,
            deadlock_cycles: 1_000_000,
        }
    }
}

/// One line of the results file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The device the program runs on (first line).
    Device {
        gpu: String,
        arch: String,
        config: serde_json::Value,
    },
    /// A kernel launch finished.
    Kernel {
        report: Box<sassim_report::KernelReport>,
        /// Simulated time at which it started and ended on its stream (cycles).
        start_cycle: u64,
        end_cycle: u64,
        /// Bytes of device printf output it produced.
        printf_bytes: u64,
    },
    /// Something the simulator cannot do, or a kernel fault: the program was told through
    /// an error code; `sassim exec` reports it and exits non-zero.
    Error { call: String, message: String },
    /// A kernel was stopped by `--max-cycles` or `--max-wall` (its statistics are in the
    /// preceding `kernel` event).
    Stopped { message: String },
    /// Worth knowing, not fatal.
    Warning { message: String },
}
