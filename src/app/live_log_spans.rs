//! Where a live frame's time goes: named spans (the intake's fold, its stream file, the memory
//! window's rebuild, a view's drawing) timed on the window's thread when a measurement turns them
//! on, so `examples/live_clients.rs` can say what a slow frame did (issue 23: frames over 16 ms
//! while taking in a normal frame's events). Off by default: a span then costs one relaxed
//! atomic load.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static ON: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Spans finished on this thread since the last [`take`], in the order they ended.
    static SPANS: RefCell<Vec<(&'static str, Duration)>> = const { RefCell::new(Vec::new()) };
}

/// Starts (or stops) timing spans, on every thread.
pub fn enable(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

/// Runs `f`, timing it as `name` when spans are on.
#[inline]
pub fn span<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
    if !ON.load(Ordering::Relaxed) {
        return f();
    }
    let started = Instant::now();
    let out = f();
    let took = started.elapsed();
    SPANS.with(|s| s.borrow_mut().push((name, took)));
    out
}

/// The spans this thread finished since the last call, summed by name (in order of first end).
pub fn take() -> Vec<(&'static str, Duration)> {
    let spans = SPANS.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let mut out: Vec<(&'static str, Duration)> = Vec::new();
    for (name, took) in spans {
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, sum)) => *sum += took,
            None => out.push((name, took)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_summed_by_name_only_while_on() {
        let _ = take();
        span("a", || ());
        assert!(take().is_empty(), "off: nothing kept");
        enable(true);
        span("a", || ());
        span("b", || ());
        span("a", || ());
        enable(false);
        let got: Vec<&str> = take().iter().map(|(n, _)| *n).collect();
        assert_eq!(got, ["a", "b"]);
    }
}
