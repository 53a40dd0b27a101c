//! The launch-spec file format (`workloads/<name>/<name>.toml`), as parsed by serde.
//!
//! See `docs/workloads.md` for the user-facing description. Every table denies unknown
//! keys so a typo is an error, never silently ignored.

use serde::Deserialize;
use std::fmt;

/// Element type of a buffer (and of the matching kernel pointer's pointee).
pub use sassim_isa::ElemType;

/// A number written in the spec: TOML integer or float.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            Num::Float(x) => write!(f, "{x}"),
        }
    }
}

/// One kernel parameter, in declaration order. Written as a one-key inline table:
/// `{ buffer = "a" }`, `{ u32 = 1024 }`, `{ f32 = 2.5 }`, ...
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Param {
    /// A pointer: the 64-bit device address of the named buffer.
    Buffer(String),
    U32(u32),
    S32(i32),
    F32(f32),
    U64(u64),
    F64(f64),
}

impl Param {
    /// (size, alignment) in bytes, following CUDA's natural alignment.
    pub fn size_align(&self) -> (usize, usize) {
        match self {
            Param::Buffer(_) | Param::U64(_) | Param::F64(_) => (8, 8),
            Param::U32(_) | Param::S32(_) | Param::F32(_) => (4, 4),
        }
    }
}

/// How a buffer's initial contents are produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InitKind {
    /// All zero bytes.
    Zeros,
    /// Every element equals `value`.
    Constant,
    /// Element k = `start + k * step`.
    Iota,
    /// Seeded uniform random in [`min`, `max`] via SplitMix64 (see `rng`).
    Random,
    /// Raw little-endian bytes or a `.npy` file at `path` (relative to the spec).
    File,
}

/// The `init = { kind = ..., ... }` table of a buffer. Which keys are allowed depends on
/// `kind`; this is checked after parsing with a message naming the buffer and key.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Init {
    pub kind: InitKind,
    pub value: Option<Num>,
    pub start: Option<Num>,
    pub step: Option<Num>,
    pub seed: Option<u64>,
    pub min: Option<Num>,
    pub max: Option<Num>,
    pub path: Option<String>,
}

/// A `[[buffer]]` table: one device allocation.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub elem: ElemType,
    pub count: usize,
    pub init: Init,
}

/// An `[[output]]` table: a buffer whose final contents are checked.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    pub buffer: String,
    /// Expected contents from a file (little-endian `.bin` or `.npy`, relative to the spec).
    /// When absent, the spec's `reference` computes them.
    pub file: Option<String>,
    /// Absolute tolerance for float elements (default 0).
    #[serde(default)]
    pub abs_tol: f64,
    /// Relative tolerance for float elements (default 0). An element passes when
    /// `|got - expected| <= abs_tol + rel_tol * |expected|`.
    #[serde(default)]
    pub rel_tol: f64,
}

/// The whole spec file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Workload name; defaults to the file stem.
    pub name: Option<String>,
    /// Free text.
    #[serde(default)]
    pub description: String,
    /// Kernel (function) name as in the cubin / SASS listing (unmangled).
    pub kernel: String,
    /// Grid dimensions, 1 to 3 entries (missing ones are 1).
    pub grid: Vec<u32>,
    /// Block dimensions, 1 to 3 entries (missing ones are 1).
    pub block: Vec<u32>,
    /// Dynamic shared memory bytes (default 0).
    #[serde(default)]
    pub shared_mem_bytes: u32,
    /// Host reference that computes expected outputs (see `reference::NAMES`).
    pub reference: Option<String>,
    /// Kernel parameters in order.
    #[serde(default)]
    pub params: Vec<Param>,
    /// Device buffers, in allocation order.
    #[serde(default, rename = "buffer")]
    pub buffers: Vec<BufferSpec>,
    /// Buffers to check after the run.
    #[serde(default, rename = "output")]
    pub outputs: Vec<OutputSpec>,
    /// Part of the default suite that `sassim run` without workload names simulates (default
    /// true). Long study kernels (flops, sgemm) say `false` and run when named.
    #[serde(default = "yes")]
    pub default_suite: bool,
}

fn yes() -> bool {
    true
}
