//! Every real listing parses; parse → print (dialect) → parse is the identity; control
//! bits, reuse markers and cuobjdump/nvdisasm agreement.

use sassim_isa::{Instruction, Listing, OperandKind, Target};
use sassim_sass::{microbench, parse_listing, parse_listing_file};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn fixtures() -> PathBuf {
    root().join("fixtures/sass-samples")
}

fn listing_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            listing_files(&p, out);
        } else {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if n.ends_with(".cuobjdump-sass.txt") || n.ends_with(".nvdisasm-hex.txt") {
                out.push(p);
            }
        }
    }
}

/// Replace label targets by their resolved address, and drop the encoding.
fn normalize(ins: &Instruction) -> Instruction {
    let mut i = ins.clone();
    i.encoding = None;
    for o in &mut i.operands {
        if let OperandKind::Target(t) = &o.kind {
            let a = t.addr().expect("resolved target");
            o.kind = OperandKind::Target(Target::Addr(a));
        }
    }
    i
}

fn check_resolved(l: &Listing, file: &Path) {
    for k in &l.kernels {
        for ins in &k.instructions {
            for o in &ins.operands {
                if let OperandKind::Target(t) = &o.kind {
                    assert!(
                        t.addr().is_some(),
                        "{}: unresolved target in {ins}",
                        file.display()
                    );
                }
            }
        }
    }
}

/// parse → print each kernel in the dialect → parse gives the same instructions.
fn check_roundtrip(l: &Listing, file: &Path) -> usize {
    let mut n = 0;
    for k in &l.kernels {
        let mb = microbench::Microbench {
            gpu: None,
            grid: [1, 1, 1],
            block: [32, 1, 1],
            active_warps: None,
            inits: vec![],
            global: vec![],
            shared: vec![],
            kernel: k.clone(),
        };
        let text = microbench::print(&mb);
        let back = microbench::parse(&text, "roundtrip.sass").unwrap_or_else(|e| {
            panic!(
                "{}: re-parse of printed kernel {} failed: {e}\n{text}",
                file.display(),
                k.name
            )
        });
        assert_eq!(back.kernel.instructions.len(), k.instructions.len());
        assert_eq!(back.kernel.labels, k.labels, "{}: labels", file.display());
        for (a, b) in k.instructions.iter().zip(&back.kernel.instructions) {
            assert_eq!(normalize(a), normalize(b), "{}: {} vs {}", file.display(), a, b);
            n += 1;
        }
        // Single instructions via Display too.
        for a in &k.instructions {
            let one = format!("{a}");
            let mb1 = microbench::parse(&one, "one.sass");
            if a.target().is_some_and(|t| matches!(t, Target::Label { .. })) {
                continue; // the label is not defined in a one-line file
            }
            let mut b = mb1
                .unwrap_or_else(|e| panic!("{}: {one}: {e}", file.display()))
                .kernel
                .instructions[0]
                .clone();
            b.pc = a.pc;
            assert_eq!(normalize(a), normalize(&b), "{one}");
        }
    }
    n
}

/// `.reuse` markers agree with the reuse bits of the encoding.
fn check_reuse(l: &Listing, file: &Path) {
    for k in &l.kernels {
        for ins in &k.instructions {
            if ins.encoding.is_none() {
                continue;
            }
            let mut marks = 0u8;
            for (s, o) in ins.source_operands().iter().enumerate() {
                if o.reuse {
                    marks |= 1 << s;
                }
            }
            assert_eq!(
                marks,
                ins.ctrl.reuse,
                "{}: reuse markers of {ins}",
                file.display()
            );
        }
    }
}

fn check_all(files: &[PathBuf]) -> (usize, usize) {
    let mut total = 0;
    for f in files {
        let l = parse_listing_file(f).unwrap_or_else(|e| panic!("{e}"));
        assert!(!l.kernels.is_empty(), "{}", f.display());
        assert!(l.arch.is_some(), "{}: no arch", f.display());
        for k in &l.kernels {
            assert!(!k.instructions.is_empty());
            for (i, ins) in k.instructions.iter().enumerate() {
                assert_eq!(ins.pc, i as u64 * 16, "{}", f.display());
                assert!(ins.encoding.is_some(), "{}: {ins} has no encoding", f.display());
            }
        }
        check_resolved(&l, f);
        check_reuse(&l, f);
        total += check_roundtrip(&l, f);
    }
    (files.len(), total)
}

#[test]
fn all_fixture_listings_parse_and_roundtrip() {
    let mut files = Vec::new();
    listing_files(&fixtures(), &mut files);
    assert!(files.len() >= 16, "fixtures missing: {files:?}");
    let (nf, ni) = check_all(&files);
    eprintln!("fixtures: {nf} listings, {ni} instructions round-tripped");
}

