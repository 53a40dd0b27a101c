//! No input makes the parsers panic.

use proptest::prelude::*;
use sassim_sass::{microbench, parse_listing};

const SEED_LINES: &[&str] = &[
    "[B0--3--:R-:W2:-:S02] LDG.E R5, [R12.64] ;",
    "@!P0 BRA `(.L_x_0) ;",
    "        /*0100*/              @!P0 FMUL R9, R2.reuse, R5 ;                           /* 0x0000000502098220 */",
    "                                                                                     /* 0x048fe20000400000 */",
    "\t\tFunction : vec_add",
    "\t.section\t.text.vec_add,\"ax\",@progbits",
    ".L_x_0:",
    ".global 0x1000 = f32 [1.0, 2.0]",
    ".fill 0x10 = u32 4 0x7",
    ".init R10 = 1.0",
    ".grid 2,1,1",
    "MOV R0, c[0x3][R2+0x10]",
    "LDC R1, cx[UR4][R0+0x8]",
    "FADD R3, -|R2|, R4.reuse",
    "DEPBAR.LE SB1, 0x3, {4,3,2}",
    "RET.REL.NODEC R2 `(spinlock) ;",
    "LDG.E R2, desc[UR4][R2.64+UR4-0x4]",
    "FFMA R0, R1, 2.384185791015625e-07, -INF",
];

fn mutate(line: &str, edits: &[(usize, u8, u8)]) -> String {
    let mut b = line.as_bytes().to_vec();
    for &(pos, op, byte) in edits {
        if b.is_empty() {
            b.push(byte);
            continue;
        }
        let p = pos % (b.len() + 1);
        match op % 3 {
            0 if p < b.len() => b[p] = byte,
            1 => b.insert(p, byte),
            _ if p < b.len() => {
                b.remove(p);
            }
            _ => b.push(byte),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn check(text: &str) {
    let _ = microbench::parse(text, "f");
    let _ = parse_listing(text, "f");
    if let Ok(m) = microbench::parse(text, "f") {
        // Whatever parses also prints and re-parses.
        let printed = microbench::print(&m);
        let back = microbench::parse(&printed, "f").unwrap_or_else(|e| panic!("{e}\n{text:?}\n{printed}"));
        assert_eq!(back.kernel.instructions.len(), m.kernel.instructions.len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, .. ProptestConfig::default() })]

    #[test]
    fn random_strings_do_not_panic(s in "\\PC{0,80}") {
        check(&s);
    }

    #[test]
    fn sass_alphabet_does_not_panic(s in "[\\[\\]{}()`|!~@.,:;+\\-0-9xXRUPBSZCTcdesr_ \t\n/*#$A-Fa-f]{0,60}") {
        check(&s);
    }

    #[test]
    fn mutated_lines_do_not_panic(
        idx in 0..SEED_LINES.len(),
        edits in proptest::collection::vec((0usize..200, 0u8..3, any::<u8>()), 1..6),
    ) {
        let line = mutate(SEED_LINES[idx], &edits);
        check(&line);
        // Also inside a listing context.
        let listing = format!("\t.target\tsm_86\n\t\tFunction : k\n        /*0000*/  {line}\n  /* 0x000fe40000000f00 */\n");
        check(&listing);
    }
}
