//! Errors.

/// An invalid [`crate::MemoryConfig`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{0} must be a power of two (got {1})")]
    NotPowerOfTwo(&'static str, u32),
    #[error("invalid memory config: {0}")]
    Invalid(&'static str),
}
