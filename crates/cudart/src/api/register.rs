//! Registration of fat binaries, kernels and variables (called by nvcc's generated host
//! code before `main`), and the launch entry points of `<<<...>>>`.

use super::*;
use crate::module::Module;
use crate::runtime::CallConfig;
use sassim_cubin::fatbin::{container_size, FatBinary, HEADER_BYTES, WRAPPER_MAGIC};
use std::ffi::{c_char, c_void, CStr};

unsafe fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: nvcc passes NUL-terminated names.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Read the fat binary a `__fatBinC_Wrapper_t` points to.
unsafe fn read_fatbin(wrapper: *const FatbinWrapper) -> Result<FatBinary, String> {
    if wrapper.is_null() {
        return Err("NULL fat binary".into());
    }
    // SAFETY: nvcc passes the address of its static wrapper.
    let w = unsafe { &*wrapper };
    if w.magic as u32 != WRAPPER_MAGIC {
        return Err(format!("bad fat binary wrapper magic {:#x}", w.magic as u32));
    }
    if w.data.is_null() {
        return Err("fat binary wrapper without data".into());
    }
    // SAFETY: the wrapper's data points to a container in the program's .nv_fatbin
    // section; its header tells its size, which `container_size` bounds.
    let header = unsafe { std::slice::from_raw_parts(w.data, HEADER_BYTES) };
    let total = container_size(header, "registered fat binary").map_err(|e| e.to_string())?;
    // SAFETY: as above: `total` bytes of the section follow.
    let bytes = unsafe { std::slice::from_raw_parts(w.data, total) };
    FatBinary::parse(bytes, "registered fat binary")
        .map(|(f, _)| f)
        .map_err(|e| e.to_string())
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinary(wrapper: *mut c_void) -> *mut *mut c_void {
    let mut handle = 0usize;
    call_always("__cudaRegisterFatBinary", |rt| {
        let origin = format!("fat binary {}", rt.modules.len() + 1);
        // SAFETY: see read_fatbin.
        let fatbin = match unsafe { read_fatbin(wrapper as *const FatbinWrapper) } {
            Ok(f) => f,
            Err(e) => {
                let err = RtError::fatal(cudaErrorInvalidKernelImage, format!("{origin}: {e}"));
                rt.init_error.get_or_insert(err.clone());
                FatBinary::default()
            }
        };
        rt.modules.push(Module {
            origin,
            fatbin,
            images: None,
            load_error: None,
        });
        handle = rt.modules.len();
        Ok(())
    });
    // The handle is opaque to the program; a module index + 1 that is never dereferenced.
    handle as *mut *mut c_void
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

#[no_mangle]
pub unsafe extern "C" fn __cudaUnregisterFatBinary(_handle: *mut *mut c_void) {
    // Flush device printf output still buffered by C stdio at exit.
    // SAFETY: fflush(NULL) flushes every C stream.
    unsafe {
        libc::fflush(std::ptr::null_mut());
    }
}

#[no_mangle]
pub unsafe extern "C" fn __cudaInitModule(_handle: *mut *mut c_void) -> c_char {
    1
}

/// What the runtime records of a kernel or variable registered by name: the module `handle`
/// names (its index + 1, see `__cudaRegisterFatBinary`) and the device name (`what` the symbol
/// is names it in the message of an unknown handle).
unsafe fn registered_symbol(
    rt: &Runtime,
    handle: *mut *mut c_void,
    what: &str,
    device_name: *const c_char,
) -> RtResult<(usize, String)> {
    // SAFETY: NUL-terminated name from nvcc.
    let name = unsafe { cstr(device_name) };
    let m = (handle as usize).wrapping_sub(1);
    if m >= rt.modules.len() {
        return Err(RtError::fatal(
            cudaErrorInvalidResourceHandle,
            format!("{what} {name}: unknown module handle"),
        ));
    }
    Ok((m, name))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __cudaRegisterFunction(
    handle: *mut *mut c_void,
    host_fun: *const c_char,
    _device_fun: *mut c_char,
    device_name: *const c_char,
    _thread_limit: i32,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _bdim: *mut c_void,
    _gdim: *mut c_void,
    _wsize: *mut i32,
) {
    call_always("__cudaRegisterFunction", |rt| {
        // SAFETY: NUL-terminated name from nvcc.
        let entry = unsafe { registered_symbol(rt, handle, "kernel", device_name)? };
        rt.functions.insert(host_fun as usize, entry);
        Ok(())
    });
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __cudaRegisterVar(
    handle: *mut *mut c_void,
    host_var: *mut c_char,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: i32,
    _size: usize,
    _constant: i32,
    _global: i32,
) {
    call_always("__cudaRegisterVar", |rt| {
        // SAFETY: NUL-terminated name from nvcc.
        let entry = unsafe { registered_symbol(rt, handle, "variable", device_name)? };
        rt.vars.insert(host_var as usize, entry);
        Ok(())
    });
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __cudaRegisterManagedVar(
    _handle: *mut *mut c_void,
    _host_var_ptr: *mut *mut c_void,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: i32,
    _size: usize,
    _constant: i32,
    _global: i32,
) {
    // SAFETY: NUL-terminated name from nvcc.
    let name = unsafe { cstr(device_name) };
    call_always("__cudaRegisterManagedVar", |rt| {
        let e = RtError::fatal(
            cudaErrorNotSupported,
            format!("__managed__ variable {name}: __cudaRegisterManagedVar is not implemented by sassim"),
        );
        rt.init_error.get_or_insert(e.clone());
        Err(e)
    });
}

#[no_mangle]
pub unsafe extern "C" fn __cudaPushCallConfiguration(
    grid: dim3,
    block: dim3,
    shared: usize,
    stream: *mut c_void,
) -> u32 {
    call_always("__cudaPushCallConfiguration", |rt| {
        rt.call_stack.push(CallConfig {
            grid,
            block,
            shared,
            stream: stream as usize,
        });
        Ok(())
    }) as u32
}

#[no_mangle]
pub unsafe extern "C" fn __cudaPopCallConfiguration(
    grid: *mut dim3,
    block: *mut dim3,
    shared: *mut usize,
    stream: *mut *mut c_void,
) -> cudaError_t {
    call_always("__cudaPopCallConfiguration", |rt| {
        let c = rt
            .call_stack
            .pop()
            .ok_or_else(|| RtError::new(cudaErrorMissingConfiguration, "no launch configuration pushed"))?;
        // SAFETY: nvcc passes its local variables.
        unsafe {
            out(grid, c.grid)?;
            out(block, c.block)?;
            out(shared, c.shared)?;
            out(stream, c.stream as *mut c_void)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn __cudaGetKernel(kernel: *mut *const c_void, host_fun: *const c_void) -> cudaError_t {
    call_always("__cudaGetKernel", |rt| {
        if !rt.functions.contains_key(&(host_fun as usize)) {
            return Err(RtError::new(
                cudaErrorInvalidDeviceFunction,
                "not a registered kernel",
            ));
        }
        // SAFETY: output pointer from nvcc's launch stub.
        unsafe { out(kernel, host_fun) }
    })
}

unsafe fn launch_common(
    name: &str,
    f: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: *mut c_void,
) -> cudaError_t {
    call(name, |rt| {
        // SAFETY: nvcc's stubs (and callers of cudaLaunchKernel) pass one pointer per
        // kernel parameter.
        unsafe {
            crate::launch::launch(
                rt,
                f as usize,
                grid,
                block,
                args as *const *const c_void,
                shared,
                stream as usize,
            )
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn __cudaLaunchKernel(
    kernel: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: *mut c_void,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { launch_common("__cudaLaunchKernel", kernel, grid, block, args, shared, stream) }
}

#[no_mangle]
pub unsafe extern "C" fn __cudaLaunchKernel_ptsz(
    kernel: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: *mut c_void,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe {
        launch_common(
            "__cudaLaunchKernel_ptsz",
            kernel,
            grid,
            block,
            args,
            shared,
            stream,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernel(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: *mut c_void,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { launch_common("cudaLaunchKernel", func, grid, block, args, shared, stream) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernel_ptsz(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: *mut c_void,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { launch_common("cudaLaunchKernel_ptsz", func, grid, block, args, shared, stream) }
}
