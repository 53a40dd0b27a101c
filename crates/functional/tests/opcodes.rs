//! Opcode semantics with hand-computed values.

mod common;

use common::{exec, kernel, step};
use sassim_functional::{ControlFlowKind, ExecError, ExecOptions, KernelExec, WarpId};
use sassim_isa::ArchReg;

/// Run a one-warp kernel; c[0x0][0x160] holds the address of a zeroed 4 KiB buffer.
fn run(body: &[&str], threads: u32) -> (KernelExec, WarpId, u64) {
    let mut ex = exec(
        kernel(body),
        threads,
        ControlFlowKind::Hanoi,
        ExecOptions::default(),
    );
    let a = ex.memory().alloc(4096, 256);
    ex.set_params(&a.to_le_bytes()).unwrap();
    let w = ex.start_cta(0)[0];
    let mut n = 0;
    while ex.next_pc(w).is_some() {
        step(&mut ex, w);
        n += 1;
        assert!(n < 100_000);
    }
    (ex, w, a)
}

fn r(ex: &KernelExec, w: WarpId, i: u8) -> [u32; 32] {
    ex.regs(w, ArchReg::R(i))
}
fn r0(ex: &KernelExec, w: WarpId, i: u8) -> u32 {
    r(ex, w, i)[0]
}
fn f0(ex: &KernelExec, w: WarpId, i: u8) -> f32 {
    f32::from_bits(r0(ex, w, i))
}

#[test]
fn lop3_luts() {
    let (ex, w, _) = run(
        &[
            "MOV R0, 0x12345678",
            "MOV R1, 0xff00ff0",
            "MOV R2, 0xffff0000",
            "LOP3.LUT R3, R0, R1, R2, 0x96, !PT", // a ^ b ^ c
            "LOP3.LUT R4, R0, R1, R2, 0xe8, !PT", // majority
            "LOP3.LUT R5, R0, R1, RZ, 0xc0, !PT", // a & b
            "LOP3.LUT R6, R0, R1, RZ, 0xfc, !PT", // a | b
            "LOP3.LUT R7, R0, R1, RZ, 0x3c, !PT", // a ^ b
            "LOP3.LUT P0, R8, R0, 0xf, RZ, 0xc0, !PT",
            "LOP3.LUT P1, RZ, R0, 0x1, RZ, 0xc0, !PT",
            "SEL R9, RZ, 0x1, P0",
            "SEL R10, RZ, 0x1, P1",
            "EXIT",
        ],
        1,
    );
    let (a, b, c) = (0x12345678u32, 0x0ff00ff0u32, 0xffff0000u32);
    assert_eq!(r0(&ex, w, 3), a ^ b ^ c);
    assert_eq!(r0(&ex, w, 4), (a & b) | (a & c) | (b & c));
    assert_eq!(r0(&ex, w, 5), a & b);
    assert_eq!(r0(&ex, w, 6), a | b);
    assert_eq!(r0(&ex, w, 7), a ^ b);
    assert_eq!(r0(&ex, w, 8), 0x8);
    assert_eq!(r0(&ex, w, 9), 0, "P0 = (R8 != 0) = true selects RZ");
    assert_eq!(r0(&ex, w, 10), 1, "P1 = (0x12345678 & 1 != 0) = false");
}

#[test]
fn plop3() {
    let (ex, w, _) = run(
        &[
            "PLOP3.LUT P0, PT, PT, PT, PT, 0x80, 0x0",
            "PLOP3.LUT P1, P2, PT, PT, PT, 0x8, 0x80",
            "SEL R0, 0x1, RZ, P0",
            "SEL R1, 0x1, RZ, P1",
            "SEL R2, 0x1, RZ, P2",
            "EXIT",
        ],
        1,
    );
    assert_eq!([r0(&ex, w, 0), r0(&ex, w, 1), r0(&ex, w, 2)], [1, 0, 1]);
}

