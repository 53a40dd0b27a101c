//! Address hashing: L2 slice selection, cache set index and DRAM bank/row/column mapping.

use crate::config::{Hashing, MemoryConfig};

/// Bit lists (positions in `higher_bits`) XORed into each output bit of Accel-Sim's
/// `ipoly_hash_function` (GPGPU-Sim `hashing.cc`, Khairy et al. TPDS 2017: IPOLY(5) for
/// 16, IPOLY(37) for 32, IPOLY(67) for 64 buckets).
const IPOLY16: [&[u32]; 4] = [
    &[11, 10, 9, 8, 6, 4, 3, 0],
    &[12, 8, 7, 6, 5, 3, 1, 0],
    &[9, 8, 7, 6, 4, 2, 1],
    &[10, 9, 8, 7, 5, 3, 2],
];
const IPOLY32: [&[u32]; 5] = [
    &[13, 12, 11, 10, 9, 6, 5, 3, 0],
    &[14, 13, 12, 11, 10, 7, 6, 4, 1],
    &[14, 10, 9, 8, 7, 6, 3, 2, 0],
    &[11, 10, 9, 8, 7, 4, 3, 1],
    &[12, 11, 10, 9, 8, 5, 4, 2],
];
const IPOLY64: [&[u32]; 6] = [
    &[18, 17, 16, 15, 12, 10, 6, 5, 0],
    &[15, 13, 12, 11, 10, 7, 5, 1, 0],
    &[16, 14, 13, 12, 11, 8, 6, 2, 1],
    &[17, 15, 14, 13, 12, 9, 7, 3, 2],
    &[18, 16, 15, 14, 13, 10, 8, 4, 3],
    &[17, 16, 15, 14, 11, 9, 5, 4],
];

/// The bit lists of a table as masks: output bit i is the parity of `higher & mask[i]`.
const fn masks<const N: usize>(table: [&[u32]; N]) -> [u64; N] {
    let mut out = [0u64; N];
    let mut i = 0;
    while i < N {
        let mut k = 0;
        while k < table[i].len() {
            out[i] |= 1 << table[i][k];
            k += 1;
        }
        i += 1;
    }
    out
}
const IPOLY16_MASKS: [u64; 4] = masks(IPOLY16);
const IPOLY32_MASKS: [u64; 5] = masks(IPOLY32);
const IPOLY64_MASKS: [u64; 6] = masks(IPOLY64);

/// Output bit i: the XOR of the bits of `higher` listed in row i of the table (as masks).
#[cfg(test)]
fn fold(higher: u64, masks: &[u64]) -> u64 {
    let mut out = 0;
    for (i, &m) in masks.iter().enumerate() {
        out |= u64::from((higher & m).count_ones() & 1) << i;
    }
    out
}

/// The fold is linear over GF(2): the fold of each byte value of bits 0–23 of `higher`, per
/// byte position (every mask lies within bits 0–23), XORed together, is the fold.
type FoldTable = [[u8; 256]; 3];

const fn fold_table<const N: usize>(masks: [u64; N]) -> FoldTable {
    let mut t = [[0u8; 256]; 3];
    let mut i = 0;
    while i < N {
        assert!(masks[i] >> 24 == 0 && N <= 8);
        i += 1;
    }
    let mut pos = 0;
    while pos < 3 {
        let mut b = 0;
        while b < 256 {
            let h = (b as u64) << (8 * pos);
            let mut out = 0u8;
            let mut i = 0;
            while i < N {
                out |= (((h & masks[i]).count_ones() & 1) as u8) << i;
                i += 1;
            }
            t[pos][b] = out;
            b += 1;
        }
        pos += 1;
    }
    t
}
const IPOLY16_TABLE: FoldTable = fold_table(IPOLY16_MASKS);
const IPOLY32_TABLE: FoldTable = fold_table(IPOLY32_MASKS);
const IPOLY64_TABLE: FoldTable = fold_table(IPOLY64_MASKS);

