//! `sassim-config`: GPU presets, per-architecture opcode tables and the typed
//! configuration consumed by the timing model.
//!
//! ```
//! use sassim_config::GpuConfig;
//! let cfg = GpuConfig::load("a6000", &["units.fp32.latency=5".to_string()]).unwrap();
//! assert_eq!(cfg.gpu.num_sms, 84);
//! let ffma = cfg.opcode_table().lookup("FFMA", &[]);
//! assert_eq!(ffma.info.latency, 5);
//! ```
//!
//! Presets live in `presets/*.toml` at the repository root and are embedded
//! with `include_str!`; see `docs/presets.md` for the schema and sources.

pub mod error;
pub mod informational;
pub mod limits;
pub mod opcodes;
pub mod overrides;
pub mod presets;
pub mod schema;
mod validate;

use std::path::Path;
use std::sync::Arc;

pub use error::{ConfigError, Result};
pub use informational::{informational, INFORMATIONAL};
pub use opcodes::{LatencyKind, Lookup, MemOp, OpcodeInfo, OpcodeTable, UnitKind};
pub use overrides::apply_override;
pub use presets::{list_presets, PresetInfo, DEFAULT_PRESET};
pub use schema::*;

impl GpuConfig {
    /// A preset by name or alias, case-insensitive (`rtx-a6000`, `A6000`, `tesla-t4`...).
    pub fn preset(name: &str) -> Result<Self> {
        Self::load(name, &[])
    }

    /// The default preset (RTX A6000).
    pub fn default_preset() -> Self {
        Self::preset(DEFAULT_PRESET).expect("the embedded default preset is valid")
    }

    /// A configuration file. It may start with `inherits = "<preset>"` and then
    /// only give the keys it changes.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        Self::load_file(path.as_ref(), &[])
    }

    /// Parse configuration text (`origin` is used in error messages).
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self> {
        let value = presets::parse_toml(text, origin)?;
        let value = presets::resolve_inherits(value, origin, 0)?;
        Self::from_value(value, &[], origin)
    }

    /// Load a preset name/alias or a file path, then apply `section.key=value`
    /// overrides (before deserialization), then validate.
    pub fn load(name_or_path: &str, overrides: &[String]) -> Result<Self> {
        let path = Path::new(name_or_path);
        let looks_like_path =
            name_or_path.ends_with(".toml") || name_or_path.contains('/') || name_or_path.contains('\\');
        if looks_like_path || (path.is_file() && presets::canonical_preset_name(name_or_path).is_none()) {
            return Self::load_file(path, overrides);
        }
        let value = presets::preset_value(name_or_path)?;
        let canon = presets::canonical_preset_name(name_or_path).unwrap_or(name_or_path);
        Self::from_value(value, overrides, &format!("presets/{canon}.toml"))
    }

    fn load_file(path: &Path, overrides: &[String]) -> Result<Self> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: origin.clone(),
            source,
        })?;
        let value = presets::parse_toml(&text, &origin)?;
        let value = presets::resolve_inherits(value, &origin, 0)?;
        Self::from_value(value, overrides, &origin)
    }

    /// The merged TOML value (after `inherits` and overrides) deserialized and validated.
    /// Numbers are checked against [`limits::LIMITS`] before deserialization, so an error
    /// names the key and its allowed range (not a line of the regenerated text).
    pub fn from_value(mut value: toml::Value, overrides: &[String], origin: &str) -> Result<Self> {
        for o in overrides {
            overrides::apply_override(&mut value, o)?;
        }
        limits::check_value(&value)?;
        // Straight from the value; when that fails, again through text so that toml's
        // deserializer reports key paths (the round trip took half of loading a preset).
        let cfg = match <GpuConfig as serde::Deserialize>::deserialize(value.clone()) {
            Ok(cfg) => cfg,
            Err(_) => {
                let text = toml::to_string(&value).map_err(|e| ConfigError::Parse {
                    origin: origin.to_string(),
                    message: e.to_string(),
                })?;
                toml::from_str(&text).map_err(|e| ConfigError::Parse {
                    origin: origin.to_string(),
                    message: presets::describe_de_error(&e, &text),
                })?
            }
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Apply more overrides to an already loaded configuration.
    pub fn with_overrides(&self, overrides: &[String]) -> Result<Self> {
        let value = toml::Value::try_from(self).map_err(|e| ConfigError::Parse {
            origin: self.gpu.name.clone(),
            message: e.to_string(),
        })?;
        Self::from_value(value, overrides, &self.gpu.name)
    }

    /// The opcode table named by `gpu.opcode_table`, resolved against `[units]`.
    /// Built on first use and cached.
    pub fn try_opcode_table(&self) -> Result<&OpcodeTable> {
        if let Some(t) = self.opcodes.0.get() {
            return Ok(t);
        }
        let mut table = OpcodeTable::for_arch(&self.gpu.opcode_table, &self.units, self.gpu.warp_size)?;
        let i = &self.issue;
        let unit = parse_choice::<opcodes::UnitKind>("issue.unknown_opcode_unit", &i.unknown_opcode_unit)?;
        let kind = parse_choice::<opcodes::LatencyKind>("issue.unknown_opcode_kind", &i.unknown_opcode_kind)?;
        let latency = (i.unknown_opcode_latency > 0).then_some(i.unknown_opcode_latency);
        table.override_default(unit, kind, latency);
        Ok(self.opcodes.0.get_or_init(|| Arc::new(table)))
    }

    /// Like [`Self::try_opcode_table`]; panics if `gpu.opcode_table` names no
    /// embedded table (impossible for a validated configuration).
    pub fn opcode_table(&self) -> &OpcodeTable {
        self.try_opcode_table().unwrap_or_else(|e| panic!("{e}"))
    }

    /// The configuration as pretty JSON (for reports).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The configuration as TOML (a complete, self-contained preset).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}

/// `table` (keep the opcode table's value) or a value of `T` by its name; an error names
/// the key otherwise.
fn parse_choice<T: serde::de::DeserializeOwned>(key: &str, v: &str) -> Result<Option<T>> {
    if v == "table" {
        return Ok(None);
    }
    toml::Value::String(v.to_string())
        .try_into::<T>()
        .map(Some)
        .map_err(|_| ConfigError::Parse {
            origin: key.to_string(),
            message: format!("`{key}` = \"{v}\" is not \"table\" or a known value"),
        })
}
