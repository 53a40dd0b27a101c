//! Calls into the driver's device-side runtime: `vprintf` (device `printf`),
//! `__assertfail` (device `assert`), `malloc` and `free`.
//!
//! ptxas compiles a call to one of these external functions as `CALL.ABS.NOINC Rn` to an
//! address the driver patches into constant bank 4 (`.nv.constant4`, relocation
//! `R_CUDA_64`). A loader resolves those externals to the addresses of [`Syscall::address`];
//! when a warp calls one of them, the engine performs the call on the host and continues
//! at the next instruction (the return address the caller computed into R20/R21 is that
//! instruction). Arguments follow the ABI ptxas uses: R4:R5, R6:R7, R8, R10:R11, R12; the
//! result is returned in R4 (R4:R5 for pointers).

use super::*;
use crate::memory::Generic;

/// Base of the (unmapped) addresses standing for the external functions.
pub const SYSCALL_BASE: u64 = 0x7c00_0000_0000;

/// The external functions sassim provides to device code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syscall {
    Vprintf,
    AssertFail,
    Malloc,
    Free,
}

impl Syscall {
    pub const ALL: [Syscall; 4] = [
        Syscall::Vprintf,
        Syscall::AssertFail,
        Syscall::Malloc,
        Syscall::Free,
    ];

    /// The symbol name in the cubin.
    pub fn name(self) -> &'static str {
        match self {
            Syscall::Vprintf => "vprintf",
            Syscall::AssertFail => "__assertfail",
            Syscall::Malloc => "malloc",
            Syscall::Free => "free",
        }
    }

    pub fn by_name(name: &str) -> Option<Syscall> {
        Syscall::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The address a loader puts in place of the function.
    pub fn address(self) -> u64 {
        SYSCALL_BASE + 0x100 * (self as u64 + 1)
    }

    pub fn at(addr: u64) -> Option<Syscall> {
        Syscall::ALL.into_iter().find(|s| s.address() == addr)
    }
}

/// Longest format or `%s` string read from device memory.
const MAX_STRING: usize = 4096;

