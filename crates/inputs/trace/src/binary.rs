//! The sassim compact binary trace format (`SASSIMBT`), see
//! `docs/trace-format.md`.
//!
//! Layout: 8-byte magic, `u16` format version (LE), then one zstd stream
//! (with a built-in dictionary, frame checksum) holding the raw header text
//! followed by one context-adaptive binary arithmetic-coded stream (the
//! FPAQ0 coder of the `cabac` crate). Instructions are predicted from a
//! model (static-instruction table, successor prediction, mask and address
//! predictors) that the encoder and the decoder update identically; every
//! decision is coded with an adaptive probability that belongs to the
//! static instruction it concerns, so that a predictable field costs a
//! small fraction of a bit and only data-dependent masks and addresses
//! take real space.
//!
//! The encoder and the decoder run the same functions (generic over
//! [`Coder`]): the encoder passes the true value of each field, the decoder
//! a placeholder that the coder overwrites, so the two cannot drift apart.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cabac::fpaq0::{Fpaq0Decoder, Fpaq0Encoder};
use cabac::vp8::VP8Context as Ctx;
use cabac::{CabacReader, CabacWriter};

use crate::error::{Result, TraceError};
use crate::header::KernelHeader;
use crate::record::{
    flags, AddrMode, OpcodeId, OpcodeTable, Reg, RegKind, ThreadBlockTrace, TraceInstr, WarpTrace, MAX_DST,
    MAX_SRC, WARP_SIZE,
};
use crate::source::BINARY_MAGIC;

/// Current format version.
pub const FORMAT_VERSION: u16 = 3;

/// Ring of recent multi-lane memory instructions used as address references.
const RING: usize = 8;
const NONE: u32 = u32::MAX;
/// Transpose tables (see [`Trans`]) exist for gather regions of at most
/// 2^`TRANS_BITS` elements, for at most `TRANS_TABLES` gather instructions, and all of
/// them are cleared when they hold `TRANS_CAP` entries together: the reader's memory
/// for them stays under about 50 MB whatever the trace.
const TRANS_BITS: u32 = 16;
/// Candidates looked at per lane (most recent first).
const TRANS_LIST: usize = 64;
/// Most static instructions in one file (corrupt input; the writer refuses more).
const MAX_STATICS: usize = 1 << 18;
#[cfg(not(test))]
const TRANS_TABLES: usize = 64;
#[cfg(not(test))]
const TRANS_CAP: usize = 1 << 21;
// Small limits in unit tests, so that a test reaches them.
#[cfg(test)]
const TRANS_TABLES: usize = 2;
#[cfg(test)]
const TRANS_CAP: usize = 300;
/// Sanity bounds for corrupt files.
const MAX_WARPS: u64 = 1 << 16;
const MAX_VALUES: u64 = 64;
const MAX_NAME: u64 = 4096;

// ------------------------------------------------------------ coder

/// Encoder or decoder side of the coder. `bit` codes a decision with an
/// adaptive context, writing `*b` when encoding and overwriting it when
/// decoding; `raw` codes `n` equiprobable bits (`v` when encoding) in the
/// separate raw-bit stream and returns them.
trait Coder {
    const ENC: bool;
    fn bit(&mut self, ctx: &mut Ctx, b: &mut bool) -> io::Result<()>;
    fn raw(&mut self, n: u32, v: u64) -> io::Result<u64>;
    /// `n` bytes of an opcode name in the name stream (`name` holds them
    /// when encoding, receives them when decoding).
    fn name(&mut self, name: &mut Vec<u8>, n: usize) -> io::Result<()>;
}

/// Raw bits, least significant first, packed into bytes.
#[derive(Default)]
struct BitW {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitW {
    #[inline]
    fn put(&mut self, v: u64, w: u32) {
        debug_assert!(w <= 64);
        if w > 32 {
            self.put(v & 0xffff_ffff, 32);
            self.put(v >> 32, w - 32);
            return;
        }
        let v = if w == 64 { v } else { v & ((1u64 << w) - 1) };
        self.acc |= v << self.n;
        self.n += w;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// Pad the last byte with zeros.
    fn pad(&mut self) {
        if self.n > 0 {
            self.out.push(self.acc as u8);
            self.acc = 0;
            self.n = 0;
        }
    }
}

struct EncC<W: Write> {
    rc: Fpaq0Encoder<W>,
    bits: BitW,
    names: Vec<u8>,
}

impl<W: Write> Coder for EncC<W> {
    const ENC: bool = true;
    #[inline]
    fn bit(&mut self, ctx: &mut Ctx, b: &mut bool) -> io::Result<()> {
        self.rc.put(*b, ctx)
    }
    #[inline]
    fn raw(&mut self, n: u32, v: u64) -> io::Result<u64> {
        self.bits.put(v, n);
        Ok(if n == 64 { v } else { v & ((1u64 << n) - 1) })
    }
    fn name(&mut self, name: &mut Vec<u8>, n: usize) -> io::Result<()> {
        self.names.extend_from_slice(&name[..n.min(name.len())]);
        Ok(())
    }
}

/// Append `n` as an unsigned LEB128 varint.
fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Read an unsigned LEB128 varint: `InvalidData` when longer than 64 bits,
/// `UnexpectedEof` when the input ends inside it.
fn read_varint(r: &mut impl Read) -> io::Result<u64> {
    let mut n = 0u64;
    let mut sh = 0;
    loop {
        let mut b = [0u8];
        r.read_exact(&mut b)?;
        if sh >= 64 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "varint too long"));
        }
        n |= u64::from(b[0] & 0x7f) << sh;
        if b[0] < 0x80 {
            return Ok(n);
        }
        sh += 7;
    }
}

/// Chunk kinds of the payload after the header.
const CHUNK_END: u8 = 0;
const CHUNK_ARITH: u8 = 1;
const CHUNK_RAW: u8 = 2;
const CHUNK_NAME: u8 = 3;
/// The writer flushes both streams as chunks once they hold this much.
const CHUNK_BYTES: usize = 1 << 16;
/// Largest accepted chunk (corrupt input).
#[cfg(not(test))]
const MAX_CHUNK: u64 = 1 << 24;
/// Largest read-ahead of the other streams while looking for one (corrupt input; the
/// writer's chunks are a few hundred KiB at most).
#[cfg(not(test))]
const MAX_QUEUED: usize = 1 << 26;
// Small limits in unit tests, so that a test reaches them.
#[cfg(test)]
const MAX_CHUNK: u64 = 1 << 18;
#[cfg(test)]
const MAX_QUEUED: usize = 1 << 20;

type ZReader = BufReader<zstd::stream::read::Decoder<'static, BufReader<File>>>;

/// Splits the chunk sequence into the arithmetic and the raw-bit streams.
/// Both streams are flushed together by the writer, so the chunks of one
/// stream read ahead while looking for the other stay within one flush.
struct Demux {
    z: ZReader,
    arith: std::collections::VecDeque<Vec<u8>>,
    raw: std::collections::VecDeque<Vec<u8>>,
    names: std::collections::VecDeque<Vec<u8>>,
    ended: bool,
}

impl Demux {
    /// Read chunks until `kind`'s queue is not empty; `None` at the end.
    fn next(&mut self, kind: u8) -> io::Result<Option<Vec<u8>>> {
        loop {
            let q = match kind {
                CHUNK_ARITH => &mut self.arith,
                CHUNK_RAW => &mut self.raw,
                _ => &mut self.names,
            };
            if let Some(c) = q.pop_front() {
                return Ok(Some(c));
            }
            if self.ended {
                return Ok(None);
            }
            let mut k = [0u8];
            self.z.read_exact(&mut k)?;
            if k[0] == CHUNK_END {
                self.ended = true;
                continue;
            }
            let n = read_varint(&mut self.z).map_err(|e| {
                if e.kind() == io::ErrorKind::InvalidData {
                    io::Error::new(io::ErrorKind::InvalidData, "chunk length")
                } else {
                    e
                }
            })?;
            if n > MAX_CHUNK {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "chunk length"));
            }
            let queued: usize = [&self.arith, &self.raw, &self.names]
                .iter()
                .flat_map(|q| q.iter())
                .map(Vec::len)
                .sum();
            if queued + n as usize > MAX_QUEUED {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "chunks of one stream far ahead of another",
                ));
            }
            let mut v = vec![0u8; n as usize];
            self.z.read_exact(&mut v)?;
            match k[0] {
                CHUNK_ARITH => self.arith.push_back(v),
                CHUNK_RAW => self.raw.push_back(v),
                CHUNK_NAME => self.names.push_back(v),
                _ => return Err(io::Error::new(io::ErrorKind::InvalidData, "chunk kind")),
            }
        }
    }
}

/// One stream of the [`Demux`] as a byte source with a local buffer.
struct ChunkR {
    d: Arc<Mutex<Demux>>,
    kind: u8,
    buf: Vec<u8>,
    p: usize,
    /// Bytes of `buf` not read yet, visible to the parser (the arithmetic decoder owns
    /// its reader), for the end-of-stream check.
    unread: Arc<std::sync::atomic::AtomicUsize>,
}

impl ChunkR {
    fn new(d: &Arc<Mutex<Demux>>, kind: u8) -> Self {
        ChunkR {
            d: Arc::clone(d),
            kind,
            buf: Vec::new(),
            p: 0,
            unread: Arc::default(),
        }
    }

