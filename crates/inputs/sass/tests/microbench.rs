//! The microbenchmark dialect: directives, control codes, labels, round trips, errors.

use sassim_isa::{OperandKind, Reg, Target};
use sassim_sass::microbench::{self, ElemType, InitValue, MemInit, RegInit};
use sassim_sass::{parse_listing, ParseError};
use std::path::Path;

fn paper_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/sass-samples/microbench")
}

fn err(text: &str) -> ParseError {
    match microbench::parse(text, "t.sass") {
        Ok(m) => panic!("expected an error for {text:?}, got {m:?}"),
        Err(e) => e,
    }
}

#[track_caller]
fn assert_err(text: &str, line: usize, column: usize, needle: &str) {
    let e = err(text);
    assert_eq!((e.line, e.column), (line, column), "{e}");
    assert!(
        e.message.contains(needle),
        "message {:?} lacks {needle:?}",
        e.message
    );
    assert_eq!(e.to_string(), format!("t.sass:{line}:{column}: {}", e.message));
}

const EXAMPLE: &str = r#"
# A small benchmark.
.kernel demo
.gpu rtx3080
.grid 2, 1, 1
.block 64
.active_warps 0,1
.init R10 = 1.0
.init R11 = -3
.init R12 = tid.x
.init UR4 = 0x1000
.init R13 = lane
.init R14 = warp
.init R15 = 2.384185791015625e-07
.global 0x1000 = f32 [1.0, 2.5, -0.0, +INF]
.global.fill 0x2000 = u32 8 0xdeadbeef
.fill 0x3000 = f64 2 0.1
.shared 0x0 = s32 [-1, 2]
.shared.fill 0x100 = u64 3 7

loop:
[B0--3--:R-:W2:-:S02] LDG.E R5, [R12.64] ;
[B--2---:R-:W-:Y:S04] FFMA R4, R5.reuse, R5, R10.reuse   // comment
  @!P0 BRA loop
end: EXIT
"#;

#[test]
fn example_parses() {
    let m = microbench::parse(EXAMPLE, "x.sass").unwrap();
    assert_eq!(m.kernel.name, "demo");
    assert_eq!(m.gpu.as_deref(), Some("rtx3080"));
    assert_eq!(m.grid, [2, 1, 1]);
    assert_eq!(m.block, [64, 1, 1]);
    assert_eq!(m.active_warps, Some(vec![0, 1]));
    assert_eq!(
        m.inits[..3],
        [
            RegInit {
                reg: Reg::r(10),
                value: InitValue::Float(1.0)
            },
            RegInit {
                reg: Reg::r(11),
                value: InitValue::Int(-3)
            },
            RegInit {
                reg: Reg::r(12),
                value: InitValue::TidX
            },
        ]
    );
    assert_eq!(
        m.inits[3],
        RegInit {
            reg: Reg::ur(4),
            value: InitValue::Int(0x1000)
        }
    );
    assert_eq!(m.inits[4].value, InitValue::Lane);
    assert_eq!(m.inits[5].value, InitValue::Warp);
    assert_eq!(m.global[0].elem, ElemType::F32);
    assert_eq!(m.global[0].bytes[4..8], 2.5f32.to_le_bytes());
    assert_eq!(m.global[0].bytes[12..16], f32::INFINITY.to_le_bytes());
    assert_eq!(
        m.global[1],
        MemInit {
            addr: 0x2000,
            elem: ElemType::U32,
            bytes: 0xdeadbeefu32.to_le_bytes().repeat(8)
        }
    );
    assert_eq!(m.global[2].bytes, 0.1f64.to_le_bytes().repeat(2));
    assert_eq!(
        m.shared[0].bytes,
        [(-1i32).to_le_bytes(), 2i32.to_le_bytes()].concat()
    );
    assert_eq!(m.shared[1].count(), 3);

    let k = &m.kernel;
    assert_eq!(k.labels["loop"], 0);
    assert_eq!(k.labels["end"], 0x30);
    let ldg = &k.instructions[0];
    assert_eq!(ldg.pc, 0);
    assert_eq!(ldg.ctrl.wait_mask, 0b001001);
    assert_eq!(ldg.ctrl.write_sb, Some(2));
    assert_eq!(ldg.ctrl.read_sb, None);
    assert_eq!(ldg.ctrl.stall, 2);
    let ffma = &k.instructions[1];
    assert!(ffma.ctrl.yield_);
    assert_eq!(ffma.ctrl.reuse, 0b101);
    let bra = &k.instructions[2];
    assert_eq!(bra.ctrl, sassim_isa::ControlBits::default());
    assert_eq!(bra.pc, 0x20);
    assert_eq!(
        bra.target(),
        Some(&Target::Label {
            name: "loop".into(),
            backtick: false,
            addr: Some(0)
        })
    );
    assert_eq!(k.instructions[3].opcode.base, "EXIT");
    // Widths were inferred.
    assert_eq!(ldg.operands[1].to_string(), "[R12.64]");
    match &ldg.operands[1].kind {
        OperandKind::Mem(a) => assert_eq!(a.regs[0].reg.width, 2),
        _ => panic!(),
    }
}

