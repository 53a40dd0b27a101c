//! Every numeric key of every preset does something (issue 13, point 1): changed to another
//! valid value, it changes some statistic of a microbenchmark suited to it, or it is one of
//! the informational keys (`sassim_config::INFORMATIONAL`), which `--set` refuses.
//!
//! The microbenchmarks, tried in order until one shows a difference:
//! * `core`: a CTA of eight warps running a loop of ~300 instructions twice: FP32, INT,
//!   FP16, SFU, FP64 and uniform instructions, bank conflicts and reuse, clock reads, yield,
//!   long stalls, DEPBAR, ERRBAR, constants through both constant caches, shared loads,
//!   stores and atomics with bank conflicts, global loads, stores, atomics and reductions;
//! * `mem`: four CTAs streaming 256 KB of global memory through L1, L2 and DRAM;
//! * `launch`: many small CTAs of a kernel that uses many registers and shared memory
//!   (occupancy limits, kernel launch and CTA dispatch);
//! * `tensor`: a trace (no functional execution) of every tensor-core opcode and shape in
//!   the presets' latency tables;
//! * `stream`: a CTA per SM streaming from DRAM (the memory system's queues fill);
//! * `inferred`: `core` with control bits inferred for the preset (`[compiler]` keys);
//! * `scatter`: a CTA per SM reading and writing lines scattered over 32 MB (DRAM row
//!   conflicts, write recovery and turnarounds; a footprint beyond a reduced L2);
//! * `bank`: four warps reading and writing 384 rows of one DRAM bank and 256 other lines
//!   of its channel, chosen through the preset's address mapping (row conflicts on every
//!   preset, however many banks; dirty evictions from a reduced L2; a burst of returns).
//!
//! A statistic is anything in the kernel run: cycles, issue and stall counters, cache,
//! DRAM and interconnect counters, the per-warp issue logs.

mod common;
use sassim_config::{informational, GpuConfig};
use sassim_gpu::{Gpu, RunOptions};
use sassim_sass::microbench::parse;

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

const PRESETS: [&str; 10] = [
    "rtx-a6000",
    "rtx-3080",
    "rtx-3080ti",
    "rtx-3090",
    "rtx-2070s",
    "rtx-2080ti",
    "t4",
    "rtx-5070ti",
    "h100",
    "h100-pcie",
];

/// Keys that act outside the kernel statistics, with the test that shows their effect.
const TESTED_ELSEWHERE: [(&str, &str); 5] = [
    (
        "gpu.memory_mb",
        "crates/cudart/src/api/memory.rs: device_memory_is_the_presets_memory_mb (cudaMalloc's limit)",
    ),
    (
        "mem_pipeline.dsm_extra",
        "crates/cli/tests/exec.rs: distributed_shared_memory_is_timed_as_remote (acts only in cluster kernels, which the microbenchmarks do not launch)",
    ),
    (
        "mem_pipeline.tma_setup",
        "crates/cli/tests/exec.rs: bulk_copy_chain_reproduces_luo (acts only on TMA and bulk copies, which the microbenchmarks do not issue)",
    ),
    (
        "issue.warpgroup_depbar_effect_cycles",
        "crates/cli/tests/exec.rs: warpgroup_depbar_holds_the_next_instruction (acts only on Hopper's WARPGROUP.DEPBAR, which the microbenchmarks do not issue)",
    ),
    (
        "gpu.shared_mem_per_sm_max_kb",
        "crates/cudart/src/api/device.rs: shared_memory_per_sm_is_the_presets (cudaDeviceProp, occupancy API)",
    ),
];

/// The presets swept by default (sm_75, sm_86); `SASSIM_KEYS_PRESETS=all` sweeps every
/// preset (docs/presets.md gives the last such run).
const DEFAULT_PRESETS: [&str; 2] = ["t4", "rtx-a6000"];

