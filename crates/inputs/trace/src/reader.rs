//! [`KernelTraceReader`]: one reader API for every on-disk form.

use std::path::{Path, PathBuf};

use crate::binary::BinaryParser;
use crate::block::{adopt_opcodes, BlockParser, ParsedBlock, RawBlock};
use crate::error::{Result, TraceError};
use crate::header::KernelHeader;
use crate::record::{OpcodeId, OpcodeTable, ThreadBlockTrace};
use crate::source::{self, Container};
use crate::text::TextParser;

enum Inner {
    Text(TextParser),
    Binary(Box<BinaryParser>),
}

/// Streaming reader of one kernel trace (`.traceg`, `.traceg.xz/.gz/.zst`
/// or a sassim binary trace). Memory use is bounded by one thread block.
pub struct KernelTraceReader {
    path: PathBuf,
    container: Container,
    header: KernelHeader,
    opcodes: OpcodeTable,
    inner: Inner,
    blocks: u64,
    instrs: u64,
    /// Raw blocks returned and not accepted yet.
    raw_blocks: u64,
    /// An error found after the raw blocks last returned.
    pending: Option<TraceError>,
}

impl KernelTraceReader {
    /// Open `path`, detect its container by magic bytes, and parse the header.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let container = source::detect(path)?;
        let (inner, header) = if container == Container::Binary {
            let (p, h) = BinaryParser::open(path)?;
            (Inner::Binary(Box::new(p)), h)
        } else {
            let (c, rd) = source::open_text(path)?;
            debug_assert_eq!(c, container);
            let (p, h) = TextParser::open(path, rd)?;
            (Inner::Text(p), h)
        };
        Ok(KernelTraceReader {
            path: path.to_path_buf(),
            container,
            header,
            opcodes: OpcodeTable::new(),
            inner,
            blocks: 0,
            instrs: 0,
            raw_blocks: 0,
            pending: None,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How the file is stored.
    pub fn container(&self) -> Container {
        self.container
    }

    pub fn header(&self) -> &KernelHeader {
        &self.header
    }

    /// Opcode strings seen so far (ids are stable).
    pub fn opcodes(&self) -> &OpcodeTable {
        &self.opcodes
    }

    /// Full opcode string of `id`.
    pub fn opcode_name(&self, id: OpcodeId) -> &str {
        self.opcodes.name(id)
    }

    /// Blocks and instructions returned so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.blocks, self.instrs)
    }

    /// The next thread block, or `None` at the (verified) end of the trace. A block whose
    /// index lies outside the header's grid, and a trace without any block, are errors.
    pub fn next_block(&mut self) -> Result<Option<ThreadBlockTrace>> {
        let r = match &mut self.inner {
            Inner::Text(p) => p.next_block(&mut self.opcodes)?,
            Inner::Binary(p) => p.next_block(&mut self.opcodes)?,
        };
        let line = match &self.inner {
            Inner::Text(p) => p.line(),
            Inner::Binary(_) => 0,
        };
        match r {
            Some(tb) => self.count(tb, line).map(Some),
            None => self.at_end(line).map(|()| None),
        }
    }

    /// `tb`, checked against the grid and counted.
    fn count(&mut self, tb: ThreadBlockTrace, line: u64) -> Result<ThreadBlockTrace> {
        let g = self.header.grid;
        if (0..3).any(|i| tb.block[i] >= g[i]) {
            return Err(TraceError::Parse {
                path: self.path.clone(),
                line,
                field: "thread block",
                msg: format!(
                    "block ({},{},{}) (record {}) lies outside the grid ({},{},{})",
                    tb.block[0], tb.block[1], tb.block[2], self.blocks, g[0], g[1], g[2]
                ),
            });
        }
        self.blocks += 1;
        self.instrs += tb.n_instrs();
        Ok(tb)
    }

    /// The end of the trace: an error when no block came before it.
    fn at_end(&self, line: u64) -> Result<()> {
        if self.blocks + self.raw_blocks > 0 {
            return Ok(());
        }
        Err(TraceError::Truncated {
            path: self.path.clone(),
            line,
            field: "#BEGIN_TB",
            msg: format!(
                "no thread block: the trace ends after its header (the grid has {} blocks)",
                self.header.num_blocks()
            ),
        })
    }

    /// Text traces: read the lines of up to `max_blocks` thread blocks (at least one; no
    /// more once `max_bytes` of text are held) without parsing them, for
    /// [`BlockParser::parse`] (on any thread) and then [`KernelTraceReader::accept`] in
    /// order: the same blocks and errors as [`KernelTraceReader::next_block`]. Empty at
    /// the end of the trace. An error found after the blocks returned (a line that is not
    /// `#BEGIN_TB`) is returned by the next call. `None` for a binary trace (use
    /// `next_block`).
    pub fn next_raw_blocks(&mut self, max_blocks: usize, max_bytes: usize) -> Option<Result<Vec<RawBlock>>> {
        let Inner::Text(p) = &mut self.inner else {
            return None;
        };
        if let Some(e) = self.pending.take() {
            return Some(Err(e));
        }
        let mut out: Vec<RawBlock> = Vec::new();
        let mut bytes = 0usize;
        while out.len() < max_blocks.max(1) && (out.is_empty() || bytes < max_bytes) {
            match p.next_raw() {
                Ok(Some(raw)) => {
                    bytes += raw.len();
                    self.raw_blocks += 1;
                    out.push(raw);
                    if out.last().is_some_and(|r| r.ends_early()) {
                        break;
                    }
                }
                Ok(None) => {
                    if out.is_empty() {
                        let line = p.line();
                        if let Err(e) = self.at_end(line) {
                            return Some(Err(e));
                        }
                    }
                    break;
                }
                Err(e) if out.is_empty() => return Some(Err(e)),
                Err(e) => {
                    self.pending = Some(e);
                    break;
                }
            }
        }
        Some(Ok(out))
    }

    /// What parses this trace's raw blocks (`None` for a binary trace).
    pub fn block_parser(&self) -> Option<BlockParser> {
        match &self.inner {
            Inner::Text(p) => Some(p.block_parser()),
            Inner::Binary(_) => None,
        }
    }

    /// The thread block of a [`BlockParser::parse`] result, with this reader's opcode ids,
    /// checked against the grid and counted (call it in the order of the raw blocks).
    pub fn accept(&mut self, mut p: ParsedBlock) -> Result<ThreadBlockTrace> {
        adopt_opcodes(&mut p, &mut self.opcodes, &self.path)?;
        self.raw_blocks = self.raw_blocks.saturating_sub(1);
        self.count(p.tb, p.end_line)
    }
}

impl Iterator for KernelTraceReader {
    type Item = Result<ThreadBlockTrace>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_block().transpose()
    }
}
