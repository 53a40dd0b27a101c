//! `section.key=value` overrides, applied to the TOML value before
//! deserialization so that unknown keys and wrong types are reported by name.

use toml::Value;

use crate::error::{ConfigError, Result};

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Integer(_) => "integer",
        Value::Float(_) => "float",
        Value::Boolean(_) => "boolean",
        Value::Datetime(_) => "datetime",
        Value::Array(_) => "array",
        Value::Table(_) => "table",
    }
}

fn valid_keys(v: &Value) -> String {
    match v {
        Value::Table(t) => {
            let keys: Vec<&str> = t.keys().map(String::as_str).collect();
            keys.join(", ")
        }
        Value::Array(a) => format!("indices 0..{}", a.len()),
        other => format!("(none: `{}` is a {})", other, type_name(other)),
    }
}

/// Parse the right-hand side of an override: any TOML value, or a bare string.
fn parse_value(raw: &str) -> Value {
    let raw = raw.trim();
    match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| Value::String(raw.to_string())),
        Err(_) => Value::String(raw.to_string()),
    }
}

/// Split `a.b.c=value` into the key path and the value text.
pub fn parse_override(text: &str) -> Result<(Vec<String>, String)> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| ConfigError::MalformedOverride {
            text: text.to_string(),
            reason: "no `=`".into(),
        })?;
    let key = key.trim();
    if key.is_empty() {
        return Err(ConfigError::MalformedOverride {
            text: text.to_string(),
            reason: "empty key".into(),
        });
    }
    let path: Vec<String> = key.split('.').map(|s| s.trim().to_string()).collect();
    if path.iter().any(String::is_empty) {
        return Err(ConfigError::MalformedOverride {
            text: text.to_string(),
            reason: "empty key segment".into(),
        });
    }
    Ok((path, value.to_string()))
}

fn child_mut<'a>(v: &'a mut Value, seg: &str) -> Option<&'a mut Value> {
    match v {
        Value::Table(t) => t.get_mut(seg),
        Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
        _ => None,
    }
}

/// Apply one `section.key=value` override to `root`.
pub fn apply_override(root: &mut Value, text: &str) -> Result<()> {
    let (path, raw) = parse_override(text)?;
    let joined = path.join(".");
    if let Some(why) = crate::informational::informational(&joined) {
        return Err(ConfigError::Informational {
            key: joined,
            why: why.to_string(),
        });
    }
    if path.len() < 2 {
        let key = &path[0];
        return Err(match root.get(key) {
            Some(Value::Table(_)) => ConfigError::MalformedOverride {
                text: text.to_string(),
                reason: format!("`{key}` names a whole section; give `{key}.<key>`"),
            },
            _ => ConfigError::UnknownKey {
                key: key.clone(),
                section: "<root>".into(),
                valid: valid_keys(root),
            },
        });
    }
    let mut cur = root;
    for (i, seg) in path.iter().enumerate() {
        let section = if i == 0 {
            "<root>".to_string()
        } else {
            path[..i].join(".")
        };
        let valid = valid_keys(cur);
        cur = child_mut(cur, seg).ok_or_else(|| ConfigError::UnknownKey {
            key: path[..=i].join("."),
            section,
            valid,
        })?;
    }
    let key = path.join(".");
    let new = parse_value(&raw);
    let expected = type_name(cur);
    let coerced = match (&*cur, new) {
        (Value::Float(_), Value::Integer(i)) => Value::Float(i as f64),
        (Value::Table(_), n) => {
            return Err(ConfigError::WrongType {
                key: format!("{key} (a table; set its keys individually, e.g. `{key}.<key>=...`)"),
                expected: "table".into(),
                found: type_name(&n).into(),
                value: raw.trim().to_string(),
            })
        }
        (old, n) if std::mem::discriminant(old) == std::mem::discriminant(&n) => {
            if let (Value::Array(oa), Value::Array(na)) = (old, &n) {
                let bad = oa.first().and_then(|o0| {
                    na.iter()
                        .find(|e| std::mem::discriminant(*e) != std::mem::discriminant(o0))
                        .map(|b| (o0, b))
                });
                if let Some((o0, bad)) = bad {
                    return Err(ConfigError::WrongType {
                        key,
                        expected: format!("array of {}", type_name(o0)),
                        found: format!("array containing {}", type_name(bad)),
                        value: raw.trim().to_string(),
                    });
                }
            }
            n
        }
        (_, n) => {
            return Err(ConfigError::WrongType {
                key,
                expected: expected.into(),
                found: type_name(&n).into(),
                value: raw.trim().to_string(),
            })
        }
    };
    *cur = coerced;
    Ok(())
}
