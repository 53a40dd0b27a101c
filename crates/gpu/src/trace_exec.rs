//! Trace-driven mode: Accel-Sim kernel traces as the timing model's instruction source.
//!
//! [`TraceKernel`] reads a kernel trace one thread block at a time:
//!
//! 1. [`TraceKernel::open`] scans the whole file once to collect the distinct static
//!    instructions (one per PC), the dynamic count of each, the number of thread blocks
//!    and the total warp instructions. From them it builds a [`sassim_isa::Kernel`]:
//!    either the instructions of a SASS listing of the same binary (matched by kernel
//!    name and PC; the listing supplies operands and control bits), or instructions
//!    synthesised from the trace records (opcode string, destination and source
//!    registers, a memory operand for memory opcodes) with default control bits. PCs
//!    that the trace never executed are filled with `NOP`s so that the code is
//!    contiguous and fetch runs past untaken paths as it would on hardware.
//! 2. While the timing model runs, each CTA launch takes its thread block: the first pass
//!    keeps the blocks it read when all their records fit in 256 MB (the trace is then
//!    parsed once); otherwise the blocks are read again from a second reader and memory is
//!    bounded by the blocks in flight. A block's records are dropped when its CTA retires.
//!
//! Per warp the source serves the records in order: `next_pc` is the next record's PC,
//! `issue` returns its active mask and, for memory opcodes, its per-lane addresses, and
//! the warp has exited after its last record. `BAR` (except `BAR.ARV`) is a CTA barrier:
//! a warp that issued its k-th barrier waits until every warp of its CTA that has not
//! exited has issued k barriers too (`BAR.ARV` counts as an arrival without waiting).
//!
//! PCs: Volta-and-later traces (binary version ≥ 70) keep their byte offsets. Maxwell and
//! Pascal traces (50–69, 8-byte instructions with a control word every 32 bytes) and
//! Kepler traces (30–49, a control word every 64 bytes) are renumbered densely to 16-byte
//! slots, the timing model's instruction size.
//!
//! Counts in the unknown-opcode warning are given both ways: distinct static
//! instructions (PCs) and dynamic warp instructions of the trace.

mod open_ahead;
mod scan;
mod step;
mod synth;

use crate::parallel::each_at_port;
use crate::trace_part::{TWarp, TraceCode, TracePart};
use crate::{Gpu, KernelRun, PreparedKernel, RunOptions, SimError};
use sassim_config::GpuConfig;
use sassim_isa::{Instruction, Kernel, Listing, Opcode};
use sassim_timing::{CoreConfig, DepMode};
use sassim_trace::{KernelHeader, KernelTraceReader, TraceCommand};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use step::tick_part;
use synth::filler;
pub use synth::synthesize_instruction;

/// `mode` of a kernel whose control bits came from a SASS listing.
pub const MODE_CONTROL_BITS: &str = "trace-driven (control bits)";
/// `mode` of a kernel without a SASS listing: the SM uses scoreboards for it.
pub const MODE_HYBRID: &str = "trace-driven (hybrid: scoreboard, no SASS listing)";
/// `mode` when the preset's dependence mode is `scoreboard` (control bits ignored).
pub const MODE_SCOREBOARD: &str = "trace-driven (scoreboard)";
/// Mode of a trace kernel without a listing whose control bits were inferred
/// (`--control-bits infer`, `crate::ctlbits`).
pub const MODE_INFERRED: &str = "trace-driven (control bits inferred from the opcode tables)";

/// Largest static instruction index accepted: 2^19 instructions, 8 MiB of code (real
/// kernels are a few hundred thousand instructions at most). The static code is indexed
/// by PC, so a broken PC far out would cost memory in proportion (issue 18).
const MAX_STATIC: u64 = 1 << 19;

/// Result of one trace kernel.
#[derive(Debug, Clone)]
pub struct TraceKernelRun {
    pub run: KernelRun,
    /// [`MODE_CONTROL_BITS`], [`MODE_HYBRID`] or [`MODE_SCOREBOARD`].
    pub mode: String,
    /// Everything worth telling about this kernel: architecture mismatch, unknown
    /// opcodes (static and dynamic counts), listing problems, and the run's own
    /// warnings (the same list as `run.warnings`).
    pub warnings: Vec<String>,
    /// `MemcpyHtoD` commands of the kernels list since the previous kernel. Noted only; no
    /// data moves in trace-driven mode.
    pub memcpy_htod: Vec<HostCopy>,
    /// The trace file.
    pub path: PathBuf,
}

