//! Kernels of a kernels list opened before their turn, by the GPU's idle threads
//! ([`OpenAhead`]).

use super::{open_now, TraceKernel};
use crate::{Gpu, RunOptions, SimError};
use sassim_config::GpuConfig;
use sassim_isa::Listing;
use sassim_timing::CoreConfig;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};

/// Trace bytes of the kernels opened ahead of their runs at a time ([`OpenAhead`]; plain
/// text only).
pub(crate) const OPEN_AHEAD_BYTES: u64 = 32 << 20;
/// Most kernels opened ahead of their runs at a time.
pub(crate) const OPEN_AHEAD_KERNELS: usize = 64;
/// A trace larger than this opens alone, its blocks parsed on every thread.
pub(crate) const OPEN_ALONE_BYTES: u64 = 4 << 20;

/// Kernels of a kernels list opened before their turn, as errands of the GPU's idle threads
/// while the kernels before them run ([`crate::threads::Threads::errand`]).
///
/// A small kernel's trace gains little from parsing its blocks on several threads: a kernel
/// of a few thread blocks reads, accepts and scans them serially (the BFS trace's 16 kernels
/// took 17.7 ms on one thread and 14.3 ms on two, its parse batches 9.7 and 5.9 ms). And
/// while a kernel of a few busy SMs runs, the other threads are often idle. So when the GPU
/// has more than one thread, the small kernels after the one asked for, up to
/// [`OPEN_AHEAD_KERNELS`] and [`OPEN_AHEAD_BYTES`] of trace, are given to the workers as
/// errands, one a kernel, in the list's order. Each is also decoded for the GPU's
/// configuration (control bits inferred if asked, static code prepared:
/// [`TraceKernel::decode_ahead`], used at the kernel's turn if the configuration is
/// unchanged). A worker on an errand takes its part of the steps posted meanwhile at the
/// parser's interleave points (`sassim_trace::interleave`); the calling thread runs the parts
/// it has not begun. (Opening the largest first was slower on the BFS trace: the next small
/// kernels then opened on their turns, on the calling thread.) A kernel whose turn comes
/// before a worker has begun it opens then on every thread, as one not opened ahead; one
/// that a worker is opening is waited for. A kernel over [`OPEN_ALONE_BYTES`], or a
/// compressed or binary one, opens alone on its turn. Each kernel, and any error, is that
/// of opening it alone; an error (or a panic) comes at its kernel's turn, after the kernels
/// before it have run, as if it had been opened then. Which thread opens a kernel, and
/// when, changes no result.
#[derive(Default)]
pub(super) struct OpenAhead {
    /// The kernels being opened ahead, or `None`.
    ahead: Option<Ahead>,
    /// The listings, shared with the errands (made for the first group).
    listings: Option<Arc<[Listing]>>,
}

/// A group of kernels opened ahead: its opener's kernels from the `first`-th of the list.
struct Ahead {
    first: usize,
    opener: Arc<Opener>,
}

/// What [`OpenAhead`] and its errands share: one slot per kernel of a group.
struct Opener {
    paths: Vec<PathBuf>,
    /// The GPU's configuration and whether control bits are inferred: each kernel is also
    /// decoded for them ([`TraceKernel::decode_ahead`]).
    cfgs: Arc<(GpuConfig, CoreConfig)>,
    infer: bool,
    slots: Mutex<OpenerSlots>,
    /// Signalled when a kernel is opened.
    opened: Condvar,
}

struct OpenerSlots {
    kernels: Vec<Slot>,
    /// The run no longer needs the kernels (it ended or stopped).
    stop: bool,
}

/// One kernel of an [`Opener`]'s group.
enum Slot {
    /// Nobody has begun opening it.
    Waiting,
    /// Being opened (by an errand, or on its turn).
    Opening,
    /// (Boxed: a kernel's record is ~1 KB.)
    Opened(Box<Result<TraceKernel, SimError>>),
    /// Opening it panicked (a bug): the panic goes on at its turn, as if opened then.
    Panicked(Box<dyn std::any::Any + Send>),
    /// Taken for its run.
    Taken,
}

