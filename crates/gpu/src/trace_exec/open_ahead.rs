//! Kernels of a kernels list opened before their turn, several at once ([`OpenAhead`]).

use super::{gpu_threads, TraceKernel};
use crate::{Gpu, RunOptions, SimError};
use sassim_isa::Listing;
use std::collections::VecDeque;
use std::path::PathBuf;

/// Trace bytes of the kernels opened together ahead of their runs ([`OpenAhead`]; plain
/// text only).
pub(crate) const OPEN_AHEAD_BYTES: u64 = 32 << 20;
/// Most kernels opened together ahead of their runs.
pub(crate) const OPEN_AHEAD_KERNELS: usize = 64;
/// A trace larger than this opens alone, its blocks parsed on every thread.
pub(crate) const OPEN_ALONE_BYTES: u64 = 4 << 20;

/// Kernels of a kernels list opened before their turn, several at once, each on one thread.
/// A small kernel's trace gains little from parsing its blocks on several threads: a
/// kernel of a few thread blocks reads, accepts and scans them serially (the BFS trace's 16
/// kernels took 17.7 ms on one thread and 14.3 ms on two, its parse batches 9.7 and 5.9 ms).
/// So the next small kernels, up to [`OPEN_AHEAD_KERNELS`] and [`OPEN_AHEAD_BYTES`] of
/// trace, open together on the threads (a thread done early takes kernels another has not
/// begun); a kernel over [`OPEN_ALONE_BYTES`], or a compressed or binary one, opens alone as
/// before. Each kernel, and any
/// error, is that of opening it alone; an error is returned when its kernel's turn comes,
/// after the kernels before it have run, as if it had been opened then.
#[derive(Default)]
pub(super) struct OpenAhead {
    /// The next kernels, opened, in order.
    ready: VecDeque<Result<TraceKernel, SimError>>,
}

impl OpenAhead {
    /// Kernel `k` of `paths`, opened (with the next ones when none is ready). Called for
    /// `k` = 0, 1, 2, … in turn.
    pub(super) fn take(
        &mut self,
        gpu: &mut Gpu,
        paths: &[PathBuf],
        k: usize,
        listings: &[Listing],
        opts: &RunOptions,
    ) -> Result<TraceKernel, SimError> {
        if self.ready.is_empty() {
            let threads = gpu_threads(gpu, opts);
            let rest = paths.get(k..).unwrap_or_default();
            let group = ahead_group(rest, threads.count()).min(rest.len());
            let r = self.open_group(&rest[..group], listings, &threads);
            gpu.threads = Some(threads);
            r?;
        }
        self.ready.pop_front().unwrap_or_else(|| {
            Err(SimError::Exec(format!(
                "kernel {} of the list was not opened",
                k + 1
            )))
        })
    }

    /// Open `paths` into `ready`: one alone on every thread, several each on one thread.
    fn open_group(
        &mut self,
        paths: &[PathBuf],
        listings: &[Listing],
        threads: &crate::threads::Threads,
    ) -> Result<(), SimError> {
        if let [one] = paths {
            self.ready.push_back(TraceKernel::open_on(one, listings, threads));
            return Ok(());
        }
        let mut these: Vec<&PathBuf> = paths.iter().collect();
        let mut got: Vec<Option<Result<TraceKernel, SimError>>> = paths.iter().map(|_| None).collect();
        let alone = |_: usize, ps: &mut [&PathBuf], out: &mut [Option<Result<TraceKernel, SimError>>]| {
            let one_thread = crate::threads::Threads::new(1);
            for (p, o) in ps.iter().zip(out.iter_mut()) {
                *o = Some(TraceKernel::open_on(p, listings, &one_thread));
            }
            Ok(())
        };
        threads
            .for_parts(&mut these, &mut got, &alone)
            .map_err(SimError::Exec)?;
        self.ready.extend(
            got.into_iter().map(|g| {
                g.unwrap_or_else(|| Err(SimError::Exec("a kernel of the list was not opened".into())))
            }),
        );
        Ok(())
    }
}

/// How many of the kernels `paths` (the next first) open together on `threads` threads
/// ([`OpenAhead`]): 1 for a large one, or for a file that cannot be examined (it opens, and
/// fails, alone on its turn); otherwise the small ones that follow, within the bounds.
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
