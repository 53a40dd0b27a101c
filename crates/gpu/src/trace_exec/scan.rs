//! A trace kernel's first pass ([`super::TraceKernel::open_on`]): its thread blocks read in
//! file order, their static instructions and dynamic counts collected ([`Scan`]), the
//! blocks kept for the run while they fit.
//!
//! A text trace's blocks are read a batch at a time and parsed on the pool's threads
//! (`sassim_trace::BlockParser`: one block per call, no shared state), then accepted by the
//! reader and scanned one by one in order. The reading, the acceptance and the scan are
//! serial; they are pipelined with the parsing: while the threads parse batch `i`, the
//! calling thread accepts and scans batch `i - 1` and reads batch `i + 1` (a side job of the
//! parse step, `Threads::with_side`; then it parses too). Blocks, opcode ids, the scan and
//! errors are the same on any number of threads: an error is returned where reading the
//! batches one after the other would have met it (a read error of batch `i + 1` after the
//! blocks of batch `i`).

use super::{terr, PcMap, MAX_STATIC};
use crate::threads::Threads;
use crate::SimError;
use sassim_trace::{KernelTraceReader, ParsedBlock, RawBlock, ThreadBlockTrace, TraceInstr};
use std::collections::BTreeMap;
use std::path::Path;

/// Thread blocks parsed per thread of a batch.
const PARSE_BATCH_PER_THREAD: usize = 4;
/// Most bytes of trace text read ahead for one batch (at least one block is read).
const PARSE_BATCH_BYTES: usize = 64 << 20;
/// Most bytes of records kept for the run (a trace of a few tens of MB of text); beyond it,
/// none are kept and the run reads the trace a second time.
pub(super) const KEPT_BLOCKS_BYTES: usize = 256 << 20;

/// What the first pass collects.
pub(super) struct Scan<'p> {
    pub path: &'p Path,
    pub version: u32,
    pub pc_map: PcMap,
    /// Warps per block.
    pub wpc: u32,
    /// Per static index: (opcode string, first record, dynamic count).
    pub statics: Vec<Option<(String, TraceInstr, u64)>>,
    /// PCs whose records differ: (the first seen's opcode, the other's).
    pub conflicts: BTreeMap<u64, (String, String)>,
    pub blocks: u64,
    pub total: u64,
    pub bad_warps: u64,
    pub empty_blocks: u64,
    /// The blocks read, kept for the run while their records fit in [`KEPT_BLOCKS_BYTES`].
    pub kept: Option<BTreeMap<u32, ThreadBlockTrace>>,
    pub kept_bytes: usize,
}

impl<'p> Scan<'p> {
    pub fn new(path: &'p Path, version: u32, pc_map: PcMap, wpc: u32) -> Self {
        Scan {
            path,
            version,
            pc_map,
            wpc,
            statics: Vec::new(),
            conflicts: BTreeMap::new(),
            blocks: 0,
            total: 0,
            bad_warps: 0,
            empty_blocks: 0,
            kept: Some(BTreeMap::new()),
            kept_bytes: 0,
        }
    }

    /// The next block in file order (`rd` names its opcodes).
    fn add(&mut self, tb: ThreadBlockTrace, rd: &KernelTraceReader) -> Result<(), SimError> {
        let wpc = self.wpc;
        // A block without an instruction has nothing to run (and no CTA to retire).
        if !tb.warps.iter().any(|w| w.warp_id < wpc && !w.instrs.is_empty()) {
            self.empty_blocks += 1;
            return Ok(());
        }
        self.blocks += 1;
        for w in &tb.warps {
            if w.warp_id >= wpc {
                self.bad_warps += 1;
                continue;
            }
            for i in &w.instrs {
                self.total += 1;
                let pc = self.pc_map.map(u64::from(i.pc)).ok_or_else(|| {
                    SimError::Exec(format!(
                        "{}: pc {:#x} is not an instruction slot of an sm_{} kernel",
                        self.path.display(),
                        i.pc,
                        self.version
                    ))
                })?;
                let idx = pc / sassim_isa::INSTRUCTION_BYTES;
                if idx >= MAX_STATIC {
                    return Err(SimError::Exec(format!(
                        "{}: pc {:#x} is beyond the largest kernel supported",
                        self.path.display(),
                        i.pc
                    )));
                }
                let idx = idx as usize;
                if self.statics.len() <= idx {
                    self.statics.resize(idx + 1, None);
                }
                match &mut self.statics[idx] {
                    Some((name, t, n)) => {
                        *n += 1;
                        if t.opcode != i.opcode || t.dsts() != i.dsts() || t.srcs() != i.srcs() {
                            self.conflicts
                                .entry(u64::from(i.pc))
                                .or_insert_with(|| (name.clone(), rd.opcode_name(i.opcode).to_string()));
                        }
                    }
                    slot @ None => *slot = Some((rd.opcode_name(i.opcode).to_string(), *i, 1)),
                }
            }
        }
        if let Some(k) = &mut self.kept {
            self.kept_bytes += tb
                .warps
                .iter()
                .map(|w| {
                    std::mem::size_of::<sassim_trace::WarpTrace>()
                        + w.instrs.capacity() * std::mem::size_of::<TraceInstr>()
                        + (w.addrs.capacity() + w.values.capacity()) * std::mem::size_of::<u64>()
                })
                .sum::<usize>();
            if self.kept_bytes <= KEPT_BLOCKS_BYTES {
                k.insert((self.blocks - 1) as u32, tb);
            } else {
                self.kept = None;
            }
        }
        Ok(())
    }
}

