//! Presets load, validate and match MICRO'25 Table 4; overrides and errors.

use sassim_config::{list_presets, ConfigError, GpuConfig, SchedulerPolicy};

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

const ALL: [&str; 10] = [
    "rtx-a6000",
    "rtx-3080",
    "rtx-3080ti",
    "rtx-3090",
    "rtx-2070s",
    "rtx-2080ti",
    "t4",
    "rtx-5070ti",
    "h100",
    "h100-pcie",
];

#[test]
fn all_presets_load_and_validate() {
    for name in ALL {
        let cfg = GpuConfig::preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        cfg.validate().unwrap();
        assert_eq!(cfg.gpu.name, name);
        assert!(cfg.opcode_table().arch().starts_with("sm_"));
        // JSON dump works and round-trips.
        let json = cfg.to_json();
        assert!(json.contains(&format!("\"name\": \"{name}\"")));
        let back = GpuConfig::from_toml_str(&cfg.to_toml(), "roundtrip").unwrap();
        assert_eq!(back, cfg);
    }
    assert_eq!(list_presets().len(), ALL.len());
}

#[test]
fn list_presets_has_aliases_and_arch() {
    let list = list_presets();
    let a6000 = list.iter().find(|p| p.name == "rtx-a6000").unwrap();
    assert_eq!(a6000.arch, "sm_86");
    assert!(a6000.aliases.iter().any(|a| a == "a6000"));
    // Aliases are unique across presets.
    let mut seen = std::collections::BTreeMap::new();
    for p in &list {
        for n in std::iter::once(&p.name).chain(&p.aliases) {
            let k: String = n
                .to_lowercase()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect();
            let owner = seen.entry(k).or_insert_with(|| p.name.clone());
            assert_eq!(*owner, p.name, "alias {n} shared by two presets");
        }
    }
}

#[test]
fn aliases_and_case() {
    for (alias, canon) in [
        ("a6000", "rtx-a6000"),
        ("RTX-A6000", "rtx-a6000"),
        ("2080ti", "rtx-2080ti"),
        ("RTX 2080 Ti", "rtx-2080ti"),
        ("tesla-t4", "t4"),
        ("T4", "t4"),
        ("5070ti", "rtx-5070ti"),
        ("h100-sxm", "h100"),
        ("H100", "h100"),
        ("3080TI", "rtx-3080ti"),
        ("2070-super", "rtx-2070s"),
    ] {
        assert_eq!(GpuConfig::preset(alias).unwrap().gpu.name, canon, "{alias}");
    }
    assert_eq!(GpuConfig::default_preset().gpu.name, "rtx-a6000");
    match GpuConfig::preset("gtx-480") {
        Err(ConfigError::UnknownPreset { name, known }) => {
            assert_eq!(name, "gtx-480");
            assert!(known.contains("rtx-a6000"));
        }
        other => panic!("expected UnknownPreset, got {other:?}"),
    }
}

/// MICRO'25 Table 4, column by column.
#[test]
fn table4_numbers() {
    // name, core MHz, mem MHz, SMs, warps/SM, L1/shared KB, mem partitions, L2 KB
    let rows = [
        ("rtx-3080", 1710.0, 9500.0, 68, 48, 128, 20, 5120),
        ("rtx-3080ti", 1365.0, 9500.0, 80, 48, 128, 24, 6144),
        ("rtx-3090", 1395.0, 9750.0, 82, 48, 128, 24, 6144),
        ("rtx-a6000", 1800.0, 8000.0, 84, 48, 128, 24, 6144),
        ("rtx-2070s", 1605.0, 7000.0, 40, 32, 96, 16, 4096),
        ("rtx-2080ti", 1350.0, 7000.0, 68, 32, 96, 22, 5632),
        ("rtx-5070ti", 2580.0, 14000.0, 70, 48, 128, 16, 49152),
    ];
    for (name, core, mem, sms, warps, l1, parts, l2) in rows {
        let c = GpuConfig::preset(name).unwrap();
        assert_eq!(c.gpu.core_clock_mhz, core, "{name} core clock");
        assert_eq!(c.dram.clock_mhz, mem, "{name} mem clock");
        assert_eq!(c.gpu.num_sms, sms, "{name} SMs");
        assert_eq!(c.gpu.max_warps_per_sm, warps, "{name} warps");
        assert_eq!(c.gpu.l1_shared_total_kb, l1, "{name} L1");
        assert_eq!(c.l2.partitions, parts, "{name} partitions");
        assert_eq!(c.l2.size_kb, l2, "{name} L2");
        assert_eq!(c.gpu.subcores_per_sm, 4);
        assert_eq!(c.gpu.warp_size, 32);
    }
}

