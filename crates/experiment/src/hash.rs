//! Identities: what a run's key covers.
//!
//! * the simulator version: a SHA-256 of the `sassim` executable's bytes (any rebuild that
//!   changes the code, a preset or a built-in workload changes it), shown with the crate version;
//! * the input: the contents of every file it reads (a launch spec, the listings and the ptxas
//!   report beside it, files its buffers load; every file of a trace directory; a program and
//!   the arguments that name files), never just their names;
//! * the configuration: the GPU (a preset name, or a preset file's contents) and the overrides
//!   in order;
//! * the run options that change results (`max_cycles`, `deadlock_cycles`, `cf`).

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::spec::{Configuration, Input, InputKind, RunSpec};
use crate::{Error, Result};

/// Lower-case hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of bytes, hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Feeds a file's length and contents into `h`, streaming.
fn hash_file(h: &mut Sha256, path: &Path) -> Result<()> {
    let io = |e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let mut f = std::fs::File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    h.update(len.to_le_bytes());
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(())
}

/// Feeds a labelled file: its name relative to some base (so moving a tree keeps the hash) and
/// its contents.
fn add_file(h: &mut Sha256, name: &str, path: &Path) -> Result<()> {
    h.update((name.len() as u64).to_le_bytes());
    h.update(name.as_bytes());
    hash_file(h, path)
}

/// SHA-256 of one file, hex.
pub fn file_sha256(path: &Path) -> Result<String> {
    let mut h = Sha256::new();
    hash_file(&mut h, path)?;
    Ok(hex(&h.finalize()))
}

/// The simulator version string: `<crate version>+<first 16 hex of the executable's SHA-256>`.
pub fn sim_version(exe: &Path) -> Result<String> {
    let h = file_sha256(exe)?;
    Ok(format!("{}+{}", env!("CARGO_PKG_VERSION"), &h[..16]))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Files a launch spec reads: itself, its listings and ptxas report beside it (all archs, since
/// the GPU chooses one), an explicit listing, and `init = { kind = "file", path }` /
/// `[[output]] file` paths.
fn spec_files(path: &Path, listing: Option<&PathBuf>) -> Result<Vec<(String, PathBuf)>> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut files = vec![(file_name(path), path.to_path_buf())];
    if let Ok(rd) = std::fs::read_dir(dir) {
        let mut beside: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let n = file_name(p);
                p.is_file()
                    && ((n.starts_with(&format!("{stem}_sm"))
                        && (n.ends_with(".cuobjdump-sass.txt") || n.ends_with(".nvdisasm-hex.txt")))
                        || n == format!("{stem}.ptxas-v.txt"))
            })
            .collect();
        beside.sort();
        files.extend(beside.into_iter().map(|p| (file_name(&p), p)));
    }
    if let Some(l) = listing {
        files.push(("listing".into(), l.clone()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    if let Ok(v) = text.parse::<toml::Table>() {
        let mut refs = Vec::new();
        for (table, key) in [("buffer", "init"), ("output", "")] {
            if let Some(toml::Value::Array(a)) = v.get(table) {
                for t in a {
                    let f = if key.is_empty() {
                        t.get("file")
                    } else {
                        t.get(key).and_then(|i| i.get("path"))
                    };
                    if let Some(toml::Value::String(s)) = f {
                        refs.push(s.clone());
                    }
                }
            }
        }
        for r in refs {
            let p = dir.join(&r);
            if p.is_file() {
                files.push((r, p));
            }
        }
    }
    Ok(files)
}

/// Every regular file of the trace directory (sorted), plus the listings.
fn trace_files(kernelslist: &Path, listings: &[PathBuf]) -> Result<Vec<(String, PathBuf)>> {
    let dir = kernelslist.parent().unwrap_or(Path::new("."));
    let rd = std::fs::read_dir(dir).map_err(|e| Error::Io {
        path: dir.to_path_buf(),
        source: e,
    })?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut out: Vec<(String, PathBuf)> = files.into_iter().map(|p| (file_name(&p), p)).collect();
    out.extend(
        listings
            .iter()
            .enumerate()
            .map(|(i, l)| (format!("listing{i}"), l.clone())),
    );
    Ok(out)
}

/// The content identity of an input (hex SHA-256); `base` is the experiment file's directory.
pub fn input_id(input: &Input, base: &Path) -> Result<String> {
    let mut h = Sha256::new();
    h.update(b"sassim-input-v1\0");
    h.update(input.kind.kind_name().as_bytes());
    h.update([0]);
    let files = match &input.kind {
        InputKind::Workload { name } => {
            // Built-in contents are part of the executable, hence of the simulator version.
            h.update(name.as_bytes());
            Vec::new()
        }
        InputKind::Spec { path, listing } => spec_files(path, listing.as_ref())?,
        InputKind::Trace {
            kernelslist,
            listings,
        } => trace_files(kernelslist, listings)?,
        InputKind::Program { path, args } => {
            let mut f = vec![("program".to_string(), path.clone())];
            for (i, a) in args.iter().enumerate() {
                h.update((a.len() as u64).to_le_bytes());
                h.update(a.as_bytes());
                // Programs run in the experiment file's directory: relative names are taken
                // from there.
                let p = base.join(a);
                if p.is_file() {
                    f.push((format!("arg{i}"), p.to_path_buf()));
                }
            }
            f
        }
    };
    for (name, p) in &files {
        add_file(&mut h, name, p)?;
    }
    Ok(hex(&h.finalize()))
}

/// The identity of a configuration (hex SHA-256, 16 digits): the GPU (a preset file by its
/// contents) and the overrides in order.
pub fn config_id(c: &Configuration) -> Result<String> {
    let mut h = Sha256::new();
    h.update(b"sassim-config-v1\0");
    let p = Path::new(&c.gpu);
    if (c.gpu.ends_with(".toml") || c.gpu.contains('/')) && p.is_file() {
        add_file(&mut h, "gpu", p)?;
    } else {
        h.update(c.gpu.to_ascii_lowercase().as_bytes());
    }
    for o in &c.overrides {
        h.update([0]);
        h.update(o.as_bytes());
    }
    Ok(hex(&h.finalize())[..16].to_string())
}

/// The key of one run (hex SHA-256, 24 digits).
pub fn run_key(sim_version: &str, config_id: &str, input_id: &str, run: &RunSpec) -> String {
    let mut h = Sha256::new();
    h.update(b"sassim-run-v1\0");
    for part in [sim_version, config_id, input_id] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.update(run.max_cycles.to_le_bytes());
    h.update(run.deadlock_cycles.unwrap_or(u64::MAX).to_le_bytes());
    h.update(run.cf.as_deref().unwrap_or("").as_bytes());
    hex(&h.finalize())[..24].to_string()
}
