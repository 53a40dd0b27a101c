//! Read-throughput benchmark (not part of `cargo test`):
//!
//! ```text
//! SASSIM_BENCH_MB=4096 cargo bench -p sassim-trace --bench read_throughput
//! ```
//!
//! Generates a synthetic text trace of about `SASSIM_BENCH_MB` MB (default
//! 64) in `SASSIM_BENCH_DIR` (default the system temp dir; kept with `SASSIM_BENCH_KEEP=1`), makes an `.xz`
//! copy (preset `SASSIM_BENCH_XZ`, default 1) and a binary copy (`SASSIM_BENCH_ZSTD_LEVEL`, default 9), then reads
//! each back with `KernelTraceReader` and prints instructions/s, MB/s and the
//! peak RSS (VmHWM, reset before each phase through /proc/self/clear_refs).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use sassim_trace::{convert_with, ConvertOptions, KernelTraceReader};

fn vm_hwm_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn reset_hwm() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Write a synthetic v4-style trace of about `target` bytes. Returns bytes.
fn generate(path: &Path, target: u64) -> u64 {
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path).unwrap());
    let warps = 8u32;
    let iters = 24u32;
    let per_warp = 6 + iters * 8 + 1;
    // about 60 bytes per line
    let blocks = (target / (u64::from(warps * per_warp) * 60)).max(1);
    write!(
        w,
        "-kernel name = _Z5synthPfS_S_i\n-kernel id = 1\n-grid dim = ({blocks},1,1)\n-block dim = (256,1,1)\n\
-shmem = 0\n-nregs = 32\n-binary version = 80\n-cuda stream id = 0\n\
-shmem base_addr = 0x00007f0000000000\n-local mem base_addr = 0x00007e0000000000\n\
-nvbit version = 1.5.5\n-accelsim tracer version = 4\n-enable lineinfo = 0\n\n\
#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]\n\n"
    )
    .unwrap();
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut line = String::with_capacity(512);
    use std::fmt::Write as _;
    for b in 0..blocks {
        writeln!(w, "\n#BEGIN_TB\n\nthread block = {b},0,0\n").unwrap();
        for wp in 0..warps {
            writeln!(w, "warp = {wp}\ninsts = {per_warp}").unwrap();
            let tid = b * 256 + u64::from(wp) * 32;
            w.write_all(
                b"0000 ffffffff 1 R1 IMAD.MOV.U32 2 R255 R255 0 \n0010 ffffffff 1 R6 S2R 0 0 \n\
0020 ffffffff 1 R3 S2R 0 0 \n0030 ffffffff 1 R6 IMAD 2 R6 R3 0 \n0040 ffffffff 0 ISETP.GE.AND 1 R6 0 \n\
0050 ffffffff 0 ULDC.64 0 0 \n",
            )
            .unwrap();
            for i in 0..iters {
                let a = 0x7f1000000000u64 + (tid + u64::from(i) * 8192) * 4;
                let mask = if rnd() % 4 == 0 {
                    rnd() as u32 | 1
                } else {
                    u32::MAX
                };
                line.clear();
                let _ = writeln!(line, "0060 {mask:08x} 1 R4 IMAD.WIDE 2 R6 R7 0 ");
                let _ = writeln!(line, "0070 {mask:08x} 1 R8 LDG.E 1 R4 4 1 0x{a:x} 4 ");
                // a gather with data-dependent deltas
                let _ = write!(
                    line,
                    "0080 {mask:08x} 1 R9 LDG.E 1 R2 4 2 0x{:x} ",
                    a + 0x1000_0000
                );
                for _ in 1..mask.count_ones() {
                    let _ = write!(line, "{} ", (rnd() % 512) as i64 * 4 - 1024);
                }
                line.push('\n');
                let _ = writeln!(line, "0090 {mask:08x} 1 R10 FFMA 3 R8 R9 R10 0 ");
                let _ = writeln!(line, "00a0 {mask:08x} 1 R11 FADD 2 R10 R8 0 ");
                let _ = writeln!(
                    line,
                    "00b0 {mask:08x} 0 STG.E 2 R4 R11 4 1 0x{:x} 4 ",
                    a + 0x2000_0000
                );
                let _ = writeln!(line, "00c0 ffffffff 0 ISETP.NE.AND 2 R0 R255 0 ");
                let _ = writeln!(line, "00d0 ffffffff 0 BRA 0 0 ");
                w.write_all(line.as_bytes()).unwrap();
            }
            w.write_all(b"00e0 ffffffff 0 EXIT 0 0 \n").unwrap();
        }
        w.write_all(b"#END_TB\n").unwrap();
    }
    w.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

