//! The three scenarios of the Hanoi paper (section VI), walked step by step under Hanoi
//! (section VII): the WS stack, REC stack, Bx registers and waiting mask are checked after
//! every control-flow instruction. Four threads per warp as in the paper's figures.

mod common;

use common::{exec, kernel, step};
use sassim_functional::{CfView, ControlFlowKind, ExecError, ExecOptions, KernelExec, WarpId};
use sassim_isa::ArchReg;

/// (executed pc, WS stack bottom-first, REC stack (pc, Bx) bottom-first, (Bx mask, valid) of the
/// watched Bx registers, waiting mask).
type Snap = (u64, Vec<(u64, u32)>, Vec<(u64, u8)>, Vec<(u32, bool)>, u32);

const CF_OPS: &[&str] = &[
    "BSSY", "BSYNC", "BRA", "BMOV", "BREAK", "WARPSYNC", "YIELD", "EXIT",
];

fn snap(ex: &KernelExec, w: WarpId, pc: u64, watch: &[usize]) -> Snap {
    match ex.cflow_view(w) {
        CfView::Hanoi {
            ws, rec, bx, waiting, ..
        } => (
            pc,
            ws.iter().map(|e| (e.pc, e.mask)).collect(),
            rec.iter().map(|r| (r.pc, r.b)).collect(),
            watch.iter().map(|&b| bx[b]).collect(),
            waiting,
        ),
        v => panic!("not Hanoi: {v:?}"),
    }
}

/// Run warp 0 to completion, snapshotting after each control-flow instruction.
fn walk(ex: &mut KernelExec, watch: &[usize]) -> Vec<Snap> {
    let w = ex.start_cta(0)[0];
    let k = ex.kernel().clone();
    let mut log = Vec::new();
    let mut n = 0;
    while ex.next_pc(w).is_some() {
        let is = step(ex, w);
        if CF_OPS.contains(&k.instructions[is.index].opcode.base.as_str()) {
            log.push(snap(ex, w, is.pc, watch));
        }
        n += 1;
        assert!(n < 10_000, "runaway");
    }
    log
}

fn check(got: &[Snap], want: &[Snap]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g, w, "control-flow step {i} (pc {:#x}) differs", w.0);
    }
    assert_eq!(got.len(), want.len(), "number of control-flow steps: {got:#x?}");
}

