//! The sassim compact binary trace format (`SASSIMBT`), see
//! `docs/trace-format.md`.
//!
//! Layout: 8-byte magic, `u16` format version (LE), then one zstd stream
//! (with a built-in dictionary) holding the payload: the raw header text,
//! then records (one per thread block, split into column streams) and an
//! end record with totals. Instructions are predicted from a model
//! (static-instruction table, successor prediction, mask and address
//! predictors) that the encoder and the decoder update identically, so most
//! instructions cost a fraction of a byte after zstd; data-dependent masks
//! and gather addresses are bit-packed.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Result, TraceError};
use crate::header::KernelHeader;
use crate::record::{
    flags, AddrMode, ClusterInfo, OpcodeId, OpcodeTable, Reg, RegKind, ThreadBlockTrace, TraceInstr,
    WarpTrace, MAX_DST, MAX_SRC, WARP_SIZE,
};
use crate::source::BINARY_MAGIC;

/// Current format version.
pub const FORMAT_VERSION: u16 = 2;

const TAG_END: u8 = 0;
const TAG_BLOCK: u8 = 1;
const RING: usize = 8;
const NONE: u32 = u32::MAX;
/// Largest accepted uncompressed block record (sanity bound for corrupt files).
const MAX_RECORD: u64 = 1 << 34;

// ------------------------------------------------------------ varints

