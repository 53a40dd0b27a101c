//! The paper's microbenchmarks through `sassim microbench` (issues 4 and 5).
//! M25 = the MICRO'25 reference (`modern-gpu-cores-micro25.md`), T4P = the T4 report.

mod common;
use common::*;

const PERFECT_I: [&str; 2] = ["--set", "frontend.perfect_icache=true"];

fn paper(name: &str) -> std::path::PathBuf {
    root().join("fixtures/sass-samples/microbench").join(name)
}

/// M25 A4.1, Listing 2: target stall 1 → 5 cycles and a stale R1 (R5 = 2);
/// stall 4 → 8 cycles and R5 = 6.
#[test]
fn listing2_stall_counter_semantics() {
    for (f, cycles, r5) in [
        ("listing2_stall_s1.sass", 5, 2.0f32),
        ("listing2_stall_s4.sass", 8, 6.0),
    ] {
        let (v, ok) = mb_file(&paper(f), &[]);
        assert!(ok, "{f}: {v}");
        assert_eq!(elapsed(&v), cycles, "{f}");
        assert!(
            reg(&v, 0, "R5").iter().all(|&x| f32::from_bits(x) == r5),
            "{f}: R5"
        );
    }
}

/// M25 A3, Listing 1: 5 / 6 / 7 cycles for odd-odd / even-odd / even-even.
#[test]
fn listing1_register_bank_conflicts() {
    for (f, cycles) in [
        ("listing1_rf_conflict_odd_odd.sass", 5),
        ("listing1_rf_conflict_even_odd.sass", 6),
        ("listing1_rf_conflict_even_even.sass", 7),
    ] {
        let (v, ok) = mb_file(&paper(f), &[]);
        assert!(ok);
        assert_eq!(elapsed(&v), cycles, "{f}");
    }
}

/// M25 A8, Listing 3: stall 4 on the MOV feeding the LDG reads a stale address register
/// and faults; stall 5 works (variable-latency consumers need one more cycle).
#[test]
fn listing3_bypass_and_variable_latency_consumer() {
    let (v, ok) = mb_file(&paper("listing3_bypass_s4.sass"), &[]);
    assert!(!ok);
    assert!(
        v["error"].as_str().unwrap_or("").contains("illegal address"),
        "{v}"
    );
    let (v, ok) = mb_file(&paper("listing3_bypass_s5.sass"), &[]);
    assert!(ok, "{v}");
}

/// Listing 3's first half: stall 4 suffices for a fixed-latency consumer of the MOV.
#[test]
fn fixed_latency_consumer_bypass() {
    let src = ".init R17 = 7\n[B------:R-:W-:-:S04] MOV R43, R17 ;\n[B------:R-:W-:-:S01] MOV R41, R43 ;\n\
               [B------:R-:W-:-:S03] MOV R44, R43 ;\n[B------:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb("bypass4.sass", src, &[]);
    assert!(ok);
    assert_eq!(reg(&v, 0, "R41")[0], 7);
    let src3 = src.replace("S04] MOV R43", "S03] MOV R43");
    let (v, _) = mb("bypass3.sass", &src3, &[]);
    assert_eq!(reg(&v, 0, "R41")[0], 0, "stall 3 reads the old R43");
}

/// M25 A8, Listing 4: the annotated RFC hit/miss of every operand (JSON `rfc`).
#[test]
fn listing4_register_file_cache() {
    // (file, hits of the 2nd and 3rd instruction's slot holding R2)
    let cases = [
        ("listing4_rfc_ex1.sass", [true, false], [0usize, 0usize]),
        ("listing4_rfc_ex2.sass", [true, true], [0, 0]),
        ("listing4_rfc_ex3.sass", [false, true], [1, 0]),
        ("listing4_rfc_ex4.sass", [false, false], [0, 0]),
    ];
    for (f, expect, slots) in cases {
        let (v, ok) = mb_file(&paper(f), &[]);
        assert!(ok, "{f}");
        let rfc = warp(&v, 0)["rfc"].as_array().expect("rfc").clone();
        let iadd_ffma: Vec<&serde_json::Value> = rfc
            .iter()
            .filter(|r| {
                let pc = r["pc"].as_u64().unwrap_or(0);
                warp(&v, 0)["issues"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|i| i["pc"].as_u64() == Some(pc) && (i["op"] == "FFMA" || i["op"] == "IADD3"))
            })
            .collect();
        assert!(iadd_ffma.len() >= 3, "{f}: {rfc:?}");
        for k in 0..2 {
            let hits = iadd_ffma[k + 1]["hits"].as_array().unwrap();
            assert_eq!(
                hits[slots[k]].as_bool(),
                Some(expect[k]),
                "{f}: instruction {}",
                k + 2
            );
        }
        // Example 4: the FFMA's R4 misses too.
        if f.ends_with("ex4.sass") {
            assert_eq!(iadd_ffma[1]["hits"][0].as_bool(), Some(false));
        }
    }
}

