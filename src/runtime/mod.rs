//! Background threads that run the protocol endpoints and the link in real time for the app.
//!
//! The UI talks to a run only through channels: it sends [`Command`]s and receives batches of
//! events. Both channels are bounded; the UI never blocks on them (it uses `try_send`/`try_recv`),
//! and the run thread never drops an event: when the UI falls behind, batches wait in the thread's
//! own backlog until there is room, and the run thread requests a repaint whenever it delivers.

pub mod endpoint_thread;
pub mod udp;
pub mod udp_truth;

use std::time::{Duration, Instant};

use ackscope_protocol::{Dir, Event, LinkConfig, Scenario, SimTime, Simulation};
use crossbeam_channel::{bounded, Receiver, Sender, TrySendError};

/// What the UI can ask of a running simulation.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Replace one direction's link parameters from now on.
    SetLink(Dir, LinkConfig),
    /// Change both endpoints' packet rate.
    SetSendRate(f64),
    Pause,
    Resume,
    /// Stop the thread (also sent on drop).
    Shutdown,
}

/// How often the run thread advances virtual time and hands events to the UI.
const TICK: Duration = Duration::from_millis(8);
/// Batches in flight to the UI before the run thread keeps them in its backlog.
const EVENT_CHANNEL_BATCHES: usize = 256;

/// A simulation running on a background thread, paced against the wall clock.
pub struct LiveRun {
    commands: Sender<Command>,
    events: Receiver<Vec<Event>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LiveRun {
    /// Starts `scenario` at time 0; `wake` is called whenever a batch of events is ready.
    pub fn spawn(scenario: Scenario, wake: impl Fn() + Send + 'static) -> Self {
        let (cmd_tx, cmd_rx) = bounded::<Command>(1024);
        let (ev_tx, ev_rx) = bounded::<Vec<Event>>(EVENT_CHANNEL_BATCHES);
        let thread = std::thread::Builder::new()
            .name("ackscope-sim".into())
            .spawn(move || run_thread(scenario, cmd_rx, ev_tx, wake))
            .expect("spawn simulation thread");
        Self { commands: cmd_tx, events: ev_rx, thread: Some(thread) }
    }

    /// Queues a command without blocking; false when the run has ended.
    pub fn send(&self, cmd: Command) -> bool {
        self.commands.try_send(cmd).is_ok()
    }

    /// Every event batch available now.
    pub fn try_events(&self) -> impl Iterator<Item = Vec<Event>> + '_ {
        self.events.try_iter()
    }

    /// True while the thread runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stops the thread and waits for it.
    pub fn stop(&mut self) {
        let _ = self.commands.send(Command::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for LiveRun {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run_thread(scenario: Scenario, commands: Receiver<Command>, events: Sender<Vec<Event>>, wake: impl Fn()) {
    let mut sim = Simulation::new(scenario);
    let mut paused = false;
    // Virtual time = sim_base + (wall now - wall_base) while running.
    let mut wall_base = Instant::now();
    let mut sim_base = SimTime::ZERO;
    let mut backlog: std::collections::VecDeque<Vec<Event>> = std::collections::VecDeque::new();
    loop {
        match commands.recv_timeout(TICK) {
            Ok(cmd) => {
                let mut next = Some(cmd);
                while let Some(cmd) = next.take() {
                    match cmd {
                        Command::Shutdown => return,
                        Command::SetLink(dir, cfg) => sim.set_link(dir, cfg),
                        Command::SetSendRate(pps) => sim.set_send_rate(pps),
                        Command::Pause => {
                            if !paused {
                                paused = true;
                                sim_base = sim.now();
                            }
                        }
                        Command::Resume => {
                            if paused {
                                paused = false;
                                wall_base = Instant::now();
                                sim_base = sim.now();
                            }
                        }
                    }
                    next = commands.try_recv().ok();
                }
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
        }
        if !paused {
            let target = sim_base.plus_micros(wall_base.elapsed().as_micros() as u64);
            sim.run_until(target);
            let batch: Vec<Event> = sim.drain_events().collect();
            if !batch.is_empty() {
                backlog.push_back(batch);
            }
        }
        let mut delivered = false;
        while let Some(batch) = backlog.pop_front() {
            match events.try_send(batch) {
                Ok(()) => delivered = true,
                Err(TrySendError::Full(batch)) => {
                    backlog.push_front(batch);
                    break;
                }
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
        if delivered {
            wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_run_produces_events_and_stops_cleanly() {
        let mut run = LiveRun::spawn(Scenario::default(), || {});
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut n = 0;
        while n < 20 && Instant::now() < deadline {
            n += run.try_events().map(|b| b.len()).sum::<usize>();
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(n >= 20, "only {n} events in 5 s");
        assert!(run.send(Command::Pause));
        run.stop();
        assert!(!run.is_running());
    }
}
