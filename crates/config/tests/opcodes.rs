//! Opcode tables: coverage of the real listings, modifiers, unknown opcodes,
//! and the MICRO'25 Table 2 arithmetic of docs/presets.md.

use std::collections::BTreeSet;

use sassim_config::{GpuConfig, LatencyKind, MemOp, MemPipelineConfig, OpcodeTable, UnitKind};

const LISTINGS: &[(&str, &str)] = &[
    (
        "block_sum_sm75",
        include_str!("fixtures/sass/block_sum_sm75.cuobjdump-sass.txt"),
    ),
    (
        "block_sum_sm80",
        include_str!("fixtures/sass/block_sum_sm80.cuobjdump-sass.txt"),
    ),
    (
        "block_sum_sm86",
        include_str!("fixtures/sass/block_sum_sm86.cuobjdump-sass.txt"),
    ),
    (
        "block_sum_sm89",
        include_str!("fixtures/sass/block_sum_sm89.cuobjdump-sass.txt"),
    ),
    (
        "block_sum_sm90",
        include_str!("fixtures/sass/block_sum_sm90.cuobjdump-sass.txt"),
    ),
    (
        "kernels_cu_sm86",
        include_str!("fixtures/sass/kernels_cu_sm86.cuobjdump-sass.txt"),
    ),
    (
        "vec_add_sm75",
        include_str!("fixtures/sass/vec_add_sm75.cuobjdump-sass.txt"),
    ),
    (
        "vec_add_sm80",
        include_str!("fixtures/sass/vec_add_sm80.cuobjdump-sass.txt"),
    ),
    (
        "vec_add_sm86",
        include_str!("fixtures/sass/vec_add_sm86.cuobjdump-sass.txt"),
    ),
    (
        "vec_add_sm89",
        include_str!("fixtures/sass/vec_add_sm89.cuobjdump-sass.txt"),
    ),
    (
        "vec_add_sm90",
        include_str!("fixtures/sass/vec_add_sm90.cuobjdump-sass.txt"),
    ),
];

/// Opcode base names of `/*0040*/  @P0 OPCODE.MOD ... ;` lines.
fn opcodes(listing: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in listing.lines() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix("/*") else {
            continue;
        };
        let Some((addr, body)) = rest.split_once("*/") else {
            continue;
        };
        if !addr.chars().all(|c| c.is_ascii_hexdigit()) || addr.is_empty() {
            continue;
        }
        let mut words = body.split_whitespace();
        let mut w = match words.next() {
            Some(w) => w,
            None => continue,
        };
        if w.starts_with('@') {
            w = match words.next() {
                Some(w) => w,
                None => continue,
            };
        }
        let base = w.trim_end_matches(';').split('.').next().unwrap_or("");
        if !base.is_empty() && base.chars().next().unwrap().is_ascii_uppercase() {
            out.insert(base.to_string());
        }
    }
    out
}

#[test]
fn every_listing_opcode_is_known() {
    let mut all = BTreeSet::new();
    for (_, l) in LISTINGS {
        all.extend(opcodes(l));
    }
    assert!(all.len() >= 30, "extracted {all:?}");
    for must in [
        "NOP", "IMAD", "LDG", "STS", "BAR", "ULDC", "SHFL", "RED", "F2I", "S2UR", "LDC",
    ] {
        assert!(all.contains(must), "{must} not extracted");
    }
    for (preset, table) in [("2080ti", "sm_75"), ("a6000", "sm_86"), ("h100", "sm_90")] {
        let cfg = GpuConfig::preset(preset).unwrap();
        let t = cfg.opcode_table();
        assert_eq!(t.arch(), table);
        for op in &all {
            assert!(t.lookup(op, &[]).known, "{op} unknown to {table}");
        }
    }
}

