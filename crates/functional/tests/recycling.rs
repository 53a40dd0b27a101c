//! The records of retired CTAs and their warps are reused by later CTAs: the engine's memory
//! stays as large as the CTAs resident at once, however many CTAs a grid has (issue 18: a
//! 2^31-CTA grid grew by 1.6 KB per finished CTA).

mod common;

use common::kernel;
use sassim_functional::runner::run_exec;
use sassim_functional::{ControlFlowKind, ExecOptions, KernelExec, Launch, RunOptions};

/// Each thread stores its CTA id at out[ctaid * blockDim + tid].
fn store_ctaid() -> std::sync::Arc<sassim_isa::Kernel> {
    kernel(&[
        "S2R R0, SR_TID.X",
        "S2R R1, SR_CTAID.X",
        "IMAD R2, R1, c[0x0][0x0], R0",
        "IMAD.MOV.U32 R4, RZ, RZ, c[0x0][0x160]",
        "IMAD.MOV.U32 R5, RZ, RZ, c[0x0][0x164]",
        "IMAD.WIDE.U32 R4, R2, 0x4, R4",
        "STG.E [R4.64], R1",
        "EXIT",
    ])
}

const CTAS: u32 = 3000;
const THREADS: u32 = 64;
const RESIDENT: u32 = 4;

fn run(opts: ExecOptions) -> (KernelExec, u64, Vec<sassim_functional::WarpTrace>) {
    let mut ex = KernelExec::new(
        store_ctaid(),
        "sm_86",
        Launch::new([CTAS, 1, 1], [THREADS, 1, 1], Vec::new()),
        ControlFlowKind::Hanoi,
        opts,
    )
    .expect("launch");
    let bytes = u64::from(CTAS * THREADS) * 4;
    let out = ex.memory().alloc(bytes, 256);
    ex.set_params(&out.to_le_bytes()).expect("params");
    let ro = RunOptions {
        max_resident_ctas: Some(RESIDENT),
        ..RunOptions::default()
    };
    let (stats, traces) = run_exec(&mut ex, &ro).expect("run");
    assert_eq!(stats.ctas, CTAS);
    assert_eq!(stats.warps, CTAS * THREADS / 32);
    let m = ex.memory().read(out, bytes as usize).expect("buffer");
    for (i, v) in m.chunks_exact(4).enumerate() {
        let v = u32::from_le_bytes([v[0], v[1], v[2], v[3]]);
        assert_eq!(v, i as u32 / THREADS, "element {i}");
    }
    (ex, out, traces)
}

#[test]
fn records_of_retired_ctas_are_reused() {
    let (ex, _, traces) = run(ExecOptions::default());
    assert!(traces.is_empty());
    // Before the fix: 6,000 warp and 3,000 CTA records.
    let warps_resident = (RESIDENT * THREADS / 32) as usize;
    assert!(
        ex.num_warps() <= warps_resident,
        "{} warp records for {warps_resident} resident warps",
        ex.num_warps()
    );
    assert!(
        ex.num_cta_records() <= RESIDENT as usize,
        "{} CTA records",
        ex.num_cta_records()
    );
}

#[test]
fn recorded_traces_keep_every_warp() {
    // The control-flow trace is taken by warp id after the run: those records are kept.
    let (ex, _, traces) = run(ExecOptions {
        record_cflow_trace: true,
        ..ExecOptions::default()
    });
    assert_eq!(traces.len(), (CTAS * THREADS / 32) as usize);
    assert_eq!(ex.num_warps(), traces.len());
    for (i, t) in traces.iter().enumerate() {
        assert_eq!(t.warp, i as u32);
        assert_eq!(t.cta, i as u32 / 2);
        assert_eq!(t.warp_in_cta, i as u32 % 2);
        assert_eq!(t.entries.len(), 8, "warp {i}");
    }
}
