//! The sassim compact binary trace format (`SASSIMBT`), see
//! `docs/trace-format.md`.
//!
//! Layout: 8-byte magic, `u16` format version (LE), then one zstd stream
//! holding the payload: the raw header text, then records (one per thread
//! block) and an end record with totals. Instructions are predicted from a
//! model (static-instruction table, successor prediction, mask and address
//! predictors) that the encoder and the decoder update identically, so most
//! instructions cost one or two bytes before zstd.

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
pub const FORMAT_VERSION: u16 = 1;

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

// ------------------------------------------------------------ encoder

/// Streaming writer of a binary trace.
pub struct BinaryWriter<W: Write> {
    z: zstd::stream::write::Encoder<'static, W>,
    path: PathBuf,
    model: Model,
    /// reader opcode name → file opcode id
    file_ops: HashMap<Box<str>, u32>,
    buf: Vec<u8>,
    n_blocks: u64,
    n_instrs: u64,
}

/// Options of [`convert_with`] and [`BinaryWriter`].
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
        let mut z = zstd::stream::write::Encoder::new(out, opts.zstd_level).map_err(io)?;
        z.include_checksum(true).map_err(io)?;
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
            buf: Vec::with_capacity(1 << 16),
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
        let mut body = std::mem::take(&mut self.buf);
        body.clear();
        for &d in &tb.block {
            put_u(&mut body, u64::from(d));
        }
        match &tb.cluster {
            None => body.push(0),
            Some(c) => {
                body.push(1);
                for &d in c.id.iter().chain(c.cta.iter()) {
                    put_u(&mut body, u64::from(d));
                }
                put_u(&mut body, u64::from(c.rank));
            }
        }
        put_u(&mut body, tb.warps.len() as u64);
        for w in &tb.warps {
            put_u(&mut body, u64::from(w.warp_id));
            put_u(&mut body, w.instrs.len() as u64);
            let mut prev = NONE;
            let mut prev_mask = u32::MAX;
            for ins in &w.instrs {
                prev = self.enc_instr(&mut body, w, ins, ops, prev, prev_mask)?;
                prev_mask = ins.mask;
            }
            self.n_instrs += w.instrs.len() as u64;
        }
        let mut rec = Vec::with_capacity(16);
        rec.push(TAG_BLOCK);
        put_u(&mut rec, body.len() as u64);
        let io = |e| TraceError::io(&self.path, 0, e);
        self.z.write_all(&rec).map_err(io)?;
        self.z.write_all(&body).map_err(io)?;
        self.buf = body;
        self.n_blocks += 1;
        Ok(())
    }

    fn enc_instr(
        &mut self,
        out: &mut Vec<u8>,
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
        let key = StaticKey {
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
        let mut key = key;
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
        let mcode: u8 = if ins.mask == prev_mask {
            0
        } else if ins.mask == st.last_mask {
            1
        } else if ins.mask == u32::MAX {
            2
        } else if ins.mask == 0 {
            3
        } else {
            4
        };
        let hdr = scode | mcode << 2 | u8::from(ins.has_values()) << 5 | (ins.addr_mode as u8) << 6;
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
        if mcode == 4 {
            out.extend_from_slice(&ins.mask.to_le_bytes());
        }
        self.model.statics[sid as usize].last_mask = ins.mask;
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
            for (l, &x) in lanes_of(ins.mask).zip(a) {
                lanes[l] = x;
            }
            if a.len() >= 2 {
                self.enc_pattern(out, sid, ins.mask, &lanes, a);
            }
            if let Some(&a0) = a.first() {
                let st = &self.model.statics[sid as usize];
                put_u(out, zz(a0.wrapping_sub(st.last_base) as i64));
            }
            self.model.update_mem(sid, ins.mask, &lanes);
        }
        if ins.has_values() {
            let vals = w.values_of(ins);
            if vals.len() != usize::from(ins.n_dst) + usize::from(ins.n_src) {
                return Err(self.enc_err("malformed value arena".into()));
            }
            for v in vals {
                put_u(out, v.len() as u64);
                for &x in v {
                    put_u(out, x);
                }
            }
        }
        Ok(sid)
    }

    fn enc_pattern(&self, out: &mut Vec<u8>, sid: u32, mask: u32, lanes: &[u64; 32], a: &[u64]) {
        let l0 = mask.trailing_zeros() as usize;
        let st = &self.model.statics[sid as usize];
        let rel = |l: usize| lanes[l].wrapping_sub(lanes[l0]) as i64;
        // 0: same offsets as the static's last execution.
        if st.last_valid & mask == mask
            && lanes_of(mask).all(|l| st.last[l].wrapping_sub(st.last[l0]) as i64 == rel(l))
        {
            out.push(PAT_STATIC);
            return;
        }
        // ring references with power-of-two scale
        for r in 0..RING {
            let Some((ref_l, ref_m)) = self.model.ring_get(r) else {
                break;
            };
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
                let s = d.trailing_zeros() as i32 - ev.trailing_zeros() as i32;
                shift = Some(s);
                break;
            }
            if !ok {
                continue;
            }
            let s = shift.unwrap_or(0);
            if !(-8..=8).contains(&s) {
                continue;
            }
            if lanes_of(mask).all(|l| scale(e(l), s) == rel(l)) {
                out.push(PAT_RING0 + (r as u8) * 17 + (s + 8) as u8);
                return;
            }
        }
        let d1 = a[1].wrapping_sub(a[0]);
        if a.windows(2).all(|p| p[1].wrapping_sub(p[0]) == d1) {
            out.push(PAT_STRIDE);
            put_u(out, zz(d1 as i64));
            return;
        }
        out.push(PAT_RAW);
        for p in a.windows(2) {
            put_u(out, zz(p[1].wrapping_sub(p[0]) as i64));
        }
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