/// M25 A8 rule 28 (with rules 26-27): a 64-bit operand is cached as two halves, each in
/// the RFC entry of its own bank. `IMAD.WIDE`'s third source `R6:R7` (banks 0 and 1) is
/// cached with reuse; a later read of the same slot by another instruction evicts only
/// the half in that read's bank, and a read in another slot evicts neither. A model that
/// kept the pair in one entry would keep `R7` after the read of `R1`.
#[test]
fn rule28_two_register_operand_halves_in_their_own_banks() {
    // (instruction between the two IMAD.WIDEs, expected hits of R6 and R7)
    let cases = [
        ("", [true, true]),
        ("IADD3 R12, R14, R15, R1 ;\n", [true, false]),
        ("IADD3 R12, R14, R15, R0 ;\n", [false, true]),
        ("FADD R12, R14, R1 ;\n", [true, true]),
        ("IADD3 R12, R14, R15, R1.reuse ;\n", [true, false]),
    ];
    for (between, want) in cases {
        let src = format!(
            ".kernel rule28\nIMAD.WIDE R4, R2, R3, R6.reuse ;\n{between}IMAD.WIDE R8, R10, R11, R6 ;\nEXIT ;\n"
        );
        let (v, ok) = mb("rule28.sass", &src, &PERFECT_I);
        assert!(ok, "{src}: {v}");
        let rfc = warp(&v, 0)["rfc"].as_array().expect("rfc").clone();
        let second = rfc
            .iter()
            .rfind(|r| {
                r["reads"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x["reg"] == 10))
            })
            .expect("second IMAD.WIDE");
        let half = |reg: u64| {
            second["reads"]
                .as_array()
                .and_then(|a| a.iter().find(|x| x["slot"] == 2 && x["reg"] == reg))
                .and_then(|x| x["hit"].as_bool())
        };
        assert_eq!([half(6), half(7)], want.map(Some), "between: {between:?}");
    }
}

fn fig4(second: &str, other: &str) -> String {
    let mut s = String::from(".block 512\n.active_warps 0,4,8,12\n[B------:R-:W-:-:S06] BAR.SYNC 0x0 ;\n");
    for i in 0..32 {
        let cc = if i == 1 { second } else { other };
        s += &format!("{cc} FADD R{}, R{}, R{} ;\n", 2 * i + 20, 2 * i + 1, 2 * i + 2);
    }
    s + "EXIT ;\n"
}

/// Issue cycles of the 32 instructions (after the barrier) for W3, W2, W1, W0.
fn fig4_cycles(v: &serde_json::Value) -> Vec<Vec<u64>> {
    [12, 8, 4, 0]
        .iter()
        .map(|&s| cycles(v, s)[1..33].to_vec())
        .collect()
}

