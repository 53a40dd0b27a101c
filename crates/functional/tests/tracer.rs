//! The Accel-Sim trace writer: traces of the built-in workloads (sm_86) read back with
//! `sassim-trace` give the functional run's per-warp instruction sequences, the engine's
//! memory addresses, and the three address-compression modes.

mod common;

use sassim_functional::tracer::{base_stride, format_line, write_addresses};
use sassim_functional::{
    kernel_header, prepare_workload, runner::run_workload_with, write_workload_trace,
    write_workload_trace_with, AddrCompression, ControlFlowKind, ExecOptions, Issued, KernelExec,
    KernelTracer, MemAccess, MemKind, PendingWrites, RunOptions, Space, TraceOptions, WarpStatus,
};
use sassim_trace::{read_kernelslist, AddrMode, KernelTraceReader, TraceCommand};
use std::collections::HashMap;
use std::path::PathBuf;

const ARCH: &str = "sm_86";
const WORKLOADS: &[&str] = &[
    "vecadd",
    "saxpy",
    "reduce",
    "matmul",
    "histogram",
    "divergent",
    "spinlock",
    "shfl_reduce",
];

fn load(name: &str) -> (sassim_workload::Workload, sassim_isa::Listing) {
    let b = sassim_workload::builtin_named(name).expect("builtin");
    let spec = b.load().expect("spec");
    let text = b.listing(ARCH).expect("listing");
    let listing = sassim_sass::parse_listing(text, name).expect("parse");
    (spec, listing)
}

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("tracer-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Per (cta linear id, warp in cta): the instructions of a trace file, as
/// (pc, mask, mem_width, addr_mode, addresses).
type Line = (u32, u32, u8, u8, Vec<u64>);
type Warps = Vec<((u32, u32), Vec<Line>)>;

fn read_trace(path: &std::path::Path) -> (sassim_trace::KernelHeader, Warps) {
    let mut r = KernelTraceReader::open(path).expect("open trace");
    let h = r.header().clone();
    let mut out = Vec::new();
    while let Some(tb) = r.next_block().expect("block") {
        let [x, y, z] = tb.block;
        let cta = x + y * h.grid[0] + z * h.grid[0] * h.grid[1];
        let mut last_warp = None;
        for w in &tb.warps {
            assert!(last_warp < Some(w.warp_id), "warps in increasing order");
            last_warp = Some(w.warp_id);
            let lines = w
                .instrs
                .iter()
                .map(|i| {
                    (
                        i.pc,
                        i.mask,
                        i.mem_width,
                        i.addr_mode as u8,
                        w.addrs_of(i).to_vec(),
                    )
                })
                .collect();
            out.push(((cta, w.warp_id), lines));
        }
    }
    (h, out)
}

/// Every built-in workload: the trace has the functional run's warps, per-warp
/// instruction sequences (PCs) and total; kernelslist.g names the buffers and the kernel.
#[test]
fn trace_matches_functional_run() {
    for name in WORKLOADS {
        let (spec, listing) = load(name);
        let dir = tmp(name);
        let s = write_workload_trace(&spec, &listing, ARCH, ControlFlowKind::Hanoi, &dir, 1)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // The same run through the functional runner, with control-flow traces.
        let mut ro = RunOptions::default();
        ro.exec.record_cflow_trace = true;
        let f = run_workload_with(&spec, &listing, ARCH, ControlFlowKind::Hanoi, &ro).expect("run");
        assert_eq!(s.stats, f.stats, "{name}: run statistics");

        // kernelslist.g
        let cmds = read_kernelslist(&s.kernelslist).expect("kernelslist");
        assert_eq!(cmds.len(), spec.buffers().len() + 1, "{name}");
        for (c, (_, a, n)) in cmds.iter().zip(&s.memcpys) {
            assert_eq!(c, &TraceCommand::MemcpyHtoD { dst: *a, bytes: *n }, "{name}");
        }
        match cmds.last() {
            Some(TraceCommand::Kernel { file, path }) => {
                assert_eq!(file, "kernel-1.traceg");
                assert_eq!(path, &s.trace);
            }
            c => panic!("{name}: last command {c:?}"),
        }

        // Header.
        let (h, warps) = read_trace(&s.trace);
        assert_eq!(h.name, spec.kernel());
        assert_eq!(h.kernel_id, 1);
        assert_eq!((h.grid, h.block), (spec.grid, spec.block));
        assert_eq!(h.binary_version, 86);
        assert_eq!(h.tracer_version, 4);
        assert!(!h.lineinfo);
        assert_eq!(h.dialect().immediates, 0, "v4 lines carry no immediate");
        assert!(h.nregs > 0);
        let ctas = spec.grid.iter().product::<u32>() as u64;
        assert_eq!(s.counts.blocks, ctas, "{name}");
        assert_eq!(s.counts.warps, f.stats.warps as u64);

        // Per warp: the same dynamic PCs; the trace mask is the guard-true subset of the path.
        let mut by_warp: HashMap<(u32, u32), &sassim_functional::WarpTrace> = HashMap::new();
        for t in &f.traces {
            by_warp.insert((t.cta, t.warp_in_cta), t);
        }
        assert_eq!(warps.len(), f.traces.len(), "{name}: warps");
        let mut total = 0u64;
        let mut prev_cta = 0;
        for (key, lines) in &warps {
            assert!(key.0 >= prev_cta, "{name}: blocks in linear order");
            prev_cta = key.0;
            let t = by_warp[key];
            assert_eq!(
                lines.len(),
                t.entries.len(),
                "{name} warp {key:?}: instruction count"
            );
            for (l, (pc, path)) in lines.iter().zip(&t.entries) {
                assert_eq!(l.0 as u64, *pc, "{name} warp {key:?}");
                assert_eq!(l.1 & !path, 0, "{name} warp {key:?} pc {pc:#x}: mask within path");
            }
            total += lines.len() as u64;
        }
        assert_eq!(total, f.stats.warp_instructions, "{name}: total");
        assert_eq!(s.counts.instructions, total);
        eprintln!(
            "{name}: {} blocks, {} warps, {} instrs, {} mem (modes {:?}), {} bytes, nregs {} shmem {}",
            s.counts.blocks,
            s.counts.warps,
            total,
            s.counts.mem_instructions,
            s.counts.addr_modes,
            s.counts.bytes,
            h.nregs,
            h.shmem
        );
    }
}

/// What the engine issued, per (cta, warp in cta).
type Issues = HashMap<(u32, u32), Vec<(u64, u32, Option<MemAccess>)>>;

/// Run a prepared workload one CTA at a time (warps of the CTA round-robin) — a different
/// order than `trace_exec` — feeding a [`KernelTracer`] and remembering every issue.
fn run_per_cta(
    name: &str,
    comp: AddrCompression,
    file: &str,
) -> (Issues, PathBuf, sassim_functional::TraceCounts) {
    let (spec, listing) = load(name);
    let p = prepare_workload(
        &spec,
        &listing,
        ARCH,
        ControlFlowKind::Hanoi,
        &RunOptions::default(),
    )
    .expect("prepare");
    let mut ex: KernelExec = p.exec;
    let opts = TraceOptions {
        compression: comp,
        ..TraceOptions::default()
    };
    let header = kernel_header(&ex.kernel().clone(), &ex.arch, ex.launch(), 3, &opts);
    let dir = tmp(&format!("{name}-{file}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join(file);
    let mut tr = KernelTracer::create(&path, &header, &opts).expect("create");
    let mut issues: Issues = HashMap::new();
    let mut clock = 0;
    for cta in 0..ex.launch().num_ctas() {
        let ws = ex.start_cta(cta);
        while ws.iter().any(|w| ex.warp_state(*w) != WarpStatus::Exited) {
            for &w in &ws {
                if let WarpStatus::Ready { .. } = ex.warp_state(w) {
                    let is = ex.issue(w, clock).expect("issue");
                    clock += 1;
                    ex.commit(w, &is.writes);
                    tr.record(&ex, w, &is).expect("record");
                    issues
                        .entry(ex.warp_location(w))
                        .or_default()
                        .push((is.pc, is.active_mask, is.mem));
                }
            }
        }
    }
    let (_, counts) = tr.finish().expect("finish");
    (issues, path, counts)
}

/// Every memory line read back has the engine's addresses (all lanes, all lines), its
/// bytes per lane, and the mode the tracer rule picks; with compression off, mode 0 only.
#[test]
fn addresses_round_trip_in_every_mode() {
    let mut seen = [0u64; 3];
    for name in [
        "vecadd",
        "reduce",
        "matmul",
        "histogram",
        "divergent",
        "shfl_reduce",
    ] {
        for (comp, file) in [
            (AddrCompression::Tracer, "kernel-3.traceg"),
            (AddrCompression::None, "kernel-3-list.traceg"),
            (AddrCompression::Shortest, "kernel-3-short.traceg"),
        ] {
            let (issues, path, counts) = run_per_cta(name, comp, file);
            let (h, warps) = read_trace(&path);
            assert_eq!(h.kernel_id, 3);
            let mut modes = [0u64; 3];
            let mut n = 0;
            for (key, lines) in &warps {
                let eng = &issues[key];
                assert_eq!(lines.len(), eng.len(), "{name} {key:?}");
                for (l, (pc, mask, mem)) in lines.iter().zip(eng) {
                    assert_eq!((l.0 as u64, l.1), (*pc, *mask), "{name} {key:?}");
                    match mem {
                        None => assert_eq!(l.2, 0, "{name} pc {pc:#x}: not a memory line"),
                        Some(m) => {
                            assert_eq!(l.2 as u32, m.bytes_per_lane, "{name} pc {pc:#x}: mem width");
                            let want: Vec<u64> = (0..32)
                                .filter(|b| mask >> b & 1 == 1)
                                .map(|b| m.addrs[b])
                                .collect();
                            assert_eq!(l.4, want, "{name} {key:?} pc {pc:#x}: addresses");
                            let rule = if *mask == 0 || base_stride(*mask, &m.addrs).is_some() {
                                1
                            } else {
                                2
                            };
                            match comp {
                                AddrCompression::None => assert_eq!(l.3, 0),
                                AddrCompression::Tracer => {
                                    assert_eq!(l.3, rule, "{name} pc {pc:#x} mask {mask:#x}")
                                }
                                AddrCompression::Shortest => assert!(l.3 == rule || (rule == 2 && l.3 == 0)),
                            }
                            modes[l.3 as usize] += 1;
                            seen[l.3 as usize] += 1;
                            n += 1;
                        }
                    }
                }
            }
            assert_eq!(modes, counts.addr_modes, "{name} {comp:?}: counts");
            assert_eq!(n, counts.mem_instructions);
            assert!(n > 0, "{name}: memory instructions");
        }
    }
    assert!(seen.iter().all(|&c| c > 0), "all three modes written: {seen:?}");
}

/// The suite's traces use base_stride for the coalesced accesses and base_delta for the
/// rest (divergent single lanes, shared-memory tree steps, the histogram's atomics).
#[test]
fn tracer_rule_uses_both_compressed_modes() {
    let mut modes = [0u64; 3];
    for name in ["vecadd", "histogram", "divergent", "reduce"] {
        let (spec, listing) = load(name);
        let s = write_workload_trace(
            &spec,
            &listing,
            ARCH,
            ControlFlowKind::Hanoi,
            &tmp(&format!("{name}-modes")),
            1,
        )
        .expect("trace");
        for (m, c) in modes.iter_mut().zip(s.counts.addr_modes) {
            *m += c;
        }
        // Read the modes back from the file.
        let (_, warps) = read_trace(&s.trace);
        let mut back = [0u64; 3];
        for (_, lines) in &warps {
            for l in lines.iter().filter(|l| l.2 > 0) {
                back[l.3 as usize] += 1;
            }
        }
        assert_eq!(back, s.counts.addr_modes, "{name}");
    }
    assert_eq!(modes[0], 0, "the tracer rule never lists addresses");
    assert!(modes[1] > 0 && modes[2] > 0, "{modes:?}");
}

/// Appending a second launch: kernelslist.g lists both kernels; ids in the headers.
#[test]
fn second_kernel_appends_to_kernelslist() {
    let dir = tmp("two-kernels");
    let (a, la) = load("vecadd");
    let (b, lb) = load("saxpy");
    write_workload_trace(&a, &la, ARCH, ControlFlowKind::Hanoi, &dir, 1).expect("first");
    let s = write_workload_trace(&b, &lb, ARCH, ControlFlowKind::Hanoi, &dir, 2).expect("second");
    let cmds = read_kernelslist(dir.join("kernelslist.g")).expect("kernelslist");
    let kernels: Vec<&str> = cmds
        .iter()
        .filter_map(|c| match c {
            TraceCommand::Kernel { file, .. } => Some(file.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(kernels, ["kernel-1.traceg", "kernel-2.traceg"]);
    assert_eq!(cmds.len(), a.buffers().len() + b.buffers().len() + 2);
    let (h, _) = read_trace(&s.trace);
    assert_eq!(h.kernel_id, 2);
    assert!(write_workload_trace(&a, &la, ARCH, ControlFlowKind::Hanoi, &dir, 0).is_err());
}

/// Header values: ptxas registers and static shared memory of the built-ins, overrides.
#[test]
fn header_fields() {
    let (spec, listing) = load("histogram");
    let s =
        write_workload_trace(&spec, &listing, ARCH, ControlFlowKind::Hanoi, &tmp("hdr"), 1).expect("trace");
    let (h, _) = read_trace(&s.trace);
    assert_eq!(
        (h.nregs, h.shmem),
        (10, 256),
        "ptxas -v: 10 registers, 256 bytes smem"
    );
    assert_eq!(
        h.shmem_base_addr,
        sassim_functional::tracer::DEFAULT_SHMEM_BASE_ADDR
    );
    assert_eq!(
        h.local_mem_base_addr,
        sassim_functional::tracer::DEFAULT_LOCAL_MEM_BASE_ADDR
    );
    assert_eq!(h.cuda_stream_id, 0);
    assert!(h.format_line.starts_with("#traces format = [line_num] PC mask"));
    let opts = TraceOptions {
        nregs: Some(32),
        shmem_bytes: Some(4096),
        cuda_stream_id: 7,
        ..TraceOptions::default()
    };
    let s = write_workload_trace_with(
        &spec,
        &listing,
        ARCH,
        ControlFlowKind::Hanoi,
        &tmp("hdr2"),
        1,
        &opts,
    )
    .expect("trace");
    let (h, _) = read_trace(&s.trace);
    assert_eq!((h.nregs, h.shmem, h.cuda_stream_id), (32, 4096, 7));
    // Every field reads back as `kernel_header` made it (and its text as `raw`).
    let p = prepare_workload(&spec, &listing, ARCH, ControlFlowKind::Hanoi, &opts.run).expect("prepare");
    let want = kernel_header(p.exec.kernel(), &p.exec.arch, p.exec.launch(), 1, &opts);
    assert!(want.raw.is_empty());
    assert_eq!(
        h,
        sassim_trace::KernelHeader {
            raw: want.text().into_owned(),
            ..want.clone()
        }
    );
    assert_eq!((h.tracer_version, h.lineinfo, h.binary_version), (4, false, 86));
    assert_eq!(h.format_line, sassim_functional::tracer::TRACES_FORMAT_V4);
    assert_eq!(
        sassim_functional::tracer::ptxas_resources(
            sassim_workload::builtin_named("reduce")
                .expect("reduce")
                .ptxas_info,
            "reduce",
            "sm_86"
        ),
        Some((10, 0))
    );
}

fn issued(pc: u64, mask: u32, addrs: Option<[u64; 32]>) -> Issued {
    Issued {
        pc,
        index: 0,
        path_mask: mask,
        active_mask: mask,
        mem: addrs.map(|addrs| MemAccess {
            space: Space::Global,
            kind: MemKind::Load,
            bytes_per_lane: 4,
            addrs,
            remote: false,
        }),
        writes: PendingWrites::default(),
        exited: false,
        barrier: None,
        clock_read: false,
    }
}

/// Line format: registers (RZ left out unless asked), opcode with modifiers, and the exact
/// address blocks of trace-formats.md §1.5; hand-built lines read back with sassim-trace.
#[test]
fn line_format_and_edge_cases() {
    let k = common::kernel(&[
        "LDG.E.CONSTANT R4, [R4.64]",
        "STG.E [R6.64], R9",
        "IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]",
        "ISETP.GE.AND P0, PT, R0, c[0x0][0x178], PT",
        "LDS R3, [RZ+0x10]",
    ]);
    let ins = &k.instructions;
    let mut lin = [0u64; 32];
    for (l, a) in lin.iter_mut().enumerate() {
        *a = 0x7f00_0000_0100 + 4 * l as u64;
    }
    let t = AddrCompression::Tracer;
    let line = |i: usize, is: &Issued, c: AddrCompression, rz: bool| {
        let mut s = String::new();
        format_line(&mut s, &ins[i], is, c, rz);
        s
    };
    assert_eq!(
        line(0, &issued(0, u32::MAX, Some(lin)), t, false),
        "0000 ffffffff 1 R4 LDG.E.CONSTANT 1 R4 4 1 0x7f0000000100 4\n"
    );
    assert_eq!(
        line(1, &issued(0x10, 0xffff_0000, Some(lin)), t, false),
        "0010 ffff0000 0 STG.E 2 R6 R9 4 1 0x7f0000000140 4\n"
    );
    assert_eq!(
        line(2, &issued(0x20, u32::MAX, None), t, false),
        "0020 ffffffff 1 R1 IMAD.MOV.U32 0 0\n"
    );
    assert_eq!(
        line(2, &issued(0x20, u32::MAX, None), t, true),
        "0020 ffffffff 1 R1 IMAD.MOV.U32 2 R255 R255 0\n"
    );
    assert_eq!(
        line(3, &issued(0x30, 0, None), t, false),
        "0030 00000000 0 ISETP.GE.AND 1 R0 0\n"
    );
    assert_eq!(
        line(4, &issued(0x40, 0b1, Some(lin)), t, false),
        "0040 00000001 1 R3 LDS 0 4 2 0x7f0000000100\n"
    );
    assert_eq!(
        line(4, &issued(0x40, 0b1, Some(lin)), t, true),
        "0040 00000001 1 R3 LDS 1 R255 4 2 0x7f0000000100\n"
    );

    // Address blocks.
    let block = |mask: u32, a: &[u64; 32], c: AddrCompression| {
        let mut s = String::new();
        let m = write_addresses(&mut s, mask, a, c);
        (m, s.trim_end().to_string())
    };
    assert_eq!(block(0, &lin, t), (1, "1 0x0 0".into()));
    assert_eq!(block(0, &lin, AddrCompression::None), (0, "0".into()));
    assert_eq!(block(0b110, &lin, t), (1, "1 0x7f0000000104 4".into()));
    assert_eq!(
        block(0b101, &lin, t),
        (2, "2 0x7f0000000100 8".into()),
        "two runs"
    );
    assert_eq!(block(0b100, &lin, t), (2, "2 0x7f0000000108".into()), "one lane");
    assert_eq!(
        block(0b11, &lin, AddrCompression::None),
        (0, "0 0x00007f0000000100 0x00007f0000000104".into())
    );
    let mut down = lin;
    down.reverse();
    assert_eq!(block(0b111, &down, t), (1, "1 0x7f000000017c -4".into()));
    let mut same = [0x7f00_0000_0040u64; 32];
    assert_eq!(block(0xf, &same, t), (1, "1 0x7f0000000040 0".into()), "stride 0");
    same[2] = 0x7f00_0000_0080;
    assert_eq!(block(0xf, &same, t), (2, "2 0x7f0000000040 0 64 -64".into()));
    let mut far = [0u64; 32];
    for (l, a) in far.iter_mut().enumerate() {
        *a = if l % 2 == 0 { 0x7000_0000_0000_0000 } else { 0x10 };
    }
    far[31] = 1 << 40; // stride does not fit int32 anyway
    assert_eq!(block(u32::MAX, &far, t).0, 2);
    assert_eq!(
        block(u32::MAX, &far, AddrCompression::Shortest).0,
        0,
        "deltas longer than the list"
    );
    let mut big = lin;
    big[1] = lin[0] + (1 << 33);
    big[2] = big[1] + (1 << 33);
    assert_eq!(block(0b111, &big, t).0, 2, "stride beyond int32");

    // Read a hand-built file back: every block decodes to the addresses.
    let dir = tmp("lines");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("kernel-1.traceg");
    let launch = sassim_functional::Launch::new([1, 1, 1], [32, 1, 1], Vec::new());
    let arch = sassim_functional::ArchInfo::parse(ARCH).expect("arch");
    let h = kernel_header(&k, &arch, &launch, 1, &TraceOptions::default());
    let cases: Vec<(u32, [u64; 32], AddrCompression)> = vec![
        (0, lin, t),
        (0b110, lin, t),
        (0b101, lin, t),
        (0b100, lin, t),
        (0b11, lin, AddrCompression::None),
        (0b111, down, t),
        (0xf, same, t),
        (u32::MAX, far, t),
        (u32::MAX, far, AddrCompression::Shortest),
        (0b111, big, t),
    ];
    let mut text = h.text().into_owned();
    text += &format!(
        "\n#BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\ninsts = {}\n",
        cases.len()
    );
    for (mask, a, c) in &cases {
        text += &line(0, &issued(0, *mask, Some(*a)), *c, false);
    }
    text += "\n#END_TB\n";
    std::fs::write(&path, text).expect("write");
    let mut r = KernelTraceReader::open(&path).expect("open");
    let tb = r.next_block().expect("read").expect("block");
    let w = &tb.warps[0];
    assert_eq!(w.instrs.len(), cases.len());
    for (i, (mask, a, _)) in w.instrs.iter().zip(&cases) {
        let want: Vec<u64> = (0..32).filter(|l| mask >> l & 1 == 1).map(|l| a[l]).collect();
        assert_eq!(w.addrs_of(i), &want[..], "mask {mask:#x} mode {:?}", i.addr_mode);
    }
    let modes: Vec<AddrMode> = w.instrs.iter().map(|i| i.addr_mode).collect();
    assert!(modes.contains(&AddrMode::ListAll) && modes.contains(&AddrMode::BaseStride));
    assert!(r.next_block().expect("end").is_none());
}

/// The writer works on any run: a partial launch (one active warp) still gives a readable
/// trace whose single warp section matches the issues.
#[test]
fn partial_launch_with_active_warps() {
    let (spec, listing) = load("vecadd");
    let opts = TraceOptions {
        run: RunOptions {
            exec: ExecOptions {
                active_warps: Some(vec![3]),
                ..ExecOptions::default()
            },
            ..RunOptions::default()
        },
        ..TraceOptions::default()
    };
    let s = write_workload_trace_with(
        &spec,
        &listing,
        ARCH,
        ControlFlowKind::Hanoi,
        &tmp("partial"),
        1,
        &opts,
    );
    // Only warp 3 of every CTA ran, so the output check fails after the files are written.
    assert!(s.is_err());
    let (_, warps) = read_trace(&tmp_path("partial").join("kernel-1.traceg"));
    assert_eq!(warps.len(), spec.grid[0] as usize);
    assert!(warps.iter().all(|((_, w), l)| *w == 3 && !l.is_empty()));
}

fn tmp_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("tracer-{name}"))
}

/// Without `ptxas -v`, `-nregs` is estimated from the listing: equal to ptxas on the suite.
#[test]
fn nregs_estimate_close_to_ptxas() {
    for name in WORKLOADS {
        let b = sassim_workload::builtin_named(name).expect("builtin");
        let (spec, listing) = load(name);
        let k = listing.kernel(spec.kernel()).expect("kernel");
        let est = sassim_functional::tracer::estimate_nregs(k);
        let (p, _) =
            sassim_functional::tracer::ptxas_resources(b.ptxas_info, spec.kernel(), ARCH).expect("ptxas");
        eprintln!("{name}: estimate {est}, ptxas {p}");
        assert_eq!(est, p, "{name}");
    }
}

/// Other architectures and the SIMT stack: binary version from the arch, counts equal.
#[test]
fn other_archs_and_simt_stack() {
    for (arch, cf) in [
        ("sm_75", ControlFlowKind::Hanoi),
        ("sm_90", ControlFlowKind::Hanoi),
        ("sm_86", ControlFlowKind::SimtStack),
    ] {
        for name in ["matmul", "divergent"] {
            let b = sassim_workload::builtin_named(name).expect("builtin");
            let spec = b.load().expect("spec");
            let listing = sassim_sass::parse_listing(b.listing(arch).expect("listing"), name).expect("parse");
            let dir = tmp(&format!("{name}-{arch}-{cf:?}"));
            let s = write_workload_trace(&spec, &listing, arch, cf, &dir, 1).expect("trace");
            let f = run_workload_with(&spec, &listing, arch, cf, &RunOptions::default()).expect("run");
            let (h, warps) = read_trace(&s.trace);
            assert_eq!(h.binary_version, arch[3..].parse::<u32>().expect("sm"));
            let total: usize = warps.iter().map(|(_, l)| l.len()).sum();
            assert_eq!(total as u64, f.stats.warp_instructions, "{name} {arch} {cf:?}");
        }
    }
}