    /// Refill; false at the end of the stream.
    fn refill(&mut self) -> io::Result<bool> {
        while self.p >= self.buf.len() {
            let next = self
                .d
                .lock()
                .map_err(|_| io::Error::other("poisoned reader"))?
                .next(self.kind)?;
            match next {
                Some(b) => {
                    self.buf = b;
                    self.p = 0;
                }
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// Bytes left in the local buffer.
    fn left(&self) -> usize {
        self.buf.len() - self.p
    }
}

impl Read for ChunkR {
    #[inline]
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        // the arithmetic decoder reads one byte at a time
        if let ([o], Some(&b)) = (&mut *out, self.buf.get(self.p)) {
            *o = b;
            self.p += 1;
            self.unread
                .store(self.buf.len() - self.p, std::sync::atomic::Ordering::Relaxed);
            return Ok(1);
        }
        if out.is_empty() || !self.refill()? {
            return Ok(0);
        }
        let n = out.len().min(self.left());
        out[..n].copy_from_slice(&self.buf[self.p..self.p + n]);
        self.p += n;
        self.unread
            .store(self.buf.len() - self.p, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

struct DecC {
    rc: Fpaq0Decoder<ChunkR>,
    raw: ChunkR,
    names: ChunkR,
    acc: u64,
    n: u32,
}

impl DecC {
    #[inline]
    fn get32(&mut self, w: u32) -> io::Result<u64> {
        while self.n < w {
            if self.raw.p >= self.raw.buf.len() && !self.raw.refill()? {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "raw bits"));
            }
            self.acc |= u64::from(self.raw.buf[self.raw.p]) << self.n;
            self.raw.p += 1;
            self.n += 8;
        }
        let v = self.acc & ((1u64 << w) - 1);
        self.acc >>= w;
        self.n -= w;
        Ok(v)
    }
}

impl Coder for DecC {
    const ENC: bool = false;
    #[inline]
    fn bit(&mut self, ctx: &mut Ctx, b: &mut bool) -> io::Result<()> {
        *b = self.rc.get(ctx)?;
        Ok(())
    }
    #[inline]
    fn raw(&mut self, n: u32, _v: u64) -> io::Result<u64> {
        if n > 32 {
            let lo = self.get32(32)?;
            Ok(lo | self.get32(n - 32)? << 32)
        } else if n == 0 {
            Ok(0)
        } else {
            self.get32(n)
        }
    }
    fn name(&mut self, name: &mut Vec<u8>, n: usize) -> io::Result<()> {
        let start = name.len();
        name.resize(start + n, 0);
        self.names.read_exact(&mut name[start..])
    }
}

/// Code one decision; returns the (encoded or decoded) value.
#[inline]
fn flag<C: Coder>(c: &mut C, ctx: &mut Ctx, v: bool) -> io::Result<bool> {
    let mut b = v;
    c.bit(ctx, &mut b)?;
    Ok(b)
}

/// Adaptive contexts of an unsigned integer: Elias-gamma style, the bit
/// length in unary (one context per position), the two bits after the
/// leading one with contexts, the rest raw.
#[derive(Clone)]
struct IntCtx {
    len: [Ctx; 24],
    mant: [[Ctx; 3]; 65],
}

impl Default for IntCtx {
    fn default() -> Self {
        IntCtx {
            len: [Ctx::default(); 24],
            mant: [[Ctx::default(); 3]; 65],
        }
    }
}

#[inline]
fn bitlen(v: u64) -> u32 {
    64 - v.leading_zeros()
}

fn code_u<C: Coder>(c: &mut C, ctx: &mut IntCtx, v: u64) -> io::Result<u64> {
    let n = bitlen(v);
    let mut k = 0u32;
    while k < 64 {
        if !flag(c, &mut ctx.len[(k as usize).min(23)], k < n)? {
            break;
        }
        k += 1;
    }
    if k == 0 {
        return Ok(0);
    }
    let mut r = 1u64;
    let mut i = k - 1;
    for j in 0..2usize {
        if i == 0 {
            break;
        }
        i -= 1;
        let mut b = v >> i & 1 == 1;
        let cx = if j == 0 { 0 } else { 1 + (r & 1) as usize };
        c.bit(&mut ctx.mant[k as usize][cx], &mut b)?;
        r = r << 1 | u64::from(b);
    }
    if i > 0 {
        let low = if i == 64 { v } else { v & ((1u64 << i) - 1) };
        r = r << i | c.raw(i, low)?;
    }
    Ok(r)
}

#[inline]
fn zz(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
fn unzz(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

fn code_s<C: Coder>(c: &mut C, ctx: &mut IntCtx, v: i64) -> io::Result<i64> {
    Ok(unzz(code_u(c, ctx, zz(v))?))
}

/// `n`-bit symbol through a binary context tree (`ctx.len() >= 2^n`).
fn code_tree<C: Coder>(c: &mut C, ctx: &mut [Ctx], n: u32, v: u32) -> io::Result<u32> {
    let mut node = 1usize;
    for i in (0..n).rev() {
        let b = flag(c, &mut ctx[node], v >> i & 1 == 1)?;
        node = node << 1 | usize::from(b);
    }
    Ok((node - (1 << n)) as u32)
}

/// `n` raw bits (the separate raw-bit stream).
#[inline]
fn code_raw<C: Coder>(c: &mut C, n: u32, v: u64) -> io::Result<u64> {
    c.raw(n, v)
}

/// A residual that is usually zero: a per-static zero flag, then the value.
fn code_res<C: Coder>(c: &mut C, zero: &mut Ctx, ctx: &mut IntCtx, v: i64) -> io::Result<i64> {
    if flag(c, zero, v == 0)? {
        return Ok(0);
    }
    let m = code_u(c, ctx, zz(v).wrapping_sub(1))?;
    Ok(unzz(m.wrapping_add(1)))
}

/// `Write` into a buffer shared with the [`BinaryWriter`], which moves the
/// coder's output into the zstd stream after every block.
struct SharedW(Arc<Mutex<Vec<u8>>>);

impl Write for SharedW {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let mut g = self.0.lock().map_err(|_| io::Error::other("poisoned buffer"))?;
        g.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

// ------------------------------------------------------------ helpers

#[inline]
fn lanes_of(mask: u32) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

/// The address mode the Accel-Sim tracer picks when it compresses
/// addresses: base+stride (1) for no lane or one contiguous run of two or
/// more lanes with a constant 32-bit stride, else base+delta (2).
fn tracer_mode(mask: u32, lanes: &[u64; WARP_SIZE]) -> u8 {
    if mask == 0 {
        return 1;
    }
    let run = mask >> mask.trailing_zeros();
    if mask.count_ones() < 2 || run & run.wrapping_add(1) != 0 {
        return 2;
    }
    let l0 = mask.trailing_zeros() as usize;
    let d = lanes[l0 + 1].wrapping_sub(lanes[l0]) as i64;
    let ok = i32::try_from(d).is_ok()
        && lanes_of(mask)
            .skip(1)
            .all(|l| lanes[l].wrapping_sub(lanes[l - 1]) as i64 == d);
    if ok {
        1
    } else {
        2
    }
}

fn scale(e: i64, s: i32) -> i64 {
    if s >= 0 {
        e.wrapping_shl(s as u32)
    } else {
        e >> (-s) as u32
    }
}

fn scale_abs(a: u64, s: i32) -> u64 {
    if s >= 0 {
        a.wrapping_shl(s as u32)
    } else {
        a >> (-s) as u32
    }
}

/// Built-in zstd raw-content dictionary: the text of a typical Accel-Sim
/// header (every key and `#traces format` line) and common SASS opcode
/// strings, so that the header and the opcode names of small traces cost
/// little. Changing it changes the format (bump [`FORMAT_VERSION`]).
const DICT: &str = concat!(
    "MOV S2R IMAD IMAD.MOV.U32 IMAD.WIDE IMAD.WIDE.U32 IMAD.SHL.U32 IMAD.IADD IMAD.HI.U32 IMAD.X ",
    "IADD3 IADD3.X IADD IADD.X IADD32I XMAD XMAD.MRG XMAD.PSL.CBCC XMAD.PSL SHL SHR SHF.R.S32.HI ",
    "SHF.L.U32 SHF.R.U32.HI LEA LEA.HI LEA.HI.X LOP3.LUT LOP.AND LOP32I.AND PRMT SEL FSEL ",
    "ISETP.GE.AND ISETP.NE.AND ISETP.GT.AND ISETP.LT.AND ISETP.GE.U32.AND ISETP.NE.U32.AND ",
    "ISETP.GE.AND.EX ISETP.GT.U32.AND FSETP.GT.AND FSETP.GEU.AND FSETP.NEU.AND PLOP3.LUT ",
    "FADD FMUL FFMA FFMA.FTZ FADD.FTZ FMUL.FTZ MUFU.RCP MUFU.EX2 MUFU.RSQ DADD DMUL DFMA HFMA2 ",
    "HMMA.16816.F32 HMMA.1688.F32 I2F I2F.U32 F2I.TRUNC.NTZ F2F.F64.F32 I2F.F64 POPC FLO.U32 ",
    "LDG.E LDG.E.64 LDG.E.128 LDG.E.U8 LDG.E.CONSTANT LDG.E.64.CONSTANT LDG.E.128.CONSTANT ",
    "LDG.E.SYS LDG.E.CG LDG.E.CI STG.E STG.E.64 STG.E.128 STG.E.U8 STG.E.SYS LDS LDS.U.32 ",
    "LDS.64 LDS.128 LDS.U8 STS STS.64 STS.128 STS.U8 LDSM.16.M88.4 LDGSTS.E.BYPASS.LTC128B.128 ",
    "LDGDEPBAR DEPBAR.LE ATOMG.E.ADD.STRONG.GPU RED.E.ADD.STRONG.GPU ATOM.E.ADD ATOMS.ADD ",
    "LDC LDC.64 ULDC ULDC.64 UMOV S2UR UIADD3 USHF.L.U32 ULEA CS2R CS2R.32 SHFL.BFLY PT ",
    "SHFL.DOWN PT SHFL.IDX PT VOTE.ANY VOTEU.ANY BAR.SYNC BAR.SYNC.DEFER_BLOCKING MEMBAR.GL ",
    "BRA BRA.U BSSY BSYNC WARPSYNC EXIT RET.ABS.NODEC CALL.ABS.NOINC CALL.REL.NOINC NOP ",
    "SSY SYNC PBK BRK CAL RET BPT.TRAP ",
    "\n-kernel name = _Z\n-kernel id = 1\n-grid dim = (1,1,1)\n-block dim = (256,1,1)\n",
    "-shmem = 0\n-nregs = 32\n-binary version = 80\n-cuda stream id = 0\n",
    "-shmem base_addr = 0x00007f0000000000\n-local mem base_addr = 0x00007f0000000000\n",
    "-nvbit version = 1.5.5\n-accelsim tracer version = 4\n",
    "\n#traces format = threadblock_x threadblock_y threadblock_z warpid_tb PC mask dest_num ",
    "[reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]\n",
    "\n#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] ",
    "mem_width [adrrescompress?] [mem_addresses] immediate1 immediate2 Val|NoVal [dest_val_num] ",
    "[dest_val] ... [src_val1_num] [src_val1] ...\n",
    "-kernel name = _Z\n-kernel id = 1\n-grid dim = (1,1,1)\n-block dim = (256,1,1)\n",
    "-shmem = 0\n-nregs = 32\n-binary version = 80\n-cuda stream id = 0\n",
    "-shmem base_addr = 0x00007f0000000000\n-local mem base_addr = 0x00007f0000000000\n",
    "-nvbit version = 1.7\n-accelsim tracer version = 5\n-enable lineinfo = 0\n",
    "\n#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] ",
    "mem_width [adrrescompress?] [mem_addresses] immediate\n\n\n\n",
);

// ------------------------------------------------------------ model

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct StaticKey {
    pc: u32,
    line: u32,
    op: u32,
    imm: [i64; 2],
    n_dst: u8,
    n_src: u8,
    dst: [Reg; MAX_DST],
    src: [Reg; MAX_SRC],
    mem_width: u8,
    flags: u8,
}

const STATIC_FLAGS: u8 = flags::GMMA_COMMIT | flags::HAS_GMMA_FIELD;
const ALIGN_UNSET: u8 = 0xff;

/// Adaptive contexts owned by one static instruction (or by the warp
/// start, for the first instruction of a warp).
#[derive(Clone, Default)]
struct SCtx {
    /// successor: predicted, alternate
    succ: Ctx,
    alt: Ctx,
    /// last instruction of its warp
    end: Ctx,
    /// mask chain flags, in coding order: [0] = previous, [1] = last,
    /// [6] = the mask before the previous one, [2] all, [3] none,
    /// [4] subset, [5] of the last (else of the previous)
    m: [Ctx; 7],
    /// subset lane bits, by (reference, lane set in the other reference)
    lane: [Ctx; 4],
    mode: Ctx,
    vals: Ctx,
    pat: Ctx,
    res0: Ctx,
    stride: Ctx,
    /// a single lane sent as raw bits in the gather region
    region1: Ctx,
    /// gather lane found in the transpose table
    trans: Ctx,
}

struct Static {
    key: StaticKey,
    succ: u32,
    alt: u32,
    last_mask: u32,
    last_mode: u8,
    last_pat: u8,
    /// First-lane address of the last execution.
    last_base: u64,
    /// Last first-lane step, and the confirmed (seen twice in a row) step.
    last_delta: u64,
    stride: u64,
    /// Lane stride of the last AFFINE / STRIDE pattern.
    lane_stride: u64,
    /// First-lane address minus the scaled ring reference, last time.
    ring_k: u64,
    /// Gather region origin and alignment.
    region_lo: u64,
    region_ok: bool,
    align: u8,
    /// lane width of the last GATHER
    gw: u32,
    trans: Option<Box<Trans>>,
    last_valid: u32,
    last: [u64; WARP_SIZE],
    ctx: SCtx,
}

/// Transpose table of one gather instruction: for each element `e` of its
/// region, the threads whose lane read `e`, most recent first. A thread
/// `t` whose lane reads element `u` where thread `u` read element `t` (an
/// undirected graph's reverse edge, a symmetric matrix's transposed entry)
/// finds `u` in the list of element `t`.
struct Trans {
    /// element → first node
    heads: Vec<u32>,
    /// (thread, next node)
    nodes: Vec<(u64, u32)>,
}

impl Trans {
    fn new() -> Self {
        Trans {
            heads: vec![NONE; 1 << TRANS_BITS],
            nodes: Vec::new(),
        }
    }

    /// Record that thread `t` read element `e`; false when `e` is outside the table.
    fn insert(&mut self, e: u64, t: u64) -> bool {
        let Some(h) = self.heads.get_mut(e as usize) else {
            return false;
        };
        self.nodes.push((t, *h));
        *h = (self.nodes.len() - 1) as u32;
        true
    }

    fn list(&self, e: u64) -> impl Iterator<Item = u64> + '_ {
        let mut p = self.heads.get(e as usize).copied().unwrap_or(NONE);
        std::iter::from_fn(move || {
            let (t, next) = *self.nodes.get(p as usize)?;
            p = next;
            Some(t)
        })
    }

    fn clear(&mut self) {
        self.heads.fill(NONE);
        // release the memory too: the budget counts all tables together
        self.nodes = Vec::new();
    }
}

/// Contexts not tied to a static instruction.
#[derive(Clone)]
struct GCtx {
    more_blocks: Ctx,
    block_pred: Ctx,
    cluster: Ctx,
    more_warps: Ctx,
    warp_next: Ctx,
    warp_empty: Ctx,
    sid_new: Ctx,
    sid: IntCtx,
    pc: IntCtx,
    line: IntCtx,
    op: IntCtx,
    name_len: IntCtx,
    imm: IntCtx,
    nn: [Ctx; 256],
    reg_kind: [Ctx; 4],
    reg_num: [Ctx; 256],
    mem_width: IntCtx,
    sflags: [Ctx; 256],
    mode: [Ctx; 4],
    hist_sel: [Ctx; 256],
    hist_lane: [Ctx; 2],
    raw_lane: [Ctx; 32],
    pat: [Ctx; 256],
    res: [IntCtx; 4],
    stride: IntCtx,
    gw: [Ctx; 128],
    galign: [Ctx; 32],
    gflag: [Ctx; 2],
    region: IntCtx,
    trans_pos: IntCtx,
    val_n: IntCtx,
    val: IntCtx,
    block: IntCtx,
    total: IntCtx,
}

impl Default for GCtx {
    fn default() -> Self {
        let c = Ctx::default();
        let i = IntCtx::default();
        GCtx {
            more_blocks: c,
            block_pred: c,
            cluster: c,
            more_warps: c,
            warp_next: c,
            warp_empty: c,
            sid_new: c,
            sid: i.clone(),
            pc: i.clone(),
            line: i.clone(),
            op: i.clone(),
            name_len: i.clone(),
            imm: i.clone(),
            nn: [c; 256],
            reg_kind: [c; 4],
            reg_num: [c; 256],
            mem_width: i.clone(),
            sflags: [c; 256],
            mode: [c; 4],
            hist_sel: [c; 256],
            hist_lane: [c; 2],
            raw_lane: [c; 32],
            pat: [c; 256],
            res: [i.clone(), i.clone(), i.clone(), i.clone()],
            stride: i.clone(),
            gw: [c; 128],
            galign: [c; 32],
            gflag: [c; 2],
            region: i.clone(),
            trans_pos: i.clone(),
            val_n: i.clone(),
            val: i.clone(),
            block: i.clone(),
            total: i,
        }
    }
}

/// Everything the encoder and the decoder keep identical.
struct Model {
    statics: Vec<Static>,
    map: HashMap<StaticKey, u32>,
    /// Successor prediction for the first instruction of a warp.
    start_succ: u32,
    start_alt: u32,
    start_ctx: SCtx,
    ring: Vec<([u64; WARP_SIZE], u32)>,
    ring_head: usize,
    hist: MaskHist,
    g: Box<GCtx>,
    /// opcode names in order of first use (file opcode ids)
    n_ops: u32,
    /// pc of the last static definition
    last_def_pc: u32,
    /// entries of all transpose tables, and the number of tables
    trans_entries: usize,
    trans_tables: usize,
    /// grid dimensions and threads per block: block order, thread ids
    grid: [u64; 3],
    tpb: u64,
}

impl Model {
    fn new(h: &KernelHeader) -> Self {
        let d = |v: u32| u64::from(v.max(1));
        Model {
            statics: Vec::new(),
            map: HashMap::new(),
            start_succ: NONE,
            start_alt: NONE,
            start_ctx: SCtx::default(),
            ring: Vec::new(),
            ring_head: 0,
            hist: MaskHist::default(),
            g: Box::default(),
            n_ops: 0,
            last_def_pc: 0,
            trans_entries: 0,
            trans_tables: 0,
            grid: [d(h.grid[0]), d(h.grid[1]), d(h.grid[2])],
            tpb: d(h.block[0]) * d(h.block[1]) * d(h.block[2]),
        }
    }

    /// Predicted address of lane `l0`: the lane-0 origin of the last
    /// execution, plus the confirmed step, plus `l0` lane strides.
    fn pred(&self, s: usize, l0: usize) -> u64 {
        let st = &self.statics[s];
        st.last_base
            .wrapping_add(st.stride)
            .wrapping_add(st.lane_stride.wrapping_mul(l0 as u64))
    }

    /// Address of lane `l0` predicted from the static's last ring reference.
    fn ring_pred(&self, s: usize, l0: usize) -> Option<u64> {
        let st = &self.statics[s];
        let p = st.last_pat.checked_sub(PAT_RING0)?;
        let (r, sh) = (usize::from(p / 17), i32::from(p % 17) - 8);
        let (ref_l, ref_m) = self.ring_get(r)?;
        if ref_m >> l0 & 1 == 0 {
            return None;
        }
        Some(scale_abs(ref_l[l0], sh).wrapping_add(st.ring_k))
    }

    fn add_static(&mut self, key: StaticKey) -> u32 {
        let id = self.statics.len() as u32;
        self.statics.push(Static {
            key,
            succ: NONE,
            alt: NONE,
            last_mask: u32::MAX,
            last_mode: 0,
            last_pat: 0,
            last_base: 0,
            last_delta: 0,
            stride: 0,
            lane_stride: 0,
            ring_k: 0,
            region_lo: 0,
            region_ok: false,
            align: ALIGN_UNSET,
            gw: 0,
            trans: None,
            last_valid: 0,
            last: [0; WARP_SIZE],
            ctx: SCtx::default(),
        });
        self.map.insert(key, id);
        id
    }

    /// (predicted, alternate) successor of `prev` (`NONE` = warp start).
    fn succ_of(&self, prev: u32) -> (u32, u32) {
        if prev == NONE {
            (self.start_succ, self.start_alt)
        } else {
            let s = &self.statics[prev as usize];
            (s.succ, s.alt)
        }
    }

    fn set_succ(&mut self, prev: u32, cur: u32) {
        let (s, a) = if prev == NONE {
            (&mut self.start_succ, &mut self.start_alt)
        } else {
            let st = &mut self.statics[prev as usize];
            (&mut st.succ, &mut st.alt)
        };
        if *s != cur {
            *a = *s;
            *s = cur;
        }
    }

    fn prev_ctx(&mut self, prev: u32) -> &mut SCtx {
        if prev == NONE {
            &mut self.start_ctx
        } else {
            &mut self.statics[prev as usize].ctx
        }
    }

    /// Record a memory instruction's lane addresses.
    fn update_mem(&mut self, sid: u32, mask: u32, lanes: &[u64; WARP_SIZE]) {
        let st = &mut self.statics[sid as usize];
        if mask != 0 {
            let l0 = mask.trailing_zeros() as usize;
            let a0 = lanes[l0].wrapping_sub(st.lane_stride.wrapping_mul(l0 as u64));
            let d = a0.wrapping_sub(st.last_base);
            if d == st.last_delta {
                st.stride = d;
            }
            st.last_delta = d;
            st.last_base = a0;
        }
        st.last = *lanes;
        st.last_valid = mask;
        if mask != 0 {
            if self.ring.len() < RING {
                self.ring.push((*lanes, mask));
                self.ring_head = self.ring.len() % RING;
            } else {
                self.ring[self.ring_head] = (*lanes, mask);
                self.ring_head = (self.ring_head + 1) % RING;
            }
        }
    }

    /// Ring entry `r` (0 = most recent).
    fn ring_get(&self, r: usize) -> Option<&([u64; WARP_SIZE], u32)> {
        if r >= self.ring.len() {
            return None;
        }
        let n = self.ring.len();
        let head = if n < RING { n } else { self.ring_head };
        Some(&self.ring[(head + n - 1 - r) % n])
    }

    /// First ring entry whose lane offsets, scaled by a power of two, give
    /// these offsets (pattern code minus `PAT_RING0`).
    fn find_ring(&self, mask: u32, lanes: &[u64; 32]) -> Option<u8> {
        let l0 = mask.trailing_zeros() as usize;
        let rel = |l: usize| lanes[l].wrapping_sub(lanes[l0]) as i64;
        for r in 0..RING {
            let (ref_l, ref_m) = self.ring_get(r)?;
            if ref_m & mask != mask {
                continue;
            }
            let e = |l: usize| ref_l[l].wrapping_sub(ref_l[l0]) as i64;
            let mut shift: Option<i32> = None;
            let mut ok = true;
            for l in lanes_of(mask) {
                let (d, ev) = (rel(l), e(l));
                if d == 0 && ev == 0 {
                    continue;
                }
                if d == 0 || ev == 0 {
                    ok = false;
                    break;
                }
                shift = Some(d.trailing_zeros() as i32 - ev.trailing_zeros() as i32);
                break;
            }
            if !ok {
                continue;
            }
            let sh = shift.unwrap_or(0);
            if !(-8..=8).contains(&sh) {
                continue;
            }
            if lanes_of(mask).all(|l| scale(e(l), sh) == rel(l)) {
                return Some((r as u8) * 17 + (sh + 8) as u8);
            }
        }
        None
    }
}

/// Address pattern codes.
const PAT_STATIC: u8 = 0;
const PAT_STRIDE: u8 = 1;
const PAT_GATHER: u8 = 2;
const PAT_GDELTA: u8 = 3;
const PAT_AFFINE: u8 = 4;
const PAT_RING0: u8 = 8; // + r*17 + (shift+8)

/// Per-warp history of recent distinct masks (most recent first).
#[derive(Default)]
struct MaskHist {
    h: [u32; 8],
    n: usize,
}

impl MaskHist {
    fn reset(&mut self) {
        self.n = 0;
    }

    fn push(&mut self, m: u32) {
        let pos = self.h[..self.n].iter().position(|&x| x == m);
        let end = match pos {
            Some(p) => p,
            None => {
                if self.n < 8 {
                    self.n += 1;
                }
                self.n - 1
            }
        };
        self.h.copy_within(0..end, 1);
        self.h[0] = m;
    }

    /// Selector `op<<6 | i<<3 | j`: op 0 `h[i] & !h[j]`, 1 `h[i] ^ h[j]`,
    /// 2 `h[i] | h[j]`.
    fn op(&self, sel: u32) -> Option<u32> {
        let (op, i, j) = (sel >> 6, (sel >> 3 & 7) as usize, (sel & 7) as usize);
        if i >= self.n || j >= self.n {
            return None;
        }
        let (a, b) = (self.h[i], self.h[j]);
        Some(match op {
            0 => a & !b,
            1 => a ^ b,
            2 => a | b,
            _ => return None,
        })
    }
}

// ------------------------------------------------------------ codec

/// Coding failure: I/O (including a truncated stream) or a field whose
/// decoded value is inconsistent with the model (corrupt data).
enum CErr {
    Io(io::Error),
    Bad(&'static str),
}

impl From<io::Error> for CErr {
    fn from(e: io::Error) -> Self {
        CErr::Io(e)
    }
}

type CResult<T> = std::result::Result<T, CErr>;

/// One instruction in transit: the encoder fills it from the trace, the
/// decoder from the stream.
struct Io {
    ins: TraceInstr,
    /// File opcode id, and its name when it is defined by this instruction.
    op: u32,
    name: Vec<u8>,
    lanes: [u64; WARP_SIZE],
    /// v6 values: per operand a count, then the values.
    vals: Vec<u64>,
}

impl Io {
    fn new() -> Self {
        Io {
            ins: TraceInstr::default(),
            op: 0,
            name: Vec::new(),
            lanes: [0; WARP_SIZE],
            vals: Vec::new(),
        }
    }

    fn key(&self) -> StaticKey {
        let i = &self.ins;
        let mut k = StaticKey {
            pc: i.pc,
            line: i.line,
            op: self.op,
            imm: i.imm,
            n_dst: i.n_dst,
            n_src: i.n_src,
            dst: i.dst,
            src: i.src,
            mem_width: i.mem_width,
            flags: i.flags & STATIC_FLAGS,
        };
        // Canonicalize unused register slots so equal records share a key.
        for r in k.dst.iter_mut().skip(usize::from(i.n_dst)) {
            *r = Reg::default();
        }
        for r in k.src.iter_mut().skip(usize::from(i.n_src)) {
            *r = Reg::default();
        }
        k
    }
}

/// Parameters of a GATHER / GDELTA pattern chosen by the encoder.
#[derive(Default, Clone, Copy)]
struct Gather {
    w: u32,
    align: u8,
    lo: u64,
    new_lo: bool,
}

impl Model {
    /// Code one instruction (not its end-of-warp flag); returns its static id.
    fn code_instr<C: Coder>(
        &mut self,
        c: &mut C,
        x: &mut Io,
        prev: u32,
        prev_mask: u32,
        tid0: u64,
    ) -> CResult<u32> {
        // -- static instruction
        let (pred, alt) = self.succ_of(prev);
        let (mut sid, mut is_new) = (NONE, false);
        if C::ENC {
            match self.map.get(&x.key()) {
                Some(&s) => sid = s,
                None => is_new = true,
            }
        }
        let hit = pred != NONE && flag(c, &mut self.prev_ctx(prev).succ, !is_new && sid == pred)?;
        if hit {
            sid = pred;
        } else {
            let hit =
                alt != NONE && alt != pred && flag(c, &mut self.prev_ctx(prev).alt, !is_new && sid == alt)?;
            if hit {
                sid = alt;
            } else if flag(c, &mut self.g.sid_new, is_new)? {
                sid = self.code_def(c, x)?;
            } else {
                let v = code_u(c, &mut self.g.sid, u64::from(sid))?;
                if v >= self.statics.len() as u64 {
                    return Err(CErr::Bad("static id"));
                }
                sid = v as u32;
            }
        }
        self.set_succ(prev, sid);
        let s = sid as usize;
        let k = self.statics[s].key;
        let i = &mut x.ins;
        i.pc = k.pc;
        i.line = k.line;
        i.imm = k.imm;
        i.n_dst = k.n_dst;
        i.n_src = k.n_src;
        i.dst = k.dst;
        i.src = k.src;
        i.mem_width = k.mem_width;
        x.op = k.op;

        // -- mask
        let mask = self.code_mask(c, s, x.ins.mask, prev_mask)?;
        x.ins.mask = mask;

        // -- values flag
        let st = &mut self.statics[s];
        let has_vals = flag(c, &mut st.ctx.vals, x.ins.has_values())?;
        x.ins.flags = k.flags | if has_vals { flags::HAS_VALUES } else { 0 };
        st.last_mask = mask;

        // -- addresses
        if k.mem_width > 0 {
            if mask != 0 {
                self.code_addrs(c, s, mask, &mut x.lanes, tid0)?;
            }
            let lanes = x.lanes;
            self.update_mem(sid, mask, &lanes);
        }

        // -- addr_mode, predicted by the tracer's rule once the trace
        // has shown that it compresses addresses
        let st = &mut self.statics[s];
        let pm = if k.mem_width > 0 && st.last_mode != 0 {
            tracer_mode(mask, &x.lanes)
        } else {
            st.last_mode
        };
        let mode = x.ins.addr_mode as u8;
        let mode = if flag(c, &mut st.ctx.mode, mode == pm)? {
            pm
        } else {
            code_tree(c, &mut self.g.mode, 2, u32::from(mode))? as u8
        };
        x.ins.addr_mode = AddrMode::from_u8(mode).ok_or(CErr::Bad("addr_mode"))?;
        st.last_mode = mode;

        // -- v6 values
        if has_vals {
            let mut p = 0usize;
            for _ in 0..usize::from(k.n_dst) + usize::from(k.n_src) {
                let n = code_u(c, &mut self.g.val_n, x.vals.get(p).copied().unwrap_or(0))?;
                if n > MAX_VALUES {
                    return Err(CErr::Bad("value count"));
                }
                if !C::ENC {
                    x.vals.push(n);
                }
                p += 1;
                for _ in 0..n {
                    let v = code_u(c, &mut self.g.val, x.vals.get(p).copied().unwrap_or(0))?;
                    if !C::ENC {
                        x.vals.push(v);
                    }
                    p += 1;
                }
            }
        }
        Ok(sid)
    }

    /// A new static instruction's definition.
    fn code_def<C: Coder>(&mut self, c: &mut C, x: &mut Io) -> CResult<u32> {
        let mut key = x.key();
        let g = &mut self.g;
        let base = self.last_def_pc.wrapping_add(16);
        key.pc = base.wrapping_add(code_s(c, &mut g.pc, i64::from(key.pc.wrapping_sub(base) as i32))? as u32);
        self.last_def_pc = key.pc;
        key.line =
            u32::try_from(code_u(c, &mut g.line, u64::from(key.line))?).map_err(|_| CErr::Bad("line"))?;
        let op = code_u(c, &mut g.op, u64::from(key.op))?;
        if op > u64::from(self.n_ops) {
            return Err(CErr::Bad("opcode"));
        }
        key.op = op as u32;
        if op == u64::from(self.n_ops) {
            let n = code_u(c, &mut g.name_len, x.name.len() as u64)?;
            if n == 0 || n > MAX_NAME {
                return Err(CErr::Bad("opcode"));
            }
            c.name(&mut x.name, n as usize)?;
            self.n_ops += 1;
        }
        for v in key.imm.iter_mut() {
            *v = code_s(c, &mut g.imm, *v)?;
        }
        let nn = code_tree(c, &mut g.nn, 8, u32::from(key.n_dst | key.n_src << 4))? as u8;
        let (n_dst, n_src) = (nn & 15, nn >> 4);
        if usize::from(n_dst) > MAX_DST || usize::from(n_src) > MAX_SRC {
            return Err(CErr::Bad("register count"));
        }
        key.n_dst = n_dst;
        key.n_src = n_src;
        for j in 0..usize::from(n_dst + n_src) {
            let r = if j < usize::from(n_dst) {
                &mut key.dst[j]
            } else {
                &mut key.src[j - usize::from(n_dst)]
            };
            let kind = code_tree(c, &mut g.reg_kind, 2, r.kind as u32)? as u8;
            r.kind = RegKind::from_u8(kind).ok_or(CErr::Bad("register"))?;
            r.num = code_tree(c, &mut g.reg_num, 8, u32::from(r.num))? as u8;
        }
        key.mem_width = u8::try_from(code_u(c, &mut g.mem_width, u64::from(key.mem_width))?)
            .map_err(|_| CErr::Bad("mem_width"))?;
        key.flags = code_tree(c, &mut g.sflags, 8, u32::from(key.flags))? as u8;
        if key.flags & !STATIC_FLAGS != 0 {
            return Err(CErr::Bad("flags"));
        }
        if !C::ENC && self.map.contains_key(&key) {
            return Err(CErr::Bad("static definition"));
        }
        if self.statics.len() >= MAX_STATICS {
            return Err(CErr::Bad("static instruction count"));
        }
        Ok(self.add_static(key))
    }

    fn code_mask<C: Coder>(&mut self, c: &mut C, s: usize, m: u32, prev: u32) -> CResult<u32> {
        let last = self.statics[s].last_mask;
        let sc = &mut self.statics[s].ctx;
        if flag(c, &mut sc.m[0], m == prev)? {
            return Ok(prev);
        }
        if flag(c, &mut sc.m[1], m == last)? {
            return Ok(last);
        }
        // the mask before the previous one (a divergent body rejoining)
        let h1 = if self.hist.n >= 2 { self.hist.h[1] } else { prev };
        if flag(c, &mut sc.m[6], m == h1)? {
            return Ok(h1);
        }
        if flag(c, &mut sc.m[2], m == u32::MAX)? {
            return Ok(u32::MAX);
        }
        if flag(c, &mut sc.m[3], m == 0)? {
            return Ok(0);
        }
        let (sp, sl) = (m & !prev == 0, m & !last == 0);
        if flag(c, &mut sc.m[4], sp || sl)? {
            let use_last = if sp && sl {
                last.count_ones() < prev.count_ones()
            } else {
                sl
            };
            let use_last = flag(c, &mut sc.m[5], use_last)?;
            let (base, other) = if use_last { (last, prev) } else { (prev, last) };
            let mut r = 0u32;
            for l in lanes_of(base) {
                let cx = &mut sc.lane[2 * usize::from(use_last) + (other >> l & 1) as usize];
                if flag(c, cx, m >> l & 1 == 1)? {
                    r |= 1 << l;
                }
            }
            return Ok(r);
        }
        // history of the warp's recent masks
        let h = &self.hist;
        let mut sel = 0xffu32;
        if C::ENC {
            if let Some(x) = (0..0xc0).find(|&x| h.op(x) == Some(m)) {
                sel = x;
            } else if let Some(i) = (0..h.n)
                .filter(|&i| m & !h.h[i] == 0 && h.h[i].count_ones() < 24)
                .min_by_key(|&i| h.h[i].count_ones())
            {
                sel = 0xc0 | (i as u32) << 3;
            }
        }
        let g = &mut self.g;
        let sel = code_tree(c, &mut g.hist_sel, 8, sel)?;
        if sel == 0xff {
            let mut r = 0u32;
            for l in 0..32 {
                if flag(c, &mut g.raw_lane[l], m >> l & 1 == 1)? {
                    r |= 1 << l;
                }
            }
            return Ok(r);
        }
        if sel >> 6 == 3 {
            let i = (sel >> 3 & 7) as usize;
            if i >= h.n || sel & 7 != 0 {
                return Err(CErr::Bad("mask"));
            }
            let base = h.h[i];
            let mut r = 0u32;
            for l in lanes_of(base) {
                if flag(c, &mut g.hist_lane[0], m >> l & 1 == 1)? {
                    r |= 1 << l;
                }
            }
            return Ok(r);
        }
        h.op(sel).ok_or(CErr::Bad("mask"))
    }

    /// Encoder: the pattern of a multi-lane access.
    fn choose_pat(&self, s: usize, mask: u32, lanes: &[u64; WARP_SIZE]) -> (u8, Gather) {
        let st = &self.statics[s];
        let l0 = mask.trailing_zeros() as usize;
        let pred = self.pred(s, l0);
        let res = lanes[l0].wrapping_sub(pred);
        let rel = |l: usize| lanes[l].wrapping_sub(lanes[l0]);
        let same = st.last_valid & mask == mask
            && lanes_of(mask).all(|l| st.last[l].wrapping_sub(st.last[l0]) == rel(l));
        if same && res == 0 {
            return (PAT_STATIC, Gather::default());
        }
        let l1 = (mask & (mask - 1)).trailing_zeros() as usize;
        let d1 = rel(l1) as i64;
        let k1 = (l1 - l0) as i64;
        let affine = d1 % k1 == 0 && {
            let sd = d1 / k1;
            lanes_of(mask).all(|l| rel(l) as i64 == sd.wrapping_mul((l - l0) as i64))
        };
        if affine && (d1 / k1) as u64 == st.lane_stride {
            return (PAT_AFFINE, Gather::default());
        }
        if let Some(code) = self.find_ring(mask, lanes) {
            let (r, sh) = (usize::from(code / 17), i32::from(code % 17) - 8);
            let ref_l0 = self.ring_get(r).map_or(0, |e| e.0[l0]);
            let k = scale_abs(ref_l0, sh);
            let rres = lanes[l0].wrapping_sub(k.wrapping_add(st.ring_k));
            if !same || rres == 0 {
                return (PAT_RING0 + code, Gather::default());
            }
        }
        if same {
            return (PAT_STATIC, Gather::default());
        }
        let mut buf = [0u64; WARP_SIZE];
        let mut n = 0;
        for l in lanes_of(mask) {
            buf[n] = lanes[l];
            n += 1;
        }
        let a = &buf[..n];
        let stride = a.windows(2).all(|p| p[1].wrapping_sub(p[0]) == d1 as u64);
        // Elias-gamma cost of a stride and a residual (about twice the bit
        // length of each), against the raw bits of a gather below.
        let eg = |v: i64| 2 * u64::from(bitlen(zz(v))) + 1;
        let lin_cost = if affine {
            Some((PAT_AFFINE, eg(d1 / k1) + eg(res as i64)))
        } else if stride {
            Some((PAT_STRIDE, eg(d1) + eg(res as i64)))
        } else {
            None
        };
        // region-relative lanes, or zigzag consecutive deltas
        let mn = a.iter().copied().min().unwrap_or(0);
        let new_lo = !st.region_ok || a.iter().any(|&x| x.wrapping_sub(st.region_lo) >= 1 << 48);
        // A new region starts at the minimum rounded down to a power of two
        // of the span: the array base when the array is aligned to its size,
        // so that later lanes below this minimum still fall inside.
        let lo = if new_lo {
            let mx = a.iter().copied().max().unwrap_or(mn);
            let k = bitlen(mx - mn).min(40);
            mn & !((1u64 << k) - 1)
        } else {
            st.region_lo
        };
        let tz = a
            .iter()
            .map(|&x| x.wrapping_sub(lo))
            .filter(|&v| v != 0)
            .map(|v| v.trailing_zeros())
            .min()
            .unwrap_or(u32::from(st.align.min(16)))
            .min(16) as u8;
        let ga = if st.align != ALIGN_UNSET && tz >= st.align {
            st.align
        } else {
            tz
        };
        let gw = a
            .iter()
            .map(|&x| bitlen(x.wrapping_sub(lo) >> ga))
            .max()
            .unwrap_or(0);
        let gcost = if gw > 63 {
            u64::MAX
        } else {
            u64::from(gw) * a.len() as u64
        };
        let ds = || a.windows(2).map(|p| p[1].wrapping_sub(p[0]) as i64);
        let dtz = ds()
            .filter(|&d| d != 0)
            .map(|d| d.trailing_zeros())
            .min()
            .unwrap_or(0)
            .min(16) as u8;
        let da = if st.align != ALIGN_UNSET && dtz >= st.align {
            st.align
        } else {
            dtz
        };
        let dw = ds().map(|d| bitlen(zz(d >> da))).max().unwrap_or(0);
        let dcost = 2 * u64::from(bitlen(zz(res as i64))) + u64::from(dw) * (a.len() as u64 - 1);
        let gcost = gcost.saturating_add(if new_lo { 24 } else { 4 });
        if let Some((pat, cost)) = lin_cost {
            if cost <= gcost.min(dcost) {
                return (pat, Gather::default());
            }
        }
        if gcost <= dcost {
            (
                PAT_GATHER,
                Gather {
                    w: gw,
                    align: ga,
                    lo,
                    new_lo,
                },
            )
        } else {
            (
                PAT_GDELTA,
                Gather {
                    w: dw,
                    align: da,
                    lo: 0,
                    new_lo: false,
                },
            )
        }
    }

    /// Addresses of a memory instruction with a non-empty mask.
    fn code_addrs<C: Coder>(
        &mut self,
        c: &mut C,
        s: usize,
        mask: u32,
        lanes: &mut [u64; WARP_SIZE],
        tid0: u64,
    ) -> CResult<()> {
        let l0 = mask.trailing_zeros() as usize;
        let (pred, last_pat) = (self.pred(s, l0), self.statics[s].last_pat);
        if mask.count_ones() == 1 {
            // a ring reference of this static's multi-lane executions, else the
            // static's own history
            let rp = self.ring_pred(s, l0);
            let p1 = rp.unwrap_or(pred);
            let st = &mut self.statics[s];
            // a lane of a gather static: raw bits in its region, when cheaper
            if st.region_ok && st.gw > 0 && st.align <= 16 {
                let (lo, al, gw) = (st.region_lo, u32::from(st.align), st.gw);
                let off = lanes[l0].wrapping_sub(lo);
                let fits = off & ((1u64 << al) - 1) == 0 && (off >> al).checked_shr(gw).unwrap_or(0) == 0;
                let res = lanes[l0].wrapping_sub(p1) as i64;
                let cheaper = res != 0 && 2 * bitlen(zz(res)) + 1 > gw;
                if flag(c, &mut st.ctx.region1, fits && cheaper)? {
                    let v = code_raw(c, gw, off >> al)?;
                    lanes[l0] = lo.wrapping_add(v << al);
                    if let Some(rp) = rp {
                        st.ring_k = st.ring_k.wrapping_add(lanes[l0].wrapping_sub(rp));
                    }
                    return Ok(());
                }
            }
            let r = code_res(
                c,
                &mut st.ctx.res0,
                &mut self.g.res[0],
                lanes[l0].wrapping_sub(p1) as i64,
            )?;
            lanes[l0] = p1.wrapping_add(r as u64);
            if let Some(rp) = rp {
                st.ring_k = st.ring_k.wrapping_add(lanes[l0].wrapping_sub(rp));
            }
            return Ok(());
        }
        let (mut pat, mut ga) = (0u8, Gather::default());
        if C::ENC {
            (pat, ga) = self.choose_pat(s, mask, lanes);
        }
        let g = &mut self.g;
        let st = &mut self.statics[s];
        if !flag(c, &mut st.ctx.pat, pat == last_pat)? {
            pat = code_tree(c, &mut g.pat, 8, u32::from(pat))? as u8;
        } else {
            pat = last_pat;
        }
        st.last_pat = pat;
        match pat {
            PAT_STATIC => {
                if st.last_valid & mask != mask {
                    return Err(CErr::Bad("address pattern"));
                }
                let a0 = pred.wrapping_add(code_res(
                    c,
                    &mut st.ctx.res0,
                    &mut g.res[1],
                    lanes[l0].wrapping_sub(pred) as i64,
                )? as u64);
                let b = st.last[l0];
                for l in lanes_of(mask) {
                    lanes[l] = a0.wrapping_add(st.last[l].wrapping_sub(b));
                }
            }
            PAT_AFFINE | PAT_STRIDE => {
                let l1 = (mask & (mask - 1)).trailing_zeros() as usize;
                let mut sd = lanes[l1].wrapping_sub(lanes[l0]);
                if pat == PAT_AFFINE {
                    sd = (sd as i64 / (l1 - l0) as i64) as u64;
                }
                if !flag(c, &mut st.ctx.stride, sd == st.lane_stride)? {
                    sd = code_s(c, &mut g.stride, sd as i64)? as u64;
                } else {
                    sd = st.lane_stride;
                }
                st.lane_stride = sd;
                let a0 = pred.wrapping_add(code_res(
                    c,
                    &mut st.ctx.res0,
                    &mut g.res[2],
                    lanes[l0].wrapping_sub(pred) as i64,
                )? as u64);
                for (i, l) in lanes_of(mask).enumerate() {
                    let k = if pat == PAT_AFFINE { l - l0 } else { i };
                    lanes[l] = a0.wrapping_add(sd.wrapping_mul(k as u64));
                }
            }
            PAT_GATHER => self.code_gather(c, s, mask, lanes, tid0, ga)?,
            PAT_GDELTA => {
                let w = code_tree(c, &mut g.gw, 7, ga.w)?;
                let da = if flag(c, &mut g.gflag[1], ga.align != st.align)? {
                    code_tree(c, &mut g.galign, 5, u32::from(ga.align))? as u8
                } else {
                    st.align
                };
                if da > 16 || w > 64 {
                    return Err(CErr::Bad("gather code"));
                }
                let mut a = pred.wrapping_add(code_res(
                    c,
                    &mut st.ctx.res0,
                    &mut g.res[3],
                    lanes[l0].wrapping_sub(pred) as i64,
                )? as u64);
                let mut prev = lanes[l0];
                lanes[l0] = a;
                for l in lanes_of(mask).skip(1) {
                    let d = lanes[l].wrapping_sub(prev) as i64;
                    prev = lanes[l];
                    let v = unzz(code_raw(c, w, zz(d >> da))?);
                    a = a.wrapping_add(v.wrapping_shl(u32::from(da)) as u64);
                    lanes[l] = a;
                }
                st.align = da;
            }
            p => {
                let p = p.checked_sub(PAT_RING0).ok_or(CErr::Bad("address pattern"))?;
                let (r, sh) = (usize::from(p / 17), i32::from(p % 17) - 8);
                if r >= RING {
                    return Err(CErr::Bad("address pattern"));
                }
                let ring_k = self.statics[s].ring_k;
                let (ref_l, ref_m) = *self.ring_get(r).ok_or(CErr::Bad("address pattern"))?;
                if ref_m & mask != mask {
                    return Err(CErr::Bad("address pattern"));
                }
                let k = scale_abs(ref_l[l0], sh);
                let base = k.wrapping_add(ring_k);
                let st = &mut self.statics[s];
                let a0 = base.wrapping_add(code_res(
                    c,
                    &mut st.ctx.res0,
                    &mut self.g.res[2],
                    lanes[l0].wrapping_sub(base) as i64,
                )? as u64);
                for l in lanes_of(mask) {
                    let e = ref_l[l].wrapping_sub(ref_l[l0]) as i64;
                    lanes[l] = a0.wrapping_add(scale(e, sh) as u64);
                }
                st.ring_k = a0.wrapping_sub(k);
            }
        }
        Ok(())
    }

    /// GATHER: lanes relative to the static's region, `w` raw bits each.
    fn code_gather<C: Coder>(
        &mut self,
        c: &mut C,
        s: usize,
        mask: u32,
        lanes: &mut [u64; WARP_SIZE],
        tid0: u64,
        ga: Gather,
    ) -> CResult<()> {
        let g = &mut self.g;
        let st = &mut self.statics[s];
        let w = code_tree(c, &mut g.gw, 7, ga.w)?;
        let new_lo = flag(c, &mut g.gflag[0], ga.new_lo)?;
        let align = if flag(c, &mut g.gflag[1], ga.align != st.align)? {
            code_tree(c, &mut g.galign, 5, u32::from(ga.align))? as u8
        } else {
            st.align
        };
        if align > 16 || w > 64 {
            return Err(CErr::Bad("gather code"));
        }
        let lo = if new_lo {
            st.region_lo
                .wrapping_add(code_s(c, &mut g.region, ga.lo.wrapping_sub(st.region_lo) as i64)? as u64)
        } else if st.region_ok {
            st.region_lo
        } else {
            return Err(CErr::Bad("gather region"));
        };
        st.region_lo = lo;
        st.region_ok = true;
        st.align = align;
        // a new region starts a new transpose table (elements beyond
        // 2^TRANS_BITS are not tracked)
        if new_lo {
            if let Some(t) = st.trans.take() {
                self.trans_entries -= t.nodes.len();
                self.trans_tables -= 1;
            }
        }
        let st = &mut self.statics[s];
        st.gw = w;
        if st.trans.is_none() && w <= TRANS_BITS && self.trans_tables < TRANS_TABLES {
            st.trans = Some(Box::new(Trans::new()));
            self.trans_tables += 1;
        }
        let mut got = [0u64; WARP_SIZE];
        for l in lanes_of(mask) {
            let t = tid0.wrapping_add(l as u64);
            let v = lanes[l].wrapping_sub(lo) >> align;
            let st = &mut self.statics[s];
            let (mut n, mut pos) = (0u64, None);
            if let Some(tr) = &st.trans {
                for (i, u) in tr.list(t).take(TRANS_LIST).enumerate() {
                    if C::ENC && pos.is_none() && u == v {
                        pos = Some(i as u64);
                    }
                    n += 1;
                }
            }
            let v = if n > 0 && flag(c, &mut st.ctx.trans, pos.is_some())? {
                let k = code_u(c, &mut self.g.trans_pos, pos.unwrap_or(0))?;
                let tr = st.trans.as_ref().ok_or(CErr::Bad("gather lane"))?;
                tr.list(t).nth(k as usize).ok_or(CErr::Bad("gather lane"))?
            } else {
                code_raw(c, w, v)?
            };
            got[l] = v;
            lanes[l] = lo.wrapping_add(v.wrapping_shl(u32::from(align)));
        }
        if self.statics[s].trans.is_some() {
            if self.trans_entries + WARP_SIZE > TRANS_CAP {
                for t in self.statics.iter_mut().filter_map(|st| st.trans.as_mut()) {
                    t.clear();
                }
                self.trans_entries = 0;
            }
            if let Some(tr) = &mut self.statics[s].trans {
                for l in lanes_of(mask) {
                    if tr.insert(got[l], tid0.wrapping_add(l as u64)) {
                        self.trans_entries += 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// Global id of thread lane 0 of warp `warp_id` of block `b`.
    fn tid0(&self, b: [u32; 3], warp_id: u32) -> u64 {
        let [x, y, z] = b.map(u64::from);
        let lin = x.wrapping_add(self.grid[0].wrapping_mul(y.wrapping_add(self.grid[1].wrapping_mul(z))));
        lin.wrapping_mul(self.tpb)
            .wrapping_add(u64::from(warp_id).wrapping_mul(WARP_SIZE as u64))
    }

    /// The block expected after `prev` (x fastest), `[0; 3]` first.
    fn next_block(&self, prev: Option<[u32; 3]>) -> [u32; 3] {
        let Some([x, y, z]) = prev else { return [0; 3] };
        let [gx, gy, _] = self.grid;
        if u64::from(x) + 1 < gx {
            [x + 1, y, z]
        } else if u64::from(y) + 1 < gy {
            [0, y + 1, z]
        } else {
            [0, 0, z.wrapping_add(1)]
        }
    }

    /// Block header: position (predicted) and cluster.
    fn code_block_head<C: Coder>(
        &mut self,
        c: &mut C,
        tb: &mut ThreadBlockTrace,
        prev: Option<[u32; 3]>,
    ) -> CResult<()> {
        let p = self.next_block(prev);
        let g = &mut self.g;
        if flag(c, &mut g.block_pred, tb.block == p)? {
            tb.block = p;
        } else {
            for d in tb.block.iter_mut() {
                *d =
                    u32::try_from(code_u(c, &mut g.block, u64::from(*d))?).map_err(|_| CErr::Bad("block"))?;
            }
        }
        let has = flag(c, &mut g.cluster, tb.cluster.is_some())?;
        if has {
            let mut ci = tb.cluster.unwrap_or_default();
            for d in ci
                .id
                .iter_mut()
                .chain(ci.cta.iter_mut())
                .chain(std::iter::once(&mut ci.rank))
            {
                *d = u32::try_from(code_u(c, &mut g.block, u64::from(*d))?)
                    .map_err(|_| CErr::Bad("cluster"))?;
            }
            tb.cluster = Some(ci);
        }
        Ok(())
    }

    /// Warp header: id (predicted: previous + 1) and whether it is empty.
    fn code_warp_head<C: Coder>(
        &mut self,
        c: &mut C,
        id: u32,
        prev: Option<u32>,
        empty: bool,
    ) -> CResult<(u32, bool)> {
        let p = prev.map_or(0, |x| x.wrapping_add(1));
        let g = &mut self.g;
        let id = if flag(c, &mut g.warp_next, id == p)? {
            p
        } else {
            u32::try_from(code_u(c, &mut g.block, u64::from(id))?).map_err(|_| CErr::Bad("warp id"))?
        };
        Ok((id, flag(c, &mut g.warp_empty, empty)?))
    }
}

/// Most instructions in one warp of one thread block: bounds what a
/// corrupt file can make the reader allocate (the text of such a warp
/// would be about a gigabyte). The writer refuses larger warps.
const MAX_WARP_INSTRS: usize = 1 << 24;

// ------------------------------------------------------------ encoder

/// Move the coder's output into the zstd stream as chunks (names, arithmetic bytes,
/// raw-bit bytes) once they hold `CHUNK_BYTES` together, or always when `force`. The
/// writer calls it every `DRAIN_EVERY` instructions, so chunks stay small (far below
/// `MAX_CHUNK`) and the reader's read-ahead of one stream past another stays bounded.
fn drain_chunks<W: Write>(
    z: &mut zstd::stream::write::Encoder<'static, W>,
    buf: &Arc<Mutex<Vec<u8>>>,
    rc: &mut EncC<SharedW>,
    force: bool,
) -> io::Result<()> {
    let mut a = buf.lock().map_err(|_| io::Error::other("poisoned buffer"))?;
    let (raw, names) = (&mut rc.bits.out, &mut rc.names);
    if !force && a.len() + raw.len() + names.len() < CHUNK_BYTES {
        return Ok(());
    }
    for (kind, bytes) in [(CHUNK_NAME, names), (CHUNK_ARITH, &mut *a), (CHUNK_RAW, raw)] {
        if bytes.is_empty() {
            continue;
        }
        let mut head = vec![kind];
        put_varint(&mut head, bytes.len() as u64);
        z.write_all(&head)?;
        z.write_all(bytes)?;
        bytes.clear();
    }
    Ok(())
}

/// Instructions between two checks of the coder's output size (one instruction writes
/// at most a few KiB).
const DRAIN_EVERY: usize = 256;

/// Streaming writer of a binary trace.
pub struct BinaryWriter<W: Write> {
    z: zstd::stream::write::Encoder<'static, W>,
    rc: EncC<SharedW>,
    buf: Arc<Mutex<Vec<u8>>>,
    path: PathBuf,
    model: Model,
    /// reader opcode name → file opcode id
    file_ops: HashMap<Box<str>, u32>,
    x: Io,
    prev_block: Option<[u32; 3]>,
    n_blocks: u64,
    n_instrs: u64,
}

/// Options of [`convert_with`](crate::convert_with) and [`BinaryWriter`].
#[derive(Clone, Copy, Debug)]
pub struct ConvertOptions {
    /// zstd level (1..=22) of the container (the header text; the
    /// arithmetic-coded body is already dense).
    pub zstd_level: i32,
    /// zstd window log.
    pub window_log: u32,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            zstd_level: 19,
            window_log: 20,
        }
    }
}

impl BinaryWriter<BufWriter<File>> {
    /// Create `path` and write the header.
    pub fn create(path: &Path, header: &KernelHeader, opts: &ConvertOptions) -> Result<Self> {
        let f = File::create(path).map_err(|e| TraceError::io(path, 0, e))?;
        BinaryWriter::new(BufWriter::with_capacity(1 << 16, f), header, path, opts)
    }
}

impl<W: Write> BinaryWriter<W> {
    /// Write the magic and the header to `out`. `path` is for messages.
    pub fn new(mut out: W, header: &KernelHeader, path: &Path, opts: &ConvertOptions) -> Result<Self> {
        let io = |e| TraceError::io(path, 0, e);
        out.write_all(BINARY_MAGIC).map_err(io)?;
        out.write_all(&FORMAT_VERSION.to_le_bytes()).map_err(io)?;
        let mut z = zstd::stream::write::Encoder::with_dictionary(out, opts.zstd_level, DICT.as_bytes())
            .map_err(io)?;
        z.include_checksum(true).map_err(io)?;
        z.include_dictid(false).map_err(io)?;
        z.include_contentsize(false).map_err(io)?;
        z.window_log(opts.window_log).map_err(io)?;
        let raw = if header.raw.is_empty() {
            crate::text::synth_header(header)
        } else {
            header.raw.clone()
        };
        let mut len = Vec::new();
        put_varint(&mut len, raw.len() as u64);
        z.write_all(&len).map_err(io)?;
        z.write_all(raw.as_bytes()).map_err(io)?;
        let buf = Arc::new(Mutex::new(Vec::with_capacity(1 << 16)));
        Ok(BinaryWriter {
            z,
            rc: EncC {
                rc: Fpaq0Encoder::new(SharedW(Arc::clone(&buf))),
                bits: BitW::default(),
                names: Vec::new(),
            },
            buf,
            path: path.to_path_buf(),
            model: Model::new(header),
            file_ops: HashMap::new(),
            x: Io::new(),
            prev_block: None,
            n_blocks: 0,
            n_instrs: 0,
        })
    }

    fn enc_err(&self, e: CErr) -> TraceError {
        match e {
            CErr::Io(e) => TraceError::io(&self.path, 0, e),
            CErr::Bad(f) => TraceError::Encode {
                path: self.path.clone(),
                msg: format!("cannot encode {f}"),
            },
        }
    }

    /// Move the coder's output into the zstd stream (see [`drain_chunks`]).
    fn drain(&mut self, force: bool) -> Result<()> {
        drain_chunks(&mut self.z, &self.buf, &mut self.rc, force)
            .map_err(|e| TraceError::io(&self.path, 0, e))
    }

    /// Append one thread block. `ops` is the table the block's opcode ids
    /// refer to.
    pub fn write_block(&mut self, tb: &ThreadBlockTrace, ops: &OpcodeTable) -> Result<()> {
        // Check the instructions first, so that a bad record leaves the
        // stream untouched: everything the reader would refuse.
        let enc = |msg: String| TraceError::Encode {
            path: self.path.clone(),
            msg,
        };
        if tb.warps.len() as u64 > MAX_WARPS {
            return Err(enc(format!(
                "block {:?} has {} warps; the binary format holds at most {MAX_WARPS}",
                tb.block,
                tb.warps.len()
            )));
        }
        for w in &tb.warps {
            for ins in &w.instrs {
                if ops.name(ins.opcode).len() as u64 > MAX_NAME {
                    return Err(enc(format!("opcode name longer than {MAX_NAME} bytes")));
                }
                if w.values_of(ins).iter().any(|v| v.len() as u64 > MAX_VALUES) {
                    return Err(enc(format!(
                        "instruction at pc {:#x} has more than {MAX_VALUES} values in one operand",
                        ins.pc
                    )));
                }
            }
        }
        for w in &tb.warps {
            if w.instrs.len() > MAX_WARP_INSTRS {
                return Err(TraceError::Encode {
                    path: self.path.clone(),
                    msg: format!(
                        "warp {} has {} instructions; the binary format holds at most {MAX_WARP_INSTRS} per warp",
                        w.warp_id,
                        w.instrs.len()
                    ),
                });
            }
            for ins in &w.instrs {
                if ops.name(ins.opcode).is_empty() {
                    return Err(TraceError::Encode {
                        path: self.path.clone(),
                        msg: format!("opcode id {} not in the table", ins.opcode.0),
                    });
                }
                let n = w.addrs_of(ins).len();
                if ins.is_mem() && n != ins.n_addrs() {
                    return Err(TraceError::Encode {
                        path: self.path.clone(),
                        msg: format!(
                            "memory instruction at pc {:#x} has {n} addresses, mask needs {}",
                            ins.pc,
                            ins.n_addrs()
                        ),
                    });
                }
                let nv = w.values_of(ins).len();
                if ins.has_values() && nv != usize::from(ins.n_dst) + usize::from(ins.n_src) {
                    return Err(TraceError::Encode {
                        path: self.path.clone(),
                        msg: "malformed value arena".into(),
                    });
                }
            }
        }
        self.enc_block(tb, ops).map_err(|e| self.enc_err(e))?;
        self.n_blocks += 1;
        self.drain(false)
    }

    fn enc_block(&mut self, tb: &ThreadBlockTrace, ops: &OpcodeTable) -> CResult<()> {
        let (c, m, x) = (&mut self.rc, &mut self.model, &mut self.x);
        flag(c, &mut m.g.more_blocks, true)?;
        let mut head = ThreadBlockTrace {
            block: tb.block,
            cluster: tb.cluster,
            warps: Vec::new(),
        };
        m.code_block_head(c, &mut head, self.prev_block)?;
        self.prev_block = Some(tb.block);
        let mut pw = None;
        for w in &tb.warps {
            flag(c, &mut m.g.more_warps, true)?;
            m.code_warp_head(c, w.warp_id, pw, w.instrs.is_empty())?;
            pw = Some(w.warp_id);
            let tid0 = m.tid0(tb.block, w.warp_id);
            m.hist.reset();
            let (mut prev, mut prev_mask) = (NONE, u32::MAX);
            for (i, ins) in w.instrs.iter().enumerate() {
                let name = ops.name(ins.opcode);
                x.name.clear();
                x.op = match self.file_ops.get(name) {
                    Some(&id) => id,
                    None => {
                        let id = self.file_ops.len() as u32;
                        self.file_ops.insert(name.into(), id);
                        x.name.extend_from_slice(name.as_bytes());
                        id
                    }
                };
                x.ins = *ins;
                x.lanes = [0; WARP_SIZE];
                for (l, &a) in lanes_of(ins.mask).zip(w.addrs_of(ins)) {
                    x.lanes[l] = a;
                }
                x.vals.clear();
                for v in w.values_of(ins) {
                    x.vals.push(v.len() as u64);
                    x.vals.extend_from_slice(v);
                }
                let sid = m.code_instr(c, x, prev, prev_mask, tid0)?;
                flag(c, &mut m.statics[sid as usize].ctx.end, i + 1 == w.instrs.len())?;
                if i % DRAIN_EVERY == DRAIN_EVERY - 1 {
                    drain_chunks(&mut self.z, &self.buf, c, false)?;
                }
                m.hist.push(ins.mask);
                prev = sid;
                prev_mask = ins.mask;
            }
            self.n_instrs += w.instrs.len() as u64;
        }
        flag(c, &mut m.g.more_warps, false)?;
        Ok(())
    }

    /// Write the end mark and totals, flush. Returns the inner writer.
    pub fn finish(mut self) -> Result<W> {
        let r: CResult<()> = (|| {
            let (c, m) = (&mut self.rc, &mut self.model);
            flag(c, &mut m.g.more_blocks, false)?;
            code_u(c, &mut m.g.total, self.n_blocks)?;
            code_u(c, &mut m.g.total, self.n_instrs)?;
            c.rc.finish()?;
            c.bits.pad();
            Ok(())
        })();
        r.map_err(|e| self.enc_err(e))?;
        self.drain(true)?;
        let io = |e| TraceError::io(&self.path, 0, e);
        self.z.write_all(&[CHUNK_END]).map_err(io)?;
        let mut w = self.z.finish().map_err(io)?;
        w.flush().map_err(io)?;
        Ok(w)
    }
}

// ------------------------------------------------------------ decoder

pub(crate) struct BinaryParser {
    path: PathBuf,
    demux: Arc<Mutex<Demux>>,
    /// Unread bytes of the arithmetic stream's current chunk.
    arith_unread: Arc<std::sync::atomic::AtomicUsize>,
    rc: DecC,
    model: Model,
    /// file opcode id → reader opcode id
    file_ops: Vec<OpcodeId>,
    x: Io,
    prev_block: Option<[u32; 3]>,
    record: u64,
    n_instrs: u64,
    done: bool,
}

impl BinaryParser {
    pub(crate) fn open(path: &Path) -> Result<(BinaryParser, KernelHeader)> {
        let io = |e| TraceError::io(path, 0, e);
        let mut f = BufReader::with_capacity(1 << 16, File::open(path).map_err(io)?);
        let mut head = [0u8; 10];
        f.read_exact(&mut head).map_err(io)?;
        if &head[..8] != BINARY_MAGIC {
            return Err(berr(path, 0, "magic", "not a sassim binary trace".into()));
        }
        let ver = u16::from_le_bytes([head[8], head[9]]);
        if ver != FORMAT_VERSION {
            return Err(berr(
                path,
                0,
                "version",
                format!(
                    "unsupported format version {ver} (this sassim reads version {FORMAT_VERSION}; \
                     convert the text trace again with `sassim trace convert`)"
                ),
            ));
        }
        let mut d = zstd::stream::read::Decoder::with_dictionary(f, DICT.as_bytes()).map_err(io)?;
        d.window_log_max(31).map_err(io)?;
        let mut z = BufReader::with_capacity(1 << 16, d);
        let trunc = |e: io::Error| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                TraceError::Truncated {
                    path: path.to_path_buf(),
                    line: 0,
                    field: "header",
                    msg: "binary trace ends inside the header".into(),
                }
            } else {
                TraceError::io(path, 0, e)
            }
        };
        let n = match read_varint(&mut z) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                return Err(berr(path, 0, "header length", "varint too long".into()));
            }
            Err(e) => return Err(trunc(e)),
        };
        if n > 1 << 24 {
            return Err(berr(path, 0, "header length", format!("{n} bytes")));
        }
        let mut raw = vec![0u8; n as usize];
        z.read_exact(&mut raw).map_err(trunc)?;
        let raw = String::from_utf8(raw).map_err(|_| berr(path, 0, "header", "not UTF-8".into()))?;
        let mut h = KernelHeader::default();
        let mut format_line = String::new();
        for (i, line) in raw.lines().enumerate() {
            if line.trim_start().starts_with('#') {
                if line.trim_start().starts_with("#traces format") {
                    format_line = line.trim().to_string();
                }
                continue;
            }
            h.parse_line(path, i as u64 + 1, line)?;
        }
        h.raw = raw;
        h.format_line = format_line;
        h.finish(path, 0)?;
        let demux = Arc::new(Mutex::new(Demux {
            z,
            arith: Default::default(),
            raw: Default::default(),
            names: Default::default(),
            ended: false,
        }));
        let arith = ChunkR::new(&demux, CHUNK_ARITH);
        let arith_unread = Arc::clone(&arith.unread);
        let rc = DecC {
            rc: Fpaq0Decoder::new(arith).map_err(trunc)?,
            raw: ChunkR::new(&demux, CHUNK_RAW),
            names: ChunkR::new(&demux, CHUNK_NAME),
            acc: 0,
            n: 0,
        };
        let p = BinaryParser {
            path: path.to_path_buf(),
            demux,
            arith_unread,
            rc,
            model: Model::new(&h),
            file_ops: Vec::new(),
            x: Io::new(),
            prev_block: None,
            record: 0,
            n_instrs: 0,
            done: false,
        };
        Ok((p, h))
    }

    fn derr(&self, e: CErr) -> TraceError {
        match e {
            CErr::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => TraceError::Truncated {
                path: self.path.clone(),
                line: 0,
                field: "record",
                msg: format!("binary trace ends inside record {}", self.record),
            },
            CErr::Io(e) => TraceError::io(&self.path, 0, e),
            CErr::Bad(f) => berr(&self.path, self.record, f, "corrupt or inconsistent data".into()),
        }
    }

    pub(crate) fn next_block(&mut self, ops: &mut OpcodeTable) -> Result<Option<ThreadBlockTrace>> {
        if self.done {
            return Ok(None);
        }
        match self.dec_block(ops) {
            Ok(Some(tb)) => {
                self.record += 1;
                Ok(Some(tb))
            }
            Ok(None) => {
                self.done = true;
                Ok(None)
            }
            Err(e) => Err(self.derr(e)),
        }
    }

    fn dec_block(&mut self, ops: &mut OpcodeTable) -> CResult<Option<ThreadBlockTrace>> {
        let (c, m, x) = (&mut self.rc, &mut self.model, &mut self.x);
        if !flag(c, &mut m.g.more_blocks, false)? {
            let nb = code_u(c, &mut m.g.total, 0)?;
            let ni = code_u(c, &mut m.g.total, 0)?;
            if nb != self.record || ni != self.n_instrs {
                return Err(CErr::Bad("end totals"));
            }
            // Only the padding of the raw-bit stream may be left; then the
            // end chunk, and the end of the zstd frame (checksum verified).
            let arith_left = self.arith_unread.load(std::sync::atomic::Ordering::Relaxed);
            if c.raw.left() != 0 || c.acc != 0 || c.names.left() != 0 || arith_left != 0 {
                return Err(CErr::Bad("data after the end"));
            }
            let mut d = self.demux.lock().map_err(|_| CErr::Bad("reader"))?;
            if d.next(CHUNK_ARITH)?.is_some() || d.next(CHUNK_RAW)?.is_some() || d.next(CHUNK_NAME)?.is_some()
            {
                return Err(CErr::Bad("data after the end"));
            }
            // one byte: the frame must end here (which verifies its checksum)
            let mut rest = [0u8];
            if d.z.read(&mut rest)? != 0 {
                return Err(CErr::Bad("data after the end"));
            }
            return Ok(None);
        }
        let mut tb = ThreadBlockTrace::default();
        m.code_block_head(c, &mut tb, self.prev_block)?;
        self.prev_block = Some(tb.block);
        let mut pw = None;
        while flag(c, &mut m.g.more_warps, false)? {
            if tb.warps.len() as u64 >= MAX_WARPS {
                return Err(CErr::Bad("warp count"));
            }
            let (id, empty) = m.code_warp_head(c, 0, pw, false)?;
            pw = Some(id);
            let mut w = WarpTrace {
                warp_id: id,
                ..Default::default()
            };
            let tid0 = m.tid0(tb.block, id);
            m.hist.reset();
            let (mut prev, mut prev_mask) = (NONE, u32::MAX);
            let mut more = !empty;
            while more {
                x.ins = TraceInstr::default();
                x.lanes = [0; WARP_SIZE];
                x.name.clear();
                x.vals.clear();
                let sid = m.code_instr(c, x, prev, prev_mask, tid0)?;
                if !x.name.is_empty() {
                    let s = std::str::from_utf8(&x.name).map_err(|_| CErr::Bad("opcode"))?;
                    self.file_ops.push(ops.intern(s).ok_or(CErr::Bad("opcode"))?);
                }
                let mut ins = x.ins;
                ins.opcode = *self.file_ops.get(x.op as usize).ok_or(CErr::Bad("opcode"))?;
                if ins.is_mem() {
                    ins.addr_start = u32::try_from(w.addrs.len()).map_err(|_| CErr::Bad("address"))?;
                    w.addrs.extend(lanes_of(ins.mask).map(|l| x.lanes[l]));
                }
                if ins.has_values() {
                    ins.val_start = u32::try_from(w.values.len()).map_err(|_| CErr::Bad("values"))?;
                    w.values.extend_from_slice(&x.vals);
                }
                w.instrs.push(ins);
                if w.instrs.len() > MAX_WARP_INSTRS {
                    return Err(CErr::Bad("instruction count"));
                }
                let end = flag(c, &mut m.statics[sid as usize].ctx.end, false)?;
                m.hist.push(ins.mask);
                prev = sid;
                prev_mask = ins.mask;
                more = !end;
            }
            self.n_instrs += w.instrs.len() as u64;
            tb.warps.push(w);
        }
        Ok(Some(tb))
    }
}

fn berr(path: &Path, record: u64, field: &'static str, msg: String) -> TraceError {
    TraceError::Binary {
        path: path.to_path_buf(),
        record,
        field,
        msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: deterministic test bytes without a dependency.
    fn bytes(seed: &mut u64, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                *seed ^= *seed >> 12;
                *seed ^= *seed << 25;
                *seed ^= *seed >> 27;
                (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
            })
            .collect()
    }

    fn chunk(out: &mut Vec<u8>, kind: u8, b: &[u8]) {
        out.push(kind);
        put_varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }

    /// A version-4 header with this geometry.
    fn test_header(grid: [u32; 3], block: [u32; 3]) -> KernelHeader {
        KernelHeader {
            name: "k".into(),
            grid,
            block,
            tracer_version: 4,
            ..Default::default()
        }
    }

    /// A load `op R2, [R4]` of `width` bytes per lane whose addresses start at
    /// `addr_start` in its warp's arena.
    fn load(op: OpcodeId, pc: u32, mask: u32, width: u8, addr_start: usize) -> TraceInstr {
        let mut ins = TraceInstr {
            pc,
            mask,
            opcode: op,
            n_dst: 1,
            n_src: 1,
            mem_width: width,
            addr_mode: AddrMode::BaseDelta,
            addr_start: addr_start as u32,
            ..Default::default()
        };
        ins.dst[0] = Reg::r(2);
        ins.src[0] = Reg::r(4);
        ins
    }

    /// Write `tbs` to `path` in the binary format and read them back: exactly the same
    /// blocks, then the end.
    fn write_and_read_back(path: &Path, h: &KernelHeader, tbs: &[ThreadBlockTrace], ops: &OpcodeTable) {
        let mut wr = BinaryWriter::create(path, h, &ConvertOptions::default()).unwrap();
        for tb in tbs {
            wr.write_block(tb, ops).unwrap();
        }
        wr.finish().unwrap();
        let mut rd = crate::KernelTraceReader::open(path).unwrap();
        for tb in tbs {
            assert!(rd.next_block().unwrap().as_ref() == Some(tb));
        }
        assert!(rd.next_block().unwrap().is_none());
    }

    /// Gathers past the transpose tables' limits (entries and tables, small in unit
    /// tests): the tables are cleared or not created, identically on both sides, and the
    /// round trip stays exact. Half of the gathers read `thread ^ 1` so that the
    /// transpose table hits, before and after clears.
    #[test]
    fn transpose_limits_keep_roundtrip_exact() {
        let dir = std::env::temp_dir().join(format!("sassim-trace-trans-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.sbt");
        let h = test_header([4, 1, 1], [128, 1, 1]);
        let mut ops = OpcodeTable::new();
        let ld = ops.intern("LDG.E.U8").unwrap();
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut tbs = Vec::new();
        for b in 0..4u32 {
            let mut tb = ThreadBlockTrace {
                block: [b, 0, 0],
                ..Default::default()
            };
            for wi in 0..4u32 {
                let mut w = WarpTrace {
                    warp_id: wi,
                    ..Default::default()
                };
                for k in 0..24u32 {
                    // three gather instructions: more than the tables allowed here
                    let pc = 16 * (k % 3);
                    let mask = if k % 5 == 0 {
                        bytes(&mut seed, 4)
                            .iter()
                            .fold(0u32, |a, &x| a << 8 | u32::from(x))
                    } else {
                        u32::MAX
                    };
                    let ins = load(ld, pc, mask, 1, w.addrs.len());
                    let r = bytes(&mut seed, 64);
                    for l in (0..32u32).filter(|l| mask >> l & 1 == 1) {
                        let t = u64::from((b * 128 + wi * 32 + l) as u16);
                        let e = if k % 2 == 0 {
                            t ^ 1
                        } else {
                            u64::from(u16::from_le_bytes([r[2 * l as usize], r[2 * l as usize + 1]]) & 0x1ff)
                        };
                        w.addrs.push(0x7f00_0000_0000 + e);
                    }
                    w.instrs.push(ins);
                }
                tb.warps.push(w);
            }
            tbs.push(tb);
        }
        write_and_read_back(&path, &h, &tbs, &ops);
        let _ = std::fs::remove_dir_all(dir);
    }

    /// One thread block whose coded size is many times a chunk's limit (small in unit
    /// tests) is written as many chunks and reads back exactly: the writer flushes inside
    /// a block, so a long kernel's block is never one oversized chunk.
    #[test]
    fn huge_block_is_split_into_chunks() {
        let dir = std::env::temp_dir().join(format!("sassim-trace-huge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("h.sbt");
        let h = test_header([1, 1, 1], [256, 1, 1]);
        let mut ops = OpcodeTable::new();
        let ld = ops.intern("LDG.E").unwrap();
        let mut seed = 0x0bad_cafe_1234_5678u64;
        let mut tb = ThreadBlockTrace::default();
        for wi in 0..8u32 {
            let mut w = WarpTrace {
                warp_id: wi,
                ..Default::default()
            };
            for _ in 0..2000 {
                let ins = load(ld, 0, u32::MAX, 4, w.addrs.len());
                for b in bytes(&mut seed, 128).chunks(4) {
                    let r = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    w.addrs.push(0x7f00_0000_0000 + u64::from(r >> 8) * 4);
                }
                w.instrs.push(ins);
            }
            tb.warps.push(w);
        }
        write_and_read_back(&path, &h, std::slice::from_ref(&tb), &ops);
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size > 4 * MAX_CHUNK, "{size} bytes: not past the chunk limit");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Arbitrary arithmetic, raw-bit and name streams inside a valid container (header,
    /// zstd frame with the dictionary and checksum) never panic and never read forever:
    /// every file gives records or an error naming the file.
    #[test]
    fn garbage_streams_are_errors_not_panics() {
        let header = "-kernel name = k\n-grid dim = (4,2,1)\n-block dim = (96,1,1)\n\
                      -accelsim tracer version = 4\n\n#traces format = [line_num] PC mask dest_num \
                      [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]\n";
        let dir = std::env::temp_dir().join(format!("sassim-trace-garbage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.sbt");
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let (mut errors, mut records) = (0, 0u64);
        for i in 0..300 {
            let mut payload = Vec::new();
            put_varint(&mut payload, header.len() as u64);
            payload.extend_from_slice(header.as_bytes());
            let n = 1 + (i * 37) % 3000;
            chunk(&mut payload, CHUNK_NAME, &bytes(&mut seed, 64));
            chunk(&mut payload, CHUNK_ARITH, &bytes(&mut seed, n));
            chunk(&mut payload, CHUNK_RAW, &bytes(&mut seed, n * 4));
            if i % 2 == 0 {
                payload.push(CHUNK_END);
            }
            let mut z =
                zstd::stream::write::Encoder::with_dictionary(Vec::new(), 3, DICT.as_bytes()).unwrap();
            z.include_checksum(true).unwrap();
            z.write_all(&payload).unwrap();
            let mut file = BINARY_MAGIC.to_vec();
            file.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
            file.extend_from_slice(&z.finish().unwrap());
            std::fs::write(&path, &file).unwrap();
            let r = crate::KernelTraceReader::open(&path).and_then(|mut r| {
                let mut n = 0u64;
                while let Some(tb) = r.next_block()? {
                    n += tb.n_instrs();
                }
                Ok(n)
            });
            match r {
                Ok(n) => records += n,
                Err(e) => {
                    assert_eq!(e.path(), path.as_path(), "{e}");
                    errors += 1;
                }
            }
        }
        // Random streams almost never form a consistent file (end mark, totals, padding).
        assert!(errors >= 295, "{errors} errors, {records} instructions read");
        let _ = std::fs::remove_dir_all(dir);
    }
}
