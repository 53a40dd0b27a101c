//! Host executables: the fat binaries they embed and the CUDA runtime they link.

use crate::error::{CubinError, Result};
use crate::fatbin::FatBinary;
use goblin::elf::Elf;

/// How a host program uses the CUDA runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeLink {
    /// Linked against `libcudart.so.N` (nvcc `-cudart shared`): the soname.
    Shared(String),
    /// The runtime is linked in statically (nvcc's default): sassim cannot replace it.
    Static,
    /// No CUDA runtime at all.
    None,
}

/// What `sassim exec` needs to know about a program before running it.
#[derive(Debug, Clone)]
pub struct HostProgram {
    pub runtime: RuntimeLink,
    /// The containers of its `.nv_fatbin` section.
    pub fatbins: Vec<FatBinary>,
}

/// Inspect a host executable.
pub fn inspect(bytes: &[u8], origin: &str) -> Result<HostProgram> {
    let elf = Elf::parse(bytes).map_err(|e| CubinError::Program {
        origin: origin.to_string(),
        what: format!("not an ELF executable ({e}); sassim exec runs programs built by nvcc and scripts that start them"),
    })?;
    let mut fatbins = Vec::new();
    for h in &elf.section_headers {
        if elf.shdr_strtab.get_at(h.sh_name) == Some(".nv_fatbin") {
            let end = h
                .sh_offset
                .checked_add(h.sh_size)
                .filter(|e| *e <= bytes.len() as u64)
                .ok_or_else(|| CubinError::Program {
                    origin: origin.to_string(),
                    what: "its .nv_fatbin section runs past the end of the file".into(),
                })?;
            fatbins = FatBinary::parse_section(&bytes[h.sh_offset as usize..end as usize], origin)?;
        }
    }
    let needed = elf.libraries.iter().find(|l| l.starts_with("libcudart.so"));
    // A statically linked runtime defines the registration entry points itself.
    let defines = |name: &str| {
        elf.syms.iter().chain(elf.dynsyms.iter()).any(|s| {
            s.st_shndx != 0
                && elf
                    .strtab
                    .get_at(s.st_name)
                    .or_else(|| elf.dynstrtab.get_at(s.st_name))
                    == Some(name)
        })
    };
    let runtime = match needed {
        Some(n) => RuntimeLink::Shared(n.to_string()),
        None if defines("__cudaRegisterFatBinary") || defines("cudaMalloc") || !fatbins.is_empty() => {
            RuntimeLink::Static
        }
        None => RuntimeLink::None,
    };
    Ok(HostProgram { runtime, fatbins })
}
