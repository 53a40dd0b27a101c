//! Opening trace files: detection of the container (plain text, xz, gzip,
//! zstd, sassim binary) by magic bytes, with the file extension as a fallback
//! for empty files.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{Result, TraceError};

/// Magic bytes at the start of a sassim binary trace.
pub const BINARY_MAGIC: &[u8; 8] = b"SASSIMBT";

const XZ_MAGIC: &[u8] = &[0xFD, b'7', b'z', b'X', b'Z', 0x00];
const GZ_MAGIC: &[u8] = &[0x1F, 0x8B];
const ZSTD_MAGIC: &[u8] = &[0x28, 0xB5, 0x2F, 0xFD];

/// How a trace file is stored on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    /// Uncompressed text.
    Plain,
    /// xz-compressed text (`.xz`).
    Xz,
    /// gzip-compressed text (`.gz`).
    Gzip,
    /// zstd-compressed text (`.zst`).
    Zstd,
    /// sassim compact binary trace (see `docs/trace-format.md`).
    Binary,
}

impl Container {
    /// Guess from the file name alone.
    pub fn from_extension(path: &Path) -> Container {
        match path.extension().and_then(|e| e.to_str()) {
            Some("xz") => Container::Xz,
            Some("gz") => Container::Gzip,
            Some("zst") | Some("zstd") => Container::Zstd,
            Some("sasstrace") | Some("sbt") => Container::Binary,
            _ => Container::Plain,
        }
    }

    /// Detect from the first bytes of the file.
    pub fn from_magic(head: &[u8]) -> Option<Container> {
        if head.starts_with(BINARY_MAGIC) {
            Some(Container::Binary)
        } else if head.starts_with(XZ_MAGIC) {
            Some(Container::Xz)
        } else if head.starts_with(GZ_MAGIC) {
            Some(Container::Gzip)
        } else if head.starts_with(ZSTD_MAGIC) {
            Some(Container::Zstd)
        } else {
            None
        }
    }
}

/// Detect the container of `path` (magic first, then extension).
pub fn detect(path: &Path) -> Result<Container> {
    let mut f = File::open(path).map_err(|e| TraceError::io(path, 0, e))?;
    let mut head = [0u8; 8];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TraceError::io(path, 0, e)),
        }
    }
    Ok(Container::from_magic(&head[..n]).unwrap_or_else(|| {
        if n == 0 {
            Container::from_extension(path)
        } else {
            Container::Plain
        }
    }))
}

const BUF: usize = 1 << 16;

/// Open a text file (possibly compressed) as a buffered reader of the
/// decompressed text. Multi-stream xz / multi-member gzip / multi-frame zstd
/// files are read to the end.
pub fn open_text(path: &Path) -> Result<(Container, Box<dyn BufRead + Send>)> {
    let c = detect(path)?;
    let f = File::open(path).map_err(|e| TraceError::io(path, 0, e))?;
    let raw = BufReader::with_capacity(BUF, f);
    let r: Box<dyn BufRead + Send> = match c {
        Container::Plain | Container::Binary => Box::new(raw),
        Container::Xz => Box::new(BufReader::with_capacity(
            BUF,
            xz2::bufread::XzDecoder::new_multi_decoder(raw),
        )),
        Container::Gzip => Box::new(BufReader::with_capacity(
            BUF,
            flate2::bufread::MultiGzDecoder::new(raw),
        )),
        Container::Zstd => {
            let d = zstd::stream::read::Decoder::with_buffer(raw).map_err(|e| TraceError::io(path, 0, e))?;
            Box::new(BufReader::with_capacity(BUF, d))
        }
    };
    Ok((c, r))
}
