//! Per-architecture constants of a launch.

use crate::error::ExecError;

/// Per-arch constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchInfo {
    pub sm: u32,
    /// Offset of the parameters in constant bank 0.
    pub param_offset: u32,
    /// Offset of the 64-bit global-memory descriptor (`ULDC.64 UR4, c[0x0][...]`).
    pub desc_offset: u32,
    /// Base of the CTA's shared memory in the shared window (sm_90 reserves 1 KiB).
    pub shared_base: u32,
}

impl ArchInfo {
    /// `sm_75`, `sm_86`, `sm_90`, `sm_90a`, `86`...
    pub fn parse(arch: &str) -> Result<ArchInfo, ExecError> {
        let digits: String = arch
            .trim_start_matches("sm_")
            .trim_start_matches("SM")
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let sm: u32 = digits
            .parse()
            .map_err(|_| ExecError::Launch(format!("unknown architecture `{arch}` (expected e.g. sm_86)")))?;
        let (param_offset, desc_offset, shared_base) = match sm {
            70..=89 => (0x160, 0x118, 0),
            90..=99 => (0x210, 0x208, 0x400),
            100.. => (0x380, 0x358, 0x400),
            _ => {
                return Err(ExecError::Launch(format!(
                    "architecture {arch} is not supported (sm_70 or later)"
                )))
            }
        };
        Ok(ArchInfo {
            sm,
            param_offset,
            desc_offset,
            shared_base,
        })
    }
}
