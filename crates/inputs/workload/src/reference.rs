//! Host reference implementations of the built-in kernels.
//!
//! A reference works like the kernel: it sees the launch geometry and the parameter list
//! (buffers by position, scalars by value) and updates device memory. The expected outputs are
//! the final contents of the spec's `[[output]]` buffers. Each reference reproduces the kernel's
//! floating-point operation order (FMA contraction, tree order) so results are bit-exact.

use crate::spec::{ElemType, Param};
use crate::values::Values;
use std::collections::HashMap;

/// Names of the built-in host references, usable as `reference = "..."` in a spec.
pub const NAMES: &[&str] = &[
    "vecadd",
    "saxpy",
    "reduce",
    "matmul",
    "histogram",
    "divergent",
    "spinlock",
    "shfl_reduce",
    "flops",
    "sgemm",
];

/// Launch geometry, parameters and device memory seen by a reference.
pub struct RefCtx<'a> {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem_bytes: u32,
    pub params: &'a [Param],
    /// Buffer contents by name.
    pub mem: HashMap<String, Values>,
}

type R<T> = Result<T, String>;

macro_rules! buf_accessors {
    ($get:ident, $take:ident, $variant:ident, $t:ty) => {
        /// The buffer bound to parameter `i`, which must have this element type.
        pub fn $get(&self, i: usize) -> R<&[$t]> {
            let name = self.buf_name(i)?;
            match &self.mem[name] {
                Values::$variant(v) => Ok(v),
                other => Err(self.type_err(i, ElemType::$variant, other.elem())),
            }
        }
        /// Mutable access to the buffer bound to parameter `i`.
        pub fn $take(&mut self, i: usize) -> R<&mut Vec<$t>> {
            let name = self.buf_name(i)?.to_string();
            let found = self.mem[&name].elem();
            if found != ElemType::$variant {
                return Err(self.type_err(i, ElemType::$variant, found));
            }
            match self.mem.get_mut(&name) {
                Some(Values::$variant(v)) => Ok(v),
                _ => unreachable!("element type checked above"),
            }
        }
    };
}

impl RefCtx<'_> {
    /// Total threads in the launch.
    pub fn threads(&self) -> u64 {
        self.grid.iter().chain(&self.block).map(|&d| d as u64).product()
    }

    fn buf_name(&self, i: usize) -> R<&str> {
        match self.params.get(i) {
            Some(Param::Buffer(n)) => Ok(n),
            Some(p) => Err(format!("parameter {i} must be a buffer, found {p:?}")),
            None => Err(format!(
                "needs at least {} parameters, the spec has {}",
                i + 1,
                self.params.len()
            )),
        }
    }

    fn type_err(&self, i: usize, want: ElemType, got: ElemType) -> String {
        format!(
            "parameter {i} (buffer `{}`) must have type {want}, it has {got}",
            self.buf_name(i).unwrap_or("?")
        )
    }

    buf_accessors!(u32s, u32s_mut, U32, u32);
    buf_accessors!(s32s, s32s_mut, S32, i32);
    buf_accessors!(f32s, f32s_mut, F32, f32);

    /// Scalar parameter `i` as u32.
    pub fn u32_arg(&self, i: usize) -> R<u32> {
        match self.params.get(i) {
            Some(Param::U32(v)) => Ok(*v),
            p => Err(format!("parameter {i} must be {{ u32 = ... }}, found {p:?}")),
        }
    }

    /// Scalar parameter `i` as f32.
    pub fn f32_arg(&self, i: usize) -> R<f32> {
        match self.params.get(i) {
            Some(Param::F32(v)) => Ok(*v),
            p => Err(format!("parameter {i} must be {{ f32 = ... }}, found {p:?}")),
        }
    }

    fn expect_params(&self, n: usize) -> R<()> {
        if self.params.len() != n {
            return Err(format!(
                "expects {n} parameters, the spec has {}",
                self.params.len()
            ));
        }
        Ok(())
    }

    fn need_len(&self, i: usize, have: usize, need: u64) -> R<()> {
        if (have as u64) < need {
            return Err(format!(
                "parameter {i} (buffer `{}`) has {have} elements, the kernel accesses {need}",
                self.buf_name(i).unwrap_or("?")
            ));
        }
        Ok(())
    }

    fn one_d(&self) -> R<()> {
        if self.grid[1] * self.grid[2] * self.block[1] * self.block[2] != 1 {
            return Err("expects a 1-D grid and block".into());
        }
        Ok(())
    }
}

