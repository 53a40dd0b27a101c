use std::collections::BTreeMap;
use std::path::PathBuf;

use regex::Regex;
use sassim_report::*;

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sassim-report-tests");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn kernel(uid: u32, name: &str, cycles: u64, winsts: u64, scale: u64) -> KernelReport {
    let mut k = KernelReport {
        name: name.to_string(),
        launch_uid: uid,
        grid: [4 * scale as u32, 1, 1],
        block: [256, 1, 1],
        cycles,
        warp_insts: winsts,
        thread_insts: winsts * 32 - scale,
        occupancy: 0.25 * scale as f64,
        ctas: 4 * scale,
        rfc_reads: 100 * scale,
        rfc_hits: 40 * scale,
        l0i_hits: 900 * scale,
        l0i_misses: 10 * scale,
        dram_reads: 77 * scale,
        dram_writes: 33 * scale,
        dram_row_hits: 50 * scale,
        dram_row_misses: 10 * scale,
        mode: MODE_EXECUTION.to_string(),
        ipc_timeline: (1..=5)
            .map(|i| (i * cycles / 5, 10.0 * i as f64 / scale as f64))
            .collect(),
        ..KernelReport::default()
    };
    let slots: BTreeMap<String, u64> = [
        ("issued", 500 * scale),
        ("dependence_counters", 300 * scale),
        ("stall_counter", 120 * scale),
        ("no_instruction", 50 * scale),
        ("mem_queue_full", 20 * scale + 1),
        ("idle", 10),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b))
    .collect();
    k.stall_breakdown = slots;
    k.l1d.record(AccessKind::GlobalRead, CacheStatus::Hit, 60 * scale);
    k.l1d
        .record(AccessKind::GlobalRead, CacheStatus::Miss, 20 * scale);
    k.l1d
        .record(AccessKind::GlobalRead, CacheStatus::SectorMiss, 5 * scale);
    k.l1d
        .record(AccessKind::GlobalRead, CacheStatus::MshrHit, 3 * scale);
    k.l1d
        .record(AccessKind::GlobalRead, CacheStatus::ReservationFail, 7);
    k.l1d
        .record(AccessKind::GlobalWrite, CacheStatus::Hit, 11 * scale);
    k.l1d
        .record(AccessKind::GlobalWrite, CacheStatus::Miss, 9 * scale);
    k.l1i.record(AccessKind::InstRead, CacheStatus::Hit, 40);
    k.l1i.record(AccessKind::InstRead, CacheStatus::Miss, 2);
    k.l1d_per_sm = vec![
        CacheSubStats {
            accesses: 50 * scale,
            misses: 14 * scale,
            pending_hits: 0,
            reservation_fails: 7,
        },
        CacheSubStats {
            accesses: 55 * scale,
            misses: 20 * scale,
            pending_hits: 0,
            reservation_fails: 0,
        },
    ];
    k.l2.record(AccessKind::GlobalRead, CacheStatus::Hit, 15 * scale);
    k.l2.record(AccessKind::GlobalRead, CacheStatus::Miss, 10 * scale);
    k.l2.record(AccessKind::GlobalWrite, CacheStatus::Miss, 9 * scale);
    k.l2.record(AccessKind::L1WriteAllocRead, CacheStatus::HitReserved, 2);
    k
}

fn sample() -> RunReport {
    let mut r = RunReport {
        gpu: "RTX3070".to_string(),
        sim_version: "0.1.0".to_string(),
        config: serde_json::json!({"sm_count": 46, "clock_mhz": 1500, "l1d": {"sets": 4}}),
        kernels: vec![
            kernel(1, "_Z6vecAddIfEvPT_S1_S1_i", 12345, 344, 1),
            kernel(2, "_Z8mult_gpuIfEvPT_S1_S1_ii", 67890, 4416, 2),
        ],
        ..RunReport::default()
    };
    r.kernels[1].warnings.push("something odd".to_string());
    r.finalize();
    r
}

/// get_stats.py style: the last match of `pattern` in `text`, capture group 1, trimmed.
fn stat(text: &str, pattern: &str) -> String {
    let re = Regex::new(pattern).unwrap();
    re.captures_iter(text)
        .last()
        .unwrap_or_else(|| panic!("no match for {pattern}"))[1]
        .trim()
        .to_string()
}

