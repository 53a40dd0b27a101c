//! The writer of binary traces: [`BinaryWriter`] and its [`ConvertOptions`].

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cabac::fpaq0::Fpaq0Encoder;
use cabac::CabacWriter;

use super::codec::{CErr, CResult, Io};
use super::coder::{put_varint, BitW, EncC, CHUNK_ARITH, CHUNK_BYTES, CHUNK_END, CHUNK_NAME, CHUNK_RAW};
use super::model::{lanes_of, Model};
use super::primitives::{code_u, flag};
use super::{DICT, FORMAT_VERSION, MAX_NAME, MAX_VALUES, MAX_WARPS, MAX_WARP_INSTRS, NONE};
use crate::error::{Result, TraceError};
use crate::header::KernelHeader;
use crate::record::{OpcodeTable, ThreadBlockTrace, WARP_SIZE};
use crate::source::BINARY_MAGIC;

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
        let raw = header.text();
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