/// A `MemcpyHtoD,<dst>,<bytes>` command of a kernels list: a host-to-device copy of `bytes`
/// bytes to device address `dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostCopy {
    pub dst: u64,
    pub bytes: u64,
}

/// How trace PCs map to the timing model's 16-byte instruction slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PcMap {
    /// Volta and later: 16-byte instructions, PCs kept.
    Identity,
    /// 8-byte instructions with one control word per bundle of `bundle` slots.
    Bundled { bundle: u64 },
}

impl PcMap {
    fn for_version(v: u32) -> PcMap {
        match v {
            30..=49 => PcMap::Bundled { bundle: 8 },
            50..=69 => PcMap::Bundled { bundle: 4 },
            _ => PcMap::Identity,
        }
    }
    /// Timing-model PC of a trace (or listing) PC; `None` for a control-word slot.
    pub(crate) fn map(self, pc: u64) -> Option<u64> {
        match self {
            PcMap::Identity => pc.is_multiple_of(sassim_isa::INSTRUCTION_BYTES).then_some(pc),
            PcMap::Bundled { bundle } => {
                if !pc.is_multiple_of(8) {
                    return None;
                }
                let slot = pc / 8;
                let (b, k) = (slot / bundle, slot % bundle);
                (k != 0).then(|| (b * (bundle - 1) + k - 1) * sassim_isa::INSTRUCTION_BYTES)
            }
        }
    }
}

/// A kernel trace as the timing model's instruction source (see the module docs).
pub struct TraceKernel {
    path: PathBuf,
    header: KernelHeader,
    kernel: Arc<Kernel>,
    has_control_bits: bool,
    warnings: Vec<String>,
    num_blocks: u32,
    total_instrs: u64,
    /// Per static index: (opcode string, dynamic count) of instructions the trace executed.
    executed: Vec<Option<(String, u64)>>,
    /// What issuing reads of the kernel (PC map, memory spaces, barriers).
    code: TraceCode,
    reader: Option<KernelTraceReader>,
    /// Index of the next thread block to read from the trace.
    next_cta: u32,
    /// Blocks read but not started yet, by index.
    read_ahead: BTreeMap<u32, sassim_trace::ThreadBlockTrace>,
    /// The warps in flight, by simulated SM (the SMs tick in parallel).
    parts: Vec<TracePart>,
    /// The SM of each CTA in flight.
    cta_sm: HashMap<u32, usize>,
    /// Warp instructions issued (summed from the SMs' notes).
    issued_total: u64,
    error: Option<String>,
    /// Its decoding done ahead of its turn ([`TraceKernel::decode_ahead`]).
    decoded: Option<Box<Decoded>>,
}

/// A kernel's control bits inferred (if asked) and static code decoded ahead of its turn,
/// for one configuration ([`TraceKernel::decode_ahead`]): used at the turn only if the GPU's
/// configuration is still that one (otherwise the kernel is decoded again, from `original`).
pub(crate) struct Decoded {
    cfgs: Arc<(GpuConfig, CoreConfig)>,
    infer: bool,
    original: Arc<Kernel>,
    had_control_bits: bool,
    prepared: PreparedKernel,
    unknown: Option<String>,
    inferred: bool,
}

fn terr(e: sassim_trace::TraceError) -> SimError {
    SimError::Exec(e.to_string())
}

impl TraceKernel {
    /// At least `n` SMs' parts of the trace (the SMs beyond the last one given a part so far
    /// get an empty one).
    pub(super) fn parts_for(&mut self, n: usize) {
        if self.parts.len() < n {
            self.parts.resize_with(n, TracePart::default);
        }
    }

    /// Scan the trace at `path` (any container `sassim-trace` reads) and build its static
    /// code. `listings`: SASS listings to take control bits from (the kernel is looked up
    /// by its mangled name; the first listing that has it is used).
    pub fn open(path: &Path, listings: &[Listing]) -> Result<TraceKernel, SimError> {
        TraceKernel::open_on(path, listings, &crate::threads::Threads::new(1))
    }

