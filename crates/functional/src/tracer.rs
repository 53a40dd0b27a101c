//! An Accel-Sim trace writer: sassim as a tracer that needs no GPU.
//!
//! [`write_workload_trace`] runs a workload functionally and writes what NVBit's
//! `tracer_tool.so` followed by Accel-Sim's `post-traces-processing` would have written for
//! the same launch: `kernelslist.g` (one `MemcpyHtoD` line per buffer, then the kernel) and
//! `kernel-N.traceg` (the kernel header, then one `#BEGIN_TB` … `#END_TB` section per
//! thread block in linear order, warps in increasing order, each warp's dynamic
//! instructions in execution order) in the tracer-version-4 line format with address
//! compression. The layout and field rules follow `shared/reference/trace-formats.md`
//! §1.1–1.5; see `docs/functional.md` ("Accel-Sim trace writer").
//!
//! [`KernelTracer`] is the lower-level writer: feed it every [`Issued`] of any
//! [`KernelExec`] run (any issue order) and it buffers the lines per warp and writes each
//! thread block once all its warps exited and every earlier block was written.
//! [`trace_exec`] drives a prepared `KernelExec` round-robin exactly like
//! [`crate::runner::run_exec`] and feeds a tracer.

use crate::cflow::ControlFlowKind;
use crate::error::ExecError;
use crate::exec::{ArchInfo, Issued, KernelExec, Launch, WarpId, WarpStatus, DEFAULT_SHARED_BYTES};
use crate::runner::{check_outputs, RunOptions, RunStats};
use sassim_isa::{Instruction, Kernel, Listing, OperandKind, RegFile};
use sassim_trace::KernelHeader;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `-accelsim tracer version` written in the header.
pub const TRACER_VERSION: u32 = 4;
/// The `#traces format` comment line of version 4 (verbatim, as the tracer prints it).
pub const TRACES_FORMAT_V4: &str = "#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num \
                                     [reg_srcs] mem_width [adrrescompress?] [mem_addresses]";
/// Default `-shmem base_addr` (generic window of shared memory; above every global
/// allocation of [`crate::GlobalMemory`], which start at `0x7f00_0000_0000`).
pub const DEFAULT_SHMEM_BASE_ADDR: u64 = 0x0000_7fff_0000_0000;
/// Default `-local mem base_addr` (32 MiB above the shared window, as NVBit places it).
pub const DEFAULT_LOCAL_MEM_BASE_ADDR: u64 = 0x0000_7fff_0200_0000;
/// Most source registers on a line (`MAX_SRC` of the NVBit tracer).
pub const MAX_SRC: usize = 5;

/// How memory addresses are written (the tracer's `TOOL_COMPRESS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AddrCompression {
    /// As Accel-Sim's tracer with `TOOL_COMPRESS=1`: mode 1 (base_stride) when the active
    /// lanes form one contiguous run of at least two lanes with a constant int32 stride (or
    /// no lane is active: `1 0x0 0`), else mode 2 (base_delta).
    #[default]
    Tracer,
    /// `TOOL_COMPRESS=0`: mode 0 (list_all), one `0x%016x` address per active lane.
    None,
    /// Mode 1 when possible, else the shorter line of mode 2 and mode 0 (mode 0 when the
    /// deltas take more characters than the addresses, e.g. a scatter over far-apart
    /// regions; ties go to mode 2).
    Shortest,
}

/// Options of the trace writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceOptions {
    /// Options of the functional run (CTA residency, deadlock detection, exec options).
    pub run: RunOptions,
    pub compression: AddrCompression,
    /// List RZ as `R255` (what NVBit's tracer prints) instead of leaving it out.
    pub include_rz: bool,
    /// `-nregs`; `None`: `ptxas -v` of a built-in workload, else estimated from the listing.
    pub nregs: Option<u32>,
    /// `-shmem` (static + dynamic bytes); `None`: `ptxas -v` static bytes of a built-in
    /// workload (0 otherwise) plus the spec's dynamic bytes.
    pub shmem_bytes: Option<u32>,
    pub cuda_stream_id: u64,
    pub shmem_base_addr: u64,
    pub local_mem_base_addr: u64,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            run: RunOptions::default(),
            compression: AddrCompression::Tracer,
            include_rz: false,
            nregs: None,
            shmem_bytes: None,
            cuda_stream_id: 0,
            shmem_base_addr: DEFAULT_SHMEM_BASE_ADDR,
            local_mem_base_addr: DEFAULT_LOCAL_MEM_BASE_ADDR,
        }
    }
}

