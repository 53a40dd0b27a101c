//! Compiler control bits of Volta-and-later SASS (modern-nvidia-gpu-cores.txt §4;
//! MICRO'25 reference A4).
//!
//! Every 128-bit instruction carries, in the high 64-bit word, a 17-bit control
//! field starting at bit 41 and four operand-reuse flags at bits 58–61.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Number of dependence counters (SB0–SB5) per warp.
pub const NUM_DEP_COUNTERS: usize = 6;

/// Decoded control bits of one instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ControlBits {
    /// Stall counter, 0–15 cycles.
    pub stall: u8,
    /// Yield: the warp gives up the next issue cycle (raw bit 4 clear).
    #[serde(rename = "yield")]
    pub yield_: bool,
    /// Dependence counter incremented at issue and decremented at write-back (RAW/WAW).
    pub write_sb: Option<u8>,
    /// Dependence counter incremented at issue and decremented after the sources are read (WAR).
    pub read_sb: Option<u8>,
    /// Dependence counters that must be zero before the instruction issues (bit k = SBk).
    pub wait_mask: u8,
    /// Operand-reuse flags (bit k = source operand slot k).
    pub reuse: u8,
}

impl Default for ControlBits {
    /// The microbenchmark dialect's default `[B------:R-:W-:-:S01]`.
    fn default() -> Self {
        ControlBits {
            stall: 1,
            yield_: false,
            write_sb: None,
            read_sb: None,
            wait_mask: 0,
            reuse: 0,
        }
    }
}

impl ControlBits {
    /// Decode from the high 64-bit word of a 128-bit encoding.
    ///
    /// `ctrl = hi >> 41`: stall = bits 0–3, yield = NOT bit 4, write counter = bits 5–7
    /// (7 = none), read counter = bits 8–10 (7 = none), wait mask = bits 11–16.
    /// Reuse flags = bits 58–61 of `hi`.
    pub fn decode(hi: u64) -> Self {
        let ctrl = hi >> 41;
        let sb = |v: u64| -> Option<u8> {
            let v = (v & 7) as u8;
            (v != 7).then_some(v)
        };
        ControlBits {
            stall: (ctrl & 0xf) as u8,
            yield_: (ctrl >> 4) & 1 == 0,
            write_sb: sb(ctrl >> 5),
            read_sb: sb(ctrl >> 8),
            wait_mask: ((ctrl >> 11) & 0x3f) as u8,
            reuse: ((hi >> 58) & 0xf) as u8,
        }
    }

    /// Encode into the bits of a high word (the other bits are zero).
    pub fn encode(&self) -> u64 {
        let mut ctrl: u64 = (self.stall as u64) & 0xf;
        if !self.yield_ {
            ctrl |= 1 << 4;
        }
        ctrl |= (self.write_sb.unwrap_or(7) as u64 & 7) << 5;
        ctrl |= (self.read_sb.unwrap_or(7) as u64 & 7) << 8;
        ctrl |= (self.wait_mask as u64 & 0x3f) << 11;
        (ctrl << 41) | ((self.reuse as u64 & 0xf) << 58)
    }

    /// Whether counter `sb` is in the wait mask.
    pub fn waits_on(&self, sb: usize) -> bool {
        self.wait_mask & (1 << sb) != 0
    }
}

/// Printed in the microbenchmark dialect's notation, e.g. `[B0--3--:R-:W2:Y:S02]`.
impl fmt::Display for ControlBits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[B")?;
        for k in 0..NUM_DEP_COUNTERS {
            if self.waits_on(k) {
                write!(f, "{k}")?;
            } else {
                f.write_str("-")?;
            }
        }
        let sb = |v: Option<u8>| v.map_or("-".to_string(), |v| v.to_string());
        write!(
            f,
            ":R{}:W{}:{}:S{:02}]",
            sb(self.read_sb),
            sb(self.write_sb),
            if self.yield_ { "Y" } else { "-" },
            self.stall
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_reference_words() {
        // vec_add_sm86.control-bits.txt, /*0030*/ and /*0100*/.
        let c = ControlBits::decode(0x001fca00078e0203);
        assert_eq!((c.stall, c.yield_, c.write_sb, c.read_sb), (5, true, None, None));
        assert_eq!(c.wait_mask, 0b000001);
        let c = ControlBits::decode(0x048fe20000400000);
        assert_eq!(
            (c.stall, c.yield_, c.wait_mask, c.reuse),
            (1, false, 0b001000, 0b0001)
        );
        let c = ControlBits::decode(0x0001f2000c101904);
        assert_eq!((c.stall, c.read_sb, c.write_sb), (9, Some(0), None));
    }

    #[test]
    fn encode_roundtrip_and_display() {
        for hi in [0x001fca00078e0203u64, 0x048fe20000400000, 0x000ea2000c1e1900] {
            let c = ControlBits::decode(hi);
            assert_eq!(ControlBits::decode(c.encode()), c);
        }
        let c = ControlBits::decode(0x000ea2000c1e1900);
        assert_eq!(c.to_string(), "[B------:R-:W2:-:S01]");
        assert_eq!(ControlBits::default().to_string(), "[B------:R-:W-:-:S01]");
    }
}