    /// [`TraceKernel::open`], parsing the thread blocks of a text trace on `threads`
    /// (a batch at a time, accepted in file order: the same kernel and the same errors
    /// whatever the thread count).
    pub fn open_on(
        path: &Path,
        listings: &[Listing],
        threads: &crate::threads::Threads,
    ) -> Result<TraceKernel, SimError> {
        let mut rd = KernelTraceReader::open(path).map_err(terr)?;
        let header = rd.header().clone();
        let pc_map = PcMap::for_version(header.binary_version);
        let mut warnings = Vec::new();
        let wpc = header.warps_per_block().max(1) as u32;
        // Pass 1: the static instructions and their dynamic counts.
        let mut sc = scan::Scan::new(path, header.binary_version, pc_map, wpc);
        scan::scan_blocks(&mut rd, threads, &mut sc)?;
        let scan::Scan {
            statics,
            conflicts,
            blocks,
            total,
            bad_warps,
            empty_blocks,
            kept,
            ..
        } = sc;
        if bad_warps > 0 {
            warnings.push(format!(
                "{bad_warps} warps with an id beyond the {wpc} warps of a {}-thread block were skipped",
                header.threads_per_block()
            ));
        }
        if !conflicts.is_empty() {
            let first: Vec<String> = conflicts
                .iter()
                .take(3)
                .map(|(pc, (a, b))| format!("{pc:#x} ({a} / {b})"))
                .collect();
            warnings.push(format!(
                "{} PCs carry different instructions in different records; the first seen is modelled: {}",
                conflicts.len(),
                first.join(", ")
            ));
        }
        if empty_blocks > 0 {
            warnings.push(format!(
                "{empty_blocks} thread blocks without instructions were skipped"
            ));
        }
        if blocks + empty_blocks != header.num_blocks() {
            warnings.push(format!(
                "the trace has {} thread blocks, the grid {}",
                blocks + empty_blocks,
                header.num_blocks()
            ));
        }
        if blocks > u64::from(u32::MAX) {
            return Err(SimError::Exec(format!(
                "{}: too many thread blocks",
                path.display()
            )));
        }

        // Control bits from a listing of the same binary, matched by name and PC.
        let mut listing_kernel = None;
        if let Some(k) = listings.iter().find_map(|l| l.kernel(&header.name)) {
            let mut mismatch = None;
            for s in &statics {
                let Some((name, t, _)) = s else { continue };
                let tb = Opcode::parse(name).base;
                match k.index_of(u64::from(t.pc)) {
                    Some(li) if k.instructions[li].opcode.base == tb => {}
                    Some(li) => {
                        mismatch = Some(format!(
                            "pc {:#x}: trace {name}, listing {}",
                            t.pc, k.instructions[li].opcode
                        ));
                    }
                    None => {
                        mismatch = Some(format!(
                            "pc {:#x}: trace {name}, listing has no instruction",
                            t.pc
                        ))
                    }
                }
                if mismatch.is_some() {
                    break;
                }
            }
            match mismatch {
                None => listing_kernel = Some(k),
                Some(m) => warnings.push(format!(
                    "the SASS listing of {} does not match the trace ({m}); running without control bits",
                    header.name
                )),
            }
        }
        let mut code: Vec<Option<Instruction>> = vec![None; statics.len()];
        if let Some(k) = listing_kernel {
            for ins in &k.instructions {
                let Some(pc) = pc_map.map(ins.pc) else { continue };
                let idx = (pc / sassim_isa::INSTRUCTION_BYTES) as usize;
                if idx as u64 >= MAX_STATIC {
                    continue;
                }
                if code.len() <= idx {
                    code.resize(idx + 1, None);
                }
                let mut i = ins.clone();
                i.pc = pc;
                code[idx] = Some(i);
            }
        }
        let mut executed = vec![None; code.len()];
        for (idx, s) in statics.into_iter().enumerate() {
            let Some((name, t, n)) = s else { continue };
            if code[idx].is_none() {
                code[idx] = Some(synthesize_instruction(
                    &name,
                    &t,
                    idx as u64 * sassim_isa::INSTRUCTION_BYTES,
                ));
            }
            executed[idx] = Some((name, n));
        }
        let instructions: Vec<Instruction> = code
            .into_iter()
            .enumerate()
            .map(|(idx, i)| i.unwrap_or_else(|| filler(idx as u64 * sassim_isa::INSTRUCTION_BYTES)))
            .collect();
        let barrier = instructions
            .iter()
            .map(|i| match (i.opcode.base.as_str(), i.opcode.has("ARV")) {
                ("BAR", false) => 1,
                ("BAR", true) => 2,
                _ => 0,
            })
            .collect();
        let n = instructions.len();
        let kernel = Kernel {
            name: header.name.clone(),
            instructions,
            labels: BTreeMap::new(),
        };
        // Every block kept: the run needs no reader.
        let (reader, next_cta, read_ahead) = match kept {
            Some(k) => (None, blocks as u32, k),
            None => (
                Some(KernelTraceReader::open(path).map_err(terr)?),
                0,
                BTreeMap::new(),
            ),
        };
        Ok(TraceKernel {
            path: path.to_path_buf(),
            header,
            kernel: Arc::new(kernel),
            has_control_bits: listing_kernel.is_some(),
            warnings,
            num_blocks: blocks as u32,
            total_instrs: total,
            executed,
            code: TraceCode {
                pc_map,
                mem_space: vec![None; n],
                barrier,
                wpc,
            },
            reader,
            next_cta,
            read_ahead,
            parts: Vec::new(),
            cta_sm: HashMap::new(),
            issued_total: 0,
            error: None,
            decoded: None,
        })
    }

