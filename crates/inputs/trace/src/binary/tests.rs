//! Unit tests of the binary format: transpose-table limits, blocks split into chunks, and
//! garbage streams that must give errors, not panics.

use super::coder::{put_varint, CHUNK_ARITH, CHUNK_END, CHUNK_NAME, CHUNK_RAW, MAX_CHUNK};
use super::*;
use crate::header::KernelHeader;
use crate::record::{AddrMode, OpcodeId, OpcodeTable, Reg, ThreadBlockTrace, TraceInstr, WarpTrace};
use crate::source::BINARY_MAGIC;
use std::io::Write;
use std::path::Path;

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
        let mut z = zstd::stream::write::Encoder::with_dictionary(Vec::new(), 3, DICT.as_bytes()).unwrap();
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
