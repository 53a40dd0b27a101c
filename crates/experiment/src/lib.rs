//! `sassim-experiment`: design-space sweeps around the simulator, never inside its cycle loop.
//!
//! * [`spec`]: experiment files (GPU presets, overrides named or swept, inputs);
//! * [`hash`] and [`plan`]: the identity of every run (input contents, configuration,
//!   simulator version) and the child command that executes it;
//! * [`exec`] and [`local`]: runs as isolated child `sassim` processes, in parallel, resumable;
//! * [`db`]: the SQLite results database; [`results`]: list, show, export, compare;
//! * [`slurm`]: job arrays, checksummed per-task result files, collect, status;
//! * [`area`]: the Table 7 area model; [`reuse`]: the share of instructions with reuse bits.
//!
//! `docs/experiments.md` describes the file format, the schema and the shipped studies.

pub mod area;
pub mod db;
pub mod exec;
pub mod hash;
pub mod local;
pub mod plan;
pub mod results;
pub mod reuse;
pub mod slurm;
pub mod spec;

pub use db::Db;
pub use plan::Plan;
pub use spec::Experiment;

use std::path::PathBuf;

/// Errors of this crate; each names the file, run or database at fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {msg}", file.display())]
    Experiment { file: PathBuf, msg: String },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("database: {0}")]
    Db(String),
    #[error("slurm: {0}")]
    Slurm(String),
}

pub type Result<T> = std::result::Result<T, Error>;
