//! `correlate` reads hardware data as profilers write it (issue 13, point 7): the real H100
//! PCIe measurements (`fixtures/hardware/h100-pcie/simtune.csv`, nanoseconds) and nvprof
//! log (`fixtures/traces/vectoradd-sm61-v4-gtx1080/nvprof.log`), Nsight Systems `nsys
//! stats` CSVs, nvprof GPU traces, Nsight Compute exports with Accel-Sim's cycle metric;
//! kernels matched by name and launch order; malformed files reported by line.

use std::path::PathBuf;

use sassim_report::*;

fn fixture(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(p)
}

fn opts(clock: Option<f64>, sms: Option<u32>) -> HwOptions {
    HwOptions {
        clock_mhz: clock,
        sms,
    }
}

fn sim(names: &[(&str, u64)]) -> RunReport {
    let mut r = RunReport {
        kernels: names
            .iter()
            .enumerate()
            .map(|(i, (n, c))| KernelReport {
                name: n.to_string(),
                launch_uid: i as u32 + 1,
                cycles: *c,
                ..KernelReport::default()
            })
            .collect(),
        ..RunReport::default()
    };
    r.finalize();
    r
}

/// The H100 PCIe measurements: `benchmark` names, `nanoseconds` at the 1755 MHz clock give
/// the measurers' own `cycles_at_1755mhz` column.
#[test]
fn simtune_csv_nanoseconds_at_the_clock() {
    let p = fixture("hardware/h100-pcie/simtune.csv");
    let d = read_hw(&p, &opts(Some(1755.0), None)).unwrap();
    assert_eq!(d.format, "simple CSV");
    assert_eq!(d.kernels.len(), 615);
    assert_eq!(d.kernels.iter().filter(|k| k.name == "emptykernel").count(), 561);
    assert_eq!(d.kernels.iter().filter(|k| k.name == "ffmakernel").count(), 54);
    // Row 1: emptykernel,16,8,1365.333,2396.16
    assert_eq!(d.kernels[0].name, "emptykernel");
    assert!(
        (d.kernels[0].cycles - 2396.16).abs() < 0.01,
        "{}",
        d.kernels[0].cycles
    );
    // Every row: nanoseconds × 1.755 = the file's cycles_at_1755mhz (2 decimals).
    let text = std::fs::read_to_string(&p).unwrap();
    for (k, line) in d.kernels.iter().zip(text.lines().skip(1)) {
        let want: f64 = line.rsplit(',').next().unwrap().parse().unwrap();
        assert!((k.cycles - want).abs() < 0.006, "{line}: {}", k.cycles);
    }
    assert!(d.notes.iter().any(|n| n.contains("1755")));
    // Times need a clock.
    let e = read_hw(&p, &HwOptions::default()).unwrap_err().to_string();
    assert!(e.contains("simtune.csv:2:") && e.contains("--clock-mhz"), "{e}");
}

/// nvprof's log of a GTX 1080 (20 SMs): `elapsed_cycles_sm` is summed over the SMs.
#[test]
fn nvprof_log_elapsed_cycles_per_sm() {
    let p = fixture("traces/vectoradd-sm61-v4-gtx1080/nvprof.log");
    let d = read_hw(&p, &opts(None, Some(20))).unwrap();
    assert_eq!(d.format, "nvprof CSV (metrics/events)");
    assert_eq!(d.kernels.len(), 1);
    assert_eq!(d.kernels[0].name, "_Z6vecAddIfEvPT_S1_S1_i");
    assert_eq!(d.kernels[0].cycles, 89355.0 / 20.0);
    let e = read_hw(&p, &HwOptions::default()).unwrap_err().to_string();
    assert!(e.contains("nvprof.log:5:") && e.contains("--hw-sms"), "{e}");
    // Matched with the simulated launch by name.
    let c = correlate(&sim(&[("_Z6vecAddIfEvPT_S1_S1_i", 4000)]), &d.kernels);
    assert_eq!(c.kernels.len(), 1);
    assert_eq!(c.kernels[0].matched_by, "order+name");
}

