//! `.nv.info` and `.nv.info.<kernel>` attributes (EIATTR records).
//!
//! Each record is a format byte, an attribute byte and then, by format: `0x01` nothing,
//! `0x02` one byte, `0x03` a 16-bit value, `0x04` a 16-bit size followed by that many bytes.
//! Records are 4-byte aligned in the files ptxas 13.5 writes. The attribute numbers below
//! are the ones `nvdisasm` 13.5 names when it prints the same sections (checked on the
//! cubins of `workloads/programs`).

use crate::error::{CubinError, Result};

/// `EIATTR_PARAM_CBANK`: constant-bank section, parameter offset and size.
pub const PARAM_CBANK: u8 = 0x0a;
/// `EIATTR_KPARAM_INFO`: one kernel parameter (ordinal, offset, size).
pub const KPARAM_INFO: u8 = 0x17;
/// `EIATTR_CBANK_PARAM_SIZE`.
pub const CBANK_PARAM_SIZE: u8 = 0x19;
/// `EIATTR_MAX_THREADS` (`__launch_bounds__`): x, y, z.
pub const MAX_THREADS: u8 = 0x05;
/// `EIATTR_REQNTID` (`__cluster_dims__`-style required block size).
pub const REQNTID: u8 = 0x10;
/// `EIATTR_FRAME_SIZE` (per function, in `.nv.info`): symbol index, bytes.
pub const FRAME_SIZE: u8 = 0x11;
/// `EIATTR_MIN_STACK_SIZE` (per function, in `.nv.info`): symbol index, bytes.
pub const MIN_STACK_SIZE: u8 = 0x12;
/// `EIATTR_REGCOUNT` (per function, in `.nv.info`): symbol index, registers.
pub const REGCOUNT: u8 = 0x2f;
/// `EIATTR_EXTERNS`: symbol indices of external functions (`vprintf`, `__assertfail`…).
pub const EXTERNS: u8 = 0x0f;
/// `EIATTR_CRS_STACK_SIZE`.
pub const CRS_STACK_SIZE: u8 = 0x1e;
/// `EIATTR_CTA_PER_CLUSTER`: x, y, z.
pub const CTA_PER_CLUSTER: u8 = 0x3d;
/// `EIATTR_MAXREG_COUNT`.
pub const MAXREG_COUNT: u8 = 0x1b;

/// One attribute record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr {
    pub id: u8,
    /// Format byte (1: none, 2: byte, 3: half-word, 4: sized block).
    pub format: u8,
    /// Value for formats 2 and 3.
    pub value: u16,
    /// Data for format 4.
    pub data: Vec<u8>,
}

impl Attr {
    /// The `i`-th 32-bit word of the data block.
    pub fn word(&self, i: usize) -> Option<u32> {
        Some(u32::from_le_bytes(
            self.data.get(4 * i..4 * i + 4)?.try_into().ok()?,
        ))
    }
    /// The 16-bit value at byte offset `at` of the data block.
    pub fn half(&self, at: usize) -> Option<u16> {
        Some(u16::from_le_bytes(self.data.get(at..at + 2)?.try_into().ok()?))
    }
}

/// Parse a whole `.nv.info*` section.
pub fn parse(bytes: &[u8], section: &str, origin: &str) -> Result<Vec<Attr>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        if bytes.len() - at < 2 {
            if bytes[at..].iter().all(|b| *b == 0) {
                break;
            }
            return Err(CubinError::Elf {
                origin: origin.to_string(),
                what: format!("{section}: record at offset {at:#x} is cut"),
            });
        }
        let format = bytes[at];
        let id = bytes[at + 1];
        let rec = match format {
            0x01 => {
                at += 4;
                Attr {
                    id,
                    format,
                    value: 0,
                    data: Vec::new(),
                }
            }
            0x02 => {
                let v = bytes.get(at + 2).copied().unwrap_or(0);
                at += 4;
                Attr {
                    id,
                    format,
                    value: v as u16,
                    data: Vec::new(),
                }
            }
            0x03 => {
                let v = bytes
                    .get(at + 2..at + 4)
                    .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
                at += 4;
                Attr {
                    id,
                    format,
                    value: v,
                    data: Vec::new(),
                }
            }
            0x04 => {
                let n = bytes
                    .get(at + 2..at + 4)
                    .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
                    .ok_or_else(|| CubinError::Elf {
                        origin: origin.to_string(),
                        what: format!("{section}: record at offset {at:#x} is cut"),
                    })?;
                let data = bytes.get(at + 4..at + 4 + n).ok_or_else(|| CubinError::Elf {
                    origin: origin.to_string(),
                    what: format!(
                        "{section}: attribute {id:#04x} at offset {at:#x} announces {n} bytes past the section end"
                    ),
                })?;
                at += 4 + n;
                at = at.div_ceil(4) * 4;
                Attr {
                    id,
                    format,
                    value: 0,
                    data: data.to_vec(),
                }
            }
            0x00 if bytes[at..].iter().all(|b| *b == 0) => break,
            f => {
                return Err(CubinError::Elf {
                    origin: origin.to_string(),
                    what: format!("{section}: unknown attribute format {f:#04x} at offset {at:#x}"),
                })
            }
        };
        out.push(rec);
    }
    Ok(out)
}
