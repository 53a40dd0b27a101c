//! SASS with control bits for a cubin: from a content-addressed cache of `nvdisasm -hex`
//! listings, or by running NVIDIA's disassembler (the pinned `nvidia-cuda-nvdisasm` wheel).
//!
//! The cache is a directory of `<sha256 of the cubin>.nvdisasm-hex` files. The program
//! suite ships one (`workloads/programs/sass/`), so its tests need no CUDA toolkit.

use crate::cubin::Cubin;
use crate::error::{CubinError, Result};
use sassim_isa::Listing;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// The command that installs the disassembler (named in errors).
pub const INSTALL_HINT: &str = "scripts/install-cuda-tools.sh";
/// File-name suffix of cached listings.
pub const CACHE_SUFFIX: &str = ".nvdisasm-hex";
/// Longest run of the disassembler on one cubin before it is stopped (the largest cubin of
/// the program suite takes well under a second; a damaged cubin can make nvdisasm spin
/// forever, found by the cubin fuzzer).
pub const NVDISASM_TIMEOUT: Duration = Duration::from_secs(120);

/// Where SASS comes from.
#[derive(Debug, Clone, Default)]
pub struct SassSource {
    /// Directories searched for cached listings, in order.
    pub cache_dirs: Vec<PathBuf>,
    /// The disassembler (None: not available).
    pub nvdisasm: Option<PathBuf>,
    /// Store listings produced by the disassembler here.
    pub write_cache: Option<PathBuf>,
    /// The disassembler is stopped at this instant (the run's `--max-wall`), and in any
    /// case after [`NVDISASM_TIMEOUT`].
    pub deadline: Option<Instant>,
}

/// Find `nvdisasm`: `$SASSIM_NVDISASM`, then `PATH`, then the repository's `.venv-cuda`
/// beside `near` (the running executable's directory, searched upwards).
/// `SASSIM_NVDISASM=` (empty) disables the disassembler (only cached SASS is used).
pub fn find_nvdisasm(near: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SASSIM_NVDISASM") {
        if p.is_empty() {
            return None;
        }
        let p = PathBuf::from(p);
        if p.is_file() {
            return Some(p);
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            let p = d.join("nvdisasm");
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let mut dir = near.map(Path::to_path_buf);
    while let Some(d) = dir {
        let venv = d.join(".venv-cuda/lib");
        if let Ok(rd) = std::fs::read_dir(&venv) {
            for e in rd.flatten() {
                let p = e.path().join("site-packages/nvidia/cu13/bin/nvdisasm");
                if p.is_file() {
                    return Some(p);
                }
            }
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    None
}

impl SassSource {
    /// The `nvdisasm -hex` listing of `cubin` and where it came from (cache file or tool).
    pub fn listing_text(&self, cubin: &Cubin) -> Result<(String, String)> {
        let key = cubin.sha256();
        let file = format!("{key}{CACHE_SUFFIX}");
        for d in &self.cache_dirs {
            let p = d.join(&file);
            if p.is_file() {
                let text = std::fs::read_to_string(&p)
                    .map_err(|e| CubinError::Disassembly(format!("{}: {e}", p.display())))?;
                return Ok((text, p.display().to_string()));
            }
        }
        let tool = self.nvdisasm.as_ref().ok_or_else(|| {
            CubinError::Disassembly(format!(
                "{}: no SASS for this cubin (sha256 {key}, kernels {}): it is not in the SASS cache ({}) and NVIDIA's \
                 disassembler nvdisasm was not found; install it with `{INSTALL_HINT}` (or set SASSIM_NVDISASM)",
                cubin.origin,
                kernel_names(cubin),
                if self.cache_dirs.is_empty() {
                    "none given".to_string()
                } else {
                    self.cache_dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
                }
            ))
        })?;
        // Removed when `scratch` is dropped, on every path out of this function.
        let scratch = tempfile::Builder::new()
            .prefix("sassim-cubin-")
            .tempdir()
            .map_err(|e| CubinError::Disassembly(format!("a temporary directory: {e}")))?;
        let dir = scratch.path();
        let tmp = dir.join("module.cubin");
        let run = (|| -> Result<String> {
            std::fs::write(&tmp, &cubin.bytes)
                .map_err(|e| CubinError::Disassembly(format!("{}: {e}", tmp.display())))?;
            // Output to files (a pipe could fill and stall the tool while we wait for it).
            let io = |name: &str| {
                let p = dir.join(name);
                std::fs::File::create(&p)
                    .map(|f| (p.clone(), f))
                    .map_err(|e| CubinError::Disassembly(format!("{}: {e}", p.display())))
            };
            let ((out_path, out_file), (err_path, err_file)) = (io("stdout")?, io("stderr")?);
            let mut child = Command::new(tool)
                .arg("-hex")
                .arg(&tmp)
                .stdin(Stdio::null())
                .stdout(out_file)
                .stderr(err_file)
                .spawn()
                .map_err(|e| CubinError::Disassembly(format!("running {}: {e}", tool.display())))?;
            let limit = self.deadline.map_or(NVDISASM_TIMEOUT, |d| {
                d.saturating_duration_since(Instant::now()).min(NVDISASM_TIMEOUT)
            });
            let status = match child.wait_timeout(limit) {
                Ok(Some(status)) => status,
                Ok(None) | Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(CubinError::Disassembly(format!(
                        "{} did not finish within {:.1} s on {} (sha256 {key}): stopped (a damaged cubin, or the run's --max-wall)",
                        tool.display(),
                        limit.as_secs_f64(),
                        cubin.origin
                    )));
                }
            };
            if !status.success() {
                let err = std::fs::read(&err_path).unwrap_or_default();
                return Err(CubinError::Disassembly(format!(
                    "{} failed on {} ({}): {}",
                    tool.display(),
                    cubin.origin,
                    status,
                    String::from_utf8_lossy(&err).trim()
                )));
            }
            let out = std::fs::read(&out_path)
                .map_err(|e| CubinError::Disassembly(format!("{}: {e}", out_path.display())))?;
            String::from_utf8(out)
                .map_err(|_| CubinError::Disassembly(format!("{} printed non-UTF-8 text", tool.display())))
        })();
        drop(scratch);
        let text = run?;
        if let Some(w) = &self.write_cache {
            // Atomic: a temporary file renamed into place.
            let _ = std::fs::create_dir_all(w);
            let tmp = w.join(format!(".{file}.{}", std::process::id()));
            if std::fs::write(&tmp, &text).is_ok() {
                let _ = std::fs::rename(&tmp, w.join(&file));
            }
        }
        Ok((text, format!("{} -hex", tool.display())))
    }

    /// The parsed listing of `cubin`.
    pub fn listing(&self, cubin: &Cubin) -> Result<Listing> {
        let (text, from) = self.listing_text(cubin)?;
        sassim_sass::parse_listing(&text, &from).map_err(|e| CubinError::Disassembly(e.to_string()))
    }
}

fn kernel_names(c: &Cubin) -> String {
    if c.kernels.is_empty() {
        "none".into()
    } else {
        c.kernels
            .iter()
            .map(|k| k.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}
