//! In-memory records: registers, instructions, warps and thread blocks.

use std::collections::HashMap;
use std::fmt;

/// Most destination registers one record can carry. Upstream tracers print at
/// most 1; the Hopper line may print more.
pub const MAX_DST: usize = 4;
/// Most source registers one record can carry (`MAX_SRC 5` in the tracer).
pub const MAX_SRC: usize = 5;
/// Lanes per warp.
pub const WARP_SIZE: usize = 32;

/// Register file a register operand belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum RegKind {
    /// General purpose register `R<n>` (RZ = R255).
    #[default]
    R = 0,
    /// Uniform register `UR<n>` (URZ = UR63).
    UR = 1,
    /// Predicate `P<n>` (PT = P7).
    P = 2,
    /// Uniform predicate `UP<n>` (UPT = UP7).
    UP = 3,
}

impl RegKind {
    pub(crate) fn from_u8(v: u8) -> Option<RegKind> {
        Some(match v {
            0 => RegKind::R,
            1 => RegKind::UR,
            2 => RegKind::P,
            3 => RegKind::UP,
            _ => return None,
        })
    }

    /// Text prefix (`R`, `UR`, `P`, `UP`).
    pub fn prefix(self) -> &'static str {
        match self {
            RegKind::R => "R",
            RegKind::UR => "UR",
            RegKind::P => "P",
            RegKind::UP => "UP",
        }
    }
}

/// A register operand as printed by the tracer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg {
    pub kind: RegKind,
    pub num: u8,
}

impl Reg {
    /// `RZ` as printed by the tracer (`R255`).
    pub const RZ: Reg = Reg {
        kind: RegKind::R,
        num: 255,
    };

    pub const fn r(num: u8) -> Reg {
        Reg {
            kind: RegKind::R,
            num,
        }
    }

    /// Parse `R5`, `UR4`, `P0`, `UP1`, `RZ`, `URZ`, `PT`, `UPT`.
    pub fn parse(tok: &[u8]) -> Option<Reg> {
        let (kind, rest) = if let Some(r) = tok.strip_prefix(b"UR") {
            (RegKind::UR, r)
        } else if let Some(r) = tok.strip_prefix(b"UP") {
            (RegKind::UP, r)
        } else if let Some(r) = tok.strip_prefix(b"R") {
            (RegKind::R, r)
        } else if let Some(r) = tok.strip_prefix(b"P") {
            (RegKind::P, r)
        } else {
            return None;
        };
        let num = match (kind, rest) {
            (RegKind::R, b"Z") => 255,
            (RegKind::UR, b"Z") => 63,
            (RegKind::P | RegKind::UP, b"T") => 7,
            _ => {
                if rest.is_empty() || rest.len() > 3 || !rest.iter().all(u8::is_ascii_digit) {
                    return None;
                }
                let v = rest.iter().fold(0u32, |a, &d| a * 10 + u32::from(d - b'0'));
                u8::try_from(v).ok()?
            }
        };
        Some(Reg { kind, num })
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.kind.prefix(), self.num)
    }
}

/// Interned opcode string id (index into an [`OpcodeTable`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpcodeId(pub u16);

/// Per-reader table of full opcode strings (`LDG.E.64`, `IMAD.MOV.U32`, ...).
/// Ids are assigned in order of first appearance and never change while a
/// reader is alive.
#[derive(Clone, Debug, Default)]
pub struct OpcodeTable {
    names: Vec<Box<str>>,
    /// Each name's id, once there are more than [`SCAN_NAMES`] (empty before).
    map: HashMap<Box<str>, OpcodeId>,
    /// Ids of recently interned names by a cheap hash of their bytes (id + 1; 0: none):
    /// the common lookup of a text trace's opcode, checked by comparing the bytes.
    recent: Vec<u16>,
}

/// Most names an [`OpcodeTable`] looks up by comparing them one by one, without its
/// hash map: a thread block's own table (one per block of a text trace) holds a few, and
/// the map's two allocations per name cost more than the comparisons.
const SCAN_NAMES: usize = 16;

/// Slot of `b` (not empty) in [`OpcodeTable::recent`].
#[inline]
fn recent_slot(b: &[u8]) -> usize {
    let n = b.len();
    let h = (n as u32)
        .wrapping_mul(31)
        .wrapping_add(u32::from(b[0]))
        .wrapping_add(u32::from(b[n - 1]) << 3)
        .wrapping_add(u32::from(b[n / 2]) << 1)
        .wrapping_add(u32::from(b[n * 3 / 4]) << 5);
    (h.wrapping_mul(0x9e37_79b1) >> 24) as usize
}