#[test]
fn accelsim_lines_parse_back_like_get_stats() {
    let r = sample();
    let json: serde_json::Value = serde_json::from_str(&to_json(&r)).unwrap();
    let host = HostStats {
        wall_seconds: 3725.0,
        ..HostStats::new(&r, 3725.0)
    };
    let out = accelsim_lines(&r, &host);
    // Per-kernel blocks, as get_stats.py -k splits them (each starts at kernel_name).
    let starts: Vec<usize> = out.match_indices("kernel_name = ").map(|(i, _)| i).collect();
    assert_eq!(starts.len(), 2);
    let blocks = [&out[starts[0]..starts[1]], &out[starts[1]..]];
    let ks = json["kernels"].as_array().unwrap();
    let (mut tot_cycles, mut tot_insn, mut tot_w) = (0u64, 0u64, 0u64);
    let (mut l1d_gr_hit, mut l1d_gr_total, mut l1d_gw_hit, mut l2_gr_hit, mut l2_gw_miss) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut l1d_acc, mut l1d_miss, mut l2_acc, mut dram_r, mut dram_w) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for (b, k) in blocks.iter().zip(ks) {
        let u = |v: &serde_json::Value| v.as_u64().unwrap();
        tot_cycles += u(&k["cycles"]);
        tot_insn += u(&k["thread_insts"]);
        tot_w += u(&k["warp_insts"]);
        l1d_gr_hit += u(&k["l1d"]["breakdown"]["GLOBAL_ACC_R"]["HIT"]);
        // TOTAL_ACCESS = HIT + HIT_RESERVED + MISS + SECTOR_MISS (not MSHR_HIT/RES_FAIL),
        // plus the L1I's INST_ACC_R which does not share the kind.
        l1d_gr_total += u(&k["l1d"]["breakdown"]["GLOBAL_ACC_R"]["HIT"])
            + u(&k["l1d"]["breakdown"]["GLOBAL_ACC_R"]["MISS"])
            + u(&k["l1d"]["breakdown"]["GLOBAL_ACC_R"]["SECTOR_MISS"]);
        l1d_gw_hit += u(&k["l1d"]["breakdown"]["GLOBAL_ACC_W"]["HIT"]);
        l2_gr_hit += u(&k["l2"]["breakdown"]["GLOBAL_ACC_R"]["HIT"]);
        l2_gw_miss += u(&k["l2"]["breakdown"]["GLOBAL_ACC_W"]["MISS"]);
        l1d_acc += u(&k["l1d"]["accesses"]);
        l1d_miss += u(&k["l1d"]["misses"]);
        l2_acc += u(&k["l2"]["accesses"]);
        dram_r += u(&k["dram_reads"]);
        dram_w += u(&k["dram_writes"]);

        assert_eq!(stat(b, r"kernel_name\s*=\s*(.*)"), k["name"].as_str().unwrap());
        assert_eq!(
            stat(b, r"kernel_launch_uid\s*=\s*(.*)"),
            k["launch_uid"].to_string()
        );
        assert_eq!(stat(b, r"gpu_sim_cycle\s*=\s*(.*)"), k["cycles"].to_string());
        assert_eq!(stat(b, r"gpu_sim_insn\s*=\s*(.*)"), k["thread_insts"].to_string());
        let ipc: f64 = stat(b, r"gpu_ipc\s*=\s*(.*)").parse().unwrap();
        assert!((ipc - k["ipc"].as_f64().unwrap()).abs() < 1e-4);
        assert_eq!(stat(b, r"gpu_tot_sim_cycle\s*=\s*(.*)"), tot_cycles.to_string());
        assert_eq!(stat(b, r"gpu_tot_sim_insn\s*=\s*(.*)"), tot_insn.to_string());
        let tipc: f64 = stat(b, r"gpu_tot_ipc\s*=\s*(.*)").parse().unwrap();
        assert!((tipc - tot_insn as f64 / tot_cycles as f64).abs() < 1e-4);
        let occ: f64 = stat(b, r"gpu_occupancy\s*=\s*(.*)%").parse().unwrap();
        assert!((occ - 100.0 * k["occupancy"].as_f64().unwrap()).abs() < 1e-4);
        let _: f64 = stat(b, r"gpu_tot_occupancy\s*=\s*(.*)%").parse().unwrap();
        assert_eq!(stat(b, r"gpgpu_n_tot_w_icount\s*=\s*(.*)"), tot_w.to_string());
        assert_eq!(
            stat(b, r"gpgpu_n_tot_thrd_icount\s*=\s*(.*)"),
            tot_insn.to_string()
        );
        assert_eq!(
            stat(b, r"L1D_total_cache_accesses\s*=\s*(.*)"),
            l1d_acc.to_string()
        );
        assert_eq!(
            stat(b, r"L1D_total_cache_misses\s*=\s*(.*)"),
            l1d_miss.to_string()
        );
        assert_eq!(stat(b, r"L2_total_cache_accesses\s*=\s*(.*)"), l2_acc.to_string());
        assert_eq!(
            stat(
                b,
                r"\s+Total_core_cache_stats_breakdown\[GLOBAL_ACC_R\]\[HIT\]\s*=\s*(.*)"
            ),
            l1d_gr_hit.to_string()
        );
        assert_eq!(
            stat(
                b,
                r"\s+Total_core_cache_stats_breakdown\[GLOBAL_ACC_R\]\[TOTAL_ACCESS\]\s*=\s*(.*)"
            ),
            l1d_gr_total.to_string()
        );
        assert_eq!(
            stat(
                b,
                r"\s+Total_core_cache_stats_breakdown\[GLOBAL_ACC_W\]\[HIT\]\s*=\s*(.*)"
            ),
            l1d_gw_hit.to_string()
        );
        assert_eq!(
            stat(
                b,
                r"\s+L2_cache_stats_breakdown\[GLOBAL_ACC_R\]\[HIT\]\s*=\s*(.*)"
            ),
            l2_gr_hit.to_string()
        );
        assert_eq!(
            stat(
                b,
                r"\s+L2_cache_stats_breakdown\[GLOBAL_ACC_W\]\[MISS\]\s*=\s*(.*)"
            ),
            l2_gw_miss.to_string()
        );
        assert_eq!(stat(b, r"total dram reads\s*=\s*(.*)"), dram_r.to_string());
        assert_eq!(stat(b, r"total dram writes\s*=\s*(.*)"), dram_w.to_string());
        // L1D_cache_core[i] lines.
        let core0 = stat(b, r"L1D_cache_core\[0\]: Access = (\d+)");
        let sm0: u64 = ks[..]
            .iter()
            .take_while(|kk| !std::ptr::eq(*kk, k))
            .chain(std::iter::once(k))
            .map(|kk| kk["l1d_per_sm"][0]["accesses"].as_u64().unwrap())
            .sum();
        assert_eq!(core0, sm0.to_string());
        // Simulation time and rate lines (get_stats.py patterns).
        let secs: u64 = stat(b, r"gpgpu_simulation_time\s*=.*\(([0-9]+) sec\).*")
            .parse()
            .unwrap();
        let rate: u64 = stat(b, r"gpgpu_simulation_rate\s+=\s+(.*)\s+\(inst\/sec\)")
            .parse()
            .unwrap();
        assert_eq!(rate, tot_insn / secs);
        let crate_: u64 = stat(b, r"gpgpu_simulation_rate\s+=\s+(.*)\s+\(cycle\/sec\)")
            .parse()
            .unwrap();
        assert_eq!(crate_, tot_cycles / secs);
    }
    // Whole run: 3725 s = 1 h 2 min 5 s at the end of the last kernel.
    assert!(out.contains("gpgpu_simulation_time = 0 days, 1 hrs, 2 min, 5 sec (3725 sec)"));
    assert!(out.ends_with("GPGPU-Sim: *** exit detected ***\n"));
    assert_eq!(
        Regex::new(r"GPGPU-Sim: \*\*\* exit detected \*\*\*")
            .unwrap()
            .find_iter(&out)
            .count(),
        1
    );
    // Deterministic without host figures.
    let a = accelsim_lines(&r, &HostStats::default());
    assert_eq!(a, accelsim_lines(&r, &HostStats::default()));
    assert!(a.contains("(1 sec)"));
}

