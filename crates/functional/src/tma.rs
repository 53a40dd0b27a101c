//! Tensor maps of the Tensor Memory Accelerator (Hopper's `cp.async.bulk.tensor`, SASS
//! `UTMALDG`/`UTMASTG`).
//!
//! A `CUtensorMap` is a 128-byte, 64-byte aligned object that the host fills with
//! `cuTensorMapEncodeTiled` and passes to a kernel (usually as a `__grid_constant__`
//! parameter). NVIDIA documents its fields only as the arguments of the encoding function;
//! the bytes are opaque. sassim's runtime writes them in [`TensorMap::encode`]'s layout and the
//! engine reads them back with [`TensorMap::decode`] — nothing else ever interprets them.
//!
//! Semantics (CUDA Driver API, `cuTensorMapEncodeTiled`; PTX ISA, "Tensor copy" and
//! "Tensor-map"): a box of `box_dim[i] / element_strides[i]` (rounded up) elements per
//! dimension, starting at signed coordinates, is copied between global memory and a dense
//! box in shared memory (dimension 0 fastest). Elements outside `[0, global_dim[i])` read as
//! zero (or NaN with the NaN fill of float types) and are not written by stores. Shared
//! memory addresses of the box are swizzled like the wgmma operand layouts ([`swizzle`]).

/// Bytes of a `CUtensorMap`.
pub const TENSOR_MAP_BYTES: usize = 128;
/// Alignment the driver requires of a `CUtensorMap`.
pub const TENSOR_MAP_ALIGN: u64 = 64;
/// Most dimensions of a tensor map.
pub const MAX_RANK: usize = 5;
/// First 8 bytes of a tensor map written by sassim's runtime.
const MAGIC: &[u8; 8] = b"sassimTM";

/// `CUtensorMapDataType` values of CUDA 12/13 (`cuda.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmaType {
    U8,
    U16,
    U32,
    S32,
    U64,
    S64,
    F16,
    F32,
    F64,
    Bf16,
    F32Ftz,
    Tf32,
    Tf32Ftz,
}

impl TmaType {
    /// From the `CUtensorMapDataType` value (the packed 4/6-bit types of CUDA 12.8 are refused).
    pub fn from_cu(v: u32) -> Option<TmaType> {
        use TmaType::*;
        Some(match v {
            0 => U8,
            1 => U16,
            2 => U32,
            3 => S32,
            4 => U64,
            5 => S64,
            6 => F16,
            7 => F32,
            8 => F64,
            9 => Bf16,
            10 => F32Ftz,
            11 => Tf32,
            12 => Tf32Ftz,
            _ => return None,
        })
    }

    fn code(self) -> u8 {
        use TmaType::*;
        match self {
            U8 => 0,
            U16 => 1,
            U32 => 2,
            S32 => 3,
            U64 => 4,
            S64 => 5,
            F16 => 6,
            F32 => 7,
            F64 => 8,
            Bf16 => 9,
            F32Ftz => 10,
            Tf32 => 11,
            Tf32Ftz => 12,
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        use TmaType::*;
        match self {
            U8 => 1,
            U16 | F16 | Bf16 => 2,
            U32 | S32 | F32 | F32Ftz | Tf32 | Tf32Ftz => 4,
            U64 | S64 | F64 => 8,
        }
    }

    fn is_float(self) -> bool {
        use TmaType::*;
        matches!(self, F16 | F32 | F64 | Bf16 | F32Ftz | Tf32 | Tf32Ftz)
    }
}

/// `CUtensorMapSwizzle`: how 16-byte chunks of shared memory are permuted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    pub fn from_cu(v: u32) -> Option<Swizzle> {
        Some(match v {
            0 => Swizzle::None,
            1 => Swizzle::B32,
            2 => Swizzle::B64,
            3 => Swizzle::B128,
            _ => return None,
        })
    }

    fn code(self) -> u8 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 1,
            Swizzle::B64 => 2,
            Swizzle::B128 => 3,
        }
    }

    /// Span in bytes of one swizzled row (0 for none).
    pub fn span(self) -> u64 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }
}