#[test]
fn shf_funnel_shifts() {
    let (ex, w, _) = run(
        &[
            "MOV R0, 0x80000001",
            "MOV R1, 0x1",
            "SHF.L.U64.HI R2, R0, 0x4, R1", // (0x1_80000001 << 4) >> 32 = 0x18
            "SHF.R.U64 R3, R0, 0x4, R1",    // low word of 0x1_80000001 >> 4 = 0x18000000
            "MOV R4, 0xfffffff0",
            "SHF.R.S32.HI R5, RZ, 0x1f, R4", // sign word
            "SHF.R.U32.HI R6, RZ, 0x5, R0",  // 0x80000001 >> 5
            "SHF.L.U32 R7, R0, 0x28, RZ",    // shift clamped at 32 -> 0
            "SHF.L.W.U32 R8, R0, 0x21, RZ",  // wrap: shift 1 -> 2
            "SHF.R.S32.HI R9, RZ, 0x4, R4",  // 0xfffffff0 >> 4 arithmetic
            "SHF.L.U32.HI R10, R0, 0x4, R1", // (0x1_80000001 << 4) >> 32
            "EXIT",
        ],
        1,
    );
    assert_eq!(r0(&ex, w, 2), 0x18);
    assert_eq!(r0(&ex, w, 3), 0x1800_0000);
    assert_eq!(r0(&ex, w, 5), 0xffff_ffff);
    assert_eq!(r0(&ex, w, 6), 0x0400_0000);
    assert_eq!(r0(&ex, w, 7), 0);
    assert_eq!(r0(&ex, w, 8), 2);
    assert_eq!(r0(&ex, w, 9), 0xffff_ffff);
    assert_eq!(r0(&ex, w, 10), 0x18);
}

#[test]
fn imad_iadd3_lea_carries() {
    let (ex, w, _) = run(
        &[
            "MOV R0, 0xffffffff",
            "MOV R4, 0x1",
            "MOV R5, RZ",
            "IMAD.WIDE.U32 R2, R0, R0, R4", // 0xfffffffe_00000001 + 1
            "MOV R6, 0xfffffffe",
            "IMAD.WIDE R8, R6, 0x3, RZ",        // -2 * 3 = -6 (64-bit)
            "IMAD.HI.U32 R10, R0, R0, RZ",      // 0xfffffffe
            "IMAD.HI R11, R6, 0x3, RZ",         // hi(-6) = -1
            "IADD3 R12, P0, R0, 0x1, RZ",       // 0, carry
            "IADD3.X R13, RZ, RZ, RZ, P0, !PT", // 1
            "IADD3 R14, P1, RZ, -R4, RZ",       // 0 - 1: no carry out
            "SEL R15, 0x1, RZ, P1",
            "IADD3 R16, R0, R0, R4",             // wraps: 0xffffffff
            "LEA R17, R4, R4, 0x4",              // (1 << 4) + 1
            "LEA R18, P2, R0, R0, 0x1",          // 0xfffffffe + 0xffffffff: carry out
            "LEA.HI.X R19, R0, RZ, RZ, 0x1, P2", // hi of (0:0xffffffff) << 1 = 1, + carry = 2
            "LEA.HI R20, R0, RZ, RZ, 0x1d",      // 0xffffffff >> 3
            "IMAD.MOV.U32 R21, RZ, RZ, -0x5",
            "IMAD.SHL.U32 R22, R4, 0x8, RZ",
            "IMAD.IADD R23, R4, 0x1, -R6",         // 1 - (-2) = 3
            "IMAD.WIDE.U32.X R24, R0, R0, R4, P0", // 0xfffffffe_00000001 + 1 + carry-in 1
            "EXIT",
        ],
        1,
    );
    assert_eq!([r0(&ex, w, 2), r0(&ex, w, 3)], [2, 0xffff_fffe]);
    assert_eq!([r0(&ex, w, 8), r0(&ex, w, 9)], [0xffff_fffa, 0xffff_ffff]);
    assert_eq!(r0(&ex, w, 10), 0xffff_fffe);
    assert_eq!(r0(&ex, w, 11), 0xffff_ffff);
    assert_eq!([r0(&ex, w, 12), r0(&ex, w, 13)], [0, 1]);
    assert_eq!([r0(&ex, w, 14), r0(&ex, w, 15)], [0xffff_ffff, 0]);
    assert_eq!(r0(&ex, w, 16), 0xffff_ffff);
    assert_eq!(r0(&ex, w, 17), 17);
    assert_eq!([r0(&ex, w, 18), r0(&ex, w, 19)], [0xffff_fffd, 2]);
    assert_eq!(r0(&ex, w, 20), 0x1fff_ffff);
    assert_eq!(r0(&ex, w, 21), (-5i32) as u32);
    assert_eq!(r0(&ex, w, 22), 8);
    assert_eq!(r0(&ex, w, 23), 3);
    assert_eq!([r0(&ex, w, 24), r0(&ex, w, 25)], [3, 0xffff_fffe]);
}