#[test]
fn accel_sim_lists_are_covered() {
    // trace-formats.md section 2.1, Turing list (Ampere minus its additions).
    let turing = "FADD FADD32I FCHK FFMA32I FFMA FMNMX FMUL FMUL32I FSEL FSET FSETP FSWZADD HADD2 HADD2_32I HFMA2 \
        HFMA2_32I HMUL2 HMUL2_32I HSET2 HSETP2 MUFU DADD DFMA DMUL DSETP BMSK BREV FLO IABS IADD IADD3 IADD32I IDP \
        IDP4A IMAD IMNMX IMUL IMUL32I ISCADD ISCADD32I ISETP LEA LOP LOP3 LOP32I POPC SHF SHL SHR VABSDIFF VABSDIFF4 \
        F2F F2FP F2I I2F I2I FRND MOV MOV32I MOVM PRMT SEL SGXT SHFL PLOP3 PSETP P2R R2P LDC MATCH QSPC CCTL CCTLL \
        ERRBAR CCTLT SUATOM SULD SURED SUST B2R CS2R CSMTEST DEPBAR GETLMEMBASE LEPC NOP PMTRIG R2B S2R SETCTAID \
        SETLMEMBASE VOTE VOTE_VTG LD LDG LDL LDS LDSM ST STG STL STS ATOM ATOMS ATOMG RED MEMBAR BAR EXIT BMOV BPT \
        BRA BREAK BRX BRXU BSSY BSYNC CALL JMP JMX JMXU NANOSLEEP RET RPCMOV RTT WARPSYNC YIELD TEX TLD TLD4 TMML \
        TXD TXQ HMMA BMMA IMMA KILL R2UR S2UR UBMSK UBREV UCLEA UFLO UIADD3 UIMAD UISETP ULDC ULEA ULOP ULOP3 \
        ULOP32I UMOV UP2UR UPLOP3 UPOPC UPRMT UPSETP UR2UP USEL USGXT USHF USHL USHR VOTEU";
    let ampere_extra = "DMMA F2IP HMNMX2 I2FP LDGDEPBAR LDGSTS REDUX SUQUERY UF2FP";
    let a = GpuConfig::default_preset();
    for table in ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"] {
        let t = OpcodeTable::for_arch(table, &a.units, 32).unwrap();
        for op in turing.split_whitespace() {
            assert!(t.contains(op), "{op} missing from {table}");
        }
        if table != "sm_75" {
            for op in ampere_extra.split_whitespace() {
                assert!(t.contains(op), "{op} missing from {table}");
            }
        }
    }
    let h = OpcodeTable::for_arch("sm_90", &a.units, 32).unwrap();
    assert!(h.contains("HGMMA") && h.contains("UTMALDG") && h.contains("SYNCS"));
}

#[test]
fn lookups_and_modifiers() {
    let a = GpuConfig::default_preset();
    let t = a.opcode_table();
    let ffma = t.lookup("FFMA", &[]);
    assert!(ffma.known);
    assert_eq!(
        (
            ffma.info.unit,
            ffma.info.kind,
            ffma.info.latency,
            ffma.info.issue_cycles
        ),
        (UnitKind::Fp32, LatencyKind::Fixed, 4, 2)
    );
    assert!(!ffma.source.is_empty());
    assert_eq!(t.lookup("hadd2", &[]).info.latency, 5); // M25: HADD2 5
    assert_eq!(t.lookup("IMAD", &["WIDE", "U32"]).info.issue_cycles, 2);
    let f2f = t.lookup("F2F", &["F64", "F32"]);
    assert_eq!(f2f.info.unit, UnitKind::Fp64);
    assert_eq!(f2f.info.latency, a.units.fp64.latency);
    assert_eq!(t.lookup("F2F", &["F16", "F32"]).info.unit, UnitKind::Sfu);
    let ldg = t.lookup("LDG", &["E", "128"]);
    assert_eq!(
        (ldg.info.kind, ldg.info.mem),
        (LatencyKind::Variable, Some(MemOp::GlobalLoad))
    );
    assert_eq!(t.lookup("MUFU", &["EX2"]).info.kind, LatencyKind::Variable);
    // Tensor latency comes from the per-preset table.
    // (ptxas 13.5 places the dependent HMMA 24 cycles after an HMMA.16816 at sm_86.)
    assert_eq!(t.lookup("HMMA", &["16816", "F32", "BF16"]).info.latency, 24);
    // GeForce GA102 accumulates in FP32 at half the rate of FP16 accumulation (whitepaper):
    // the same latency, twice the initiation interval.
    let g = GpuConfig::preset("3090").unwrap();
    let f32acc = g.opcode_table().lookup("HMMA", &["16816", "F32"]).info;
    let f16acc = g.opcode_table().lookup("HMMA", &["16816", "F16"]).info;
    assert_eq!((f32acc.latency, f16acc.latency), (24, 24));
    assert_eq!((f32acc.initiation_interval, f16acc.initiation_interval), (32, 16));
    // Turing: HFMA2 6 (T4 paper), 2-port banks.
    let ti = GpuConfig::preset("2080ti").unwrap();
    assert_eq!(ti.opcode_table().lookup("HFMA2", &[]).info.latency, 6);
    assert_eq!(ti.opcode_table().lookup("DFMA", &[]).info.latency, 54);
    // H100: FP32 full-warp latch, fixed-latency FP64.
    let h = GpuConfig::preset("h100").unwrap();
    assert_eq!(h.opcode_table().lookup("FFMA", &[]).info.issue_cycles, 1);
    assert_eq!(h.opcode_table().lookup("DFMA", &[]).info.kind, LatencyKind::Fixed);
}

