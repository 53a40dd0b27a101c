//! Error type of the configuration crate.

use thiserror::Error;

/// Every way loading or validating a configuration can fail.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The preset name (or alias) is not known.
    #[error("unknown GPU preset `{name}`; known presets: {known}")]
    UnknownPreset { name: String, known: String },

    /// A configuration file could not be read.
    #[error("cannot read configuration file `{path}`: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },

    /// TOML syntax error, or a schema error found while deserializing
    /// (unknown field, missing field, wrong enum variant...).
    #[error("invalid configuration `{origin}`: {message}")]
    Parse { origin: String, message: String },

    /// An override string is not of the form `section.key=value`.
    #[error(
        "malformed override `{text}`: {reason} (expected `section.key=value`, e.g. `units.fp32.latency=5`)"
    )]
    MalformedOverride { text: String, reason: String },

    /// An override names a key that does not exist.
    #[error("unknown configuration key `{key}`; valid keys of `{section}`: {valid}")]
    UnknownKey {
        key: String,
        section: String,
        valid: String,
    },

    /// An override gives a value of the wrong type.
    #[error("wrong type for `{key}`: expected {expected}, got {found} (`{value}`)")]
    WrongType {
        key: String,
        expected: String,
        found: String,
        value: String,
    },

    /// A numeric value is outside its allowed range.
    #[error("`{key}` = {value} is out of range; allowed range is {min}..={max}")]
    OutOfRange {
        key: String,
        value: String,
        min: String,
        max: String,
    },

    /// Two values are inconsistent with each other.
    #[error("inconsistent configuration at `{key}`: {reason}")]
    Inconsistent { key: String, reason: String },

    /// `inherits` chains that loop or name something unknown.
    #[error("bad `inherits` in `{origin}`: {reason}")]
    Inherits { origin: String, reason: String },

    /// An override names a key that documents the hardware but drives nothing in the model.
    #[error("`{key}` is informational and cannot be set: {why} (docs/presets.md, \"Informational keys\")")]
    Informational { key: String, why: String },

    /// No opcode table for that architecture.
    #[error("no opcode table `{name}`; known tables: {known}")]
    UnknownOpcodeTable { name: String, known: String },
}

/// Convenience alias.
pub type Result<T, E = ConfigError> = std::result::Result<T, E>;
