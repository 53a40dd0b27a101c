//! CTAs whose ids are given out first and whose records are made later
//! (`KernelExec::reserve_cta`, `finish_starts`: a parallel step makes them on the SM's own
//! thread) get the ids, registers and CTA records that `start_cta` gives at once.

mod common;

use common::{kernel, step};
use sassim_functional::{ControlFlowKind, ExecOptions, KernelExec, Launch, WarpId};
use sassim_isa::ArchReg;

/// Each thread writes its thread and CTA index, then exits: 5 CTAs of 3 warps (the last
/// one partial).
fn exec() -> KernelExec {
    KernelExec::new(
        kernel(&["S2R R0, SR_TID.X", "S2R R1, SR_CTAID.X", "EXIT"]),
        "sm_86",
        Launch::new([5, 1, 1], [80, 1, 1], Vec::new()),
        ControlFlowKind::Hanoi,
        ExecOptions::default(),
    )
    .expect("launch")
}

/// Run warp `w` to its exit; its R0 and R1.
fn run(ex: &mut KernelExec, w: WarpId) -> ([u32; 32], [u32; 32]) {
    let mut n = 0;
    while ex.next_pc(w).is_some() {
        step(ex, w);
        n += 1;
        assert!(n < 100, "runaway");
    }
    (ex.regs(w, ArchReg::R(0)), ex.regs(w, ArchReg::R(1)))
}

#[test]
fn reserved_ctas_match_started_ones() {
    let (mut now, mut later) = (exec(), exec());
    // Rounds of CTAs started together; after each round every warp runs and the first CTA
    // of the round retires, so the next round reuses its records and adds new ones.
    for round in [&[0u32, 1, 2][..], &[3, 4], &[1]] {
        let started: Vec<Vec<WarpId>> = round.iter().map(|&c| now.start_cta(c)).collect();
        let reserved: Vec<Vec<(WarpId, u32)>> =
            round.iter().map(|&c| later.reserve_cta(c).to_vec()).collect();
        assert!(later.starts_pending());
        later.finish_starts();
        assert!(!later.starts_pending());
        for (s, r) in started.iter().zip(&reserved) {
            let ids: Vec<WarpId> = r.iter().map(|&(w, _)| w).collect();
            assert_eq!(*s, ids, "round {round:?}: the same warp ids");
            for &(w, in_cta) in r {
                assert_eq!(now.warp_location(w), later.warp_location(w));
                assert_eq!(later.warp_location(w).1, in_cta);
                assert_eq!(now.cta_warps(w), later.cta_warps(w));
                let (a, b) = (run(&mut now, w), run(&mut later, w));
                assert_eq!(a, b, "round {round:?}: warp {w:?}'s registers");
                assert_eq!(a.1[0], later.warp_location(w).0, "R1 is the CTA index");
            }
        }
        for s in started.iter().take(1) {
            now.retire_cta_of(s[0]);
            later.retire_cta_of(s[0]);
        }
    }
}
