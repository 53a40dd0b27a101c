//! sassim-trace: reader of Accel-Sim SASS traces.
//!
//! * [`read_kernelslist`] reads `kernelslist.g`.
//! * [`KernelTraceReader`] streams one kernel trace, one thread block at a
//!   time, from text (every tracer version: pre-v3 with the block prefix, v3,
//!   v4, both v5 dialects, v6), compressed text (`.xz`, `.gz`, `.zst`,
//!   detected by magic bytes) or the compact sassim binary format.
//! * [`convert`] writes the binary format, [`write_text`] writes text back.
//!
//! See `docs/trace-format.md` for the formats.

mod binary;
mod block;
mod error;
mod header;
pub mod interleave;
mod kernelslist;
mod line;
mod reader;
mod record;
mod scan;
mod source;
pub mod synthetic;
mod text;

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

pub use binary::{BinaryWriter, ConvertOptions, FORMAT_VERSION};
pub use block::{BlockParser, ParsedBlock, RawBlock};
pub use error::{Result, TraceError};
pub use header::{Dialect, KernelHeader};
pub use kernelslist::{read_kernelslist, TraceCommand};
pub use reader::KernelTraceReader;
pub use record::{
    flags, AddrMode, ClusterInfo, OpcodeId, OpcodeTable, Reg, RegKind, ThreadBlockTrace, TraceInstr,
    WarpTrace, MAX_DST, MAX_SRC, WARP_SIZE,
};
pub use source::{detect, Container, BINARY_MAGIC};
pub use text::TextWriter;

/// Totals of a conversion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConvertStats {
    pub blocks: u64,
    pub instrs: u64,
    pub in_bytes: u64,
    pub out_bytes: u64,
}

/// Convert any readable trace (text, compressed text or binary) at `input`
/// into the binary format at `output`, with default options.
pub fn convert(input: impl AsRef<Path>, output: impl AsRef<Path>) -> Result<ConvertStats> {
    convert_with(input, output, &ConvertOptions::default())
}

/// [`convert`] with explicit options.
pub fn convert_with(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    opts: &ConvertOptions,
) -> Result<ConvertStats> {
    let (input, output) = (input.as_ref(), output.as_ref());
    let mut rd = KernelTraceReader::open(input)?;
    let mut w = BinaryWriter::create(output, rd.header(), opts)?;
    while let Some(tb) = rd.next_block()? {
        w.write_block(&tb, rd.opcodes())?;
    }
    w.finish()?;
    let (blocks, instrs) = rd.counts();
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    Ok(ConvertStats {
        blocks,
        instrs,
        in_bytes: size(input),
        out_bytes: size(output),
    })
}

/// Write any readable trace at `input` as an uncompressed text trace at
/// `output` (the dialect of its header). Reading the result gives the same
/// records as reading `input`.
pub fn write_text(input: impl AsRef<Path>, output: impl AsRef<Path>) -> Result<ConvertStats> {
    let (input, output) = (input.as_ref(), output.as_ref());
    let mut rd = KernelTraceReader::open(input)?;
    let f = File::create(output).map_err(|e| TraceError::io(output, 0, e))?;
    let mut w = TextWriter::new(BufWriter::with_capacity(1 << 16, f), rd.header(), output)?;
    while let Some(tb) = rd.next_block()? {
        w.write_block(&tb, rd.opcodes())?;
    }
    w.finish()?;
    let (blocks, instrs) = rd.counts();
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    Ok(ConvertStats {
        blocks,
        instrs,
        in_bytes: size(input),
        out_bytes: size(output),
    })
}
