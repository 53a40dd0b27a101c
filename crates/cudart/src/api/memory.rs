//! Device memory: allocation, copies, sets, symbols, host-visible memory.

use super::*;
use crate::module::VarLoc;
use crate::runtime::HostKind;
use std::ffi::c_void;
use std::sync::Arc;

/// Alignment of device allocations (the driver's is at least 256 bytes).
const ALLOC_ALIGN: u64 = 256;

fn invalid(msg: impl Into<String>) -> RtError {
    RtError::new(cudaErrorInvalidValue, msg)
}

impl Runtime {
    /// Bytes of device memory the program may allocate (the preset's memory).
    fn memory_bytes(&self) -> u64 {
        self.gpu_cfg.gpu.memory_mb.saturating_mul(1 << 20)
    }

    fn alloc_device(&mut self, size: u64) -> RtResult<u64> {
        let used = self.mem.allocated_bytes();
        if size > self.memory_bytes().saturating_sub(used) {
            return Err(RtError::new(
                cudaErrorMemoryAllocation,
                format!(
                    "cudaMalloc of {size} bytes: {used} of the {} bytes of {} are in use",
                    self.memory_bytes(),
                    self.gpu_cfg.gpu.name
                ),
            ));
        }
        let a = self.mem.alloc(size, ALLOC_ALIGN);
        self.device_allocs.insert(a, size);
        Ok(a)
    }

    /// Host memory the device also sees.
    fn alloc_host(&mut self, size: usize, kind: HostKind) -> RtResult<*mut c_void> {
        if size as u64 > self.memory_bytes() {
            return Err(RtError::new(
                cudaErrorMemoryAllocation,
                format!("{size} bytes of host-visible memory"),
            ));
        }
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: posix_memalign writes a pointer to `size` bytes or fails.
        let r = unsafe { libc::posix_memalign(&mut p, 4096, size.max(1)) };
        if r != 0 || p.is_null() {
            return Err(RtError::new(
                cudaErrorMemoryAllocation,
                format!("{size} bytes of host memory"),
            ));
        }
        // SAFETY: `p` points to `size` writable bytes.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, size) };
        if !self.mem.map_at(p as u64, size.max(1) as u64) {
            // SAFETY: allocated above.
            unsafe { libc::free(p) };
            return Err(RtError::new(
                cudaErrorMemoryAllocation,
                "host memory overlaps device memory",
            ));
        }
        self.host_regions.insert(p as usize, (size.max(1), kind));
        Ok(p)
    }

