//! Tests of launch specs: parameter layout and sizes, output checking, inputs and expected
//! outputs from files, and the errors of malformed specs.

mod common;

use common::{expected, f32s, load, tiny, u32s};
use sassim_workload::*;
use std::collections::HashMap;
use std::path::PathBuf;

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