/// `nsys stats --report cuda_gpu_trace -f csv`: memory copies left out, kernels matched by
/// name in launch order (the second `step` measurement goes with the second `step` launch).
#[test]
fn nsys_gpu_trace() {
    let csv = "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),\
DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n\
100,2000,5,,,,,,,,,,0.004,2000.0,Pageable,Device,NVIDIA H100 PCIe (0),1,7,[CUDA memcpy Host-to-Device]\n\
5000,1000,7,4,1,1,256,1,1,16,0.000,0.000,,,,,NVIDIA H100 PCIe (0),1,7,\"step(float *, int)\"\n\
7000,1600,9,1,1,1,32,1,1,8,0.000,0.000,,,,,NVIDIA H100 PCIe (0),1,7,init(float *)\n\
9000,3000,11,4,1,1,256,1,1,16,0.000,0.000,,,,,NVIDIA H100 PCIe (0),1,7,\"step(float *, int)\"\n";
    let d = parse_hw(csv, "trace.csv", &opts(Some(1000.0), None)).unwrap();
    assert_eq!(d.format, "nsys stats cuda_gpu_trace");
    let got: Vec<(&str, f64)> = d.kernels.iter().map(|k| (k.name.as_str(), k.cycles)).collect();
    assert_eq!(
        got,
        vec![
            ("step(float *, int)", 1000.0),
            ("init(float *)", 1600.0),
            ("step(float *, int)", 3000.0)
        ]
    );
    let c = correlate(
        &sim(&[("_Z4stepPfi", 1100), ("_Z4initPf", 1600), ("_Z4stepPfi", 2700)]),
        &d.kernels,
    );
    let pairs: Vec<(u32, f64)> = c.kernels.iter().map(|k| (k.launch_uid, k.hw_cycles)).collect();
    assert_eq!(pairs, vec![(1, 1000.0), (2, 1600.0), (3, 3000.0)]);
    // APEs 10 %, 0 %, 10 %: MAPE 6.67 %; per kernel: step 10 %, init 0 %.
    assert!((c.metrics.mape.unwrap() - 20.0 / 3.0).abs() < 1e-9);
    let by: Vec<(&str, f64)> = c
        .by_kernel
        .iter()
        .map(|(n, m)| (n.as_str(), m.mape.unwrap()))
        .collect();
    assert_eq!(by.len(), 2);
    assert!(by.contains(&("init", 0.0)));
    assert!(by.iter().any(|&(n, m)| n == "step" && (m - 10.0).abs() < 1e-9));
    assert!(render_correlation(&c).contains("kernel step: 2 matched, MAPE 10.00%"));
}

/// `nsys stats --report cuda_gpu_kern_sum` (and the older `gpukernsum`): one row per kernel
/// name; each of its instances gets the average.
#[test]
fn nsys_kernel_summary() {
    let csv = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n\
75.0,3000,2,1500.0,1500.0,1000,2000,707.1,\"step(float *, int)\"\n\
25.0,1000,1,1000.0,1000.0,1000,1000,0.0,init(float *)\n";
    let d = parse_hw(csv, "sum.csv", &opts(Some(2000.0), None)).unwrap();
    assert_eq!(d.format, "nsys stats cuda_gpu_kern_sum");
    let got: Vec<(&str, f64)> = d.kernels.iter().map(|k| (k.name.as_str(), k.cycles)).collect();
    assert_eq!(
        got,
        vec![
            ("step(float *, int)", 3000.0),
            ("step(float *, int)", 3000.0),
            ("init(float *)", 2000.0)
        ]
    );
    assert!(d.notes.iter().any(|n| n.contains("average")));
    let old = "Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,StdDev,Name\n\
100.0,500,1,500.0,500,500,0.0,k\n";
    assert_eq!(
        parse_hw(old, "old.csv", &opts(Some(1000.0), None))
            .unwrap()
            .kernels[0]
            .cycles,
        500.0
    );
}