/// Runs the named reference. Errors describe what does not fit (parameter kinds, sizes).
pub fn run(name: &str, ctx: &mut RefCtx) -> R<()> {
    match name {
        "vecadd" => vecadd(ctx),
        "saxpy" => saxpy(ctx),
        "reduce" => reduce(ctx),
        "matmul" => matmul(ctx),
        "histogram" => histogram(ctx),
        "divergent" => divergent(ctx),
        "spinlock" => spinlock(ctx),
        "shfl_reduce" => shfl_reduce(ctx),
        "flops" => flops(ctx),
        "sgemm" => sgemm(ctx),
        _ => Err(format!(
            "unknown reference `{name}` (known: {})",
            NAMES.join(", ")
        )),
    }
}

/// `vecadd(const float* a, const float* b, float* c, u32 n)`: `c[i] = a[i] + b[i]` for
/// `i < min(n, threads)`.
pub fn vecadd(ctx: &mut RefCtx) -> R<()> {
    ctx.expect_params(4)?;
    ctx.one_d()?;
    let n = (ctx.u32_arg(3)? as u64).min(ctx.threads()) as usize;
    let (a, b) = (ctx.f32s(0)?, ctx.f32s(1)?);
    ctx.need_len(0, a.len(), n as u64)?;
    ctx.need_len(1, b.len(), n as u64)?;
    // The sums first (the inputs borrowed, not copied; `c` may be one of them), then
    // stored; zipped slices need no index checks, so both loops vectorize.
    let sum: Vec<f32> = a[..n].iter().zip(&b[..n]).map(|(x, y)| x + y).collect();
    let c = ctx.f32s_mut(2)?;
    let cl = c.len();
    if cl < n {
        return Err(format!("parameter 2 has {cl} elements, the kernel writes {n}"));
    }
    c[..n].copy_from_slice(&sum);
    Ok(())
}

/// `saxpy(u32 n, float a, const float* x, float* y)`: `y[i] = fma(a, x[i], y[i])` for `i < n`
/// (grid-stride loop; ptxas contracts `a * x + y` to one FFMA).
pub fn saxpy(ctx: &mut RefCtx) -> R<()> {
    ctx.expect_params(4)?;
    let n = ctx.u32_arg(0)? as usize;
    let a = ctx.f32_arg(1)?;
    let x = ctx.f32s(2)?.to_vec();
    ctx.need_len(2, x.len(), n as u64)?;
    let y = ctx.f32s_mut(3)?;
    let yl = y.len();
    if yl < n {
        return Err(format!("parameter 3 has {yl} elements, the kernel accesses {n}"));
    }
    for i in 0..n {
        y[i] = a.mul_add(x[i], y[i]);
    }
    Ok(())
}

/// `reduce(const float* in, float* out, u32 n)` with `blockDim.x` floats of dynamic shared memory:
/// `out[b]` = tree sum of block `b`'s elements (`s = blockDim/2 .. 1: s[t] += s[t + s]`).
pub fn reduce(ctx: &mut RefCtx) -> R<()> {
    ctx.expect_params(3)?;
    ctx.one_d()?;
    let bd = ctx.block[0] as usize;
    if !bd.is_power_of_two() {
        return Err(format!("block.x = {bd} must be a power of two"));
    }
    if (ctx.shared_mem_bytes as usize) < bd * 4 {
        return Err(format!(
            "shared_mem_bytes = {} is less than 4 * block.x = {}",
            ctx.shared_mem_bytes,
            bd * 4
        ));
    }
    let n = ctx.u32_arg(2)? as usize;
    let input = ctx.f32s(0)?.to_vec();
    let blocks = ctx.grid[0] as usize;
    ctx.need_len(0, input.len(), n.min(blocks * bd) as u64)?;
    let out = ctx.f32s_mut(1)?;
    if out.len() < blocks {
        return Err(format!(
            "parameter 1 has {} elements, the kernel writes {blocks}",
            out.len()
        ));
    }
    for (b, o) in out.iter_mut().enumerate().take(blocks) {
        let mut s: Vec<f32> = (0..bd)
            .map(|t| {
                let i = b * bd + t;
                if i < n {
                    input[i]
                } else {
                    0.0
                }
            })
            .collect();
        let mut stride = bd / 2;
        while stride > 0 {
            for t in 0..stride {
                s[t] += s[t + stride];
            }
            stride /= 2;
        }
        *o = s[0];
    }
    Ok(())
}