impl Opener {
    /// An errand: open the next kernel nobody has begun (in the list's order).
    fn errand(&self, listings: &[Listing]) {
        let Some(i) = self.claim() else {
            return;
        };
        let Some(p) = self.paths.get(i) else {
            return;
        };
        let one_thread = crate::threads::Threads::new(1);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut tk = TraceKernel::open_on(p, listings, &one_thread)?;
            tk.decode_ahead(Arc::clone(&self.cfgs), self.infer);
            Ok(tk)
        }));
        if let Ok(mut g) = self.slots.lock() {
            if let Some(s) = g.kernels.get_mut(i) {
                *s = match r {
                    Ok(r) => Slot::Opened(Box::new(r)),
                    Err(panic) => Slot::Panicked(panic),
                };
            }
        }
        self.opened.notify_all();
    }

    /// Claim the next kernel to open ahead.
    fn claim(&self) -> Option<usize> {
        let mut g = self.slots.lock().ok()?;
        if g.stop {
            return None;
        }
        let k = g.kernels.iter().position(|s| matches!(s, Slot::Waiting))?;
        g.kernels[k] = Slot::Opening;
        Some(k)
    }

    /// Kernel `k` of the group: opened, or `None` if nobody had begun it (the caller
    /// opens it), after waiting for it if it is being opened.
    fn take(&self, k: usize) -> Result<Option<TraceKernel>, SimError> {
        let lost = || SimError::Exec("a kernel opened ahead was lost (a thread panicked)".into());
        let mut g = self.slots.lock().map_err(|_| lost())?;
        loop {
            match g.kernels.get_mut(k) {
                Some(s @ Slot::Waiting) => {
                    *s = Slot::Taken;
                    return Ok(None);
                }
                Some(Slot::Opening) => g = self.opened.wait(g).map_err(|_| lost())?,
                Some(s @ (Slot::Opened(_) | Slot::Panicked(_))) => {
                    return match std::mem::replace(s, Slot::Taken) {
                        Slot::Opened(r) => (*r).map(Some),
                        Slot::Panicked(panic) => {
                            drop(g);
                            std::panic::resume_unwind(panic)
                        }
                        _ => Err(lost()),
                    };
                }
                Some(Slot::Taken) | None => return Err(lost()),
            }
        }
    }

    /// The errands not begun do nothing.
    fn stop(&self) {
        if let Ok(mut g) = self.slots.lock() {
            g.stop = true;
        }
    }
}

impl Drop for OpenAhead {
    fn drop(&mut self) {
        if let Some(a) = &self.ahead {
            a.opener.stop();
        }
    }
}

impl OpenAhead {
    /// Kernel `k` of `paths`, opened. Called for `k` = 0, 1, 2, … in turn.
    pub(super) fn take(
        &mut self,
        gpu: &mut Gpu,
        paths: &[PathBuf],
        k: usize,
        listings: &[Listing],
        opts: &RunOptions,
    ) -> Result<TraceKernel, SimError> {
        if let Some(a) = &self.ahead {
            let len = a.opener.paths.len();
            if let (Some(i), Some(p)) = (k.checked_sub(a.first).filter(|&i| i < len), paths.get(k)) {
                return match a.opener.take(i)? {
                    Some(tk) => Ok(tk),
                    None => open_now(gpu, p, listings, opts),
                };
            }
            a.opener.stop();
            self.ahead = None;
        }
        let rest = paths.get(k..).unwrap_or_default();
        let Some(path) = rest.first() else {
            return Err(SimError::Exec(format!(
                "kernel {} of the list was not opened",
                k + 1
            )));
        };
        let first = open_now(gpu, path, listings, opts);
        // (A kernel that fails ends the run: nothing is opened ahead.)
        let group = if first.is_ok() {
            ahead_group(rest, opts.threads.max(1))
        } else {
            1
        };
        let next = rest.get(1..group.min(rest.len())).unwrap_or_default();
        if let (false, Some(threads)) = (next.is_empty(), gpu.threads.as_ref()) {
            let opener = Arc::new(Opener {
                paths: next.to_vec(),
                cfgs: Arc::new((gpu.cfg.clone(), gpu.core.clone())),
                infer: opts.infer_control_bits,
                slots: Mutex::new(OpenerSlots {
                    kernels: next.iter().map(|_| Slot::Waiting).collect(),
                    stop: false,
                }),
                opened: Condvar::new(),
            });
            let shared = self.listings.get_or_insert_with(|| listings.into());
            for _ in next {
                let (o, l) = (Arc::clone(&opener), Arc::clone(shared));
                // Without workers the kernels open on their turns.
                if threads.errand(Box::new(move || o.errand(&l))).is_err() {
                    break;
                }
            }
            self.ahead = Some(Ahead { first: k + 1, opener });
        }
        first
    }
}

