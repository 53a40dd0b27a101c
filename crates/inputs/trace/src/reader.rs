//! [`KernelTraceReader`]: one reader API for every on-disk form.

use std::path::{Path, PathBuf};

use crate::binary::BinaryParser;
use crate::error::Result;
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

    /// The next thread block, or `None` at the (verified) end of the trace.
    pub fn next_block(&mut self) -> Result<Option<ThreadBlockTrace>> {
        let r = match &mut self.inner {
            Inner::Text(p) => p.next_block(&mut self.opcodes)?,
            Inner::Binary(p) => p.next_block(&mut self.opcodes)?,
        };
        if let Some(tb) = &r {
            self.blocks += 1;
            self.instrs += tb.n_instrs();
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