/// [`fold`] by table.
#[inline]
fn fold_fast(higher: u64, t: &FoldTable) -> u64 {
    u64::from(
        t[0][(higher & 0xff) as usize]
            ^ t[1][((higher >> 8) & 0xff) as usize]
            ^ t[2][((higher >> 16) & 0xff) as usize],
    )
}

/// Accel-Sim's IPOLY hash: `index ^ H(higher_bits)` for 16, 32 or 64 buckets. For other
/// power-of-two bucket counts the 64-bucket polynomial is folded (XOR of 6-bit groups)
/// into the needed width; this is an extension, Accel-Sim only defines 16/32/64.
pub fn ipoly_hash(higher_bits: u64, index: u64, buckets: u64) -> u64 {
    debug_assert!(buckets.is_power_of_two());
    match buckets {
        16 => index ^ fold_fast(higher_bits, &IPOLY16_TABLE),
        32 => index ^ fold_fast(higher_bits, &IPOLY32_TABLE),
        64 => index ^ fold_fast(higher_bits, &IPOLY64_TABLE),
        1 => 0,
        _ => {
            let bits = buckets.trailing_zeros();
            let mut h =
                fold_fast(higher_bits, &IPOLY64_TABLE) ^ (fold_fast(higher_bits >> 19, &IPOLY64_TABLE) << 6);
            let mut acc = 0;
            while h != 0 {
                acc ^= h & (buckets - 1);
                h >>= bits;
            }
            (index ^ acc) & (buckets - 1)
        }
    }
}

/// Set index of a line index (`addr / line_bytes`) in a cache with `sets` sets.
pub fn set_index(line_index: u64, sets: u64, hashing: Hashing) -> u64 {
    if sets <= 1 {
        return 0;
    }
    if !sets.is_power_of_two() {
        return match hashing {
            Hashing::Linear => line_index % sets,
            _ => (line_index ^ (line_index / sets)) % sets,
        };
    }
    let bits = sets.trailing_zeros();
    let idx = line_index & (sets - 1);
    let hi = line_index >> bits;
    match hashing {
        Hashing::Linear => idx,
        Hashing::Xor => idx ^ (hi & (sets - 1)),
        Hashing::Ipoly => ipoly_hash(hi, idx, sets),
    }
}

/// Where an address lives below the interconnect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// Global L2 slice (sub-partition) index.
    pub slice: usize,
    /// Memory partition (`slice / sub_partitions_per_partition`).
    pub partition: usize,
    /// Address compacted to the slice (partition bits removed), for the set index.
    pub slice_addr: u64,
    /// DRAM channel (global index).
    pub channel: usize,
    pub bank: u32,
    pub bank_group: u32,
    pub row: u32,
    /// Column in bursts (32-byte units) within the row.
    pub col: u32,
}

/// Where an address lives in its partition's DRAM ([`AddressMapping::dram_location`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DramLocation {
    /// DRAM channel within the partition.
    pub channel_in_partition: u64,
    pub bank: u32,
    pub bank_group: u32,
    pub row: u32,
    /// Column in bursts (32-byte units) within the row.
    pub col: u32,
}

/// Address mapping of a configuration.
#[derive(Debug, Clone)]
pub struct AddressMapping {
    hashing: Hashing,
    chunk_shift: u32,
    slices: u64,
    spp: u64,
    cpp: u64,
    line_shift: u32,
    sector_shift: u32,
    bg_bits: u32,
    bank_in_group_bits: u32,
    col_bits: u32,
    sectors_per_line_bits: u32,
}