/// Figure 3 (VI-A): nested divergence; B0 is spilled to R0 with BMOV in A, reused by the
/// inner BSSY in B (threads 2,3 reconverge in E) and restored by BMOV in F before the outer
/// BSYNC reunites all threads.
#[test]
fn figure3_nested_branches_with_bmov() {
    let k = kernel(&[
        "S2R R5, SR_TID.X",                     // 0x00
        "ISETP.LT.U32.AND P0, PT, R5, 0x2, PT", // 0x10  threads 0,1 -> C
        "ISETP.EQ.U32.AND P1, PT, R5, 0x3, PT", // 0x20  thread 3 -> D
        "BSSY B0, 0x130",                       // 0x30  A: B0 = 1111, reconverge in F
        "BMOV.32 R0, B0",                       // 0x40  A: spill B0 to R0
        "@P0 BRA 0xe0",                         // 0x50  A: divergence
        "BSSY B0, 0xd0",                        // 0x60  B: B0 = 1100, reconverge in E
        "@P1 BRA 0xa0",                         // 0x70  B: divergence
        "IADD3 R6, R6, 0x1, RZ",                // 0x80
        "BRA 0xc0",                             // 0x90
        "IADD3 R6, R6, 0x2, RZ",                // 0xa0  D
        "BRA 0xc0",                             // 0xb0
        "BSYNC B0",                             // 0xc0  E
        "BRA 0x100",                            // 0xd0
        "IADD3 R6, R6, 0x4, RZ",                // 0xe0  C
        "BRA 0x100",                            // 0xf0
        "BMOV.32 B0, R0",                       // 0x100 F: restore B0
        "NOP",                                  // 0x110
        "BSYNC B0",                             // 0x120 F
        "EXIT",                                 // 0x130
    ]);
    let mut ex = exec(k, 4, ControlFlowKind::Hanoi, ExecOptions::default());
    let got = walk(&mut ex, &[0]);
    let v = |b: u32| vec![(b, true)];
    let inv = |b: u32| vec![(b, false)];
    #[rustfmt::skip]
    let want: Vec<Snap> = vec![
        (0x30, vec![(0x40, 0xf)], vec![(0x130, 0)], v(0xf), 0),
        (0x40, vec![(0x50, 0xf)], vec![(0x130, 0)], inv(0xf), 0),
        // Tie (2 vs 2 threads): the taken path (C) runs first.
        (0x50, vec![(0x60, 0xc), (0xe0, 0x3)], vec![(0x130, 0)], inv(0xf), 0),
        (0xf0, vec![(0x60, 0xc), (0x100, 0x3)], vec![(0x130, 0)], inv(0xf), 0),
        (0x100, vec![(0x60, 0xc), (0x110, 0x3)], vec![(0x130, 0)], v(0xf), 0),
        (0x120, vec![(0x60, 0xc)], vec![(0x130, 0)], v(0xf), 0x3),
        (0x60, vec![(0x70, 0xc)], vec![(0x130, 0), (0xd0, 0)], v(0xc), 0x3),
        (0x70, vec![(0x80, 0x4), (0xa0, 0x8)], vec![(0x130, 0), (0xd0, 0)], v(0xc), 0x3),
        (0xb0, vec![(0x80, 0x4), (0xc0, 0x8)], vec![(0x130, 0), (0xd0, 0)], v(0xc), 0x3),
        (0xc0, vec![(0x80, 0x4)], vec![(0x130, 0), (0xd0, 0)], v(0xc), 0xb),
        (0x90, vec![(0xc0, 0x4)], vec![(0x130, 0), (0xd0, 0)], v(0xc), 0xb),
        // E: threads 2,3 reconverge; B0 is invalidated, its REC entry popped.
        (0xc0, vec![(0xd0, 0xc)], vec![(0x130, 0)], inv(0xc), 0x3),
        (0xd0, vec![(0x100, 0xc)], vec![(0x130, 0)], inv(0xc), 0x3),
        (0x100, vec![(0x110, 0xc)], vec![(0x130, 0)], v(0xf), 0x3),
        // F: everybody reconverges.
        (0x120, vec![(0x130, 0xf)], vec![], inv(0xf), 0),
        (0x130, vec![], vec![], inv(0), 0),
    ];
    check(&got, &want);
    let r6 = ex.regs(sassim_functional::WarpId(0), ArchReg::R(6));
    assert_eq!(&r6[..4], &[4, 4, 1, 2]);
    let r0 = ex.regs(sassim_functional::WarpId(0), ArchReg::R(0));
    assert_eq!(&r0[..4], &[0xf; 4], "all threads read the same B0 value");
}

const FIG4: &[&str] = &[
    "S2R R5, SR_TID.X",                     // 0x00
    "ISETP.LT.U32.AND P0, PT, R5, 0x2, PT", // 0x10  threads 0,1 -> C
    "ISETP.NE.U32.AND P1, PT, R5, RZ, PT",  // 0x20  P1 false only for thread 0
    "BSSY B1, 0x110",                       // 0x30  A: reconvergence at D (IPDom)
    "BSSY B0, 0x90",                        // 0x40  A: early reconvergence at B
    "@P0 BRA 0xb0",                         // 0x50  A
    "IADD3 R6, R6, 0x1, RZ",                // 0x60  B
    "NOP",                                  // 0x70
    "BSYNC B0",                             // 0x80  B: early reconvergence
    "IADD3 R7, R7, 0x1, RZ",                // 0x90
    "BRA 0x100",                            // 0xa0
    "IADD3 R6, R6, 0x10, RZ",               // 0xb0  C
    "BREAK !P1, B0",                        // 0xc0  C: thread 0 leaves B0
    "@!P1 BRA 0x100",                       // 0xd0  C: thread 0 -> D
    "BRA 0x60",                             // 0xe0  C: others -> B
    "NOP",                                  // 0xf0
    "BSYNC B1",                             // 0x100 D
    "EXIT",                                 // 0x110 E
];