/// Figure 4(a) in words (seed paper §5.1.2): W3 issues until it misses in the I-cache,
/// then W2 (reusing W3's lines) runs to the end, then W3, then W1, then W0.
#[test]
fn figure4a_no_stalls_icache() {
    let (v, ok) = mb(
        "fig4a.sass",
        &fig4("[B------:R-:W-:-:S01]", "[B------:R-:W-:-:S01]"),
        &[],
    );
    assert!(ok);
    let c = fig4_cycles(&v);
    let (w3, w2, w1, w0) = (&c[0], &c[1], &c[2], &c[3]);
    // W3 issues back to back until it stops (I-cache miss), with W2 taking over next cycle.
    let stop = w3.windows(2).position(|p| p[1] != p[0] + 1).expect("W3 stops") + 1;
    assert!(stop < 32);
    assert_eq!(w2[0], w3[stop - 1] + 1, "W2 takes over when W3 misses");
    let before = w2.iter().filter(|&&c| c < w3[stop]).count();
    assert!(
        before >= 24,
        "W2 runs (almost) to the end before W3 resumes: {before} of 32"
    );
    assert!(
        w3.last() < w1.first() && w1.last() < w0.first(),
        "then W3, W1, W0"
    );
}

/// Figure 4(b): stall 4 on the 2nd instruction of every warp: W3→W2→W1 every two cycles,
/// back to W3 once its stall counter is zero; W0 alone at the end makes bubbles.
#[test]
fn figure4b_stall_counter() {
    let (v, ok) = mb(
        "fig4b.sass",
        &fig4("[B------:R-:W-:-:S04]", "[B------:R-:W-:-:S01]"),
        &PERFECT_I,
    );
    assert!(ok);
    let c = fig4_cycles(&v);
    let t = c[0][0];
    assert_eq!(&c[0][..3], &[t, t + 1, t + 6]);
    assert_eq!(&c[1][..2], &[t + 2, t + 3]);
    assert_eq!(&c[2][..2], &[t + 4, t + 5]);
    // W0 runs last and alone: stall 4 → 3 bubbles (Listing 2 semantics, docs/model.md).
    assert_eq!(c[3][2] - c[3][1], 4);
    let (v, _) = mb(
        "fig4b-f4.sass",
        &fig4("[B------:R-:W-:-:S04]", "[B------:R-:W-:-:S00]"),
        &[
            "--set",
            "frontend.perfect_icache=true",
            "--set",
            "issue.stall_expiry=figure4",
        ],
    );
    let c = fig4_cycles(&v);
    assert_eq!(
        c[3][2] - c[3][1],
        5,
        "Figure 4(b)'s four bubbles under the figure4 option"
    );
}

/// Figure 4(c): yield on the 2nd instruction switches to the youngest other warp.
#[test]
fn figure4c_yield() {
    let (v, ok) = mb(
        "fig4c.sass",
        &fig4("[B------:R-:W-:Y:S01]", "[B------:R-:W-:-:S01]"),
        &PERFECT_I,
    );
    assert!(ok);
    let c = fig4_cycles(&v);
    let t = c[0][0];
    assert_eq!(&c[0][..3], &[t, t + 1, t + 4], "W3, then W2's two, then W3 again");
    assert_eq!(&c[1][..2], &[t + 2, t + 3]);
}

/// M25 A4: yield with no other warp ready → a 1-cycle bubble.
#[test]
fn yield_alone_one_bubble() {
    let body = "[B------:R-:W-:Y:S01] FADD R1, R2, R3 ;\n[B------:R-:W-:-:S01] FADD R5, R6, R7 ;";
    let (v, _) = mb("yield1.sass", &timed(body), &PERFECT_I);
    let (v0, _) = mb("yield0.sass", &timed(&body.replace(":Y:", ":-:")), &PERFECT_I);
    assert_eq!(elapsed(&v), elapsed(&v0) + 1);
}

/// M25 rule 9: a consumer right behind its producer escapes the dependence counter
/// unless the producer has stall ≥ 2 or yield (it then waits for the load).
#[test]
fn dependence_counter_needs_stall2_or_yield() {
    for (cc, waits) in [
        ("[B------:R-:W0:-:S01]", false),
        ("[B------:R-:W0:-:S02]", true),
        ("[B------:R-:W0:Y:S01]", true),
    ] {
        let src = format!(
            ".global.fill 0x1000 = u32 64 5\n.init R2 = 0x1000\n.init R3 = 0\n{cc} LDG.E R4, [R2.64] ;\n\
             [B0-----:R-:W-:-:S01] IADD3 R5, R4, RZ, RZ ;\n[B------:R-:W-:-:S05] EXIT ;\n"
        );
        let (v, ok) = mb("sb.sass", &src, &PERFECT_I);
        assert!(ok);
        let c = cycles(&v, 0);
        assert_eq!(c[1] - c[0] > 10, waits, "{cc}: {c:?}");
        assert_eq!(
            reg(&v, 0, "R5")[0] == 5,
            waits,
            "{cc}: the early consumer reads the old R4"
        );
    }
}

