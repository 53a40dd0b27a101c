//! SASS with control bits for a cubin: from a content-addressed cache of `nvdisasm -hex`
//! listings, or by running NVIDIA's disassembler (the pinned `nvidia-cuda-nvdisasm` wheel).
//!
//! The cache is a directory of `<sha256 of the cubin>.nvdisasm-hex` files. The program
//! suite ships one (`workloads/programs/sass/`), so its tests need no CUDA toolkit.

use crate::cubin::Cubin;
use crate::error::{CubinError, Result};
use sassim_isa::Listing;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The command that installs the disassembler (named in errors).
pub const INSTALL_HINT: &str = "scripts/install-cuda-tools.sh";
/// File-name suffix of cached listings.
pub const CACHE_SUFFIX: &str = ".nvdisasm-hex";

/// Where SASS comes from.
#[derive(Debug, Clone, Default)]
pub struct SassSource {
    /// Directories searched for cached listings, in order.
    pub cache_dirs: Vec<PathBuf>,
    /// The disassembler (None: not available).
    pub nvdisasm: Option<PathBuf>,
    /// Store listings produced by the disassembler here.
    pub write_cache: Option<PathBuf>,
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
        let dir = std::env::temp_dir().join(format!("sassim-cubin-{}-{key}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| CubinError::Disassembly(format!("{}: {e}", dir.display())))?;
        let tmp = dir.join("module.cubin");
        let run = (|| -> Result<String> {
            std::fs::write(&tmp, &cubin.bytes)
                .map_err(|e| CubinError::Disassembly(format!("{}: {e}", tmp.display())))?;
            let out = Command::new(tool)
                .arg("-hex")
                .arg(&tmp)
                .output()
                .map_err(|e| CubinError::Disassembly(format!("running {}: {e}", tool.display())))?;
            if !out.status.success() {
                return Err(CubinError::Disassembly(format!(
                    "{} failed on {} ({}): {}",
                    tool.display(),
                    cubin.origin,
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
            String::from_utf8(out.stdout)
                .map_err(|_| CubinError::Disassembly(format!("{} printed non-UTF-8 text", tool.display())))
        })();
        let _ = std::fs::remove_dir_all(&dir);
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