    /// Copy `n` bytes, host or device on either side (`kind` as CUDA's, Default = infer).
    unsafe fn copy(&mut self, dst: u64, src: u64, n: u64, kind: i32) -> RtResult<()> {
        if n == 0 {
            return Ok(());
        }
        let dst_dev = self.is_device(dst, n);
        let src_dev = self.is_device(src, n);
        let (d, s) = match kind {
            cudaMemcpyHostToHost => (false, false),
            cudaMemcpyHostToDevice => (true, false),
            cudaMemcpyDeviceToHost => (false, true),
            cudaMemcpyDeviceToDevice => (true, true),
            cudaMemcpyDefault => (dst_dev, src_dev),
            k => {
                return Err(RtError::new(
                    cudaErrorInvalidMemcpyDirection,
                    format!("copy kind {k}"),
                ))
            }
        };
        if d && !dst_dev {
            return Err(invalid(format!(
                "destination {dst:#x} ({n} bytes) is not device memory"
            )));
        }
        if s && !src_dev {
            return Err(invalid(format!(
                "source {src:#x} ({n} bytes) is not device memory"
            )));
        }
        if (!d && dst_dev) || (!s && src_dev) {
            return Err(RtError::new(
                cudaErrorInvalidMemcpyDirection,
                format!("copy kind {kind} does not match the pointers {dst:#x} <- {src:#x}"),
            ));
        }
        let n = usize::try_from(n).map_err(|_| invalid("size"))?;
        match (d, s) {
            (true, true) => {
                let bytes = self.mem.read(src, n).ok_or_else(|| invalid("source"))?;
                self.mem.write(dst, &bytes);
            }
            (true, false) => {
                // SAFETY: the program passes `n` readable host bytes.
                let bytes = unsafe { std::slice::from_raw_parts(src as *const u8, n) };
                self.mem.write(dst, bytes);
            }
            (false, true) => {
                // SAFETY: the program passes `n` writable host bytes.
                let bytes = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, n) };
                self.mem.read_into(src, bytes);
            }
            (false, false) => {
                // SAFETY: host to host; regions may overlap (memmove semantics).
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
            }
        }
        Ok(())
    }

    unsafe fn set(&mut self, dst: u64, value: i32, n: u64) -> RtResult<()> {
        if n == 0 {
            return Ok(());
        }
        if self.is_device(dst, n) {
            let n = usize::try_from(n).map_err(|_| invalid("size"))?;
            self.mem.write(dst, &vec![value as u8; n]);
            Ok(())
        } else if self
            .host_regions
            .range(..=dst as usize)
            .next_back()
            .is_some_and(|(a, (len, _))| dst as usize + n as usize <= a + len)
        {
            // SAFETY: inside a host-visible allocation of this runtime.
            unsafe { std::ptr::write_bytes(dst as *mut u8, value as u8, n as usize) };
            Ok(())
        } else {
            Err(invalid(format!(
                "cudaMemset: {dst:#x} ({n} bytes) is not device memory"
            )))
        }
    }

    /// Copy to (`to_symbol`) or from a device variable.
    unsafe fn symbol_copy(
        &mut self,
        symbol: usize,
        host: u64,
        n: u64,
        offset: u64,
        kind: i32,
        to_symbol: bool,
    ) -> RtResult<()> {
        let (m, loc, size) = self.var(symbol)?;
        if offset.checked_add(n).is_none_or(|e| e > size) {
            return Err(invalid(format!(
                "{n} bytes at offset {offset} of a {size}-byte symbol"
            )));
        }
        match loc {
            VarLoc::Global(a) => {
                // Any kind but Default and DeviceToDevice is a copy with the host.
                let k = if kind == cudaMemcpyDefault || kind == cudaMemcpyDeviceToDevice {
                    kind
                } else if to_symbol {
                    cudaMemcpyHostToDevice
                } else {
                    cudaMemcpyDeviceToHost
                };
                let (dst, src) = if to_symbol {
                    (a + offset, host)
                } else {
                    (host, a + offset)
                };
                // SAFETY: forwarded contract.
                unsafe { self.copy(dst, src, n, k) }
            }
            VarLoc::Const { bank, offset: base } => {
                let n = n as usize;
                let at = (base + offset) as usize;
                let from_device = self.is_device(host, n as u64);
                let images = self.modules[m]
                    .images
                    .as_mut()
                    .ok_or_else(|| invalid("module not loaded"))?;
                let img = images
                    .iter_mut()
                    .find(|i| i.banks.contains_key(&bank))
                    .ok_or_else(|| invalid(format!("constant bank {bank} is not loaded")))?;
                let mut bytes = img.banks[&bank].as_ref().clone();
                if bytes.len() < at + n {
                    bytes.resize(at + n, 0);
                }
                if to_symbol {
                    if from_device {
                        let v = self.mem.read(host, n).ok_or_else(|| invalid("source"))?;
                        bytes[at..at + n].copy_from_slice(&v);
                    } else {
                        // SAFETY: the program passes `n` readable bytes.
                        let src = unsafe { std::slice::from_raw_parts(host as *const u8, n) };
                        bytes[at..at + n].copy_from_slice(src);
                    }
                    let images = self.modules[m].images.as_mut().expect("loaded");
                    for img in images.iter_mut().filter(|i| i.banks.contains_key(&bank)) {
                        img.set_bank(bank, Arc::new(bytes.clone()));
                    }
                } else if from_device {
                    self.mem.write(host, &bytes[at..at + n]);
                } else {
                    // SAFETY: the program passes `n` writable bytes.
                    let dst = unsafe { std::slice::from_raw_parts_mut(host as *mut u8, n) };
                    dst.copy_from_slice(&bytes[at..at + n]);
                }
                Ok(())
            }
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn cudaMalloc(ptr: *mut *mut c_void, size: usize) -> cudaError_t {
    call("cudaMalloc", |rt| {
        let a = if size == 0 {
            0
        } else {
            rt.alloc_device(size as u64)?
        };
        // SAFETY: output pointer.
        unsafe { out(ptr, a as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMallocPitch(
    ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> cudaError_t {
    call("cudaMallocPitch", |rt| {
        let p = (width as u64).div_ceil(512) * 512;
        let size = p
            .checked_mul(height as u64)
            .ok_or_else(|| invalid("size overflows"))?;
        let a = if size == 0 { 0 } else { rt.alloc_device(size)? };
        // SAFETY: output pointers.
        unsafe {
            out(pitch, p as usize)?;
            out(ptr, a as *mut c_void)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaFree(ptr: *mut c_void) -> cudaError_t {
    call_always("cudaFree", |rt| {
        if ptr.is_null() {
            return Ok(());
        }
        let a = ptr as u64;
        if rt.device_allocs.remove(&a).is_some() {
            rt.mem.free(a);
            Ok(())
        } else if rt
            .host_regions
            .get(&(a as usize))
            .is_some_and(|(_, k)| *k == HostKind::Managed)
        {
            // SAFETY: a managed allocation of this runtime.
            unsafe { free_host(rt, ptr) }
        } else {
            Err(invalid(format!(
                "cudaFree({a:#x}): not a device or managed allocation"
            )))
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMallocHost(ptr: *mut *mut c_void, size: usize) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { malloc_pinned("cudaMallocHost", ptr, size) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaHostAlloc(ptr: *mut *mut c_void, size: usize, _flags: u32) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { malloc_pinned("cudaHostAlloc", ptr, size) }
}

/// `cudaMallocHost` and `cudaHostAlloc` (any flags): `size` bytes of pinned host memory,
/// their address written to `*ptr`. The API call is reported as `name`.
unsafe fn malloc_pinned(name: &str, ptr: *mut *mut c_void, size: usize) -> cudaError_t {
    call(name, |rt| {
        let p = rt.alloc_host(size, HostKind::Pinned)?;
        // SAFETY: output pointer.
        unsafe { out(ptr, p) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMallocManaged(ptr: *mut *mut c_void, size: usize, _flags: u32) -> cudaError_t {
    call("cudaMallocManaged", |rt| {
        if size == 0 {
            return Err(invalid("cudaMallocManaged of 0 bytes"));
        }
        let p = rt.alloc_host(size, HostKind::Managed)?;
        // SAFETY: output pointer.
        unsafe { out(ptr, p) }
    })
}

unsafe fn free_host(rt: &mut Runtime, ptr: *mut c_void) -> RtResult<()> {
    if ptr.is_null() {
        return Ok(());
    }
    if rt.host_regions.remove(&(ptr as usize)).is_none() {
        return Err(invalid(format!(
            "{:#x} is not host memory of cudaMallocHost/cudaMallocManaged",
            ptr as usize
        )));
    }
    rt.mem.free(ptr as u64);
    // SAFETY: allocated by posix_memalign in alloc_host.
    unsafe { libc::free(ptr) };
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cudaFreeHost(ptr: *mut c_void) -> cudaError_t {
    // SAFETY: forwarded contract.
    call_always("cudaFreeHost", |rt| unsafe { free_host(rt, ptr) })
}

#[no_mangle]
pub unsafe extern "C" fn cudaHostGetDevicePointer(
    dev: *mut *mut c_void,
    host: *mut c_void,
    _flags: u32,
) -> cudaError_t {
    call("cudaHostGetDevicePointer", |rt| {
        let a = host as usize;
        let ok = rt
            .host_regions
            .range(..=a)
            .next_back()
            .is_some_and(|(s, (len, _))| a < s + len);
        if !ok {
            return Err(invalid(format!(
                "{a:#x} is not host memory mapped for the device"
            )));
        }
        // SAFETY: output pointer.
        unsafe { out(dev, host) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: i32,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    call("cudaMemcpy", |rt| unsafe {
        rt.copy(dst as u64, src as u64, n as u64, kind)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: i32,
    _s: *mut c_void,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    call("cudaMemcpyAsync", |rt| unsafe {
        rt.copy(dst as u64, src as u64, n as u64, kind)
    })
}

/// The address of row `row` of a pitched 2-D region at `base`; an error if it overflows.
fn row_address(base: u64, row: u64, pitch: usize) -> Result<u64, RtError> {
    row.checked_mul(pitch as u64)
        .and_then(|o| base.checked_add(o))
        .ok_or_else(|| invalid("address overflow"))
}

/// `cudaMemcpy2D` and `cudaMemcpy2DAsync` (`name`): `height` rows of `width` bytes, rows
/// `dpitch` and `spitch` bytes apart.
#[allow(clippy::too_many_arguments)]
unsafe fn memcpy_2d(
    name: &str,
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
) -> cudaError_t {
    call(name, |rt| {
        if width > dpitch || width > spitch {
            return Err(RtError::new(
                cudaErrorInvalidPitchValue,
                format!("width {width} exceeds a pitch ({dpitch}, {spitch})"),
            ));
        }
        // Nothing to copy: no row is visited (a huge height must not loop over empty rows).
        if width == 0 {
            return Ok(());
        }
        for row in 0..height as u64 {
            let d = row_address(dst as u64, row, dpitch)?;
            let s = row_address(src as u64, row, spitch)?;
            // SAFETY: forwarded contract, row by row.
            unsafe { rt.copy(d, s, width as u64, kind)? };
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { memcpy_2d("cudaMemcpy2D", dst, dpitch, src, spitch, width, height, kind) }
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cudaMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
    _s: *mut c_void,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { memcpy_2d("cudaMemcpy2DAsync", dst, dpitch, src, spitch, width, height, kind) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemset(dst: *mut c_void, value: i32, n: usize) -> cudaError_t {
    // SAFETY: forwarded contract.
    call("cudaMemset", |rt| unsafe { rt.set(dst as u64, value, n as u64) })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemsetAsync(
    dst: *mut c_void,
    value: i32,
    n: usize,
    _s: *mut c_void,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    call("cudaMemsetAsync", |rt| unsafe {
        rt.set(dst as u64, value, n as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemset2D(
    dst: *mut c_void,
    pitch: usize,
    value: i32,
    width: usize,
    height: usize,
) -> cudaError_t {
    call("cudaMemset2D", |rt| {
        if width > pitch {
            return Err(RtError::new(
                cudaErrorInvalidPitchValue,
                "width exceeds the pitch",
            ));
        }
        if width == 0 {
            return Ok(());
        }
        for row in 0..height as u64 {
            let d = row_address(dst as u64, row, pitch)?;
            // SAFETY: forwarded contract, row by row.
            unsafe { rt.set(d, value, width as u64)? };
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    n: usize,
    offset: usize,
    kind: i32,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    call("cudaMemcpyToSymbol", |rt| unsafe {
        rt.symbol_copy(symbol as usize, src as u64, n as u64, offset as u64, kind, true)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    n: usize,
    offset: usize,
    kind: i32,
    _s: *mut c_void,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    call("cudaMemcpyToSymbolAsync", |rt| unsafe {
        rt.symbol_copy(symbol as usize, src as u64, n as u64, offset as u64, kind, true)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    n: usize,
    offset: usize,
    kind: i32,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    call("cudaMemcpyFromSymbol", |rt| unsafe {
        rt.symbol_copy(symbol as usize, dst as u64, n as u64, offset as u64, kind, false)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromSymbolAsync(
    dst: *mut c_void,
    symbol: *const c_void,
    n: usize,
    offset: usize,
    kind: i32,
    _s: *mut c_void,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    call("cudaMemcpyFromSymbolAsync", |rt| unsafe {
        rt.symbol_copy(symbol as usize, dst as u64, n as u64, offset as u64, kind, false)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolAddress(dev: *mut *mut c_void, symbol: *const c_void) -> cudaError_t {
    call("cudaGetSymbolAddress", |rt| {
        let (_, loc, _) = rt.var(symbol as usize)?;
        match loc {
            // SAFETY: output pointer.
            VarLoc::Global(a) => unsafe { out(dev, a as *mut c_void) },
            VarLoc::Const { .. } => Err(RtError::fatal(
                cudaErrorNotSupported,
                "cudaGetSymbolAddress of a __constant__ variable: sassim has no generic address for constant memory",
            )),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolSize(size: *mut usize, symbol: *const c_void) -> cudaError_t {
    call("cudaGetSymbolSize", |rt| {
        let (_, _, n) = rt.var(symbol as usize)?;
        // SAFETY: output pointer.
        unsafe { out(size, n as usize) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemGetInfo(free: *mut usize, total: *mut usize) -> cudaError_t {
    call("cudaMemGetInfo", |rt| {
        let t = rt.memory_bytes();
        let f = t.saturating_sub(rt.mem.allocated_bytes());
        // SAFETY: output pointers.
        unsafe {
            out(free, f as usize)?;
            out(total, t as usize)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaPointerGetAttributes(
    attr: *mut cudaPointerAttributes,
    ptr: *const c_void,
) -> cudaError_t {
    call_always("cudaPointerGetAttributes", |rt| {
        let a = ptr as usize;
        let host = rt
            .host_regions
            .range(..=a)
            .next_back()
            .filter(|(s, (len, _))| a < *s + len)
            .map(|(_, (_, k))| *k);
        let (ty, dev, hostp) = if rt.is_device(a as u64, 1) {
            (cudaMemoryTypeDevice, ptr as *mut c_void, std::ptr::null_mut())
        } else if let Some(k) = host {
            let t = if k == HostKind::Managed {
                cudaMemoryTypeManaged
            } else {
                cudaMemoryTypeHost
            };
            (t, ptr as *mut c_void, ptr as *mut c_void)
        } else {
            (
                cudaMemoryTypeUnregistered,
                std::ptr::null_mut(),
                ptr as *mut c_void,
            )
        };
        // SAFETY: output pointer.
        unsafe {
            out(
                attr,
                cudaPointerAttributes {
                    type_: ty,
                    device: 0,
                    devicePointer: dev,
                    hostPointer: hostp,
                    reserved: [0; 8],
                },
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::abi::cudaErrorMemoryAllocation;

    /// `gpu.memory_mb` is the device memory programs may allocate (cudaMalloc and
    /// cudaGetDeviceProperties' totalGlobalMem): the preset key's effect
    /// (crates/gpu/tests/preset_keys.rs names this test for it).
    #[test]
    fn device_memory_is_the_presets_memory_mb() {
        let mut rt = crate::runtime::Runtime::new();
        assert!(rt.alloc_device(2 << 20).is_ok(), "the default preset has GBs");
        rt.gpu_cfg.gpu.memory_mb = 3;
        let e = rt.alloc_device(2 << 20).expect_err("3 MB with 2 MB in use");
        assert_eq!(e.code, cudaErrorMemoryAllocation);
        assert!(e.message.contains("3145728 bytes"), "{}", e.message);
        assert!(rt.alloc_device(1 << 20).is_ok(), "1 MB of 3 MB is still free");
    }

    /// A pitched region's rows are addressed with checked arithmetic (a huge pitch is an
    /// error, not an overflow), and a zero width copies or sets nothing however many rows
    /// it names (no loop over 2^64 empty rows).
    #[test]
    fn pitched_rows_neither_overflow_nor_loop() {
        assert_eq!(super::row_address(0x1000, 3, 0x100).ok(), Some(0x1300));
        assert!(super::row_address(0x1000, 2, usize::MAX).is_err());
        assert!(super::row_address(u64::MAX, 1, 1).is_err());
        let t = std::time::Instant::now();
        let p = 0x1000 as *mut std::ffi::c_void;
        // SAFETY: nothing is read or written with a zero width.
        let (set, copy) = unsafe {
            (
                super::cudaMemset2D(p, usize::MAX, 0, 0, usize::MAX),
                super::cudaMemcpy2D(p, usize::MAX, p, usize::MAX, 0, usize::MAX, 3),
            )
        };
        assert_eq!((set, copy), (crate::abi::cudaSuccess, crate::abi::cudaSuccess));
        assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
    }
}