#[test]
fn isetp_variants() {
    let (ex, w, _) = run(
        &[
            "MOV R0, 0xffffffff", // -1 / 4294967295
            "MOV R1, 0x1",
            "ISETP.LT.AND P0, PT, R0, R1, PT",     // signed: -1 < 1
            "ISETP.LT.U32.AND P1, PT, R0, R1, PT", // unsigned: false
            "ISETP.GE.U32.AND P2, P3, R0, R1, PT", // true, complement false
            "ISETP.NE.OR P4, PT, R1, R1, P0",      // false || true
            "ISETP.EQ.XOR P5, PT, R1, R1, P0",     // true ^ true
            // 64-bit compare (hi:lo) 0x1:0x0 > 0x0:0xffffffff
            "ISETP.GT.U32.AND P6, PT, RZ, R0, PT",
            "ISETP.GT.AND.EX P6, PT, R1, RZ, PT, P6",
            "P2R R2, PR, RZ, 0x7f",
            "EXIT",
        ],
        1,
    );
    // P0=1 P1=0 P2=1 P3=0 P4=1 P5=0 P6=1
    assert_eq!(r0(&ex, w, 2), 0b101_0101);
}

#[test]
fn bit_ops_prmt_flo_popc() {
    let (ex, w, _) = run(
        &[
            "MOV R0, 0x33221100",
            "MOV R1, 0x77665544",
            "PRMT R2, R0, 0x5410, R1", // 0x55441100
            "PRMT R3, R0, 0x3210, R1", // identity
            "MOV R4, 0x80",
            "PRMT R5, R4, 0x8880, RZ", // sign-replicate byte 0 -> 0xffffff80
            "MOV R6, 0x10000",
            "FLO.U32 R7, R6",    // 16
            "FLO.U32.SH R8, R6", // 15
            "FLO.U32 R9, RZ",    // 0xffffffff
            "MOV R10, 0xfffffff0",
            "FLO R11, R10",                // highest bit differing from the sign: 3
            "POPC R12, R0",                // 0x33221100 has 8 ones
            "BREV R13, R4",                // 0x80 -> 0x01000000
            "IABS R14, R10",               // 16
            "IMNMX R15, R10, R4, PT",      // signed min = -16
            "IMNMX.U32 R16, R10, R4, !PT", // unsigned max = 0xfffffff0
            "EXIT",
        ],
        1,
    );
    assert_eq!(r0(&ex, w, 2), 0x5544_1100);
    assert_eq!(r0(&ex, w, 3), 0x3322_1100);
    assert_eq!(r0(&ex, w, 5), 0xffff_ff80);
    assert_eq!(
        [r0(&ex, w, 7), r0(&ex, w, 8), r0(&ex, w, 9)],
        [16, 15, 0xffff_ffff]
    );
    assert_eq!(r0(&ex, w, 11), 3);
    assert_eq!(r0(&ex, w, 12), 8);
    assert_eq!(r0(&ex, w, 13), 0x0100_0000);
    assert_eq!(r0(&ex, w, 14), 16);
    assert_eq!(r0(&ex, w, 15), 0xffff_fff0);
    assert_eq!(r0(&ex, w, 16), 0xffff_fff0);
}

