//! Kernel header (`-key = value` lines and the `#traces format` line): read by the text
//! parser, written back by the writers (and by `sassim-functional`'s tracer).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;

use crate::error::{Result, TraceError};

/// Instruction-line dialect, derived from the tracer version and the
/// `#traces format` comment line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dialect {
    /// `-accelsim tracer version` (0 when missing; `1.2` reads as 1).
    pub version: u32,
    /// Lines start with `tb_x tb_y tb_z warpid_tb` (version < 3).
    pub block_prefix: bool,
    /// Lines start with `line_num` (`-enable lineinfo = 1`).
    pub lineinfo: bool,
    /// Immediates after the address block: 0 (≤ v4), 1 (upstream v5),
    /// 2 (Hopper-dialect v5 and v6).
    pub immediates: u8,
    /// `Val`/`NoVal` register-value block (v6).
    pub values: bool,
    /// Hopper extras (`GMMA` commit-group field).
    pub hopper: bool,
}

/// Parsed kernel header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelHeader {
    /// Mangled kernel name (`-kernel name`).
    pub name: String,
    pub kernel_id: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Static + dynamic shared memory bytes (`-shmem`).
    pub shmem: u32,
    pub nregs: u32,
    /// `-binary version` (61, 70, 80, 86, 90 …), 0 when missing.
    pub binary_version: u32,
    pub cuda_stream_id: u64,
    pub shmem_base_addr: u64,
    pub local_mem_base_addr: u64,
    /// `-nvbit version` text (trimmed).
    pub nvbit_version: String,
    /// `-accelsim tracer version` integer part (0 when missing).
    pub tracer_version: u32,
    /// `-enable lineinfo`.
    pub lineinfo: bool,
    /// The `#traces format = …` line, verbatim ("" when absent).
    pub format_line: String,
    /// Header lines with keys this reader does not know: `(key, value)`.
    pub extra: Vec<(String, String)>,
    /// The whole header text verbatim (every line up to and including the
    /// `#traces format` line). Binary traces store it so that a round trip
    /// keeps the header intact.
    pub raw: String,
}

impl KernelHeader {
    /// Threads per block.
    pub fn threads_per_block(&self) -> u64 {
        self.block.iter().map(|&d| u64::from(d)).product()
    }

    /// Warps per block (`ceil(threads/32)`).
    pub fn warps_per_block(&self) -> u64 {
        self.threads_per_block().div_ceil(32)
    }

    /// Blocks in the grid.
    pub fn num_blocks(&self) -> u64 {
        self.grid.iter().map(|&d| u64::from(d)).product()
    }

    /// The instruction-line dialect.
    pub fn dialect(&self) -> Dialect {
        let v = self.tracer_version;
        let fl = &self.format_line;
        let (immediates, values) = if fl.is_empty() {
            match v {
                0..=4 => (0, false),
                5 => (1, false),
                _ => (2, true),
            }
        } else {
            let imm = if fl.contains("immediate2") {
                2
            } else if fl.contains("immediate") {
                1
            } else {
                0
            };
            (imm, fl.contains("Val") || v >= 6)
        };
        let immediates = if values { immediates.max(2) } else { immediates };
        Dialect {
            version: v,
            block_prefix: v < 3,
            lineinfo: self.lineinfo,
            immediates,
            values,
            hopper: immediates == 2,
        }
    }

