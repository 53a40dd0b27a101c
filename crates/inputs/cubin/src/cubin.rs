//! A cubin (CUDA ELF): its kernels and their attributes, data sections, symbols and the
//! relocations the driver applies when it loads the module.

use crate::error::{CubinError, Result};
use crate::nvinfo::{self, Attr};
use goblin::elf::Elf;
use sha2::{Digest, Sha256};

/// `STO_CUDA_ENTRY` in a symbol's `st_other`: a kernel entry point.
const STO_CUDA_ENTRY: u8 = 0x10;
/// `SHT_NOBITS`.
const SHT_NOBITS: u32 = 8;
/// Largest section accepted (256 MiB).
const MAX_SECTION: u64 = 1 << 28;

/// One kernel parameter (from `EIATTR_KPARAM_INFO`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamInfo {
    pub ordinal: u32,
    /// Byte offset within the parameter block.
    pub offset: u32,
    pub size: u32,
}

/// A kernel entry point and what the launch needs to know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    /// Mangled name (what `__cudaRegisterFunction` names).
    pub name: String,
    /// Registers per thread (`EIATTR_REGCOUNT`, else the `.text` section's `sh_info >> 24`).
    pub regs: u32,
    /// Offset of the parameter block in constant bank 0.
    pub param_base: u32,
    pub param_size: u32,
    /// Parameters in ordinal order.
    pub params: Vec<ParamInfo>,
    /// Size of `.nv.shared.<kernel>` (includes the reserved window on sm_90+).
    pub shared_section: u32,
    /// Stack frame bytes per thread (`EIATTR_FRAME_SIZE`).
    pub frame_size: u32,
    /// Minimum stack bytes per thread (`EIATTR_MIN_STACK_SIZE`).
    pub min_stack: u32,
    /// `__launch_bounds__` maximum threads (x, y, z).
    pub max_threads: Option<[u32; 3]>,
    /// `__cluster_dims__`.
    pub cluster_dims: Option<[u32; 3]>,
    /// Size of `.nv.constant0.<kernel>`.
    pub const0_size: u32,
}

/// Where a symbol lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymKind {
    Object,
    Function,
    Section,
    Other,
}

/// A symbol of the cubin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// Section it is defined in (None: undefined, e.g. `vprintf`).
    pub section: Option<String>,
    /// Offset within that section.
    pub offset: u64,
    pub size: u64,
    pub kind: SymKind,
}

/// Relocation types the loader understands (CUDA ELF numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelocType {
    /// `R_CUDA_32`: the 32-bit absolute address.
    Abs32,
    /// `R_CUDA_64`: the 64-bit absolute address.
    Abs64,
    /// `R_CUDA_ABS32_LO_32` / `R_CUDA_ABS32_HI_32`: one half of the address in a 32-bit word.
    Lo32,
    Hi32,
    Other(u32),
}

impl RelocType {
    fn from_raw(t: u32) -> RelocType {
        match t {
            1 => RelocType::Abs32,
            2 => RelocType::Abs64,
            0x2c => RelocType::Lo32,
            0x2d => RelocType::Hi32,
            o => RelocType::Other(o),
        }
    }
}

/// A relocation the loader must apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reloc {
    /// Section patched.
    pub section: String,
    pub offset: u64,
    pub ty: RelocType,
    pub symbol: String,
    /// Explicit addend (`.rela`) or None (`.rel`: the addend is the patched bytes).
    pub addend: Option<i64>,
}

/// An allocated data section: `.nv.global[.init]` or `.nv.constantN[.kernel]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataSection {
    pub name: String,
    pub size: u64,
    /// Contents (empty for NOBITS sections such as `.nv.global`).
    pub bytes: Vec<u8>,
}

impl DataSection {
    /// `Some((bank, kernel))` for `.nv.constantN` and `.nv.constantN.<kernel>`.
    pub fn const_bank(&self) -> Option<(u32, Option<&str>)> {
        const_bank_of(&self.name)
    }
}

/// `Some((bank, kernel))` for a section named `.nv.constantN` or `.nv.constantN.<kernel>`.
pub fn const_bank_of(name: &str) -> Option<(u32, Option<&str>)> {
    let rest = name.strip_prefix(".nv.constant")?;
    let (num, kernel) = match rest.find('.') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    Some((num.parse().ok()?, kernel))
}

/// A parsed cubin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cubin {
    /// Where it came from (file, or program and fat-binary entry).
    pub origin: String,
    pub bytes: Vec<u8>,
    pub kernels: Vec<KernelInfo>,
    pub symbols: Vec<Symbol>,
    pub data: Vec<DataSection>,
    pub relocs: Vec<Reloc>,
    /// Undefined functions the code calls (`vprintf`, `__assertfail`, `malloc`…).
    pub externs: Vec<String>,
}