impl AddressMapping {
    pub fn new(cfg: &MemoryConfig) -> Self {
        let spp = cfg.l2.sub_partitions_per_partition as u64;
        let line_shift = cfg.l2.line_bytes.trailing_zeros();
        let sector_shift = cfg.l2.sector_bytes.trailing_zeros();
        let bg = cfg.dram.bank_groups.max(1);
        Self {
            hashing: cfg.l2.hashing,
            chunk_shift: cfg.l2.interleave_bytes.trailing_zeros(),
            slices: cfg.l2_slices() as u64,
            spp,
            cpp: cfg.dram.channels_per_partition.max(1) as u64,
            line_shift,
            sector_shift,
            bg_bits: bg.trailing_zeros(),
            bank_in_group_bits: (cfg.dram.banks / bg).max(1).trailing_zeros(),
            col_bits: (cfg.dram.row_bytes / cfg.l2.sector_bytes).trailing_zeros(),
            sectors_per_line_bits: line_shift - sector_shift,
        }
    }

    /// L2 slice of an address. Power-of-two slice counts use the hash exactly as Accel-Sim;
    /// other counts use `(chunk mod n + H(chunk div n)) mod n` — a rotation of each group
    /// of `n` consecutive chunks, which keeps a linear stream perfectly balanced (Accel-Sim's
    /// `hash mod n` fold double-loads slices 0..(2^k − n)).
    pub fn slice(&self, addr: u64) -> usize {
        let chunk = addr >> self.chunk_shift;
        let n = self.slices;
        if n <= 1 {
            return 0;
        }
        if n.is_power_of_two() {
            let bits = n.trailing_zeros();
            let idx = chunk & (n - 1);
            let hi = chunk >> bits;
            (match self.hashing {
                Hashing::Linear => idx,
                Hashing::Xor => idx ^ (hi & (n - 1)),
                Hashing::Ipoly => ipoly_hash(hi, idx, n),
            }) as usize
        } else {
            let q = chunk / n;
            let r = chunk % n;
            let np2 = n.next_power_of_two();
            let h = match self.hashing {
                Hashing::Linear => 0,
                Hashing::Xor => q & (np2 - 1),
                Hashing::Ipoly => ipoly_hash(q, 0, np2.max(16)),
            };
            ((r + h) % n) as usize
        }
    }

    /// Full decomposition of an address.
    pub fn locate(&self, addr: u64) -> Location {
        let slice = self.slice(addr);
        let chunk = addr >> self.chunk_shift;
        let low = addr & ((1u64 << self.chunk_shift) - 1);
        let q = chunk / self.slices.max(1);
        // Within a group of `slices` chunks every slice gets exactly one chunk (the hash is
        // a bijection per group), so (q, slice) identifies the chunk.
        let slice_addr = (q << self.chunk_shift) | low;
        let partition = slice / self.spp as usize;
        let d = self.dram_location(addr, slice);
        Location {
            slice,
            partition,
            slice_addr,
            channel: (partition as u64 * self.cpp + d.channel_in_partition) as usize,
            bank: d.bank,
            bank_group: d.bank_group,
            row: d.row,
            col: d.col,
        }
    }