/// The kernel header of a launch of `kernel` on `arch` (`kernel_id` 1-based), as the tracer
/// writes it: `-nregs`/`-shmem` from `opts` or estimated ([`estimate_nregs`]; `shmem` = 0),
/// `-binary version` the arch's (86 for sm_86), `-nvbit version` naming sassim, tracer
/// version [`TRACER_VERSION`] without line info, and the [`TRACES_FORMAT_V4`] line.
pub fn kernel_header(
    kernel: &Kernel,
    arch: &ArchInfo,
    launch: &Launch,
    kernel_id: u32,
    opts: &TraceOptions,
) -> KernelHeader {
    KernelHeader {
        name: kernel.name.clone(),
        kernel_id,
        grid: launch.grid,
        block: launch.block,
        shmem: opts.shmem_bytes.unwrap_or(0),
        nregs: opts.nregs.unwrap_or_else(|| estimate_nregs(kernel)),
        binary_version: arch.sm,
        cuda_stream_id: opts.cuda_stream_id,
        shmem_base_addr: opts.shmem_base_addr,
        local_mem_base_addr: opts.local_mem_base_addr,
        nvbit_version: format!("none (sassim {})", env!("CARGO_PKG_VERSION")),
        tracer_version: TRACER_VERSION,
        lineinfo: false,
        format_line: TRACES_FORMAT_V4.to_string(),
        ..KernelHeader::default()
    }
}

/// Registers per thread estimated from a listing: the registers up to the highest regular
/// register touched (including the extra registers of 64/128-bit operands) plus the two
/// that `ptxas -v` always adds to its count (equal to `ptxas -v` on every built-in workload).
pub fn estimate_nregs(kernel: &Kernel) -> u32 {
    let mut n = 0u32;
    let mut note = |r: &sassim_isa::Reg, extra: u32| {
        if r.file == RegFile::R && !r.is_zero() {
            n = n.max(r.idx as u32 + u32::from(r.width.max(1)).max(extra));
        }
    };
    for ins in &kernel.instructions {
        for o in &ins.operands {
            match &o.kind {
                OperandKind::Reg(r) => note(r, 1),
                OperandKind::Mem(a) => a
                    .regs
                    .iter()
                    .for_each(|t| note(&t.reg, if t.wide { 2 } else { 1 })),
                OperandKind::Const(c) => c.addr.regs.iter().for_each(|t| note(&t.reg, 1)),
                _ => {}
            }
        }
    }
    n + 2
}

