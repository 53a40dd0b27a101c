//! Errors of the fat-binary and cubin readers. Every message names what was being read.

/// Why a fat binary, cubin or listing could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CubinError {
    /// A malformed fat binary container (`origin`: the file or registration it came from).
    #[error("{origin}: fat binary: {what}")]
    FatBinary { origin: String, what: String },
    /// A host executable that cannot be read.
    #[error("{origin}: {what}")]
    Program { origin: String, what: String },
    /// A malformed cubin ELF.
    #[error("{origin}: cubin: {what}")]
    Elf { origin: String, what: String },
    /// Something the loader does not implement (a relocation type, an attribute form…).
    #[error("{origin}: unsupported: {what}")]
    Unsupported { origin: String, what: String },
    /// The SASS of a cubin could not be obtained or parsed.
    #[error("{0}")]
    Disassembly(String),
}

pub type Result<T> = std::result::Result<T, CubinError>;
