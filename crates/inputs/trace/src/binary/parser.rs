//! The reader of binary traces: [`BinaryParser`] checks the container and decodes one
//! thread block at a time.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cabac::fpaq0::Fpaq0Decoder;

use super::codec::{CErr, CResult, Io};
use super::coder::{read_varint, ChunkR, DecC, Demux, CHUNK_ARITH, CHUNK_NAME, CHUNK_RAW};
use super::model::{lanes_of, Model};
use super::primitives::{code_u, flag};
use super::{DICT, FORMAT_VERSION, MAX_WARPS, MAX_WARP_INSTRS, NONE};
use crate::error::{Result, TraceError};
use crate::header::KernelHeader;
use crate::record::{OpcodeId, OpcodeTable, ThreadBlockTrace, TraceInstr, WarpTrace, WARP_SIZE};
use crate::source::BINARY_MAGIC;

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
