//! Tests on the real traces in fixtures/traces.

mod common;
use common::*;

use std::io::Write;

use sassim_trace::{convert, read_kernelslist, write_text, Container, KernelTraceReader, TraceCommand};

/// `total_reported_insts` of each row of a stats.csv, keyed by file name.
fn stats_totals(dir: &std::path::Path) -> Vec<(String, u64)> {
    let Ok(s) = std::fs::read_to_string(dir.join("stats.csv")) else {
        return Vec::new();
    };
    let mut lines = s.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
    let col = head.iter().position(|h| *h == "total_reported_insts").unwrap();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            (f[0].to_string(), f[col].parse().unwrap())
        })
        .collect()
}

#[test]
fn kernelslist_commands() {
    let c = read_kernelslist(fixtures().join("vectoradd-sm61-v4-gtx1080/kernelslist.g")).unwrap();
    assert_eq!(c.len(), 4);
    assert_eq!(
        c[0],
        TraceCommand::MemcpyHtoD {
            dst: 0x7f2b2d500000,
            bytes: 400
        }
    );
    match &c[3] {
        TraceCommand::Kernel { file, path } => {
            assert_eq!(file, "kernel-1.traceg");
            assert!(path.ends_with("vectoradd-sm61-v4-gtx1080/kernel-1.traceg"));
        }
        other => panic!("{other:?}"),
    }
    let bfs = read_kernelslist(fixtures().join("bfs-sm80-v3/kernelslist.g")).unwrap();
    let kernels = bfs
        .iter()
        .filter(|c| matches!(c, TraceCommand::Kernel { .. }))
        .count();
    assert_eq!(kernels, 16);
}

#[test]
fn headers_and_counts_match_insts_and_stats() {
    let mut dirs: Vec<_> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("kernelslist.g").exists())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 4);
    for d in dirs {
        let stats = stats_totals(&d);
        for c in read_kernelslist(d.join("kernelslist.g")).unwrap() {
            let TraceCommand::Kernel { path, file } = c else {
                continue;
            };
            // Count `insts =` headers independently of the parser.
            let text = std::fs::read_to_string(&path).unwrap();
            let insts_sum: u64 = text
                .lines()
                .filter_map(|l| l.strip_prefix("insts = "))
                .map(|v| v.trim().parse::<u64>().unwrap())
                .sum();
            let (r, blocks) = read_all(&path);
            let h = r.header();
            assert!(h.name.starts_with("_Z"), "{}", h.name);
            assert!(h.num_blocks() >= blocks.len() as u64);
            let total: u64 = blocks.iter().map(|(b, _)| b.n_instrs()).sum();
            assert_eq!(total, insts_sum, "{}", path.display());
            for (b, _) in &blocks {
                assert!(b.warps.len() as u64 <= h.warps_per_block());
            }
            let stem = file.trim_end_matches('g');
            if let Some((_, want)) = stats.iter().find(|(f, _)| f == stem) {
                assert_eq!(total, *want, "stats.csv total for {}", path.display());
            }
        }
    }
}

#[test]
fn header_fields() {
    let (r, blocks) = read_all(&fixtures().join("matrixmul-sm61-v4/kernel-1.traceg"));
    let h = r.header();
    assert_eq!(h.name, "_Z8mult_gpuIfEvPT_S1_S1_ii");
    assert_eq!(h.block, [32, 32, 1]);
    assert_eq!(h.grid, [1, 1, 1]);
    assert_eq!(h.shmem, 8192);
    assert_eq!(h.nregs, 30);
    assert_eq!(h.binary_version, 61);
    assert_eq!(h.tracer_version, 4);
    assert_eq!(h.shmem_base_addr, 0x00007fb05c000000);
    assert_eq!(h.nvbit_version, "1.5.5");
    assert!(!h.lineinfo);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].0.warps.len(), 32);
    let w = &blocks[0].0.warps[0];
    assert_eq!(w.instrs[0].pc, 0x8);
    assert_eq!(blocks[0].1[0][0], "MOV");

    let (r, blocks) = read_all(&fixtures().join("vectoradd-sm80-v5/kernel-1.traceg"));
    assert_eq!(r.header().dialect().immediates, 1);
    assert_eq!(r.header().grid, [196, 1, 1]);
    assert_eq!(blocks.len(), 196);
    // `00a0 ffffffff 1 R4 LDG.E 1 R4 4 1 0x7fb0fc430e00 4 0`
    let w = &blocks[0].0.warps[0];
    let ld = w.instrs.iter().find(|i| i.pc == 0xa0).unwrap();
    assert_eq!(r.opcode_name(ld.opcode), "LDG.E");
    assert_eq!(ld.mem_width, 4);
    let a = w.addrs_of(ld);
    assert_eq!(a.len(), 32);
    assert_eq!(a[0], 0x7fb0fc430e00);
    assert_eq!(a[31], 0x7fb0fc430e00 + 31 * 4);
}