#[test]
fn float_ops_and_mufu() {
    let (ex, w, _) = run(
        &[
            "MOV R0, 0x40800000", // 4.0
            "MUFU.RCP R1, R0",
            "MUFU.RSQ R2, R0",
            "MUFU.SQRT R3, R0",
            "MOV R4, 0x40400000", // 3.0
            "MUFU.EX2 R5, R4",
            "MOV R6, 0x41000000", // 8.0
            "MUFU.LG2 R7, R6",
            "MOV R8, 0x3e800000", // 0.25 revolutions
            "MUFU.SIN R9, R8",
            "MUFU.COS R10, R8",
            "FFMA R11, R0, R4, 0.5", // 12.5
            "FADD R12, R0, -R4",     // 1
            "FMUL R13, R0, |R12|",   // 4
            "FADD.SAT R14, R0, R4",  // 1
            "FSETP.GT.AND P0, PT, R0, R4, PT",
            "FSEL R15, R0, R4, !P0",                            // 3
            "FMNMX R16, R0, R4, PT",                            // min 3
            "MOV R17, 0xc02ccccd",                              // -2.7
            "F2I.TRUNC.NTZ R18, R17",                           // -2
            "F2I.FLOOR.NTZ R19, R17",                           // -3
            "F2I.U32.TRUNC.NTZ R20, R17",                       // saturates to 0
            "I2F R21, R18",                                     // -2.0
            "I2F.U32 R22, R10",                                 // cos(pi/2)~0 bits -> small int
            "HFMA2.MMA R23, -RZ, RZ, 0, 2.384185791015625e-07", // half pair (0, 2^-22) = 0x00000004
            "HADD2 R24, R23, R23",                              // 0x00000008
            "MOV R25, 0x3c003c00",                              // (1.0, 1.0)
            "HFMA2 R26, R25, R25, R25",                         // (2.0, 2.0) = 0x40004000
            "F2F.F64.F32 R28, R0",                              // 4.0 as double
            "DADD R30, R28, R28",                               // 8.0
            "DMUL R32, R30, R28",                               // 32.0
            "F2F.F32.F64 R34, R32",
            "EXIT",
        ],
        1,
    );
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
    assert_eq!(f0(&ex, w, 1), 0.25);
    assert_eq!(f0(&ex, w, 2), 0.5);
    assert_eq!(f0(&ex, w, 3), 2.0);
    assert!(close(f0(&ex, w, 5), 8.0));
    assert!(close(f0(&ex, w, 7), 3.0));
    assert!(close(f0(&ex, w, 9), 1.0), "{}", f0(&ex, w, 9));
    assert!(f0(&ex, w, 10).abs() < 1e-6);
    assert_eq!(f0(&ex, w, 11), 12.5);
    assert_eq!(f0(&ex, w, 12), 1.0);
    assert_eq!(f0(&ex, w, 13), 4.0);
    assert_eq!(f0(&ex, w, 14), 1.0);
    assert_eq!(f0(&ex, w, 15), 3.0);
    assert_eq!(f0(&ex, w, 16), 3.0);
    assert_eq!(r0(&ex, w, 18) as i32, -2);
    assert_eq!(r0(&ex, w, 19) as i32, -3);
    assert_eq!(r0(&ex, w, 20), 0);
    assert_eq!(f0(&ex, w, 21), -2.0);
    assert_eq!(r0(&ex, w, 23), 0x0000_0004);
    assert_eq!(r0(&ex, w, 24), 0x0000_0008);
    assert_eq!(r0(&ex, w, 26), 0x4000_4000);
    assert_eq!(f0(&ex, w, 34), 32.0);
}

#[test]
fn shfl_and_vote() {
    let (ex, w, _) = run(
        &[
            "S2R R0, SR_LANEID",
            "SHFL.DOWN PT, R1, R0, 0x1, 0x1f",
            "SHFL.DOWN P0, R2, R0, 0x10, 0x1f",
            "SHFL.BFLY PT, R3, R0, 0x1, 0x1f",
            "SHFL.IDX PT, R4, R0, 0x3, 0x1f",
            "SHFL.UP PT, R5, R0, 0x2, RZ",
            "SEL R6, 0x1, RZ, P0",
            "ISETP.LT.U32.AND P1, PT, R0, 0x4, PT",
            "VOTE.ANY R7, PT, P1",
            "VOTE.ALL R8, P2, P1",
            "SEL R9, 0x1, RZ, P2",
            "SHFL.IDX PT, R10, R0, 0x5, 0x181f", // segments of 8 lanes: lane (l & ~7) | 5
            "EXIT",
        ],
        32,
    );
    for l in 0..32u32 {
        let lu = l as usize;
        assert_eq!(r(&ex, w, 1)[lu], (l + 1).min(31));
        assert_eq!(r(&ex, w, 2)[lu], if l < 16 { l + 16 } else { l });
        assert_eq!(r(&ex, w, 6)[lu], (l < 16) as u32);
        assert_eq!(r(&ex, w, 3)[lu], l ^ 1);
        assert_eq!(r(&ex, w, 4)[lu], 3);
        assert_eq!(r(&ex, w, 5)[lu], if l >= 2 { l - 2 } else { l });
        assert_eq!(r(&ex, w, 7)[lu], 0xf);
        assert_eq!(r(&ex, w, 8)[lu], 0xf);
        assert_eq!(r(&ex, w, 9)[lu], 0);
        assert_eq!(r(&ex, w, 10)[lu], (l & !7) | 5);
    }
}

