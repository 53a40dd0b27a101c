//! The exported C functions of the CUDA runtime API (`cuda_runtime_api.h`, CUDA 13.5) and
//! the registration entry points nvcc's host code calls (`crt/host_runtime.h`).
//!
//! Every function is `extern "C"`, `#[no_mangle]` and `unsafe`: its safety contract is the
//! CUDA Runtime API documentation (valid pointers for outputs and copies). Panics never
//! cross into C: [`call`] catches them and returns an error code.

#![allow(clippy::missing_safety_doc, non_snake_case, non_upper_case_globals)]

pub mod cuda12;
pub mod device;
pub mod driver;
pub mod kernel;
pub mod memory;
pub mod register;
pub mod stream;
pub mod unimplemented;

use crate::abi::*;
use crate::error::{RtError, RtResult};
use crate::runtime::{runtime, Runtime};
use std::panic::AssertUnwindSafe;

/// `cudaErrorUnknown`.
const CUDA_ERROR_UNKNOWN: cudaError_t = 999;

/// Run an API call against the runtime: sticky errors first, then `f`; errors recorded as
/// the last error (and reported to the user when fatal).
pub fn call(name: &str, f: impl FnOnce(&mut Runtime) -> RtResult<()>) -> cudaError_t {
    call_with(name, true, f)
}

/// [`call`] for functions CUDA answers even after a kernel fault (error queries, device
/// properties, frees).
pub fn call_always(name: &str, f: impl FnOnce(&mut Runtime) -> RtResult<()>) -> cudaError_t {
    call_with(name, false, f)
}

fn call_with(name: &str, sticky: bool, f: impl FnOnce(&mut Runtime) -> RtResult<()>) -> cudaError_t {
    let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let mut g = runtime();
        let Some(rt) = g.as_mut() else {
            return cudaErrorInitializationError;
        };
        if sticky {
            if let Some(code) = rt.sticky {
                rt.last_error = code;
                return code;
            }
        }
        match f(rt) {
            Ok(()) => cudaSuccess,
            Err(e) => rt.fail(name, e),
        }
    }));
    match r {
        Ok(c) => c,
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            eprintln!("sassim: internal error in {name}: {what}");
            CUDA_ERROR_UNKNOWN
        }
    }
}

/// Write `v` through an output pointer, or fail with `cudaErrorInvalidValue` when it is NULL.
pub unsafe fn out<T>(p: *mut T, v: T) -> RtResult<()> {
    if p.is_null() {
        return Err(RtError::new(cudaErrorInvalidValue, "NULL output pointer"));
    }
    // SAFETY: non-NULL, and the caller passes a pointer valid for writes of T (API contract).
    unsafe { p.write(v) };
    Ok(())
}
