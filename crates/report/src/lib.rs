//! sassim-report: statistics of a simulator run and their outputs.
//!
//! * the data model the simulator fills: [`RunReport`], [`KernelReport`],
//!   [`CacheCounters`], [`TotalReport`], [`HostStats`];
//! * a readable [`summary`] and the end-of-run [`table`];
//! * Accel-Sim-compatible `name = value` lines ([`accelsim_lines`]) that Accel-Sim's
//!   `get_stats.py` and plotting scripts read;
//! * deterministic JSON ([`to_json`], [`from_json`]);
//! * SVG plots without font dependencies ([`plot_stalls`], [`plot_ipc`],
//!   [`plot_correlation`]);
//! * correlation with hardware measurements ([`read_hw_csv`], [`correlate`],
//!   [`render_correlation`]).
//!
//! Formats are documented in `docs/report.md`. Nothing here panics on bad input: file
//! problems come back as [`ReportError`] naming the file, the line and the problem.

mod accelsim;
mod correlate;
mod csv;
pub mod hwdata;
mod model;
mod svg;
mod text;

pub use accelsim::accelsim_lines;
pub use correlate::{
    base_name, correlate, names_match, render_correlation, CorrelationReport, HwKernel, KernelMatch, Metrics,
    UnmatchedSim,
};
pub use hwdata::{
    parse_hw, parse_hw_csv, read_hw, read_hw_csv, HwData, HwOptions, NCU_CYCLE_METRICS, NCU_TIME_METRICS,
};
pub use model::{
    AccessKind, CacheCounters, CacheStatus, CacheSubStats, HostStats, KernelReport, RunReport, TotalReport,
    ISSUED, MODE_EXECUTION, MODE_TRACE_CONTROL_BITS, MODE_TRACE_HYBRID, STALL_REASONS,
};
pub use svg::{
    bar_chart_svg, correlation_svg, ipc_svg, plot_correlation, plot_ipc, plot_stalls, stalls_svg, BarChart,
    CorrelationPoint,
};
pub use text::{summary, table, table_with};

/// Errors of this crate. `Display` gives `file:line: problem` for parse errors.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Pretty JSON of `report`. Deterministic: struct fields in declaration order, maps in
/// key order, floats in shortest round-trip form; non-finite floats are written as 0 (JSON
/// has no NaN/inf). With `host: None` the same report always gives the same bytes.
pub fn to_json(report: &RunReport) -> String {
    let clean = report.with_finite_floats();
    match serde_json::to_string_pretty(&clean) {
        Ok(mut s) => {
            s.push('\n');
            s
        }
        // Serializing these plain structs cannot fail; keep a valid document regardless.
        Err(e) => format!("{{\"error\": {:?}}}\n", e.to_string()),
    }
}

/// Reads a report written by [`to_json`].
pub fn from_json(text: &str) -> Result<RunReport, ReportError> {
    Ok(serde_json::from_str(text)?)
}

/// Reads a report JSON file; errors name the file, line and problem.
pub fn read_json(path: impl AsRef<std::path::Path>) -> Result<RunReport, ReportError> {
    let path = path.as_ref();
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Io {
        path: shown.clone(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| ReportError::Parse {
        path: shown,
        line: e.line(),
        message: e.to_string(),
    })
}
