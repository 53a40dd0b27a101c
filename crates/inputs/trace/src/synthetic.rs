//! Synthetic Accel-Sim traces for benchmarks and tests (issue 15's loaded GPU: a memory-bound
//! gather, and a compute-bound kernel whose CTAs come in waves).

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

/// A random-gather kernel: `ctas` CTAs of 8 warps of 32 threads; each warp loads `gathers`
/// floats at uniformly random 4-byte-aligned addresses of a `table_bytes` table (one address
/// per lane, not compressed), sums them and stores the sum coalesced. The same kernel as
/// `scripts/gen-gather-trace.py` writes (tracer version 5), with addresses from a seeded
/// xorshift generator instead of Python's (the same trace for the same arguments).
#[derive(Debug, Clone, Copy)]
pub struct GatherTrace {
    pub ctas: u32,
    pub gathers: u32,
    pub table_bytes: u64,
    pub seed: u64,
}

const WARPS: u64 = 8;
const LANES: u64 = 32;
const TABLE: u64 = 0x7F00_0000_0000;
const OUT: u64 = 0x7F10_0000_0000;

impl GatherTrace {
    /// Write `kernel-1.traceg` and `kernelslist.g` into `dir` (created if needed); returns
    /// the kernel list's path. Refuses a directory that already holds a `kernel-1.traceg`
    /// (nothing is overwritten), and counts outside 1..=65,536 CTAs, 1..=64 gathers or a
    /// table smaller than 4 bytes.
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let bad = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
        if !(1..=65_536).contains(&self.ctas) {
            return Err(bad(format!("{} CTAs: 1..=65536", self.ctas)));
        }
        if !(1..=64).contains(&self.gathers) {
            return Err(bad(format!("{} gathers: 1..=64", self.gathers)));
        }
        if self.table_bytes < 4 {
            return Err(bad(format!("a table of {} bytes: at least 4", self.table_bytes)));
        }
        let mut t = create(dir, "_Z6gatherPKfPKjPf", self.ctas)?;
        // xorshift64 (never 0: the seed is mixed with an odd constant).
        let mut x = self.seed ^ 0x9E37_79B9_7F4A_7C15;
        if x == 0 {
            x = 1;
        }
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let words = self.table_bytes / 4;
        let g = u64::from(self.gathers);
        for cta in 0..u64::from(self.ctas) {
            write!(t, "#BEGIN_TB\n\nthread block = {cta},0,0\n\n")?;
            for w in 0..WARPS {
                writeln!(t, "warp = {w}\ninsts = {}", 5 + 2 * g)?;
                t.write_all(
                    "0000 ffffffff 1 R0 S2R 0 0 0 \n0010 ffffffff 1 R1 IMAD 2 R0 R0 0 0 \n".as_bytes(),
                )?;
                t.write_all("0020 ffffffff 1 R2 MOV 0 0 0 \n".as_bytes())?;
                for k in 0..g {
                    write!(
                        t,
                        "{:04x} ffffffff 1 R{} LDG.E 1 R1 4 0",
                        0x30 + 0x10 * k,
                        4 + k % 8
                    )?;
                    for _ in 0..LANES {
                        write!(t, " {:#x}", TABLE + 4 * (next() % words))?;
                    }
                    t.write_all(" 0 \n".as_bytes())?;
                }
                for k in 0..g {
                    writeln!(
                        t,
                        "{:04x} ffffffff 1 R2 FADD 2 R2 R{} 0 0 ",
                        0x30 + 0x10 * (g + k),
                        4 + k % 8
                    )?;
                }
                let pc = 0x30 + 0x10 * 2 * g;
                let base = OUT + 4 * (cta * WARPS + w) * LANES;
                writeln!(t, "{pc:04x} ffffffff 0 STG.E 2 R1 R2 4 1 {base:#x} 4 0 ")?;
                writeln!(t, "{:04x} ffffffff 0 EXIT 0 0 0 \n", pc + 0x10)?;
            }
            t.write_all("#END_TB\n\n".as_bytes())?;
        }
        finish(dir, t)
    }
}