    /// The header text, every line up to and including the `#traces format` line: `raw`
    /// when there is one (a header read from a trace), else written from the fields as the
    /// tracer prints them (the known `-key = value` lines in its order, then `extra`, a
    /// blank line and `format_line` when there is one), so that reading it back gives the
    /// same fields.
    pub fn text(&self) -> Cow<'_, str> {
        if !self.raw.is_empty() {
            return Cow::Borrowed(&self.raw);
        }
        let mut s = String::new();
        let _ = writeln!(s, "-kernel name = {}", self.name);
        let _ = writeln!(s, "-kernel id = {}", self.kernel_id);
        let [gx, gy, gz] = self.grid;
        let [bx, by, bz] = self.block;
        let _ = writeln!(s, "-grid dim = ({gx},{gy},{gz})");
        let _ = writeln!(s, "-block dim = ({bx},{by},{bz})");
        let _ = writeln!(s, "-shmem = {}", self.shmem);
        let _ = writeln!(s, "-nregs = {}", self.nregs);
        let _ = writeln!(s, "-binary version = {}", self.binary_version);
        let _ = writeln!(s, "-cuda stream id = {}", self.cuda_stream_id);
        let _ = writeln!(s, "-shmem base_addr = 0x{:016x}", self.shmem_base_addr);
        let _ = writeln!(s, "-local mem base_addr = 0x{:016x}", self.local_mem_base_addr);
        let _ = writeln!(s, "-nvbit version = {}", self.nvbit_version);
        let _ = writeln!(s, "-accelsim tracer version = {}", self.tracer_version);
        let _ = writeln!(s, "-enable lineinfo = {}", u8::from(self.lineinfo));
        for (k, v) in &self.extra {
            let _ = writeln!(s, "-{k} = {v}");
        }
        s.push('\n');
        if !self.format_line.is_empty() {
            let _ = writeln!(s, "{}", self.format_line);
        }
        Cow::Owned(s)
    }

    /// Parse one header line (`-key = value`; other lines are ignored, as
    /// upstream does) and append it to `raw`.
    pub(crate) fn parse_line(&mut self, path: &Path, lineno: u64, line: &str) -> Result<()> {
        self.raw.push_str(line);
        self.raw.push('\n');
        let t = line.trim();
        let Some(body) = t.strip_prefix('-') else {
            return Ok(()); // blank or unknown line: ignored, as upstream does
        };
        let Some(eq) = body.find('=') else {
            return Err(perr(
                path,
                lineno,
                "header",
                format!("expected `-key = value`, got `{t}`"),
            ));
        };
        let key = body[..eq].trim();
        let val = body[eq + 1..].trim();
        let num = |field: &'static str| -> Result<u64> {
            parse_dec_or_hex(val).ok_or_else(|| perr(path, lineno, field, format!("bad number `{val}`")))
        };
        let num32 = |field: &'static str| -> Result<u32> {
            u32::try_from(num(field)?).map_err(|_| perr(path, lineno, field, format!("`{val}` out of range")))
        };
        match key {
            "kernel name" => self.name = val.to_string(),
            "kernel id" => self.kernel_id = num32("kernel id")?,
            "grid dim" => {
                self.grid = parse_dim3(val).ok_or_else(|| {
                    perr(
                        path,
                        lineno,
                        "grid dim",
                        format!("expected `(x,y,z)`, got `{val}`"),
                    )
                })?
            }
            "block dim" => {
                self.block = parse_dim3(val).ok_or_else(|| {
                    perr(
                        path,
                        lineno,
                        "block dim",
                        format!("expected `(x,y,z)`, got `{val}`"),
                    )
                })?
            }
            "shmem" => self.shmem = num32("shmem")?,
            "nregs" => self.nregs = num32("nregs")?,
            "binary version" => self.binary_version = num32("binary version")?,
            "cuda stream id" => self.cuda_stream_id = num("cuda stream id")?,
            "shmem base_addr" => self.shmem_base_addr = num("shmem base_addr")?,
            "local mem base_addr" => self.local_mem_base_addr = num("local mem base_addr")?,
            "nvbit version" => self.nvbit_version = val.to_string(),
            "accelsim tracer version" => {
                let int = val.split('.').next().unwrap_or("");
                self.tracer_version = int.parse().map_err(|_| {
                    perr(
                        path,
                        lineno,
                        "accelsim tracer version",
                        format!("bad version `{val}`"),
                    )
                })?;
            }
            "enable lineinfo" => self.lineinfo = num("enable lineinfo")? != 0,
            _ => self.extra.push((key.to_string(), val.to_string())),
        }
        Ok(())
    }

    pub(crate) fn finish(&self, path: &Path, lineno: u64) -> Result<()> {
        if self.name.is_empty() {
            return Err(perr(
                path,
                lineno,
                "kernel name",
                "missing `-kernel name` header line".into(),
            ));
        }
        if self.block.contains(&0) {
            return Err(perr(
                path,
                lineno,
                "block dim",
                "missing or zero `-block dim`".into(),
            ));
        }
        if self.grid.contains(&0) {
            return Err(perr(
                path,
                lineno,
                "grid dim",
                "missing or zero `-grid dim`".into(),
            ));
        }
        // CUDA's limits: a block has at most 1024 threads; grid.x < 2^31, y and z < 2^16.
        if self.threads_per_block() > 1024 {
            return Err(perr(
                path,
                lineno,
                "block dim",
                format!(
                    "({},{},{}) is {} threads; a block has 1..=1024",
                    self.block[0],
                    self.block[1],
                    self.block[2],
                    self.threads_per_block()
                ),
            ));
        }
        if self.grid[0] > (1 << 31) - 1 || self.grid[1] > 65535 || self.grid[2] > 65535 {
            return Err(perr(
                path,
                lineno,
                "grid dim",
                format!(
                    "({},{},{}): allowed x 1..=2147483647, y and z 1..=65535",
                    self.grid[0], self.grid[1], self.grid[2]
                ),
            ));
        }
        Ok(())
    }
}

fn perr(path: &Path, line: u64, field: &'static str, msg: String) -> TraceError {
    TraceError::Parse {
        path: path.to_path_buf(),
        line,
        field,
        msg,
    }
}

fn parse_dec_or_hex(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

fn parse_dim3(s: &str) -> Option<[u32; 3]> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut it = inner.split(',').map(|p| p.trim().parse::<u32>());
    let d = [it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?];
    if it.next().is_some() {
        return None;
    }
    Some(d)
}
