//! A live lane's memory is counted from what its recording holds, for any number of clients
//! (issue 23: at 64 clients the window passed its 2 GiB cap while one figure of 200 bytes per
//! event said it held half of it).
//!
//! The truth is a counting allocator: this test binary's allocations are counted per thread, so
//! a recording built and dropped on a test's own thread shows exactly the bytes it held.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ackscope::model::Recording;
use ackscope_protocol::{Event, Scenario, SimTime, Simulation};

/// The system allocator, counting the bytes each thread holds.
struct Counting;

thread_local! {
    static HELD: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    let _ = HELD.try_with(|c| c.set(c.get() + bytes));
}

// SAFETY: every call is passed to the system allocator unchanged; the count is a side effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn held() -> isize {
    HELD.with(Cell::get)
}

/// A recording of `clients` clients at 60 packets/s each way for `secs`, fed in one-second
/// batches as a live run feeds it: its events, the bytes it says it holds, and the bytes the
/// allocator freed when it was dropped.
fn measure(clients: usize, secs: u64) -> (usize, usize, usize) {
    let mut s = Scenario { seed: 23, send_rate_pps: 60.0, ..Scenario::default() };
    ackscope::params::overrides::apply_all(&mut s, &[format!("clients={clients}")]).unwrap();
    let mut sim = Simulation::new(s.clone());
    let mut rec = Recording::new(s);
    for second in 1..=secs {
        sim.run_until(SimTime(second * 1_000_000));
        let batch: Vec<Event> = sim.drain_events().collect();
        rec.ingest(batch);
    }
    let (events, counted) = (rec.len(), rec.heap_bytes());
    let before = held();
    drop(rec);
    (events, counted, (before - held()) as usize)
}

#[test]
fn a_recordings_counted_bytes_follow_the_allocator_for_one_client_and_many() {
    let mut per_event = Vec::new();
    for clients in [1, 16] {
        let (events, counted, truth) = measure(clients, 20);
        let ratio = counted as f64 / truth as f64;
        println!(
            "{clients} clients: {events} events, {truth} bytes held ({:.0}/event), {counted} counted ({:.0}/event)",
            truth as f64 / events as f64,
            counted as f64 / events as f64
        );
        assert!(events > 10_000 * clients / 2, "{clients} clients: {events} events");
        assert!((0.8..=1.2).contains(&ratio), "{clients} clients: counted {counted}, held {truth} (x{ratio:.2})");
        per_event.push(truth as f64 / events as f64);
    }
    // What one figure per event missed: an event of 16 clients costs more than one client's.
    assert!(per_event[1] > per_event[0] * 1.3, "bytes per event {per_event:?}");
}