impl OpcodeTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Intern `name`; `None` when the table is full (65536 distinct opcodes).
    pub fn intern(&mut self, name: &str) -> Option<OpcodeId> {
        if let Some(id) = self.get(name) {
            return Some(id);
        }
        let id = OpcodeId(u16::try_from(self.names.len()).ok()?);
        self.names.push(name.into());
        if self.names.len() == SCAN_NAMES + 1 {
            for (i, n) in self.names.iter().enumerate() {
                self.map.insert(n.clone(), OpcodeId(i as u16));
            }
        } else if self.names.len() > SCAN_NAMES {
            self.map.insert(name.into(), id);
        }
        Some(id)
    }

    /// [`Self::intern`] of a name given as bytes (a trace line's token); `Err` when it is
    /// not UTF-8.
    pub fn intern_bytes(&mut self, b: &[u8]) -> Result<Option<OpcodeId>, std::str::Utf8Error> {
        if b.is_empty() {
            return Ok(self.intern(""));
        }
        let slot = recent_slot(b);
        if let Some(&r) = self.recent.get(slot) {
            if r != 0 && self.names[usize::from(r - 1)].as_bytes() == b {
                return Ok(Some(OpcodeId(r - 1)));
            }
        }
        let id = self.intern(std::str::from_utf8(b)?);
        if let Some(id) = id {
            if self.recent.is_empty() {
                self.recent = vec![0; 256];
            }
            if let Some(r) = id.0.checked_add(1) {
                self.recent[slot] = r;
            }
        }
        Ok(id)
    }

    /// Look up an already interned name.
    pub fn get(&self, name: &str) -> Option<OpcodeId> {
        if self.names.len() <= SCAN_NAMES {
            let i = self.names.iter().position(|n| **n == *name)?;
            return Some(OpcodeId(i as u16));
        }
        self.map.get(name).copied()
    }

    /// Full opcode string of `id` (empty for an unknown id).
    pub fn name(&self, id: OpcodeId) -> &str {
        self.names.get(usize::from(id.0)).map_or("", |s| s)
    }

    /// The mnemonic before the first `.` (`LDG` for `LDG.E.64`).
    pub fn base_name(&self, id: OpcodeId) -> &str {
        let n = self.name(id);
        n.split('.').next().unwrap_or(n)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (OpcodeId, &str)> {
        self.names
            .iter()
            .enumerate()
            .map(|(i, s)| (OpcodeId(i as u16), &**s))
    }
}

/// Address-compression mode of a memory instruction line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AddrMode {
    /// `0`: one address per active lane.
    #[default]
    ListAll = 0,
    /// `1`: base + constant stride over one contiguous run of lanes.
    BaseStride = 1,
    /// `2`: base + popcount(mask)-1 signed deltas.
    BaseDelta = 2,
}

impl AddrMode {
    pub fn from_u8(v: u8) -> Option<AddrMode> {
        Some(match v {
            0 => AddrMode::ListAll,
            1 => AddrMode::BaseStride,
            2 => AddrMode::BaseDelta,
            _ => return None,
        })
    }
}

/// Flag bits of [`TraceInstr::flags`].
pub mod flags {
    /// The line carried v6 register values (`Val`), stored in the warp's
    /// value arena.
    pub const HAS_VALUES: u8 = 1;
    /// Hopper `is_gmma_commit_group` field was non-zero.
    pub const GMMA_COMMIT: u8 = 2;
    /// The line carried the Hopper `is_gmma_commit_group` field.
    pub const HAS_GMMA_FIELD: u8 = 4;
}

/// One dynamic warp instruction. Fixed size, `Copy`; memory addresses and
/// v6 register values live in the owning [`WarpTrace`]'s arenas.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceInstr {
    /// Byte offset of the instruction inside its function.
    pub pc: u32,
    /// Lanes that execute (active & predicate).
    pub mask: u32,
    /// Source line (`[line_num]`, traces with `-enable lineinfo = 1`), else 0.
    pub line: u32,
    /// Index of the first address of this instruction in
    /// [`WarpTrace::addrs`] (meaningful when `mem_width > 0`).
    pub addr_start: u32,
    /// Index of the first value word in [`WarpTrace::values`] (meaningful
    /// when `flags & HAS_VALUES`).
    pub val_start: u32,
    /// Immediates (v5: `imm[0]`; Hopper dialect / v6: both). Printed by the
    /// tracer with `%d`, kept as signed 64-bit.
    pub imm: [i64; 2],
    /// Interned full opcode string.
    pub opcode: OpcodeId,
    pub n_dst: u8,
    pub n_src: u8,
    pub dst: [Reg; MAX_DST],
    pub src: [Reg; MAX_SRC],
    /// Bytes accessed per thread; 0 = not a memory instruction.
    pub mem_width: u8,
    /// Address-compression mode used on the line.
    pub addr_mode: AddrMode,
    /// See [`flags`].
    pub flags: u8,
}

