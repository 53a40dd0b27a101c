//! A loaded, validated workload: launch geometry, materialized input buffers, parameter
//! layout and expected outputs.

use crate::file::load_values;
use crate::reference::{self, RefCtx};
use crate::spec::{ElemType, InitKind, Param, Spec};
use crate::values::{self, Values};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// A spec that could not be read, parsed or validated. The message always starts with the
/// file (or built-in name) and names the offending key / buffer / parameter.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("{file}: cannot read spec: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

impl SpecError {
    /// The file (or `builtin:<name>`) the error is about.
    pub fn file(&self) -> &str {
        match self {
            SpecError::Io { file, .. } | SpecError::Parse { file, .. } | SpecError::Invalid { file, .. } => {
                file
            }
        }
    }
}

/// One device buffer with its initial contents.
#[derive(Debug, Clone, PartialEq)]
pub struct Buffer {
    pub name: String,
    pub elem: ElemType,
    /// Initial contents, little-endian (`count * elem.size()` bytes).
    pub bytes: Vec<u8>,
}

impl Buffer {
    pub fn count(&self) -> usize {
        self.bytes.len() / self.elem.size()
    }
    /// Decoded initial contents.
    pub fn values(&self) -> Values {
        Values::from_le_bytes(self.elem, &self.bytes).expect("buffer size is a multiple")
    }
}

/// The expected final contents of one output buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    pub buffer: String,
    pub elem: ElemType,
    /// Little-endian bytes.
    pub bytes: Vec<u8>,
    pub abs_tol: f64,
    pub rel_tol: f64,
}

/// Where a kernel parameter lies in the parameter block (offsets from the block's start;
/// add the arch's constant-bank base, see [`crate::param_cbank_offset`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSlot {
    pub offset: usize,
    pub size: usize,
}

/// Largest `grid.x` (CUDA: 2^31 - 1).
pub const MAX_GRID_X: u32 = (1 << 31) - 1;
/// Largest buffer in bytes (`count` x element size): 4 GiB. A simulation also refuses a
/// configuration and inputs whose estimated memory exceeds the machine's budget
/// (`sassim run --max-memory`).
pub const MAX_BUFFER_BYTES: u64 = 1 << 32;

impl Spec {
    /// Every buffer's size in bytes, checked against [`MAX_BUFFER_BYTES`] (no overflow);
    /// the error names the buffer, its `count` and the allowed range.
    pub fn check_sizes(&self) -> Result<u64, String> {
        let mut total = 0u64;
        for b in &self.buffers {
            let size = b.elem.size() as u64;
            let max = MAX_BUFFER_BYTES / size;
            if b.count as u64 > max {
                return Err(format!(
                    "buffer `{}`: `count` = {} is out of range; allowed 1..={max} ({} elements of {size} bytes, at most {MAX_BUFFER_BYTES} bytes)",
                    b.name, b.count, b.elem
                ));
            }
            total += b.count as u64 * size;
        }
        Ok(total)
    }
}

/// A parsed, validated workload with materialized inputs and expected outputs.
#[derive(Debug, Clone)]
pub struct Workload {
    /// File path or `builtin:<name>`, used in messages.
    pub origin: String,
    pub name: String,
    pub spec: Spec,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    buffers: Vec<Buffer>,
    expected: Vec<Expected>,
}

fn dims(key: &str, v: &[u32]) -> Result<[u32; 3], String> {
    if v.is_empty() || v.len() > 3 {
        return Err(format!("`{key}` must have 1 to 3 entries, has {}", v.len()));
    }
    let mut d = [1u32; 3];
    d[..v.len()].copy_from_slice(v);
    if d.contains(&0) {
        return Err(format!("`{key}` = {v:?}: every dimension must be >= 1"));
    }
    Ok(d)
}

