//! The CUDA fat-binary container: a header followed by entries, each a cubin (ELF) or PTX
//! text for one architecture, optionally compressed.
//!
//! Layout (little-endian), as written by `fatbinary` 13.5 and read back by `cuobjdump`:
//! - container header (16 bytes): magic `0xBA55ED50`, version `u16` (1), header size `u16`
//!   (16), payload size `u64` (the entries that follow the header);
//! - entry header (`header_size` bytes, 64 for cubins, 80 for PTX): kind `u16` (1 = PTX,
//!   2 = ELF), `u16`, header size `u32`, payload size `u64` (padded), compressed size `u32`,
//!   options offset `u32`, minor `u16`, major `u16`, arch `u32` (e.g. 86), identifier
//!   offset and length `u32`s, flags `u64`, `u64`, uncompressed size `u64`.
//!
//! Flag bits used here: `0x2000` the payload is LZ4 block-compressed (CUDA 11–12),
//! `0x8000` it is a zstd frame (CUDA 13's `-compress-mode`). Checked against the entries
//! of nvcc 13.5 executables built with and without `-Xfatbin -compress-all`
//! (`crates/inputs/cubin/tests`).

use crate::error::{CubinError, Result};

/// Magic number of a fat-binary container.
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// Magic number of the `__fatBinC_Wrapper_t` that `__cudaRegisterFatBinary` receives.
pub const WRAPPER_MAGIC: u32 = 0x4662_43B1;
/// Size of the container header.
pub const HEADER_BYTES: usize = 16;
/// Largest container or uncompressed entry accepted (1 GiB): a bound on what a corrupt
/// size field can make the reader allocate.
pub const MAX_BYTES: u64 = 1 << 30;

const FLAG_LZ4: u64 = 0x2000;
const FLAG_ZSTD: u64 = 0x8000;
const ENTRY_MIN_HEADER: u32 = 64;

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A cubin (ELF with SASS).
    Cubin,
    /// PTX text, to be compiled by the driver (sassim cannot run it).
    Ptx,
    /// Another kind (e.g. LTO-IR); kept to be reported.
    Other(u16),
}

/// How an entry was stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Lz4,
    Zstd,
}

/// One entry of a fat binary, decompressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatEntry {
    pub kind: EntryKind,
    /// SM number (`86` for sm_86).
    pub arch: u32,
    pub compression: Compression,
    /// The cubin or PTX bytes (decompressed).
    pub data: Vec<u8>,
}

impl FatEntry {
    /// `sm_86`.
    pub fn arch_name(&self) -> String {
        format!("sm_{}", self.arch)
    }
}

/// A parsed fat-binary container.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FatBinary {
    pub entries: Vec<FatEntry>,
}

fn rd_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn rd_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn rd_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The total size (header + payload) of the container starting at `bytes`, from its header
/// alone (for reading a registered container out of process memory). `bytes` must hold at
/// least [`HEADER_BYTES`].
pub fn container_size(header: &[u8], origin: &str) -> Result<usize> {
    let err = |what: String| CubinError::FatBinary {
        origin: origin.to_string(),
        what,
    };
    let magic = rd_u32(header, 0).ok_or_else(|| err("shorter than its 16-byte header".into()))?;
    if magic != FATBIN_MAGIC {
        return Err(err(format!(
            "bad magic {magic:#010x} (expected {FATBIN_MAGIC:#010x})"
        )));
    }
    let hsize = rd_u16(header, 6).unwrap_or(0) as u64;
    let size = rd_u64(header, 8).unwrap_or(0);
    if !(HEADER_BYTES as u64..=4096).contains(&hsize) {
        return Err(err(format!("header size {hsize} (expected 16)")));
    }
    let total = hsize
        .checked_add(size)
        .filter(|t| *t <= MAX_BYTES)
        .ok_or_else(|| err(format!("payload size {size} exceeds the {MAX_BYTES}-byte limit")))?;
    Ok(total as usize)
}

