//! Sub-core sleep (`sassim_timing::sleep`, issue 15): skipping the cycles of a sub-core in
//! which nothing can change gives the same statistics and issue logs as running them, on
//! programs that wait on each thing a sub-core can wait for (stall counters, yields,
//! dependence counters of loads, DEPBAR, a barrier, variable-latency units, clock reads,
//! constant-cache misses, instruction fetch) under each scheduler; and it does skip cycles.

mod common;
use common::*;
use sassim_timing::{CoreConfig, SchedPolicy};

/// Loads whose results the next instruction waits for (dependence counters), with a DEPBAR.
const LOADS: &str = "\
[B------:R-:W0:-:S01] LDG.E R2, [R4.64]
[B0-----:R-:W-:-:S04] FADD R3, R2, R2
[B------:R-:W1:-:S01] LDG.E R6, [R4.64]
[B------:R-:W2:-:S01] LDG.E R8, [R4.64]
[B------:R-:W-:-:S04] DEPBAR.LE SB1, 0x0
[B-1----:R-:W-:-:S04] FADD R7, R6, R6
[B--2---:R-:W-:-:S02] FADD R9, R8, R8
[B------:R-:W-:-:S01] STG.E [R4.64], R9
EXIT
";

/// Long stall counts and yields.
const STALLS: &str = "\
[B------:R-:W-:-:S15] FADD R1, RZ, 1
[B------:R-:W-:Y:S08] FADD R2, RZ, 1
[B------:R-:W-:-:S11] FFMA R3, R1, R2, R1
[B------:R-:W-:Y:S01] IADD3 R4, R1, R2, RZ
[B------:R-:W-:-:S13] FADD R5, R4, R3
[B------:R-:W-:-:S01] NOP
EXIT
";

/// Variable-latency MUFU results and clock reads.
const MUFU_CLOCK: &str = "\
[B------:R-:W-:-:S01] CS2R.32 R20, SR_CLOCKLO
[B------:R-:W0:-:S01] MUFU.RCP R2, R1
[B0-----:R-:W1:-:S01] MUFU.EX2 R3, R2
[B-1----:R-:W-:-:S04] FADD R4, R3, R3
[B------:R-:W-:-:S01] CS2R.32 R21, SR_CLOCKLO
[B------:R-:W-:-:S01] CS2R.32 R22, SR_CLOCKLO
EXIT
";

/// Constant operands (L0 constant-cache misses and the scheduler's switch away).
const CONSTS: &str = "\
[B------:R-:W-:-:S04] FADD R1, R2, c[0x0][0x160]
[B------:R-:W-:-:S04] FADD R3, R1, c[0x0][0x360]
[B------:R-:W-:-:S04] FFMA R5, R3, c[0x0][0x560], R1
[B------:R-:W-:-:S01] EXIT
";

/// Independent instructions after a barrier: warps wait at it for each other.
fn barrier() -> String {
    let mut s = String::from("[B------:R-:W-:-:S06] BAR.SYNC 0x0\n");
    for i in 0..24 {
        let cc = if i % 5 == 1 {
            "[B------:R-:W-:-:S04]"
        } else {
            "[B------:R-:W-:-:S01]"
        };
        s += &format!("{cc} IADD3 R{}, R{}, R{}, RZ\n", 2 * i + 20, 2 * i + 1, 2 * i + 2);
    }
    s + "EXIT\n"
}

fn configs() -> Vec<(&'static str, CoreConfig)> {
    let mut v = Vec::new();
    for (name, scheduler) in [
        ("cggty", SchedPolicy::Cggty),
        ("gto", SchedPolicy::Gto),
        ("lrr", SchedPolicy::Lrr),
    ] {
        v.push((
            name,
            CoreConfig {
                scheduler,
                ..CoreConfig::default()
            },
        ));
    }
    v.push((
        "perfect-icache",
        CoreConfig {
            perfect_icache: true,
            ..CoreConfig::default()
        },
    ));
    v
}

/// Runs `src` with sleep on and off; asserts equal statistics and issue logs; returns the
/// sub-core cycles skipped with sleep on.
fn same_with_and_without_sleep(what: &str, src: &str, slots: &[usize]) -> u64 {
    let mut slept = 0;
    for (name, cfg) in configs() {
        let (on, on_logs) = run_with(src, slots, cfg.clone(), |sm| sm.skip_idle_subcores = true);
        let (off, off_logs) = run_with(src, slots, cfg, |sm| sm.skip_idle_subcores = false);
        assert!(on.is_idle() && off.is_idle(), "{what}, {name}: did not finish");
        assert_eq!(off.slept_cycles(), 0, "{what}, {name}");
        assert_eq!(on.stats, off.stats, "{what}, {name}: statistics differ");
        let issues = |l: &[(usize, sassim_timing::WarpLog)]| -> Vec<(usize, Vec<u64>)> {
            l.iter()
                .map(|(s, w)| (*s, w.issues.iter().map(|x| x.cycle).collect()))
                .collect()
        };
        assert_eq!(
            issues(&on_logs),
            issues(&off_logs),
            "{what}, {name}: issue cycles differ"
        );
        slept += on.slept_cycles();
    }
    slept
}

const SIXTEEN: [usize; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

#[test]
fn loads_and_depbar_sleep_without_changing_results() {
    let slept = same_with_and_without_sleep("loads", LOADS, &SIXTEEN);
    assert!(slept > 100, "only {slept} sub-core cycles slept");
}

#[test]
fn stall_counts_and_yields_sleep_without_changing_results() {
    let slept = same_with_and_without_sleep("stalls", STALLS, &[0, 4, 1, 5]);
    assert!(slept > 20, "only {slept} sub-core cycles slept");
}

#[test]
fn mufu_and_clock_reads_sleep_without_changing_results() {
    let slept = same_with_and_without_sleep("mufu", MUFU_CLOCK, &[0, 4, 8, 1]);
    assert!(slept > 20, "only {slept} sub-core cycles slept");
}

#[test]
fn constant_misses_and_barriers_give_the_same_results() {
    same_with_and_without_sleep("consts", CONSTS, &[0, 4, 8, 12, 1, 5]);
    same_with_and_without_sleep("barrier", &barrier(), &[0, 4, 8, 12]);
}