impl Workload {
    /// Reads and loads a spec file. `file` inputs/outputs resolve relative to its directory.
    pub fn load(path: impl AsRef<Path>) -> Result<Workload, SpecError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Io {
            file: origin.clone(),
            source,
        })?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        Self::parse(&text, &origin, stem.as_deref(), path.parent())
    }

    /// [`Workload::load`] with a check of the parsed spec before its buffers are
    /// materialized (a memory budget: `check` returns the reason to refuse it).
    pub fn load_checked(
        path: impl AsRef<Path>,
        check: impl FnOnce(&Spec) -> Result<(), String>,
    ) -> Result<Workload, SpecError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Io {
            file: origin.clone(),
            source,
        })?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        Self::parse_checked(&text, &origin, stem.as_deref(), path.parent(), check)
    }

    /// Loads a spec from text. `origin` names it in errors, `default_name` is used when the
    /// spec has no `name`, `base_dir` resolves `file` paths (None: `file` is an error).
    pub fn parse(
        text: &str,
        origin: &str,
        default_name: Option<&str>,
        base_dir: Option<&Path>,
    ) -> Result<Workload, SpecError> {
        Self::parse_checked(text, origin, default_name, base_dir, |_| Ok(()))
    }

    /// [`Workload::parse`] with a check of the parsed spec before materialization.
    pub fn parse_checked(
        text: &str,
        origin: &str,
        default_name: Option<&str>,
        base_dir: Option<&Path>,
        check: impl FnOnce(&Spec) -> Result<(), String>,
    ) -> Result<Workload, SpecError> {
        let spec: Spec = toml::from_str(text).map_err(|e| SpecError::Parse {
            file: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        check(&spec).map_err(|message| SpecError::Invalid {
            file: origin.to_string(),
            message,
        })?;
        Self::from_spec(spec, origin, default_name, base_dir)
    }

    /// Validates a parsed spec and materializes buffers and expected outputs.
    pub fn from_spec(
        spec: Spec,
        origin: &str,
        default_name: Option<&str>,
        base_dir: Option<&Path>,
    ) -> Result<Workload, SpecError> {
        let invalid = |message: String| SpecError::Invalid {
            file: origin.to_string(),
            message,
        };
        let name = spec
            .name
            .clone()
            .or(default_name.map(str::to_string))
            .ok_or_else(|| invalid("missing field `name`".into()))?;
        if spec.kernel.trim().is_empty() {
            return Err(invalid("`kernel` must not be empty".into()));
        }
        let grid = dims("grid", &spec.grid).map_err(&invalid)?;
        let block = dims("block", &spec.block).map_err(&invalid)?;
        let threads: u64 = block.iter().map(|&d| d as u64).product();
        if threads > 1024 {
            return Err(invalid(format!(
                "`block` = {:?} has {threads} threads, more than 1024",
                spec.block
            )));
        }
        // CUDA's grid limits: x < 2^31, y and z < 2^16; the CTA count must fit a u32.
        let ctas: u64 = grid.iter().map(|&d| d as u64).product();
        if grid[0] > MAX_GRID_X || grid[1] > 65535 || grid[2] > 65535 || ctas > u64::from(u32::MAX) {
            return Err(invalid(format!(
                "`grid` = {:?} ({ctas} blocks): allowed x 1..={MAX_GRID_X}, y and z 1..=65535, at most {} blocks",
                spec.grid,
                u32::MAX
            )));
        }
        spec.check_sizes().map_err(&invalid)?;

        let resolve = |p: &str| -> Result<PathBuf, String> {
            match base_dir {
                Some(d) => Ok(d.join(p)),
                None => Err(format!("`{p}`: file paths need a spec on disk")),
            }
        };

        // Buffers.
        let mut seen = HashSet::new();
        let mut buffers = Vec::new();
        for b in &spec.buffers {
            let ctx = |m: String| invalid(format!("buffer `{}`: {m}", b.name));
            if b.name.is_empty() {
                return Err(invalid("buffer with an empty `name`".into()));
            }
            if !seen.insert(b.name.as_str()) {
                return Err(ctx("duplicate buffer name".into()));
            }
            if b.count == 0 {
                return Err(ctx("`count` must be >= 1".into()));
            }
            // Generated values are written straight into the buffer's bytes (the one copy
            // kept); a reference below decodes its own typed copy.
            let bytes = if b.init.kind == InitKind::File {
                values::check_init_keys(&b.init).map_err(&ctx)?;
                let p = b
                    .init
                    .path
                    .as_deref()
                    .ok_or_else(|| ctx("init: missing key `path`".into()))?;
                load_values(&resolve(p).map_err(&ctx)?, b.elem, Some(b.count))
                    .map_err(&ctx)?
                    .to_le_bytes()
            } else {
                values::generate(b.elem, b.count, &b.init).map_err(&ctx)?
            };
            buffers.push(Buffer {
                name: b.name.clone(),
                elem: b.elem,
                bytes,
            });
        }

        // Parameters.
        for (i, p) in spec.params.iter().enumerate() {
            if let Param::Buffer(n) = p {
                if !seen.contains(n.as_str()) {
                    return Err(invalid(format!(
                        "params[{i}]: buffer `{n}` is not declared in a [[buffer]] table"
                    )));
                }
            }
        }

        // Reference.
        if let Some(r) = &spec.reference {
            if !reference::NAMES.contains(&r.as_str()) {
                return Err(invalid(format!(
                    "`reference` = \"{r}\" is unknown (known: {})",
                    reference::NAMES.join(", ")
                )));
            }
        }
        let needs_ref = spec.outputs.iter().any(|o| o.file.is_none());
        let mut ref_mem = match (&spec.reference, needs_ref) {
            (Some(r), true) => {
                // The reference's device memory: a typed copy of every buffer, updated in
                // place; its output buffers become the expected contents.
                let mem = buffers
                    .iter()
                    .map(|b| (b.name.clone(), b.values()))
                    .collect::<HashMap<_, _>>();
                let mut ctx = RefCtx {
                    grid,
                    block,
                    shared_mem_bytes: spec.shared_mem_bytes,
                    params: &spec.params,
                    mem,
                };
                reference::run(r, &mut ctx).map_err(|m| invalid(format!("reference `{r}`: {m}")))?;
                Some(ctx.mem)
            }
            (None, true) => {
                return Err(invalid(
                    "an [[output]] without `file` needs a top-level `reference`".into(),
                ))
            }
            _ => None,
        };

        // Outputs.
        let mut expected = Vec::new();
        let mut out_seen = HashSet::new();
        for o in &spec.outputs {
            let ctx = |m: String| invalid(format!("output `{}`: {m}", o.buffer));
            let Some(buf) = buffers.iter().find(|b| b.name == o.buffer) else {
                return Err(ctx("no [[buffer]] with this name".into()));
            };
            if !out_seen.insert(o.buffer.as_str()) {
                return Err(ctx("listed twice".into()));
            }
            for (k, v) in [("abs_tol", o.abs_tol), ("rel_tol", o.rel_tol)] {
                if !(v >= 0.0 && v.is_finite()) {
                    return Err(ctx(format!("`{k}` = {v} must be finite and >= 0")));
                }
                if v != 0.0 && !buf.elem.is_float() {
                    return Err(ctx(format!("`{k}` applies to f32/f64 buffers only")));
                }
            }
            // Each output is listed once (checked above): its reference buffer is taken.
            let vals = match (&o.file, &mut ref_mem) {
                (Some(f), _) => {
                    load_values(&resolve(f).map_err(&ctx)?, buf.elem, Some(buf.count())).map_err(&ctx)?
                }
                (None, Some(m)) => m
                    .remove(&o.buffer)
                    .ok_or_else(|| ctx("missing from the reference's memory".into()))?,
                (None, None) => unreachable!("checked above"),
            };
            expected.push(Expected {
                buffer: o.buffer.clone(),
                elem: buf.elem,
                bytes: vals.to_le_bytes(),
                abs_tol: o.abs_tol,
                rel_tol: o.rel_tol,
            });
        }

        Ok(Workload {
            origin: origin.to_string(),
            name,
            spec,
            grid,
            block,
            buffers,
            expected,
        })
    }

    /// Kernel (function) name.
    pub fn kernel(&self) -> &str {
        &self.spec.kernel
    }

    /// Dynamic shared memory bytes.
    pub fn shared_mem_bytes(&self) -> u32 {
        self.spec.shared_mem_bytes
    }

    /// Every buffer with its initial contents, in spec order (allocate them in this order).
    pub fn buffers(&self) -> &[Buffer] {
        &self.buffers
    }

    /// One buffer by name.
    pub fn buffer(&self, name: &str) -> Option<&Buffer> {
        self.buffers.iter().find(|b| b.name == name)
    }

    /// Expected final contents of the output buffers.
    pub fn expected(&self) -> &[Expected] {
        &self.expected
    }

    /// Offsets and sizes of the parameters (CUDA natural alignment: pointers and 64-bit
    /// scalars at multiples of 8, 32-bit scalars at multiples of 4).
    pub fn param_layout(&self) -> Vec<ParamSlot> {
        let mut off: usize = 0;
        self.spec
            .params
            .iter()
            .map(|p| {
                let (size, align) = p.size_align();
                off = off.div_ceil(align) * align;
                let slot = ParamSlot { offset: off, size };
                off += size;
                slot
            })
            .collect()
    }

    /// The parameter block's bytes (little-endian), given each buffer's device address.
    /// Padding bytes are zero; the length is the end of the last parameter.
    pub fn param_bytes(&self, addr_of: impl Fn(&str) -> u64) -> Vec<u8> {
        let layout = self.param_layout();
        let len = layout.last().map_or(0, |s| s.offset + s.size);
        let mut out = vec![0u8; len];
        for (p, s) in self.spec.params.iter().zip(&layout) {
            let bytes: Vec<u8> = match p {
                Param::Buffer(n) => addr_of(n).to_le_bytes().to_vec(),
                Param::U32(v) => v.to_le_bytes().to_vec(),
                Param::S32(v) => v.to_le_bytes().to_vec(),
                Param::F32(v) => v.to_le_bytes().to_vec(),
                Param::U64(v) => v.to_le_bytes().to_vec(),
                Param::F64(v) => v.to_le_bytes().to_vec(),
            };
            out[s.offset..s.offset + s.size].copy_from_slice(&bytes);
        }
        out
    }

    /// Compares the final buffer contents (by name, little-endian bytes) with the expected
    /// outputs. Buffers not listed as outputs are ignored.
    pub fn check(&self, outputs: &HashMap<String, Vec<u8>>) -> Result<CheckReport, MismatchError> {
        self.check_with(|name| outputs.get(name).map(Vec::as_slice))
    }

    /// [`Workload::check`] with the final contents of an output buffer given by `output`
    /// (by name; `None`: missing), e.g. read in place from device memory without a copy.
    pub fn check_with<'a>(
        &self,
        output: impl Fn(&str) -> Option<&'a [u8]>,
    ) -> Result<CheckReport, MismatchError> {
        let mut report = CheckReport {
            workload: self.name.clone(),
            buffers: Vec::new(),
        };
        for e in &self.expected {
            let err = |kind| MismatchError {
                workload: self.name.clone(),
                buffer: e.buffer.clone(),
                kind: Box::new(kind),
            };
            let got = output(&e.buffer).ok_or_else(|| err(MismatchKind::Missing))?;
            if got.len() != e.bytes.len() {
                return Err(err(MismatchKind::Size {
                    expected_bytes: e.bytes.len(),
                    got_bytes: got.len(),
                }));
            }
            let elements = e.bytes.len() / e.elem.size();
            let cmp = compare(e.elem, &e.bytes, got, e.abs_tol, e.rel_tol);
            if let Some(first) = cmp.first_bad {
                // Decoded only to describe the mismatch.
                let want = Values::from_le_bytes(e.elem, &e.bytes).expect("sized");
                let have = Values::from_le_bytes(e.elem, got).expect("same size");
                return Err(err(MismatchKind::Value {
                    index: first,
                    expected: want.fmt_elem(first),
                    got: have.fmt_elem(first),
                    mismatches: cmp.bad,
                    elements,
                    abs_tol: e.abs_tol,
                    rel_tol: e.rel_tol,
                }));
            }
            report.buffers.push(BufferCheck {
                buffer: e.buffer.clone(),
                elements,
                max_abs_err: cmp.max_abs,
            });
        }
        Ok(report)
    }
}

