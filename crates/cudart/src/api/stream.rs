//! Streams and events. Work runs in the order the program submits it, on one simulated
//! engine: a stream's work starts when the device is free, and an event records the
//! device's simulated time when the work submitted before it has finished.

use super::*;
use std::ffi::c_void;

/// `cudaStreamLegacy` and `cudaStreamPerThread` (`driver_types.h`).
const LEGACY: usize = 1;
const PER_THREAD: usize = 2;

fn check_stream(rt: &Runtime, s: *mut c_void) -> RtResult<()> {
    let s = s as usize;
    if s == 0 || s == LEGACY || s == PER_THREAD || rt.streams.contains_key(&s) {
        Ok(())
    } else {
        Err(RtError::new(
            cudaErrorInvalidResourceHandle,
            format!("{s:#x} is not a stream"),
        ))
    }
}

unsafe fn create_stream(rt: &mut Runtime, s: *mut *mut c_void) -> RtResult<()> {
    let h = rt.handle();
    // SAFETY: output pointer.
    unsafe { out(s, h as *mut c_void)? };
    rt.streams.insert(h, rt.now);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreate(s: *mut *mut c_void) -> cudaError_t {
    // SAFETY: forwarded.
    call("cudaStreamCreate", |rt| unsafe { create_stream(rt, s) })
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreateWithFlags(s: *mut *mut c_void, _flags: u32) -> cudaError_t {
    // SAFETY: forwarded.
    call("cudaStreamCreateWithFlags", |rt| unsafe { create_stream(rt, s) })
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreateWithPriority(
    s: *mut *mut c_void,
    _flags: u32,
    _prio: i32,
) -> cudaError_t {
    // SAFETY: forwarded.
    call("cudaStreamCreateWithPriority", |rt| unsafe {
        create_stream(rt, s)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamDestroy(s: *mut c_void) -> cudaError_t {
    call_always("cudaStreamDestroy", |rt| {
        if rt.streams.remove(&(s as usize)).is_none() {
            return Err(RtError::new(cudaErrorInvalidResourceHandle, "not a stream"));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamSynchronize(s: *mut c_void) -> cudaError_t {
    call("cudaStreamSynchronize", |rt| check_stream(rt, s))
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamQuery(s: *mut c_void) -> cudaError_t {
    call("cudaStreamQuery", |rt| check_stream(rt, s))
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamWaitEvent(s: *mut c_void, e: *mut c_void, _flags: u32) -> cudaError_t {
    call("cudaStreamWaitEvent", |rt| {
        check_stream(rt, s)?;
        if !rt.events.contains_key(&(e as usize)) {
            return Err(RtError::new(cudaErrorInvalidResourceHandle, "not an event"));
        }
        Ok(())
    })
}

unsafe fn create_event(rt: &mut Runtime, e: *mut *mut c_void) -> RtResult<()> {
    let h = rt.handle();
    // SAFETY: output pointer.
    unsafe { out(e, h as *mut c_void)? };
    rt.events.insert(h, None);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventCreate(e: *mut *mut c_void) -> cudaError_t {
    // SAFETY: forwarded.
    call("cudaEventCreate", |rt| unsafe { create_event(rt, e) })
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventCreateWithFlags(e: *mut *mut c_void, _flags: u32) -> cudaError_t {
    // SAFETY: forwarded.
    call("cudaEventCreateWithFlags", |rt| unsafe { create_event(rt, e) })
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventDestroy(e: *mut c_void) -> cudaError_t {
    call_always("cudaEventDestroy", |rt| {
        rt.events
            .remove(&(e as usize))
            .map(|_| ())
            .ok_or_else(|| RtError::new(cudaErrorInvalidResourceHandle, "not an event"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventRecord(e: *mut c_void, s: *mut c_void) -> cudaError_t {
    call("cudaEventRecord", |rt| {
        check_stream(rt, s)?;
        let now = rt.now;
        match rt.events.get_mut(&(e as usize)) {
            Some(t) => {
                *t = Some(now);
                Ok(())
            }
            None => Err(RtError::new(cudaErrorInvalidResourceHandle, "not an event")),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventRecordWithFlags(
    e: *mut c_void,
    s: *mut c_void,
    _flags: u32,
) -> cudaError_t {
    // SAFETY: forwarded.
    unsafe { cudaEventRecord(e, s) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventSynchronize(e: *mut c_void) -> cudaError_t {
    call("cudaEventSynchronize", |rt| {
        rt.events
            .get(&(e as usize))
            .map(|_| ())
            .ok_or_else(|| RtError::new(cudaErrorInvalidResourceHandle, "not an event"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventQuery(e: *mut c_void) -> cudaError_t {
    // SAFETY: forwarded.
    unsafe { cudaEventSynchronize(e) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventElapsedTime(
    ms: *mut f32,
    start: *mut c_void,
    end: *mut c_void,
) -> cudaError_t {
    call("cudaEventElapsedTime", |rt| {
        let t = |h: *mut c_void| -> RtResult<u64> {
            match rt.events.get(&(h as usize)) {
                Some(Some(t)) => Ok(*t),
                Some(None) => Err(RtError::new(cudaErrorInvalidResourceHandle, "event not recorded")),
                None => Err(RtError::new(cudaErrorInvalidResourceHandle, "not an event")),
            }
        };
        let (a, b) = (t(start)?, t(end)?);
        let v = rt.cycles_to_ms(b.saturating_sub(a)) as f32;
        // SAFETY: output pointer.
        unsafe {
            out(
                ms,
                if b >= a {
                    v
                } else {
                    -(rt.cycles_to_ms(a - b) as f32)
                },
            )
        }
    })
}