#[test]
fn unknown_opcode_gets_default() {
    let a = GpuConfig::default_preset();
    let l = a.opcode_table().lookup("FROBNICATE", &["X"]);
    assert!(!l.known);
    assert_eq!(
        (l.info.unit, l.info.kind, l.info.latency),
        (UnitKind::Int, LatencyKind::Fixed, a.units.int.latency)
    );
    // Sm_75 does not know LDGSTS (Ampere+), sm_86 does.
    let ti = GpuConfig::preset("2080ti").unwrap();
    assert!(!ti.opcode_table().lookup("LDGSTS", &[]).known);
    assert!(a.opcode_table().lookup("LDGSTS", &[]).known);
}

// ---- MICRO'25 Table 2 reproduced from [mem_pipeline] (arithmetic in docs/presets.md) ----

fn wb(bits_per_thread: u32, bw: u32, m: &MemPipelineConfig) -> u32 {
    (32 * bits_per_thread).div_ceil(bw).max(m.wb_min_cycles)
}
fn link(regs: u32, m: &MemPipelineConfig) -> u32 {
    regs * 1024 / m.store_link_bits_per_cycle
}
fn load_global(bits: u32, regular: bool, m: &MemPipelineConfig) -> (u32, u32) {
    let war = m.src_release_base
        + if regular {
            m.global_addr_calc_regular_extra
        } else {
            0
        };
    let raw = war
        + if regular { m.regular_addr_coalesce_extra } else { 0 }
        + m.l1_hit_path
        + wb(bits, m.mem_to_rf_bits_per_cycle, m);
    (war, raw)
}
fn load_shared(bits: u32, regular: bool, m: &MemPipelineConfig) -> (u32, u32) {
    let war = m.src_release_base;
    let raw = war
        + if regular { m.regular_addr_coalesce_extra } else { 0 }
        + m.shared_path
        + wb(bits, m.shared_to_rf_bits_per_cycle, m);
    (war, raw)
}
fn store(bits: u32, addr_regs: u32, m: &MemPipelineConfig) -> u32 {
    m.src_release_base - 1 + link(addr_regs + bits / 32, m)
}
fn ldc(bits: u32, indexed: bool, m: &MemPipelineConfig) -> (u32, u32) {
    let raw = m.src_release_base
        + m.const_vl_hit_path
        + wb(bits, m.shared_to_rf_bits_per_cycle, m)
        + if indexed { m.ldc_indexed_extra } else { 0 };
    let war = if indexed {
        raw
    } else {
        m.src_release_base + m.ldc_imm_war_extra
    };
    (war, raw)
}
fn ldgsts(m: &MemPipelineConfig) -> (u32, u32) {
    let war = m.src_release_base + m.global_addr_calc_regular_extra + link(1, m);
    (
        war,
        war + m.regular_addr_coalesce_extra + m.l1_hit_path + m.ldgsts_smem_fill,
    )
}

