//! Embedded GPU presets, name/alias resolution and `inherits` merging.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde::Serialize;
use toml::Value;

use crate::error::{ConfigError, Result};

/// The default preset.
pub const DEFAULT_PRESET: &str = "rtx-a6000";

/// Embedded preset files: (canonical name, TOML text).
pub const EMBEDDED_PRESETS: &[(&str, &str)] = &[
    ("rtx-a6000", include_str!("../../../presets/rtx-a6000.toml")),
    ("rtx-3080", include_str!("../../../presets/rtx-3080.toml")),
    ("rtx-3080ti", include_str!("../../../presets/rtx-3080ti.toml")),
    ("rtx-3090", include_str!("../../../presets/rtx-3090.toml")),
    ("rtx-2070s", include_str!("../../../presets/rtx-2070s.toml")),
    ("rtx-2080ti", include_str!("../../../presets/rtx-2080ti.toml")),
    ("t4", include_str!("../../../presets/t4.toml")),
    ("rtx-5070ti", include_str!("../../../presets/rtx-5070ti.toml")),
    ("h100", include_str!("../../../presets/h100.toml")),
    ("h100-pcie", include_str!("../../../presets/h100-pcie.toml")),
];

/// Summary of one preset, for `--list-presets` style output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PresetInfo {
    pub name: String,
    pub aliases: Vec<String>,
    pub arch: String,
    pub description: String,
}

/// Normalise a name for matching: lower case, without `-`, `_`, spaces and dots.
pub(crate) fn normalize(name: &str) -> String {
    name.trim()
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | ' ' | '.'))
        .flat_map(char::to_lowercase)
        .collect()
}

fn known_names() -> String {
    EMBEDDED_PRESETS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parse TOML text into a table value.
pub(crate) fn parse_toml(text: &str, origin: &str) -> Result<Value> {
    let table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Parse {
        origin: origin.to_string(),
        message: e.to_string(),
    })?;
    Ok(Value::Table(table))
}

/// Deep merge: tables merge key by key, everything else in `over` replaces `base`.
pub(crate) fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Table(b), Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(existing) if existing.is_table() && v.is_table() => merge(existing, v),
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

/// Resolve a top-level `inherits = "<preset>"` key by merging onto the base preset.
pub(crate) fn resolve_inherits(mut value: Value, origin: &str, depth: usize) -> Result<Value> {
    let parent = match value.as_table_mut().and_then(|t| t.remove("inherits")) {
        None => return Ok(value),
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(ConfigError::Inherits {
                origin: origin.to_string(),
                reason: format!("expected a preset name string, got {}", other.type_str()),
            })
        }
    };
    if depth > 8 {
        return Err(ConfigError::Inherits {
            origin: origin.to_string(),
            reason: "chain deeper than 8 (a loop?)".into(),
        });
    }
    let mut base = preset_value_depth(&parent, depth + 1).map_err(|e| match e {
        ConfigError::UnknownPreset { .. } => ConfigError::Inherits {
            origin: origin.to_string(),
            reason: format!("unknown preset `{parent}`"),
        },
        other => other,
    })?;
    merge(&mut base, value);
    Ok(base)
}

/// Canonical name of a preset given its name or an alias (case-insensitive).
pub fn canonical_preset_name(name: &str) -> Option<&'static str> {
    let want = normalize(name);
    for (canon, _) in EMBEDDED_PRESETS {
        if normalize(canon) == want {
            return Some(canon);
        }
    }
    for (info, (canon, _)) in preset_infos().iter().zip(EMBEDDED_PRESETS) {
        if info.aliases.iter().any(|a| normalize(a) == want) || normalize(&info.name) == want {
            return Some(canon);
        }
    }
    None
}

/// The fully merged TOML value of a preset.
pub fn preset_value(name: &str) -> Result<Value> {
    preset_value_depth(name, 0)
}

fn preset_value_depth(name: &str, depth: usize) -> Result<Value> {
    let want = normalize(name);
    // Direct canonical match first: embedded presets name their parents canonically, so
    // building the alias index never re-enters itself; aliases are for users.
    let canon = EMBEDDED_PRESETS
        .iter()
        .find(|(n, _)| normalize(n) == want)
        .map(|(n, _)| *n)
        .or_else(|| canonical_preset_name(name))
        .ok_or_else(|| ConfigError::UnknownPreset {
            name: name.to_string(),
            known: known_names(),
        })?;
    // The embedded presets are parsed once per process (a fuzzing worker or a sweep loads
    // thousands of configurations; parsing the preset and its parents took most of it).
    static PARSED: OnceLock<Mutex<HashMap<&'static str, Value>>> = OnceLock::new();
    let parsed = PARSED.get_or_init(Default::default);
    if let Some(v) = parsed.lock().ok().and_then(|m| m.get(canon).cloned()) {
        return Ok(v);
    }
    let text = EMBEDDED_PRESETS
        .iter()
        .find(|(n, _)| *n == canon)
        .map(|(_, t)| *t)
        .unwrap_or_default();
    let origin = format!("presets/{canon}.toml");
    let value = parse_toml(text, &origin)?;
    let value = resolve_inherits(value, &origin, depth)?;
    if let Ok(mut m) = parsed.lock() {
        m.insert(canon, value.clone());
    }
    Ok(value)
}

fn preset_infos() -> &'static [PresetInfo] {
    static INFOS: OnceLock<Vec<PresetInfo>> = OnceLock::new();
    INFOS.get_or_init(|| {
        EMBEDDED_PRESETS
            .iter()
            .map(|(canon, _)| {
                let v = preset_value_depth(canon, 1).ok();
                let gpu = v.as_ref().and_then(|v| v.get("gpu"));
                let s = |k: &str| {
                    gpu.and_then(|g| g.get(k))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                let aliases = gpu
                    .and_then(|g| g.get("aliases"))
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                    .unwrap_or_default();
                PresetInfo {
                    name: canon.to_string(),
                    aliases,
                    arch: s("arch"),
                    description: s("description"),
                }
            })
            .collect()
    })
}

/// All embedded presets.
pub fn list_presets() -> Vec<PresetInfo> {
    preset_infos().to_vec()
}

/// A deserialization error of the regenerated text `text`: its message with the key it is
/// about (`[section] key`), without the line/column of `text`, which is not the user's file
/// (overrides and `inherits` were merged into it).
pub(crate) fn describe_de_error(e: &toml::de::Error, text: &str) -> String {
    let msg = e.message().trim_end().to_string();
    let Some(span) = e.span() else { return msg };
    let start = span.start.min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let key = line.split('=').next().unwrap_or("").trim();
    let section = text[..line_start].lines().rev().find_map(|l| {
        let l = l.trim();
        (l.starts_with('[') && l.ends_with(']')).then(|| l.trim_matches(['[', ']']).to_string())
    });
    let at = match (section, key.is_empty() || key.starts_with('[')) {
        (Some(s), false) => format!("`{s}.{key}`"),
        (Some(s), true) => format!("`[{s}]`"),
        (None, false) => format!("`{key}`"),
        (None, true) => return msg,
    };
    format!("{at}: {msg}")
}
