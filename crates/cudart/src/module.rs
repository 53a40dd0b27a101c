//! Modules: the fat binaries a program registers, turned into device memory, constant banks
//! and kernels for the simulated GPU's architecture.

use crate::abi::*;
use crate::error::RtError;
use sassim_cubin::{Cubin, EntryKind, FatBinary, KernelInfo, RelocType, SassSource, SymKind};
use sassim_functional::exec::syscall::Syscall;
use sassim_functional::GlobalMemory;
use sassim_isa::Kernel;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A kernel ready to launch.
#[derive(Debug, Clone)]
pub struct LoadedKernel {
    pub info: KernelInfo,
    pub code: Arc<Kernel>,
    /// `.nv.constant0.<kernel>` and other per-kernel constant sections: (bank, bytes).
    pub const0: Arc<Vec<u8>>,
    pub banks: Vec<(u32, Arc<Vec<u8>>)>,
}

/// A device variable of the module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarLoc {
    /// In global memory at this device address.
    Global(u64),
    /// In constant bank `bank` at `offset`.
    Const { bank: u32, offset: u64 },
}

/// One cubin loaded on the device.
#[derive(Debug)]
pub struct LoadedImage {
    pub cubin: Cubin,
    pub kernels: BTreeMap<String, LoadedKernel>,
    /// Module-wide constant banks (bank 3 `__constant__` data, bank 4 addresses…).
    pub banks: BTreeMap<u32, Arc<Vec<u8>>>,
    /// Variables by name: location and size.
    pub vars: BTreeMap<String, (VarLoc, u64)>,
    pub arch: u32,
}

/// A registered fat binary.
#[derive(Debug)]
pub struct Module {
    pub origin: String,
    pub fatbin: FatBinary,
    /// Loaded on first use.
    pub images: Option<Vec<LoadedImage>>,
    /// Why loading failed (reported once; later calls get the same error code).
    pub load_error: Option<RtError>,
}

/// The cubins of `fb` that can run on `sm` (an exact match, else the newest of the same
/// major version not above `sm`, as the driver does), or why not.
pub fn select_cubins(fb: &FatBinary, sm: u32) -> Result<Vec<(u32, Vec<u8>)>, String> {
    let exact: Vec<_> = fb
        .entries
        .iter()
        .filter(|e| e.kind == EntryKind::Cubin && e.arch == sm)
        .collect();
    let chosen = if !exact.is_empty() {
        exact
    } else {
        let best = fb
            .entries
            .iter()
            .filter(|e| e.kind == EntryKind::Cubin && e.arch / 10 == sm / 10 && e.arch < sm)
            .map(|e| e.arch)
            .max();
        match best {
            Some(a) => fb
                .entries
                .iter()
                .filter(|e| e.kind == EntryKind::Cubin && e.arch == a)
                .collect(),
            None => Vec::new(),
        }
    };
    if chosen.is_empty() {
        let cubins: Vec<String> = fb.cubin_archs().iter().map(|a| format!("sm_{a}")).collect();
        let ptx: Vec<String> = fb.ptx_archs().iter().map(|a| format!("compute_{a}")).collect();
        return Err(format!(
            "no cubin for sm_{sm}: the fat binary has cubins for [{}] and PTX for [{}]; sassim runs SASS, not PTX — \
             rebuild with `-gencode arch=compute_{sm},code=sm_{sm}`",
            cubins.join(", "),
            ptx.join(", ")
        ));
    }
    Ok(chosen.into_iter().map(|e| (e.arch, e.data.clone())).collect())
}

