#!/usr/bin/env python3
"""Regenerate crates/cudart/src/api/unimplemented.rs: one reporting stub for every function of
NVIDIA's libcudart.so.13 and libcudart.so.12 (names in crates/cudart/src/api/cuda13-exports.txt
and cuda12-exports.txt) that the other files of crates/cudart/src/api/ do not implement.

The name lists come from the CUDA 13.5.37 wheel (and nvidia-cuda-runtime-cu12 12.9.79 for 12):
  nm -D --defined-only .venv-cuda/lib/python3.11/site-packages/nvidia/cu13/lib/libcudart.so.13 \
    | awk '{print $3}' | sed 's/@.*//' | grep -v '^libcudart' | sort -u
"""
import glob
import os
import re

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "cudart", "src", "api")
impl = set()
for f in glob.glob(os.path.join(root, "*.rs")):
    if f.endswith("unimplemented.rs"):
        continue
    impl |= set(re.findall(r'pub unsafe extern "C" fn (\w+)\(', open(f).read()))
names = sorted(
    {l.strip() for f in ("cuda13-exports.txt", "cuda12-exports.txt") for l in open(os.path.join(root, f)) if l.strip()}
)
missing = [n for n in names if n not in impl]
head = '''//! Every other function of NVIDIA's `libcudart.so.13` and `libcudart.so.12` (their exported
//! names are listed in `cuda13-exports.txt` and `cuda12-exports.txt`, read from the CUDA
//! 13.5.37 and nvidia-cuda-runtime-cu12 12.9.79 wheels with `nm -D --defined-only`):
//! calling one reports the call by name and returns `cudaErrorNotSupported`; it never
//! pretends to succeed. Regenerate with `scripts/gen-cudart-stubs.py` after implementing one.

use super::*;

/// Report an API call sassim does not implement.
pub fn not_implemented(name: &str) -> cudaError_t {
    call_always(name, |_| {
        Err(RtError::fatal(
            cudaErrorNotSupported,
            format!("{name} is not implemented by sassim's CUDA runtime"),
        ))
    })
}

macro_rules! not_implemented {
    ($($name:ident),* $(,)?) => {
        $(
            #[no_mangle]
            pub unsafe extern "C" fn $name() -> cudaError_t {
                not_implemented(stringify!($name))
            }
        )*
    };
}

not_implemented! {
'''
with open(os.path.join(root, "unimplemented.rs"), "w") as out:
    out.write(head)
    for n in missing:
        out.write("    " + n + ",\n")
    out.write("}\n")
print(f"{len(impl)} implemented, {len(missing)} stubs")
