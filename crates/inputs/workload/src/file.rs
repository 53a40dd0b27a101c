//! Loading buffer contents from files: raw little-endian binary (any extension but `.npy`)
//! or NumPy `.npy` (format 1.0/2.0/3.0, C order, little-endian dtype matching the element type).

use crate::spec::ElemType;
use crate::values::Values;
use std::path::Path;

/// Reads `path` as `elem` elements. `count`, when given, must match the element count.
pub fn load_values(path: &Path, elem: ElemType, count: Option<usize>) -> Result<Values, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let is_npy = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    let values = if is_npy {
        parse_npy(&bytes, elem).map_err(|e| format!("{}: {e}", path.display()))?
    } else {
        Values::from_le_bytes(elem, &bytes).ok_or_else(|| {
            format!(
                "{}: {} bytes is not a multiple of the {elem} element size {}",
                path.display(),
                bytes.len(),
                elem.size()
            )
        })?
    };
    if let Some(c) = count {
        if values.len() != c {
            return Err(format!(
                "{}: holds {} {elem} elements, expected {c}",
                path.display(),
                values.len()
            ));
        }
    }
    Ok(values)
}

/// Parses an in-memory `.npy` file.
pub fn parse_npy(bytes: &[u8], elem: ElemType) -> Result<Values, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (bad magic)".into());
    }
    let major = bytes[6];
    let (hlen, hstart) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err("truncated .npy header".into());
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes.get(hstart..hstart + hlen).ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "non-UTF-8 .npy header")?;
    let descr = dict_value(header, "descr").ok_or("`descr` missing in .npy header")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let want: &[&str] = match elem {
        ElemType::U32 => &["<u4", "|u4"],
        ElemType::S32 => &["<i4", "|i4"],
        ElemType::F32 => &["<f4"],
        ElemType::U64 => &["<u8"],
        ElemType::F64 => &["<f8"],
    };
    if !want.contains(&descr) {
        return Err(format!(
            "dtype {descr} does not match element type {elem} (want {})",
            want[0]
        ));
    }
    let fortran = dict_value(header, "fortran_order").ok_or("`fortran_order` missing")?;
    if fortran.starts_with("True") {
        // Only matters for >1-D arrays; refuse rather than silently transpose.
        let shape = dict_value(header, "shape").unwrap_or("");
        if shape.matches(',').count() > 1 || !shape.contains(',') && shape.len() > 2 {
            return Err("Fortran-order multi-dimensional .npy is not supported".into());
        }
    }
    let data = &bytes[hstart + hlen..];
    Values::from_le_bytes(elem, data)
        .ok_or_else(|| format!("data size {} is not a multiple of {}", data.len(), elem.size()))
}

/// Returns the raw text of `'key': value` in a Python dict literal (up to the next top-level comma).
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let pat1 = format!("'{key}':");
    let pat2 = format!("\"{key}\":");
    let at = header
        .find(&pat1)
        .map(|i| i + pat1.len())
        .or_else(|| header.find(&pat2).map(|i| i + pat2.len()))?;
    let rest = header[at..].trim_start();
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    Some(rest.trim())
}