/// The `core` microbenchmark: a loop run twice of 40 blocks of FP32/INT/FP16/uniform
/// instructions (bank conflicts, reuse in slot 1, yield), every sixth block a section of
/// SFU and FP64 pairs, clock reads, immediate and indexed LDC, shared atomics on one word
/// and a wide shared load behind them, global loads, stores, atomics on one address and
/// reductions, LDGSTS, DEPBAR, a long stall; per iteration 16 fixed-latency reads of
/// distinct constant lines, 40 LDCs of distinct lines and a BSSY/BSYNC pair.
fn core_src() -> String {
    let mut s = String::from(
        ".grid 1\n.block 256\n\
         .init R2 = 1.0\n.init R3 = 2.0\n.init R5 = 1\n.init R7 = 3\n.init R1 = 2\n\
         .init R8 = 0x10000\n.init R9 = 0\n.init R0 = lane\n.init UR4 = 7\n\
         .global.fill 0x10000 = u32 32768 1\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R6, R0, 0x10, RZ ;\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R10, R0, 0x80, RZ ;\n\
         [B------:R-:W-:-:S06] IADD3 R10, R10, 0x10000, RZ ;\n\
         [B------:R-:W-:-:S02] MOV R11, RZ ;\n\
         loop:\n",
    );
    for i in 0..40 {
        let r = 20 + (i % 8) * 2;
        s += &format!(
            "[B------:R-:W-:-:S01] FFMA R{r}, R2, R3.reuse, R{r} ;\n\
             [B------:R-:W-:-:S02] FMUL R{}, R2, R3 ;\n\
             [B------:R-:W-:-:S01] FADD R{}, R3, c[0x0][0x170] ;\n\
             [B------:R-:W-:-:S01] IMAD R{}, R5, R7, R5 ;\n\
             [B------:R-:W-:-:S04] HADD2 R{}, R2, R3 ;\n\
             [B------:R-:W-:Y:S01] IADD3 R{}, R5, R7, RZ ;\n\
             [B------:R-:W-:-:S02] UIADD3 UR5, UR4, 0x1, URZ ;\n\
             [B------:R-:W-:-:S01] UIADD3 UR6, UR5, 0x1, URZ ;\n\
             [B------:R-:W-:-:S01] FADD R{}, R{}, R2 ;\n",
            r + 1,
            r + 17,
            r + 18,
            r + 33,
            r + 34,
            r + 50,
            r + 33,
        );
        if i % 6 == 0 {
            s += "[B------:R1:W2:-:S02] LDC R68, c[0x0][0x180] ;\n\
                  [B-1----:R-:W-:-:S01] NOP ;\n\
                  [B------:R-:W0:-:S01] MUFU.RCP R60, R3 ;\n\
                  [B------:R-:W0:-:S01] MUFU.RCP R61, R2 ;\n\
                  [B------:R-:W1:-:S01] DADD R62, R2, R2 ;\n\
                  [B------:R-:W1:-:S02] DADD R76, R2, R2 ;\n\
                  [B------:R-:W-:-:S01] CS2R R64, SR_CLOCKLO ;\n\
                  [B------:R-:W-:-:S01] CS2R R66, SR_CLOCKLO ;\n\
                  [B------:R2:W2:-:S02] LDC R69, c[0x0][R11] ;\n\
                  [B--2---:R-:W-:-:S01] MOV R11, RZ ;\n\
                  [B------:R-:W3:-:S02] ATOMS.ADD R71, [RZ], R5 ;\n\
                  [B------:R-:W3:-:S02] LDS R70, [RZ] ;\n\
                  [B------:R-:W3:-:S02] LDS.128 R80, [R6] ;\n\
                  [B------:R-:W-:-:S02] STS [R6+0x400], R5 ;\n\
                  [B------:R-:W4:-:S02] LDG.E R72, [R10.64] ;\n\
                  [B------:R-:W-:-:S02] STG.E [R10.64+0x4], R5 ;\n\
                  [B------:R-:W5:-:S02] ATOMG.E.ADD.STRONG.GPU R73, [R8.64], R5 ;\n\
                  [B------:R-:W5:-:S02] LDG.E R75, [R8.64] ;\n\
                  [B------:R-:W-:-:S02] RED.E.ADD.STRONG.GPU [R10.64+0xc], R5 ;\n\
                  [B------:R-:W4:-:S02] LDGSTS.E [R6+0x800], [R10.64+0x10] ;\n\
                  [B------:R-:W-:-:S04] DEPBAR.LE SB4, 0x0 ;\n\
                  [B------:R-:W-:-:S13] NOP ;\n\
                  [B012345:R-:W-:-:S01] FADD R74, R60, R62 ;\n";
        }
    }
    for k in 0..16 {
        s += &format!(
            "[B------:R-:W-:-:S01] FADD R92, R3, c[0x0][{:#x}] ;\n",
            0x100 + 0x40 * k
        );
    }
    for k in 0..40 {
        s += &format!(
            "[B------:R-:W3:-:S01] LDC R93, c[0x0][{:#x}] ;\n",
            0x1000 + 0x40 * k
        );
    }
    // Lines two apart, so that they share a set when the caches have two: two fixed-latency
    // constant lines (fit in a 2-way set), five LDC lines (fit in an 8-way set).
    for _ in 0..4 {
        s += "[B------:R-:W-:-:S01] FADD R94, R3, c[0x0][0x100] ;\n\
              [B------:R-:W-:-:S01] FADD R95, R3, c[0x0][0x180] ;\n";
        for k in 0..5 {
            s += &format!(
                "[B------:R-:W3:-:S01] LDC R96, c[0x0][{:#x}] ;\n",
                0x1000 + 0x80 * k
            );
        }
    }
    s += "[B---3--:R-:W-:-:S01] BSSY B0, join ;\n\
          [B------:R-:W-:-:S01] FADD R90, R2, R3 ;\n\
          join:\n\
          [B------:R-:W-:-:S05] BSYNC B0 ;\n\
          [B------:R-:W-:-:S04] IADD3 R1, R1, -0x1, RZ ;\n\
          [B------:R-:W-:-:S05] ISETP.NE.AND P0, PT, R1, RZ, PT ;\n\
          [B------:R-:W-:-:S05] @P0 BRA loop ;\n\
          [B------:R-:W-:Y:S00] ERRBAR ;\n\
          [B------:R-:W-:-:S05] EXIT ;\n";
    s
}

