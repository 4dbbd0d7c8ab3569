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
//! **The server end** of a new flow is the end on `--port` when one is given, else the end with
//! the lower port (a server's fixed port is usually below a client's ephemeral one; ackscope's
//! export puts the server on 27100-27107 and clients on 50001 and up), then the lower address.
//! The server is side A and the client side B, as in ackscope's own sessions: `AtoB` is server
//! to client. Flows are numbered as clients from 1 in the order they first appear.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

use ackscope_protocol::{ClientId, Dir};
use anyhow::{bail, Result};

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

    /// Makes `key` a sender side: of the flow its ends already belong to, or of a new flow (its
    /// server end by the module's rule), or filtered out. The flow when it has one.
    pub fn set_sender(&mut self, key: StreamKey) -> Option<(usize, Dir)> {
        let (_, src, dst) = key;
        let found = self.paths.get(&(src, dst)).copied().or_else(|| self.new_flow(src, dst));
        self.roles.insert(key, found.map_or(Role::Filtered, |(flow, dir)| Role::Sender { flow, dir }));
        found
    }

    fn new_flow(&mut self, src: SocketAddr, dst: SocketAddr) -> Option<(usize, Dir)> {
        let src_is_server = match self.port {
            Some(p) if src.port() == p && dst.port() != p => true,
            Some(p) if dst.port() == p && src.port() != p => false,
            Some(p) if src.port() != p => return None,
            _ => (src.port(), src.ip()) <= (dst.port(), dst.ip()),
        };
        let (server, client_end) = if src_is_server { (src, dst) } else { (dst, src) };
        if self.filter.is_some_and(|f| !f.matches(client_end)) {
            return None;
        }
        let flow = self.flows.len();
        self.flows.push(Flow { client: flow as ClientId + 1, server, client_end });
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
    fn the_lower_port_is_the_server_and_a_proxys_back_side_joins_its_flow() {
        let mut f = Flows::new(None, None);
        let (client, proxy, back, server) =
            (a("10.0.0.9:50001"), a("10.0.0.2:7000"), a("10.0.0.2:40000"), a("10.0.0.3:27100"));
        assert_eq!(f.set_sender((0, client, proxy)), Some((0, Dir::BtoA)));
        assert_eq!(f.flows[0].server, proxy);
        f.set_delivered((0, back, server), 0, Dir::BtoA);
        assert_eq!(f.set_sender((0, server, back)), Some((0, Dir::AtoB)), "the server's replies");
        assert_eq!(f.set_sender((0, proxy, client)), Some((0, Dir::AtoB)));
        assert_eq!(f.flows.len(), 1);
    }

    #[test]
    fn port_and_client_filters_leave_flows_out() {
        let mut f = Flows::new(Some(9000), Some("10.1.0.1".parse().unwrap()));
        assert_eq!(
            f.set_sender((0, a("10.1.0.1:5000"), a("10.0.0.1:9000"))),
            Some((0, Dir::BtoA)),
            "--port names the server"
        );
        assert_eq!(f.flows[0].server, a("10.0.0.1:9000"));
        assert_eq!(f.set_sender((0, a("10.1.0.1:5"), a("10.0.0.1:6"))), None, "no end on the port");
        assert_eq!(f.set_sender((0, a("10.1.0.2:5"), a("10.0.0.1:9000"))), None, "another client");
        assert_eq!(f.role(&(0, a("10.1.0.2:5"), a("10.0.0.1:9000"))), Some(Role::Filtered));
        let c: ClientFilter = "10.1.0.1:50001".parse().unwrap();
        assert!(c.matches(a("10.1.0.1:50001")) && !c.matches(a("10.1.0.1:50002")));
        assert!("nonsense".parse::<ClientFilter>().is_err());
    }
}