struct Cmp {
    first_bad: Option<usize>,
    bad: usize,
    max_abs: f64,
}

/// Compares expected and final little-endian bytes (the same length) element by element.
fn compare(elem: ElemType, want: &[u8], have: &[u8], abs: f64, rel: f64) -> Cmp {
    let mut c = Cmp {
        first_bad: None,
        bad: 0,
        max_abs: 0.0,
    };
    // Identical bytes are identical elements: every one matches with difference 0 (equal
    // floats, NaNs with the same bits, equal integers), as the loops below would find.
    if want == have {
        return c;
    }
    let mut note = |i: usize, ok: bool, diff: f64| {
        if !ok {
            c.bad += 1;
            c.first_bad.get_or_insert(i);
        } else if diff > c.max_abs {
            c.max_abs = diff;
        }
    };
    let fcmp = |e: f64, g: f64| -> (bool, f64) {
        if e.is_nan() || g.is_nan() {
            return (e.is_nan() && g.is_nan(), 0.0);
        }
        if e == g {
            return (true, 0.0);
        }
        let d = (g - e).abs();
        (d <= abs + rel * e.abs(), d)
    };
    match elem {
        ElemType::F32 => pairs(want, have, |i, e, g| {
            let (ok, d) = fcmp(f32::from_le_bytes(e) as f64, f32::from_le_bytes(g) as f64);
            note(i, ok, d)
        }),
        ElemType::F64 => pairs(want, have, |i, e, g| {
            let (ok, d) = fcmp(f64::from_le_bytes(e), f64::from_le_bytes(g));
            note(i, ok, d)
        }),
        // Integers are equal exactly when their bytes are.
        ElemType::U32 | ElemType::S32 => pairs::<4>(want, have, |i, e, g| note(i, e == g, 0.0)),
        ElemType::U64 => pairs::<8>(want, have, |i, e, g| note(i, e == g, 0.0)),
    }
    c
}