/// The `mem` microbenchmark (`common::mem_microbench`), ending with a store of its sum.
fn mem_src() -> String {
    common::mem_microbench(true)
}

/// The `launch` microbenchmark: 8 CTAs per SM of 96 threads (3 warps) using 122 registers
/// (128 allocated: 5 CTAs per SM) and 10 KB of shared memory each.
fn launch_src(sms: u32) -> String {
    format!(
        ".grid {}\n.block 96\n.init R1 = 1\n\
         [B------:R-:W-:-:S04] IADD3 R119, R1, R1, RZ ;\n\
         [B------:R-:W-:-:S04] IADD3 R3, R119, R1, RZ ;\n\
         [B------:R-:W-:-:S05] EXIT ;\n",
        8 * sms
    )
}

/// The `stream` microbenchmark: a CTA of eight warps per SM, each thread loading 4 lines
/// 64 KB apart: DRAM-bound, the memory queues fill.
fn stream_src(sms: u32) -> String {
    let mut s = format!(
        ".grid {sms}\n.block 256\n.init R3 = 0\n.global.fill 0x1000000 = u32 {} 0\n\
         [B------:R-:W-:-:S01] S2R R0, SR_TID.X ;\n\
         [B------:R-:W-:-:S01] S2R R1, SR_CTAID.X ;\n\
         [B------:R-:W-:-:S04] IMAD R0, R1, 0x100, R0 ;\n\
         [B------:R-:W-:-:S04] IMAD.SHL.U32 R2, R0, 0x80, RZ ;\n\
         [B------:R-:W-:-:S06] IADD3 R2, R2, 0x1000000, RZ ;\n",
        // Every thread's 128-byte stripe and the three loads 64 KB apart beyond it.
        (sms * 256 * 0x80 + 0x30000) / 4
    );
    for i in 0..4 {
        s += &format!(
            "[B------:R-:W0:-:S02] LDG.E R{}, [R2.64+{:#x}] ;\n",
            20 + i,
            i * 0x10000
        );
    }
    s += "[B0-----:R-:W-:-:S05] EXIT ;\n";
    s
}

/// The `scatter` benchmark: a CTA per SM whose threads read, write and read again lines
/// scattered over 32 MB (a multiplicative hash of the thread index): row conflicts, write
/// recoveries and read/write turnarounds in the DRAM banks, and a footprint larger than a
/// reduced L2, read again from the L2 at the end (`.STRONG.GPU` bypasses the L1).
fn scatter_src(sms: u32) -> String {
    format!(
        ".grid {sms}\n.block 256\n.init R3 = 0\n.init R5 = 0\n.global.fill 0x4000000 = u32 8421376 0\n\
         [B------:R-:W-:-:S01] S2R R0, SR_TID.X ;\n\
         [B------:R-:W-:-:S01] S2R R1, SR_CTAID.X ;\n\
         [B------:R-:W-:-:S04] IMAD R0, R1, 0x100, R0 ;\n\
         [B------:R-:W-:-:S04] IMAD R2, R0, -0x61c88647, RZ ;\n\
         [B------:R-:W-:-:S04] LOP3.LUT R2, R2, 0x1ffff80, RZ, 0xc0, !PT ;\n\
         [B------:R-:W-:-:S04] IADD3 R2, R2, 0x4000000, RZ ;\n\
         [B------:R-:W-:-:S04] LOP3.LUT R4, R2, 0x1555500, RZ, 0x3c, !PT ;\n\
         [B------:R-:W0:-:S02] LDG.E R20, [R2.64] ;\n\
         [B0-----:R-:W-:-:S02] STG.E [R2.64], R20 ;\n\
         [B------:R-:W1:-:S02] LDG.E R21, [R4.64] ;\n\
         [B-1----:R-:W-:-:S02] STG.E [R4.64+0x4], R21 ;\n\
         [B------:R-:W2:-:S02] LDG.E R22, [R2.64+0x40] ;\n\
         [B--2---:R-:W3:-:S02] LDG.E.STRONG.GPU R23, [R2.64] ;\n\
         [B---3--:R-:W-:-:S05] EXIT ;\n"
    )
}

/// Warps of the `bank` microbenchmark, and the lines each reads of one DRAM bank (one per
/// row) and of the bank's channel (any bank).
const BANK_WARPS: usize = 4;
const BANK_ROWS: usize = 96;
const CHANNEL_LINES: usize = 64;

