//! Functions only NVIDIA's `libcudart.so.12` exports (CUDA 12 programs call them; CUDA 13
//! removed or renamed them): the CUDA 12 `cudaDeviceProp` and the legacy thread API.

use super::*;
use std::ffi::c_void;

impl Runtime {
    /// `cudaDeviceProp` in CUDA 12's layout: CUDA 13's, and the clock rates and copy overlap
    /// that only CUDA 12's structure has.
    fn properties12(&self) -> cudaDeviceProp12 {
        let mut q = cudaDeviceProp12::from_cuda13(&self.properties());
        q.clockRate = self.clock_rate_khz();
        q.deviceOverlap = 1;
        q.memoryClockRate = self.memory_clock_rate_khz();
        q
    }
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceProperties_v2(prop: *mut cudaDeviceProp12, dev: i32) -> cudaError_t {
    call_always("cudaGetDeviceProperties_v2", |rt| {
        if dev != 0 {
            return Err(RtError::new(cudaErrorInvalidDevice, format!("device {dev}")));
        }
        // SAFETY: output pointer.
        unsafe { out(prop, rt.properties12()) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventElapsedTime_v2(
    ms: *mut f32,
    start: *mut c_void,
    end: *mut c_void,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { super::stream::cudaEventElapsedTime(ms, start, end) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaThreadSynchronize() -> cudaError_t {
    // SAFETY: no arguments.
    unsafe { super::device::cudaDeviceSynchronize() }
}

#[no_mangle]
pub unsafe extern "C" fn cudaThreadExit() -> cudaError_t {
    // SAFETY: no arguments.
    unsafe { super::device::cudaDeviceReset() }
}

#[no_mangle]
pub unsafe extern "C" fn cudaThreadSetLimit(limit: i32, value: usize) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { super::device::cudaDeviceSetLimit(limit, value) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaThreadGetLimit(value: *mut usize, limit: i32) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { super::device::cudaDeviceGetLimit(value, limit) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaThreadSetCacheConfig(c: i32) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { super::device::cudaDeviceSetCacheConfig(c) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaSetDoubleForDevice(_d: *mut f64) -> cudaError_t {
    // Legacy no-op in CUDA 12 as well (doubles are native on every supported GPU).
    call("cudaSetDoubleForDevice", |_| Ok(()))
}

#[no_mangle]
pub unsafe extern "C" fn cudaSetDoubleForHost(_d: *mut f64) -> cudaError_t {
    call("cudaSetDoubleForHost", |_| Ok(()))
}
