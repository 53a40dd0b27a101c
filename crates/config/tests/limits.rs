//! Every number of a configuration is range-checked before use (issue 18): huge queue and
//! buffer sizes, values the memory model cannot use, overflowing products, NaN and
//! infinities are refused with the key and the allowed range.

use sassim_config::limits::{limit_of, unlimited_keys, LIMITS};
use sassim_config::{ConfigError, GpuConfig};

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

fn load_err(set: &[&str]) -> String {
    let ov: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    match GpuConfig::load("rtx-a6000", &ov) {
        Ok(_) => panic!("{set:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn every_numeric_field_has_a_limit() {
    for name in ["rtx-a6000", "t4", "h100", "rtx-5070ti"] {
        let cfg = GpuConfig::preset(name).unwrap();
        let v = toml::Value::try_from(&cfg).unwrap();
        let missing = unlimited_keys(&v);
        assert!(
            missing.is_empty(),
            "{name}: keys without a row in LIMITS: {missing:?}"
        );
    }
    // And every row names a key of the schema (no stale rows): keys of the default preset and
    // of h100 (the only one with warpgroup MMA rows' `macs_per_cycle`).
    let mut keys = Vec::new();
    fn walk(v: &toml::Value, p: &mut Vec<String>, out: &mut Vec<String>) {
        match v {
            toml::Value::Table(t) => t.iter().for_each(|(k, c)| {
                p.push(k.clone());
                walk(c, p, out);
                p.pop();
            }),
            toml::Value::Array(a) => a.iter().enumerate().for_each(|(i, c)| {
                p.push(i.to_string());
                walk(c, p, out);
                p.pop();
            }),
            toml::Value::Integer(_) | toml::Value::Float(_) => out.push(p.join(".")),
            _ => {}
        }
    }
    for name in ["rtx-a6000", "h100"] {
        let v = toml::Value::try_from(GpuConfig::preset(name).unwrap()).unwrap();
        walk(&v, &mut Vec::new(), &mut keys);
    }
    for l in LIMITS {
        // `rop_latency` is optional and absent from the default preset.
        if l.key == "l2.rop_latency" {
            continue;
        }
        assert!(
            keys.iter().any(|k| limit_of(k).is_some_and(|m| m.key == l.key)),
            "row {} matches no key",
            l.key
        );
    }
}

#[test]
fn queue_and_buffer_sizes_that_exhausted_memory_are_refused() {
    for (set, key, range) in [
        (
            "icnt.input_buffer_flits=4294967295",
            "icnt.input_buffer_flits",
            "1..=65536",
        ),
        (
            "icnt.ejection_buffer_entries=4294967295",
            "icnt.ejection_buffer_entries",
            "1..=4096",
        ),
        ("l2.mshr_entries=4294967295", "l2.mshr_entries", "1..=4096"),
        ("l2.mshr_max_merge=4294967295", "l2.mshr_max_merge", "1..=1024"),
        (
            "l2.queue_icnt_to_l2=4294967295",
            "l2.queue_icnt_to_l2",
            "1..=4096",
        ),
        (
            "l1d.miss_queue_entries=4294967295",
            "l1d.miss_queue_entries",
            "1..=4096",
        ),
    ] {
        let msg = load_err(&[set]);
        assert!(msg.contains(key) && msg.contains(range), "{set}: {msg}");
    }
}

#[test]
fn values_the_memory_model_cannot_use_are_refused_by_key() {
    // These panicked in crates/memory/src/system.rs.
    let msg = load_err(&["dram.bus_width_bytes=3"]);
    assert!(
        msg.contains("dram.burst_length") && msg.contains("= 48 B") && msg.contains("32 B"),
        "{msg}"
    );
    let msg = load_err(&["dram.burst_length=3"]);
    assert!(
        msg.contains("dram.burst_length") && msg.contains("= 6 B"),
        "{msg}"
    );
    let msg = load_err(&["dram.row_bytes=3"]);
    assert!(
        msg.contains("dram.row_bytes") && msg.contains("64..=65536"),
        "{msg}"
    );
    let msg = load_err(&["dram.row_bytes=4096", "dram.banks=12"]);
    assert!(
        msg.contains("dram.banks") && msg.contains("power of two"),
        "{msg}"
    );
    // A preset file with such a value is refused the same way.
    let dir = scratch("limits");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.toml");
    std::fs::write(&p, "inherits = \"rtx-a6000\"\n[dram]\nburst_length = 3\n").unwrap();
    let e = GpuConfig::from_file(&p).unwrap_err().to_string();
    assert!(e.contains("dram.burst_length"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn overflowing_sizes_are_refused_not_panicking() {
    // `line * assoc` overflowed u32 in validate.rs.
    let msg = load_err(&["l2.line_bytes=2147483648"]);
    assert!(
        msg.contains("l2.line_bytes") && msg.contains("32..=1024"),
        "{msg}"
    );
    let msg = load_err(&["frontend.l0i_line_bytes=2147483648"]);
    assert!(
        msg.contains("frontend.l0i_line_bytes") && msg.contains("16..=4096"),
        "{msg}"
    );
    let msg = load_err(&["l2.size_kb=4294967295"]);
    assert!(msg.contains("l2.size_kb"), "{msg}");
    let msg = load_err(&["frontend.l1i_assoc=1024", "frontend.l1i_line_bytes=4096"]);
    assert!(msg.contains("frontend.l1i_size"), "{msg}");
}

#[test]
fn nan_and_infinities_are_refused() {
    for v in ["nan", "inf", "-inf", "+nan"] {
        for key in [
            "gpu.core_clock_mhz",
            "gpu.l2_clock_mhz",
            "dram.clock_mhz",
            "l1d.shmem_atomic_conflict_cycles",
            "l2.atomic_conflict_cycles",
        ] {
            let set = format!("{key}={v}");
            let msg = load_err(&[&set]);
            assert!(msg.contains(key) && msg.contains("allowed range"), "{set}: {msg}");
        }
    }
    // In a preset file too.
    let e = GpuConfig::from_toml_str(
        "inherits = \"rtx-a6000\"\n[gpu]\ncore_clock_mhz = nan\n",
        "mine.toml",
    )
    .unwrap_err();
    assert!(matches!(e, ConfigError::OutOfRange { .. }), "{e}");
}

#[test]
fn negative_values_name_their_key_not_a_generated_line() {
    let msg = load_err(&["regfile.read_ports_per_bank=-1"]);
    assert!(
        msg.contains("regfile.read_ports_per_bank") && msg.contains("-1") && msg.contains("1..=4"),
        "{msg}"
    );
    assert!(!msg.contains("line"), "{msg}");
    // A deserializer error (bad enum value) names the key, not a line of regenerated text.
    let msg = load_err(&["l1d.hashing=\"nope\""]);
    assert!(msg.contains("l1d.hashing") && !msg.contains("line "), "{msg}");
}

#[test]
fn single_segment_overrides() {
    let msg = load_err(&["foo=1"]);
    assert!(
        msg.contains("unknown configuration key `foo`") && msg.contains("dram"),
        "{msg}"
    );
    let msg = load_err(&["regfile=3"]);
    assert!(msg.contains("whole section"), "{msg}");
}

#[test]
fn all_presets_stay_valid() {
    for p in sassim_config::list_presets() {
        GpuConfig::preset(&p.name).unwrap_or_else(|e| panic!("{}: {e}", p.name));
    }
}

/// Every numeric key of every preset (the walk of `every_numeric_field_has_a_limit`).
fn numeric_keys(v: &toml::Value, p: &mut Vec<String>, out: &mut Vec<String>) {
    match v {
        toml::Value::Table(t) => t.iter().for_each(|(k, c)| {
            p.push(k.clone());
            numeric_keys(c, p, out);
            p.pop();
        }),
        toml::Value::Array(a) => a.iter().enumerate().for_each(|(i, c)| {
            p.push(i.to_string());
            numeric_keys(c, p, out);
            p.pop();
        }),
        toml::Value::Integer(_) | toml::Value::Float(_) => out.push(p.join(".")),
        _ => {}
    }
}

#[test]
fn indexed_lookup_is_the_first_matching_row() {
    // `limit_of` uses an index; the table's meaning is its first matching row.
    let first = |key: &str| {
        LIMITS.iter().find(|l| {
            let (mut p, mut k) = (l.key.split('.'), key.split('.'));
            loop {
                match (p.next(), k.next()) {
                    (None, None) => return true,
                    (Some(a), Some(b)) if a == "*" || a == b => {}
                    _ => return false,
                }
            }
        })
    };
    let mut keys: Vec<String> = vec!["nosuch".into(), "units.fp32".into(), "l2.size_kb.x".into()];
    for p in sassim_config::presets::list_presets() {
        let v = toml::Value::try_from(GpuConfig::preset(&p.name).unwrap()).unwrap();
        numeric_keys(&v, &mut Vec::new(), &mut keys);
    }
    assert!(keys.len() > 500, "{}", keys.len());
    for k in &keys {
        assert_eq!(limit_of(k).map(|l| l.key), first(k).map(|l| l.key), "{k}");
    }
}

#[test]
fn presets_load_the_same_every_time() {
    // Embedded presets and opcode tables are parsed once per process and the merged value
    // is deserialized directly: a second load, with overrides or through text, is equal.
    for p in sassim_config::presets::list_presets() {
        let a = GpuConfig::preset(&p.name).unwrap();
        let b = GpuConfig::preset(&p.name).unwrap();
        assert_eq!(a.to_toml(), b.to_toml(), "{}", p.name);
        let text = a.to_toml();
        let c = GpuConfig::from_toml_str(&text, "again.toml").unwrap();
        assert_eq!(c.to_toml(), text, "{}", p.name);
        // As the text round trip that loading used before gives.
        let v = sassim_config::presets::preset_value(&p.name).unwrap();
        let old: GpuConfig = toml::from_str(&toml::to_string(&v).unwrap()).unwrap();
        assert_eq!(old.to_toml(), text, "{}", p.name);
        assert_eq!(
            format!("{:?}", a.try_opcode_table().unwrap()),
            format!("{:?}", b.try_opcode_table().unwrap())
        );
    }
}