/// The `bank` microbenchmark: four warps whose lanes read and write lines of one DRAM bank
/// of one channel, each lane its own row (addresses chosen through the preset's address
/// mapping, `sassim_memory::AddressMapping`): every access a row conflict
/// (activate-to-precharge, activate-to-activate, read-to-precharge), and, behind a reduced
/// L2 (the `dram` companion), dirty lines evicted between reads of the same bank (write
/// recovery, turnarounds). Then lines of the same channel spread over its banks, read at once
/// (a burst of row hits and misses that fills the return queue). 640 lines of one channel:
/// more than one set of every slice of a partition holds on every preset (192 lines on
/// `rtx-5070ti`), so a reduced L2 evicts.
fn bank_src(cfg: &GpuConfig) -> String {
    let map = sassim_memory::AddressMapping::new(&sassim_gpu::memsys::memory_config(cfg));
    let line = u64::from(cfg.l2.line_bytes.max(32));
    let data: u64 = 0x4000_0000;
    let target = map.locate(data);
    // Lines of the target bank, one per row; and lines of the target channel (any bank).
    let (want_bank, want_chan) = (BANK_WARPS * BANK_ROWS, BANK_WARPS * CHANNEL_LINES);
    let mut same_bank: Vec<u64> = Vec::new();
    let mut rows = std::collections::BTreeSet::new();
    let mut same_channel: Vec<u64> = Vec::new();
    let mut k = 0u64;
    while (same_bank.len() < want_bank || same_channel.len() < want_chan) && k < (1 << 23) {
        let a = data + k * line;
        let l = map.locate(a);
        if l.channel == target.channel {
            if l.bank == target.bank && same_bank.len() < want_bank && rows.insert(l.row) {
                same_bank.push(a);
            } else if l.bank != target.bank && same_channel.len() < want_chan && k.is_multiple_of(3) {
                same_channel.push(a);
            }
        }
        k += 1;
    }
    let table = |addrs: &[u64]| {
        addrs
            .iter()
            .map(|a| format!("{a:#x}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = format!(
        ".grid 1\n.block {}\n.init R0 = lane\n.init R20 = warp\n.init R21 = 7\n",
        32 * BANK_WARPS
    );
    // Warp w's tables A, B, C (the bank's rows) and D, E (the channel's lines) at
    // 0x100000 + 0x800 w + 0x100 t.
    for w in 0..BANK_WARPS {
        let bank = same_bank.chunks(BANK_ROWS).nth(w).unwrap_or_default();
        let chan = same_channel.chunks(CHANNEL_LINES).nth(w).unwrap_or_default();
        for (t, chunk) in bank.chunks(32).chain(chan.chunks(32)).enumerate() {
            s += &format!(
                ".global {:#x} = u64 [{}]\n",
                0x10_0000 + 0x800 * w + 0x100 * t,
                table(chunk)
            );
        }
    }
    for a in same_bank.iter().chain(&same_channel) {
        s += &format!(".global {a:#x} = u32 [1]\n");
    }
    s += "[B------:R-:W-:-:S04] IMAD.SHL.U32 R1, R0, 0x8, RZ ;\n\
          [B------:R-:W-:-:S04] IMAD R1, R20, 0x800, R1 ;\n\
          [B------:R-:W-:-:S04] IADD3 R4, R1, 0x100000, RZ ;\n\
          [B------:R-:W-:-:S02] MOV R5, RZ ;\n\
          [B------:R-:W0:-:S04] LDG.E.64 R2, [R4.64] ;\n\
          [B------:R-:W1:-:S04] LDG.E.64 R6, [R4.64+0x100] ;\n\
          [B------:R-:W2:-:S04] LDG.E.64 R8, [R4.64+0x200] ;\n\
          [B------:R-:W3:-:S04] LDG.E.64 R12, [R4.64+0x300] ;\n\
          [B------:R-:W3:-:S02] LDG.E.64 R14, [R4.64+0x400] ;\n\
          [B0-----:R-:W4:-:S02] LDG.E R10, [R2.64] ;\n\
          [B-1----:R-:W-:-:S04] STG.E [R6.64], R21 ;\n\
          [B--2---:R-:W5:-:S02] LDG.E R11, [R8.64] ;\n\
          [B----4-:R-:W-:-:S04] STG.E [R2.64], R10 ;\n\
          [B-----5:R-:W-:-:S04] STG.E [R8.64], R11 ;\n\
          [B------:R-:W0:-:S02] LDG.E R16, [R6.64] ;\n\
          [B0-----:R-:W-:-:S04] STG.E [R6.64], R16 ;\n\
          [B---3--:R-:W1:-:S04] LDG.E R17, [R12.64] ;\n\
          [B------:R-:W1:-:S02] LDG.E R18, [R14.64] ;\n\
          [B------:R-:W2:-:S02] LDG.E R19, [R2.64] ;\n\
          [B-12---:R-:W-:-:S05] EXIT ;\n";
    s
}

/// A fingerprint of everything a kernel run reports.
fn run_mb(cfg: &GpuConfig, src: &str, shared: u32) -> String {
    run_mb_with(cfg, src, shared, false)
}

/// As [`run_mb`]; `infer`: with control bits inferred for `cfg` instead of the listing's
/// (`--control-bits infer`: the `[compiler]` keys act there).
fn run_mb_with(cfg: &GpuConfig, src: &str, shared: u32, infer: bool) -> String {
    let mut mb = parse(src, "keys.sass").expect("microbenchmark");
    let mut gpu = Gpu::new(cfg.clone());
    if infer {
        mb.kernel = sassim_gpu::ctlbits::with_inferred_control_bits(&mb.kernel, cfg, &gpu.core);
    }
    let opts = RunOptions {
        record: true,
        shared_per_cta: shared,
        ipc_sample_interval: 100,
        deadlock_cycles: 20_000,
        max_cycles: 300_000,
        ..RunOptions::default()
    };
    match sassim_gpu::microbench::run_parsed(&mut gpu, &mb, shared, &opts) {
        Ok(r) => format!(
            "{} {} {:?} {:?} {:?} {:?}",
            r.cycles, r.bare_cycles, r.stats, r.mem, r.logs, r.ipc_timeline
        ),
        Err(e) => format!("error: {e}"),
    }
}

/// The `tensor` benchmark: a one-warp trace executing every tensor opcode and shape, and an
/// opcode no table knows.
fn run_tensor(cfg: &GpuConfig) -> String {
    let mut ops: Vec<String> = [
        "HMMA.16816.F32",
        "HMMA.16816.F16",
        "HMMA.1688.F32",
        "HMMA.884.F32",
        "IMMA.16832.S8.S8",
        "IMMA.8816.S8.S8",
        "DMMA.884",
        "BMMA.88128.AND.POPC",
        "HGMMA.64x64x16.F32",
        "IGMMA.64x64x32.S8.S8",
        "QGMMA.64x64x32.F32.E4M3.E4M3",
        // No opcode table knows it: the unknown-opcode class applies.
        "FROBNICATE",
    ]
    .iter()
    .map(|o| o.to_string())
    .collect();
    // And one instruction per row of the preset's latency table, with modifiers that no
    // earlier row matches (the first matching row applies).
    let rows = &cfg.units.tensor.latency_table;
    // A `sparse` row matches only 2:4-sparse MMAs (`.SP`), the others only dense ones.
    let matches = |r: &sassim_config::TensorLatency, base: &str, mods: &[&str], sparse: bool| {
        let has = |w: &str| w == "*" || mods.iter().any(|m| m.eq_ignore_ascii_case(w));
        r.opcode.eq_ignore_ascii_case(base) && has(&r.shape) && has(&r.acc_type) && r.sparse == sparse
    };
    for (i, r) in rows.iter().enumerate() {
        // Warpgroup MMAs have MxNxK shapes; at N = 8 both the interval floor and the MAC rate
        // decide it.
        let shape = match r.shape.as_str() {
            "*" if r.opcode.ends_with("GMMA") => "64x8x16",
            "*" => "16816",
            s => s,
        };
        let accs: Vec<&str> = if r.acc_type == "*" {
            vec!["F16", "S8", "F64", "AND", "F32", "S4", "U4", "TF32"]
        } else {
            vec![r.acc_type.as_str()]
        };
        let sp = if r.sparse { ".SP" } else { "" };
        let op = accs.iter().find_map(|acc| {
            let mods = [shape, acc];
            let first = rows.iter().position(|x| matches(x, &r.opcode, &mods, r.sparse));
            (first == Some(i)).then(|| format!("{}{sp}.{shape}.{acc}", r.opcode))
        });
        ops.extend(op);
    }
    let mut body = String::new();
    let mut pc = 0u64;
    let (mut prev, mut prev_indep) = (2, 2);
    for (i, op) in ops.iter().enumerate() {
        // An independent instruction of the same kind right after, then both results feed
        // the next pair: the first (the latency) and the independent one (which starts an
        // initiation interval after the first: without a reader, the interval of a
        // variable-latency MMA would only show in the last pair).
        // Registers R4..R251, reused every 31 pairs (the rows of a preset's table plus the
        // fixed opcodes exceed 31 pairs; a reused register was written long before).
        let d = 4 + (8 * i) % 248;
        body += &format!("{pc:04x} ffffffff 1 R{d} {op} 2 R{prev} R{prev_indep} 0 \n");
        body += &format!("{:04x} ffffffff 1 R{} {op} 2 R2 R2 0 \n", pc + 16, d + 4);
        (prev, prev_indep) = (d, d + 4);
        pc += 32;
    }
    body += &format!("{pc:04x} ffffffff 0 EXIT 0 0 \n");
    let trace = format!(
        "-kernel name = tensor\n-kernel id = 1\n-grid dim = (1,1,1)\n-block dim = (32,1,1)\n\
         -shmem = 0\n-nregs = 64\n-binary version = 90\n-cuda stream id = 0\n\
         -shmem base_addr = 0x00007f0000000000\n-local mem base_addr = 0x00007f1000000000\n\
         -nvbit version = 1.5.5\n-accelsim tracer version = 4\n\n\
         #traces format = threadblock_x threadblock_y threadblock_z warpid_tb PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]\n\n\
         #BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\ninsts = {}\n{body}\n#END_TB\n",
        2 * ops.len() + 1
    );
    let dir = scratch("keys");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(format!("{}-kernel-1.traceg", cfg.gpu.name));
    std::fs::write(&p, trace).expect("trace");
    let mut gpu = Gpu::new(cfg.clone());
    let opts = RunOptions {
        record: true,
        ipc_sample_interval: 0,
        ..RunOptions::default()
    };
    match sassim_gpu::trace_exec::run_trace_kernel(&mut gpu, &p, &[], &opts) {
        Ok(r) => format!("{} {:?} {:?}", r.run.cycles, r.run.stats, r.run.logs),
        Err(e) => format!("error: {e}"),
    }
}

/// Fingerprints of the benchmarks, computed lazily: `i` = 0 core, 1 mem, 2 launch, 3 tensor,
/// 4 stream, 5 core with inferred control bits, 6 scatter, 7 bank.
struct Battery {
    cfg: GpuConfig,
    /// The `bank` benchmark's source, made for the preset's own address mapping (the same
    /// program for every candidate value).
    bank: std::rc::Rc<str>,
    done: [Option<String>; BENCHMARKS],
}

const BENCHMARKS: usize = 8;

impl Battery {
    fn new(cfg: GpuConfig, bank: &std::rc::Rc<str>) -> Self {
        Battery {
            cfg,
            bank: bank.clone(),
            done: Default::default(),
        }
    }
    fn get(&mut self, i: usize) -> &str {
        if self.done[i].is_none() {
            let c = &self.cfg;
            self.done[i] = Some(match i {
                0 => run_mb(c, &core_src(), 0),
                1 => run_mb(c, &mem_src(), 0),
                2 => run_mb(c, &launch_src(c.gpu.num_sms), 10 * 1024),
                3 => run_tensor(c),
                4 => run_mb(c, &stream_src(c.gpu.num_sms), 0),
                5 => run_mb_with(c, &core_src(), 0, true),
                6 => run_mb(c, &scatter_src(c.gpu.num_sms), 0),
                _ => run_mb(c, &self.bank, 0),
            });
        }
        self.done[i].as_deref().unwrap_or_default()
    }
}

/// Numeric leaves of a TOML value: (dotted key, value).
fn numeric_keys(v: &toml::Value, prefix: &str, out: &mut Vec<(String, toml::Value)>) {
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                numeric_keys(x, &p, out);
            }
        }
        toml::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                numeric_keys(x, &format!("{prefix}.{i}"), out);
            }
        }
        toml::Value::Integer(_) | toml::Value::Float(_) => out.push((prefix.to_string(), v.clone())),
        _ => {}
    }
}

