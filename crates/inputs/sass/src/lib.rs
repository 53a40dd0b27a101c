//! `sassim-sass`: parsers for SASS listings and for the microbenchmark dialect.
//!
//! - [`parse_listing`] reads `cuobjdump -sass` and `nvdisasm -hex` listings (auto-detected)
//!   into a [`sassim_isa::Listing`].
//! - [`microbench`] reads and writes the hand-written microbenchmark dialect
//!   (see `docs/microbench.md`).
//! - [`disasm_json`] / [`disasm_text`] render a listing for `sassim disasm`.
//!
//! Every parsed instruction has [`sassim_isa::infer_widths`] applied and its label
//! targets resolved (`Target::Label { addr: Some(..) }`). Errors carry file, line,
//! column and what was expected; no input makes the parsers panic.

mod listing;
pub mod microbench;
mod syntax;

pub use listing::{disasm_json, disasm_text};
pub use microbench::{ElemType, InitValue, MemInit, Microbench, RegInit};

use sassim_isa::Listing;
use std::path::Path;

/// A parse error: where (1-based line and column) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct ParseError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl ParseError {
    pub fn new(file: &str, line: usize, column: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            file: file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }
}

/// Parse a `cuobjdump -sass` or `nvdisasm [-hex]` listing (the format is auto-detected).
pub fn parse_listing(text: &str, file: &str) -> Result<Listing, ParseError> {
    listing::parse(text, file)
}

/// Read and parse a listing file.
pub fn parse_listing_file(path: &Path) -> Result<Listing, ParseError> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    parse_listing(&text, &file)
}

pub(crate) fn read_text(path: &Path) -> Result<String, ParseError> {
    let file = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|e| ParseError::new(&file, 0, 0, format!("cannot read file: {e}")))?;
    String::from_utf8(bytes).map_err(|e| ParseError::new(&file, 0, 0, format!("file is not UTF-8: {e}")))
}