fn elf_err(origin: &str, what: impl Into<String>) -> CubinError {
    CubinError::Elf {
        origin: origin.to_string(),
        what: what.into(),
    }
}

impl Cubin {
    /// SHA-256 of the cubin bytes, as lower-case hex (the key of the SASS cache).
    pub fn sha256(&self) -> String {
        sha256_hex(&self.bytes)
    }

    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }

    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.name == name)
    }

    pub fn section(&self, name: &str) -> Option<&DataSection> {
        self.data.iter().find(|s| s.name == name)
    }

    /// Parse the ELF bytes of a cubin. Bytes past the ELF's extent (padding of a fat-binary
    /// entry) are dropped, so that [`Cubin::sha256`] is the hash of the cubin file that
    /// `cuobjdump -xelf` writes.
    pub fn parse(mut bytes: Vec<u8>, origin: &str) -> Result<Cubin> {
        let extent = {
            let elf = Elf::parse(&bytes).map_err(|e| elf_err(origin, format!("not a valid ELF: {e}")))?;
            elf_extent(&elf)
        };
        if extent < bytes.len() as u64 && bytes[extent as usize..].iter().all(|b| *b == 0) {
            bytes.truncate(extent as usize);
        }
        let elf = Elf::parse(&bytes).map_err(|e| elf_err(origin, format!("not a valid ELF: {e}")))?;
        let shname = |i: usize| -> String {
            elf.section_headers
                .get(i)
                .and_then(|h| elf.shdr_strtab.get_at(h.sh_name))
                .unwrap_or("")
                .to_string()
        };
        let sec_bytes = |i: usize| -> Result<&[u8]> {
            let h = &elf.section_headers[i];
            if h.sh_type == SHT_NOBITS {
                return Ok(&[]);
            }
            let start = h.sh_offset as usize;
            let end = h
                .sh_offset
                .checked_add(h.sh_size)
                .filter(|e| *e <= bytes.len() as u64 && h.sh_size <= MAX_SECTION)
                .ok_or_else(|| {
                    elf_err(
                        origin,
                        format!("section {} runs past the end of the file", shname(i)),
                    )
                })? as usize;
            Ok(&bytes[start..end])
        };
        // Symbols.
        let mut symbols = Vec::new();
        let mut sym_names = Vec::new();
        let mut entries = Vec::new();
        for s in elf.syms.iter() {
            let name = elf.strtab.get_at(s.st_name).unwrap_or("").to_string();
            sym_names.push(name.clone());
            let section = if s.st_shndx == 0 || s.st_shndx >= elf.section_headers.len() {
                None
            } else {
                Some(shname(s.st_shndx))
            };
            let kind = match s.st_type() {
                goblin::elf::sym::STT_OBJECT => SymKind::Object,
                goblin::elf::sym::STT_FUNC => SymKind::Function,
                goblin::elf::sym::STT_SECTION => SymKind::Section,
                _ => SymKind::Other,
            };
            let name = if kind == SymKind::Section {
                section.clone().unwrap_or_default()
            } else {
                name
            };
            if kind == SymKind::Function && section.is_some() && s.st_other & STO_CUDA_ENTRY != 0 {
                entries.push((name.clone(), s.st_shndx));
            }
            symbols.push(Symbol {
                name,
                section,
                offset: s.st_value,
                size: s.st_size,
                kind,
            });
        }
        let externs = symbols
            .iter()
            .filter(|s| s.section.is_none() && s.kind == SymKind::Function && !s.name.is_empty())
            .map(|s| s.name.clone())
            .collect();
        // Module-wide attributes (per function, by symbol index).
        let mut global_attrs: Vec<Attr> = Vec::new();
        let mut kernel_attrs: Vec<(String, Vec<Attr>)> = Vec::new();
        let mut data = Vec::new();
        let mut relocs = Vec::new();
        for (i, h) in elf.section_headers.iter().enumerate() {
            let name = shname(i);
            if name == ".nv.info" {
                global_attrs = nvinfo::parse(sec_bytes(i)?, &name, origin)?;
            } else if let Some(k) = name.strip_prefix(".nv.info.") {
                kernel_attrs.push((k.to_string(), nvinfo::parse(sec_bytes(i)?, &name, origin)?));
            } else if name.starts_with(".nv.global") || name.starts_with(".nv.constant") {
                if h.sh_size > MAX_SECTION {
                    return Err(elf_err(origin, format!("section {name} of {} bytes", h.sh_size)));
                }
                data.push(DataSection {
                    name: name.clone(),
                    size: h.sh_size,
                    bytes: sec_bytes(i)?.to_vec(),
                });
            }
        }
        for (shndx, section) in elf.shdr_relocs.iter() {
            let target = elf.section_headers.get(*shndx).map_or(0, |h| h.sh_info as usize);
            let tname = shname(target);
            if !tname.starts_with(".nv.") && !tname.starts_with(".text.") {
                continue; // debug information
            }
            for r in section.iter() {
                let symbol = sym_names.get(r.r_sym).cloned().unwrap_or_default();
                let symbol = match symbols.get(r.r_sym) {
                    Some(s) if s.kind == SymKind::Section => s.name.clone(),
                    _ => symbol,
                };
                relocs.push(Reloc {
                    section: tname.clone(),
                    offset: r.r_offset,
                    ty: RelocType::from_raw(r.r_type),
                    symbol,
                    addend: r.r_addend,
                });
            }
        }
        // Kernels.
        let mut kernels = Vec::new();
        for (name, shndx) in entries {
            let text = &elf.section_headers[shndx];
            let attrs: &[Attr] = kernel_attrs
                .iter()
                .find(|(k, _)| *k == name)
                .map_or(&[], |(_, a)| a.as_slice());
            let sym_index = sym_names.iter().position(|n| *n == name).unwrap_or(usize::MAX) as u32;
            let per_fn = |id: u8| -> Option<u32> {
                global_attrs
                    .iter()
                    .find(|a| a.id == id && a.word(0) == Some(sym_index))
                    .and_then(|a| a.word(1))
            };
            let regs = per_fn(nvinfo::REGCOUNT).unwrap_or(text.sh_info >> 24);
            let mut k = KernelInfo {
                name: name.clone(),
                regs,
                param_base: 0,
                param_size: 0,
                params: Vec::new(),
                shared_section: 0,
                frame_size: per_fn(nvinfo::FRAME_SIZE).unwrap_or(0),
                min_stack: per_fn(nvinfo::MIN_STACK_SIZE).unwrap_or(0),
                max_threads: None,
                cluster_dims: None,
                const0_size: 0,
            };
            let xyz = |a: &Attr| -> Option<[u32; 3]> { Some([a.word(0)?, a.word(1)?, a.word(2)?]) };
            for a in attrs {
                match a.id {
                    nvinfo::PARAM_CBANK => {
                        k.param_base = a.half(4).unwrap_or(0) as u32;
                        k.param_size = a.half(6).unwrap_or(0) as u32;
                    }
                    nvinfo::CBANK_PARAM_SIZE => k.param_size = a.value as u32,
                    nvinfo::KPARAM_INFO => {
                        let ordinal = a.half(4).unwrap_or(0) as u32;
                        let offset = a.half(6).unwrap_or(0) as u32;
                        let info = a.word(2).unwrap_or(0);
                        k.params.push(ParamInfo {
                            ordinal,
                            offset,
                            size: (info >> 18) & 0x3fff,
                        });
                    }
                    nvinfo::MAX_THREADS => k.max_threads = xyz(a),
                    nvinfo::CTA_PER_CLUSTER => k.cluster_dims = xyz(a),
                    _ => {}
                }
            }
            k.params.sort_by_key(|p| p.ordinal);
            for w in k.params.windows(2) {
                if w[0].ordinal == w[1].ordinal {
                    return Err(elf_err(
                        origin,
                        format!("kernel {name}: parameter {} listed twice", w[0].ordinal),
                    ));
                }
            }
            for p in &k.params {
                if p.offset.checked_add(p.size).is_none_or(|e| e > k.param_size) {
                    return Err(elf_err(
                        origin,
                        format!(
                            "kernel {name}: parameter {} ({} bytes at offset {}) lies outside the {}-byte parameter block",
                            p.ordinal, p.size, p.offset, k.param_size
                        ),
                    ));
                }
            }
            if let Some(i) = elf
                .section_headers
                .iter()
                .enumerate()
                .position(|(i, _)| shname(i) == format!(".nv.shared.{name}"))
            {
                k.shared_section = elf.section_headers[i].sh_size.min(u32::MAX as u64) as u32;
            }
            if let Some(d) = data.iter().find(|d| d.name == format!(".nv.constant0.{name}")) {
                k.const0_size = d.size.min(u32::MAX as u64) as u32;
            }
            kernels.push(k);
        }
        kernels.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Cubin {
            origin: origin.to_string(),
            bytes,
            kernels,
            symbols,
            data,
            relocs,
            externs,
        })
    }
}

/// End of the last byte the ELF describes (headers, sections, section header table).
fn elf_extent(elf: &Elf) -> u64 {
    let h = &elf.header;
    let mut end = (h.e_shoff).saturating_add(h.e_shnum as u64 * h.e_shentsize as u64);
    end = end.max(h.e_phoff.saturating_add(h.e_phnum as u64 * h.e_phentsize as u64));
    for s in &elf.section_headers {
        if s.sh_type != SHT_NOBITS {
            end = end.max(s.sh_offset.saturating_add(s.sh_size));
        }
    }
    for p in &elf.program_headers {
        end = end.max(p.p_offset.saturating_add(p.p_filesz));
    }
    end
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}