#[test]
fn print_parse_roundtrip() {
    let m = microbench::parse(EXAMPLE, "x.sass").unwrap();
    let text = microbench::print(&m);
    let back = microbench::parse(&text, "y.sass").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back, m, "{text}");
    assert_eq!(microbench::print(&back), text);
}

#[test]
fn defaults() {
    let m = microbench::parse("EXIT", "dir/bench.sass").unwrap();
    assert_eq!(m.kernel.name, "bench");
    assert_eq!(m.grid, [1, 1, 1]);
    assert_eq!(m.block, [32, 1, 1]);
    assert_eq!(m.active_warps, None);
    assert_eq!(m.kernel.instructions[0].ctrl.to_string(), "[B------:R-:W-:-:S01]");
}

#[test]
fn paper_listings_parse() {
    let mut n = 0;
    let mut names: Vec<_> = std::fs::read_dir(paper_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    for p in names {
        let m = microbench::parse_file(&p).unwrap_or_else(|e| panic!("{e}"));
        let back = microbench::parse(&microbench::print(&m), "rt").unwrap();
        assert_eq!(back, m);
        n += 1;
    }
    assert_eq!(n, 11);
    let m = microbench::parse_file(&paper_dir().join("listing4_rfc_ex2.sass")).unwrap();
    let r: Vec<u8> = m.kernel.instructions.iter().map(|i| i.ctrl.reuse).collect();
    assert_eq!(r, [1, 1, 0, 0]);
    let m = microbench::parse_file(&paper_dir().join("listing2_stall_s4.sass")).unwrap();
    assert_eq!(m.kernel.instructions[5].body(), "FADD R1, R2, R3");
    assert_eq!(m.kernel.instructions[5].ctrl.stall, 4);
    let m = microbench::parse_file(&paper_dir().join("listing1_rf_conflict_even_even.sass")).unwrap();
    assert_eq!(m.kernel.instructions[3].body(), "FFMA R13, R16, R18, R20");
}

#[test]
fn operand_forms() {
    let src = r#"
MOV R0, c[0x3][R2+0x10]
LDC R1, cx[UR4][R0+0x8]
LDC R1, c[0x0][RZ]
LDS R2, [R9.X4+0x80]
LDS R2, [R1+UR4-0x4]
LDS R2, [RZ]
LDS R2, [0x20]
LDS R2, [UR4+0x8]
LDG.E R2, desc[UR4][R2.64]
FADD R3, -R2, |R4|
FADD R3, -|R2|, R4.reuse
HADD2 R3, R2.H0_H0, -R4.H1_H1
PRMT R0, R0.B1, 0x7610, R0
LOP3.LUT R0, ~R2, R3, RZ, 0xc0, !PT
FFMA R0, R1, 2.384185791015625e-07, -0.5
FMUL R0, R1, +INF
FMUL R0, R1, -INF
FMUL R0, R1, QNAN
IADD3 R0, R1, -0x4, RZ
DEPBAR.LE SB1, 0x3, {4,3,2}
S2R R0, SR_TID.X
CS2R R4, SRZ
P2R R0, PR, RZ, 0x7f
@P0 BRA !P1, 0x70
@P0 BREAK !P1, B0
@!UP0 EXIT
@PT NOP
@UPT NOP
BRA `(.L_x_0)
.L_x_0: EXIT
"#;
    let m = microbench::parse(src, "f.sass").unwrap_or_else(|e| panic!("{e}"));
    let bodies: Vec<String> = m.kernel.instructions.iter().map(|i| i.body()).collect();
    let expect: Vec<&str> = src.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    for (b, e) in bodies.iter().zip(&expect) {
        let e = e.strip_prefix(".L_x_0: ").unwrap_or(e);
        let e = e.replace("e-07", "e-7");
        assert_eq!(*b, e);
    }
    let i = &m.kernel.instructions;
    assert!(matches!(
        i[14].operands[2].kind,
        OperandKind::Imm(sassim_isa::Imm::Float(_))
    ));
    assert!(matches!(
        i[18].operands[2].kind,
        OperandKind::Imm(sassim_isa::Imm::Int(-4))
    ));
    assert!(i[23].operands[0].pred().unwrap().neg);
    assert!(matches!(
        i[23].operands[1].kind,
        OperandKind::Target(Target::Addr(0x70))
    ));
    assert!(matches!(i[24].operands[1].kind, OperandKind::BReg(0)));
    assert_eq!(i[28].target().unwrap().addr(), Some(0x1d0));
    assert_eq!(i[10].ctrl.reuse, 0b10);
    assert_eq!(microbench::parse(&microbench::print(&m), "g").unwrap(), m);
}

#[test]
fn errors_are_precise() {
    assert_err("MOV R300, R1", 1, 5, "unknown register `R300`");
    assert_err("MOV UR63, R1", 1, 5, "unknown register `UR63`");
    assert_err(
        "\n  ISETP.GE.AND P7, PT, R0, R1, PT",
        2,
        16,
        "unknown register `P7`",
    );
    assert_err("BAR.SYNC B16", 1, 10, "unknown register `B16`");
    assert_err("DEPBAR.LE SB6, 0x1", 1, 11, "unknown register `SB6`");
    assert_err("[B------:R-:W-:-:S16] NOP", 1, 19, "stall `16` out of range");
    assert_err(
        "[B------:R6:W-:-:S01] NOP",
        1,
        11,
        "read counter `6` out of range",
    );
    assert_err(
        "[B------:R-:W9:-:S01] NOP",
        1,
        14,
        "write counter `9` out of range",
    );
    assert_err(
        "[B1-----:R-:W-:-:S01] NOP",
        1,
        3,
        "wait mask position 0 must be `0`",
    );
    assert_err("[B------:R-:W-:X:S01] NOP", 1, 16, "expected `Y` or `-`");
    assert_err("[B------:R-:W-:-:S01 NOP", 1, 21, "expected `]`");
    assert_err("[B------:R-:W-:-:S01", 1, 1, "unterminated control code");
    assert_err("[B------] NOP", 1, 9, "`:`");
    assert_err(".frobnicate 1", 1, 1, "unknown directive `.frobnicate`");
    assert_err("LDG.E R2, [R4.64+0x10", 1, 11, "unterminated `[`");
    assert_err("LDG.E R2, [R4.64 0x10]", 1, 18, "expected `+`, `-` or `]`");
    assert_err("BRA nowhere", 1, 5, "undefined label `nowhere`");
    assert_err("a:\nNOP\na: NOP", 3, 1, "duplicate label `a`");
    assert_err("FADD R1, R2, |R3", 1, 17, "expected `|`");
    assert_err("FADD R1, R2,", 1, 13, "expected an operand after `,`");
    assert_err("FADD R1 R2", 1, 9, "expected `,`");
    assert_err("NOP ; junk", 1, 6, "unexpected text after `;`");
    assert_err("@P9 NOP", 1, 2, "unknown register `P9`");
    assert_err("@Q0 NOP", 1, 2, "expected a guard predicate");
    assert_err(".grid 0", 1, 7, "at least 1");
    assert_err(".init P0 = 1", 1, 7, "expected a register");
    assert_err(".init R1 = banana", 1, 12, "expected an integer, a float");
    assert_err(".global 0x10 = f16 [1]", 1, 16, "expected an element type");
    assert_err(".global 0x10 = f32 [1.0, 2.0", 1, 20, "unterminated `[`");
    assert_err(".global 0x10 = u32 [0x100000000]", 1, 21, "out of range for u32");
    assert_err(".gpu a\n.gpu b", 2, 1, "duplicate `.gpu`");
    assert_err("MOV R1, c[0x0][0x10", 1, 15, "unterminated `[`");
    assert_err("MOV R1, 0x", 1, 11, "expected hex digits");
    assert_err("BRA `(L", 1, 5, "unterminated");
    assert_err("DEPBAR.LE SB0, 0x1, {1,7}", 1, 24, "counter `7` out of range");
    assert_err("[B------:R-:W-:-:S01]", 1, 22, "expected an instruction");
}

#[test]
fn listing_errors_are_precise() {
    let e = parse_listing("hello\n", "x.txt").unwrap_err();
    assert_eq!((e.line, e.column), (1, 1));
    assert!(e.message.contains("no function found"));
    let text =
        "\t\tFunction : k\n        /*0000*/                   MOV R300, R1 ;  /* 0x0000000000007918 */\n";
    let e = parse_listing(text, "x.txt").unwrap_err();
    assert_eq!((e.file.as_str(), e.line, e.column), ("x.txt", 2, 40));
    assert!(e.message.contains("R300"));
    let text = "\t.section\t.text.k,\"ax\",@progbits\n  /*0000*/  @P0 BRA `(.L_x_9) ;\n";
    let e = parse_listing(text, "x.txt").unwrap_err();
    assert_eq!((e.line, e.column), (2, 21));
    assert!(e.message.contains("undefined label `.L_x_9`"));
}

/// Issue 18: launch shapes and memory directives are bounded at the line that gives them.
#[test]
fn launch_and_memory_limits_name_the_line() {
    let body = "[B------:R-:W-:-:S05] EXIT ;\n";
    let err = |text: &str| microbench::parse(&format!("{text}{body}"), "m.sass").unwrap_err();
    let e = err(".grid 300000\n.block 32\n");
    assert_eq!(e.line, 1, "{e}");
    assert!(e.message.contains("1..=8192"), "{e}");
    let e = err(".block 64\n.grid 4097\n");
    assert_eq!(e.line, 2, "{e}");
    assert!(e.message.contains("8194 warps"), "{e}");
    let e = err(".block 1025\n");
    assert!(e.message.contains("1..=1024"), "{e}");
    let e = err(".block 32\n.active_warps 0,1\n");
    assert!(e.message.contains("out of range") && e.line == 2, "{e}");
    let e = err(".global 0xfffffffffffffffc = u32 [1, 2]\n");
    assert!(e.message.contains("negative"), "{e}");
    let e = err(".global 0x1000 = u32 [1, 2]\n.global 0x1004 = u32 [3]\n");
    assert!(
        e.message.contains("overlaps") && e.message.contains("line 1") && e.line == 2,
        "{e}"
    );
    let e = err(".shared 0x38ffc = u32 [1, 2]\n");
    assert!(e.message.contains("shared-memory window"), "{e}");
    let e = err(
        ".fill 0 = u64 16777216 0\n.fill 0x10000000 = u64 16777216 0\n.fill 0x20000000 = u64 16777216 0\n",
    );
    assert!(e.message.contains("exceed") && e.line == 3, "{e}");
    // The limits themselves are accepted.
    let ok = microbench::parse(
        &format!(".block 1024\n.grid 256\n.active_warps 0,31\n{body}"),
        "m.sass",
    )
    .unwrap();
    assert_eq!(ok.grid[0], 256);
}

/// A number followed by `.` and a digit (`2..5`, found by the fuzz test) is an error: read as
/// the number 2 with the suffix `5`, it printed back as `2.5` and re-read as another number.
#[test]
fn a_number_with_a_numeric_suffix_is_an_error() {
    assert_err(
        "FFMA R0, R1, 2..384185791015625e-07, -INF\n",
        1,
        16,
        "followed by `.` and a digit",
    );
    let ok = microbench::parse("FFMA R0, R1, 2.384185791015625e-07, -INF\n", "m.sass").unwrap();
    assert_eq!(ok.kernel.instructions[0].operands.len(), 4);
}