/// `matmul(const float* A, const float* B, float* C, u32 n)`, 16x16 tiles, block (16,16):
/// `C[r][c] = fma(A[r][k], B[k][c], acc)` for k = 0 .. n-1 in order, for every launched (r, c).
pub fn matmul(ctx: &mut RefCtx) -> R<()> {
    const TILE: usize = 16;
    ctx.expect_params(4)?;
    if ctx.block != [16, 16, 1] || ctx.grid[2] != 1 {
        return Err("expects block = [16, 16, 1] and grid.z = 1".into());
    }
    let n = ctx.u32_arg(3)? as usize;
    if n % TILE != 0 {
        return Err(format!("n = {n} must be a multiple of {TILE}"));
    }
    let (rows, cols) = (ctx.grid[1] as usize * TILE, ctx.grid[0] as usize * TILE);
    if rows > n || cols > n {
        return Err(format!("grid covers {rows}x{cols}, more than n x n = {n}x{n}"));
    }
    // The host computes rows x cols x n multiply-adds: bounded so a spec cannot make the
    // check run for long (MAX_REFERENCE_FMAS).
    let work = (rows as u64) * (cols as u64) * (n as u64);
    if work > MAX_REFERENCE_FMAS {
        return Err(format!(
            "{rows}x{cols} outputs of length {n} need {work} multiply-adds on the host, more than {MAX_REFERENCE_FMAS}; reduce n or the grid"
        ));
    }
    let a = ctx.f32s(0)?.to_vec();
    let b = ctx.f32s(1)?.to_vec();
    ctx.need_len(0, a.len(), (n as u64) * (n as u64))?;
    ctx.need_len(1, b.len(), (n * n) as u64)?;
    let c = ctx.f32s_mut(2)?;
    if (c.len() as u64) < (n as u64) * (n as u64) {
        return Err(format!(
            "parameter 2 has {} elements, need {}",
            c.len(),
            n as u64 * n as u64
        ));
    }
    for r in 0..rows {
        for col in 0..cols {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc = a[r * n + k].mul_add(b[k * n + col], acc);
            }
            c[r * n + col] = acc;
        }
    }
    Ok(())
}

/// Largest host-reference work of a reference (multiply-adds of matmul, sgemm, flops): keeps a
/// bad spec from making the check run for long before the simulation starts (where
/// `--max-wall` does not reach yet): about 0.5 s at this limit. At 2^32 a mutated `flops` spec
/// (2,048 threads x 2^21 dependent FFMAs) took 10 s (fuzzing, seed 2026, spec input 8976).
/// The largest shipped use is the 1024x1024x64 SGEMM of scripts/bench.sh (2^26).
pub const MAX_REFERENCE_FMAS: u64 = 1 << 28;

/// Number of bins of the `histogram` kernel (`NBINS` in histogram.cu).
pub const HISTOGRAM_BINS: usize = 64;

/// `histogram(const u32* data, u32* bins, u32 n)`: `bins[data[i] % 64] += 1` for `i < n`.
pub fn histogram(ctx: &mut RefCtx) -> R<()> {
    ctx.expect_params(3)?;
    let n = ctx.u32_arg(2)? as usize;
    let data = ctx.u32s(0)?.to_vec();
    ctx.need_len(0, data.len(), n as u64)?;
    let bins = ctx.u32s_mut(1)?;
    if bins.len() < HISTOGRAM_BINS {
        return Err(format!(
            "parameter 1 has {} elements, the kernel has {HISTOGRAM_BINS} bins",
            bins.len()
        ));
    }
    for &d in &data[..n] {
        let b = d as usize % HISTOGRAM_BINS;
        bins[b] = bins[b].wrapping_add(1);
    }
    Ok(())
}

/// The per-element function of the `divergent` kernel: returns (out value, whether `alt` is
/// incremented).
pub fn divergent_elem(i: u32, x: u32) -> (u32, bool) {
    let mut acc = i;
    for k in 0..(x % 32) {
        acc = acc
            .wrapping_mul(1_664_525)
            .wrapping_add(1_013_904_223)
            .wrapping_add(k);
    }
    if acc & 1 != 0 {
        ((acc ^ x).wrapping_mul(3), false)
    } else {
        ((acc >> 3).wrapping_add(i), true)
    }
}