/// Settings under which a key matters, applied to the baseline and the changed
/// configuration alike (e.g. a scheduler's option under that scheduler).
fn companions(key: &str, base: &GpuConfig) -> Vec<String> {
    let segs: Vec<&str> = key.split('.').collect();
    let line_assoc = |line: u32, assoc: u32| line * assoc;
    match segs.as_slice() {
        ["issue", "two_level_active_warps"] => vec!["issue.scheduler=two_level".into()],
        ["issue", "scoreboard_max_consumers"] => vec!["issue.dependence=scoreboard".into()],
        ["issue", "unknown_opcode_latency"] => vec!["issue.unknown_opcode_kind=fixed".into()],
        // Latencies show in issue times when scoreboards, not the compiler's stall counts,
        // keep dependent instructions apart.
        ["units", _, "latency"] | ["result_queue", "var_latency_consumer_extra"] => {
            vec!["issue.dependence=scoreboard".into()]
        }
        ["units", u, "initiation_interval"] => vec![format!("units.{u}.shared_by_sm=true")],
        ["launch", "sm_cta_queue"] => vec!["launch.cta_completion_latency=100".into()],
        // The latency-tolerant register file's parameters act when it is the organisation.
        ["regfile", "ltrf", _] => vec!["regfile.organisation=ltrf".into()],
        // DRAM data waits in the return queue when the L2 cannot send its fills on: a small
        // L2 (misses) with a one-entry queue towards the interconnect.
        ["dram", "return_queue_entries"] => {
            let l = &base.l2;
            let kb = l.partitions * l.sub_partitions_per_partition * l.line_bytes * l.assoc / 1024;
            vec![format!("l2.size_kb={kb}"), "l2.queue_l2_to_icnt=1".into()]
        }
        // DRAM writes, turnarounds and queues need dirty lines evicted from a small L2.
        ["dram", ..]
        | ["l2", "queue_dram_to_l2" | "queue_l2_to_dram" | "queue_l2_to_icnt" | "queue_icnt_to_l2"]
        | ["icnt", ..] => {
            let l = &base.l2;
            let kb = l.partitions * l.sub_partitions_per_partition * l.line_bytes * l.assoc / 1024;
            vec![format!("l2.size_kb={kb}")]
        }
        // Associativity matters when the code (77 lines) does not fit: in 64 lines an LRU
        // cache of few sets keeps nothing of a loop, a direct-mapped one keeps some lines.
        // (About 64 lines: a whole number of sets of the preset's associativity.)
        ["frontend", "l0i_assoc"] => {
            let f = &base.frontend;
            vec![format!(
                "frontend.l0i_size_bytes={}",
                f.l0i_line_bytes * f.l0i_assoc * (64 / f.l0i_assoc).max(1)
            )]
        }
        ["frontend", "l1i_assoc"] => vec![
            format!(
                "frontend.l1i_size_bytes={}",
                base.frontend.l1i_line_bytes
                    * base.frontend.l1i_assoc
                    * (64 / base.frontend.l1i_assoc).max(1)
            ),
            // A small L0 sends its misses to the L1.
            format!(
                "frontend.l0i_size_bytes={}",
                base.frontend.l0i_line_bytes * base.frontend.l0i_assoc
            ),
        ],
        ["const_cache", c @ ("l0_fl" | "l0_vl"), "assoc"] => {
            let g = if *c == "l0_fl" {
                &base.const_cache.l0_fl
            } else {
                &base.const_cache.l0_vl
            };
            vec![format!(
                "const_cache.{c}.size_bytes={}",
                line_assoc(g.line_bytes, g.assoc)
            )]
        }
        ["l2", "assoc"] => {
            let l = &base.l2;
            let kb = l.partitions * l.sub_partitions_per_partition * l.line_bytes * l.assoc / 1024;
            vec![format!("l2.size_kb={kb}")]
        }
        // The carve-out chosen is the smallest option above the default per-CTA limit: with
        // a limit of 1 KB the small options are candidates too.
        ["l1d", "shmem_carveout_options_kb", _] => vec!["l1d.shmem_per_cta_default_kb=1".into()],
        _ => Vec::new(),
    }
}