/// M25 rule 10: DEPBAR blocks its successor only with a stall of at least 4.
#[test]
fn depbar_needs_stall4() {
    for (s, blocks) in [(1, false), (3, false), (4, true), (6, true)] {
        let src = format!(
            ".global.fill 0x1000 = u32 64 5\n.init R2 = 0x1000\n.init R3 = 0\n\
             [B------:R-:W0:-:S02] LDG.E R4, [R2.64] ;\n[B------:R-:W-:-:S{s:02}] DEPBAR.LE SB0, 0x0 ;\n\
             [B------:R-:W-:-:S01] FADD R5, R6, R7 ;\n[B------:R-:W-:-:S05] EXIT ;\n"
        );
        let (v, ok) = mb("depbar.sass", &src, &PERFECT_I);
        assert!(ok);
        let c = cycles(&v, 0);
        assert_eq!(c[2] - c[0] > 12, blocks, "stall {s}: {c:?}");
    }
}

fn repeat(ins: &str, n: usize) -> String {
    (0..n)
        .map(|_| format!("[B------:R-:W-:-:S01] {ins} ;\n"))
        .collect()
}

/// M25 A8: back-to-back FMULs with both sources in one bank add one bubble each,
/// FFMAs with all three add two; other bank assignments add none.
#[test]
fn read_port_bubbles_fmul_ffma() {
    let n = 16;
    let t = |ins: &str| {
        let (v, _) = mb("ports.sass", &timed(&repeat(ins, n)), &PERFECT_I);
        elapsed(&v)
    };
    let base = t("FMUL R1, R2, R3");
    assert_eq!(base, n as u64 + 2);
    let fmul = t("FMUL R1, R2, R4");
    let ffma = t("FFMA R1, R2, R4, R6");
    let ffma_mixed = t("FFMA R1, R2, R3, R4");
    // One (two) bubbles per instruction in steady state; the first instructions of the
    // sequence still find free port-slots in the read windows of the NOP before them.
    let n64 = n as u64;
    assert!((n64 - 4..=n64).contains(&(fmul - base)), "fmul {fmul} vs {base}");
    assert!(
        (2 * n64 - 4..=2 * n64).contains(&(ffma - base)),
        "ffma {ffma} vs {base}"
    );
    // With two single-ported banks any FFMA has two sources in one bank: one bubble, as
    // for the FMUL (which is why 2 read ports speed MaxFlops up by ~45%, M25 Table 6).
    assert_eq!(
        ffma_mixed, fmul,
        "mixed-bank FFMA {ffma_mixed} vs same-bank FMUL {fmul}"
    );
}

/// M25 A8: FADD, FMUL and FFMA have the same latency whatever their banks: a dependent
/// consumer is correct with stall 4 and wrong with stall 3.
#[test]
fn latency_independent_of_banks() {
    for ins in [
        "FADD R8, R2, R4",
        "FMUL R8, R2, R4",
        "FFMA R8, R2, R4, R6",
        "FFMA R8, R2, R3, R5",
    ] {
        for (stall, ok_value) in [(4, true), (3, false)] {
            let src = format!(
                ".init R2 = 2.0\n.init R3 = 2.0\n.init R4 = 2.0\n.init R5 = 2.0\n.init R6 = 2.0\n\
                 [B------:R-:W-:-:S{stall:02}] {ins} ;\n[B------:R-:W-:-:S01] FADD R9, R8, RZ ;\n\
                 [B------:R-:W-:-:S05] EXIT ;\n"
            );
            let (v, _) = mb("lat.sass", &src, &PERFECT_I);
            let r9 = f32::from_bits(reg(&v, 0, "R9")[0]);
            assert_eq!(r9 != 0.0, ok_value, "{ins} stall {stall}: R9 = {r9}");
        }
    }
}

