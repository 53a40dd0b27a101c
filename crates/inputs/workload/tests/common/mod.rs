//! Helpers shared by the workload crate's integration tests: a built-in workload loaded, a
//! spec from TOML text, an output's expected bytes, little-endian bytes as f32 or u32 values.

#![allow(dead_code)]

use sassim_workload::{builtin_named, Workload};

pub fn load(name: &str) -> Workload {
    builtin_named(name)
        .unwrap_or_else(|| panic!("no builtin {name}"))
        .load()
        .unwrap_or_else(|e| panic!("{e}"))
}

pub fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn tiny(toml: &str) -> Workload {
    Workload::parse(toml, "tiny.toml", Some("tiny"), None).unwrap_or_else(|e| panic!("{e}"))
}

pub fn expected(w: &Workload, name: &str) -> Vec<u8> {
    w.expected()
        .iter()
        .find(|e| e.buffer == name)
        .unwrap()
        .bytes
        .clone()
}