/// The swizzled shared-memory byte address of `addr`: bits [4, 4+b) XOR bits [7, 7+b) with
/// b = 1, 2, 3 for the 32-, 64- and 128-byte patterns (16-byte chunk `c` of 128-byte row `r`
/// goes to chunk `c ^ (r % 8)` for 128 B). The pattern is a function of the absolute shared
/// address, as in the PTX ISA's shared-memory layouts for wgmma and TMA (which require the
/// 128-byte pattern's base to be 1024-byte aligned for the rows to start at r = 0).
pub fn swizzle(addr: u64, s: Swizzle) -> u64 {
    let mask = match s {
        Swizzle::None => return addr,
        Swizzle::B32 => 1,
        Swizzle::B64 => 3,
        Swizzle::B128 => 7,
    };
    addr ^ (((addr >> 7) & mask) << 4)
}

/// A decoded tensor map (`cuTensorMapEncodeTiled`'s arguments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorMap {
    pub dtype: TmaType,
    pub rank: usize,
    pub global_address: u64,
    /// Elements per dimension (dimension 0 fastest).
    pub global_dim: [u64; MAX_RANK],
    /// Byte stride of dimensions 1..rank (index i holds dimension i + 1's stride).
    pub global_strides: [u64; MAX_RANK - 1],
    pub box_dim: [u32; MAX_RANK],
    pub element_strides: [u32; MAX_RANK],
    /// `CUtensorMapInterleave` (only 0 = none is executed).
    pub interleave: u32,
    pub swizzle: Swizzle,
    /// `CUtensorMapL2promotion` (a hint; kept).
    pub l2_promotion: u32,
    /// `CUtensorMapFloatOOBfill`: 1 = NaN for out-of-bound elements of float types.
    pub oob_nan: bool,
}

/// Why `cuTensorMapEncodeTiled` refuses its arguments (CUDA_ERROR_INVALID_VALUE).
pub type EncodeError = String;

/// The raw arguments of `cuTensorMapEncodeTiled`.
#[derive(Debug, Clone)]
pub struct EncodeArgs<'a> {
    pub dtype: u32,
    pub rank: u32,
    pub global_address: u64,
    pub global_dim: &'a [u64],
    pub global_strides: &'a [u64],
    pub box_dim: &'a [u32],
    pub element_strides: &'a [u32],
    pub interleave: u32,
    pub swizzle: u32,
    pub l2_promotion: u32,
    pub oob_fill: u32,
}

