//! Typed element vectors, their little-endian encoding, the deterministic PRNG and the
//! buffer initialisers.

use crate::spec::{ElemType, Init, InitKind, Num};

/// SplitMix64 (Steele, Lea, Flood 2014), as in Java's `SplittableRandom`.
///
/// `state` starts at the seed; each call adds `0x9E3779B97F4A7C15` and mixes:
/// `z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
/// z ^ (z >> 31)` (wrapping multiplies). The sequence is frozen: changing it changes every
/// random input and every expected output.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform integer in `[min, max]` (inclusive): `min + ((r as u128 * span) >> 64)` with
    /// `span = max - min + 1` (multiply-shift, no rejection).
    pub fn int_in(&mut self, min: i128, max: i128) -> i128 {
        let span = (max - min + 1) as u128;
        let r = self.next() as u128;
        min + ((r * span) >> 64) as i128
    }

    /// Uniform float in `[0, 1)`: `(r >> 11) * 2^-53`.
    pub fn unit_f64(&mut self) -> f64 {
        // `r >> 11` < 2^53 converts exactly either way; as a signed integer it is one
        // instruction (`cvtsi2sd`) where an unsigned u64 needs a branchy sequence.
        ((self.next() >> 11) as i64) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// A typed vector of buffer elements.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    U32(Vec<u32>),
    S32(Vec<i32>),
    F32(Vec<f32>),
    U64(Vec<u64>),
    F64(Vec<f64>),
}

impl Values {
    pub fn zeros(elem: ElemType, count: usize) -> Values {
        match elem {
            ElemType::U32 => Values::U32(vec![0; count]),
            ElemType::S32 => Values::S32(vec![0; count]),
            ElemType::F32 => Values::F32(vec![0.0; count]),
            ElemType::U64 => Values::U64(vec![0; count]),
            ElemType::F64 => Values::F64(vec![0.0; count]),
        }
    }

    pub fn elem(&self) -> ElemType {
        match self {
            Values::U32(_) => ElemType::U32,
            Values::S32(_) => ElemType::S32,
            Values::F32(_) => ElemType::F32,
            Values::U64(_) => ElemType::U64,
            Values::F64(_) => ElemType::F64,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Values::U32(v) => v.len(),
            Values::S32(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::U64(v) => v.len(),
            Values::F64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Little-endian bytes, as the buffer lies in device memory.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        fn cat<const N: usize, T: Copy>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
            v.iter().flat_map(|&x| f(x)).collect()
        }
        match self {
            Values::U32(v) => cat(v, u32::to_le_bytes),
            Values::S32(v) => cat(v, i32::to_le_bytes),
            Values::F32(v) => cat(v, f32::to_le_bytes),
            Values::U64(v) => cat(v, u64::to_le_bytes),
            Values::F64(v) => cat(v, f64::to_le_bytes),
        }
    }

    /// Decodes little-endian bytes; `None` when the length is not a multiple of the element size.
    pub fn from_le_bytes(elem: ElemType, bytes: &[u8]) -> Option<Values> {
        if bytes.len() % elem.size() != 0 {
            return None;
        }
        // Exact chunks copied into arrays (no per-byte index checks): the decoding loop is a
        // plain copy the compiler vectorizes.
        fn dec<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
            bytes.chunks_exact(N).map(|c| f(le_array(c))).collect()
        }
        Some(match elem {
            ElemType::U32 => Values::U32(dec(bytes, u32::from_le_bytes)),
            ElemType::S32 => Values::S32(dec(bytes, i32::from_le_bytes)),
            ElemType::F32 => Values::F32(dec(bytes, f32::from_le_bytes)),
            ElemType::U64 => Values::U64(dec(bytes, u64::from_le_bytes)),
            ElemType::F64 => Values::F64(dec(bytes, f64::from_le_bytes)),
        })
    }

    /// Element `i` formatted for messages (floats also show their bit pattern).
    pub fn fmt_elem(&self, i: usize) -> String {
        match self {
            Values::U32(v) => format!("{} (0x{:08x})", v[i], v[i]),
            Values::S32(v) => format!("{}", v[i]),
            Values::F32(v) => format!("{:?} (0x{:08x})", v[i], v[i].to_bits()),
            Values::U64(v) => format!("{} (0x{:016x})", v[i], v[i]),
            Values::F64(v) => format!("{:?} (0x{:016x})", v[i], v[i].to_bits()),
        }
    }
}

fn int_range(elem: ElemType) -> (i128, i128) {
    match elem {
        ElemType::U32 => (0, u32::MAX as i128),
        ElemType::S32 => (i32::MIN as i128, i32::MAX as i128),
        ElemType::U64 => (0, u64::MAX as i128),
        _ => (i128::MIN, i128::MAX),
    }
}

/// `count` little-endian elements of `N` bytes, element `i` being `enc(i)`; `enc` is called
/// in order. The buffer's bytes are written once, straight from the generator (no typed
/// vector first).
fn fill<const N: usize>(count: usize, mut enc: impl FnMut(usize) -> [u8; N]) -> Vec<u8> {
    let mut out = vec![0u8; count * N];
    for (i, d) in out.chunks_exact_mut(N).enumerate() {
        d.copy_from_slice(&enc(i));
    }
    out
}

/// An element's bytes from an exact chunk of `N` (`chunks_exact(N)`).
#[inline]
pub(crate) fn le_array<const N: usize>(chunk: &[u8]) -> [u8; N] {
    let mut a = [0; N];
    a.copy_from_slice(chunk);
    a
}