/// How many of the kernels `paths` (the one asked for first) form a group on `threads`
/// threads, the ones after the first being opened ahead ([`OpenAhead`]): 1 for a large one,
/// or for a file that cannot be examined (it opens, and fails, alone on its turn), or on one
/// thread; otherwise the small ones that follow, within the bounds.
fn ahead_group(paths: &[PathBuf], threads: usize) -> usize {
    if threads <= 1 {
        return 1;
    }
    let mut bytes = 0u64;
    let mut n = 0;
    for p in paths.iter().take(OPEN_AHEAD_KERNELS) {
        // Plain text only: its records take at most a few times its size, whereas a
        // compressed file's text (and so its records) may be any multiple of its size.
        let (Ok(meta), Ok(sassim_trace::Container::Plain)) = (std::fs::metadata(p), sassim_trace::detect(p))
        else {
            break;
        };
        let size = meta.len();
        bytes = bytes.saturating_add(size);
        if size > OPEN_ALONE_BYTES || bytes > OPEN_AHEAD_BYTES {
            break;
        }
        n += 1;
    }
    n.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic while a kernel was opened ahead (a bug) goes on at the kernel's turn, as if
    /// it had been opened then, rather than becoming an error that opening it at its turn
    /// would not give; the slot is then taken.
    #[test]
    fn a_panic_opening_ahead_goes_on_at_the_kernel_s_turn() {
        let gpu = Gpu::new(GpuConfig::preset("rtx-a6000").expect("preset"));
        let opener = Opener {
            paths: vec![PathBuf::from("k.traceg")],
            cfgs: Arc::new((gpu.cfg.clone(), gpu.core.clone())),
            infer: false,
            slots: Mutex::new(OpenerSlots {
                kernels: vec![Slot::Panicked(Box::new("the parser's bug"))],
                stop: false,
            }),
            opened: Condvar::new(),
        };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| opener.take(0)));
        let panic = r.err().expect("the panic goes on");
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"the parser's bug"));
        assert!(opener.take(0).is_err(), "taken once");
    }

    /// A kernel decoded ahead ([`TraceKernel::decode_ahead`]) for the configuration its turn
    /// runs on gives what decoding it at its turn gives; decoded ahead for another one (or
    /// without the inference asked at the turn), it is decoded again from its original
    /// instructions.
    #[test]
    fn a_kernel_decoded_ahead_for_another_configuration_is_decoded_again() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/traces/bfs-sm80-v3/kernel-1.traceg");
        let gpu = |name: &str| Gpu::new(GpuConfig::preset(name).expect("preset"));
        let (a6000, t4) = (gpu("rtx-a6000"), gpu("t4"));
        let cfgs = |g: &Gpu| Arc::new((g.cfg.clone(), g.core.clone()));
        let open = || TraceKernel::open(&path, &[]).expect("kernel 1");
        // What the turn decodes, and the kernel's instructions after it.
        let seen = |tk: &mut TraceKernel, g: &Gpu, infer: bool| {
            let d = tk.decode(g, infer);
            format!("{d:?} {:?} {}", tk.kernel(), tk.has_control_bits())
        };
        let want = seen(&mut open(), &a6000, true);
        assert_ne!(seen(&mut open(), &t4, true), want, "the T4's decoding differs");
        let mut tk = open();
        tk.decode_ahead(cfgs(&a6000), true);
        assert_eq!(seen(&mut tk, &a6000, true), want);
        let mut tk = open();
        tk.decode_ahead(cfgs(&t4), true);
        assert_eq!(seen(&mut tk, &a6000, true), want);
        let mut tk = open();
        tk.decode_ahead(cfgs(&a6000), false);
        assert_eq!(seen(&mut tk, &a6000, true), want);
        let mut tk = open();
        tk.decode_ahead(cfgs(&a6000), true);
        assert_eq!(seen(&mut tk, &a6000, false), seen(&mut open(), &a6000, false));
    }

    /// Small plain-text kernels open together, up to the bounds; a large one, a compressed
    /// one or one that cannot be read ends the group (and opens alone).
    #[test]
    fn groups_are_small_plain_text_kernels_within_the_bounds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).expect("write");
            p
        };
        let small: Vec<PathBuf> = (0..70)
            .map(|k| file(&format!("k{k}.traceg"), b"-kernel name = k\n"))
            .collect();
        assert_eq!(ahead_group(&small, 2), OPEN_AHEAD_KERNELS);
        assert_eq!(ahead_group(&small[..3], 4), 3);
        assert_eq!(ahead_group(&small, 1), 1, "one thread opens one at a time");
        let big = file("big.traceg", &vec![b'#'; OPEN_ALONE_BYTES as usize + 1]);
        assert_eq!(ahead_group(&[big.clone(), small[0].clone()], 2), 1);
        assert_eq!(ahead_group(&[small[0].clone(), big, small[1].clone()], 2), 1);
        // gzip's magic bytes, whatever the name.
        let gz = file("gz.traceg", &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
        assert_eq!(
            ahead_group(&[small[0].clone(), small[1].clone(), gz.clone()], 2),
            2
        );
        assert_eq!(ahead_group(&[gz, small[0].clone()], 2), 1);
        let missing = dir.path().join("missing.traceg");
        assert_eq!(ahead_group(&[small[0].clone(), missing], 2), 1);
        // The bytes bound: kernels of 3 MB each, 32 MB in all.
        let three: Vec<PathBuf> = (0..12)
            .map(|k| file(&format!("m{k}.traceg"), &vec![b'#'; 3 << 20]))
            .collect();
        assert_eq!(ahead_group(&three, 16), 10);
    }
}