    pub fn header(&self) -> &KernelHeader {
        &self.header
    }
    /// The static code (contiguous from PC 0, 16 bytes per instruction).
    pub fn kernel(&self) -> &Arc<Kernel> {
        &self.kernel
    }
    /// Whether the control bits come from a matching SASS listing.
    pub fn has_control_bits(&self) -> bool {
        self.has_control_bits
    }

    /// Whether the kernel has Hopper warpgroup MMAs, whose completion the trace cannot show
    /// through registers (their accumulators are not in the trace): such a kernel needs
    /// control bits (the `gsb0` group counter that `WARPGROUP.DEPBAR` waits on).
    pub fn has_warpgroup_mma(&self) -> bool {
        self.kernel
            .instructions
            .iter()
            .any(|i| matches!(i.opcode.base.as_str(), "HGMMA" | "IGMMA" | "QGMMA"))
    }
    /// Give the kernel's instructions control bits inferred for `cfg`'s opcode tables
    /// (a trace without its listing); afterwards it runs as with control bits.
    fn infer_control_bits(&mut self, cfg: &GpuConfig, core: &CoreConfig) {
        let k = crate::ctlbits::with_inferred_control_bits(&self.kernel, cfg, core);
        self.kernel = Arc::new(k);
        self.has_control_bits = true;
    }

    /// The decoding of the kernel's turn ([`run_opened`]) for `cfg` and `core`: control bits
    /// inferred when `infer` asks or the kernel has warpgroup MMAs (which order their results
    /// only through the `gsb0` counter), unless the trace has them; then the static code
    /// ([`TraceKernel::prepare`]). Returns (prepared code, unknown-opcode warning, inferred).
    fn decode_for(
        &mut self,
        cfg: &GpuConfig,
        core: &CoreConfig,
        infer: bool,
    ) -> (PreparedKernel, Option<String>, bool) {
        let inferred = (infer || self.has_warpgroup_mma()) && !self.has_control_bits();
        if inferred {
            self.infer_control_bits(cfg, core);
        }
        let (prepared, unknown) = self.prepare(cfg, core);
        (prepared, unknown, inferred)
    }

    /// [`TraceKernel::decode_for`] now, for configuration `cfgs` (the GPU's when the kernel
    /// was opened ahead of its turn, `open_ahead.rs`); its turn uses the result if the GPU's
    /// configuration is then still `cfgs` and `infer` the same.
    pub(crate) fn decode_ahead(&mut self, cfgs: Arc<(GpuConfig, CoreConfig)>, infer: bool) {
        let (original, had_control_bits) = (Arc::clone(&self.kernel), self.has_control_bits);
        let (prepared, unknown, inferred) = self.decode_for(&cfgs.0, &cfgs.1, infer);
        self.decoded = Some(Box::new(Decoded {
            cfgs,
            infer,
            original,
            had_control_bits,
            prepared,
            unknown,
            inferred,
        }));
    }