impl TraceInstr {
    pub fn dsts(&self) -> &[Reg] {
        &self.dst[..usize::from(self.n_dst)]
    }

    pub fn srcs(&self) -> &[Reg] {
        &self.src[..usize::from(self.n_src)]
    }

    pub fn is_mem(&self) -> bool {
        self.mem_width > 0
    }

    /// Number of addresses: one per active lane for memory instructions.
    pub fn n_addrs(&self) -> usize {
        if self.is_mem() {
            self.mask.count_ones() as usize
        } else {
            0
        }
    }

    pub fn has_values(&self) -> bool {
        self.flags & flags::HAS_VALUES != 0
    }
}

/// All dynamic instructions of one warp of a thread block, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WarpTrace {
    /// Warp index inside the thread block.
    pub warp_id: u32,
    pub instrs: Vec<TraceInstr>,
    /// Address arena: for each memory instruction, one address per active
    /// lane in lane order, starting at `addr_start`.
    pub addrs: Vec<u64>,
    /// v6 value arena: for each operand (dests, then sources) of an
    /// instruction with `HAS_VALUES`: a count `n`, then `n` values.
    pub values: Vec<u64>,
}

impl WarpTrace {
    /// Addresses of `ins` (one per active lane, lane order). Empty for
    /// non-memory instructions or out-of-range offsets.
    pub fn addrs_of(&self, ins: &TraceInstr) -> &[u64] {
        let s = ins.addr_start as usize;
        self.addrs.get(s..s + ins.n_addrs()).unwrap_or(&[])
    }

    /// `(lane, address)` pairs of `ins`.
    pub fn lane_addrs<'a>(&'a self, ins: &TraceInstr) -> impl Iterator<Item = (u32, u64)> + 'a {
        let mask = ins.mask;
        let addrs = self.addrs_of(ins);
        (0..32u32)
            .filter(move |l| mask >> l & 1 == 1)
            .zip(addrs.iter().copied())
    }

    /// v6 register values of `ins`: one slice per operand (dests, then
    /// sources). Empty when the line had `NoVal` or no value block.
    pub fn values_of(&self, ins: &TraceInstr) -> Vec<&[u64]> {
        let mut out = Vec::new();
        if !ins.has_values() {
            return out;
        }
        let mut p = ins.val_start as usize;
        for _ in 0..usize::from(ins.n_dst) + usize::from(ins.n_src) {
            let Some(&n) = self.values.get(p) else { break };
            let n = n as usize;
            let Some(s) = self.values.get(p + 1..p + 1 + n) else {
                break;
            };
            out.push(s);
            p += 1 + n;
        }
        out
    }
}

/// Hopper cluster placement of a thread block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClusterInfo {
    pub id: [u32; 3],
    pub cta: [u32; 3],
    pub rank: u32,
}

/// One `#BEGIN_TB` … `#END_TB` section.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadBlockTrace {
    /// `thread block = x,y,z`.
    pub block: [u32; 3],
    pub cluster: Option<ClusterInfo>,
    /// Warps in file order (normally increasing `warp_id`).
    pub warps: Vec<WarpTrace>,
}

impl ThreadBlockTrace {
    /// Total dynamic warp instructions in the block.
    pub fn n_instrs(&self) -> u64 {
        self.warps.iter().map(|w| w.instrs.len() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_ids_stay_in_order_of_first_appearance_past_the_scanned_names() {
        let mut t = OpcodeTable::new();
        let name = |i: usize| format!("OP{}.{}", i % 7, i);
        // Each new name, then all earlier ones again (by name and by bytes), across the
        // point where the table builds its map.
        for i in 0..3 * SCAN_NAMES {
            assert_eq!(t.get(&name(i)), None);
            assert_eq!(t.intern(&name(i)), Some(OpcodeId(i as u16)));
            for j in 0..=i {
                assert_eq!(t.get(&name(j)), Some(OpcodeId(j as u16)), "{i} {j}");
                assert_eq!(t.intern(&name(j)), Some(OpcodeId(j as u16)));
                assert_eq!(t.intern_bytes(name(j).as_bytes()), Ok(Some(OpcodeId(j as u16))));
            }
            assert_eq!(t.len(), i + 1);
        }
        assert_eq!(t.intern(""), Some(OpcodeId(3 * SCAN_NAMES as u16)));
        assert_eq!(t.get(""), Some(OpcodeId(3 * SCAN_NAMES as u16)));
        let names: Vec<&str> = t.iter().map(|(_, n)| n).collect();
        assert_eq!(names.len(), 3 * SCAN_NAMES + 1);
        assert_eq!(names[5], name(5));
    }
}