/// Keys tied to others by the memory hierarchy (L1 and L2 lines and sectors equal, DRAM
/// burst = sector): setting `key` to `v` also sets these.
fn coupled(key: &str, v: &str, base: &GpuConfig) -> Vec<String> {
    let Ok(x) = v.parse::<u32>() else {
        return Vec::new();
    };
    let sector = base.l2.sector_bytes;
    match key {
        "l1d.line_bytes" => vec![format!("l2.line_bytes={x}")],
        "l2.line_bytes" => vec![format!("l1d.line_bytes={x}")],
        "l1d.sector_bytes" | "l2.sector_bytes" => vec![
            format!("l1d.sector_bytes={x}"),
            format!("l2.sector_bytes={x}"),
            format!("dram.burst_length={}", x / base.dram.bus_width_bytes.max(1)),
        ],
        "dram.bus_width_bytes" if x > 0 => vec![format!("dram.burst_length={}", sector / x)],
        "dram.burst_length" if x > 0 => vec![format!("dram.bus_width_bytes={}", sector / x)],
        _ => Vec::new(),
    }
}

/// Values of keys whose valid values are constrained by others (cache geometry: whole sets),
/// tried first: an L2 of one and of two sets per slice; an L1 associativity that divides its
/// lines.
fn shaped_candidates(key: &str, base: &GpuConfig) -> Vec<String> {
    match key {
        "l2.size_kb" => {
            let l = &base.l2;
            let one_set = l.partitions * l.sub_partitions_per_partition * l.line_bytes * l.assoc / 1024;
            vec![one_set.to_string(), (2 * one_set).to_string()]
        }
        "l1d.assoc" => {
            let lines = base.l1d.size_kb * 1024 / base.l1d.line_bytes.max(1);
            [1u32, 2, 4, 8, 16, 32, 64, 128, 256]
                .iter()
                .filter(|&&a| a != base.l1d.assoc && lines.is_multiple_of(a))
                .map(|a| a.to_string())
                .collect()
        }
        _ => Vec::new(),
    }
}