    /// [`TraceKernel::decode_for`] for `gpu`: what [`TraceKernel::decode_ahead`] did if it
    /// was for this configuration, or done now.
    fn decode(&mut self, gpu: &Gpu, infer: bool) -> (PreparedKernel, Option<String>, bool) {
        if let Some(d) = self.decoded.take() {
            if d.infer == infer && d.cfgs.0 == gpu.cfg && d.cfgs.1 == gpu.core {
                return (d.prepared, d.unknown, d.inferred);
            }
            self.kernel = d.original;
            self.has_control_bits = d.had_control_bits;
        }
        self.decode_for(&gpu.cfg, &gpu.core, infer)
    }
    /// Warnings found while reading the trace.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// Thread blocks in the trace.
    pub fn num_blocks(&self) -> u32 {
        self.num_blocks
    }
    /// Warp instructions (records) in the trace.
    pub fn total_instrs(&self) -> u64 {
        self.total_instrs
    }
    /// Distinct PCs the trace executed.
    pub fn static_count(&self) -> usize {
        self.executed.iter().flatten().count()
    }

    /// Decode the static code for `cfg`'s timing model ([`crate::prepare`]). The
    /// unknown-opcode list of the result is emptied and returned instead as a warning
    /// over the executed instructions, with static and dynamic counts; the registers
    /// per thread come from the trace header (`-nregs`) when it has them.
    /// Call it before running: it also records which static instructions access memory.
    fn prepare(&mut self, cfg: &GpuConfig, core: &CoreConfig) -> (PreparedKernel, Option<String>) {
        let mut p = crate::prepare(&self.kernel, cfg, core);
        p.unknown_opcodes.clear();
        let table = cfg.opcode_table();
        let mut unknown: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for (idx, e) in self.executed.iter().enumerate() {
            let Some((_, n)) = e else { continue };
            let ins = &self.kernel.instructions[idx];
            let (_, known) = sassim_timing::config::classify(table, ins);
            if !known {
                let u = unknown.entry(ins.opcode.base.clone()).or_default();
                u.0 += 1;
                u.1 += n;
            }
        }
        for (i, s) in p.code.iter().enumerate() {
            self.code.mem_space[i] = s.mem.map(|m| m.space);
        }
        if self.header.nregs > 0 {
            let g = &cfg.gpu;
            let gran = g.reg_alloc_granularity.max(1);
            p.regs_per_thread = self
                .header
                .nregs
                .div_ceil(gran)
                .saturating_mul(gran)
                .clamp(gran, g.max_regs_per_thread.max(gran));
        }
        let warning = (!unknown.is_empty()).then(|| {
            let list: Vec<String> = unknown
                .iter()
                .map(|(k, (s, d))| format!("{k} ({s} static, {d} dynamic)"))
                .collect();
            format!(
                "opcodes unknown to the {} opcode table ran with the default class: {}",
                cfg.gpu.arch,
                list.join(", ")
            )
        });
        (p, warning)
    }

    /// The error that stopped the stream (a trace that changed between the passes).
    pub fn stream_error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

impl crate::KernelSource for TraceKernel {
    type Writes = ();