    /// The DRAM part of [`Self::locate`] for an address of L2 slice `slice` (its
    /// [`Self::slice`], which the caller knows: the address is not hashed again).
    pub(crate) fn dram_location(&self, addr: u64, slice: usize) -> DramLocation {
        let chunk = addr >> self.chunk_shift;
        let low = addr & ((1u64 << self.chunk_shift) - 1);
        let q = chunk / self.slices.max(1);
        // Address within the partition: its slices' chunks interleaved.
        let part_chunk = q * self.spp + (slice as u64 % self.spp);
        let ch_in_part = part_chunk % self.cpp;
        let ch_chunk = part_chunk / self.cpp;
        let ch_addr = (ch_chunk << self.chunk_shift) | low;
        // Channel address bits (low → high): sector-in-line | bank group | rest of column |
        // bank in group | row. Consecutive lines rotate over bank groups; a line's sectors
        // are consecutive columns of one row.
        let mut a = ch_addr >> self.sector_shift;
        let sec = a & ((1 << self.sectors_per_line_bits) - 1);
        a >>= self.sectors_per_line_bits;
        let bg = a & ((1 << self.bg_bits) - 1);
        a >>= self.bg_bits;
        let col_hi_bits = self.col_bits.saturating_sub(self.sectors_per_line_bits);
        let col_hi = a & ((1 << col_hi_bits) - 1);
        a >>= col_hi_bits;
        let bank_in_group = a & ((1 << self.bank_in_group_bits) - 1);
        a >>= self.bank_in_group_bits;
        let row = a;
        // Permute the bank with the low row bits (reduces row conflicts of strided streams).
        let bank_in_group = (bank_in_group ^ row) & ((1 << self.bank_in_group_bits) - 1);
        let bank_group = (bg ^ (row >> self.bank_in_group_bits)) & ((1 << self.bg_bits) - 1);
        DramLocation {
            channel_in_partition: ch_in_part,
            bank: ((bank_group << self.bank_in_group_bits) | bank_in_group) as u32,
            bank_group: bank_group as u32,
            row: row as u32,
            col: ((col_hi << self.sectors_per_line_bits) | sec) as u32,
        }
    }

    /// Line index used for set selection inside a slice: `locate(addr).slice_addr`, which
    /// does not depend on the slice, over the line size.
    pub fn slice_line(&self, addr: u64) -> u64 {
        let chunk = addr >> self.chunk_shift;
        let low = addr & ((1u64 << self.chunk_shift) - 1);
        let q = chunk / self.slices.max(1);
        ((q << self.chunk_shift) | low) >> self.line_shift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_masks_match_the_bit_lists() {
        // Output bit i is the XOR of the listed bits of `higher`, bit by bit.
        fn reference(higher: u64, table: &[&[u32]]) -> u64 {
            let mut out = 0;
            for (i, bits) in table.iter().enumerate() {
                let mut b = 0;
                for &p in bits.iter() {
                    b ^= (higher >> p) & 1;
                }
                out |= b << i;
            }
            out
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            assert_eq!(fold(x, &IPOLY16_MASKS), reference(x, &IPOLY16));
            assert_eq!(fold(x, &IPOLY32_MASKS), reference(x, &IPOLY32));
            assert_eq!(fold(x, &IPOLY64_MASKS), reference(x, &IPOLY64));
            assert_eq!(fold_fast(x, &IPOLY16_TABLE), fold(x, &IPOLY16_MASKS));
            assert_eq!(fold_fast(x, &IPOLY32_TABLE), fold(x, &IPOLY32_MASKS));
            assert_eq!(fold_fast(x, &IPOLY64_TABLE), fold(x, &IPOLY64_MASKS));
        }
    }

    #[test]
    fn ipoly_is_bijective_per_group() {
        for &n in &[16u64, 32, 64] {
            for hi in [0u64, 1, 12345, 0xdead_beef] {
                let mut seen = vec![false; n as usize];
                for i in 0..n {
                    seen[ipoly_hash(hi, i, n) as usize] = true;
                }
                assert!(seen.iter().all(|&s| s));
            }
        }
    }

    #[test]
    fn locate_is_injective() {
        let cfg = MemoryConfig::a6000_like();
        let m = AddressMapping::new(&cfg);
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..(1u64 << 16) {
            let l = m.locate(i * 32);
            assert!(seen.insert((l.channel, l.bank, l.row, l.col)), "collision at {i}");
            assert_eq!(m.slice_line(i * 32), l.slice_addr >> m.line_shift);
            // A line's sectors differ only in their column (the L2 locates a line once).
            let b = m.locate((i * 32) & !((1u64 << m.line_shift) - 1));
            assert_eq!(
                (b.slice, b.channel, b.bank, b.bank_group, b.row),
                (l.slice, l.channel, l.bank, l.bank_group, l.row)
            );
        }
    }
}