fn read(label: &str, path: &Path, text_bytes: u64) {
    reset_hwm();
    let t = Instant::now();
    let mut r = KernelTraceReader::open(path).unwrap();
    let mut n = 0u64;
    let mut addrs = 0u64;
    while let Some(tb) = r.next_block().unwrap() {
        n += tb.n_instrs();
        addrs += tb.warps.iter().map(|w| w.addrs.len() as u64).sum::<u64>();
    }
    let s = t.elapsed().as_secs_f64();
    let file = std::fs::metadata(path).unwrap().len();
    println!(
        "{label:>8}: file {:>9.1} MB  {:>7.2} s  {:>7.2} M instr/s  {:>8.1} MB/s (text-equivalent)  {:>8.1} MB/s (file)  peak RSS {:.0} MB  ({n} instrs, {addrs} addrs)",
        file as f64 / 1e6,
        s,
        n as f64 / s / 1e6,
        text_bytes as f64 / s / 1e6,
        file as f64 / s / 1e6,
        vm_hwm_mb(),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let mb: u64 = std::env::var("SASSIM_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let level: i32 = std::env::var("SASSIM_BENCH_ZSTD_LEVEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(9);
    let dir: PathBuf = std::env::var_os("SASSIM_BENCH_DIR").map_or_else(std::env::temp_dir, PathBuf::from);
    let dir = dir.join(format!("sassim-trace-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = dir.join("synth.traceg");
    let t = Instant::now();
    let text_bytes = generate(&text, mb * 1_000_000);
    println!(
        "generated {:.1} MB of text in {:.1} s",
        text_bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );

    let xz = dir.join("synth.traceg.xz");
    let t = Instant::now();
    {
        let mut inp = File::open(&text).unwrap();
        let out = BufWriter::new(File::create(&xz).unwrap());
        let preset: u32 = std::env::var("SASSIM_BENCH_XZ")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        let mut e = xz2::write::XzEncoder::new(out, preset);
        std::io::copy(&mut inp, &mut e).unwrap();
        e.finish().unwrap().flush().unwrap();
    }
    println!("xz in {:.1} s", t.elapsed().as_secs_f64());

    let bin = dir.join("synth.sbt");
    reset_hwm();
    let t = Instant::now();
    let st = convert_with(
        &text,
        &bin,
        &ConvertOptions {
            zstd_level: level,
            ..Default::default()
        },
    )
    .unwrap();
    println!(
        "convert (zstd level {level}) in {:.1} s, peak RSS {:.0} MB",
        t.elapsed().as_secs_f64(),
        vm_hwm_mb()
    );
    let xz_len = std::fs::metadata(&xz).unwrap().len();
    println!(
        "sizes: text {:.1} MB, xz {:.2} MB, binary {:.3} MB (text/bin {:.0}x, xz/bin {:.1}x)",
        text_bytes as f64 / 1e6,
        xz_len as f64 / 1e6,
        st.out_bytes as f64 / 1e6,
        text_bytes as f64 / st.out_bytes as f64,
        xz_len as f64 / st.out_bytes as f64
    );
    read("text", &text, text_bytes);
    read("xz", &xz, text_bytes);
    read("binary", &bin, text_bytes);
    if std::env::var_os("SASSIM_BENCH_KEEP").is_some() {
        // Keep the files and a kernelslist.g naming the binary trace, so the whole
        // simulator can be run on it: `sassim run --trace DIR/kernelslist.g`.
        let _ = std::fs::write(dir.join("kernelslist.g"), "synth.sbt\n");
        println!("kept {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
