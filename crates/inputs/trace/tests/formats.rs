//! Synthetic traces: every dialect, malformed input, and a property test of
//! the binary encoder.

mod common;
use common::*;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sassim_trace::{
    convert, write_text, AddrMode, KernelHeader, KernelTraceReader, OpcodeTable, Reg, RegKind,
    ThreadBlockTrace, TraceError, TraceInstr, WarpTrace,
};

const PRE_V3: &str = "-kernel name = _Z3ludPfi
-kernel id = 8
-grid dim = (1,1,1)
-block dim = (64,1,1)
-shmem = 0
-nregs = 32
-binary version = 70
-cuda stream id = 0

#traces format = threadblock_x threadblock_y threadblock_z warpid_tb PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]

#BEGIN_TB

thread block = 0,0,0

warp = 0
insts = 4
0 0 0 0 0290 ffff0000 1 R8 LDG.E.SYS 1 R2 4 1 0x00007fe033702880 4
0 0 0 0 0c70 ffff0000 1 R136 LDS.U 1 R0 4 1 0x0000000000000800 64
0 0 0 0 0ca0 ffff0000 0 CALL.REL.NOINC 0 0
0 0 0 0 3020 00000000 0 SHFL.IDX 4 R255 R255 R255 R255 0

warp = 1
insts = 1
0 0 0 1 0290 0000000f 1 R8 LDG.E.SYS 1 R2 4 0 0x0000000000000010 0x0000000000000020 0x0000000000000030 0x0000000000000040
#END_TB
";

const V4_LINEINFO: &str = "-kernel name = _Z1kv
-kernel id = 1
-grid dim = (2,1,1)
-block dim = (32,1,1)
-shmem = 0
-nregs = 8
-binary version = 61
-cuda stream id = 0
-shmem base_addr = 0x00007fb05c000000
-local mem base_addr = 0x00007fb05a000000
-nvbit version = 1.5.5
-accelsim tracer version = 4
-enable lineinfo = 1

#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]

#BEGIN_TB
thread block = 1,0,0
warp = 0
insts = 2
17 0098 ffffffff 1 R4 LDG.E.CG 1 R4 4 1 0x7f2b2d500000 4 
18 00d8 80000001 0 STG.E 2 R6 R0 4 2 0x7f2b2d500400 -124 
#END_TB
";

const V5_HOPPER: &str = "-kernel name = _Z4ataxPfS_
-kernel id = 1
-grid dim = (4,1,1)
-block dim = (64,1,1)
-shmem = 0
-nregs = 16
-binary version = 90
-cuda stream id = 0
-shmem base_addr = 0x00007fc2a1000000
-local mem base_addr = 0x00007fc29f000000
-nvbit version = 1.8
-accelsim tracer version = 5
-enable lineinfo = 0

#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses] immediate1 immediate2

#BEGIN_TB

thread block = 2,0,0
cluster id = 2,0,0
cluster cta = 0,0,0
cluster rank = 0

warp = 0
insts = 4
0020 ffffffff 1 UR4 S2UR 0 0 0 0
00a0 ffffffff 1 R0 IADD3 2 R5 R255 0 -1 0
0130 ffffffff 1 R11 LDG.E 1 R2 4 1 0x7fc267c40800 4 0 0
0140 ffffffff 0 HGMMA.64x64x16.F32 2 UR4 UR6 1 0 0 0
#END_TB
";

const V6: &str = "-kernel name = _Z4ataxPfS_
-kernel id = 1
-grid dim = (1,1,1)
-block dim = (32,1,1)
-shmem = 0
-nregs = 16
-binary version = 90
-cuda stream id = 0
-nvbit version = 1.8
-accelsim tracer version = 6
-enable lineinfo = 0

#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses] immediate1 immediate2 Val|NoVal [dest_val_num] [dest_val] ... [src_val1_num] [src_val1] ...