#[test]
fn all_workload_listings_parse_and_roundtrip() {
    let mut files = Vec::new();
    listing_files(&root().join("workloads"), &mut files);
    let (nf, ni) = check_all(&files);
    eprintln!("workloads: {nf} listings, {ni} instructions round-tripped");
}

#[test]
fn shared_samples_parse_when_present() {
    let mut files = Vec::new();
    // ../shared sits beside the checkout on developer machines and in CI.
    listing_files(&root().join("../shared/sass-samples"), &mut files);
    check_all(&files);
}

#[test]
fn control_bits_match_reference() {
    let text = std::fs::read_to_string(fixtures().join("vec_add_sm86.control-bits.txt")).unwrap();
    let l = parse_listing_file(&fixtures().join("vec_add_sm86.cuobjdump-sass.txt")).unwrap();
    let k = &l.kernels[0];
    let mut n = 0;
    for line in text.lines() {
        let t = line.trim();
        if !t.starts_with("/*") {
            continue;
        }
        let field = |key: &str| -> &str {
            let i = t.find(key).unwrap_or_else(|| panic!("{key} in {t}")) + key.len();
            t[i..].split_whitespace().next().unwrap()
        };
        let pc = u64::from_str_radix(&t[2..t.find("*/").unwrap()], 16).unwrap();
        let lo = u64::from_str_radix(field("lo=").trim_start_matches("0x"), 16).unwrap();
        let hi = u64::from_str_radix(field("hi=").trim_start_matches("0x"), 16).unwrap();
        let stall: u8 = field("stall=").parse().unwrap();
        let yld = field("yield=") == "1";
        let sb = |s: &str| -> Option<u8> {
            let v: u8 = s.parse().unwrap();
            (v != 7).then_some(v)
        };
        let wbar = sb(field("wbar="));
        let rbar = sb(field("rbar="));
        let wait = u8::from_str_radix(field("wait=").trim_start_matches("0b"), 2).unwrap();
        let reuse = u8::from_str_radix(field("reuse=").trim_start_matches("0b"), 2).unwrap();
        let ins = &k.instructions[k.index_of(pc).expect("pc in listing")];
        assert_eq!(ins.encoding, Some([lo, hi]), "{t}");
        let c = ins.ctrl;
        assert_eq!(
            (c.stall, c.yield_, c.write_sb, c.read_sb, c.wait_mask, c.reuse),
            (stall, yld, wbar, rbar, wait, reuse),
            "{t}"
        );
        n += 1;
    }
    assert_eq!(n, k.instructions.len(), "every instruction has a reference line");
}

/// cuobjdump and nvdisasm listings of the same kernel give the same bodies.
#[test]
fn cuobjdump_and_nvdisasm_agree() {
    let mut pairs = Vec::new();
    let mut files = Vec::new();
    listing_files(&fixtures(), &mut files);
    listing_files(&root().join("workloads"), &mut files);
    for f in &files {
        let n = f.to_str().unwrap();
        if let Some(stem) = n.strip_suffix(".nvdisasm-hex.txt") {
            let c = PathBuf::from(format!("{stem}.cuobjdump-sass.txt"));
            if c.exists() {
                pairs.push((c, f.clone()));
            }
        }
    }
    assert!(pairs.len() >= 3);
    for (c, d) in &pairs {
        let a = parse_listing_file(c).unwrap();
        let b = parse_listing_file(d).unwrap();
        assert_eq!(a.arch, b.arch);
        assert_eq!(a.kernels.len(), b.kernels.len(), "{}", d.display());
        for ka in &a.kernels {
            let kb = b
                .kernel(&ka.name)
                .unwrap_or_else(|| panic!("{} lacks {}", d.display(), ka.name));
            // nvdisasm pads to a larger alignment with NOPs; compare the common prefix.
            let n = ka.instructions.len().min(kb.instructions.len());
            assert!(n + 16 >= ka.instructions.len().max(kb.instructions.len()));
            for (x, y) in ka.instructions.iter().zip(&kb.instructions).take(n) {
                assert_eq!(normalize(x), normalize(y), "{} vs {}", c.display(), d.display());
                assert_eq!(x.encoding, y.encoding);
            }
        }
    }
}

#[test]
fn vec_add_shape() {
    let l = parse_listing_file(&fixtures().join("vec_add_sm86.nvdisasm-hex.txt")).unwrap();
    assert_eq!(l.arch.as_deref(), Some("sm_86"));
    let k = l.kernel("vec_add").unwrap();
    assert_eq!(k.labels.get(".L_x_0"), Some(&0x70));
    let bra = &k.instructions[k.index_of(0x140).unwrap()];
    assert_eq!(bra.body(), "@!P0 BRA `(.L_x_0)");
    assert_eq!(bra.target().unwrap().addr(), Some(0x70));
    let fmul = &k.instructions[k.index_of(0x100).unwrap()];
    assert!(fmul.operands[1].reuse);
    assert_eq!(fmul.ctrl.reuse, 1);
    // IMAD.WIDE.U32 destination spans two registers.
    let imad = &k.instructions[k.index_of(0x80).unwrap()];
    assert_eq!(imad.operands[0].reg().unwrap().width, 2);
}