#[test]
fn other_facts() {
    let h = GpuConfig::preset("h100").unwrap();
    assert_eq!(
        (
            h.gpu.num_sms,
            h.gpu.max_warps_per_sm,
            h.gpu.shared_mem_per_sm_max_kb
        ),
        (132, 64, 228)
    );
    assert_eq!((h.gpu.l1_shared_total_kb, h.l2.size_kb), (256, 50 * 1024));
    assert!(h.gpu.variant.contains("SXM5"));
    assert!(!h.units.fp64.shared_by_sm);
    let bw = h.dram_bandwidth_gbps();
    assert!((3300.0..3400.0).contains(&bw), "H100 bandwidth {bw}");

    // The PCIe board: 114 SMs at 1755 MHz, HBM2e at 2.0 TB/s, the same 50 MB L2 [CNC].
    let p = GpuConfig::preset("h100-pcie").unwrap();
    assert_eq!((p.gpu.num_sms, p.gpu.core_clock_mhz), (114, 1755.0));
    assert_eq!(p.l2.size_kb, 50 * 1024);
    assert_eq!(p.dram.dram_type, sassim_config::DramType::Hbm2e);
    let bw = p.dram_bandwidth_gbps();
    assert!((2000.0..2100.0).contains(&bw), "H100 PCIe bandwidth {bw}");
    assert!(p.gpu.variant.contains("PCIe"));
    assert_eq!(GpuConfig::preset("H100-PCIe").unwrap().gpu.name, "h100-pcie");

    let t4 = GpuConfig::preset("t4").unwrap();
    assert_eq!(
        (t4.gpu.num_sms, t4.gpu.core_clock_mhz, t4.gpu.max_threads_per_sm),
        (40, 1590.0, 1024)
    );
    assert_eq!((t4.regfile.banks, t4.regfile.read_ports_per_bank), (2, 2)); // T4 paper 3.5.1
    assert_eq!(t4.l2.latency, 188);
    assert!((t4.dram_bandwidth_gbps() - 320.0).abs() < 1.0);

    let a = GpuConfig::default_preset();
    assert!((a.dram_bandwidth_gbps() - 768.0).abs() < 0.5);
    assert_eq!(a.frontend.stream_buffer_entries, 8);
    assert_eq!(a.frontend.ib_entries, 3);
    assert_eq!(a.issue.scheduler, SchedulerPolicy::Cggty);
    assert!(a.units.fp64.shared_by_sm);
    assert_eq!(a.l2_slices(), 48);
    assert_eq!(a.l2_sets_per_slice(), 64);
    assert_eq!(a.warps_per_subcore(), 12);
    let ti = GpuConfig::preset("2080ti").unwrap();
    assert!((ti.dram_bandwidth_gbps() - 616.0).abs() < 0.5);
    assert!(GpuConfig::preset("5070ti").unwrap().units.fp64.shared_by_sm);
}