impl TensorMap {
    /// Check `cuTensorMapEncodeTiled`'s documented requirements (CUDA Driver API reference,
    /// "Tensor Map Object Management") and build the map. `global_dim` must hold `rank`
    /// entries, `global_strides` `rank - 1`, `box_dim` and `element_strides` `rank`.
    pub fn from_args(a: &EncodeArgs) -> Result<TensorMap, EncodeError> {
        let dtype = TmaType::from_cu(a.dtype)
            .ok_or_else(|| format!("tensorDataType {} is not supported", a.dtype))?;
        let rank = a.rank as usize;
        if !(1..=MAX_RANK).contains(&rank) {
            return Err(format!("tensorRank {} is outside 1..=5", a.rank));
        }
        if a.interleave != 0 {
            return Err(format!(
                "interleave {} is not supported by sassim (only CU_TENSOR_MAP_INTERLEAVE_NONE)",
                a.interleave
            ));
        }
        let swizzle =
            Swizzle::from_cu(a.swizzle).ok_or_else(|| format!("swizzle {} is not supported", a.swizzle))?;
        if a.l2_promotion > 3 {
            return Err(format!("l2Promotion {} is outside 0..=3", a.l2_promotion));
        }
        if a.oob_fill > 1 {
            return Err(format!("oobFill {} is outside 0..=1", a.oob_fill));
        }
        if a.oob_fill == 1 && !dtype.is_float() {
            return Err("oobFill NAN_REQUEST_ZERO_FMA needs a floating-point tensorDataType".into());
        }
        if !a.global_address.is_multiple_of(16) {
            return Err(format!(
                "globalAddress {:#x} is not 16-byte aligned",
                a.global_address
            ));
        }
        if a.global_dim.len() < rank
            || a.global_strides.len() + 1 < rank
            || a.box_dim.len() < rank
            || a.element_strides.len() < rank
        {
            return Err("fewer array entries than tensorRank".into());
        }
        let mut m = TensorMap {
            dtype,
            rank,
            global_address: a.global_address,
            global_dim: [1; MAX_RANK],
            global_strides: [0; MAX_RANK - 1],
            box_dim: [1; MAX_RANK],
            element_strides: [1; MAX_RANK],
            interleave: a.interleave,
            swizzle,
            l2_promotion: a.l2_promotion,
            oob_nan: a.oob_fill == 1,
        };
        for i in 0..rank {
            let d = a.global_dim[i];
            if d == 0 || d > 1 << 31 {
                return Err(format!("globalDim[{i}] = {d} is outside 1..=2^31"));
            }
            m.global_dim[i] = d;
            let b = a.box_dim[i];
            if b == 0 || b > 256 {
                return Err(format!("boxDim[{i}] = {b} is outside 1..=256"));
            }
            m.box_dim[i] = b;
            let e = a.element_strides[i];
            if e == 0 || e > 8 {
                return Err(format!("elementStrides[{i}] = {e} is outside 1..=8"));
            }
            // "the first element of this array is ignored since TMA doesn't support the
            // stride for dimension zero" (interleave none).
            m.element_strides[i] = if i == 0 { 1 } else { e };
        }
        for i in 0..rank - 1 {
            let s = a.global_strides[i];
            if !s.is_multiple_of(16) || s >= 1 << 40 {
                return Err(format!(
                    "globalStrides[{i}] = {s} is not a multiple of 16 below 2^40"
                ));
            }
            m.global_strides[i] = s;
        }
        let row_bytes = u64::from(m.box_dim[0]) * dtype.bytes();
        if row_bytes % 16 != 0 {
            return Err(format!(
                "boxDim[0] * element size = {row_bytes} bytes is not a multiple of 16"
            ));
        }
        if swizzle != Swizzle::None && row_bytes > swizzle.span() {
            return Err(format!(
                "boxDim[0] * element size = {row_bytes} bytes exceeds the {}-byte swizzle span",
                swizzle.span()
            ));
        }
        Ok(m)
    }

    /// The 128 bytes sassim's runtime stores in a `CUtensorMap`.
    pub fn encode(&self) -> [u8; TENSOR_MAP_BYTES] {
        let mut b = [0u8; TENSOR_MAP_BYTES];
        b[..8].copy_from_slice(MAGIC);
        b[8] = self.dtype.code();
        b[9] = self.rank as u8;
        b[10] = self.interleave as u8;
        b[11] = self.swizzle.code();
        b[12] = self.l2_promotion as u8;
        b[13] = u8::from(self.oob_nan);
        b[16..24].copy_from_slice(&self.global_address.to_le_bytes());
        for i in 0..MAX_RANK {
            // global_dim <= 2^31: stored minus one in 32 bits.
            let d = (self.global_dim[i] - 1) as u32;
            b[24 + 4 * i..28 + 4 * i].copy_from_slice(&d.to_le_bytes());
            b[84 + 2 * i..86 + 2 * i].copy_from_slice(&(self.box_dim[i] as u16).to_le_bytes());
            b[94 + i] = self.element_strides[i] as u8;
        }
        for i in 0..MAX_RANK - 1 {
            b[44 + 8 * i..52 + 8 * i].copy_from_slice(&self.global_strides[i].to_le_bytes());
        }
        b
    }

