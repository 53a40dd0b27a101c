//! Issue 18: sizes in a launch spec are checked before anything is allocated.

use sassim_workload::Workload;

const VECADD: &str = include_str!("../../../../workloads/vecadd/vecadd.toml");

fn err(text: &str) -> String {
    match Workload::parse(text, "spec.toml", Some("vecadd"), None) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn huge_buffer_counts_are_refused_before_allocation() {
    // 2^40 elements aborted with an allocation failure, i64::MAX panicked in raw_vec.
    for count in ["1099511627776", "9223372036854775807", "4294967296"] {
        let text = VECADD.replacen("count = 1024", &format!("count = {count}"), 1);
        let e = err(&text);
        assert!(
            e.starts_with("spec.toml: buffer `a`: `count` = ") && e.contains("allowed 1..=1073741824"),
            "{count}: {e}"
        );
    }
    let e = err(&VECADD.replacen("count = 1024", "count = -1", 1));
    assert!(e.contains("count") && e.contains("-1"), "{e}");
}

#[test]
fn grid_limits_are_cudas() {
    for (grid, ok) in [
        ("[2147483647]", true), // CUDA's largest grid.x; the reference only touches n = 1000 elements
        ("[2147483648]", false),
        ("[1, 65536]", false),
        ("[65535, 65535, 2]", false),
        ("[0]", false),
    ] {
        let text = VECADD.replacen("grid = [4]", &format!("grid = {grid}"), 1);
        let r = Workload::parse(&text, "spec.toml", Some("vecadd"), None);
        assert_eq!(r.is_ok(), ok, "{grid}: {:?}", r.err());
    }
    let e = err(&VECADD.replacen("grid = [4]", "grid = [65535, 65535, 2]", 1));
    assert!(e.contains("at most 4294967295 blocks"), "{e}");
}

#[test]
fn matmul_reference_work_is_bounded() {
    let text = include_str!("../../../../workloads/matmul/matmul.toml");
    // n = 4096 with a 256x256 grid of 16x16 tiles: 2^36 multiply-adds on the host.
    let big = text
        .replace("grid = [4, 4]", "grid = [256, 256]")
        .replace("{ u32 = 64 }", "{ u32 = 4096 }")
        .replace("count = 4096", "count = 16777216");
    assert_ne!(big, text, "the spec changed: update this test");
    let e = err(&big);
    assert!(e.contains("multiply-adds") && e.contains("268435456"), "{e}");
}

#[test]
fn flops_reference_work_is_bounded() {
    // Fuzzing (seed 2026, spec input 8976): 2,048 threads x 65,536 x 32 dependent FFMAs,
    // 2^32, took 10 s on the host before the simulation started.
    let text = include_str!("../../../../workloads/flops/flops.toml");
    let big = text.replace("{ u32 = 32 }", "{ u32 = 65536 }");
    assert_ne!(big, text, "the spec changed: update this test");
    let e = err(&big);
    assert!(e.contains("FFMAs") && e.contains("268435456"), "{e}");
}