#[test]
fn atomics_global_and_shared() {
    let (mut ex, w, a) = run(
        &[
            "S2R R0, SR_LANEID",
            "IMAD.MOV.U32 R2, RZ, RZ, c[0x0][0x160]",
            "IMAD.MOV.U32 R3, RZ, RZ, c[0x0][0x164]",
            "MOV R4, 0x1",
            "ATOMG.E.ADD.STRONG.GPU PT, R5, [R2.64], R4", // old values 0..31
            "IADD3 R6, R0, -0x10, RZ",
            "ATOMG.E.MAX.S32.STRONG.GPU PT, RZ, [R2.64+0x4], R6",
            "ATOMG.E.MIN.S32.STRONG.GPU PT, RZ, [R2.64+0x8], R6",
            "MOV R7, 0x3f000000",
            "RED.E.ADD.F32.FTZ.RN.STRONG.GPU [R2.64+0xc], R7",
            "ATOMG.E.CAS.STRONG.GPU PT, R8, [R2.64+0x10], RZ, R0", // only lane 0 sees 0
            "ATOMG.E.EXCH.STRONG.GPU PT, R9, [R2.64+0x14], R0",    // lane order: returns l-1
            "ATOMG.E.OR.STRONG.GPU PT, RZ, [R2.64+0x18], R0",
            "STS [0x40], RZ",
            "ATOMS.POPC.INC.32 RZ, [URZ+0x40]",
            "ATOMS.ADD R10, [0x44], R4",
            "LDS R11, [0x40]",
            "LDS R12, [0x44]",
            "EXIT",
        ],
        32,
    );
    let m = ex.memory().read(a, 32).unwrap();
    let word = |i: usize| u32::from_le_bytes(m[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!(word(0), 32);
    assert_eq!(word(1), 15);
    assert_eq!(word(2) as i32, -16);
    assert_eq!(f32::from_bits(word(3)), 16.0);
    assert_eq!(word(4), 1, "lane 0 swapped 0 -> 0, lane 1 then swapped 0 -> 1");
    assert_eq!(word(5), 31);
    assert_eq!(word(6), 31);
    for l in 0..32u32 {
        assert_eq!(r(&ex, w, 5)[l as usize], l);
        assert_eq!(r(&ex, w, 9)[l as usize], l.saturating_sub(1));
        assert_eq!(r(&ex, w, 10)[l as usize], l);
    }
    assert_eq!(r(&ex, w, 8)[0], 0);
    assert_eq!(r(&ex, w, 8)[2], 1);
    assert_eq!([r0(&ex, w, 11), r0(&ex, w, 12)], [32, 32]);
}

#[test]
fn loads_stores_widths_and_local() {
    let (mut ex, w, a) = run(
        &[
            "IMAD.MOV.U32 R2, RZ, RZ, c[0x0][0x160]",
            "IMAD.MOV.U32 R3, RZ, RZ, c[0x0][0x164]",
            "IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]",
            "MOV R4, 0x11223344",
            "MOV R5, 0x55667788",
            "MOV R6, 0x99aabbcc",
            "MOV R7, 0xddeeff00",
            "STG.E.128 [R2.64], R4",
            "LDG.E.64 R8, [R2.64+0x8]",
            "LDG.E.S8 R10, [R2.64+0xc]",  // byte 0x00? -> byte at +12 = 0x00
            "LDG.E.S16 R11, [R2.64+0xa]", // 0x99aa -> sign extended
            "LDG.E.U8 R12, [R2.64+0x3]",  // 0x11
            "STL [R1-0x8], R5",
            "LDL R13, [R1-0x8]",
            "LDC R14, c[0x0][0x0]",  // blockDim.x
            "ULDC UR4, c[0x0][0xc]", // gridDim.x
            "MOV R15, UR4",
            "EXIT",
        ],
        1,
    );
    assert_eq!([r0(&ex, w, 8), r0(&ex, w, 9)], [0x99aa_bbcc, 0xddee_ff00]);
    assert_eq!(r0(&ex, w, 10), 0);
    assert_eq!(r0(&ex, w, 11), 0xffff_99aa);
    assert_eq!(r0(&ex, w, 12), 0x11);
    assert_eq!(r0(&ex, w, 13), 0x5566_7788);
    assert_eq!([r0(&ex, w, 14), r0(&ex, w, 15)], [1, 1]);
    let m = ex.memory().read(a, 16).unwrap();
    assert_eq!(&m[..4], &0x1122_3344u32.to_le_bytes());
}

#[test]
fn errors_name_opcode_pc_and_address() {
    let mut ex = exec(
        kernel(&["NOP", "FOO.BAR R0, R1", "EXIT"]),
        1,
        ControlFlowKind::Hanoi,
        ExecOptions::default(),
    );
    let w = ex.start_cta(0)[0];
    step(&mut ex, w);
    let e = ex.issue(w, 0).unwrap_err();
    assert_eq!(e.to_string(), "unsupported: FOO.BAR at pc 0x10");
    let mut ex = exec(
        kernel(&["IADD3 R0, R0, 0x1, RZ", "FADD.FMZ R0, R0, R0", "EXIT"]),
        1,
        ControlFlowKind::Hanoi,
        ExecOptions::default(),
    );
    let w = ex.start_cta(0)[0];
    step(&mut ex, w);
    assert!(matches!(
        ex.issue(w, 0),
        Err(ExecError::Unsupported { pc: 0x10, .. })
    ));
    let mut ex = exec(
        kernel(&[
            "S2R R0, SR_LANEID",
            "MOV R2, 0x1000",
            "MOV R3, RZ",
            "LDG.E R4, [R2.64]",
            "EXIT",
        ]),
        32,
        ControlFlowKind::Hanoi,
        ExecOptions::default(),
    );
    let w = ex.start_cta(0)[0];
    for _ in 0..3 {
        step(&mut ex, w);
    }
    match ex.issue(w, 0) {
        Err(ExecError::IllegalAddress {
            warp: 0,
            lane: 0,
            pc: 0x30,
            addr: 0x1000,
            ..
        }) => {}
        r => panic!("{r:?}"),
    }
}

/// Execution happens at issue, results at commit: an instruction issued before the previous
/// one's results are committed reads the stale value (MICRO'25 Listing 2).
#[test]
fn stale_read_without_commit() {
    let mut ex = exec(
        kernel(&["MOV R1, 0x40000000", "FFMA R2, R1, R1, RZ", "EXIT"]),
        1,
        ControlFlowKind::Hanoi,
        ExecOptions::default(),
    );
    let w = ex.start_cta(0)[0];
    let first = ex.issue(w, 0).unwrap();
    let second = ex.issue(w, 1).unwrap(); // R1 not committed yet: reads 0
    ex.commit(w, &first.writes);
    ex.commit(w, &second.writes);
    assert_eq!(r0(&ex, w, 1), 0x4000_0000);
    assert_eq!(r0(&ex, w, 2), 0, "FFMA used the stale R1 = 0");
    assert_eq!(first.writes.regs().collect::<Vec<_>>(), vec![ArchReg::R(1)]);
}

#[test]
fn clock_and_special_registers() {
    let mut ex = exec(
        kernel(&[
            "S2R R0, SR_CLOCKLO",
            "CS2R R2, SR_CLOCKLO",
            "S2R R4, SR_TID.X",
            "EXIT",
        ]),
        40,
        ControlFlowKind::Hanoi,
        ExecOptions::default(),
    );
    let ws = ex.start_cta(0);
    assert_eq!(ws.len(), 2);
    let is = ex.issue(ws[1], 0x1_0000_0007).unwrap();
    assert!(is.clock_read);
    assert_eq!(is.active_mask, 0xff, "second warp has 8 threads");
    ex.commit(ws[1], &is.writes);
    let is = ex.issue(ws[1], 0x1_0000_0009).unwrap();
    ex.commit(ws[1], &is.writes);
    let is = ex.issue(ws[1], 0).unwrap();
    ex.commit(ws[1], &is.writes);
    assert_eq!(r0(&ex, ws[1], 0), 7);
    assert_eq!([r0(&ex, ws[1], 2), r0(&ex, ws[1], 3)], [9, 1]);
    assert_eq!(r(&ex, ws[1], 4)[7], 39);
}