    /// Read a tensor map written by [`encode`](Self::encode); `None` if the bytes are not one
    /// (a kernel given garbage, or a map NVIDIA's driver encoded).
    pub fn decode(b: &[u8]) -> Option<TensorMap> {
        if b.len() < TENSOR_MAP_BYTES || &b[..8] != MAGIC {
            return None;
        }
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let mut g = [0u8; 8];
        g.copy_from_slice(&b[16..24]);
        let rank = b[9] as usize;
        let mut m = TensorMap {
            dtype: TmaType::from_cu(u32::from(b[8]))?,
            rank,
            global_address: u64::from_le_bytes(g),
            global_dim: [1; MAX_RANK],
            global_strides: [0; MAX_RANK - 1],
            box_dim: [1; MAX_RANK],
            element_strides: [1; MAX_RANK],
            interleave: u32::from(b[10]),
            swizzle: Swizzle::from_cu(u32::from(b[11]))?,
            l2_promotion: u32::from(b[12]),
            oob_nan: b[13] != 0,
        };
        if !(1..=MAX_RANK).contains(&rank) || m.interleave != 0 {
            return None;
        }
        for i in 0..MAX_RANK {
            m.global_dim[i] = u64::from(u32_at(24 + 4 * i)) + 1;
            m.box_dim[i] = u32::from(u16::from_le_bytes([b[84 + 2 * i], b[85 + 2 * i]]));
            m.element_strides[i] = u32::from(b[94 + i]);
            if !(1..=256).contains(&m.box_dim[i]) || !(1..=8).contains(&m.element_strides[i]) {
                return None;
            }
        }
        for i in 0..MAX_RANK - 1 {
            let mut s = [0u8; 8];
            s.copy_from_slice(&b[44 + 8 * i..52 + 8 * i]);
            m.global_strides[i] = u64::from_le_bytes(s);
        }
        Some(m)
    }

    /// Elements the box holds per dimension (`ceil(box_dim / element_strides)`).
    pub fn box_extent(&self) -> [u64; MAX_RANK] {
        let mut e = [1u64; MAX_RANK];
        for (i, x) in e.iter_mut().enumerate().take(self.rank) {
            *x = u64::from(self.box_dim[i].div_ceil(self.element_strides[i]));
        }
        e
    }

    /// Bytes of the box in shared memory (the transaction count a load completes).
    pub fn box_bytes(&self) -> u64 {
        self.box_extent().iter().product::<u64>() * self.dtype.bytes()
    }