/// M25 A8 rule 23: HADD2 (latency 5) then FFMA (latency 4) to the same bank finish in the
/// same cycle and are both on time; consumers with the nominal stalls read both results.
#[test]
fn result_queue_absorbs_fixed_wb_conflict() {
    let src = ".init R2 = 1.0\n.init R3 = 0x3c003c00\n\
               [B------:R-:W-:-:S01] HADD2 R10, R3, R3 ;\n[B------:R-:W-:-:S04] FFMA R12, R2, R2, R2 ;\n\
               [B------:R-:W-:-:S01] FADD R14, R12, RZ ;\n[B------:R-:W-:-:S01] HADD2 R16, R10, RZ ;\n\
               [B------:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb("rq.sass", src, &PERFECT_I);
    assert!(ok);
    assert_eq!(f32::from_bits(reg(&v, 0, "R14")[0]), 2.0);
    assert_eq!(
        reg(&v, 0, "R16")[0],
        0x4000_4000,
        "HADD2 result (2.0, 2.0) bypassed on time"
    );
}

/// T4P §3.5.1 on the T4 preset: `FFMA R6, R97, R99, RX` conflicts exactly when RX is odd;
/// `FFMA R6, R98, R99, RX` never.
#[test]
fn t4_ffma_bank_rule() {
    let n = 12;
    let run = |ins: &str| {
        let (v, _) = mb(
            "t4.sass",
            &timed(&repeat(ins, n)),
            &["--gpu", "t4", "--set", "frontend.perfect_icache=true"],
        );
        elapsed(&v)
    };
    let ref_time = run("FFMA R6, R98, R99, R100");
    for rx in [100u32, 101, 102, 103] {
        let a = run(&format!("FFMA R6, R97, R99, R{rx}"));
        let b = run(&format!("FFMA R6, R98, R99, R{rx}"));
        assert_eq!(a > ref_time, rx % 2 == 1, "R97, R99, R{rx}: {a} vs {ref_time}");
        assert_eq!(b, ref_time, "R98, R99, R{rx}");
    }
}

/// M25 §7.4 alternatives: 2 read ports or an ideal register file remove the FFMA
/// bubbles; turning the RFC off makes reused operands cost ports.
#[test]
fn register_file_alternatives() {
    let body = repeat("FFMA R1, R2, R4, R6", 16);
    let t = |extra: &[&str]| {
        let mut args = PERFECT_I.to_vec();
        args.extend_from_slice(extra);
        let (v, _) = mb("alt.sass", &timed(&body), &args);
        elapsed(&v)
    };
    let base = t(&[]);
    let two = t(&["--set", "regfile.read_ports_per_bank=2"]);
    let ideal = t(&["--set", "regfile.ideal=true"]);
    assert!(two < base && ideal < base, "{base} {two} {ideal}");
    assert_eq!(ideal, 16 + 2);
    let reuse = repeat("FFMA R1, R2.reuse, R4.reuse, R6", 16);
    let (on, _) = mb("rfc-on.sass", &timed(&reuse), &PERFECT_I);
    let mut off_args = PERFECT_I.to_vec();
    off_args.extend_from_slice(&["--set", "regfile.rfc_enabled=false"]);
    let (off, _) = mb("rfc-off.sass", &timed(&reuse), &off_args);
    assert!(
        elapsed(&on) < elapsed(&off),
        "RFC on {} off {}",
        elapsed(&on),
        elapsed(&off)
    );
}