#BEGIN_TB
thread block = 0,0,0
warp = 0
insts = 3
0050 ffffffff 1 R10 IMAD 3 R10 UR4 R3 0 0 0 NoVal
0060 0000ffff 1 R12 IADD3 1 R10 0 7 0 Val 1 1f 1 aa
0070 00000003 1 R13 LDG.E.64 1 R12 8 2 0x7fc267c40800 8 0 0 Val 2 1 2 1 7fc267c40800
#END_TB
";

fn write(dir: &Path, name: &str, s: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, s).unwrap();
    p
}

fn check_roundtrips(dir: &Path, text: &Path) -> Vec<Named> {
    let (_, want) = read_all(text);
    let bin = dir.join("x.sbt");
    convert(text, &bin).unwrap();
    let (_, got) = read_all(&bin);
    assert!(got == want, "binary round trip of {}", text.display());
    let back = dir.join("x.rt.traceg");
    write_text(&bin, &back).unwrap();
    let (_, got) = read_all(&back);
    assert!(got == want, "text round trip of {}", text.display());
    want
}

#[test]
fn pre_v3_prefix_lines() {
    let d = tmpdir("prev3");
    let p = write(&d, "k.traceg", PRE_V3);
    let r = KernelTraceReader::open(&p).unwrap();
    assert!(r.header().dialect().block_prefix);
    let b = check_roundtrips(&d, &p);
    let w = &b[0].0.warps[0];
    assert_eq!(w.instrs.len(), 4);
    assert_eq!(w.instrs[0].pc, 0x290);
    assert_eq!(w.instrs[0].mask, 0xffff0000);
    assert_eq!(w.instrs[0].dst[0], Reg::r(8));
    assert_eq!(b[0].1[0][0], "LDG.E.SYS");
    let a = w.addrs_of(&w.instrs[0]);
    assert_eq!(a.len(), 16);
    assert_eq!(a[0], 0x7fe033702880);
    assert_eq!(a[15], 0x7fe033702880 + 15 * 4);
    assert_eq!(w.addrs_of(&w.instrs[1])[1], 0x800 + 64);
    assert_eq!(w.instrs[3].n_src, 4);
    assert!(w.instrs[3].srcs().iter().all(|&r| r == Reg::RZ));
    let w1 = &b[0].0.warps[1];
    assert_eq!(w1.instrs[0].addr_mode, AddrMode::ListAll);
    assert_eq!(w1.addrs_of(&w1.instrs[0]), &[0x10, 0x20, 0x30, 0x40]);
}

#[test]
fn v4_lineinfo() {
    let d = tmpdir("v4");
    let p = write(&d, "k.traceg", V4_LINEINFO);
    let b = check_roundtrips(&d, &p);
    assert_eq!(b[0].0.block, [1, 0, 0]);
    let w = &b[0].0.warps[0];
    assert_eq!(w.instrs[0].line, 17);
    assert_eq!(w.instrs[1].line, 18);
    assert_eq!(w.addrs_of(&w.instrs[1]), &[0x7f2b2d500400, 0x7f2b2d500400 - 124]);
}

#[test]
fn v5_hopper_dialect() {
    let d = tmpdir("hop");
    let p = write(&d, "k.traceg", V5_HOPPER);
    let r = KernelTraceReader::open(&p).unwrap();
    let di = r.header().dialect();
    assert_eq!(di.immediates, 2);
    assert!(!di.values);
    let b = check_roundtrips(&d, &p);
    let tb = &b[0].0;
    let c = tb.cluster.unwrap();
    assert_eq!(c.id, [2, 0, 0]);
    let w = &tb.warps[0];
    assert_eq!(
        w.instrs[0].dst[0],
        Reg {
            kind: RegKind::UR,
            num: 4
        }
    );
    assert_eq!(w.instrs[1].imm, [-1, 0]);
    assert_eq!(w.instrs[2].imm, [0, 0]);
    assert!(w.instrs[3].flags & sassim_trace::flags::GMMA_COMMIT != 0);
}

