//! Tests of the host references: each reference's expected outputs on small specs, and the
//! built-in workloads' expected outputs.

mod common;

use common::{expected, f32s, load, tiny, u32s};

#[test]
fn reference_vecadd() {
    let w = tiny(
        r#"kernel = "vecadd"
grid = [1]
block = [4]
reference = "vecadd"
params = [{ buffer = "a" }, { buffer = "b" }, { buffer = "c" }, { u32 = 3 }]
[[buffer]]
name = "a"
type = "f32"
count = 4
init = { kind = "iota", start = 1 }
[[buffer]]
name = "b"
type = "f32"
count = 4
init = { kind = "constant", value = 10 }
[[buffer]]
name = "c"
type = "f32"
count = 4
init = { kind = "constant", value = -1 }
[[output]]
buffer = "c"
"#,
    );
    assert_eq!(f32s(&expected(&w, "c")), [11.0, 12.0, 13.0, -1.0]);
}

#[test]
fn reference_saxpy() {
    let w = tiny(
        r#"kernel = "saxpy"
grid = [1]
block = [2]
reference = "saxpy"
params = [{ u32 = 3 }, { f32 = 2 }, { buffer = "x" }, { buffer = "y" }]
[[buffer]]
name = "x"
type = "f32"
count = 3
init = { kind = "iota", start = 1, step = 1 }
[[buffer]]
name = "y"
type = "f32"
count = 3
init = { kind = "constant", value = 1 }
[[output]]
buffer = "y"
"#,
    );
    assert_eq!(f32s(&expected(&w, "y")), [3.0, 5.0, 7.0]);
}

#[test]
fn reference_reduce() {
    let w = tiny(
        r#"kernel = "reduce"
grid = [2]
block = [4]
shared_mem_bytes = 16
reference = "reduce"
params = [{ buffer = "in" }, { buffer = "out" }, { u32 = 7 }]
[[buffer]]
name = "in"
type = "f32"
count = 8
init = { kind = "iota", start = 1 }
[[buffer]]
name = "out"
type = "f32"
count = 2
init = { kind = "zeros" }
[[output]]
buffer = "out"
"#,
    );
    // Block 0: 1+2+3+4; block 1: 5+6+7 (element 7 is past n).
    assert_eq!(f32s(&expected(&w, "out")), [10.0, 18.0]);
}

#[test]
fn reference_matmul() {
    let w = tiny(
        r#"kernel = "matmul"
grid = [1, 1]
block = [16, 16]
reference = "matmul"
params = [{ buffer = "A" }, { buffer = "B" }, { buffer = "C" }, { u32 = 16 }]
[[buffer]]
name = "A"
type = "f32"
count = 256
init = { kind = "constant", value = 1 }
[[buffer]]
name = "B"
type = "f32"
count = 256
init = { kind = "iota" }
[[buffer]]
name = "C"
type = "f32"
count = 256
init = { kind = "zeros" }
[[output]]
buffer = "C"
"#,
    );
    // A = ones, B[k][c] = 16k + c, so C[r][c] = sum_k (16k + c) = 16*120 + 16c.
    let c = f32s(&expected(&w, "C"));
    assert_eq!(c[0], 1920.0);
    assert_eq!(c[5 * 16 + 3], 1968.0);
    assert_eq!(c[255], 1920.0 + 16.0 * 15.0);
}

#[test]
fn reference_histogram() {
    let w = tiny(
        r#"kernel = "histogram"
grid = [1]
block = [32]
reference = "histogram"
params = [{ buffer = "data" }, { buffer = "bins" }, { u32 = 130 }]
[[buffer]]
name = "data"
type = "u32"
count = 130
init = { kind = "iota" }
[[buffer]]
name = "bins"
type = "u32"
count = 64
init = { kind = "constant", value = 1 }
[[output]]
buffer = "bins"
"#,
    );
    // 0..130: bins 0 and 1 get 3 values (0, 64, 128 / 1, 65, 129), the others 2; plus the initial 1.
    let b = u32s(&expected(&w, "bins"));
    assert_eq!(&b[..3], &[4, 4, 3]);
    assert_eq!(b[63], 3);
    assert_eq!(b.iter().sum::<u32>(), 130 + 64);
}

#[test]
fn reference_divergent() {
    let w = tiny(
        r#"kernel = "divergent"
grid = [1]
block = [4]
reference = "divergent"
params = [{ buffer = "in" }, { buffer = "out" }, { buffer = "alt" }, { u32 = 4 }]
[[buffer]]
name = "in"
type = "u32"
count = 4
init = { kind = "iota" }
[[buffer]]
name = "out"
type = "u32"
count = 4
init = { kind = "zeros" }
[[buffer]]
name = "alt"
type = "u32"
count = 4
init = { kind = "constant", value = 5 }
[[output]]
buffer = "out"
[[output]]
buffer = "alt"
"#,
    );
    // i=0: 0 trips, acc 0 (even): out 0, alt+1.
    // i=1: acc = 1*1664525 + 1013904223 = 1015568748 (even): out = (acc >> 3) + 1, alt+1.
    // i=2, 3: odd results: out = (acc ^ x) * 3, alt unchanged.
    assert_eq!(u32s(&expected(&w, "out")), [0, 126946094, 1631758229, 2672064028]);
    assert_eq!(u32s(&expected(&w, "alt")), [6, 6, 5, 5]);
}