/// MICRO'25 Figure 2 (reference A4.2), as its text describes it, with shared loads and
/// uniform addresses: 0x30 and 0x40 count on SB3 (write-back), 0x40 and 0x50 on SB0 (read);
/// 0x60 is delayed only by 0x50's stall of 2; `DEPBAR.LE SB0, 0x1` lets 0x80 (a WAR on R2
/// with 0x40) go as soon as 0x40 has read its sources — not waiting for 0x50's read; 0x90
/// waits for SB0 and SB3 (RAW with 0x30 and 0x40, WAR with 0x50).
#[test]
fn figure2_dependence_counters() {
    let src = ".shared.fill 0x0 = u32 256 7\n.init UR4 = 0x0\n.init UR5 = 0x40\n.init UR6 = 0x80\n\
               [B------:R-:W3:-:S01] LDS R5, [UR4] ;\n\
               [B------:R0:W3:-:S01] LDS R7, [UR5] ;\n\
               [B------:R0:W4:-:S02] LDS R15, [UR6+0x80] ;\n\
               [B------:R-:W-:-:S01] IADD3 R18, R18, R18, R18 ;\n\
               [B------:R-:W-:-:S04] DEPBAR.LE SB0, 0x1 ;\n\
               [B------:R-:W-:-:S01] IADD3 R2, R24, R23, R21 ;\n\
               [B0--3--:R-:W-:-:S01] IADD3 R6, R1, R7, R5 ;\n\
               [B----4-:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb("fig2.sass", src, &PERFECT_I);
    assert!(ok, "{v}");
    let c = cycles(&v, 0);
    let (c30, c40, c50, c60, c80, c90) = (c[0], c[1], c[2], c[3], c[5], c[6]);
    assert_eq!((c40 - c30, c50 - c40), (1, 1));
    assert_eq!(c60 - c50, 2, "0x60 is delayed only by 0x50's stall counter");
    // Shared-load WAR is 9 (Table 2): 0x80 follows 0x40's read, 0x50's comes a cycle later.
    assert_eq!(
        c80 - c40,
        9,
        "DEPBAR SB0 <= 1 waits for the first read only: {c:?}"
    );
    assert!(c80 < c50 + 9);
    // 0x90 needs both loads written back (RAW 23 with a uniform address).
    assert!(c90 >= c40 + 23, "{c:?}");
    assert_eq!(reg(&v, 0, "R6")[0], 14, "R7 + R5 = 7 + 7");
}

/// MICRO'25 §6 / A10: architectures without per-sub-core FP64 units share one
/// double-precision pipeline among the sub-cores (A6000 preset: one start every 16
/// cycles). One DADD from each of the four sub-cores at once: their consumers issue 16
/// cycles apart; with a per-sub-core pipe they issue together.
#[test]
fn shared_fp64_pipeline() {
    let src = ".block 128\n.active_warps 0,1,2,3\n.init R2 = 0\n.init R3 = 0x3ff00000\n\
               [B------:R-:W-:-:S06] BAR.SYNC 0x0 ;\n\
               [B------:R-:W0:-:S02] DADD R4, R2, R2 ;\n\
               [B0-----:R-:W-:-:S01] MOV R8, R5 ;\n[B------:R-:W-:-:S05] EXIT ;\n";
    let consumers = |extra: &[&str]| -> Vec<u64> {
        let mut args = PERFECT_I.to_vec();
        args.extend_from_slice(extra);
        let (v, ok) = mb("fp64.sass", src, &args);
        assert!(ok, "{v}");
        assert_eq!(reg(&v, 0, "R8")[0], 0x4000_0000, "1.0 + 1.0 = 2.0 (high word)");
        let mut c: Vec<u64> = (0..4).map(|w| cycles(&v, w)[2]).collect();
        c.sort();
        c
    };
    let shared = consumers(&[]);
    let gaps: Vec<u64> = shared.windows(2).map(|p| p[1] - p[0]).collect();
    assert!(
        gaps.iter().all(|&g| g >= 16),
        "shared FP64 pipe: consumers {shared:?}"
    );
    let private = consumers(&["--set", "units.fp64.shared_by_sm=false"]);
    assert!(
        private[3] - private[0] <= 3,
        "per-sub-core FP64: consumers {private:?}"
    );
}