#[test]
fn bfs_base_delta_addresses() {
    // `0150 9e635eb8 0 STG.E.U8 2 R4 R8 1 2 0x7fc841520003 1 1 2 2 1 1 1 2 2 1 4 1 3 1 1 1 3`
    let path = fixtures().join("bfs-sm80-v3/kernel-10.traceg");
    let (_, blocks) = read_all(&path);
    let mut found = false;
    for (b, _) in &blocks {
        for w in &b.warps {
            for i in &w.instrs {
                if i.pc == 0x150 && i.mask == 0x9e635eb8 {
                    let a = w.addrs_of(i);
                    assert_eq!(a.len(), 18);
                    assert_eq!(a[0], 0x7fc841520003);
                    assert_eq!(a[1], 0x7fc841520004);
                    assert_eq!(a[17], 0x7fc841520003 + 28);
                    found = true;
                }
                if i.mask == 0 && i.is_mem() {
                    assert!(w.addrs_of(i).is_empty());
                }
            }
        }
    }
    assert!(found);
}

#[test]
fn binary_roundtrip_all_fixtures_and_size() {
    let dir = tmpdir("bin");
    let mut tot_xz = 0u64;
    let mut tot_bin = 0u64;
    let mut tot_txt = 0u64;
    let mut ratios = Vec::new();
    for path in all_kernel_files() {
        let name = format!(
            "{}-{}",
            path.parent().unwrap().file_name().unwrap().to_str().unwrap(),
            path.file_name().unwrap().to_str().unwrap()
        );
        let bin = dir.join(format!("{name}.sbt"));
        let st = convert(&path, &bin).unwrap();
        let (rt, text_blocks) = read_all(&path);
        let (rb, bin_blocks) = read_all(&bin);
        assert_eq!(rb.container(), Container::Binary);
        assert_eq!(rt.header().name, rb.header().name);
        assert_eq!(rt.header(), rb.header());
        assert_eq!(text_blocks.len(), bin_blocks.len());
        for (a, b) in text_blocks.iter().zip(&bin_blocks) {
            assert!(a == b, "{} block {:?} differs", path.display(), a.0.block);
        }
        assert_eq!(st.instrs, rt.counts().1);
        // back to text, read again
        let txt = dir.join(format!("{name}.rt.traceg"));
        write_text(&bin, &txt).unwrap();
        let (_, again) = read_all(&txt);
        assert!(again == text_blocks, "{} text round trip differs", path.display());

        let raw = std::fs::read(&path).unwrap();
        let mut xz = xz2::write::XzEncoder::new(Vec::new(), 9);
        xz.write_all(&raw).unwrap();
        let xz = xz.finish().unwrap();
        let b = std::fs::metadata(&bin).unwrap().len();
        eprintln!(
            "{name}: text {} xz {} bin {} (xz/bin = {:.1}x)",
            raw.len(),
            xz.len(),
            b,
            xz.len() as f64 / b as f64
        );
        ratios.push((name.clone(), xz.len() as f64 / b as f64));
        tot_xz += xz.len() as u64;
        tot_bin += b;
        tot_txt += raw.len() as u64;
    }
    eprintln!(
        "TOTAL: text {tot_txt} xz {tot_xz} bin {tot_bin} (xz/bin = {:.1}x, text/bin = {:.0}x)",
        tot_xz as f64 / tot_bin as f64,
        tot_txt as f64 / tot_bin as f64
    );
    assert!(tot_bin < tot_xz, "binary must be smaller than xz");
    // Measured floors (format version 3): regressions of the model fail here.
    // See the table in docs/trace-format.md.
    let ratio = |n: &str| ratios.iter().find(|(k, _)| k.contains(n)).unwrap().1;
    assert!(ratio("vectoradd-sm80-v5") >= 9.0, "vectoradd-sm80 xz/bin");
    assert!(ratio("bfs-sm80-v3-kernel-9.") >= 6.2, "bfs kernel-9 xz/bin");
    let agg = tot_xz as f64 / tot_bin as f64;
    assert!(agg >= 5.3, "aggregate xz/bin {agg:.2} below the measured floor");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn older_format_version_is_a_clear_error() {
    // Written by the version-1 writer (commit 2879c65) and the version-2
    // writer (commit ac052b6) from the sm61 vectoradd fixture.
    for v in [1, 2] {
        let old = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/data/vectoradd-sm61-v{v}.sbt"));
        let e = sassim_trace::KernelTraceReader::open(&old)
            .map(|_| ())
            .expect_err("old version")
            .to_string();
        assert!(
            e.contains(&format!("vectoradd-sm61-v{v}.sbt"))
                && e.contains(&format!("version {v}"))
                && e.contains("sassim trace convert"),
            "{e}"
        );
    }
}

#[test]
fn compressed_variants_read_identically() {
    let src = fixtures().join("vectoradd-sm61-v4-gtx1080/kernel-1.traceg");
    let raw = std::fs::read(&src).unwrap();
    let dir = tmpdir("comp");
    let gz = dir.join("k.traceg.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&raw).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let xz = dir.join("k.traceg.xz");
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(&raw).unwrap();
    std::fs::write(&xz, e.finish().unwrap()).unwrap();
    let zst = dir.join("k.traceg.zst");
    std::fs::write(&zst, zstd::encode_all(&raw[..], 3).unwrap()).unwrap();
    // magic wins over a misleading name
    let noext = dir.join("k-zstd-without-extension.traceg");
    std::fs::copy(&zst, &noext).unwrap();

    let (_, want) = read_all(&src);
    for (p, c) in [
        (&gz, Container::Gzip),
        (&xz, Container::Xz),
        (&zst, Container::Zstd),
        (&noext, Container::Zstd),
    ] {
        let (r, got) = read_all(p);
        assert_eq!(r.container(), c);
        assert!(got == want, "{}", p.display());
    }

    // Truncated compressed streams are errors, never short reads.
    for p in [&gz, &xz, &zst] {
        let full = std::fs::read(p).unwrap();
        let cut = dir.join(format!("cut-{}", p.file_name().unwrap().to_str().unwrap()));
        std::fs::write(&cut, &full[..full.len() * 2 / 3]).unwrap();
        let e = match KernelTraceReader::open(&cut) {
            Err(e) => e,
            Ok(mut r) => loop {
                match r.next_block() {
                    Err(e) => break e,
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("{}: truncated stream read without error", cut.display()),
                }
            },
        };
        assert_eq!(e.path(), cut.as_path());
        eprintln!("{e}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn truncated_binary_is_an_error() {
    let src = fixtures().join("matrixmul-sm61-v4/kernel-1.traceg");
    let dir = tmpdir("binc");
    let bin = dir.join("k.sbt");
    convert(&src, &bin).unwrap();
    let full = std::fs::read(&bin).unwrap();
    for cut_at in [full.len() - 1, full.len() - 9, full.len() / 2, 20] {
        let cut = dir.join("cut.sbt");
        std::fs::write(&cut, &full[..cut_at]).unwrap();
        let e = match KernelTraceReader::open(&cut) {
            Err(e) => e,
            Ok(mut r) => loop {
                match r.next_block() {
                    Err(e) => break e,
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("truncated binary at {cut_at} read without error"),
                }
            },
        };
        assert_eq!(e.path(), cut.as_path());
    }
    // A flipped byte is caught (zstd checksum or model inconsistency).
    let mut bad = full.clone();
    let i = bad.len() / 2;
    bad[i] ^= 0x55;
    let p = dir.join("flip.sbt");
    std::fs::write(&p, &bad).unwrap();
    assert!(read_to_end(&p).is_err());
    let _ = std::fs::remove_dir_all(dir);
}

/// Read every block of `p`; the first error, if any.
fn read_to_end(p: &std::path::Path) -> sassim_trace::Result<u64> {
    let mut r = KernelTraceReader::open(p)?;
    let mut n = 0;
    while let Some(tb) = r.next_block()? {
        n += tb.n_instrs();
    }
    Ok(n)
}

#[test]
fn every_cut_and_every_flipped_byte_of_a_binary_is_an_error() {
    let src = fixtures().join("vectoradd-sm61-v4-gtx1080/kernel-1.traceg");
    let dir = tmpdir("every");
    let bin = dir.join("k.sbt");
    let st = convert(&src, &bin).unwrap();
    let full = std::fs::read(&bin).unwrap();
    assert_eq!(read_to_end(&bin).unwrap(), st.instrs);
    let p = dir.join("bad.sbt");
    for cut in 0..full.len() {
        std::fs::write(&p, &full[..cut]).unwrap();
        let e = read_to_end(&p).expect_err("truncated binary read without error");
        assert_eq!(e.path(), p.as_path(), "cut at {cut}: {e}");
    }
    // A flipped bit is an error, or (zstd frame-header bits such as the
    // window size) harmless: the records read are exactly the original's.
    let (_, want) = read_all(&bin);
    for i in 0..full.len() {
        for x in [0x01u8, 0x80] {
            let mut b = full.clone();
            b[i] ^= x;
            std::fs::write(&p, &b).unwrap();
            match read_to_end(&p) {
                Err(e) => assert_eq!(e.path(), p.as_path(), "byte {i} ^ {x:#x}: {e}"),
                Ok(_) => {
                    let (_, got) = read_all(&p);
                    assert!(
                        got == want,
                        "byte {i} ^ {x:#x}: different records without an error"
                    );
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}