/// Other values to try for a key.
fn candidates(v: &toml::Value) -> Vec<String> {
    match v {
        toml::Value::Integer(i) => {
            let i = *i;
            let mut c = vec![
                i * 2,
                i / 2,
                i + 1,
                i - 1,
                i / 4,
                i / 8,
                i / 64,
                1,
                0,
                i * 32,
                1000,
                100_000,
            ];
            c.retain(|&x| x != i && x >= 0);
            c.dedup();
            c.iter().map(|x| x.to_string()).collect()
        }
        toml::Value::Float(f) => [f * 2.0, f / 2.0, f + 1.0, 0.0, f * 16.0]
            .iter()
            .filter(|&&x| x != *f)
            .map(|x| format!("{x:?}"))
            .collect(),
        _ => Vec::new(),
    }
}

/// The keys of `preset` that neither are informational nor change any benchmark.
fn keys_without_effect(preset: &str) -> Vec<String> {
    let base = GpuConfig::preset(preset).expect("preset");
    let value = toml::Value::try_from(&base).expect("toml");
    let mut keys = Vec::new();
    numeric_keys(&value, "", &mut keys);
    let bank: std::rc::Rc<str> = bank_src(&base).into();
    let mut baseline = Battery::new(base.clone(), &bank);
    let mut bad = Vec::new();
    // SASSIM_KEYS_ONLY=a.b,c.d limits the sweep to those keys and prints what each candidate
    // gave (while developing).
    let only = std::env::var("SASSIM_KEYS_ONLY").ok();
    for (key, v) in keys {
        if only.as_deref().is_some_and(|o| !o.split(',').any(|x| x == key)) {
            continue;
        }
        let debug = only.is_some();
        if let Some((_, test)) = TESTED_ELSEWHERE.iter().find(|(k, _)| *k == key) {
            // (The key acts outside the timing model; `test` shows its effect.)
            let _ = test;
            continue;
        }
        if informational(&key).is_some() {
            let e = base
                .with_overrides(&[format!("{key}={v}")])
                .expect_err("informational keys are refused");
            assert!(e.to_string().contains("informational"), "{preset} {key}: {e}");
            continue;
        }
        let extra = companions(&key, &base);
        let mut own_base = (!extra.is_empty()).then(|| {
            Battery::new(
                base.with_overrides(&extra)
                    .unwrap_or_else(|e| panic!("{preset} {key}: {e}")),
                &bank,
            )
        });
        let mut changed = false;
        'cand: for c in shaped_candidates(&key, &base).into_iter().chain(candidates(&v)) {
            let mut sets = extra.clone();
            sets.push(format!("{key}={c}"));
            sets.extend(coupled(&key, &c, &base));
            let Ok(cfg) = base.with_overrides(&sets) else {
                continue;
            };
            let mut b = Battery::new(cfg, &bank);
            for i in 0..BENCHMARKS {
                let base_fp = match own_base.as_mut() {
                    Some(o) => o.get(i).to_string(),
                    None => baseline.get(i).to_string(),
                };
                assert!(
                    !base_fp.starts_with("error"),
                    "{preset} {key}: benchmark {i}: {base_fp}"
                );
                let got = b.get(i);
                if debug {
                    eprintln!("{preset} {key}={c} bench {i}: {}", &got[..got.len().min(300)]);
                }
                if got.starts_with("error") {
                    // A value the model cannot run with (e.g. too small for a CTA): next.
                    continue 'cand;
                }
                if got != base_fp {
                    changed = true;
                    break 'cand;
                }
            }
        }
        if !changed {
            bad.push(key);
        }
    }
    bad
}