#[test]
fn v6_values() {
    let d = tmpdir("v6");
    let p = write(&d, "k.traceg", V6);
    let b = check_roundtrips(&d, &p);
    let w = &b[0].0.warps[0];
    assert!(!w.instrs[0].has_values());
    assert_eq!(w.instrs[1].imm, [7, 0]);
    let v = w.values_of(&w.instrs[1]);
    assert_eq!(v, vec![&[0x1f][..], &[0xaa][..]]);
    let ld = &w.instrs[2];
    assert_eq!(ld.mem_width, 8);
    assert_eq!(w.addrs_of(ld), &[0x7fc267c40800, 0x7fc267c40808]);
    assert_eq!(w.values_of(ld)[1], &[0x7fc267c40800]);
}

#[test]
fn upstream_v5_fixture_dialect() {
    let d = tmpdir("v5");
    let src = fixtures().join("vectoradd-sm80-v5/kernel-1.traceg");
    let text = std::fs::read_to_string(src).unwrap();
    // keep header + first block only
    let end = text.find("#END_TB").unwrap() + "#END_TB\n".len();
    let p = write(&d, "k.traceg", &text[..end]);
    let b = check_roundtrips(&d, &p);
    assert_eq!(b.len(), 1);
}

// ------------------------------------------------------------ errors

fn err_of(text: &str) -> (PathBuf, TraceError) {
    let d = tmpdir("err");
    let p = write(&d, "bad.traceg", text);
    let e = match KernelTraceReader::open(&p) {
        Err(e) => e,
        Ok(mut r) => loop {
            match r.next_block() {
                Err(e) => break e,
                Ok(Some(_)) => {}
                Ok(None) => panic!("no error for malformed input"),
            }
        },
    };
    (p, e)
}

/// Replace the line that starts with `from` in V4_LINEINFO.
fn v4_with(from: &str, to: &str) -> String {
    assert!(V4_LINEINFO.contains(from));
    V4_LINEINFO.replacen(from, to, 1)
}

fn assert_err(text: &str, line: u64, field: &str) -> TraceError {
    let (p, e) = err_of(text);
    let msg = e.to_string();
    assert_eq!(e.path(), p.as_path(), "{msg}");
    assert_eq!(e.line(), line, "{msg}");
    assert_eq!(e.field(), Some(field), "{msg}");
    assert!(msg.contains("bad.traceg"), "{msg}");
    assert!(msg.contains(&format!(":{line}")), "{msg}");
    assert!(msg.contains(field), "{msg}");
    e
}

#[test]
fn malformed_fields_name_file_line_field() {
    // line 21 is `17 0098 ...`, line 22 is `18 00d8 ...`
    assert_err(&v4_with("17 0098 ffffffff", "17 00g8 ffffffff"), 21, "pc");
    assert_err(&v4_with("17 0098 ffffffff", "17 0098 fffffzff"), 21, "mask");
    assert_err(&v4_with("17 0098", "x7 0098"), 21, "line_num");
    // dest_num says 2, only one register
    assert_err(&v4_with("ffffffff 1 R4 LDG", "ffffffff 2 R4 LDG"), 21, "dest reg");
    // src_num says 1, two registers
    assert_err(&v4_with("STG.E 2 R6 R0", "STG.E 1 R6 R0"), 22, "mem_width");
    // one delta too many / too few addresses
    assert_err(
        &v4_with("0x7f2b2d500400 -124", "0x7f2b2d500400 -124 8"),
        22,
        "address",
    );
    let e = assert_err(
        &v4_with("4 2 0x7f2b2d500400 -124", "4 0 0x7f2b2d500400"),
        22,
        "address",
    );
    assert!(e.to_string().contains("expected 2 addresses"), "{e}");
    assert_err(
        &v4_with("4 2 0x7f2b2d500400 -124", "4 2 0x7f2b2d500400 -1z4"),
        22,
        "address delta",
    );
    assert_err(&v4_with("4 1 0x7f2b2d500000", "4 1 0xzz"), 21, "address base");
    let e = assert_err(
        &v4_with("4 1 0x7f2b2d500000", "4 7 0x7f2b2d500000"),
        21,
        "addr_mode",
    );
    assert!(
        e.to_string().contains("unknown address compression mode 7"),
        "{e}"
    );
    assert_err(&v4_with("R4 LDG.E.CG 1 R4", "R4 LDG.E.CG 1 Q4"), 21, "src reg");
    assert_err(
        &v4_with("thread block = 1,0,0", "thread block = 1,0"),
        18,
        "thread block",
    );
    assert_err(&v4_with("insts = 2", "insts = two"), 20, "insts");
    assert_err(
        &v4_with("-grid dim = (2,1,1)", "-grid dim = (2,1)"),
        3,
        "grid dim",
    );
    assert_err(&v4_with("-nregs = 8", "-nregs = eight"), 6, "nregs");
}

