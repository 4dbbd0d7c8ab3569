//! A headless run's simulation and the fold of its events on two threads: the simulation makes
//! a batch while the previous one is folded (and written), so on two cores a run takes the
//! longer of the two instead of their sum.
//!
//! Why: at 1000 clients the simulation and the report's fold each cost about as much CPU (README,
//! "Many clients"), and one thread did both in turn. The fold sees exactly the events it saw on
//! one thread, in the same order, so every figure is the same. Two buffers go back and forth
//! (the simulation's own event vector swapped for an emptied one: [`Simulation::take_events`]),
//! so no event is copied and at most two batches exist, as when one thread copied each batch
//! out of the simulation before folding it.

use std::sync::mpsc;

use ackscope_protocol::{Event, Simulation};

/// Runs `produce` on this thread and `consume` on a second one: each time `produce` calls the
/// hand-over it is given, the simulation's events so far go to `consume` (in order, every event
/// once) and the simulation goes on while they are consumed. Waits for `consume` to finish the
/// last batch before returning; a panic in `consume` is raised here.
pub fn fold_beside<R>(
    mut consume: impl FnMut(&[Event]) + Send,
    produce: impl FnOnce(&mut dyn FnMut(&mut Simulation)) -> R,
) -> R {
    // Full batches one way (a rendezvous: the simulation waits while the folder is busy with the
    // batch before), emptied ones back.
    let (full_tx, full_rx) = mpsc::sync_channel::<Vec<Event>>(0);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<Event>>();
    std::thread::scope(|scope| {
        let folder = std::thread::Builder::new()
            .name("ackscope-fold".into())
            .spawn_scoped(scope, move || {
                for mut batch in full_rx {
                    consume(&batch);
                    batch.clear();
                    // The simulation may have finished already: nothing waits for the buffer.
                    let _ = empty_tx.send(batch);
                }
            })
            .expect("cannot start the fold thread");
        let mut spare = Some(Vec::new());
        let result = produce(&mut |sim: &mut Simulation| {
            if sim.events().is_empty() {
                return;
            }
            // The second buffer at first, then the one the folder hands back once folded (the
            // wait that keeps two batches at most); a new one when the folder has died (its
            // panic is raised at the join below).
            let empty = spare.take().or_else(|| empty_rx.recv().ok()).unwrap_or_default();
            let batch = sim.take_events(empty);
            let _ = full_tx.send(batch);
        });
        drop(full_tx);
        if let Err(panic) = folder.join() {
            std::panic::resume_unwind(panic);
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackscope_protocol::{Clients, Scenario, SimTime};

    #[test]
    fn every_event_is_consumed_once_in_order() {
        let scenario = Scenario { clients: Clients::Count(8), seed: 5, ..Scenario::default() };
        let mut one_thread = Simulation::new(scenario.clone());
        one_thread.run_until(SimTime(3_000_000));
        let want: Vec<Event> = one_thread.drain_events().collect();

        let mut got = Vec::new();
        let batches = fold_beside(
            |batch| got.extend_from_slice(batch),
            |hand_over| {
                let mut sim = Simulation::new(scenario);
                let mut batches = 0;
                for ms in (250..=3_000).step_by(250) {
                    sim.run_until(SimTime(ms * 1000));
                    hand_over(&mut sim);
                    batches += 1;
                    assert!(sim.events().is_empty(), "handed over");
                }
                batches
            },
        );
        assert_eq!(batches, 12);
        assert!(want.len() > 10_000, "{} events", want.len());
        assert!(got == want, "events differ: {} against {}", got.len(), want.len());
    }

    #[test]
    #[should_panic(expected = "fold failed")]
    fn a_panic_in_the_fold_is_raised_by_the_caller() {
        fold_beside(
            |_| panic!("fold failed"),
            |hand_over| {
                let mut sim = Simulation::new(Scenario::default());
                for s in 1..=3 {
                    sim.run_until(SimTime(s * 1_000_000));
                    hand_over(&mut sim);
                }
            },
        );
    }
}