    /// Visit every element of the box at tensor coordinates `coords` (`rank` entries): `f(smem
    /// byte offset within the box before swizzling, Some(global address) or None when out of
    /// bounds)`, in shared-memory order.
    pub fn for_each_element(&self, coords: &[i64], mut f: impl FnMut(u64, Option<u64>)) {
        let ext = self.box_extent();
        let es = self.dtype.bytes();
        let total: u64 = ext.iter().product();
        let mut idx = [0u64; MAX_RANK];
        for n in 0..total {
            let mut inb = true;
            let mut addr = self.global_address;
            for (d, &i) in idx.iter().enumerate().take(self.rank) {
                let c = coords.get(d).copied().unwrap_or(0) + (i * u64::from(self.element_strides[d])) as i64;
                if c < 0 || c as u64 >= self.global_dim[d] {
                    inb = false;
                    break;
                }
                let stride = if d == 0 { es } else { self.global_strides[d - 1] };
                addr = addr.wrapping_add(c as u64 * stride);
            }
            f(n * es, inb.then_some(addr));
            for d in 0..MAX_RANK {
                idx[d] += 1;
                if idx[d] < ext[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    /// The fill pattern of one out-of-bounds element.
    pub fn oob_fill(&self) -> u64 {
        if !self.oob_nan {
            return 0;
        }
        match self.dtype {
            TmaType::F16 => 0x7fff,
            TmaType::Bf16 => 0x7fff,
            TmaType::F64 => 0x7fff_ffff_ffff_ffff,
            _ => 0x7fff_ffff,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args<'a>(dim: &'a [u64], strides: &'a [u64], bx: &'a [u32], es: &'a [u32], sw: u32) -> EncodeArgs<'a> {
        EncodeArgs {
            dtype: 6,
            rank: dim.len() as u32,
            global_address: 0x7f00_0000_1000,
            global_dim: dim,
            global_strides: strides,
            box_dim: bx,
            element_strides: es,
            interleave: 0,
            swizzle: sw,
            l2_promotion: 0,
            oob_fill: 0,
        }
    }

    #[test]
    fn encode_decode_round_trip() {
        let m = TensorMap::from_args(&args(&[100, 70], &[256], &[64, 8], &[1, 1], 3)).unwrap();
        let b = m.encode();
        assert_eq!(TensorMap::decode(&b), Some(m.clone()));
        assert_eq!(m.box_bytes(), 64 * 8 * 2);
        let mut garbage = b;
        garbage[0] = b'x';
        assert_eq!(TensorMap::decode(&garbage), None);
    }

    #[test]
    fn documented_limits_are_enforced() {
        // Strides must be multiples of 16 (CUDA Driver API, cuTensorMapEncodeTiled).
        assert!(TensorMap::from_args(&args(&[100, 70], &[200], &[64, 8], &[1, 1], 0)).is_err());
        // A 128-byte swizzle cannot hold a 256-byte box row.
        assert!(TensorMap::from_args(&args(&[200, 70], &[512], &[128, 8], &[1, 1], 3)).is_err());
        // Box dimension at most 256, element strides 1..=8.
        assert!(TensorMap::from_args(&args(&[1000], &[], &[264], &[1], 0)).is_err());
        assert!(TensorMap::from_args(&args(&[1000], &[], &[64], &[9], 0)).is_err());
        // boxDim[0] * 2 bytes must be a multiple of 16.
        assert!(TensorMap::from_args(&args(&[1000], &[], &[12], &[1], 0)).is_err());
    }

    #[test]
    fn out_of_bounds_elements_have_no_address() {
        let m = TensorMap::from_args(&args(&[10, 3], &[32], &[8, 2], &[1, 1], 0)).unwrap();
        let mut seen = Vec::new();
        m.for_each_element(&[4, 2], |off, g| seen.push((off, g)));
        assert_eq!(seen.len(), 16);
        // Row 0 (y = 2): x = 4..9 in bounds, x = 10, 11 out.
        assert_eq!(seen[0], (0, Some(0x7f00_0000_1000 + 2 * 32 + 4 * 2)));
        assert_eq!(seen[5].1, Some(0x7f00_0000_1000 + 2 * 32 + 9 * 2));
        assert_eq!(seen[6].1, None);
        // Row 1 (y = 3) is outside the 3-row tensor.
        assert!(seen[8..].iter().all(|&(_, g)| g.is_none()));
        assert_eq!(seen[15].0, 30);
    }

    #[test]
    fn swizzle_128b_permutes_chunks_by_row() {
        // Row 3 of a 1024-byte-aligned block: chunk 1 goes to chunk 1 ^ 3 = 2.
        assert_eq!(swizzle(3 * 128 + 16 + 5, Swizzle::B128), 3 * 128 + 32 + 5);
        assert_eq!(swizzle(3 * 128 + 16, Swizzle::None), 3 * 128 + 16);
        // 64 B: bits [4,6) ^= bits [7,9).
        assert_eq!(
            swizzle(0b1_1000_0000 | 0b01_0000, Swizzle::B64),
            0b1_1000_0000 | 0b10_0000
        );
        // Row 0 is never permuted.
        for a in 0..128 {
            assert_eq!(swizzle(a, Swizzle::B128), a);
        }
    }
}