#[test]
fn table2_is_reproduced_on_the_a6000() {
    let m = GpuConfig::default_preset().mem_pipeline;
    let m = &m;
    // (WAR, RAW) of loads; global regular addresses are 64-bit register pairs, shared 1 register.
    assert_eq!(
        [
            load_global(32, false, m),
            load_global(64, false, m),
            load_global(128, false, m)
        ],
        [(9, 29), (9, 31), (9, 35)]
    );
    assert_eq!(
        [
            load_global(32, true, m),
            load_global(64, true, m),
            load_global(128, true, m)
        ],
        [(11, 32), (11, 34), (11, 38)]
    );
    assert_eq!(
        [
            load_shared(32, false, m),
            load_shared(64, false, m),
            load_shared(128, false, m)
        ],
        [(9, 23), (9, 23), (9, 25)]
    );
    assert_eq!(
        [
            load_shared(32, true, m),
            load_shared(64, true, m),
            load_shared(128, true, m)
        ],
        [(9, 24), (9, 24), (9, 26)]
    );
    // Store WAR: global uniform (0 address regs), global regular (2), shared uniform (0), shared regular (1).
    assert_eq!([store(32, 0, m), store(64, 0, m), store(128, 0, m)], [10, 12, 16]);
    assert_eq!([store(32, 2, m), store(64, 2, m), store(128, 2, m)], [14, 16, 20]);
    assert_eq!([store(32, 1, m), store(64, 1, m), store(128, 1, m)], [12, 14, 18]);
    assert_eq!(
        [ldc(32, false, m), ldc(32, true, m), ldc(64, true, m)],
        [(10, 26), (29, 29), (29, 29)]
    );
    assert_eq!(ldgsts(m), (13, 39));
}

/// The class of unknown opcodes is configurable (issue.unknown_opcode_*), with errors that
/// name the key for a bad value.
#[test]
fn unknown_opcode_class_is_configurable() {
    use sassim_config::{GpuConfig, LatencyKind, UnitKind};
    let g = GpuConfig::load("rtx-a6000", &[]).expect("preset");
    let l = g.opcode_table().lookup("NOSUCHOP", &[]);
    assert!(!l.known);
    assert_eq!((l.info.unit, l.info.kind), (UnitKind::Int, LatencyKind::Fixed));
    let sets = [
        "issue.unknown_opcode_unit=sfu".to_string(),
        "issue.unknown_opcode_kind=variable".to_string(),
        "issue.unknown_opcode_latency=30".to_string(),
    ];
    let g = GpuConfig::load("rtx-a6000", &sets).expect("overrides");
    let l = g.opcode_table().lookup("NOSUCHOP", &[]);
    assert!(!l.known);
    assert_eq!(
        (l.info.unit, l.info.kind, l.info.latency),
        (UnitKind::Sfu, LatencyKind::Variable, 30)
    );
    // Known opcodes are unaffected.
    assert_eq!(g.opcode_table().lookup("FFMA", &[]).info.unit, UnitKind::Fp32);
    let e = GpuConfig::load("rtx-a6000", &["issue.unknown_opcode_unit=gpu".to_string()])
        .expect_err("bad unit")
        .to_string();
    assert!(e.contains("issue.unknown_opcode_unit"), "{e}");
}

/// A warpgroup MMA's initiation interval is its warp's quarter of the 64 x N x K tile at the
/// row's `macs_per_cycle` (h100: FP16 512, TF32 256, INT8 1024 per sub-core, H100 whitepaper),
/// floored at the row's `initiation_interval` (4): m64n256k16 FP16 takes 128 cycles, the
/// interval Luo et al. (IPDPS 2024, Table VIII) measured as its latency on an H800.
#[test]
fn warpgroup_mma_interval_scales_with_n() {
    let cfg = GpuConfig::preset("h100").unwrap();
    let t = cfg.opcode_table();
    let ii = |op: &str, mods: &[&str]| t.lookup(op, mods).info.initiation_interval;
    assert_eq!(ii("HGMMA", &["64x256x16", "F32"]), 128);
    assert_eq!(ii("HGMMA", &["64x128x16", "F32"]), 64);
    assert_eq!(ii("HGMMA", &["64x64x16", "F16"]), 32);
    assert_eq!(ii("HGMMA", &["64x16x16", "F32"]), 8);
    assert_eq!(ii("HGMMA", &["64x8x16", "F32"]), 4, "floor: the issue slope");
    assert_eq!(ii("HGMMA", &["64x128x8", "F32", "TF32"]), 64);
    assert_eq!(ii("IGMMA", &["64x256x32", "S8", "S8"]), 128);
    assert_eq!(ii("QGMMA", &["64x128x32", "F32", "E4M3", "E4M3"]), 64);
    assert_eq!(t.lookup("HGMMA", &["64x256x16", "F32"]).info.latency, 128);
}