/// `divergent(const u32* in, u32* out, u32* alt, u32 n)`; see [`divergent_elem`].
pub fn divergent(ctx: &mut RefCtx) -> R<()> {
    ctx.expect_params(4)?;
    ctx.one_d()?;
    let n = (ctx.u32_arg(3)? as u64).min(ctx.threads()) as usize;
    let input = ctx.u32s(0)?.to_vec();
    ctx.need_len(0, input.len(), n as u64)?;
    let mut res = Vec::with_capacity(n);
    for (i, &x) in input.iter().enumerate().take(n) {
        res.push(divergent_elem(i as u32, x));
    }
    let out = ctx.u32s_mut(1)?;
    if out.len() < n {
        return Err(format!("parameter 1 has {} elements, need {n}", out.len()));
    }
    for (i, &(v, _)) in res.iter().enumerate() {
        out[i] = v;
    }
    let alt = ctx.u32s_mut(2)?;
    if alt.len() < n {
        return Err(format!("parameter 2 has {} elements, need {n}", alt.len()));
    }
    for (i, &(_, bump)) in res.iter().enumerate() {
        if bump {
            alt[i] = alt[i].wrapping_add(1);
        }
    }
    Ok(())
}

/// `spinlock(int* lock, volatile u32* counter)`: every thread increments `counter[0]` once under
/// the lock; `lock[0]` must start at 0 (else the kernel never ends) and ends at 0.
pub fn spinlock(ctx: &mut RefCtx) -> R<()> {
    ctx.expect_params(2)?;
    let threads = ctx.threads();
    let lock = ctx.s32s(0)?;
    if lock.first() != Some(&0) {
        return Err("lock (parameter 0) must have at least one element, initially 0".into());
    }
    let counter = ctx.u32s_mut(1)?;
    let c = counter
        .first_mut()
        .ok_or("counter (parameter 1) must have at least one element")?;
    *c = c.wrapping_add(threads as u32);
    Ok(())
}

/// `shfl_reduce(const float* in, float* out, u32 n)`: for each warp w (32 consecutive global
/// threads), `out[w]` = lane 0's value after `v += shfl_down(v, off)` for off = 16, 8, 4, 2, 1.
/// Lanes whose source is past lane 31 add their own value, as `__shfl_down_sync` returns it.
pub fn shfl_reduce(ctx: &mut RefCtx) -> R<()> {
    ctx.expect_params(3)?;
    ctx.one_d()?;
    if ctx.block[0] % 32 != 0 {
        return Err(format!("block.x = {} must be a multiple of 32", ctx.block[0]));
    }
    let n = ctx.u32_arg(2)? as usize;
    let threads = ctx.threads() as usize;
    let input = ctx.f32s(0)?.to_vec();
    ctx.need_len(0, input.len(), n.min(threads) as u64)?;
    let warps = threads / 32;
    let out = ctx.f32s_mut(1)?;
    if out.len() < warps {
        return Err(format!(
            "parameter 1 has {} elements, the kernel writes {warps}",
            out.len()
        ));
    }
    for (w, o) in out.iter_mut().enumerate().take(warps) {
        let mut v: Vec<f32> = (0..32)
            .map(|l| {
                let i = w * 32 + l;
                if i < n {
                    input[i]
                } else {
                    0.0
                }
            })
            .collect();
        let mut off = 16;
        while off > 0 {
            let old = v.clone();
            for l in 0..32 {
                let src = if l + off < 32 { old[l + off] } else { old[l] };
                v[l] = old[l] + src;
            }
            off /= 2;
        }
        *o = v[0];
    }
    Ok(())
}

/// FFMAs per iteration of the `flops` kernel's loop (`#pragma unroll` count in flops.cu).
pub const FLOPS_CHAIN_PER_ITER: u64 = 32;