#[test]
fn truncated_text_is_an_error() {
    // missing #END_TB at end of file
    let t = V4_LINEINFO.replace("#END_TB\n", "");
    let e = assert_err(&t, 22, "#END_TB");
    assert!(matches!(e, TraceError::Truncated { .. }), "{e}");
    // fewer instructions than `insts`
    let t = v4_with("insts = 2", "insts = 3");
    let e = assert_err(&t, 23, "insts");
    assert!(matches!(e, TraceError::Truncated { .. }), "{e}");
    // more instructions than `insts`
    assert_err(&v4_with("insts = 2", "insts = 1"), 22, "insts");
    // file cut in the middle of a line
    let cut = &V4_LINEINFO[..V4_LINEINFO.find("0x7f2b2d500400").unwrap() + 4];
    let (_, e) = err_of(cut);
    assert_eq!(e.line(), 22, "{e}");
    // nested BEGIN
    let t = v4_with("#END_TB", "#BEGIN_TB");
    assert_err(&t, 23, "#BEGIN_TB");
}

#[test]
fn never_panics_on_garbage() {
    let d = tmpdir("garbage");
    let mut seed = 12345u64;
    for i in 0..200 {
        let mut s = V5_HOPPER.as_bytes().to_vec();
        for _ in 0..4 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pos = (seed >> 33) as usize % s.len();
            s[pos] = (seed >> 20) as u8;
        }
        let p = d.join(format!("g{i}.traceg"));
        std::fs::write(&p, &s).unwrap();
        if let Ok(mut r) = KernelTraceReader::open(&p) {
            while let Ok(Some(_)) = r.next_block() {}
        }
    }
}

// ------------------------------------------------------------ property test

fn arb_reg() -> impl Strategy<Value = Reg> {
    prop_oneof![
        8 => any::<u8>().prop_map(Reg::r),
        1 => (0u8..64).prop_map(|n| Reg { kind: RegKind::UR, num: n }),
        1 => (0u8..8).prop_map(|n| Reg { kind: RegKind::P, num: n }),
        1 => (0u8..8).prop_map(|n| Reg { kind: RegKind::UP, num: n }),
    ]
}

#[derive(Debug, Clone)]
struct RawInstr {
    pc: u32,
    mask: u32,
    op: usize,
    dst: Vec<Reg>,
    src: Vec<Reg>,
    mem: Option<(u8, u8, u64, i64, Vec<i64>)>,
    imm: i64,
}

fn arb_instr() -> impl Strategy<Value = RawInstr> {
    (
        (0u32..0x400).prop_map(|p| p * 16),
        prop_oneof![Just(u32::MAX), Just(0u32), any::<u32>(), Just(0x0000ffff)],
        0usize..6,
        proptest::collection::vec(arb_reg(), 0..=1),
        proptest::collection::vec(arb_reg(), 0..=4),
        proptest::option::of((
            prop_oneof![Just(1u8), Just(4), Just(8), Just(16)],
            0u8..3,
            any::<u64>(),
            -64i64..64,
            proptest::collection::vec(any::<i64>(), 32),
        )),
        any::<i64>(),
    )
        .prop_map(|(pc, mask, op, dst, src, mem, imm)| RawInstr {
            pc,
            mask,
            op,
            dst,
            src,
            mem,
            imm,
        })
}

const OPS: [&str; 6] = ["IMAD.MOV.U32", "LDG.E.64", "STG.E", "BRA", "FFMA", "LDS.U.128"];