fn ov(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn overrides_apply() {
    let c = GpuConfig::load(
        "a6000",
        &ov(&[
            "units.fp32.latency=5",
            "frontend.stream_buffer_entries = 16",
            "issue.scheduler=gto",
            "gpu.core_clock_mhz=1500",
            "regfile.rfc_enabled=false",
            "units.tensor.latency_table.0.latency=40",
        ]),
    )
    .unwrap();
    assert_eq!(c.units.fp32.latency, 5);
    assert_eq!(c.frontend.stream_buffer_entries, 16);
    assert_eq!(c.issue.scheduler, SchedulerPolicy::Gto);
    assert_eq!(c.gpu.core_clock_mhz, 1500.0);
    assert!(!c.regfile.rfc_enabled);
    assert_eq!(c.units.tensor.latency_table[0].latency, 40);
    // The opcode table follows the unit latency.
    assert_eq!(c.opcode_table().lookup("FFMA", &[]).info.latency, 5);
    // with_overrides on a loaded config.
    let d = c.with_overrides(&ov(&["issue.scheduler=\"lrr\""])).unwrap();
    assert_eq!(d.issue.scheduler, SchedulerPolicy::Lrr);
}

#[test]
fn unknown_key_is_named() {
    let e = GpuConfig::load("a6000", &ov(&["frontend.ib_entriez=4"])).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, ConfigError::UnknownKey { .. }), "{msg}");
    assert!(msg.contains("frontend.ib_entriez"), "{msg}");
    assert!(msg.contains("ib_entries"), "valid keys listed: {msg}");
    let e = GpuConfig::load("a6000", &ov(&["fronted.ib_entries=4"])).unwrap_err();
    assert!(e.to_string().contains("fronted"), "{e}");
    let e = GpuConfig::load("a6000", &ov(&["units.fp33.latency=4"])).unwrap_err();
    assert!(
        e.to_string().contains("units.fp33") && e.to_string().contains("fp32"),
        "{e}"
    );
}

#[test]
fn out_of_range_names_key_and_range() {
    for (o, key, range) in [
        ("regfile.banks=9", "regfile.banks", "1..=8"),
        (
            "regfile.read_ports_per_bank=0",
            "regfile.read_ports_per_bank",
            "1..=4",
        ),
        (
            "frontend.stream_buffer_entries=65",
            "frontend.stream_buffer_entries",
            "0..=64",
        ),
        ("frontend.ib_entries=0", "frontend.ib_entries", "1..=16"),
        (
            "issue.stall_gt11_without_yield_cycles=16",
            "issue.stall_gt11_without_yield_cycles",
            "0..=15",
        ),
    ] {
        let e = GpuConfig::load("a6000", &ov(&[o])).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, ConfigError::OutOfRange { .. }), "{o}: {msg}");
        assert!(msg.contains(key) && msg.contains(range), "{o}: {msg}");
    }
}

#[test]
fn wrong_type_names_key_and_type() {
    let e = GpuConfig::load("a6000", &ov(&["regfile.banks=two"])).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, ConfigError::WrongType { .. }), "{msg}");
    assert!(
        msg.contains("regfile.banks") && msg.contains("integer") && msg.contains("string"),
        "{msg}"
    );
    let e = GpuConfig::load("a6000", &ov(&["regfile.rfc_enabled=1"])).unwrap_err();
    assert!(e.to_string().contains("boolean"), "{e}");
    let e = GpuConfig::load("a6000", &ov(&["units.fp32=4"])).unwrap_err();
    assert!(e.to_string().contains("units.fp32"), "{e}");
    // A bad enum variant is reported by the deserializer with the allowed values.
    let e = GpuConfig::load("a6000", &ov(&["issue.scheduler=fifo"])).unwrap_err();
    assert!(e.to_string().contains("cggty"), "{e}");
    // Malformed.
    assert!(matches!(
        GpuConfig::load("a6000", &ov(&["banks"])),
        Err(ConfigError::MalformedOverride { .. })
    ));
    assert!(matches!(
        GpuConfig::load("a6000", &ov(&["regfile=3"])),
        Err(ConfigError::MalformedOverride { .. })
    ));
}

#[test]
fn file_with_inherits_and_unknown_field() {
    let dir = scratch("config-test");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("mine.toml");
    std::fs::write(
        &p,
        "inherits = \"2080ti\"\n[gpu]\nname = \"my-gpu\"\nnum_sms = 10\n",
    )
    .unwrap();
    let c = GpuConfig::from_file(&p).unwrap();
    assert_eq!(
        (c.gpu.name.as_str(), c.gpu.num_sms, c.gpu.arch.as_str()),
        ("my-gpu", 10, "sm_75")
    );
    let c = GpuConfig::load(p.to_str().unwrap(), &ov(&["gpu.num_sms=12"])).unwrap();
    assert_eq!(c.gpu.num_sms, 12);
    std::fs::write(&p, "inherits = \"a6000\"\n[l2]\nbogus = 1\n").unwrap();
    let e = GpuConfig::from_file(&p).unwrap_err().to_string();
    assert!(e.contains("bogus"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
