//! Tests of the built-in suite (every workload loads; listings, parameter offsets and the
//! on-disk specs) and of determinism (the PRNG, generated inputs, frozen inputs and expected
//! outputs, the default suite).

mod common;

use common::{f32s, load, tiny, u32s};
use sassim_workload::*;

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
fn loading_twice_gives_identical_bytes() {
    for b in builtin() {
        let (x, y) = (b.load().unwrap(), b.load().unwrap());
        assert_eq!(x.buffers(), y.buffers());
        assert_eq!(x.expected(), y.expected());
    }
}