/// M25 rule 12: a fixed-latency instruction issues only if its unit's input latch is free on
/// arrival — 2 cycles for half-warp units (Ampere INT32: 16 lanes), 1 for full-warp ones.
#[test]
fn execution_unit_latch_occupancy() {
    let body = "[B------:R-:W-:-:S01] IADD3 R1, R2, R3, RZ ;\n[B------:R-:W-:-:S01] IADD3 R5, R6, R7, RZ ;\n\
                [B------:R-:W-:-:S01] IADD3 R9, R10, R11, RZ ;";
    let (half, _) = mb("latch16.sass", &timed(body), &PERFECT_I);
    let mut full_args = PERFECT_I.to_vec();
    full_args.extend_from_slice(&["--set", "units.int.lanes=32"]);
    let (full, _) = mb("latch32.sass", &timed(body), &full_args);
    let ci = |v: &serde_json::Value| cycles(v, 0)[2..5].to_vec();
    let (h, f) = (ci(&half), ci(&full));
    assert_eq!(
        (h[1] - h[0], h[2] - h[1]),
        (2, 2),
        "half-warp INT: one issue every 2 cycles {h:?}"
    );
    assert_eq!(
        (f[1] - f[0], f[2] - f[1]),
        (1, 1),
        "full-warp INT: back to back {f:?}"
    );
}

/// M25 rule 13 (§5.1.1): on an L0 FL constant-cache miss nothing issues; if the miss is not
/// served within 4 cycles the scheduler switches to the youngest ready warp.
#[test]
fn constant_miss_switches_warp_after_4_cycles() {
    // After the barrier W3 (youngest) takes the path with a constant operand and misses;
    // W2 branches to code without constants and is ready meanwhile.
    let src = ".block 512\n.active_warps 8,12\n.init R20 = warp\n\
               [B------:R-:W-:-:S06] ISETP.NE.AND P0, PT, R20, 0xc, PT ;\n\
               [B------:R-:W-:-:S06] BAR.SYNC 0x0 ;\n\
               [B------:R-:W-:-:S05] @P0 BRA w2 ;\n\
               [B------:R-:W-:-:S01] FADD R6, R7, c[0x0][0x170] ;\n\
               [B------:R-:W-:-:S05] EXIT ;\n\
               w2:\n\
               [B------:R-:W-:-:S01] FADD R8, R9, R10 ;\n\
               [B------:R-:W-:-:S01] FADD R11, R9, R10 ;\n\
               [B------:R-:W-:-:S01] FADD R12, R9, R10 ;\n\
               [B------:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb("constswitch.sass", src, &PERFECT_I);
    assert!(ok, "{v}");
    let (w3, w2) = (cycles(&v, 12), cycles(&v, 8));
    // W3: ISETP, BAR, BRA, FADD(miss), EXIT. W2: ISETP, BAR, BRA, FADD×3, EXIT.
    let w3_fadd = w3[3];
    let w2_first = w2[3];
    assert!(
        w2_first < w3_fadd,
        "W2 issues during W3's constant miss: W3 {w3:?} W2 {w2:?}"
    );
    // W3's miss began when it was ready after its branch (stall 5), W2 issued 4 cycles later
    // at the earliest (it was ready before: its own branch issued next to W3's).
    let miss_start = w3[2] + 5;
    // (W2 is ready two cycles into the miss, after its taken branch was fetched, but only
    // issues once the miss has lasted 4 cycles.)
    assert_eq!(
        w2_first,
        miss_start + 4,
        "switch after 4 cycles of miss: W3 {w3:?} W2 {w2:?}"
    );
}

/// M25 A3 (Listing 1 remark, rule 14): the issue scheduler ignores read ports; without the
/// NOP after the last FFMA the second clock read is not delayed by the bank conflict.
#[test]
fn listing1_without_trailing_nop() {
    let src = "[B------:R-:W-:-:S01] CS2R.32 R2, SR_CLOCKLO ;\n[B------:R-:W-:-:S01] NOP ;\n\
               [B------:R-:W-:-:S01] FFMA R11, R10, R12, R14 ;\n[B------:R-:W-:-:S01] FFMA R13, R16, R18, R20 ;\n\
               [B------:R-:W-:-:S01] CS2R.32 R4, SR_CLOCKLO ;\n[B------:R-:W-:-:S05] EXIT ;\n";
    let (v, ok) = mb("l1nonop.sass", src, &PERFECT_I);
    assert!(ok);
    assert_eq!(
        elapsed(&v),
        4,
        "even-even conflict, no trailing NOP: the clock read is not delayed"
    );
}
