//! Changing the transport during a live run: an action in the recording, not a new recording.
//!
//! The window's transport choice (in-process simulation or real UDP sockets on loopback) can
//! change while a single-lane run is live. The run goes on as one recording: at the instant the
//! running transport reached, the log gets `transport(udp)` (or `transport(in_process)`) and the
//! events a `transport` marker; both endpoints then start afresh over the other transport from the
//! settings in force (every edit, scripted step and strategy change so far; the script's later
//! steps at their instants), exactly what a restart does, so folds over the events treat it as
//! one. The new runner's clock and send ids start at zero, so its batches are moved onto the
//! recording's timeline and past its send ids ([`Continued`]). A paused run stays paused.
//!
//! A re-run (headless `ackscope run`, or *Re-run*) always simulates: it restarts the endpoints at
//! the same instant and goes on in-process, so a recording re-runs exactly up to its first switch
//! to UDP. A/B runs stay in-process (one clock for both lanes), and with no live run a transport
//! change starts a new recording, as before.

use ackscope_protocol::{Action, Event, EventKind, SimTime, Step};

use super::AppState;
use crate::runtime::continued::Continued;
use crate::runtime::udp::Transport;
use crate::runtime::{Batch, Lanes};
use crate::source::{self, EventSource, Spec};

impl AppState {
    /// True when a change of transport to `to` would be an action in the live recording (one
    /// lane, running, another transport) rather than a new recording.
    pub fn switches_in_place(&self, to: Transport) -> bool {
        // A lane with no scenario (a proxy's, a capture's) has no endpoints to move.
        to != self.transport
            && self.ab.is_none()
            && self.lanes.len() == 1
            && self.lanes[0].scenario.is_some()
            && self.is_running()
    }

    /// Sets the transport: in place when [`Self::switches_in_place`], else for the next run,
    /// which starts now.
    pub(super) fn set_transport(&mut self, to: Transport) {
        if self.switches_in_place(to) {
            self.switch_transport(to);
        } else {
            self.transport = to;
            self.start();
        }
    }

    /// Moves the live run to `to` at the instant it reached (see the module doc).
    fn switch_transport(&mut self, to: Transport) {
        let Some(mut old) = self.live.take() else { return };
        old.stop();
        let rest: Vec<Batch> = old.try_batches().collect();
        self.ingest(rest);
        let at = self.end_time();
        let Some(mut scenario) = self.lanes[0].scenario_at(at.as_secs_f64()) else {
            self.error = Some("only a run of a scenario changes transport".into());
            return;
        };
        scenario.script.retain(|s| s.at > at);
        for step in &mut scenario.script {
            step.at = SimTime(step.at.0 - at.0);
        }
        let marker = Event::new(at, EventKind::ParamChanged { name: "transport".into(), value: to.name().into() });
        let action = Step::new(at, Action::Transport(to));
        self.ingest([Batch { lane: 0, events: vec![marker], actions: vec![action], error: None }]);
        let wake = self.wake.clone();
        let spec = match to {
            Transport::Udp => Spec::UdpLoopback(Box::new(scenario.clone())),
            Transport::InProcess => Spec::Simulated(vec![(scenario.clone(), Vec::new())]),
        };
        let (transport, run): (Transport, Box<dyn EventSource>) = match source::start(spec, move || wake()) {
            Ok(run) => (to, run),
            Err(e) => {
                // The recording keeps its marker; it goes on in-process, where it can always run.
                self.error = Some(format!("{} transport: {e:#}; the run goes on in-process", to.name()));
                let wake = self.wake.clone();
                let spec = Spec::Simulated(vec![(scenario, Vec::new())]);
                (Transport::InProcess, source::start(spec, move || wake()).expect("the simulation always starts"))
            }
        };
        self.transport = transport;
        // The recording's ledger has folded every send so far: the new runner's ids follow them.
        let first_uid = self.lanes[0].ledger.uid_end();
        self.live = Some(Box::new(Continued::new(run, at, first_uid)));
        if self.paused {
            if let Some(run) = &self.live {
                run.send(Lanes::All, Action::Pause);
            }
        }
    }
}
