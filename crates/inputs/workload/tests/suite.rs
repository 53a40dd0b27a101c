//! Tests of the built-in suite, the PRNG, inputs, host references, parameter layout, checking
//! and spec errors.

use sassim_workload::*;
use std::collections::HashMap;
use std::path::PathBuf;

const NAMES: &[&str] = &[
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

fn load(name: &str) -> Workload {
    builtin_named(name)
        .unwrap_or_else(|| panic!("no builtin {name}"))
        .load()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Independent SplitMix64, written from the published algorithm.
fn splitmix(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e3779b97f4a7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
            z ^ (z >> 31)
        })
        .collect()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h = 0xcbf29ce484222325u64;
    for b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    h
}

// ---------------------------------------------------------------- built-in suite

#[test]
fn builtin_suite_is_complete_and_every_spec_loads() {
    let names: Vec<_> = builtin().iter().map(|b| b.name).collect();
    assert_eq!(names, NAMES);
    for b in builtin() {
        let w = b.load().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.name, b.name);
        assert_eq!(w.kernel(), b.name);
        assert!(!w.expected().is_empty(), "{}: no outputs", b.name);
        assert!(b.source_cu.contains(&format!("void {}(", b.name)));
        assert_eq!(b.listings.len(), 3);
        for &(arch, text) in b.listings {
            assert!(
                text.contains(&format!("Function : {}", b.name)),
                "{} {arch}: kernel missing from listing",
                b.name
            );
            assert!(text.contains(&format!("code for {arch}")));
        }
        for &arch in ARCHS {
            assert!(b.listing(arch).is_some() && b.nvdisasm_listing(arch).is_some());
        }
        assert!(b.ptxas_info.contains("Used"));
    }
    assert!(TOOLCHAIN.contains("V13.5.37"));
}

#[test]
fn on_disk_suite_matches_embedded() {
    let dir = builtin_suite_dir().expect("workloads/ next to the crate");
    let specs = list_suite(&dir).unwrap();
    let mut disk: Vec<String> = specs
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    disk.sort();
    let mut names: Vec<String> = NAMES.iter().map(|s| s.to_string()).collect();
    names.sort();
    assert_eq!(disk, names);
    for p in specs {
        let w = Workload::load(&p).unwrap_or_else(|e| panic!("{e}"));
        let b = builtin_named(&w.name).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), b.spec_toml);
        assert_eq!(w.buffers(), b.load().unwrap().buffers());
    }
}

#[test]
fn param_offsets_in_listings() {
    // Every built-in kernel reads its first parameter from c[0x0][param base].
    assert_eq!(param_cbank_offset(75), Some(0x160));
    assert_eq!(param_cbank_offset(86), Some(0x160));
    assert_eq!(param_cbank_offset(90), Some(0x210));
    assert_eq!(param_cbank_offset(70), None);
    for b in builtin() {
        for &(arch, text) in b.listings {
            let sm: u32 = arch[3..].parse().unwrap();
            let base = param_cbank_offset(sm).unwrap();
            let needle = format!("c[0x0][0x{base:x}]");
            assert!(text.contains(&needle), "{} {arch}: no {needle}", b.name);
            if sm == 90 {
                assert!(!text.contains("c[0x0][0x160]"), "{} {arch}", b.name);
            }
        }
    }
}

#[test]
fn spinlock_listings_have_the_control_flow_of_the_paper() {
    let b = builtin_named("spinlock").unwrap();
    let all: String = b.listings.iter().map(|(_, t)| *t).collect();
    for op in [
        "YIELD",
        "BSSY",
        "BSYNC",
        "WARPSYNC",
        "ATOMG.E.CAS",
        "ATOMG.E.EXCH",
    ] {
        assert!(all.contains(op), "spinlock listings lack {op}");
    }
}

// ---------------------------------------------------------------- determinism

#[test]
fn splitmix64_known_values() {
    // Published SplitMix64 outputs for seed 0 (also used to seed xoshiro).
    let mut r = SplitMix64::new(0);
    assert_eq!(r.next(), 0xe220a8397b1dcdaf);
    assert_eq!(r.next(), 0x6e789e6aa1b965f4);
    assert_eq!(r.next(), 0x06c45d188009454f);
    let mut r = SplitMix64::new(1);
    assert_eq!(r.next(), 0x910a2dec89025cc1);
    assert_eq!(splitmix(1, 2)[1], 0xbeeb8da1658eec67);
}

