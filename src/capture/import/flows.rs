//! Who is who in a capture: UDP flows (each a client), their server end, and which stream of
//! packets is a flow's sender side and which its delivered side.
//!
//! A *stream* is what one interface saw of one source and destination: (interface, source
//! address and port, destination address and port). A stream whose first datagram repeats the
//! bytes of a datagram sent on another stream within the matching window is a *delivered side*
//! (its datagrams are copies of that flow's sends in that direction); any other stream is a
//! *sender side* of the flow its two ends make. That reads ackscope's export (a `-sent` and a
//! `-delivered` interface), two captures of both hosts merged, and one capture taken on a path
//! that saw each datagram before and after a conditioner (a proxy on loopback: the client's
//! datagrams to the proxy, the proxy's copies to the server; the server's replies to the proxy
//! belong to the same flow, found through the delivered side's ends).
//!
//! **The server end** of a new flow is chosen by [`crate::capture::server_end`]'s rule: the end
//! on `--port`; in a capture ackscope wrote, the address it gave the server; else the end many
//! flows share (more distinct peers: those of a first look at the capture's start,
//! [`Flows::learn`], and of every flow since); else the end that did not send the flow's first
//! datagram. The server is side A and the client side B, as in ackscope's own sessions: `AtoB` is
//! server to client. Flows are numbered as clients from 1 in the order they first appear.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};

use ackscope_protocol::{ClientId, Dir};
use anyhow::{bail, Result};

use crate::capture::server_end::{server_end, FirstDatagram, ServerBy};

/// `--client-filter ADDR[:PORT]`: only flows whose client end is this address (and port).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientFilter {
    pub ip: IpAddr,
    pub port: Option<u16>,
}

impl std::str::FromStr for ClientFilter {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        if let Ok(a) = s.parse::<SocketAddr>() {
            return Ok(Self { ip: a.ip(), port: Some(a.port()) });
        }
        if let Ok(ip) = s.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
            return Ok(Self { ip, port: None });
        }
        bail!("--client-filter '{s}': expected ADDR or ADDR:PORT (10.1.0.1, 10.1.0.1:50001, [::1]:5000)")
    }
}

impl ClientFilter {
    pub fn matches(&self, end: SocketAddr) -> bool {
        end.ip() == self.ip && self.port.is_none_or(|p| p == end.port())
    }
}

/// One flow: a client of the recording.
#[derive(Debug, Clone)]
pub struct Flow {
    pub client: ClientId,
    pub server: SocketAddr,
    pub client_end: SocketAddr,
    /// Which rule named the server end.
    pub server_by: ServerBy,
}

/// What a stream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The sender side of `flow` in `dir`: each datagram is a send.
    Sender { flow: usize, dir: Dir },
    /// The delivered side of `flow` in `dir`: each datagram is a copy of a send.
    Delivered { flow: usize, dir: Dir },
    /// Left out by `--port` or `--client-filter`.
    Filtered,
}

pub type StreamKey = (u32, SocketAddr, SocketAddr);

/// The flow table and every stream's role.
#[derive(Debug, Default)]
pub struct Flows {
    pub flows: Vec<Flow>,
    roles: HashMap<StreamKey, Role>,
    /// Ordered ends (x, y) of a known path: datagrams from x to y go in `dir` of `flow`.
    paths: HashMap<(SocketAddr, SocketAddr), (usize, Dir)>,
    port: Option<u16>,
    filter: Option<ClientFilter>,
    /// Pairs of ends known to have exchanged datagrams (either order: the lower end first), and
    /// each end's count of them: the shared-end rule's evidence.
    pairs: HashSet<(SocketAddr, SocketAddr)>,
    peers: HashMap<SocketAddr, usize>,
}

impl Flows {
    pub fn new(port: Option<u16>, filter: Option<ClientFilter>) -> Self {
        Self { port, filter, ..Default::default() }
    }

    pub fn role(&self, key: &StreamKey) -> Option<Role> {
        self.roles.get(key).copied()
    }

    /// Makes `key` the delivered side of `flow` in `dir`; the reverse of its ends joins the
    /// flow in the other direction (a proxy's back side).
    pub fn set_delivered(&mut self, key: StreamKey, flow: usize, dir: Dir) {
        self.roles.insert(key, Role::Delivered { flow, dir });
        let (_, src, dst) = key;
        self.paths.entry((src, dst)).or_insert((flow, dir));
        self.paths.entry((dst, src)).or_insert((flow, dir.receiver().outgoing()));
    }

    /// Notes that `x` and `y` exchanged a datagram (a first look at the capture, before any flow
    /// is made, and every new flow): an end with more peers is a server.
    pub fn learn(&mut self, x: SocketAddr, y: SocketAddr) {
        if self.pairs.insert((x.min(y), x.max(y))) {
            *self.peers.entry(x).or_default() += 1;
            *self.peers.entry(y).or_default() += 1;
        }
    }

