//! Reader of version 1 of the sassim binary trace format (`SASSIMBT`),
//! kept so that files written before version 2 still read. The writer
//! only produces the current version (`binary.rs`).
//!
//! Layout: 8-byte magic, `u16` format version (LE), then one zstd stream
//! holding the payload: the raw header text, then records (one per thread
//! block) and an end record with totals. Instructions are predicted from a
//! model (static-instruction table, successor prediction, mask and address
//! predictors) that the encoder and the decoder update identically, so most
//! instructions cost one or two bytes before zstd.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::{Result, TraceError};
use crate::header::KernelHeader;
use crate::record::{
    flags, AddrMode, ClusterInfo, OpcodeId, OpcodeTable, Reg, RegKind, ThreadBlockTrace, TraceInstr,
    WarpTrace, MAX_DST, MAX_SRC, WARP_SIZE,
};
use crate::source::BINARY_MAGIC;

/// Current format version.
pub const FORMAT_VERSION: u16 = 1;

const TAG_END: u8 = 0;
const TAG_BLOCK: u8 = 1;
const RING: usize = 8;
const NONE: u32 = u32::MAX;
/// Largest accepted uncompressed block record (sanity bound for corrupt files).
const MAX_RECORD: u64 = 1 << 34;

// ------------------------------------------------------------ varints

#[inline]
fn unzz(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

struct Cur<'a> {
    b: &'a [u8],
    p: usize,
}

impl Cur<'_> {
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
    fn bytes(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.p..self.p.checked_add(n)?)?;
        self.p += n;
        Some(s)
    }
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

struct Static {
    key: StaticKey,
    succ: u32,
    last_mask: u32,
    last_base: u64,
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
            st.last_base = lanes[mask.trailing_zeros() as usize];
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
const PAT_RAW: u8 = 2;
const PAT_RING0: u8 = 3; // + r*17 + (shift+8)

fn scale(e: i64, s: i32) -> i64 {
    if s >= 0 {
        e.wrapping_shl(s as u32)
    } else {
        e >> (-s) as u32
    }
}

// ------------------------------------------------------------ decoder

pub(crate) struct BinaryParser {
    path: PathBuf,
    z: BufReader<zstd::stream::read::Decoder<'static, BufReader<File>>>,
    model: Model,
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
                format!("unsupported format version {ver}"),
            ));
        }
        let mut d = zstd::stream::read::Decoder::with_buffer(f).map_err(io)?;
        d.window_log_max(31).map_err(io)?;
        let mut p = BinaryParser {
            path: path.to_path_buf(),
            z: BufReader::with_capacity(1 << 16, d),
            model: Model::new(),
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
        let mut c = Cur { b, p: 0 };
        let r: std::result::Result<ThreadBlockTrace, &'static str> = (|| {
            let mut tb = ThreadBlockTrace::default();
            for d in tb.block.iter_mut() {
                *d = u32::try_from(c.u().ok_or("block")?).map_err(|_| "block")?;
            }
            match c.u8().ok_or("cluster")? {
                0 => {}
                1 => {
                    let mut ci = ClusterInfo::default();
                    for d in ci.id.iter_mut().chain(ci.cta.iter_mut()) {
                        *d = u32::try_from(c.u().ok_or("cluster")?).map_err(|_| "cluster")?;
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
            for _ in 0..nw {
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
                for _ in 0..ni {
                    prev = self.dec_instr(&mut c, &mut w, ops, prev, prev_mask)?;
                    prev_mask = w.instrs.last().map_or(u32::MAX, |i| i.mask);
                }
                self.n_instrs += ni;
                tb.warps.push(w);
            }
            if c.p != b.len() {
                return Err("record length");
            }
            Ok(tb)
        })();
        r.map_err(|f| self.err(f, "corrupt or inconsistent data".into()))
    }

    fn dec_instr(
        &mut self,
        c: &mut Cur<'_>,
        w: &mut WarpTrace,
        ops: &mut OpcodeTable,
        prev: u32,
        prev_mask: u32,
    ) -> std::result::Result<u32, &'static str> {
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
            0 => prev_mask,
            1 => st.last_mask,
            2 => u32::MAX,
            3 => 0,
            4 => {
                let b = c.bytes(4).ok_or("mask")?;
                u32::from_le_bytes([b[0], b[1], b[2], b[3]])
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
            let n = mask.count_ones() as usize;
            let mut lanes = [0u64; WARP_SIZE];
            ins.addr_start = u32::try_from(w.addrs.len()).map_err(|_| "address")?;
            if n > 0 {
                let l0 = mask.trailing_zeros() as usize;
                // offsets relative to lane l0
                let mut rel = [0i64; WARP_SIZE];
                if n >= 2 {
                    let pat = c.u8().ok_or("address pattern")?;
                    match pat {
                        PAT_STATIC => {
                            let st = &m.statics[sid as usize];
                            if st.last_valid & mask != mask {
                                return Err("address pattern");
                            }
                            for l in lanes_of(mask) {
                                rel[l] = st.last[l].wrapping_sub(st.last[l0]) as i64;
                            }
                        }
                        PAT_STRIDE => {
                            let d = c.s().ok_or("stride")?;
                            for (i, l) in lanes_of(mask).enumerate() {
                                rel[l] = d.wrapping_mul(i as i64);
                            }
                        }
                        PAT_RAW => {
                            let mut acc = 0i64;
                            for l in lanes_of(mask).skip(1) {
                                acc = acc.wrapping_add(c.s().ok_or("address delta")?);
                                rel[l] = acc;
                            }
                        }
                        p => {
                            let p = p - PAT_RING0;
                            let (r, s) = (usize::from(p / 17), i32::from(p % 17) - 8);
                            let (ref_l, ref_m) = m.ring_get(r).ok_or("address pattern")?;
                            if ref_m & mask != mask {
                                return Err("address pattern");
                            }
                            for l in lanes_of(mask) {
                                rel[l] = scale(ref_l[l].wrapping_sub(ref_l[l0]) as i64, s);
                            }
                        }
                    }
                }
                let base_delta = c.s().ok_or("address base")?;
                let a0 = m.statics[sid as usize].last_base.wrapping_add(base_delta as u64);
                for l in lanes_of(mask) {
                    let a = a0.wrapping_add(rel[l] as u64);
                    lanes[l] = a;
                    w.addrs.push(a);
                }
            }
            m.update_mem(sid, mask, &lanes);
        }
        if has_vals {
            ins.flags |= flags::HAS_VALUES;
            ins.val_start = u32::try_from(w.values.len()).map_err(|_| "values")?;
            for _ in 0..usize::from(ins.n_dst) + usize::from(ins.n_src) {
                let n = c.u().ok_or("value count")?;
                if n > 64 {
                    return Err("value count");
                }
                w.values.push(n);
                for _ in 0..n {
                    w.values.push(c.u().ok_or("value")?);
                }
            }
        }
        w.instrs.push(ins);
        Ok(sid)
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