#[test]
fn generated_inputs_follow_the_documented_formulas() {
    // vecadd.a: iota start 0 step 0.5.
    let w = load("vecadd");
    let a = f32s(&w.buffer("a").unwrap().bytes);
    assert_eq!(&a[..4], &[0.0, 0.5, 1.0, 1.5]);
    assert_eq!(a[1023], 511.5);
    // vecadd.b: random seed 1 in [-1, 1]: min + (max-min) * (r >> 11) * 2^-53, rounded to f32.
    let b = f32s(&w.buffer("b").unwrap().bytes);
    let r = splitmix(1, 1024);
    for (i, &x) in b.iter().enumerate() {
        let u = (r[i] >> 11) as f64 / (1u64 << 53) as f64;
        assert_eq!(x, (-1.0 + 2.0 * u) as f32, "b[{i}]");
    }
    assert!(w.buffer("c").unwrap().bytes.iter().all(|&x| x == 0));
    // histogram.data: random u32 seed 7 in [0, 1000]: min + (r * span) >> 64.
    let h = load("histogram");
    let d = u32s(&h.buffer("data").unwrap().bytes);
    let r = splitmix(7, 4096);
    for (i, &x) in d.iter().enumerate() {
        assert_eq!(x as u128, (r[i] as u128 * 1001) >> 64, "data[{i}]");
    }
    // divergent.in: full-range u32: the top 32 bits of each output.
    let dv = load("divergent");
    let x = u32s(&dv.buffer("in").unwrap().bytes);
    let r = splitmix(8, 3);
    assert_eq!(
        x[..3],
        [(r[0] >> 32) as u32, (r[1] >> 32) as u32, (r[2] >> 32) as u32]
    );
    assert!(u32s(&dv.buffer("alt").unwrap().bytes).iter().all(|&v| v == 7));
}

#[test]
fn builtin_inputs_and_expected_outputs_are_frozen() {
    // Golden hash of every built-in buffer and expected output. A change here means the PRNG,
    // an initialiser, a spec or a reference changed: every recorded result becomes invalid.
    // The default suite and the study workloads (default_suite = false) have a hash each.
    let hash = |suite: Vec<BuiltinWorkload>| {
        let mut bytes = Vec::new();
        for b in suite {
            let w = b.load().unwrap();
            for buf in w.buffers() {
                bytes.extend(buf.name.bytes());
                bytes.extend(&buf.bytes);
            }
            for e in w.expected() {
                bytes.extend(e.buffer.bytes());
                bytes.extend(&e.bytes);
            }
        }
        fnv1a(bytes)
    };
    assert_eq!(hash(default_suite()), GOLDEN, "built-in inputs/outputs changed");
    let studies: Vec<_> = builtin().into_iter().filter(|b| !b.in_default_suite()).collect();
    assert_eq!(
        hash(studies),
        GOLDEN_STUDIES,
        "study workloads' inputs/outputs changed"
    );
}

const GOLDEN: u64 = 3184922973107009947;
const GOLDEN_STUDIES: u64 = 18315613779593099221;