/// Every thread block of `rd`'s trace into `scan`, in file order (see the module docs).
pub(super) fn scan_blocks(
    rd: &mut KernelTraceReader,
    threads: &Threads,
    scan: &mut Scan<'_>,
) -> Result<(), SimError> {
    // (One thread too goes through batches: reading block by block interns opcodes while
    // parsing, and its error for a trace of too many opcodes would be another one.)
    let parser = match rd.block_parser() {
        Some(p) => p,
        // A binary trace: block by block.
        None => {
            while let Some(tb) = rd.next_block().map_err(terr)? {
                scan.add(tb, rd)?;
            }
            return Ok(());
        }
    };
    let batch = PARSE_BATCH_PER_THREAD * threads.count();
    let read = |rd: &mut KernelTraceReader| match rd.next_raw_blocks(batch, PARSE_BATCH_BYTES) {
        Some(r) => r.map_err(terr),
        None => Err(SimError::Exec(format!(
            "{}: not a text trace",
            rd.path().display()
        ))),
    };
    let parse = |_: usize, raws: &mut [RawBlock], out: &mut [Option<sassim_trace::Result<ParsedBlock>>]| {
        for (raw, o) in raws.iter_mut().zip(out.iter_mut()) {
            *o = Some(parser.parse(raw));
        }
        Ok(())
    };
    let mut raws = read(rd)?;
    let mut parsed: Vec<Option<sassim_trace::Result<ParsedBlock>>> = Vec::new();
    // A read error met ahead, returned once the blocks before it are scanned.
    let mut read_error: Option<SimError> = None;
    while !raws.is_empty() || !parsed.is_empty() {
        let mut out: Vec<Option<sassim_trace::Result<ParsedBlock>>> = raws.iter().map(|_| None).collect();
        // The next batch is read only while the trace has not ended (no batch, or an error).
        let read_on = !raws.is_empty() && read_error.is_none();
        let mut side = [Ahead {
            rd: &mut *rd,
            scan: &mut *scan,
            parsed: std::mem::take(&mut parsed),
            read_on,
            error: None,
            next: None,
        }];
        threads
            .with_side(
                1,
                &mut side,
                &|share: &mut [Ahead<'_, '_, '_>]| {
                    for a in share {
                        a.run(&read);
                    }
                },
                || threads.for_parts(&mut raws, &mut out, &parse),
            )
            .map_err(SimError::Exec)?;
        let [ahead] = side;
        if let Some(e) = ahead.error {
            return Err(e);
        }
        parsed = out;
        raws = match ahead.next {
            Some(Ok(r)) => r,
            Some(Err(e)) => {
                read_error = Some(e);
                Vec::new()
            }
            None => Vec::new(),
        };
    }
    match read_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The calling thread's side of a parse step: the batch parsed in the step before, accepted
/// and scanned in order; then the next batch read.
struct Ahead<'r, 's, 'p> {
    rd: &'r mut KernelTraceReader,
    scan: &'s mut Scan<'p>,
    parsed: Vec<Option<sassim_trace::Result<ParsedBlock>>>,
    read_on: bool,
    error: Option<SimError>,
    next: Option<Result<Vec<RawBlock>, SimError>>,
}

impl Ahead<'_, '_, '_> {
    fn run(&mut self, read: &(dyn Fn(&mut KernelTraceReader) -> Result<Vec<RawBlock>, SimError> + Sync)) {
        for p in std::mem::take(&mut self.parsed) {
            let r = match p {
                Some(p) => p.map_err(terr).and_then(|p| self.rd.accept(p).map_err(terr)),
                None => Err(SimError::Exec("a thread block was not parsed".into())),
            };
            if let Err(e) = r.and_then(|tb| self.scan.add(tb, self.rd)) {
                self.error = Some(e);
                return;
            }
        }
        if self.read_on {
            self.next = Some(read(self.rd));
        }
    }
}