fn build(blocks: Vec<Vec<Vec<RawInstr>>>) -> (Vec<ThreadBlockTrace>, OpcodeTable) {
    let mut ops = OpcodeTable::new();
    let mut out = Vec::new();
    for (bi, warps) in blocks.into_iter().enumerate() {
        let mut tb = ThreadBlockTrace {
            block: [bi as u32, 0, 0],
            ..Default::default()
        };
        for (wi, instrs) in warps.into_iter().enumerate() {
            let mut w = WarpTrace {
                warp_id: wi as u32,
                ..Default::default()
            };
            for r in instrs {
                let mut ins = TraceInstr {
                    pc: r.pc,
                    mask: r.mask,
                    opcode: ops.intern(OPS[r.op]).unwrap(),
                    n_dst: r.dst.len() as u8,
                    n_src: r.src.len() as u8,
                    imm: [r.imm, 0],
                    ..Default::default()
                };
                ins.dst[..r.dst.len()].copy_from_slice(&r.dst);
                ins.src[..r.src.len()].copy_from_slice(&r.src);
                if let Some((width, mode, base, stride, deltas)) = r.mem {
                    ins.mem_width = width;
                    ins.addr_mode = AddrMode::from_u8(mode).unwrap();
                    ins.addr_start = w.addrs.len() as u32;
                    let n = r.mask.count_ones() as usize;
                    let mut a = base;
                    for (i, d) in deltas.iter().enumerate().take(n) {
                        w.addrs.push(a);
                        a = a.wrapping_add(match ins.addr_mode {
                            AddrMode::BaseStride => stride as u64,
                            _ => *d as u64,
                        });
                        let _ = i;
                    }
                    if ins.addr_mode == AddrMode::BaseStride {
                        // keep text-representable: stride form needs one run
                        let first = r.mask.trailing_zeros();
                        let run = if n == 0 {
                            0
                        } else {
                            (r.mask >> first).trailing_ones() as usize
                        };
                        for x in w.addrs[ins.addr_start as usize + run.min(n)..].iter_mut() {
                            *x = 0;
                        }
                    }
                }
                w.instrs.push(ins);
            }
            tb.warps.push(w);
        }
        out.push(tb);
    }
    (out, ops)
}

/// Write `tbs` as a binary trace at `bin`, then read it back to the end: the reader
/// (for its opcode table) and every block it gave.
fn binary_roundtrip(
    bin: &Path,
    h: &KernelHeader,
    tbs: &[ThreadBlockTrace],
    ops: &OpcodeTable,
) -> (KernelTraceReader, Vec<ThreadBlockTrace>) {
    let mut w = sassim_trace::BinaryWriter::create(bin, h, &Default::default()).unwrap();
    for tb in tbs {
        w.write_block(tb, ops).unwrap();
    }
    w.finish().unwrap();
    let mut r = KernelTraceReader::open(bin).unwrap();
    let mut got = Vec::new();
    while let Some(tb) = r.next_block().unwrap() {
        got.push(tb);
    }
    (r, got)
}

fn header() -> KernelHeader {
    KernelHeader {
        name: "_Z4propv".into(),
        kernel_id: 1,
        grid: [64, 1, 1],
        block: [128, 1, 1],
        binary_version: 80,
        tracer_version: 5,
        format_line: "#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses] immediate".into(),
        ..Default::default()
    }
}