/// A compute-bound kernel whose CTAs come in waves on a loaded GPU: `ctas` CTAs of 8 warps of
/// 32 threads; each warp loads one float per thread (coalesced), runs a chain of `ffma`
/// dependent FFMAs over four registers and stores one float per thread (coalesced).
#[derive(Debug, Clone, Copy)]
pub struct ComputeTrace {
    pub ctas: u32,
    pub ffma: u32,
}

impl ComputeTrace {
    /// Write `kernel-1.traceg` and `kernelslist.g` into `dir` (created if needed); returns
    /// the kernel list's path. Refuses a directory that already holds a `kernel-1.traceg`,
    /// and counts outside 1..=65,536 CTAs or 0..=4,096 FFMAs.
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let bad = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
        if !(1..=65_536).contains(&self.ctas) {
            return Err(bad(format!("{} CTAs: 1..=65536", self.ctas)));
        }
        if self.ffma > 4_096 {
            return Err(bad(format!("{} FFMAs: 0..=4096", self.ffma)));
        }
        let mut t = create(dir, "_Z7computePKfPf", self.ctas)?;
        let f = u64::from(self.ffma);
        for cta in 0..u64::from(self.ctas) {
            write!(t, "#BEGIN_TB\n\nthread block = {cta},0,0\n\n")?;
            for w in 0..WARPS {
                let base = 4 * (cta * WARPS + w) * LANES;
                writeln!(t, "warp = {w}\ninsts = {}", 5 + f)?;
                t.write_all(
                    "0000 ffffffff 1 R0 S2R 0 0 0 \n0010 ffffffff 1 R1 IMAD 2 R0 R0 0 0 \n".as_bytes(),
                )?;
                writeln!(t, "0020 ffffffff 1 R2 LDG.E 1 R1 4 1 {:#x} 4 0 ", TABLE + base)?;
                for k in 0..f {
                    writeln!(
                        t,
                        "{:04x} ffffffff 1 R{} FFMA 3 R2 R{} R{} 0 0 ",
                        0x30 + 0x10 * k,
                        3 + k % 4,
                        3 + (k + 3) % 4,
                        3 + (k + 2) % 4
                    )?;
                }
                let pc = 0x30 + 0x10 * f;
                writeln!(t, "{pc:04x} ffffffff 0 STG.E 2 R1 R3 4 1 {:#x} 4 0 ", OUT + base)?;
                writeln!(t, "{:04x} ffffffff 0 EXIT 0 0 0 \n", pc + 0x10)?;
            }
            t.write_all("#END_TB\n\n".as_bytes())?;
        }
        finish(dir, t)
    }
}

/// Creates `dir` if needed and `dir/kernel-1.traceg` (refusing one that exists: nothing is
/// overwritten), and writes the header of kernel `name` with `ctas` CTAs of 8 warps.
fn create(dir: &Path, name: &str, ctas: u32) -> std::io::Result<BufWriter<File>> {
    std::fs::create_dir_all(dir)?;
    let trace = dir.join("kernel-1.traceg");
    // Written as it is made (a large trace is not held in memory); `create_new` refuses a
    // file that exists.
    let file = File::create_new(&trace).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => {
            std::io::Error::new(e.kind(), format!("{} exists: not overwritten", trace.display()))
        }
        _ => e,
    })?;
    let mut t = BufWriter::new(file);
    write!(
        t,
        "-kernel name = {name}\n-kernel id = 1\n-grid dim = ({ctas},1,1)\n\
         -block dim = ({},1,1)\n-shmem = 0\n-nregs = 16\n-binary version = 86\n\
         -cuda stream id = 0\n-shmem base_addr = 0x00007fb139000000\n\
         -local mem base_addr = 0x00007fb137000000\n-nvbit version = 1.7\n\
         -accelsim tracer version = 5\n-enable lineinfo = 0\n\n",
        WARPS * LANES
    )?;
    Ok(t)
}