    /// Makes `key` a sender side: of the flow its ends already belong to, or of a new flow (its
    /// server end by the module's rule; `written_by_ackscope`: the capture section's header says
    /// ackscope wrote it), or filtered out. The flow when it has one.
    pub fn set_sender(&mut self, key: StreamKey, written_by_ackscope: bool) -> Option<(usize, Dir)> {
        let (_, src, dst) = key;
        let found = self.paths.get(&(src, dst)).copied().or_else(|| self.new_flow(src, dst, written_by_ackscope));
        self.roles.insert(key, found.map_or(Role::Filtered, |(flow, dir)| Role::Sender { flow, dir }));
        found
    }

    /// A new flow opened by a datagram from `src` to `dst`.
    fn new_flow(&mut self, src: SocketAddr, dst: SocketAddr, written_by_ackscope: bool) -> Option<(usize, Dir)> {
        self.learn(src, dst);
        let first = FirstDatagram { from: src, to: dst };
        let peers = |e: SocketAddr| self.peers.get(&e).copied().unwrap_or(0);
        let (server, server_by) = server_end(first, self.port, written_by_ackscope, peers)?;
        let src_is_server = server == src;
        let client_end = if src_is_server { dst } else { src };
        if self.filter.is_some_and(|f| !f.matches(client_end)) {
            return None;
        }
        let flow = self.flows.len();
        self.flows.push(Flow { client: flow as ClientId + 1, server, client_end, server_by });
        self.paths.insert((server, client_end), (flow, Dir::AtoB));
        self.paths.insert((client_end, server), (flow, Dir::BtoA));
        Some((flow, if src_is_server { Dir::AtoB } else { Dir::BtoA }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_first_sender_is_the_client_and_a_proxys_back_side_joins_its_flow() {
        let mut f = Flows::new(None, None);
        // The proxy (the client's server) on a higher port than the client.
        let (client, proxy, back, server) =
            (a("10.0.0.9:50001"), a("10.0.0.2:57000"), a("10.0.0.2:40000"), a("10.0.0.3:27100"));
        assert_eq!(f.set_sender((0, client, proxy), false), Some((0, Dir::BtoA)));
        assert_eq!((f.flows[0].server, f.flows[0].server_by), (proxy, ServerBy::FirstSender));
        f.set_delivered((0, back, server), 0, Dir::BtoA);
        assert_eq!(f.set_sender((0, server, back), false), Some((0, Dir::AtoB)), "the server's replies");
        assert_eq!(f.set_sender((0, proxy, client), false), Some((0, Dir::AtoB)));
        assert_eq!(f.flows.len(), 1);
    }

    #[test]
    fn an_end_many_flows_share_is_the_server_whoever_speaks_first() {
        let mut f = Flows::new(None, None);
        let server = a("10.0.0.3:60000");
        // The first look saw three clients with the server; the server speaks first to client 1.
        for k in 1..=3 {
            f.learn(a(&format!("10.2.0.{k}:5000")), server);
        }
        assert_eq!(f.set_sender((0, server, a("10.2.0.1:5000")), false), Some((0, Dir::AtoB)));
        assert_eq!((f.flows[0].server, f.flows[0].server_by), (server, ServerBy::SharedEnd));
        // A client after the first look: the server already has peers, the client none.
        assert_eq!(f.set_sender((0, server, a("10.2.0.9:5000")), false), Some((1, Dir::AtoB)));
        assert_eq!(f.flows[1].server, server);
    }

    #[test]
    fn port_and_client_filters_leave_flows_out() {
        let mut f = Flows::new(Some(9000), Some("10.1.0.1".parse().unwrap()));
        assert_eq!(
            f.set_sender((0, a("10.1.0.1:5000"), a("10.0.0.1:9000")), false),
            Some((0, Dir::BtoA)),
            "--port names the server"
        );
        assert_eq!(f.flows[0].server, a("10.0.0.1:9000"));
        assert_eq!(f.set_sender((0, a("10.1.0.1:5"), a("10.0.0.1:6")), false), None, "no end on the port");
        assert_eq!(f.set_sender((0, a("10.1.0.2:5"), a("10.0.0.1:9000")), false), None, "another client");
        assert_eq!(f.role(&(0, a("10.1.0.2:5"), a("10.0.0.1:9000"))), Some(Role::Filtered));
        let c: ClientFilter = "10.1.0.1:50001".parse().unwrap();
        assert!(c.matches(a("10.1.0.1:50001")) && !c.matches(a("10.1.0.1:50002")));
        assert!("nonsense".parse::<ClientFilter>().is_err());
    }
}
