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
//! [`Coder`](coder::Coder)): the encoder passes the true value of each field, the decoder
//! a placeholder that the coder overwrites, so the two cannot drift apart.

mod codec;
mod coder;
mod model;
mod parser;
mod primitives;
mod writer;

#[cfg(test)]
mod tests;

pub(crate) use parser::BinaryParser;
pub use writer::{BinaryWriter, ConvertOptions};

/// Current format version.
pub const FORMAT_VERSION: u16 = 3;

/// Ring of recent multi-lane memory instructions used as address references.
const RING: usize = 8;
const NONE: u32 = u32::MAX;
/// Transpose tables (see [`Trans`](model::Trans)) exist for gather regions of at most
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

/// Most instructions in one warp of one thread block: bounds what a
/// corrupt file can make the reader allocate (the text of such a warp
/// would be about a gigabyte). The writer refuses larger warps.
const MAX_WARP_INSTRS: usize = 1 << 24;

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