#[test]
fn every_numeric_preset_key_changes_a_statistic_or_is_informational() {
    // Every key is in every preset; by default one preset per architecture generation is
    // swept (each preset's values are its own starting point). SASSIM_KEYS_PRESETS=a,b
    // chooses presets, SASSIM_KEYS_PRESETS=all sweeps all of them (about 4x longer).
    let only = match std::env::var("SASSIM_KEYS_PRESETS") {
        Ok(v) if v == "all" => None,
        Ok(v) => Some(v),
        Err(_) => Some(DEFAULT_PRESETS.join(",")),
    };
    // SASSIM_KEYS_DUMP=DIR writes the microbenchmarks there (to run them by hand).
    if let Ok(d) = std::env::var("SASSIM_KEYS_DUMP") {
        let d = std::path::Path::new(&d);
        std::fs::write(d.join("scatter.sass"), scatter_src(84)).expect("dump");
        std::fs::write(d.join("core.sass"), core_src()).expect("dump");
        std::fs::write(d.join("mem.sass"), mem_src()).expect("dump");
        std::fs::write(d.join("launch.sass"), launch_src(84)).expect("dump");
        let h100 = GpuConfig::preset("h100").expect("preset");
        std::fs::write(d.join("bank-h100.sass"), bank_src(&h100)).expect("dump");
    }
    let presets: Vec<&str> = PRESETS
        .iter()
        .copied()
        .filter(|p| only.as_deref().is_none_or(|o| o.split(',').any(|x| x == *p)))
        .collect();
    let bad: Vec<(String, Vec<String>)> = std::thread::scope(|s| {
        let hs: Vec<_> = presets
            .chunks(presets.len().div_ceil(2).max(1))
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|p| (p.to_string(), keys_without_effect(p)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().expect("thread")).collect()
    });
    // Every key of every preset acts (no known gaps since 2026-11-26, docs/presets.md).
    let unexpected: Vec<_> = bad.into_iter().filter(|(_, k)| !k.is_empty()).collect();
    assert!(unexpected.is_empty(), "keys that change nothing: {unexpected:#?}");
}