#[test]
fn study_workloads_are_not_in_the_default_suite() {
    let names: Vec<_> = default_suite().iter().map(|b| b.name).collect();
    assert_eq!(names, &NAMES[..8]);
    for n in ["flops", "sgemm"] {
        assert!(!builtin_named(n).unwrap().in_default_suite(), "{n}");
    }
    // The key is optional and defaults to true; a wrong type is an error naming it.
    let w = tiny("kernel = \"k\"\ngrid = [1]\nblock = [32]\n");
    assert!(w.spec.default_suite);
    let e = Workload::parse(
        "kernel = \"k\"\ngrid = [1]\nblock = [32]\ndefault_suite = 1\n",
        "t.toml",
        None,
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("default_suite"), "{e}");
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
fn loading_twice_gives_identical_bytes() {
    for b in builtin() {
        let (x, y) = (b.load().unwrap(), b.load().unwrap());
        assert_eq!(x.buffers(), y.buffers());
        assert_eq!(x.expected(), y.expected());
    }
}

// ---------------------------------------------------------------- host references

fn tiny(toml: &str) -> Workload {
    Workload::parse(toml, "tiny.toml", Some("tiny"), None).unwrap_or_else(|e| panic!("{e}"))
}

fn expected(w: &Workload, name: &str) -> Vec<u8> {
    w.expected()
        .iter()
        .find(|e| e.buffer == name)
        .unwrap()
        .bytes
        .clone()
}

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

// ---------------------------------------------------------------- params and check

#[test]
fn param_bytes_natural_alignment() {
    let w = load("saxpy");
    let slots = w.param_layout();
    let offs: Vec<_> = slots.iter().map(|s| (s.offset, s.size)).collect();
    assert_eq!(offs, [(0, 4), (4, 4), (8, 8), (16, 8)]);
    let p = w.param_bytes(|n| {
        if n == "x" {
            0x7000_0000_1000
        } else {
            0x7000_0000_2000
        }
    });
    assert_eq!(p.len(), 24);
    assert_eq!(&p[0..4], &2000u32.to_le_bytes());
    assert_eq!(&p[4..8], &2.5f32.to_le_bytes());
    assert_eq!(&p[8..16], &0x7000_0000_1000u64.to_le_bytes());
    assert_eq!(&p[16..24], &0x7000_0000_2000u64.to_le_bytes());

    let w = tiny(
        r#"kernel = "k"
grid = [1]
block = [1]
params = [{ u32 = 1 }, { buffer = "b" }, { s32 = -2 }, { f64 = 0.5 }, { f32 = 1.5 }, { u64 = 9 }]
[[buffer]]
name = "b"
type = "u64"
count = 1
init = { kind = "zeros" }
"#,
    );
    let offs: Vec<_> = w.param_layout().iter().map(|s| s.offset).collect();
    assert_eq!(offs, [0, 8, 16, 24, 32, 40]);
    let p = w.param_bytes(|_| 0xdead_beef_0000);
    assert_eq!(p.len(), 48);
    assert_eq!(&p[4..8], &[0, 0, 0, 0], "padding is zero");
    assert_eq!(&p[16..20], &(-2i32).to_le_bytes());
    assert_eq!(&p[24..32], &0.5f64.to_le_bytes());
}

fn expected_map(w: &Workload) -> HashMap<String, Vec<u8>> {
    w.expected()
        .iter()
        .map(|e| (e.buffer.clone(), e.bytes.clone()))
        .collect()
}

#[test]
fn check_passes_on_expected_and_fails_loudly() {
    let w = load("matmul");
    let mut out = expected_map(&w);
    let rep = w.check(&out).unwrap();
    assert_eq!(rep.buffers[0].buffer, "C");
    assert_eq!(rep.buffers[0].elements, 4096);

    // Within tolerance: passes.
    let mut c = f32s(&out["C"]);
    c[7] *= 1.0 + 1e-7;
    out.insert("C".into(), c.iter().flat_map(|x| x.to_le_bytes()).collect());
    w.check(&out).unwrap();

    // Outside: fails, naming buffer, index, expected and got.
    let exp = c[9];
    c[9] += 1.0;
    c[100] = f32::NAN;
    out.insert("C".into(), c.iter().flat_map(|x| x.to_le_bytes()).collect());
    let e = w.check(&out).unwrap_err();
    assert_eq!(e.buffer, "C");
    match &*e.kind {
        MismatchKind::Value {
            index,
            mismatches,
            expected,
            ..
        } => {
            assert_eq!(*index, 9);
            assert_eq!(*mismatches, 2);
            assert!(expected.starts_with(&format!("{exp:?}")));
        }
        k => panic!("{k:?}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("`C`") && msg.contains("index 9") && msg.contains("expected"));
    assert!(msg.contains(&format!("got {:?}", c[9])), "{msg}");

    // Integer buffers are exact.
    let w = load("histogram");
    let mut out = expected_map(&w);
    out.get_mut("bins").unwrap()[4 * 3] ^= 1;
    let msg = w.check(&out).unwrap_err().to_string();
    assert!(msg.contains("`bins`") && msg.contains("index 3"), "{msg}");

    // Missing and wrongly sized buffers.
    let mut out = expected_map(&w);
    out.get_mut("bins").unwrap().pop();
    assert!(matches!(
        *w.check(&out).unwrap_err().kind,
        MismatchKind::Size { .. }
    ));
    let e = w.check(&HashMap::new()).unwrap_err();
    assert_eq!(*e.kind, MismatchKind::Missing);
    assert!(e.to_string().contains("missing"));
}

// ---------------------------------------------------------------- files

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = SCRATCH.with(|s| s.path().join(tag));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn npy_f32(values: &[f32]) -> Vec<u8> {
    let mut header = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}",
        values.len()
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.bytes());
    out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    out
}

#[test]
fn file_inputs_and_expected_outputs() {
    let d = temp_dir("files");
    std::fs::write(d.join("x.npy"), npy_f32(&[1.0, 2.0, 3.0])).unwrap();
    let y: Vec<u8> = [10u32, 20, 30].iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(d.join("y.bin"), y).unwrap();
    std::fs::write(d.join("want.npy"), npy_f32(&[2.0, 4.0, 6.0])).unwrap();
    let spec = d.join("f.toml");
    std::fs::write(
        &spec,
        r#"kernel = "double"
grid = [1]
block = [3]
params = [{ buffer = "x" }]
[[buffer]]
name = "x"
type = "f32"
count = 3
init = { kind = "file", path = "x.npy" }
[[buffer]]
name = "y"
type = "u32"
count = 3
init = { kind = "file", path = "y.bin" }
[[output]]
buffer = "x"
file = "want.npy"
"#,
    )
    .unwrap();
    let w = Workload::load(&spec).unwrap();
    assert_eq!(w.name, "f");
    assert_eq!(f32s(&w.buffer("x").unwrap().bytes), [1.0, 2.0, 3.0]);
    assert_eq!(u32s(&w.buffer("y").unwrap().bytes), [10, 20, 30]);
    assert_eq!(f32s(&expected(&w, "x")), [2.0, 4.0, 6.0]);

    // Wrong dtype and wrong count are errors naming the file.
    let bad = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("type = \"f32\"", "type = \"u32\"");
    std::fs::write(d.join("g.toml"), bad).unwrap();
    let e = Workload::load(d.join("g.toml")).unwrap_err().to_string();
    assert!(
        e.contains("g.toml") && e.contains("x.npy") && e.contains("dtype"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).ok();
}

// ---------------------------------------------------------------- malformed specs

const GOOD: &str = r#"kernel = "vecadd"
grid = [1]
block = [4]
reference = "vecadd"
params = [{ buffer = "a" }, { buffer = "b" }, { buffer = "c" }, { u32 = 4 }]
[[buffer]]
name = "a"
type = "f32"
count = 4
init = { kind = "iota" }
[[buffer]]
name = "b"
type = "f32"
count = 4
init = { kind = "random", seed = 3 }
[[buffer]]
name = "c"
type = "f32"
count = 4
init = { kind = "zeros" }
[[output]]
buffer = "c"
"#;

/// Writes `text` to a spec file and returns the load error message.
fn err_of(tag: &str, text: &str) -> String {
    let d = temp_dir("bad");
    let p = d.join(format!("{tag}.toml"));
    std::fs::write(&p, text).unwrap();
    let e = Workload::load(&p).expect_err(tag);
    assert_eq!(e.file(), p.display().to_string());
    let msg = e.to_string();
    assert!(msg.starts_with(&p.display().to_string()), "{msg}");
    assert!(msg.contains(&format!("{tag}.toml")), "{msg}");
    msg
}

#[test]
fn good_spec_loads() {
    let d = temp_dir("good");
    let p = d.join("good.toml");
    std::fs::write(&p, GOOD).unwrap();
    Workload::load(&p).unwrap();
}

#[test]
fn malformed_specs_name_file_and_field() {
    let cases: &[(&str, String, &[&str])] = &[
        ("unknown_top", GOOD.replace("grid =", "gird ="), &["gird"]),
        (
            "unknown_buffer_key",
            GOOD.replace(
                "count = 4\ninit = { kind = \"zeros\" }",
                "count = 4\ncolour = 1\ninit = { kind = \"zeros\" }",
            ),
            &["colour"],
        ),
        (
            "unknown_init_key",
            GOOD.replace("kind = \"iota\"", "kind = \"iota\", stride = 2"),
            &["stride"],
        ),
        (
            "missing_kernel",
            GOOD.replace("kernel = \"vecadd\"\n", ""),
            &["kernel"],
        ),
        ("missing_count", GOOD.replacen("count = 4\n", "", 1), &["count"]),
        (
            "bad_count_type",
            GOOD.replacen("count = 4", "count = \"four\"", 1),
            &["count"],
        ),
        (
            "bad_elem_type",
            GOOD.replacen("type = \"f32\"", "type = \"u16\"", 1),
            &["u16"],
        ),
        (
            "bad_param_kind",
            GOOD.replace("{ u32 = 4 }", "{ u16 = 4 }"),
            &["u16"],
        ),
        (
            "bad_param_value",
            GOOD.replace("{ u32 = 4 }", "{ u32 = -4 }"),
            &["params"],
        ),
        (
            "unknown_param_buffer",
            GOOD.replace("{ buffer = \"c\" }", "{ buffer = \"d\" }"),
            &["params[2]", "`d`"],
        ),
        (
            "unknown_output_buffer",
            GOOD.replace("buffer = \"c\"\n", "buffer = \"z\"\n"),
            &["output `z`"],
        ),
        (
            "bad_init_key_for_kind",
            GOOD.replace("kind = \"zeros\"", "kind = \"zeros\", value = 1"),
            &["buffer `c`", "value"],
        ),
        (
            "float_for_int_buffer",
            GOOD.replacen(
                "type = \"f32\"\ncount = 4\ninit = { kind = \"iota\" }",
                "type = \"u32\"\ncount = 4\ninit = { kind = \"constant\", value = 1.5 }",
                1,
            ),
            &["buffer `a`", "integer"],
        ),
        (
            "unknown_reference",
            GOOD.replace("reference = \"vecadd\"", "reference = \"vecmul\""),
            &["reference", "vecmul"],
        ),
        (
            "reference_mismatch",
            GOOD.replace("{ u32 = 4 }", "{ f32 = 4 }"),
            &["reference `vecadd`", "parameter 3"],
        ),
        (
            "zero_block",
            GOOD.replace("block = [4]", "block = [0]"),
            &["block"],
        ),
        (
            "huge_block",
            GOOD.replace("block = [4]", "block = [64, 32]"),
            &["block", "1024"],
        ),
        (
            "duplicate_buffer",
            GOOD.replace("name = \"b\"", "name = \"a\""),
            &["buffer `a`", "duplicate"],
        ),
        ("not_toml", "kernel = ".to_string(), &["TOML"]),
        (
            "int_tolerance",
            GOOD.replace("buffer = \"c\"\n", "buffer = \"c\"\nabs_tol = -1.0\n"),
            &["abs_tol"],
        ),
        (
            "random_range",
            GOOD.replace("seed = 3", "seed = 3, min = 2, max = 1"),
            &["buffer `b`", "min"],
        ),
        (
            "iota_nan_step",
            GOOD.replace("kind = \"iota\" }", "kind = \"iota\", step = nan }"),
            &["buffer `a`", "finite start and step"],
        ),
        (
            "iota_inf_start",
            GOOD.replace("kind = \"iota\" }", "kind = \"iota\", start = -inf }"),
            &["buffer `a`", "finite start and step"],
        ),
    ];
    for (tag, text, needles) in cases {
        let msg = err_of(tag, text);
        for n in *needles {
            assert!(msg.contains(n), "{tag}: `{n}` not in: {msg}");
        }
    }
}

#[test]
fn builtin_errors_name_the_builtin() {
    let e = Workload::parse("kernel = 1", "builtin:x", None, None).unwrap_err();
    assert!(e.to_string().starts_with("builtin:x: "), "{e}");
    let e = Workload::parse(
        &GOOD.replace("kind = \"zeros\"", "kind = \"file\", path = \"c.bin\""),
        "builtin:y",
        Some("y"),
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("buffer `c`"), "{e}");
}

#[test]
fn param_block_size_matches_ptxas_cmem() {
    // ptxas -v reports cmem[0] = param base + parameter bytes on sm_75/sm_86.
    for b in builtin() {
        let w = b.load().unwrap();
        let len = w.param_bytes(|_| 0).len() as u32;
        let mut arch = None;
        let mut checked = 0;
        for line in b.ptxas_info.lines() {
            if let Some(i) = line.find("for 'sm_") {
                arch = line[i + 8..i + 10].parse::<u32>().ok();
            }
            if let (Some(sm), Some(j)) = (arch, line.find(" bytes cmem[0]")) {
                let n: u32 = line[..j].rsplit(' ').next().unwrap().parse().unwrap();
                assert_eq!(n, param_cbank_offset(sm).unwrap() + len, "{} sm_{sm}", b.name);
                checked += 1;
            }
        }
        assert_eq!(checked, 2, "{}: sm_75 and sm_86 report cmem[0]", b.name);
    }
}
