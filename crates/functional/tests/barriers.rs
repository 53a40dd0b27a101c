//! CTA barriers: release when every live warp arrived; a barrier that can never complete
//! is reported as a deadlock.

mod common;

use common::kernel;
use sassim_functional::{run_functional, ControlFlowKind, ExecError, Launch, RunOptions};

#[test]
fn barrier_orders_shared_memory() {
    // Warp 1 writes shared memory before the barrier, warp 0 reads it after; the exited
    // warp 2 does not hold the barrier up.
    let k = kernel(&[
        "S2R R0, SR_TID.X",
        "ISETP.GE.U32.AND P1, PT, R0, 0x40, PT",
        "@P1 EXIT",
        "SHF.L.U32 R1, R0, 0x2, RZ",
        "STS [R1], R0",
        "BAR.SYNC.DEFER_BLOCKING 0x0",
        "LOP3.LUT R2, R1, 0x80, RZ, 0x3c, !PT", // the other warp's slot
        "LDS R3, [R2]",
        "IMAD.MOV.U32 R4, RZ, RZ, c[0x0][0x160]",
        "IMAD.MOV.U32 R5, RZ, RZ, c[0x0][0x164]",
        "IMAD.WIDE.U32 R4, R0, 0x4, R4",
        "STG.E [R4.64], R3",
        "EXIT",
    ]);
    let mut ex = sassim_functional::KernelExec::new(
        k,
        "sm_86",
        Launch::new([1, 1, 1], [96, 1, 1], Vec::new()),
        ControlFlowKind::Hanoi,
        Default::default(),
    )
    .unwrap();
    let a = ex.memory().alloc(256, 256);
    ex.set_params(&a.to_le_bytes()).unwrap();
    sassim_functional::runner::run_exec(&mut ex, &RunOptions::default()).unwrap();
    let m = ex.memory().read(a, 256).unwrap();
    for t in 0..64u32 {
        let v = u32::from_le_bytes(m[4 * t as usize..4 * t as usize + 4].try_into().unwrap());
        assert_eq!(v, t ^ 32);
    }
}

#[test]
fn mismatched_barriers_deadlock() {
    let k = kernel(&[
        "S2R R0, SR_TID.X",
        "ISETP.GE.U32.AND P0, PT, R0, 0x20, PT",
        "@P0 BRA 0x50",
        "BAR.SYNC 0x0",
        "EXIT",
        "BAR.SYNC 0x1",
        "EXIT",
    ]);
    let err = run_functional(
        k,
        "sm_86",
        Launch::new([1, 1, 1], [64, 1, 1], Vec::new()),
        ControlFlowKind::Hanoi,
        RunOptions::default(),
    )
    .unwrap_err();
    match err {
        ExecError::Deadlock(m) => {
            assert!(
                m.contains("warps [0] waiting at barrier 0") && m.contains("warps [1] waiting at barrier 1"),
                "{m}"
            )
        }
        e => panic!("{e}"),
    }
}

/// A grid of many CTAs runs in the memory of the CTAs resident at once: retired CTAs' warp
/// slots are reused (issue 18: a spec mutated to a 2^31-CTA grid grew ~1.6 KB per finished
/// CTA), and every CTA still computes its own result.
#[test]
fn retired_ctas_slots_are_reused() {
    let k = kernel(&[
        "S2R R0, SR_CTAID.X",
        "S2R R1, SR_TID.X",
        "IMAD R2, R0, 0x40, R1",
        "IMAD.MOV.U32 R4, RZ, RZ, c[0x0][0x160]",
        "IMAD.MOV.U32 R5, RZ, RZ, c[0x0][0x164]",
        "IMAD.WIDE.U32 R4, R2, 0x4, R4",
        "STG.E [R4.64], R2",
        "EXIT",
    ]);
    let ctas = 5000u32;
    let mut ex = sassim_functional::KernelExec::new(
        k,
        "sm_86",
        Launch::new([ctas, 1, 1], [64, 1, 1], Vec::new()),
        ControlFlowKind::Hanoi,
        Default::default(),
    )
    .unwrap();
    let bytes = ctas as usize * 64 * 4;
    let a = ex.memory().alloc(bytes as u64, 256);
    ex.set_params(&a.to_le_bytes()).unwrap();
    let opts = RunOptions {
        max_resident_ctas: Some(3),
        ..RunOptions::default()
    };
    let (stats, _) = sassim_functional::runner::run_exec(&mut ex, &opts).unwrap();
    assert_eq!(stats.warps, 2 * ctas);
    assert!(
        ex.num_warps() <= 2 * 3,
        "{} warp slots for 3 resident CTAs",
        ex.num_warps()
    );
    let m = ex.memory().read(a, bytes).unwrap();
    for (i, w) in m.chunks_exact(4).enumerate() {
        assert_eq!(u32::from_le_bytes(w.try_into().unwrap()), i as u32);
    }
}
