//! [`KernelTraceReader`]: one reader API for every on-disk form.

use std::path::{Path, PathBuf};

use crate::binary::BinaryParser;
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
        match &r {
            Some(tb) => {
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
            }
            None if self.blocks == 0 => {
                return Err(TraceError::Truncated {
                    path: self.path.clone(),
                    line,
                    field: "#BEGIN_TB",
                    msg: format!(
                        "no thread block: the trace ends after its header (the grid has {} blocks)",
                        self.header.num_blocks()
                    ),
                })
            }
            None => {}
        }
        Ok(r)
    }
}

impl Iterator for KernelTraceReader {
    type Item = Result<ThreadBlockTrace>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_block().transpose()
    }
}