/// The bytes of `count` elements of a float type, element `i` being `f(i)` (rounded to `f32`
/// for F32); `f` is called in order.
fn floats(elem: ElemType, count: usize, f: impl FnMut(usize) -> f64) -> Vec<u8> {
    let mut f = f;
    if elem == ElemType::F32 {
        fill(count, |i| (f(i) as f32).to_le_bytes())
    } else {
        fill(count, |i| f(i).to_le_bytes())
    }
}

/// The bytes of `count` elements, element `i` being the integer `f(i)` wrapped into the
/// element type (two's complement, modulo 2^bits; converted for float types); `f` is called
/// in order.
fn ints(elem: ElemType, count: usize, f: impl FnMut(usize) -> i128) -> Vec<u8> {
    let mut f = f;
    match elem {
        ElemType::U32 => fill(count, |i| (f(i) as u32).to_le_bytes()),
        ElemType::S32 => fill(count, |i| (f(i) as i32).to_le_bytes()),
        ElemType::U64 => fill(count, |i| (f(i) as u64).to_le_bytes()),
        ElemType::F32 => fill(count, |i| (f(i) as f32).to_le_bytes()),
        ElemType::F64 => fill(count, |i| (f(i) as f64).to_le_bytes()),
    }
}

/// Gets a required numeric key; for integer element types it must be an integer.
fn num(elem: ElemType, key: &str, v: Option<Num>) -> Result<Num, String> {
    let v = v.ok_or_else(|| format!("init: missing key `{key}`"))?;
    if !elem.is_float() && matches!(v, Num::Float(_)) {
        return Err(format!(
            "init.{key} = {v}: must be an integer for element type {elem}"
        ));
    }
    Ok(v)
}

fn int_of(v: Num) -> i128 {
    match v {
        Num::Int(i) => i as i128,
        Num::Float(f) => f as i128,
    }
}

/// Checks that only the keys of `init.kind` are present.
pub(crate) fn check_init_keys(init: &Init) -> Result<(), String> {
    let allowed: &[&str] = match init.kind {
        InitKind::Zeros => &[],
        InitKind::Constant => &["value"],
        InitKind::Iota => &["start", "step"],
        InitKind::Random => &["seed", "min", "max"],
        InitKind::File => &["path"],
    };
    let present = [
        ("value", init.value.is_some()),
        ("start", init.start.is_some()),
        ("step", init.step.is_some()),
        ("seed", init.seed.is_some()),
        ("min", init.min.is_some()),
        ("max", init.max.is_some()),
        ("path", init.path.is_some()),
    ];
    for (key, is) in present {
        if is && !allowed.contains(&key) {
            return Err(format!(
                "init: key `{key}` is not allowed with kind = \"{}\" (allowed: {})",
                kind_name(init.kind),
                if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                }
            ));
        }
    }
    Ok(())
}

pub(crate) fn kind_name(k: InitKind) -> &'static str {
    match k {
        InitKind::Zeros => "zeros",
        InitKind::Constant => "constant",
        InitKind::Iota => "iota",
        InitKind::Random => "random",
        InitKind::File => "file",
    }
}

/// Generates a buffer's little-endian bytes from a non-file initialiser. `File` is handled
/// by the caller.
pub(crate) fn generate(elem: ElemType, count: usize, init: &Init) -> Result<Vec<u8>, String> {
    check_init_keys(init)?;
    let (lo, hi) = int_range(elem);
    match init.kind {
        InitKind::Zeros => Ok(vec![0; count * elem.size()]),
        InitKind::Constant => {
            let v = num(elem, "value", init.value)?;
            if elem.is_float() {
                let x = v.as_f64();
                Ok(floats(elem, count, |_| x))
            } else {
                let x = int_of(v);
                if x < lo || x > hi {
                    return Err(format!("init.value = {x} is out of range for {elem}"));
                }
                Ok(ints(elem, count, |_| x))
            }
        }
        InitKind::Iota => {
            let start = num(elem, "start", init.start.or(Some(Num::Int(0))))?;
            let step = num(elem, "step", init.step.or(Some(Num::Int(1))))?;
            if elem.is_float() {
                let (s, d) = (start.as_f64(), step.as_f64());
                if !s.is_finite() || !d.is_finite() {
                    return Err(format!("init: need finite start and step, got {s} and {d}"));
                }
                // `k` < 2^32 converts exactly; as i64 in one instruction (see `unit_f64`).
                Ok(floats(elem, count, |k| s + (k as i64) as f64 * d))
            } else {
                let (s, d) = (int_of(start), int_of(step));
                Ok(ints(elem, count, |k| s.wrapping_add((k as i128).wrapping_mul(d))))
            }
        }
        InitKind::Random => {
            let seed = init.seed.ok_or_else(|| "init: missing key `seed`".to_string())?;
            let mut rng = SplitMix64::new(seed);
            if elem.is_float() {
                let min = num(elem, "min", init.min.or(Some(Num::Int(0))))?.as_f64();
                let max = num(elem, "max", init.max.or(Some(Num::Int(1))))?.as_f64();
                if min > max || !min.is_finite() || !max.is_finite() {
                    return Err(format!("init: need finite min <= max, got {min} > {max}"));
                }
                Ok(floats(elem, count, |_| min + (max - min) * rng.unit_f64()))
            } else {
                let min = int_of(num(elem, "min", init.min.or(Some(Num::Int(lo as i64))))?);
                let max = match init.max {
                    Some(m) => int_of(num(elem, "max", Some(m))?),
                    None => hi,
                };
                if min < lo || max > hi || min > max {
                    return Err(format!(
                        "init: need {lo} <= min <= max <= {hi} for {elem}, got min {min}, max {max}"
                    ));
                }
                Ok(ints(elem, count, |_| rng.int_in(min, max)))
            }
        }
        InitKind::File => Err("init: kind = \"file\" needs a spec directory".into()),
    }
}