#[test]
fn summary_and_table() {
    let r = sample();
    let s = summary(&r);
    assert!(s.contains("_Z6vecAddIfEvPT_S1_S1_i"));
    assert!(s.contains("something odd"));
    let host = HostStats::new(&r, 2.0);
    assert_eq!(host.warp_insts_per_s, (344.0 + 4416.0) / 2.0);
    assert_eq!(host.cycles_per_s, (12345.0 + 67890.0) / 2.0);
    let t = table(&r, &host);
    // Top three stalls of kernel 1: 300, 120, 50 of 1001 slots.
    assert!(
        t.contains("dependence_counters 30.0%, stall_counter 12.0%, no_instruction 5.0%"),
        "{t}"
    );
    assert!(t.contains("warp-insts/s"));
    assert!(t.contains("cycles/s"));
    assert!(t.contains("total"));
    let k = &r.kernels[0];
    assert_eq!(k.top_stalls(1)[0].0, "dependence_counters");
}

#[test]
fn json_is_deterministic_and_round_trips() {
    let a = to_json(&sample());
    let b = to_json(&sample());
    assert_eq!(a, b);
    assert!(!a.contains("\"host\""));
    let back = from_json(&a).unwrap();
    assert_eq!(back, sample());
    assert_eq!(to_json(&back), a);
    // Host figures are kept apart.
    let mut with_host = sample();
    with_host.host = Some(HostStats::new(&with_host, 1.5));
    let j = to_json(&with_host);
    assert!(j.contains("\"host\""));
    assert_eq!(to_json(&with_host.without_host()), a);
    // Non-finite floats become 0 and the JSON reads back.
    let mut bad = sample();
    bad.kernels[0].ipc = f64::NAN;
    bad.kernels[0].ipc_timeline.push((1, f64::INFINITY));
    let j = to_json(&bad);
    assert!(from_json(&j).is_ok());
    // Missing fields default (older JSON).
    let old = from_json(r#"{"gpu": "x", "kernels": [{"name": "k", "cycles": 5}]}"#).unwrap();
    assert_eq!(old.kernels[0].cycles, 5);
    // Bad JSON file names file and line.
    let p = tmp("bad.json");
    std::fs::write(&p, "{\n \"gpu\": 3\n}").unwrap();
    let e = read_json(&p).unwrap_err().to_string();
    assert!(e.contains("bad.json:2:"), "{e}");
}

/// Minimal well-formedness check: tags nest and close, attributes are quoted.
fn assert_well_formed(svg: &str) {
    assert!(svg.starts_with("<svg"), "does not start with <svg");
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        let text = &rest[..i];
        assert!(!text.contains('>'), "stray > in text {text:?}");
        let end = rest[i..].find('>').expect("unclosed tag") + i;
        let tag = &rest[i + 1..end];
        assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes in <{tag}>");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name.trim()), "mismatched </{name}>");
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().unwrap().to_string();
            stack.push(name);
        }
        rest = &rest[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed {stack:?}");
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
}

#[test]
fn svg_plots_are_well_formed() {
    let r = sample();
    let p = tmp("stalls.svg");
    plot_stalls(&r, &p).unwrap();
    let s = std::fs::read_to_string(&p).unwrap();
    assert_well_formed(&s);
    for k in &r.kernels {
        assert!(s.contains(&k.name));
    }
    assert!(s.contains("dependence_counters"));

    let p = tmp("ipc.svg");
    plot_ipc(&r, &p).unwrap();
    let s = std::fs::read_to_string(&p).unwrap();
    assert_well_formed(&s);
    for k in &r.kernels {
        assert!(s.contains(&k.name));
    }
    assert!(s.contains("<polyline"));

    let pts: Vec<CorrelationPoint> = r
        .kernels
        .iter()
        .map(|k| CorrelationPoint {
            label: k.name.clone(),
            sim_cycles: k.cycles as f64,
            hw_cycles: k.cycles as f64 * 0.9,
        })
        .collect();
    let p = tmp("corr.svg");
    plot_correlation(&pts, &p).unwrap();
    let s = std::fs::read_to_string(&p).unwrap();
    assert_well_formed(&s);
    for k in &r.kernels {
        assert!(s.contains(&k.name));
    }
    assert!(s.contains("stroke-dasharray"), "y = x line");
    // Names needing escapes stay well-formed.
    let mut r2 = r.clone();
    r2.kernels[0].name = "void foo<float>(float*, \"a\" & 'b')".to_string();
    assert_well_formed(&stalls_svg(&r2));
    assert_well_formed(&ipc_svg(&r2));
    // Unwritable path: error names it.
    let e = plot_ipc(&r, "/nonexistent-dir/x.svg").unwrap_err().to_string();
    assert!(e.contains("/nonexistent-dir/x.svg"));
    // Deterministic.
    assert_eq!(stalls_svg(&r), stalls_svg(&sample()));
}

fn sim_for_correlation() -> RunReport {
    let mk = |uid: u32, name: &str, cycles: u64| KernelReport {
        name: name.to_string(),
        launch_uid: uid,
        cycles,
        ..KernelReport::default()
    };
    let mut r = RunReport {
        kernels: vec![
            mk(1, "_Z4initPf", 110),
            mk(2, "_Z4stepPfi", 180),
            mk(3, "_Z4stepPfi", 300),
            mk(4, "_Z6reducePf", 999),
        ],
        ..RunReport::default()
    };
    r.finalize();
    r
}

#[test]
fn correlate_hand_computed() {
    // launch 1 matched by launch_id; the two `step` rows have no id and match the 1st and
    // 2nd simulated `step` launches in order; `reduce` (launch 4) has no measurement;
    // `other` matches nothing.
    let csv = "kernel,launch_id,cycles\n\
               init,1,100\n\
               # a comment\n\
               \n\
               \"void step(float*, int)\",,150\n\
               step,,\"300\"\n\
               other,,50\n";
    let p = tmp("hw.csv");
    std::fs::write(&p, csv).unwrap();
    let hw = read_hw_csv(&p).unwrap();
    assert_eq!(hw.len(), 4);
    assert_eq!(hw[0].launch_id, Some(1));
    assert_eq!(hw[1].launch_id, None);
    assert_eq!(hw[2].order, 2);
    let c = correlate(&sim_for_correlation(), &hw);
    assert_eq!(c.kernels.len(), 3);
    assert_eq!(c.kernels[0].matched_by, "launch_id");
    assert_eq!(c.kernels[1].matched_by, "order+name");
    assert_eq!((c.kernels[1].sim_cycles, c.kernels[1].hw_cycles), (180, 150.0));
    assert_eq!((c.kernels[2].sim_cycles, c.kernels[2].hw_cycles), (300, 300.0));
    assert_eq!(c.unmatched_sim.len(), 1);
    assert_eq!(c.unmatched_sim[0].launch_uid, 4);
    assert_eq!(c.unmatched_hw.len(), 1);
    assert_eq!(c.unmatched_hw[0].name, "other");
    // Hand computation, pairs (sim, hw) = (110, 100), (180, 150), (300, 300):
    //   APE = 10/100 = 10 %, 30/150 = 20 %, 0 %  -> MAPE = 30/3 = 10 %
    //   p90 (nearest rank): sorted APEs 0, 10, 20; rank ceil(0.9*3) = 3 -> 20 %
    //   NRMSE: errors 10, 30, 0; RMSE = sqrt((100 + 900 + 0)/3) = sqrt(333.33) = 18.2574;
    //          mean(hw) = 550/3 = 183.333 -> 18.2574/183.333 = 0.0995859
    //   Pearson: mean(sim) = 590/3, mean(hw) = 550/3;
    //     9*cov = sum((3s-590)(3h-550)) = (-260)(-250) + (-50)(-100) + (310)(350) = 178500
    //     9*var_s = 260^2 + 50^2 + 310^2 = 166200;  9*var_h = 250^2 + 100^2 + 350^2 = 195000
    //     r = 178500 / sqrt(166200 * 195000) = 178500 / 180024.998 = 0.991529
    let m = &c.metrics;
    assert_eq!(m.kernels, 3);
    assert!((m.mape.unwrap() - 10.0).abs() < 1e-9);
    assert!((m.p90_ape.unwrap() - 20.0).abs() < 1e-9);
    assert!((m.nrmse.unwrap() - 0.0995859).abs() < 1e-6);
    assert!((m.pearson.unwrap() - 0.991529).abs() < 1e-6);
    let text = render_correlation(&c);
    assert!(text.contains("MAPE 10.00%"), "{text}");
    assert!(text.contains("unmatched simulated kernel 4"));
    assert_eq!(c.points().len(), 3);
}

#[test]
fn ncu_raw_csv_parses() {
    // `ncu --csv --page raw --metrics gpu__cycles_elapsed.max,sm__cycles_elapsed.avg`:
    // log lines, header, units row, values with thousands separators.
    let csv = "==PROF== Connected to process 1234 (/app)\n\
==PROF== Profiling \"step\": 0%....50%....100% - 1 pass\n\
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__cycles_elapsed.max\",\"sm__cycles_elapsed.avg\"\n\
\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"cycle\",\"cycle\"\n\
\"0\",\"1234\",\"app\",\"127.0.0.1\",\"init(float *)\",\"1\",\"7\",\"(256, 1, 1)\",\"(4, 1, 1)\",\"0\",\"8.6\",\"1,234,567\",\"1,200,000.50\"\n\
\"1\",\"1234\",\"app\",\"127.0.0.1\",\"void step<float>(float *, int)\",\"1\",\"7\",\"(256, 1, 1)\",\"(4, 1, 1)\",\"0\",\"8.6\",\"180\",\"170.25\"\n\
==PROF== Disconnected from process 1234\n";
    let hw = parse_hw_csv(csv, "ncu.csv").unwrap();
    assert_eq!(hw.len(), 2);
    assert_eq!(hw[0].name, "init(float *)");
    assert_eq!(hw[0].launch_id, Some(1));
    assert_eq!(hw[0].cycles, 1_234_567.0);
    assert_eq!(hw[1].launch_id, Some(2));
    assert_eq!(hw[1].cycles, 180.0);
    let c = correlate(&sim_for_correlation(), &hw);
    assert_eq!(c.kernels.len(), 2);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);

    // Only sm__cycles_elapsed.avg, scaled units, no units row for the ID.
    let csv2 = "\"ID\",\"Kernel Name\",\"sm__cycles_elapsed.avg\"\n\
\"\",\"\",\"Kcycle\"\n\
\"0\",\"k\",\"1.5\"\n";
    let hw = parse_hw_csv(csv2, "ncu2.csv").unwrap();
    assert_eq!(hw[0].cycles, 1500.0);

    // Details page (one row per metric).
    let csv3 = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
\"0\",\"1\",\"app\",\"h\",\"init(float *)\",\"1\",\"7\",\"GPU Speed Of Light Throughput\",\"DRAM Frequency\",\"cycle/nsecond\",\"6.99\"\n\
\"0\",\"1\",\"app\",\"h\",\"init(float *)\",\"1\",\"7\",\"GPU Speed Of Light Throughput\",\"Elapsed Cycles\",\"cycle\",\"2,345\"\n\
\"1\",\"1\",\"app\",\"h\",\"step(float *, int)\",\"1\",\"7\",\"GPU Speed Of Light Throughput\",\"Elapsed Cycles\",\"Mcycle\",\"1.25\"\n";
    let hw = parse_hw_csv(csv3, "ncu3.csv").unwrap();
    assert_eq!(hw.len(), 2);
    assert_eq!(hw[0].cycles, 2345.0);
    assert_eq!(hw[1].cycles, 1_250_000.0);
    assert_eq!(hw[1].launch_id, Some(2));
}

