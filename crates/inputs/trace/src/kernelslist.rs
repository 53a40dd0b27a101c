//! `kernelslist.g`: the command list of a traced application.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::error::{Result, TraceError};

/// One command of `kernelslist.g`, in program order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceCommand {
    /// `MemcpyHtoD,<dst>,<bytes>`.
    MemcpyHtoD { dst: u64, bytes: u64 },
    /// A kernel launch; `path` is resolved against the directory of the list.
    Kernel { file: String, path: PathBuf },
}

/// Read `kernelslist.g` (plain or compressed). Empty lines and comments are skipped; a
/// list without any kernel is an error.
pub fn read_kernelslist(path: impl AsRef<Path>) -> Result<Vec<TraceCommand>> {
    let path = path.as_ref();
    let (_, mut rd) = crate::source::open_text(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    let mut line = String::new();
    let mut lineno = 0u64;
    let perr = |lineno, field, msg: String| TraceError::Parse {
        path: path.to_path_buf(),
        line: lineno,
        field,
        msg,
    };
    loop {
        line.clear();
        let n = std::io::Read::take(&mut rd, crate::text::MAX_LINE_BYTES)
            .read_line(&mut line)
            .map_err(|e| TraceError::io(path, lineno, e))?;
        if n == 0 {
            break;
        }
        lineno += 1;
        if n as u64 == crate::text::MAX_LINE_BYTES && !line.ends_with('\n') {
            return Err(perr(
                lineno,
                "command",
                format!("line longer than {} bytes", crate::text::MAX_LINE_BYTES),
            ));
        }
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        if l.starts_with("MemcpyHtoD") {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            if f.len() != 3 {
                return Err(perr(
                    lineno,
                    "MemcpyHtoD",
                    format!("expected 3 comma-separated fields, got {}", f.len()),
                ));
            }
            let h = f[1]
                .strip_prefix("0x")
                .or_else(|| f[1].strip_prefix("0X"))
                .unwrap_or(f[1]);
            let dst = u64::from_str_radix(h, 16)
                .map_err(|_| perr(lineno, "MemcpyHtoD address", format!("bad hex number `{}`", f[1])))?;
            let bytes = f[2].parse().map_err(|_| {
                perr(
                    lineno,
                    "MemcpyHtoD bytes",
                    format!("bad decimal number `{}`", f[2]),
                )
            })?;
            out.push(TraceCommand::MemcpyHtoD { dst, bytes });
        } else if l.starts_with('#') {
            // A comment.
        } else if l.starts_with("kernel")
            || [".traceg", ".traceg.xz", ".traceg.gz", ".traceg.zst", ".sbt"]
                .iter()
                .any(|e| l.ends_with(e))
        {
            out.push(TraceCommand::Kernel {
                file: l.to_string(),
                path: dir.join(l),
            });
        } else {
            return Err(perr(
                lineno,
                "command",
                format!("expected `MemcpyHtoD,…` or a kernel trace file name, got `{l}`"),
            ));
        }
    }
    if !out.iter().any(|c| matches!(c, TraceCommand::Kernel { .. })) {
        return Err(perr(
            lineno.max(1),
            "command",
            "the list names no kernel trace (expected lines like `kernel-1.traceg`)".into(),
        ));
    }
    Ok(out)
}