/// Figure 4 (VI-B): reconvergence earlier than the IPDom with BREAK. Thread 0 leaves the
/// reconvergence mask of B0 in C, so threads 1,2,3 reunite at B and thread 0 joins at D.
#[test]
fn figure4_early_reconvergence_with_break() {
    let mut ex = exec(kernel(FIG4), 4, ControlFlowKind::Hanoi, ExecOptions::default());
    let got = walk(&mut ex, &[0, 1]);
    let r = |a: (u32, bool), b: (u32, bool)| vec![a, b];
    let rec2 = vec![(0x110, 1), (0x90, 0)];
    #[rustfmt::skip]
    let want: Vec<Snap> = vec![
        (0x30, vec![(0x40, 0xf)], vec![(0x110, 1)], r((0, false), (0xf, true)), 0),
        (0x40, vec![(0x50, 0xf)], rec2.clone(), r((0xf, true), (0xf, true)), 0),
        (0x50, vec![(0x60, 0xc), (0xb0, 0x3)], rec2.clone(), r((0xf, true), (0xf, true)), 0),
        // BREAK: thread 0 removed from B0 (1111 -> 1110).
        (0xc0, vec![(0x60, 0xc), (0xd0, 0x3)], rec2.clone(), r((0xe, true), (0xf, true)), 0),
        (0xd0, vec![(0x60, 0xc), (0xe0, 0x2), (0x100, 0x1)], rec2.clone(), r((0xe, true), (0xf, true)), 0),
        // Thread 0 waits at D (B1, below the top REC entry).
        (0x100, vec![(0x60, 0xc), (0xe0, 0x2)], rec2.clone(), r((0xe, true), (0xf, true)), 0x1),
        (0xe0, vec![(0x60, 0xc), (0x60, 0x2)], rec2.clone(), r((0xe, true), (0xf, true)), 0x1),
        (0x80, vec![(0x60, 0xc)], rec2.clone(), r((0xe, true), (0xf, true)), 0x3),
        // Threads 1,2,3 reunite at B without waiting for thread 0.
        (0x80, vec![(0x90, 0xe)], vec![(0x110, 1)], r((0xe, false), (0xf, true)), 0x1),
        (0xa0, vec![(0x100, 0xe)], vec![(0x110, 1)], r((0xe, false), (0xf, true)), 0x1),
        (0x100, vec![(0x110, 0xf)], vec![], r((0xe, false), (0xf, false)), 0),
        (0x110, vec![], vec![], r((0, false), (0, false)), 0),
    ];
    check(&got, &want);
    let w = sassim_functional::WarpId(0);
    assert_eq!(
        &ex.regs(w, ArchReg::R(7))[..4],
        &[0, 1, 1, 1],
        "thread 0 never executes B"
    );
    assert_eq!(&ex.regs(w, ArchReg::R(6))[..4], &[0x10, 0x11, 1, 1]);
}

/// Without the BREAK, B waits forever for thread 0: Hanoi reports the blocked warp.
#[test]
fn figure4_without_break_deadlocks() {
    let mut body = FIG4.to_vec();
    body[12] = "NOP";
    let k = kernel(&body);
    let launch = sassim_functional::Launch::new([1, 1, 1], [4, 1, 1], Vec::new());
    let err = sassim_functional::run_functional(
        k,
        "sm_86",
        launch,
        ControlFlowKind::Hanoi,
        sassim_functional::RunOptions::default(),
    )
    .unwrap_err();
    match err {
        ExecError::Deadlock(m) => {
            assert!(m.contains("blocked") && m.contains("0x90"), "{m}")
        }
        e => panic!("expected a deadlock, got {e}"),
    }
}