impl FatBinary {
    /// Parse one container at the start of `bytes`; returns it and the bytes it spans.
    pub fn parse(bytes: &[u8], origin: &str) -> Result<(FatBinary, usize)> {
        let err = |what: String| CubinError::FatBinary {
            origin: origin.to_string(),
            what,
        };
        let total = container_size(bytes, origin)?;
        if total > bytes.len() {
            return Err(err(format!(
                "truncated: the header announces {total} bytes, {} are present",
                bytes.len()
            )));
        }
        let hsize = rd_u16(bytes, 6).unwrap_or(16) as usize;
        let mut at = hsize;
        let mut fb = FatBinary::default();
        while at < total {
            if total - at < ENTRY_MIN_HEADER as usize {
                // Trailing padding.
                if bytes[at..total].iter().all(|b| *b == 0) {
                    break;
                }
                return Err(err(format!("entry at offset {at}: shorter than an entry header")));
            }
            let kind = rd_u16(bytes, at).unwrap_or(0);
            let ehsize = rd_u32(bytes, at + 4).unwrap_or(0);
            let psize = rd_u64(bytes, at + 8).unwrap_or(0);
            let csize = rd_u32(bytes, at + 16).unwrap_or(0) as u64;
            let arch = rd_u32(bytes, at + 28).unwrap_or(0);
            let flags = rd_u64(bytes, at + 40).unwrap_or(0);
            let usize_ = rd_u64(bytes, at + 56).unwrap_or(0);
            if kind == 0 && ehsize == 0 && psize == 0 {
                break; // zero padding at the end of the container
            }
            if !(ENTRY_MIN_HEADER..=4096).contains(&ehsize) {
                return Err(err(format!("entry at offset {at}: header size {ehsize}")));
            }
            let start = at + ehsize as usize;
            let end = (start as u64)
                .checked_add(psize)
                .filter(|e| *e <= total as u64)
                .ok_or_else(|| {
                    err(format!(
                        "entry at offset {at}: payload of {psize} bytes runs past the container's {total} bytes"
                    ))
                })? as usize;
            let payload = &bytes[start..end];
            let compression = if flags & FLAG_ZSTD != 0 {
                Compression::Zstd
            } else if flags & FLAG_LZ4 != 0 {
                Compression::Lz4
            } else {
                Compression::None
            };
            let data = match compression {
                Compression::None => payload.to_vec(),
                _ => {
                    if csize > psize {
                        return Err(err(format!(
                            "entry at offset {at}: compressed size {csize} exceeds its payload of {psize} bytes"
                        )));
                    }
                    if usize_ == 0 || usize_ > MAX_BYTES {
                        return Err(err(format!(
                            "entry at offset {at}: uncompressed size {usize_} (1 to {MAX_BYTES} bytes)"
                        )));
                    }
                    decompress(compression, &payload[..csize as usize], usize_ as usize)
                        .map_err(|e| err(format!("entry at offset {at} (sm_{arch}): {e}")))?
                }
            };
            fb.entries.push(FatEntry {
                kind: match kind {
                    1 => EntryKind::Ptx,
                    2 => EntryKind::Cubin,
                    k => EntryKind::Other(k),
                },
                arch,
                compression,
                data,
            });
            at = end;
        }
        Ok((fb, total))
    }

    /// Every container in a `.nv_fatbin` section (containers follow each other, aligned).
    pub fn parse_section(section: &[u8], origin: &str) -> Result<Vec<FatBinary>> {
        let mut out = Vec::new();
        let mut at = 0usize;
        while at + HEADER_BYTES <= section.len() {
            if rd_u32(section, at) != Some(FATBIN_MAGIC) {
                at += 1; // alignment padding between containers
                continue;
            }
            let (fb, n) = FatBinary::parse(&section[at..], origin)?;
            out.push(fb);
            at += n;
        }
        Ok(out)
    }

    /// Architectures of the cubins, sorted.
    pub fn cubin_archs(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .entries
            .iter()
            .filter(|e| e.kind == EntryKind::Cubin)
            .map(|e| e.arch)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Architectures present as PTX only.
    pub fn ptx_archs(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .entries
            .iter()
            .filter(|e| e.kind == EntryKind::Ptx)
            .map(|e| e.arch)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

fn decompress(c: Compression, data: &[u8], size: usize) -> std::result::Result<Vec<u8>, String> {
    let out = match c {
        Compression::Lz4 => lz4_flex::block::decompress(data, size).map_err(|e| format!("LZ4: {e}"))?,
        Compression::Zstd => {
            let mut out = Vec::with_capacity(size.min(1 << 24));
            let mut dec = zstd::stream::read::Decoder::new(data).map_err(|e| format!("zstd: {e}"))?;
            // Read at most one byte more than announced, to detect a longer stream.
            use std::io::Read;
            (&mut dec)
                .take(size as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|e| format!("zstd: {e}"))?;
            out
        }
        Compression::None => data.to_vec(),
    };
    if out.len() != size {
        return Err(format!(
            "decompressed to {} bytes, the header announces {size}",
            out.len()
        ));
    }
    Ok(out)
}
