//! Where a live recording's events come from: one [`EventSource`] trait that every origin
//! implements, and [`start`], the one place a source is started from.
//!
//! The window holds a `Box<dyn EventSource>` and never asks which it is: it sends actions
//! (which a source that cannot act, such as a game's stream, refuses) and takes batches of
//! events, each naming its lane and its clients. As rerun turns a file, a socket or stdin into one
//! log receiver, each origin here is one file: [`sim`] (the simulation, in-process), [`udp`] (the
//! scenario's endpoints over real sockets), [`stream`] (a game's JSON-lines event stream, read
//! from a file as it grows), [`capture`] (a pcapng or pcap capture read through the passive
//! decoders as the file is read). A conditioning proxy and a listening socket for a game's stream
//! come as more files here, each one more [`Origin`] the recordings already describe.

pub mod capture;
pub mod proxy;
pub mod reader;
pub mod sim;
pub mod stream;
pub mod udp;

use std::path::PathBuf;

use ackscope_protocol::{Action, Scenario, Step};
use anyhow::Result;

use crate::lane::{ClientInfo, Origin, Protocol};
use crate::runtime::{Batch, Lanes};

/// A running source of events: what the window needs from it, whatever its origin.
pub trait EventSource: Send {
    /// Queues `action` for `lanes` without blocking; false when the run has ended or cannot act
    /// on it.
    fn send(&self, lanes: Lanes, action: Action) -> bool;
    /// [`Self::send`], saying why the source refused `action` where it knows (a proxy refuses
    /// what cannot apply to a relay); the window shows it. Others queue as `send` does.
    fn try_send(&self, lanes: Lanes, action: Action) -> Result<(), String> {
        self.send(lanes, action);
        Ok(())
    }
    /// Every batch available now.
    fn try_batches(&self) -> Box<dyn Iterator<Item = Batch> + '_>;
    /// True while the source's threads run.
    fn is_running(&self) -> bool;
    /// Stops the source and joins its threads.
    fn stop(&mut self);
    /// Clients the source named since the last call, with their lane (a game's stream names
    /// its clients as they connect; a simulation knows them from its scenario).
    fn take_clients(&self) -> Vec<(usize, ClientInfo)> {
        Vec::new()
    }
    /// What a lane turned out to run, when the source learns it as it goes (a proxy's decoder
    /// picks the protocol from the first datagrams): given before that lane's first events.
    fn take_protocol(&self) -> Option<(usize, Protocol)> {
        None
    }
    /// How far the source has got and what waits for the window, where it knows (a source
    /// paced by the wall clock); the window says from it when it is behind and why.
    fn progress(&self) -> Option<crate::runtime::Progress> {
        None
    }
    /// Where lane `lane`'s datagrams are kept byte for byte, when the source has them (UDP,
    /// the proxy, a capture): the bytes pane shows them as sent.
    fn payloads(&self, _lane: usize) -> Option<crate::model::payloads::SharedPayloads> {
        None
    }
}

/// What to start.
#[derive(Debug, Clone)]
pub enum Spec {
    /// One lane per scenario (two for A/B), simulated in-process on one clock, each applying
    /// its recorded actions at their instants.
    Simulated(Vec<(Scenario, Vec<Step>)>),
    /// The scenario's two endpoints over UDP sockets on loopback, each on its own thread.
    UdpLoopback(Box<Scenario>),
    /// A game's JSON-lines event stream, read from `path` as it grows (`follow`) or to its end.
    EventStream { path: PathBuf, follow: bool },
    /// A pcapng or pcap capture, imported as it is read (`--decode`, `--port`, `--client-filter`).
    Capture { path: PathBuf, options: crate::capture::import::ImportOptions },
    /// A conditioning proxy relaying real clients to a real server, decoded as it goes.
    Proxy(Box<crate::proxy::ProxyConfig>),
}

impl Spec {
    /// The origin the lanes of this source record.
    pub fn origin(&self) -> Origin {
        match self {
            Spec::Simulated(_) => Origin::Simulated,
            Spec::UdpLoopback(_) => Origin::UdpLoopback,
            Spec::EventStream { path, .. } => {
                Origin::EventStream { source: path.display().to_string(), producer: String::new() }
            }
            Spec::Capture { path, .. } => Origin::Capture { path: path.display().to_string() },
            Spec::Proxy(cfg) => proxy::lane_of(cfg).info.origin,
        }
    }
}

/// Starts `spec`; `wake` is called from the source's threads whenever events are ready.
pub fn start(spec: Spec, wake: impl Fn() + Send + Sync + 'static) -> Result<Box<dyn EventSource>> {
    Ok(match spec {
        Spec::Simulated(lanes) => Box::new(crate::runtime::LiveRun::spawn_replaying(lanes, wake)),
        Spec::UdpLoopback(scenario) => {
            let loopback: std::net::SocketAddr = ([127, 0, 0, 1], 0).into();
            Box::new(crate::runtime::udp::UdpRun::spawn(*scenario, loopback, loopback, wake)?)
        }
        Spec::EventStream { path, follow } => Box::new(stream::StreamSource::spawn(path, follow, wake)?),
        Spec::Capture { path, options } => Box::new(capture::CaptureSource::spawn(path, options, wake)?),
        Spec::Proxy(cfg) => Box::new(proxy::ProxySource::spawn(*cfg, wake)?),
    })
}
