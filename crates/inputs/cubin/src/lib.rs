//! `sassim-cubin`: what the CUDA driver would read from a program.
//!
//! - [`fatbin`]: the fat-binary container (cubins and PTX per architecture, compressed with
//!   LZ4 or zstd);
//! - [`cubin`]: a cubin's kernels (parameter layout, registers, shared memory, stack),
//!   data sections (`.nv.global`, constant banks), symbols and relocations;
//! - [`disasm`]: its SASS with control bits (a content-addressed cache or `nvdisasm`);
//! - [`host`]: a host executable's embedded fat binaries and CUDA runtime linkage.

pub mod cubin;
pub mod disasm;
pub mod error;
pub mod fatbin;
pub mod host;
pub mod nvinfo;

pub use cubin::{
    const_bank_of, sha256_hex, Cubin, DataSection, KernelInfo, ParamInfo, Reloc, RelocType, SymKind, Symbol,
};
pub use disasm::{find_nvdisasm, SassSource};
pub use error::{CubinError, Result};
pub use fatbin::{Compression, EntryKind, FatBinary, FatEntry};
pub use host::{inspect, HostProgram, RuntimeLink};