#[test]
fn malformed_csv_errors_name_file_and_line() {
    let p = tmp("bad.csv");
    std::fs::write(&p, "kernel,launch_id,cycles\nk1,1,100\nk2,2,abc\n").unwrap();
    let e = read_hw_csv(&p).unwrap_err().to_string();
    assert!(e.contains("bad.csv:3:") && e.contains("abc"), "{e}");

    let cases: [(&str, &str, usize); 7] = [
        ("", "empty", 1),
        ("foo,bar\n1,2\n", "unrecognised header", 1),
        ("kernel,launch_id,cycles\nk,x,5\n", "launch_id", 2),
        ("kernel,launch_id,cycles\nk,1\n", "missing cycles", 2),
        ("kernel,launch_id,cycles\nk,1,\"5\n", "unterminated", 2),
        (
            "\"ID\",\"Kernel Name\",\"dram__bytes.sum\"\n\"0\",\"k\",\"1\"\n",
            "cycle metric",
            1,
        ),
        (
            "\"ID\",\"Kernel Name\",\"gpu__cycles_elapsed.max\"\n\"\",\"\",\"cycle\"\n\"0\",\"k\",\"n/a\"\n",
            "not a non-negative number",
            3,
        ),
    ];
    for (text, what, line) in cases {
        let e = parse_hw_csv(text, "in.csv").unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with(&format!("in.csv:{line}:")), "{s}");
        assert!(s.contains(what), "{s}");
    }
    let e = read_hw_csv("/nonexistent/hw.csv").unwrap_err().to_string();
    assert!(e.contains("/nonexistent/hw.csv"));
    // Invalid UTF-8 names the line.
    let p = tmp("latin1.csv");
    std::fs::write(&p, b"kernel,launch_id,cycles\nk\xe9,1,5\n").unwrap();
    let e = read_hw_csv(&p).unwrap_err().to_string();
    assert!(e.contains("latin1.csv:2:"), "{e}");
}
