//! Driver API functions a program reaches through the runtime (`cudaGetDriverEntryPoint*`):
//! programs built with `-cudart shared` and no `-lcuda` get driver functions this way, e.g.
//! `cuTensorMapEncodeTiled` for Hopper's Tensor Memory Accelerator. Only the functions listed
//! in [`DRIVER_FUNCTIONS`] exist; asking for another is reported by name and refused.

use super::*;
use sassim_functional::tma::{EncodeArgs, TensorMap, TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES};
use std::ffi::{c_char, c_void, CStr};

/// `CUresult` of the driver API.
type CUresult = i32;
const CUDA_SUCCESS: CUresult = 0;
const CUDA_ERROR_INVALID_VALUE: CUresult = 1;

/// `cudaDriverEntryPointQueryResult`.
const ENTRY_SUCCESS: i32 = 0;
const ENTRY_SYMBOL_NOT_FOUND: i32 = 1;

/// `cuTensorMapEncodeTiled` (CUDA Driver API, "Tensor Map Object Management"): checks the
/// documented requirements and writes sassim's encoding of the map
/// ([`sassim_functional::tma::TensorMap::encode`]).
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn cuTensorMapEncodeTiled(
    tensor_map: *mut u8,
    dtype: u32,
    rank: u32,
    global_address: *mut c_void,
    global_dim: *const u64,
    global_strides: *const u64,
    box_dim: *const u32,
    element_strides: *const u32,
    interleave: u32,
    swizzle: u32,
    l2_promotion: u32,
    oob_fill: u32,
) -> CUresult {
    let fail = |why: String| {
        eprintln!("sassim: cuTensorMapEncodeTiled: {why}");
        CUDA_ERROR_INVALID_VALUE
    };
    if tensor_map.is_null() || global_dim.is_null() || box_dim.is_null() || element_strides.is_null() {
        return fail("a null pointer argument".into());
    }
    if !(tensor_map as u64).is_multiple_of(TENSOR_MAP_ALIGN) {
        return fail(format!("tensorMap {tensor_map:p} is not 64-byte aligned"));
    }
    if rank == 0 || rank > 5 {
        return fail(format!("tensorRank {rank} is outside 1..=5"));
    }
    let n = rank as usize;
    if n > 1 && global_strides.is_null() {
        return fail("globalStrides is null".into());
    }
    // SAFETY: the caller passes arrays of tensorRank (tensorRank - 1 for the strides) entries,
    // the documented contract of the function.
    let (dims, strides, boxes, estr) = unsafe {
        (
            std::slice::from_raw_parts(global_dim, n),
            if n > 1 {
                std::slice::from_raw_parts(global_strides, n - 1)
            } else {
                &[][..]
            },
            std::slice::from_raw_parts(box_dim, n),
            std::slice::from_raw_parts(element_strides, n),
        )
    };
    let args = EncodeArgs {
        dtype,
        rank,
        global_address: global_address as u64,
        global_dim: dims,
        global_strides: strides,
        box_dim: boxes,
        element_strides: estr,
        interleave,
        swizzle,
        l2_promotion,
        oob_fill,
    };
    match TensorMap::from_args(&args) {
        Ok(m) => {
            let bytes = m.encode();
            // SAFETY: a CUtensorMap is 128 bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), tensor_map, TENSOR_MAP_BYTES) };
            CUDA_SUCCESS
        }
        Err(e) => fail(e),
    }
}

/// The driver functions sassim provides, by name.
const DRIVER_FUNCTIONS: &[&str] = &["cuTensorMapEncodeTiled"];

fn driver_function(name: &str) -> Option<*mut c_void> {
    match name {
        "cuTensorMapEncodeTiled" => Some(cuTensorMapEncodeTiled as *mut c_void),
        _ => None,
    }
}

unsafe fn entry_point(
    call_name: &str,
    symbol: *const c_char,
    func: *mut *mut c_void,
    status: *mut i32,
) -> cudaError_t {
    call(call_name, |_| {
        if symbol.is_null() || func.is_null() {
            return Err(RtError::new(cudaErrorInvalidValue, "null symbol or funcPtr"));
        }
        // SAFETY: a NUL-terminated C string (the API's contract).
        let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy().into_owned();
        match driver_function(&name) {
            Some(f) => {
                // SAFETY: output pointers.
                unsafe {
                    *func = f;
                    if !status.is_null() {
                        *status = ENTRY_SUCCESS;
                    }
                }
                Ok(())
            }
            None => {
                // SAFETY: output pointers.
                unsafe {
                    *func = std::ptr::null_mut();
                    if !status.is_null() {
                        *status = ENTRY_SYMBOL_NOT_FOUND;
                    }
                }
                Err(RtError::fatal(
                    cudaErrorNotSupported,
                    format!(
                        "driver function {name} is not implemented by sassim (it provides: {})",
                        DRIVER_FUNCTIONS.join(", ")
                    ),
                ))
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDriverEntryPoint(
    symbol: *const c_char,
    func: *mut *mut c_void,
    _flags: u64,
    status: *mut i32,
) -> cudaError_t {
    // SAFETY: forwarded pointers.
    unsafe { entry_point("cudaGetDriverEntryPoint", symbol, func, status) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDriverEntryPointByVersion(
    symbol: *const c_char,
    func: *mut *mut c_void,
    _cuda_version: u32,
    _flags: u64,
    status: *mut i32,
) -> cudaError_t {
    // SAFETY: forwarded pointers.
    unsafe { entry_point("cudaGetDriverEntryPointByVersion", symbol, func, status) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDriverEntryPoint_ptsz(
    symbol: *const c_char,
    func: *mut *mut c_void,
    flags: u64,
    status: *mut i32,
) -> cudaError_t {
    // SAFETY: forwarded pointers.
    unsafe { cudaGetDriverEntryPoint(symbol, func, flags, status) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDriverEntryPointByVersion_ptsz(
    symbol: *const c_char,
    func: *mut *mut c_void,
    cuda_version: u32,
    flags: u64,
    status: *mut i32,
) -> cudaError_t {
    // SAFETY: forwarded pointers.
    unsafe { cudaGetDriverEntryPointByVersion(symbol, func, cuda_version, flags, status) }
}
