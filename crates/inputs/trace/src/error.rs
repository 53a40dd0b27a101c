//! Error type of the trace reader.
//!
//! Every error that comes from the content of a file names the file; errors
//! from text traces also name the 1-based line number and the field that was
//! being parsed. Binary traces name the record (thread block) index instead of
//! a line.

use std::path::{Path, PathBuf};

/// Result alias used throughout the crate.
pub type Result<T, E = TraceError> = std::result::Result<T, E>;

/// `": line N"`, or nothing for line 0 (binary files, position unknown).
fn at_line(line: u64) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(": line {line}")
    }
}

/// `":N"`, or nothing for line 0.
fn colon_line(line: u64) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}")
    }
}

/// Errors produced while reading, converting or writing traces.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened, read or written, or a compressed stream
    /// (xz/gz/zst) is truncated or corrupt. `line` is the last text line read
    /// successfully (0 when unknown or binary).
    #[error("{}{}: I/O error: {source}", path.display(), at_line(*line))]
    Io {
        path: PathBuf,
        line: u64,
        #[source]
        source: std::io::Error,
    },

    /// A malformed line in a text trace or `kernelslist.g`.
    #[error("{}:{line}: field `{field}`: {msg}", path.display())]
    Parse {
        path: PathBuf,
        line: u64,
        field: &'static str,
        msg: String,
    },

    /// The trace ends early: end of file inside a thread block, a warp with
    /// fewer instructions than its `insts` header, a binary trace without its
    /// end record.
    #[error("{}{}: truncated trace: field `{field}`: {msg}", path.display(), colon_line(*line))]
    Truncated {
        path: PathBuf,
        line: u64,
        field: &'static str,
        msg: String,
    },

    /// A corrupt binary (`SASSIMBT`) trace. `record` is the index of the
    /// thread-block record being decoded.
    #[error("{}: binary record {record}: field `{field}`: {msg}", path.display())]
    Binary {
        path: PathBuf,
        record: u64,
        field: &'static str,
        msg: String,
    },

    /// A record that cannot be represented by the writer (text or binary).
    #[error("{}: cannot encode: {msg}", path.display())]
    Encode { path: PathBuf, msg: String },
}

impl TraceError {
    /// The file the error refers to.
    pub fn path(&self) -> &Path {
        match self {
            TraceError::Io { path, .. }
            | TraceError::Parse { path, .. }
            | TraceError::Truncated { path, .. }
            | TraceError::Binary { path, .. }
            | TraceError::Encode { path, .. } => path,
        }
    }

    /// The 1-based line number for text errors (0 when not applicable).
    pub fn line(&self) -> u64 {
        match self {
            TraceError::Io { line, .. }
            | TraceError::Parse { line, .. }
            | TraceError::Truncated { line, .. } => *line,
            _ => 0,
        }
    }

    /// The field being parsed, when known.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            TraceError::Parse { field, .. }
            | TraceError::Truncated { field, .. }
            | TraceError::Binary { field, .. } => Some(field),
            TraceError::Io { .. } => Some("io"),
            TraceError::Encode { .. } => None,
        }
    }

    pub(crate) fn io(path: &Path, line: u64, source: std::io::Error) -> Self {
        TraceError::Io {
            path: path.to_path_buf(),
            line,
            source,
        }
    }
}
