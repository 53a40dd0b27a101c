//! Points at which a long parse lets its thread do other work for a moment.
//!
//! The simulator's worker threads open trace kernels as errands between the parallel steps
//! they take part in (`sassim-gpu` `threads/worker.rs`, `trace_exec/open_ahead.rs`); a kernel's
//! parse takes milliseconds, a step tens of microseconds. So the parsers call [`point`]
//! every [`LINES`] lines, and a thread that set a hook ([`set_hook`]) runs it there: the
//! worker takes its part of a step posted meanwhile, then goes on parsing. Without a hook a
//! point costs a thread-local read. Nothing parsed depends on it.

use std::cell::Cell;

/// Lines parsed between two [`point`]s (~10–20 µs of parsing).
pub const LINES: u64 = 32;

thread_local! {
    static HOOK: Cell<Option<fn()>> = const { Cell::new(None) };
}

/// The function the calling thread runs at every [`point`] (`None`: nothing).
pub fn set_hook(hook: Option<fn()>) {
    HOOK.with(|h| h.set(hook));
}

/// Run the calling thread's hook, if it set one ([`set_hook`]).
#[inline]
pub fn point() {
    if let Some(f) = HOOK.with(Cell::get) {
        f();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    static CALLS: AtomicU32 = AtomicU32::new(0);

    fn count() {
        CALLS.fetch_add(1, Ordering::Relaxed);
    }

    /// A hook runs at the points of the thread that set it, and only there.
    #[test]
    fn a_hook_runs_at_its_own_thread_s_points() {
        set_hook(Some(count));
        point();
        point();
        std::thread::spawn(point).join().expect("thread");
        assert_eq!(CALLS.load(Ordering::Relaxed), 2);
        set_hook(None);
        point();
        assert_eq!(CALLS.load(Ordering::Relaxed), 2);
    }
}