/// `(registers, static shared bytes)` of `kernel` on `arch` from `ptxas -v` output
/// (`Used 10 registers, used 1 barriers, 256 bytes smem, ...`).
pub fn ptxas_resources(ptxas: &str, kernel: &str, arch: &str) -> Option<(u32, u32)> {
    let want = format!("'{kernel}' for 'sm_{}'", arch.trim_start_matches("sm_"));
    let mut lines = ptxas.lines();
    lines.find(|l| l.contains("Compiling entry function") && l.contains(&want))?;
    let used = lines
        .take_while(|l| !l.contains("Compiling entry function"))
        .find(|l| l.contains("Used ") && l.contains(" registers"))?;
    let body = used.split_once("Used ")?.1;
    let mut regs = None;
    let mut smem = 0;
    for part in body.split(',') {
        let mut words = part.split_whitespace();
        let (Some(num), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        match (num.parse::<u32>(), what, words.next()) {
            (Ok(v), "registers", _) => regs = Some(v),
            (Ok(v), "bytes", Some("smem")) => smem = v,
            _ => {}
        }
    }
    Some((regs?, smem))
}

/// Errors of the trace writer.
#[derive(Debug, thiserror::Error)]
pub enum TraceWriteError {
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TraceWriteError + '_ {
    move |source| TraceWriteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Counts of what a [`KernelTracer`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct TraceCounts {
    /// `#BEGIN_TB` sections.
    pub blocks: u64,
    /// Warp sections.
    pub warps: u64,
    /// Instruction lines (= dynamic warp instructions).
    pub instructions: u64,
    /// Lines with `mem_width > 0`.
    pub mem_instructions: u64,
    /// Memory lines per address-compression mode (0 list_all, 1 base_stride, 2 base_delta).
    pub addr_modes: [u64; 3],
    /// Bytes of the `.traceg` file.
    pub bytes: u64,
}

/// Result of [`write_workload_trace`].
#[derive(Debug, Clone)]
pub struct TraceSummary {
    pub kernel_id: u32,
    pub kernelslist: PathBuf,
    pub trace: PathBuf,
    /// `(buffer name, device address, bytes)` of every `MemcpyHtoD` line, in order.
    pub memcpys: Vec<(String, u64, u64)>,
    pub stats: RunStats,
    pub counts: TraceCounts,
    pub check: sassim_workload::CheckReport,
}

#[derive(Default)]
struct WarpBuf {
    lines: String,
    count: u64,
}

/// Streaming `.traceg` writer fed with issued instructions. Lines are buffered per warp;
/// a thread block is written when all its warps exited and every block with a lower
/// linear id was written (blocks still open at [`KernelTracer::finish`] are written then).
pub struct KernelTracer<W: Write> {
    out: W,
    path: PathBuf,
    compression: AddrCompression,
    include_rz: bool,
    grid: [u32; 3],
    num_ctas: u32,
    /// CTA linear id -> warp in CTA -> lines.
    open: BTreeMap<u32, BTreeMap<u32, WarpBuf>>,
    done: BTreeSet<u32>,
    next: u32,
    counts: TraceCounts,
}

impl KernelTracer<BufWriter<File>> {
    /// Create `path` and write the header.
    pub fn create(path: &Path, header: &KernelHeader, opts: &TraceOptions) -> Result<Self, TraceWriteError> {
        let f = File::create(path).map_err(io_err(path))?;
        KernelTracer::new(BufWriter::new(f), path, header, opts)
    }
}

impl<W: Write> KernelTracer<W> {
    /// Write `header` to `out` and prepare for blocks. `path` names `out` in errors.
    pub fn new(
        mut out: W,
        path: &Path,
        header: &KernelHeader,
        opts: &TraceOptions,
    ) -> Result<Self, TraceWriteError> {
        let text = header.text();
        out.write_all(text.as_bytes()).map_err(io_err(path))?;
        let num_ctas = header.grid.iter().product();
        Ok(KernelTracer {
            out,
            path: path.to_path_buf(),
            compression: opts.compression,
            include_rz: opts.include_rz,
            grid: header.grid,
            num_ctas,
            open: BTreeMap::new(),
            done: BTreeSet::new(),
            next: 0,
            counts: TraceCounts {
                bytes: text.len() as u64,
                ..TraceCounts::default()
            },
        })
    }

    /// Record one issued instruction of warp `w` (call after [`KernelExec::issue`], before
    /// or after `commit`).
    pub fn record(&mut self, ex: &KernelExec, w: WarpId, is: &Issued) -> Result<(), TraceWriteError> {
        let (cta, warp) = ex.warp_location(w);
        let ins = ex.kernel().instructions.get(is.index).ok_or_else(|| {
            TraceWriteError::Invalid(format!("instruction index {} out of range", is.index))
        })?;
        let buf = self.open.entry(cta).or_default().entry(warp).or_default();
        let mode = format_line(&mut buf.lines, ins, is, self.compression, self.include_rz);
        buf.count += 1;
        self.counts.instructions += 1;
        if let Some(m) = mode {
            self.counts.mem_instructions += 1;
            self.counts.addr_modes[m as usize] += 1;
        }
        if is.exited
            && ex
                .cta_warps(w)
                .iter()
                .all(|x| ex.warp_state(*x) == WarpStatus::Exited)
        {
            self.done.insert(cta);
            while self.done.remove(&self.next) {
                let c = self.next;
                self.write_block(c)?;
                self.next += 1;
            }
        }
        Ok(())
    }

    fn write_block(&mut self, cta: u32) -> Result<(), TraceWriteError> {
        let Some(warps) = self.open.remove(&cta) else {
            return Ok(());
        };
        let [gx, gy, _] = self.grid;
        let (x, y, z) = (cta % gx, (cta / gx) % gy, cta / (gx * gy));
        let mut s = format!("\n#BEGIN_TB\n\nthread block = {x},{y},{z}\n");
        for (w, b) in &warps {
            let _ = write!(s, "\nwarp = {w}\ninsts = {}\n", b.count);
            self.out.write_all(s.as_bytes()).map_err(io_err(&self.path))?;
            self.counts.bytes += s.len() as u64;
            s.clear();
            self.out
                .write_all(b.lines.as_bytes())
                .map_err(io_err(&self.path))?;
            self.counts.bytes += b.lines.len() as u64;
            self.counts.warps += 1;
        }
        s.push_str("\n#END_TB\n");
        self.out.write_all(s.as_bytes()).map_err(io_err(&self.path))?;
        self.counts.bytes += s.len() as u64;
        self.counts.blocks += 1;
        Ok(())
    }

    /// Write every block still buffered (in linear order), flush, and return the writer
    /// and the counts.
    pub fn finish(mut self) -> Result<(W, TraceCounts), TraceWriteError> {
        let rest: Vec<u32> = self.open.keys().copied().collect();
        for c in rest {
            self.write_block(c)?;
        }
        self.out.flush().map_err(io_err(&self.path))?;
        debug_assert!(self.counts.blocks <= u64::from(self.num_ctas));
        Ok((self.out, self.counts))
    }

    /// Counts so far (blocks, warps and bytes count written blocks only).
    pub fn counts(&self) -> &TraceCounts {
        &self.counts
    }
}

/// Append one v4 instruction line for `is` to `s`. Returns the address mode when the line
/// is a memory instruction.
pub fn format_line(
    s: &mut String,
    ins: &Instruction,
    is: &Issued,
    compression: AddrCompression,
    include_rz: bool,
) -> Option<u8> {
    let keep = |r: &sassim_isa::Reg| r.file == RegFile::R && (include_rz || !r.is_zero());
    let _ = write!(s, "{:04x} {:08x} ", is.pc, is.active_mask);
    // Destination: operand 0 when it is a regular register (NVBit: `REG` at index 0).
    match ins.operands.first().map(|o| &o.kind) {
        Some(OperandKind::Reg(r)) if keep(r) => {
            let _ = write!(s, "1 R{} ", r.idx);
        }
        _ => s.push_str("0 "),
    }
    let _ = write!(s, "{} ", ins.opcode);
    // Sources: regular registers after operand 0, and the register of every address
    // operand (NVBit `MREF` `ra_num`; RZ when the address has no regular register).
    let mut srcs = [0u8; MAX_SRC];
    let mut n = 0;
    for (i, o) in ins.operands.iter().enumerate() {
        let r = match &o.kind {
            OperandKind::Reg(r) if i > 0 => r.clone(),
            OperandKind::Mem(a) => a
                .regs
                .iter()
                .find(|t| t.reg.file == RegFile::R)
                .map_or(sassim_isa::Reg::r(sassim_isa::operand::RZ), |t| t.reg.clone()),
            _ => continue,
        };
        if keep(&r) && n < MAX_SRC {
            srcs[n] = r.idx;
            n += 1;
        }
    }
    let _ = write!(s, "{n} ");
    for r in &srcs[..n] {
        let _ = write!(s, "R{r} ");
    }
    let mode = match &is.mem {
        Some(m) => {
            let _ = write!(s, "{} ", m.bytes_per_lane);
            Some(write_addresses(s, is.active_mask, &m.addrs, compression))
        }
        None => {
            s.push_str("0 ");
            None
        }
    };
    s.pop();
    s.push('\n');
    mode
}

/// Whether the active lanes of `mask` form one contiguous run of at least two lanes whose
/// consecutive addresses differ by one int32 stride; returns `(base, stride)`.
pub fn base_stride(mask: u32, addrs: &[u64; 32]) -> Option<(u64, i32)> {
    if mask.count_ones() < 2 {
        return None;
    }
    let first = mask.trailing_zeros() as usize;
    let run = mask >> first;
    if run & run.wrapping_add(1) != 0 {
        return None; // not one contiguous run
    }
    let last = first + mask.count_ones() as usize - 1;
    let stride = i32::try_from(addrs[first + 1].wrapping_sub(addrs[first]) as i64).ok()?;
    (first + 1..=last)
        .all(|l| addrs[l].wrapping_sub(addrs[l - 1]) as i64 == i64::from(stride))
        .then_some((addrs[first], stride))
}

/// Append `mode address-block ` for the active lanes of `mask` (trace-formats.md §1.5) and
/// return the mode (0 list_all, 1 base_stride, 2 base_delta).
pub fn write_addresses(s: &mut String, mask: u32, addrs: &[u64; 32], compression: AddrCompression) -> u8 {
    let lanes = || (0..32).filter(move |l| mask >> l & 1 == 1).map(|l| addrs[l]);
    let list_all = |s: &mut String| {
        s.push_str("0 ");
        for a in lanes() {
            let _ = write!(s, "0x{a:016x} ");
        }
        0
    };
    if compression == AddrCompression::None {
        return list_all(s);
    }
    if mask == 0 {
        s.push_str("1 0x0 0 ");
        return 1;
    }
    if let Some((base, stride)) = base_stride(mask, addrs) {
        let _ = write!(s, "1 0x{base:x} {stride} ");
        return 1;
    }
    let start = s.len();
    let mut prev = None;
    s.push_str("2 ");
    for a in lanes() {
        match prev {
            None => {
                let _ = write!(s, "0x{a:x} ");
            }
            Some(p) => {
                let _ = write!(s, "{} ", a.wrapping_sub(p) as i64);
            }
        }
        prev = Some(a);
    }
    // list_all: "0 " + 19 characters per lane.
    if compression == AddrCompression::Shortest && s.len() - start > 2 + 19 * mask.count_ones() as usize {
        s.truncate(start);
        return list_all(s);
    }
    2
}

/// Run every CTA of a prepared [`KernelExec`] round-robin, exactly as
/// [`crate::runner::run_exec`] does (same issue order and clock, so the same dynamic
/// instructions), feeding every issued instruction to `tracer`.
pub fn trace_exec<W: Write>(
    ex: &mut KernelExec,
    opts: &RunOptions,
    tracer: &mut KernelTracer<W>,
) -> Result<RunStats, TraceWriteError> {
    let (stats, _) = crate::runner::run_exec_with(ex, opts, &mut |ex, w, is| tracer.record(ex, w, is))?;
    Ok(stats)
}

/// A workload prepared for execution ([`prepare_workload`]): what the tracer and
/// [`crate::runner::run_workload_with`] run, so both see the same buffer addresses.
pub struct PreparedWorkload {
    pub exec: KernelExec,
    /// `(name, device address, bytes)` per buffer, in spec (allocation) order.
    pub buffers: Vec<(String, u64, u64)>,
}

/// Allocate and fill the spec's buffers (in order, 256-byte aligned), lay out the
/// parameters and return the launch ready to run.
pub fn prepare_workload(
    spec: &sassim_workload::Workload,
    listing: &Listing,
    arch: &str,
    cf: ControlFlowKind,
    opts: &RunOptions,
) -> Result<PreparedWorkload, ExecError> {
    let kernel = listing
        .kernel(spec.kernel())
        .ok_or_else(|| ExecError::Launch(format!("kernel `{}` is not in the listing", spec.kernel())))?;
    let mut launch = Launch::new(spec.grid, spec.block, Vec::new());
    launch.shared_bytes = DEFAULT_SHARED_BYTES + spec.shared_mem_bytes();
    let mut ex = KernelExec::new(Arc::new(kernel.clone()), arch, launch, cf, opts.exec.clone())?;
    let mut buffers = Vec::new();
    let mut addrs: HashMap<&str, u64> = HashMap::new();
    for b in spec.buffers() {
        let a = ex.memory().alloc(b.bytes.len() as u64, 256);
        ex.memory().write(a, &b.bytes);
        addrs.insert(&b.name, a);
        buffers.push((b.name.clone(), a, b.bytes.len() as u64));
    }
    let params = spec.param_bytes(|n| addrs.get(n).copied().unwrap_or(0));
    ex.set_params(&params)?;
    Ok(PreparedWorkload { exec: ex, buffers })
}

/// Run `spec` functionally on `listing` (round-robin, as [`crate::runner::run_workload_with`]) and
/// write an Accel-Sim trace into `out_dir` (created if missing): `kernel-<kernel_id>.traceg`
/// and `kernelslist.g` with one `MemcpyHtoD,0x%016x,<bytes>` line per buffer (every buffer
/// is copied to the device before the launch, zero-filled ones included) followed by
/// `kernel-<kernel_id>.traceg`. With `kernel_id` 1 `kernelslist.g` is created anew; with a
/// higher id the lines are appended, so consecutive launches can share a folder. The
/// outputs are then checked as [`crate::run_workload`] does (a mismatch is
/// `ExecError::Check`, after the files were written).
pub fn write_workload_trace(
    spec: &sassim_workload::Workload,
    listing: &Listing,
    arch: &str,
    cf: ControlFlowKind,
    out_dir: &Path,
    kernel_id: u32,
) -> Result<TraceSummary, TraceWriteError> {
    write_workload_trace_with(
        spec,
        listing,
        arch,
        cf,
        out_dir,
        kernel_id,
        &TraceOptions::default(),
    )
}

/// [`write_workload_trace`] with options.
pub fn write_workload_trace_with(
    spec: &sassim_workload::Workload,
    listing: &Listing,
    arch: &str,
    cf: ControlFlowKind,
    out_dir: &Path,
    kernel_id: u32,
    opts: &TraceOptions,
) -> Result<TraceSummary, TraceWriteError> {
    if kernel_id == 0 {
        return Err(TraceWriteError::Invalid("kernel ids start at 1".into()));
    }
    let PreparedWorkload {
        exec: mut ex,
        buffers,
    } = prepare_workload(spec, listing, arch, cf, &opts.run)?;
    // Registers and static shared memory of a built-in workload come from its ptxas -v.
    let ptxas = spec
        .origin
        .strip_prefix("builtin:")
        .and_then(sassim_workload::builtin_named)
        .and_then(|b| ptxas_resources(b.ptxas_info, spec.kernel(), arch));
    let mut hopts = opts.clone();
    if hopts.nregs.is_none() {
        hopts.nregs = ptxas.map(|p| p.0);
    }
    if hopts.shmem_bytes.is_none() {
        hopts.shmem_bytes = Some(ptxas.map_or(0, |p| p.1) + spec.shared_mem_bytes());
    }
    let header = kernel_header(ex.kernel(), &ex.arch, ex.launch(), kernel_id, &hopts);

    std::fs::create_dir_all(out_dir).map_err(io_err(out_dir))?;
    let file = format!("kernel-{kernel_id}.traceg");
    let trace = out_dir.join(&file);
    let mut tracer = KernelTracer::create(&trace, &header, opts)?;
    let stats = trace_exec(&mut ex, &opts.run, &mut tracer)?;
    let (_, counts) = tracer.finish()?;

    let kl = out_dir.join("kernelslist.g");
    let mut list = String::new();
    for (_, a, n) in &buffers {
        let _ = writeln!(list, "MemcpyHtoD,0x{a:016x},{n}");
    }
    let _ = writeln!(list, "{file}");
    let mut f = OpenOptions::new()
        .create(true)
        .write(true)
        .append(kernel_id > 1)
        .truncate(kernel_id == 1)
        .open(&kl)
        .map_err(io_err(&kl))?;
    f.write_all(list.as_bytes()).map_err(io_err(&kl))?;

    let (_, check) = check_outputs(spec, &ex, &buffers)?;
    Ok(TraceSummary {
        kernel_id,
        kernelslist: kl,
        trace,
        memcpys: buffers,
        stats,
        counts,
        check,
    })
}