/// Calls `f(i, want[i], have[i])` for each element `i` of `N` bytes.
fn pairs<const N: usize>(want: &[u8], have: &[u8], mut f: impl FnMut(usize, [u8; N], [u8; N])) {
    let (w, h) = (want.chunks_exact(N), have.chunks_exact(N));
    for (i, (e, g)) in w.zip(h).enumerate() {
        f(i, values::le_array(e), values::le_array(g))
    }
}

/// The result of a successful [`Workload::check`].
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    pub workload: String,
    pub buffers: Vec<BufferCheck>,
}

/// One output buffer that matched.
#[derive(Debug, Clone, PartialEq)]
pub struct BufferCheck {
    pub buffer: String,
    pub elements: usize,
    /// Largest |got - expected| over the elements (0 for integer buffers).
    pub max_abs_err: f64,
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: OK", self.workload)?;
        for b in &self.buffers {
            write!(
                f,
                "; `{}` {} elements match (max abs err {:e})",
                b.buffer, b.elements, b.max_abs_err
            )?;
        }
        Ok(())
    }
}

/// An output buffer that does not match.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{workload}: output buffer `{buffer}`: {kind}")]
pub struct MismatchError {
    pub workload: String,
    pub buffer: String,
    pub kind: Box<MismatchKind>,
}

/// What is wrong with an output buffer.
#[derive(Debug, Clone, PartialEq)]
pub enum MismatchKind {
    /// Not in the map given to `check`.
    Missing,
    /// Wrong byte length.
    Size { expected_bytes: usize, got_bytes: usize },
    /// Values differ; `index` is the first mismatching element.
    Value {
        index: usize,
        expected: String,
        got: String,
        mismatches: usize,
        elements: usize,
        abs_tol: f64,
        rel_tol: f64,
    },
}

impl fmt::Display for MismatchKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MismatchKind::Missing => write!(f, "missing from the outputs"),
            MismatchKind::Size {
                expected_bytes,
                got_bytes,
            } => write!(f, "expected {expected_bytes} bytes, got {got_bytes}"),
            MismatchKind::Value {
                index,
                expected,
                got,
                mismatches,
                elements,
                abs_tol,
                rel_tol,
            } => write!(
                f,
                "MISMATCH at index {index}: expected {expected}, got {got} \
                 ({mismatches} of {elements} elements differ; abs_tol {abs_tol}, rel_tol {rel_tol})"
            ),
        }
    }
}