    fn tick_sms(
        &mut self,
        sms: &mut [sassim_timing::Sm<()>],
        notes: &mut [crate::parallel::SmNote],
        threads: &crate::parallel::Threads,
        cycle: u64,
    ) -> Result<(), String> {
        self.step(sms, notes, None, threads, cycle)
    }
    fn ticks_at_ports(&self) -> bool {
        true
    }
    fn tick_sms_at(
        &mut self,
        sms: &mut [sassim_timing::Sm<()>],
        notes: &mut [crate::parallel::SmNote],
        ports: crate::memsys::SmPorts<'_>,
        threads: &crate::parallel::Threads,
        cycle: u64,
    ) -> Result<(), String> {
        self.step(sms, notes, Some(ports), threads, cycle)
    }
    fn quantum_horizon(&self, now: u64, issue_per_cycle: u64) -> Option<u64> {
        // A warp issues at most one instruction a cycle, and an SM at most
        // `issue_per_cycle` (one per sub-core): an SM whose warps have `r` instructions
        // left, one of them `w`, cannot have finished them before cycle
        // `now + max(w, r / issue_per_cycle) - 1`.
        let mut cycles = 0u64;
        for p in &self.parts {
            let (mut sum, mut most) = (0u64, 0u64);
            for w in p.warps.values() {
                let left = w.instrs.len().saturating_sub(w.pos) as u64;
                sum += left;
                most = most.max(left);
            }
            cycles = cycles.max(most).max(sum / issue_per_cycle.max(1));
        }
        Some(now + cycles.saturating_sub(1))
    }
    fn tick_sms_quantum(
        &mut self,
        sms: &mut [sassim_timing::Sm<()>],
        notes: &mut [crate::parallel::SmNote],
        ports: crate::memsys::SmPorts<'_>,
        threads: &crate::parallel::Threads,
        steps: &crate::quantum::QuantumSteps<'_>,
    ) -> Result<(), String> {
        self.parts_for(sms.len());
        let code = &self.code;
        let n = sms.len();
        let useful = crate::parallel::useful_threads(threads, notes);
        let at = &ports.at;
        let tick = |first_sm: usize,
                    sms: &mut [sassim_timing::Sm<()>],
                    parts: &mut [TracePart],
                    notes: &mut [crate::parallel::SmNote],
                    ports: &mut [sassim_memory::SmPort]| {
            // Each SM's next instruction records are asked for while the SM before it steps
            // (`TracePart::prefetch_warps`).
            if let Some(p) = parts.first() {
                p.prefetch_warps();
            }
            let len = sms.len().min(parts.len()).min(notes.len()).min(ports.len());
            for i in 0..len {
                let (head, tail) = parts.split_at_mut(i + 1);
                if let Some(next) = tail.first() {
                    next.prefetch_warps();
                }
                let s = first_sm + i;
                let p = &mut head[i];
                p.quantum = crate::quantum::sm_quantum(
                    s,
                    &mut sms[i],
                    |sm, cycle, note, port| tick_part(sm, p, code, cycle, note, Some(port)),
                    steps,
                    &mut notes[i],
                    &mut ports[i],
                    at,
                )
                .map_err(|e| (s, e))?;
            }
            Ok(())
        };
        let r = threads.for_parts4_long(useful, sms, &mut self.parts[..n], notes, ports.ports, &tick);
        self.issued_total += self.parts[..n].iter().map(|p| p.quantum.progress).sum::<u64>();
        r
    }
    fn quantum_acc(&self, s: usize) -> crate::quantum::QuantumAcc {
        self.parts.get(s).map(|p| p.quantum).unwrap_or_default()
    }
    fn tick_sms_alone(
        &mut self,
        sms: &mut [sassim_timing::Sm<()>],
        notes: &mut [crate::parallel::SmNote],
        ports: &mut [sassim_memory::SmPort],
        at: &sassim_memory::PortStep<'_>,
        threads: &crate::parallel::Threads,
        cycle: u64,
        alone: &[bool],
    ) -> Result<(), String> {
        self.parts_for(sms.len());
        let code = &self.code;
        let n = sms.len().min(alone.len()).min(notes.len()).min(ports.len());
        let prev = crate::cycle_before(cycle);
        // One SM's step, at its port.
        let step = |s: usize,
                    sm: &mut sassim_timing::Sm<()>,
                    p: &mut TracePart,
                    note: &mut crate::parallel::SmNote,
                    port: &mut sassim_memory::SmPort| {
            note.inbox = port.has_response_at(at);
            tick_part(sm, p, code, cycle, note, Some((port, at, prev))).map_err(|e| format!("SM {s}: {e}"))
        };
        // The parts are planned over the SMs that step (the others cost a flag test).
        let useful = threads.plan_step(alone[..n].iter().copied());
        let r = if useful == 1 {
            // Few SMs step alone: on this thread, visiting only them.
            (0..n)
                .filter(|&s| alone[s])
                .try_for_each(|s| step(s, &mut sms[s], &mut self.parts[s], &mut notes[s], &mut ports[s]))
        } else {
            let tick = |first: usize,
                        sms: &mut [sassim_timing::Sm<()>],
                        parts: &mut [TracePart],
                        notes: &mut [crate::parallel::SmNote],
                        ports: &mut [sassim_memory::SmPort]| {
                each_at_port(first, sms, parts, notes, ports, |s, sm, p, note, port| {
                    if alone[s] {
                        step(s, sm, p, note, port)
                    } else {
                        Ok(())
                    }
                })
            };
            threads.for_parts4(
                useful,
                &mut sms[..n],
                &mut self.parts[..n],
                &mut notes[..n],
                &mut ports[..n],
                &tick,
            )
        };
        self.issued_total += (0..n)
            .filter(|&s| alone[s])
            .map(|s| u64::from(notes[s].progress))
            .sum::<u64>();
        r
    }
    fn num_ctas(&self) -> u32 {
        self.num_blocks
    }
    fn warps_per_cta(&self) -> u32 {
        self.code.wpc
    }
    fn threads_per_cta(&self) -> u32 {
        self.header.threads_per_block().min(u64::from(u32::MAX)) as u32
    }
    fn start_cta(&mut self, sm: usize, id: u32) -> Vec<(u32, u32)> {
        // CTA `id` runs the trace's `id`-th thread block (blocks without instructions are
        // not counted, as in the first pass), as in Accel-Sim. The dispatcher may start CTAs
        // out of id order (an SM can start its second CTA before the next SM its first):
        // blocks read ahead wait in `read_ahead`, at most the CTAs dispatched but not started.
        if id >= self.num_blocks {
            self.error
                .get_or_insert_with(|| format!("{}: no thread block {id}", self.path.display()));
            return Vec::new();
        }
        while self.next_cta <= id {
            let wpc = self.code.wpc;
            let next = |r: &mut KernelTraceReader| loop {
                match r.next_block() {
                    Ok(Some(b)) if !b.warps.iter().any(|w| w.warp_id < wpc && !w.instrs.is_empty()) => {}
                    other => break other,
                }
            };
            match self.reader.as_mut().map(next) {
                Some(Ok(Some(b))) => {
                    self.read_ahead.insert(self.next_cta, b);
                    self.next_cta += 1;
                }
                Some(Ok(None)) | None => {
                    self.error.get_or_insert_with(|| {
                        format!(
                            "{}: fewer thread blocks than the first pass read",
                            self.path.display()
                        )
                    });
                    return Vec::new();
                }
                Some(Err(e)) => {
                    self.error.get_or_insert_with(|| e.to_string());
                    return Vec::new();
                }
            }
        }
        let Some(block) = self.read_ahead.remove(&id) else {
            self.error
                .get_or_insert_with(|| format!("{}: thread block {id} started twice", self.path.display()));
            return Vec::new();
        };
        let cta = id;
        let first = cta as u64 * self.code.wpc as u64;
        self.parts_for(sm + 1);
        let part = &mut self.parts[sm];
        let mut out = Vec::new();
        for w in block.warps {
            if w.warp_id >= self.code.wpc || w.instrs.is_empty() {
                continue;
            }
            let id = (first + w.warp_id as u64) as u32;
            if part.warps.contains_key(&id) {
                continue;
            }
            part.warps.insert(
                id,
                TWarp {
                    cta,
                    instrs: w.instrs,
                    addrs: w.addrs,
                    pos: 0,
                    bars: 0,
                    waits: false,
                },
            );
            out.push((id, w.warp_id));
        }
        part.update_cta_min(self.code.wpc, cta);
        self.cta_sm.insert(cta, sm);
        out
    }
    fn retire_cta(&mut self, warp: u32) {
        let cta = warp / self.code.wpc;
        if let Some(p) = self.cta_sm.remove(&cta).and_then(|sm| self.parts.get_mut(sm)) {
            p.retire(self.code.wpc, cta);
        }
    }
    fn issued(&self) -> u64 {
        self.issued_total
    }
    fn describe(&self, warp: u32) -> String {
        let part = self
            .cta_sm
            .get(&(warp / self.code.wpc))
            .and_then(|&sm| self.parts.get(sm));
        let Some((p, w)) = part.and_then(|p| Some((p, p.warps.get(&warp)?))) else {
            return "not in flight".into();
        };
        let at = match w.instrs.get(w.pos) {
            Some(i) => format!(
                "trace pc {:#x} (record {} of {})",
                i.pc,
                w.pos + 1,
                w.instrs.len()
            ),
            None => "exited".into(),
        };
        if p.blocked(warp) {
            format!("{at}, waiting at barrier {} of CTA {}", w.bars, w.cta)
        } else {
            at
        }
    }
}

/// The number of `sm_NN` (`sm_86` → 86).
fn arch_number(arch: &str) -> Option<u32> {
    arch.trim_start_matches("sm_").parse().ok()
}

/// Time one kernel trace on `gpu`. Control bits come from the listing of the same
/// kernel in `listings` when there is one that matches the trace; otherwise the kernel
/// runs with scoreboards (hybrid mode: when the preset's dependence mode is
/// `control_bits` it is switched to `hybrid` for this kernel).
pub fn run_trace_kernel(
    gpu: &mut Gpu,
    path: &Path,
    listings: &[Listing],
    opts: &RunOptions,
) -> Result<TraceKernelRun, SimError> {
    let tk = open_now(gpu, path, listings, opts)?;
    run_opened(gpu, tk, path, opts)
}

/// Open the kernel at `path` now, its blocks parsed on the GPU's threads (kept by the GPU
/// across kernels).
fn open_now(
    gpu: &mut Gpu,
    path: &Path,
    listings: &[Listing],
    opts: &RunOptions,
) -> Result<TraceKernel, SimError> {
    let threads = gpu.take_threads(opts);
    let r = TraceKernel::open_on(path, listings, &threads);
    gpu.threads = Some(threads);
    r
}

/// [`run_trace_kernel`] of a kernel already opened.
fn run_opened(
    gpu: &mut Gpu,
    mut tk: TraceKernel,
    path: &Path,
    opts: &RunOptions,
) -> Result<TraceKernelRun, SimError> {
    let mut warnings = Vec::new();
    let v = tk.header().binary_version;
    if v != 0 && arch_number(&gpu.cfg.gpu.arch) != Some(v) {
        warnings.push(format!(
            "trace recorded for sm_{v}; simulating on {} ({}): choose a preset of that architecture with --gpu (`sassim gpus`)",
            gpu.cfg.gpu.name, gpu.cfg.gpu.arch
        ));
    }
    warnings.extend(tk.warnings().iter().cloned());
    // Warpgroup MMAs order their results only through the `gsb0` counter: without a listing,
    // their kernel runs with inferred control bits rather than register scoreboards.
    let (prepared, unknown, inferred) = tk.decode(gpu, opts.infer_control_bits);
    warnings.extend(unknown);
    let has_cb = tk.has_control_bits();
    let opts = RunOptions {
        has_control_bits: has_cb,
        shared_per_cta: opts.shared_per_cta.max(tk.header().shmem),
        ..opts.clone()
    };
    let saved = gpu.core.dependence;
    if !has_cb && saved == DepMode::ControlBits {
        gpu.core.dependence = DepMode::Hybrid;
    }
    let mode = match (gpu.core.dependence, has_cb) {
        (DepMode::Scoreboard, _) => MODE_SCOREBOARD,
        (_, true) if inferred => MODE_INFERRED,
        (_, true) => MODE_CONTROL_BITS,
        (_, false) => MODE_HYBRID,
    };
    let kernel = tk.kernel().clone();
    let r = gpu.run_source(&mut tk, &kernel, prepared, &opts, None);
    gpu.core.dependence = saved;
    let mut run = match r {
        Ok(r) => r,
        Err(e) => {
            return Err(match tk.stream_error() {
                Some(s) => SimError::Exec(s.to_string()),
                None => e,
            })
        }
    };
    if let Some(s) = tk.stream_error() {
        return Err(SimError::Exec(s.to_string()));
    }
    warnings.append(&mut run.warnings);
    run.warnings = warnings.clone();
    Ok(TraceKernelRun {
        run,
        mode: mode.to_string(),
        warnings,
        memcpy_htod: Vec::new(),
        path: path.to_path_buf(),
    })
}

/// Run every kernel of an Accel-Sim `kernelslist.g` in order on `gpu`. `MemcpyHtoD`
/// lines are only noted (in the next kernel's `memcpy_htod`). See [`run_trace_kernel`].
pub fn run_kernelslist(
    gpu: &mut Gpu,
    kernelslist: &Path,
    listings: &[Listing],
    opts: &RunOptions,
) -> Result<Vec<TraceKernelRun>, SimError> {
    let cmds = sassim_trace::read_kernelslist(kernelslist).map_err(terr)?;
    let paths: Vec<PathBuf> = cmds
        .iter()
        .filter_map(|c| match c {
            TraceCommand::Kernel { path, .. } => Some(path.clone()),
            TraceCommand::MemcpyHtoD { .. } => None,
        })
        .collect();
    let mut opened = open_ahead::OpenAhead::default();
    let mut out = Vec::new();
    let mut copies = Vec::new();
    for c in cmds {
        match c {
            TraceCommand::MemcpyHtoD { dst, bytes } => copies.push(HostCopy { dst, bytes }),
            TraceCommand::Kernel { path, .. } => {
                let tk = opened.take(gpu, &paths, out.len(), listings, opts)?;
                let mut r = run_opened(gpu, tk, &path, opts)?;
                r.memcpy_htod = std::mem::take(&mut copies);
                out.push(r);
            }
        }
    }
    Ok(out)
}