fn fig5(yield_as_nop: bool) -> (KernelExec, u64) {
    let k = kernel(&[
        "S2R R5, SR_TID.X",                               // 0x00
        "IMAD.MOV.U32 R2, RZ, RZ, c[0x0][0x160]",         // 0x10
        "IMAD.MOV.U32 R3, RZ, RZ, c[0x0][0x164]",         // 0x20
        "IMAD.MOV.U32 R4, RZ, RZ, 0x1",                   // 0x30
        "BSSY B0, 0xe0",                                  // 0x40 A
        "YIELD",                                          // 0x50 B: loop head
        "ATOMG.E.CAS.STRONG.GPU PT, R0, [R2.64], RZ, R4", // 0x60 C: try to take the lock
        "ISETP.NE.AND P0, PT, R0, RZ, PT",                // 0x70
        "@P0 BRA 0x50",                                   // 0x80 C: failed -> B
        "LDG.E.STRONG.GPU R6, [R2.64+0x4]",               // 0x90 D: critical section
        "IADD3 R6, R6, 0x1, RZ",                          // 0xa0
        "STG.E.STRONG.GPU [R2.64+0x4], R6",               // 0xb0
        "ATOMG.E.EXCH.STRONG.GPU PT, RZ, [R2.64], RZ",    // 0xc0 D: release
        "BSYNC B0",                                       // 0xd0 E: after the release
        "EXIT",                                           // 0xe0
    ]);
    let opts = ExecOptions {
        yield_as_nop,
        ..ExecOptions::default()
    };
    let mut ex = exec(k, 4, ControlFlowKind::Hanoi, opts);
    let a = ex.memory().alloc(8, 256);
    ex.set_params(&a.to_le_bytes()).unwrap();
    (ex, a)
}

/// Figure 5 (VI-C): the spinlock. The thread that got the lock is on the minority path; the
/// YIELD in the loop swaps to it (siblings under B0), it runs the critical section, releases
/// the lock and waits at BSYNC; the others retry.
#[test]
fn figure5_spinlock_with_yield() {
    let (mut ex, a) = fig5(false);
    let got = walk(&mut ex, &[0]);
    let v = vec![(0xfu32, true)];
    let rec = vec![(0xe0u64, 0u8)];
    #[rustfmt::skip]
    let want: Vec<Snap> = vec![
        (0x40, vec![(0x50, 0xf)], rec.clone(), v.clone(), 0),
        (0x50, vec![(0x60, 0xf)], rec.clone(), v.clone(), 0), // no sibling: NOP
        // Lane 0 wins the CAS; the 3 losers (majority) loop first.
        (0x80, vec![(0x90, 0x1), (0x50, 0xe)], rec.clone(), v.clone(), 0),
        // YIELD: siblings (1110 | 0001 within B0 = 1111) -> swap.
        (0x50, vec![(0x60, 0xe), (0x90, 0x1)], rec.clone(), v.clone(), 0),
        (0xd0, vec![(0x60, 0xe)], rec.clone(), v.clone(), 0x1),
        (0x80, vec![(0x90, 0x2), (0x50, 0xc)], rec.clone(), v.clone(), 0x1),
        (0x50, vec![(0x60, 0xc), (0x90, 0x2)], rec.clone(), v.clone(), 0x1),
        (0xd0, vec![(0x60, 0xc)], rec.clone(), v.clone(), 0x3),
        // 1 vs 1: the taken path (loop) runs first.
        (0x80, vec![(0x90, 0x4), (0x50, 0x8)], rec.clone(), v.clone(), 0x3),
        (0x50, vec![(0x60, 0x8), (0x90, 0x4)], rec.clone(), v.clone(), 0x3),
        (0xd0, vec![(0x60, 0x8)], rec.clone(), v.clone(), 0x7),
        (0x80, vec![(0x90, 0x8)], rec.clone(), v.clone(), 0x7),
        (0xd0, vec![(0xe0, 0xf)], vec![], vec![(0xf, false)], 0),
        (0xe0, vec![], vec![], vec![(0, false)], 0),
    ];
    check(&got, &want);
    let m = ex.memory().read(a, 8).unwrap();
    assert_eq!(
        u32::from_le_bytes(m[0..4].try_into().unwrap()),
        0,
        "lock released"
    );
    assert_eq!(
        u32::from_le_bytes(m[4..8].try_into().unwrap()),
        4,
        "every thread entered once"
    );
}

/// Without YIELD (treated as NOP) the losers spin forever: the runner stops with a report.
#[test]
fn figure5_without_yield_deadlocks() {
    let (mut ex, _) = fig5(true);
    let opts = sassim_functional::RunOptions {
        deadlock_steps: 10_000,
        ..Default::default()
    };
    let err = sassim_functional::runner::run_exec(&mut ex, &opts).unwrap_err();
    match err {
        ExecError::Deadlock(m) => assert!(m.contains("warps [0]") && m.contains("mask 0x0000000e"), "{m}"),
        e => panic!("expected a deadlock, got {e}"),
    }
}