/// Load one cubin: allocate its globals in `mem`, build its constant banks with the
/// relocations applied, and get its SASS.
pub fn load_image(
    bytes: Vec<u8>,
    arch: u32,
    origin: &str,
    mem: &mut GlobalMemory,
    sass: &SassSource,
) -> Result<LoadedImage, RtError> {
    let cubin =
        Cubin::parse(bytes, origin).map_err(|e| RtError::new(cudaErrorInvalidKernelImage, e.to_string()))?;
    // Global memory: one allocation per `.nv.global*` section.
    let mut section_base: BTreeMap<String, u64> = BTreeMap::new();
    for d in &cubin.data {
        if d.name.starts_with(".nv.global") && d.size > 0 {
            let a = mem.alloc(d.size, 256);
            if !d.bytes.is_empty() {
                mem.write(a, &d.bytes);
            }
            section_base.insert(d.name.clone(), a);
        }
    }
    let sym_addr = |name: &str| -> Result<u64, RtError> {
        let s = cubin.symbol(name).ok_or_else(|| {
            RtError::new(
                cudaErrorInvalidKernelImage,
                format!("{origin}: relocation against unknown symbol `{name}`"),
            )
        })?;
        match &s.section {
            None => Syscall::by_name(name).map(Syscall::address).ok_or_else(|| {
                RtError::new(
                    cudaErrorSharedObjectSymbolNotFound,
                    format!(
                        "{origin}: the kernels call the external function `{name}`, which sassim does not provide \
                         (provided: vprintf, __assertfail, malloc, free)"
                    ),
                )
            }),
            Some(sec) => match section_base.get(sec) {
                Some(base) => Ok(base + s.offset),
                None => Err(RtError::new(
                    cudaErrorNotSupported,
                    format!(
                        "{origin}: relocation against `{name}` in section {sec} (addresses of {} are not supported)",
                        if s.kind == SymKind::Function { "functions" } else { "that section" }
                    ),
                )),
            },
        }
    };
    // Constant sections with their relocations.
    let mut const_sections: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for d in &cubin.data {
        if d.const_bank().is_some() {
            let mut b = d.bytes.clone();
            b.resize(d.size as usize, 0);
            const_sections.insert(d.name.clone(), b);
        }
    }
    for r in &cubin.relocs {
        let Some(bytes) = const_sections.get_mut(&r.section) else {
            return Err(RtError::new(
                cudaErrorNotSupported,
                format!(
                    "{origin}: relocation {:?} in section {} (only constant banks are patched by sassim)",
                    r.ty, r.section
                ),
            ));
        };
        let s = sym_addr(&r.symbol)?;
        let off = r.offset as usize;
        let width = match r.ty {
            RelocType::Abs64 => 8,
            RelocType::Abs32 | RelocType::Lo32 | RelocType::Hi32 => 4,
            RelocType::Other(t) => {
                return Err(RtError::new(
                    cudaErrorNotSupported,
                    format!("{origin}: relocation type {t} in {} is not supported", r.section),
                ))
            }
        };
        let slot = bytes.get_mut(off..off + width).ok_or_else(|| {
            RtError::new(
                cudaErrorInvalidKernelImage,
                format!("{origin}: relocation at {off:#x} outside section {}", r.section),
            )
        })?;
        let implicit = if width == 8 {
            u64::from_le_bytes(slot.try_into().expect("8 bytes")) as i64
        } else {
            u32::from_le_bytes(slot.try_into().expect("4 bytes")) as i64
        };
        let v = s.wrapping_add(r.addend.unwrap_or(implicit) as u64);
        match r.ty {
            RelocType::Abs64 => slot.copy_from_slice(&v.to_le_bytes()),
            RelocType::Abs32 | RelocType::Lo32 => slot.copy_from_slice(&(v as u32).to_le_bytes()),
            RelocType::Hi32 => slot.copy_from_slice(&((v >> 32) as u32).to_le_bytes()),
            RelocType::Other(_) => {}
        }
    }
    let mut banks = BTreeMap::new();
    for (name, bytes) in &const_sections {
        if let Some((bank, None)) = sassim_cubin::const_bank_of(name) {
            banks.insert(bank, Arc::new(bytes.clone()));
        }
    }
    // Variables.
    let mut vars = BTreeMap::new();
    for s in &cubin.symbols {
        if s.kind != SymKind::Object {
            continue;
        }
        let Some(sec) = &s.section else { continue };
        if let Some(base) = section_base.get(sec) {
            vars.insert(s.name.clone(), (VarLoc::Global(base + s.offset), s.size));
        } else if let Some(rest) = sec.strip_prefix(".nv.constant") {
            if let Ok(bank) = rest.parse::<u32>() {
                vars.insert(
                    s.name.clone(),
                    (
                        VarLoc::Const {
                            bank,
                            offset: s.offset,
                        },
                        s.size,
                    ),
                );
            }
        }
    }
    // Kernels and their SASS.
    let listing = if cubin.kernels.is_empty() {
        sassim_isa::Listing::default()
    } else {
        sass.listing(&cubin)
            .map_err(|e| RtError::new(cudaErrorInvalidKernelImage, e.to_string()))?
    };
    let mut kernels = BTreeMap::new();
    for k in &cubin.kernels {
        let code = listing.kernel(&k.name).ok_or_else(|| {
            RtError::new(
                cudaErrorInvalidKernelImage,
                format!(
                    "{origin}: the disassembly of the cubin has no function {}",
                    k.name
                ),
            )
        })?;
        let mut kbanks = Vec::new();
        let mut const0 = Vec::new();
        for (name, bytes) in &const_sections {
            match sassim_cubin::const_bank_of(name) {
                Some((0, Some(kn))) if kn == k.name => const0 = bytes.clone(),
                Some((b, Some(kn))) if kn == k.name => kbanks.push((b, Arc::new(bytes.clone()))),
                _ => {}
            }
        }
        for (b, bytes) in &banks {
            if !kbanks.iter().any(|(kb, _)| kb == b) {
                kbanks.push((*b, bytes.clone()));
            }
        }
        kernels.insert(
            k.name.clone(),
            LoadedKernel {
                info: k.clone(),
                code: Arc::new(code.clone()),
                const0: Arc::new(const0),
                banks: kbanks,
            },
        );
    }
    Ok(LoadedImage {
        cubin,
        kernels,
        banks,
        vars,
        arch,
    })
}

impl LoadedImage {
    /// Replace module-wide constant bank `bank` (after a `cudaMemcpyToSymbol`) in every
    /// kernel that uses it.
    pub fn set_bank(&mut self, bank: u32, bytes: Arc<Vec<u8>>) {
        self.banks.insert(bank, bytes.clone());
        for k in self.kernels.values_mut() {
            for (b, v) in k.banks.iter_mut() {
                if *b == bank {
                    *v = bytes.clone();
                }
            }
        }
    }
}
