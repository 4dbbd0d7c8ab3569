//! The conditioning proxy as a source: [`crate::proxy::Proxy`] relaying real clients to a real
//! server, its batches read on a thread of their own through the passive decoder
//! ([`crate::proxy::decode::ProxyDecoder`]) and handed to the window as one lane, like any run.
//!
//! One lane of origin *proxy*; each client (by source address, in order of arrival) is a client
//! of the lane, named by its address. The lane's protocol is what the decoder picked: the
//! decoder releases no events before it has picked, so [`EventSource::take_protocol`] names it
//! before the lane's first events reach the window. Link edits (`link.*` for every client and
//! the clients to come, `client.K.link.*` for client K alone, scripted link steps) apply at once
//! on the relay, which records each as a `ParamChanged` event; the proxy cannot pause real
//! traffic, nor run a workload, so other actions are refused.

use std::sync::{Arc, Mutex};

use ackscope_protocol::{Action, ClientId, ParamChange};
use anyhow::Result;

use super::reader::{reader_methods, ReaderHandle, ReaderSide, POLL};
use super::EventSource;
use crate::lane::{ClientInfo, LaneInfo, Origin, Protocol};
use crate::model::payloads::SharedPayloads;
use crate::model::Recording;
use crate::proxy::decode::{lane_protocol, ProxyDecoder};
use crate::proxy::stats::addr_text;
use crate::proxy::{DecodeChoice, Proxy, ProxyConfig};
use crate::runtime::{Batch, Lanes};

/// Batches in flight to the window before the reader waits (the relay then keeps its own).
const CHANNEL_BATCHES: usize = 256;

/// The lane a proxy of `cfg` fills: origin *proxy*, protocol `unknown` until the decoder picks.
pub fn lane_of(cfg: &ProxyConfig) -> Recording {
    let origin = Origin::Proxy { listen: addr_text(cfg.listen), upstream: addr_text(cfg.forward) };
    Recording::of(LaneInfo::new(origin, lane_protocol(None)), None)
}

/// A running proxy feeding the window.
pub struct ProxySource {
    reader: ReaderHandle,
    proxy: Arc<Proxy>,
    /// The decoder's pick, once made and until the window takes it.
    protocol: Arc<Mutex<Option<Protocol>>>,
    /// Every relayed datagram's bytes, for the bytes pane.
    payloads: SharedPayloads,
}

impl ProxySource {
    /// Binds `cfg.listen` (an error naming it when it cannot) and starts relaying to
    /// `cfg.forward`; `wake` is called whenever batches are ready.
    pub fn spawn(mut cfg: ProxyConfig, wake: impl Fn() + Send + Sync + 'static) -> Result<Self> {
        // Decoding needs each datagram's bytes beside its events.
        cfg.keep_bytes = cfg.decode != DecodeChoice::None;
        let decoder = (cfg.decode != DecodeChoice::None).then(|| ProxyDecoder::new(cfg.decode.clone()));
        let proxy = Arc::new(Proxy::start(cfg)?);
        let protocol = Arc::new(Mutex::new(None));
        let payloads: SharedPayloads = Arc::default();
        let (proxy2, protocol2, payloads2) = (proxy.clone(), protocol.clone(), payloads.clone());
        let reader =
            ReaderHandle::spawn("ackscope-proxy-reader", "the proxy's reader", CHANNEL_BATCHES, move |side| {
                Reader { proxy: proxy2, decoder, side, protocol: protocol2, payloads: payloads2 }.run(&wake)
            })?;
        Ok(Self { reader, proxy, protocol, payloads })
    }

    /// The address clients send to (the port the OS chose for port 0).
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.proxy.local_addr()
    }
}

struct Reader {
    proxy: Arc<Proxy>,
    decoder: Option<ProxyDecoder>,
    side: ReaderSide,
    protocol: Arc<Mutex<Option<Protocol>>>,
    payloads: SharedPayloads,
}

impl Reader {
    fn run(mut self, wake: &dyn Fn()) {
        let mut end = 0;
        while !self.side.stopped() {
            let Ok(b) = self.proxy.batches().recv_timeout(POLL) else { continue };
            end = end.max(b.events.last().map_or(0, |e| e.time.0));
            for (client, addr, _) in &b.joined {
                let info = ClientInfo { id: *client, name: addr_text(*addr), group: String::new() };
                self.side.name(0, info);
            }
            for d in &b.datagrams {
                self.payloads.keep(d.client, d.uid, d.at, &d.bytes);
            }
            let events = match self.decoder.as_mut() {
                Some(d) => d.feed(&b),
                None => b.events,
            };
            if !self.hand(Batch { lane: 0, events, actions: b.actions, error: None }, wake) {
                return;
            }
        }
        // What the decoder still holds (a probe never concluded) goes out with its last figures.
        if let Some(d) = self.decoder.as_mut() {
            let last = d.finish(ackscope_protocol::SimTime(end));
            self.hand(Batch { lane: 0, events: last, ..Batch::default() }, wake);
        }
    }

    /// Names the lane's protocol (once the decoder has picked, before the events it released)
    /// and hands `batch` over, waiting while the window is behind; false once stopped.
    fn hand(&self, batch: Batch, wake: &dyn Fn()) -> bool {
        if let Some(d) = self.decoder.as_ref().filter(|d| !d.deciding()) {
            *self.protocol.lock().expect("not poisoned") = Some(d.protocol());
        }
        if batch.events.is_empty() && batch.actions.is_empty() && batch.error.is_none() {
            return true;
        }
        self.side.deliver(batch, wake)
    }
}

/// `client.K.link...` as client K and the `link...` setting, or `None` for another name.
fn client_link(change: &ParamChange) -> Option<(ClientId, ParamChange)> {
    let rest = change.name().strip_prefix("client.")?;
    let (k, name) = rest.split_once('.')?;
    let k: ClientId = k.parse().ok()?;
    crate::proxy::apply::is_link_setting(name).then(|| (k, ParamChange::new(name, change.value().clone())))
}

impl EventSource for ProxySource {
    /// Link changes apply on the relay at once (and are recorded by it); nothing else applies to
    /// real traffic.
    fn send(&self, lanes: Lanes, action: Action) -> bool {
        self.try_send(lanes, action).is_ok()
    }
    /// What the relay refuses (a setting that is not the link's, a value the link refuses, a
    /// client that is not there) comes back with its reason, and nothing is recorded.
    fn try_send(&self, _: Lanes, action: Action) -> Result<(), String> {
        let (client, action) = match &action {
            Action::Set(change) => match client_link(change) {
                Some((k, c)) => (Some(k), Action::Set(c)),
                None => (None, action),
            },
            _ => (None, action),
        };
        // The relay refuses anything but link settings and link steps, with its reason.
        self.proxy.apply(client, action).map_err(|e| format!("{e:#}"))
    }
    reader_methods!();
    fn take_protocol(&self) -> Option<(usize, Protocol)> {
        self.protocol.lock().expect("not poisoned").take().map(|p| (0, p))
    }
    fn payloads(&self, lane: usize) -> Option<SharedPayloads> {
        (lane == 0).then(|| self.payloads.clone())
    }
}