#[inline]
fn put_u(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

#[inline]
fn zz(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
fn unzz(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

struct Cur<'a> {
    b: &'a [u8],
    p: usize,
}

impl<'a> Cur<'a> {
    #[inline]
    fn u8(&mut self) -> Option<u8> {
        let v = *self.b.get(self.p)?;
        self.p += 1;
        Some(v)
    }
    #[inline]
    fn u(&mut self) -> Option<u64> {
        let mut v = 0u64;
        let mut sh = 0u32;
        loop {
            let c = self.u8()?;
            if sh >= 64 {
                return None;
            }
            v |= u64::from(c & 0x7f) << sh;
            if c < 0x80 {
                return Some(v);
            }
            sh += 7;
        }
    }
    #[inline]
    fn s(&mut self) -> Option<i64> {
        self.u().map(unzz)
    }
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.p..self.p.checked_add(n)?)?;
        self.p += n;
        Some(s)
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

// ------------------------------------------------------------ bit streams

#[derive(Default)]
struct BitW {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitW {
    #[inline]
    fn put32(&mut self, v: u64, w: u32) {
        debug_assert!(w <= 32);
        if w == 0 {
            return;
        }
        self.acc |= (v & ((1u64 << w) - 1)) << self.n;
        self.n += w;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }
    #[inline]
    fn put(&mut self, v: u64, w: u32) {
        if w > 32 {
            self.put32(v & 0xffff_ffff, 32);
            self.put32(v >> 32, w - 32);
        } else {
            self.put32(v, w);
        }
    }
    fn flush(&mut self) {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.acc = 0;
        self.n = 0;
    }
}

struct BitR<'a> {
    b: &'a [u8],
    p: usize,
    acc: u64,
    n: u32,
}

impl BitR<'_> {
    #[inline]
    fn get32(&mut self, w: u32) -> Option<u64> {
        if w == 0 {
            return Some(0);
        }
        while self.n < w {
            let c = *self.b.get(self.p)?;
            self.p += 1;
            self.acc |= u64::from(c) << self.n;
            self.n += 8;
        }
        let v = self.acc & ((1u64 << w) - 1);
        self.acc >>= w;
        self.n -= w;
        Some(v)
    }
    #[inline]
    fn get(&mut self, w: u32) -> Option<u64> {
        if w > 32 {
            let lo = self.get32(32)?;
            let hi = self.get32(w - 32)?;
            Some(lo | hi << 32)
        } else {
            self.get32(w)
        }
    }
}

/// Spread the low `popcount(of)` bits of `bits` onto the set bits of `of`.
#[inline]
fn deposit(bits: u32, of: u32) -> u32 {
    let mut r = 0;
    for (i, l) in lanes_of(of).enumerate() {
        r |= (bits >> i & 1) << l;
    }
    r
}

/// Inverse of [`deposit`] for `m ⊆ of`.
#[inline]
fn extract(m: u32, of: u32) -> u32 {
    let mut r = 0;
    for (i, l) in lanes_of(of).enumerate() {
        r |= (m >> l & 1) << i;
    }
    r
}

#[inline]
fn bitlen(v: u64) -> u32 {
    64 - v.leading_zeros()
}

#[inline]
fn ulen(v: u64) -> u32 {
    (bitlen(v).max(1)).div_ceil(7)
}

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

struct Static {
    key: StaticKey,
    succ: u32,
    last_mask: u32,
    /// First-lane address of the last execution.
    last_base: u64,
    /// Last first-lane step, and the confirmed (seen twice in a row) step.
    last_delta: u64,
    stride: u64,
    /// First-lane address minus the scaled ring reference, last time.
    ring_k: u64,
    /// Gather region origin and alignment.
    region_lo: u64,
    region_ok: bool,
    align: u8,
    last_valid: u32,
    last: [u64; WARP_SIZE],
}

#[derive(Default)]
struct Model {
    statics: Vec<Static>,
    map: HashMap<StaticKey, u32>,
    /// Predicted first static of a warp.
    start_succ: u32,
    ring: Vec<([u64; WARP_SIZE], u32)>,
    ring_head: usize,
}

impl Model {
    fn new() -> Self {
        Model {
            start_succ: NONE,
            ..Default::default()
        }
    }

    fn add_static(&mut self, key: StaticKey) -> u32 {
        let id = self.statics.len() as u32;
        self.statics.push(Static {
            key,
            succ: NONE,
            last_mask: u32::MAX,
            last_base: 0,
            last_delta: 0,
            stride: 0,
            ring_k: 0,
            region_lo: 0,
            region_ok: false,
            align: ALIGN_UNSET,
            last_valid: 0,
            last: [0; WARP_SIZE],
        });
        self.map.insert(key, id);
        id
    }

    fn set_succ(&mut self, prev: u32, cur: u32) {
        if prev == NONE {
            self.start_succ = cur;
        } else {
            self.statics[prev as usize].succ = cur;
        }
    }

    fn predicted(&self, prev: u32) -> u32 {
        if prev == NONE {
            self.start_succ
        } else {
            self.statics[prev as usize].succ
        }
    }

    /// Record a memory instruction's lane addresses.
    fn update_mem(&mut self, sid: u32, mask: u32, lanes: &[u64; WARP_SIZE]) {
        let st = &mut self.statics[sid as usize];
        if mask != 0 {
            let a0 = lanes[mask.trailing_zeros() as usize];
            let d = a0.wrapping_sub(st.last_base);
            if d == st.last_delta {
                st.stride = d;
            }
            st.last_delta = d;
            st.last_base = a0;
        }
        st.last = *lanes;
        st.last_valid = mask;
        if mask.count_ones() >= 2 {
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
}

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

/// Lane-offset pattern codes.
const PAT_STATIC: u8 = 0;
const PAT_STRIDE: u8 = 1;
const PAT_GATHER: u8 = 2;
const PAT_GDELTA: u8 = 3;
const PAT_RING0: u8 = 4; // + r*17 + (shift+8)

/// Mask codes.
const M_PREV: u8 = 0;
const M_LAST: u8 = 1;
const M_ALL: u8 = 2;
const M_ZERO: u8 = 3;
const M_HIST: u8 = 4;
const M_SUB_PREV: u8 = 5;
const M_SUB_LAST: u8 = 6;

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

    fn op(&self, sel: u8) -> Option<u32> {
        let (op, i, j) = (sel >> 6, usize::from(sel >> 3 & 7), usize::from(sel & 7));
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

    /// Mask code `M_HIST`: a selector byte in the mask stream (`0xff` = raw
    /// `u32` follows; op 3 = subset of `h[i]`, bits in the bit stream).
    fn encode(&self, m: u32, s: &mut Streams) {
        for sel in 0..=0xbfu8 {
            if self.op(sel) == Some(m) {
                s.mask.push(sel);
                return;
            }
        }
        let best = (0..self.n)
            .filter(|&i| m & !self.h[i] == 0)
            .min_by_key(|&i| self.h[i].count_ones());
        match best {
            Some(i) if self.h[i].count_ones() < 24 => {
                s.mask.push(0xc0 | (i as u8) << 3);
                s.bits
                    .put(u64::from(extract(m, self.h[i])), self.h[i].count_ones());
            }
            _ => {
                s.mask.push(0xff);
                s.mask.extend_from_slice(&m.to_le_bytes());
            }
        }
    }

    fn decode(&self, d: &mut Dec<'_>) -> Option<u32> {
        let sel = d.mask.u8()?;
        if sel == 0xff {
            let b = d.mask.bytes(4)?;
            return Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        }
        if sel >> 6 == 3 {
            let i = usize::from(sel >> 3 & 7);
            if i >= self.n || sel & 7 != 0 {
                return None;
            }
            let v = d.bits.get(self.h[i].count_ones())?;
            return Some(deposit(v as u32, self.h[i]));
        }
        self.op(sel)
    }
}

/// Per-record output streams (column layout).
#[derive(Default)]
struct Streams {
    /// instruction headers, static ids and definitions, warp headers
    ctl: Vec<u8>,
    /// raw masks
    mask: Vec<u8>,
    /// address patterns, residuals, gather codes
    addr: Vec<u8>,
    /// bit-packed mask subsets and gather lanes
    bits: BitW,
    /// v6 values
    val: Vec<u8>,
}

impl Streams {
    fn clear(&mut self) {
        self.ctl.clear();
        self.mask.clear();
        self.addr.clear();
        self.bits.out.clear();
        self.bits.acc = 0;
        self.bits.n = 0;
        self.val.clear();
    }
}

// ------------------------------------------------------------ encoder

/// Streaming writer of a binary trace.
pub struct BinaryWriter<W: Write> {
    z: zstd::stream::write::Encoder<'static, W>,
    path: PathBuf,
    model: Model,
    /// reader opcode name → file opcode id
    file_ops: HashMap<Box<str>, u32>,
    s: Streams,
    hist: MaskHist,
    rec: Vec<u8>,
    n_blocks: u64,
    n_instrs: u64,
}

/// Options of [`convert_with`](crate::convert_with) and [`BinaryWriter`].
#[derive(Clone, Copy, Debug)]
pub struct ConvertOptions {
    /// zstd level (1..=22). Higher is smaller and slower to write; reading
    /// speed barely changes.
    pub zstd_level: i32,
    /// zstd window log (memory bound of the reader is about 2^window_log).
    pub window_log: u32,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            zstd_level: 19,
            window_log: 24,
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
        z.long_distance_matching(true).map_err(io)?;
        let raw = if header.raw.is_empty() {
            crate::text::synth_header(header)
        } else {
            header.raw.clone()
        };
        let mut buf = Vec::new();
        put_u(&mut buf, raw.len() as u64);
        buf.extend_from_slice(raw.as_bytes());
        z.write_all(&buf).map_err(io)?;
        Ok(BinaryWriter {
            z,
            path: path.to_path_buf(),
            model: Model::new(),
            file_ops: HashMap::new(),
            s: Streams::default(),
            hist: MaskHist::default(),
            rec: Vec::new(),
            n_blocks: 0,
            n_instrs: 0,
        })
    }

    fn enc_err(&self, msg: String) -> TraceError {
        TraceError::Encode {
            path: self.path.clone(),
            msg,
        }
    }

    /// Append one thread block. `ops` is the table the block's opcode ids
    /// refer to.
    pub fn write_block(&mut self, tb: &ThreadBlockTrace, ops: &OpcodeTable) -> Result<()> {
        let mut s = std::mem::take(&mut self.s);
        s.clear();
        let r = self.enc_block(&mut s, tb, ops);
        if r.is_ok() {
            s.bits.flush();
            let rec = &mut self.rec;
            rec.clear();
            let mut lens = Vec::with_capacity(16);
            for st in [&s.ctl, &s.mask, &s.addr, &s.bits.out, &s.val] {
                put_u(&mut lens, st.len() as u64);
            }
            let total =
                lens.len() + s.ctl.len() + s.mask.len() + s.addr.len() + s.bits.out.len() + s.val.len();
            rec.push(TAG_BLOCK);
            put_u(rec, total as u64);
            rec.extend_from_slice(&lens);
            for st in [&s.ctl, &s.mask, &s.addr, &s.bits.out, &s.val] {
                rec.extend_from_slice(st);
            }
        }
        self.s = s;
        r?;
        self.z
            .write_all(&self.rec)
            .map_err(|e| TraceError::io(&self.path, 0, e))?;
        self.n_blocks += 1;
        Ok(())
    }

    fn enc_block(&mut self, s: &mut Streams, tb: &ThreadBlockTrace, ops: &OpcodeTable) -> Result<()> {
        let body = &mut s.ctl;
        for &d in &tb.block {
            put_u(body, u64::from(d));
        }
        match &tb.cluster {
            None => body.push(0),
            Some(c) => {
                body.push(1);
                for &d in c.id.iter().chain(c.cta.iter()) {
                    put_u(body, u64::from(d));
                }
                put_u(body, u64::from(c.rank));
            }
        }
        put_u(body, tb.warps.len() as u64);
        for w in &tb.warps {
            put_u(&mut s.ctl, u64::from(w.warp_id));
            put_u(&mut s.ctl, w.instrs.len() as u64);
            let mut prev = NONE;
            let mut prev_mask = u32::MAX;
            self.hist.reset();
            for ins in &w.instrs {
                prev = self.enc_instr(s, w, ins, ops, prev, prev_mask)?;
                prev_mask = ins.mask;
                self.hist.push(ins.mask);
            }
            self.n_instrs += w.instrs.len() as u64;
        }
        Ok(())
    }

    fn enc_instr(
        &mut self,
        s: &mut Streams,
        w: &WarpTrace,
        ins: &TraceInstr,
        ops: &OpcodeTable,
        prev: u32,
        prev_mask: u32,
    ) -> Result<u32> {
        let name = ops.name(ins.opcode);
        if name.is_empty() {
            return Err(self.enc_err(format!("opcode id {} not in the table", ins.opcode.0)));
        }
        let mut new_op = false;
        let op = match self.file_ops.get(name) {
            Some(&id) => id,
            None => {
                let id = self.file_ops.len() as u32;
                self.file_ops.insert(name.into(), id);
                new_op = true;
                id
            }
        };
        let mut key = StaticKey {
            pc: ins.pc,
            line: ins.line,
            op,
            imm: ins.imm,
            n_dst: ins.n_dst,
            n_src: ins.n_src,
            dst: ins.dst,
            src: ins.src,
            mem_width: ins.mem_width,
            flags: ins.flags & STATIC_FLAGS,
        };
        // Canonicalize unused register slots so equal records share a key.
        for r in key.dst.iter_mut().skip(usize::from(ins.n_dst)) {
            *r = Reg::default();
        }
        for r in key.src.iter_mut().skip(usize::from(ins.n_src)) {
            *r = Reg::default();
        }
        let (scode, sid) = match self.model.map.get(&key) {
            Some(&sid) if sid == self.model.predicted(prev) => (0u8, sid),
            Some(&sid) => (1, sid),
            None => (2, self.model.add_static(key)),
        };
        self.model.set_succ(prev, sid);
        let st = &self.model.statics[sid as usize];
        let m = ins.mask;
        let last = st.last_mask;
        let mcode: u8 = if m == prev_mask {
            M_PREV
        } else if m == last {
            M_LAST
        } else if m == u32::MAX {
            M_ALL
        } else if m == 0 {
            M_ZERO
        } else {
            let sp = m & !prev_mask == 0;
            let sl = m & !last == 0;
            match (sp, sl) {
                (true, true) if last.count_ones() < prev_mask.count_ones() => M_SUB_LAST,
                (true, _) => M_SUB_PREV,
                (false, true) => M_SUB_LAST,
                _ => M_HIST,
            }
        };
        let hdr = scode | mcode << 2 | u8::from(ins.has_values()) << 5 | (ins.addr_mode as u8) << 6;
        let out = &mut s.ctl;
        out.push(hdr);
        match scode {
            1 => put_u(out, u64::from(sid)),
            2 => {
                // static definition
                put_u(out, u64::from(key.pc));
                put_u(out, u64::from(key.line));
                put_u(out, u64::from(op));
                if new_op {
                    put_u(out, name.len() as u64);
                    out.extend_from_slice(name.as_bytes());
                }
                put_u(out, zz(key.imm[0]));
                put_u(out, zz(key.imm[1]));
                out.push(key.n_dst | key.n_src << 4);
                for r in ins.dsts().iter().chain(ins.srcs()) {
                    out.push(r.kind as u8);
                    out.push(r.num);
                }
                out.push(key.mem_width);
                out.push(key.flags);
            }
            _ => {}
        }
        match mcode {
            M_HIST => self.hist.encode(m, s),
            M_SUB_PREV => s
                .bits
                .put(u64::from(extract(m, prev_mask)), prev_mask.count_ones()),
            M_SUB_LAST => s.bits.put(u64::from(extract(m, last)), last.count_ones()),
            _ => {}
        }
        self.model.statics[sid as usize].last_mask = m;
        if ins.is_mem() {
            let a = w.addrs_of(ins);
            if a.len() != ins.n_addrs() {
                return Err(self.enc_err(format!(
                    "memory instruction at pc {:#x} has {} addresses, mask needs {}",
                    ins.pc,
                    a.len(),
                    ins.n_addrs()
                )));
            }
            let mut lanes = [0u64; WARP_SIZE];
            for (l, &x) in lanes_of(m).zip(a) {
                lanes[l] = x;
            }
            if !a.is_empty() {
                self.enc_addrs(s, sid, m, &lanes, a);
            }
            self.model.update_mem(sid, m, &lanes);
        }
        if ins.has_values() {
            let vals = w.values_of(ins);
            if vals.len() != usize::from(ins.n_dst) + usize::from(ins.n_src) {
                return Err(self.enc_err("malformed value arena".into()));
            }
            for v in vals {
                put_u(&mut s.val, v.len() as u64);
                for &x in v {
                    put_u(&mut s.val, x);
                }
            }
        }
        Ok(sid)
    }

    /// Encode the addresses of one memory instruction (`a` non-empty).
    fn enc_addrs(&mut self, s: &mut Streams, sid: u32, mask: u32, lanes: &[u64; 32], a: &[u64]) {
        let l0 = mask.trailing_zeros() as usize;
        let a0 = a[0];
        let st = &self.model.statics[sid as usize];
        let pred = st.last_base.wrapping_add(st.stride);
        let res = zz(a0.wrapping_sub(pred) as i64);
        if a.len() == 1 {
            put_u(&mut s.addr, res);
            return;
        }
        let rel = |l: usize| lanes[l].wrapping_sub(lanes[l0]) as i64;
        // 0: same offsets as the static's last execution.
        let same = st.last_valid & mask == mask
            && lanes_of(mask).all(|l| st.last[l].wrapping_sub(st.last[l0]) as i64 == rel(l));
        if same && ulen(res) == 1 {
            s.addr.push(PAT_STATIC);
            put_u(&mut s.addr, res);
            return;
        }
        // ring references with power-of-two scale
        if let Some(code) = self.find_ring(mask, lanes) {
            let (r, sh) = (usize::from(code / 17), i32::from(code % 17) - 8);
            let ref_l0 = self.model.ring_get(r).map_or(0, |e| e.0[l0]);
            let k = scale_abs(ref_l0, sh);
            let rres = zz(a0.wrapping_sub(k.wrapping_add(st.ring_k)) as i64);
            if !same || ulen(rres) < ulen(res) {
                s.addr.push(PAT_RING0 + code);
                put_u(&mut s.addr, rres);
                self.model.statics[sid as usize].ring_k = a0.wrapping_sub(k);
                return;
            }
        }
        if same {
            s.addr.push(PAT_STATIC);
            put_u(&mut s.addr, res);
            return;
        }
        let d1 = a[1].wrapping_sub(a[0]);
        if a.windows(2).all(|p| p[1].wrapping_sub(p[0]) == d1) {
            s.addr.push(PAT_STRIDE);
            put_u(&mut s.addr, zz(d1 as i64));
            put_u(&mut s.addr, res);
            return;
        }
        // Gathers: region-relative lanes, or zigzag consecutive deltas, bit-packed.
        let st = &self.model.statics[sid as usize];
        let mn = *a.iter().min().unwrap_or(&0);
        let new_lo = !st.region_ok || a.iter().any(|&x| x.wrapping_sub(st.region_lo) >= 1 << 48);
        let lo = if new_lo { mn } else { st.region_lo };
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
        let gcost = 8
            + if ga != st.align { 8 } else { 0 }
            + if new_lo {
                8 * ulen(zz(lo.wrapping_sub(st.region_lo) as i64))
            } else {
                0
            }
            + a.len() as u32 * gw;
        let gcost = if gw > 63 { u32::MAX } else { gcost };
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
        let dcost = 8 + if da != st.align { 8 } else { 0 } + 8 * ulen(res) + (a.len() as u32 - 1) * dw;
        if gcost <= dcost {
            s.addr.push(PAT_GATHER);
            let flags = u8::from(new_lo) << 6 | u8::from(ga != st.align) << 7;
            s.addr.push(gw as u8 | flags);
            if ga != st.align {
                s.addr.push(ga);
            }
            if new_lo {
                put_u(&mut s.addr, zz(lo.wrapping_sub(st.region_lo) as i64));
            }
            for &x in a {
                s.bits.put(x.wrapping_sub(lo) >> ga, gw);
            }
            let st = &mut self.model.statics[sid as usize];
            st.region_lo = lo;
            st.region_ok = true;
            st.align = ga;
        } else {
            s.addr.push(PAT_GDELTA);
            s.addr.push(dw as u8 | u8::from(da != st.align) << 7);
            if da != st.align {
                s.addr.push(da);
            }
            put_u(&mut s.addr, res);
            for d in ds() {
                s.bits.put(zz(d >> da), dw);
            }
            self.model.statics[sid as usize].align = da;
        }
    }

    /// First ring entry whose lane offsets, scaled by a power of two, give
    /// this instruction's offsets (pattern code minus `PAT_RING0`).
    fn find_ring(&self, mask: u32, lanes: &[u64; 32]) -> Option<u8> {
        let l0 = mask.trailing_zeros() as usize;
        let rel = |l: usize| lanes[l].wrapping_sub(lanes[l0]) as i64;
        for r in 0..RING {
            let (ref_l, ref_m) = self.model.ring_get(r)?;
            if ref_m & mask != mask {
                continue;
            }
            let e = |l: usize| ref_l[l].wrapping_sub(ref_l[l0]) as i64;
            // find the shift from the first lane with a non-zero offset
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

    /// Write the end record and flush. Returns the inner writer.
    pub fn finish(mut self) -> Result<W> {
        let mut rec = vec![TAG_END];
        put_u(&mut rec, self.n_blocks);
        put_u(&mut rec, self.n_instrs);
        let io = |e| TraceError::io(&self.path, 0, e);
        self.z.write_all(&rec).map_err(io)?;
        let mut w = self.z.finish().map_err(io)?;
        w.flush().map_err(io)?;
        Ok(w)
    }
}

// ------------------------------------------------------------ decoder

pub(crate) struct BinaryParser {
    path: PathBuf,
    z: BufReader<zstd::stream::read::Decoder<'static, BufReader<File>>>,
    model: Model,
    hist: MaskHist,
    /// file opcode id → reader opcode id
    file_ops: Vec<OpcodeId>,
    buf: Vec<u8>,
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
        let mut p = BinaryParser {
            path: path.to_path_buf(),
            z: BufReader::with_capacity(1 << 16, d),
            model: Model::new(),
            hist: MaskHist::default(),
            file_ops: Vec::new(),
            buf: Vec::new(),
            record: 0,
            n_instrs: 0,
            done: false,
        };
        let n = p.read_uvarint("header length")?;
        if n > 1 << 24 {
            return Err(p.err("header length", format!("{n} bytes")));
        }
        let mut raw = vec![0u8; n as usize];
        p.read_exact_field(&mut raw, "header")?;
        let raw = String::from_utf8(raw).map_err(|_| p.err("header", "not UTF-8".into()))?;
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
        Ok((p, h))
    }

    fn err(&self, field: &'static str, msg: String) -> TraceError {
        berr(&self.path, self.record, field, msg)
    }

    fn read_exact_field(&mut self, buf: &mut [u8], field: &'static str) -> Result<()> {
        self.z.read_exact(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                TraceError::Truncated {
                    path: self.path.clone(),
                    line: 0,
                    field,
                    msg: format!("binary trace ends inside record {}", self.record),
                }
            } else {
                TraceError::io(&self.path, 0, e)
            }
        })
    }

    fn read_uvarint(&mut self, field: &'static str) -> Result<u64> {
        let mut v = 0u64;
        let mut sh = 0;
        loop {
            let mut b = [0u8];
            self.read_exact_field(&mut b, field)?;
            if sh >= 64 {
                return Err(self.err(field, "varint too long".into()));
            }
            v |= u64::from(b[0] & 0x7f) << sh;
            if b[0] < 0x80 {
                return Ok(v);
            }
            sh += 7;
        }
    }

    pub(crate) fn next_block(&mut self, ops: &mut OpcodeTable) -> Result<Option<ThreadBlockTrace>> {
        if self.done {
            return Ok(None);
        }
        let mut tag = [0u8];
        self.read_exact_field(&mut tag, "record tag")?;
        match tag[0] {
            TAG_END => {
                let nb = self.read_uvarint("block count")?;
                let ni = self.read_uvarint("instruction count")?;
                if nb != self.record || ni != self.n_instrs {
                    return Err(self.err(
                        "end record",
                        format!(
                            "end record says {nb} blocks / {ni} instructions, read {} / {}",
                            self.record, self.n_instrs
                        ),
                    ));
                }
                // Drain to the end so that the zstd checksum is verified.
                let mut rest = Vec::new();
                self.z
                    .read_to_end(&mut rest)
                    .map_err(|e| TraceError::io(&self.path, 0, e))?;
                if !rest.is_empty() {
                    return Err(self.err("end record", "data after the end record".into()));
                }
                self.done = true;
                Ok(None)
            }
            TAG_BLOCK => {
                let n = self.read_uvarint("record length")?;
                if n > MAX_RECORD {
                    return Err(self.err("record length", format!("{n} bytes")));
                }
                let mut buf = std::mem::take(&mut self.buf);
                buf.resize(n as usize, 0);
                let r = self.read_exact_field(&mut buf, "record body");
                let r = r.and_then(|_| self.decode_block(&buf, ops));
                self.buf = buf;
                let tb = r?;
                self.record += 1;
                Ok(Some(tb))
            }
            t => Err(self.err("record tag", format!("unknown tag {t}"))),
        }
    }

    fn decode_block(&mut self, b: &[u8], ops: &mut OpcodeTable) -> Result<ThreadBlockTrace> {
        let r: std::result::Result<ThreadBlockTrace, &'static str> = (|| {
            let mut c = Cur { b, p: 0 };
            let mut lens = [0usize; 5];
            for l in lens.iter_mut() {
                *l = usize::try_from(c.u().ok_or("stream length")?).map_err(|_| "stream length")?;
            }
            let mut parts: [&[u8]; 5] = [&[]; 5];
            for (p, &l) in parts.iter_mut().zip(&lens) {
                *p = c.bytes(l).ok_or("stream length")?;
            }
            if c.p != b.len() {
                return Err("record length");
            }
            let mut d = Dec {
                ctl: Cur { b: parts[0], p: 0 },
                mask: Cur { b: parts[1], p: 0 },
                addr: Cur { b: parts[2], p: 0 },
                bits: BitR {
                    b: parts[3],
                    p: 0,
                    acc: 0,
                    n: 0,
                },
                val: Cur { b: parts[4], p: 0 },
            };
            let c = &mut d.ctl;
            let mut tb = ThreadBlockTrace::default();
            for x in tb.block.iter_mut() {
                *x = u32::try_from(c.u().ok_or("block")?).map_err(|_| "block")?;
            }
            match c.u8().ok_or("cluster")? {
                0 => {}
                1 => {
                    let mut ci = ClusterInfo::default();
                    for x in ci.id.iter_mut().chain(ci.cta.iter_mut()) {
                        *x = u32::try_from(c.u().ok_or("cluster")?).map_err(|_| "cluster")?;
                    }
                    ci.rank = u32::try_from(c.u().ok_or("cluster")?).map_err(|_| "cluster")?;
                    tb.cluster = Some(ci);
                }
                _ => return Err("cluster"),
            }
            let nw = c.u().ok_or("warp count")?;
            if nw > b.len() as u64 {
                return Err("warp count");
            }
            tb.warps.reserve(nw as usize);
            for _ in 0..nw {
                let c = &mut d.ctl;
                let warp_id = u32::try_from(c.u().ok_or("warp id")?).map_err(|_| "warp id")?;
                let ni = c.u().ok_or("instruction count")?;
                if ni > b.len() as u64 {
                    return Err("instruction count");
                }
                let mut w = WarpTrace {
                    warp_id,
                    instrs: Vec::with_capacity(ni as usize),
                    ..Default::default()
                };
                let mut prev = NONE;
                let mut prev_mask = u32::MAX;
                self.hist.reset();
                for _ in 0..ni {
                    prev = self.dec_instr(&mut d, &mut w, ops, prev, prev_mask)?;
                    prev_mask = w.instrs.last().map_or(u32::MAX, |i| i.mask);
                    self.hist.push(prev_mask);
                }
                self.n_instrs += ni;
                tb.warps.push(w);
            }
            if d.ctl.p != d.ctl.b.len()
                || d.mask.p != d.mask.b.len()
                || d.addr.p != d.addr.b.len()
                || d.bits.p != d.bits.b.len()
                || d.val.p != d.val.b.len()
            {
                return Err("record length");
            }
            Ok(tb)
        })();
        r.map_err(|f| self.err(f, "corrupt or inconsistent data".into()))
    }

    fn dec_instr(
        &mut self,
        d: &mut Dec<'_>,
        w: &mut WarpTrace,
        ops: &mut OpcodeTable,
        prev: u32,
        prev_mask: u32,
    ) -> std::result::Result<u32, &'static str> {
        let c = &mut d.ctl;
        let hdr = c.u8().ok_or("instruction")?;
        let scode = hdr & 3;
        let mcode = hdr >> 2 & 7;
        let has_vals = hdr >> 5 & 1 == 1;
        let mode = AddrMode::from_u8(hdr >> 6).ok_or("addr_mode")?;
        let m = &mut self.model;
        let sid = match scode {
            0 => {
                let s = m.predicted(prev);
                if s == NONE {
                    return Err("static id");
                }
                s
            }
            1 => {
                let s = c.u().ok_or("static id")?;
                if s >= m.statics.len() as u64 {
                    return Err("static id");
                }
                s as u32
            }
            2 => {
                let pc = u32::try_from(c.u().ok_or("pc")?).map_err(|_| "pc")?;
                let line = u32::try_from(c.u().ok_or("line")?).map_err(|_| "line")?;
                let op = c.u().ok_or("opcode")?;
                if op == self.file_ops.len() as u64 {
                    let n = c.u().ok_or("opcode")?;
                    if n > 4096 {
                        return Err("opcode");
                    }
                    let s = c.bytes(n as usize).ok_or("opcode")?;
                    let s = std::str::from_utf8(s).map_err(|_| "opcode")?;
                    self.file_ops.push(ops.intern(s).ok_or("opcode")?);
                } else if op > self.file_ops.len() as u64 {
                    return Err("opcode");
                }
                let imm = [unzz(c.u().ok_or("immediate")?), unzz(c.u().ok_or("immediate")?)];
                let nn = c.u8().ok_or("register count")?;
                let (n_dst, n_src) = (nn & 15, nn >> 4);
                if usize::from(n_dst) > MAX_DST || usize::from(n_src) > MAX_SRC {
                    return Err("register count");
                }
                let mut key = StaticKey {
                    pc,
                    line,
                    op: op as u32,
                    imm,
                    n_dst,
                    n_src,
                    dst: [Reg::default(); MAX_DST],
                    src: [Reg::default(); MAX_SRC],
                    mem_width: 0,
                    flags: 0,
                };
                for i in 0..usize::from(n_dst + n_src) {
                    let kind = RegKind::from_u8(c.u8().ok_or("register")?).ok_or("register")?;
                    let num = c.u8().ok_or("register")?;
                    let r = Reg { kind, num };
                    if i < usize::from(n_dst) {
                        key.dst[i] = r;
                    } else {
                        key.src[i - usize::from(n_dst)] = r;
                    }
                }
                key.mem_width = c.u8().ok_or("mem_width")?;
                key.flags = c.u8().ok_or("flags")?;
                if key.flags & !STATIC_FLAGS != 0 {
                    return Err("flags");
                }
                let m = &mut self.model;
                if m.map.contains_key(&key) {
                    return Err("static definition");
                }
                m.add_static(key)
            }
            _ => return Err("static code"),
        };
        let m = &mut self.model;
        m.set_succ(prev, sid);
        let st = &m.statics[sid as usize];
        let mask = match mcode {
            M_PREV => prev_mask,
            M_LAST => st.last_mask,
            M_ALL => u32::MAX,
            M_ZERO => 0,
            M_HIST => self.hist.decode(d).ok_or("mask")?,
            M_SUB_PREV => {
                let v = d.bits.get(prev_mask.count_ones()).ok_or("mask")?;
                deposit(v as u32, prev_mask)
            }
            M_SUB_LAST => {
                let v = d.bits.get(st.last_mask.count_ones()).ok_or("mask")?;
                deposit(v as u32, st.last_mask)
            }
            _ => return Err("mask code"),
        };
        let k = st.key;
        let mut ins = TraceInstr {
            pc: k.pc,
            mask,
            line: k.line,
            imm: k.imm,
            opcode: *self.file_ops.get(k.op as usize).ok_or("opcode")?,
            n_dst: k.n_dst,
            n_src: k.n_src,
            dst: k.dst,
            src: k.src,
            mem_width: k.mem_width,
            addr_mode: mode,
            flags: k.flags,
            ..Default::default()
        };
        m.statics[sid as usize].last_mask = mask;
        if ins.is_mem() {
            ins.addr_start = u32::try_from(w.addrs.len()).map_err(|_| "address")?;
            let mut lanes = [0u64; WARP_SIZE];
            if mask != 0 {
                self.dec_addrs(d, sid, mask, &mut lanes)?;
                w.addrs.extend(lanes_of(mask).map(|l| lanes[l]));
            }
            self.model.update_mem(sid, mask, &lanes);
        }
        if has_vals {
            ins.flags |= flags::HAS_VALUES;
            ins.val_start = u32::try_from(w.values.len()).map_err(|_| "values")?;
            for _ in 0..usize::from(ins.n_dst) + usize::from(ins.n_src) {
                let n = d.val.u().ok_or("value count")?;
                if n > 64 {
                    return Err("value count");
                }
                w.values.push(n);
                for _ in 0..n {
                    w.values.push(d.val.u().ok_or("value")?);
                }
            }
        }
        w.instrs.push(ins);
        Ok(sid)
    }

    fn dec_addrs(
        &mut self,
        d: &mut Dec<'_>,
        sid: u32,
        mask: u32,
        lanes: &mut [u64; WARP_SIZE],
    ) -> std::result::Result<(), &'static str> {
        let m = &mut self.model;
        let st = &m.statics[sid as usize];
        let pred = st.last_base.wrapping_add(st.stride);
        let l0 = mask.trailing_zeros() as usize;
        let n = mask.count_ones();
        let c = &mut d.addr;
        if n == 1 {
            lanes[l0] = pred.wrapping_add(c.s().ok_or("address base")? as u64);
            return Ok(());
        }
        let pat = c.u8().ok_or("address pattern")?;
        match pat {
            PAT_STATIC => {
                if st.last_valid & mask != mask {
                    return Err("address pattern");
                }
                let a0 = pred.wrapping_add(c.s().ok_or("address base")? as u64);
                for l in lanes_of(mask) {
                    lanes[l] = a0.wrapping_add(st.last[l].wrapping_sub(st.last[l0]));
                }
            }
            PAT_STRIDE => {
                let s = c.s().ok_or("stride")? as u64;
                let a0 = pred.wrapping_add(c.s().ok_or("address base")? as u64);
                for (i, l) in lanes_of(mask).enumerate() {
                    lanes[l] = a0.wrapping_add(s.wrapping_mul(i as u64));
                }
            }
            PAT_GATHER => {
                let code = c.u8().ok_or("gather code")?;
                let gw = u32::from(code & 63);
                let ga = if code & 0x80 != 0 {
                    c.u8().ok_or("gather align")?
                } else {
                    st.align
                };
                if ga > 16 || gw > 64 {
                    return Err("gather code");
                }
                let lo = if code & 0x40 != 0 {
                    st.region_lo.wrapping_add(c.s().ok_or("gather region")? as u64)
                } else if st.region_ok {
                    st.region_lo
                } else {
                    return Err("gather region");
                };
                for l in lanes_of(mask) {
                    let v = d.bits.get(gw).ok_or("gather lane")?;
                    lanes[l] = lo.wrapping_add(v.wrapping_shl(u32::from(ga)));
                }
                let st = &mut m.statics[sid as usize];
                st.region_lo = lo;
                st.region_ok = true;
                st.align = ga;
            }
            PAT_GDELTA => {
                let code = c.u8().ok_or("gather code")?;
                let dw = u32::from(code & 127);
                let da = if code & 0x80 != 0 {
                    c.u8().ok_or("gather align")?
                } else {
                    st.align
                };
                if da > 16 || dw > 64 {
                    return Err("gather code");
                }
                let mut a = pred.wrapping_add(c.s().ok_or("address base")? as u64);
                lanes[l0] = a;
                for l in lanes_of(mask).skip(1) {
                    let v = unzz(d.bits.get(dw).ok_or("address delta")?);
                    a = a.wrapping_add(v.wrapping_shl(u32::from(da)) as u64);
                    lanes[l] = a;
                }
                m.statics[sid as usize].align = da;
            }
            p => {
                let p = p.checked_sub(PAT_RING0).ok_or("address pattern")?;
                let (r, sh) = (usize::from(p / 17), i32::from(p % 17) - 8);
                if r >= RING {
                    return Err("address pattern");
                }
                let (ref_l, ref_m) = m.ring_get(r).ok_or("address pattern")?;
                if ref_m & mask != mask {
                    return Err("address pattern");
                }
                let k = scale_abs(ref_l[l0], sh);
                let a0 = k
                    .wrapping_add(st.ring_k)
                    .wrapping_add(c.s().ok_or("address base")? as u64);
                for l in lanes_of(mask) {
                    let e = ref_l[l].wrapping_sub(ref_l[l0]) as i64;
                    lanes[l] = a0.wrapping_add(scale(e, sh) as u64);
                }
                m.statics[sid as usize].ring_k = a0.wrapping_sub(k);
            }
        }
        Ok(())
    }
}

/// Cursors over the streams of one record.
struct Dec<'a> {
    ctl: Cur<'a>,
    mask: Cur<'a>,
    addr: Cur<'a>,
    bits: BitR<'a>,
    val: Cur<'a>,
}

fn berr(path: &Path, record: u64, field: &'static str, msg: String) -> TraceError {
    TraceError::Binary {
        path: path.to_path_buf(),
        record,
        field,
        msg,
    }
}
