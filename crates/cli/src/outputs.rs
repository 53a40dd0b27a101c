//! Output files: checked before any work (exists without `--force`, equal to an input,
//! given twice) and written atomically (a temporary file in the same directory, then a
//! rename), so an interrupted command leaves either the old file or the new one.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// Whether `a` and `b` name the same file (an existing one, through links and `..`, or
/// two spellings of a path that does not exist yet).
pub fn same_file(a: &Path, b: &Path) -> bool {
    fn norm(p: &Path) -> Option<PathBuf> {
        if let Ok(c) = p.canonicalize() {
            return Some(c);
        }
        let parent = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.canonicalize().ok()?,
            _ => std::env::current_dir().ok()?,
        };
        Some(parent.join(p.file_name()?))
    }
    match (norm(a), norm(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The outputs a command will write, checked before it starts.
#[derive(Default)]
pub struct Plan {
    outputs: Vec<PathBuf>,
}

impl Plan {
    /// Refuse `out` if it exists (without `force`), if it is one of `inputs`, or if it
    /// was planned already.
    pub fn add(&mut self, out: &Path, inputs: &[&Path], force: bool) -> Result<()> {
        for i in inputs {
            if same_file(out, i) {
                bail!(
                    "{}: the output is also an input ({}); choose another output path",
                    out.display(),
                    i.display()
                );
            }
        }
        if let Some(p) = self.outputs.iter().find(|p| same_file(p, out)) {
            bail!("{}: given as two outputs ({})", out.display(), p.display());
        }
        if out.exists() && !force {
            bail!("{} exists; pass --force to overwrite it", out.display());
        }
        if out.is_dir() {
            bail!("{} is a directory", out.display());
        }
        self.outputs.push(out.to_path_buf());
        Ok(())
    }
}

/// A temporary path beside `path` (same file system, so the rename is atomic).
pub fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.sassim-tmp-{}", std::process::id()))
}

/// Write `path` through `write` (which gets a temporary path beside it), then rename.
/// On failure the temporary file is removed and `path` is untouched.
pub fn write_with(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let tmp = temp_beside(path);
    let r = write(&tmp).and_then(|()| {
        std::fs::rename(&tmp, path)
            .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
    });
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// Write `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with(path, |tmp| {
        std::fs::write(tmp, bytes).with_context(|| format!("writing {}", tmp.display()))
    })
}