/// A header built from its fields (no `raw`) is written as the tracer's lines, which read
/// back as the same fields (the text kept as `raw`); a header read from a trace is written
/// as its raw text.
#[test]
fn header_text_reads_back_as_the_same_fields() {
    let mut h = header();
    h.shmem = 4096;
    h.nregs = 30;
    h.cuda_stream_id = 7;
    h.shmem_base_addr = 0x0000_7fff_0000_0000;
    h.local_mem_base_addr = 0x0000_7fff_0200_0000;
    h.nvbit_version = "1.7".into();
    h.lineinfo = true;
    h.extra.push(("cluster dim".into(), "(2,1,1)".into()));
    let text = h.text().into_owned();
    let path = write(&tmpdir("header"), "k.traceg", &text);
    let r = KernelTraceReader::open(&path).unwrap();
    let got = r.header();
    assert_eq!(got.raw, text);
    assert_eq!(
        got,
        &KernelHeader {
            raw: text.clone(),
            ..h
        }
    );
    assert_eq!(got.text(), text);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn binary_and_text_roundtrip(
        blocks in proptest::collection::vec(
            proptest::collection::vec(proptest::collection::vec(arb_instr(), 0..40), 1..4),
            1..4,
        )
    ) {
        let (tbs, ops) = build(blocks);
        let d = tmpdir("prop");
        let h = header();
        let bin = d.join("p.sbt");
        let (r, got) = binary_roundtrip(&bin, &h, &tbs, &ops);
        prop_assert_eq!(&got, &tbs);
        for (i, n) in r.opcodes().iter() {
            prop_assert_eq!(ops.get(n), Some(i));
        }
        // text
        let txt = d.join("p.traceg");
        write_text(&bin, &txt).unwrap();
        let mut r = KernelTraceReader::open(&txt).unwrap();
        for tb in &tbs {
            let got = r.next_block().unwrap().unwrap();
            prop_assert_eq!(&got, tb);
        }
        prop_assert!(r.next_block().unwrap().is_none());
        let _ = std::fs::remove_dir_all(d);
    }
}

/// A kernels-list line that is neither a copy nor a trace file is an error naming the
/// file and line (never silently skipped); comments and any trace file name are accepted.
#[test]
fn kernelslist_rejects_unknown_lines() {
    let dir = tmpdir("kl");
    let p = dir.join("kernelslist.g");
    std::fs::write(
        &p,
        "# made by hand\nMemcpyHtoD,0x7f0000000000,64\nkernel-1.traceg\nmy.sbt\n",
    )
    .expect("write");
    let cmds = sassim_trace::read_kernelslist(&p).expect("valid list");
    assert_eq!(cmds.len(), 3);
    std::fs::write(&p, "kernel-1.traceg\nlaunch everything\n").expect("write");
    let e = sassim_trace::read_kernelslist(&p)
        .expect_err("unknown line")
        .to_string();
    assert!(
        e.contains("kernelslist.g") && e.contains(":2") && e.contains("launch everything"),
        "{e}"
    );
}

/// xorshift64*, for the record generator below.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A static instruction of the generator: (pc, line, opcode name index, immediates, dests,
/// sources, mem_width, flags).
type PoolEntry = (u32, u32, usize, [i64; 2], Vec<Reg>, Vec<Reg>, u8, u8);