/// Flushes the kernel trace `t` and writes `dir/kernelslist.g`; returns its path.
fn finish(dir: &Path, mut t: BufWriter<File>) -> std::io::Result<PathBuf> {
    t.flush()?;
    let list = dir.join("kernelslist.g");
    std::fs::write(&list, "kernel-1.traceg\n")?;
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_trace_reads_back_and_is_not_overwritten() {
        let dir = std::env::temp_dir().join(format!("sassim-gather-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let g = GatherTrace {
            ctas: 3,
            gathers: 2,
            table_bytes: 1 << 20,
            seed: 7,
        };
        let list = g.write(&dir).expect("written");
        assert_eq!(crate::read_kernelslist(&list).expect("list").len(), 1);
        let mut r = crate::KernelTraceReader::open(dir.join("kernel-1.traceg")).expect("open");
        assert_eq!(r.header().grid, [3, 1, 1]);
        let mut blocks = 0;
        while let Some(tb) = r.next_block().expect("block") {
            assert_eq!(tb.warps.len(), 8);
            for w in &tb.warps {
                assert_eq!(w.instrs.len(), 9);
                let addrs = w.addrs_of(&w.instrs[3]);
                assert_eq!(addrs.len(), 32);
                assert!(addrs
                    .iter()
                    .all(|&a| (TABLE..TABLE + (1 << 20)).contains(&a) && a % 4 == 0));
            }
            blocks += 1;
        }
        assert_eq!(blocks, 3);
        let again = g.write(&dir).expect_err("not overwritten");
        assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
        assert!(GatherTrace { ctas: 0, ..g }.write(&dir.join("x")).is_err());
        assert!(GatherTrace { gathers: 65, ..g }.write(&dir.join("x")).is_err());
        assert!(GatherTrace { ctas: 65_537, ..g }.write(&dir.join("x")).is_err());
        assert!(GatherTrace { gathers: 0, ..g }.write(&dir.join("x")).is_err());
        assert!(GatherTrace { table_bytes: 3, ..g }.write(&dir.join("x")).is_err());
        assert!(!dir.join("x").exists(), "nothing written for bad arguments");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn compute_trace_reads_back_and_is_not_overwritten() {
        let dir = std::env::temp_dir().join(format!("sassim-compute-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let c = ComputeTrace { ctas: 5, ffma: 6 };
        let list = c.write(&dir).expect("written");
        assert_eq!(crate::read_kernelslist(&list).expect("list").len(), 1);
        let mut r = crate::KernelTraceReader::open(dir.join("kernel-1.traceg")).expect("open");
        assert_eq!(r.header().grid, [5, 1, 1]);
        let mut blocks = 0u64;
        while let Some(tb) = r.next_block().expect("block") {
            assert_eq!(tb.warps.len(), 8);
            for (w, warp) in tb.warps.iter().enumerate() {
                assert_eq!(warp.instrs.len(), 11);
                // The load and the store are coalesced: consecutive floats of the warp's own
                // 128 bytes.
                let first = TABLE + 4 * (blocks * WARPS + w as u64) * LANES;
                let load = warp.addrs_of(&warp.instrs[2]);
                assert_eq!(load, (0..LANES).map(|l| first + 4 * l).collect::<Vec<_>>());
                let store = warp.addrs_of(&warp.instrs[9]);
                assert_eq!(store[0], OUT + (first - TABLE));
                assert_eq!(store.len(), 32);
            }
            blocks += 1;
        }
        assert_eq!(blocks, 5);
        let again = c.write(&dir).expect_err("not overwritten");
        assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
        assert!(ComputeTrace { ctas: 0, ..c }.write(&dir.join("x")).is_err());
        assert!(ComputeTrace { ffma: 4_097, ..c }.write(&dir.join("x")).is_err());
        assert!(!dir.join("x").exists(), "nothing written for bad arguments");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