#[test]
fn reference_spinlock() {
    let w = tiny(
        r#"kernel = "spinlock"
grid = [3]
block = [32]
reference = "spinlock"
params = [{ buffer = "lock" }, { buffer = "counter" }]
[[buffer]]
name = "lock"
type = "s32"
count = 1
init = { kind = "zeros" }
[[buffer]]
name = "counter"
type = "u32"
count = 1
init = { kind = "constant", value = 4 }
[[output]]
buffer = "counter"
[[output]]
buffer = "lock"
"#,
    );
    assert_eq!(u32s(&expected(&w, "counter")), [100]);
    assert_eq!(u32s(&expected(&w, "lock")), [0]);
}

#[test]
fn reference_shfl_reduce() {
    let w = tiny(
        r#"kernel = "shfl_reduce"
grid = [2]
block = [32]
reference = "shfl_reduce"
params = [{ buffer = "in" }, { buffer = "out" }, { u32 = 40 }]
[[buffer]]
name = "in"
type = "f32"
count = 64
init = { kind = "iota" }
[[buffer]]
name = "out"
type = "f32"
count = 2
init = { kind = "zeros" }
[[output]]
buffer = "out"
"#,
    );
    // Warp 0: 0+1+...+31 = 496; warp 1: 32+...+39 = 284 (inputs >= n are 0).
    assert_eq!(f32s(&expected(&w, "out")), [496.0, 284.0]);
}

#[test]
fn reference_flops_and_sgemm() {
    // flops: r = fma(x, y, r) iters x 32 times from 0.
    let w = tiny(
        r#"kernel = "flops"
        grid = [1]
        block = [2]
        reference = "flops"
        params = [{ buffer = "x" }, { buffer = "y" }, { buffer = "o" }, { u32 = 2 }]
        [[buffer]]
        name = "x"
        type = "f32"
        count = 2
        init = { kind = "iota", start = 0.5, step = 0.25 }
        [[buffer]]
        name = "y"
        type = "f32"
        count = 2
        init = { kind = "constant", value = 2.0 }
        [[buffer]]
        name = "o"
        type = "f32"
        count = 2
        init = { kind = "zeros" }
        [[output]]
        buffer = "o""#,
    );
    assert_eq!(f32s(&expected(&w, "o")), vec![64.0, 96.0]);
    // sgemm: one 128x128 tile, k = 8; A = 1 everywhere, B[k][c] = 128k + c:
    // C[r][c] = sum over k of (128k + c) = 128 * 28 + 8c.
    let w = tiny(
        r#"kernel = "sgemm"
        grid = [1, 1]
        block = [16, 16]
        reference = "sgemm"
        params = [{ buffer = "A" }, { buffer = "B" }, { buffer = "C" }, { u32 = 128 }, { u32 = 8 }]
        [[buffer]]
        name = "A"
        type = "f32"
        count = 1024
        init = { kind = "constant", value = 1.0 }
        [[buffer]]
        name = "B"
        type = "f32"
        count = 1024
        init = { kind = "iota", start = 0, step = 1 }
        [[buffer]]
        name = "C"
        type = "f32"
        count = 16384
        init = { kind = "zeros" }
        [[output]]
        buffer = "C""#,
    );
    let c = f32s(&expected(&w, "C"));
    assert_eq!(c[0], 3584.0);
    assert_eq!(c[5], 3584.0 + 8.0 * 5.0);
    assert_eq!(c[128 * 77 + 127], 3584.0 + 8.0 * 127.0);
}

#[test]
fn sgemm_reference_is_the_ordered_mul_add_sum() {
    // Random operands of both signs (rounding at every step), n wider than the grid's
    // columns (those of C stay as initialized): each element is the k-ordered chain of
    // `f32::mul_add` from 0, bit for bit.
    let w = tiny(
        r#"kernel = "sgemm"
        grid = [1, 2]
        block = [16, 16]
        reference = "sgemm"
        params = [{ buffer = "A" }, { buffer = "B" }, { buffer = "C" }, { u32 = 160 }, { u32 = 24 }]
        [[buffer]]
        name = "A"
        type = "f32"
        count = 6144
        init = { kind = "random", seed = 7, min = -3.0, max = 3.0 }
        [[buffer]]
        name = "B"
        type = "f32"
        count = 3840
        init = { kind = "random", seed = 8, min = -1.0e3, max = 1.0e3 }
        [[buffer]]
        name = "C"
        type = "f32"
        count = 40960
        init = { kind = "constant", value = 5.0 }
        [[output]]
        buffer = "C""#,
    );
    let buf = |name: &str| f32s(&w.buffers().iter().find(|b| b.name == name).unwrap().bytes);
    let (a, b) = (buf("A"), buf("B"));
    let (n, k) = (160, 24);
    let c = f32s(&expected(&w, "C"));
    for r in 0..256 {
        for col in 0..n {
            let want = if col < 128 {
                (0..k).fold(0.0f32, |acc, kk| a[r * k + kk].mul_add(b[kk * n + col], acc))
            } else {
                5.0
            };
            assert_eq!(c[r * n + col].to_bits(), want.to_bits(), "C[{r}][{col}]");
        }
    }
}

#[test]
fn builtin_expected_outputs_are_plausible() {
    let w = load("spinlock");
    assert_eq!(u32s(&expected(&w, "counter")), [128]);
    let w = load("histogram");
    assert_eq!(u32s(&expected(&w, "bins")).iter().sum::<u32>(), 4096);
    let w = load("vecadd");
    let c = f32s(&expected(&w, "c"));
    assert_eq!(c[1000..], [0.0; 24]);
    let w = load("reduce");
    let input: f32 = f32s(&w.buffer("in").unwrap().bytes).iter().sum();
    let out: f32 = f32s(&expected(&w, "out")).iter().sum();
    assert!((input - out).abs() < 1e-3);
}