impl Ex<'_> {
    fn reg64(&self, r: u8, lane: usize) -> u64 {
        self.reg(r, lane) as u64 | (self.reg(r + 1, lane) as u64) << 32
    }

    /// Read `len` bytes at a generic address.
    fn read_generic(&self, lane: usize, addr: u64, out: &mut [u8]) -> bool {
        match crate::memory::resolve_generic(addr) {
            Generic::Global(a) => self.read_global(a, out),
            Generic::Shared(a) => self.k.ctas[self.cta].shared.read_into(a, out),
            Generic::Local(a) => {
                let lb = self.k.opts.local_bytes as u64;
                let n = out.len() as u64;
                if a.checked_add(n).is_none_or(|e| e > lb) {
                    return false;
                }
                let w = &self.k.warps[self.wi];
                if w.local.is_empty() {
                    out.fill(0);
                } else {
                    let base = (lane as u64 * lb + a) as usize;
                    out.copy_from_slice(&w.local[base..base + n as usize]);
                }
                true
            }
        }
    }

    /// A NUL-terminated string at a generic address (at most [`MAX_STRING`] bytes).
    fn read_cstr(&self, lane: usize, addr: u64) -> Res<Vec<u8>> {
        let mut out = Vec::new();
        let mut b = [0u8; 1];
        for i in 0..MAX_STRING as u64 {
            if !self.read_generic(lane, addr.wrapping_add(i), &mut b) {
                return Err(self.fault(lane, addr + i, 1, MemSpace::Generic, false));
            }
            if b[0] == 0 {
                return Ok(out);
            }
            out.push(b[0]);
        }
        Err(self.unsup(&format!("string at {addr:#x} longer than {MAX_STRING} bytes")))
    }

    /// Perform the external call at `addr` for the active lanes, if it is one.
    pub(super) fn syscall(&mut self, addr: u64) -> Res<bool> {
        let Some(call) = Syscall::at(addr) else {
            return Ok(false);
        };
        for l in lanes(self.g) {
            match call {
                Syscall::Vprintf => {
                    let fmt = self.read_cstr(l, self.reg64(4, l))?;
                    let args = self.reg64(6, l);
                    let (text, nargs) = self.format(l, &fmt, args)?;
                    self.k.printf_out.extend_from_slice(&text);
                    self.out.writes.r(4, l, nargs);
                }
                Syscall::AssertFail => {
                    let msg = self.read_cstr(l, self.reg64(4, l))?;
                    let file = self.read_cstr(l, self.reg64(6, l))?;
                    let line = self.reg(8, l);
                    let func = self.read_cstr(l, self.reg64(10, l))?;
                    let c = &self.k.ctas[self.cta];
                    let t = self.k.warps[self.wi].tid[l];
                    let text = format!(
                        "{}:{}: {}: block: [{},{},{}], thread: [{},{},{}] Assertion `{}` failed.",
                        String::from_utf8_lossy(&file),
                        line,
                        String::from_utf8_lossy(&func),
                        c.ctaid[0],
                        c.ctaid[1],
                        c.ctaid[2],
                        t[0],
                        t[1],
                        t[2],
                        String::from_utf8_lossy(&msg)
                    );
                    self.k.assertion = Some(text.clone());
                    return Err(ExecError::Assert(text));
                }
                Syscall::Malloc => {
                    let size = self.reg64(4, l);
                    let p = if size == 0 || size > self.k.opts.device_heap_bytes {
                        0
                    } else {
                        self.k.global.alloc(size, 16)
                    };
                    self.out.writes.r(4, l, p as u32);
                    self.out.writes.r(5, l, (p >> 32) as u32);
                }
                Syscall::Free => {
                    let p = self.reg64(4, l);
                    if p != 0 {
                        self.k.global.free(p);
                    }
                }
            }
        }
        Ok(true)
    }

    /// C `printf` formatting of `fmt` with the argument buffer at `args` (CUDA's layout:
    /// every argument aligned to its size; integers narrower than `int` and `float`s are
    /// promoted to 4- and 8-byte values). Returns the text and the number of arguments.
    fn format(&self, lane: usize, fmt: &[u8], args: u64) -> Res<(Vec<u8>, u32)> {
        let mut out = Vec::new();
        let mut off = 0u64;
        let mut nargs = 0u32;
        let mut i = 0;
        let mut next_arg = |s: &Self, size: u64| -> Res<u64> {
            off = off.div_ceil(size) * size;
            let mut b = [0u8; 8];
            if !s.read_generic(lane, args.wrapping_add(off), &mut b[..size as usize]) {
                return Err(s.fault(
                    lane,
                    args.wrapping_add(off),
                    size as u32,
                    MemSpace::Generic,
                    false,
                ));
            }
            off += size;
            nargs += 1;
            Ok(u64::from_le_bytes(b))
        };
        while i < fmt.len() {
            if fmt[i] != b'%' {
                out.push(fmt[i]);
                i += 1;
                continue;
            }
            // A conversion: %[flags][width][.precision][length]conv
            let start = i;
            i += 1;
            while i < fmt.len() && b"-+ #0".contains(&fmt[i]) {
                i += 1;
            }
            while i < fmt.len() && (fmt[i].is_ascii_digit() || fmt[i] == b'.') {
                i += 1;
            }
            let lstart = i;
            while i < fmt.len() && b"hlLqjzt".contains(&fmt[i]) {
                i += 1;
            }
            let long = fmt[lstart..i]
                .iter()
                .filter(|c| matches!(c, b'l' | b'q' | b'j' | b'z' | b't'))
                .count()
                > 0
                || fmt[lstart..i].contains(&b'L');
            let Some(&conv) = fmt.get(i) else {
                out.extend_from_slice(&fmt[start..]);
                break;
            };
            i += 1;
            let spec = &fmt[start..i];
            match conv {
                b'%' => out.push(b'%'),
                b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b'c' => {
                    let v = next_arg(self, if long { 8 } else { 4 })?;
                    // Format with the 64-bit length modifier so one C call covers all widths.
                    let v = if long {
                        v
                    } else if matches!(conv, b'd' | b'i') {
                        v as u32 as i32 as i64 as u64
                    } else {
                        v as u32 as u64
                    };
                    let mut s = spec[..lstart - start].to_vec();
                    if conv != b'c' {
                        s.extend_from_slice(b"ll");
                    }
                    s.push(conv);
                    out.extend_from_slice(&c_format(&s, CArg::Int(v)));
                }
                b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                    let v = next_arg(self, 8)?;
                    let mut s = spec[..lstart - start].to_vec();
                    s.push(conv);
                    out.extend_from_slice(&c_format(&s, CArg::Double(f64::from_bits(v))));
                }
                b'p' => {
                    let v = next_arg(self, 8)?;
                    out.extend_from_slice(&c_format(spec, CArg::Int(v)));
                }
                b's' => {
                    let p = next_arg(self, 8)?;
                    let text = if p == 0 {
                        b"(null)".to_vec()
                    } else {
                        self.read_cstr(lane, p)?
                    };
                    let mut s = spec[..lstart - start].to_vec();
                    s.push(b's');
                    out.extend_from_slice(&c_format(&s, CArg::Str(text)));
                }
                _ => out.extend_from_slice(spec),
            }
        }
        Ok((out, nargs))
    }
}

enum CArg {
    Int(u64),
    Double(f64),
    Str(Vec<u8>),
}

/// One C conversion through the C library's `snprintf` (exact C semantics for widths,
/// precisions and floating-point forms).
fn c_format(spec: &[u8], arg: CArg) -> Vec<u8> {
    let mut spec_c = spec.to_vec();
    spec_c.push(0);
    let mut buf = vec![0u8; 512];
    loop {
        // SAFETY: `spec_c` is a NUL-terminated format with exactly one conversion whose
        // type matches the argument passed (integers with `ll`, doubles, a NUL-terminated
        // string); `buf` is writable for `buf.len()` bytes.
        let n = unsafe {
            match &arg {
                CArg::Int(v) => {
                    libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), spec_c.as_ptr().cast(), *v)
                }
                CArg::Double(v) => {
                    libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), spec_c.as_ptr().cast(), *v)
                }
                CArg::Str(s) => {
                    let mut z = s.clone();
                    z.retain(|c| *c != 0);
                    z.push(0);
                    libc::snprintf(
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                        spec_c.as_ptr().cast(),
                        z.as_ptr(),
                    )
                }
            }
        };
        if n < 0 {
            return spec.to_vec();
        }
        let n = n as usize;
        if n < buf.len() {
            buf.truncate(n);
            return buf;
        }
        if n > 1 << 20 {
            return spec.to_vec();
        }
        buf.resize(n + 1, 0);
    }
}
