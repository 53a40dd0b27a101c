//! The arithmetic coder's plumbing: the [`Coder`] trait and its encoder and decoder sides,
//! the raw-bit writer, varints, and the chunks that carry the streams in the zstd frame.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::sync::{Arc, Mutex};

use cabac::fpaq0::{Fpaq0Decoder, Fpaq0Encoder};
use cabac::vp8::VP8Context as Ctx;
use cabac::{CabacReader, CabacWriter};

/// Encoder or decoder side of the coder. `bit` codes a decision with an
/// adaptive context, writing `*b` when encoding and overwriting it when
/// decoding; `raw` codes `n` equiprobable bits (`v` when encoding) in the
/// separate raw-bit stream and returns them.
pub(super) trait Coder {
    const ENC: bool;
    fn bit(&mut self, ctx: &mut Ctx, b: &mut bool) -> io::Result<()>;
    fn raw(&mut self, n: u32, v: u64) -> io::Result<u64>;
    /// `n` bytes of an opcode name in the name stream (`name` holds them
    /// when encoding, receives them when decoding).
    fn name(&mut self, name: &mut Vec<u8>, n: usize) -> io::Result<()>;
}

/// Raw bits, least significant first, packed into bytes.
#[derive(Default)]
pub(super) struct BitW {
    pub(super) out: Vec<u8>,
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
    pub(super) fn pad(&mut self) {
        if self.n > 0 {
            self.out.push(self.acc as u8);
            self.acc = 0;
            self.n = 0;
        }
    }
}

pub(super) struct EncC<W: Write> {
    pub(super) rc: Fpaq0Encoder<W>,
    pub(super) bits: BitW,
    pub(super) names: Vec<u8>,
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
pub(super) fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Read an unsigned LEB128 varint: `InvalidData` when longer than 64 bits,
/// `UnexpectedEof` when the input ends inside it.
pub(super) fn read_varint(r: &mut impl Read) -> io::Result<u64> {
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
pub(super) const CHUNK_END: u8 = 0;
pub(super) const CHUNK_ARITH: u8 = 1;
pub(super) const CHUNK_RAW: u8 = 2;
pub(super) const CHUNK_NAME: u8 = 3;
/// The writer flushes both streams as chunks once they hold this much.
pub(super) const CHUNK_BYTES: usize = 1 << 16;
/// Largest accepted chunk (corrupt input).
#[cfg(not(test))]
pub(super) const MAX_CHUNK: u64 = 1 << 24;
/// Largest read-ahead of the other streams while looking for one (corrupt input; the
/// writer's chunks are a few hundred KiB at most).
#[cfg(not(test))]
const MAX_QUEUED: usize = 1 << 26;
// Small limits in unit tests, so that a test reaches them.
#[cfg(test)]
pub(super) const MAX_CHUNK: u64 = 1 << 18;
#[cfg(test)]
const MAX_QUEUED: usize = 1 << 20;

type ZReader = BufReader<zstd::stream::read::Decoder<'static, BufReader<File>>>;

/// Splits the chunk sequence into the arithmetic and the raw-bit streams.
/// Both streams are flushed together by the writer, so the chunks of one
/// stream read ahead while looking for the other stay within one flush.
pub(super) struct Demux {
    pub(super) z: ZReader,
    pub(super) arith: std::collections::VecDeque<Vec<u8>>,
    pub(super) raw: std::collections::VecDeque<Vec<u8>>,
    pub(super) names: std::collections::VecDeque<Vec<u8>>,
    pub(super) ended: bool,
}

impl Demux {
    /// Read chunks until `kind`'s queue is not empty; `None` at the end.
    pub(super) fn next(&mut self, kind: u8) -> io::Result<Option<Vec<u8>>> {
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
pub(super) struct ChunkR {
    d: Arc<Mutex<Demux>>,
    kind: u8,
    buf: Vec<u8>,
    p: usize,
    /// Bytes of `buf` not read yet, visible to the parser (the arithmetic decoder owns
    /// its reader), for the end-of-stream check.
    pub(super) unread: Arc<std::sync::atomic::AtomicUsize>,
}

impl ChunkR {
    pub(super) fn new(d: &Arc<Mutex<Demux>>, kind: u8) -> Self {
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
    pub(super) fn left(&self) -> usize {
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

pub(super) struct DecC {
    pub(super) rc: Fpaq0Decoder<ChunkR>,
    pub(super) raw: ChunkR,
    pub(super) names: ChunkR,
    pub(super) acc: u64,
    pub(super) n: u32,
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