#[test]
fn kernels_cu_has_two_functions() {
    let l = parse_listing_file(&fixtures().join("kernels_cu_sm86.cuobjdump-sass.txt")).unwrap();
    let names: Vec<_> = l.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["block_reduce", "saxpy_div"]);
}

#[test]
fn raw_binary_listing_without_header() {
    let l = parse_listing_file(&fixtures().join("vec_add_sm86.raw-binary-nvdisasm.txt")).unwrap();
    assert_eq!(l.kernels.len(), 1);
    let c = parse_listing_file(&fixtures().join("vec_add_sm86.cuobjdump-sass.txt")).unwrap();
    let n = c.kernels[0]
        .instructions
        .len()
        .min(l.kernels[0].instructions.len());
    for (x, y) in c.kernels[0]
        .instructions
        .iter()
        .zip(&l.kernels[0].instructions)
        .take(n)
    {
        assert_eq!(normalize(x), normalize(y));
    }
}

#[test]
fn disasm_outputs() {
    let l = parse_listing_file(&fixtures().join("vec_add_sm86.nvdisasm-hex.txt")).unwrap();
    let j = sassim_sass::disasm_json(&l);
    let arr = j.as_array().unwrap();
    assert_eq!(arr.len(), l.kernels[0].instructions.len());
    let x = &arr[9];
    assert_eq!(x["kernel"], "vec_add");
    assert_eq!(x["pc"], 0x90);
    assert_eq!(x["opcode"], "LDG.E");
    assert_eq!(x["operands"][1], "[R2.64]");
    assert_eq!(x["write_sb"], 2);
    assert_eq!(x["read_sb"], serde_json::Value::Null);
    assert_eq!(x["stall"], 1);
    assert_eq!(x["yield"], false);
    let t = sassim_sass::disasm_text(&l);
    assert!(
        t.contains(".L_x_0:\n/*0070*/ [B0-----:R-:W-:Y:S05] MOV R7, 0x4 ;"),
        "{t}"
    );
    // The text is itself a microbenchmark with the same code.
    let mb = microbench::parse(&t, "t.sass").unwrap();
    for (a, b) in l.kernels[0].instructions.iter().zip(&mb.kernel.instructions) {
        assert_eq!(normalize(a), normalize(b));
    }
}

#[test]
fn parse_listing_from_text() {
    let text = "\t.target\tsm_86\n\t\tFunction : k\n        /*0000*/                   EXIT ;  /* 0x000000000000794d */\n  /* 0x000fea0003800000 */\n";
    let l = parse_listing(text, "x").unwrap();
    assert_eq!(l.kernels[0].instructions[0].ctrl.stall, 5);
}

#[test]
fn both_words_on_one_line() {
    let text = "\t.target\tsm_86\n\t.section\t.text.k,\"ax\",@progbits\n  /*0000*/  EXIT ;  /* 0x000000000000794d */ /* 0x000fea0003800000 */\n";
    let l = parse_listing(text, "x").unwrap();
    assert_eq!(
        l.kernels[0].instructions[0].encoding,
        Some([0x794d, 0x000fea0003800000])
    );
    assert_eq!(l.kernels[0].instructions[0].ctrl.stall, 5);
}

#[test]
fn huge_pc_does_not_overflow() {
    let text = "\t\tFunction : k\n  /*ffffffffffffffff*/  EXIT ;\n";
    let _ = parse_listing(text, "x");
}

/// Issue 18: a listing whose instruction addresses repeat, go backwards or skip made the
/// engines loop (the instruction after `/*0080*/` was found at address 0 again). Each is
/// refused with the line of the address.
#[test]
fn instruction_addresses_must_follow_each_other() {
    let text =
        std::fs::read_to_string(root().join("workloads/vecadd/vecadd_sm86.cuobjdump-sass.txt")).unwrap();
    for (from, to, what) in [
        ("/*0090*/", "/*0000*/", "expected 0x0090"),
        ("/*0090*/", "/*0080*/", "expected 0x0090"),
        ("/*0090*/", "/*00a0*/", "expected 0x0090"),
        ("/*0000*/", "/*0008*/", "not a multiple of 16"),
    ] {
        let bad = text.replacen(from, to, 1);
        let line = text.lines().position(|l| l.contains(from)).unwrap() + 1;
        let e = parse_listing(&bad, "v.txt").unwrap_err();
        assert_eq!(e.line, line, "{from} -> {to}: {e}");
        assert!(e.to_string().contains(what), "{from} -> {to}: {e}");
    }
}
