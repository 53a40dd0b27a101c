//! Element types of data in memory: microbenchmark memory initialisers and workload
//! buffers (the pointee of a kernel pointer parameter).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Element type of data in memory. Spelled `u32`, `s32`, `f32`, `u64`, `f64` in every
/// input (launch-spec TOML, microbenchmark `.mem` directives).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElemType {
    U32,
    S32,
    F32,
    U64,
    F64,
}

impl ElemType {
    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            ElemType::U32 | ElemType::S32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::F64 => 8,
        }
    }

    /// True for `f32` and `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, ElemType::F32 | ElemType::F64)
    }

    /// The input spelling (`"u32"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ElemType::U32 => "u32",
            ElemType::S32 => "s32",
            ElemType::F32 => "f32",
            ElemType::U64 => "u64",
            ElemType::F64 => "f64",
        }
    }

    /// The type spelled `s` (see [`ElemType::name`]).
    pub fn from_name(s: &str) -> Option<ElemType> {
        Some(match s {
            "u32" => ElemType::U32,
            "s32" => ElemType::S32,
            "f32" => ElemType::F32,
            "u64" => ElemType::U64,
            "f64" => ElemType::F64,
            _ => return None,
        })
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sizes() {
        for t in [
            ElemType::U32,
            ElemType::S32,
            ElemType::F32,
            ElemType::U64,
            ElemType::F64,
        ] {
            assert_eq!(ElemType::from_name(t.name()), Some(t));
            assert_eq!(t.to_string(), t.name());
            assert_eq!(t.size(), if t.name().ends_with("64") { 8 } else { 4 });
        }
        assert_eq!(ElemType::from_name("U32"), None);
        assert!(ElemType::F64.is_float() && !ElemType::S32.is_float());
    }
}