/// nvprof `--print-gpu-trace --csv` (Accel-Sim's cycle collection): the units row gives the
/// unit of `Duration`; memory copies are left out.
#[test]
fn nvprof_gpu_trace_with_units_row() {
    let csv = "==123== NVPROF is profiling process 123, command: ./app\n\
==123== Profiling application: ./app\n\
==123== Profiling result:\n\
\"Start\",\"Duration\",\"Grid X\",\"Grid Y\",\"Grid Z\",\"Block X\",\"Block Y\",\"Block Z\",\"Name\"\n\
ms,us,,,,,,,\n\
1.5,2.500000,,,,,,,\"[CUDA memcpy HtoD]\"\n\
2.0,1.250000,4,1,1,256,1,1,\"_Z6vecAddIfEvPT_S1_S1_i\"\n";
    let d = parse_hw(csv, "gputrace.csv", &opts(Some(1600.0), None)).unwrap();
    assert_eq!(d.format, "nvprof CSV (GPU trace)");
    assert_eq!(d.kernels.len(), 1);
    assert_eq!(d.kernels[0].cycles, 2000.0, "1.25 us at 1600 MHz");
}

/// Nsight Compute raw page with Accel-Sim's `gpc__cycles_elapsed.avg`, and a duration metric
/// turned into cycles at the clock.
#[test]
fn ncu_accelsim_metric_and_duration() {
    let csv = "\"ID\",\"Kernel Name\",\"gpc__cycles_elapsed.avg\",\"sm__cycles_elapsed.sum\"\n\
\"\",\"\",\"cycle\",\"cycle\"\n\
\"0\",\"k\",\"12,345.5\",\"999999\"\n";
    let d = parse_hw(csv, "ncu.csv", &HwOptions::default()).unwrap();
    assert_eq!(d.kernels[0].cycles, 12345.5);
    assert_eq!(d.kernels[0].launch_id, Some(1));
    let csv =
        "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"usecond\"\n\"0\",\"k\",\"2.5\"\n";
    let d = parse_hw(csv, "ncu-t.csv", &opts(Some(1000.0), None)).unwrap();
    assert_eq!(d.kernels[0].cycles, 2500.0);
}

/// Malformed files: the error names the file and the line, says what is wrong, and does
/// not echo the header.
#[test]
fn malformed_files_are_reported_by_line() {
    let header = "alpha,beta,gamma,delta";
    let e = parse_hw(&format!("{header}\n1,2,3,4\n"), "x.csv", &HwOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("x.csv:1: unrecognised header (4 columns)"), "{e}");
    assert!(!e.contains("alpha"), "the header is not echoed: {e}");
    let cases: [(&str, HwOptions, &str, usize); 5] = [
        (
            "Start (ns),Duration (ns),Name\n1,10,k\n2,abc,k\n",
            opts(Some(1000.0), None),
            "duration \"abc\"",
            3,
        ),
        (
            "Time (%),Total Time (ns),Instances,Avg (ns),Name\n1,1,1.5,1,k\n",
            opts(Some(1000.0), None),
            "Instances",
            2,
        ),
        (
            "Time (%),Instances,Name\n1,1,k\n",
            opts(Some(1000.0), None),
            "Avg (ns)",
            1,
        ),
        (
            "benchmark,threads,blocks,nanoseconds\nempty,32,1,NaN\n",
            opts(Some(1755.0), None),
            "not a non-negative number",
            2,
        ),
        (
            "\"Device\",\"Kernel\",\"elapsed_cycles_sm\"\n\"d\",\"k\"\n",
            opts(None, Some(20)),
            "missing cycle column",
            2,
        ),
    ];
    for (text, o, what, line) in cases {
        let e = parse_hw(text, "in.csv", &o).unwrap_err().to_string();
        assert!(e.starts_with(&format!("in.csv:{line}:")), "{e}");
        assert!(e.contains(what), "{e}");
    }
}

/// The hardware data in the repository are byte-identical copies of the measurements
/// (fixtures/hardware/README.md gives their SHA-256; here their size and FNV-1a hash).
#[test]
fn hardware_fixtures_are_the_measured_bytes() {
    let fnv = |b: &[u8]| {
        b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
            (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    for (f, len, hash) in [
        ("hardware/h100-pcie/simtune.csv", 23573, 0x690b_3943_5068_300c_u64),
        ("hardware/h100-pcie/MEASUREMENTS.md", 2353, 0x33b1_5b46_34a3_f581),
    ] {
        let b = std::fs::read(fixture(f)).unwrap();
        assert_eq!((b.len(), fnv(&b)), (len, hash), "{f} changed");
    }
}