/// Thread blocks that use every field the binary format stores: block and warp ids in any
/// order, clusters, line numbers, both immediates, GMMA flags, all register kinds, v6
/// register values, memory instructions without an active lane, and addresses from
/// lane-linear to arbitrary 64-bit values. Dynamic instructions follow a small pool of
/// static ones (loops, jumps) so that the predictors are exercised.
fn every_field_blocks(seed: u64, nblocks: usize) -> (Vec<ThreadBlockTrace>, OpcodeTable) {
    let mut g = Rng(seed | 1);
    let names = [
        "FFMA",
        "LDG.E.64",
        "STG.E",
        "HGMMA.64x128x16.F32",
        "BRA",
        "LDS.U.128",
        "ATOMG.E.ADD",
    ];
    let kinds = [RegKind::R, RegKind::UR, RegKind::P, RegKind::UP];
    let mut ops = OpcodeTable::new();
    let pool: Vec<PoolEntry> = (0..10)
        .map(|i| {
            let op = g.below(names.len() as u64) as usize;
            let reg = |g: &mut Rng| Reg {
                kind: kinds[g.below(4) as usize],
                num: g.below(256) as u8,
            };
            let dst = (0..g.below(3)).map(|_| reg(&mut g)).collect();
            let src = (0..g.below(5)).map(|_| reg(&mut g)).collect();
            let mem = if op == 0 || op == 3 || op == 4 {
                0
            } else {
                [1u8, 4, 8, 16][g.below(4) as usize]
            };
            let fl = (g.below(4) as u8) << 1; // GMMA_COMMIT | HAS_GMMA_FIELD bits
            let imm = [g.next() as i64 >> g.below(64), -(g.below(1000) as i64)];
            (
                16 * i as u32,
                g.below(3) as u32 * (100 + i as u32),
                op,
                imm,
                dst,
                src,
                mem,
                fl,
            )
        })
        .collect();
    let mut out = Vec::new();
    for b in 0..nblocks {
        let mut tb = ThreadBlockTrace {
            block: if g.below(2) == 0 {
                [b as u32, 0, 0]
            } else {
                [g.below(9) as u32, g.below(3) as u32, g.below(2) as u32]
            },
            cluster: (g.below(3) == 0).then(|| sassim_trace::ClusterInfo {
                id: [g.below(4) as u32, 0, 1],
                cta: [g.below(2) as u32, 1, 0],
                rank: g.below(8) as u32,
            }),
            ..Default::default()
        };
        for wi in 0..g.below(5) {
            let mut w = WarpTrace {
                warp_id: if g.below(3) == 0 {
                    g.below(40) as u32
                } else {
                    wi as u32
                },
                ..Default::default()
            };
            let (mut s, mut mask, mut base) = (0usize, u32::MAX, g.next());
            for _ in 0..g.below(60) {
                s = if g.below(5) == 0 {
                    g.below(pool.len() as u64) as usize
                } else {
                    (s + 1) % pool.len()
                };
                let (pc, line, op, imm, dst, src, mem, fl) = &pool[s];
                mask = match g.below(6) {
                    0 => u32::MAX,
                    1 => 0,
                    2 => g.next() as u32,
                    3 => mask & g.next() as u32,
                    _ => mask,
                };
                let mut ins = TraceInstr {
                    pc: *pc,
                    mask,
                    line: *line,
                    imm: *imm,
                    opcode: ops.intern(names[*op]).expect("intern"),
                    n_dst: dst.len() as u8,
                    n_src: src.len() as u8,
                    mem_width: *mem,
                    addr_mode: AddrMode::from_u8(g.below(3) as u8).expect("mode"),
                    flags: *fl,
                    ..Default::default()
                };
                ins.dst[..dst.len()].copy_from_slice(dst);
                ins.src[..src.len()].copy_from_slice(src);
                if *mem > 0 {
                    ins.addr_start = w.addrs.len() as u32;
                    let kind = g.below(5);
                    base = base.wrapping_add(g.below(3) * 128);
                    for (i, l) in (0..32u64).filter(|l| mask >> l & 1 == 1).enumerate() {
                        w.addrs.push(match kind {
                            0 => base.wrapping_add(l * u64::from(*mem)),
                            1 => base.wrapping_add(i as u64 * 8),
                            2 => base.wrapping_add(g.below(4096) * 4),
                            3 => g.next(),
                            _ => base,
                        });
                    }
                }
                if g.below(4) == 0 {
                    ins.flags |= sassim_trace::flags::HAS_VALUES;
                    ins.val_start = w.values.len() as u32;
                    for _ in 0..dst.len() + src.len() {
                        let n = g.below(4);
                        w.values.push(n);
                        for _ in 0..n {
                            w.values.push(g.next() >> g.below(64));
                        }
                    }
                }
                w.instrs.push(ins);
            }
            tb.warps.push(w);
        }
        out.push(tb);
    }
    (out, ops)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    /// The binary format keeps every field of every record (see `every_field_blocks`).
    #[test]
    fn binary_roundtrip_every_field(seed in proptest::num::u64::ANY, nblocks in 1usize..5) {
        let (tbs, ops) = every_field_blocks(seed, nblocks);
        let d = tmpdir("every-field");
        let bin = d.join("e.sbt");
        let h = KernelHeader { grid: [9, 3, 2], block: [96, 2, 1], ..header() };
        let (_, got) = binary_roundtrip(&bin, &h, &tbs, &ops);
        prop_assert_eq!(&got, &tbs);
        let _ = std::fs::remove_dir_all(d);
    }
}