/// `flops(const float* x, const float* y, float* out, u32 iters)`: per thread i,
/// `r = 0; repeat iters x 32: r = fma(x[i], y[i], r); out[i] = r`.
pub fn flops(ctx: &mut RefCtx) -> R<()> {
    ctx.expect_params(4)?;
    ctx.one_d()?;
    let threads = ctx.threads();
    let chain = ctx.u32_arg(3)? as u64 * FLOPS_CHAIN_PER_ITER;
    if chain.saturating_mul(threads) > MAX_REFERENCE_FMAS {
        return Err(format!(
            "{threads} threads x {chain} FFMAs is more than the reference's limit of {MAX_REFERENCE_FMAS}"
        ));
    }
    let x = ctx.f32s(0)?.to_vec();
    let y = ctx.f32s(1)?.to_vec();
    ctx.need_len(0, x.len(), threads)?;
    ctx.need_len(1, y.len(), threads)?;
    let out = ctx.f32s_mut(2)?;
    if (out.len() as u64) < threads {
        return Err(format!(
            "parameter 2 has {} elements, the kernel writes {threads}",
            out.len()
        ));
    }
    for (i, o) in out.iter_mut().enumerate().take(threads as usize) {
        let mut r = 0.0f32;
        for _ in 0..chain {
            r = x[i].mul_add(y[i], r);
        }
        *o = r;
    }
    Ok(())
}

/// `sgemm(const float* A, const float* B, float* C, u32 n, u32 k)` (sgemm.cu): block (16, 16),
/// a 128 x 128 tile of C per CTA; A is rows x k (row-major, rows = 128 grid.y), B is k x n, C is
/// rows x n with leading dimension n. `C[r][c]` = fma chain over k = 0 .. k-1 in order from 0.
pub fn sgemm(ctx: &mut RefCtx) -> R<()> {
    const TILE: u64 = 128;
    const BK: u64 = 8;
    ctx.expect_params(5)?;
    if ctx.block != [16, 16, 1] || ctx.grid[2] != 1 {
        return Err("expects block = [16, 16, 1] and grid.z = 1".into());
    }
    let n = ctx.u32_arg(3)? as u64;
    let k = ctx.u32_arg(4)? as u64;
    if k % BK != 0 {
        return Err(format!("k = {k} must be a multiple of {BK}"));
    }
    let (rows, cols) = (ctx.grid[1] as u64 * TILE, ctx.grid[0] as u64 * TILE);
    if cols > n {
        return Err(format!("grid covers {cols} columns, more than n = {n}"));
    }
    if rows.saturating_mul(cols).saturating_mul(k) > MAX_REFERENCE_FMAS {
        return Err(format!(
            "{rows} x {cols} x {k} is more than the reference's limit"
        ));
    }
    let a = ctx.f32s(0)?.to_vec();
    let b = ctx.f32s(1)?.to_vec();
    ctx.need_len(0, a.len(), rows * k)?;
    ctx.need_len(1, b.len(), k * n)?;
    let c = ctx.f32s_mut(2)?;
    if (c.len() as u64) < rows * n {
        return Err(format!("parameter 2 has {} elements, need {}", c.len(), rows * n));
    }
    let (n, k) = (n as usize, k as usize);
    // Each element is `acc = a·b + acc` over kk in order, rounded once per step
    // (`f32::mul_add`): a row at once by `fma_chain_row` (the CPU's FMA, accumulators in
    // registers), or, without FMA or when a result is NaN (whose payload is `mul_add`'s
    // choice), 32 columns at a time by `fma_rn_lanes`; the same bits. Rows are independent:
    // they are computed on the threads of the caller's rayon pool (the same bits on any
    // number).
    use rayon::prelude::*;
    let c = &mut c[..rows as usize * n];
    c.par_chunks_mut(n).enumerate().for_each(|(r, crow)| {
        if crate::fma::fma_chain_row(&a[r * k..(r + 1) * k], &b, n, &mut crow[..cols as usize]) {
            return;
        }
        let mut bv = [0u32; 32];
        for col0 in (0..cols as usize).step_by(32) {
            let w = 32.min(cols as usize - col0);
            let mut acc = [0.0f32.to_bits(); 32];
            for kk in 0..k {
                let av = [a[r * k + kk].to_bits(); 32];
                let row = &b[kk * n + col0..kk * n + col0 + w];
                for (d, x) in bv.iter_mut().zip(row) {
                    *d = x.to_bits();
                }
                let prev = acc;
                crate::fma::fma_rn_lanes(&av, &bv, &prev, &mut acc);
            }
            for (d, x) in crow[col0..col0 + w].iter_mut().zip(&acc) {
                *d = f32::from_bits(*x);
            }
        }
    });
    Ok(())
}
